// gsearch._core's as-of join (gsearch/asof.hpp): asof_join, grouped or not, and the table of its
// directions (ASOF_DIRECTIONS). The Python layer (python/gsearch/_asof.py) factorizes `by`
// columns into group codes, views datetimes as int64 and converts the tolerance to the keys'
// dtype; this layer checks the arrays and calls the library.

#include <nanobind/stl/optional.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

/// The tolerance v (None, or a Python int / float the Python layer made a value of T) as a T;
/// ValueError when T does not hold it exactly.
template <class T>
std::optional<T> tolerance_of(const std::string& fn, nb::handle v, nb::dlpack::dtype dt) {
  if (v.is_none()) return std::nullopt;
  if constexpr (std::is_integral_v<T>) {
    T x{};
    if (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr()) && nb::try_cast<T>(v, x, false)) return x;
  } else {
    if (PyFloat_Check(v.ptr()) || (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr()))) {
      const double d = PyFloat_Check(v.ptr()) ? PyFloat_AS_DOUBLE(v.ptr()) : PyLong_AsDouble(v.ptr());
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
      } else if (std::isnan(d) || std::isinf(d) || std::fabs(d) <= double(std::numeric_limits<T>::max())) {
        const T x = T(d);
        if (std::isnan(d) || double(x) == d) return x;
      }
    }
  }
  value_error(fn + ": tolerance " + std::string(nb::repr(v).c_str()) + " is not a value of " + dtype_name(dt));
}

void check_codes_array(const std::string& fn, const char* what, const in_array& a) {
  if (a.dtype() != nb::dtype<int64_t>())
    type_error(fn + ": " + what + " must be int64 group codes, not " + dtype_name(a.dtype()));
  check_flat(fn, what, a);
}

void py_asof_join(const in_array& left, const in_array& right, out_array& out, std::optional<in_array> left_by,
                  std::optional<in_array> right_by, int64_t groups, int direction, bool allow_exact_matches,
                  nb::handle tolerance, bool check_sorted, bool sort, uintptr_t stream) {
  const std::string fn = "gsearch._core.asof_join";
  if (left_by.has_value() != right_by.has_value()) value_error(fn + ": pass both left_by and right_by, or neither");
  if (direction < 0 || direction > int(gsearch::asof_direction::nearest))
    value_error(fn + ": direction " + std::to_string(direction) + " out of range (a value of ASOF_DIRECTIONS)");
  const bool grouped = left_by.has_value();
  const placement at =
      grouped ? place(fn, {locate("left", left), locate("right", right), locate("out", out),
                           locate("left_by", *left_by), locate("right_by", *right_by)})
              : place(fn, {locate("left", left), locate("right", right), locate("out", out)});
  check_same_dtype(fn, "left", left, "right", right);
  check_flat(fn, "left", left);
  check_flat(fn, "right", right);
  check_flat(fn, "out", out);
  if (out.dtype() != nb::dtype<int64_t>()) type_error(fn + ": out must be int64, not " + dtype_name(out.dtype()));
  if (grouped) {
    check_codes_array(fn, "left_by", *left_by);
    check_codes_array(fn, "right_by", *right_by);
  }
  const int64_t n = int64_t(left.size()), m = int64_t(right.size());
  visit_key_type(fn, left.dtype(), [&]<class T>() {
    gsearch::asof_options<T> options;
    options.direction = gsearch::asof_direction(direction);
    options.allow_exact_matches = allow_exact_matches;
    options.tolerance = tolerance_of<T>(fn, tolerance, left.dtype());
    options.check_sorted = check_sorted;
    options.sort = sort;
    on_backend(at, stream, n >= small_search_queries || m >= small_scan_elements, [&](const auto& exec) {
      if (grouped)
        gsearch::asof_join(exec, in_span<T>(left), in_span<T>(right), in_span<int64_t>(*left_by),
                           in_span<int64_t>(*right_by), groups, out_span<int64_t>(out), options);
      else
        gsearch::asof_join(exec, in_span<T>(left), in_span<T>(right), out_span<int64_t>(out), options);
    });
  });
}

}  // namespace

void bind_asof(nb::module_& m) {
  m.attr("ASOF_DIRECTIONS") = enum_table(enum_values(gsearch::asof_direction::nearest));
  m.def("asof_join", &py_asof_join, "left"_a, "right"_a, "out"_a, "left_by"_a = nb::none(),
        "right_by"_a = nb::none(), "groups"_a = 0, "direction"_a = 0, "allow_exact_matches"_a = true,
        "tolerance"_a = nb::none(), "check_sorted"_a = true, "sort"_a = false, "stream"_a = 0,
        "out[i] = the right row matched to left[i] by the as-of rule, or -1 (gsearch::asof_join;\n"
        "pandas.merge_asof's matches). left, right: C-contiguous 1-D arrays of one supported dtype;\n"
        "out: C-contiguous int64 of len(left). left_by / right_by (both or neither): int64 group\n"
        "codes in [0, groups), one per row. direction: a value of ASOF_DIRECTIONS; tolerance: None\n"
        "or a Python int / float that the keys' dtype holds exactly (>= 0). check_sorted: pandas'\n"
        "checks (sorted, no NaN: ValueError with its messages); sort: keys in any order. On the\n"
        "CPU (GIL released for large calls) or one CUDA device (on `stream`; the checks wait).");
}

}  // namespace gsearch_python
