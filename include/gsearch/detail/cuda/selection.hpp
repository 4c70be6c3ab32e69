#pragma once
/// \file
/// The CUDA backend of selection, as the public API sees it: host-compilable declarations,
/// defined in src/cuda/select.cu, ... (never called without CUDA: src/backend.hpp). The same
/// contracts as detail/cpu/selection.hpp, with data and outputs in device memory, ranks / kth /
/// q in host memory; each call is enqueued on `stream` and synchronizes it before returning
/// (the counts of one pass choose the next).

#include <cstdint>

#include "gsearch/core/selection.hpp"

struct CUstream_st;

namespace gsearch::cuda_backend {

template <class T>
void select(CUstream_st* stream, const T* data, int64_t n, const int64_t* ranks, int64_t m,
            T* values);

template <class T>
void partition(CUstream_st* stream, const T* data, int64_t n, const int64_t* kth, int64_t m,
               T* out, int64_t* out_indices);

template <class T>
void topk(CUstream_st* stream, const T* data, int64_t rows, int64_t cols, int64_t k, bool largest,
          bool sorted, T* values, int64_t* indices);

template <class T>
void kthvalue(CUstream_st* stream, const T* data, int64_t rows, int64_t cols, int64_t rank,
              T* values, int64_t* indices);

template <class T>
void quantile(CUstream_st* stream, const T* data, int64_t n, const double* q, int64_t m,
              quantile_method method, const quantile_dtypes& dtypes, bool skip_nan, double* out);

template <class T>
void median(CUstream_st* stream, const T* data, int64_t n, bool skip_nan, double* out);

}  // namespace gsearch::cuda_backend
