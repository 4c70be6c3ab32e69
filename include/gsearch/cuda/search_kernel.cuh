#pragma once
/// \file
/// The batched-search kernels: one per-lane algorithm of core/pbs.hpp, over keys staged in
/// shared memory (the paper's setting) or read from global memory (key lists too large for
/// shared memory). Instantiated once per algorithm in src/cuda/search_<algorithm>.cu.

#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/pbs.hpp"
#include "gsearch/cuda/check.cuh"
#include "gsearch/cuda/tuning.hpp"

namespace gsearch::cuda_backend {

/// Query j is processed by lane j % 32 (blocks and the grid stride are multiples of 32), as in
/// the CPU's simulated warps and the bank model.
template <algorithm A, bool Strict, class T, class Out>
__global__ void __launch_bounds__(max_block_threads) search_shared_kernel(const T* __restrict__ keys, int k,
                                     const T* __restrict__ queries, int64_t n,
                                     Out* __restrict__ out, int offset) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  // Stage the padded keys once per block: w sentinels, the keys, w sentinels.
  for (int i = threadIdx.x; i < k + 2 * warp_width; i += blockDim.x) {
    staged[i] = i < warp_width ? key_traits<T>::lowest()
                               : (i < warp_width + k ? keys[i - warp_width] : key_traits<T>::highest());
  }
  __syncthreads();
  const core::padded_accessor<T> acc{staged + warp_width};
  const int lane = threadIdx.x % warp_width;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) {
    const int r = core::search_rank<A>(acc, k, before<Strict, T>{queries[j]}, lane);
    out[j] = Out(r + offset);
  }
}

/// The same algorithm straight over the keys in global memory: the bounded accessor supplies
/// the padding sentinels.
template <algorithm A, bool Strict, class T, class Out>
__global__ void __launch_bounds__(max_block_threads) search_global_kernel(const T* __restrict__ keys, int64_t k,
                                     const T* __restrict__ queries, int64_t n,
                                     Out* __restrict__ out, int offset) {
  const core::bounded_accessor<T, key_traits<T>> acc{keys, k};
  const int lane = threadIdx.x % warp_width;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) {
    const int64_t r = core::search_rank<A>(acc, k, before<Strict, T>{queries[j]}, lane);
    out[j] = Out(r + offset);
  }
}

/// Shared-memory bytes the padded keys take.
template <class T>
constexpr int64_t staged_bytes(int64_t k) {
  return (k + 2 * warp_width) * int64_t(sizeof(T));
}

/// A grid that fills the device: `blocks_per_sm` resident blocks on each SM, no more blocks
/// than there is work for.
template <class Kernel>
int grid_size(Kernel kernel, int threads, int64_t smem, int64_t n, const device_limits& dev) {
  int per_sm = 0;
  GSEARCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, size_t(smem)));
  if (per_sm < 1) per_sm = 1;
  const int64_t needed = (n + threads - 1) / threads;
  return int(needed < int64_t(per_sm) * dev.sms ? needed : int64_t(per_sm) * dev.sms);
}

/// Enqueues the search with algorithm A (not auto_). Keys staged in shared memory when they fit.
template <algorithm A, class T, class Out>
void launch_search(cudaStream_t stream, bool strict, int offset, const T* keys, int64_t k,
                   const T* queries, int64_t n, Out* out, const device_limits& dev) {
  if (n == 0) return;
  const launch_config cfg = tuned_config(A, int(sizeof(T)), k);
  const int64_t smem = staged_bytes<T>(k);
  if (smem <= dev.max_shared_per_block) {
    auto kernel = strict ? search_shared_kernel<A, true, T, Out> : search_shared_kernel<A, false, T, Out>;
    if (smem > 48 * 1024)
      GSEARCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    const int grid = grid_size(kernel, cfg.threads, smem, n, dev);
    kernel<<<grid, cfg.threads, size_t(smem), stream>>>(keys, int(k), queries, n, out, offset);
  } else {
    auto kernel = strict ? search_global_kernel<A, true, T, Out> : search_global_kernel<A, false, T, Out>;
    const int grid = grid_size(kernel, cfg.threads, 0, n, dev);
    kernel<<<grid, cfg.threads, 0, stream>>>(keys, k, queries, n, out, offset);
  }
  GSEARCH_CUDA_CHECK_LAUNCH();
}

#define GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, T)                                               \
  template void launch_search<A, T, int64_t>(cudaStream_t, bool, int, const T*, int64_t, const T*, \
                                             int64_t, int64_t*, const device_limits&);          \
  template void launch_search<A, T, int32_t>(cudaStream_t, bool, int, const T*, int64_t, const T*, \
                                             int64_t, int32_t*, const device_limits&);

/// Instantiates launch_search<A> for every key and output type (one .cu file per algorithm).
#define GSEARCH_INSTANTIATE_LAUNCH_SEARCH(A)       \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, int32_t)  \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, uint32_t) \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, int64_t)  \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, uint64_t) \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, float)    \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, double)

#define GSEARCH_DECLARE_LAUNCH_SEARCH_T(A, T)                                                          \
  extern template void launch_search<A, T, int64_t>(cudaStream_t, bool, int, const T*, int64_t,       \
                                                    const T*, int64_t, int64_t*, const device_limits&); \
  extern template void launch_search<A, T, int32_t>(cudaStream_t, bool, int, const T*, int64_t,       \
                                                    const T*, int64_t, int32_t*, const device_limits&);

}  // namespace gsearch::cuda_backend
