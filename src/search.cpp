// The public batched-search API: argument checks shared by both backends, then dispatch.

#include "gsearch/search.hpp"

#include <limits>
#include <utility>
#include <string>

#include "gsearch/detail/cpu/merge.hpp"
#include "gsearch/detail/cpu/search.hpp"
#include "gsearch/detail/cuda/merge.hpp"
#include "gsearch/detail/cuda/search.hpp"

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

void check_options(const search_options& options) {
  if (options.max_temp_bytes < 0)
    throw invalid_argument("gsearch::search: search_options::max_temp_bytes must be >= 0, not " +
                           std::to_string(options.max_temp_bytes));
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

algorithm resolve_algorithm(const cpu_t&, algorithm requested, int key_bytes, int64_t k, int64_t queries,
                            int64_t max_temp_bytes) {
  return cpu_backend::resolve(requested, key_bytes, k, queries < 0 ? k : queries, max_temp_bytes);
}
algorithm resolve_algorithm(const cuda_t&, algorithm requested, int key_bytes, int64_t k, int64_t queries,
                            int64_t max_temp_bytes) {
  return cuda_backend::resolve(requested, key_bytes, k, queries < 0 ? k : queries, max_temp_bytes);
}

int64_t search_temp_bytes(const cpu_t& exec, algorithm algo, int key_bytes, int64_t k, int64_t queries) {
  return cpu_backend::temp_bytes(exec.threads, algo, key_bytes, k, queries < 0 ? k : queries);
}
int64_t search_temp_bytes(const cuda_t&, algorithm algo, int key_bytes, int64_t k, int64_t queries) {
  return cuda_backend::temp_bytes(algo, key_bytes, k, queries < 0 ? k : queries);
}

#define GSEARCH_DEFINE(T, OUT)                                                                  \
  void search(const cpu_t& exec, side s, span<const T> keys, span<const T> queries,            \
              span<OUT> out, const search_options& options) {                                  \
    check_arguments(keys, queries, out);                                                       \
    check_options(options);                                                                    \
    if (options.check_sorted && !cpu_backend::is_sorted(keys.data(), keys.size()))             \
      throw_unsorted();                                                                        \
    if (options.queries_sorted) {                                                              \
      if (options.check_sorted && !cpu_backend::is_sorted(queries.data(), queries.size()))     \
        throw_unsorted("gsearch::search: queries_sorted, but the queries are not sorted");     \
      cpu_backend::sorted_search(exec.threads, s, keys.data(), keys.size(), queries.data(),    \
                                 queries.size(), out.data());                                  \
      return;                                                                                  \
    }                                                                                          \
    cpu_backend::search(exec.threads, s, options.algo, keys.data(), keys.size(), queries.data(), \
                        queries.size(), out.data(), options.max_temp_bytes);                   \
  }                                                                                            \
  void search(const cuda_t& exec, side s, span<const T> keys, span<const T> queries,           \
              span<OUT> out, const search_options& options) {                                  \
    check_arguments(keys, queries, out);                                                       \
    check_options(options);                                                                    \
    if (options.check_sorted && !cuda_backend::is_sorted(exec.stream, keys.data(), keys.size())) \
      throw_unsorted();                                                                        \
    /* The sorted search's tile splits are temporary memory: over the cap, the plain search. */ \
    if (options.queries_sorted &&                                                              \
        cuda_backend::sorted_temp_bytes(int(sizeof(T)), keys.size(), queries.size()) <=        \
            options.max_temp_bytes) {                                                          \
      if (options.check_sorted &&                                                              \
          !cuda_backend::is_sorted(exec.stream, queries.data(), queries.size()))               \
        throw_unsorted("gsearch::search: queries_sorted, but the queries are not sorted");     \
      cuda_backend::sorted_search(exec.stream, s, keys.data(), keys.size(), queries.data(),    \
                                  queries.size(), out.data());                                 \
      return;                                                                                  \
    }                                                                                          \
    if (options.queries_sorted && options.check_sorted &&                                      \
        !cuda_backend::is_sorted(exec.stream, queries.data(), queries.size()))                 \
      throw_unsorted("gsearch::search: queries_sorted, but the queries are not sorted");       \
    const algorithm algo = options.queries_sorted ? algorithm::auto_ : options.algo;           \
    cuda_backend::search(exec.stream, s, algo, keys.data(), keys.size(), queries.data(),       \
                         queries.size(), out.data(), options.max_temp_bytes);                  \
  }

// equal_range: the two searches, after the checks of both outputs (nothing is written when
// either is wrong).
#define GSEARCH_DEFINE_EQUAL_RANGE(EXEC, T, OUT)                                               \
  void equal_range(const EXEC& exec, span<const T> keys, span<const T> queries,               \
                   span<OUT> lower, span<OUT> upper, const search_options& options) {         \
    check_arguments(keys, queries, lower);                                                     \
    check_arguments(keys, queries, upper);                                                     \
    if (lower.size() > 0 && lower.data() == upper.data())                                      \
      throw invalid_argument("gsearch::equal_range: lower and upper are the same array");     \
    search(exec, side::left, keys, queries, lower, options);                                   \
    search_options again = options;                                                            \
    again.check_sorted = false; /* checked by the first search */                             \
    search(exec, side::right, keys, queries, upper, again);                                    \
  }

#define GSEARCH_DEFINE_ROWS(T, OUT)                                                            \
  void search_rows(const cpu_t& exec, side s, int64_t rows, span<const T> keys,                \
                   span<const T> queries, span<OUT> out, const search_options& options) {      \
    const auto [k, m] = check_rows_arguments(rows, keys, queries, out);                        \
    check_options(options);                                                                    \
    if (options.check_sorted && !cpu_backend::is_sorted_rows(keys.data(), rows, k))            \
      throw_unsorted("gsearch::search_rows: a row of keys is not sorted");                     \
    cpu_backend::search_rows(exec.threads, s, options.algo, rows, keys.data(), k,              \
                             queries.data(), m, out.data(), options.max_temp_bytes);           \
  }                                                                                            \
  void search_rows(const cuda_t& exec, side s, int64_t rows, span<const T> keys,               \
                   span<const T> queries, span<OUT> out, const search_options& options) {      \
    const auto [k, m] = check_rows_arguments(rows, keys, queries, out);                        \
    check_options(options);                                                                    \
    if (options.check_sorted && !cuda_backend::is_sorted_rows(exec.stream, keys.data(), rows, k)) \
      throw_unsorted("gsearch::search_rows: a row of keys is not sorted");                     \
    cuda_backend::search_rows(exec.stream, s, options.algo, rows, keys.data(), k,              \
                              queries.data(), m, out.data());                                  \
  }

#define GSEARCH_DEFINE_T(T)                                                                    \
  GSEARCH_DEFINE(T, int64_t)                                                                   \
  GSEARCH_DEFINE(T, int32_t)                                                                   \
  GSEARCH_DEFINE_EQUAL_RANGE(cpu_t, T, int64_t)                                                \
  GSEARCH_DEFINE_EQUAL_RANGE(cpu_t, T, int32_t)                                                \
  GSEARCH_DEFINE_EQUAL_RANGE(cuda_t, T, int64_t)                                               \
  GSEARCH_DEFINE_EQUAL_RANGE(cuda_t, T, int32_t)                                               \
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
#undef GSEARCH_DEFINE_EQUAL_RANGE

}  // namespace gsearch
