// The public merge-like API: argument checks shared by both backends, each function written once
// for either execution tag, then the backend call (src/on_backend.hpp).

#include "gsearch/merge.hpp"

#include <cstdint>
#include <string>

#include "on_backend.hpp"
#include "merge/backend.hpp"

namespace gsearch {
namespace {

template <class T>
void check_data(const char* fn, const char* what, span<T> data) {
  if (data.size() < 0) throw invalid_argument(std::string(fn) + ": " + what + " has a negative size");
  if (data.size() > 0 && !data.data())
    throw invalid_argument(std::string(fn) + ": " + what + " is a null pointer with a non-zero size");
}

template <class T, class U>
bool overlap(span<T> x, span<U> y) {
  if (x.size() == 0 || y.size() == 0) return false;
  const auto x0 = reinterpret_cast<uintptr_t>(x.data()), x1 = x0 + uintptr_t(x.size()) * sizeof(T);
  const auto y0 = reinterpret_cast<uintptr_t>(y.data()), y1 = y0 + uintptr_t(y.size()) * sizeof(U);
  return x0 < y1 && y0 < x1;
}

template <class T, class U>
void check_apart(const char* fn, const char* out_name, span<T> out, const char* in_name,
                 span<U> in) {
  if (overlap(out, in))
    throw invalid_argument(std::string(fn) + ": " + out_name + " overlaps " + in_name);
}

void check_size(const char* fn, const char* what, int64_t size, int64_t expected) {
  if (size != expected)
    throw invalid_argument(std::string(fn) + ": " + what + " has " + std::to_string(size) +
                           " elements, expected " + std::to_string(expected));
}

void check_set_op(set_op op) {
  if (int(op) < 0 || op > set_op::symmetric_difference)
    throw invalid_argument("gsearch::set_operation: unknown operation " + std::to_string(int(op)));
}
void check_join_kind(join_kind kind) {
  if (int(kind) < 0 || kind > join_kind::anti)
    throw invalid_argument("gsearch::join: unknown kind " + std::to_string(int(kind)));
}

template <class Exec, class T>
void check_sorted(const Exec& exec, const merge_options& options, const char* fn,
                  const char* what, span<const T> x) {
  if (options.check_sorted && !sorted_on(exec, x))
    throw invalid_argument(std::string(fn) + ": " + what + " is not sorted (NaN last, -0.0 == 0.0)");
}

// The two inputs of a binary operation: present, sorted.
template <class Exec, class T>
void check_inputs(const Exec& exec, const merge_options& options, const char* fn,
                  const char* a_name, span<const T> a, const char* b_name, span<const T> b) {
  check_data(fn, a_name, a);
  check_data(fn, b_name, b);
  check_sorted(exec, options, fn, a_name, a);
  check_sorted(exec, options, fn, b_name, b);
}

// The backend calls (src/on_backend.hpp), so each public function is written once.
template <class Exec, class T>
int64_t set_size_on(const Exec& exec, set_op op, span<const T> a, span<const T> b) {
  return on_backend(exec, [&](auto h) { return backend::set_operation_size(h, op, a.data(), a.size(), b.data(), b.size()); });
}
template <class Exec, class T>
int64_t set_on(const Exec& exec, set_op op, span<const T> a, span<const T> b, T* out) {
  return on_backend(exec, [&](auto h) { return backend::set_operation(h, op, a.data(), a.size(), b.data(), b.size(), out); });
}

template <class Exec, class T>
void merge_impl(const Exec& exec, span<const T> a, span<const int64_t> av, span<const T> b,
                span<const int64_t> bv, span<T> out, span<int64_t> ov, bool with_values,
                const merge_options& options) {
  const char* fn = "gsearch::merge";
  check_data(fn, "out", out);
  check_size(fn, "out", out.size(), a.size() + b.size());
  check_apart(fn, "out", out, "a", a);
  check_apart(fn, "out", out, "b", b);
  if (with_values) {
    check_data(fn, "a_values", av);
    check_data(fn, "b_values", bv);
    check_data(fn, "out_values", ov);
    check_size(fn, "a_values", av.size(), a.size());
    check_size(fn, "b_values", bv.size(), b.size());
    check_size(fn, "out_values", ov.size(), out.size());
    check_apart(fn, "out_values", ov, "a_values", av);
    check_apart(fn, "out_values", ov, "b_values", bv);
    check_apart(fn, "out_values", ov, "out", out);
  }
  check_inputs(exec, options, fn, "a", a, "b", b);
  on_backend(exec, [&](auto h) {
    backend::merge(h, a.data(), a.size(), b.data(), b.size(), out.data(), with_values ? av.data() : nullptr,
                   with_values ? bv.data() : nullptr, with_values ? ov.data() : nullptr);
  });
}

// merge_sort and sort: one contract (stable, ascending, in place or apart); `radix` picks the
// backend's sort() (the fastest stable sort for T) over its merge sort.
template <class Exec, class T>
void sort_impl(const Exec& exec, span<const T> keys, span<const int64_t> values, span<T> out,
               span<int64_t> ov, bool with_values, bool fastest) {
  const char* fn = fastest ? "gsearch::sort" : "gsearch::merge_sort";
  check_data(fn, "keys", keys);
  check_data(fn, "out", out);
  check_size(fn, "out", out.size(), keys.size());
  // In place, or apart: a partial overlap would read keys already overwritten.
  if (out.data() != keys.data()) check_apart(fn, "out", out, "keys", keys);
  if (with_values) {
    check_data(fn, "values", values);
    check_data(fn, "out_values", ov);
    check_size(fn, "values", values.size(), keys.size());
    check_size(fn, "out_values", ov.size(), keys.size());
    if (ov.data() != values.data()) check_apart(fn, "out_values", ov, "values", values);
    check_apart(fn, "out_values", ov, "keys", keys);
    check_apart(fn, "out_values", ov, "out", out);
    check_apart(fn, "out", out, "values", values);
  }
  on_backend(exec, [&](auto h) {
    const int64_t* v = with_values ? values.data() : nullptr;
    int64_t* o = with_values ? ov.data() : nullptr;
    if (fastest) {
      backend::sort(h, keys.data(), keys.size(), v, out.data(), o);
    } else {
      backend::merge_sort(h, keys.data(), keys.size(), v, out.data(), o);
    }
  });
}

template <class Exec, class T>
int64_t set_size_impl(const Exec& exec, set_op op, span<const T> a, span<const T> b,
                      const merge_options& options) {
  check_set_op(op);
  check_inputs(exec, options, "gsearch::set_operation", "a", a, "b", b);
  return set_size_on(exec, op, a, b);
}

template <class Exec, class T>
int64_t set_impl(const Exec& exec, set_op op, span<const T> a, span<const T> b, span<T> out,
                 const merge_options& options) {
  const char* fn = "gsearch::set_operation";
  check_set_op(op);
  check_data(fn, "out", out);
  check_apart(fn, "out", out, "a", a);
  check_apart(fn, "out", out, "b", b);
  check_inputs(exec, options, fn, "a", a, "b", b);
  if (out.size() < core::set_op_bound(op, a.size(), b.size())) {
    const int64_t size = set_size_on(exec, op, a, b);  // a counting pass first
    if (size > out.size())
      throw invalid_argument(std::string(fn) + ": the " + to_string(op) + " has " +
                             std::to_string(size) + " elements, more than out's " +
                             std::to_string(out.size()));
  }
  return set_on(exec, op, a, b, out.data());
}

template <class Exec, class T>
int64_t set_alloc_impl(const Exec& exec, set_op op, span<const T> a, span<const T> b,
                       const std::function<T*(int64_t)>& allocate, const merge_options& options) {
  const int64_t size = set_size_impl(exec, op, a, b, options);
  T* out = allocate(size);
  if (size > 0 && !out) throw invalid_argument("gsearch::set_operation: allocate returned null");
  check_apart("gsearch::set_operation", "the allocated output", span<T>(out, size), "a", a);
  check_apart("gsearch::set_operation", "the allocated output", span<T>(out, size), "b", b);
  if (size == 0) return 0;
  return set_on(exec, op, a, b, out);
}

template <class Exec, class T>
int64_t join_size_impl(const Exec& exec, join_kind kind, span<const T> l, span<const T> r,
                       const merge_options& options) {
  check_join_kind(kind);
  check_inputs(exec, options, "gsearch::join", "left", l, "right", r);
  return on_backend(exec, [&](auto h) { return backend::join_size(h, kind, l.data(), l.size(), r.data(), r.size()); });
}

template <class Exec, class T>
int64_t join_impl(const Exec& exec, join_kind kind, span<const T> l, span<const T> r,
                  const std::function<join_output(int64_t)>& allocate,
                  const merge_options& options) {
  check_join_kind(kind);
  check_inputs(exec, options, "gsearch::join", "left", l, "right", r);
  const bool left_only = core::join_left_only(kind);
  const std::function<join_output(int64_t)> checked = [&](int64_t rows) {
    join_output o = allocate(rows);
    if (rows > 0 && (!o.left || (!left_only && !o.right)))
      throw invalid_argument("gsearch::join: allocate returned a null output");
    if (left_only) o.right = nullptr;
    return o;
  };
  return on_backend(exec, [&](auto h) { return backend::join(h, kind, l.data(), l.size(), r.data(), r.size(), checked); });
}

template <class Exec, class T>
int64_t join_span_impl(const Exec& exec, join_kind kind, span<const T> l, span<const T> r,
                       span<int64_t> li, span<int64_t> ri, const merge_options& options) {
  const char* fn = "gsearch::join";
  check_data(fn, "left_index", li);
  check_data(fn, "right_index", ri);
  const bool left_only = core::join_left_only(kind);
  if (left_only && ri.size() > 0)
    throw invalid_argument(std::string(fn) + ": a " + to_string(kind) +
                           " join writes no right indices; pass an empty right_index");
  check_apart(fn, "left_index", li, "right_index", ri);
  return join_impl(exec, kind, l, r, [&](int64_t rows) {
    if (li.size() < rows || (!left_only && ri.size() < rows))
      throw invalid_argument(std::string(fn) + ": the " + to_string(kind) + " join has " +
                             std::to_string(rows) + " rows, more than the outputs hold (" +
                             std::to_string(li.size()) +
                             (left_only ? "" : ", " + std::to_string(ri.size())) + ")");
    return join_output{li.data(), left_only ? nullptr : ri.data()};
  }, options);
}

}  // namespace

#define GSEARCH_DEFINE_MERGE(EXEC, T)                                                              \
  void merge(const EXEC& exec, span<const T> a, span<const T> b, span<T> out,                     \
             const merge_options& options) {                                                       \
    merge_impl(exec, a, {}, b, {}, out, {}, false, options);                                       \
  }                                                                                                \
  void merge(const EXEC& exec, span<const T> a, span<const int64_t> av, span<const T> b,          \
             span<const int64_t> bv, span<T> out, span<int64_t> ov,                                \
             const merge_options& options) {                                                       \
    merge_impl(exec, a, av, b, bv, out, ov, true, options);                                        \
  }                                                                                                \
  void merge_sort(const EXEC& exec, span<const T> keys, span<T> out) {                             \
    sort_impl(exec, keys, {}, out, {}, false, false);                                              \
  }                                                                                                \
  void merge_sort(const EXEC& exec, span<const T> keys, span<const int64_t> values,               \
                  span<T> out, span<int64_t> out_values) {                                         \
    sort_impl(exec, keys, values, out, out_values, true, false);                                   \
  }                                                                                                \
  void sort(const EXEC& exec, span<const T> keys, span<T> out) {                                   \
    sort_impl(exec, keys, {}, out, {}, false, true);                                               \
  }                                                                                                \
  void sort(const EXEC& exec, span<const T> keys, span<const int64_t> values, span<T> out,         \
            span<int64_t> out_values) {                                                            \
    sort_impl(exec, keys, values, out, out_values, true, true);                                    \
  }                                                                                                \
  int64_t set_operation_size(const EXEC& exec, set_op op, span<const T> a, span<const T> b,       \
                             const merge_options& options) {                                       \
    return set_size_impl(exec, op, a, b, options);                                                 \
  }                                                                                                \
  int64_t set_operation(const EXEC& exec, set_op op, span<const T> a, span<const T> b,            \
                        span<T> out, const merge_options& options) {                               \
    return set_impl(exec, op, a, b, out, options);                                                 \
  }                                                                                                \
  int64_t set_operation(const EXEC& exec, set_op op, span<const T> a, span<const T> b,            \
                        const std::function<T*(int64_t)>& allocate,                                \
                        const merge_options& options) {                                            \
    return set_alloc_impl(exec, op, a, b, allocate, options);                                      \
  }                                                                                                \
  int64_t join_size(const EXEC& exec, join_kind kind, span<const T> l, span<const T> r,           \
                    const merge_options& options) {                                                \
    return join_size_impl(exec, kind, l, r, options);                                              \
  }                                                                                                \
  int64_t join(const EXEC& exec, join_kind kind, span<const T> l, span<const T> r,                \
               const std::function<join_output(int64_t)>& allocate,                                \
               const merge_options& options) {                                                     \
    return join_impl(exec, kind, l, r, allocate, options);                                         \
  }                                                                                                \
  int64_t join(const EXEC& exec, join_kind kind, span<const T> l, span<const T> r,                \
               span<int64_t> li, span<int64_t> ri, const merge_options& options) {                 \
    return join_span_impl(exec, kind, l, r, li, ri, options);                                      \
  }
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_MERGE, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_MERGE, cuda_t)
#undef GSEARCH_DEFINE_MERGE

}  // namespace gsearch
