// merge_cpu_bench: gsearch's merge family on the CPU backend (all cores, and one thread) against
// the C++ standard library on one thread (issue 8's "std:: single CPU thread" peer; seeds/002
// reports the GPU 75x faster than one CPU thread on merge and 35-47x on set operations: compare
// the rates here with merge_bench's on the GPU). Host memory, int32 keys, the same generators
// as bench/merge/merge_bench.cu (smaller default sizes: this runs on a small shared machine).
//
//   merge_cpu_bench [--json FILE] [--quick] [--ops merge,set_ops,sorted_search,sort,join]
//                   [--n 2^24] [--search-keys 2^20] [--search-queries 2^24] [--sort-n 2^24]
//                   [--join-n 2^20] [--join-range 2^18] [--threads 0] [--repeat 5] [--warmup 1]
//                   [--seed 1]
//
// What runs (gsearch: gsearch::cpu with --threads workers (0: all cores); gsearch-1t: the same
// call on one thread; std: one thread):
//   merge          gsearch::merge                        std::merge
//   set_ops        gsearch::set_operation (4 ops)       std::set_intersection / _union /
//                                                        _difference / _symmetric_difference
//   sorted_search  gsearch::upper_bound, queries_sorted  std::upper_bound per needle; and
//                  (and gsearch plain, for reference)    a std::merge-style walk ("walk")
//   sort           gsearch::merge_sort                   std::stable_sort (and std::sort)
//   join           gsearch::join inner                   a sort-merge join: std::equal_range
//                                                        of each left run in right, then the
//                                                        cross product of the runs
// Inputs (word(s, i) = output i of splitmix64{s}, S = --seed): merge / set_ops
// A = sort(int32(word(S, i) >> 37)), B = sort(int32(word(S + 1, j) >> 37)); sorted_search keys
// sort(int32(word(S + 4, i) >> 33)), needles sort(int32(word(S + 5, j) >> 33)); sort
// int32(word(S + 6, i) >> 32); join sort(int32(word(S + 8, i) mod R)), sort(int32(word(S + 9, j)
// mod R)), R = --join-range. Timing: a steady clock around each call, --warmup untimed runs, the
// median of --repeat; outputs preallocated. Every gsearch result is compared with std's (the
// join: row count and every row's keys equal; gsearch's rows in key order). Exit status 0 ok,
// 1 bad usage, 3 a check failed.
//
// JSON ("schema": "gsearch-bench-merge-cpu/1"): schema, command, host {cpu, threads, compiler,
// loadavg_before, loadavg_after},
// versions {gsearch}, config, results [{op, impl, call, threads, na, nb, out, ms, ms_min, ms_max,
// runs, rate, rate_unit, speedup_vs_std, verified}], failures. speedup_vs_std = std's ms / this
// row's ms (the std row of the same op: upper_bound per needle for sorted_search, stable_sort
// for sort).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench_host.hpp"
#include "gsearch/gsearch.hpp"
#include "report.hpp"
#include "timing.hpp"

namespace {

using namespace gsearch;
using bench::json;
using namespace gsearch::bench::host;
using T = int32_t;

struct args : bench::common_args {
  args() : common_args(5, 1) {}
  std::vector<std::string> ops{"merge", "set_ops", "sorted_search", "sort", "join"};
  int64_t n = 0, search_keys = 0, search_queries = 0, sort_n = 0, join_n = 0, join_range = 0;
  int threads = 0;
  bool has(const char* op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }
};

struct runner {
  args a;
  json report;
  int problems = 0;
  cpu_t all, one;

  explicit runner(args a_) : a(std::move(a_)), all(cpu.with_threads(a.threads)), one(cpu.with_threads(1)) {}

  void add(const std::string& op, const char* impl, const std::string& call, int threads, int64_t na, int64_t nb,
           int64_t out, const bench::timing& t, double count, const char* unit, std::optional<bool> ok) {
    json r = {{"op", op}, {"impl", impl}, {"call", call}, {"threads", threads}, {"na", na},
              {"nb", nb < 0 ? json(nullptr) : json(nb)}, {"out", out}, {"ms", t.median_ms}, {"ms_min", t.min_ms},
              {"ms_max", t.max_ms}, {"runs", t.runs_ms.size()}, {"rate", count / (t.median_ms * 1e6)},
              {"rate_unit", unit}, {"speedup_vs_std", nullptr}, {"verified", ok ? json(*ok) : json(nullptr)}};
    std::printf("%-22s %-10s %-28s %3d %10lld %10lld %10.3f ms %8.3f %s%s\n", op.c_str(), impl, call.c_str(), threads,
                (long long)na, (long long)nb, t.median_ms, count / (t.median_ms * 1e6), unit,
                ok && !*ok ? "  CHECK FAILED" : "");
    std::fflush(stdout);
    if (ok && !*ok) {
      ++problems;
      report["failures"].push_back({{"op", op}, {"impl", impl}, {"call", call}});
    }
    report["results"].push_back(std::move(r));
  }

  bench::timing time(const std::function<void()>& f) {
    return bench::time_runs(a.warmup, a.repeat, [&] { return bench::wall_ms(f); });
  }

  int threads_of(const cpu_t& e) const {
    return e.threads > 0 ? e.threads : host_threads();
  }

  void merge_and_sets() {
    const int64_t n = a.n;
    auto A = generate<T>(n, [&](int64_t i) { return T(word(a.seed, uint64_t(i)) >> 37); });
    auto B = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 1, uint64_t(i)) >> 37); });
    std::sort(A.begin(), A.end());
    std::sort(B.begin(), B.end());
    std::vector<T> ref(static_cast<size_t>(2 * n)), out(static_cast<size_t>(2 * n));
    const span<const T> sa(A.data(), n), sb(B.data(), n);
    if (a.has("merge")) {
      const auto ts = time([&] { std::merge(A.begin(), A.end(), B.begin(), B.end(), ref.begin()); });
      add("merge", "std", "std::merge", 1, n, n, 2 * n, ts, double(2 * n), "G elements/s", std::nullopt);
      for (const cpu_t* e : {&all, &one}) {
        std::fill(out.begin(), out.end(), T(-1));
        const auto t = time([&] { gsearch::merge(*e, sa, sb, span<T>(out.data(), 2 * n), merge_options{false}); });
        add("merge", e == &all ? "gsearch" : "gsearch-1t", "merge", threads_of(*e), n, n, 2 * n, t, double(2 * n),
            "G elements/s", out == ref);
      }
    }
    if (!a.has("set_ops")) return;
    for (int op = 0; op < 4; ++op) {
      std::vector<T> want;
      want.reserve(size_t(2 * n));
      const auto ts = time([&] {
        want.clear();
        auto it = std::back_inserter(want);
        switch (op) {
          case 0: std::set_intersection(A.begin(), A.end(), B.begin(), B.end(), it); break;
          case 1: std::set_union(A.begin(), A.end(), B.begin(), B.end(), it); break;
          case 2: std::set_difference(A.begin(), A.end(), B.begin(), B.end(), it); break;
          case 3: std::set_symmetric_difference(A.begin(), A.end(), B.begin(), B.end(), it); break;
        }
      });
      const std::string name = std::string("set ") + set_op_names[op];
      const char* calls[] = {"std::set_intersection", "std::set_union", "std::set_difference",
                             "std::set_symmetric_difference"};
      add(name, "std", calls[op], 1, n, n, int64_t(want.size()), ts, double(2 * n), "G elements/s", std::nullopt);
      for (const cpu_t* e : {&all, &one}) {
        int64_t got = -1;
        std::fill(out.begin(), out.end(), T(-1));
        const auto t = time([&] {
          got = gsearch::set_operation(*e, set_op(op), sa, sb, span<T>(out.data(), 2 * n), merge_options{false});
        });
        const bool ok = got == int64_t(want.size()) && std::equal(want.begin(), want.end(), out.begin());
        add(name, e == &all ? "gsearch" : "gsearch-1t", "set_operation", threads_of(*e), n, n, got, t, double(2 * n),
            "G elements/s", ok);
      }
    }
  }

  void sorted_search() {
    const int64_t k = a.search_keys, q = a.search_queries;
    auto K = generate<T>(k, [&](int64_t i) { return T(word(a.seed + 4, uint64_t(i)) >> 33); });
    auto Q = generate<T>(q, [&](int64_t j) { return T(word(a.seed + 5, uint64_t(j)) >> 33); });
    std::sort(K.begin(), K.end());
    std::sort(Q.begin(), Q.end());
    std::vector<int32_t> ref(static_cast<size_t>(q)), out(static_cast<size_t>(q));
    const auto ts = time([&] {
      for (int64_t j = 0; j < q; ++j) ref[size_t(j)] = int32_t(std::upper_bound(K.begin(), K.end(), Q[size_t(j)]) - K.begin());
    });
    add("sorted_search", "std", "std::upper_bound per needle", 1, k, q, q, ts, double(q), "G queries/s", std::nullopt);
    const auto tw = time([&] {
      int64_t pos = 0;
      for (int64_t j = 0; j < q; ++j) {
        while (pos < k && K[size_t(pos)] <= Q[size_t(j)]) ++pos;
        out[size_t(j)] = int32_t(pos);
      }
    });
    add("sorted_search", "std", "walk", 1, k, q, q, tw, double(q), "G queries/s", out == ref);
    const span<const T> keys(K.data(), k), queries(Q.data(), q);
    search_options sorted;
    sorted.queries_sorted = true;
    for (const cpu_t* e : {&all, &one}) {
      std::fill(out.begin(), out.end(), -1);
      const auto t = time([&] { gsearch::upper_bound(*e, keys, queries, span<int32_t>(out.data(), q), sorted); });
      add("sorted_search", e == &all ? "gsearch" : "gsearch-1t", "queries_sorted", threads_of(*e), k, q, q, t, double(q),
          "G queries/s", out == ref);
    }
    std::fill(out.begin(), out.end(), -1);
    const auto tp = time([&] { gsearch::upper_bound(all, keys, queries, span<int32_t>(out.data(), q), search_options{}); });
    add("sorted_search", "gsearch", "plain", threads_of(all), k, q, q, tp, double(q), "G queries/s", out == ref);
  }

  void sort() {
    const int64_t n = a.sort_n;
    const auto X = generate<T>(n, [&](int64_t i) { return T(uint32_t(word(a.seed + 6, uint64_t(i)) >> 32)); });
    std::vector<T> ref, out(static_cast<size_t>(n));
    const auto ts = time([&] {
      ref = X;
      std::stable_sort(ref.begin(), ref.end());
    });
    add("sort", "std", "std::stable_sort", 1, n, -1, n, ts, double(n), "G keys/s", std::nullopt);
    std::vector<T> s2;
    const auto tq = time([&] {
      s2 = X;
      std::sort(s2.begin(), s2.end());
    });
    add("sort", "std", "std::sort", 1, n, -1, n, tq, double(n), "G keys/s", s2 == ref);
    for (const cpu_t* e : {&all, &one}) {
      std::fill(out.begin(), out.end(), T(-1));
      const auto t = time([&] { gsearch::merge_sort(*e, span<const T>(X.data(), n), span<T>(out.data(), n)); });
      add("sort", e == &all ? "gsearch" : "gsearch-1t", "merge_sort", threads_of(*e), n, -1, n, t, double(n), "G keys/s",
          out == ref);
    }
  }

  void join() {
    const int64_t n = a.join_n;
    const uint64_t R = uint64_t(a.join_range);
    auto L = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 8, uint64_t(i)) % R); });
    auto Rt = generate<T>(n, [&](int64_t j) { return T(word(a.seed + 9, uint64_t(j)) % R); });
    std::sort(L.begin(), L.end());
    std::sort(Rt.begin(), Rt.end());
    // Rows: the sum over keys of the products of the counts.
    int64_t rows = 0;
    for (int64_t i = 0; i < n;) {
      int64_t e = i;
      while (e < n && L[size_t(e)] == L[size_t(i)]) ++e;
      const auto r = std::equal_range(Rt.begin(), Rt.end(), L[size_t(i)]);
      rows += (e - i) * int64_t(r.second - r.first);
      i = e;
    }
    std::vector<int64_t> sl(static_cast<size_t>(rows)), sr(static_cast<size_t>(rows));
    const auto ts = time([&] {
      int64_t u = 0;
      auto lo = Rt.begin();
      for (int64_t i = 0; i < n;) {
        int64_t e = i;
        while (e < n && L[size_t(e)] == L[size_t(i)]) ++e;
        const auto r = std::equal_range(lo, Rt.end(), L[size_t(i)]);
        lo = r.second;
        for (int64_t x = i; x < e; ++x)
          for (auto y = r.first; y != r.second; ++y) {
            sl[size_t(u)] = x;
            sr[size_t(u++)] = int64_t(y - Rt.begin());
          }
        i = e;
      }
    });
    add("join inner", "std", "equal_range sort-merge join", 1, n, n, rows, ts, double(rows), "G rows/s", std::nullopt);
    std::vector<int64_t> gl(static_cast<size_t>(rows)), gr(static_cast<size_t>(rows));
    for (const cpu_t* e : {&all, &one}) {
      int64_t got = -1;
      const auto t = time([&] {
        got = gsearch::join(*e, join_kind::inner, span<const T>(L.data(), n), span<const T>(Rt.data(), n),
                            span<int64_t>(gl.data(), rows), span<int64_t>(gr.data(), rows), merge_options{false});
      });
      bool ok = got == rows;
      // Every row's keys equal and in key order; with the documented order (key, left, right)
      // the rows are exactly the std join's (which writes them in that order too).
      ok = ok && gl == sl && gr == sr;
      add("join inner", e == &all ? "gsearch" : "gsearch-1t", "join", threads_of(*e), n, n, rows, t, double(rows),
          "G rows/s", ok);
    }
  }

  void speedups() {
    for (json& r : report["results"]) {
      const std::string op = r["op"];
      const char* base_call = op == "sorted_search" ? "std::upper_bound per needle" : op == "sort" ? "std::stable_sort" : nullptr;
      for (const json& s : report["results"])
        if (s["op"] == op && s["impl"] == "std" && (!base_call || s["call"] == base_call)) {
          r["speedup_vs_std"] = s["ms"].get<double>() / r["ms"].get<double>();
          break;
        }
    }
  }

  void run() {
    if (a.has("merge") || a.has("set_ops")) merge_and_sets();
    if (a.has("sorted_search")) sorted_search();
    if (a.has("sort")) sort();
    if (a.has("join")) join();
    speedups();
    report["host"]["loadavg_after"] = loadavg();
  }
};

}  // namespace

int main(int argc, char** argv) {
  args a;
  CLI::App app{"merge_cpu_bench: gsearch's merge family on the CPU (all cores and one thread) against the C++ "
               "standard library on one thread (issue 8)."};
  bench::add_common_options(app, a, "Small sizes (2^16 .. 2^18), 2 runs: a smoke test", "Seed of the inputs");
  app.add_option("--ops", a.ops, "What to measure")
      ->delimiter(',')
      ->check(CLI::IsMember({"merge", "set_ops", "sorted_search", "sort", "join"}))
      ->capture_default_str();
  app.add_option("--n", a.n, "Elements per side of merge / set_ops (default 2^24)")->check(CLI::Range(int64_t(1), int64_t(1) << 32));
  app.add_option("--search-keys", a.search_keys, "Keys (default 2^20)")->check(CLI::Range(int64_t(1), int64_t(1) << 31));
  app.add_option("--search-queries", a.search_queries, "Sorted needles (default 2^24)")->check(CLI::Range(int64_t(1), int64_t(1) << 31));
  app.add_option("--sort-n", a.sort_n, "Keys to sort (default 2^24)")->check(CLI::Range(int64_t(1), int64_t(1) << 32));
  app.add_option("--join-n", a.join_n, "Rows per side of the join (default 2^20)")->check(CLI::Range(int64_t(1), int64_t(1) << 31));
  app.add_option("--join-range", a.join_range, "Join keys uniform in [0, R) (default 2^18)")->check(CLI::Range(int64_t(1), int64_t(1) << 31));
  app.add_option("--threads", a.threads, "gsearch's worker threads (0: all cores)")->capture_default_str();
  if (auto rc = bench::parse(app, argc, argv, a)) return *rc;
  auto dflt = [&](int64_t& v, int64_t full, int64_t quick) {
    if (v == 0) v = a.quick ? quick : full;
  };
  dflt(a.n, int64_t(1) << 24, int64_t(1) << 18);
  dflt(a.search_keys, int64_t(1) << 20, int64_t(1) << 14);
  dflt(a.search_queries, int64_t(1) << 24, int64_t(1) << 18);
  dflt(a.sort_n, int64_t(1) << 24, int64_t(1) << 18);
  dflt(a.join_n, int64_t(1) << 20, int64_t(1) << 16);
  dflt(a.join_range, int64_t(1) << 18, int64_t(1) << 14);
  if (a.quick) {
    a.repeat = std::min(a.repeat, 2);
    a.warmup = std::min(a.warmup, 1);
  }

  json report = {{"schema", "gsearch-bench-merge-cpu/1"}, {"command", a.command_line}};
  report["host"] = {{"cpu", cpu_name()}, {"threads", host_threads()},
#if defined(__clang__)
                    {"compiler", std::string("clang ") + __clang_version__}
#elif defined(__GNUC__)
                    {"compiler", std::string("gcc ") + __VERSION__}
#else
                    {"compiler", "unknown"}
#endif
  };
  report["host"]["loadavg_before"] = loadavg();
  report["versions"] = {{"gsearch", GSEARCH_VERSION}};
  report["config"] = {{"ops", a.ops}, {"n", a.n}, {"search_keys", a.search_keys}, {"search_queries", a.search_queries},
                      {"sort_n", a.sort_n}, {"join_n", a.join_n}, {"join_range", a.join_range},
                      {"threads", a.threads}, {"repeat", a.repeat}, {"warmup", a.warmup}, {"seed", a.seed},
                      {"quick", a.quick}};
  report["results"] = json::array();
  report["failures"] = json::array();
  std::printf("merge_cpu_bench: %s, %d threads; median of %d after %d warm-up\n", report["host"]["cpu"].get<std::string>().c_str(),
              report["host"]["threads"].get<int>(), a.repeat, a.warmup);
  return bench::run_and_report<runner>("merge_cpu_bench", a, std::move(report));
}
