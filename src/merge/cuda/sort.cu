// sort() on the GPU. Integer keys: CUB's LSD radix sort (DeviceRadixSort, onesweep), which is
// stable, so equal keys keep their values' order as the merge sort does, and which moves each key
// about 2 x (bits / 8) times where the merge sort moves it 2 x (1 + log2(n / tile)) times (the
// measurement that chose it: docs/perf-notes.md, "sort: radix for integer keys").
// Floating-point keys: the merge sort (merge_sort.cu). CUB's radix order of floats puts NaNs
// whose sign bit is set before -inf and orders NaNs by their bits, where gsearch's order (numpy's)
// puts every NaN last, in input order.

#include <cub/device/device_radix_sort.cuh>

#include <type_traits>

#include "cuda/check.cuh"
#include "merge/backend.hpp"
#include "cuda/sort_support.cuh"  // with_cub_scratch
#include "cuda/stream_buffer.cuh"

namespace gsearch::cuda_backend {
namespace {

/// The radix sort of n integer keys (and their values). Apart (out != keys, out_values !=
/// values): CUB's form that keeps its input, reading it once. In place (either output is its
/// input): the DoubleBuffer form over the outputs and one temporary copy, which says where the
/// result landed; it is copied back where that is the copy.
template <class T>
void radix_sort(cudaStream_t stream, const T* keys, int64_t n, const int64_t* values, T* out, int64_t* out_values) {
  const bool with_values = values != nullptr;
  const bool in_place = out == keys || (with_values && out_values == values);
  if (!in_place) {
    with_cub_scratch(stream, [&](void* scratch, size_t& bytes) {
      return with_values ? cub::DeviceRadixSort::SortPairs(scratch, bytes, keys, out, values, out_values, n, 0,
                                                           int(sizeof(T) * 8), stream)
                         : cub::DeviceRadixSort::SortKeys(scratch, bytes, keys, out, n, 0, int(sizeof(T) * 8), stream);
    });
    return;
  }
  // In place: the outputs must hold the input first (only one of the two may be its input).
  if (out != keys) GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out, keys, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  if (with_values && out_values != values)
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out_values, values, size_t(n) * sizeof(int64_t), cudaMemcpyDeviceToDevice, stream));
  const stream_buffer other_keys(stream, size_t(n) * sizeof(T));
  const stream_buffer other_values(stream, with_values ? size_t(n) * sizeof(int64_t) : 0);
  cub::DoubleBuffer<T> k(out, static_cast<T*>(other_keys.get()));
  cub::DoubleBuffer<int64_t> v(out_values, static_cast<int64_t*>(other_values.get()));
  with_cub_scratch(stream, [&](void* scratch, size_t& bytes) {
    return with_values ? cub::DeviceRadixSort::SortPairs(scratch, bytes, k, v, n, 0, int(sizeof(T) * 8), stream)
                       : cub::DeviceRadixSort::SortKeys(scratch, bytes, k, n, 0, int(sizeof(T) * 8), stream);
  });
  if (k.Current() != out)
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out, k.Current(), size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  if (with_values && v.Current() != out_values)
    GSEARCH_CUDA_CHECK(
        cudaMemcpyAsync(out_values, v.Current(), size_t(n) * sizeof(int64_t), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

template <class T>
void sort(CUstream_st* stream, const T* keys, int64_t n, const int64_t* values, T* out, int64_t* out_values) {
  if (n <= 0) return;
  if constexpr (std::is_integral_v<T>) {
    radix_sort(stream, keys, n, values, out, out_values);
  } else {
    merge_sort(stream, keys, n, values, out, out_values);
  }
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_SORT_OPS)

}  // namespace gsearch::cuda_backend
