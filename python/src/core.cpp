// gsearch._core: the thin nanobind layer under the Python package (python/gsearch/__init__.py).
//
// It takes arrays through nb::ndarray (DLPack or the buffer protocol: the caller's memory, no
// copy), checks what the library cannot see (dtypes, devices, contiguity), and calls
// gsearch::search / gsearch::search_rows on the CPU (GIL released) or on a CUDA stream (on the
// arrays' device, restored afterwards). Promotion, shapes, sorter, framework arrays and the
// numpy / torch semantics live in the Python layer.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

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

/// Runs `call` with the GIL released unless the call is small: releasing and re-taking the GIL
/// costs more than searching a few thousand queries (a search is O(log K) per query; the
/// sortedness check is O(K)). CUDA calls only enqueue, but may wait (check_sorted): they always
/// release it.
template <class F>
void with_gil_policy(bool on_cuda, int64_t n, bool check_sorted, F&& call) {
  if (on_cuda || n >= 2048 || check_sorted) {
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
            bool check_sorted, int64_t rows, uintptr_t stream) {
  if (side_code < 0 || side_code > 2) value_error("gsearch._core.search: side must be 0, 1 or 2");
  if (algo < 0 || algo > int(gsearch::algorithm::binary))
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

  const gsearch::search_options options{gsearch::algorithm(algo), check_sorted};
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
  with_gil_policy(on_cuda, n, check_sorted, [&] {
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
  with_gil_policy(false, n, false, [&] {
    dispatch_key<int64_t>(t, false, 0, gsearch::side(side_code), -1, keys.data(), k, queries.data(), n,
                          out.data(), gsearch::search_options{});
  });
  return true;
}

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
                 gsearch::algorithm::pbs_cl, gsearch::algorithm::binary})
    algos[nb::str(std::string(gsearch::to_string(a)).c_str())] = int(a);
  m.attr("ALGORITHMS") = algos;

  m.def("search", &search, "keys"_a, "queries"_a, "out"_a, "side"_a, "algo"_a = 0,
        "check_sorted"_a = false, "rows"_a = -1, "stream"_a = 0,
        "Batched search: out[j] = the search of queries[j] in keys (side 0 = left, 1 = right,\n"
        "2 = predecessor). keys and queries: C-contiguous arrays of one dtype (int32, uint32,\n"
        "int64, uint64, float32, float64); out: C-contiguous int64 or int32 with queries.size\n"
        "elements. All three on the CPU (the GIL is released for large calls) or on one CUDA\n"
        "device (the call runs on that device, enqueued on `stream`, a cudaStream_t as an int;\n"
        "0 = the legacy default stream). rows < 0: one sorted key list (gsearch::search);\n"
        "rows >= 0: `rows` rows of keys and queries, row r's queries searching row r's keys\n"
        "(gsearch::search_rows). algo: a value of ALGORITHMS. Raises ValueError (bad\n"
        "arguments, unsorted keys with check_sorted), TypeError (dtypes), MemoryError,\n"
        "RuntimeError (CUDA errors, named).");

  m.def("search_fast", &search_fast, "keys"_a, "queries"_a, "out"_a, "side"_a,
        "search() for CPU arrays of one supported dtype and an int64 out, rows = -1, default\n"
        "options; returns False (doing nothing) where that does not apply (non-contiguous,\n"
        "non-CPU, mixed or unsupported dtypes), for the caller to take the general path.");
  m.def(
      "_data_pointer", [](const in_array& a) { return uintptr_t(a.data()); }, "a"_a,
      "The data pointer the extension sees for `a` (a debugging hook: equal to the caller's\n"
      "pointer when nothing was copied).");
  m.def("built_with_cuda", &gsearch::built_with_cuda,
        "True when the extension was built with the CUDA backend.");
  m.def("cuda_device_count", &gsearch::cuda_device_count,
        "Number of usable CUDA devices (0 without CUDA, a driver or a GPU).");
  m.def("cuda_device_name", &gsearch::cuda_device_name,
        "A one-line description of the current CUDA device, or an empty string.");
  m.def("cuda_current_device", &gsearch::cuda_current_device,
        "The calling thread's current CUDA device (0 without CUDA).");
  m.def("cuda_set_device", &gsearch::cuda_set_device, "device"_a,
        "Makes `device` the calling thread's current CUDA device.");
}
