// index_bench: the H100 benchmark of issue 9, key sets beyond shared memory. One run, the same
// device buffers for gsearch and its peers; a table on stdout and, with --json, one JSON file.
//
//   index_bench [--json FILE] [--log-keys 20,22,24,26,27] [--key-types int32,int64] [--queries 2^27]
//               [--parts search,qsweep,sweep,psweep] [--pconfigs 64:22:8192,...] [--pshapes]
//               [--repeat 10] [--warmup 2] [--seed 1] [--quick]
//
// Parts:
//   search   for each key type and K = 2^--log-keys sorted keys, Q = --queries random queries,
//            upper_bound with int32 output: gsearch's static index (prebuilt: its search alone,
//            "index-search"; its build alone, "index-build", with the layout's bytes; and the
//            one-shot search(algorithm::index), build included), gsearch binary, partitioned
//            and auto; gsearch's sorted-queries path (CUB radix sort of the queries with their
//            positions, gsearch's merge-path sorted search, scatter back);
//            thrust::upper_bound (toolkit CCCL), cub::DeviceFind::UpperBound (CCCL 3.6), the
//            CUB pipeline sort + UpperBoundSortedValues + scatter (3.6), and the copy roofline
//            (read Q keys, write Q int32).
//   qsweep   int32, K = 2^20, 2^24, 2^26, 2^27 and Q = 2^14 ... 2^26: binary, the one-shot index and
//            the partitioned search, the data of the `auto` rule (tuning.hpp), and auto itself.
//   psweep   the partitioned search's configuration (core::partition_config: bytes of keys per
//            bucket, window, queries per piece; or --pconfigs chunkKB:log2(window):piece,...) at
//            each key type and K, Q = --queries; --pshapes adds other kernel shapes.
//   sweep    int32: the index kernel (16-byte nodes) at two block sizes and five shared-memory
//            budgets, at K = 2^20, 2^24, 2^26, 2^27, Q = --queries.
//
// Inputs, generated on the device (bench/common/device_inputs.cuh): keys = sort(T(word(S, i)))
// (thrust::sort; word(s, i) = mix64(s + (i + 1) * 0x9E3779B97F4A7C15), bench_host.hpp; int32
// keys take the word's top 32 bits), queries[j] = keys[word(S + 1, j) mod K] (the paper's random
// queries, as `gsearch gen`).
// Several copies of the queries when one would sit in L2, rotated, so that no run reads the last
// one's queries from L2.
//
// Timing: CUDA events around one call (gsearch::elapsed_ms), --warmup untimed runs, the median of
// --repeat. Checks: every timed configuration's output (the last run's) is checked on 2^16
// sampled queries against std::upper_bound on a host copy of the keys.
//
// JSON ("schema": "gsearch-bench-index/1"): command, device, versions, config, inputs, results
// [{part, impl, algo, key_type, k, q, ms, ms_min, ms_max, gqps, verified, ...}], failures.

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <cub/device/device_radix_sort.cuh>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_host.hpp"
#include "cccl.hpp"
#include "device_inputs.cuh"
#include "cuda/check.cuh"
#include "merge/backend.hpp"
#include "search/cuda/partition_kernel.cuh"
#include "static_index/cuda.hpp"
#include "static_index/cuda/static_index_kernel.cuh"
#include "gsearch/gsearch.hpp"
#include "report.hpp"
#include "search_peers.hpp"
#include "timing.hpp"

namespace {

using namespace gsearch;
using bench::json;
using bench::time_runs;
using bench::timing;
namespace peers = gsearch::bench::search_peers;

struct bench_args : bench::common_args {
  bench_args() : common_args(10, 2) {}
  std::vector<int> log_keys{20, 22, 24, 26, 27};
  std::vector<std::string> key_types{"int32", "int64"};
  std::vector<std::string> parts{"search", "qsweep", "sweep", "psweep"};
  int64_t queries = int64_t(1) << 27;
  bool pshapes = false;               // psweep: other kernel shapes too
  std::vector<std::string> pconfigs;  // psweep: "chunkKB:log2(window):piece" each, instead of the grid
};

// One (key type, K) set of inputs on the device, and the host copies the checks need.
template <class T>
struct inputs {
  device_vector<T> keys;
  std::vector<device_vector<T>> queries;  // rotated copies
  std::vector<T> host_keys, host_sample;  // the sampled queries
  std::vector<int64_t> sample_at;
  int64_t k = 0, q = 0;

  inputs(int64_t k_, int64_t q_, uint64_t seed, int64_t l2_bytes) : keys(k_), k(k_), q(q_) {
    bench::random_keys_kernel<<<1024, 256>>>(keys.data(), k, seed);
    GSEARCH_CUDA_CHECK_LAUNCH();
    thrust::sort(thrust::device, keys.data(), keys.data() + k);
    const int copies = int(std::clamp<int64_t>((2 * l2_bytes + q * int64_t(sizeof(T)) - 1) / (q * int64_t(sizeof(T))), 1, 8));
    for (int c = 0; c < copies; ++c) {
      queries.emplace_back(q);
      bench::queries_from_keys_kernel<<<1024, 256>>>(keys.data(), k, queries.back().data(), q, seed + 1);
      GSEARCH_CUDA_CHECK_LAUNCH();
    }
    host_keys.resize(size_t(k));
    keys.copy_to(span<T>(host_keys));
    const int64_t samples = std::min<int64_t>(q, 1 << 16);
    std::vector<T> all(static_cast<size_t>(q));
    queries[0].copy_to(span<T>(all));
    for (int64_t s = 0; s < samples; ++s) {
      sample_at.push_back(int64_t(core::mix64(seed + 7 + uint64_t(s)) % uint64_t(q)));
      host_sample.push_back(all[size_t(sample_at.back())]);
    }
  }
  // The last output against std::upper_bound on the sample.
  bool check(const device_vector<int32_t>& out) const {
    std::vector<int32_t> got(static_cast<size_t>(q));
    out.copy_to(span<int32_t>(got));
    for (size_t s = 0; s < sample_at.size(); ++s) {
      const int64_t want = std::upper_bound(host_keys.begin(), host_keys.end(), host_sample[s]) - host_keys.begin();
      const int64_t have = got[static_cast<size_t>(sample_at[s])];
      if (have != want) return false;
    }
    return true;
  }
};

// gsearch's sorted-queries path: the queries sorted with their positions (CUB's radix sort),
// searched by gsearch's merge-path sorted search, the ranks scattered back to query order.
template <class T>
struct sorted_queries_path {
  int64_t q;
  device_vector<T> sorted;
  device_vector<int32_t> pos_in, pos_out, ranks;
  size_t sort_bytes = 0;
  device_vector<unsigned char> temp;
  explicit sorted_queries_path(int64_t q_) : q(q_), sorted(q_), pos_in(q_), pos_out(q_), ranks(q_) {
    GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, static_cast<const T*>(nullptr),
                                                       static_cast<T*>(nullptr), static_cast<const int32_t*>(nullptr),
                                                       static_cast<int32_t*>(nullptr), q));
    temp = device_vector<unsigned char>(int64_t(sort_bytes));
  }
  void operator()(const T* keys, int64_t k, const T* queries, int32_t* out) {
    size_t bytes = sort_bytes;
    bench::iota_kernel<<<1024, 256>>>(pos_in.data(), q);
    GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, queries, sorted.data(), pos_in.data(),
                                                       pos_out.data(), q));
    cuda_backend::sorted_search(nullptr, side::right, keys, k, sorted.data(), q, ranks.data());
    bench::scatter_kernel<<<1024, 256>>>(ranks.data(), pos_out.data(), q, out);
    GSEARCH_CUDA_CHECK_LAUNCH();
  }
};

struct runner {
  bench_args a;
  json report;
  int problems = 0;
  cuda_device_info dev = cuda_device_properties();

  explicit runner(const bench_args& args) : a(args) {}

  void record(json r, const timing& t, int64_t q) {
    r["ms"] = t.median_ms;
    r["ms_min"] = t.min_ms;
    r["ms_max"] = t.max_ms;
    r["gqps"] = double(q) / (t.median_ms * 1e6);
    if (r.contains("verified") && r["verified"] == false) {
      ++problems;
      report["failures"].push_back(r);
    }
    std::printf("%-7s %-6s k=2^%-5.2f q=2^%-5.2f %-22s %-14s %9.3f ms %8.2f Gq/s %s\n", r["part"].get<std::string>().c_str(),
                r["key_type"].get<std::string>().c_str(), std::log2(double(r["k"].get<int64_t>())), std::log2(double(q)),
                r["impl"].get<std::string>().c_str(), r["algo"].get<std::string>().c_str(), t.median_ms,
                r["gqps"].get<double>(),
                r.contains("verified") ? (r["verified"].get<bool>() ? "ok" : "WRONG") : "");
    std::fflush(stdout);
    report["results"].push_back(std::move(r));
  }

  // Times enqueue(queries) over the rotated query copies; checks the output unless check is false.
  template <class T, class F>
  void measure(const char* part, const char* impl, const std::string& algo, const inputs<T>& in, int64_t q,
               device_vector<int32_t>& out, F&& enqueue, json extra = json::object(), bool check = true) {
    int next = 0;
    const timing t = time_runs(a.warmup, a.repeat, [&] {
      const T* queries = in.queries[size_t(next++) % in.queries.size()].data();
      return elapsed_ms(gsearch::cuda, [&] { enqueue(queries); });
    });
    json r = {{"part", part}, {"impl", impl}, {"algo", algo}, {"key_type", key_traits<T>::name}, {"k", in.k}, {"q", q}};
    for (auto& [key, value] : extra.items()) r[key] = value;
    if (check) r["verified"] = q == in.q ? in.check(out) : true;  // (qsweep: checked at full q)
    record(std::move(r), t, q);
  }

  template <class T>
  void search_part(const inputs<T>& in) {
    const int64_t k = in.k, q = in.q;
    device_vector<int32_t> out(q);
    const span<const T> keys = in.keys;
    const auto queries_span = [&](const T* p) { return span<const T>(p, q); };
    // The index: build (kernel only, into a preallocated layout), then its search.
    {
      const static_index<T> index(gsearch::cuda, keys);
      device_vector<T> layout(index.memory_bytes() / int64_t(sizeof(T)));
      const timing tb = time_runs(a.warmup, a.repeat, [&] {
        return elapsed_ms(gsearch::cuda, [&] { cuda_backend::index_build(nullptr, keys.data(), k, layout.data()); });
      });
      record({{"part", "search"}, {"impl", "gsearch"}, {"algo", "index-build"}, {"key_type", key_traits<T>::name}, {"k", k},
              {"memory_bytes", index.memory_bytes()}, {"levels", index.levels()}, {"node_keys", index.node_keys()},
              {"keys_per_second", double(k) / (tb.median_ms * 1e-3)}},
             tb, k);
      measure<T>("search", "gsearch", "index-search", in, q, out, [&](const T* p) {
        index.upper_bound(gsearch::cuda, queries_span(p), span<int32_t>(out));
      }, {{"memory_bytes", index.memory_bytes()}});
    }
    for (const algorithm algo : {algorithm::index, algorithm::partitioned, algorithm::binary, algorithm::auto_}) {
      const std::string name = algo == algorithm::auto_
                                   ? "auto:" + std::string(to_string(resolve_algorithm(gsearch::cuda, algo, int(sizeof(T)), k, q)))
                                   : std::string(to_string(algo));
      measure<T>("search", "gsearch", name, in, q, out, [&](const T* p) {
        upper_bound(gsearch::cuda, keys, queries_span(p), span<int32_t>(out), {algo, false});
      });
    }
    {
      sorted_queries_path<T> path(q);
      measure<T>("search", "gsearch", "sorted-queries", in, q, out, [&](const T* p) { path(keys.data(), k, p, out.data()); });
    }
    measure<T>("search", "thrust", bench::toolkit_cccl_version(), in, q, out, [&](const T* p) {
      peers::thrust_upper_bound<T>(nullptr, keys.data(), k, p, q, out.data());
    });
    if (bench::new_cccl_available()) {
      {
        const size_t bytes = peers::cub_temp_bytes<T>(keys.data(), k, in.queries[0].data(), q, out.data());
        device_vector<unsigned char> temp(int64_t(std::max<size_t>(bytes, 1)));
        measure<T>("search", "cub-upper-bound", bench::new_cccl_version(), in, q, out, [&](const T* p) {
          peers::cub_upper_bound<T>(nullptr, temp.data(), bytes, keys.data(), k, p, q, out.data());
        });
      }
      const size_t bytes = peers::cub_sort_search_bytes<T>(keys.data(), k, q);
      device_vector<unsigned char> temp{int64_t(bytes)};
      measure<T>("search", "cub-sort-search-scatter", bench::new_cccl_version(), in, q, out, [&](const T* p) {
        peers::cub_sort_search_scatter<T>(nullptr, temp.data(), bytes, keys.data(), k, p, q, out.data());
      });
    }
    measure<T>("search", "roofline", "copy", in, q, out, [&](const T* p) { peers::roofline_copy<T>(nullptr, p, q, out.data()); },
               {}, false);
  }

  // binary against the one-shot index and the partitioned search for Q = 2^14 .. q (the auto
  // rule's data), and auto itself ("auto:<its choice>", to check it against the best of them).
  void qsweep_part(const inputs<int32_t>& in) {
    device_vector<int32_t> out(in.q);
    for (int64_t q = int64_t(1) << 14; q <= in.q; q *= 8) {
      for (const algorithm algo : {algorithm::binary, algorithm::index, algorithm::partitioned, algorithm::auto_}) {
        const std::string name = algo == algorithm::auto_
                                     ? "auto:" + std::string(to_string(resolve_algorithm(gsearch::cuda, algo, 4, in.k, q)))
                                     : std::string(to_string(algo));
        measure<int32_t>("qsweep", "gsearch", name, in, q, out, [&](const int32_t* p) {
          upper_bound(gsearch::cuda, span<const int32_t>(in.keys), span<const int32_t>(p, q), span<int32_t>(out.data(), q), {algo, false});
        });
      }
    }
  }

  // The index kernel at node size B, Threads x Items, the given shared-memory budgets: prebuilt layout.
  template <int B, int Threads, int Items>
  void sweep_one(const inputs<int32_t>& in, device_vector<int32_t>& out, std::initializer_list<int64_t> budgets) {
    const core::static_index_shape<B> shape(in.k);
    device_vector<int32_t> layout(shape.size());
    cuda_backend::launch_index_build(nullptr, in.keys.data(), shape, layout.data(), cuda_backend::current_device_limits());
    for (int64_t budget : budgets) {
      measure<int32_t>("sweep", "gsearch", "index-search", in, in.q, out, [&](const int32_t* p) {
        cuda_backend::launch_index_search<Threads, Items>(nullptr, side::right, layout.data(), shape, budget, p, in.q,
                                                          out.data(), cuda_backend::current_device_limits());
      }, {{"node_keys", B}, {"threads", Threads}, {"items", Items}, {"shared_budget", budget}});
    }
  }
  void sweep_part(const inputs<int32_t>& in) {
    device_vector<int32_t> out(in.q);
    constexpr int64_t KB = 1024;
    const std::initializer_list<int64_t> all = {0, 48 * KB, 96 * KB, 160 * KB, 220 * KB};
    // index-sweep-2 also had 256 x 8, 512 x 8 and 32- / 64-byte nodes, all slower (perf-notes).
    sweep_one<4, 512, 4>(in, out, all);
    sweep_one<4, 1024, 4>(in, out, all);
  }

  // The partitioned search's configurations: bytes of keys per bucket x window, then pieces.
  template <class T>
  void psweep_part(const inputs<T>& in) {
    device_vector<int32_t> out(in.q);
    const auto dev = cuda_backend::current_device_limits();
    std::vector<core::partition_config> configs;
    for (const std::string& c : a.pconfigs) {
      long long kb = 0, lw = 0, piece = 0;
      if (std::sscanf(c.c_str(), "%lld:%lld:%lld", &kb, &lw, &piece) != 3 || kb < 1 || lw < 0 || lw > 30 || piece < 1)
        throw invalid_argument("--pconfigs: want chunkKB:log2(window):piece, got " + c);
      configs.push_back({kb * 1024, 16384, int64_t(1) << lw, int(piece)});
    }
    if (configs.empty()) {
      for (int64_t chunk : {16 << 10, 32 << 10, 64 << 10})
        for (int64_t window : {int64_t(1) << 20, int64_t(1) << 22, int64_t(1) << 24, int64_t(1) << 27})
          configs.push_back({chunk, 16384, window, 8192});
      for (int piece : {2048, 4096, 16384}) configs.push_back({32 << 10, 16384, int64_t(1) << 22, piece});
      for (int piece : {2048, 4096, 16384}) configs.push_back({32 << 10, 16384, int64_t(1) << 27, piece});
    }
    for (const core::partition_config& c : configs) {
      // The library's kernel shapes (tuning.hpp: partition_tile, bucket_tile), then, with
      // --pshapes, others: count and scatter PT x PI, bucket search ST x SI.
      const auto one = [&]<int PT, int PI, int ST, int SI>() {
        measure<T>("psweep", "gsearch", "partitioned", in, in.q, out, [&](const T* p) {
          cuda_backend::launch_partitioned<false, PT, PI, ST, SI>(nullptr, 0, in.keys.data(), in.k, p, in.q, out.data(), dev, c);
        }, {{"chunk_bytes", c.chunk_bytes}, {"max_buckets", c.max_buckets}, {"window", c.window}, {"piece", c.piece},
            {"partition_tile", {PT, PI}}, {"bucket_tile", {ST, SI}}});
      };
      one.template operator()<cuda_backend::partition_tile<int(sizeof(T))>.threads,
                              cuda_backend::partition_tile<int(sizeof(T))>.items, cuda_backend::bucket_tile.threads,
                              cuda_backend::bucket_tile.items>();
      if (a.pshapes) {
        one.template operator()<1024, 4, 1024, 4>();
        one.template operator()<512, 4, 1024, 4>();
        one.template operator()<1024, 4, 512, 8>();
        one.template operator()<512, 8, 512, 8>();
        one.template operator()<1024, 4, 1024, 8>();
      }
    }
  }

  bool wants(const char* part) const { return std::find(a.parts.begin(), a.parts.end(), part) != a.parts.end(); }

  void run() {
    report["results"] = json::array();
    report["failures"] = json::array();
    report["inputs"] = json::array();
    bench::host::for_each_keys(a.key_types, a.log_keys, [&]<class T>(int64_t k) {
      const inputs<T> in(k, a.queries, a.seed, dev.l2_bytes);
      report["inputs"].push_back({{"key_type", key_traits<T>::name}, {"k", k}, {"q", a.queries},
                                  {"query_copies", in.queries.size()}});
      if (wants("search")) search_part(in);
      if (wants("psweep")) psweep_part(in);
      if constexpr (std::is_same_v<T, int32_t>) {
        const bool sweep_k = k == int64_t(1) << 20 || k == int64_t(1) << 24 || k == int64_t(1) << 26 || k == int64_t(1) << 27;
        if (wants("sweep") && sweep_k) sweep_part(in);
        if (wants("qsweep") && sweep_k) qsweep_part(in);
      }
    });
  }
};

}  // namespace

int main(int argc, char** argv) {
  bench_args a;
  CLI::App app{"index_bench: gsearch's static index against thrust, CUB 3.6 and the roofline (issue 9)"};
  bench::add_common_options(app, a, "K = 2^20, int32, Q = 2^22, search only, 3 runs", "Seed of the inputs");
  app.add_option("--log-keys", a.log_keys, "K = 2^x sorted keys")->delimiter(',');
  app.add_option("--key-types", a.key_types, "int32, int64")->delimiter(',');
  app.add_option("--parts", a.parts, "search, qsweep, sweep, psweep")->delimiter(',');
  app.add_flag("--pshapes", a.pshapes, "psweep: other kernel shapes of the partitioned search too");
  app.add_option("--pconfigs", a.pconfigs, "psweep: these configurations, chunkKB:log2(window):piece")->delimiter(',');
  app.add_option("--queries", a.queries, "Q random queries")->check(CLI::PositiveNumber);
  if (auto rc = bench::parse(app, argc, argv, a)) return *rc;
  if (a.quick) {
    a.log_keys = {20};
    a.key_types = {"int32"};
    a.parts = {"search"};
    a.queries = int64_t(1) << 22;
    a.repeat = 3;
    a.warmup = 1;
  }
  if (auto rc = bench::require_gpu("index_bench", "index")) return *rc;
  json report = bench::gpu_report("gsearch-bench-index/1", a, cuda_device_properties(), bench::cccl_versions());
  report["config"] = {{"log_keys", a.log_keys}, {"key_types", a.key_types}, {"parts", a.parts}, {"queries", a.queries},
                      {"repeat", a.repeat}, {"warmup", a.warmup}, {"seed", a.seed}};
  bench::print_banner("index_bench", report);
  return bench::run_and_report<runner>("index_bench", a, std::move(report));
}
