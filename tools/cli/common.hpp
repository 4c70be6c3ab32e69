#pragma once
// What the gsearch CLI's subcommands share: exit codes, the error that carries one, the six
// element types of the .npy files (and the one place that turns a runtime type into a template
// argument), names of the library's enums, and the subcommand registry used by main.cpp.
// No CLI11 here, so that npy.hpp and the tests can include it cheaply.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/query_gen.hpp"

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

/// The element types of .npy files gsearch reads and writes: the library's key types.
enum class dtype { int32, uint32, int64, uint64, float32, float64 };
inline constexpr dtype all_dtypes[] = {dtype::int32,  dtype::uint32,  dtype::int64,
                                       dtype::uint64, dtype::float32, dtype::float64};

// clang-format off
template <class T> constexpr dtype dtype_of();
template <> constexpr dtype dtype_of<int32_t>() { return dtype::int32; }
template <> constexpr dtype dtype_of<uint32_t>() { return dtype::uint32; }
template <> constexpr dtype dtype_of<int64_t>() { return dtype::int64; }
template <> constexpr dtype dtype_of<uint64_t>() { return dtype::uint64; }
template <> constexpr dtype dtype_of<float>() { return dtype::float32; }
template <> constexpr dtype dtype_of<double>() { return dtype::float64; }
// clang-format on

/// Calls f.template operator()<T>() with the C++ type T of `t`: the only switch over types.
template <class F>
decltype(auto) visit(dtype t, F&& f) {
  switch (t) {
    case dtype::int32: return f.template operator()<int32_t>();
    case dtype::uint32: return f.template operator()<uint32_t>();
    case dtype::int64: return f.template operator()<int64_t>();
    case dtype::uint64: return f.template operator()<uint64_t>();
    case dtype::float32: return f.template operator()<float>();
    case dtype::float64: return f.template operator()<double>();
  }
  throw std::logic_error("gsearch::cli::visit: bad dtype");
}

/// numpy's name ("int32") and the .npy descr ("<i4"), from key_traits.
inline std::string_view name(dtype t) {
  return visit(t, []<class T>() { return std::string_view(key_traits<T>::name); });
}
inline std::string_view npy_descr(dtype t) {
  return visit(t, []<class T>() { return std::string_view(key_traits<T>::npy_descr); });
}
inline int itemsize(dtype t) {
  return visit(t, []<class T>() { return int(sizeof(T)); });
}
inline std::vector<std::string> dtype_names() {
  std::vector<std::string> v;
  for (dtype t : all_dtypes) v.emplace_back(name(t));
  return v;
}
inline std::optional<dtype> dtype_from_name(std::string_view s) {
  for (dtype t : all_dtypes)
    if (name(t) == s) return t;
  return std::nullopt;
}

/// A value as text, exactly (shortest round-trip form for floats).
template <class T>
std::string to_text(T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// The CLI's names of the search sides, in enum order.
inline const std::vector<std::string> side_names = {"left", "right", "pred"};
inline std::string_view to_string(side s) { return side_names.at(size_t(s)); }
inline side side_from_string(std::string_view s) {
  for (size_t i = 0; i < side_names.size(); ++i)
    if (side_names[i] == s) return side(i);
  throw failure(exit_bad_input, "unknown side '" + std::string(s) + "'");
}

/// The CLI's names of the algorithms (gsearch::to_string), without or with "auto".
inline std::vector<std::string> algorithm_names(bool with_auto) {
  std::vector<std::string> v;
  for (algorithm a :
       {algorithm::auto_, algorithm::pbs, algorithm::pbs_cf, algorithm::pbs_cl, algorithm::binary})
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

/// A subcommand: its CLI11 app, and what runs it once the command line is parsed (returns the
/// exit code; throws failure, gsearch::error or std::exception on errors).
struct command {
  CLI::App* app;
  std::function<exit_code()> run;
};
command add_search_command(CLI::App& app);
command add_gen_command(CLI::App& app);
command add_conflicts_command(CLI::App& app);
command add_bench_command(CLI::App& app, int argc, char** argv);

}  // namespace gsearch::cli
