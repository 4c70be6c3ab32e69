// merge_bench: the H100 benchmark of gsearch's merge family (issue 8), one run, the same device
// buffers for gsearch and its peers. Writes a table to stdout and, with --json, one JSON file.
//
//   merge_bench [--json FILE] [--quick] [--parts merge,set_ops,sorted_search,sort,adversarial,join]
//               [--n N] [--search-keys K] [--search-queries Q] [--sort-n N] [--join-n N]
//               [--join-range R] [--joins inner,left,full,semi] [--large-join auto|on|off]
//               [--large-join-range R] [--no-peers] [--repeat 15] [--warmup 3] [--seed 1]
//               [--no-flush-l2]
//
// Parts (all by default; N = --n = 2^26 elements per side, int32 unless said):
//   merge          merge of two sorted N-element inputs: int32 keys, int64 keys, int32 keys with
//                  int64 values. gsearch::merge against cub::DeviceMerge::MergeKeys / MergePairs
//                  (CCCL 3.6), thrust::merge / merge_by_key (toolkit CCCL 3.0.1) and the copy
//                  roofline (read na + nb, write na + nb elements, 16-byte accesses).
//   set_ops        the four multiset operations (intersection, union, difference, symmetric
//                  difference) on the same int32 inputs: gsearch::set_operation against
//                  thrust::set_* from CCCL 3.6 and from the toolkit (3.0.1); `ratios.vs_merge`
//                  = time / gsearch's int32 merge time.
//   sorted_search  K = --search-keys (2^24) sorted keys, Q = --search-queries (2^27) sorted
//                  needles, int32 output: gsearch::upper_bound with queries_sorted against
//                  cub::DeviceFind::UpperBoundSortedValues (3.6) and thrust::upper_bound (3.0.1);
//                  gsearch's plain (unsorted-queries) search for reference; the roofline reads
//                  the keys and the needles and writes the indices.
//   sort           merge sort of --sort-n (2^27) random int32, and int32 keys with int64 values:
//                  gsearch::merge_sort against cub::DeviceMergeSort::SortKeysCopy / SortPairsCopy,
//                  cub::DeviceRadixSort::SortKeys / SortPairs (3.6) and thrust::sort /
//                  sort_by_key (3.0.1; in place: the input is copied into the output before
//                  each run, outside the timed interval).
//   adversarial    gsearch's merge and four set operations (and CUB MergeKeys for reference) on
//                  all-equal keys, long duplicate runs, disjoint ranges, one side empty and
//                  interleaved inputs, 2N elements in all; `ratios.vs_random` = time / gsearch's
//                  time for the same operation on the random inputs.
//   join           --joins (inner, left, full, semi) of --join-n (2^24) x --join-n sorted int32
//                  keys with duplicates (uniform in [0, --join-range = 2^22): about 4 rows per
//                  key on each side, so 4x more output rows than input rows): gsearch::join
//                  against a sort-merge join built from CUB primitives in the same run
//                  (merge_peers.hpp's cub_join), in output rows per second; and, with
//                  --large-join (auto: unless --quick, when the device has the memory), one inner
//                  join with more than 2^31 output rows (keys uniform in [0, 100,000): about
//                  2.8e9 rows, 45 GB of int64 gather maps).
// --no-peers: gsearch and the roofline alone.
//
// Inputs (splitmix64 is counter-based: word(s, i) = mix64(s + (i + 1) * 0x9E3779B97F4A7C15) is
// output i of gsearch::gen::splitmix64{s}; S = --seed; "sort(...)" = ascending; numpy rebuilds
// every array with bench/python/inputs.py's splitmix64 and np.sort):
//   merge / set_ops   A = sort(int32(word(S, i) >> 37)), B = sort(int32(word(S + 1, j) >> 37)):
//                     uniform in [0, 2^27), so each value appears Poisson(1/2) times per side
//                     (duplicates within and across the sides); values a_v[i] = i,
//                     b_v[j] = na + j (int64); int64 keys sort(int64(word(S + 2, i) >> 1)),
//                     sort(int64(word(S + 3, j) >> 1))
//   sorted_search     keys = sort(int32(word(S + 4, i) >> 33)), needles =
//                     sort(int32(word(S + 5, j) >> 33)), both uniform in [0, 2^31)
//   sort              int32(word(S + 6, i) >> 32) (the whole int32 range); key-value: keys
//                     int32(word(S + 7, i) >> 44) (in [0, 2^20): duplicates, so stability shows),
//                     values i
//   join              left = sort(int32(word(S + 8, i) mod R)), right = sort(int32(word(S + 9, j)
//                     mod R)); the large join: S + 10, S + 11, R = --large-join-range
//   adversarial       all-equal: A = B = 7 (N each); long-runs: A[i] = i >> 16 (runs of 65,536),
//                     B[j] = j >> 15 (runs of 32,768); disjoint: A, B + 2^27 (the random inputs,
//                     B shifted past A); one-empty: A = the merge of the random A and B (2N), B
//                     empty; interleaved: A[i] = 2i, B[j] = 2j + 1
// The inputs are generated on the host, copied to the device and sorted there (thrust::sort)
// and copied back for the references; `inputs` records each array's checksum after sorting.
//
// Timing: CUDA events on the default stream around one call (gsearch::elapsed_ms), --warmup
// untimed runs, the median of --repeat (>= 10 unless --quick) runs (tools/cli/timing.hpp).
// Outputs and the peers' temporary storage are allocated before the runs (thrust allocates its
// own; gsearch allocates stream-ordered inside its calls). Calls that return a size (gsearch's
// set operations and joins, thrust's set operations, the CUB join) wait for it inside the
// interval (`includes_sync`). Before each run, outside the events, a 2 x L2 scratch buffer is
// read (--no-flush-l2: not), so that no run finds the last run's inputs or outputs in L2 (the
// inputs here are all over 2 x L2 but in --quick, where this takes the place of rotating
// copies) and no dirty line is left to be written back during the next run.
//
// Checks: every configuration runs once into a poisoned output before it is timed, and the last
// timed run's output is checked again, all of it against a host reference: std::merge (values:
// a stable merge, ties from A first), std::set_*, a per-needle upper_bound, the sorted keys
// (key-value sorts: out_keys[j] == keys[out_values[j]] and the values ascending within equal
// keys, i.e. the stable permutation), and for joins the exact row count (from the key counts)
// and 2^16 sampled rows (indices in range, keys equal, -1 only where the key has no match on
// the other side; gsearch's rows in key order). Any difference or error: exit status 3 (the
// JSON is still written). Exit status: 0 ok, 1 bad usage, 2 no CUDA device, 3 a check failed.
//
// JSON ("schema": "gsearch-bench-merge/1"; bench/README.md has the same table):
//   schema, synthetic (false), command, device {name, compute_capability, sms, l2_bytes,
//   global_bytes, driver_version, runtime_version}, versions {gsearch, thrust (toolkit CCCL),
//   cub (newer CCCL, or null)}, config {...}, inputs [{name, n, formula, checksum}],
//   rooflines {case: {gbps, ms, bytes, config}}, results [row...], targets [{name, value,
//   target, unit, higher, met}], skipped [{what, reason}], failures [...], errors [...], and
//   "fatal" (text) when the run stopped early.
// A row (fields that do not apply are null):
//   part        merge | set_ops | sorted_search | sort | adversarial | join
//   impl        gsearch | roofline | cub | thrust (toolkit CCCL) | thrust36 (thrust from CCCL 3.6)
//               | cub-join (the CUB-built join)
//   op          merge | intersection | union | difference | symmetric-difference | upper_bound |
//               sort | inner | left | right | full | semi | anti | copy (roofline)
//   call        what ran: "merge", "MergeKeys", "set_intersection", "queries_sorted", "plain",
//               "UpperBoundSortedValues", "merge_sort", "DeviceMergeSort::SortKeysCopy", ...
//   dtype       key type; values: "int64" for the key-value forms, else null
//   input       random | all-equal | long-runs | disjoint | one-empty | interleaved | large
//   na, nb      input sizes (sorted_search: keys, needles; sort: n, null; join: left, right)
//   out         elements or rows written
//   ms, ms_min, ms_max, runs   median, fastest, slowest of the timed runs
//   bytes       bytes the operation must move: inputs read once and outputs written once
//               (sort: n keys (+ values) read and written once, a lower bound, not a roofline)
//   gbps        bytes / ms / 1e6; pct_roofline = 100 gbps / the roofline of the part (merge,
//               set_ops, adversarial: the copy of the int32 merge; null for sort and join)
//   rate, rate_unit   elements (merge, set_ops: input elements; sort: keys; sorted_search:
//               needles; join: output rows) per second, in G/s
//   ratios      {gsearch_speedup: this peer's ms / gsearch's ms (peer rows); vs_merge (set_ops,
//               gsearch); vs_random (adversarial, gsearch and cub)}
//   verified    true | false (roofline: null)
//   peer_version  "3.0.1" (thrust), "3.6.0" (cub, thrust36, cub-join); null for gsearch and the
//               roofline
//   includes_sync, flush_l2

#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_host.hpp"
#include "gsearch/detail/cuda/check.cuh"
#include "gsearch/gsearch.hpp"
#include "merge_peers.hpp"
#include "timing.hpp"

#ifndef GSEARCH_VERSION
#define GSEARCH_VERSION "unknown"
#endif

namespace {

using namespace gsearch;
using json = nlohmann::ordered_json;
namespace peers = gsearch::bench::merge_peers;
using namespace gsearch::bench::host;

const char* const set_op_calls[] = {"set_intersection", "set_union", "set_difference", "set_symmetric_difference"};

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

/// The stable merge of sorted keys with values (ties: a first), as gsearch::merge documents.
template <class T>
void merge_pairs_host(const std::vector<T>& a, const std::vector<int64_t>& av, const std::vector<T>& b,
                      const std::vector<int64_t>& bv, std::vector<T>& out, std::vector<int64_t>& out_v) {
  out.resize(a.size() + b.size());
  out_v.resize(out.size());
  size_t i = 0, j = 0, k = 0;
  while (i < a.size() && j < b.size()) {
    if (b[j] < a[i]) {
      out[k] = b[j];
      out_v[k++] = bv[j++];
    } else {
      out[k] = a[i];
      out_v[k++] = av[i++];
    }
  }
  for (; i < a.size(); ++i, ++k) out[k] = a[i], out_v[k] = av[i];
  for (; j < b.size(); ++j, ++k) out[k] = b[j], out_v[k] = bv[j];
}

template <class T>
std::vector<T> set_op_host(int op, const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> out;
  out.reserve(size_t(core::set_op_bound(set_op(op), int64_t(a.size()), int64_t(b.size()))));
  auto it = std::back_inserter(out);
  switch (op) {
    case 0: std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), it); break;
    case 1: std::set_union(a.begin(), a.end(), b.begin(), b.end(), it); break;
    case 2: std::set_difference(a.begin(), a.end(), b.begin(), b.end(), it); break;
    case 3: std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), it); break;
  }
  return out;
}

/// Rows each join kind writes, from the key counts of sorted left and right.
struct join_counts {
  int64_t rows[6] = {0, 0, 0, 0, 0, 0};  // by join_kind
};
template <class T>
join_counts count_join(const std::vector<T>& l, const std::vector<T>& r) {
  join_counts c;
  size_t i = 0, j = 0;
  while (i < l.size() || j < r.size()) {
    T key;
    if (j == r.size() || (i < l.size() && l[i] < r[j]))
      key = l[i];
    else
      key = r[j];
    int64_t cl = 0, cr = 0;
    while (i < l.size() && l[i] == key) ++i, ++cl;
    while (j < r.size() && r[j] == key) ++j, ++cr;
    c.rows[0] += cl * cr;                                 // inner
    c.rows[1] += cr > 0 ? cl * cr : cl;                   // left
    c.rows[2] += cl > 0 ? cl * cr : cr;                   // right
    c.rows[3] += cl > 0 && cr > 0 ? cl * cr : cl + cr;    // full
    c.rows[4] += cr > 0 ? cl : 0;                         // semi
    c.rows[5] += cr > 0 ? 0 : cl;                         // anti
  }
  return c;
}

// ---- arguments ------------------------------------------------------------------------------

struct args {
  std::string json_path;
  bool quick = false, flush_l2 = true, peers = true;
  std::vector<std::string> parts{"merge", "set_ops", "sorted_search", "sort", "adversarial", "join"};
  int64_t n = 0, search_keys = 0, search_queries = 0, sort_n = 0, join_n = 0, join_range = 0;
  std::vector<std::string> joins{"inner", "left", "full", "semi"};
  std::string large_join = "auto";
  int64_t large_join_range = 100000;
  int repeat = 15, warmup = 3;
  uint64_t seed = 1;
  std::string command_line;

  bool has(const char* part) const { return std::find(parts.begin(), parts.end(), part) != parts.end(); }
};

join_kind join_kind_of(const std::string& s) {
  for (int k = 0; k < 6; ++k)
    if (s == to_string(join_kind(k))) return join_kind(k);
  throw std::runtime_error("unknown join kind " + s);
}

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
  cli::timing time(const std::function<void()>& enqueue, const std::function<void()>& before) {
    return cli::time_runs(a.warmup, a.repeat, [&] {
      if (a.flush_l2)  // clean lines only: a memset would leave dirty ones to write back in the run
        peers::roofline(nullptr, {{flush_buf.data(), nullptr, flush_buf.size() * 16}}, {4, 8}, sink.data());
      if (before) before();
      return elapsed_ms(cuda, enqueue);
    });
  }

  /// A row with every field, those that do not apply null.
  static json row(const char* part, const char* impl, const std::string& op, const std::string& call,
                  const char* dtype) {
    json r;
    for (const char* k : {"part", "impl", "op", "call", "dtype", "values", "input", "na", "nb", "out", "ms", "ms_min",
                          "ms_max", "runs", "bytes", "gbps", "pct_roofline", "rate", "rate_unit", "ratios",
                          "verified", "peer_version", "includes_sync", "flush_l2"})
      r[k] = nullptr;
    r["part"] = part;
    r["impl"] = impl;
    r["op"] = op;
    r["call"] = call;
    r["dtype"] = dtype;
    r["input"] = "random";
    r["ratios"] = json::object();
    r["includes_sync"] = false;
    const std::string i = impl;
    r["peer_version"] = i == "thrust"                                         ? json(peers::toolkit_cccl_version())
                        : (i == "cub" || i == "thrust36" || i == "cub-join") ? json(peers::cub_version())
                                                                              : json(nullptr);
    return r;
  }

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
  void add(json r, const cli::timing& t, double bytes, double count, const char* unit, double roof_gbps,
           std::optional<bool> ok) {
    r["ms"] = t.median_ms;
    r["ms_min"] = t.min_ms;
    r["ms_max"] = t.max_ms;
    r["runs"] = t.runs_ms.size();
    r["bytes"] = bytes;
    const double gbps = t.median_ms > 0 ? bytes / (t.median_ms * 1e6) : 0.0;
    r["gbps"] = gbps;
    r["pct_roofline"] = roof_gbps > 0 ? json(100.0 * gbps / roof_gbps) : json(nullptr);
    r["rate"] = t.median_ms > 0 ? count / (t.median_ms * 1e6) : 0.0;
    r["rate_unit"] = unit;
    r["verified"] = ok ? json(*ok) : json(nullptr);
    r["flush_l2"] = a.flush_l2;
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
      const cli::timing t = time(enqueue, before);
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
                  int64_t na, int64_t nb, double count, const char* unit, const char* values = nullptr) {
    double bytes = 0;
    for (const auto& s : segs) bytes += double(s.bytes) * (s.dst ? 2 : 1);
    json best_row;
    cli::timing best;
    std::string best_cfg;
    try {
      for (const peers::roofline_config& c : peers::roofline_configs()) {
        const cli::timing t = time([&] { peers::roofline(nullptr, segs, c, sink.data()); }, {});
        if (best_cfg.empty() || t.median_ms < best.median_ms) {
          best = t;
          best_cfg = "u" + std::to_string(c.unroll) + "-b" + std::to_string(c.blocks_per_sm) + "-t256-cs";
        }
      }
    } catch (const std::exception& e) {
      json r = row(part, "roofline", "copy", "copy", dtype);
      error(r, e);
      return 0;
    }
    json r = row(part, "roofline", "copy", best_cfg, dtype);
    if (values) r["values"] = values;
    r["na"] = na;
    r["nb"] = nb;
    const double gbps = bytes / (best.median_ms * 1e6);
    report["rooflines"][name] = {{"gbps", gbps}, {"ms", best.median_ms}, {"bytes", bytes}, {"config", best_cfg}};
    add(r, best, bytes, count, unit, gbps, std::nullopt);
    return gbps;
  }

  // ---- merge and set operations on the random inputs ----------------------------------------

  template <class T>
  void merge_keys(const char* part, const char* dtype, const std::string& input, const std::vector<T>& A,
                  const std::vector<T>& B, const T* dA, const T* dB, bool with_peers, double roof_gbps) {
    const int64_t na = int64_t(A.size()), nb = int64_t(B.size()), n = na + nb;
    std::vector<T> ref(static_cast<size_t>(n));
    std::merge(A.begin(), A.end(), B.begin(), B.end(), ref.begin());
    device_vector<T> out(n);
    const double bytes = 2.0 * double(n) * sizeof(T);
    auto check = [&] { return equal_parallel(to_host(out.data(), n), ref); };
    auto base = [&](const char* impl, const char* call) {
      json r = row(part, impl, "merge", call, dtype);
      r["input"] = input;
      r["na"] = na;
      r["nb"] = nb;
      r["out"] = n;
      return r;
    };
    const auto P = [&] { poison(out.data(), n); };
    measure(base("gsearch", "merge"), bytes, double(n), "G elements/s", roof_gbps, P, [&] {
      gsearch::merge(cuda, span<const T>(dA, na), span<const T>(dB, nb), out.view(), merge_options{false});
    }, check);
    if (with_peers && peers::cub_available()) {
      const size_t tb = peers::cub_merge_keys<T>(nullptr, nullptr, 0, dA, na, dB, nb, out.data());
      void* tp = cub_temp(tb);
      measure(base("cub", "DeviceMerge::MergeKeys"), bytes, double(n), "G elements/s", roof_gbps, P,
              [&] { peers::cub_merge_keys<T>(nullptr, tp, tb, dA, na, dB, nb, out.data()); }, check);
    }
    if (with_peers && a.peers && input == "random")
      measure(base("thrust", "merge"), bytes, double(n), "G elements/s", roof_gbps, P,
              [&] { peers::thrust_merge<T>(nullptr, dA, na, dB, nb, out.data()); }, check);
  }

  void merge_pairs(const std::vector<int32_t>& A, const std::vector<int32_t>& B, const int32_t* dA, const int32_t* dB) {
    using T = int32_t;
    const int64_t na = int64_t(A.size()), nb = int64_t(B.size()), n = na + nb;
    const auto av = generate<int64_t>(na, [](int64_t i) { return i; });
    const auto bv = generate<int64_t>(nb, [&](int64_t j) { return na + j; });
    const auto dav = to_device(av);
    const auto dbv = to_device(bv);
    std::vector<T> ref;
    std::vector<int64_t> ref_v;
    merge_pairs_host(A, av, B, bv, ref, ref_v);
    device_vector<T> out(n);
    device_vector<int64_t> out_v(n);
    const double bytes = 2.0 * double(n) * (sizeof(T) + 8);
    const double roof = roofline("merge", "merge-int32-int64", {{dA, out.data(), na * 4}, {dB, out.data() + na, nb * 4},
                                                                 {dav.data(), out_v.data(), na * 8},
                                                                 {dbv.data(), out_v.data() + na, nb * 8}},
                                 "int32", na, nb, double(n), "G elements/s", "int64");
    auto check = [&] {
      return equal_parallel(to_host(out.data(), n), ref) && equal_parallel(to_host(out_v.data(), n), ref_v);
    };
    auto base = [&](const char* impl, const char* call) {
      json r = row("merge", impl, "merge", call, "int32");
      r["values"] = "int64";
      r["na"] = na;
      r["nb"] = nb;
      r["out"] = n;
      return r;
    };
    const auto P = [&] {
      poison(out.data(), n);
      poison(out_v.data(), n);
    };
    measure(base("gsearch", "merge"), bytes, double(n), "G elements/s", roof, P, [&] {
      gsearch::merge(cuda, span<const T>(dA, na), span<const int64_t>(dav.data(), na), span<const T>(dB, nb),
                     span<const int64_t>(dbv.data(), nb), out.view(), out_v.view(), merge_options{false});
    }, check);
    if (!a.peers) return;
    if (peers::cub_available()) {
      const size_t tb = peers::cub_merge_pairs<T>(nullptr, nullptr, 0, dA, dav.data(), na, dB, dbv.data(), nb,
                                                  out.data(), out_v.data());
      void* tp = cub_temp(tb);
      measure(base("cub", "DeviceMerge::MergePairs"), bytes, double(n), "G elements/s", roof, P, [&] {
        peers::cub_merge_pairs<T>(nullptr, tp, tb, dA, dav.data(), na, dB, dbv.data(), nb, out.data(), out_v.data());
      }, check);
    }
    measure(base("thrust", "merge_by_key"), bytes, double(n), "G elements/s", roof, P, [&] {
      peers::thrust_merge_by_key<T>(nullptr, dA, dav.data(), na, dB, dbv.data(), nb, out.data(), out_v.data());
    }, check);
  }

  template <class T>
  void set_ops(const char* part, const std::string& input, const std::vector<T>& A, const std::vector<T>& B,
               const T* dA, const T* dB, bool with_peers, double roof_gbps) {
    const int64_t na = int64_t(A.size()), nb = int64_t(B.size());
    device_vector<T> out(std::max<int64_t>(na + nb, 1));
    for (int op = 0; op < 4; ++op) {
      const std::vector<T> ref = set_op_host(op, A, B);
      const int64_t m = int64_t(ref.size());
      int64_t got = -1;
      auto check = [&] { return got == m && equal_parallel(to_host(out.data(), m), ref); };
      auto base = [&](const char* impl, const std::string& call) {
        json r = row(part, impl, set_op_names[op], call, "int32");
        r["input"] = input;
        r["na"] = na;
        r["nb"] = nb;
        r["out"] = m;
        r["includes_sync"] = true;
        return r;
      };
      const double bytes = double(na + nb + m) * sizeof(T);
      const auto P = [&] {
        poison(out.data(), na + nb);
        got = -1;
      };
      measure(base("gsearch", "set_operation"), bytes, double(na + nb), "G elements/s", roof_gbps, P, [&] {
        got = gsearch::set_operation(cuda, set_op(op), span<const T>(dA, na), span<const T>(dB, nb), out.view(),
                                     merge_options{false});
      }, check);
      if (!with_peers || !a.peers) continue;
      if (peers::cub_available())
        measure(base("thrust36", set_op_calls[op]), bytes, double(na + nb), "G elements/s", roof_gbps, P,
                [&] { got = peers::thrust36_set_op<T>(nullptr, op, dA, na, dB, nb, out.data()); }, check);
      measure(base("thrust", set_op_calls[op]), bytes, double(na + nb), "G elements/s", roof_gbps, P,
              [&] { got = peers::thrust_set_op<T>(nullptr, op, dA, na, dB, nb, out.data()); }, check);
    }
  }

  void random_int32() {
    using T = int32_t;
    const int64_t n = a.n;
    auto A = generate<T>(n, [&](int64_t i) { return T(word(a.seed, uint64_t(i)) >> 37); });
    auto B = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 1, uint64_t(i)) >> 37); });
    const auto dA = sort_on_device(A), dB = sort_on_device(B);
    record_input("merge.a", A.data(), n, 4, "sort(int32(word(S, i) >> 37))");
    record_input("merge.b", B.data(), n, 4, "sort(int32(word(S + 1, j) >> 37))");
    {
      device_vector<T> out(2 * n);
      merge_roof_gbps = roofline("merge", "merge-int32", {{dA.data(), out.data(), n * 4}, {dB.data(), out.data() + n, n * 4}},
                                 "int32", n, n, double(2 * n), "G elements/s");
    }
    if (a.has("merge")) {
      merge_keys<T>("merge", "int32", "random", A, B, dA.data(), dB.data(), a.peers, merge_roof_gbps);
      merge_pairs(A, B, dA.data(), dB.data());
    }
    if (a.has("set_ops")) set_ops<T>("set_ops", "random", A, B, dA.data(), dB.data(), true, merge_roof_gbps);
  }

  void random_int64() {
    using T = int64_t;
    const int64_t n = a.n;
    auto A = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 2, uint64_t(i)) >> 1); });
    auto B = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 3, uint64_t(i)) >> 1); });
    const auto dA = sort_on_device(A), dB = sort_on_device(B);
    record_input("merge64.a", A.data(), n, 8, "sort(int64(word(S + 2, i) >> 1))");
    record_input("merge64.b", B.data(), n, 8, "sort(int64(word(S + 3, j) >> 1))");
    double roof;
    {
      device_vector<T> out(2 * n);
      roof = roofline("merge", "merge-int64", {{dA.data(), out.data(), n * 8}, {dB.data(), out.data() + n, n * 8}},
                      "int64", n, n, double(2 * n), "G elements/s");
    }
    merge_keys<T>("merge", "int64", "random", A, B, dA.data(), dB.data(), a.peers, roof);
  }

  // ---- adversarial inputs -------------------------------------------------------------------

  void adversarial() {
    using T = int32_t;
    const int64_t n = a.n;
    // The random inputs again, for disjoint and one-empty.
    auto RA = generate<T>(n, [&](int64_t i) { return T(word(a.seed, uint64_t(i)) >> 37); });
    auto RB = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 1, uint64_t(i)) >> 37); });
    sort_on_device(RA);
    sort_on_device(RB);
    for (const char* input : {"all-equal", "long-runs", "disjoint", "one-empty", "interleaved"}) {
      const std::string in = input;
      std::vector<T> A, B;
      if (in == "all-equal") {
        A.assign(size_t(n), 7);
        B.assign(size_t(n), 7);
      } else if (in == "long-runs") {
        A = generate<T>(n, [](int64_t i) { return T(i >> 16); });
        B = generate<T>(n, [](int64_t j) { return T(j >> 15); });
      } else if (in == "disjoint") {
        A = RA;
        B = generate<T>(n, [&](int64_t j) { return T(RB[size_t(j)] + (T(1) << 27)); });
      } else if (in == "one-empty") {
        A.resize(size_t(2 * n));
        std::merge(RA.begin(), RA.end(), RB.begin(), RB.end(), A.begin());
      } else {
        A = generate<T>(n, [](int64_t i) { return T(2 * i); });
        B = generate<T>(n, [](int64_t j) { return T(2 * j + 1); });
      }
      const auto dA = to_device(A), dB = to_device(B);
      merge_keys<T>("adversarial", "int32", in, A, B, dA.data(), dB.data(), a.peers, merge_roof_gbps);
      set_ops<T>("adversarial", in, A, B, dA.data(), dB.data(), false, merge_roof_gbps);
    }
  }

  // ---- sorted search ------------------------------------------------------------------------

  void sorted_search() {
    using T = int32_t;
    const int64_t k = a.search_keys, q = a.search_queries;
    auto K = generate<T>(k, [&](int64_t i) { return T(word(a.seed + 4, uint64_t(i)) >> 33); });
    auto Q = generate<T>(q, [&](int64_t j) { return T(word(a.seed + 5, uint64_t(j)) >> 33); });
    const auto dK = sort_on_device(K), dQ = sort_on_device(Q);
    record_input("search.keys", K.data(), k, 4, "sort(int32(word(S + 4, i) >> 33))");
    record_input("search.needles", Q.data(), q, 4, "sort(int32(word(S + 5, j) >> 33))");
    // The reference: a walk per chunk of needles from one binary search.
    std::vector<int32_t> ref(static_cast<size_t>(q));
    parallel_for(q, [&](int64_t b, int64_t e) {
      int64_t pos = std::upper_bound(K.begin(), K.end(), Q[size_t(b)]) - K.begin();
      for (int64_t j = b; j < e; ++j) {
        while (pos < k && K[size_t(pos)] <= Q[size_t(j)]) ++pos;
        ref[size_t(j)] = int32_t(pos);
      }
    });
    device_vector<int32_t> out(q);
    const double bytes = 4.0 * double(k) + 8.0 * double(q);
    const double roof = roofline("sorted_search", "sorted-search", {{dK.data(), nullptr, k * 4}, {dQ.data(), out.data(), q * 4}},
                                 "int32", k, q, double(q), "G queries/s");
    auto check = [&] { return equal_parallel(to_host(out.data(), q), ref); };
    auto base = [&](const char* impl, const char* call) {
      json r = row("sorted_search", impl, "upper_bound", call, "int32");
      r["na"] = k;
      r["nb"] = q;
      r["out"] = q;
      return r;
    };
    const auto P = [&] { poison(out.data(), q); };
    const span<const T> keys(dK.data(), k), queries(dQ.data(), q);
    search_options sorted;
    sorted.queries_sorted = true;
    measure(base("gsearch", "queries_sorted"), bytes, double(q), "G queries/s", roof, P,
            [&] { gsearch::upper_bound(cuda, keys, queries, out.view(), sorted); }, check);
    measure(base("gsearch", "plain"), bytes, double(q), "G queries/s", roof, P,
            [&] { gsearch::upper_bound(cuda, keys, queries, out.view(), search_options{}); }, check);
    if (!a.peers) return;
    if (peers::cub_available()) {
      const size_t tb = peers::cub_upper_bound_sorted<T>(nullptr, nullptr, 0, dK.data(), k, dQ.data(), q, out.data());
      void* tp = cub_temp(tb);
      measure(base("cub", "DeviceFind::UpperBoundSortedValues"), bytes, double(q), "G queries/s", roof, P,
              [&] { peers::cub_upper_bound_sorted<T>(nullptr, tp, tb, dK.data(), k, dQ.data(), q, out.data()); }, check);
    }
    measure(base("thrust", "upper_bound"), bytes, double(q), "G queries/s", roof, P,
            [&] { peers::thrust_upper_bound<T>(nullptr, dK.data(), k, dQ.data(), q, out.data()); }, check);
  }

  // ---- merge sort ---------------------------------------------------------------------------

  void sort_keys() {
    using T = int32_t;
    const int64_t n = a.sort_n;
    const auto X = generate<T>(n, [&](int64_t i) { return T(uint32_t(word(a.seed + 6, uint64_t(i)) >> 32)); });
    record_input("sort.keys", X.data(), n, 4, "int32(word(S + 6, i) >> 32)");
    const auto dX = to_device(X);
    std::vector<T> ref = X;
    sort_on_device(ref);
    device_vector<T> out(n);
    const double bytes = 2.0 * double(n) * sizeof(T);
    auto check = [&] { return equal_parallel(to_host(out.data(), n), ref); };
    auto base = [&](const char* impl, const char* call) {
      json r = row("sort", impl, "sort", call, "int32");
      r["na"] = n;
      r["out"] = n;
      return r;
    };
    const auto P = [&] { poison(out.data(), n); };
    measure(base("gsearch", "merge_sort"), bytes, double(n), "G keys/s", 0, P,
            [&] { gsearch::merge_sort(cuda, span<const T>(dX.data(), n), out.view()); }, check);
    if (!a.peers) return;
    if (peers::cub_available()) {
      size_t tb = peers::cub_merge_sort_keys<T>(nullptr, nullptr, 0, dX.data(), out.data(), n);
      void* tp = cub_temp(tb);
      measure(base("cub", "DeviceMergeSort::SortKeysCopy"), bytes, double(n), "G keys/s", 0, P,
              [&] { peers::cub_merge_sort_keys<T>(nullptr, tp, tb, dX.data(), out.data(), n); }, check);
      tb = peers::cub_radix_sort_keys<T>(nullptr, nullptr, 0, dX.data(), out.data(), n);
      tp = cub_temp(tb);
      measure(base("cub", "DeviceRadixSort::SortKeys"), bytes, double(n), "G keys/s", 0, P,
              [&] { peers::cub_radix_sort_keys<T>(nullptr, tp, tb, dX.data(), out.data(), n); }, check);
    }
    measure(base("thrust", "sort"), bytes, double(n), "G keys/s", 0, P,
            [&] { peers::thrust_sort<T>(nullptr, out.data(), n); }, check, [&] {
              GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out.data(), dX.data(), size_t(n) * 4, cudaMemcpyDeviceToDevice));
            });
  }

  void sort_pairs() {
    using T = int32_t;
    const int64_t n = a.sort_n;
    const auto X = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 7, uint64_t(i)) >> 44); });
    record_input("sort.pairs.keys", X.data(), n, 4, "int32(word(S + 7, i) >> 44); values i");
    const auto V = generate<int64_t>(n, [](int64_t i) { return i; });
    const auto dX = to_device(X);
    const auto dV = to_device(V);
    std::vector<T> ref = X;
    sort_on_device(ref);
    device_vector<T> out(n);
    device_vector<int64_t> out_v(n);
    const double bytes = 2.0 * double(n) * (sizeof(T) + 8);
    // The stable permutation: keys sorted, each value the index of its key, ascending per key.
    auto check = [&] {
      const auto k = to_host(out.data(), n);
      const auto v = to_host(out_v.data(), n);
      if (!equal_parallel(k, ref)) return false;
      return parallel_all(n, [&](int64_t j) {
        const int64_t x = v[size_t(j)];
        if (x < 0 || x >= n || X[size_t(x)] != k[size_t(j)]) return false;
        return j == 0 || k[size_t(j - 1)] != k[size_t(j)] || v[size_t(j - 1)] < x;
      });
    };
    auto base = [&](const char* impl, const char* call) {
      json r = row("sort", impl, "sort", call, "int32");
      r["values"] = "int64";
      r["na"] = n;
      r["out"] = n;
      return r;
    };
    const auto P = [&] {
      poison(out.data(), n);
      poison(out_v.data(), n);
    };
    measure(base("gsearch", "merge_sort"), bytes, double(n), "G keys/s", 0, P, [&] {
      gsearch::merge_sort(cuda, span<const T>(dX.data(), n), span<const int64_t>(dV.data(), n), out.view(), out_v.view());
    }, check);
    if (!a.peers) return;
    if (peers::cub_available()) {
      size_t tb = peers::cub_merge_sort_pairs<T>(nullptr, nullptr, 0, dX.data(), dV.data(), out.data(), out_v.data(), n);
      void* tp = cub_temp(tb);
      measure(base("cub", "DeviceMergeSort::SortPairsCopy"), bytes, double(n), "G keys/s", 0, P, [&] {
        peers::cub_merge_sort_pairs<T>(nullptr, tp, tb, dX.data(), dV.data(), out.data(), out_v.data(), n);
      }, check);
      tb = peers::cub_radix_sort_pairs<T>(nullptr, nullptr, 0, dX.data(), dV.data(), out.data(), out_v.data(), n);
      tp = cub_temp(tb);
      measure(base("cub", "DeviceRadixSort::SortPairs"), bytes, double(n), "G keys/s", 0, P, [&] {
        peers::cub_radix_sort_pairs<T>(nullptr, tp, tb, dX.data(), dV.data(), out.data(), out_v.data(), n);
      }, check);
    }
    measure(base("thrust", "sort_by_key"), bytes, double(n), "G keys/s", 0, P,
            [&] { peers::thrust_sort_by_key<T>(nullptr, out.data(), out_v.data(), n); }, check, [&] {
              GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out.data(), dX.data(), size_t(n) * 4, cudaMemcpyDeviceToDevice));
              GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out_v.data(), dV.data(), size_t(n) * 8, cudaMemcpyDeviceToDevice));
            });
  }

  // ---- joins --------------------------------------------------------------------------------

  /// `samples` rows, evenly spaced (the first and last included), copied with one strided copy
  /// per map; checks each row, and for gsearch (`ordered`) that the sampled rows ascend by key.
  template <class T>
  bool check_join(join_kind kind, const std::vector<T>& L, const std::vector<T>& R, const int64_t* li,
                  const int64_t* ri, int64_t rows, bool ordered) {
    if (rows == 0) return true;
    const int64_t samples = std::min<int64_t>(rows, 1 << 16);
    const int64_t stride = samples > 1 ? (rows - 1) / (samples - 1) : 1;
    std::vector<int64_t> hl(static_cast<size_t>(samples)), hr(static_cast<size_t>(samples), -2);
    auto gather = [&](const int64_t* d, std::vector<int64_t>& h) {
      GSEARCH_CUDA_CHECK(cudaMemcpy2D(h.data(), 8, d, size_t(stride) * 8, 8, size_t(samples), cudaMemcpyDeviceToHost));
      h.back() = 0;
      GSEARCH_CUDA_CHECK(cudaMemcpy(&h.back(), d + rows - 1, 8, cudaMemcpyDeviceToHost));
    };
    gather(li, hl);
    const bool left_only = core::join_left_only(kind);
    if (!left_only) gather(ri, hr);
    const int64_t nl = int64_t(L.size()), nr = int64_t(R.size());
    auto has = [](const std::vector<T>& v, T x) { return std::binary_search(v.begin(), v.end(), x); };
    T last_key{};
    for (int64_t s = 0; s < samples; ++s) {
      const int64_t i = hl[size_t(s)], j = hr[size_t(s)];
      T key;
      if (left_only) {
        if (i < 0 || i >= nl) return false;
        key = L[size_t(i)];
        if (has(R, key) != (kind == join_kind::semi)) return false;
      } else if (i >= 0 && j >= 0) {
        if (i >= nl || j >= nr || L[size_t(i)] != R[size_t(j)]) return false;
        key = L[size_t(i)];
      } else if (i >= 0 && j == -1) {
        if (i >= nl || kind == join_kind::inner || kind == join_kind::right || has(R, L[size_t(i)])) return false;
        key = L[size_t(i)];
      } else if (i == -1 && j >= 0) {
        if (j >= nr || kind == join_kind::inner || kind == join_kind::left || has(L, R[size_t(j)])) return false;
        key = R[size_t(j)];
      } else {
        return false;
      }
      if (ordered && s > 0 && key < last_key) return false;
      last_key = key;
    }
    return true;
  }

  template <class T>
  void join_case(const std::string& input, const std::vector<T>& L, const std::vector<T>& R,
                 const std::vector<join_kind>& kinds) {
    const int64_t nl = int64_t(L.size()), nr = int64_t(R.size());
    const join_counts expect = count_join(L, R);
    int64_t capacity = 1;
    for (join_kind k : kinds) capacity = std::max(capacity, expect.rows[int(k)]);
    bool need_right = false;
    for (join_kind k : kinds) need_right |= !core::join_left_only(k);
    const auto dL = to_device(L);
    const auto dR = to_device(R);
    device_vector<int64_t> li(capacity), ri(need_right ? capacity : 0);
    for (join_kind kind : kinds) {
      const int64_t rows = expect.rows[int(kind)];
      const bool left_only = core::join_left_only(kind);
      const double bytes = double(nl + nr) * sizeof(T) + double(rows) * (left_only ? 8 : 16);
      int64_t got = -1;
      auto base = [&](const char* impl, const char* call) {
        json r = row("join", impl, to_string(kind), call, "int32");
        r["input"] = input;
        r["na"] = nl;
        r["nb"] = nr;
        r["out"] = rows;
        r["includes_sync"] = true;
        return r;
      };
      const auto P = [&] {
        poison(li.data(), capacity);
        if (need_right) poison(ri.data(), capacity);
        got = -1;
      };
      const span<int64_t> rspan = left_only ? span<int64_t>() : span<int64_t>(ri.data(), capacity);
      measure(base("gsearch", "join"), bytes, double(rows), "G rows/s", 0, P, [&] {
        got = gsearch::join(cuda, kind, span<const T>(dL.data(), nl), span<const T>(dR.data(), nr),
                            span<int64_t>(li.data(), capacity), rspan, merge_options{false});
      }, [&] { return got == rows && check_join(kind, L, R, li.data(), ri.data(), rows, true); });
      if (!a.peers || !peers::cub_available() || kind == join_kind::right) continue;
      try {
        const size_t tb = peers::cub_join_temp_bytes<T>(int(kind), dL.data(), nl, dR.data(), nr);
        void* tp = cub_temp(tb);
        measure(base("cub-join", "LowerBound/UpperBoundSortedValues+ExclusiveSum+expand"), bytes, double(rows),
                "G rows/s", 0, P, [&] {
                  got = peers::cub_join<T>(nullptr, tp, tb, int(kind), dL.data(), nl, dR.data(), nr, li.data(),
                                           need_right ? ri.data() : nullptr, capacity);
                }, [&] { return got == rows && check_join(kind, L, R, li.data(), ri.data(), rows, false); });
      } catch (const std::exception& e) {
        error(base("cub-join", "setup"), e);
      }
    }
  }

  void joins() {
    using T = int32_t;
    std::vector<join_kind> kinds;
    for (const auto& s : a.joins) kinds.push_back(join_kind_of(s));
    const int64_t n = a.join_n;
    temp = device_vector<char>();  // the sorts' CUB storage: the joins need the memory
    {
      const uint64_t R = uint64_t(a.join_range);
      auto L = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 8, uint64_t(i)) % R); });
      auto Rt = generate<T>(n, [&](int64_t j) { return T(word(a.seed + 9, uint64_t(j)) % R); });
      sort_on_device(L);
      sort_on_device(Rt);
      record_input("join.left", L.data(), n, 4, "sort(int32(word(S + 8, i) mod R)), R = " + std::to_string(R));
      record_input("join.right", Rt.data(), n, 4, "sort(int32(word(S + 9, j) mod R)), R = " + std::to_string(R));
      join_case<T>("random", L, Rt, kinds);
    }
    const bool want_large = a.large_join == "on" || (a.large_join == "auto" && !a.quick);
    if (!want_large) return;
    const uint64_t R = uint64_t(a.large_join_range);
    auto L = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 10, uint64_t(i)) % R); });
    auto Rt = generate<T>(n, [&](int64_t j) { return T(word(a.seed + 11, uint64_t(j)) % R); });
    sort_on_device(L);
    sort_on_device(Rt);
    const int64_t rows = count_join(L, Rt).rows[0];
    size_t free_b = 0, total_b = 0;
    GSEARCH_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double need = double(rows) * 16 + double(n) * 4 * 64 + (1ull << 30);  // maps + workspaces + 1 GiB
    if (need > double(free_b)) {
      skip("join inner, large (" + std::to_string(rows) + " rows)",
           "needs about " + std::to_string(int64_t(need / 1e9)) + " GB of device memory, " +
               std::to_string(int64_t(double(free_b) / 1e9)) + " GB free");
      return;
    }
    record_input("join.large.left", L.data(), n, 4, "sort(int32(word(S + 10, i) mod R)), R = " + std::to_string(R));
    record_input("join.large.right", Rt.data(), n, 4, "sort(int32(word(S + 11, j) mod R)), R = " + std::to_string(R));
    join_case<T>("large", L, Rt, {join_kind::inner});
  }

  // ---- ratios and targets (issue 8) -----------------------------------------------------------

  const json* find(const std::function<bool(const json&)>& pred) const {
    for (const json& r : report["results"])
      if (r["verified"] != false && pred(r)) return &r;
    return nullptr;
  }

  static bool same_case(const json& x, const json& y) {
    for (const char* k : {"part", "op", "dtype", "values", "input", "na", "nb"})
      if (x[k] != y[k]) return false;
    return true;
  }

  void ratios() {
    for (json& r : report["results"]) {
      if (r["ms"].is_null() || r["impl"] == "roofline") continue;
      const double ms = r["ms"].get<double>();
      if (r["impl"] != "gsearch") {
        const json* g = find([&](const json& x) {
          return x["impl"] == "gsearch" && same_case(x, r) && (r["part"] != "sorted_search" || x["call"] == "queries_sorted");
        });
        if (g && (*g)["ms"].get<double>() > 0) r["ratios"]["gsearch_speedup"] = ms / (*g)["ms"].get<double>();
      }
      if (r["part"] == "set_ops" && r["impl"] == "gsearch") {
        const json* m = find([&](const json& x) {
          return x["part"] == "merge" && x["impl"] == "gsearch" && x["dtype"] == "int32" && x["values"].is_null() &&
                 x["input"] == "random";
        });
        if (m) r["ratios"]["vs_merge"] = ms / (*m)["ms"].get<double>();
      }
      if (r["part"] == "adversarial") {
        const json* base = find([&](const json& x) {
          return (x["part"] == "merge" || x["part"] == "set_ops") && x["impl"] == r["impl"] && x["op"] == r["op"] &&
                 x["dtype"] == "int32" && x["values"].is_null() && x["input"] == "random";
        });
        if (base) r["ratios"]["vs_random"] = ms / (*base)["ms"].get<double>();
      }
    }
  }

  void targets() {
    json& out = report["targets"];
    auto add_target = [&](const std::string& name, double value, double target, const char* unit, bool higher) {
      const bool met = higher ? value >= target : value <= target;
      out.push_back({{"name", name}, {"value", value}, {"target", target}, {"unit", unit}, {"higher", higher},
                     {"met", met}});
    };
    auto pick = [&](const char* part, const char* impl, const std::string& op, const char* input = "random",
                    const char* call = nullptr, const char* dtype = "int32") {
      return find([&](const json& x) {
        return x["part"] == part && x["impl"] == impl && x["op"] == op && x["input"] == input && x["dtype"] == dtype &&
               x["values"].is_null() && (!call || x["call"] == call);
      });
    };
    auto ms = [](const json* r) { return (*r)["ms"].get<double>(); };
    const json* gm = pick("merge", "gsearch", "merge");
    if (const json* c = pick("merge", "cub", "merge"); gm && c)
      add_target("merge int32: CUB 3.6 MergeKeys time / gsearch time", ms(c) / ms(gm), 0.95, "x", true);
    for (int op = 0; op < 4; ++op) {
      const json* g = pick("set_ops", "gsearch", set_op_names[op]);
      if (g && gm)
        add_target(std::string("set ") + set_op_names[op] + ": time / gsearch merge time", ms(g) / ms(gm), 1.15, "x",
                   false);
      if (const json* t = pick("set_ops", "thrust36", set_op_names[op]); g && t)
        add_target(std::string("set ") + set_op_names[op] + ": thrust 3.6 time / gsearch time", ms(t) / ms(g), 1.2, "x",
                   true);
    }
    if (const json* s = pick("sorted_search", "gsearch", "upper_bound", "random", "queries_sorted")) {
      if (!(*s)["pct_roofline"].is_null())
        add_target("sorted search: % of the roofline (keys + needles read, indices written)",
                   (*s)["pct_roofline"].get<double>(), 80, "%", true);
      if (const json* c = pick("sorted_search", "cub", "upper_bound"))
        add_target("sorted search: CUB 3.6 UpperBoundSortedValues time / gsearch time", ms(c) / ms(s), 2.5, "x", true);
    }
    if (const json* g = pick("sort", "gsearch", "sort"))
      if (const json* c = pick("sort", "cub", "sort", "random", "DeviceMergeSort::SortKeysCopy"))
        add_target("merge sort int32: CUB 3.6 DeviceMergeSort time / gsearch time", ms(c) / ms(g), 1.0, "x", true);
    for (const json& r : report["results"])
      if (r["part"] == "adversarial" && r["impl"] == "gsearch" && r["verified"] != false &&
          r["ratios"].contains("vs_random"))
        add_target(r["op"].get<std::string>() + " on " + r["input"].get<std::string>() + ": time / random-input time",
                   r["ratios"]["vs_random"].get<double>(), 1.10, "x", false);
    if (const json* j = pick("join", "gsearch", "inner", "large"))
      add_target("inner join beyond 2^31 rows: rows / 2^31 (verified)", (*j)["out"].get<double>() / 2147483648.0, 1.0,
                 "x", true);
    if (out.empty()) return;
    std::printf("\ntargets (issue 8; torch's and the CPU's come from bench/python/merge_bench.py and merge_cpu_bench):\n");
    for (const json& t : out)
      std::printf("  %-72s %8.3f %-2s (target %s %g) %s\n", t["name"].get<std::string>().c_str(), t["value"].get<double>(),
                  t["unit"].get<std::string>().c_str(), t["higher"].get<bool>() ? ">=" : "<=", t["target"].get<double>(),
                  t["met"].get<bool>() ? "met" : "MISSED");
  }

  // ---- all of it --------------------------------------------------------------------------

  void run() {
    if (a.has("merge") || a.has("set_ops") || a.has("adversarial")) random_int32();
    if (a.has("merge")) random_int64();
    if (a.has("adversarial")) adversarial();
    if (a.has("sorted_search")) sorted_search();
    if (a.has("sort")) {
      sort_keys();
      sort_pairs();
    }
    if (a.has("join")) joins();
    ratios();
    targets();
  }
};

}  // namespace

int main(int argc, char** argv) {
  args a;
  a.command_line = command_line(argc, argv);
  CLI::App app{"merge_bench: gsearch's merge family (merge, set operations, sorted search, merge sort, joins) on the "
               "GPU against the copy roofline, thrust (CUDA toolkit CCCL), thrust and CUB (newer CCCL) and a CUB-built "
               "join, on the same buffers (issue 8). Writes a table to stdout and, with --json, one JSON file "
               "(bench/README.md)."};
  app.footer(
      "Timing: CUDA events, --warmup untimed runs, the median of --repeat runs. Every result is checked against "
      "a host reference; exit status 0 ok, 1 bad usage, 2 no CUDA device (nothing measured), 3 a check failed or "
      "a call threw. Without a GPU only --help works.");
  app.add_option("--json", a.json_path, "Write the results as JSON to this file")->type_name("FILE");
  app.add_flag("--quick", a.quick, "A small run for a smoke test (N 2^20, K 2^16, Q 2^20, sort 2^20, joins 2^16 "
                                   "with R 2^14, no large join, 3 runs, 1 warm-up): seconds");
  app.add_option("--parts", a.parts, "What to measure")
      ->delimiter(',')
      ->check(CLI::IsMember({"merge", "set_ops", "sorted_search", "sort", "adversarial", "join"}))
      ->capture_default_str();
  app.add_option("--n", a.n, "Elements per side of the merges and set operations (default 2^26; a multiple of 4)")
      ->check(CLI::Range(int64_t(1024), int64_t(1) << 32));
  app.add_option("--search-keys", a.search_keys, "Keys of the sorted search (default 2^24)")
      ->check(CLI::Range(int64_t(4), int64_t(1) << 31));
  app.add_option("--search-queries", a.search_queries, "Sorted needles of the sorted search (default 2^27)")
      ->check(CLI::Range(int64_t(4), int64_t(1) << 32));
  app.add_option("--sort-n", a.sort_n, "Keys of the merge sorts (default 2^27)")
      ->check(CLI::Range(int64_t(4), int64_t(1) << 32));
  app.add_option("--join-n", a.join_n, "Rows on each side of the joins (default 2^24)")
      ->check(CLI::Range(int64_t(4), int64_t(1) << 31));
  app.add_option("--join-range", a.join_range, "Join keys are uniform in [0, R) (default 2^22)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 31));
  app.add_option("--joins", a.joins, "Join kinds")
      ->delimiter(',')
      ->check(CLI::IsMember({"inner", "left", "right", "full", "semi", "anti"}))
      ->capture_default_str();
  app.add_option("--large-join", a.large_join, "The inner join with over 2^31 output rows (auto: unless --quick, "
                                               "when the device memory allows)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  app.add_option("--large-join-range", a.large_join_range, "Its keys' range (--join-n^2 / R rows)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 31))
      ->capture_default_str();
  app.add_flag("!--no-peers", a.peers, "gsearch and the roofline only");
  app.add_option("--repeat", a.repeat, "Timed runs per configuration (the median is reported; >= 10 unless --quick)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "Untimed runs first")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--seed", a.seed, "Seed of the inputs (the formulas at the top of bench/merge_bench.cu)")
      ->capture_default_str();
  app.add_flag("!--no-flush-l2", a.flush_l2, "Do not read a 2 x L2 scratch buffer before each run (outside the "
                                            "events)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }

  auto dflt = [](int64_t& v, int64_t full, int64_t quick, bool q) {
    if (v == 0) v = q ? quick : full;
  };
  dflt(a.n, int64_t(1) << 26, int64_t(1) << 20, a.quick);
  dflt(a.search_keys, int64_t(1) << 24, int64_t(1) << 16, a.quick);
  dflt(a.search_queries, int64_t(1) << 27, int64_t(1) << 20, a.quick);
  dflt(a.sort_n, int64_t(1) << 27, int64_t(1) << 20, a.quick);
  dflt(a.join_n, int64_t(1) << 24, int64_t(1) << 16, a.quick);
  dflt(a.join_range, int64_t(1) << 22, int64_t(1) << 14, a.quick);
  if (a.quick) {
    a.repeat = std::min(a.repeat, 3);
    a.warmup = std::min(a.warmup, 1);
  }
  if (a.n % 4 != 0 || a.search_keys % 4 != 0 || a.search_queries % 4 != 0) {
    std::fprintf(stderr, "merge_bench: --n, --search-keys and --search-queries must be multiples of 4 (the roofline "
                         "moves 16-byte words)\n");
    return 1;
  }
  if (!a.quick && a.repeat < 10) {
    std::fprintf(stderr, "merge_bench: --repeat %d: the median of at least 10 runs, please (or --quick)\n", a.repeat);
    return 1;
  }
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "merge_bench: %s: nothing measured. It times GPU kernels; run it on the GPU machine "
                         "(scripts/device/bench_merge.sh).\n",
                 built_with_cuda() ? "no CUDA device found" : "gsearch was built without CUDA");
    return 2;
  }

  const cuda_device_info dev = cuda_device_properties();
  json report = {{"schema", "gsearch-bench-merge/1"}, {"synthetic", false}, {"command", a.command_line}};
  report["device"] = device_json(dev);
  report["versions"] = {{"gsearch", GSEARCH_VERSION}, {"thrust", peers::toolkit_cccl_version()},
                        {"cub", peers::cub_available() ? json(peers::cub_version()) : json(nullptr)}};
  report["config"] = {{"parts", a.parts}, {"n", a.n}, {"search_keys", a.search_keys},
                      {"search_queries", a.search_queries}, {"sort_n", a.sort_n}, {"join_n", a.join_n},
                      {"join_range", a.join_range}, {"joins", a.joins}, {"large_join", a.large_join},
                      {"large_join_range", a.large_join_range}, {"peers", a.peers}, {"repeat", a.repeat},
                      {"warmup", a.warmup}, {"seed", a.seed}, {"flush_l2", a.flush_l2}, {"quick", a.quick}};
  report["rooflines"] = json::object();
  for (const char* k : {"inputs", "results", "targets", "skipped", "failures", "errors"}) report[k] = json::array();
  std::printf("merge_bench: %s; gsearch %s, thrust %s (toolkit CCCL), cub %s\n", dev.name.c_str(), GSEARCH_VERSION,
              peers::toolkit_cccl_version().c_str(), peers::cub_available() ? peers::cub_version().c_str() : "(not built)");
  if (!peers::cub_available() && a.peers)
    std::printf("merge_bench: no CCCL 3.6 peers in this build (scripts/fetch-cccl.sh, then reconfigure)\n");
  std::printf("%-13s %-9s %-20s %-30s %-5s %-11s %11s %11s %10s %6s %6s %s\n", "part", "impl", "op", "call", "dtype",
              "input", "na", "nb", "ms", "GB/s", "roof", "rate");

  return run_and_report<runner>("merge_bench", a, a.json_path, std::move(report));
}
