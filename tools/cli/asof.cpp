// `gsearch asof`: the as-of join (gsearch/asof.hpp, pandas.merge_asof's semantics) of two key
// columns in .npy files, optionally within groups, on the CPU or a CUDA device; the result is
// the int64 gather map (the right row of each left row, -1 for none).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common.hpp"
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

[[noreturn]] void bad(const std::string& what) { throw failure(exit_bad_input, what); }

const std::vector<std::string> direction_names = {"backward", "forward", "nearest"};

struct asof_args {
  std::string left, right, left_by, right_by, out, direction = "backward", tolerance, device = "auto";
  bool no_exact = false, sort = false, no_check = false, json = false, distributed = false;
  CLI::Option* tolerance_opt = nullptr;
};

// An input file and the option that named it ("--left").
struct named_input {
  std::string option;
  npy::input file;
  named_input(std::string opt, const std::string& path) : option(std::move(opt)), file(path) {}
  std::string label() const { return option + " " + file.path(); }
};

void check_1d(const named_input& in, const char* what) {
  if (in.file.ndim() != 1)
    bad(in.label() + " has shape " + npy::shape_text(in.file.shape()) + ", but asof takes 1-D " + what +
        " (numpy: a.ravel())");
}

bool integer_dtype(dtype t) { return t == dtype::int32 || t == dtype::uint32 || t == dtype::int64 || t == dtype::uint64; }

// ---- the groups: any integer values of both sides, factorized jointly --------------------------

struct group_codes {
  std::vector<int64_t> left, right;
  int64_t groups = 0;
};

// The type both sides' group values are compared in: their own when they are of one dtype, else
// one that holds both exactly (int64; uint64 for uint32 and uint64; __int128 for uint64 beside a
// signed type).
template <class A, class B>
using common_group_t =
    std::conditional_t<std::is_same_v<A, B>, A,
                       std::conditional_t<std::is_same_v<A, uint64_t> || std::is_same_v<B, uint64_t>,
                                          std::conditional_t<std::is_signed_v<A> || std::is_signed_v<B>, __int128,
                                                             uint64_t>,
                                          int64_t>>;

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
  std::string where;
  if (what.find("null values") != std::string::npos) {
    if constexpr (std::is_floating_point_v<T>) {
      const auto nan = std::find_if(k.begin(), k.end(), [](T x) { return x != x; });
      if (nan != k.end()) where = in.label() + " holds NaN at index " + std::to_string(nan - k.begin());
    }
    bad(what + (where.empty() ? "" : " (" + where + ")") +
        ": an as-of join needs a number in every key (numpy: drop them with k[~np.isnan(k)], and their "
        "rows with it)");
  }
  const auto less = [](T p, T q) { return key_less(p, q); };
  const int64_t i = std::is_sorted_until(k.begin(), k.end(), less) - k.begin();
  if (i < int64_t(k.size()))
    where = in.label() + " goes down at index " + std::to_string(i) + ": " + n + "[" + std::to_string(i - 1) +
            "] = " + to_text(k[size_t(i - 1)]) + " > " + n + "[" + std::to_string(i) + "] = " + to_text(k[size_t(i)]);
  bad(what + (where.empty() ? "" : " (" + where + ")") +
      "; pass --sort to join keys in any order (the output stays in the left's order and names the "
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

// The tolerance as the keys' type: an integer for integer keys; negative or NaN is the library's
// error (pandas' words), also for unsigned keys, which cannot hold a negative value.
template <class T>
std::optional<T> parse_tolerance(const asof_args& a) {
  if (!a.tolerance_opt || a.tolerance_opt->count() == 0) return std::nullopt;
  if constexpr (std::is_unsigned_v<T>) {
    const auto d = detail::scan_decimal(a.tolerance);
    if (d && d->negative && !d->digits.empty())
      bad("--tolerance '" + a.tolerance + "': tolerance must be positive");
  }
  return parse_value<T>(a.tolerance, "--tolerance");
}

template <class T>
exit_code asof_typed(const asof_args& a, const target& dev, named_input& l, named_input& r,
                     std::optional<named_input>& lb, std::optional<named_input>& rb) {
  asof_options<T> opts;
  opts.direction = *parse_asof_direction(a.direction);
  opts.allow_exact_matches = !a.no_exact;
  opts.tolerance = parse_tolerance<T>(a);
  opts.check_sorted = !a.no_check;
  opts.sort = a.sort;
  // The library's check of the options (a negative or NaN tolerance: pandas' words), before any
  // data is read: a join of nothing.
  try {
    gsearch::asof_join(gsearch::cpu, span<const T>(), span<const T>(), span<int64_t>(), opts);
  } catch (const gsearch::invalid_argument& e) {
    bad("--tolerance '" + a.tolerance + "': " + e.what());
  }

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

exit_code run_asof(const asof_args& a) {
  if (a.distributed)
    bad("gsearch asof is not yet distributed (the commands that run --distributed are search, find, sort "
        "and join); run it in one process, without mpirun and --distributed");
  check_paths({{"--left", a.left}, {"--right", a.right}, {"--left-by", a.left_by}, {"--right-by", a.right_by}},
              {{"--out", a.out}});
  if (a.left_by.empty() != a.right_by.empty())
    bad(std::string(a.left_by.empty() ? "--right-by" : "--left-by") +
        " without " + (a.left_by.empty() ? "--left-by" : "--right-by") +
        ": groups need the group values of both sides (pandas' left_by and right_by), or neither");
  if (a.sort && a.no_check)
    bad("--sort and --assume-sorted do not go together: --sort takes keys in any order, --assume-sorted "
        "vouches that they are sorted already");
  if (a.json && a.out.empty()) bad("--json needs --out (without --out the indices go to stdout)");
  const target dev = resolve_device(a.device);

  named_input l("--left", a.left), r("--right", a.right);
  check_1d(l, "keys");
  check_1d(r, "keys");
  if (l.file.type() != r.file.type())
    bad(l.label() + " is " + std::string(name(l.file.type())) + " but " + r.label() + " is " +
        std::string(name(r.file.type())) +
        ": the keys of an as-of join are of one dtype (pandas: \"incompatible merge keys\"; gsearch never "
        "casts: convert one with a.astype(...))");
  std::optional<named_input> lb, rb;
  if (!a.left_by.empty()) {
    lb.emplace("--left-by", a.left_by);
    rb.emplace("--right-by", a.right_by);
    for (const auto* p : {&*lb, &*rb}) {
      const named_input& keys = p == &*lb ? l : r;
      check_1d(*p, "group values");
      if (!integer_dtype(p->file.type()))
        bad(p->label() + " is " + std::string(name(p->file.type())) +
            ", but group values are integers (int32, uint32, int64 or uint64; numpy: codes from "
            "pd.factorize or np.unique(..., return_inverse=True))");
      if (p->file.size() != keys.file.size())
        bad(p->label() + " has " + std::to_string(p->file.size()) + " values but " + keys.label() + " has " +
            std::to_string(keys.file.size()) + " keys: one group value per key");
    }
  }
  return visit_key_type(l.file.type(), [&]<class T>() { return asof_typed<T>(a, dev, l, r, lb, rb); });
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
         "--distributed: not yet (asof runs in one process).";
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
  // Refused with a message of its own (not yet distributed); hidden from --help, and not among
  // the commands main.cpp names as taking --distributed.
  sub.add_flag("--distributed", a.distributed, "Not yet: asof runs in one process")->group("");
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
