// The public batched-search API: argument checks shared by both backends, then dispatch.

#include "gsearch/search.hpp"

#include <limits>
#include <utility>
#include <string>

#include "gsearch/cpu/search.hpp"
#include "gsearch/cuda/search.hpp"

namespace gsearch {
namespace {

template <class T, class Out>
void check_arguments(span<const T> keys, span<const T> queries, span<Out> out) {
  if (keys.size() < 0 || queries.size() < 0 || out.size() < 0)
    throw invalid_argument("gsearch::search: negative size");
  if (out.size() != queries.size())
    throw invalid_argument("gsearch::search: " + std::to_string(queries.size()) + " queries but " +
                           std::to_string(out.size()) + " output elements");
  if ((keys.size() > 0 && !keys.data()) || (queries.size() > 0 && !queries.data()) ||
      (out.size() > 0 && !out.data()))
    throw invalid_argument("gsearch::search: null data pointer with a non-zero size");
  if constexpr (sizeof(Out) < sizeof(int64_t)) {
    if (keys.size() > int64_t(std::numeric_limits<Out>::max()))
      throw invalid_argument("gsearch::search: " + std::to_string(keys.size()) +
                             " keys do not fit an int32 output; use int64");
  }
}

[[noreturn]] void throw_unsorted(const char* what = "gsearch::search: keys are not sorted") {
  throw invalid_argument(std::string(what) + " (NaN last, -0.0 == 0.0)");
}

// The row-batched search's shapes: rows x k keys, rows x m queries and outputs. Returns {k, m}.
template <class T, class Out>
std::pair<int64_t, int64_t> check_rows_arguments(int64_t rows, span<const T> keys,
                                                 span<const T> queries, span<Out> out) {
  if (rows < 0) throw invalid_argument("gsearch::search_rows: negative row count");
  if (keys.size() < 0 || queries.size() < 0 || out.size() < 0)
    throw invalid_argument("gsearch::search_rows: negative size");
  const auto sizes = [&] {
    return std::to_string(keys.size()) + " keys and " + std::to_string(queries.size()) +
           " queries";
  };
  if (rows == 0 && (keys.size() > 0 || queries.size() > 0))
    throw invalid_argument("gsearch::search_rows: 0 rows but " + sizes());
  if (rows > 0 && (keys.size() % rows != 0 || queries.size() % rows != 0))
    throw invalid_argument("gsearch::search_rows: " + sizes() + " do not split into " +
                           std::to_string(rows) + " equal rows");
  const int64_t k = rows > 0 ? keys.size() / rows : 0, m = rows > 0 ? queries.size() / rows : 0;
  check_arguments(span<const T>(keys.data(), k), queries, out);  // sizes, pointers, int32 range
  return {k, m};
}

}  // namespace

algorithm resolve_algorithm(const cpu_t&, algorithm requested, int key_bytes, int64_t k) {
  return cpu_backend::resolve(requested, key_bytes, k);
}
algorithm resolve_algorithm(const cuda_t&, algorithm requested, int key_bytes, int64_t k) {
  return cuda_backend::resolve(requested, key_bytes, k);
}

#define GSEARCH_DEFINE(T, OUT)                                                                  \
  void search(const cpu_t& exec, side s, span<const T> keys, span<const T> queries,            \
              span<OUT> out, const search_options& options) {                                  \
    check_arguments(keys, queries, out);                                                       \
    if (options.check_sorted && !cpu_backend::is_sorted(keys.data(), keys.size()))             \
      throw_unsorted();                                                                        \
    cpu_backend::search(exec.threads, s, options.algo, keys.data(), keys.size(), queries.data(), \
                        queries.size(), out.data());                                           \
  }                                                                                            \
  void search(const cuda_t& exec, side s, span<const T> keys, span<const T> queries,           \
              span<OUT> out, const search_options& options) {                                  \
    check_arguments(keys, queries, out);                                                       \
    if (options.check_sorted && !cuda_backend::is_sorted(exec.stream, keys.data(), keys.size())) \
      throw_unsorted();                                                                        \
    cuda_backend::search(exec.stream, s, options.algo, keys.data(), keys.size(), queries.data(), \
                         queries.size(), out.data());                                          \
  }

#define GSEARCH_DEFINE_ROWS(T, OUT)                                                            \
  void search_rows(const cpu_t& exec, side s, int64_t rows, span<const T> keys,                \
                   span<const T> queries, span<OUT> out, const search_options& options) {      \
    const auto [k, m] = check_rows_arguments(rows, keys, queries, out);                        \
    if (options.check_sorted && !cpu_backend::is_sorted_rows(keys.data(), rows, k))            \
      throw_unsorted("gsearch::search_rows: a row of keys is not sorted");                     \
    cpu_backend::search_rows(exec.threads, s, options.algo, rows, keys.data(), k,              \
                             queries.data(), m, out.data());                                   \
  }                                                                                            \
  void search_rows(const cuda_t& exec, side s, int64_t rows, span<const T> keys,               \
                   span<const T> queries, span<OUT> out, const search_options& options) {      \
    const auto [k, m] = check_rows_arguments(rows, keys, queries, out);                        \
    if (options.check_sorted && !cuda_backend::is_sorted_rows(exec.stream, keys.data(), rows, k)) \
      throw_unsorted("gsearch::search_rows: a row of keys is not sorted");                     \
    cuda_backend::search_rows(exec.stream, s, options.algo, rows, keys.data(), k,              \
                              queries.data(), m, out.data());                                  \
  }

#define GSEARCH_DEFINE_T(T)                                                                    \
  GSEARCH_DEFINE(T, int64_t)                                                                   \
  GSEARCH_DEFINE(T, int32_t)                                                                   \
  GSEARCH_DEFINE_ROWS(T, int64_t)                                                              \
  GSEARCH_DEFINE_ROWS(T, int32_t)                                                              \
  bool is_sorted_rows(const cpu_t&, int64_t rows, span<const T> keys) {                        \
    if (rows <= 0) return true;                                                                \
    return cpu_backend::is_sorted_rows(keys.data(), rows, keys.size() / rows);                 \
  }                                                                                            \
  bool is_sorted_rows(const cuda_t& exec, int64_t rows, span<const T> keys) {                  \
    if (rows <= 0) return true;                                                                \
    return cuda_backend::is_sorted_rows(exec.stream, keys.data(), rows, keys.size() / rows);   \
  }                                                                                            \
  bool is_sorted(const cpu_t&, span<const T> keys) {                                           \
    return cpu_backend::is_sorted(keys.data(), keys.size());                                   \
  }                                                                                            \
  bool is_sorted(const cuda_t& exec, span<const T> keys) {                                     \
    return cuda_backend::is_sorted(exec.stream, keys.data(), keys.size());                     \
  }
GSEARCH_KEY_TYPES(GSEARCH_DEFINE_T)
#undef GSEARCH_DEFINE
#undef GSEARCH_DEFINE_T
#undef GSEARCH_DEFINE_ROWS

}  // namespace gsearch
