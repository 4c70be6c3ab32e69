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
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>

#include "common.hpp"
#include "distributed.hpp"
#include "gsearch/gsearch.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "subcommand.hpp"
#include "timing.hpp"

namespace gsearch::cli {
namespace {

struct search_args {
  std::string keys, queries, out;
  std::string sorter;  // --sorter: empty for none
  std::string side = "left", algo = "auto", device = "auto";
  bool assume_sorted = false, sorted_queries = false, int32 = false, verify = false, json = false;
  std::string repeat = "1";
  std::string max_temp_bytes;  // empty: no cap
  distributed_flags dist;
};

constexpr int64_t max_repeat = 1000000;

// How the keys and queries line up. 1-D keys (K): one search of all the queries, whatever their
// shape (numpy.searchsorted); the output has the queries' shape. 2-D keys (R, K): R independent
// searches, row r's M queries in row r's K keys (torch.searchsorted, gsearch::search_rows); the
// queries must be (R, M) and so is the output.
struct layout {
  bool by_rows = false;            // 2-D keys
  int64_t rows = 1;                // rows of keys (1 for 1-D keys)
  int64_t keys = 0;                // keys per row
  int64_t queries = 0;             // queries per row (all of them for 1-D keys)
  std::vector<int64_t> out_shape;  // the queries' shape
  int64_t total_queries() const { return rows * queries; }
};

layout plan(const npy::input& keys, const npy::input& queries) {
  const auto shapes = [&] {
    return "keys " + keys.path() + " have shape " + npy::shape_text(keys.shape()) +
           " but queries " + queries.path() + " have shape " + npy::shape_text(queries.shape());
  };
  if (keys.ndim() == 1) return {false, 1, keys.size(), queries.size(), queries.shape()};
  const int64_t rows = keys.shape()[0];
  if (queries.ndim() != 2)
    throw failure(exit_bad_input,
                  shapes() + ": 2-D keys (one sorted row of keys per search) need 2-D queries " +
                      "with as many rows (numpy: q.reshape(" + std::to_string(rows) + ", -1))");
  if (queries.shape()[0] != rows)
    throw failure(exit_bad_input,
                  shapes() + ": 2-D keys need as many rows of queries as of keys (" +
                      std::to_string(rows) + " and " + std::to_string(queries.shape()[0]) + ")");
  return {true, rows, keys.shape()[1], queries.shape()[1], queries.shape()};
}

// The first index where the keys go down (in the first such row), named in the error; the
// check itself is the library's.
template <class T>
void check_sorted(span<const T> keys, const layout& l, const std::string& path) {
  if (l.by_rows ? gsearch::is_sorted_rows(gsearch::cpu, l.rows, keys)
                : gsearch::is_sorted(gsearch::cpu, keys))
    return;
  const auto less = [](T a, T b) { return key_less(a, b); };
  std::string what = "keys are not sorted";
  for (int64_t r = 0; r < l.rows; ++r) {
    const auto first = keys.begin() + r * l.keys, last = first + l.keys;
    const int64_t i = std::is_sorted_until(first, last, less) - first;
    if (i == l.keys) continue;
    const T before = first[i - 1], after = first[i];
    const std::string row = l.by_rows ? std::to_string(r) + ", " : "";
    what += l.by_rows ? " in row " + std::to_string(r) + " of " + path + " at index " +
                            std::to_string(i)
                      : " at index " + std::to_string(i) + " of " + path;
    what += ": keys[" + row + std::to_string(i - 1) + "] = " + to_text(before) + " > keys[" + row +
            std::to_string(i) + "] = " + to_text(after);
    break;
  }
  if constexpr (std::is_floating_point_v<T>) what += " (gsearch orders NaN last and -0.0 == 0.0)";
  throw failure(exit_bad_input, what + (l.by_rows ? "; sort each row (numpy: np.sort(k, axis=1))"
                                                  : "; sort them") +
                                    ", or pass --assume-sorted");
}

// --sorted-queries: the queries (in their flat order) must be sorted too; the first index where
// they go down is named.
template <class T>
void check_queries_sorted(span<const T> queries, const std::string& path) {
  if (gsearch::is_sorted(gsearch::cpu, queries)) return;
  const auto less = [](T a, T b) { return key_less(a, b); };
  const int64_t i = std::is_sorted_until(queries.begin(), queries.end(), less) - queries.begin();
  std::string what = "--sorted-queries: queries are not sorted at (flat) index " +
                     std::to_string(i) + " of " + path + ": queries[" + std::to_string(i - 1) +
                     "] = " + to_text(queries[i - 1]) + " > queries[" + std::to_string(i) +
                     "] = " + to_text(queries[i]);
  if constexpr (std::is_floating_point_v<T>) what += " (gsearch orders NaN last and -0.0 == 0.0)";
  throw failure(exit_bad_input,
                what + "; sort them, drop --sorted-queries, or pass --assume-sorted");
}

// --sorter: the indices (.npy, 1-D, any integer dtype), as int64 (a uint64 index beyond int64
// turns negative, and the library reports it out of range). Their size and range are the
// library's checks (numpy's words).
std::vector<int64_t> read_sorter(const std::string& path) {
  npy::input f(path);
  if (f.ndim() != 1)
    throw failure(exit_bad_input, "--sorter " + path + " has shape " + npy::shape_text(f.shape()) +
                                      ": it must be 1-D, like the keys");
  return visit_key_type(f.type(), [&]<class I>() -> std::vector<int64_t> {
    if constexpr (std::is_integral_v<I>) {
      const std::vector<I> raw = f.read<I>();
      return std::vector<int64_t>(raw.begin(), raw.end());
    } else {
      throw failure(exit_bad_input, "--sorter " + path + " is " + std::string(name(f.type())) +
                                        ": it must hold integer indices (int32, int64, uint32 or uint64)");
    }
  });
}

// One search of all the queries (1-D keys; through the sorter when one is given, a span of the
// backend's memory) or one per row (2-D keys), on either backend.
template <class Exec, class T, class Out>
void run_search_call(const Exec& exec, side sd, const layout& l, span<const T> keys,
                     const std::optional<span<const int64_t>>& sorter, span<const T> queries, span<Out> out,
                     const search_options& opts) {
  if (l.by_rows)
    gsearch::search_rows(exec, sd, l.rows, keys, queries, out, opts);
  else if (sorter)
    gsearch::search(exec, sd, keys, *sorter, queries, out, opts);
  else
    gsearch::search(exec, sd, keys, queries, out, opts);
}

// The warm-up run before the timed ones: only when timing is what was asked (--repeat N, N > 1).
// The default single search is the one whose answers are written; a warm-up before it did the
// whole search twice, half of the CPU process's search time at K = 2^24 (issue 42).
int warmup_runs(int repeat) { return repeat > 1 ? 1 : 0; }

template <class T, class Out>
timing run_on_cpu(side sd, const layout& l, span<const T> keys, const std::vector<int64_t>* sorter,
                  span<const T> queries, std::vector<Out>& out, const search_options& opts,
                  int repeat) {
  std::optional<span<const int64_t>> order;
  if (sorter) order = span<const int64_t>(*sorter);
  return time_runs(warmup_runs(repeat), repeat, [&] {
    const auto start = std::chrono::steady_clock::now();
    run_search_call(gsearch::cpu, sd, l, keys, order, queries, span<Out>(out), opts);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  });
}

template <class T, class Out>
timing run_on_cuda(side sd, const layout& l, span<const T> keys, const std::vector<int64_t>* sorter,
                   span<const T> queries, std::vector<Out>& out, const search_options& opts,
                   int repeat) {
  const device_vector<T> d_keys{keys}, d_queries{queries};
  const device_vector<int64_t> d_sorter = sorter ? device_vector<int64_t>{span<const int64_t>(*sorter)}
                                                 : device_vector<int64_t>{};
  std::optional<span<const int64_t>> order;
  if (sorter) order = span<const int64_t>(d_sorter);
  const device_vector<Out> d_out(int64_t(out.size()));
  const timing t = time_runs(warmup_runs(repeat), repeat, [&] {
    return elapsed_ms(gsearch::cuda, [&] {
      run_search_call(gsearch::cuda, sd, l, span<const T>(d_keys), order, span<const T>(d_queries),
                      span<Out>(d_out), opts);
    });
  });
  d_out.copy_to(span<Out>(out));
  return t;
}

// --verify: every result against std::lower_bound / std::upper_bound (on its row of keys) in
// the library's order.
struct verification {
  int64_t mismatches = 0, first = -1, got = 0, expected = 0;
};
template <class T, class Out>
verification verify(side sd, const layout& l, span<const T> keys, span<const T> queries,
                    const std::vector<Out>& out) {
  verification v;
  for (int64_t r = 0; r < l.rows; ++r) {
    const T* row = keys.data() + r * l.keys;
    for (int64_t j = r * l.queries; j < (r + 1) * l.queries; ++j) {
      const int64_t expected = reference_result(row, l.keys, queries[j], sd);
      if (int64_t(out[size_t(j)]) == expected) continue;
      if (v.mismatches == 0) v = {0, j, int64_t(out[size_t(j)]), expected};
      ++v.mismatches;
    }
  }
  return v;
}
std::string_view reference_name(side sd) {
  return sd == side::left    ? "std::lower_bound"
         : sd == side::right ? "std::upper_bound"
                             : "std::upper_bound - 1 (predecessor)";
}

// The indices as text: one per line, or for a 2-D output one row per line, separated by spaces
// (numpy.savetxt's layout). Every write is checked (print): a full disk stops it with exit 2.
template <class Out>
void print_indices(const std::vector<Out>& out, const std::vector<int64_t>& shape) {
  const size_t per_line = shape.size() == 2 ? size_t(shape[1]) : 1;
  progress::phase("printing the indices", int64_t(out.size()));
  std::string buf;
  buf.reserve(1 << 20);
  size_t printed = 0;
  const auto flush = [&] {
    print(buf);
    buf.clear();
    progress::advance(int64_t(printed));
    printed = 0;
  };
  const size_t lines = per_line == 1 ? out.size() : size_t(shape[0]);
  for (size_t line = 0; line < lines; ++line) {
    for (size_t i = 0; i < per_line; ++i) {
      if (i) buf += ' ';
      buf += to_text(out[line * per_line + i]);
      ++printed;
      if (buf.size() > (1 << 20) - 32) flush();
    }
    buf += '\n';
  }
  flush();
}

// What a search did, for the summary.
struct search_report {
  const target& dev;
  std::string algo;  // the algorithm's name, or "merge-path" (--sorted-queries)
  side sd;
  std::string_view dtype, out_dtype;
  const layout& shape;
  timing time;
  bool verified;  // --verify was given
  verification check;
};

// The human summary (stderr, always) or the JSON one (stdout); then the
// --verify verdict.
exit_code report(const search_args& a, int repeat, const search_report& r) {
  const layout& l = r.shape;
  const int64_t queries = l.total_queries();
  const double queries_per_s =
      r.time.median_ms > 0 ? double(queries) / (r.time.median_ms * 1e-3) : 0.0;
  const std::string device = r.dev.cuda ? "cuda" : "cpu";
  // The first mismatch: "index j", or "row r, index j" for 2-D output.
  std::string first_at = "index " + std::to_string(r.check.first);
  if (l.out_shape.size() == 2 && l.out_shape[1] > 0)
    first_at = "row " + std::to_string(r.check.first / l.out_shape[1]) + ", index " +
               std::to_string(r.check.first % l.out_shape[1]);
  if (a.json) {
    nlohmann::ordered_json j = {{"command", "search"},
                                {"device", device},
                                {"device_name", r.dev.name},
                                {"algo", r.algo},
                                {"sorted_queries", a.sorted_queries},
                                {"side", to_string(r.sd)},
                                {"dtype", r.dtype},
                                {"out_dtype", r.out_dtype},
                                {"rows", l.rows},
                                {"keys", l.keys},
                                {"queries", l.queries},
                                {"out_shape", l.out_shape},
                                {"out", a.out},
                                {"sorter", a.sorter.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(a.sorter)},
                                {"repeat", repeat},
                                {"search_ms", r.time.median_ms},
                                {"search_ms_runs", r.time.runs_ms},
                                {"queries_per_s", queries_per_s},
                                {"verified", nullptr}};
    if (r.verified) {
      j["verified"] = r.check.mismatches == 0;
      j["mismatches"] = r.check.mismatches;
    }
    print(j.dump() + "\n");
  } else {
    std::ostringstream log;
    char time[64];
    std::snprintf(time, sizeof time, "%.3f ms, %.3f G queries/s", r.time.median_ms,
                  queries_per_s * 1e-9);
    log << "search: ";
    if (l.by_rows)
      log << l.rows << " rows x " << l.queries << " queries, " << l.keys << " " << r.dtype
          << " keys per row";
    else
      log << queries << " queries"
          << (l.out_shape.size() == 1 ? "" : " of shape " + npy::shape_text(l.out_shape)) << ", "
          << l.keys << " " << r.dtype << " keys";
    log << ", side=" << to_string(r.sd) << ", algo=" << r.algo << ", device=" << device
        << " (" << r.dev.name << "): " << time << '\n';
    if (r.verified && r.check.mismatches == 0)
      log << "check: all " << queries << " results match " << reference_name(r.sd)
          << (l.by_rows ? " on their rows" : "") << '\n';
    if (r.check.mismatches > 0)
      log << "check: " << r.check.mismatches << " of " << queries << " results differ (first at "
          << first_at << ": got " << r.check.got << ", expected " << r.check.expected << ")\n";
    const std::string text = log.str();
    note(std::string_view(text).substr(0, text.size() - 1));  // note() ends the line
  }
  if (r.check.mismatches > 0)
    throw failure(exit_mismatch, "--verify: " + std::to_string(r.check.mismatches) +
                                     " results differ from " + std::string(reference_name(r.sd)) +
                                     "; no output written");
  return exit_ok;
}

// --max-temp-bytes (search_options::max_temp_bytes): no cap when not given.
int64_t temp_cap(const search_args& a) {
  return a.max_temp_bytes.empty() ? unlimited_temp_bytes : parse_count(a.max_temp_bytes, "--max-temp-bytes", 0);
}

template <class T, class Out>
exit_code search_typed(const search_args& a, int repeat, const target& dev, const layout& l,
                       npy::input& keys_file, npy::input& queries_file) {
  // Mapped, not copied (npy::input::map): the search reads them in place.
  const npy::mapped<T> keys_data = keys_file.map<T>(), queries_data = queries_file.map<T>();
  const span<const T> keys = keys_data.view(), queries = queries_data.view();
  const std::optional<std::vector<int64_t>> sorter =
      a.sorter.empty() ? std::nullopt : std::optional(read_sorter(a.sorter));
  progress::phase("checking that the keys are sorted");
  if (!a.assume_sorted && !sorter) check_sorted(keys, l, keys_file.path());  // (with a sorter: the library's)
  if (!a.assume_sorted && a.sorted_queries) check_queries_sorted(queries, queries_file.path());

  const side sd = side_from_string(a.side);
  search_options opts;
  opts.algo = parse_algorithm(a.algo);
  opts.queries_sorted = a.sorted_queries;  // then Merge Path, whatever algo says
  opts.max_temp_bytes = temp_cap(a);
  opts.check_sorted = sorter && !a.assume_sorted;  // the keys in the sorter's order
  if (opts.algo == algorithm::auto_)  // resolved here, so that the summary names what ran
    opts.algo = dev.cuda ? resolve_algorithm(cuda, opts.algo, int(sizeof(T)), l.keys, l.queries, opts.max_temp_bytes,
                                             std::is_floating_point_v<T>)
                         : resolve_algorithm(cpu, opts.algo, int(sizeof(T)), l.keys, l.queries, opts.max_temp_bytes,
                                             std::is_floating_point_v<T>);
  if (l.by_rows) opts.algo = rows_algorithm(opts.algo);  // as search_rows runs them

  std::vector<Out> out(size_t(queries.size()));
  progress::phase("searching");
  const std::vector<int64_t>* order = sorter ? &*sorter : nullptr;
  const timing t = dev.cuda ? run_on_cuda(sd, l, keys, order, queries, out, opts, repeat)
                            : run_on_cpu(sd, l, keys, order, queries, out, opts, repeat);
  if (a.verify) progress::phase("verifying");
  verification v;
  if (a.verify && sorter) {  // against the keys gathered here (the library checked the indices)
    std::vector<T> sorted(size_t(keys.size()));
    for (size_t i = 0; i < sorted.size(); ++i) sorted[i] = keys[(*sorter)[i]];
    v = verify(sd, l, span<const T>(sorted), queries, out);
  } else if (a.verify) {
    v = verify(sd, l, keys, queries, out);
  }
  if (v.mismatches == 0) {
    if (!a.out.empty()) {
      npy::save(a.out, span<const Out>(out), l.out_shape);
    } else {
      print_indices(out, l.out_shape);
    }
  }
  const std::string algo_name =
      a.sorted_queries ? std::string("merge-path") : std::string(to_string(opts.algo));
  return report(a, repeat, {dev, algo_name, sd, key_traits<T>::name, key_traits<Out>::name, l, t, a.verify,
                    v});
}

// --distributed (distributed.hpp): 1-D keys, queries of any shape; the options it refuses.
distributed::search_request distributed_request(const search_args& a) {
  distributed::search_request r;
  r.device = a.device;
  r.per_rank = a.dist.per_rank;
  r.json = a.json;
  r.refused = {{"--algo " + a.algo, a.algo != "auto"},
               {"--sorted-queries", a.sorted_queries},
               {"--verify", a.verify},
               {"--repeat", a.repeat != "1"},
               {"--max-temp-bytes", !a.max_temp_bytes.empty()},
               {"--sorter", !a.sorter.empty()}};
  r.keys = a.keys;
  r.queries = a.queries;
  r.out = a.out;
  r.side = a.side;
  r.assume_sorted = a.assume_sorted;
  r.int32 = a.int32;
  return r;
}

exit_code run_search(const search_args& a) {
  if (a.dist.on) return distributed::search([&] { return distributed_request(a); });
  std::vector<named_path> inputs{{"--keys", a.keys}, {"--queries", a.queries}};
  if (!a.sorter.empty()) inputs.push_back({"--sorter", a.sorter});
  check_paths(inputs, {{"--out", a.out}});
  const int repeat = int(parse_count(a.repeat, "--repeat", 1, max_repeat));
  (void)temp_cap(a);  // a bad --max-temp-bytes fails before any input is read
  if (a.json && a.out.empty())
    throw failure(exit_bad_input, "--json needs --out (without --out the indices go to stdout)");
  if (a.sorted_queries && a.algo != "auto")
    throw failure(exit_bad_input, "--algo " + a.algo +
                                      " does not apply with --sorted-queries (sorted queries are "
                                      "searched by Merge Path): leave --algo auto");
  const target dev = resolve_device(a.device);
  npy::input keys(a.keys), queries(a.queries);
  if (keys.type() != queries.type())
    throw failure(exit_bad_input, "keys are " + std::string(name(keys.type())) +
                                      " but queries are " + std::string(name(queries.type())) +
                                      ": gsearch never casts");
  const layout l = plan(keys, queries);
  if (!a.sorter.empty() && l.by_rows)
    throw failure(exit_bad_input, "--sorter applies to 1-D keys, not to keys of shape " +
                                      npy::shape_text(keys.shape()) + " (sort each row instead)");
  if (a.sorted_queries && l.by_rows)
    throw failure(exit_bad_input,
                  "--sorted-queries applies to 1-D keys (one search of all the queries), not to "
                  "2-D keys");
  return visit_key_type(keys.type(), [&]<class T>() {
    return a.int32 ? search_typed<T, int32_t>(a, repeat, dev, l, keys, queries)
                   : search_typed<T, int64_t>(a, repeat, dev, l, keys, queries);
  });
}

std::string search_footer() {
  return "Keys and queries are little-endian .npy files of one dtype: " + dtype_list(" or ") +
         " (gsearch never casts), 1-D or 2-D in C order. Floats are in numpy's "
         "order: NaN last, -0.0 == 0.0.\n"
         "1-D keys (K): every query searches all the keys, like numpy.searchsorted; queries may be "
         "1-D (M) or 2-D (R, M), and the output has their shape.\n"
         "2-D keys (R, K): R independent searches, like torch.searchsorted with a 2-D sequence: "
         "each row of keys is sorted, the queries are (R, M), and row r of the output holds the "
         "indices of row r's queries in row r's keys (0..K, or -1..K-1 for pred: not offsets into "
         "the file). 2-D keys with 1-D queries, or a different number of rows, are an error.\n"
         "The output is checked before anything is read: it must not be the same file as an input "
         "(also through ./, .., a symlink or a hard link), a directory, a FIFO or device, or a "
         "read-only file, and its directory must exist and be writable. It is written through a "
         "temporary file named at the end (unnamed until then where the file system has O_TMPFILE: even a SIGKILL leaves nothing) (through a symlink, to the link's target; an "
         "existing file keeps its mode), removed on an error, SIGINT or SIGTERM. Indices printed to "
         "stdout are checked: a full disk or a closed stdout is exit 2.\n"
         "--distributed (mpirun -np N gsearch search --distributed --keys K.npy --queries Q.npy "
         "--out OUT.npy): the keys (1-D, sorted across the ranks: checked unless --assume-sorted) "
         "and the queries are split into N contiguous slices, one per rank; --out is required and "
         "equals the single-process output. --algo, --sorted-queries, --verify, --repeat and "
         "--max-temp-bytes and --sorter do not apply. The summary (--json: one object from rank 0) gives the "
         "ranks and the slowest rank's read, search and write times.";
}

void add_search_options(CLI::App& sub, search_args& a) {
  sub.add_option("--keys", a.keys, "Sorted keys (.npy): 1-D, or 2-D with each row sorted")
      ->required()
      ->type_name("K.npy");
  sub.add_option("--queries", a.queries,
                 "Queries (.npy, the keys' dtype): 1-D or 2-D; with 2-D keys, 2-D with as many "
                 "rows")
      ->required()
      ->type_name("Q.npy");
  sub.add_option("--out", a.out,
                 "Write the indices to this .npy file (int64, or int32 with --int32; the queries' "
                 "shape), through a temporary file named at the end; stdout then stays empty. "
                 "Without --out the indices go to stdout, one per line (2-D: one row per "
                 "line, separated by spaces). The summary goes to stderr either way. It must not be the "
                 "keys or queries file")
      ->type_name("OUT.npy");
  sub.add_option("--sorter", a.sorter,
                 "Indices that sort the keys (.npy, 1-D, int32 / int64 / uint32 / uint64, as "
                 "numpy.argsort gives): search keys[sorter] instead of the keys, like "
                 "numpy.searchsorted(..., sorter=); the indices are positions in that order. 1-D "
                 "keys only; as many indices as keys, each in [0, K) (an error otherwise, exit 1). "
                 "The sorted check (unless --assume-sorted) and --verify apply to keys[sorter]; the "
                 "gathered copy of the keys counts against --max-temp-bytes")
      ->type_name("S.npy");
  sub.add_option("--side", a.side,
                 "left: the first i with keys[i] >= q (numpy side='left'); right: the first i "
                 "with keys[i] > q (side='right'); pred: the largest i with keys[i] <= q, or -1")
      ->check(CLI::IsMember(side_names))
      ->capture_default_str();
  sub.add_option("--algo", a.algo,
                 "auto: the backend's choice (by key count, query count and key size); pbs, "
                 "pbs-cf, pbs-cl: the paper's parallel binary searches; binary: branch-free "
                 "binary search; index: a static index (S+ tree) built for the call, then "
                 "searched; partitioned: queries grouped by bucket of keys, each bucket's keys "
                 "read once for all its queries, for many queries in large key sets; pary: "
                 "P-ary search, a warp per query, for the response time of one or few queries; "
                 "merge: the queries put in key order by bucket of keys, each searched among "
                 "its bucket's keys (every key read about once), the answers put back, for "
                 "many queries in the largest key sets "
                 "(2-D keys: index, partitioned, pary and merge run binary)")
      ->check(CLI::IsMember(algorithm_names(true)))
      ->capture_default_str();
  add_device_option(sub, a.device);
  sub.add_flag("--assume-sorted,--no-check", a.assume_sorted,
               "Do not check that the keys (each row of 2-D keys), and with --sorted-queries "
               "the queries, are sorted (unsorted ones then give unspecified results). "
               "--no-check is the same flag, as on merge, set and join");
  sub.add_flag("--sorted-queries", a.sorted_queries,
               "The queries are sorted too (in their flat order; 1-D keys only): search them "
               "by Merge Path, O(keys + queries) instead of a binary search per query "
               "(search_options::queries_sorted; --algo must stay auto, and the summary says "
               "algo=merge-path). The default sorted check then checks the queries as well "
               "(--assume-sorted skips both)");
  sub.add_flag("--int32", a.int32, "Write int32 indices (an error if the key count per row does not fit)");
  sub.add_flag("--verify", a.verify,
               "Check every result against std::lower_bound / std::upper_bound on the host (on "
               "its row of 2-D keys); exit 3, writing no output, if any differs");
  sub.add_option("--repeat", a.repeat,
                 "Time N searches (1 to 1000000) and report the median (CUDA: events around the "
                 "search alone; CPU: wall clock). N > 1: after one warm-up run; 1 (the default): "
                 "the one search, whose answers are written, timed as it runs (cold)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--max-temp-bytes", a.max_temp_bytes,
                 "The most temporary memory the search may allocate (search_options::max_temp_bytes; "
                 "default: no cap). auto then picks only algorithms within it (0: those that read "
                 "the keys in place); an explicit --algo index or partitioned over it is an error")
      ->type_name("N");
  sub.add_flag("--json", a.json,
               "Print a one-line JSON summary to stdout instead of the human one (needs --out)");
  add_distributed_options(sub, a.dist);
}

}  // namespace

command add_search_command(CLI::App& app) {
  return add_command<search_args>(
      app, {"search", "Search sorted keys for queries, like numpy.searchsorted, on the CPU or a GPU",
            search_footer(), add_search_options, run_search});
}

}  // namespace gsearch::cli
