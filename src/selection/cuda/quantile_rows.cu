// The CUDA backend of numpy.quantile / median along an axis (the rows of a rows x cols array), in
// a fixed number of launches whatever the rows: every row sorted at once (cub's segmented sort of
// the keys' one-to-one order bits: NaN last, -0.0 kept), then one thread per (q, row) reads the
// one or two elements numpy's method takes from its sorted row and combines them
// (core/quantile.hpp, as the 1-D call and the CPU do), the results in numpy's layout (q first,
// then the rows). NaN rules as the 1-D call's: a row's NaNs skipped (nanquantile: its count is the
// position of its first NaN), or a row with a NaN all NaN.

#include <cub/device/device_segmented_sort.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "gsearch/core/quantile.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/stream_buffer.cuh"
#include "selection/backend.hpp"

namespace gsearch::cuda_backend {
namespace {

size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

template <class T>
__global__ void ordered_bits_kernel(const T* __restrict__ data, int64_t n, core::radix_bits_t<T>* __restrict__ bits) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    bits[i] = core::ordered_bits(data[i]);
}

struct row_start {
  int64_t cols;
  __host__ __device__ int64_t operator()(int64_t r) const { return r * cols; }
};

// The elements of a sorted row that count: all (integers), those before its first NaN (skipped
// NaNs), or -1 when a NaN makes the row's results NaN.
template <class T>
__device__ int64_t counted(const core::radix_bits_t<T>* row, int64_t cols, bool skip_nan) {
  if constexpr (!std::is_floating_point_v<T>) {
    return cols;
  } else {
    const auto is_nan = [&](int64_t i) {
      const T x = core::from_ordered_bits<T>(row[i]);
      return x != x;
    };
    if (cols == 0 || !is_nan(cols - 1)) return cols;
    if (!skip_nan) return -1;
    int64_t lo = 0, hi = cols - 1;  // the first NaN is in [lo, hi]
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (is_nan(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

template <class T>
__global__ void quantile_of_sorted_rows_kernel(const core::radix_bits_t<T>* __restrict__ sorted, int64_t rows,
                                               int64_t cols, const double* __restrict__ q, int64_t m,
                                               quantile_method method, quantile_dtypes dtypes, bool skip_nan,
                                               double* __restrict__ out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * m; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i / rows, r = i % rows;  // out is q-major: out[j * rows + r]
    const core::radix_bits_t<T>* row = sorted + r * cols;
    const int64_t count = counted<T>(row, cols, skip_nan);
    if (count <= 0) {
      out[i] = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    const core::quantile_point p = core::quantile_point_of(method, q[j], count, dtypes);
    out[i] = core::quantile_combine(p, core::from_ordered_bits<T>(row[p.lo]), core::from_ordered_bits<T>(row[p.hi]),
                                    dtypes);
  }
}

template <class T>
__global__ void median_of_sorted_rows_kernel(const core::radix_bits_t<T>* __restrict__ sorted, int64_t rows,
                                             int64_t cols, bool skip_nan, double* __restrict__ out) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const core::radix_bits_t<T>* row = sorted + r * cols;
    const int64_t count = counted<T>(row, cols, skip_nan);
    if (count <= 0) {
      out[r] = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    const core::median_ranks k = core::median_ranks_of(count);
    out[r] = core::median_combine(core::from_ordered_bits<T>(row[k.lo]), core::from_ordered_bits<T>(row[k.hi]), count);
  }
}

// Every row's order bits sorted into device memory that `memory` owns.
template <class T>
const core::radix_bits_t<T>* sorted_rows(cudaStream_t stream, const T* data, int64_t rows, int64_t cols,
                                         stream_buffer& memory, const device_limits& dev) {
  using U = core::radix_bits_t<T>;
  const int64_t n = rows * cols;
  const auto offsets = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), row_start{cols});
  size_t sort_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(nullptr, sort_bytes, static_cast<const U*>(nullptr),
                                                        static_cast<U*>(nullptr), n, rows, offsets, offsets + 1,
                                                        stream));
  memory = stream_buffer(stream, 2 * align256(size_t(n) * sizeof(U)) + align256(sort_bytes));
  auto* base = static_cast<unsigned char*>(memory.get());
  U* bits = reinterpret_cast<U*>(base);
  U* sorted = reinterpret_cast<U*>(base + align256(size_t(n) * sizeof(U)));
  void* temp = base + 2 * align256(size_t(n) * sizeof(U));
  launch_plain(ordered_bits_kernel<T>, n, 256, stream, dev, data, n, bits);
  GSEARCH_CUDA_CHECK(
      cub::DeviceSegmentedSort::SortKeys(temp, sort_bytes, bits, sorted, n, rows, offsets, offsets + 1, stream));
  return sorted;
}

}  // namespace

template <class T>
void quantile_rows(CUstream_st* stream, const T* data, int64_t rows, int64_t cols, const double* q, int64_t m,
                   quantile_method method, const quantile_dtypes& dtypes, bool skip_nan, double* out) {
  if (m == 0 || rows == 0) return;
  const device_limits dev = current_device_limits();
  stream_buffer rows_memory;
  const core::radix_bits_t<T>* sorted = sorted_rows(stream, data, rows, cols, rows_memory, dev);
  stream_buffer q_memory(stream, size_t(m) * sizeof(double));
  auto* d_q = static_cast<double*>(q_memory.get());
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(d_q, q, size_t(m) * sizeof(double), cudaMemcpyHostToDevice, stream));
  launch_plain(quantile_of_sorted_rows_kernel<T>, rows * m, 256, stream, dev, sorted, rows, cols, d_q, m, method, dtypes,
               skip_nan, out);
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // q is the caller's pageable memory
}

template <class T>
void median_rows(CUstream_st* stream, const T* data, int64_t rows, int64_t cols, bool skip_nan, double* out) {
  if (rows == 0) return;
  const device_limits dev = current_device_limits();
  stream_buffer rows_memory;
  const core::radix_bits_t<T>* sorted = sorted_rows(stream, data, rows, cols, rows_memory, dev);
  launch_plain(median_of_sorted_rows_kernel<T>, rows, 256, stream, dev, sorted, rows, cols, skip_nan, out);
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_QUANTILE_ROWS_OPS)

}  // namespace gsearch::cuda_backend
