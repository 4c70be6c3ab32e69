// The distributed operations' exported overloads (gsearch/dist.hpp): one line each, onto
// operations.hpp with the backend's Local, over an agreeing communicator (agreed.hpp: the ranks
// fail together). A build without CUDA throws the one "built without CUDA" error for
// gsearch::cuda (and never references the CUDA backend's steps).

#include "gsearch/dist.hpp"

#include "on_backend.hpp"
#include "agreed.hpp"
#include "asof_join.hpp"
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

// f(local, c): operation `op` on the backend's Local, its collectives through c, which agrees
// before each and once at the end (agreed.hpp).
template <class Exec, class F>
decltype(auto) agreed(const Exec& exec, communicator& comm, const char* op, F&& f) {
  return on_local(exec, [&](auto l) {
    detail::agreeing_communicator c(comm, op);
    return c.run(l.stream(), [&](communicator& agreeing) { return f(l, agreeing); });
  });
}

}  // namespace

#define GSEARCH_DEFINE_DIST(EXEC, T)                                                               \
  void search(const EXEC& exec, communicator& comm, side s, span<const T> keys,                   \
              span<const T> queries, span<int64_t> out, layout keys_layout) {                      \
    agreed(exec, comm, "search",                                                                   \
           [&](auto l, communicator& c) { detail::search(l, c, s, keys, queries, out, keys_layout); }); \
  }                                                                                                \
  int64_t find(const EXEC& exec, communicator& comm, find_mode mode, span<const T> data,          \
               const predicate<T>& pred) {                                                         \
    return agreed(exec, comm, "find",                                                              \
                  [&](auto l, communicator& c) { return detail::find(l, c, mode, data, pred); });  \
  }                                                                                                \
  int64_t find_all(const EXEC& exec, communicator& comm, span<const T> data,                      \
                   const predicate<T>& pred, const std::function<int64_t*(int64_t)>& allocate) {   \
    return agreed(exec, comm, "find_all",                                                          \
                  [&](auto l, communicator& c) { return detail::find_all(l, c, data, pred, allocate); }); \
  }                                                                                                \
  void isin(const EXEC& exec, communicator& comm, span<const T> elements,                         \
            span<const T> test_elements, span<bool> out, const isin_options& options,              \
            layout tests_layout) {                                                                 \
    agreed(exec, comm, "isin", [&](auto l, communicator& c) {                                      \
      detail::isin(l, c, elements, test_elements, out, options, tests_layout);                     \
    });                                                                                            \
  }                                                                                                \
  int64_t sort(const EXEC& exec, communicator& comm, span<const T> data,                          \
               const std::function<T*(int64_t)>& allocate) {                                       \
    return agreed(exec, comm, "sort",                                                              \
                  [&](auto l, communicator& c) { return detail::sort(l, c, data, allocate); });    \
  }                                                                                                \
  int64_t merge(const EXEC& exec, communicator& comm, span<const T> sorted_data,                  \
                const std::function<T*(int64_t)>& allocate, bool check_sorted) {                   \
    return agreed(exec, comm, "merge", [&](auto l, communicator& c) {                              \
      return detail::merge(l, c, sorted_data, allocate, check_sorted);                             \
    });                                                                                            \
  }                                                                                                \
  int64_t join(const EXEC& exec, communicator& comm, join_kind kind, span<const T> left,          \
               span<const T> right, const std::function<join_output(int64_t)>& allocate) {         \
    return agreed(exec, comm, "join",                                                              \
                  [&](auto l, communicator& c) { return detail::join(l, c, kind, left, right, allocate); }); \
  }                                                                                                \
  void asof_join(const EXEC& exec, communicator& comm, span<const T> left_on, span<const T> right_on, \
                 span<int64_t> right_index, const asof_options<T>& options, layout right_layout) {  \
    agreed(exec, comm, "asof_join", [&](auto l, communicator& c) {                                 \
      detail::asof_join(l, c, left_on, right_on, nullptr, nullptr, 0, right_index, options, right_layout); \
    });                                                                                            \
  }                                                                                                \
  void asof_join(const EXEC& exec, communicator& comm, span<const T> left_on, span<const T> right_on, \
                 span<const int64_t> left_by, span<const int64_t> right_by, int64_t groups,         \
                 span<int64_t> right_index, const asof_options<T>& options, layout right_layout) {  \
    agreed(exec, comm, "asof_join", [&](auto l, communicator& c) {                                 \
      detail::asof_join(l, c, left_on, right_on, &left_by, &right_by, groups, right_index, options, right_layout); \
    });                                                                                            \
  }

GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_DIST, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_DIST, cuda_t)
#undef GSEARCH_DEFINE_DIST

}  // namespace gsearch::dist
