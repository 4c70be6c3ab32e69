// index_intervals_bench: the H100 benchmark of gsearch::index_intervals (issue 21, seed 004
// §4.1-4.2). A table on stdout and, with --json, one JSON file.
//
//   index_intervals_bench [--json FILE] [--quick] [--parts table1,curve] [--cells 1024,2048,4096,8192,10240]
//                         [--n 2^26] [--queries 1000] [--kinds range,rank] [--width 0.001]
//                         [--repeat 1000] [--warmup 10] [--seed 1]
//
// Parts:
//   table1  the seed's Table 1 re-measured: one improve of N float32 cells in ONE block, the
//           piece in shared memory (cuda_backend::intervals_improve_in_block_timed), --repeat
//           measurements (1,000: the seed's count), each on the same data restored before it.
//           In-kernel time: clock64 cycles (converted at cudaDevAttrClockRate) and %globaltimer
//           nanoseconds, as thread 0 of the block saw them, from the piece being in shared memory
//           to its partition being there: the splitter (median of three), the compares, the fold
//           of the counts (a block scan) and the scatter. The seed's T counted "the comparisons
//           and interval adjustments in the cells, but not the parallel folds", so ours includes
//           more. End-to-end: the host's wall time of one cuda_backend::intervals_improve (the
//           launch, the kernel with its global loads and stores, the copy back of the counts,
//           the wait), what a caller of index_intervals::improve pays. Mean, standard deviation,
//           median of each. Check: the counts add up and the piece is partitioned around the
//           splitter (host copy), on every 100th measurement.
//   curve   the cracking curve: --queries random queries on --n unsorted float32 values, the
//           cumulative time after each query for three ways of answering:
//             index_intervals   gsearch::index_intervals (built at the first query: a device
//                               copy), range(lo, hi) / select(k): refines only what each query
//                               needs and keeps it;
//             sort_then_search  the first query sorts a copy (thrust::sort, a radix sort), every
//                               query then searches it: gsearch::lower_bound of (lo, hi) / one read
//                               of sorted[k];
//             scan              every query reads all the data: gsearch::count(in_range(lo, hi)) /
//                               gsearch::select of rank k.
//           Queries (kinds): range: lo = u (1 - w), hi = lo + w, u = the query's uniform word,
//           w = --width; the answer is the count e - b. rank: k = word mod n; the answer is the
//           value. Check: the three ways agree on every query. Times: the host's wall clock
//           (every way returns its answer to the host, as a user's query would).
//
// Inputs: float32 x_i = (word(S, i) >> 40) 2^-24 in [0, 1), word(s, i) = mix64(s + (i + 1) *
// 0x9E3779B97F4A7C15) (bench_host.hpp), S = --seed; the queries' words use S + 1 (range) and S + 2
// (rank). Exit status 0 ok, 1 bad usage, 2 no CUDA device, 3 a check failed (see "failures").

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_host.hpp"
#include "cccl.hpp"
#include "cuda/check.cuh"
#include "index_intervals/backend.hpp"
#include "gsearch/gsearch.hpp"
#include "report.hpp"
#include "timing.hpp"

namespace {

using namespace gsearch;
using bench::json;
using bench::wall_ms;

struct bench_args : bench::common_args {
  bench_args() : common_args(1000, 10) {}
  std::vector<std::string> parts{"table1", "curve"};
  std::vector<int64_t> cells{1024, 2048, 4096, 8192, 10240};
  int64_t n = int64_t(1) << 26;
  int64_t queries = 1000;
  std::vector<std::string> kinds{"range", "rank"};
  double width = 1e-3;
};

// The seed's Table 1 (GTX 590, CUDA 4): N -> (mean us, stdev).
struct seed_row {
  int64_t cells;
  double us, stdev;
};
constexpr seed_row seed_table1[] = {
    {1024, 27.5, 0.932189}, {2048, 42.2, 1.187385}, {4096, 66.3, 3.829351}, {8192, 107.2, 1.995101}, {10240, 125.9, 4.736220}};

float uniform_value(uint64_t seed, uint64_t i) { return float(bench::host::word(seed, i) >> 40) * 0x1p-24f; }

std::vector<float> uniform_values(uint64_t seed, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = uniform_value(seed, uint64_t(i));
  return v;
}

struct moments {
  double mean = 0, stdev = 0, median = 0;
};
moments moments_of(const std::vector<double>& v) {
  moments m;
  if (v.empty()) return m;
  for (double x : v) m.mean += x;
  m.mean /= double(v.size());
  for (double x : v) m.stdev += (x - m.mean) * (x - m.mean);
  m.stdev = v.size() > 1 ? std::sqrt(m.stdev / double(v.size() - 1)) : 0.0;
  m.median = bench::summarize(v).median;
  return m;
}

// "" when piece[0, n) is partitioned around c.splitter with c's counts.
std::string check_partition(const std::vector<float>& piece, const core::split_counts<float>& c) {
  const int64_t n = int64_t(piece.size());
  if (c.equal < 1 || c.less < 0 || c.less + c.equal > n) return "counts out of range";
  for (int64_t i = 0; i < n; ++i) {
    const int want = i < c.less ? 0 : i < c.less + c.equal ? 1 : 2;
    if (core::three_way_class(piece[size_t(i)], c.splitter) != want) return "element " + std::to_string(i) + " misplaced";
  }
  return "";
}

struct runner {
  bench_args a;
  json report;
  int problems = 0;
  int clock_khz = 0;
  cudaStream_t stream = nullptr;

  explicit runner(const bench_args& args) : a(args) {
    int device = 0;
    GSEARCH_CUDA_CHECK(cudaGetDevice(&device));
    GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    GSEARCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  runner(const runner&) = delete;
  runner& operator=(const runner&) = delete;
  ~runner() { cudaStreamDestroy(stream); }

  void record(json r) {
    if (r["verified"] == false) {
      ++problems;
      report["failures"].push_back(r);
    }
    report["results"].push_back(std::move(r));
  }

  void restore(float* work, const float* pristine, int64_t n) {
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(work, pristine, size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice, stream));
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // ---- Table 1 ----------------------------------------------------------------------------------

  void table1_row(int64_t cells) {
    const int64_t most = cuda_backend::intervals_block_cells<float>();
    if (cells > most) throw invalid_argument("--cells " + std::to_string(cells) + ": one block takes " + std::to_string(most));
    const std::vector<float> host = uniform_values(a.seed, cells);
    const device_vector<float> pristine{span<const float>(host)}, work(cells);
    std::vector<double> cycles, ns, e2e_us;
    std::string fault;
    for (int i = 0; i < a.warmup + a.repeat; ++i) {
      const bool timed = i >= a.warmup;
      restore(work.data(), pristine.data(), cells);
      cuda_backend::improve_clock clock;
      const auto c = cuda_backend::intervals_improve_in_block_timed<float>(stream, work.data(), cells, nullptr, &clock);
      if (fault.empty() && (i - a.warmup) % 100 == 0) {
        std::vector<float> piece(static_cast<size_t>(cells));
        work.copy_to(span<float>(piece));
        fault = check_partition(piece, c);
      }
      restore(work.data(), pristine.data(), cells);
      const double ms = wall_ms([&] { cuda_backend::intervals_improve<float>(stream, work.data(), cells, nullptr); });
      if (!timed) continue;
      cycles.push_back(double(clock.cycles));
      ns.push_back(double(clock.ns));
      e2e_us.push_back(ms * 1e3);
    }
    std::vector<double> kernel_us(cycles.size());
    for (size_t i = 0; i < cycles.size(); ++i) kernel_us[i] = cycles[i] * 1e3 / double(clock_khz);
    const moments k = moments_of(kernel_us), g = moments_of(ns), e = moments_of(e2e_us), cy = moments_of(cycles);
    json seed = nullptr;
    for (const seed_row& s : seed_table1)
      if (s.cells == cells) seed = {{"us", s.us}, {"stdev", s.stdev}};
    json r = {{"part", "table1"}, {"dtype", "float32"}, {"cells", cells}, {"measurements", int64_t(kernel_us.size())},
              {"kernel_cycles_mean", cy.mean}, {"kernel_us_mean", k.mean}, {"kernel_us_stdev", k.stdev},
              {"kernel_us_median", k.median}, {"kernel_timer_ns_mean", g.mean}, {"kernel_timer_ns_stdev", g.stdev},
              {"e2e_us_mean", e.mean}, {"e2e_us_stdev", e.stdev}, {"e2e_us_median", e.median},
              {"sm_clock_khz", clock_khz}, {"seed", seed}, {"verified", fault.empty()}};
    if (!fault.empty()) r["fault"] = fault;
    std::printf("%8lld %12.3f %10.3f %12.1f %12.2f %10.2f %10s %s\n", (long long)cells, k.mean, k.stdev, g.mean, e.mean,
                e.stdev, seed.is_null() ? "-" : std::to_string(seed["us"].get<double>()).substr(0, 6).c_str(),
                fault.empty() ? "ok" : fault.c_str());
    if (cells == 10240)
      bench::add_target(report["targets"], "improve of 10,240 cells in one block, in-kernel (us)", k.mean, 1.0, "us", false);
    record(std::move(r));
  }

  // ---- the cracking curve ---------------------------------------------------------------------

  // One way of answering the queries: the cumulative wall time after each and the answers.
  struct way_run {
    std::vector<double> cumulative_ms;
    std::vector<double> answers;  // counts (range) or values (rank)
  };

  template <class Answer>
  way_run run_way(Answer&& answer) {
    way_run w;
    double total = 0;
    for (int64_t q = 0; q < a.queries; ++q) {
      double value = 0;
      total += wall_ms([&] { value = answer(q); });
      w.cumulative_ms.push_back(total);
      w.answers.push_back(value);
    }
    return w;
  }

  void curve(const std::string& kind, const device_vector<float>& data) {
    const int64_t n = data.size();
    const bool range = kind == "range";
    const auto bounds = [&](int64_t q) {
      const float lo = float(double(uniform_value(a.seed + 1, uint64_t(q))) * (1.0 - a.width));
      return std::pair<float, float>{lo, float(double(lo) + a.width)};
    };
    const auto rank = [&](int64_t q) { return int64_t(bench::host::word(a.seed + 2, uint64_t(q)) % uint64_t(n)); };
    const span<const float> whole(data.data(), n);

    // index_intervals: built at the first query.
    std::optional<index_intervals<float>> ii;
    way_run intervals = run_way([&](int64_t q) -> double {
      if (!ii) ii.emplace(gsearch::cuda.on(stream), whole);
      if (range) {
        const auto [lo, hi] = bounds(q);
        return double(ii->range(lo, hi).size());
      }
      return double(ii->select(rank(q)));
    });
    const int64_t improves = ii->improves(), pieces = ii->intervals(), unplaced = ii->unplaced();
    ii.reset();

    // sort once (at the first query), then search.
    std::optional<device_vector<float>> sorted;
    const device_vector<float> query_pair(2);
    const device_vector<int64_t> found(2);
    way_run sort_search = run_way([&](int64_t q) -> double {
      if (!sorted) {
        sorted.emplace(n);
        GSEARCH_CUDA_CHECK(cudaMemcpyAsync(sorted->data(), data.data(), size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice, stream));
        thrust::sort(thrust::cuda::par.on(stream), sorted->data(), sorted->data() + n);
      }
      if (range) {
        const auto [lo, hi] = bounds(q);
        const float h[2] = {lo, hi};
        GSEARCH_CUDA_CHECK(cudaMemcpyAsync(query_pair.data(), h, sizeof h, cudaMemcpyHostToDevice, stream));
        gsearch::lower_bound(gsearch::cuda.on(stream), span<const float>(*sorted), span<const float>(query_pair),
                             span<int64_t>(found));
        int64_t out[2];
        GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out, found.data(), sizeof out, cudaMemcpyDeviceToHost, stream));
        GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
        return double(out[1] - out[0]);
      }
      float v = 0;
      GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&v, sorted->data() + rank(q), sizeof v, cudaMemcpyDeviceToHost, stream));
      GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      return double(v);
    });
    sorted.reset();

    // a full scan per query.
    const device_vector<float> value(1);
    way_run scan = run_way([&](int64_t q) -> double {
      if (range) {
        const auto [lo, hi] = bounds(q);
        return double(gsearch::count(gsearch::cuda.on(stream), whole, in_range(lo, hi)));
      }
      const int64_t k = rank(q);
      gsearch::select(gsearch::cuda.on(stream), whole, span<const int64_t>(&k, 1), span<float>(value));
      float v = 0;
      GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&v, value.data(), sizeof v, cudaMemcpyDeviceToHost, stream));
      GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      return double(v);
    });

    int64_t disagreements = 0;
    for (int64_t q = 0; q < a.queries; ++q)
      disagreements += intervals.answers[size_t(q)] != scan.answers[size_t(q)] ||
                       sort_search.answers[size_t(q)] != scan.answers[size_t(q)];
    const auto row = [&](const char* way, const way_run& w) {
      json r = {{"part", "curve"}, {"kind", kind}, {"way", way}, {"dtype", "float32"}, {"n", n}, {"queries", a.queries},
                {"width", range ? json(a.width) : json(nullptr)}, {"total_ms", w.cumulative_ms.back()},
                {"first_ms", w.cumulative_ms.front()}, {"cumulative_ms", w.cumulative_ms},
                {"disagreements", disagreements}, {"verified", disagreements == 0}};
      if (std::string(way) == "index_intervals")
        r["final"] = {{"improves", improves}, {"intervals", pieces}, {"unplaced", unplaced}};
      std::printf("%-6s %-17s first %9.3f ms  total %10.3f ms  mean %8.4f ms/query%s\n", kind.c_str(), way,
                  w.cumulative_ms.front(), w.cumulative_ms.back(), w.cumulative_ms.back() / double(a.queries),
                  disagreements ? "  DISAGREE" : "");
      record(std::move(r));
    };
    row("index_intervals", intervals);
    row("sort_then_search", sort_search);
    row("scan", scan);
    std::printf("       index_intervals after %lld queries: %lld improves, %lld intervals, %lld unplaced of %lld\n",
                (long long)a.queries, (long long)improves, (long long)pieces, (long long)unplaced, (long long)n);
  }

  void run() {
    report["results"] = json::array();
    report["failures"] = json::array();
    report["targets"] = json::array();
    report["config"]["sm_clock_khz"] = clock_khz;
    report["config"]["block_cells"] = cuda_backend::intervals_block_cells<float>();
    const auto has = [&](const char* p) { return std::find(a.parts.begin(), a.parts.end(), p) != a.parts.end(); };
    if (has("table1")) {
      std::printf("\nTable 1: one improve in one block (float32), %d measurements; us = microseconds\n", a.repeat);
      std::printf("%8s %12s %10s %12s %12s %10s %10s\n", "cells", "kernel us", "stdev", "timer ns", "e2e us", "stdev",
                  "seed us");
      for (int64_t cells : a.cells) table1_row(cells);
    }
    if (has("curve")) {
      std::printf("\nCracking curve: %lld queries on %lld float32 values\n", (long long)a.queries, (long long)a.n);
      const std::vector<float> host = uniform_values(a.seed, a.n);
      const device_vector<float> data{span<const float>(host)};
      for (const std::string& kind : a.kinds) curve(kind, data);
    }
    bench::print_targets(report["targets"], "Targets");
  }
};

}  // namespace

int main(int argc, char** argv) {
  bench_args a;
  CLI::App app{"index_intervals_bench: the seed's Table 1 (one improve in one block) and the cracking curve of "
               "gsearch::index_intervals against sort-then-search and a scan per query (issue 21)"};
  bench::add_common_options(app, a, "Table 1 at 1,024 and 10,240 cells, 100 measurements; the curve on 2^22 values, 100 queries",
                            "Seed of the data and the queries (the formulas at the top of the source)");
  app.add_option("--parts", a.parts, "table1, curve")->delimiter(',')->check(CLI::IsMember({"table1", "curve"}));
  app.add_option("--cells", a.cells, "Table 1's piece sizes")->delimiter(',')->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app.add_option("--n", a.n, "Values of the cracking curve")->check(CLI::Range(int64_t(1024), int64_t(1) << 31));
  app.add_option("--queries", a.queries, "Queries of the cracking curve")->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app.add_option("--kinds", a.kinds, "range, rank")->delimiter(',')->check(CLI::IsMember({"range", "rank"}));
  app.add_option("--width", a.width, "Range queries' width (the values are in [0, 1))")->check(CLI::Range(1e-9, 1.0));
  if (auto rc = bench::parse(app, argc, argv, a)) return *rc;
  if (a.quick) {
    a.cells = {1024, 10240};
    a.repeat = 100;
    a.warmup = 3;
    a.n = int64_t(1) << 22;
    a.queries = 100;
  }
  if (auto rc = bench::require_gpu("index_intervals_bench", "selection index_intervals")) return *rc;
  json report = bench::gpu_report("gsearch-bench-index-intervals/1", a, cuda_device_properties(), bench::cccl_versions(nullptr));
  report["config"] = {{"parts", a.parts}, {"cells", a.cells}, {"n", a.n}, {"queries", a.queries}, {"kinds", a.kinds},
                      {"width", a.width}, {"repeat", a.repeat}, {"warmup", a.warmup}, {"seed", a.seed}};
  bench::print_banner("index_intervals_bench", report);
  return bench::run_and_report<runner>("index_intervals_bench", a, std::move(report));
}
