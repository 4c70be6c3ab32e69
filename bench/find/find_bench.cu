// find_bench: the H100 benchmark of gsearch's unsorted search (issue 7), one run, the same device
// buffers for gsearch and its peers. Writes a table to stdout and, with --json, one JSON file.
//
//   find_bench [--json FILE] [--quick] [--parts strategies,modes,isin,peers] [--n N]
//              [--sizes N,...] [--ks K,...] [--strategies strided,coalesced,unrolled]
//              [--fractions F,...] [--needles M,...] [--isin-methods auto,sorted,hash]
//              [--repeat 15] [--warmup 3] [--seed 1] [--random-seed 12345] [--no-flush-l2]
//
// Parts (all by default):
//   strategies  seeds/001's experiment: gsearch::find(first) with find_options{strategy, k} for
//               strided / coalesced / unrolled at k = 1..64, one-per-thread (the baseline) and
//               the tuned default (auto), at each of --sizes (500,000 and 2^28 int32), the one
//               match at a fixed random position ("random") and with no match ("none").
//   modes       on --n int32 (2^28, 1 GiB): find_first and find_any with the match at 0, N/100,
//               N/2, N-1 and none; count, find_all (the whole call, into a preallocated span)
//               and find_random at match fractions 0 (the unique input without its match) and
//               --fractions (1e-5, 1%, 50%, 100%).
//   isin        on the same --n elements: --needles test elements (2^10, 2^20) with each of
//               --isin-methods; bool output.
//   peers       beside modes and isin, on the same buffers: thrust::find, thrust::count,
//               thrust::copy_if over a counting iterator, thrust::sort + binary_search (isin),
//               all from the CUDA toolkit's CCCL (3.0.1); cub::DeviceFind::FindIf and
//               cub::DeviceSelect::If over a counting iterator from the newer CCCL (3.6,
//               scripts/fetch-cccl.sh).
// The read roofline (find_peers.cu: 16-byte loads, every compiled configuration, the
// fastest counts) always runs first, on the --n buffer: `pct_roofline` is measured against it.
//
// Inputs (int32; splitmix64 is counter-based: word(s, i) = mix64(s + (i + 1) * 0x9E3779B97F4A7C15)
// is output i of gsearch::gen::splitmix64{s}, so numpy can rebuild every array; S = --seed):
//   filler(i)  = int32(word(S, i) >> 33), in [0, 2^31); the value searched is V = -1, which the
//                filler never holds
//   unique     = filler, with V written at the one match position (none: no match)
//   fraction f = V where word(S + 1, i) < floor(f * 2^64) (every i for f = 1), else filler(i)
//   needles    = m test elements, j even: filler(word(S + 2, j) mod N) (an element: a hit),
//                j odd: int32(word(S + 3, j) >> 33) (random: nearly always a miss)
//   the fixed random position of `strategies`: word(S + 4, 0) mod n
//
// Timing: CUDA events on the default stream around one call (gsearch::elapsed_ms), --warmup
// untimed runs, the median of --repeat (>= 10) runs (bench/common/timing.hpp). Results and outputs
// are preallocated; find_all and the peers that return a host value (thrust::find, count,
// copy_if; cub::DeviceSelect::If followed by copying its count to the host) include their
// synchronization (`includes_sync`). Before each run, outside the events, a 2 x L2 scratch buffer
// is read (the roofline kernel; --no-flush-l2: not), so that no run finds in L2 what the last
// one read (a match at 0 or N/100 reads a prefix that would stay there) and no dirty line is
// left to be written back during the next run. The start event then fires when that read ends,
// by when the call is usually enqueued: the interval holds the GPU's work rather than the host's
// dispatch (a call that synchronizes inside, find_all, still holds its own host part). At sizes
// whose data would sit in L2 twice over, the runs also rotate among clamp(ceil(2 L2 / bytes),
// 1, 8) copies (`copies`).
//
// Checks: every configuration runs once into a poisoned output before it is timed, and the last
// timed run's result is checked again: indices and counts exactly (find_random: the r-th match,
// r = core::random_below(seed, count), the library's documented draw; find_all: strictly
// ascending, every index a match, as many as there are; isin: every element of the mask against
// a host binary search). Any difference or error: exit status 3 (the JSON is still written).
// Exit status: 0 ok, 1 bad usage, 2 no CUDA device (nothing measured), 3 a check failed.
//
// JSON ("schema": "gsearch-bench-find/1"; bench/README.md has the same table):
//   schema, synthetic (false), command, device {name, compute_capability, sms, l2_bytes,
//   global_bytes, driver_version, runtime_version}, versions {gsearch, thrust (toolkit CCCL),
//   cub (newer CCCL, or null)}, config {parts, n, sizes, ks, strategies, fractions, needles,
//   isin_methods, repeat, warmup, seed, random_seed, value, dtype, flush_l2, quick},
//   inputs [{name (unique | fraction | needles), n, formula, checksum (decimal text), ...}],
//   roofline {gbps, ms, bytes, config} (the fastest read-roofline row), results [row...],
//   targets [{name, value, target, unit, higher, met}], failures [...], errors [...], and "fatal" (text)
//   when the run stopped early.
// A row (fields that do not apply are null):
//   part        strategies | modes | isin | roofline
//   impl        gsearch | roofline | thrust | cub
//   op          find_first | find_any | find_random | count | find_all | isin | read
//   strategy    gsearch: auto | strided | coalesced | unrolled | one-per-thread (isin: null);
//               roofline: its configuration ("u4-b8-t256-nc": 4 loads in flight, 8 blocks per SM
//               of 256 threads, ld.global.nc; "-cs": streaming loads); peers: the call ("find",
//               "FindIf", "count", "copy_if", "DeviceSelect::If", "sort+binary_search")
//   per_thread  k of strided / coalesced / unrolled (1 for one-per-thread)
//   n, dtype    elements searched, "int32"
//   input       unique | fraction | needles (isin elements are the unique input, no match)
//   position    none | 0 | N/100 | N/2 | N-1 | random (unique input); null otherwise
//   match_index the index of the one match (unique input), else null
//   match_fraction, matches   nominal fraction and the exact number of matches
//   needles, method           isin: test elements and isin_method (auto | sorted | hash)
//   seed        find_random's seed
//   result, expected          the last timed run's result (index, count, or for find_all /
//                             isin the number of matches / members) and the reference
//   ms, ms_min, ms_max, runs  median, fastest, slowest of the timed runs
//   bytes       bytes a pass must move: 4 n read (first / any with a match at p: 4 (p + 1), the
//               data up to the match), + 8 per index written (find_all), + n bytes of mask and
//               4 m of needles (isin)
//   gbps        bytes / ms / 1e6; pct_roofline = 100 gbps / the read roofline's gbps
//   verified    true | false (roofline: null)
//   peer_version  "3.0.1" (thrust), "3.6.0" (cub); null for gsearch and the roofline
//   includes_sync the timed interval holds a host synchronization
//   copies, flush_l2          input copies rotated among; L2 flushed (read over) before each run

#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_host.hpp"
#include "cccl.hpp"
#include "find_peers.hpp"
#include "cuda/check.cuh"
#include "gsearch/gsearch.hpp"
#include "report.hpp"
#include "timing.hpp"

namespace {

using namespace gsearch;
using bench::json;
namespace peers = gsearch::bench::find_peers;
using namespace gsearch::bench::host;
using T = int32_t;

constexpr T V = -1;  // the value searched: the filler is never negative
T filler(uint64_t seed, int64_t i) { return T(word(seed, uint64_t(i)) >> 33); }

// ---- host helpers (bench_host.hpp has the rest) -------------------------------------------------

/// Writes value(i) for i in [0, n) to device memory d, generated on the host in chunks;
/// returns the checksum of the n elements.
template <class F>
uint64_t upload(T* d, int64_t n, F&& value) {
  const int64_t chunk = int64_t(1) << 24;  // a multiple of 2 int32: whole uint64 words
  std::vector<T> buf(size_t(std::min(n, chunk)));
  uint64_t sum = 0;
  for (int64_t off = 0; off < n; off += chunk) {
    const int64_t len = std::min(chunk, n - off);
    parallel_for(len, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) buf[size_t(i)] = value(off + i);
    });
    sum += checksum(buf.data(), size_t(len) * sizeof(T));
    copy_to_device(d + off, buf.data(), size_t(len) * sizeof(T));
  }
  return sum;
}

void set_element(T* d, int64_t i, T v) { copy_to_device(d + i, &v, sizeof v); }

// ---- arguments ------------------------------------------------------------------------------

struct args : bench::common_args {
  args() : common_args(15, 3) {}
  bool flush_l2 = true;
  std::vector<std::string> parts{"strategies", "modes", "isin", "peers"};
  int64_t n = 0;               // 0: 2^28 (--quick: 2^22)
  std::vector<int64_t> sizes;  // empty: 500,000 and n
  std::vector<int64_t> ks;     // empty: 1..64 (--quick: a few)
  std::vector<std::string> strategies{"strided", "coalesced", "unrolled"};
  std::vector<double> fractions{1e-5, 0.01, 0.5, 1.0};
  std::vector<int64_t> needles;  // empty: 2^10, 2^20 (--quick: 2^10, 2^16)
  std::vector<std::string> isin_methods{"auto", "sorted", "hash"};
  uint64_t random_seed = 12345;

  bool has(const char* part) const { return std::find(parts.begin(), parts.end(), part) != parts.end(); }
};

// ---- the benchmark --------------------------------------------------------------------------

struct runner {
  args a;
  json report;
  cuda_device_info dev;
  double roofline_gbps = 0;
  int problems = 0;
  device_vector<int64_t> d_result{1};
  device_vector<int4> flush_buf;  // 2 x L2, read before each run
  device_vector<uint32_t> sink{1};

  explicit runner(args a_) : a(std::move(a_)), dev(cuda_device_properties()) {
    if (a.flush_l2) {
      flush_buf = device_vector<int4>(std::max<int64_t>(2 * dev.l2_bytes / 16, 1));
      GSEARCH_CUDA_CHECK(cudaMemset(flush_buf.data(), 0x3c, size_t(flush_buf.size()) * 16));
    }
  }

  /// --warmup untimed and --repeat timed runs of enqueue(run) (run counts every call).
  bench::timing time(const std::function<void(int)>& enqueue) {
    int run = 0;
    return bench::time_runs(a.warmup, a.repeat, [&] {
      if (a.flush_l2)  // clean lines only: a memset would leave dirty ones to write back in the run
        peers::roofline_read(nullptr, flush_buf.data(), flush_buf.size() * 16, {4, 8, 256, false}, sink.data());
      const int r = run++;
      return elapsed_ms(cuda, [&] { enqueue(r); });
    });
  }

  /// A row with every field, those that do not apply null.
  static json row(const char* part, const char* impl, const char* op, int64_t n) {
    json r;
    for (const char* k : {"part", "impl", "op", "strategy", "per_thread", "n", "dtype", "input", "position",
                          "match_index", "match_fraction", "matches", "needles", "method", "seed", "result",
                          "expected", "ms", "ms_min", "ms_max", "runs", "bytes", "gbps", "pct_roofline",
                          "verified", "peer_version", "includes_sync", "copies", "flush_l2"})
      r[k] = nullptr;
    r["part"] = part;
    r["impl"] = impl;
    r["op"] = op;
    r["n"] = n;
    r["dtype"] = "int32";
    r["includes_sync"] = false;
    r["copies"] = 1;
    return r;
  }

  /// Fills the timing fields, prints the row, records it (and a failure when !ok).
  void add(json r, const bench::timing& t, double bytes, std::optional<bool> ok) {
    bench::set_timing(r, t, bytes, roofline_gbps, ok, a.flush_l2);
    print(r);
    if (ok && !*ok) {
      ++problems;
      report["failures"].push_back({{"impl", r["impl"]}, {"op", r["op"]}, {"strategy", r["strategy"]},
                                    {"per_thread", r["per_thread"]}, {"n", r["n"]}, {"position", r["position"]},
                                    {"match_fraction", r["match_fraction"]}, {"needles", r["needles"]},
                                    {"method", r["method"]}, {"result", r["result"]}, {"expected", r["expected"]}});
    }
    report["results"].push_back(std::move(r));
  }

  /// Records an exception thrown by one configuration (it counts as a failure).
  void error(const json& r, const std::exception& e) {
    ++problems;
    std::printf("%-10s %-7s %-11s %-15s ERROR: %s\n", r["part"].get<std::string>().c_str(),
                r["impl"].get<std::string>().c_str(), r["op"].get<std::string>().c_str(),
                r["strategy"].is_null() ? "" : r["strategy"].get<std::string>().c_str(), e.what());
    std::fflush(stdout);
    json x = r;
    x["error"] = e.what();
    report["errors"].push_back(x);
    (void)cudaGetLastError();  // clear a non-sticky error so that the next configuration runs
  }

  static std::string text(const json& v) {
    if (v.is_null()) return "";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) {
      char b[32];
      std::snprintf(b, sizeof b, "%g", v.get<double>());
      return b;
    }
    return v.dump();
  }

  void print(const json& r) {
    std::string where = text(r["position"]);
    if (where.empty() && !r["match_fraction"].is_null()) where = "f=" + text(r["match_fraction"]);
    if (!r["needles"].is_null()) where = "m=" + text(r["needles"]);
    std::string label = text(r["strategy"]);
    if (!r["method"].is_null()) label = label.empty() ? text(r["method"]) : label + ":" + text(r["method"]);
    std::printf("%-10s %-7s %-11s %-15s %3s %10lld %-9s %10.4f ms %8.1f GB/s %6s %s\n",
                r["part"].get<std::string>().c_str(), r["impl"].get<std::string>().c_str(),
                r["op"].get<std::string>().c_str(), label.c_str(),
                text(r["per_thread"]).c_str(), (long long)r["n"].get<int64_t>(), where.c_str(),
                r["ms"].get<double>(), r["gbps"].get<double>(),
                r["pct_roofline"].is_null() ? "" : (std::to_string(int(std::lround(r["pct_roofline"].get<double>()))) + "%").c_str(),
                r["verified"].is_null() ? "" : (r["verified"].get<bool>() ? "ok" : "WRONG"));
    std::fflush(stdout);
  }

  int64_t read_result() const {
    int64_t v = 0;
    d_result.copy_to(span<int64_t>(&v, 1));
    return v;
  }
  void poison_result() const { GSEARCH_CUDA_CHECK(cudaMemset(d_result.data(), 0x5a, sizeof(int64_t))); }

  /// One check run (into a poisoned result), the timed runs, and the check of the last run;
  /// `get` returns the result of the latest run (by default *d_result).
  void measure_scalar(json r, int64_t expected, double bytes, const std::function<void(int)>& enqueue,
                      std::function<int64_t()> get = {}) {
    if (!get) get = [this] { return read_result(); };
    try {
      poison_result();
      enqueue(0);
      synchronize(cuda);
      const int64_t first = get();
      const bench::timing t = time(enqueue);
      const int64_t last = get();
      r["result"] = first != expected ? first : last;
      r["expected"] = expected;
      add(r, t, bytes, first == expected && last == expected);
    } catch (const std::exception& e) {
      error(r, e);
    }
  }

  // ---- roofline ---------------------------------------------------------------------------

  void roofline(const T* d, int64_t n) {
    const double bytes = double(n) * sizeof(T);
    double best_ms = 0;
    std::string best;
    for (const peers::read_config c : peers::read_configs()) {
      json r = row("roofline", "roofline", "read", n);
      const std::string name = "u" + std::to_string(c.unroll) + "-b" + std::to_string(c.blocks_per_sm) + "-t" +
                               std::to_string(c.threads) + (c.streaming ? "-cs" : "-nc");
      r["strategy"] = name;
      try {
        const bench::timing t = time([&](int) { peers::roofline_read(nullptr, d, int64_t(bytes), c, sink.data()); });
        add(r, t, bytes, std::nullopt);
        if (best.empty() || t.median_ms < best_ms) best_ms = t.median_ms, best = name;
      } catch (const std::exception& e) {
        error(r, e);
      }
    }
    if (best.empty()) throw std::runtime_error("the roofline kernel did not run");
    roofline_gbps = bytes / (best_ms * 1e6);
    report["roofline"] = {{"gbps", roofline_gbps}, {"ms", best_ms}, {"bytes", bytes}, {"config", best}};
    for (json& r : report["results"])
      if (r["part"] == "roofline") r["pct_roofline"] = 100.0 * r["gbps"].get<double>() / roofline_gbps;
    std::printf("read roofline: %.1f GB/s (%.4f ms for %.0f bytes, %s)\n", roofline_gbps, best_ms, bytes, best.c_str());
  }

  // ---- part 1: seeds/001's strategies -----------------------------------------------------

  void strategies(T* d_large, int64_t n_large) {
    for (const int64_t n : a.sizes) {
      const int64_t bytes = n * int64_t(sizeof(T));
      const int copies = n == n_large ? 1 : int(std::clamp<int64_t>((2 * dev.l2_bytes + bytes - 1) / bytes, 1, 8));
      std::vector<device_vector<T>> own;
      std::vector<T*> data;
      uint64_t sum = 0;  // of the no-match data
      if (n == n_large) {
        data.push_back(d_large);
      } else {
        for (int c = 0; c < copies; ++c) {
          own.emplace_back(n);
          sum = upload(own.back().data(), n, [&](int64_t i) { return filler(a.seed, i); });
          data.push_back(own.back().data());
        }
      }
      const int64_t p = int64_t(word(a.seed + 4, 0) % uint64_t(n));
      report["inputs"].push_back({{"name", "unique"}, {"part", "strategies"}, {"n", n},
                                  {"formula", "filler, V = -1 at word(S + 4, 0) mod n"},
                                  {"matches", 1}, {"match_index", p}, {"copies", copies},
                                  {"checksum", n == n_large ? json(nullptr) : json(std::to_string(sum))}});
      for (const bool match : {true, false}) {
        if (match)
          for (T* d : data) set_element(d, p, V);
        struct cfg {
          find_strategy s;
          int64_t k;
        };
        std::vector<cfg> cfgs = {{find_strategy::one_per_thread, 1}, {find_strategy::auto_, 0}};
        for (const std::string& name : a.strategies)
          for (const int64_t k : a.ks) cfgs.push_back({*find_strategy_from_string(name), k});
        for (const cfg c : cfgs) {
          json r = row("strategies", "gsearch", "find_first", n);
          r["strategy"] = std::string(to_string(c.s));
          r["per_thread"] = c.s == find_strategy::auto_ ? json(nullptr) : json(c.k);
          r["input"] = "unique";
          r["position"] = match ? "random" : "none";
          r["match_index"] = match ? json(p) : json(nullptr);
          r["matches"] = match ? 1 : 0;
          r["copies"] = copies;
          const find_options opt{c.s, c.s == find_strategy::auto_ ? 0 : c.k, 0};
          measure_scalar(r, match ? p : -1, double(bytes), [&](int run) {
            gsearch::find(cuda, find_mode::first, span<const T>(data[size_t(run % copies)], n), gsearch::equal_to(V),
                          d_result.view(), opt);
          });
        }
        if (match)
          for (T* d : data) set_element(d, p, filler(a.seed, p));
      }
    }
  }

  // ---- part 2: modes, and the peers on the same buffers -----------------------------------

  /// find_all's output (from gsearch or a peer): `count` indices at d_out, checked to be strictly
  /// ascending matches, as many as `expected`.
  bool check_indices(const int64_t* d_out, int64_t count, int64_t expected, int64_t n,
                     const std::function<bool(int64_t)>& is_match, std::vector<int64_t>& host) {
    if (count != expected) return false;
    host.resize(size_t(count));
    if (count > 0) copy_to_host(host.data(), d_out, size_t(count) * sizeof(int64_t));
    std::atomic<bool> ok{true};
    parallel_for(count, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e && ok; ++j) {
        const int64_t i = host[size_t(j)];
        if (i < 0 || i >= n || !is_match(i) || (j > 0 && host[size_t(j - 1)] >= i)) ok = false;
      }
    });
    return ok;
  }

  void modes(T* d, T* d_frac, int64_t n, bool gs, bool pe) {
    // find_first / find_any / FindIf / thrust::find with the one match at p.
    struct pos {
      const char* label;
      int64_t p;  // -1: none
    };
    const pos positions[] = {{"none", -1}, {"0", 0}, {"N/100", n / 100}, {"N/2", n / 2}, {"N-1", n - 1}};
    std::optional<device_vector<unsigned char>> cub_temp;
    size_t cub_temp_bytes = 0;
    if (pe && bench::new_cccl_available()) {
      cub_temp_bytes = std::max(peers::cub_find_if_temp_bytes<T>(d, n, d_result.data()), size_t(1));
      cub_temp.emplace(int64_t(cub_temp_bytes));
    }
    for (const pos& q : positions) {
      if (q.p >= 0) set_element(d, q.p, V);
      const double bytes = double(q.p >= 0 ? q.p + 1 : n) * sizeof(T);
      auto base = [&](const char* impl, const char* op) {
        json r = row("modes", impl, op, n);
        r["input"] = "unique";
        r["position"] = q.label;
        r["match_index"] = q.p >= 0 ? json(q.p) : json(nullptr);
        r["matches"] = q.p >= 0 ? 1 : 0;
        return r;
      };
      if (gs) {
        for (const find_mode m : {find_mode::first, find_mode::any}) {
          json r = base("gsearch", m == find_mode::first ? "find_first" : "find_any");
          r["strategy"] = "auto";
          measure_scalar(r, q.p, bytes, [&](int) {
            gsearch::find(cuda, m, span<const T>(d, n), gsearch::equal_to(V), d_result.view(), find_options{});
          });
        }
      }
      if (pe) {
        json r = base("thrust", "find_first");
        r["strategy"] = "find";
        r["peer_version"] = bench::toolkit_cccl_version();
        r["includes_sync"] = true;
        int64_t got = -2;
        measure_scalar(
            r, q.p, bytes, [&](int) { got = peers::thrust_find<T>(nullptr, d, n, V); }, [&] { return got; });
        if (cub_temp) {
          json c = base("cub", "find_first");
          c["strategy"] = "FindIf";
          c["peer_version"] = bench::new_cccl_version();
          measure_scalar(
              c, q.p, bytes,
              [&](int) { peers::cub_find_if<T>(nullptr, cub_temp->data(), cub_temp_bytes, d, n, V, d_result.data()); },
              [&] {
                const int64_t v = read_result();
                return v == n ? int64_t(-1) : v;  // FindIf writes n for none
              });
        }
      }
      if (q.p >= 0) set_element(d, q.p, filler(a.seed, q.p));
    }

    // count, find_all, find_random at each match fraction (0: the unique input, no match).
    device_vector<int64_t> d_out(n);
    device_vector<int64_t> d_count(1);
    int64_t* h_count = nullptr;
    GSEARCH_CUDA_CHECK(cudaMallocHost(&h_count, sizeof(int64_t)));
    std::optional<device_vector<unsigned char>> select_temp;
    size_t select_temp_bytes = 0;
    if (pe && bench::new_cccl_available()) {
      select_temp_bytes = std::max(peers::cub_select_temp_bytes<T>(d, n, d_out.data(), d_count.data()), size_t(1));
      select_temp.emplace(int64_t(select_temp_bytes));
    }
    std::vector<int64_t> host;
    std::vector<double> fractions = {0.0};
    fractions.insert(fractions.end(), a.fractions.begin(), a.fractions.end());
    for (const double f : fractions) {
      const T* data = f == 0 ? d : d_frac;
      const uint64_t threshold = f >= 1 ? ~uint64_t(0) : uint64_t(std::ldexp(f, 64));
      const auto is_match = [&](int64_t i) {
        return f == 0 ? false : (f >= 1 || word(a.seed + 1, uint64_t(i)) < threshold);
      };
      const int64_t matches = f == 0 ? 0 : parallel_count(n, is_match);
      if (f > 0) {  // (f = 0 is the unique input without its match, which run() records)
        const uint64_t sum = upload(d_frac, n, [&](int64_t i) { return is_match(i) ? V : filler(a.seed, i); });
        report["inputs"].push_back({{"name", "fraction"}, {"n", n},
                                    {"formula", "V where word(S + 1, i) < floor(f 2^64), else filler"},
                                    {"match_fraction", f}, {"matches", matches}, {"match_index", nullptr},
                                    {"checksum", std::to_string(sum)}});
      }
      auto base = [&](const char* impl, const char* op) {
        json r = row("modes", impl, op, n);
        r["input"] = f == 0 ? "unique" : "fraction";
        if (f == 0) r["position"] = "none";
        r["match_fraction"] = f;
        r["matches"] = matches;
        return r;
      };
      const double scan = double(n) * sizeof(T), all_bytes = scan + double(matches) * sizeof(int64_t);
      if (gs) {
        json c = base("gsearch", "count");
        c["strategy"] = "auto";
        measure_scalar(c, matches, scan, [&](int) {
          gsearch::find(cuda, find_mode::count, span<const T>(data, n), gsearch::equal_to(V), d_result.view(), find_options{});
        });
        // find_random: the r-th match, r = random_below(seed, matches).
        int64_t want = -1;
        if (matches > 0) {
          const int64_t r = core::random_below(a.random_seed, matches);
          for (int64_t i = 0, seen = 0; i < n; ++i)
            if (is_match(i) && seen++ == r) {
              want = i;
              break;
            }
        }
        json rr = base("gsearch", "find_random");
        rr["strategy"] = "auto";
        rr["seed"] = a.random_seed;
        find_options ro;
        ro.seed = a.random_seed;
        measure_scalar(rr, want, scan, [&](int) {
          gsearch::find(cuda, find_mode::random, span<const T>(data, n), gsearch::equal_to(V), d_result.view(), ro);
        });
        json fa = base("gsearch", "find_all");
        fa["strategy"] = "auto";
        fa["includes_sync"] = true;
        find_all_row(fa, matches, all_bytes, n, is_match, host, d_out, [&] {
          return gsearch::find_all(cuda, span<const T>(data, n), gsearch::equal_to(V), d_out.view());
        });
      }
      if (pe) {
        json c = base("thrust", "count");
        c["strategy"] = "count";
        c["peer_version"] = bench::toolkit_cccl_version();
        c["includes_sync"] = true;
        int64_t got = -2;
        measure_scalar(
            c, matches, scan, [&](int) { got = peers::thrust_count<T>(nullptr, data, n, V); }, [&] { return got; });
        json t = base("thrust", "find_all");
        t["strategy"] = "copy_if";
        t["peer_version"] = bench::toolkit_cccl_version();
        t["includes_sync"] = true;
        find_all_row(t, matches, all_bytes, n, is_match, host, d_out,
                     [&] { return peers::thrust_find_all<T>(nullptr, data, n, V, d_out.data()); });
        if (select_temp) {
          json s = base("cub", "find_all");
          s["strategy"] = "DeviceSelect::If";
          s["peer_version"] = bench::new_cccl_version();
          s["includes_sync"] = true;
          find_all_row(s, matches, all_bytes, n, is_match, host, d_out, [&] {
            peers::cub_select_indices<T>(nullptr, select_temp->data(), select_temp_bytes, data, n, V, d_out.data(),
                                         d_count.data());
            GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h_count, d_count.data(), sizeof(int64_t), cudaMemcpyDeviceToHost, nullptr));
            GSEARCH_CUDA_CHECK(cudaStreamSynchronize(nullptr));
            return *h_count;
          });
        }
      }
    }
    cudaFreeHost(h_count);
  }

  /// find_all (gsearch or a peer): run() returns the count; every run's count is checked, the
  /// indices after the first (poisoned) run and after the last timed run.
  void find_all_row(json r, int64_t matches, double bytes, int64_t n, const std::function<bool(int64_t)>& is_match,
                    std::vector<int64_t>& host, const device_vector<int64_t>& d_out,
                    const std::function<int64_t()>& run) {
    try {
      GSEARCH_CUDA_CHECK(cudaMemset(d_out.data(), 0xff, size_t(n) * sizeof(int64_t)));
      int64_t got = run();
      bool ok = check_indices(d_out.data(), got, matches, n, is_match, host);
      bool counts_ok = true;
      const bench::timing t = time([&](int) {
        got = run();
        counts_ok = counts_ok && got == matches;
      });
      ok = ok && counts_ok && check_indices(d_out.data(), got, matches, n, is_match, host);
      r["result"] = got;
      r["expected"] = matches;
      add(r, t, bytes, ok);
    } catch (const std::exception& e) {
      error(r, e);
    }
  }

  // ---- part 3: isin -----------------------------------------------------------------------

  void isin(const T* d, int64_t n, bool gs, bool pe) {
    device_vector<bool> d_mask(n);
    std::vector<uint8_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
    for (const int64_t m : a.needles) {
      std::vector<T> tests(static_cast<size_t>(m));
      for (int64_t j = 0; j < m; ++j)
        tests[size_t(j)] = j % 2 == 0 ? filler(a.seed, int64_t(word(a.seed + 2, uint64_t(j)) % uint64_t(n)))
                                      : T(word(a.seed + 3, uint64_t(j)) >> 33);
      std::vector<T> sorted = tests;
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      parallel_for(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          want[size_t(i)] = std::binary_search(sorted.begin(), sorted.end(), filler(a.seed, i)) ? 1 : 0;
      });
      const int64_t members = parallel_count(n, [&](int64_t i) { return want[size_t(i)] != 0; });
      report["inputs"].push_back({{"name", "needles"}, {"n", m}, {"distinct", int64_t(sorted.size())},
                                  {"formula", "j even: filler(word(S + 2, j) mod N); j odd: word(S + 3, j) >> 33"},
                                  {"members", members}, {"elements", n},
                                  {"checksum", std::to_string(checksum(tests.data(), tests.size() * sizeof(T)))}});
      const auto d_tests = to_device(tests);
      device_vector<T> scratch(m);
      const double bytes = double(n) * sizeof(T) + double(m) * sizeof(T) + double(n);
      auto measure = [&](json r, const std::function<void(int)>& enqueue) {
        r["input"] = "needles";
        r["needles"] = m;
        r["matches"] = members;
        r["expected"] = members;
        try {
          GSEARCH_CUDA_CHECK(cudaMemset(d_mask.data(), 0x5a, size_t(n)));
          enqueue(0);
          synchronize(cuda);
          copy_to_host(got.data(), d_mask.data(), size_t(n));
          bool ok = got == want;
          const bench::timing t = time(enqueue);
          copy_to_host(got.data(), d_mask.data(), size_t(n));
          ok = ok && got == want;
          r["result"] = parallel_count(n, [&](int64_t i) { return got[size_t(i)] == 1; });
          add(r, t, bytes, ok);
        } catch (const std::exception& e) {
          error(r, e);
        }
      };
      if (gs) {
        for (const std::string& name : a.isin_methods) {
          json r = row("isin", "gsearch", "isin", n);
          r["method"] = name;
          const isin_method method = name == "sorted" ? isin_method::sorted
                                     : name == "hash" ? isin_method::hash
                                                      : isin_method::auto_;
          measure(r, [&](int) {
            gsearch::isin(cuda, span<const T>(d, n), span<const T>(d_tests.data(), m), d_mask.view(),
                          isin_options{false, method});
          });
        }
      }
      if (pe) {
        json r = row("isin", "thrust", "isin", n);
        r["strategy"] = "sort+binary_search";
        r["peer_version"] = bench::toolkit_cccl_version();
        measure(r, [&](int) { peers::thrust_isin<T>(nullptr, d, n, d_tests.data(), m, scratch.data(), d_mask.data()); });
      }
    }
  }

  // ---- targets (issue 7) ------------------------------------------------------------------

  const json* find_row(const char* impl, const char* op, const char* position, std::optional<double> fraction,
                       const char* part = "modes") const {
    for (const json& r : report["results"]) {
      if (r["part"] != part || r["impl"] != impl || r["op"] != op) continue;
      if (position && r["position"] != position) continue;
      if (fraction && (r["match_fraction"].is_null() || r["match_fraction"].get<double>() != *fraction)) continue;
      if (r["verified"] == false) continue;
      return &r;
    }
    return nullptr;
  }

  void targets() {
    json& out = report["targets"];
    auto add_target = [&](const std::string& name, double value, double target, const char* unit, bool higher) {
      bench::add_target(out, name, value, target, unit, higher);
    };
    if (const json* r = find_row("gsearch", "find_first", "none", std::nullopt))
      add_target("find_first, no match: % of the read roofline", (*r)["pct_roofline"].get<double>(), 95, "%", true);
    for (const char* p : {"none", "0", "N/100", "N/2", "N-1"}) {
      const json* g = find_row("gsearch", "find_first", p, std::nullopt);
      const json* c = find_row("cub", "find_first", p, std::nullopt);
      if (g && c)
        add_target(std::string("find_first at ") + p + ": time / CUB FindIf", (*g)["ms"].get<double>() / (*c)["ms"].get<double>(),
                   1.1, "x", false);
    }
    for (const double f : {0.0, 0.01})
      if (const json* r = find_row("gsearch", "count", nullptr, f))
        add_target("count, " + text(json(f)) + " matching: % of the read roofline", (*r)["pct_roofline"].get<double>(), 95,
                   "%", true);
    const json* scan = find_row("gsearch", "find_first", "none", std::nullopt);
    if (const json* r = find_row("gsearch", "find_all", nullptr, 1e-5); r && scan)
      add_target("find_all, 1e-5 matching: time / full scan (find_first, no match)",
                 (*r)["ms"].get<double>() / (*scan)["ms"].get<double>(), 1.2, "x", false);
    bench::print_targets(out, "targets (issue 7; torch's isin comes from the Python peers):");
  }

  // ---- all of it --------------------------------------------------------------------------

  void run() {
    const int64_t n = a.n;
    const bool gs_modes = a.has("modes"), gs_isin = a.has("isin"), pe = a.has("peers");
    const bool frac_needed = gs_modes || pe;
    // Memory: the unique input, the fraction input, find_all's indices, isin's mask.
    const int64_t need = n * 4 + (frac_needed ? n * 4 + n * 8 : 0) + (gs_isin || pe ? n : 0);
    if (dev.global_bytes > 0 && need > dev.global_bytes * 9 / 10)
      throw std::runtime_error("--n " + std::to_string(n) + " needs about " + std::to_string(need >> 20) +
                               " MiB of device memory; the device has " + std::to_string(dev.global_bytes >> 20));
    device_vector<T> d(n);
    const uint64_t sum = upload(d.data(), n, [&](int64_t i) { return filler(a.seed, i); });
    report["inputs"].push_back({{"name", "unique"}, {"n", n}, {"formula", "filler (no match)"}, {"matches", 0},
                                {"match_index", nullptr}, {"checksum", std::to_string(sum)}});
    roofline(d.data(), n);
    if (a.has("strategies")) strategies(d.data(), n);
    if (frac_needed) {
      device_vector<T> d_frac(n);
      modes(d.data(), d_frac.data(), n, gs_modes, pe);
    }
    if (gs_isin || pe) isin(d.data(), n, gs_isin, pe);
    targets();
  }
};

}  // namespace

int main(int argc, char** argv) {
  args a;
  CLI::App app{"find_bench: gsearch's unsorted search (find first / any / random, count, find_all, isin) on the GPU "
               "against the read roofline, thrust (CUDA toolkit CCCL) and CUB (newer CCCL), on the same buffers "
               "(issue 7). Writes a table to stdout and, with --json, one JSON file (bench/README.md)."};
  app.footer(
      "Timing: CUDA events, --warmup untimed runs, the median of --repeat runs (>= 10 unless --quick). Every result "
      "is checked against a host reference; exit status 0 ok, 1 bad usage, 2 no CUDA device (nothing measured), 3 a "
      "check failed or a call threw. Without a GPU only --help works.");
  bench::add_common_options(app, a, "A tiny run for a smoke test (--n 2^22, k in {1,2,4,8,12,16,32,64}, needles "
                                    "2^10 and 2^16, 3 runs, 1 warm-up): seconds",
                            "Seed of the inputs (the formulas at the top of bench/find/find_bench.cu)");
  app.add_option("--parts", a.parts, "What to measure: strategies (seeds/001's k sweep), modes (first / any / "
                                     "count / find_all / random), isin, peers (thrust and CUB beside modes and isin)")
      ->delimiter(',')->check(CLI::IsMember({"strategies", "modes", "isin", "peers"}))->capture_default_str();
  app.add_option("--n", a.n, "Elements of the modes / isin / peers inputs and of the roofline (default 2^28; a "
                             "multiple of 4)")->check(CLI::Range(int64_t(1024), int64_t(1) << 40));
  app.add_option("--sizes", a.sizes, "Element counts of the strategies part (default 500000 and --n)")
      ->delimiter(',')->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  app.add_option("--ks", a.ks, "Elements per thread of the study strategies (default 1..64)")->delimiter(',')
      ->check(CLI::Range(1, 4096));
  app.add_option("--strategies", a.strategies, "Study strategies swept over k (one-per-thread and auto always run)")
      ->delimiter(',')->check(CLI::IsMember({"strided", "coalesced", "unrolled"}))->capture_default_str();
  app.add_option("--fractions", a.fractions, "Match fractions of count / find_all / find_random (0 always runs)")
      ->delimiter(',')->check(CLI::Range(1e-9, 1.0))->capture_default_str();
  app.add_option("--needles", a.needles, "isin test-element counts (default 1024,1048576)")->delimiter(',')
      ->check(CLI::Range(int64_t(1), int64_t(1) << 30));
  app.add_option("--isin-methods", a.isin_methods, "isin methods")->delimiter(',')
      ->check(CLI::IsMember({"auto", "sorted", "hash"}))->capture_default_str();
  app.add_option("--random-seed", a.random_seed, "find_random's seed")->capture_default_str();
  app.add_flag("!--no-flush-l2", a.flush_l2, "Do not read a 2 x L2 scratch buffer before each run (outside the "
                                            "events) to evict the last run's data from L2");
  if (auto rc = bench::parse(app, argc, argv, a)) return *rc;

  if (a.quick) {
    if (a.n == 0) a.n = int64_t(1) << 22;
    if (a.ks.empty()) a.ks = {1, 2, 4, 8, 12, 16, 32, 64};
    if (a.needles.empty()) a.needles = {1024, 65536};
    a.repeat = std::min(a.repeat, 3);
    a.warmup = std::min(a.warmup, 1);
  }
  if (a.n == 0) a.n = int64_t(1) << 28;
  if (a.sizes.empty()) a.sizes = {500000, a.n};
  if (a.ks.empty())
    for (int k = 1; k <= 64; ++k) a.ks.push_back(k);
  if (a.needles.empty()) a.needles = {1024, 1048576};
  if (a.n % 4 != 0) {
    std::fprintf(stderr, "find_bench: --n %lld must be a multiple of 4 (the roofline reads 16-byte words)\n", (long long)a.n);
    return 1;
  }
  if (auto rc = bench::check_repeat("find_bench", a)) return *rc;
  if (auto rc = bench::require_gpu("find_bench", "find")) return *rc;

  json report = bench::gpu_report("gsearch-bench-find/1", a, cuda_device_properties(), bench::cccl_versions());
  report["config"] = {{"parts", a.parts}, {"n", a.n}, {"sizes", a.sizes}, {"ks", a.ks}, {"strategies", a.strategies},
                      {"fractions", a.fractions}, {"needles", a.needles}, {"isin_methods", a.isin_methods},
                      {"repeat", a.repeat}, {"warmup", a.warmup}, {"seed", a.seed}, {"random_seed", a.random_seed},
                      {"value", V}, {"dtype", "int32"}, {"flush_l2", a.flush_l2}, {"quick", a.quick}};
  for (const char* k : {"inputs", "results", "targets", "failures", "errors"}) report[k] = json::array();
  bench::print_banner("find_bench", report);
  if (!bench::new_cccl_available() && a.has("peers"))
    std::printf("find_bench: no CUB 3.6 peers in this build (scripts/fetch-cccl.sh, then reconfigure)\n");
  std::printf("%-10s %-7s %-11s %-15s %3s %10s %-9s %13s %13s %6s\n", "part", "impl", "op", "strategy", "k", "n",
              "where", "time", "rate", "roof");

  return bench::run_and_report<runner>("find_bench", a, std::move(report));
}
