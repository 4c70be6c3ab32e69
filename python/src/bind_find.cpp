// gsearch._core's search of unsorted data (gsearch/find.hpp): find, find_all and isin, and the
// tables of their options (FIND_MODES, FIND_OPS, FIND_STRATEGIES, ISIN_METHODS).

#include <nanobind/stl/string.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

/// v (a Python int, or a float for float types) as a T that equals it exactly; ValueError
/// naming `what`, v and the dtype otherwise. The Python layer checks the caller's value against
/// the array's own dtype first (and names it); this is the extension's own guard.
template <class T>
T key_value(const std::string& fn, const char* what, nb::handle v, nb::dlpack::dtype dt) {
  if constexpr (std::is_integral_v<T>) {
    T x{};
    if (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr()) && nb::try_cast<T>(v, x, false)) return x;
  } else {
    if (PyFloat_Check(v.ptr())) {
      const double d = PyFloat_AS_DOUBLE(v.ptr());
      if (std::isnan(d)) return T(d);
      if (std::isinf(d) || std::fabs(d) <= double(std::numeric_limits<T>::max())) {
        const T x = T(d);
        if (double(x) == d) return x;
      }
    } else if (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr())) {
      const double d = PyLong_AsDouble(v.ptr());
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();  // beyond double: not a T either
      } else if (std::fabs(d) <= double(std::numeric_limits<T>::max())) {
        nb::object back = nb::steal(PyLong_FromDouble(d));
        if (back.is_valid() && back.equal(v)) return T(d);
        PyErr_Clear();
      }
    }
  }
  value_error(fn + ": " + what + " " + std::string(nb::repr(v).c_str()) + " is not representable in " +
              dtype_name(dt) + " (pass a Python int for integer " +
              "data, a float or int that the dtype holds exactly for float data)");
}

void check_op(const std::string& fn, int op) {
  if (op < 0 || op > int(gsearch::find_op::in_range))
    value_error(fn + ": op " + std::to_string(op) + " out of range (a value of FIND_OPS)");
}

/// The predicate `op` with value (and hi for in_range), read with the GIL held.
template <class T>
gsearch::predicate<T> make_predicate(const std::string& fn, int op, nb::handle value, nb::handle hi,
                                     nb::dlpack::dtype dt) {
  gsearch::predicate<T> p;
  p.op = gsearch::find_op(op);
  p.value = key_value<T>(fn, "value", value, dt);
  if (p.op == gsearch::find_op::in_range) {
    if (hi.is_none()) value_error(fn + ": op 'in' needs hi (value <= x < hi)");
    p.hi = key_value<T>(fn, "hi", hi, dt);
  } else {
    p.hi = p.value;
  }
  return p;
}

/// The checks of find and find_all's data: one device, 1-D, C-contiguous.
placement check_data(const std::string& fn, const in_array& data) {
  const placement at = place(fn, {locate("data", data)});
  if (data.ndim() != 1)
    value_error(fn + ": data must be 1-D (has " + std::to_string(data.ndim()) + " dimensions)");
  if (!is_c_contiguous(data)) value_error(fn + ": data must be contiguous");
  return at;
}

int64_t py_find(const in_array& data, int mode, int op, nb::handle value, nb::handle hi, int strategy,
                int64_t per_thread, uint64_t seed, uintptr_t stream) {
  const std::string fn = "gsearch._core.find";
  if (mode < 0 || mode > int(gsearch::find_mode::count))
    value_error(fn + ": mode " + std::to_string(mode) + " out of range (a value of FIND_MODES)");
  check_op(fn, op);
  if (strategy < 0 || strategy > int(gsearch::find_strategy::one_per_thread))
    value_error(fn + ": strategy " + std::to_string(strategy) + " out of range (a value of FIND_STRATEGIES)");
  const placement at = check_data(fn, data);
  const auto dt = data.dtype();
  const int64_t n = int64_t(data.size());
  int64_t result = 0;
  visit_key_type(fn, dt, [&]<class T>() {
    const gsearch::predicate<T> pred = make_predicate<T>(fn, op, value, hi, dt);
    const gsearch::span<const T> d(static_cast<const T*>(data.data()), n);
    gsearch::find_options options;
    options.strategy = gsearch::find_strategy(strategy);
    options.per_thread = per_thread;
    options.seed = seed;
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      result = gsearch::find(exec, gsearch::find_mode(mode), d, pred, options);
    });
  });
  return result;
}

/// find_all with the output allocated by the caller's framework: the library counts the matches
/// (one scan), calls back once with the count, and fills the array the callback returned (only
/// the blocks that hold matches are read again). The callback runs on the calling thread; it
/// takes the GIL (released for large and CUDA calls) to call `allocate(count)`, which must return
/// a C-contiguous int64 array of `count` elements on the data's device (numpy.empty, torch.empty,
/// cupy.empty on the call's stream). Returns that array.
nb::object py_find_all(const in_array& data, int op, nb::handle value, nb::callable allocate, nb::handle hi,
                       uintptr_t stream) {
  const std::string fn = "gsearch._core.find_all";
  check_op(fn, op);
  const placement at = check_data(fn, data);
  const auto dt = data.dtype();
  const int64_t n = int64_t(data.size());
  nb::object result;  // the caller's array, once allocated
  int64_t count = 0;
  const auto alloc = [&](int64_t c) -> int64_t* {
    nb::gil_scoped_acquire gil;
    nb::object o = allocate(c);
    out_array out;
    if (!nb::try_cast<out_array>(o, out, false))
      type_error(fn + ": allocate(" + std::to_string(c) + ") returned " +
                 std::string(nb::repr(o.type()).c_str()) + ", not an array");
    if (out.dtype() != nb::dtype<int64_t>() || out.ndim() != 1 || int64_t(out.size()) != c ||
        !is_c_contiguous(out))
      type_error(fn + ": allocate(" + std::to_string(c) +
                 ") must return a C-contiguous 1-D int64 array of that many elements "
                 "(got " +
                 dtype_name(out.dtype()) + ", " + std::to_string(out.size()) + " elements)");
    if (out.device_type() != data.device_type() || out.device_id() != data.device_id())
      value_error(fn + ": allocate returned an array on " + device_name(out.device_type(), out.device_id()) +
                  ", the data are on " + device_name(data.device_type(), data.device_id()));
    if (c > 0 && !out.data()) value_error(fn + ": allocate returned a null array");
    result = std::move(o);
    return static_cast<int64_t*>(out.data());
  };
  visit_key_type(fn, dt, [&]<class T>() {
    const gsearch::predicate<T> pred = make_predicate<T>(fn, op, value, hi, dt);
    const gsearch::span<const T> d(static_cast<const T*>(data.data()), n);
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      count = gsearch::find_all(exec, d, pred, std::function<int64_t*(int64_t)>(alloc));
    });
  });
  if (!result.is_valid()) {  // the library calls allocate once, also for 0 matches
    if (count != 0) throw std::runtime_error(fn + ": the library returned matches without allocating");
    alloc(0);
  }
  return result;
}

void py_isin(const in_array& elements, const in_array& tests, out_array& out, bool invert, int method,
             uintptr_t stream) {
  const std::string fn = "gsearch._core.isin";
  if (method < 0 || method > int(gsearch::isin_method::hash))
    value_error(fn + ": method " + std::to_string(method) + " out of range (a value of ISIN_METHODS)");
  const placement at =
      place(fn, {locate("elements", elements), locate("test_elements", tests), locate("out", out)});
  if (elements.dtype() != tests.dtype())
    type_error(fn + ": elements are " + dtype_name(elements.dtype()) + " but test_elements are " +
               dtype_name(tests.dtype()));
  // bool (or uint8: an exporter's older spelling of a 1-byte bool), written as 0 / 1
  if (out.dtype() != nb::dtype<bool>() && out.dtype() != nb::dtype<uint8_t>())
    type_error(fn + ": out must be bool, not " + dtype_name(out.dtype()));
  if (!is_c_contiguous(elements) || !is_c_contiguous(tests) || !is_c_contiguous(out))
    value_error(fn + ": arrays must be C-contiguous");
  const int64_t n = int64_t(elements.size()), m = int64_t(tests.size());
  if (int64_t(out.size()) != n)
    value_error(fn + ": " + std::to_string(n) + " elements but " + std::to_string(out.size()) +
                " output elements");
  const auto dt = elements.dtype();
  gsearch::isin_options options;
  options.invert = invert;
  options.method = gsearch::isin_method(method);
  visit_key_type(fn, dt, [&]<class T>() {
    const gsearch::span<const T> e(static_cast<const T*>(elements.data()), n);
    const gsearch::span<const T> t(static_cast<const T*>(tests.data()), m);
    const gsearch::span<bool> o(static_cast<bool*>(out.data()), n);
    on_backend(at, stream, n >= small_search_queries || m >= small_scan_elements,
               [&](const auto& exec) { gsearch::isin(exec, e, t, o, options); });
  });
}

}  // namespace

void bind_find(nb::module_& m) {
  nb::dict ops;  // each op by its symbol ("==") and its name ("eq")
  for (const gsearch::find_op op : enum_values(gsearch::find_op::in_range)) {
    ops[nb::str(std::string(gsearch::to_symbol(op)).c_str())] = int(op);
    ops[nb::str(std::string(gsearch::to_string(op)).c_str())] = int(op);
  }
  m.attr("FIND_MODES") = enum_table(enum_values(gsearch::find_mode::count));
  m.attr("FIND_OPS") = ops;
  m.attr("FIND_STRATEGIES") = enum_table(enum_values(gsearch::find_strategy::one_per_thread));
  m.attr("ISIN_METHODS") = enum_table(enum_values(gsearch::isin_method::hash));

  m.def("find", &py_find, "data"_a, "mode"_a, "op"_a, "value"_a, "hi"_a = nb::none(), "strategy"_a = 0,
        "per_thread"_a = 0, "seed"_a = 0, "stream"_a = 0,
        "Unsorted search (gsearch::find): the result of `mode` (a value of FIND_MODES: the\n"
        "lowest matching index, any matching index, a random one drawn from `seed`, each -1 when\n"
        "nothing matches, or the number of matches) for the predicate `op` (a value of FIND_OPS)\n"
        "against `value` (x op value; 'in': value <= x < hi). data: a 1-D C-contiguous array of\n"
        "a supported dtype on the CPU (the GIL is released for large calls) or on one CUDA device\n"
        "(run on `stream`, a cudaStream_t as an int, and waited for). value and hi: Python ints\n"
        "(integer data) or floats / ints that data's dtype holds exactly (ValueError otherwise).\n"
        "strategy: a value of FIND_STRATEGIES, with per_thread elements per thread (0 = 12).");
  m.def("find_all", &py_find_all, "data"_a, "op"_a, "value"_a, "allocate"_a, "hi"_a = nb::none(),
        "stream"_a = 0,
        "Every index i with data[i] op value, ascending (gsearch::find_all), in an array the\n"
        "caller allocates: the library counts the matches in one scan and calls allocate(count)\n"
        "once (with the GIL), which must return a C-contiguous 1-D int64 array of count\n"
        "elements on data's device (numpy.empty, or torch.empty / cupy.empty on `stream`); the\n"
        "library fills it and it is returned. Waits for the result on CUDA. data, op, value,\n"
        "hi, stream: as in find().");
  m.def("isin", &py_isin, "elements"_a, "test_elements"_a, "out"_a, "invert"_a = false, "method"_a = 0,
        "stream"_a = 0,
        "out[i] = elements[i] is among test_elements (gsearch::isin; np.isin, NaN never a\n"
        "member, -0.0 == 0.0; not a member with invert). elements and test_elements: C-contiguous\n"
        "arrays of one supported dtype, any shapes (taken flat); out: C-contiguous bool with\n"
        "elements.size elements. On the CPU or one CUDA device (enqueued on `stream`), as search().\n"
        "method: a value of ISIN_METHODS.");
}

}  // namespace gsearch_python
