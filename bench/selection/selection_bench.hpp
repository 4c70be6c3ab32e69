#pragma once
// selection_bench's runner, shared by its translation units (selection_bench.cu: the row, the
// table, the rooflines, the targets, main(); selection_select.cu: select of one and 100 ranks;
// selection_topk.cu: the 1-D topk; selection_rows.cu: the row topk; selection_partition.cu:
// partition; selection_quantile.cu: quantile and median). What it measures and writes, the
// inputs' formulas and the checks: selection_bench.cu's header comment and bench/README.md.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_host.hpp"
#include "cccl.hpp"
#include "cuda/check.cuh"
#include "gsearch/gsearch.hpp"
#include "gsearch/selection.hpp"
#include "report.hpp"
#include "selection_peers.hpp"
#include "timing.hpp"

namespace gsearch::bench::selection_bench {

using namespace gsearch;
using bench::json;
namespace peers = gsearch::bench::selection_peers;
using peers::dist;
using namespace gsearch::bench::host;

inline CUstream_st* const stream = nullptr;  // the default stream, gsearch::cuda's

inline const std::vector<std::string> all_dists = {"uniform", "normal", "bits", "constant", "sorted", "adversarial"};

inline dist dist_from(const std::string& s) {
  for (int i = 0; i < 6; ++i)
    if (s == peers::dist_names[i]) return dist(i);
  throw std::invalid_argument("unknown distribution " + s);
}

template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "float32" : "int32";
}

/// "2^26" for powers of two from 1024, else the decimal number.
inline std::string n_text(int64_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) return "2^" + std::to_string(63 - __builtin_clzll(uint64_t(n)));
  return std::to_string(n);
}

// ---- arguments ------------------------------------------------------------------------------

struct args : bench::common_args {
  args() : common_args(15, 3) {}
  bool flush_l2 = true, peers = true;
  std::vector<std::string> parts{"select", "topk", "rows", "partition", "quantile"};
  std::vector<int64_t> sizes;  // empty: 2^26, 2^28, 2^30 (--quick: 2^22)
  int64_t n = 0;               // 0: 2^26 (--quick: 2^22)
  std::vector<std::string> dtypes{"float32", "int32"};
  std::vector<std::string> dists = all_dists;
  std::vector<int64_t> ks;  // empty: 1, 16, 64, 256, 1024, 2^20 (--quick: 1, 64, 1024, 2^16)
  std::vector<std::string> topk_dists{"uniform", "bits"};
  int64_t rows = 0, cols = 16384, row_k = 64;  // rows 0: 4096 (--quick: 256)
  int64_t quantile_n = 0;                      // 0: the largest of --sizes

  bool has(const char* part) const { return std::find(parts.begin(), parts.end(), part) != parts.end(); }
  bool has_type(const char* t) const { return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end(); }
};

// ---- the benchmark --------------------------------------------------------------------------

struct runner {
  args a;
  json report;
  cuda_device_info dev;
  int problems = 0;
  std::map<std::pair<std::string, int64_t>, double> roof_gbps;  // (read | copy, bytes) -> GB/s
  device_vector<int4> flush_buf;
  device_vector<uint32_t> sink{1};
  device_vector<int64_t> scratch{4};  // the checks' counters

  explicit runner(args a_) : a(std::move(a_)), dev(cuda_device_properties()) {
    if (a.flush_l2) {
      flush_buf = device_vector<int4>(std::max<int64_t>(2 * dev.l2_bytes / 16, 1));
      GSEARCH_CUDA_CHECK(cudaMemset(flush_buf.data(), 0x3c, size_t(flush_buf.size()) * 16));
    }
  }

  /// --warmup untimed and --repeat timed runs of enqueue().
  bench::timing time(const std::function<void()>& enqueue) {
    return bench::time_runs(a.warmup, a.repeat, [&] {
      if (a.flush_l2) peers::roofline(stream, flush_buf.data(), nullptr, flush_buf.size() * 16, {4, 8}, sink.data());
      return elapsed_ms(cuda, enqueue);
    });
  }

  // ---- the rows and the table (selection_bench.cu) ---------------------------------------

  /// A row with every field, those that do not apply null.
  static json row(const char* part, const char* impl, const char* op, const std::string& call, const char* dtype,
                  const std::string& dist_name, int64_t n);
  static std::string text(const json& v);
  void print(const json& r);
  /// Fills the timing fields, prints the row, records it (and a failure when !ok).
  void add(json r, const bench::timing& t, double bytes, double roof, std::optional<bool> ok);
  /// Records an exception thrown by one configuration (it counts as a failure).
  void error(const json& r, const std::exception& e);
  /// One run and its check, the timed runs, and the check again; the row gets its timing.
  void measure(json r, double bytes, double roof, const std::function<void()>& enqueue,
               const std::function<bool(json&)>& check);

  // ---- rooflines (selection_bench.cu) ----------------------------------------------------

  /// The read (dst == nullptr) or copy roofline over `bytes` of src: every launch shape, the
  /// fastest kept (once per op and size).
  double roofline(const void* src, void* dst, int64_t bytes, const char* dtype, int64_t n);

  // ---- inputs and checks -----------------------------------------------------------------

  template <class T>
  void make_input(T* d, int64_t n, const std::string& dist_name) {
    peers::generate<T>(stream, d, n, dist_from(dist_name), a.seed);
    const uint64_t h = peers::multiset_hash<T>(stream, d, n, reinterpret_cast<uint64_t*>(scratch.data()));
    for (const json& x : report["inputs"])
      if (x["dtype"] == type_name<T>() && x["dist"] == dist_name && x["n"] == n) return;
    report["inputs"].push_back({{"dtype", type_name<T>()}, {"dist", dist_name}, {"n", n}, {"hash", std::to_string(h)}});
  }

  /// True when v has rank r in data: #(x < v) <= r < #(x <= v).
  template <class T>
  bool has_rank(const T* d, int64_t n, T v, int64_t r) {
    const auto c = peers::count_around<T>(stream, d, n, v, scratch.data());
    return c[0] <= r && r < c[1];
  }

  template <class T>
  static std::vector<T> host_copy(const T* d, int64_t m) {
    std::vector<T> h(size_t(std::max<int64_t>(m, 0)));
    if (m > 0) copy_to_host(h.data(), d, size_t(m) * sizeof(T));
    return h;
  }

  /// The k largest of `data` (host copy, n elements) in (vals, idx): indices in range and
  /// distinct, data[idx] == vals, every element above min(vals) chosen, non-increasing if sorted.
  template <class T>
  static bool topk_ok(const T* data, int64_t n, const std::vector<T>& vals, const std::vector<int64_t>& idx,
                      int64_t count_above_min, bool sorted) {
    const int64_t k = int64_t(vals.size());
    if (k == 0) return true;
    std::vector<int64_t> s = idx;
    std::sort(s.begin(), s.end());
    if (s.front() < 0 || s.back() >= n || std::adjacent_find(s.begin(), s.end()) != s.end()) return false;
    T m = vals[0];
    for (int64_t j = 0; j < k; ++j) {
      if (data[idx[size_t(j)]] != vals[size_t(j)]) return false;
      if (sorted && j > 0 && vals[size_t(j)] > vals[size_t(j - 1)]) return false;
      m = std::min(m, vals[size_t(j)]);
    }
    const int64_t above = std::count_if(vals.begin(), vals.end(), [&](T v) { return v > m; });
    return above == (count_above_min >= 0 ? count_above_min
                                          : parallel_count(n, [&](int64_t i) { return data[i] > m; }));
  }

  // ---- the parts, one file each (float32 and int32 where templated) ----------------------

  template <class T>
  void select_part();     // selection_select.cu
  template <class T>
  void topk_part();       // selection_topk.cu
  void rows_part();       // selection_rows.cu
  template <class T>
  void partition_part();  // selection_partition.cu
  void quantile_part();   // selection_quantile.cu

  // ---- targets (issue 21) and all of it (selection_bench.cu) -----------------------------

  /// The verified rows matching `want` (field -> value).
  std::vector<const json*> find(const json& want) const;
  static double ms(const json* r);
  static double max_ms(const std::vector<const json*>& rs);
  static double min_ms(const std::vector<const json*>& rs);
  void targets();
  void run();
};

}  // namespace gsearch::bench::selection_bench
