// gsearch._core's selection (gsearch/selection.hpp): select, partition, argpartition, topk,
// kthvalue, quantile and median, and the table of quantile methods (QUANTILE_METHODS).
//
// The data and the outputs live on one device (the CPU or one CUDA device); the small parameter
// arrays (ranks, kth, q) are host memory on both, as the library takes them. Arguments are
// checked by the library (ValueError through module.cpp's mapping); here only what it cannot
// see: dtypes, devices, contiguity, sizes.

#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

#include "binding.hpp"
#include "gsearch/selection.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

/// A C-contiguous array of `what`, on any device.
template <class Array>
void check_contiguous(const std::string& fn, const char* what, const Array& a) {
  if (!is_c_contiguous(a)) value_error(fn + ": " + what + " must be C-contiguous");
}

/// An output of dtype T with n elements.
template <class T>
gsearch::span<T> out_of(const std::string& fn, const char* what, const out_array& a, int64_t n) {
  if (a.dtype() != nb::dtype<T>())
    type_error(fn + ": " + what + " must be " + dtype_name(nb::dtype<T>()) + ", not " + dtype_name(a.dtype()));
  check_contiguous(fn, what, a);
  if (int64_t(a.size()) != n)
    value_error(fn + ": " + what + " has " + std::to_string(a.size()) + " elements, the result " +
                std::to_string(n));
  return out_span<T>(a);
}

/// A host parameter array (ranks, kth: int64; q: float64), 1-D or 0-d, C-contiguous.
template <class T>
gsearch::span<const T> host_param(const std::string& fn, const char* what, const in_array& a) {
  if (a.device_type() != nb::device::cpu::value) value_error(fn + ": " + what + " must be in host memory");
  if (a.dtype() != nb::dtype<T>())
    type_error(fn + ": " + what + " must be " + dtype_name(nb::dtype<T>()) + ", not " + dtype_name(a.dtype()));
  check_contiguous(fn, what, a);
  return in_span<T>(a);
}

/// The data's and the outputs' (`outs`, located) common device; the data C-contiguous.
template <class... Located>
placement place_data(const std::string& fn, const in_array& data, const Located&... outs) {
  const placement at = place(fn, {locate("data", data), outs...});
  check_contiguous(fn, "data", data);
  return at;
}

void py_select(const in_array& data, const in_array& ranks, out_array& values, uintptr_t stream) {
  const std::string fn = "gsearch._core.select";
  const placement at = place_data(fn, data, locate("values", values));
  const auto r = host_param<int64_t>(fn, "ranks", ranks);
  visit_key_type(fn, data.dtype(), [&]<class T>() {
    const auto v = out_of<T>(fn, "values", values, r.size());
    on_backend(at, stream, int64_t(data.size()) >= small_scan_elements,
               [&](const auto& exec) { gsearch::select(exec, in_span<T>(data), r, v); });
  });
}

// partition / argpartition of data (rows of it) at the positions k into out.
void partition_at(const std::string& fn, const in_array& data, gsearch::span<const int64_t> k, out_array& out,
                  bool indices, uintptr_t stream, int64_t rows) {
  const placement at = place_data(fn, data, locate("out", out));
  const int64_t n = int64_t(data.size());
  visit_key_type(fn, data.dtype(), [&]<class T>() {
    const auto d = in_span<T>(data);
    if (indices) {
      const auto o = out_of<int64_t>(fn, "out", out, n);
      on_backend(at, stream, n >= small_scan_elements,
                 [&](const auto& exec) { gsearch::argpartition(exec, d, rows, k, o); });
    } else {
      const auto o = out_of<T>(fn, "out", out, n);
      on_backend(at, stream, n >= small_scan_elements,
                 [&](const auto& exec) { gsearch::partition(exec, d, rows, k, o); });
    }
  });
}

void py_partition(const in_array& data, const in_array& kth, out_array& out, bool indices, uintptr_t stream,
                  int64_t rows) {
  const std::string fn = indices ? "gsearch._core.argpartition" : "gsearch._core.partition";
  partition_at(fn, data, host_param<int64_t>(fn, "kth", kth), out, indices, stream, rows);
}

// One kth given as an int, one row, the default stream: Python's fast path for small host
// arrays, which then makes no kth array (0.37 us of a 3 us call of 10^3 elements).
void py_partition_one(const in_array& data, int64_t kth, out_array& out, bool indices) {
  static const std::string fn[2] = {"gsearch._core.partition_one", "gsearch._core.argpartition_one"};
  partition_at(fn[indices], data, gsearch::span<const int64_t>(&kth, 1), out, indices, 0, 1);
}

void py_topk(const in_array& data, int64_t rows, int64_t k, bool largest, bool sorted, out_array& values,
             out_array& indices, uintptr_t stream) {
  const std::string fn = "gsearch._core.topk";
  const placement at = place_data(fn, data, locate("values", values), locate("indices", indices));
  gsearch::topk_options options;
  options.largest = largest;
  options.sorted = sorted;
  visit_key_type(fn, data.dtype(), [&]<class T>() {
    const auto v = out_of<T>(fn, "values", values, rows * k);
    const auto i = out_of<int64_t>(fn, "indices", indices, rows * k);
    on_backend(at, stream, int64_t(data.size()) >= small_scan_elements, [&](const auto& exec) {
      gsearch::topk(exec, in_span<T>(data), rows, k, options, v, i);
    });
  });
}

void py_kthvalue(const in_array& data, int64_t rows, int64_t rank, out_array& values, out_array& indices,
                 uintptr_t stream) {
  const std::string fn = "gsearch._core.kthvalue";
  const placement at = place_data(fn, data, locate("values", values), locate("indices", indices));
  visit_key_type(fn, data.dtype(), [&]<class T>() {
    const auto v = out_of<T>(fn, "values", values, rows);
    const auto i = out_of<int64_t>(fn, "indices", indices, rows);
    on_backend(at, stream, int64_t(data.size()) >= small_scan_elements, [&](const auto& exec) {
      gsearch::kthvalue(exec, in_span<T>(data), rows, rank, v, i);
    });
  });
}

/// The float format of a dtype's bit count (16, 32, 64).
gsearch::float_format format_of_bits(const std::string& fn, const char* what, int bits) {
  switch (bits) {
    case 16: return gsearch::float_format::binary16;
    case 32: return gsearch::float_format::binary32;
    case 64: return gsearch::float_format::binary64;
  }
  value_error(fn + ": " + what + " = " + std::to_string(bits) + " must be 16, 32 or 64");
}

void py_quantile(const in_array& data, const in_array& q, int method, bool skip_nan, out_array& out,
                 uintptr_t stream, int q_bits, int lerp_bits, bool half_data, bool integer_q, int64_t rows) {
  const std::string fn = "gsearch._core.quantile";
  if (method < 0 || method > int(gsearch::quantile_method::nearest))
    value_error(fn + ": method " + std::to_string(method) + " out of range (a value of QUANTILE_METHODS)");
  const placement at = place_data(fn, data, locate("out", out));
  const auto qs = host_param<double>(fn, "q", q);
  const auto o = out_of<double>(fn, "out", out, qs.size() * rows);
  visit_key_type(fn, data.dtype(), [&]<class T>() {
    gsearch::quantile_dtypes dtypes = gsearch::scalar_q_dtypes<T>();
    dtypes.index = format_of_bits(fn, "q_bits", q_bits);
    if (lerp_bits != 0) dtypes.lerp = format_of_bits(fn, "lerp_bits", lerp_bits);
    dtypes.half_data = half_data;
    dtypes.integer_q = integer_q;
    on_backend(at, stream, int64_t(data.size()) >= small_scan_elements, [&](const auto& exec) {
      gsearch::quantile(exec, in_span<T>(data), rows, qs, gsearch::quantile_method(method), dtypes, skip_nan, o);
    });
  });
}

void py_median(const in_array& data, bool skip_nan, out_array& out, uintptr_t stream, int64_t rows) {
  const std::string fn = "gsearch._core.median";
  const placement at = place_data(fn, data, locate("out", out));
  const auto o = out_of<double>(fn, "out", out, rows);
  visit_key_type(fn, data.dtype(), [&]<class T>() {
    on_backend(at, stream, int64_t(data.size()) >= small_scan_elements,
               [&](const auto& exec) { gsearch::median(exec, in_span<T>(data), rows, skip_nan, o); });
  });
}

// --- the torch fast paths: data pointers, not arrays --------------------------------------------
//
// gsearch.select, topk, partition, quantile and median pass a C-contiguous torch tensor of a key
// dtype, and the outputs they made for it, as data pointers and element counts (as searchsorted's
// fast path does: search_pointers, bind_search.cpp). That spares the DLPack import of each
// tensor, which is torch's Python __dlpack__ (on CUDA a device check and two stream objects made
// and compared: microseconds a tensor, two or three tensors a call). The caller checked the
// dtypes, the device and the contiguity; the library checks the sizes and the arguments.

void select_pointers(uintptr_t data, int64_t n, int64_t rank, uintptr_t value, int key_type, int device,
                     uintptr_t stream) {
  const std::string fn = "gsearch._core.select_pointers";
  const placement at = pointer_placement(fn, key_type, device);
  gsearch::visit_key_type(gsearch::all_dtypes[key_type], [&]<class T>() {
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      gsearch::select(exec, at_address<const T>(data, n), gsearch::span<const int64_t>(&rank, 1),
                      at_address<T>(value, 1));
    });
  });
}

void topk_pointers(uintptr_t data, int64_t rows, int64_t cols, int64_t k, bool largest, bool sorted, uintptr_t values,
                   uintptr_t indices, int key_type, int device, uintptr_t stream) {
  const std::string fn = "gsearch._core.topk_pointers";
  const placement at = pointer_placement(fn, key_type, device);
  if (rows < 0 || cols < 0 || k < 0) value_error(fn + ": negative sizes");
  gsearch::topk_options options;
  options.largest = largest;
  options.sorted = sorted;
  gsearch::visit_key_type(gsearch::all_dtypes[key_type], [&]<class T>() {
    on_backend(at, stream, rows * cols >= small_scan_elements, [&](const auto& exec) {
      gsearch::topk(exec, at_address<const T>(data, rows * cols), rows, k, options, at_address<T>(values, rows * k),
                    at_address<int64_t>(indices, rows * k));
    });
  });
}

void partition_pointers(uintptr_t data, int64_t n, int64_t kth, uintptr_t out, bool indices, int key_type, int device,
                        uintptr_t stream) {
  const std::string fn = indices ? "gsearch._core.argpartition_pointers" : "gsearch._core.partition_pointers";
  const placement at = pointer_placement(fn, key_type, device);
  const gsearch::span<const int64_t> k(&kth, 1);
  gsearch::visit_key_type(gsearch::all_dtypes[key_type], [&]<class T>() {
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      if (indices)
        gsearch::argpartition(exec, at_address<const T>(data, n), k, at_address<int64_t>(out, n));
      else
        gsearch::partition(exec, at_address<const T>(data, n), k, at_address<T>(out, n));
    });
  });
}

void quantile_pointers(uintptr_t data, int64_t n, const in_array& q, int method, bool skip_nan, uintptr_t out,
                       int key_type, int device, uintptr_t stream, int lerp_bits) {
  const std::string fn = "gsearch._core.quantile_pointers";
  const placement at = pointer_placement(fn, key_type, device);
  if (method < 0 || method > int(gsearch::quantile_method::nearest))
    value_error(fn + ": method " + std::to_string(method) + " out of range (a value of QUANTILE_METHODS)");
  const auto qs = host_param<double>(fn, "q", q);
  gsearch::visit_key_type(gsearch::all_dtypes[key_type], [&]<class T>() {
    gsearch::quantile_dtypes dtypes = gsearch::scalar_q_dtypes<T>();
    dtypes.index = gsearch::float_format::binary64;  // q given as Python floats
    if (lerp_bits != 0) dtypes.lerp = format_of_bits(fn, "lerp_bits", lerp_bits);
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      gsearch::quantile(exec, at_address<const T>(data, n), 1, qs, gsearch::quantile_method(method), dtypes, skip_nan,
                        at_address<double>(out, qs.size()));
    });
  });
}

void median_pointers(uintptr_t data, int64_t n, bool skip_nan, uintptr_t out, int key_type, int device,
                     uintptr_t stream) {
  const std::string fn = "gsearch._core.median_pointers";
  const placement at = pointer_placement(fn, key_type, device);
  gsearch::visit_key_type(gsearch::all_dtypes[key_type], [&]<class T>() {
    on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
      gsearch::median(exec, at_address<const T>(data, n), 1, skip_nan, at_address<double>(out, 1));
    });
  });
}

}  // namespace

void bind_selection(nb::module_& m) {
  m.attr("QUANTILE_METHODS") = enum_table(enum_values(gsearch::quantile_method::nearest));

  m.def("select", &py_select, "data"_a, "ranks"_a, "values"_a, "stream"_a = 0,
        "values[i] = the element of rank ranks[i] (from 0; negative from the end) of data in\n"
        "numpy's sort order (gsearch::select). data: a C-contiguous array of a supported dtype\n"
        "(taken flat) on the CPU (the GIL is released for large calls) or one CUDA device (run\n"
        "on `stream`, a cudaStream_t as an int; the call waits); ranks: host int64; values: on\n"
        "data's device, data's dtype, one per rank.");
  m.def(
      "partition",
      [](const in_array& data, const in_array& kth, out_array& out, uintptr_t stream, int64_t rows) {
        py_partition(data, kth, out, false, stream, rows);
      },
      "data"_a, "kth"_a, "out"_a, "stream"_a = 0, "rows"_a = 1,
      "numpy.partition(data.reshape(rows, -1), kth, axis=-1) of the flat data into out (data's\n"
      "dtype and size; gsearch::partition): each row, in one call. kth: host int64, any order,\n"
      "repeats allowed, negative from the end of a row. Devices and stream as in select().");
  m.def("partition_one", &py_partition_one, "data"_a, "kth"_a, "out"_a, "indices"_a,
        "partition(data, [kth], out) (indices: argpartition), one row on the default stream,\n"
        "kth an int: the small calls' fast path.");
  m.def(
      "argpartition",
      [](const in_array& data, const in_array& kth, out_array& out, uintptr_t stream, int64_t rows) {
        py_partition(data, kth, out, true, stream, rows);
      },
      "data"_a, "kth"_a, "out"_a, "stream"_a = 0, "rows"_a = 1,
      "numpy.argpartition(data.reshape(rows, -1), kth, axis=-1) of the flat data into out\n"
      "(int64, data's size, indices within each row; gsearch::argpartition). As partition().");
  m.def("topk", &py_topk, "data"_a, "rows"_a, "k"_a, "largest"_a, "sorted"_a, "values"_a, "indices"_a,
        "stream"_a = 0,
        "torch.topk(data.view(rows, -1), k, dim=-1, largest, sorted) into values (data's dtype)\n"
        "and indices (int64), rows * k each, row-major (gsearch::topk). As select().");
  m.def("kthvalue", &py_kthvalue, "data"_a, "rows"_a, "rank"_a, "values"_a, "indices"_a, "stream"_a = 0,
        "torch.kthvalue(data.view(rows, -1), rank + 1, dim=-1) (rank from 0) into values and\n"
        "indices (int64), one per row (gsearch::kthvalue). As select().");
  m.def("quantile", &py_quantile, "data"_a, "q"_a, "method"_a, "skip_nan"_a, "out"_a, "stream"_a = 0,
        "q_bits"_a = 64, "lerp_bits"_a = 0, "half_data"_a = false, "integer_q"_a = false, "rows"_a = 1,
        "numpy.quantile(data.reshape(rows, -1), q, method, axis=-1) of the flat data (skip_nan:\n"
        "numpy.nanquantile) into out (float64, q.size * rows, q-major as numpy's result, on data's\n"
        "device), in one call, bit for bit numpy's (gsearch::quantile_dtypes):\n"
        "q_bits: the bits of q's float dtype (64 for a Python float or an integer q), the index\n"
        "arithmetic's; lerp_bits: numpy's result dtype's, the interpolation's (0: numpy's for a\n"
        "Python float q, the data's own for float data); half_data: float32 data that is numpy\n"
        "float16 (b - a rounds to float16); integer_q: q of an integer dtype ('linear' takes the\n"
        "element). q: host float64 (values of q's dtype) in [0, 1]; method: a value of\n"
        "QUANTILE_METHODS. As select().");
  m.def("median", &py_median, "data"_a, "skip_nan"_a, "out"_a, "stream"_a = 0, "rows"_a = 1,
        "numpy.median(data.reshape(rows, -1), axis=-1) (skip_nan: numpy.nanmedian) of the flat\n"
        "data into out (float64, one per row, on data's device), in one call. As select().");

  // The torch fast paths (_selection.py, _quantiles.py): the same calls on data pointers.
  m.def("select_pointers", &select_pointers, "data"_a, "n"_a, "rank"_a, "value"_a, "key_type"_a, "device"_a,
        "stream"_a,
        "select() of one rank of data[0, n) into *value, given as data pointers: key_type an index\n"
        "into KEY_DTYPES, device a CUDA ordinal (-1: the CPU), both arrays contiguous there (the\n"
        "caller checked them), stream a cudaStream_t as an int. Spares the DLPack imports of the\n"
        "array form.");
  m.def("topk_pointers", &topk_pointers, "data"_a, "rows"_a, "cols"_a, "k"_a, "largest"_a, "sorted"_a, "values"_a,
        "indices"_a, "key_type"_a, "device"_a, "stream"_a,
        "topk() of the rows x cols data into values and indices (int64), rows * k each, given as\n"
        "data pointers (as select_pointers()).");
  m.def("partition_pointers", &partition_pointers, "data"_a, "n"_a, "kth"_a, "out"_a, "indices"_a, "key_type"_a,
        "device"_a, "stream"_a,
        "partition(data[0, n), [kth]) into out (indices: argpartition, int64 out), given as data\n"
        "pointers (as select_pointers()).");
  m.def("quantile_pointers", &quantile_pointers, "data"_a, "n"_a, "q"_a, "method"_a, "skip_nan"_a, "out"_a,
        "key_type"_a, "device"_a, "stream"_a, "lerp_bits"_a = 0,
        "quantile() of data[0, n) at q (host float64 of Python floats: q_bits 64) into out (float64,\n"
        "q.size), given as data pointers (as select_pointers()).");
  m.def("median_pointers", &median_pointers, "data"_a, "n"_a, "skip_nan"_a, "out"_a, "key_type"_a, "device"_a,
        "stream"_a,
        "median() of data[0, n) into *out (float64), given as data pointers (as select_pointers()).");
}

}  // namespace gsearch_python
