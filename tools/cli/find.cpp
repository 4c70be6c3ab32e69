// `gsearch find`: search of unsorted data in a .npy file (find first / any / random, count, find
// all, isin), on the CPU or a CUDA device.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
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

// The CLI's modes: the library's find_mode values, then find_all and isin.
enum class mode_kind { first, any, random, count, all, isin };
const std::vector<std::string> mode_names = {"first", "any", "random", "count", "all", "isin"};
std::string_view to_string(mode_kind m) { return mode_names.at(size_t(m)); }
bool scalar(mode_kind m) { return m != mode_kind::all && m != mode_kind::isin; }

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (int i = 0; i <= int(find_op::in_range); ++i) v.emplace_back(gsearch::to_string(find_op(i)));
  return v;
}
std::vector<std::string> strategy_names() {
  std::vector<std::string> v;
  for (int i = 0; i <= int(find_strategy::one_per_thread); ++i)
    v.emplace_back(gsearch::to_string(find_strategy(i)));
  return v;
}
std::vector<std::string> method_names() {
  std::vector<std::string> v;
  for (int i = 0; i <= int(isin_method::hash); ++i) v.emplace_back(gsearch::to_string(isin_method(i)));
  return v;
}

struct find_args {
  std::string data, value, values, hi, out;
  std::string mode, op = "eq", strategy = "auto", method = "auto", device = "auto";
  int64_t per_thread = 0;
  std::string seed = "0";
  bool invert = false, json = false;
  distributed_flags dist;
  // The options as given (or not) on the command line.
  CLI::Option *value_opt = nullptr, *hi_opt = nullptr, *op_opt = nullptr, *strategy_opt = nullptr,
              *per_thread_opt = nullptr, *seed_opt = nullptr, *invert_opt = nullptr, *method_opt = nullptr;
};

// What the command line asks for, checked before any file is opened.
struct plan {
  mode_kind mode = mode_kind::first;
  find_op op = find_op::eq;
  find_strategy strategy = find_strategy::auto_;
  isin_method method = isin_method::auto_;
  uint64_t seed = 0;
};

[[noreturn]] void bad(const std::string& what) { throw failure(exit_bad_input, what); }

plan check_options(const find_args& a) {
  plan p;
  const bool by_value = a.value_opt->count() > 0, by_values = !a.values.empty();
  if (!by_value && !by_values)
    bad("give --value V (the value to look for) or --values N.npy (the test elements of "
        "--mode isin)");
  if (a.mode.empty()) {
    p.mode = by_values ? mode_kind::isin : mode_kind::first;
  } else {
    p.mode = mode_kind(std::find(mode_names.begin(), mode_names.end(), a.mode) - mode_names.begin());
  }
  const std::string mode = "--mode " + std::string(to_string(p.mode));
  if (p.mode == mode_kind::isin) {
    if (!by_values) bad(mode + " needs --values N.npy (the test elements), not --value");
    for (const CLI::Option* o : {a.op_opt, a.hi_opt, a.strategy_opt, a.per_thread_opt, a.seed_opt})
      if (o->count() > 0 && !(o == a.strategy_opt && a.strategy == "auto"))
        bad(o->get_name() + " does not apply to " + mode + " (it tests membership among --values)");
  } else {
    if (by_values) bad("--values is for --mode isin; " + mode + " looks for one --value");
    for (const CLI::Option* o : {a.invert_opt, a.method_opt})
      if (o->count() > 0) bad(o->get_name() + " is an option of --mode isin, not of " + mode);
    if (auto op = find_op_from_string(a.op))
      p.op = *op;
    else
      bad("unknown --op '" + a.op + "'");
    if (p.op == find_op::in_range && a.hi_opt->count() == 0)
      bad("--op in needs --hi H: it matches value <= x < hi");
    if (p.op != find_op::in_range && a.hi_opt->count() > 0)
      bad("--hi is the upper end of --op in, not of --op " + a.op);
    if (auto s = find_strategy_from_string(a.strategy))
      p.strategy = *s;
    else
      bad("unknown --strategy '" + a.strategy + "'");
    if (p.strategy != find_strategy::auto_ && p.mode != mode_kind::first && p.mode != mode_kind::any &&
        p.mode != mode_kind::count)
      bad("--strategy " + a.strategy + " is a study of --mode first, any and count, not of " + mode +
          " (which runs the tuned scan: leave --strategy auto)");
    if (a.per_thread_opt->count() > 0) {
      if (a.per_thread < 0)
        bad("--per-thread " + std::to_string(a.per_thread) +
            " is negative (the elements per thread k; 0 = the default, 12)");
      if (p.strategy != find_strategy::strided && p.strategy != find_strategy::coalesced &&
          p.strategy != find_strategy::unrolled)
        bad("--per-thread is the k of --strategy strided, coalesced and unrolled, not of "
            "--strategy " +
            a.strategy);
    }
    if (a.seed_opt->count() > 0 && p.mode != mode_kind::random)
      bad("--seed is the seed of --mode random, not of " + mode);
    p.seed = parse_seed(a.seed);
  }
  if (scalar(p.mode) && !a.out.empty())
    bad("--out is for --mode all and isin; " + mode + " prints its result (use --json for a JSON object)");
  if (!scalar(p.mode) && a.out.empty())
    bad(mode + " needs --out OUT.npy (" +
        (p.mode == mode_kind::all ? "the int64 indices of the matches" : "the bool mask") + ")");
  for (int i = 0; i <= int(isin_method::hash); ++i)
    if (gsearch::to_string(isin_method(i)) == a.method) p.method = isin_method(i);
  return p;
}

// The data and, for isin, the test elements: their headers read and checked.
struct inputs {
  npy::input data;
  std::optional<npy::input> values;
};

void check_inputs(const inputs& in) {
  if (in.data.ndim() != 1)
    bad("--data " + in.data.path() + " has shape " + npy::shape_text(in.data.shape()) +
        ", but find searches 1-D data (numpy: a.ravel())");
  if (in.values && in.values->type() != in.data.type())
    bad("--data " + in.data.path() + " is " + std::string(name(in.data.type())) + " but --values " +
        in.values->path() + " is " + std::string(name(in.values->type())) +
        ": gsearch never casts (numpy would promote; convert one with a.astype(...))");
}

// What ran, for the summary.
struct outcome {
  int64_t result = 0;  // the index or count; for all, the matches; for isin, the number of true
  double ms = 0;       // the library call (CUDA: events around it; CPU: wall clock)
};

template <class T>
struct typed_request {
  predicate<T> pred;
  find_options options;
  isin_options isin;
};

// The scalar modes: one find() call.
template <class T>
outcome run_scalar(const target& dev, find_mode mode, const std::vector<T>& data, const typed_request<T>& r) {
  outcome o;
  if (dev.cuda) {
    const device_vector<T> d_data{span<const T>(data)};
    const device_vector<int64_t> d_result(1);
    o.ms = elapsed_ms(gsearch::cuda, [&] {
      gsearch::find(gsearch::cuda, mode, span<const T>(d_data), r.pred, d_result.view(), r.options);
    });
    d_result.copy_to(span<int64_t>(&o.result, 1));
  } else {
    o.ms = wall_ms([&] {
      gsearch::find(gsearch::cpu, mode, span<const T>(data), r.pred, span<int64_t>(&o.result, 1), r.options);
    });
  }
  return o;
}

// --mode all: the indices, on the host.
template <class T>
outcome run_all(const target& dev, const std::vector<T>& data, const typed_request<T>& r,
                std::vector<int64_t>& indices) {
  outcome o;
  if (dev.cuda) {
    const device_vector<T> d_data{span<const T>(data)};
    device_vector<int64_t> d_indices;
    o.ms = elapsed_ms(gsearch::cuda, [&] {
      o.result = gsearch::find_all(gsearch::cuda, span<const T>(d_data), r.pred, [&](int64_t c) {
        d_indices = device_vector<int64_t>(c);
        return d_indices.data();
      });
    });
    indices.resize(size_t(o.result));
    d_indices.copy_to(span<int64_t>(indices));
  } else {
    o.ms = wall_ms([&] {
      o.result = gsearch::find_all(gsearch::cpu, span<const T>(data), r.pred, [&](int64_t c) {
        indices.resize(size_t(c));
        return indices.data();
      });
    });
  }
  return o;
}

// --mode isin: the mask, on the host.
template <class T>
outcome run_isin(const target& dev, const std::vector<T>& data, const std::vector<T>& tests,
                 const typed_request<T>& r, std::unique_ptr<bool[]>& mask) {
  outcome o;
  const int64_t n = int64_t(data.size());
  mask.reset(new bool[size_t(n)]());  // zeroed: its pages are touched before the timed call
  const span<bool> host_mask(mask.get(), n);
  if (dev.cuda) {
    const device_vector<T> d_data{span<const T>(data)}, d_tests{span<const T>(tests)};
    const device_vector<bool> d_mask(n);
    o.ms = elapsed_ms(gsearch::cuda, [&] {
      gsearch::isin(gsearch::cuda, span<const T>(d_data), span<const T>(d_tests), d_mask.view(), r.isin);
    });
    d_mask.copy_to(host_mask);
  } else {
    o.ms = wall_ms(
        [&] { gsearch::isin(gsearch::cpu, span<const T>(data), span<const T>(tests), host_mask, r.isin); });
  }
  o.result = std::count(mask.get(), mask.get() + n, true);
  return o;
}

// "x == 42", "42 <= x < 50".
template <class T>
std::string predicate_text(const predicate<T>& p) {
  if (p.op == find_op::in_range) return to_text(p.value) + " <= x < " + to_text(p.hi);
  return "x " + std::string(to_symbol(p.op)) + " " + to_text(p.value);
}

template <class T>
exit_code find_typed(const find_args& a, const plan& p, const target& dev, inputs& in) {
  typed_request<T> r;
  if (p.mode != mode_kind::isin) {
    r.pred.op = p.op;
    r.pred.value = parse_value<T>(a.value, "--value");
    r.pred.hi = p.op == find_op::in_range ? parse_value<T>(a.hi, "--hi") : r.pred.value;
    r.options.strategy = p.strategy;
    r.options.per_thread = a.per_thread;  // the library runs k >= n as k = n (same result)
    r.options.seed = p.seed;
  }
  r.isin.invert = a.invert;
  r.isin.method = p.method;

  const std::vector<T> data = in.data.read<T>();
  const std::vector<T> tests = in.values ? in.values->read<T>() : std::vector<T>{};
  const int64_t n = int64_t(data.size());

  outcome o;
  std::vector<int64_t> indices;
  std::unique_ptr<bool[]> mask;
  progress::phase("finding");
  switch (p.mode) {
    case mode_kind::all:
      o = run_all(dev, data, r, indices);
      break;
    case mode_kind::isin:
      o = run_isin(dev, data, tests, r, mask);
      break;
    default:
      o = run_scalar(dev, find_mode(int(p.mode)), data, r);
      break;
  }
  // All checks are behind us: the one output file is written (atomically) last.
  if (p.mode == mode_kind::all) npy::save(a.out, span<const int64_t>(indices));
  if (p.mode == mode_kind::isin) npy::save_bool(a.out, span<const bool>(mask.get(), n));

  const bool study = p.strategy != find_strategy::auto_;
  const int64_t k = p.strategy == find_strategy::one_per_thread ? 1 : a.per_thread > 0 ? a.per_thread : 12;
  const std::string device = dev.cuda ? "cuda" : "cpu";
  const std::string dtype(key_traits<T>::name);
  if (a.json) {
    using json = nlohmann::ordered_json;
    const bool isin = p.mode == mode_kind::isin;
    json j = {{"command", "find"},
              {"device", device},
              {"device_name", dev.name},
              {"mode", to_string(p.mode)},
              {"op", isin ? json(nullptr) : json(gsearch::to_string(p.op))},
              {"value", isin ? json(nullptr) : json(to_text(r.pred.value))},
              {"hi", p.op == find_op::in_range && !isin ? json(to_text(r.pred.hi)) : json(nullptr)},
              {"dtype", dtype},
              {"n", n},
              {"strategy", isin ? json(nullptr) : json(gsearch::to_string(p.strategy))},
              {"per_thread", study ? json(k) : json(nullptr)},
              {"seed", p.mode == mode_kind::random ? json(r.options.seed) : json(nullptr)},
              {"values", isin ? json(int64_t(tests.size())) : json(nullptr)},
              {"method", isin ? json(gsearch::to_string(p.method)) : json(nullptr)},
              {"invert", isin ? json(a.invert) : json(nullptr)},
              {"out", a.out.empty() ? json(nullptr) : json(a.out)},
              {"out_dtype", p.mode == mode_kind::all ? json("int64")
                            : isin                   ? json("bool")
                                                     : json(nullptr)},
              {"out_shape", p.mode == mode_kind::all ? json::array({o.result})
                            : isin                   ? json::array({n})
                                                     : json(nullptr)},
              {"result", o.result},
              {"time_ms", o.ms}};
    print(j.dump() + "\n");
    return exit_ok;
  }

  // The human summary: on stderr, always (stdout carries the result, when it is not in --out).
  std::string what = "find: " + std::string(to_string(p.mode)) + " ";
  if (p.mode == mode_kind::isin)
    what += "of " + std::to_string(n) + " " + dtype + " values in " + std::to_string(tests.size()) +
            " test elements" + (a.invert ? " (inverted)" : "") +
            ", method=" + std::string(gsearch::to_string(p.method));
  else
    what += predicate_text(r.pred) + " in " + std::to_string(n) + " " + dtype + " values" +
            (p.mode == mode_kind::random ? ", seed=" + std::to_string(r.options.seed) : "") +
            ", strategy=" + std::string(gsearch::to_string(p.strategy)) +
            (study ? ", per-thread=" + std::to_string(k) : "");
  char time[64];
  std::snprintf(time, sizeof time, "%.3f ms", o.ms);
  what += ", device=" + device + " (" + dev.name + "): ";
  if (p.mode == mode_kind::all)
    note(what + std::to_string(o.result) + " matches -> " + a.out + " (int64), " + time);
  else if (p.mode == mode_kind::isin)
    note(what + std::to_string(o.result) + " true -> " + a.out + " (bool), " + time);
  else {
    print(std::to_string(o.result) + "\n");
    note(what + time);
  }
  return exit_ok;
}

// --distributed (distributed.hpp): the modes but random, the tuned scan only.
distributed::find_request distributed_request(const find_args& a, const plan& p) {
  distributed::find_request r;
  r.device = a.device;
  r.per_rank = a.dist.per_rank;
  r.json = a.json;
  r.refused = {{"--mode random", p.mode == mode_kind::random},
               {"--strategy " + a.strategy, p.strategy != find_strategy::auto_},
               {"--per-thread", a.per_thread_opt->count() > 0}};
  r.data = a.data;
  r.values = a.values;
  r.out = a.out;
  r.mode = to_string(p.mode);
  r.value = a.value;
  r.hi = a.hi;
  r.op = p.op;
  r.isin = {a.invert, p.method};
  return r;
}

exit_code run_find(const find_args& a) {
  if (a.dist.on) return distributed::find([&] { return distributed_request(a, check_options(a)); });
  check_paths({{"--data", a.data}, {"--values", a.values}}, {{"--out", a.out}});
  const plan p = check_options(a);
  const target dev = resolve_device(a.device);
  inputs in{npy::input(a.data), std::nullopt};
  if (!a.values.empty()) in.values.emplace(a.values);
  check_inputs(in);
  return visit_key_type(in.data.type(), [&]<class T>() { return find_typed<T>(a, p, dev, in); });
}

std::string find_footer() {
  return "Data is a little-endian 1-D .npy file of " + dtype_list(" or ") +
         ". "
         "A match is `x op value` (--op, --value, and --hi for --op in), compared as numpy compares "
         "elementwise: -0.0 == 0.0, and a NaN element matches only ne.\n"
         "Modes first, any, random and count print their result (an index, -1 when nothing "
         "matches, or a count) on stdout, one line; the summary goes to stderr. Modes all and isin "
         "write --out (int64 indices, ascending; a bool mask as np.isin returns, with the data's "
         "length), and stdout stays empty; the summary goes to stderr in every mode. With --json, stdout is one JSON object whose "
         "\"result\" is the index, the count, the number of matches (all) or of true (isin).\n"
         "--value (and --hi) is parsed exactly for the data's dtype, and a value the dtype cannot "
         "hold is an error: integers are written 42, -7, or 1e3 / 2.0 when that is an integer in "
         "range (not 1.5, nan, inf, 3e9 for int32, -1 for unsigned types); floats are decimal or "
         "scientific, nan, inf or -0.0, rounded to the nearest value of the dtype (a non-zero value "
         "that rounds to infinity or to 0, like 1e39 or 1e-50 for float32, is an error). A negative value is "
         "written --value -7 or "
         "--value=-7.\n"
         "isin is np.isin(data, values, invert=...): NaN is never a member, and -0.0 and 0.0 are "
         "the same element.\n"
         "Every option is checked before any work: an option that does not apply to the mode "
         "(--seed without --mode random, --invert without isin, ...) is an error, not ignored. The "
         "output goes to a temporary file named at the end (unnamed until then where the file system has O_TMPFILE: even a SIGKILL leaves nothing); it must not be an input (also "
         "through ./, .., a symlink or a hard link), a directory, a FIFO or device or a read-only "
         "file (all checked before any work), and no output is left by an error, SIGINT or SIGTERM. "
         "A result printed to a stdout that cannot be written (a full disk, closed) is exit 2.\n"
         "--distributed (mpirun -np N gsearch find --distributed ...): modes first, any, count, "
         "all and isin; the data (and isin's --values) are split into N contiguous slices, one "
         "per rank, and the result, the indices or the mask are those of the single-process "
         "command (printed or written by rank 0). --mode random, --strategy and --per-thread do "
         "not apply.";
}

void add_find_options(CLI::App& sub, find_args& a) {
  sub.add_option("--data", a.data, "The data to search (.npy, 1-D)")->required()->type_name("D.npy");
  a.value_opt = sub.add_option("--value", a.value,
                               "The value compared with each element (the data's dtype; see "
                               "below). Default mode: first")
                    ->type_name("V");
  sub.add_option("--values", a.values,
                 "The test elements of --mode isin (.npy, the data's dtype, any shape: a set). "
                 "Default mode with --values: isin")
      ->type_name("N.npy")
      ->excludes(a.value_opt);
  sub.add_option("--mode", a.mode,
                 "first: the lowest matching index (-1: none); any: some matching index, the "
                 "fastest to find; random: a uniformly random matching index drawn from --seed "
                 "(the same on CPU and GPU); count: the number of matches; all: every matching "
                 "index to --out; isin: np.isin(data, values) as a bool mask to --out")
      ->check(CLI::IsMember(mode_names))
      ->type_name("MODE");
  a.op_opt = sub.add_option("--op", a.op,
                            "The predicate: eq (x == value), ne, lt (x < value), le, gt, ge, "
                            "in (value <= x < hi)")
                 ->check(CLI::IsMember(op_names()))
                 ->capture_default_str();
  a.hi_opt = sub.add_option("--hi", a.hi, "The upper end (excluded) of --op in")->type_name("H");
  a.strategy_opt =
      sub.add_option("--strategy", a.strategy,
                     "How the GPU reads the data: auto (the tuned scan with early exit), or, for "
                     "study, seeds/001's kernels with k elements per thread: strided, coalesced, "
                     "unrolled, one-per-thread (k = 1); for first, any and count only. On the "
                     "CPU they run as a simulated grid (same results)")
          ->check(CLI::IsMember(strategy_names()))
          ->capture_default_str();
  a.per_thread_opt = sub.add_option("--per-thread", a.per_thread,
                                    "k, the elements per thread of --strategy strided, "
                                    "coalesced and unrolled (0 = 12)")
                         ->type_name("K");
  a.seed_opt = sub.add_option("--seed", a.seed, "The seed of --mode random (0 to 2^64 - 1)")
                   ->type_name("S")
                   ->capture_default_str();
  a.invert_opt = sub.add_flag("--invert", a.invert,
                              "isin: true where the element is NOT among --values (np.isin's "
                              "invert=True)");
  a.method_opt = sub.add_option("--method", a.method,
                                "isin: auto, sorted (sort the test elements, binary search "
                                "each element) or hash (a hash set of the test elements)")
                     ->check(CLI::IsMember(method_names()))
                     ->capture_default_str();
  sub.add_option("--out", a.out,
                 "The output of --mode all (int64 indices, 1-D) and isin (bool mask, the "
                 "data's length); required for those modes, an error for the others")
      ->type_name("OUT.npy");
  add_device_option(sub, a.device);
  sub.add_flag("--json", a.json,
               "Print one JSON object to stdout (\"result\", mode, op, value, dtype, n, device, "
               "time_ms, ...) instead of the result and the human summary");
  add_distributed_options(sub, a.dist);
}

}  // namespace

command add_find_command(CLI::App& app) {
  return add_command<find_args>(
      app, {"find", "Search unsorted data: the first / any / a random match, count, all matches, isin",
            find_footer(), add_find_options, run_find});
}

}  // namespace gsearch::cli
