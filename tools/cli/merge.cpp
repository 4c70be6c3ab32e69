// `gsearch merge`, `gsearch sort`, `gsearch set` and `gsearch join`: the merge-like operations
// (gsearch/merge.hpp) on .npy files, on the CPU or a CUDA device.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

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

using json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& what) { throw failure(exit_bad_input, what); }

// An input file and the option that named it ("--a").
struct named_input {
  std::string option;
  npy::input file;
  named_input(std::string opt, const std::string& path) : option(std::move(opt)), file(path) {}
  std::string label() const { return option + " " + file.path(); }
};

// Keys must be 1-D: `command` names the subcommand in the message.
void check_1d(const named_input& in, const std::string& command) {
  if (in.file.ndim() != 1)
    bad(in.label() + " has shape " + npy::shape_text(in.file.shape()) + ", but " + command +
        " takes 1-D arrays (numpy: a.ravel())");
}

// Two key inputs of one dtype.
void check_same_dtype(const named_input& a, const named_input& b) {
  if (a.file.type() != b.file.type())
    bad(a.label() + " is " + std::string(name(a.file.type())) + " but " + b.label() + " is " +
        std::string(name(b.file.type())) +
        ": gsearch never casts (numpy would promote; convert one with a.astype(...))");
}

// A values file: 1-D int64 with one value per key.
void check_values(const named_input& v, const named_input& keys) {
  if (v.file.ndim() != 1)
    bad(v.label() + " has shape " + npy::shape_text(v.file.shape()) +
        ", but values are 1-D (one per key)");
  if (v.file.type() != dtype::int64)
    bad(v.label() + " is " + std::string(name(v.file.type())) +
        ", but values are int64 (any 8-byte payload: numpy v.view(np.int64), or indices to "
        "gather by)");
  if (v.file.size() != keys.file.size())
    bad(v.label() + " has " + std::to_string(v.file.size()) + " values but " + keys.label() +
        " has " + std::to_string(keys.file.size()) + " keys: one value per key");
}

// The sorted check of an input (the library's), with the first index where it goes down named.
template <class T>
void check_sorted(const std::vector<T>& x, const named_input& in) {
  if (gsearch::is_sorted(gsearch::cpu, span<const T>(x))) return;
  const auto less = [](T p, T q) { return key_less(p, q); };
  const int64_t i = std::is_sorted_until(x.begin(), x.end(), less) - x.begin();
  const std::string n = in.option.substr(2);  // "--a" -> "a"
  std::string what = in.option + " is not sorted at index " + std::to_string(i) + " of " +
                     in.file.path() + ": " + n + "[" + std::to_string(i - 1) +
                     "] = " + to_text(x[size_t(i - 1)]) + " > " + n + "[" + std::to_string(i) +
                     "] = " + to_text(x[size_t(i)]);
  if constexpr (std::is_floating_point_v<T>) what += " (gsearch orders NaN last and -0.0 == 0.0)";
  bad(what + "; sort it (gsearch sort), or pass --assume-sorted");
}

// The two sorted key inputs of merge, set and join ("--a" and "--b", "--left" and "--right"),
// opened and checked: 1-D (`command` names the subcommand in the message), of one dtype.
struct key_inputs {
  named_input x, y;
  key_inputs(const std::string& command, std::string x_option, const std::string& x_path,
             std::string y_option, const std::string& y_path)
      : x(std::move(x_option), x_path), y(std::move(y_option), y_path) {
    check_1d(x, command);
    check_1d(y, command);
    check_same_dtype(x, y);
  }
  // The CLI's sorted check of both (naming the input), unless --assume-sorted (--no-check).
  template <class T>
  void check_both_sorted(const std::vector<T>& kx, const std::vector<T>& ky, bool no_check) const {
    if (no_check) return;
    check_sorted(kx, x);
    check_sorted(ky, y);
  }
};

// What ran, for the summary.
struct outcome {
  int64_t result = 0;  // the output's element (or row) count
  double ms = 0;       // the library call (CUDA: events around it; CPU: wall clock)
};

std::string ms_text(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

// The --json summary, with the fields every summary ends with: the result and the time.
void print_json(json& j, const outcome& o) {
  j["result"] = o.result;
  j["time_ms"] = o.ms;
  print(j.dump() + "\n");
}

// The human summary: one line on stderr (stdout holds results only: these commands write theirs
// to files).
template <class... Parts>
void print_line(const Parts&... parts) {
  std::ostringstream line;
  (line << ... << parts);
  note(line.str());
}

// The fields every summary starts with.
json summary_head(const char* command, const target& dev, std::string_view dtype) {
  return {{"command", command},
          {"device", dev.cuda ? "cuda" : "cpu"},
          {"device_name", dev.name},
          {"dtype", dtype}};
}

std::string device_text(const target& dev) {
  return std::string("device=") + (dev.cuda ? "cuda" : "cpu") + " (" + dev.name + ")";
}

// The library's own check is off: the CLI checked (and named the input) already, or --assume-sorted (--no-check).
merge_options unchecked() {
  merge_options o;
  o.check_sorted = false;
  return o;
}

// ---- the options they share ---------------------------------------------------------------------

const std::string inputs_footer =
    "Inputs are little-endian 1-D .npy files of one dtype: " + dtype_list(" or ") +
    " (gsearch never casts; values are int64). Floats are in numpy's sort order: NaN "
    "last, all NaNs equal, -0.0 == 0.0.\n";
constexpr const char* outputs_footer =
    "Outputs go to temporary files named at the end, all of them or none (unnamed until then where the file system has O_TMPFILE: even a SIGKILL leaves nothing) (through a symlink, "
    "to its target; an existing file keeps its mode). Refused before anything is read: an output "
    "that is the same file as an input or another output (also through ./, .., a symlink or a "
    "hard link), a directory, a FIFO or device, a read-only file, or one whose directory is "
    "missing or not writable. No output is left by an error, SIGINT or SIGTERM. The summary goes "
    "to stderr and stdout stays empty (--json: stdout is one JSON object with \"result\", the output's length, and \"time_ms\", "
    "the library call's time: CUDA events on a GPU, wall clock on the CPU; on an error, "
    "{\"error\": ...}); a stdout that cannot be written (a full disk, closed) is exit 2.";

// A subcommand's footer: its own text between the inputs' and the outputs' paragraphs.
std::string family_footer(const char* own) { return inputs_footer + own + outputs_footer; }

void add_a_and_b(CLI::App& sub, std::string& a, std::string& b) {
  sub.add_option("--a", a, "The first sorted input (.npy, 1-D)")->required()->type_name("A.npy");
  sub.add_option("--b", b, "The second sorted input (.npy, 1-D, --a's dtype)")
      ->required()
      ->type_name("B.npy");
}

// A subcommand's options: its own (`own`), then --assume-sorted (every one but sort, whose input
// need not be sorted; `checked` names the inputs it checks; --no-check, its older name, is the
// same flag, as on search), --device and --json.
template <class Args>
std::function<void(CLI::App&, Args&)> family_options(void (*own)(CLI::App&, Args&),
                                                     const char* checked = nullptr) {
  return [own, checked](CLI::App& sub, Args& a) {
    own(sub, a);
    if constexpr (requires { a.no_check; })
      sub.add_flag("--assume-sorted,--no-check", a.no_check,
                   "Do not check that " + std::string(checked) +
                       " are sorted (checked by default: an unsorted input is an error naming it "
                       "and the index where it goes down). Unsorted inputs then give unspecified "
                       "results. --no-check is the same flag (its older name), as on search");
    add_device_option(sub, a.device);
    sub.add_flag("--json", a.json,
                 "Print one JSON object to stdout (command, device, dtype, sizes, outputs, "
                 "\"result\", \"time_ms\") instead of the human summary");
  };
}

// ---- gsearch merge ------------------------------------------------------------------------------

struct merge_args {
  std::string a, b, out, a_values, b_values, out_values, device = "auto";
  bool no_check = false, json = false;
};

template <class T>
outcome run_merge(const target& dev, const std::vector<T>& a, const std::vector<T>& b,
                  const std::vector<int64_t>& av, const std::vector<int64_t>& bv, bool with_values,
                  std::vector<T>& out, std::vector<int64_t>& ov) {
  outcome o;
  o.result = int64_t(out.size());
  if (dev.cuda) {
    const auto d_a = to_device(a), d_b = to_device(b);
    const device_vector<T> d_out(int64_t(out.size()));
    if (with_values) {
      const auto d_av = to_device(av), d_bv = to_device(bv);
      const device_vector<int64_t> d_ov(int64_t(ov.size()));
      o.ms = elapsed_ms(gsearch::cuda, [&] {
        gsearch::merge(gsearch::cuda, span<const T>(d_a), span<const int64_t>(d_av),
                       span<const T>(d_b), span<const int64_t>(d_bv), d_out.view(), d_ov.view(),
                       unchecked());
      });
      d_ov.copy_to(span<int64_t>(ov));
    } else {
      o.ms = elapsed_ms(gsearch::cuda, [&] {
        gsearch::merge(gsearch::cuda, span<const T>(d_a), span<const T>(d_b), d_out.view(),
                       unchecked());
      });
    }
    d_out.copy_to(span<T>(out));
  } else {
    o.ms = wall_ms([&] {
      if (with_values)
        gsearch::merge(gsearch::cpu, span<const T>(a), span<const int64_t>(av), span<const T>(b),
                       span<const int64_t>(bv), span<T>(out), span<int64_t>(ov), unchecked());
      else
        gsearch::merge(gsearch::cpu, span<const T>(a), span<const T>(b), span<T>(out), unchecked());
    });
  }
  return o;
}

exit_code run_merge_command(const merge_args& a) {
  check_paths(
      {{"--a", a.a}, {"--b", a.b}, {"--a-values", a.a_values}, {"--b-values", a.b_values}},
      {{"--out", a.out}, {"--out-values", a.out_values}});
  const int given = int(!a.a_values.empty()) + int(!a.b_values.empty()) + int(!a.out_values.empty());
  if (given != 0 && given != 3)
    bad("the key-value merge needs all three of --a-values, --b-values and --out-values (one "
        "int64 value per key)");
  const bool with_values = given == 3;
  const target dev = resolve_device(a.device);
  key_inputs in("merge", "--a", a.a, "--b", a.b);
  std::optional<named_input> in_av, in_bv;
  if (with_values) {
    in_av.emplace("--a-values", a.a_values);
    in_bv.emplace("--b-values", a.b_values);
    check_values(*in_av, in.x);
    check_values(*in_bv, in.y);
  }
  return visit_key_type(in.x.file.type(), [&]<class T>() {
    const std::vector<T> ka = in.x.file.read<T>();
    const std::vector<T> kb = in.y.file.read<T>();
    std::vector<int64_t> av, bv;
    if (with_values) {
      av = in_av->file.read<int64_t>();
      bv = in_bv->file.read<int64_t>();
    }
    progress::phase("checking that the inputs are sorted");
    in.check_both_sorted(ka, kb, a.no_check);
    progress::phase("merging");
    std::vector<T> out(ka.size() + kb.size());
    std::vector<int64_t> ov(with_values ? out.size() : 0);
    const outcome o = run_merge(dev, ka, kb, av, bv, with_values, out, ov);
    // Both files are written before either is renamed into place.
    npy::staged_file keys(a.out, dtype_of<T>(), out.data(), int64_t(out.size()));
    std::optional<npy::staged_file> values;
    if (with_values) values.emplace(a.out_values, dtype::int64, ov.data(), int64_t(ov.size()));
    keys.commit();
    if (values) values->commit();

    const std::string dt(key_traits<T>::name);
    if (a.json) {
      json j = summary_head("merge", dev, dt);
      j["a"] = int64_t(ka.size());
      j["b"] = int64_t(kb.size());
      j["values"] = with_values;
      j["checked"] = !a.no_check;
      j["out"] = a.out;
      j["out_values"] = with_values ? json(a.out_values) : json(nullptr);
      print_json(j, o);
    } else {
      print_line("merge: ", ka.size(), " + ", kb.size(), " ", dt, " keys",
                 with_values ? " with int64 values" : "", ", ", device_text(dev), ": ", o.result,
                 " keys -> ", a.out, with_values ? ", values -> " + a.out_values : "", ", ",
                 ms_text(o.ms));
    }
    return exit_ok;
  });
}

void add_merge_options(CLI::App& sub, merge_args& a) {
  add_a_and_b(sub, a.a, a.b);
  sub.add_option("--out", a.out, "The merged keys (--a's dtype)")->required()->type_name("M.npy");
  sub.add_option("--a-values", a.a_values, "int64 values of --a's keys (one per key)")->type_name("AV.npy");
  sub.add_option("--b-values", a.b_values, "int64 values of --b's keys (one per key)")->type_name("BV.npy");
  sub.add_option("--out-values", a.out_values,
                 "The values of the merged keys: out_values[k] is the value of the key out[k] "
                 "came from")
      ->type_name("MV.npy");
}
const subcommand_spec<merge_args> merge_spec{
    "merge", "Merge two sorted arrays (stable: ties take --a's first), keys or key-value pairs",
    family_footer("The output is the merge of sorted --a and --b, of length len(a) + len(b): "
                  "np.sort(np.concatenate([a, b]), kind='stable') without the sort. With "
                  "--a-values, --b-values and --out-values (all three, int64, one per key), each "
                  "key's value goes with it.\n"),
    family_options(add_merge_options, "--a and --b"), run_merge_command};

// ---- gsearch sort -------------------------------------------------------------------------------

struct sort_args {
  std::string data, out, values, out_values, argsort, device = "auto";
  bool json = false;
  distributed_flags dist;
};

// Sorts keys into out (if wanted); carries `values` (when given) into out_values.
template <class T>
outcome run_sort(const target& dev, const std::vector<T>& keys, const std::vector<int64_t>* values,
                 std::vector<T>& out, std::vector<int64_t>& out_values) {
  outcome o;
  o.result = int64_t(keys.size());
  if (dev.cuda) {
    const auto d_keys = to_device(keys);
    const device_vector<T> d_out(int64_t(keys.size()));
    if (values) {
      const auto d_values = to_device(*values);
      const device_vector<int64_t> d_ov(int64_t(keys.size()));
      o.ms = elapsed_ms(gsearch::cuda, [&] {
        gsearch::sort(gsearch::cuda, span<const T>(d_keys), span<const int64_t>(d_values),
                      d_out.view(), d_ov.view());
      });
      d_ov.copy_to(span<int64_t>(out_values));
    } else {
      o.ms = elapsed_ms(gsearch::cuda, [&] {
        gsearch::sort(gsearch::cuda, span<const T>(d_keys), d_out.view());
      });
    }
    d_out.copy_to(span<T>(out));
  } else {
    o.ms = wall_ms([&] {
      if (values)
        gsearch::sort(gsearch::cpu, span<const T>(keys), span<const int64_t>(*values),
                      span<T>(out), span<int64_t>(out_values));
      else
        gsearch::sort(gsearch::cpu, span<const T>(keys), span<T>(out));
    });
  }
  return o;
}

// --distributed (distributed.hpp): the sorted keys only.
distributed::sort_request distributed_request(const sort_args& a) {
  distributed::sort_request r;
  r.device = a.device;
  r.per_rank = a.dist.per_rank;
  r.json = a.json;
  r.refused = {{"--values", !a.values.empty()}, {"--out-values", !a.out_values.empty()},
               {"--argsort", !a.argsort.empty()}};
  r.data = a.data;
  r.out = a.out;
  return r;
}

exit_code run_sort_command(const sort_args& a) {
  if (a.dist.on) return distributed::sort([&] { return distributed_request(a); });
  check_paths({{"--data", a.data}, {"--values", a.values}},
                            {{"--out", a.out}, {"--out-values", a.out_values}, {"--argsort", a.argsort}});
  if (a.values.empty() != a.out_values.empty())
    bad(a.values.empty() ? "--out-values needs --values V.npy (the int64 values to carry)"
                         : "--values needs --out-values SV.npy (where the carried values go)");
  if (a.out.empty() && a.argsort.empty())
    bad("give --out S.npy (the sorted keys), --argsort I.npy (the sorting permutation), or both");
  const target dev = resolve_device(a.device);
  named_input data("--data", a.data);
  check_1d(data, "sort");
  std::optional<named_input> values;
  if (!a.values.empty()) {
    values.emplace("--values", a.values);
    check_values(*values, data);
  }
  return visit_key_type(data.file.type(), [&]<class T>() {
    const std::vector<T> keys = data.file.read<T>();
    const int64_t n = int64_t(keys.size());
    std::vector<int64_t> v;
    if (values) v = values->file.read<int64_t>();
    progress::phase("sorting");
    std::vector<T> out(keys.size());
    std::vector<int64_t> carried, perm;
    outcome o;
    if (!a.argsort.empty()) {
      // The permutation: a key-value sort of the keys with values 0, 1, ..., n - 1 (stable, so
      // np.argsort(kind='stable')); --values, if any, are gathered by it.
      std::vector<int64_t> iota(keys.size());
      for (int64_t i = 0; i < n; ++i) iota[size_t(i)] = i;
      perm.resize(keys.size());
      o = run_sort(dev, keys, &iota, out, perm);
      if (values) {
        carried.resize(keys.size());
        for (int64_t i = 0; i < n; ++i) carried[size_t(i)] = v[size_t(perm[size_t(i)])];
      }
    } else {
      if (values) carried.resize(keys.size());
      o = run_sort(dev, keys, values ? &v : nullptr, out, carried);
    }
    // Every file is written before any is renamed into place.
    std::optional<npy::staged_file> f_out, f_values, f_perm;
    if (!a.out.empty()) f_out.emplace(a.out, dtype_of<T>(), out.data(), n);
    if (values) f_values.emplace(a.out_values, dtype::int64, carried.data(), n);
    if (!a.argsort.empty()) f_perm.emplace(a.argsort, dtype::int64, perm.data(), n);
    for (auto* f : {&f_out, &f_values, &f_perm})
      if (*f) (*f)->commit();

    const std::string dt(key_traits<T>::name);
    if (a.json) {
      json j = summary_head("sort", dev, dt);
      j["n"] = n;
      j["values"] = bool(values);
      j["out"] = a.out.empty() ? json(nullptr) : json(a.out);
      j["out_values"] = values ? json(a.out_values) : json(nullptr);
      j["argsort"] = a.argsort.empty() ? json(nullptr) : json(a.argsort);
      print_json(j, o);
    } else {
      std::string to;
      if (!a.out.empty()) to += " keys -> " + a.out;
      if (values) to += (to.empty() ? "" : ",") + std::string(" values -> ") + a.out_values;
      if (!a.argsort.empty())
        to += (to.empty() ? "" : ",") + std::string(" permutation -> ") + a.argsort;
      print_line("sort: ", n, " ", dt, " keys", values ? " with int64 values" : "", " (stable), ",
                 device_text(dev), ":", to, ", ", ms_text(o.ms));
    }
    return exit_ok;
  });
}

void add_sort_options(CLI::App& sub, sort_args& a) {
  sub.add_option("--data", a.data, "The keys to sort (.npy, 1-D, any order)")->required()->type_name("D.npy");
  sub.add_option("--out", a.out, "The sorted keys (the data's dtype)")->type_name("S.npy");
  sub.add_option("--values", a.values, "int64 values to carry with the keys (one per key)")
      ->type_name("V.npy");
  sub.add_option("--out-values", a.out_values, "The carried values, in the keys' sorted order")
      ->type_name("SV.npy");
  sub.add_option("--argsort", a.argsort, "The stable sorting permutation (int64 indices into --data)")
      ->type_name("I.npy");
  add_distributed_options(sub, a.dist);
}
const subcommand_spec<sort_args> sort_spec{
    "sort", "Sort an array (stable; a radix sort of integers on a GPU), with int64 values or the sorting permutation",
    family_footer("--out gets np.sort(data, kind='stable'); --argsort gets the stable sorting "
                  "permutation, np.argsort(data, kind='stable') (int64: data[perm] is sorted, equal "
                  "keys in their input order); --values V.npy with --out-values carries one int64 "
                  "value per key (out_values = values[perm]). Give --out, --argsort or both. The "
                  "data need not be sorted, so there is no --assume-sorted (--no-check).\n"
                  "--distributed (mpirun -np N gsearch sort --distributed --data D.npy --out "
                  "S.npy): each rank reads its slice of the data and the ranks sort them together "
                  "(a sample sort); --out, required, is the single-process output. --values, "
                  "--out-values and --argsort do not apply.\n"),
    family_options(add_sort_options), run_sort_command};

// ---- gsearch set --------------------------------------------------------------------------------

const std::vector<std::string> set_op_names = {"intersection", "union", "difference",
                                               "symmetric-difference"};

set_op parse_set_op(const std::string& s) {
  for (int i = 0; i <= int(set_op::symmetric_difference); ++i)
    if (gsearch::to_string(set_op(i)) == s) return set_op(i);
  bad("unknown --op '" + s + "'");
}

struct set_args {
  std::string op, a, b, out, device = "auto";
  bool no_check = false, json = false;
};

template <class T>
outcome run_set(const target& dev, set_op op, const std::vector<T>& a, const std::vector<T>& b,
                std::vector<T>& out) {
  outcome o;
  if (dev.cuda) {
    const auto d_a = to_device(a), d_b = to_device(b);
    device_vector<T> d_out;
    o.ms = elapsed_ms(gsearch::cuda, [&] {
      o.result = gsearch::set_operation(
          gsearch::cuda, op, span<const T>(d_a), span<const T>(d_b),
          std::function<T*(int64_t)>([&](int64_t n) {
            d_out = device_vector<T>(n);
            return d_out.data();
          }),
          unchecked());
    });
    out.resize(size_t(o.result));
    d_out.copy_to(span<T>(out));
  } else {
    o.ms = wall_ms([&] {
      o.result = gsearch::set_operation(gsearch::cpu, op, span<const T>(a), span<const T>(b),
                                        std::function<T*(int64_t)>([&](int64_t n) {
                                          out.resize(size_t(n));
                                          return out.data();
                                        }),
                                        unchecked());
    });
    out.resize(size_t(o.result));
  }
  return o;
}

exit_code run_set_command(const set_args& a) {
  check_paths({{"--a", a.a}, {"--b", a.b}}, {{"--out", a.out}});
  const set_op op = parse_set_op(a.op);
  const target dev = resolve_device(a.device);
  key_inputs in("set", "--a", a.a, "--b", a.b);
  return visit_key_type(in.x.file.type(), [&]<class T>() {
    const std::vector<T> ka = in.x.file.read<T>();
    const std::vector<T> kb = in.y.file.read<T>();
    progress::phase("checking that the inputs are sorted");
    in.check_both_sorted(ka, kb, a.no_check);
    progress::phase("computing the " + std::string(gsearch::to_string(op)));
    std::vector<T> out;
    const outcome o = run_set(dev, op, ka, kb, out);
    npy::save(a.out, span<const T>(out));

    const std::string dt(key_traits<T>::name);
    if (a.json) {
      json j = summary_head("set", dev, dt);
      j["op"] = gsearch::to_string(op);
      j["a"] = int64_t(ka.size());
      j["b"] = int64_t(kb.size());
      j["checked"] = !a.no_check;
      j["out"] = a.out;
      print_json(j, o);
    } else {
      print_line("set: ", gsearch::to_string(op), " of ", ka.size(), " and ", kb.size(), " ", dt,
                 " keys, ", device_text(dev), ": ", o.result, " keys -> ", a.out, ", ",
                 ms_text(o.ms));
    }
    return exit_ok;
  });
}

void add_set_options(CLI::App& sub, set_args& a) {
  sub.add_option("--op", a.op, "intersection, union, difference (a - b) or symmetric-difference")
      ->required()
      ->check(CLI::IsMember(set_op_names))
      ->type_name("OP");
  add_a_and_b(sub, a.a, a.b);
  sub.add_option("--out", a.out, "The result (--a's dtype, sorted)")->required()->type_name("S.npy");
}
const subcommand_spec<set_args> set_spec{
    "set", "Multiset intersection, union, difference, symmetric difference of sorted arrays",
    family_footer("C++'s std::set_* semantics on multisets: a value m times in --a and n times in "
                  "--b is written min(m, n) times (intersection), max(m, n) (union), max(m - n, 0) "
                  "(difference, a minus b) or |m - n| (symmetric-difference); the output is sorted. "
                  "For numpy's unique-element np.intersect1d etc., pass inputs without duplicates "
                  "(numpy: np.unique(a)).\n"),
    family_options(add_set_options, "--a and --b"), run_set_command};

// ---- gsearch join -------------------------------------------------------------------------------

const std::vector<std::string> join_kind_names = {"inner", "left", "right", "full", "semi", "anti"};

join_kind parse_join_kind(const std::string& s) {
  for (int i = 0; i <= int(join_kind::anti); ++i)
    if (gsearch::to_string(join_kind(i)) == s) return join_kind(i);
  bad("unknown --how '" + s + "'");
}

struct join_args {
  std::string how, left, right, out_left, out_right, device = "auto";
  bool no_check = false, json = false;
  distributed_flags dist;
};

template <class T>
outcome run_join(const target& dev, join_kind kind, const std::vector<T>& l,
                 const std::vector<T>& r, std::vector<int64_t>& li, std::vector<int64_t>& ri) {
  const bool left_only = core::join_left_only(kind);
  outcome o;
  if (dev.cuda) {
    const auto d_l = to_device(l), d_r = to_device(r);
    device_vector<int64_t> d_li, d_ri;
    o.ms = elapsed_ms(gsearch::cuda, [&] {
      o.result = gsearch::join(gsearch::cuda, kind, span<const T>(d_l), span<const T>(d_r),
                               std::function<join_output(int64_t)>([&](int64_t rows) {
                                 d_li = device_vector<int64_t>(rows);
                                 if (!left_only) d_ri = device_vector<int64_t>(rows);
                                 return join_output{d_li.data(), left_only ? nullptr : d_ri.data()};
                               }),
                               unchecked());
    });
    li.resize(size_t(o.result));
    d_li.copy_to(span<int64_t>(li));
    if (!left_only) {
      ri.resize(size_t(o.result));
      d_ri.copy_to(span<int64_t>(ri));
    }
  } else {
    o.ms = wall_ms([&] {
      o.result = gsearch::join(gsearch::cpu, kind, span<const T>(l), span<const T>(r),
                               std::function<join_output(int64_t)>([&](int64_t rows) {
                                 li.resize(size_t(rows));
                                 if (!left_only) ri.resize(size_t(rows));
                                 return join_output{li.data(), left_only ? nullptr : ri.data()};
                               }),
                               unchecked());
    });
    li.resize(size_t(o.result));
    if (!left_only) ri.resize(size_t(o.result));
  }
  return o;
}

// --how, and --out-right given for the kinds that write it and only for them.
join_kind check_join_outputs(const join_args& a) {
  const join_kind kind = parse_join_kind(a.how);
  const bool left_only = core::join_left_only(kind);
  if (left_only && !a.out_right.empty())
    bad("--how " + a.how + " writes only --out-left (the left rows " +
        (kind == join_kind::semi ? "with" : "without") + " a match): drop --out-right");
  if (!left_only && a.out_right.empty())
    bad("--how " + a.how + " needs --out-right J.npy (the right indices of the pairs)");
  return kind;
}

// --distributed (distributed.hpp): every kind, the same outputs.
distributed::join_request distributed_request(const join_args& a) {
  distributed::join_request r;
  r.device = a.device;
  r.per_rank = a.dist.per_rank;
  r.json = a.json;
  r.how = check_join_outputs(a);
  r.left = a.left;
  r.right = a.right;
  r.out_left = a.out_left;
  r.out_right = a.out_right;
  r.no_check = a.no_check;
  return r;
}

exit_code run_join_command(const join_args& a) {
  if (a.dist.on) return distributed::join([&] { return distributed_request(a); });
  check_paths({{"--left", a.left}, {"--right", a.right}},
                            {{"--out-left", a.out_left}, {"--out-right", a.out_right}});
  const join_kind kind = check_join_outputs(a);
  const bool left_only = core::join_left_only(kind);
  const target dev = resolve_device(a.device);
  key_inputs in("join", "--left", a.left, "--right", a.right);
  return visit_key_type(in.x.file.type(), [&]<class T>() {
    const std::vector<T> l = in.x.file.read<T>();
    const std::vector<T> r = in.y.file.read<T>();
    progress::phase("checking that the inputs are sorted");
    in.check_both_sorted(l, r, a.no_check);
    progress::phase("joining");
    std::vector<int64_t> li, ri;
    const outcome o = run_join(dev, kind, l, r, li, ri);
    // Both files are written before either is renamed into place.
    npy::staged_file f_left(a.out_left, dtype::int64, li.data(), int64_t(li.size()));
    std::optional<npy::staged_file> f_right;
    if (!left_only) f_right.emplace(a.out_right, dtype::int64, ri.data(), int64_t(ri.size()));
    f_left.commit();
    if (f_right) f_right->commit();

    const std::string dt(key_traits<T>::name);
    if (a.json) {
      json j = summary_head("join", dev, dt);
      j["how"] = gsearch::to_string(kind);
      j["left"] = int64_t(l.size());
      j["right"] = int64_t(r.size());
      j["checked"] = !a.no_check;
      j["out_left"] = a.out_left;
      j["out_right"] = left_only ? json(nullptr) : json(a.out_right);
      print_json(j, o);
    } else {
      print_line("join: ", gsearch::to_string(kind), " join of ", l.size(), " and ", r.size(), " ",
                 dt, " keys, ", device_text(dev), ": ", o.result, " rows -> ", a.out_left,
                 left_only ? "" : ", " + a.out_right, " (int64), ", ms_text(o.ms));
    }
    return exit_ok;
  });
}

void add_join_options(CLI::App& sub, join_args& a) {
  sub.add_option("--how", a.how, "inner, left, right, full, semi or anti")
      ->required()
      ->check(CLI::IsMember(join_kind_names))
      ->type_name("KIND");
  sub.add_option("--left", a.left, "The left keys (.npy, 1-D, sorted)")->required()->type_name("L.npy");
  sub.add_option("--right", a.right, "The right keys (.npy, 1-D, sorted, --left's dtype)")
      ->required()
      ->type_name("R.npy");
  sub.add_option("--out-left", a.out_left, "The left indices of the rows (int64; -1: none)")
      ->required()
      ->type_name("I.npy");
  sub.add_option("--out-right", a.out_right,
                 "The right indices of the rows (int64; -1: none); required except for semi "
                 "and anti, which have none")
      ->type_name("J.npy");
  add_distributed_options(sub, a.dist);
}
const subcommand_spec<join_args> join_spec{
    "join", "Sort-merge join of sorted keys: int64 gather maps (left index, right index)",
    family_footer("Each output row pairs a left index i and a right index j with left[i] == "
                  "right[j]; duplicates give every pair (the cross product). Rows are in key "
                  "order, then left index, then right index. inner: the matching pairs; left: also "
                  "(i, -1) for each left row without a match; right: also (-1, j) for each right "
                  "row without one; full: both. semi: the left rows with a match, anti: those "
                  "without; these two write --out-left only (giving --out-right is an error; every "
                  "other kind needs it). Gather with numpy: left_table[I], with -1 meaning no row.\n"
                  "--distributed (mpirun -np N gsearch join --distributed ...): each rank reads "
                  "its slice of --left and of --right (sorted across the ranks: checked unless "
                  "--assume-sorted), the ranks join them together, and the outputs are the "
                  "single-process ones (rows concatenated in rank order).\n"),
    family_options(add_join_options, "--left and --right"), run_join_command};

}  // namespace

command add_merge_command(CLI::App& app) { return add_command(app, merge_spec); }
command add_sort_command(CLI::App& app) { return add_command(app, sort_spec); }
command add_set_command(CLI::App& app) { return add_command(app, set_spec); }
command add_join_command(CLI::App& app) { return add_command(app, join_spec); }

}  // namespace gsearch::cli
