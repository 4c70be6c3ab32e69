// `gsearch asof`: the as-of join (gsearch/asof.hpp, pandas.merge_asof's semantics) of two key
// columns in .npy files, optionally within groups, on the CPU or a CUDA device; the result is
// the int64 gather map (the right row of each left row, -1 for none). --distributed runs it over
// the ranks of an MPI job (distributed_asof.cpp); asof_inputs.hpp holds what both forms check.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "asof_inputs.hpp"
#include "common.hpp"
#include "distributed.hpp"
#include "gsearch/asof.hpp"
#include "gsearch/device.hpp"
#include "gsearch/merge.hpp"
#include "gsearch/search.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "subcommand.hpp"
#include "timing.hpp"

namespace gsearch::cli {
namespace {

using json = nlohmann::ordered_json;

using asof_io::bad;
using asof_io::named_input;

const std::vector<std::string> direction_names = {"backward", "forward", "nearest"};

struct asof_args {
  std::string left, right, left_by, right_by, out, direction = "backward", tolerance, device = "auto";
  bool no_exact = false, sort = false, no_check = false, json = false;
  distributed_flags dist;
  CLI::Option* tolerance_opt = nullptr;
};

// ---- the groups: any integer values of both sides, factorized jointly --------------------------

struct group_codes {
  std::vector<int64_t> left, right;
  int64_t groups = 0;
};

using asof_io::common_group_t;

// codes[i] = the position of values[i] among the sorted unique values u.
template <class C>
std::vector<int64_t> codes_of(const std::vector<C>& u, const std::vector<C>& values) {
  std::vector<int64_t> codes(values.size());
  if constexpr (std::is_same_v<C, __int128>) {
    for (size_t i = 0; i < values.size(); ++i)
      codes[i] = std::lower_bound(u.begin(), u.end(), values[i]) - u.begin();
  } else {
    gsearch::search(gsearch::cpu, side::left, span<const C>(u), span<const C>(values), span<int64_t>(codes));
  }
  return codes;
}

// The group values of both sides as codes in [0, groups): the sorted unique values of their
// union, and each value's position among them (a binary search), so equal values get one code
// whatever their dtypes.
template <class A, class B>
group_codes factorize(const std::vector<A>& a, const std::vector<B>& b) {
  using C = common_group_t<A, B>;
  const std::vector<C> ca(a.begin(), a.end()), cb(b.begin(), b.end());
  std::vector<C> u;
  u.reserve(ca.size() + cb.size());
  u.insert(u.end(), ca.begin(), ca.end());
  u.insert(u.end(), cb.begin(), cb.end());
  if constexpr (std::is_same_v<C, __int128>)
    std::sort(u.begin(), u.end());
  else
    gsearch::sort(gsearch::cpu, span<const C>(u), span<C>(u));
  u.erase(std::unique(u.begin(), u.end()), u.end());
  return {codes_of(u, ca), codes_of(u, cb), int64_t(u.size())};
}

group_codes read_groups(named_input& l, named_input& r) {
  group_codes g;
  visit_key_type(l.file.type(), [&]<class A>() {
    visit_key_type(r.file.type(), [&]<class B>() {
      if constexpr (std::is_integral_v<A> && std::is_integral_v<B>)
        g = factorize(l.file.read<A>(), r.file.read<B>());
    });
  });
  return g;
}

// ---- the join ------------------------------------------------------------------------------------

// What ran, for the summary.
struct outcome {
  int64_t matched = 0;  // left rows with a match
  double ms = 0;        // the library call (CUDA: events around it; CPU: wall clock)
};

template <class T>
outcome run_join(const target& dev, const std::vector<T>& l, const std::vector<T>& r, const group_codes* g,
                 const asof_options<T>& opts, std::vector<int64_t>& out) {
  outcome o;
  if (dev.cuda) {
    const auto d_l = to_device(l), d_r = to_device(r);
    const device_vector<int64_t> d_out(int64_t(out.size()));
    if (g) {
      const auto d_lb = to_device(g->left), d_rb = to_device(g->right);
      o.ms = elapsed_ms(gsearch::cuda, [&] {
        gsearch::asof_join(gsearch::cuda, span<const T>(d_l), span<const T>(d_r), span<const int64_t>(d_lb),
                           span<const int64_t>(d_rb), g->groups, d_out.view(), opts);
      });
    } else {
      o.ms = elapsed_ms(gsearch::cuda, [&] {
        gsearch::asof_join(gsearch::cuda, span<const T>(d_l), span<const T>(d_r), d_out.view(), opts);
      });
    }
    d_out.copy_to(span<int64_t>(out));
  } else {
    o.ms = wall_ms([&] {
      if (g)
        gsearch::asof_join(gsearch::cpu, span<const T>(l), span<const T>(r), span<const int64_t>(g->left),
                           span<const int64_t>(g->right), g->groups, span<int64_t>(out), opts);
      else
        gsearch::asof_join(gsearch::cpu, span<const T>(l), span<const T>(r), span<int64_t>(out), opts);
    });
  }
  o.matched = int64_t(std::count_if(out.begin(), out.end(), [](int64_t j) { return j >= 0; }));
  return o;
}

// The library's refusal of unsorted or NaN keys (pandas' words), with where it is in which file
// and what to do about it.
template <class T>
[[noreturn]] void explain_refusal(const std::string& what, const named_input& l, const std::vector<T>& lk,
                                  const named_input& r, const std::vector<T>& rk) {
  const bool left = what.find("left") != std::string::npos;
  const named_input& in = left ? l : r;
  const std::vector<T>& k = left ? lk : rk;
  const std::string n = left ? "left" : "right";
  if (what.find("null values") != std::string::npos) {
    if constexpr (std::is_floating_point_v<T>) {
      const auto nan = std::find_if(k.begin(), k.end(), [](T x) { return x != x; });
      if (nan != k.end()) asof_io::refuse_nan(n, in, nan - k.begin());
    }
    bad(what + ": an as-of join needs a number in every key (numpy: drop them with k[~np.isnan(k)], and their "
        "rows with it)");
  }
  const auto less = [](T p, T q) { return key_less(p, q); };
  const int64_t i = std::is_sorted_until(k.begin(), k.end(), less) - k.begin();
  if (i < int64_t(k.size())) asof_io::refuse_unsorted(n, in, i, k[size_t(i - 1)], k[size_t(i)]);
  bad(what + "; pass --sort to join keys in any order (the output stays in the left's order and names the "
      "right's original rows)");
}

// The indices as text, one per line (checked writes: a full disk is exit 2).
void print_indices(const std::vector<int64_t>& out) {
  progress::phase("printing the indices", int64_t(out.size()));
  std::string buf;
  buf.reserve(1 << 20);
  size_t printed = 0;
  for (int64_t j : out) {
    buf += to_text(j);
    buf += '\n';
    ++printed;
    if (buf.size() > (1 << 20) - 32) {
      print(buf);
      buf.clear();
      progress::advance(int64_t(printed));
      printed = 0;
    }
  }
  print(buf);
  progress::advance(int64_t(printed));
}

std::string ms_text(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

template <class T>
exit_code asof_typed(const asof_args& a, const target& dev, named_input& l, named_input& r,
                     std::optional<named_input>& lb, std::optional<named_input>& rb) {
  const asof_options<T> opts = asof_io::options_of<T>(a.direction, !a.no_exact, a.tolerance,
                                                      a.tolerance_opt && a.tolerance_opt->count() > 0,
                                                      !a.no_check, a.sort);

  const std::vector<T> lk = l.file.read<T>();
  const std::vector<T> rk = r.file.read<T>();
  std::optional<group_codes> groups;
  double factorize_ms = 0;
  if (lb) {
    progress::phase("factorizing the group values");
    factorize_ms = wall_ms([&] { groups = read_groups(*lb, *rb); });
  }

  progress::phase("joining");
  std::vector<int64_t> out(lk.size());
  outcome o;
  try {
    o = run_join(dev, lk, rk, groups ? &*groups : nullptr, opts, out);
  } catch (const gsearch::invalid_argument& e) {
    const std::string what = e.what();
    if (what.find("keys must be sorted") != std::string::npos || what.find("null values") != std::string::npos)
      explain_refusal(what, l, lk, r, rk);
    throw;
  }
  if (!a.out.empty()) npy::save(a.out, span<const int64_t>(out));

  const std::string dt(key_traits<T>::name);
  const int64_t n = int64_t(lk.size()), m = int64_t(rk.size());
  if (a.json) {
    json j = {{"command", "asof"},
              {"device", dev.cuda ? "cuda" : "cpu"},
              {"device_name", dev.name},
              {"dtype", dt},
              {"left", n},
              {"right", m},
              {"groups", groups ? json(groups->groups) : json(nullptr)},
              {"direction", a.direction},
              {"allow_exact_matches", opts.allow_exact_matches},
              {"tolerance", opts.tolerance ? json(to_text(*opts.tolerance)) : json(nullptr)},
              {"sort", a.sort},
              {"checked", !a.no_check},
              {"out", a.out},
              {"result", n},
              {"matched", o.matched},
              {"factorize_ms", groups ? json(factorize_ms) : json(nullptr)},
              {"time_ms", o.ms}};
    print(j.dump() + "\n");
    return exit_ok;
  }
  if (a.out.empty()) print_indices(out);
  std::string what = "asof: " + a.direction + " join of " + std::to_string(n) + " left and " + std::to_string(m) +
                     " right " + dt + " keys";
  if (groups)
    what += " in " + std::to_string(groups->groups) + " groups (factorized in " + ms_text(factorize_ms) + ")";
  if (opts.tolerance) what += ", tolerance " + to_text(*opts.tolerance);
  if (a.no_exact) what += ", no exact matches";
  if (a.sort) what += ", sorted first (--sort)";
  if (a.no_check) what += ", unchecked (--assume-sorted)";
  what += ", device=" + std::string(dev.cuda ? "cuda" : "cpu") + " (" + dev.name + "): " + std::to_string(n) +
          " rows, " + std::to_string(o.matched) + " matched -> " + (a.out.empty() ? "stdout" : a.out) +
          " (int64), " + ms_text(o.ms);
  note(what);
  return exit_ok;
}

// --distributed (distributed.hpp): the same options; the indices go to --out, not stdout.
distributed::asof_request distributed_request(const asof_args& a) {
  distributed::asof_request r;
  r.device = a.device;
  r.per_rank = a.dist.per_rank;
  r.json = a.json;
  r.left = a.left;
  r.right = a.right;
  r.left_by = a.left_by;
  r.right_by = a.right_by;
  r.out = a.out;
  r.direction = a.direction;
  r.tolerance = a.tolerance;
  r.has_tolerance = a.tolerance_opt && a.tolerance_opt->count() > 0;
  r.no_exact = a.no_exact;
  r.sort = a.sort;
  r.no_check = a.no_check;
  return r;
}

exit_code run_asof(const asof_args& a) {
  if (a.dist.on) return distributed::asof([&] { return distributed_request(a); });
  check_paths({{"--left", a.left}, {"--right", a.right}, {"--left-by", a.left_by}, {"--right-by", a.right_by}},
              {{"--out", a.out}});
  asof_io::check_flags(a.left_by, a.right_by, a.sort, a.no_check);
  if (a.json && a.out.empty()) bad("--json needs --out (without --out the indices go to stdout)");
  const target dev = resolve_device(a.device);
  asof_io::files f = asof_io::open_files(a.left, a.right, a.left_by, a.right_by);
  return visit_key_type(f.left.file.type(),
                        [&]<class T>() { return asof_typed<T>(a, dev, f.left, f.right, f.left_by, f.right_by); });
}

std::string asof_footer() {
  return "The as-of join of pandas.merge_asof (gsearch::asof_join): for each left key, the one right row whose "
         "key is the closest in --direction. backward (the default): the last right row whose key is <= the "
         "left key; forward: the first whose key is >= it; nearest: the closer of those two, the backward one "
         "when they are as close. Of equal right keys, backward takes the last row and forward the first, as "
         "pandas does. --tolerance X refuses a match farther than X (inclusive: a distance of X matches); "
         "--no-exact-matches takes only right keys strictly before (backward) or after (forward) the left key "
         "(pandas' allow_exact_matches=False; nearest: both).\n"
         "Keys: little-endian 1-D .npy files of one dtype, " +
         dtype_list(" or ") +
         " (gsearch never casts), each sorted ascending (-0.0 == 0.0) and without NaN, as pandas requires: "
         "an unsorted key is pandas' error (\"left keys must be sorted\", naming the file and the index where "
         "it goes down), exit 1, unless --sort, which takes keys in any order: each side is sorted stably "
         "first, and the output is still in the left's original order and names the right's original rows "
         "(the join of the stably sorted inputs). --assume-sorted skips the checks (unsorted or NaN keys then "
         "give unspecified matches). NaN keys are refused (\"Merge keys contain null values\") except "
         "with --assume-sorted.\n"
         "--tolerance is parsed exactly for the keys' dtype: an integer for integer keys (1e3 too, not 1.5), "
         "a number rounded to the nearest value of the dtype for floats (inf: any distance); negative or nan "
         "is an error.\n"
         "Groups (pandas' by=): --left-by LB.npy and --right-by RB.npy, both or neither, give each row's "
         "group value (1-D, one per key, int32, uint32, int64 or uint64; the two files may differ in dtype: "
         "values compare as numbers). A left row matches only right rows of its value; a value on one side "
         "only matches nothing. The values are factorized on the host into codes (the sorted unique values "
         "of both files, then a binary search per row: \"factorize_ms\" in --json) that the join takes.\n"
         "Output: --out IDX.npy, int64, one entry per left row: the matched right row, or -1 "
         "(numpy: right_values[idx] where idx >= 0), written to a temporary file named at the end (unnamed "
         "until then where the file system has O_TMPFILE); it must not be an input (also through ./, .., a "
         "symlink or a hard link), a directory, a FIFO or device or a read-only file (checked before any "
         "work), and no output is left by an error, SIGINT or SIGTERM. Without --out the indices go to "
         "stdout, one per line. The summary goes to stderr (left and right rows, groups, matched rows, the "
         "library call's time: CUDA events on a GPU, wall clock on the CPU); --json (needs --out) prints one "
         "JSON object instead (\"result\": the rows written, \"matched\", \"time_ms\"; on an error "
         "{\"error\": ...}).\n"
         "With --device cuda the keys and the group codes are copied to the GPU and the gather map back; "
         "time_ms is the join on the device.\n"
         "--distributed (mpirun -np N gsearch asof --distributed --left L.npy --right R.npy --out IDX.npy): each "
         "rank reads its contiguous slice of each input (of --left-by and --right-by with their keys); the "
         "right's slices in rank order are the right keys, sent to every rank (gsearch::dist::asof_join), and "
         "each rank joins its left rows; --out is required and equals the single-process output. The keys are "
         "checked across the ranks as without it (the same messages, with the file's global index). Group "
         "values are numbered by the distinct right values of all ranks, gathered to every rank (a left value "
         "without a right row matches nothing): --json's \"right_groups\" counts them. The summary (--json: one "
         "object from rank 0) gives the ranks and the slowest rank's read, join and write times.";
}

void add_asof_options(CLI::App& sub, asof_args& a) {
  sub.add_option("--left", a.left, "The left keys (.npy, 1-D, sorted unless --sort)")->required()->type_name("L.npy");
  sub.add_option("--right", a.right, "The right keys (.npy, 1-D, --left's dtype, sorted unless --sort)")
      ->required()
      ->type_name("R.npy");
  sub.add_option("--left-by", a.left_by,
                 "The left rows' group values (.npy, 1-D, an integer dtype, one per left key); needs "
                 "--right-by")
      ->type_name("LB.npy");
  sub.add_option("--right-by", a.right_by,
                 "The right rows' group values (.npy, 1-D, an integer dtype, one per right key); needs "
                 "--left-by")
      ->type_name("RB.npy");
  sub.add_option("--direction", a.direction,
                 "backward: the last right key <= the left key; forward: the first >= it; nearest: the "
                 "closer of the two (backward on a tie)")
      ->check(CLI::IsMember(direction_names))
      ->capture_default_str();
  a.tolerance_opt = sub.add_option("--tolerance", a.tolerance,
                                   "The largest distance of a match, inclusive, in the keys' dtype (>= 0; an "
                                   "integer for integer keys). Default: any distance")
                        ->type_name("X");
  sub.add_flag("--no-exact-matches", a.no_exact,
               "Do not match equal keys: backward takes right keys < the left key, forward > it "
               "(pandas' allow_exact_matches=False)");
  sub.add_flag("--sort", a.sort,
               "Keys in any order: each side is sorted stably first; the output stays in the left's "
               "order and names the right's original rows");
  sub.add_flag("--assume-sorted", a.no_check,
               "Do not check that the keys are sorted and hold no NaN (checked by default: an unsorted "
               "key is an error naming it). Unsorted keys then give unspecified matches");
  sub.add_option("--out", a.out,
                 "The gather map (int64, the left's length: the right row of each left row, -1 for "
                 "none). Without --out the indices go to stdout, one per line")
      ->type_name("IDX.npy");
  add_device_option(sub, a.device);
  sub.add_flag("--json", a.json,
               "Print one JSON object to stdout (command, device, dtype, left, right, groups, direction, "
               "tolerance, \"result\", \"matched\", \"time_ms\") instead of the human summary; needs --out");
  add_distributed_options(sub, a.dist);
}

}  // namespace

command add_asof_command(CLI::App& app) {
  return add_command<asof_args>(
      app, {"asof",
            "As-of join (pandas.merge_asof): each left key's closest right row backward, forward or "
            "nearest, optionally by group: an int64 gather map",
            asof_footer(), add_asof_options, run_asof});
}

}  // namespace gsearch::cli
