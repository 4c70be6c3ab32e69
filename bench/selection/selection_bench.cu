// selection_bench: the H100 benchmark of gsearch's selection (issue 21), one run, the same device
// buffers for gsearch and its peers. Writes a table to stdout and, with --json, one JSON file.
//
//   selection_bench [--json FILE] [--quick] [--parts select,topk,rows,partition,quantile]
//                   [--sizes 2^26,2^28,2^30] [--n 2^26] [--dtypes float32,int32]
//                   [--dists uniform,normal,bits,constant,sorted,adversarial]
//                   [--ks 1,16,64,256,1024,1048576] [--topk-dists uniform,bits]
//                   [--rows 4096] [--cols 16384] [--row-k 64] [--quantile-n 2^30]
//                   [--no-peers] [--repeat 15] [--warmup 3] [--seed 1] [--no-flush-l2]
//
// Parts (all by default; the peers beside each unless --no-peers):
//   select     gsearch::select of one rank, r = n - 1024 ("k=1024": the 1024th largest) and
//              r = n/2 ("k=n/2"), and of 100 ranks at once (r_j = j (n - 1) / 99, j < 100), on
//              every distribution, float32 at each of --sizes and int32 at --n. Peers:
//              cub::DeviceTopK::MaxKeys with k = 1024 and k = n - n/2 (its output's minimum is
//              the same element; CUB returns the k items unordered), and
//              cub::DeviceRadixSort::SortKeys then a gather of the ranks ("sort, then pick").
//   topk       gsearch::topk (1-D, largest, sorted and unsorted) for each --ks at --n, on
//              --topk-dists, float32 and int32. Peers: cub::DeviceTopK::MaxPairs (the element
//              index as the value: torch.topk's indices) and cub::DeviceRadixSort::
//              SortPairsDescending of (data, iota) (once per input: its time does not depend on k).
//   rows       gsearch::topk over --rows x --cols float32 (row-major), k = --row-k per row,
//              sorted and unsorted, on --topk-dists. Peer: cub::DeviceBatchedTopK::MaxPairs,
//              output_ordering::sorted and ::unsorted.
//   partition  gsearch::partition (numpy.partition: the whole array rewritten) with kth = n/2 and
//              with 100 kth (j (n - 1) / 99) at --n, every distribution, float32 and int32.
//              Peers: the copy roofline and
//              cub::DeviceRadixSort::SortKeys into the output (a sorted array is partitioned).
//   quantile   gsearch::quantile (method linear) of --quantile-n float32 with q = 0.5 and with
//              100 q (q_j = j / 99), and gsearch::median, every distribution. Peer: sort, then
//              pick the 2 (200) elements the interpolation needs.
// The read roofline (16-byte loads, every compiled launch shape, the fastest counts) runs on each
// buffer size first; `pct_roofline` of the read-once operations is against it, of partition
// against the copy roofline.
//
// Inputs, generated on the device (selection_peers.cu), word(s, i) = output i of splitmix64{s}
// = mix64(s + (i + 1) * 0x9E3779B97F4A7C15), S = --seed (every distribution uses S):
//   uniform      float32: (word >> 40) * 2^-24, in [0, 1); int32: word >> 40, in [0, 2^24)
//   normal       z = sqrt(-2 ln u1) cos(2 pi u2), u1 = ((word >> 40) + 0.5) 2^-24, u2 = (word mod
//                2^24) 2^-24; float32: z; int32: round(z 2^20)
//   bits         the top 32 bits of the word as the element's bits (float32: an exponent of 255,
//                inf or NaN, becomes 127: every value finite, both signs, all magnitudes)
//   constant     every element 0.5 (int32: 12345)
//   sorted       ascending: float32 float(i / n); int32 i - n/2
//   adversarial  for radix select: the top 16 bits of every element equal, the low 16 random
//                (word >> 48): float32 bits 0x3F80xxxx (values in [1, 1 + 2^-7)), int32
//                0x4000xxxx. An MSB-first radix select keeps every element through its first
//                16 bits of digit passes (2 passes of 8 bits, or the first 11-bit pass and part
//                of the next) before the candidates shrink, and 65,536 distinct values leave
//                about n / 65,536 copies of each.
// "inputs" holds, per (dtype, distribution, n), the order-free hash of the data (the sum of
// mix64(bits + 1) mod 2^64, -0.0 counted as 0.0; decimal text).
//
// Checks (every configuration runs once before it is timed and is checked again after the last
// timed run): select: each value v of rank r has #(x < v) <= r < #(x <= v) (counted on the
// device); CUB DeviceTopK's k keys: none below v, one equal, and as many above v as the data
// has; topk (gsearch and peers): indices in range and distinct, data[index] == value, every
// element above the smallest value chosen (counted over the data), and sorted output
// non-increasing; partition: the output a permutation (equal order-free hashes), out[kth] of
// rank kth (counts) and partitioned around it; quantile: within 1e-6 (relative) of numpy's
// linear interpolation (in float64) between the two elements of the count-verified ranks
// floor(q (n - 1)) and the next. Exit status: 0 ok, 1 bad usage, 2 no CUDA device (nothing
// measured), 3 a check failed or a call threw (the JSON is still written).
//
// Timing: CUDA events on the default stream around one call (gsearch::elapsed_ms), --warmup
// untimed runs, the median of --repeat (>= 10) runs (bench/common/timing.hpp); outputs and the
// peers' temporary storage allocated before. Before each run, outside the events, a 2 x L2
// scratch buffer is read (--no-flush-l2: not). gsearch's selection synchronizes its stream
// inside the call (its counts choose the next step): those rows say `includes_sync`.
//
// JSON ("schema": "gsearch-bench-selection/1"): schema, synthetic (false), command, source,
//   device {...}, versions {gsearch, thrust (toolkit CCCL, unused here), cub (newer CCCL, or
//   null)}, config {...}, inputs [{dtype, dist, n, hash}], rooflines [{op, n, gbps, ms, bytes,
//   config}], results [row...], targets [{name, value, target, unit, higher, met}], failures
//   [...], errors [...], and "fatal" (text) when the run stopped early.
// A row (fields that do not apply are null):
//   part        roofline | select | topk | rows | partition | quantile
//   impl        gsearch | roofline | cub
//   op          read | copy | select | topk | partition | quantile | median
//   call        what ran: "select", "topk sorted", "topk unsorted", "DeviceTopK::MaxKeys",
//               "DeviceTopK::MaxPairs", "DeviceBatchedTopK::MaxPairs sorted" (unsorted),
//               "SortKeys+pick", "SortPairsDescending", "SortKeys", "partition", "quantile
//               linear", "median"; roofline: its launch shape ("u4-b8")
//   dtype, dist, n        element type, distribution, elements (rows: rows x cols)
//   rows, cols            the row topk's shape (else null)
//   k           topk's k; select: the k of "the k-th largest" for one rank (1024 or n - n/2)
//   ranks       ranks selected in one call (1 or 100; quantile: the number of q)
//   result, expected      select / quantile: the first value computed and the reference
//   ms, ms_min, ms_max, runs  median, fastest, slowest of the timed runs
//   bytes       one read of the data (partition: read + write; rows: rows x cols x 4)
//   gbps        bytes / ms / 1e6; pct_roofline against the read (partition: copy) roofline
//   verified    true | false (roofline: null)
//   peer_version  "3.6.0" (cub); null for gsearch and the roofline
//   includes_sync  the timed interval holds a host synchronization (gsearch's calls)
//   flush_l2    L2 flushed (read over) before each run
//
// Files: selection_bench.hpp (the arguments, the inputs and checks, the runner's declarations),
// this file (the rows, the table, the rooflines, the targets, main()), and one per part:
// selection_select.cu, selection_topk.cu, selection_rows.cu, selection_partition.cu,
// selection_quantile.cu.

#include <CLI/CLI.hpp>

#include "selection_bench.hpp"

namespace gsearch::bench::selection_bench {

// ---- the rows and the table -----------------------------------------------------------------

json runner::row(const char* part, const char* impl, const char* op, const std::string& call, const char* dtype,
                 const std::string& dist_name, int64_t n) {
  json r;
  for (const char* k : {"part", "impl", "op", "call", "dtype", "dist", "n", "rows", "cols", "k", "ranks", "result",
                        "expected", "ms", "ms_min", "ms_max", "runs", "bytes", "gbps", "pct_roofline", "verified",
                        "peer_version", "includes_sync", "flush_l2"})
    r[k] = nullptr;
  r["part"] = part;
  r["impl"] = impl;
  r["op"] = op;
  r["call"] = call;
  r["dtype"] = dtype;
  if (!dist_name.empty()) r["dist"] = dist_name;
  r["n"] = n;
  r["includes_sync"] = std::string(impl) == "gsearch";
  if (std::string(impl) == "cub") r["peer_version"] = bench::new_cccl_version();
  return r;
}

std::string runner::text(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char b[32];
    std::snprintf(b, sizeof b, "%.7g", v.get<double>());
    return b;
  }
  return v.dump();
}

void runner::print(const json& r) {
  std::string what = r["k"].is_null() ? "" : "k=" + text(r["k"]);
  if (!r["ranks"].is_null() && r["ranks"] != 1) what += (what.empty() ? "" : " ") + std::string("x") + text(r["ranks"]);
  std::string size = r["rows"].is_null() ? n_text(r["n"].get<int64_t>())
                                         : text(r["rows"]) + "x" + text(r["cols"]);
  std::printf("%-9s %-8s %-10s %-36s %-7s %-11s %9s %-12s %10.4f ms %7.1f GB/s %5s %s\n",
              r["part"].get<std::string>().c_str(), r["impl"].get<std::string>().c_str(),
              r["op"].get<std::string>().c_str(), r["call"].get<std::string>().c_str(),
              r["dtype"].get<std::string>().c_str(), text(r["dist"]).c_str(), size.c_str(), what.c_str(),
              r["ms"].get<double>(), r["gbps"].get<double>(),
              r["pct_roofline"].is_null() ? "" : (std::to_string(int(std::lround(r["pct_roofline"].get<double>()))) + "%").c_str(),
              r["verified"].is_null() ? "" : (r["verified"].get<bool>() ? "ok" : "WRONG"));
  std::fflush(stdout);
}

void runner::add(json r, const bench::timing& t, double bytes, double roof, std::optional<bool> ok) {
  bench::set_timing(r, t, bytes, roof, ok, a.flush_l2);
  print(r);
  if (ok && !*ok) {
    ++problems;
    json f;
    for (const char* k : {"part", "impl", "op", "call", "dtype", "dist", "n", "k", "ranks", "result", "expected"})
      f[k] = r[k];
    report["failures"].push_back(f);
  }
  report["results"].push_back(std::move(r));
}

void runner::error(const json& r, const std::exception& e) {
  ++problems;
  std::printf("%-9s %-8s %-10s %-36s %-7s %-11s ERROR: %s\n", r["part"].get<std::string>().c_str(),
              r["impl"].get<std::string>().c_str(), r["op"].get<std::string>().c_str(),
              r["call"].get<std::string>().c_str(), r["dtype"].get<std::string>().c_str(), text(r["dist"]).c_str(),
              e.what());
  std::fflush(stdout);
  json x = r;
  x["error"] = e.what();
  report["errors"].push_back(x);
  (void)cudaGetLastError();  // clear a non-sticky error so that the next configuration runs
}

void runner::measure(json r, double bytes, double roof, const std::function<void()>& enqueue,
                     const std::function<bool(json&)>& check) {
  try {
    enqueue();
    synchronize(cuda);
    bool ok = check(r);
    const bench::timing t = time(enqueue);
    ok = check(r) && ok;
    add(r, t, bytes, roof, ok);
  } catch (const std::exception& e) {
    error(r, e);
  }
}

// ---- rooflines ------------------------------------------------------------------------------

double runner::roofline(const void* src, void* dst, int64_t bytes, const char* dtype, int64_t n) {
  const std::string op = dst ? "copy" : "read";
  if (auto it = roof_gbps.find({op, bytes}); it != roof_gbps.end()) return it->second;
  double best_ms = 0;
  std::string best;
  for (const peers::roof_config c : peers::roof_configs()) {
    const std::string name = "u" + std::to_string(c.unroll) + "-b" + std::to_string(c.blocks_per_sm);
    json r = row("roofline", "roofline", op.c_str(), name, dtype, "", n);
    r["includes_sync"] = false;
    try {
      const bench::timing t = time([&] { peers::roofline(stream, src, dst, bytes, c, sink.data()); });
      add(r, t, double(bytes) * (dst ? 2 : 1), 0, std::nullopt);
      if (best.empty() || t.median_ms < best_ms) best_ms = t.median_ms, best = name;
    } catch (const std::exception& e) {
      error(r, e);
    }
  }
  if (best.empty()) throw std::runtime_error("the roofline kernel did not run");
  const double moved = double(bytes) * (dst ? 2 : 1), gbps = moved / (best_ms * 1e6);
  roof_gbps[{op, bytes}] = gbps;
  report["rooflines"].push_back({{"op", op}, {"n", n}, {"gbps", gbps}, {"ms", best_ms}, {"bytes", moved}, {"config", best}});
  for (json& r : report["results"])
    if (r["part"] == "roofline" && r["op"] == op && r["n"] == n) r["pct_roofline"] = 100.0 * r["gbps"].get<double>() / gbps;
  std::printf("%s roofline: %.1f GB/s (%.4f ms for %.0f bytes, %s)\n", op.c_str(), gbps, best_ms, moved, best.c_str());
  return gbps;
}

// ---- targets (issue 41) ---------------------------------------------------------------------

std::vector<const json*> runner::find(const json& want) const {
  return verified_rows(report, want);
}
double runner::ms(const json* r) { return (*r)["ms"].get<double>(); }
double runner::max_ms(const std::vector<const json*>& rs) {
  double m = 0;
  for (const json* r : rs) m = std::max(m, ms(r));
  return m;
}
double runner::min_ms(const std::vector<const json*>& rs) {
  double m = rs.empty() ? 0 : ms(rs[0]);
  for (const json* r : rs) m = std::min(m, ms(r));
  return m;
}

void runner::targets() {
  json& out = report["targets"];
  auto target = [&](const std::string& name, double value, double goal, const char* unit, bool higher) {
    bench::add_target(out, name, value, goal, unit, higher);
  };
  // Issue 41's goals (two reads of the data for one rank; the peers' ratios at least).
  const std::map<int64_t, double> one_rank_ms = {{int64_t(1) << 26, 0.12}, {int64_t(1) << 28, 0.40},
                                                 {int64_t(1) << 30, 1.6}};
  constexpr double half_over_small = 1.2, slowest_over_fastest = 1.3, many_over_one = 1.3;
  constexpr double topk_small_ms = 0.15, topk_large_ms = 0.3, topk_over_cub = 1.5;
  constexpr double partition_ms = 0.25, rows_over_cub = 1.5, quantile_2_30_ms = 2.0;
  // The row shapes the issue gives a time (and, for the first, the ratio to CUB).
  struct row_goal {
    int64_t rows, cols, k;
    double ms;
    bool over_cub;
  };
  constexpr row_goal row_goals[] = {{4096, 16384, 64, 0.15, true}, {256, 524288, 256, 0.3, false},
                                    {64, 16384, 512, 0.02, false}};
  for (const int64_t n : a.sizes) {
    const json g = {{"part", "select"}, {"impl", "gsearch"}, {"dtype", "float32"}, {"n", n}, {"ranks", 1}};
    const auto one = find(g);
    if (one.empty()) continue;
    const std::string at = "float32 " + n_text(n);
    if (auto it = one_rank_ms.find(n); it != one_rank_ms.end())
      target("select one rank, " + at + ", slowest of the inputs and k: ms", max_ms(one), it->second, "ms", false);
    double worst_half = 0, worst_many = 0;
    for (const std::string& dn : a.dists) {
      json w = g;
      w["dist"] = dn;
      w["k"] = std::min<int64_t>(1024, n);
      const auto small = find(w);
      w["k"] = n - n / 2;
      const auto half = find(w);
      json m = g;
      m["dist"] = dn;
      m["ranks"] = 100;
      const auto many = find(m);
      if (!small.empty() && !half.empty()) worst_half = std::max(worst_half, ms(half[0]) / ms(small[0]));
      if (!many.empty() && !half.empty()) worst_many = std::max(worst_many, ms(many[0]) / std::max(ms(half[0]), ms(small[0])));
    }
    if (worst_half > 0) target("select k = n/2 / k = 1024, " + at + ", worst input", worst_half, half_over_small, "x", false);
    json w = g;
    w["k"] = std::min<int64_t>(1024, n);
    const auto by_dist = find(w);
    if (by_dist.size() > 1)
      target("select k = 1024, " + at + ": slowest / fastest input", max_ms(by_dist) / min_ms(by_dist),
             slowest_over_fastest, "x", false);
    if (worst_many > 0) target("select 100 ranks / one rank, " + at + ", worst input", worst_many, many_over_one, "x", false);
  }
  for (const char* t : {"float32", "int32"}) {
    for (const int64_t k : a.ks) {
      const auto g = find({{"part", "topk"}, {"impl", "gsearch"}, {"call", "topk sorted"}, {"dtype", t}, {"k", k}});
      const auto c = find({{"part", "topk"}, {"impl", "cub"}, {"call", "DeviceTopK::MaxPairs"}, {"dtype", t}, {"k", k}});
      if (g.empty()) continue;
      const std::string at = std::string(t) + " " + n_text(a.n) + ", k = " + std::to_string(k);
      target("topk sorted, " + at + ", slowest input: ms", max_ms(g), k <= 1024 ? topk_small_ms : topk_large_ms, "ms", false);
      if (k <= 1024 && !c.empty()) {
        double worst = 1e300;
        for (const json* x : g)
          for (const json* y : c)
            if ((*x)["dist"] == (*y)["dist"]) worst = std::min(worst, ms(y) / ms(x));
        if (worst < 1e300) target("topk sorted, " + at + ": CUB DeviceTopK / gsearch, worst input", worst, topk_over_cub, "x", true);
      }
    }
    const auto p = find({{"part", "partition"}, {"impl", "gsearch"}, {"dtype", t}, {"ranks", 1}});
    if (!p.empty()) target(std::string("partition, ") + t + " " + n_text(a.n) + ", slowest input: ms", max_ms(p), partition_ms, "ms", false);
    const auto p100 = find({{"part", "partition"}, {"impl", "gsearch"}, {"dtype", t}, {"ranks", 100}});
    double worst = 0;
    for (const json* x : p100)
      for (const json* y : p)
        if ((*x)["dist"] == (*y)["dist"]) worst = std::max(worst, ms(x) / ms(y));
    if (worst > 0)
      target(std::string("partition 100 kth / one kth, ") + t + " " + n_text(a.n) + ", worst input", worst,
             many_over_one, "x", false);
  }
  const auto rg = find({{"part", "rows"}, {"impl", "gsearch"}, {"call", "topk sorted"}});
  const auto rc = find({{"part", "rows"}, {"impl", "cub"}, {"call", "DeviceBatchedTopK::MaxPairs sorted"}});
  for (const row_goal& goal : row_goals) {
    if (rg.empty() || goal.rows != a.rows || goal.cols != a.cols || goal.k != a.row_k) continue;
    const std::string at = std::to_string(a.rows) + " x " + std::to_string(a.cols) + ", k = " + std::to_string(a.row_k);
    target("row topk sorted, " + at + ", slowest input: ms", max_ms(rg), goal.ms, "ms", false);
    if (goal.over_cub && !rc.empty())
      target("row topk sorted, " + at + ": CUB DeviceBatchedTopK sorted / gsearch", min_ms(rc) / max_ms(rg), rows_over_cub, "x", true);
  }
  const auto qg = find({{"part", "quantile"}, {"impl", "gsearch"}});
  if (!qg.empty() && a.quantile_n == int64_t(1) << 30)
    target("quantile / median, float32 " + n_text(a.quantile_n) + ", slowest input and q: ms", max_ms(qg), quantile_2_30_ms, "ms", false);
  bench::print_targets(out, "targets (issue 41; torch's and Python's come from selection_python.py and python_overhead.py):");
}

// ---- all of it ------------------------------------------------------------------------------

void runner::run() {
  const bool f32 = a.has_type("float32"), i32 = a.has_type("int32");
  if (a.has("select")) {
    if (f32) select_part<float>();
    if (i32) select_part<int32_t>();
  }
  if (a.has("topk")) {
    if (f32) topk_part<float>();
    if (i32) topk_part<int32_t>();
  }
  if (a.has("rows")) rows_part();
  if (a.has("partition")) {
    if (f32) partition_part<float>();
    if (i32) partition_part<int32_t>();
  }
  if (a.has("quantile")) quantile_part();
  targets();
}

}  // namespace gsearch::bench::selection_bench

int main(int argc, char** argv) {
  using namespace gsearch::bench::selection_bench;
  args a;
  CLI::App app{"selection_bench: gsearch's selection (select, topk, row topk, partition, quantile) on the GPU against "
               "the read / copy rooflines and CUB 3.6 (DeviceTopK, DeviceBatchedTopK, DeviceRadixSort: sort, then "
               "pick), on the same buffers (issue 21). Writes a table to stdout and, with --json, one JSON file."};
  app.footer(
      "Timing: CUDA events, --warmup untimed runs, the median of --repeat runs (>= 10 unless --quick). Every result "
      "is checked on the device or the host; exit status 0 ok, 1 bad usage, 2 no CUDA device (nothing measured), 3 a "
      "check failed or a call threw. Without a GPU only --help works.");
  bench::add_common_options(app, a, "A smoke test of seconds (n = 2^22, 256 x 16384 rows, k in {1, 64, 1024, 2^16}, "
                                    "3 runs, 1 warm-up)",
                            "Seed of the inputs (the formulas at the top of bench/selection/selection_bench.cu)");
  app.add_option("--parts", a.parts, "What to measure: select, topk, rows, partition, quantile")
      ->delimiter(',')->check(CLI::IsMember({"select", "topk", "rows", "partition", "quantile"}))->capture_default_str();
  app.add_option("--sizes", a.sizes, "Element counts of float32 select (default 2^26, 2^28, 2^30)")
      ->delimiter(',')->check(CLI::Range(int64_t(1024), int64_t(1) << 34));
  app.add_option("--n", a.n, "Elements of int32 select, topk and partition (default 2^26)")
      ->check(CLI::Range(int64_t(1024), int64_t(1) << 34));
  app.add_option("--dtypes", a.dtypes, "Element types")->delimiter(',')->check(CLI::IsMember({"float32", "int32"}))
      ->capture_default_str();
  app.add_option("--dists", a.dists, "Input distributions of select, partition and quantile")->delimiter(',')
      ->check(CLI::IsMember(all_dists))->capture_default_str();
  app.add_option("--ks", a.ks, "k of the 1-D topk (default 1,16,64,256,1024,1048576)")->delimiter(',')
      ->check(CLI::Range(int64_t(1), int64_t(1) << 34));
  app.add_option("--topk-dists", a.topk_dists, "Input distributions of topk and the row topk")->delimiter(',')
      ->check(CLI::IsMember(all_dists))->capture_default_str();
  app.add_option("--rows", a.rows, "Rows of the row topk (default 4096)")->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  app.add_option("--cols", a.cols, "Columns of the row topk")->check(CLI::Range(int64_t(1), int64_t(1) << 21))
      ->capture_default_str();
  app.add_option("--row-k", a.row_k, "k of the row topk")->check(CLI::Range(int64_t(1), int64_t(1024)))
      ->capture_default_str();
  app.add_option("--quantile-n", a.quantile_n, "Elements of the quantile part (default: the largest of --sizes)")
      ->check(CLI::Range(int64_t(1024), int64_t(1) << 34));
  app.add_flag("!--no-peers", a.peers, "gsearch and the rooflines only (no CUB)");
  app.add_flag("!--no-flush-l2", a.flush_l2, "Do not read a 2 x L2 scratch buffer before each run (outside the "
                                            "events) to evict the last run's data from L2");
  if (auto rc = bench::parse(app, argc, argv, a)) return *rc;

  if (a.quick) {
    if (a.sizes.empty()) a.sizes = {int64_t(1) << 22};
    if (a.n == 0) a.n = int64_t(1) << 22;
    if (a.ks.empty()) a.ks = {1, 64, 1024, 65536};
    if (a.rows == 0) a.rows = 256;
    a.repeat = std::min(a.repeat, 3);
    a.warmup = std::min(a.warmup, 1);
  }
  if (a.sizes.empty()) a.sizes = {int64_t(1) << 26, int64_t(1) << 28, int64_t(1) << 30};
  if (a.n == 0) a.n = int64_t(1) << 26;
  if (a.ks.empty()) a.ks = {1, 16, 64, 256, 1024, int64_t(1) << 20};
  if (a.rows == 0) a.rows = 4096;
  if (a.quantile_n == 0) a.quantile_n = *std::max_element(a.sizes.begin(), a.sizes.end());
  for (const int64_t n : a.sizes)
    if (n % 4 != 0) {
      std::fprintf(stderr, "selection_bench: --sizes %lld: a multiple of 4, please (the rooflines read 16-byte words)\n",
                   (long long)n);
      return 1;
    }
  if (a.n % 4 != 0 || a.quantile_n % 4 != 0 || (a.rows * a.cols) % 4 != 0) {
    std::fprintf(stderr, "selection_bench: --n, --quantile-n and --rows x --cols must be multiples of 4\n");
    return 1;
  }
  if (auto rc = bench::check_repeat("selection_bench", a)) return *rc;
  if (auto rc = bench::require_gpu("selection_bench", "selection")) return *rc;

  json report = bench::gpu_report("gsearch-bench-selection/1", a, cuda_device_properties(), bench::cccl_versions());
  report["config"] = {{"parts", a.parts}, {"sizes", a.sizes}, {"n", a.n}, {"dtypes", a.dtypes}, {"dists", a.dists},
                      {"ks", a.ks}, {"topk_dists", a.topk_dists}, {"rows", a.rows}, {"cols", a.cols},
                      {"row_k", a.row_k}, {"quantile_n", a.quantile_n}, {"peers", a.peers}, {"repeat", a.repeat},
                      {"warmup", a.warmup}, {"seed", a.seed}, {"flush_l2", a.flush_l2}, {"quick", a.quick}};
  for (const char* k : {"inputs", "rooflines", "results", "targets", "failures", "errors"}) report[k] = json::array();
  bench::print_banner("selection_bench", report);
  if (!bench::new_cccl_available() && a.peers)
    std::printf("selection_bench: no CUB 3.6 peers in this build (scripts/fetch-cccl.sh, then reconfigure)\n");
  std::printf("%-9s %-8s %-10s %-36s %-7s %-11s %9s %-12s %13s %12s %5s\n", "part", "impl", "op", "call", "dtype",
              "dist", "n", "k", "time", "rate", "roof");

  return bench::run_and_report<runner>("selection_bench", a, std::move(report));
}
