// search_bench: gsearch's batched search (upper_bound, numpy side='right', int32 output) on the
// GPU against the memory roofline, thrust::upper_bound (the CUDA toolkit's CCCL) and
// cub::DeviceFind::UpperBound (the newer CCCL of scripts/fetch-cccl.sh), on the inputs of
// `gsearch gen` (same seed), so that bench/search/search_peers.py can add torch, cupy and jax on
// the very same data. With --sweep, gsearch's shared-memory kernels at every compiled launch
// configuration instead (the data of the CUDA tuning header's search configuration).
// `gsearch bench search` (the CLI) times gsearch alone; this program adds the peers, in the same
// JSON (bench/README.md: "schema": "gsearch-bench-search/1").
//
//   search_bench [--json FILE] [--quick] [--keys K,...] [--queries N] [--key-type int32,int64]
//                [--query-kind random,worst,sentinel] [--algo pbs,pbs-cf,pbs-cl,binary]
//                [--peers roofline,thrust,cub] [--sweep] [--repeat 15] [--warmup 3] [--seed 1]
//
// Keys: by default 32, 64, ..., 32768, 49152 and the shared-memory maximum of each key type
// (--quick: 1024 and 65536, int32, random queries, 2^20 queries, 3 runs). Queries: 2^27.
// Timing: CUDA events around one call (gsearch::elapsed_ms), --warmup untimed runs, the median of
// --repeat; the runs rotate among clamp(ceil(2 L2 / (Q sizeof(key))), 1, 8) device copies of the
// queries (`copies`) so that no run reads its queries from the L2 the last one left. Every timed
// result (the last run's) is spot-checked: about 100,000 queries (every (Q / 100,000)-th) against
// std::upper_bound. Exit status: 0 ok, 1 bad usage, 2 no CUDA device, 3 a check failed or a
// call threw (the JSON is still written).

#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bench_host.hpp"
#include "cccl.hpp"
#include "gsearch/core/dtype.hpp"
#include "tools/query_gen.hpp"
#include "gsearch/gsearch.hpp"
#include "report.hpp"
#include "search_peers.hpp"

namespace {

using namespace gsearch;
using bench::json;
namespace peers = gsearch::bench::search_peers;

struct args : bench::common_args {
  args() : common_args(15, 3) {}
  std::vector<int64_t> keys;  // empty: the default sweep of the device
  int64_t queries = 0;        // 0: 2^27 (--quick: 2^20)
  std::vector<std::string> key_types{"int32", "int64"};
  std::vector<std::string> query_kinds{"random", "worst"};
  std::vector<std::string> algos{"pbs", "pbs-cf", "pbs-cl", "binary"};
  std::vector<std::string> peers{"roofline", "thrust", "cub"};
  bool sweep = false;
};

/// The key counts of the default run: powers of two from 32 to 32768, 49152, and the largest
/// count whose padded copy fits in shared memory (the end of the shared-memory path).
std::vector<int64_t> default_keys(int key_bytes, const cuda_device_info& dev) {
  const int64_t max = dev.shared_per_block_optin / key_bytes - 2 * warp_width;
  std::vector<int64_t> ks;
  for (int64_t k = 32; k <= std::min<int64_t>(32768, max); k *= 2) ks.push_back(k);
  if (max >= 49152) ks.push_back(49152);
  ks.push_back(max);
  return ks;
}

struct runner {
  args a;
  json report;
  int problems = 0;
  cuda_device_info dev = cuda_device_properties();

  explicit runner(const args& a_) : a(a_) {}

  /// One timed configuration as bench/README.md's row (the CLI's rows have the same fields).
  json row(const char* impl, const std::string& algo, const char* key_type, int64_t k, const std::string& kind,
           int key_bytes, const bench::timing& t, std::optional<bool> verified, const std::string& version) const {
    const int64_t q = a.queries;
    const double bytes = double(q) * (key_bytes + 4) + double(k) * key_bytes;
    const double ms = t.median_ms;
    json r = {{"impl", impl}, {"algo", algo.empty() ? json(nullptr) : json(algo)}, {"key_type", key_type},
              {"k", k}, {"query_kind", kind}, {"q", q}, {"out_type", "int32"}};
    r["ms"] = ms;
    r["ms_min"] = t.min_ms;
    r["ms_max"] = t.max_ms;
    r["runs"] = t.runs_ms.size();
    r["gqps"] = ms > 0 ? double(q) / (ms * 1e6) : 0.0;
    r["gbps"] = ms > 0 ? bytes / (ms * 1e6) : 0.0;
    r["bytes"] = bytes;
    r["verified"] = verified ? json(*verified) : json(nullptr);
    r["peer_version"] = version.empty() ? json(nullptr) : json(version);
    return r;
  }

  void print(const json& r) const {
    std::printf("%-7s K=%-8lld %-6s %-9s %-14s %9.4f ms %9.3f G q/s %7.1f GB/s %s\n",
                r["key_type"].get<std::string>().c_str(), (long long)r["k"].get<int64_t>(),
                r["query_kind"].get<std::string>().c_str(), r["impl"].get<std::string>().c_str(),
                r["algo"].is_null() ? "" : r["algo"].get<std::string>().c_str(), r["ms"].get<double>(),
                r["gqps"].get<double>(), r["gbps"].get<double>(),
                r["verified"].is_null() ? "" : (r["verified"].get<bool>() ? "ok" : "WRONG"));
    std::fflush(stdout);
  }

  template <class T>
  void configuration(int64_t k, const std::string& kind) {
    const int64_t q = a.queries;
    std::vector<T> keys = gen::sorted_keys<T>(k, a.seed);
    if (kind == "sentinel" && k > 0) keys.back() = key_traits<T>::highest();  // (still sorted)
    const std::vector<T> queries = kind == "worst" ? gen::worst_case_queries(keys.data(), k, q, a.seed + 1)
                                                   : gen::random_queries_from_keys(keys.data(), k, q, a.seed + 1);
    const char* key_type = key_traits<T>::name;
    report["inputs"].push_back(
        {{"key_type", key_type}, {"k", k}, {"query_kind", kind}, {"q", q}, {"seed", a.seed},
         {"keys_checksum", std::to_string(bench::host::checksum(keys.data(), keys.size() * sizeof(T)))},
         {"queries_checksum", std::to_string(bench::host::checksum(queries.data(), queries.size() * sizeof(T)))}});
    // Several copies of the queries when one would sit in L2, so that no run reads another's cache.
    const int64_t query_bytes = q * int64_t(sizeof(T));
    const int copies =
        int(std::clamp<int64_t>((2 * dev.l2_bytes + query_bytes - 1) / std::max<int64_t>(1, query_bytes), 1, 8));
    const auto d_keys = to_device(keys);
    std::vector<device_vector<T>> d_queries;
    for (int c = 0; c < copies; ++c) d_queries.push_back(to_device(queries));
    device_vector<int32_t> d_out(q);
    std::vector<int32_t> out(static_cast<size_t>(q));

    // Every (Q / 100,000)-th query against std::upper_bound, in the library's order of keys.
    auto spot_check = [&] {
      d_out.copy_to(span<int32_t>(out));
      const size_t stride = std::max<size_t>(1, queries.size() / 100000);
      const auto less = [](T x, T y) { return key_less(x, y); };
      for (size_t j = 0; j < queries.size(); j += stride)
        if (out[j] != std::upper_bound(keys.begin(), keys.end(), queries[j], less) - keys.begin()) return false;
      return true;
    };
    auto measure = [&](const char* impl, const std::string& algo, const std::string& version, auto&& enqueue) {
      int next = 0;
      const bench::timing t = bench::time_runs(a.warmup, a.repeat, [&] {
        const T* qs = d_queries[size_t(next++ % copies)].data();
        return elapsed_ms(cuda, [&] { enqueue(qs); });
      });
      std::optional<bool> ok;
      if (std::string(impl) != "roofline") ok = spot_check();
      if (ok == false) ++problems;
      json r = row(impl, algo, key_type, k, kind, int(sizeof(T)), t, ok, version);
      r["copies"] = copies;
      print(r);
      report["results"].push_back(r);
      return &report["results"].back();
    };

    if (a.sweep) {
      if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        for (const peers::kernel_config c : peers::sweep_configs()) {
          const std::string name(to_string(c.algo));
          if (std::find(a.algos.begin(), a.algos.end(), name) == a.algos.end()) continue;
          json* r = measure("gsearch", name, "", [&](const T* qs) {
            peers::gsearch_upper_bound_with<T>(nullptr, c, d_keys.data(), k, qs, q, d_out.data());
          });
          (*r)["threads"] = c.threads;
          (*r)["items"] = c.items;
          (*r)["key_copies"] = c.copies;
        }
      }
      return;
    }
    const bool shared = int64_t(sizeof(T)) * (k + 2 * warp_width) <= dev.shared_per_block_optin;
    for (const std::string& name : a.algos) {
      const algorithm algo = *algorithm_from_string(name);
      const std::string resolved(to_string(
          resolve_algorithm(cuda, algo, int(sizeof(T)), k, q, unlimited_temp_bytes, std::is_floating_point_v<T>)));
      json* r = measure("gsearch", name == "auto" ? "auto:" + resolved : name, "", [&](const T* qs) {
        upper_bound(cuda, span<const T>(d_keys), span<const T>(qs, q), span<int32_t>(d_out), {algo, false});
      });
      (*r)["path"] = shared ? "shared" : "global";
    }
    for (const std::string& peer : a.peers) {
      if (peer == "roofline") {
        measure("roofline", "", "", [&](const T* qs) { peers::roofline_copy<T>(nullptr, qs, q, d_out.data()); });
      } else if (peer == "thrust") {
        measure("thrust", "", bench::toolkit_cccl_version(), [&](const T* qs) {
          peers::thrust_upper_bound<T>(nullptr, d_keys.data(), k, qs, q, d_out.data());
        });
      } else if (peer == "cub" && bench::new_cccl_available()) {
        const size_t temp_bytes = peers::cub_temp_bytes<T>(d_keys.data(), k, d_queries[0].data(), q, d_out.data());
        device_vector<unsigned char> temp(int64_t(std::max<size_t>(1, temp_bytes)));
        measure("cub", "", bench::new_cccl_version(), [&](const T* qs) {
          peers::cub_upper_bound<T>(nullptr, temp.data(), temp_bytes, d_keys.data(), k, qs, q, d_out.data());
        });
      }
    }
  }

  void run() {
    std::vector<int64_t> all_ks;
    for (const std::string& type : a.key_types) {
      visit_key_type(*dtype_from_name(type), [&]<class T>() {
        const std::vector<int64_t> ks = !a.keys.empty() ? a.keys
                                        : a.quick      ? std::vector<int64_t>{1024, 65536}
                                                       : default_keys(int(sizeof(T)), dev);
        for (int64_t k : ks) {
          if (std::find(all_ks.begin(), all_ks.end(), k) == all_ks.end()) all_ks.push_back(k);
          for (const std::string& kind : a.query_kinds) configuration<T>(k, kind);
        }
      });
    }
    report["config"]["ks"] = all_ks;
  }
};

}  // namespace

int main(int argc, char** argv) {
  args a;
  CLI::App app{"search_bench: gsearch's batched search (upper_bound, int32 output) for many key counts on the GPU "
               "against the roofline copy, thrust::upper_bound and cub::DeviceFind::UpperBound, on the inputs of "
               "`gsearch gen` (bench/README.md)."};
  app.footer(
      "Timing: CUDA events around each run, --warmup untimed runs first, the median of --repeat runs; query buffers "
      "are rotated when one would fit in L2. Every result is spot-checked against std::upper_bound (about 100,000 "
      "queries). Exit status 0 ok, 1 bad usage, 2 no CUDA device, 3 a check failed or a call threw.");
  bench::add_common_options(app, a, "A small run (int32, random queries, K = 1024 and 65536, 2^20 queries, 3 runs)",
                            "Seed of the inputs (as `gsearch gen --seed`)");
  app.add_option("--keys", a.keys, "Key counts (default: 32, 64, ..., 32768, 49152 and the shared-memory maximum "
                                   "for each key type)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  app.add_option("--queries", a.queries, "Queries per run (default 2^27)")->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  std::vector<std::string> types;
  for (dtype t : all_dtypes) types.emplace_back(name(t));
  app.add_option("--key-type", a.key_types, "Key types")->delimiter(',')->check(CLI::IsMember(types))->capture_default_str();
  app.add_option("--query-kind", a.query_kinds, "random (keys drawn at random), worst (the paper's worst case "
                                                "for PBS) and/or sentinel (random, the last key made the type's "
                                                "highest value: one outlier, issue 42's buckets)")
      ->delimiter(',')
      ->check(CLI::IsMember({"random", "worst", "sentinel"}))
      ->capture_default_str();
  app.add_option("--algo", a.algos, "gsearch algorithms")
      ->delimiter(',')
      ->check(CLI::IsMember({"auto", "pbs", "pbs-cf", "pbs-cl", "binary", "index", "partitioned", "pary", "merge"}))
      ->capture_default_str();
  app.add_option("--peers", a.peers, "Peers to run beside gsearch")
      ->delimiter(',')
      ->check(CLI::IsMember({"roofline", "thrust", "cub"}))
      ->capture_default_str();
  app.add_flag("--sweep", a.sweep, "Time gsearch's kernels at every compiled launch configuration (threads per block x "
                                   "queries per thread) instead (int32 / int64 keys)");
  if (auto rc = bench::parse(app, argc, argv, a)) return *rc;
  if (a.quick) {
    if (a.queries == 0) a.queries = int64_t(1) << 20;
    a.repeat = std::min(a.repeat, 3);
    a.warmup = std::min(a.warmup, 1);
    a.query_kinds = {"random"};
    a.key_types = {"int32"};
  }
  if (a.queries == 0) a.queries = int64_t(1) << 27;
  if (auto rc = bench::require_gpu("search_bench", "search")) return *rc;

  const cuda_device_info dev = cuda_device_properties();
  json report = bench::gpu_report("gsearch-bench-search/1", a, dev, bench::cccl_versions("cub_devicefind"));
  report["device"] = {{"backend", "cuda"}, {"name", dev.name}, {"compute_capability", dev.compute_capability},
                      {"sms", dev.sms}, {"l2_bytes", dev.l2_bytes}, {"shared_per_block_optin", dev.shared_per_block_optin},
                      {"driver_version", dev.driver_version}, {"runtime_version", dev.runtime_version}};
  report["config"] = {{"queries", a.queries}, {"seed", a.seed}, {"key_types", a.key_types},
                      {"query_kinds", a.query_kinds}, {"algos", a.algos}, {"peers", a.peers},
                      {"repeat", a.repeat}, {"warmup", a.warmup}, {"sweep", a.sweep}};
  for (const char* k : {"inputs", "results", "skipped"}) report[k] = json::array();
  bench::print_banner("search_bench", report);
  return bench::run_and_report<runner>("search_bench", a, std::move(report));
}
