// The public unsorted-search API: argument checks shared by both backends, each function written
// once for either execution tag, then the backend call (src/on_backend.hpp).

#include "gsearch/find.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "on_backend.hpp"
#include "find/backend.hpp"

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

template <class Exec, class T>
void find_impl(const Exec& exec, find_mode mode, span<const T> data, const predicate<T>& pred,
               span<int64_t> result, const find_options& options) {
  check_find(mode, data, pred, options);
  check_result(result);
  on_backend(exec, [&](auto h) {
    backend::find(h, mode, data.data(), data.size(), pred, options.strategy, study_per_thread(options, data.size()),
                  options.seed, result.data());
  });
}

// The value form: the CPU through a local result; CUDA through a device word it reuses
// (find_value waits for it).
template <class Exec, class T>
int64_t find_value_impl(const Exec& exec, find_mode mode, span<const T> data, const predicate<T>& pred,
                        const find_options& options) {
  check_find(mode, data, pred, options);
  return on_backend(exec, [&](auto h) {
    if constexpr (on_cpu<decltype(h)>) {
      int64_t r = 0;
      backend::find(h, mode, data.data(), data.size(), pred, options.strategy, study_per_thread(options, data.size()),
                    options.seed, &r);
      return r;
    } else {
      return backend::find_value(h, mode, data.data(), data.size(), pred, options.strategy,
                                 study_per_thread(options, data.size()), options.seed);
    }
  });
}

// find_all. `room`: an output known to hold any result (n elements), which CUDA writes without
// waiting for the count (one round trip less); the CPU needs no such hint.
template <class Exec, class T>
int64_t find_all_impl(const Exec& exec, span<const T> data, const predicate<T>& pred,
                      const std::function<int64_t*(int64_t)>& allocate, int64_t* room = nullptr) {
  check_find(find_mode::first, data, pred, {});
  return on_backend(exec, [&](auto h) {
    if constexpr (on_cpu<decltype(h)>) {
      return backend::find_all(h, data.data(), data.size(), pred, allocate);
    } else {
      return backend::find_all(h, data.data(), data.size(), pred, allocate, room);
    }
  });
}

template <class Exec, class T>
void isin_impl(const Exec& exec, span<const T> elements, span<const T> tests, span<bool> out,
               const isin_options& options) {
  check_isin(elements, tests, out, options);
  on_backend(exec, [&](auto h) {
    backend::isin(h, elements.data(), elements.size(), tests.data(), tests.size(), out.data(), options.invert,
                  int(options.method));
  });
}

}  // namespace

// The exported overloads: one line each, per key type and execution tag.
#define GSEARCH_DEFINE_FIND(EXEC, T)                                                               \
  void find(const EXEC& exec, find_mode mode, span<const T> data, const predicate<T>& pred,        \
            span<int64_t> result, const find_options& options) {                                   \
    find_impl(exec, mode, data, pred, result, options);                                            \
  }                                                                                                \
  int64_t find(const EXEC& exec, find_mode mode, span<const T> data, const predicate<T>& pred,     \
               const find_options& options) {                                                      \
    return find_value_impl(exec, mode, data, pred, options);                                       \
  }                                                                                                \
  int64_t find_all(const EXEC& exec, span<const T> data, const predicate<T>& pred,                 \
                   const std::function<int64_t*(int64_t)>& allocate) {                             \
    return find_all_impl(exec, data, pred, allocate);                                              \
  }                                                                                                \
  int64_t find_all(const EXEC& exec, span<const T> data, const predicate<T>& pred,                 \
                   span<int64_t> out) {                                                            \
    int64_t* room = out.size() >= data.size() && out.data() ? out.data() : nullptr;                \
    return find_all_impl(exec, data, pred, into(out), room);                                       \
  }                                                                                                \
  void isin(const EXEC& exec, span<const T> elements, span<const T> tests, span<bool> out,         \
            const isin_options& options) {                                                         \
    isin_impl(exec, elements, tests, out, options);                                                \
  }
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_FIND, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_FIND, cuda_t)
#undef GSEARCH_DEFINE_FIND

}  // namespace gsearch
