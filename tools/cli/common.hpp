#pragma once
// What the gsearch CLI's subcommands share: exit codes, the error that carries one, the element
// types of the .npy files (core/dtype.hpp's, with the names the CLI lists), names of the
// library's enums, and the subcommand registry used by main.cpp.
// No CLI11 here, so that npy.hpp and the tests can include it cheaply.

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/dtype.hpp"
#include "gsearch/core/key_traits.hpp"
#include "tools/query_gen.hpp"
#include "gsearch/device.hpp"

namespace CLI {
class App;
}

namespace gsearch::cli {

/// The documented exit codes (also in `gsearch --help`). Command-line parse errors keep
/// CLI11's own codes (100 and up).
enum exit_code : int {
  exit_ok = 0,
  exit_bad_input = 1,     ///< bad usage or input: flags, files, types, unsorted keys
  exit_device_or_io = 2,  ///< no / failing CUDA device, output that cannot be written
  exit_mismatch = 3,      ///< --verify found results that differ from the reference
};

/// An error the CLI reports as `gsearch: error: <what>` and exits with `code`.
class failure : public std::runtime_error {
 public:
  failure(exit_code code, const std::string& what) : std::runtime_error(what), code_(code) {}
  exit_code code() const noexcept { return code_; }

 private:
  exit_code code_;
};

/// Where a subcommand runs (--device auto|cpu|cuda).
struct target {
  bool cuda = false;
  std::string name;  // "NVIDIA H100 ..., sm_90, 132 SMs" or "<CPU model>, 16 threads"
};

/// "<CPU model>, <n> threads", from /proc/cpuinfo.
inline std::string cpu_name() {
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; model.empty() && std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      model = line.substr(line.find(':') + 2) + ", ";
  return model + std::to_string(gsearch::cpu_threads()) + " threads";  // gsearch::cpu's
}

/// --device: cuda when asked (a failure(exit_device_or_io) if there is none), auto = cuda when
/// there is a device, else cpu.
inline target resolve_device(const std::string& device) {
  const bool have_gpu = cuda_device_count() > 0;
  if (device == "cuda" && !have_gpu)
    throw failure(exit_device_or_io, built_with_cuda()
                                         ? "--device cuda: no CUDA device is available"
                                         : "--device cuda: this gsearch was built without CUDA "
                                           "(GSEARCH_CUDA=OFF); use --device cpu");
  if (device == "cuda" || (device == "auto" && have_gpu)) return {true, cuda_device_name()};
  return {false, cpu_name()};
}

/// The element types of .npy files gsearch reads and writes: the library's key types, with
/// core/dtype.hpp's one list, names and switch (gsearch::visit_key_type).
using gsearch::all_dtypes;
using gsearch::dtype;
using gsearch::dtype_from_name;
using gsearch::dtype_of;
using gsearch::itemsize;
using gsearch::name;
using gsearch::npy_descr;
using gsearch::visit_key_type;

/// The dtype names, for CLI11's IsMember.
inline std::vector<std::string> dtype_names() {
  std::vector<std::string> v;
  for (dtype t : all_dtypes) v.emplace_back(name(t));
  return v;
}
/// The dtype names as a list in a sentence: "int32, uint32, int64, uint64, float32 or float64"
/// with last = " or ", every name after ", " by default.
inline std::string dtype_list(std::string_view last = ", ") {
  std::string s;
  const size_t n = std::size(all_dtypes);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) s += i + 1 < n ? std::string_view(", ") : last;
    s += name(all_dtypes[i]);
  }
  return s;
}

/// Deprecated: gsearch::visit_key_type. Kept while tools/cli/bench.cpp still calls it.
template <class F>
decltype(auto) visit(dtype t, F&& f) {
  return visit_key_type(t, std::forward<F>(f));
}

/// A value as text, exactly (shortest round-trip form for floats).
template <class T>
std::string to_text(T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace detail {

/// Decimal text ("-12.50e3") split into its sign, its significant digits (no leading zeros; none
/// for zero) and the power of ten they are scaled by: value = digits * 10^exp10. nullopt when the
/// text is not of the form [+-]digits[.digits][(e|E)[+-]digits] (at least one digit before the
/// exponent).
struct decimal_text {
  bool negative = false;
  std::string digits;
  int64_t exp10 = 0;
};
inline std::optional<decimal_text> scan_decimal(std::string_view s) {
  const auto digit = [&](size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  decimal_text d;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) d.negative = s[i++] == '-';
  bool any = false;
  for (; digit(i); ++i, any = true) d.digits += s[i];
  if (i < s.size() && s[i] == '.')
    for (++i; digit(i); ++i, any = true) {
      d.digits += s[i];
      --d.exp10;
    }
  if (!any) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool minus = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) minus = s[i++] == '-';
    if (!digit(i)) return std::nullopt;
    int64_t e = 0;
    for (; digit(i); ++i) e = std::min<int64_t>(e * 10 + (s[i] - '0'), int64_t{1} << 40);
    d.exp10 += minus ? -e : e;
  }
  if (i != s.size()) return std::nullopt;
  d.digits.erase(0, std::min(d.digits.find_first_not_of('0'), d.digits.size()));
  while (!d.digits.empty() && d.digits.back() == '0') {  // 1.50 -> 15e-1, 100 -> 1e2
    d.digits.pop_back();
    ++d.exp10;
  }
  if (d.digits.empty()) d.exp10 = 0;
  return d;
}

/// "nan", "inf", "infinity" in any case, with an optional sign (and from_chars' "nan(...)").
inline bool is_special_float_word(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  std::string low(s.substr(0, 3));
  for (char& c : low) c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return low == "nan" || low == "inf";
}

}  // namespace detail

/// `text` as a value of T, exactly, or a failure(exit_bad_input) naming `what` (the option, e.g.
/// "--value"), the text and the dtype. No whitespace, no hexadecimal.
///  - Integers: decimal, with an optional sign; a fraction or an exponent only when the value is
///    still an integer ("1e3", "1.0", "-0"), and within the type's range. "1.5", "nan", "inf",
///    "3e9" for int32 and "-1" for uint32 are errors.
///  - Floats: decimal or scientific notation rounded to the nearest value of T (as numpy does),
///    "nan", "inf", "infinity" (any case, optional sign), "-0.0". A non-zero number whose
///    magnitude rounds to infinity ("1e39" for float32) or to 0 ("1e-50" for float32) is an
///    error.
template <class T>
T parse_value(std::string_view text, std::string_view what) {
  const std::string type(key_traits<T>::name);
  const std::string quoted = std::string(what) + " '" + std::string(text) + "'";
  const auto fail = [&](const std::string& why) -> T { throw failure(exit_bad_input, quoted + why); };
  const auto d = detail::scan_decimal(text);
  if constexpr (std::is_floating_point_v<T>) {
    if (!d && !detail::is_special_float_word(text))
      return fail(" is not a number (a " + type + " value is written like 42, -1.5, 2.5e-3, nan or inf)");
    const std::string_view s = text.substr(!text.empty() && text[0] == '+' ? 1 : 0);
    T v{};
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range && d) {
      // digits * 10^exp10 with the digits read as 0.d1d2...: the magnitude is >= 1 when
      // size + exp10 > 0, so out of range means it overflowed; otherwise it underflowed to 0.
      const bool huge = int64_t(d->digits.size()) + d->exp10 > 0;
      return fail(huge ? " is out of the range of " + type + ": it rounds to infinity (the largest " +
                             type + " is " + to_text(std::numeric_limits<T>::max()) +
                             "; write inf for infinity)"
                       : " is too small for " + type + ": it rounds to 0 (the smallest positive " +
                             type + " is " + to_text(std::numeric_limits<T>::denorm_min()) +
                             "; write 0 for zero)");
    }
    if (ec != std::errc() || ptr != s.data() + s.size())
      return fail(" is not a number (a " + type + " value is written like 42, -1.5, 2.5e-3, nan or inf)");
    return v;
  } else {
    const std::string range = " [" + to_text(std::numeric_limits<T>::min()) + ", " +
                              to_text(std::numeric_limits<T>::max()) + "]";
    if (!d) {
      if (detail::is_special_float_word(text))
        return fail(" is not an " + type + " value: integers have no nan or inf");
      return fail(" is not a number (an " + type + " value is an integer like 42, -7 or 1e3)");
    }
    if (d->exp10 < 0) return fail(" is not an " + type + " value: it is not an integer");
    // Digits beyond 20 (10^20 > 2^64) cannot fit any of the types.
    if (int64_t(d->digits.size()) + d->exp10 > 20)
      return fail(" is out of the range of " + type + range);
    unsigned __int128 m = 0;
    for (char c : d->digits) m = m * 10 + unsigned(c - '0');
    for (int64_t e = 0; e < d->exp10; ++e) m *= 10;
    const unsigned __int128 max = std::numeric_limits<T>::max();
    if (d->negative && m != 0) {
      // |min| = max + 1 for the signed types; unsigned types hold no negative value.
      if (std::is_unsigned_v<T> || m > max + 1) return fail(" is out of the range of " + type + range);
      return T(-T(m - 1) - 1);
    }
    if (m > max) return fail(" is out of the range of " + type + range);
    return T(m);
  }
}

/// The numbers of the command line (counts, sizes, repeats, seeds) are taken as text and parsed
/// here, so that every one is checked the same way, with messages that name the option and the
/// limit, and exit_bad_input ("--keys must be at least 1 (got 0)"): none wraps around ("--seed
/// -1"), none is clamped ("--keys 18446744073709551616").

/// The host's memory in bytes (sysconf), the limit of the sizes gsearch allocates up front.
inline int64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * int64_t(page) : int64_t(1) << 40;
}
/// "23.4 GiB".
inline std::string bytes_text(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  for (; bytes >= 1024 && u < 6; ++u) bytes /= 1024;
  char buf[64];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

/// A whole number given to `option`, in [min, max] (decimal; "1e6" too); `max_why` explains the
/// upper limit in the message ("--queries must be at most 1000, what ... (got 5000)").
inline int64_t parse_count(std::string_view text, std::string_view option, int64_t min,
                           int64_t max = std::numeric_limits<int64_t>::max(),
                           std::string_view max_why = "") {
  const std::string opt(option), got = " (got " + std::string(text) + ")";
  const auto d = detail::scan_decimal(text);
  if (!d || (d->exp10 < 0 && !d->digits.empty()))
    throw failure(exit_bad_input, opt + " '" + std::string(text) + "' is not a whole number");
  const auto too_big = [&] {
    return failure(exit_bad_input, opt + " must be at most " + std::to_string(max) +
                                       std::string(max_why) + got);
  };
  const auto too_small = [&] {
    return failure(exit_bad_input, opt + " must be at least " + std::to_string(min) + got);
  };
  if (int64_t(d->digits.size()) + d->exp10 > 19) throw d->negative ? too_small() : too_big();
  unsigned __int128 m = 0;
  for (char c : d->digits) m = m * 10 + unsigned(c - '0');
  for (int64_t e = 0; e < d->exp10; ++e) m *= 10;
  using u128 = unsigned __int128;
  if (d->negative && m != 0) {
    if (m > u128(std::numeric_limits<int64_t>::max()) + 1 || -int64_t(m - 1) - 1 < min)
      throw too_small();
    return -int64_t(m - 1) - 1;
  }
  if (m > u128(max)) throw too_big();
  if (int64_t(m) < min) throw too_small();
  return int64_t(m);
}

/// A count of elements of `bytes_each` bytes that gsearch holds in host memory: at least `min`,
/// and at most what the host's memory holds.
inline int64_t parse_size(std::string_view text, std::string_view option, int64_t min,
                          int64_t bytes_each) {
  const int64_t mem = host_memory_bytes();
  return parse_count(text, option, min, mem / std::max<int64_t>(1, bytes_each),
                     ", what this machine's memory (" + bytes_text(double(mem)) + ") holds at " +
                         std::to_string(bytes_each) + " bytes each");
}

/// The one rule of every --seed (gen, conflicts, bench, find): a whole number from 0 to 2^64 - 1,
/// parsed exactly ("-1" and "1.5" are errors, never wrapped or rounded).
inline uint64_t parse_seed(std::string_view text) { return parse_value<uint64_t>(text, "--seed"); }

/// The CLI's names of the search sides (gsearch::to_string), in enum order.
inline const std::vector<std::string> side_names = [] {
  std::vector<std::string> v;
  for (side s : all_sides) v.emplace_back(gsearch::to_string(s));
  return v;
}();
inline side side_from_string(std::string_view s) {
  for (side sd : all_sides)
    if (gsearch::to_string(sd) == s) return sd;
  throw failure(exit_bad_input, "unknown side '" + std::string(s) + "'");
}

/// The CLI's names of the algorithms (gsearch::to_string), without or with "auto".
inline std::vector<std::string> algorithm_names(bool with_auto) {
  std::vector<std::string> v;
  for (algorithm a : all_algorithms)
    if (with_auto || a != algorithm::auto_) v.emplace_back(gsearch::to_string(a));
  return v;
}
inline algorithm parse_algorithm(std::string_view s) {
  if (auto a = algorithm_from_string(s)) return *a;
  throw failure(exit_bad_input, "unknown algorithm '" + std::string(s) + "'");
}

/// The reference every CLI check uses: std::lower_bound / std::upper_bound in the library's order
/// (predecessor = upper_bound - 1).
/// `keys` points to k sorted keys (a row of 2-D keys).
template <class T>
int64_t reference_result(const T* keys, int64_t k, T q, side s) {
  const auto less = [](T a, T b) { return key_less(a, b); };
  const T* bound = s == side::left ? std::lower_bound(keys, keys + k, q, less)
                                   : std::upper_bound(keys, keys + k, q, less);
  return (bound - keys) - (s == side::pred ? 1 : 0);
}
template <class T>
int64_t reference_result(const std::vector<T>& keys, T q, side s) {
  return reference_result(keys.data(), int64_t(keys.size()), q, s);
}

/// The inputs of `gsearch gen` and `gsearch conflicts`: k sorted random keys (seed `seed`) and
/// q queries (seed `seed + 1`), "random" (keys drawn at random) or "worst" (the paper's worst
/// case for PBS).
inline const std::vector<std::string> query_kind_names = {"random", "worst"};
template <class T>
struct generated {
  std::vector<T> keys, queries;
};
template <class T>
generated<T> generate(int64_t k, int64_t q, std::string_view query_kind, uint64_t seed) {
  generated<T> g{gen::sorted_keys<T>(k, seed), {}};
  g.queries = query_kind == "worst" ? gen::worst_case_queries(g.keys.data(), k, q, seed + 1)
                                    : gen::random_queries_from_keys(g.keys.data(), k, q, seed + 1);
  return g;
}

/// A subcommand: its CLI11 app, what runs it once the command line is parsed (returns the
/// exit code; throws failure, gsearch::error or std::exception on errors), and its --json flag
/// (nullptr if it has none): when set, an error is also printed to stdout as {"error": ...}.
struct command {
  CLI::App* app;
  std::function<exit_code()> run;
  const bool* json;
};
command add_search_command(CLI::App& app);
command add_find_command(CLI::App& app);
command add_merge_command(CLI::App& app);
command add_sort_command(CLI::App& app);
command add_set_command(CLI::App& app);
command add_join_command(CLI::App& app);
command add_asof_command(CLI::App& app);
command add_select_command(CLI::App& app);
command add_topk_command(CLI::App& app);
command add_quantile_command(CLI::App& app);
command add_partition_command(CLI::App& app);
command add_gen_command(CLI::App& app);
command add_conflicts_command(CLI::App& app);
command add_serve_command(CLI::App& app);
command add_client_command(CLI::App& app);
command add_esfa_run_command(CLI::App& app);
command add_esfa_gen_command(CLI::App& app);
command add_bench_command(CLI::App& app, int argc, char** argv);

}  // namespace gsearch::cli
