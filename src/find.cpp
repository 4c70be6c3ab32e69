// The public unsorted-search API: argument checks shared by both backends, then dispatch.

#include "gsearch/find.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "gsearch/detail/cpu/find.hpp"
#include "gsearch/detail/cuda/find.hpp"

namespace gsearch {
namespace {

template <class T>
void check_data(const char* what, span<const T> data) {
  if (data.size() < 0) throw invalid_argument(std::string(what) + ": negative size");
  if (data.size() > 0 && !data.data())
    throw invalid_argument(std::string(what) + ": null data pointer with a non-zero size");
}

template <class T>
void check_find(find_mode mode, span<const T> data, const predicate<T>& pred,
                const find_options& options) {
  check_data("gsearch::find", data);
  if (int(mode) < 0 || mode > find_mode::count)
    throw invalid_argument("gsearch::find: unknown mode " + std::to_string(int(mode)));
  if (int(options.strategy) < 0 || options.strategy > find_strategy::one_per_thread)
    throw invalid_argument("gsearch::find: unknown strategy " + std::to_string(int(options.strategy)));
  if (int(pred.op) < 0 || pred.op > find_op::in_range)
    throw invalid_argument("gsearch::find: unknown predicate op " + std::to_string(int(pred.op)));
  if (options.per_thread < 0)
    throw invalid_argument("gsearch::find: per_thread " + std::to_string(options.per_thread) +
                           " is negative (0 = the default, 12)");
  if (options.strategy != find_strategy::auto_ && mode != find_mode::first &&
      mode != find_mode::any && mode != find_mode::count)
    throw invalid_argument("gsearch::find: strategy '" + std::string(to_string(options.strategy)) +
                           "' is a study of first / any / count, not of mode '" +
                           std::string(to_string(mode)) + "'");
}

// per_thread as the backends take it: 0 (their default) or at most max(n, 1), which already
// gives each element to one thread (a larger k would only loop past the end).
int64_t study_per_thread(const find_options& options, int64_t n) {
  return options.per_thread > 0 ? std::min(options.per_thread, std::max<int64_t>(n, 1)) : 0;
}

void check_result(span<int64_t> result) {
  if (result.size() != 1 || !result.data())
    throw invalid_argument("gsearch::find: the result span must hold exactly 1 element (has " +
                           std::to_string(result.size()) + ")");
}

template <class T>
void check_isin(span<const T> elements, span<const T> tests, span<bool> out,
                const isin_options& options) {
  check_data("gsearch::isin", elements);
  check_data("gsearch::isin", tests);
  if (out.size() != elements.size())
    throw invalid_argument("gsearch::isin: " + std::to_string(elements.size()) +
                           " elements but " + std::to_string(out.size()) + " output elements");
  if (out.size() > 0 && !out.data())
    throw invalid_argument("gsearch::isin: null output pointer with a non-zero size");
  if (int(options.method) < 0 || options.method > isin_method::hash)
    throw invalid_argument("gsearch::isin: unknown method " + std::to_string(int(options.method)));
}

// find_all into a caller's span: the allocator refuses a count that does not fit.
std::function<int64_t*(int64_t)> into(span<int64_t> out) {
  return [out](int64_t count) {
    if (count > out.size())
      throw invalid_argument("gsearch::find_all: " + std::to_string(count) +
                             " matches do not fit an output of " + std::to_string(out.size()));
    if (count > 0 && !out.data())
      throw invalid_argument("gsearch::find_all: null output pointer");
    return out.data();
  };
}

}  // namespace

#define GSEARCH_DEFINE_FIND(T)                                                                     \
  void find(const cpu_t& exec, find_mode mode, span<const T> data, const predicate<T>& pred,       \
            span<int64_t> result, const find_options& options) {                                   \
    check_find(mode, data, pred, options);                                                         \
    check_result(result);                                                                          \
    cpu_backend::find(exec.threads, mode, data.data(), data.size(), pred, options.strategy,        \
                      study_per_thread(options, data.size()), options.seed, result.data());        \
  }                                                                                                \
  void find(const cuda_t& exec, find_mode mode, span<const T> data, const predicate<T>& pred,      \
            span<int64_t> result, const find_options& options) {                                   \
    check_find(mode, data, pred, options);                                                         \
    check_result(result);                                                                          \
    cuda_backend::find(exec.stream, mode, data.data(), data.size(), pred, options.strategy,        \
                       study_per_thread(options, data.size()), options.seed, result.data());       \
  }                                                                                                \
  int64_t find(const cpu_t& exec, find_mode mode, span<const T> data, const predicate<T>& pred,    \
               const find_options& options) {                                                      \
    int64_t r = 0;                                                                                 \
    find(exec, mode, data, pred, span<int64_t>(&r, 1), options);                                   \
    return r;                                                                                      \
  }                                                                                                \
  int64_t find(const cuda_t& exec, find_mode mode, span<const T> data, const predicate<T>& pred,   \
               const find_options& options) {                                                      \
    check_find(mode, data, pred, options);                                                         \
    return cuda_backend::find_value(exec.stream, mode, data.data(), data.size(), pred,             \
                                    options.strategy, study_per_thread(options, data.size()),      \
                                    options.seed);                                                 \
  }                                                                                                \
  int64_t find_all(const cpu_t& exec, span<const T> data, const predicate<T>& pred,                \
                   const std::function<int64_t*(int64_t)>& allocate) {                             \
    check_find(find_mode::first, data, pred, {});                                                  \
    return cpu_backend::find_all(exec.threads, data.data(), data.size(), pred, allocate);          \
  }                                                                                                \
  int64_t find_all(const cuda_t& exec, span<const T> data, const predicate<T>& pred,               \
                   const std::function<int64_t*(int64_t)>& allocate) {                             \
    check_find(find_mode::first, data, pred, {});                                                  \
    return cuda_backend::find_all(exec.stream, data.data(), data.size(), pred, allocate, nullptr); \
  }                                                                                                \
  int64_t find_all(const cpu_t& exec, span<const T> data, const predicate<T>& pred,                \
                   span<int64_t> out) {                                                            \
    return find_all(exec, data, pred, into(out));                                                  \
  }                                                                                                \
  int64_t find_all(const cuda_t& exec, span<const T> data, const predicate<T>& pred,               \
                   span<int64_t> out) {                                                            \
    check_find(find_mode::first, data, pred, {});                                                  \
    /* Room for any result: written without waiting for the count (one round trip less). */      \
    int64_t* room = out.size() >= data.size() && out.data() ? out.data() : nullptr;               \
    return cuda_backend::find_all(exec.stream, data.data(), data.size(), pred, into(out), room);   \
  }                                                                                                \
  void isin(const cpu_t& exec, span<const T> elements, span<const T> tests, span<bool> out,        \
            const isin_options& options) {                                                         \
    check_isin(elements, tests, out, options);                                                     \
    cpu_backend::isin(exec.threads, elements.data(), elements.size(), tests.data(), tests.size(),  \
                      out.data(), options.invert, int(options.method));                            \
  }                                                                                                \
  void isin(const cuda_t& exec, span<const T> elements, span<const T> tests, span<bool> out,       \
            const isin_options& options) {                                                         \
    check_isin(elements, tests, out, options);                                                     \
    cuda_backend::isin(exec.stream, elements.data(), elements.size(), tests.data(), tests.size(),  \
                       out.data(), options.invert, int(options.method));                           \
  }
GSEARCH_KEY_TYPES(GSEARCH_DEFINE_FIND)
#undef GSEARCH_DEFINE_FIND

}  // namespace gsearch
