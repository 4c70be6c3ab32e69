#pragma once
/// \file
/// The batched-search kernels: one per-lane algorithm of core/pbs.hpp, over keys staged in
/// shared memory (the paper's setting) or read from global memory (key lists too large for
/// shared memory). Instantiated once per algorithm in src/cuda/search_<algorithm>.cu, with the
/// launch configuration of tuning.hpp; bench/ instantiates other configurations to tune them.

#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/pbs.hpp"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/launch_gate.hpp"
#include "search/cuda/gated.hpp"
#include "search/tuning.hpp"

namespace gsearch::cuda_backend {

/// The queries of one tile: Items per thread, thread t taking queries t, t + Threads, ...
/// of the tile, so that query j is always searched by lane j % 32 (as in the CPU's simulated
/// warps and the bank model) and every load and store is coalesced.
template <algorithm A, bool Strict, int Threads, int Items, int Copies = 1, class Accessor, class T,
          class Index, class Out>
__device__ __forceinline__ void search_tile(const Accessor& acc, Index k, const T* __restrict__ queries,
                                            int64_t tile_begin, int64_t n, Out* __restrict__ out,
                                            int offset, Index replica_stride = 0) {
  const int lane = threadIdx.x % warp_width;
  const int64_t first = tile_begin + threadIdx.x;
  before<Strict, T> preds[Items];
  Index rank[Items];
  if (tile_begin + int64_t(Threads) * Items <= n) {  // a full tile: no bounds checks
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) preds[i].q = queries[first + i * Threads];
    core::search_ranks<A, Items, Copies>(acc, k, preds, lane, rank, replica_stride);
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) out[first + i * Threads] = Out(rank[i] + offset);
  } else {  // the last tile: queries past n repeat the last one, and are not written
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = first + i * Threads;
      preds[i].q = queries[j < n ? j : n - 1];
    }
    core::search_ranks<A, Items, Copies>(acc, k, preds, lane, rank, replica_stride);
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i)
      if (first + i * Threads < n) out[first + i * Threads] = Out(rank[i] + offset);
  }
}

/// Copies the k keys into shared memory as the per-lane algorithms read them: warp_width
/// sentinels, the keys, warp_width sentinels, in Copies replicas (core::replicated_size) for
/// PBS-CL with replicated keys; the whole block takes part and meets at a barrier. Returns the
/// replica stride. The keys move in 16-byte vectors when `keys` is 16-byte aligned (the replicas
/// are: their stride is a multiple of 16 bytes), else one at a time; Streaming reads the vectors
/// with the evict-first hint (__ldcs), for callers that stage many different key lists through
/// L2 and want it to keep their other data (the partitioned search's buckets).
template <int Threads, int Copies, bool Streaming = false, class T>
__device__ __forceinline__ int stage_padded_keys(const T* __restrict__ keys, int k, T* staged) {
  const int stride = int(core::replica_stride<T>(k, Copies));
  constexpr int pad = warp_width;
  for (int e = threadIdx.x; e < 2 * pad * Copies; e += Threads) {  // the sentinels of every replica
    T* replica = staged + (e / (2 * pad)) * stride;
    const int i = e % (2 * pad);
    if (i < pad) replica[i] = key_traits<T>::lowest();
    else replica[k + i] = key_traits<T>::highest();
  }
  constexpr int vec = 16 / int(sizeof(T));  // keys per 16-byte vector
  int done = 0;
  if (reinterpret_cast<uintptr_t>(keys) % 16 == 0) {
    const int vectors = k / vec;
    const int4* from = reinterpret_cast<const int4*>(keys);
    constexpr int batch = 4;  // vectors a thread has in flight
    for (int v0 = threadIdx.x; v0 < vectors; v0 += batch * Threads) {
      int4 x[batch];
      GSEARCH_UNROLL
      for (int u = 0; u < batch; ++u)
        if (v0 + u * Threads < vectors) x[u] = Streaming ? __ldcs(from + v0 + u * Threads) : from[v0 + u * Threads];
      GSEARCH_UNROLL
      for (int u = 0; u < batch; ++u) {
        if (v0 + u * Threads < vectors) {
          GSEARCH_UNROLL
          for (int c = 0; c < Copies; ++c)
            *reinterpret_cast<int4*>(staged + pad + c * stride + (v0 + u * Threads) * vec) = x[u];
        }
      }
    }
    done = vectors * vec;
  }
  for (int i = done + int(threadIdx.x); i < k; i += Threads) {
    const T x = keys[i];
    GSEARCH_UNROLL
    for (int c = 0; c < Copies; ++c) staged[pad + c * stride + i] = x;
  }
  __syncthreads();
  return stride;
}

/// Each block stages the padded keys once (Copies replicas of them for PBS-CL with replicated
/// keys, core::replicated_size), then takes tiles of Threads * Items queries.
template <algorithm A, bool Strict, class T, class Out, int Threads, int Items, int Copies = 1>
__global__ void __launch_bounds__(Threads)
    search_shared_kernel(const T* __restrict__ keys, int k, const T* __restrict__ queries, int64_t n,
                         Out* __restrict__ out, int offset, launch_gate gate) {
  if (gate.closed()) return;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  const int stride = stage_padded_keys<Threads, Copies>(keys, k, staged);
  const core::padded_accessor<T> acc{staged + warp_width};
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile)
    search_tile<A, Strict, Threads, Items, Copies>(acc, k, queries, begin, n, out, offset, stride);
}

/// The same algorithm straight over the keys in global memory: the bounded accessor supplies
/// the padding sentinels.
template <algorithm A, bool Strict, class T, class Out, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    search_global_kernel(const T* __restrict__ keys, int64_t k, const T* __restrict__ queries, int64_t n,
                         Out* __restrict__ out, int offset, launch_gate gate) {
  if (gate.closed()) return;
  const core::bounded_accessor<T, key_traits<T>> acc{keys, k};
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile)
    search_tile<A, Strict, Threads, Items>(acc, k, queries, begin, n, out, offset);
}

/// Shared-memory bytes the padded keys take (in `copies` replicas).
template <class T>
constexpr int64_t staged_bytes(int64_t k, int copies = 1) {
  return core::replicated_size<T>(k, copies) * int64_t(sizeof(T));
}

/// True when k keys of type T are searched in shared memory on this device.
template <class T>
constexpr bool fits_shared(int64_t k, const device_limits& dev, int copies = 1) {
  return staged_bytes<T>(k, copies) <= dev.max_shared_per_block;
}

/// True when the partitioned search with the library's configuration keeps k keys of key_bytes
/// bytes in shared-memory buckets with its tuned tiles on this device (its limit, or the testing
/// override): what `auto` asks before it takes algorithm::partitioned (src/search/cuda/partitioned.cu).
bool partitioned_fits(int key_bytes, int64_t k, const device_limits& dev);

/// The temporary device memory algorithm::partitioned allocates for k keys and n queries of type T
/// on side left (Strict) or not (src/search/cuda/partitioned.cu): 0 when it runs as the plain search.
template <class T>
int64_t partitioned_temp_bytes(bool strict, int64_t k, int64_t n, const device_limits& dev);

/// Enqueues the search with algorithm A (not auto_) and an explicit launch configuration:
/// keys staged in shared memory (Copies replicas) when they fit, else read from global memory;
/// the kernel does its work when `gate` is open (launch_gate.hpp).
template <algorithm A, int Threads, int Items, int Copies, class T, class Out>
void launch_search_with(cudaStream_t stream, bool strict, int offset, const T* keys, int64_t k,
                        const T* queries, int64_t n, Out* out, const device_limits& dev, launch_gate gate = {}) {
  static_assert(Copies == 1 || A == algorithm::pbs_cl, "replicated keys are for PBS-CL");
  if (n == 0) return;
  if (fits_shared<T>(k, dev, Copies)) {
    auto kernel = strict ? search_shared_kernel<A, true, T, Out, Threads, Items, Copies>
                         : search_shared_kernel<A, false, T, Out, Threads, Items, Copies>;
    launch_filling(kernel, Threads, staged_bytes<T>(k, Copies), (n + Threads * Items - 1) / (Threads * Items), stream,
                   dev, keys, int(k), queries, n, out, offset, gate);
  } else if constexpr (Copies > 1) {  // the replicas do not fit: one copy
    launch_search_with<A, Threads, Items, 1>(stream, strict, offset, keys, k, queries, n, out, dev, gate);
  } else {
    constexpr int threads = global_config.threads, items = global_config.items;
    auto kernel = strict ? search_global_kernel<A, true, T, Out, threads, items>
                         : search_global_kernel<A, false, T, Out, threads, items>;
    launch_filling(kernel, threads, 0, (n + threads * items - 1) / (threads * items), stream, dev, keys, k, queries, n,
                   out, offset, gate);
  }
}

/// Enqueues the search with algorithm A and the tuned configuration of tuning.hpp.
template <algorithm A, class T, class Out>
void launch_search(cudaStream_t stream, bool strict, int offset, const T* keys, int64_t k,
                   const T* queries, int64_t n, Out* out, const device_limits& dev, launch_gate gate = {}) {
  constexpr launch_config cfg = shared_config<A, int(sizeof(T))>;
  if constexpr (A == algorithm::pbs_cl) {
    if (pbs_cl_copies<T>(k, dev.max_shared_per_block) == 2)
      return launch_search_with<A, cfg.threads, cfg.items, 2>(stream, strict, offset, keys, k, queries, n, out, dev,
                                                              gate);
  }
  launch_search_with<A, cfg.threads, cfg.items, 1>(stream, strict, offset, keys, k, queries, n, out, dev, gate);
}

#define GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, T)                                               \
  template void launch_search<A, T, int64_t>(cudaStream_t, bool, int, const T*, int64_t, const T*, \
                                             int64_t, int64_t*, const device_limits&, launch_gate); \
  template void launch_search<A, T, int32_t>(cudaStream_t, bool, int, const T*, int64_t, const T*, \
                                             int64_t, int32_t*, const device_limits&, launch_gate);

/// Instantiates launch_search<A> for every key and output type (one .cu file per algorithm).
#define GSEARCH_INSTANTIATE_LAUNCH_SEARCH(A)       \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, int32_t)  \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, uint32_t) \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, int64_t)  \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, uint64_t) \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, float)    \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_T(A, double)

#define GSEARCH_DECLARE_LAUNCH_SEARCH_T(A, T)                                                        \
  extern template void launch_search<A, T, int64_t>(cudaStream_t, bool, int, const T*, int64_t,     \
                                                    const T*, int64_t, int64_t*, const device_limits&, \
                                                    launch_gate);                                      \
  extern template void launch_search<A, T, int32_t>(cudaStream_t, bool, int, const T*, int64_t,     \
                                                    const T*, int64_t, int32_t*, const device_limits&, \
                                                    launch_gate);

}  // namespace gsearch::cuda_backend
