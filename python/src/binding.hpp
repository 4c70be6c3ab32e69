#pragma once
// What the files of gsearch._core share (module.cpp and one bind_<family>.cpp per family of
// the library): the arrays (nb::ndarray through DLPack or the buffer protocol: the caller's
// memory, no copy), their checks and messages, the key-type dispatch, where a call runs
// (placement: the arrays' common device, made current for the call) and the GIL rule.
//
// The extension is thin: it checks what the library cannot see (dtypes, devices, contiguity) and
// calls it on the CPU (GIL released for large calls) or on a CUDA stream. Promotion, shapes, the
// exactness of values, framework arrays and the numpy / torch semantics live in the Python
// layer (python/gsearch/).

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "gsearch/core/dtype.hpp"
#include "gsearch/gsearch.hpp"

namespace gsearch_python {

namespace nb = nanobind;

using in_array = nb::ndarray<nb::ro>;  // any dtype, shape and device; read-only
using out_array = nb::ndarray<>;

/// std::variant<Holder<int32_t>, ..., Holder<double>>: the holder of a typed object whose key type
/// is chosen at run time (an index, a server, a machine), over the one key-type list
/// (GSEARCH_KEY_TYPES, key_traits.hpp), each spelled with a leading comma after a first `void`.
template <class First, class... Rest>
using variant_of_rest = std::variant<Rest...>;
#define GSEARCH_PY_HOLDER_OF(T) , Holder<T>
template <template <class> class Holder>
using key_variant = variant_of_rest<void GSEARCH_KEY_TYPES(GSEARCH_PY_HOLDER_OF)>;
#undef GSEARCH_PY_HOLDER_OF

// --- the families' bindings (bind_<family>.cpp), called by module.cpp ----------------------------

void bind_search(nb::module_& m);
void bind_find(nb::module_& m);
void bind_merge(nb::module_& m);
void bind_index(nb::module_& m);
void bind_selection(nb::module_& m);
void bind_index_intervals(nb::module_& m);
void bind_server(nb::module_& m);
void bind_functional_arrays(nb::module_& m);
void bind_dist(nb::module_& m);
void bind_asof(nb::module_& m);

// --- errors and names ----------------------------------------------------------------------------

[[noreturn]] inline void value_error(const std::string& msg) { throw nb::value_error(msg.c_str()); }
[[noreturn]] inline void type_error(const std::string& msg) { throw nb::type_error(msg.c_str()); }

/// The name of a DLPack dtype in messages ("int32", "float64", "bfloat16", ...).
inline std::string dtype_name(nb::dlpack::dtype t) {
  const char* kind = "?";
  switch (nb::dlpack::dtype_code(t.code)) {
    case nb::dlpack::dtype_code::Int:
      kind = "int";
      break;
    case nb::dlpack::dtype_code::UInt:
      kind = "uint";
      break;
    case nb::dlpack::dtype_code::Float:
      kind = "float";
      break;
    case nb::dlpack::dtype_code::Bfloat:
      kind = "bfloat";
      break;
    case nb::dlpack::dtype_code::Complex:
      kind = "complex";
      break;
    case nb::dlpack::dtype_code::Bool:
      kind = "bool";
      break;
    default:
      break;
  }
  return std::string(kind) + std::to_string(int(t.bits)) +
         (t.lanes != 1 ? "x" + std::to_string(int(t.lanes)) : "");
}

inline std::string device_name(int type, int id) {
  if (type == nb::device::cpu::value) return "cpu";
  if (type == nb::device::cuda::value) return "cuda:" + std::to_string(id);
  return "DLPack device type " + std::to_string(type) + ":" + std::to_string(id);
}

/// The values of enum E from 0 to `last`.
template <class E>
std::vector<E> enum_values(E last) {
  std::vector<E> values;
  for (int i = 0; i <= int(last); ++i) values.push_back(E(i));
  return values;
}

/// {name: code} of enum `values`, each named by gsearch::to_string: the tables the Python layer
/// looks its options up in (ALGORITHMS, SIDES, FIND_MODES, ...).
template <class Values>
nb::dict enum_table(const Values& values) {
  // Unqualified, so that argument-dependent lookup finds the family's to_string where the table
  // is built (a qualified gsearch::to_string sees only the overloads declared above this line).
  using gsearch::to_string;
  nb::dict table;
  for (auto v : values) table[nb::str(std::string(to_string(v)).c_str())] = int(v);
  return table;
}

// --- arrays --------------------------------------------------------------------------------------

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
/// (Shared by the families whose results the library sizes: merge, dist.)
inline void* allocated_pointer(const std::string& fn, const char* what, nb::handle o, int64_t count,
                               nb::dlpack::dtype want, const in_array& like) {
  out_array out;
  if (!nb::try_cast<out_array>(o, out, false))
    type_error(fn + ": allocate(" + std::to_string(count) + ") returned " +
               std::string(nb::repr(o.type()).c_str()) + " as " + what + ", not an array");
  if (out.dtype() != want || out.ndim() != 1 || int64_t(out.size()) != count || !is_c_contiguous(out))
    type_error(fn + ": allocate(" + std::to_string(count) + ") must return " + what +
               " as a C-contiguous 1-D " + dtype_name(want) + " array of that many elements (got " +
               dtype_name(out.dtype()) + ", " + std::to_string(out.size()) + " elements)");
  if (out.device_type() != like.device_type() || out.device_id() != like.device_id())
    value_error(fn + ": allocate returned " + what + " on " +
                device_name(out.device_type(), out.device_id()) + ", the inputs are on " +
                device_name(like.device_type(), like.device_id()));
  if (count > 0 && !out.data()) value_error(fn + ": allocate returned a null array");
  return out.data();
}

// --- key types -----------------------------------------------------------------------------------

/// The key type of DLPack dtype t, or nullopt for a dtype gsearch does not search: the one map
/// from DLPack's dtypes to the library's (gsearch::all_dtypes, core/dtype.hpp).
inline std::optional<gsearch::dtype> key_dtype(nb::dlpack::dtype t) {
  for (gsearch::dtype d : gsearch::all_dtypes)
    if (gsearch::visit_key_type(d, []<class T>() { return nb::dtype<T>(); }) == t) return d;
  return std::nullopt;
}

[[noreturn]] inline void unsupported_dtype(const std::string& fn, nb::dlpack::dtype t) {
  type_error(fn + ": unsupported dtype " + dtype_name(t) + " (" + std::string(gsearch::key_type_names) + ")");
}

/// Calls f.template operator()<T>() with T the key type of DLPack dtype t (gsearch::visit_key_type);
/// TypeError naming `fn` for a dtype gsearch does not search.
template <class F>
decltype(auto) visit_key_type(const std::string& fn, nb::dlpack::dtype t, F&& f) {
  const std::optional<gsearch::dtype> d = key_dtype(t);
  if (!d) unsupported_dtype(fn, t);
  return gsearch::visit_key_type(*d, std::forward<F>(f));
}

/// The side of a side code (a value of _core.SIDES); ValueError naming `fn` otherwise.
inline gsearch::side side_of(const std::string& fn, int code) {
  if (code < 0 || code >= int(std::size(gsearch::all_sides))) value_error(fn + ": side must be 0, 1 or 2");
  return gsearch::all_sides[code];
}

// --- where a call runs ---------------------------------------------------------------------------

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

/// Where a call runs: its arrays' common device.
struct placement {
  bool on_cuda;
  int dev_id;
};
/// Where a fast path's call on data pointers runs (device: a CUDA ordinal, -1 for the CPU), its
/// key_type (an index into gsearch::all_dtypes) checked: search_pointers, select_pointers, ...
/// The Python caller checked the arrays (dtype, device, contiguity); the library checks sizes.
inline placement pointer_placement(const std::string& fn, int key_type, int device) {
  if (key_type < 0 || key_type >= int(std::size(gsearch::all_dtypes))) value_error(fn + ": key_type out of range");
  return {device >= 0, device >= 0 ? device : 0};
}

/// n elements of T at the address a fast path was given as an int.
template <class T>
gsearch::span<T> at_address(uintptr_t p, int64_t n) {
  return {reinterpret_cast<T*>(p), n};
}

struct located {
  const char* name;
  int type, id;
};
template <class Array>
located locate(const char* name, const Array& a) {
  return {name, a.device_type(), a.device_id()};
}

/// The common device of `arrays`; ValueError if they differ or it is neither the CPU nor CUDA.
inline placement place(const std::string& fn, std::initializer_list<located> arrays) {
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

// --- the GIL -------------------------------------------------------------------------------------

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

/// The checks of an array of a merge-like or distributed call: 1-D, C-contiguous.
template <class Array>
void check_flat(const std::string& fn, const char* what, const Array& a) {
  if (a.ndim() != 1)
    value_error(fn + ": " + what + " must be 1-D (has " + std::to_string(a.ndim()) + " dimensions)");
  if (!is_c_contiguous(a)) value_error(fn + ": " + what + " must be C-contiguous");
}

/// Two key arrays of one dtype.
inline void check_same_dtype(const std::string& fn, const char* an, const in_array& a, const char* bn,
                             const in_array& b) {
  if (a.dtype() != b.dtype())
    type_error(fn + ": " + an + " is " + dtype_name(a.dtype()) + " but " + bn + " is " +
               dtype_name(b.dtype()));
}

}  // namespace gsearch_python
