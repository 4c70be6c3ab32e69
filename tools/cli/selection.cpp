// `gsearch select`, `gsearch topk`, `gsearch quantile` and `gsearch partition`: the selection
// family (gsearch/selection.hpp) on .npy files, on the CPU or a CUDA device.

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "gsearch/device.hpp"
#include "gsearch/selection.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "subcommand.hpp"
#include "timing.hpp"

namespace gsearch::cli {
namespace {

using json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& what) { throw failure(exit_bad_input, what); }

// ---- what the four commands share ------------------------------------------------------------

// The library call `call(exec)` on the target (gsearch::cpu or gsearch::cuda), timed: CUDA
// events on a GPU, wall clock on the CPU.
template <class F>
double timed_call(const target& dev, F&& call) {
  if (dev.cuda) return elapsed_ms(gsearch::cuda, [&] { call(gsearch::cuda); });
  return wall_ms([&] { call(gsearch::cpu); });
}

// The data where the call runs: the host vector, or its device copy.
template <class T>
class in_buffer {
 public:
  in_buffer(const target& dev, const std::vector<T>& host) : host_(host) {
    if (dev.cuda) dev_.emplace(span<const T>(host));
  }
  span<const T> view() const { return dev_ ? span<const T>(*dev_) : span<const T>(host_); }

 private:
  const std::vector<T>& host_;
  std::optional<device_vector<T>> dev_;
};

// An output where the call runs (a host vector, or a device array), and fetch() its values into
// the host vector afterwards.
template <class U>
class out_buffer {
 public:
  out_buffer(const target& dev, int64_t n) : host(size_t(n)) {
    if (dev.cuda) dev_.emplace(n);
  }
  span<U> view() { return dev_ ? dev_->view() : span<U>(host); }
  const std::vector<U>& fetch() {
    if (dev_) dev_->copy_to(span<U>(host));
    return host;
  }
  std::vector<U> host;

 private:
  std::optional<device_vector<U>> dev_;
};

// A value as JSON: a number, or for floats that are not finite the strings "nan", "inf", "-inf"
// (JSON has no such numbers).
template <class T>
json value_json(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  }
  return v;
}
// A value as text ("nan" for every NaN).
template <class T>
std::string value_text(T v) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(v)) return "nan";
  return to_text(v);
}

std::string ms_text(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}
std::string device_text(const target& dev) {
  return std::string("device=") + (dev.cuda ? "cuda" : "cpu") + " (" + dev.name + ")";
}

// The fields every --json summary starts with.
json summary_head(const char* command, const target& dev, const npy::input& data) {
  return {{"command", command},
          {"device", dev.cuda ? "cuda" : "cpu"},
          {"device_name", dev.name},
          {"dtype", name(data.type())},
          {"shape", data.shape()}};
}

// The data of select, quantile and partition: 1-D (`flat`: any shape, taken whole), with at
// least one element.
void check_data(const npy::input& data, const char* command, bool flat) {
  if (!flat && data.ndim() != 1)
    bad("--data " + data.path() + " has shape " + npy::shape_text(data.shape()) + ", but " +
        command + " takes 1-D data (numpy: a.ravel())");
  if (data.size() == 0)
    bad("--data " + data.path() + " is empty: " + command + " needs at least one element");
}

// "--k 7": a rank of n elements (from 0; negative from the end, as numpy indexes).
int64_t parse_rank(std::string_view text, std::string_view option, int64_t n) {
  return parse_count(text, option, -n, n - 1,
                     ", the last rank of the " + std::to_string(n) +
                         " elements of --data (negative ranks count from the end, down to -" +
                         std::to_string(n) + ")");
}

// "3,7": a comma-separated list of `option`'s values, each parsed by `one`.
template <class V, class F>
std::vector<V> parse_list(const std::string& text, std::string_view option, F&& one) {
  std::vector<V> v;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) v.push_back(one(item));
  if (v.empty() || text.back() == ',')
    bad(std::string(option) + " '" + text + "' is not a comma-separated list of values");
  return v;
}

const char* const outputs_footer =
    "Outputs go to temporary files named at the end, all of them or none (unnamed until then where the file system has O_TMPFILE: even a SIGKILL leaves nothing); with "
    "--out, stdout stays empty and the summary goes to stderr. An output that is "
    "an input or another output, a directory, a FIFO or a read-only file is refused before "
    "anything is read, and no output is left by an error, SIGINT or SIGTERM. Floats are in "
    "numpy's sort order: -inf < finite < inf < NaN, -0.0 == 0.0.";

// --device and --json, the options every command of the family ends with.
template <class Args>
void add_common_options(CLI::App& sub, Args& a, const std::string& json_fields) {
  add_device_option(sub, a.device);
  sub.add_flag("--json", a.json,
               "Print one JSON object to stdout (command, device, dtype, shape, " + json_fields +
                   ", time_ms) instead of the result and the human summary");
}

// ---- gsearch select --------------------------------------------------------------------------

struct select_args {
  std::string data, k, ks, out, device = "auto";
  bool json = false;
  CLI::Option* k_opt = nullptr;
};

// The ranks of --k or --ks, checked against the n elements of the data.
std::vector<int64_t> select_ranks(const select_args& a, int64_t n) {
  if (a.k_opt->count() > 0) return {parse_rank(a.k, "--k", n)};
  npy::input in(a.ks);
  if (in.type() != dtype::int64 || in.ndim() != 1)
    bad("--ks " + a.ks + " is " + std::string(name(in.type())) + " of shape " +
        npy::shape_text(in.shape()) + ", but ranks are a 1-D int64 array");
  std::vector<int64_t> ranks = in.read<int64_t>();
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] < -n || ranks[i] >= n)
      bad("--ks " + a.ks + "[" + std::to_string(i) + "] = " + std::to_string(ranks[i]) +
          " is out of range for the " + std::to_string(n) + " elements of --data (ranks run from " +
          std::to_string(-n) + " to " + std::to_string(n - 1) + ")");
  return ranks;
}

template <class T>
exit_code select_typed(const select_args& a, const target& dev, npy::input& data) {
  const int64_t n = data.size();
  const std::vector<int64_t> ranks = select_ranks(a, n);
  const std::vector<T> host = data.read<T>();
  progress::phase("selecting");
  const in_buffer<T> in(dev, host);
  out_buffer<T> out(dev, int64_t(ranks.size()));
  const double ms = timed_call(dev, [&](const auto& exec) {
    gsearch::select(exec, in.view(), span<const int64_t>(ranks), out.view());
  });
  const std::vector<T>& values = out.fetch();
  if (!a.out.empty()) npy::save(a.out, span<const T>(values));

  const bool one = a.k_opt->count() > 0;
  if (a.json) {
    json j = summary_head("select", dev, data);
    j["k"] = one ? json(ranks[0]) : json(nullptr);
    j["ks"] = one ? json(nullptr) : json(a.ks);
    j["out"] = a.out.empty() ? json(nullptr) : json(a.out);
    if (one) {
      j["result"] = value_json(values[0]);
    } else if (!a.out.empty()) {
      j["result"] = int64_t(values.size());
    } else {
      j["result"] = json::array();
      for (T v : values) j["result"].push_back(value_json(v));
    }
    j["time_ms"] = ms;
    print(j.dump() + "\n");
    return exit_ok;
  }
  const std::string what = "select: " + std::to_string(ranks.size()) + " rank" +
                           (ranks.size() == 1 ? "" : "s") + " of " + std::to_string(n) + " " +
                           std::string(key_traits<T>::name) + " values, " + device_text(dev) + ", " +
                           ms_text(ms);
  if (!a.out.empty()) {
    note(what + " -> " + a.out);
  } else {
    std::string lines;
    for (T v : values) lines += value_text(v) + "\n";
    print(lines);
    note(what);
  }
  return exit_ok;
}

exit_code run_select(const select_args& a) {
  check_paths({{"--data", a.data}, {"--ks", a.ks}}, {{"--out", a.out}});
  if (a.k_opt->count() == 0 && a.ks.empty())
    bad("give --k K (one rank, from 0) or --ks KS.npy (int64 ranks)");
  const target dev = resolve_device(a.device);
  npy::input data(a.data, npy::shapes::any);
  check_data(data, "select", true);
  return visit_key_type(data.type(), [&]<class T>() { return select_typed<T>(a, dev, data); });
}

void add_select_options(CLI::App& sub, select_args& a) {
  sub.add_option("--data", a.data,
                 "The data (.npy of any shape, 0-d to N-D, C or Fortran order: all of its "
                 "elements, as numpy's data.ravel() and Python's gsearch.select take them)")
      ->required()
      ->type_name("D.npy");
  a.k_opt = sub.add_option("--k", a.k,
                           "The rank to select, from 0 (the smallest); negative counts from the "
                           "end (-1: the largest)")
                ->type_name("K");
  sub.add_option("--ks", a.ks, "Many ranks at once (.npy, 1-D int64), as --k")
      ->type_name("KS.npy")
      ->excludes(a.k_opt);
  sub.add_option("--out", a.out, "The selected values (.npy, 1-D, the data's dtype)")
      ->type_name("V.npy");
  add_common_options(sub, a, "k or ks, out, \"result\"");
}

const subcommand_spec<select_args> select_spec{
    "select", "Order statistics: the element of rank k of unsorted data, without sorting it",
    std::string("The value of rank k is np.sort(data.ravel())[k]. Data: a little-endian .npy "
                "file of ") +
        dtype_list(" or ") +
        ". Without --out the values go to stdout, one per line (the summary to stderr); with "
        "--json, stdout is one JSON object whose \"result\" is the value (--k), the list of "
        "values (--ks), or with --out the number of values written. Non-finite floats are the "
        "JSON strings \"nan\", \"inf\" and \"-inf\".\n" +
        outputs_footer,
    add_select_options, run_select};

// ---- gsearch topk ----------------------------------------------------------------------------

struct topk_args {
  std::string data, k, out_values, out_indices, device = "auto";
  bool smallest = false, unsorted = false, json = false;
};

exit_code run_topk(const topk_args& a) {
  check_paths({{"--data", a.data}}, {{"--out-values", a.out_values}, {"--out-indices", a.out_indices}});
  const target dev = resolve_device(a.device);
  npy::input data(a.data);
  const bool rows_given = data.ndim() == 2;
  const int64_t rows = rows_given ? data.shape()[0] : 1, cols = data.shape().back();
  const int64_t k = parse_count(a.k, "--k", 0, cols,
                                ", the length of the last axis of --data " + data.path());
  topk_options options;
  options.largest = !a.smallest;
  options.sorted = !a.unsorted;
  const std::vector<int64_t> shape = rows_given ? std::vector<int64_t>{rows, k} : std::vector<int64_t>{k};
  return visit_key_type(data.type(), [&]<class T>() {
    const std::vector<T> host = data.read<T>();
    progress::phase("selecting the top k");
    out_buffer<T> values(dev, rows * k);
    out_buffer<int64_t> indices(dev, rows * k);
    double ms = 0;
    if (rows > 0) {
      const in_buffer<T> in(dev, host);
      ms = timed_call(dev, [&](const auto& exec) {
        gsearch::topk(exec, in.view(), rows, k, options, values.view(), indices.view());
      });
    }
    // Both files are written before either is renamed into place.
    npy::staged_file f_values(a.out_values, dtype_of<T>(), values.fetch().data(), shape);
    npy::staged_file f_indices(a.out_indices, dtype::int64, indices.fetch().data(), shape);
    f_values.commit();
    f_indices.commit();

    if (a.json) {
      json j = summary_head("topk", dev, data);
      j["rows"] = rows;
      j["k"] = k;
      j["largest"] = options.largest;
      j["sorted"] = options.sorted;
      j["out_values"] = a.out_values;
      j["out_indices"] = a.out_indices;
      j["result"] = rows * k;
      j["time_ms"] = ms;
      print(j.dump() + "\n");
    } else {
      note("topk: the " + std::to_string(k) + (options.largest ? " largest" : " smallest") +
            (options.sorted ? " (sorted)" : " (in any order)") + " of " +
            (rows_given ? std::to_string(rows) + " rows of " : std::string()) +
            std::to_string(cols) + " " + std::string(key_traits<T>::name) + " values, " +
            device_text(dev) + ": values -> " + a.out_values + ", indices -> " + a.out_indices +
            " (int64), shape " + npy::shape_text(shape) + ", " + ms_text(ms));
    }
    return exit_ok;
  });
}

void add_topk_options(CLI::App& sub, topk_args& a) {
  sub.add_option("--data", a.data, "The data (.npy, 1-D, or 2-D: each row on its own)")
      ->required()
      ->type_name("D.npy");
  sub.add_option("--k", a.k, "How many values (0 to the row length)")->required()->type_name("K");
  sub.add_flag("--smallest", a.smallest, "The k smallest instead of the k largest");
  sub.add_flag("--unsorted", a.unsorted,
               "The k values in any order (by default sorted: largest first, or smallest first "
               "with --smallest)");
  sub.add_option("--out-values", a.out_values, "The values (the data's dtype; shape (k,) or (rows, k))")
      ->required()
      ->type_name("V.npy");
  sub.add_option("--out-indices", a.out_indices,
                 "Their int64 indices (within the row), the same shape")
      ->required()
      ->type_name("I.npy");
  add_common_options(sub, a, "rows, k, largest, sorted, outputs, \"result\" (rows * k)");
}

const subcommand_spec<topk_args> topk_spec{
    "topk", "The k largest (or smallest) values of each row, and their indices (torch.topk)",
    std::string("torch.topk(data, k, dim=-1, largest, sorted): values and int64 indices of "
                "shape (k,) for 1-D data, (rows, k) for 2-D data. Ties: the same values as "
                "torch, indices that point at them. NaN is larger than every number (first with "
                "the largest). Data: a little-endian .npy file of ") +
        dtype_list(" or ") + ".\n" + outputs_footer,
    add_topk_options, run_topk};

// ---- gsearch quantile ------------------------------------------------------------------------

std::vector<std::string> method_names() {
  std::vector<std::string> v;
  for (int i = 0; i <= int(quantile_method::nearest); ++i)
    v.emplace_back(gsearch::to_string(quantile_method(i)));
  return v;
}

struct quantile_args {
  std::string data, q, method = "linear", out, device = "auto";
  bool skip_nan = false, json = false;
};

std::vector<double> parse_quantiles(const std::string& text) {
  return parse_list<double>(text, "--q", [](const std::string& item) {
    const double q = parse_value<double>(item, "--q");
    if (!(q >= 0 && q <= 1)) bad("--q '" + item + "' is outside [0, 1] (quantiles run from 0 to 1)");
    return q;
  });
}

template <class T>
exit_code quantile_typed(const quantile_args& a, const std::vector<double>& q, quantile_method method,
                         const target& dev, npy::input& data) {
  const std::vector<T> host = data.read<T>();
  progress::phase("computing the quantiles");
  const in_buffer<T> in(dev, host);
  out_buffer<double> out(dev, int64_t(q.size()));
  const double ms = timed_call(dev, [&](const auto& exec) {
    gsearch::quantile(exec, in.view(), span<const double>(q), method, a.skip_nan, out.view());
  });
  const std::vector<double>& values = out.fetch();
  if (!a.out.empty()) npy::save(a.out, span<const double>(values));
  // Float data's quantiles are values of its dtype: shown in it (1.8, not 1.7999999523162842).
  using shown = std::conditional_t<std::is_floating_point_v<T>, T, double>;

  if (a.json) {
    json j = summary_head("quantile", dev, data);
    j["q"] = q;
    j["method"] = gsearch::to_string(method);
    j["skip_nan"] = a.skip_nan;
    j["out"] = a.out.empty() ? json(nullptr) : json(a.out);
    j["result"] = json::array();
    for (double v : values) j["result"].push_back(value_json(shown(v)));
    j["time_ms"] = ms;
    print(j.dump() + "\n");
    return exit_ok;
  }
  const std::string what = "quantile: " + std::to_string(q.size()) + " quantile" +
                           (q.size() == 1 ? "" : "s") + " of " + std::to_string(data.size()) + " " +
                           std::string(key_traits<T>::name) + " values, method=" +
                           std::string(gsearch::to_string(method)) + (a.skip_nan ? ", NaN skipped" : "") +
                           ", " + device_text(dev) + ", " + ms_text(ms);
  if (!a.out.empty()) {
    note(what + " -> " + a.out + " (float64)");
  } else {
    std::string lines;
    for (double v : values) lines += value_text(shown(v)) + "\n";
    print(lines);
    note(what);
  }
  return exit_ok;
}

exit_code run_quantile(const quantile_args& a) {
  check_paths({{"--data", a.data}}, {{"--out", a.out}});
  const std::vector<double> q = parse_quantiles(a.q);
  const std::optional<quantile_method> method = quantile_method_from_string(a.method);
  if (!method) bad("unknown --method '" + a.method + "'");
  const target dev = resolve_device(a.device);
  npy::input data(a.data, npy::shapes::any);
  check_data(data, "quantile", true);
  return visit_key_type(data.type(), [&]<class T>() { return quantile_typed<T>(a, q, *method, dev, data); });
}

void add_quantile_options(CLI::App& sub, quantile_args& a) {
  sub.add_option("--data", a.data,
                 "The data (.npy of any shape, 0-d to N-D, C or Fortran order: all of its "
                 "elements, as np.quantile(data, q) and Python's gsearch.quantile take them)")
      ->required()
      ->type_name("D.npy");
  sub.add_option("--q", a.q, "The quantiles, comma-separated, each in [0, 1] (0.5: the median)")
      ->required()
      ->type_name("Q[,Q...]");
  sub.add_option("--method", a.method, "numpy's method: " + [] {
                   std::string s;
                   for (const std::string& m : method_names()) s += (s.empty() ? "" : ", ") + m;
                   return s;
                 }())
      ->check(CLI::IsMember(method_names()))
      ->capture_default_str();
  sub.add_flag("--skip-nan", a.skip_nan,
               "Ignore NaN (numpy.nanquantile); by default a NaN in the data makes every "
               "quantile NaN (numpy.quantile)");
  sub.add_option("--out", a.out, "The quantiles (.npy, 1-D float64, one per --q)")->type_name("Q.npy");
  add_common_options(sub, a, "q, method, skip_nan, out, \"result\" (the quantiles)");
}

const subcommand_spec<quantile_args> quantile_spec{
    "quantile", "Quantiles of unsorted data, numpy's (every method of numpy.quantile)",
    std::string("numpy.quantile(data, q, method=...) of all the elements (--skip-nan: "
                "numpy.nanquantile; all-NaN data then gives nan). Float data's quantiles are "
                "computed in its dtype, as numpy does (printed in it; --out holds them as "
                "float64), integer data's in float64. Without --out the quantiles go to stdout, "
                "one per line (the summary to stderr); with --json, stdout is one JSON object "
                "whose \"result\" is the list of quantiles (non-finite ones as the strings "
                "\"nan\", \"inf\", \"-inf\"). Data: a little-endian .npy file of ") +
        dtype_list(" or ") + ".\n" + outputs_footer,
    add_quantile_options, run_quantile};

// ---- gsearch partition -----------------------------------------------------------------------

struct partition_args {
  std::string data, kth, out, device = "auto";
  bool indices = false, json = false;
};

template <class T>
exit_code partition_typed(const partition_args& a, const target& dev, npy::input& data) {
  const int64_t n = data.size();
  const std::vector<int64_t> kth = parse_list<int64_t>(
      a.kth, "--kth", [&](const std::string& item) { return parse_rank(item, "--kth", n); });
  const std::vector<T> host = data.read<T>();
  progress::phase("partitioning");
  const in_buffer<T> in(dev, host);
  double ms = 0;
  if (a.indices) {
    out_buffer<int64_t> out(dev, n);
    ms = timed_call(dev, [&](const auto& exec) {
      gsearch::argpartition(exec, in.view(), span<const int64_t>(kth), out.view());
    });
    npy::save(a.out, span<const int64_t>(out.fetch()));
  } else {
    out_buffer<T> out(dev, n);
    ms = timed_call(dev, [&](const auto& exec) {
      gsearch::partition(exec, in.view(), span<const int64_t>(kth), out.view());
    });
    npy::save(a.out, span<const T>(out.fetch()));
  }
  const char* what = a.indices ? "argpartition" : "partition";
  if (a.json) {
    json j = summary_head("partition", dev, data);
    j["kth"] = kth;
    j["indices"] = a.indices;
    j["out"] = a.out;
    j["out_dtype"] = a.indices ? "int64" : name(data.type());
    j["result"] = n;
    j["time_ms"] = ms;
    print(j.dump() + "\n");
  } else {
    note(std::string(what) + ": " + std::to_string(n) + " " + std::string(key_traits<T>::name) +
          " values at kth " + a.kth + ", " + device_text(dev) + " -> " + a.out +
          (a.indices ? " (int64 indices)" : "") + ", " + ms_text(ms));
  }
  return exit_ok;
}

exit_code run_partition(const partition_args& a) {
  check_paths({{"--data", a.data}}, {{"--out", a.out}});
  const target dev = resolve_device(a.device);
  npy::input data(a.data);
  check_data(data, "partition", false);
  return visit_key_type(data.type(), [&]<class T>() { return partition_typed<T>(a, dev, data); });
}

void add_partition_options(CLI::App& sub, partition_args& a) {
  sub.add_option("--data", a.data, "The data (.npy, 1-D)")->required()->type_name("D.npy");
  sub.add_option("--kth", a.kth,
                 "The positions that get their sorted element, comma-separated (from 0; "
                 "negative from the end)")
      ->required()
      ->type_name("K[,K...]");
  sub.add_option("--out", a.out, "The partitioned data (the data's dtype; int64 indices with --indices)")
      ->required()
      ->type_name("P.npy");
  sub.add_flag("--indices", a.indices, "Write the indices that partition the data (numpy.argpartition)");
  add_common_options(sub, a, "kth, indices, out, \"result\" (the output's length)");
}

const subcommand_spec<partition_args> partition_spec{
    "partition", "numpy.partition / argpartition: each kth element in its sorted place",
    std::string("numpy.partition(data, kth): out[k] is the element of rank k for each k of "
                "--kth, every element before it is <= it and every one after is >= it (in "
                "between, any order). --indices: numpy.argpartition, the int64 indices into "
                "--data that give that order. Data: a little-endian 1-D .npy file of ") +
        dtype_list(" or ") + ".\n" + outputs_footer,
    add_partition_options, run_partition};

}  // namespace

command add_select_command(CLI::App& app) { return add_command(app, select_spec); }
command add_topk_command(CLI::App& app) { return add_command(app, topk_spec); }
command add_quantile_command(CLI::App& app) { return add_command(app, quantile_spec); }
command add_partition_command(CLI::App& app) { return add_command(app, partition_spec); }

}  // namespace gsearch::cli
