#pragma once
// merge_bench's runner, shared by its translation units (merge_bench.cu: the rows, the roofline,
// the ratios and targets, main(); merge_sets.cu: merge and the set operations on random and
// adversarial inputs; merge_sort.cu: sorted search and merge sort; merge_join.cu: the joins).
// What it measures and writes: merge_bench.cu's header comment and bench/README.md.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench_host.hpp"
#include "cccl.hpp"
#include "cuda/check.cuh"
#include "gsearch/gsearch.hpp"
#include "merge_peers.hpp"
#include "report.hpp"
#include "timing.hpp"

namespace gsearch::bench::merge_bench {

using namespace gsearch;
using bench::json;
namespace peers = gsearch::bench::merge_peers;
using namespace gsearch::bench::host;

// ---- host helpers -------------------------------------------------------------------------------

template <class T>
std::vector<T> to_host(const T* d, int64_t n) {
  std::vector<T> h(static_cast<size_t>(n));
  if (n > 0) copy_to_host(h.data(), d, size_t(n) * sizeof(T));
  return h;
}

/// Copies x to the device, sorts it there (thrust::sort, toolkit CCCL) and back: x sorted, and
/// its device copy.
template <class T>
device_vector<T> sort_on_device(std::vector<T>& x) {
  auto d = to_device(x);
  if (!x.empty()) {
    peers::thrust_sort(nullptr, d.data(), int64_t(x.size()));
    synchronize(cuda);
    copy_to_host(x.data(), d.data(), x.size() * sizeof(T));
  }
  return d;
}

// ---- arguments ------------------------------------------------------------------------------

struct args : bench::common_args {
  args() : common_args(15, 3) {}
  bool flush_l2 = true, peers = true;
  std::vector<std::string> parts{"merge", "set_ops", "sorted_search", "sort", "adversarial", "join"};
  int64_t n = 0, search_keys = 0, search_queries = 0, sort_n = 0, join_n = 0, join_range = 0;
  std::vector<std::string> joins{"inner", "left", "full", "semi"};
  std::string large_join = "auto";
  int64_t large_join_range = 100000;

  bool has(const char* part) const { return std::find(parts.begin(), parts.end(), part) != parts.end(); }
};

// ---- the benchmark --------------------------------------------------------------------------

struct runner {
  args a;
  json report;
  cuda_device_info dev;
  int problems = 0;
  device_vector<int4> flush_buf;  // 2 x L2, read before each run
  device_vector<uint32_t> sink{1};
  device_vector<char> temp;  // the CUB peers' temporary storage (grown on demand)
  double merge_roof_gbps = 0;

  explicit runner(args a_) : a(std::move(a_)), dev(cuda_device_properties()) {
    if (a.flush_l2) {
      flush_buf = device_vector<int4>(std::max<int64_t>(2 * dev.l2_bytes / 16, 1));
      GSEARCH_CUDA_CHECK(cudaMemset(flush_buf.data(), 0x3c, size_t(flush_buf.size()) * 16));
    }
  }

  void* cub_temp(size_t bytes) {
    if (int64_t(bytes) > temp.size()) {
      temp = device_vector<char>();
      temp = device_vector<char>(int64_t(bytes));
    }
    return temp.data();
  }

  /// --warmup untimed and --repeat timed runs of enqueue(); before() (if set) runs before each,
  /// after the L2 flush and outside the events.
  bench::timing time(const std::function<void()>& enqueue, const std::function<void()>& before) {
    return bench::time_runs(a.warmup, a.repeat, [&] {
      if (a.flush_l2)  // clean lines only: a memset would leave dirty ones to write back in the run
        peers::roofline(nullptr, {{flush_buf.data(), nullptr, flush_buf.size() * 16}}, {4, 8}, sink.data());
      if (before) before();
      return elapsed_ms(cuda, enqueue);
    });
  }

  /// A row with every field, those that do not apply null.
  static json row(const char* part, const char* impl, const std::string& op, const std::string& call,
                  const char* dtype);

  void print(const json& r) {
    auto s = [&](const char* k) { return r[k].is_null() ? std::string("-") : r[k].is_string() ? r[k].get<std::string>() : r[k].dump(); };
    char rate[48] = "-", roof[16] = "-", gbps[16] = "-";
    if (!r["rate"].is_null()) std::snprintf(rate, sizeof rate, "%.2f %s", r["rate"].get<double>(), s("rate_unit").c_str());
    if (!r["pct_roofline"].is_null()) std::snprintf(roof, sizeof roof, "%.1f%%", r["pct_roofline"].get<double>());
    if (!r["gbps"].is_null()) std::snprintf(gbps, sizeof gbps, "%.0f", r["gbps"].get<double>());
    std::printf("%-13s %-9s %-20s %-30s %-5s %-11s %11s %11s %10.4f %6s %6s %-16s %s\n", s("part").c_str(),
                s("impl").c_str(), s("op").c_str(), s("call").c_str(), s("dtype").c_str(), s("input").c_str(),
                s("na").c_str(), s("nb").c_str(), r["ms"].is_null() ? 0.0 : r["ms"].get<double>(), gbps, roof, rate,
                r["verified"] == false ? "CHECK FAILED" : "");
    std::fflush(stdout);
  }

  /// Fills the timing fields, prints the row, records it (and a failure when !ok).
  void add(json r, const bench::timing& t, double bytes, double count, const char* unit, double roof_gbps,
           std::optional<bool> ok) {
    bench::set_timing(r, t, bytes, roof_gbps, ok, a.flush_l2);
    r["rate"] = t.median_ms > 0 ? count / (t.median_ms * 1e6) : 0.0;
    r["rate_unit"] = unit;
    print(r);
    if (ok && !*ok) {
      ++problems;
      report["failures"].push_back({{"part", r["part"]}, {"impl", r["impl"]}, {"op", r["op"]}, {"call", r["call"]},
                                    {"dtype", r["dtype"]}, {"values", r["values"]}, {"input", r["input"]},
                                    {"na", r["na"]}, {"nb", r["nb"]}, {"out", r["out"]}});
    }
    report["results"].push_back(std::move(r));
  }

  /// Records an exception thrown by one configuration (it counts as a failure).
  void error(const json& r, const std::exception& e) {
    ++problems;
    std::printf("%-13s %-9s %-20s %-30s ERROR: %s\n", r["part"].get<std::string>().c_str(),
                r["impl"].get<std::string>().c_str(), r["op"].get<std::string>().c_str(),
                r["call"].get<std::string>().c_str(), e.what());
    report["errors"].push_back({{"part", r["part"]}, {"impl", r["impl"]}, {"op", r["op"]}, {"call", r["call"]},
                                {"dtype", r["dtype"]}, {"input", r["input"]}, {"error", e.what()}});
    cudaGetLastError();  // a failed launch must not poison the next configuration
  }

  /// One configuration: poison(), a first run, check(); then the timed runs and check() again.
  void measure(json r, double bytes, double count, const char* unit, double roof_gbps,
               const std::function<void()>& poison, const std::function<void()>& enqueue,
               const std::function<bool()>& check, const std::function<void()>& before = {}) {
    try {
      if (poison) poison();
      if (before) before();
      enqueue();
      synchronize(cuda);
      bool ok = check();
      const bench::timing t = time(enqueue, before);
      synchronize(cuda);
      ok = check() && ok;
      add(std::move(r), t, bytes, count, unit, roof_gbps, ok);
    } catch (const std::exception& e) {
      error(r, e);
    }
  }

  void skip(const std::string& what, const std::string& reason) {
    std::printf("skipped: %s: %s\n", what.c_str(), reason.c_str());
    report["skipped"].push_back({{"what", what}, {"reason", reason}});
  }

  void record_input(const std::string& name, const void* data, int64_t n, size_t elem, const std::string& formula) {
    report["inputs"].push_back({{"name", name}, {"n", n}, {"formula", formula},
                                {"checksum", std::to_string(checksum(data, size_t(n) * elem))}});
  }

  template <class T>
  static void poison(T* d, int64_t n) {
    if (n > 0) GSEARCH_CUDA_CHECK(cudaMemset(d, 0x5a, size_t(n) * sizeof(T)));
  }

  /// Times every roofline configuration on `segs` and records the fastest as a row; returns its
  /// GB/s (bytes = what the segments read plus what they write).
  double roofline(const char* part, const std::string& name, const std::vector<peers::segment>& segs, const char* dtype,
                  int64_t na, int64_t nb, double count, const char* unit, const char* values = nullptr);

  // merge_sets.cu: merge and the set operations on the random inputs and the adversarial ones.
  template <class T>
  void merge_keys(const char* part, const char* dtype, const std::string& input, const std::vector<T>& A,
                  const std::vector<T>& B, const T* dA, const T* dB, bool with_peers, double roof_gbps);
  void merge_pairs(const std::vector<int32_t>& A, const std::vector<int32_t>& B, const int32_t* dA, const int32_t* dB);
  template <class T>
  void set_ops(const char* part, const std::string& input, const std::vector<T>& A, const std::vector<T>& B,
               const T* dA, const T* dB, bool with_peers, double roof_gbps);
  void random_int32();
  void random_int64();
  void adversarial();
  // merge_sort.cu: the sorted search and merge sort.
  void sorted_search();
  void sort_keys();
  void sort_pairs();
  // merge_join.cu: the joins.
  template <class T>
  bool check_join(join_kind kind, const std::vector<T>& L, const std::vector<T>& R, const int64_t* li,
                  const int64_t* ri, int64_t rows, bool ordered);
  template <class T>
  void join_case(const std::string& input, const std::vector<T>& L, const std::vector<T>& R,
                 const std::vector<join_kind>& kinds);
  void joins();
  // merge_bench.cu: ratios and targets (issue 8), and all of it.
  const json* find(const std::function<bool(const json&)>& pred) const;
  void ratios();
  void targets();
  void run();
};

}  // namespace gsearch::bench::merge_bench
