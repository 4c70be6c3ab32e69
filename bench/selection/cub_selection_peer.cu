// selection_bench's CUB peers, built against the newer CCCL headers given by
// GSEARCH_BENCH_CCCL_INCLUDE (scripts/fetch-cccl.sh puts PyPI's cuda-cccl, CCCL 3.6, there; the
// CUDA 13.0 toolkit's CCCL 3.0.1 has neither cub::DeviceTopK nor cub::DeviceBatchedTopK). Without
// those headers the functions throw. See selection_peers.hpp.
//
// The CCCL 3.6 calls made here (cub/device/device_topk.cuh, device_batched_topk.cuh,
// device_radix_sort.cuh):
//   DeviceTopK::{Max,Min}Keys(temp, bytes, keys_in, keys_out, num_items, k, env)
//   DeviceTopK::{Max,Min}Pairs(temp, bytes, keys_in, keys_out, values_in, values_out, num_items,
//                              k, env)
//     env = cuda::std::execution::env{cuda::stream_ref{stream}, cuda::execution::require(
//             determinism::not_guaranteed, output_ordering::unsorted)}: 3.6 implements only this
//     combination (any other, the empty env included, is a compile-time error); the output is
//     the k items in no order.
//   DeviceBatchedTopK::MaxPairs(temp, bytes, keys_in_it, keys_out_it, values_in_it,
//                               values_out_it, segment_sizes, k, num_segments, env)
//     keys_in_it[i] is segment i's key iterator: cuda::make_strided_iterator over a counting
//     iterator of pointers (row i at data + i * cols); values_in_it: a constant iterator of one
//     counting iterator (the index within the row); segment_sizes and k are
//     cuda::args::immediate with compile-time cuda::args::bounds (3.6 rejects a segment-size
//     type whose maximum exceeds 2^21); env requires determinism::not_guaranteed,
//     tie_break::unspecified and output_ordering::sorted or ::unsorted (stable_sorted, the
//     default, is not implemented in 3.6).
//   DeviceRadixSort::SortKeys(temp, bytes, keys_in, keys_out, num_items, begin_bit, end_bit,
//                             stream), SortPairsDescending(temp, bytes, keys_in, keys_out,
//                             values_in, values_out, num_items, begin_bit, end_bit, stream)

#include <cuda_runtime.h>

#include "gsearch/core/error.hpp"
#include "cuda/check.cuh"
#include "selection_peers.hpp"

#if GSEARCH_BENCH_HAS_NEW_CCCL
#include "new_cccl.cuh"
#include <cub/device/device_batched_topk.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_topk.cuh>
#include <cuda/__execution/determinism.h>
#include <cuda/__execution/output_ordering.h>
#include <cuda/__execution/require.h>
#include <cuda/__execution/tie_break.h>
#include <cuda/argument>
#include <cuda/iterator>
#include <cuda/std/__execution/env.h>
#include <cuda/stream_ref>
#endif

namespace gsearch::bench::selection_peers {

#if GSEARCH_BENCH_HAS_NEW_CCCL
namespace {

namespace ex = cuda::execution;

auto topk_env(CUstream_st* stream) {
  return cuda::std::execution::env{cuda::stream_ref{stream},
                                   ex::require(ex::determinism::not_guaranteed, ex::output_ordering::unsorted)};
}

template <class T>
cudaError_t topk_call(void* temp, size_t& bytes, const T* data, int64_t n, int64_t k, bool largest, T* values_out,
                      int64_t* idx_out, CUstream_st* stream) {
  const auto env = topk_env(stream);
  if (idx_out == nullptr)
    return largest ? cub::DeviceTopK::MaxKeys(temp, bytes, data, values_out, n, k, env)
                   : cub::DeviceTopK::MinKeys(temp, bytes, data, values_out, n, k, env);
  const auto index = cuda::make_counting_iterator<int64_t>(0);
  return largest ? cub::DeviceTopK::MaxPairs(temp, bytes, data, values_out, index, idx_out, n, k, env)
                 : cub::DeviceTopK::MinPairs(temp, bytes, data, values_out, index, idx_out, n, k, env);
}

constexpr int64_t max_k = 1024;
constexpr int64_t small_segment = 1 << 14, max_segment = 1 << 21;

/// DeviceBatchedTopK::MaxPairs with the segment bound Seg and ordering Order.
template <int64_t Seg, class Order, class T>
cudaError_t batched_call(void* temp, size_t& bytes, const T* data, int64_t rows, int64_t cols, int64_t k,
                         T* values_out, int64_t* idx_out, CUstream_st* stream) {
  auto keys_in = cuda::make_strided_iterator(cuda::make_counting_iterator(data), cols);
  auto keys_out = cuda::make_strided_iterator(cuda::make_counting_iterator(values_out), k);
  auto values_in = cuda::make_constant_iterator(cuda::make_counting_iterator<int64_t>(0));
  auto values_out_it = cuda::make_strided_iterator(cuda::make_counting_iterator(idx_out), k);
  const auto sizes = cuda::args::immediate{cols, cuda::args::bounds<int64_t{1}, Seg>()};
  const auto k_arg = cuda::args::immediate{k, cuda::args::bounds<int64_t{1}, max_k>()};
  const auto segments = cuda::args::immediate{rows};
  const auto env = cuda::std::execution::env{
      cuda::stream_ref{stream}, ex::require(ex::determinism::not_guaranteed, ex::tie_break::unspecified, Order{})};
  return cub::DeviceBatchedTopK::MaxPairs(temp, bytes, keys_in, keys_out, values_in, values_out_it, sizes, k_arg,
                                          segments, env);
}

template <class T>
cudaError_t batched(void* temp, size_t& bytes, const T* data, int64_t rows, int64_t cols, int64_t k, bool sorted,
                    T* values_out, int64_t* idx_out, CUstream_st* stream) {
  if (cols < 1 || cols > max_segment || k < 1 || k > max_k || k > cols)
    throw gsearch::invalid_argument("cub DeviceBatchedTopK peer: 1 <= k <= min(cols, 1024), cols <= 2^21");
  if (cols <= small_segment)
    return sorted ? batched_call<small_segment, ex::output_ordering::sorted_t>(temp, bytes, data, rows, cols, k,
                                                                                values_out, idx_out, stream)
                  : batched_call<small_segment, ex::output_ordering::unsorted_t>(temp, bytes, data, rows, cols, k,
                                                                                  values_out, idx_out, stream);
  return sorted ? batched_call<max_segment, ex::output_ordering::sorted_t>(temp, bytes, data, rows, cols, k,
                                                                            values_out, idx_out, stream)
                : batched_call<max_segment, ex::output_ordering::unsorted_t>(temp, bytes, data, rows, cols, k,
                                                                              values_out, idx_out, stream);
}

template <class T>
__global__ void pick_kernel(const T* sorted, const int64_t* ranks, int64_t m, T* out) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < m; j += int64_t(gridDim.x) * blockDim.x)
    out[j] = sorted[ranks[j]];
}

}  // namespace

template <class T>
size_t cub_topk_temp_bytes(int64_t n, int64_t k, bool largest, bool pairs) {
  size_t bytes = 0;
  int64_t dummy_idx = 0;
  GSEARCH_CUDA_CHECK(topk_call<T>(nullptr, bytes, static_cast<const T*>(nullptr), n, k, largest,
                                  static_cast<T*>(nullptr), pairs ? &dummy_idx : nullptr, nullptr));
  return bytes;
}

template <class T>
void cub_topk(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, int64_t n, int64_t k, bool largest,
              T* values_out, int64_t* idx_out) {
  GSEARCH_CUDA_CHECK(topk_call<T>(temp, temp_bytes, data, n, k, largest, values_out, idx_out, stream));
}

template <class T>
size_t cub_batched_topk_temp_bytes(int64_t rows, int64_t cols, int64_t k, bool sorted) {
  size_t bytes = 0;
  GSEARCH_CUDA_CHECK(batched<T>(nullptr, bytes, static_cast<const T*>(nullptr), rows, cols, k, sorted,
                                static_cast<T*>(nullptr), static_cast<int64_t*>(nullptr), nullptr));
  return bytes;
}

template <class T>
void cub_batched_topk(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, int64_t rows, int64_t cols,
                      int64_t k, bool sorted, T* values_out, int64_t* idx_out) {
  GSEARCH_CUDA_CHECK(batched<T>(temp, temp_bytes, data, rows, cols, k, sorted, values_out, idx_out, stream));
}

template <class T>
size_t cub_sort_temp_bytes(int64_t n) {
  size_t bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const T*>(nullptr),
                                                    static_cast<T*>(nullptr), n, 0, int(8 * sizeof(T))));
  return bytes;
}

template <class T>
void cub_sort_pick(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, T* sorted, int64_t n,
                   const int64_t* ranks, int64_t m, T* out) {
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, data, sorted, n, 0, int(8 * sizeof(T)), stream));
  if (m > 0) {
    pick_kernel<T><<<int((m + 255) / 256), 256, 0, stream>>>(sorted, ranks, m, out);
    GSEARCH_CUDA_CHECK(cudaGetLastError());
  }
}

template <class T>
size_t cub_sort_pairs_temp_bytes(int64_t n) {
  size_t bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
      nullptr, bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr), static_cast<const int64_t*>(nullptr),
      static_cast<int64_t*>(nullptr), n, 0, int(8 * sizeof(T))));
  return bytes;
}

template <class T>
void cub_sort_pairs_desc(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, const int64_t* iota,
                         T* keys_out, int64_t* idx_out, int64_t n) {
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, data, keys_out, iota, idx_out, n, 0,
                                                               int(8 * sizeof(T)), stream));
}

#else  // no newer CCCL in this build

namespace {
[[noreturn]] void missing() {
  throw gsearch::invalid_argument(
      "selection_bench was built without the newer CCCL (run scripts/fetch-cccl.sh and reconfigure): no CUB 3.6 peers");
}
}  // namespace
template <class T>
size_t cub_topk_temp_bytes(int64_t, int64_t, bool, bool) { missing(); }
template <class T>
void cub_topk(CUstream_st*, void*, size_t, const T*, int64_t, int64_t, bool, T*, int64_t*) { missing(); }
template <class T>
size_t cub_batched_topk_temp_bytes(int64_t, int64_t, int64_t, bool) { missing(); }
template <class T>
void cub_batched_topk(CUstream_st*, void*, size_t, const T*, int64_t, int64_t, int64_t, bool, T*, int64_t*) { missing(); }
template <class T>
size_t cub_sort_temp_bytes(int64_t) { missing(); }
template <class T>
void cub_sort_pick(CUstream_st*, void*, size_t, const T*, T*, int64_t, const int64_t*, int64_t, T*) { missing(); }
template <class T>
size_t cub_sort_pairs_temp_bytes(int64_t) { missing(); }
template <class T>
void cub_sort_pairs_desc(CUstream_st*, void*, size_t, const T*, const int64_t*, T*, int64_t*, int64_t) { missing(); }

#endif

#define GSEARCH_INSTANTIATE(T)                                                                                \
  template size_t cub_topk_temp_bytes<T>(int64_t, int64_t, bool, bool);                                      \
  template void cub_topk<T>(CUstream_st*, void*, size_t, const T*, int64_t, int64_t, bool, T*, int64_t*);    \
  template size_t cub_sort_temp_bytes<T>(int64_t);                                                           \
  template void cub_sort_pick<T>(CUstream_st*, void*, size_t, const T*, T*, int64_t, const int64_t*, int64_t, T*); \
  template size_t cub_sort_pairs_temp_bytes<T>(int64_t);                                                     \
  template void cub_sort_pairs_desc<T>(CUstream_st*, void*, size_t, const T*, const int64_t*, T*, int64_t*, int64_t);
GSEARCH_INSTANTIATE(float)
GSEARCH_INSTANTIATE(int32_t)
#undef GSEARCH_INSTANTIATE
template size_t cub_batched_topk_temp_bytes<float>(int64_t, int64_t, int64_t, bool);
template void cub_batched_topk<float>(CUstream_st*, void*, size_t, const float*, int64_t, int64_t, int64_t, bool,
                                      float*, int64_t*);

}  // namespace gsearch::bench::selection_peers
