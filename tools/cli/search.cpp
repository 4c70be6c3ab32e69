// `gsearch search`: batched search of sorted keys in .npy files, on the CPU or a CUDA device.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <type_traits>

#include "common.hpp"
#include "timing.hpp"
#include "gsearch/gsearch.hpp"
#include "npy.hpp"

namespace gsearch::cli {
namespace {

struct search_args {
  std::string keys, queries, out;
  std::string side = "left", algo = "auto", device = "auto";
  bool assume_sorted = false, int32 = false, verify = false, json = false;
  int repeat = 1;
};

// Where the search runs.
struct target {
  bool cuda = false;
  std::string name;  // "NVIDIA H100 ..., sm_90, 132 SMs" or "<CPU model>, 16 threads"
};

std::string cpu_name() {
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; model.empty() && std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      model = line.substr(line.find(':') + 2) + ", ";
  return model + std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
}

target resolve_device(const std::string& device) {
  const bool have_gpu = cuda_device_count() > 0;
  if (device == "cuda" && !have_gpu)
    throw failure(exit_device_or_io, built_with_cuda()
                                         ? "--device cuda: no CUDA device is available"
                                         : "--device cuda: this gsearch was built without CUDA "
                                           "(GSEARCH_CUDA=OFF); use --device cpu");
  if (device == "cuda" || (device == "auto" && have_gpu)) return {true, cuda_device_name()};
  return {false, cpu_name()};
}

// The first index where the keys go down, named in the error (the check itself is the library's).
template <class T>
void check_sorted(const std::vector<T>& keys, const std::string& path) {
  if (gsearch::is_sorted(gsearch::cpu, span<const T>(keys))) return;
  const auto less = [](T a, T b) { return key_less(a, b); };
  const int64_t i = std::is_sorted_until(keys.begin(), keys.end(), less) - keys.begin();
  std::string what = "keys are not sorted";
  if (i < int64_t(keys.size()))
    what += " at index " + std::to_string(i) + " of " + path + ": keys[" + std::to_string(i - 1) +
            "] = " + to_text(keys[size_t(i - 1)]) + " > keys[" + std::to_string(i) +
            "] = " + to_text(keys[size_t(i)]);
  if constexpr (std::is_floating_point_v<T>) what += " (gsearch orders NaN last and -0.0 == 0.0)";
  throw failure(exit_bad_input, what + "; sort them, or pass --assume-sorted");
}

template <class T, class Out>
timing run_on_cpu(side sd, const std::vector<T>& keys, const std::vector<T>& queries,
                  std::vector<Out>& out, const search_options& opts, int repeat) {
  return time_runs(1, repeat, [&] {
    const auto start = std::chrono::steady_clock::now();
    gsearch::search(gsearch::cpu, sd, span<const T>(keys), span<const T>(queries), span<Out>(out),
                    opts);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  });
}

template <class T, class Out>
timing run_on_cuda(side sd, const std::vector<T>& keys, const std::vector<T>& queries,
                   std::vector<Out>& out, const search_options& opts, int repeat) {
  const device_vector<T> d_keys{span<const T>(keys)}, d_queries{span<const T>(queries)};
  const device_vector<Out> d_out(int64_t(out.size()));
  const timing t = time_runs(1, repeat, [&] {
    return elapsed_ms(gsearch::cuda, [&] {
      gsearch::search(gsearch::cuda, sd, span<const T>(d_keys), span<const T>(d_queries),
                      span<Out>(d_out), opts);
    });
  });
  d_out.copy_to(span<Out>(out));
  return t;
}

// --verify: every result against std::lower_bound / std::upper_bound in the library's order.
struct verification {
  int64_t mismatches = 0, first = -1, got = 0, expected = 0;
};
template <class T, class Out>
verification verify(side sd, const std::vector<T>& keys, const std::vector<T>& queries,
                    const std::vector<Out>& out) {
  verification v;
  for (size_t j = 0; j < queries.size(); ++j) {
    const int64_t expected = reference_result(keys, queries[j], sd);
    if (int64_t(out[j]) == expected) continue;
    if (v.mismatches == 0) v = {0, int64_t(j), int64_t(out[j]), expected};
    ++v.mismatches;
  }
  return v;
}
std::string_view reference_name(side sd) {
  return sd == side::left    ? "std::lower_bound"
         : sd == side::right ? "std::upper_bound"
                             : "std::upper_bound - 1 (predecessor)";
}

// The indices as text, one per line.
template <class Out>
void print_indices(const std::vector<Out>& out) {
  std::string buf;
  buf.reserve(1 << 20);
  for (Out x : out) {
    buf += to_text(x);
    buf += '\n';
    if (buf.size() > (1 << 20) - 32) {
      std::fwrite(buf.data(), 1, buf.size(), stdout);
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), stdout);
}

// What a search did, for the summary.
struct search_report {
  const target& dev;
  algorithm algo;
  side sd;
  std::string_view dtype, out_dtype;
  int64_t keys, queries;
  timing time;
  bool verified;  // --verify was given
  verification check;
};

// The human summary (stdout with --out, else stderr) or the JSON one (stdout); then the
// --verify verdict.
exit_code report(const search_args& a, const search_report& r) {
  const double queries_per_s =
      r.time.median_ms > 0 ? double(r.queries) / (r.time.median_ms * 1e-3) : 0.0;
  const std::string device = r.dev.cuda ? "cuda" : "cpu";
  if (a.json) {
    nlohmann::ordered_json j = {{"command", "search"},
                                {"device", device},
                                {"device_name", r.dev.name},
                                {"algo", to_string(r.algo)},
                                {"side", to_string(r.sd)},
                                {"dtype", r.dtype},
                                {"out_dtype", r.out_dtype},
                                {"keys", r.keys},
                                {"queries", r.queries},
                                {"out", a.out},
                                {"repeat", a.repeat},
                                {"search_ms", r.time.median_ms},
                                {"search_ms_runs", r.time.runs_ms},
                                {"queries_per_s", queries_per_s},
                                {"verified", nullptr}};
    if (r.verified) {
      j["verified"] = r.check.mismatches == 0;
      j["mismatches"] = r.check.mismatches;
    }
    std::cout << j.dump() << '\n';
  } else {
    std::ostream& log = a.out.empty() ? std::cerr : std::cout;
    char time[64];
    std::snprintf(time, sizeof time, "%.3f ms, %.3f G queries/s", r.time.median_ms,
                  queries_per_s * 1e-9);
    log << "search: " << r.queries << " queries, " << r.keys << " " << r.dtype
        << " keys, side=" << to_string(r.sd) << ", algo=" << to_string(r.algo)
        << ", device=" << device << " (" << r.dev.name << "): " << time << '\n';
    if (r.verified && r.check.mismatches == 0)
      log << "check: all " << r.queries << " results match " << reference_name(r.sd) << '\n';
    if (r.check.mismatches > 0)
      log << "check: " << r.check.mismatches << " of " << r.queries
          << " results differ (first at index " << r.check.first << ": got " << r.check.got
          << ", expected " << r.check.expected << ")\n";
  }
  if (r.check.mismatches > 0)
    throw failure(exit_mismatch, "--verify: " + std::to_string(r.check.mismatches) +
                                     " results differ from " + std::string(reference_name(r.sd)) +
                                     "; no output written");
  return exit_ok;
}

template <class T, class Out>
exit_code search_typed(const search_args& a, const target& dev, npy::input& keys_file,
                       npy::input& queries_file) {
  const std::vector<T> keys = keys_file.read<T>();
  const std::vector<T> queries = queries_file.read<T>();
  if (!a.assume_sorted) check_sorted(keys, keys_file.path());

  const side sd = side_from_string(a.side);
  search_options opts;
  opts.algo = parse_algorithm(a.algo);
  if (opts.algo == algorithm::auto_)  // resolved here, so that the summary names what ran
    opts.algo = dev.cuda ? resolve_algorithm(cuda, opts.algo, int(sizeof(T)), int64_t(keys.size()))
                         : resolve_algorithm(cpu, opts.algo, int(sizeof(T)), int64_t(keys.size()));

  std::vector<Out> out(queries.size());
  const timing t = dev.cuda ? run_on_cuda(sd, keys, queries, out, opts, a.repeat)
                            : run_on_cpu(sd, keys, queries, out, opts, a.repeat);
  const verification v = a.verify ? verify(sd, keys, queries, out) : verification{};
  if (v.mismatches == 0) {
    if (!a.out.empty()) {
      npy::save(a.out, span<const Out>(out));
    } else {
      print_indices(out);
    }
  }
  return report(a, {dev, opts.algo, sd, key_traits<T>::name, key_traits<Out>::name,
                    int64_t(keys.size()), int64_t(queries.size()), t, a.verify, v});
}

exit_code run_search(const search_args& a) {
  if (a.json && a.out.empty())
    throw failure(exit_bad_input, "--json needs --out (without --out the indices go to stdout)");
  const target dev = resolve_device(a.device);
  npy::input keys(a.keys), queries(a.queries);
  if (keys.type() != queries.type())
    throw failure(exit_bad_input, "keys are " + std::string(name(keys.type())) +
                                      " but queries are " + std::string(name(queries.type())) +
                                      ": gsearch never casts");
  return visit(keys.type(), [&]<class T>() {
    return a.int32 ? search_typed<T, int32_t>(a, dev, keys, queries)
                   : search_typed<T, int64_t>(a, dev, keys, queries);
  });
}

}  // namespace

command add_search_command(CLI::App& app) {
  auto a = std::make_shared<search_args>();
  CLI::App* sub = app.add_subcommand(
      "search", "Search sorted keys for queries, like numpy.searchsorted, on the CPU or a GPU");
  sub->footer(
      "Keys and queries are 1-D little-endian .npy files of one dtype: int32, uint32, int64, "
      "uint64, float32 or float64 (gsearch never casts). Floats are in numpy's order: NaN last, "
      "-0.0 == 0.0.");
  sub->add_option("--keys", a->keys, "Sorted keys (.npy)")->required()->type_name("K.npy");
  sub->add_option("--queries", a->queries, "Queries (.npy, the keys' dtype)")
      ->required()
      ->type_name("Q.npy");
  sub->add_option("--out", a->out,
                  "Write the indices to this .npy file (int64, or int32 with --int32), through a "
                  "temporary file renamed at the end; the summary then goes to stdout. Without "
                  "--out the indices go to stdout, one per line, and the summary to stderr")
      ->type_name("OUT.npy");
  sub->add_option("--side", a->side,
                  "left: the first i with keys[i] >= q (numpy side='left'); right: the first i "
                  "with keys[i] > q (side='right'); pred: the largest i with keys[i] <= q, or -1")
      ->check(CLI::IsMember(side_names))
      ->capture_default_str();
  sub->add_option("--algo", a->algo,
                  "auto: the backend's choice (CPU: binary; CUDA: by key count and size); pbs, "
                  "pbs-cf, pbs-cl: the paper's parallel binary searches; binary: branch-free "
                  "binary search")
      ->check(CLI::IsMember(algorithm_names(true)))
      ->capture_default_str();
  sub->add_option("--device", a->device, "auto: cuda if a CUDA device is available, else cpu")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  sub->add_flag("--assume-sorted", a->assume_sorted,
                "Do not check that the keys are sorted (unsorted keys then give unspecified "
                "results)");
  sub->add_flag("--int32", a->int32,
                "Write int32 indices (an error if the key count does not fit)");
  sub->add_flag("--verify", a->verify,
                "Check every result against std::lower_bound / std::upper_bound on the host; "
                "exit 3, writing no output, if any differs");
  sub->add_option("--repeat", a->repeat,
                  "Time N searches after one warm-up run and report the median (CUDA: events "
                  "around the search alone; CPU: wall clock)")
      ->check(CLI::PositiveNumber)
      ->type_name("N")
      ->capture_default_str();
  sub->add_flag("--json", a->json,
                "Print a one-line JSON summary to stdout instead of the human one (needs --out)");
  return {sub, [a] { return run_search(*a); }};
}

}  // namespace gsearch::cli
