// The public batched-search API: argument checks shared by both backends, then dispatch.

#include "gsearch/search.hpp"

#include <limits>
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

[[noreturn]] void throw_unsorted() {
  throw invalid_argument("gsearch::search: keys are not sorted (NaN last, -0.0 == 0.0)");
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

#define GSEARCH_DEFINE_T(T)                                                                    \
  GSEARCH_DEFINE(T, int64_t)                                                                   \
  GSEARCH_DEFINE(T, int32_t)                                                                   \
  bool is_sorted(const cpu_t&, span<const T> keys) {                                           \
    return cpu_backend::is_sorted(keys.data(), keys.size());                                   \
  }                                                                                            \
  bool is_sorted(const cuda_t& exec, span<const T> keys) {                                     \
    return cuda_backend::is_sorted(exec.stream, keys.data(), keys.size());                     \
  }
GSEARCH_KEY_TYPES(GSEARCH_DEFINE_T)
#undef GSEARCH_DEFINE
#undef GSEARCH_DEFINE_T

}  // namespace gsearch
