// `gsearch bench search`: a user's quick benchmark of gsearch's batched search on this machine,
// built on the library alone: gsearch's algorithms on a GPU; without one, gsearch's CPU backend
// against std::upper_bound. Writes a table to stdout and, with --json, the JSON of
// bench/README.md. The peers (the memory roofline, thrust, CUB) and the kernel sweep are the
// search family's benchmark program, bench/search/search_bench.cu (same inputs, same JSON);
// bench/search/search_peers.py adds torch, cupy and jax to either file.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "gsearch/gsearch.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "gsearch/core/dtype.hpp"
#include "progress.hpp"
#include "timing.hpp"

namespace gsearch::cli {
namespace {

using json = nlohmann::ordered_json;

struct bench_args {
  std::vector<int64_t> keys;  // empty: the default sweep of the device
  int64_t queries = 0;        // 0: 2^27 on a GPU, 2^22 on the CPU
  std::vector<std::string> key_types{"int32", "int64"};
  std::vector<std::string> query_kinds{"random", "worst"};
  std::vector<std::string> algos{"pbs", "pbs-cf", "pbs-cl", "binary"};
  int repeat = 15, warmup = 3;
  uint64_t seed = 1;
  std::string device = "auto", json_path;
  bool quick = false;
  std::string command_line;
  // The numbers as given on the command line, parsed and checked by parse_numbers().
  std::vector<std::string> keys_text;
  std::string queries_text, repeat_text = "15", warmup_text = "3", seed_text = "1";
};

// The numbers of the command line, checked before any work (exit 1, naming the option and the
// limit). Sizes are bounded by the host's memory: a query takes up to 12 bytes (an int64 key and
// its int32 result), a key up to 8.
void parse_numbers(bench_args& a) {
  for (const std::string& k : a.keys_text) a.keys.push_back(parse_size(k, "--keys", 1, 8));
  if (!a.queries_text.empty()) a.queries = parse_size(a.queries_text, "--queries", 1, 12);
  a.repeat = int(parse_count(a.repeat_text, "--repeat", 1, 1000000));
  a.warmup = int(parse_count(a.warmup_text, "--warmup", 0, 1000000));
  a.seed = parse_seed(a.seed_text);
}

/// Sum of the bytes read as little-endian uint64 words, the last one zero-padded: the checksum
/// bench/common/inputs.py computes to prove it regenerated the same inputs.
template <class T>
uint64_t checksum(const std::vector<T>& v) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  const size_t n = v.size() * sizeof(T);
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes + i, std::min<size_t>(8, n - i));
    sum += word;
  }
  return sum;
}

/// The largest key count whose padded copy fits in shared memory (0 without a GPU).
int64_t shared_max_keys(int key_bytes, const cuda_device_info& dev) {
  return dev.shared_per_block_optin / key_bytes - 2 * warp_width;
}

std::vector<int64_t> default_keys(int key_bytes, bool gpu, bool quick, const cuda_device_info& dev) {
  if (quick) return {1024, 65536};
  if (!gpu) return {1024, 16384, 1 << 20};
  std::vector<int64_t> ks;
  const int64_t max = shared_max_keys(key_bytes, dev);
  for (int64_t k = 32; k <= 32768 && k <= max; k *= 2) ks.push_back(k);
  if (49152 <= max) ks.push_back(49152);
  ks.push_back(max);
  return ks;
}

/// Results of one timed configuration, as the JSON row of bench/README.md.
json row(const char* impl, const std::string& algo, std::string_view key_type, int64_t k,
         const std::string& kind, int64_t q, const char* out_type, int key_bytes, int out_bytes,
         const timing& t, std::optional<bool> verified, const std::string& version) {
  const double bytes = double(q) * (key_bytes + out_bytes) + double(k) * key_bytes;
  json r = {{"impl", impl},
            {"algo", algo.empty() ? json(nullptr) : json(algo)},
            {"key_type", key_type},
            {"k", k},
            {"query_kind", kind},
            {"q", q},
            {"out_type", out_type},
            {"ms", t.median_ms},
            {"ms_min", t.min_ms},
            {"ms_max", t.max_ms},
            {"runs", t.runs_ms.size()},
            {"gqps", t.median_ms > 0 ? double(q) / (t.median_ms * 1e6) : 0.0},
            {"gbps", t.median_ms > 0 ? bytes / (t.median_ms * 1e6) : 0.0},
            {"bytes", bytes},
            {"verified", verified ? json(*verified) : json(nullptr)},
            {"peer_version", version.empty() ? json(nullptr) : json(version)}};
  return r;
}

void print_row(const json& r) {
  print(format("%-7s K=%-8lld %-6s %-9s %-14s %9.4f ms %9.3f G q/s %7.1f GB/s %s\n",
              r["key_type"].get<std::string>().c_str(), (long long)r["k"].get<int64_t>(),
              r["query_kind"].get<std::string>().c_str(), r["impl"].get<std::string>().c_str(),
              r["algo"].is_null() ? "" : r["algo"].get<std::string>().c_str(), r["ms"].get<double>(),
              r["gqps"].get<double>(), r["gbps"].get<double>(),
              r["verified"].is_null() ? "" : (r["verified"].get<bool>() ? "ok" : "WRONG")));
  flush_stdout();  // a row as soon as it is measured; a stdout that cannot take it stops the run
}

/// Checks a sample of results (every stride-th query, about 100,000) against std::upper_bound.
template <class T>
bool verify_sample(const std::vector<T>& keys, const std::vector<T>& queries, const std::vector<int32_t>& out) {
  const size_t stride = std::max<size_t>(1, queries.size() / 100000);
  for (size_t j = 0; j < queries.size(); j += stride)
    if (out[j] != reference_result(keys, queries[j], side::right)) return false;
  return true;
}

/// The inputs of one configuration (those of `gsearch gen` with the same seed), recorded with
/// their checksums in report["inputs"].
template <class T>
generated<T> generate_inputs(const bench_args& a, int64_t k, const std::string& kind, json& report) {
  generated<T> in = generate<T>(k, a.queries, kind, a.seed);
  report["inputs"].push_back({{"key_type", key_traits<T>::name}, {"k", k}, {"query_kind", kind}, {"q", a.queries},
                              {"seed", a.seed}, {"keys_checksum", std::to_string(checksum(in.keys))},
                              {"queries_checksum", std::to_string(checksum(in.queries))}});
  return in;
}

// ---- GPU ----------------------------------------------------------------------------------

template <class T>
void bench_gpu_inputs(const bench_args& a, int64_t k, const std::string& kind, json& report) {
  const int64_t q = a.queries;
  const generated<T> in = generate_inputs<T>(a, k, kind, report);
  const cuda_device_info dev = cuda_device_properties();
  // Several copies of the queries when one would sit in L2, so that no run reads another's cache.
  const int64_t query_bytes = q * int64_t(sizeof(T));
  const int copies = int(std::clamp<int64_t>((2 * dev.l2_bytes + query_bytes - 1) / std::max<int64_t>(1, query_bytes), 1, 8));
  const auto d_keys = to_device(in.keys);
  std::vector<device_vector<T>> d_queries;
  for (int c = 0; c < copies; ++c) d_queries.push_back(to_device(in.queries));
  device_vector<int32_t> d_out(q);
  std::vector<int32_t> out(static_cast<size_t>(q));
  const char* key_type = key_traits<T>::name;

  const bool shared = int64_t(sizeof(T)) * (k + 2 * warp_width) <= dev.shared_per_block_optin;
  for (const std::string& name : a.algos) {
    const algorithm algo = parse_algorithm(name);
    const std::string resolved(to_string(resolve_algorithm(cuda, algo, int(sizeof(T)), k, q, unlimited_temp_bytes,
                                                              std::is_floating_point_v<T>)));
    int next = 0;
    const timing t = time_runs(a.warmup, a.repeat, [&] {
      const T* queries = d_queries[size_t(next++ % copies)].data();
      return elapsed_ms(cuda, [&] {
        upper_bound(cuda, span<const T>(d_keys), span<const T>(queries, q), span<int32_t>(d_out), {algo, false});
      });
    });
    d_out.copy_to(span<int32_t>(out));
    json r = row("gsearch", name == "auto" ? "auto:" + resolved : name, key_type, k, kind, q, "int32",
                 int(sizeof(T)), 4, t, verify_sample(in.keys, in.queries, out), "");
    r["copies"] = copies;
    r["path"] = shared ? "shared" : "global";
    print_row(r);
    report["results"].push_back(r);
  }
}

// ---- CPU ----------------------------------------------------------------------------------

template <class T>
void bench_cpu_inputs(const bench_args& a, int64_t k, const std::string& kind, json& report) {
  const int64_t q = a.queries;
  const generated<T> in = generate_inputs<T>(a, k, kind, report);
  std::vector<int32_t> out(static_cast<size_t>(q));
  const char* key_type = key_traits<T>::name;
  auto record = [&](const char* impl, const std::string& algo, const timing& t, int threads) {
    json r = row(impl, algo, key_type, k, kind, q, "int32", int(sizeof(T)), 4, t,
                 verify_sample(in.keys, in.queries, out), "");
    r["threads"] = threads;
    print_row(r);
    report["results"].push_back(r);
  };
  const int threads = gsearch::cpu_threads();  // what gsearch::cpu runs on
  for (const std::string& name : a.algos) {
    const algorithm algo = parse_algorithm(name);
    const std::string resolved(to_string(resolve_algorithm(cpu, algo, int(sizeof(T)), k, int64_t(in.queries.size()),
                                                              unlimited_temp_bytes, std::is_floating_point_v<T>)));
    const timing t = time_runs(a.warmup, a.repeat, [&] {
      return wall_ms([&] {
        upper_bound(cpu, span<const T>(in.keys), span<const T>(in.queries), span<int32_t>(out), {algo, false});
      });
    });
    record("gsearch-cpu", name == "auto" ? "auto:" + resolved : name, t, threads);
  }
  const auto less = [](T x, T y) { return key_less(x, y); };
  const timing t = time_runs(a.warmup, a.repeat, [&] {
    return wall_ms([&] {
      for (size_t j = 0; j < in.queries.size(); ++j)
        out[j] = int32_t(std::upper_bound(in.keys.begin(), in.keys.end(), in.queries[j], less) - in.keys.begin());
    });
  });
  record("std", "upper_bound", t, 1);
}

exit_code run_bench(bench_args a) {
  check_paths({}, {{"--json", a.json_path}});  // (no input files: nothing to clash)
  parse_numbers(a);
  progress::phase("benchmarking");
  const bool gpu = a.device == "cuda" || (a.device == "auto" && cuda_device_count() > 0);
  if (a.device == "cuda" && cuda_device_count() == 0)
    throw failure(exit_device_or_io, gsearch::built_with_cuda() ? "--device cuda: no CUDA device found"
                                                                : "--device cuda: gsearch was built without CUDA");
  if (a.quick) {
    if (a.queries == 0) a.queries = int64_t(1) << 20;
    a.repeat = std::min(a.repeat, 3);
    a.warmup = std::min(a.warmup, 1);
    a.query_kinds = {"random"};
    a.key_types = {"int32"};
  }
  if (a.queries == 0) a.queries = gpu ? int64_t(1) << 27 : int64_t(1) << 22;
  if (!gpu && a.algos == bench_args{}.algos) a.algos = {"auto", "pbs-cl"};
  for (const std::string& name : a.algos) (void)parse_algorithm(name);

  const cuda_device_info dev = gpu ? cuda_device_properties() : cuda_device_info{};
  const build_info_t build = build_info();
  json report = {{"schema", "gsearch-bench-search/1"}, {"command", a.command_line},
                 {"source", {{"commit", build.commit}, {"dirty", build.dirty}}}};
  if (gpu) {
    report["device"] = {{"backend", "cuda"}, {"name", dev.name}, {"compute_capability", dev.compute_capability},
                        {"sms", dev.sms}, {"l2_bytes", dev.l2_bytes},
                        {"shared_per_block_optin", dev.shared_per_block_optin},
                        {"driver_version", dev.driver_version}, {"runtime_version", dev.runtime_version}};
  } else {
    report["device"] = {{"backend", "cpu"}, {"threads", gsearch::cpu_threads()}};
  }
  report["versions"] = {{"gsearch", GSEARCH_VERSION}};
  std::vector<int64_t> all_ks;
  report["config"] = {{"queries", a.queries}, {"seed", a.seed}, {"key_types", a.key_types},
                      {"query_kinds", a.query_kinds}, {"algos", a.algos}, {"peers", json::array()},
                      {"repeat", a.repeat}, {"warmup", a.warmup}, {"sweep", false}};
  report["inputs"] = json::array();
  report["results"] = json::array();
  report["skipped"] = json::array();
  for (const std::string& type_name : a.key_types) {
    const auto t = gsearch::dtype_from_name(type_name);
    if (!t) throw failure(exit_bad_input, "unknown key type '" + type_name + "'");
    gsearch::visit_key_type(*t, [&]<class T>() {
      const std::vector<int64_t> ks = a.keys.empty() ? default_keys(int(sizeof(T)), gpu, a.quick, dev) : a.keys;
      for (int64_t k : ks) {
        if (std::find(all_ks.begin(), all_ks.end(), k) == all_ks.end()) all_ks.push_back(k);
        for (const std::string& kind : a.query_kinds) {
          if (gpu) bench_gpu_inputs<T>(a, k, kind, report);
          else bench_cpu_inputs<T>(a, k, kind, report);
        }
      }
    });
  }
  report["config"]["ks"] = all_ks;
  if (!a.json_path.empty()) {
    npy::save_text(a.json_path, report.dump(1) + "\n");
    note(format("bench: %zu results -> %s", report["results"].size(), a.json_path.c_str()));
  }
  return exit_ok;
}

}  // namespace

command add_bench_command(CLI::App& app, int argc, char** argv) {
  auto a = std::make_shared<bench_args>();
  for (int i = 0; i < argc; ++i) a->command_line += (i ? " " : "") + std::string(argv[i]);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks of gsearch on this machine");
  bench->require_subcommand(1, 1);
  CLI::App* sub = bench->add_subcommand(
      "search", "Time batched search (upper_bound, int32 output) for many key counts: gsearch's algorithms on "
                "a GPU; CPU: gsearch vs std::upper_bound");
  sub->footer(
      "On a GPU: CUDA events around each run, --warmup untimed runs first, the median of --repeat runs; "
      "query buffers are rotated when one would fit in L2. Inputs are those of `gsearch gen` (same "
      "seed), so bench/search/search_peers.py can time torch and cupy on the same data. Every result "
      "is spot-checked against std::upper_bound (about 100,000 queries per run). The GPU peers (the memory "
      "roofline, thrust, CUB) and the kernel sweep: bench/search/search_bench (bench/README.md).");
  sub->add_option("--keys", a->keys_text, "Key counts, 1 or more (default: 32, 64, ..., 32768, 49152 and the "
                                          "shared-memory maximum for each key type; CPU: 1024, 16384, 2^20)")
      ->delimiter(',')->type_name("K,...");
  sub->add_option("--queries", a->queries_text, "Queries per run, 1 or more (default 2^27 on a GPU, 2^22 on the CPU)")
      ->type_name("N");
  sub->add_option("--key-type", a->key_types, "Key types")->delimiter(',')
      ->check(CLI::IsMember(dtype_names()))->capture_default_str();
  sub->add_option("--query-kind", a->query_kinds, "random (keys drawn at random) and/or worst (the paper's "
                                                 "worst case for PBS)")
      ->delimiter(',')->check(CLI::IsMember(query_kind_names))->capture_default_str();
  sub->add_option("--algo", a->algos, "gsearch algorithms (CPU default: auto,pbs-cl)")->delimiter(',')
      ->check(CLI::IsMember(algorithm_names(true)))->capture_default_str();
  sub->add_option("--repeat", a->repeat_text, "Timed runs per configuration, 1 or more (the median is reported)")
      ->type_name("N")->capture_default_str();
  sub->add_option("--warmup", a->warmup_text, "Untimed runs first (0 or more)")->type_name("N")->capture_default_str();
  sub->add_option("--seed", a->seed_text, "Seed of the inputs, 0 to 2^64 - 1 (as `gsearch gen --seed`)")
      ->type_name("S")->capture_default_str();
  sub->add_option("--device", a->device, "auto: cuda if a CUDA device is available, else cpu")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
  sub->add_flag("--quick", a->quick, "A small run (int32, random queries, K = 1024 and 65536, 2^20 queries, "
                                     "3 runs): under a minute on a CPU");
  sub->add_option("--json", a->json_path, "Also write the results as JSON (bench/README.md) to this file (checked "
                                          "before the run: its directory must exist and be writable)")
      ->type_name("FILE");
  return {sub, [a] { return run_bench(*a); }, nullptr};
}

}  // namespace gsearch::cli
