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
// every array with bench/common/inputs.py's splitmix64 and np.sort):
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
// untimed runs, the median of --repeat (>= 10 unless --quick) runs (bench/common/timing.hpp).
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

#include <CLI/CLI.hpp>

#include "merge_bench.hpp"

namespace gsearch::bench::merge_bench {

json runner::row(const char* part, const char* impl, const std::string& op, const std::string& call,
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
  r["peer_version"] = i == "thrust"                                         ? json(bench::toolkit_cccl_version())
                      : (i == "cub" || i == "thrust36" || i == "cub-join") ? json(bench::new_cccl_version())
                                                                            : json(nullptr);
  return r;
}

double runner::roofline(const char* part, const std::string& name, const std::vector<peers::segment>& segs,
                         const char* dtype, int64_t na, int64_t nb, double count, const char* unit,
                         const char* values) {
  double bytes = 0;
  for (const auto& s : segs) bytes += double(s.bytes) * (s.dst ? 2 : 1);
  json best_row;
  bench::timing best;
  std::string best_cfg;
  try {
    for (const peers::roofline_config& c : peers::roofline_configs()) {
      const bench::timing t = time([&] { peers::roofline(nullptr, segs, c, sink.data()); }, {});
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

// ---- ratios and targets (issue 8) -----------------------------------------------------------

const json* runner::find(const std::function<bool(const json&)>& pred) const {
  for (const json& r : report["results"])
    if (r["verified"] != false && pred(r)) return &r;
  return nullptr;
}

static bool same_case(const json& x, const json& y) {
  for (const char* k : {"part", "op", "dtype", "values", "input", "na", "nb"})
    if (x[k] != y[k]) return false;
  return true;
}

void runner::ratios() {
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

void runner::targets() {
  json& out = report["targets"];
  auto add_target = [&](const std::string& name, double value, double target, const char* unit, bool higher) {
    bench::add_target(out, name, value, target, unit, higher);
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
  bench::print_targets(out, "targets (issue 8; torch's and the CPU's come from bench/merge/merge_bench.py and "
                                 "merge_cpu_bench):");
}

// ---- all of it --------------------------------------------------------------------------

void runner::run() {
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

}  // namespace gsearch::bench::merge_bench

int main(int argc, char** argv) {
  using namespace gsearch::bench::merge_bench;
  args a;
  CLI::App app{"merge_bench: gsearch's merge family (merge, set operations, sorted search, merge sort, joins) on the "
               "GPU against the copy roofline, thrust (CUDA toolkit CCCL), thrust and CUB (newer CCCL) and a CUB-built "
               "join, on the same buffers (issue 8). Writes a table to stdout and, with --json, one JSON file "
               "(bench/README.md)."};
  app.footer(
      "Timing: CUDA events, --warmup untimed runs, the median of --repeat runs (>= 10 unless --quick). Every result "
      "is checked against a host reference; exit status 0 ok, 1 bad usage, 2 no CUDA device (nothing measured), 3 a "
      "check failed or a call threw. Without a GPU only --help works.");
  bench::add_common_options(app, a, "A small run for a smoke test (N 2^20, K 2^16, Q 2^20, sort 2^20, joins 2^16 "
                                    "with R 2^14, no large join, 3 runs, 1 warm-up): seconds",
                            "Seed of the inputs (the formulas at the top of bench/merge/merge_bench.cu)");
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
  app.add_flag("!--no-flush-l2", a.flush_l2, "Do not read a 2 x L2 scratch buffer before each run (outside the "
                                            "events)");
  if (auto rc = bench::parse(app, argc, argv, a)) return *rc;

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
  if (auto rc = bench::check_repeat("merge_bench", a)) return *rc;
  if (auto rc = bench::require_gpu("merge_bench", "merge")) return *rc;

  json report = bench::gpu_report("gsearch-bench-merge/1", a, cuda_device_properties(), bench::cccl_versions());
  report["config"] = {{"parts", a.parts}, {"n", a.n}, {"search_keys", a.search_keys},
                      {"search_queries", a.search_queries}, {"sort_n", a.sort_n}, {"join_n", a.join_n},
                      {"join_range", a.join_range}, {"joins", a.joins}, {"large_join", a.large_join},
                      {"large_join_range", a.large_join_range}, {"peers", a.peers}, {"repeat", a.repeat},
                      {"warmup", a.warmup}, {"seed", a.seed}, {"flush_l2", a.flush_l2}, {"quick", a.quick}};
  report["rooflines"] = json::object();
  for (const char* k : {"inputs", "results", "targets", "skipped", "failures", "errors"}) report[k] = json::array();
  bench::print_banner("merge_bench", report);
  if (!bench::new_cccl_available() && a.peers)
    std::printf("merge_bench: no CCCL 3.6 peers in this build (scripts/fetch-cccl.sh, then reconfigure)\n");
  std::printf("%-13s %-9s %-20s %-30s %-5s %-11s %11s %11s %10s %6s %6s %s\n", "part", "impl", "op", "call", "dtype",
              "input", "na", "nb", "ms", "GB/s", "roof", "rate");

  return bench::run_and_report<runner>("merge_bench", a, std::move(report));
}
