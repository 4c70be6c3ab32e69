// The distributed operations' exported overloads (gsearch/dist.hpp): one line each, onto
// operations.hpp with the backend's Local. A build without CUDA throws the one "built without
// CUDA" error for gsearch::cuda (and never references the CUDA backend's steps).

#include "gsearch/dist.hpp"

#include "../backend.hpp"
#include "operations.hpp"

namespace gsearch::dist {
namespace {

// f(local): the backend's Local, or the error of a build without CUDA.
template <class F>
decltype(auto) on_local(const cpu_t& exec, F&& f) {
  return f(detail::local_cpu{exec});
}
template <class F>
decltype(auto) on_local(const cuda_t& exec, F&& f) {
  if constexpr (cuda_built && sizeof(F) > 0) {
    return f(detail::local_cuda{exec});
  } else {
    throw_no_cuda();
    return f(detail::local_cpu{});  // never reached; gives the return type
  }
}

}  // namespace

#define GSEARCH_DEFINE_DIST(EXEC, T)                                                               \
  void search(const EXEC& exec, communicator& comm, side s, span<const T> keys,                   \
              span<const T> queries, span<int64_t> out, layout keys_layout) {                      \
    on_local(exec, [&](auto l) { detail::search(l, comm, s, keys, queries, out, keys_layout); });  \
  }                                                                                                \
  int64_t find(const EXEC& exec, communicator& comm, find_mode mode, span<const T> data,          \
               const predicate<T>& pred) {                                                         \
    return on_local(exec, [&](auto l) { return detail::find(l, comm, mode, data, pred); });       \
  }                                                                                                \
  int64_t find_all(const EXEC& exec, communicator& comm, span<const T> data,                      \
                   const predicate<T>& pred, const std::function<int64_t*(int64_t)>& allocate) {   \
    return on_local(exec, [&](auto l) { return detail::find_all(l, comm, data, pred, allocate); }); \
  }                                                                                                \
  void isin(const EXEC& exec, communicator& comm, span<const T> elements,                         \
            span<const T> test_elements, span<bool> out, const isin_options& options,              \
            layout tests_layout) {                                                                 \
    on_local(exec, [&](auto l) {                                                                   \
      detail::isin(l, comm, elements, test_elements, out, options, tests_layout);                  \
    });                                                                                            \
  }                                                                                                \
  int64_t sort(const EXEC& exec, communicator& comm, span<const T> data,                          \
               const std::function<T*(int64_t)>& allocate) {                                       \
    return on_local(exec, [&](auto l) { return detail::sort(l, comm, data, allocate); });         \
  }                                                                                                \
  int64_t merge(const EXEC& exec, communicator& comm, span<const T> sorted_data,                  \
                const std::function<T*(int64_t)>& allocate, bool check_sorted) {                   \
    return on_local(exec,                                                                          \
                    [&](auto l) { return detail::merge(l, comm, sorted_data, allocate, check_sorted); }); \
  }                                                                                                \
  int64_t join(const EXEC& exec, communicator& comm, join_kind kind, span<const T> left,          \
               span<const T> right, const std::function<join_output(int64_t)>& allocate) {         \
    return on_local(exec, [&](auto l) { return detail::join(l, comm, kind, left, right, allocate); }); \
  }

GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_DIST, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_DIST, cuda_t)
#undef GSEARCH_DEFINE_DIST

}  // namespace gsearch::dist
