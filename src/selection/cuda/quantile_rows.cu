// The CUDA backend of numpy.quantile / median along an axis (the rows of a rows x cols array):
// each row through the one-dimensional quantile / median of select.cu, one after another on the
// stream (each of those waits for its counts, so the rows cannot share a launch yet), the row's
// results scattered into numpy's layout (q first, then the rows) by one strided copy.

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/check.cuh"
#include "cuda/stream_buffer.cuh"
#include "selection/backend.hpp"

namespace gsearch::cuda_backend {

template <class T>
void quantile_rows(CUstream_st* stream, const T* data, int64_t rows, int64_t cols, const double* q, int64_t m,
                   quantile_method method, const quantile_dtypes& dtypes, bool skip_nan, double* out) {
  if (m == 0) return;
  stream_buffer row_out(stream, size_t(m) * sizeof(double));
  auto* results = static_cast<double*>(row_out.get());
  for (int64_t r = 0; r < rows; ++r) {
    quantile<T>(stream, data + r * cols, cols, q, m, method, dtypes, skip_nan, results);
    GSEARCH_CUDA_CHECK(cudaMemcpy2DAsync(out + r, size_t(rows) * sizeof(double), results, sizeof(double),
                                         sizeof(double), size_t(m), cudaMemcpyDeviceToDevice, stream));
  }
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
void median_rows(CUstream_st* stream, const T* data, int64_t rows, int64_t cols, bool skip_nan, double* out) {
  for (int64_t r = 0; r < rows; ++r) median<T>(stream, data + r * cols, cols, skip_nan, out + r);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_QUANTILE_ROWS_OPS)

}  // namespace gsearch::cuda_backend
