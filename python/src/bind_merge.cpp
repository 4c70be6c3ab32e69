// gsearch._core's merge family (gsearch/merge.hpp): merge, merge_sort, sort, set_operation and join,
// and the tables of their options (SET_OPS, JOIN_KINDS). The results whose size the library
// finds (set_operation, join) go into arrays that a Python callback allocates once it is known.

#include <nanobind/stl/optional.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

template <class Array>
void check_dtype(const std::string& fn, const char* what, const Array& a, nb::dlpack::dtype want) {
  if (a.dtype() != want)
    type_error(fn + ": " + what + " must be " + dtype_name(want) + ", not " + dtype_name(a.dtype()));
}

void py_merge(const in_array& a, const in_array& b, out_array& out, std::optional<in_array> a_values,
              std::optional<in_array> b_values, std::optional<out_array> out_values, bool check_sorted,
              uintptr_t stream) {
  const std::string fn = "gsearch._core.merge";
  const int given = int(a_values.has_value()) + int(b_values.has_value()) + int(out_values.has_value());
  if (given != 0 && given != 3) value_error(fn + ": pass all of a_values, b_values and out_values, or none");
  const bool kv = given == 3;
  const placement at =
      kv ? place(fn, {locate("a", a), locate("b", b), locate("out", out), locate("a_values", *a_values),
                      locate("b_values", *b_values), locate("out_values", *out_values)})
         : place(fn, {locate("a", a), locate("b", b), locate("out", out)});
  check_same_dtype(fn, "a", a, "b", b);
  check_dtype(fn, "out", out, a.dtype());
  check_flat(fn, "a", a);
  check_flat(fn, "b", b);
  check_flat(fn, "out", out);
  if (kv) {
    check_dtype(fn, "a_values", *a_values, nb::dtype<int64_t>());
    check_dtype(fn, "b_values", *b_values, nb::dtype<int64_t>());
    check_dtype(fn, "out_values", *out_values, nb::dtype<int64_t>());
    check_flat(fn, "a_values", *a_values);
    check_flat(fn, "b_values", *b_values);
    check_flat(fn, "out_values", *out_values);
  }
  gsearch::merge_options options;
  options.check_sorted = check_sorted;
  const int64_t n = int64_t(a.size() + b.size());
  visit_key_type(fn, a.dtype(), [&]<class T>() {
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      if (kv)
        gsearch::merge(exec, in_span<T>(a), in_span<int64_t>(*a_values), in_span<T>(b),
                       in_span<int64_t>(*b_values), out_span<T>(out), out_span<int64_t>(*out_values),
                       options);
      else
        gsearch::merge(exec, in_span<T>(a), in_span<T>(b), out_span<T>(out), options);
    });
  });
}

/// merge_sort (`fastest` false) or sort (true): one contract, two algorithms (gsearch/merge.hpp).
void py_sort(const char* name, bool fastest, const in_array& keys, out_array& out, std::optional<in_array> values,
             std::optional<out_array> out_values, uintptr_t stream) {
  const std::string fn = std::string("gsearch._core.") + name;
  if (values.has_value() != out_values.has_value())
    value_error(fn + ": pass both values and out_values, or neither");
  const bool kv = values.has_value();
  const placement at = kv ? place(fn, {locate("keys", keys), locate("out", out), locate("values", *values),
                                       locate("out_values", *out_values)})
                          : place(fn, {locate("keys", keys), locate("out", out)});
  check_dtype(fn, "out", out, keys.dtype());
  check_flat(fn, "keys", keys);
  check_flat(fn, "out", out);
  if (kv) {
    check_dtype(fn, "values", *values, nb::dtype<int64_t>());
    check_dtype(fn, "out_values", *out_values, nb::dtype<int64_t>());
    check_flat(fn, "values", *values);
    check_flat(fn, "out_values", *out_values);
  }
  visit_key_type(fn, keys.dtype(), [&]<class T>() {
    on_backend(at, stream, int64_t(keys.size()) >= small_search_queries, [&](const auto& exec) {
      if (kv && fastest)
        gsearch::sort(exec, in_span<T>(keys), in_span<int64_t>(*values), out_span<T>(out),
                      out_span<int64_t>(*out_values));
      else if (kv)
        gsearch::merge_sort(exec, in_span<T>(keys), in_span<int64_t>(*values), out_span<T>(out),
                            out_span<int64_t>(*out_values));
      else if (fastest)
        gsearch::sort(exec, in_span<T>(keys), out_span<T>(out));
      else
        gsearch::merge_sort(exec, in_span<T>(keys), out_span<T>(out));
    });
  });
}

/// Binds py_sort as `name`: merge_sort (Fastest false) or sort.
template <bool Fastest>
void def_sort(nb::module_& m, const char* name, const char* doc) {
  m.def(
      name,
      [name](const in_array& keys, out_array& out, std::optional<in_array> values,
             std::optional<out_array> out_values, uintptr_t stream) {
        py_sort(name, Fastest, keys, out, values, out_values, stream);
      },
      "keys"_a, "out"_a, "values"_a = nb::none(), "out_values"_a = nb::none(), "stream"_a = 0, doc);
}

/// The multiset set operation `op` of sorted a and b into an array the caller allocates:
/// allocate(size) is called once (with the GIL) and must return a C-contiguous 1-D array of a's
/// dtype and `size` elements on the inputs' device; returns it.
nb::object py_set_operation(const in_array& a, const in_array& b, int op, nb::callable allocate,
                            bool check_sorted, uintptr_t stream) {
  const std::string fn = "gsearch._core.set_operation";
  if (op < 0 || op > int(gsearch::set_op::symmetric_difference))
    value_error(fn + ": op " + std::to_string(op) + " out of range (a value of SET_OPS)");
  const placement at = place(fn, {locate("a", a), locate("b", b)});
  check_same_dtype(fn, "a", a, "b", b);
  check_flat(fn, "a", a);
  check_flat(fn, "b", b);
  gsearch::merge_options options;
  options.check_sorted = check_sorted;
  nb::object result;
  visit_key_type(fn, a.dtype(), [&]<class T>() {
    const auto alloc = [&](int64_t c) -> T* {
      nb::gil_scoped_acquire gil;
      nb::object o = allocate(c);
      T* p = static_cast<T*>(allocated_pointer(fn, "the result", o, c, a.dtype(), a));
      result = std::move(o);
      return p;
    };
    on_backend(at, stream, int64_t(a.size() + b.size()) >= small_scan_elements, [&](const auto& exec) {
      gsearch::set_operation(exec, gsearch::set_op(op), in_span<T>(a), in_span<T>(b),
                             std::function<T*(int64_t)>(alloc), options);
    });
    if (!result.is_valid()) alloc(0);  // the library calls allocate once; never return nothing
  });
  return result;
}

/// The join of sorted left and right as int64 gather maps in arrays the caller allocates:
/// allocate(rows) is called once (with the GIL) and returns (left_index, right_index), each a
/// C-contiguous 1-D int64 array of `rows` elements on the inputs' device (right_index None for
/// semi and anti joins); returns that pair.
nb::object py_join(const in_array& left, const in_array& right, int kind, nb::callable allocate,
                   bool check_sorted, uintptr_t stream) {
  const std::string fn = "gsearch._core.join";
  if (kind < 0 || kind > int(gsearch::join_kind::anti))
    value_error(fn + ": kind " + std::to_string(kind) + " out of range (a value of JOIN_KINDS)");
  const placement at = place(fn, {locate("left", left), locate("right", right)});
  check_same_dtype(fn, "left", left, "right", right);
  check_flat(fn, "left", left);
  check_flat(fn, "right", right);
  const auto k = gsearch::join_kind(kind);
  const bool left_only = gsearch::core::join_left_only(k);
  gsearch::merge_options options;
  options.check_sorted = check_sorted;
  nb::object result;
  const auto alloc = [&](int64_t rows) -> gsearch::join_output {
    nb::gil_scoped_acquire gil;
    nb::object o = allocate(rows);
    if (!nb::isinstance<nb::tuple>(o) || nb::len(o) != 2)
      type_error(fn + ": allocate(" + std::to_string(rows) +
                 ") must return a pair (left_index, right_index)");
    gsearch::join_output out;
    out.left =
        static_cast<int64_t*>(allocated_pointer(fn, "left_index", o[0], rows, nb::dtype<int64_t>(), left));
    if (left_only) {
      if (!o[1].is_none()) value_error(fn + ": a semi or anti join has no right_index: return None");
    } else {
      out.right =
          static_cast<int64_t*>(allocated_pointer(fn, "right_index", o[1], rows, nb::dtype<int64_t>(), left));
    }
    result = std::move(o);
    return out;
  };
  visit_key_type(fn, left.dtype(), [&]<class T>() {
    on_backend(at, stream, int64_t(left.size() + right.size()) >= small_scan_elements, [&](const auto& exec) {
      gsearch::join(exec, k, in_span<T>(left), in_span<T>(right),
                    std::function<gsearch::join_output(int64_t)>(alloc), options);
    });
  });
  if (!result.is_valid()) alloc(0);
  return result;
}

}  // namespace

void bind_merge(nb::module_& m) {
  m.attr("SET_OPS") = enum_table(enum_values(gsearch::set_op::symmetric_difference));
  m.attr("JOIN_KINDS") = enum_table(enum_values(gsearch::join_kind::anti));

  m.def("merge", &py_merge, "a"_a, "b"_a, "out"_a, "a_values"_a = nb::none(), "b_values"_a = nb::none(),
        "out_values"_a = nb::none(), "check_sorted"_a = true, "stream"_a = 0,
        "out = the stable merge of sorted a and b (gsearch::merge; ties take a's first).\n"
        "a, b, out: C-contiguous 1-D arrays of one supported dtype, len(out) = len(a) + len(b);\n"
        "with a_values, b_values, out_values (all three, int64, one per key) each key's value\n"
        "goes with it. check_sorted: ValueError, writing nothing, if a or b is not sorted. On\n"
        "the CPU or one CUDA device (enqueued on `stream`; the sorted check waits).");
  def_sort<false>(m, "merge_sort",
                  "out = keys sorted, stable (gsearch::merge_sort; out may be keys); with values and\n"
                  "out_values (int64) each key's value goes with it. Arrays as in merge().");
  def_sort<true>(m, "sort",
                 "merge_sort's contract by the fastest stable sort for the dtype (gsearch::sort: the\n"
                 "radix sort of integer keys, on the CPU from 2^12 keys; the merge sort of floating-point keys).");
  m.def("set_operation", &py_set_operation, "a"_a, "b"_a, "op"_a, "allocate"_a, "check_sorted"_a = true,
        "stream"_a = 0,
        "The multiset set operation `op` (a value of SET_OPS; std::set_* semantics) of sorted\n"
        "a and b (gsearch::set_operation): the library sizes the result, calls allocate(size)\n"
        "once (with the GIL), which must return a C-contiguous 1-D array of a's dtype and that\n"
        "many elements on the inputs' device, fills it, and it is returned. Waits on CUDA.");
  m.def("join", &py_join, "left"_a, "right"_a, "kind"_a, "allocate"_a, "check_sorted"_a = true,
        "stream"_a = 0,
        "The sort-merge join `kind` (a value of JOIN_KINDS) of sorted left and right\n"
        "(gsearch::join): allocate(rows) is called once (with the GIL) and must return a pair\n"
        "(left_index, right_index) of C-contiguous 1-D int64 arrays of `rows` elements on the\n"
        "inputs' device (right_index None for semi and anti); filled, the pair is returned.");
}

}  // namespace gsearch_python
