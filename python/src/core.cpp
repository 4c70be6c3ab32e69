// gsearch._core: the thin nanobind layer under the Python package (python/gsearch/__init__.py).
//
// It takes arrays through nb::ndarray (DLPack or the buffer protocol: the caller's memory, no
// copy), checks what the library cannot see (dtypes, devices, contiguity), and calls
// gsearch::search / gsearch::search_rows, gsearch::static_index (the class Index), gsearch::find /
// find_all / isin, and the merge-like operations (merge, merge_sort, set_operation, join) on the
// CPU (GIL released for large calls) or on a CUDA stream (on the arrays' device, restored
// afterwards).
// Promotion, shapes, sorter, the exactness of a find value, framework arrays and the numpy /
// torch semantics live in the Python layer.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "gsearch/gsearch.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using in_array = nb::ndarray<nb::ro>;  // any dtype, shape and device; read-only
using out_array = nb::ndarray<>;

[[noreturn]] void value_error(const std::string& msg) { throw nb::value_error(msg.c_str()); }

template <class Array>
bool is_c_contiguous(const Array& a) {
  if (a.size() == 0) return true;  // exporters give empty arrays arbitrary strides
  int64_t expected = 1;
  for (size_t d = a.ndim(); d-- > 0;) {
    if (a.shape(d) != 1 && a.stride(d) != expected) return false;
    expected *= int64_t(a.shape(d));
  }
  return true;
}

std::string dtype_name(nb::dlpack::dtype t) {
  const char* kind = "?";
  switch (nb::dlpack::dtype_code(t.code)) {
    case nb::dlpack::dtype_code::Int: kind = "int"; break;
    case nb::dlpack::dtype_code::UInt: kind = "uint"; break;
    case nb::dlpack::dtype_code::Float: kind = "float"; break;
    case nb::dlpack::dtype_code::Bfloat: kind = "bfloat"; break;
    case nb::dlpack::dtype_code::Complex: kind = "complex"; break;
    case nb::dlpack::dtype_code::Bool: kind = "bool"; break;
    default: break;
  }
  return std::string(kind) + std::to_string(int(t.bits)) + (t.lanes != 1 ? "x" + std::to_string(int(t.lanes)) : "");
}

std::string device_name(int type, int id) {
  if (type == nb::device::cpu::value) return "cpu";
  if (type == nb::device::cuda::value) return "cuda:" + std::to_string(id);
  return "DLPack device type " + std::to_string(type) + ":" + std::to_string(id);
}

/// Sets the current CUDA device for the duration of a call (only when it differs).
class device_guard {
 public:
  explicit device_guard(int device) {
    prev_ = gsearch::cuda_current_device();
    if (prev_ != device) {
      gsearch::cuda_set_device(device);
      changed_ = true;
    }
  }
  ~device_guard() {
    if (changed_) {
      try {
        gsearch::cuda_set_device(prev_);
      } catch (...) {
      }
    }
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int prev_ = 0;
  bool changed_ = false;
};

template <class T, class Out>
void run(bool on_cuda, uintptr_t stream, gsearch::side s, int64_t rows, const void* keys, int64_t k,
         const void* queries, int64_t n, void* out, const gsearch::search_options& options) {
  gsearch::span<const T> kk(static_cast<const T*>(keys), k), qq(static_cast<const T*>(queries), n);
  gsearch::span<Out> oo(static_cast<Out*>(out), n);
  if (on_cuda) {
    auto exec = gsearch::cuda.on(reinterpret_cast<CUstream_st*>(stream));
    if (rows < 0)
      gsearch::search(exec, s, kk, qq, oo, options);
    else
      gsearch::search_rows(exec, s, rows, kk, qq, oo, options);
  } else {
    const auto exec = gsearch::cpu;  // all cores, but a small call runs on the calling thread
    if (rows < 0)
      gsearch::search(exec, s, kk, qq, oo, options);
    else
      gsearch::search_rows(exec, s, rows, kk, qq, oo, options);
  }
}

/// Calls f.template operator()<T>() with T the key type of DLPack dtype t; false (and no call)
/// for a dtype gsearch does not search. The one list of supported dtypes in the extension.
template <class F>
bool visit_key_type(nb::dlpack::dtype t, F&& f) {
  using code = nb::dlpack::dtype_code;
  if (t.lanes != 1 || (t.bits != 32 && t.bits != 64)) return false;
  const bool wide = t.bits == 64;
  if (t.code == uint8_t(code::Int)) return wide ? f.template operator()<int64_t>() : f.template operator()<int32_t>();
  if (t.code == uint8_t(code::UInt)) return wide ? f.template operator()<uint64_t>() : f.template operator()<uint32_t>();
  if (t.code == uint8_t(code::Float)) return wide ? f.template operator()<double>() : f.template operator()<float>();
  return false;
}

/// Calls below these sizes run with the GIL held: releasing and re-taking it costs more than
/// the work (a search is O(log K) per query; a scan reads ~1 ns per element; the sortedness
/// check is O(K)).
constexpr int64_t small_search_queries = 2048;
constexpr int64_t small_scan_elements = int64_t{1} << 15;

/// Runs `call` with the GIL released when it is `large` (see above) or on CUDA (CUDA calls only
/// enqueue, but may wait: check_sorted, find's result, find_all's count). The one GIL rule of
/// the extension.
template <class F>
void with_gil_policy(bool on_cuda, bool large, F&& call) {
  if (on_cuda || large) {
    nb::gil_scoped_release nogil;
    call();
  } else {
    call();
  }
}

/// out = search of queries in keys (rows < 0) or of each row (rows >= 0), Out the output type;
/// false for an unsupported key dtype.
template <class Out>
bool dispatch_key(nb::dlpack::dtype t, bool on_cuda, uintptr_t stream, gsearch::side s, int64_t rows,
                  const void* keys, int64_t k, const void* queries, int64_t n, void* out,
                  const gsearch::search_options& o) {
  return visit_key_type(t, [&]<class T>() {
    run<T, Out>(on_cuda, stream, s, rows, keys, k, queries, n, out, o);
    return true;
  });
}

void search(const in_array& keys, const in_array& queries, out_array& out, int side_code, int algo,
            bool check_sorted, int64_t rows, uintptr_t stream, bool queries_sorted,
            std::optional<int64_t> max_temp_bytes) {
  if (side_code < 0 || side_code > 2) value_error("gsearch._core.search: side must be 0, 1 or 2");
  if (algo < 0 || algo > int(gsearch::algorithm::pary))
    value_error("gsearch._core.search: algo out of range");
  const int dev_type = keys.device_type(), dev_id = keys.device_id();
  if (queries.device_type() != dev_type || queries.device_id() != dev_id ||
      out.device_type() != dev_type || out.device_id() != dev_id)
    value_error("gsearch._core.search: arrays on different devices (keys on " +
                device_name(dev_type, dev_id) + ", queries on " +
                device_name(queries.device_type(), queries.device_id()) + ", out on " +
                device_name(out.device_type(), out.device_id()) + ")");
  const bool on_cuda = dev_type == nb::device::cuda::value;
  if (!on_cuda && dev_type != nb::device::cpu::value)
    value_error("gsearch._core.search: unsupported device " + device_name(dev_type, dev_id));
  if (keys.dtype() != queries.dtype())
    throw nb::type_error(("gsearch._core.search: keys are " + dtype_name(keys.dtype()) +
                          " but queries are " + dtype_name(queries.dtype()))
                             .c_str());
  if (!is_c_contiguous(keys) || !is_c_contiguous(queries) || !is_c_contiguous(out))
    value_error("gsearch._core.search: arrays must be C-contiguous");
  const int64_t k = int64_t(keys.size()), n = int64_t(queries.size());
  if (int64_t(out.size()) != n)
    value_error("gsearch._core.search: " + std::to_string(n) + " queries but " +
                std::to_string(out.size()) + " output elements");

  if (queries_sorted && rows >= 0)
    value_error("gsearch._core.search: queries_sorted applies to one sorted key list (rows < 0)");
  gsearch::search_options options{gsearch::algorithm(algo), check_sorted};
  options.queries_sorted = queries_sorted;
  if (max_temp_bytes) {
    if (*max_temp_bytes < 0) value_error("gsearch: max_temp_bytes must be None or >= 0, not " + std::to_string(*max_temp_bytes));
    options.max_temp_bytes = *max_temp_bytes;
  }
  const auto s = gsearch::side(side_code);
  const auto kt = keys.dtype();
  const void* kp = keys.data();
  const void* qp = queries.data();
  void* op = out.data();
  const bool out64 = out.dtype() == nb::dtype<int64_t>();
  if (!out64 && out.dtype() != nb::dtype<int32_t>())
    throw nb::type_error(("gsearch._core.search: out must be int64 or int32, not " +
                          dtype_name(out.dtype()))
                             .c_str());
  if (!visit_key_type(kt, []<class T>() { return true; }))
    throw nb::type_error(("gsearch._core.search: unsupported key dtype " + dtype_name(kt) +
                          " (int32, uint32, int64, uint64, float32, float64)")
                             .c_str());
  with_gil_policy(on_cuda, n >= small_search_queries || check_sorted || queries_sorted, [&] {
    std::optional<device_guard> guard;
    if (on_cuda) guard.emplace(dev_id);
    if (out64)
      dispatch_key<int64_t>(kt, on_cuda, stream, s, rows, kp, k, qp, n, op, options);
    else
      dispatch_key<int32_t>(kt, on_cuda, stream, s, rows, kp, k, qp, n, op, options);
  });
}

/// The fast path of gsearch.searchsorted for numpy arrays of one supported dtype: returns false
/// (and does nothing) where the general path is needed (non-contiguous or non-CPU arrays,
/// different or unsupported dtypes); otherwise searches like search() with rows = -1.
bool search_fast(const in_array& keys, const in_array& queries, out_array& out, int side_code) {
  if (keys.device_type() != nb::device::cpu::value ||
      queries.device_type() != nb::device::cpu::value ||
      out.device_type() != nb::device::cpu::value || keys.dtype() != queries.dtype() ||
      out.dtype() != nb::dtype<int64_t>() || out.size() != queries.size() ||
      !is_c_contiguous(keys) || !is_c_contiguous(queries) || !is_c_contiguous(out) ||
      side_code < 0 || side_code > 2)
    return false;
  const auto t = keys.dtype();
  if (!visit_key_type(t, []<class T>() { return true; })) return false;
  const int64_t k = int64_t(keys.size()), n = int64_t(queries.size());
  with_gil_policy(false, n >= small_search_queries, [&] {
    dispatch_key<int64_t>(t, false, 0, gsearch::side(side_code), -1, keys.data(), k, queries.data(), n,
                          out.data(), gsearch::search_options{});
  });
  return true;
}

// --- unsorted search: gsearch/find.hpp ----------------------------------------------------------

/// Where a call runs: its arrays' common device.
struct placement {
  bool on_cuda;
  int dev_id;
};
struct located {
  const char* name;
  int type, id;
};
template <class Array>
located locate(const char* name, const Array& a) {
  return {name, a.device_type(), a.device_id()};
}

/// The common device of `arrays`; ValueError if they differ or it is neither the CPU nor CUDA.
placement place(const std::string& fn, std::initializer_list<located> arrays) {
  const located& first = *arrays.begin();
  for (const located& a : arrays)
    if (a.type != first.type || a.id != first.id) {
      std::string msg = fn + ": arrays on different devices (";
      const char* sep = "";
      for (const located& b : arrays) {
        msg += std::string(sep) + b.name + " on " + device_name(b.type, b.id);
        sep = ", ";
      }
      value_error(msg + ")");
    }
  const bool on_cuda = first.type == nb::device::cuda::value;
  if (!on_cuda && first.type != nb::device::cpu::value)
    value_error(fn + ": unsupported device " + device_name(first.type, first.id));
  return {on_cuda, first.id};
}

[[noreturn]] void unsupported_dtype(const std::string& fn, nb::dlpack::dtype t) {
  throw nb::type_error((fn + ": unsupported dtype " + dtype_name(t) +
                        " (int32, uint32, int64, uint64, float32, float64)")
                           .c_str());
}

/// Calls f(exec) with gsearch::cpu or gsearch::cuda.on(stream), on the arrays' device (made
/// current for the call), with the GIL released when the call is large or on CUDA.
template <class F>
void on_backend(placement at, uintptr_t stream, bool large, F&& f) {
  with_gil_policy(at.on_cuda, large, [&] {
    if (at.on_cuda) {
      device_guard guard(at.dev_id);
      f(gsearch::cuda.on(reinterpret_cast<CUstream_st*>(stream)));
    } else {
      f(gsearch::cpu);  // all cores, but a small call runs on the calling thread
    }
  });
}

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
  value_error(fn + ": " + what + " " + std::string(nb::repr(v).c_str()) +
              " is not representable in " + dtype_name(dt) + " (pass a Python int for integer " +
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
  const bool known = visit_key_type(dt, [&]<class T>() {
    const gsearch::predicate<T> pred = make_predicate<T>(fn, op, value, hi, dt);
    const gsearch::span<const T> d(static_cast<const T*>(data.data()), n);
    gsearch::find_options options;
    options.strategy = gsearch::find_strategy(strategy);
    options.per_thread = per_thread;
    options.seed = seed;
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      result = gsearch::find(exec, gsearch::find_mode(mode), d, pred, options);
    });
    return true;
  });
  if (!known) unsupported_dtype(fn, dt);
  return result;
}

/// find_all with the output allocated by the caller's framework: the library counts the matches
/// (one scan), calls back once with the count, and fills the array the callback returned (only
/// the blocks that hold matches are read again). The callback runs on the calling thread; it
/// takes the GIL (released for large and CUDA calls) to call `allocate(count)`, which must return
/// a C-contiguous int64 array of `count` elements on the data's device (numpy.empty, torch.empty,
/// cupy.empty on the call's stream). Returns that array.
nb::object py_find_all(const in_array& data, int op, nb::handle value, nb::callable allocate,
                       nb::handle hi, uintptr_t stream) {
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
      throw nb::type_error((fn + ": allocate(" + std::to_string(c) + ") returned " +
                            std::string(nb::repr(o.type()).c_str()) + ", not an array")
                               .c_str());
    if (out.dtype() != nb::dtype<int64_t>() || out.ndim() != 1 || int64_t(out.size()) != c ||
        !is_c_contiguous(out))
      throw nb::type_error((fn + ": allocate(" + std::to_string(c) +
                            ") must return a C-contiguous 1-D int64 array of that many elements "
                            "(got " + dtype_name(out.dtype()) + ", " + std::to_string(out.size()) +
                            " elements)")
                               .c_str());
    if (out.device_type() != data.device_type() || out.device_id() != data.device_id())
      value_error(fn + ": allocate returned an array on " + device_name(out.device_type(), out.device_id()) +
                  ", the data are on " + device_name(data.device_type(), data.device_id()));
    if (c > 0 && !out.data()) value_error(fn + ": allocate returned a null array");
    result = std::move(o);
    return static_cast<int64_t*>(out.data());
  };
  const bool known = visit_key_type(dt, [&]<class T>() {
    const gsearch::predicate<T> pred = make_predicate<T>(fn, op, value, hi, dt);
    const gsearch::span<const T> d(static_cast<const T*>(data.data()), n);
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      count = gsearch::find_all(exec, d, pred, std::function<int64_t*(int64_t)>(alloc));
    });
    return true;
  });
  if (!known) unsupported_dtype(fn, dt);
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
    throw nb::type_error((fn + ": elements are " + dtype_name(elements.dtype()) +
                          " but test_elements are " + dtype_name(tests.dtype()))
                             .c_str());
  // bool (or uint8: an exporter's older spelling of a 1-byte bool), written as 0 / 1
  if (out.dtype() != nb::dtype<bool>() && out.dtype() != nb::dtype<uint8_t>())
    throw nb::type_error((fn + ": out must be bool, not " + dtype_name(out.dtype())).c_str());
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
  const bool known = visit_key_type(dt, [&]<class T>() {
    const gsearch::span<const T> e(static_cast<const T*>(elements.data()), n);
    const gsearch::span<const T> t(static_cast<const T*>(tests.data()), m);
    const gsearch::span<bool> o(static_cast<bool*>(out.data()), n);
    on_backend(at, stream, n >= small_search_queries || m >= small_scan_elements,
               [&](const auto& exec) { gsearch::isin(exec, e, t, o, options); });
    return true;
  });
  if (!known) unsupported_dtype(fn, dt);
}

// --- the merge-like operations: gsearch/merge.hpp -------------------------------------------------

/// The checks of an array of a merge-like call: 1-D, C-contiguous.
template <class Array>
void check_flat(const std::string& fn, const char* what, const Array& a) {
  if (a.ndim() != 1)
    value_error(fn + ": " + what + " must be 1-D (has " + std::to_string(a.ndim()) + " dimensions)");
  if (!is_c_contiguous(a)) value_error(fn + ": " + what + " must be C-contiguous");
}

/// Two key arrays of one dtype; an array of dtype `want`.
void check_same_dtype(const std::string& fn, const char* an, const in_array& a, const char* bn,
                      const in_array& b) {
  if (a.dtype() != b.dtype())
    throw nb::type_error((fn + ": " + an + " is " + dtype_name(a.dtype()) + " but " + bn + " is " +
                          dtype_name(b.dtype()))
                             .c_str());
}
template <class Array>
void check_dtype(const std::string& fn, const char* what, const Array& a, nb::dlpack::dtype want) {
  if (a.dtype() != want)
    throw nb::type_error((fn + ": " + what + " must be " + dtype_name(want) + ", not " +
                          dtype_name(a.dtype()))
                             .c_str());
}

template <class T, class Array>
gsearch::span<const T> in_span(const Array& a) {
  return {static_cast<const T*>(a.data()), int64_t(a.size())};
}
template <class T>
gsearch::span<T> out_span(const out_array& a) {
  return {static_cast<T*>(a.data()), int64_t(a.size())};
}

/// The data pointer of the array `o` that an allocate callback returned as `what`: it must be
/// a C-contiguous 1-D array of dtype `want` and `count` elements on `like`'s device (TypeError /
/// ValueError otherwise).
void* allocated_pointer(const std::string& fn, const char* what, nb::handle o, int64_t count,
                        nb::dlpack::dtype want, const in_array& like) {
  out_array out;
  if (!nb::try_cast<out_array>(o, out, false))
    throw nb::type_error((fn + ": allocate(" + std::to_string(count) + ") returned " +
                          std::string(nb::repr(o.type()).c_str()) + " as " + what +
                          ", not an array")
                             .c_str());
  if (out.dtype() != want || out.ndim() != 1 || int64_t(out.size()) != count || !is_c_contiguous(out))
    throw nb::type_error((fn + ": allocate(" + std::to_string(count) + ") must return " + what +
                          " as a C-contiguous 1-D " + dtype_name(want) +
                          " array of that many elements (got " + dtype_name(out.dtype()) + ", " +
                          std::to_string(out.size()) + " elements)")
                             .c_str());
  if (out.device_type() != like.device_type() || out.device_id() != like.device_id())
    value_error(fn + ": allocate returned " + what + " on " +
                device_name(out.device_type(), out.device_id()) + ", the inputs are on " +
                device_name(like.device_type(), like.device_id()));
  if (count > 0 && !out.data()) value_error(fn + ": allocate returned a null array");
  return out.data();
}

void py_merge(const in_array& a, const in_array& b, out_array& out, std::optional<in_array> a_values,
              std::optional<in_array> b_values, std::optional<out_array> out_values,
              bool check_sorted, uintptr_t stream) {
  const std::string fn = "gsearch._core.merge";
  const int given = int(a_values.has_value()) + int(b_values.has_value()) + int(out_values.has_value());
  if (given != 0 && given != 3)
    value_error(fn + ": pass all of a_values, b_values and out_values, or none");
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
  const bool known = visit_key_type(a.dtype(), [&]<class T>() {
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      if (kv)
        gsearch::merge(exec, in_span<T>(a), in_span<int64_t>(*a_values), in_span<T>(b),
                       in_span<int64_t>(*b_values), out_span<T>(out), out_span<int64_t>(*out_values),
                       options);
      else
        gsearch::merge(exec, in_span<T>(a), in_span<T>(b), out_span<T>(out), options);
    });
    return true;
  });
  if (!known) unsupported_dtype(fn, a.dtype());
}

void py_merge_sort(const in_array& keys, out_array& out, std::optional<in_array> values,
                   std::optional<out_array> out_values, uintptr_t stream) {
  const std::string fn = "gsearch._core.merge_sort";
  if (values.has_value() != out_values.has_value())
    value_error(fn + ": pass both values and out_values, or neither");
  const bool kv = values.has_value();
  const placement at =
      kv ? place(fn, {locate("keys", keys), locate("out", out), locate("values", *values),
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
  const bool known = visit_key_type(keys.dtype(), [&]<class T>() {
    on_backend(at, stream, int64_t(keys.size()) >= small_search_queries, [&](const auto& exec) {
      if (kv)
        gsearch::merge_sort(exec, in_span<T>(keys), in_span<int64_t>(*values), out_span<T>(out),
                            out_span<int64_t>(*out_values));
      else
        gsearch::merge_sort(exec, in_span<T>(keys), out_span<T>(out));
    });
    return true;
  });
  if (!known) unsupported_dtype(fn, keys.dtype());
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
  const bool known = visit_key_type(a.dtype(), [&]<class T>() {
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
    return true;
  });
  if (!known) unsupported_dtype(fn, a.dtype());
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
      throw nb::type_error((fn + ": allocate(" + std::to_string(rows) +
                            ") must return a pair (left_index, right_index)")
                               .c_str());
    gsearch::join_output out;
    out.left = static_cast<int64_t*>(
        allocated_pointer(fn, "left_index", o[0], rows, nb::dtype<int64_t>(), left));
    if (left_only) {
      if (!o[1].is_none()) value_error(fn + ": a semi or anti join has no right_index: return None");
    } else {
      out.right = static_cast<int64_t*>(
          allocated_pointer(fn, "right_index", o[1], rows, nb::dtype<int64_t>(), left));
    }
    result = std::move(o);
    return out;
  };
  const bool known = visit_key_type(left.dtype(), [&]<class T>() {
    on_backend(at, stream, int64_t(left.size() + right.size()) >= small_scan_elements,
               [&](const auto& exec) {
                 gsearch::join(exec, k, in_span<T>(left), in_span<T>(right),
                               std::function<gsearch::join_output(int64_t)>(alloc), options);
               });
    return true;
  });
  if (!known) unsupported_dtype(fn, left.dtype());
  if (!result.is_valid()) alloc(0);
  return result;
}

bool py_is_sorted(const in_array& a, uintptr_t stream) {
  const std::string fn = "gsearch._core.is_sorted";
  const placement at = place(fn, {locate("a", a)});
  if (!is_c_contiguous(a)) value_error(fn + ": a must be C-contiguous");
  bool sorted = true;
  const bool known = visit_key_type(a.dtype(), [&]<class T>() {
    on_backend(at, stream, int64_t(a.size()) >= small_scan_elements,
               [&](const auto& exec) { sorted = gsearch::is_sorted(exec, in_span<T>(a)); });
    return true;
  });
  if (!known) unsupported_dtype(fn, a.dtype());
  return sorted;
}

/// True when the keys of a search of k keys of key_bytes bytes are too large for shared memory
/// on the current CUDA device: auto_ picks none of the PBS variants (it picks PBS-CL while the
/// keys fit, beyond them the global-memory binary search or, for enough queries, the static
/// index); false on the CPU.
bool py_keys_beyond_shared(bool on_cuda, int key_bytes, int64_t k) {
  if (!on_cuda) return false;
  const auto a = gsearch::resolve_algorithm(gsearch::cuda, gsearch::algorithm::auto_, key_bytes, k);
  return a != gsearch::algorithm::pbs && a != gsearch::algorithm::pbs_cf &&
         a != gsearch::algorithm::pbs_cl;
}

// --- the static index: gsearch/static_index.hpp -------------------------------------------------

/// numpy's name of a supported key dtype ("int32", ..., "float64").
template <class T>
constexpr const char* key_dtype_name() {
  if constexpr (std::is_same_v<T, int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, uint32_t>) return "uint32";
  else if constexpr (std::is_same_v<T, int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, uint64_t>) return "uint64";
  else if constexpr (std::is_same_v<T, float>) return "float32";
  else return "float64";
}

/// gsearch.Index's core (_core.Index): a gsearch::static_index of one of the six key types,
/// built from a contiguous 1-D array on the CPU (host memory, gsearch::cpu) or on a CUDA device
/// (device memory, gsearch::cuda on that device, on `stream`), and the device it lives on. CUDA
/// calls run with that device current (restored afterwards); the build is waited for, so that the
/// keys can be freed and the index searched on any stream as soon as the constructor returns.
class py_index {
 public:
  using any_index = std::variant<gsearch::static_index<int32_t>, gsearch::static_index<uint32_t>,
                                 gsearch::static_index<int64_t>, gsearch::static_index<uint64_t>,
                                 gsearch::static_index<float>, gsearch::static_index<double>>;

  py_index(const in_array& keys, bool check_sorted, uintptr_t stream)
      : dtype_(keys.dtype()), dev_type_(keys.device_type()), dev_id_(keys.device_id()) {
    const std::string fn = "gsearch._core.Index";
    const placement at = place(fn, {locate("keys", keys)});
    if (keys.ndim() != 1)
      value_error(fn + ": keys must be 1-D (have " + std::to_string(keys.ndim()) + " dimensions)");
    if (!is_c_contiguous(keys)) value_error(fn + ": keys must be contiguous");
    if (!at.on_cuda && stream != 0)
      value_error(fn + ": a stream applies to CUDA keys; these are on the CPU");
    gsearch::index_options options;
    options.check_sorted = check_sorted;
    const int64_t k = int64_t(keys.size());
    const bool known = visit_key_type(dtype_, [&]<class T>() {
      const gsearch::span<const T> kk(static_cast<const T*>(keys.data()), k);
      on_backend(at, stream, k >= small_scan_elements || check_sorted, [&](const auto& exec) {
        using exec_t = std::remove_cvref_t<decltype(exec)>;
        index_.emplace(std::in_place_type<gsearch::static_index<T>>, exec, kk, options);
        if constexpr (std::is_same_v<exec_t, gsearch::cuda_t>) gsearch::synchronize(exec);
      });
      return true;
    });
    if (!known) unsupported_dtype(fn, dtype_);
  }

  py_index(const py_index&) = delete;
  py_index& operator=(const py_index&) = delete;

  ~py_index() {
    if (!index_ || dev_type_ != nb::device::cuda::value) return;
    try {  // free the device memory with its device current
      device_guard guard(dev_id_);
      index_.reset();
    } catch (...) {
    }
  }

  /// out = the search of queries on side `side_code` (0 left, 1 right, 2 predecessor).
  void search(const in_array& queries, out_array& out, int side_code, uintptr_t stream) const {
    const std::string fn = "gsearch._core.Index.search";
    if (side_code < 0 || side_code > 2) value_error(fn + ": side must be 0, 1 or 2");
    if (queries.device_type() != dev_type_ || queries.device_id() != dev_id_ ||
        out.device_type() != dev_type_ || out.device_id() != dev_id_)
      value_error(fn + ": the index is on " + device_name(dev_type_, dev_id_) + " but the queries are on " +
                  device_name(queries.device_type(), queries.device_id()) + " and out on " +
                  device_name(out.device_type(), out.device_id()));
    const bool on_cuda = dev_type_ == nb::device::cuda::value;
    if (!on_cuda && stream != 0)
      value_error(fn + ": a stream applies to a CUDA index; this one is on the CPU");
    if (queries.dtype() != dtype_)
      throw nb::type_error((fn + ": the index holds " + dtype_name(dtype_) + " keys but the queries are " +
                            dtype_name(queries.dtype()))
                               .c_str());
    const bool out64 = out.dtype() == nb::dtype<int64_t>();
    if (!out64 && out.dtype() != nb::dtype<int32_t>())
      throw nb::type_error((fn + ": out must be int64 or int32, not " + dtype_name(out.dtype())).c_str());
    if (!is_c_contiguous(queries) || !is_c_contiguous(out)) value_error(fn + ": arrays must be C-contiguous");
    const int64_t n = int64_t(queries.size());
    if (int64_t(out.size()) != n)
      value_error(fn + ": " + std::to_string(n) + " queries but " + std::to_string(out.size()) +
                  " output elements");
    const auto s = gsearch::side(side_code);
    const void* qp = queries.data();
    void* op = out.data();
    std::visit(
        [&]<class T>(const gsearch::static_index<T>& index) {
          const gsearch::span<const T> qq(static_cast<const T*>(qp), n);
          on_backend({on_cuda, dev_id_}, stream, n >= small_search_queries, [&](const auto& exec) {
            if (out64)
              index.search(exec, s, qq, gsearch::span<int64_t>(static_cast<int64_t*>(op), n));
            else
              index.search(exec, s, qq, gsearch::span<int32_t>(static_cast<int32_t*>(op), n));
          });
        },
        get());
  }

  int64_t size() const {
    return std::visit([](const auto& i) { return i.size(); }, get());
  }
  bool on_device() const {
    return std::visit([](const auto& i) { return i.on_device(); }, get());
  }
  int node_keys() const {
    return std::visit([](const auto& i) { return i.node_keys(); }, get());
  }
  int levels() const {
    return std::visit([](const auto& i) { return i.levels(); }, get());
  }
  int64_t memory_bytes() const {
    return std::visit([](const auto& i) { return i.memory_bytes(); }, get());
  }
  std::string dtype() const {
    return std::visit(
        []<class T>(const gsearch::static_index<T>&) { return std::string(key_dtype_name<T>()); }, get());
  }
  /// The CUDA device the index is on, or -1 on the CPU.
  int device() const { return dev_type_ == nb::device::cuda::value ? dev_id_ : -1; }
  std::string repr() const {
    return "<gsearch._core.Index of " + std::to_string(size()) + " " + dtype() + " keys on " +
           device_name(dev_type_, dev_id_) + ", " + std::to_string(levels()) + " levels, " +
           std::to_string(memory_bytes()) + " bytes>";
  }

 private:
  const any_index& get() const {
    if (!index_) throw std::logic_error("gsearch._core.Index: not built");
    return *index_;
  }

  std::optional<any_index> index_;
  nb::dlpack::dtype dtype_;
  int dev_type_ = 0, dev_id_ = 0;
};

}  // namespace

NB_MODULE(_core, m) {
  m.doc() =
      "gsearch's extension module: batched search over arrays (CPU and CUDA). Use the functions "
      "of the gsearch package; this layer takes contiguous arrays of one supported dtype.";
  m.attr("__version__") = GSEARCH_VERSION;

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const gsearch::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const gsearch::out_of_memory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const gsearch::cuda_error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const gsearch::error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  nb::dict algos;
  for (auto a : {gsearch::algorithm::auto_, gsearch::algorithm::pbs, gsearch::algorithm::pbs_cf,
                 gsearch::algorithm::pbs_cl, gsearch::algorithm::binary, gsearch::algorithm::index,
                 gsearch::algorithm::partitioned, gsearch::algorithm::pary})
    algos[nb::str(std::string(gsearch::to_string(a)).c_str())] = int(a);
  m.attr("ALGORITHMS") = algos;

  nb::dict modes, ops, strategies, methods;
  for (auto md : {gsearch::find_mode::first, gsearch::find_mode::any, gsearch::find_mode::random,
                  gsearch::find_mode::count})
    modes[nb::str(std::string(gsearch::to_string(md)).c_str())] = int(md);
  for (int i = 0; i <= int(gsearch::find_op::in_range); ++i) {
    const auto op = gsearch::find_op(i);
    ops[nb::str(std::string(gsearch::to_symbol(op)).c_str())] = i;
    ops[nb::str(std::string(gsearch::to_string(op)).c_str())] = i;
  }
  for (int i = 0; i <= int(gsearch::find_strategy::one_per_thread); ++i)
    strategies[nb::str(std::string(gsearch::to_string(gsearch::find_strategy(i))).c_str())] = i;
  for (int i = 0; i <= int(gsearch::isin_method::hash); ++i)
    methods[nb::str(std::string(gsearch::to_string(gsearch::isin_method(i))).c_str())] = i;
  m.attr("FIND_MODES") = modes;
  m.attr("FIND_OPS") = ops;
  m.attr("FIND_STRATEGIES") = strategies;
  m.attr("ISIN_METHODS") = methods;

  nb::dict set_ops, join_kinds;
  for (int i = 0; i <= int(gsearch::set_op::symmetric_difference); ++i)
    set_ops[nb::str(gsearch::to_string(gsearch::set_op(i)))] = i;
  for (int i = 0; i <= int(gsearch::join_kind::anti); ++i)
    join_kinds[nb::str(gsearch::to_string(gsearch::join_kind(i)))] = i;
  m.attr("SET_OPS") = set_ops;
  m.attr("JOIN_KINDS") = join_kinds;

  m.def("search", &search, "keys"_a, "queries"_a, "out"_a, "side"_a, "algo"_a = 0,
        "check_sorted"_a = false, "rows"_a = -1, "stream"_a = 0, "queries_sorted"_a = false,
        "max_temp_bytes"_a = nb::none(),
        "Batched search: out[j] = the search of queries[j] in keys (side 0 = left, 1 = right,\n"
        "2 = predecessor). keys and queries: C-contiguous arrays of one dtype (int32, uint32,\n"
        "int64, uint64, float32, float64); out: C-contiguous int64 or int32 with queries.size\n"
        "elements. All three on the CPU (the GIL is released for large calls) or on one CUDA\n"
        "device (the call runs on that device, enqueued on `stream`, a cudaStream_t as an int;\n"
        "0 = the legacy default stream). rows < 0: one sorted key list (gsearch::search);\n"
        "rows >= 0: `rows` rows of keys and queries, row r's queries searching row r's keys\n"
        "(gsearch::search_rows). algo: a value of ALGORITHMS. queries_sorted (rows < 0 only):\n"
        "the queries are sorted too, searched by Merge Path in O(keys + queries); check_sorted\n"
        "then checks them as well. max_temp_bytes: None (no cap) or the most temporary memory\n"
        "the search may take (search_options::max_temp_bytes). Raises ValueError (bad arguments, unsorted keys with\n"
        "check_sorted), TypeError (dtypes), MemoryError, RuntimeError (CUDA errors, named).");

  m.def("search_fast", &search_fast, "keys"_a, "queries"_a, "out"_a, "side"_a,
        "search() for CPU arrays of one supported dtype and an int64 out, rows = -1, default\n"
        "options; returns False (doing nothing) where that does not apply (non-contiguous,\n"
        "non-CPU, mixed or unsupported dtypes), for the caller to take the general path.");
  m.def("find", &py_find, "data"_a, "mode"_a, "op"_a, "value"_a, "hi"_a = nb::none(),
        "strategy"_a = 0, "per_thread"_a = 0, "seed"_a = 0, "stream"_a = 0,
        "Unsorted search (gsearch::find): the result of `mode` (a value of FIND_MODES: the\n"
        "lowest matching index, any matching index, a random one drawn from `seed`, each -1 when\n"
        "nothing matches, or the number of matches) for the predicate `op` (a value of FIND_OPS)\n"
        "against `value` (x op value; 'in': value <= x < hi). data: a 1-D C-contiguous array of\n"
        "a supported dtype on the CPU (the GIL is released for large calls) or on one CUDA device\n"
        "(run on `stream`, a cudaStream_t as an int, and waited for). value and hi: Python ints\n"
        "(integer data) or floats / ints that data's dtype holds exactly (ValueError otherwise).\n"
        "strategy: a value of FIND_STRATEGIES, with per_thread elements per thread (0 = 12).");
  m.def("find_all", &py_find_all, "data"_a, "op"_a, "value"_a, "allocate"_a,
        "hi"_a = nb::none(), "stream"_a = 0,
        "Every index i with data[i] op value, ascending (gsearch::find_all), in an array the\n"
        "caller allocates: the library counts the matches in one scan and calls allocate(count)\n"
        "once (with the GIL), which must return a C-contiguous 1-D int64 array of count\n"
        "elements on data's device (numpy.empty, or torch.empty / cupy.empty on `stream`); the\n"
        "library fills it and it is returned. Waits for the result on CUDA. data, op, value,\n"
        "hi, stream: as in find().");
  m.def("isin", &py_isin, "elements"_a, "test_elements"_a, "out"_a, "invert"_a = false,
        "method"_a = 0, "stream"_a = 0,
        "out[i] = elements[i] is among test_elements (gsearch::isin; np.isin, NaN never a\n"
        "member, -0.0 == 0.0; not a member with invert). elements and test_elements: C-contiguous\n"
        "arrays of one supported dtype, any shapes (taken flat); out: C-contiguous bool with\n"
        "elements.size elements. On the CPU or one CUDA device (enqueued on `stream`), as search().\n"
        "method: a value of ISIN_METHODS.");
  m.def("merge", &py_merge, "a"_a, "b"_a, "out"_a, "a_values"_a = nb::none(),
        "b_values"_a = nb::none(), "out_values"_a = nb::none(), "check_sorted"_a = true,
        "stream"_a = 0,
        "out = the stable merge of sorted a and b (gsearch::merge; ties take a's first).\n"
        "a, b, out: C-contiguous 1-D arrays of one supported dtype, len(out) = len(a) + len(b);\n"
        "with a_values, b_values, out_values (all three, int64, one per key) each key's value\n"
        "goes with it. check_sorted: ValueError, writing nothing, if a or b is not sorted. On\n"
        "the CPU or one CUDA device (enqueued on `stream`; the sorted check waits).");
  m.def("merge_sort", &py_merge_sort, "keys"_a, "out"_a, "values"_a = nb::none(),
        "out_values"_a = nb::none(), "stream"_a = 0,
        "out = keys sorted, stable (gsearch::merge_sort; out may be keys); with values and\n"
        "out_values (int64) each key's value goes with it. Arrays as in merge().");
  m.def("set_operation", &py_set_operation, "a"_a, "b"_a, "op"_a, "allocate"_a,
        "check_sorted"_a = true, "stream"_a = 0,
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
  m.def("is_sorted", &py_is_sorted, "a"_a, "stream"_a = 0,
        "True when the C-contiguous array a (taken flat) is sorted in gsearch's order (NaN\n"
        "last, -0.0 == 0.0). Waits on CUDA.");
  nb::class_<py_index>(m, "Index",
                       "A static search index (gsearch::static_index, an S+ tree) of a C-contiguous\n"
                       "1-D key array of a supported dtype: built once (a copy of the keys), searched\n"
                       "many times. Use gsearch.Index; this layer takes arrays of the index's dtype.")
      .def(nb::init<const in_array&, bool, uintptr_t>(), "keys"_a, "check_sorted"_a = false, "stream"_a = 0,
           "Builds the index of sorted `keys` (int32, uint32, int64, uint64, float32, float64;\n"
           "1-D, C-contiguous): on the CPU (host memory, all cores for large key sets, the GIL\n"
           "released) or on the keys' CUDA device (device memory, built on `stream`, a\n"
           "cudaStream_t as an int, and waited for). check_sorted: ValueError if the keys are not\n"
           "sorted (NaN last, -0.0 == 0.0). The keys can be freed once this returns.")
      .def("search", &py_index::search, "queries"_a, "out"_a, "side"_a, "stream"_a = 0,
           "out[j] = the search of queries[j] (side 0 = left: the keys < q; 1 = right: the keys\n"
           "<= q; 2 = predecessor: right - 1). queries: C-contiguous, of the index's dtype, any\n"
           "shape (taken flat); out: C-contiguous int64 or int32 of queries.size elements; both on\n"
           "the index's device (ValueError otherwise). On CUDA enqueued on `stream` (0 = the legacy\n"
           "default stream), with the index's device current for the call.")
      .def_prop_ro("size", &py_index::size, "The number of keys indexed.")
      .def_prop_ro("on_device", &py_index::on_device, "True for an index in CUDA device memory.")
      .def_prop_ro("node_keys", &py_index::node_keys, "Keys per node of the tree (B).")
      .def_prop_ro("levels", &py_index::levels, "Levels of the tree, the leaves included.")
      .def_prop_ro("memory_bytes", &py_index::memory_bytes,
                   "Bytes of the layout (keys, padding and separators).")
      .def_prop_ro("dtype", &py_index::dtype, "The key dtype's numpy name ('int32', ...).")
      .def_prop_ro("device", &py_index::device, "The CUDA device of the index, -1 on the CPU.")
      .def("__repr__", &py_index::repr);

  m.def("keys_beyond_shared", &py_keys_beyond_shared, "on_cuda"_a, "key_bytes"_a, "keys"_a,
        "True when `keys` keys of key_bytes bytes do not fit in shared memory on the current CUDA\n"
        "device (a search runs from global memory: the binary search or the static index, not\n"
        "a PBS variant); always False on the CPU.");
  m.def(
      "_data_pointer", [](const in_array& a) { return uintptr_t(a.data()); }, "a"_a,
      "The data pointer the extension sees for `a` (a debugging hook: equal to the caller's\n"
      "pointer when nothing was copied).");
  m.def("built_with_cuda", &gsearch::built_with_cuda,
        "True when the extension was built with the CUDA backend.");
  m.def(
      "build_info",
      [] {
        const auto b = gsearch::build_info();
        nb::dict d;
        d["version"] = b.version;
        d["commit"] = b.commit;
        d["dirty"] = b.dirty;
        d["cuda"] = b.cuda;
        return d;
      },
      "This build's version, source commit (or \"unknown\"), whether the tree was dirty, and\n"
      "whether it has the CUDA backend: {'version', 'commit', 'dirty', 'cuda'}.");
  m.def("cuda_device_count", &gsearch::cuda_device_count,
        "Number of usable CUDA devices (0 without CUDA, a driver or a GPU).");
  m.def("cuda_device_name", &gsearch::cuda_device_name,
        "A one-line description of the current CUDA device, or an empty string.");
  m.def("cuda_current_device", &gsearch::cuda_current_device,
        "The calling thread's current CUDA device (0 without CUDA).");
  m.def("cuda_set_device", &gsearch::cuda_set_device, "device"_a,
        "Makes `device` the calling thread's current CUDA device.");
}
