#pragma once
/// \file
/// How the scans over unsorted data split it (find's scan, selection's bucket and scatter passes,
/// top-k's gather): 16-byte loads from the first aligned element, tiles of Threads x Loads vectors,
/// the unaligned head in tile 0.

#include <cuda_runtime.h>

#include <cstdint>
#include <cub/block/block_scan.cuh>

#include "gsearch/core/config.hpp"  // GSEARCH_UNROLL, GSEARCH_FORCEINLINE

namespace gsearch::cuda_backend {

using u64 = unsigned long long;  // the type of CUDA's 64-bit atomics

/// How the tuned scan splits the data. The body [head, n) starts at the first 16-byte aligned
/// element and is cut into tiles of Threads x Loads 16-byte vectors; the head (fewer than one
/// vector of elements before it) belongs to tile 0. Tile t covers [tile_begin(t), tile_end(t)).
template <class T, int Threads, int Loads>
struct scan_layout {
  static constexpr int per_vector = 16 / int(sizeof(T));
  static constexpr int64_t tile = int64_t(Threads) * Loads * per_vector;
  int64_t n, head;

  __host__ __device__ int64_t tiles() const { return n > head ? (n - head + tile - 1) / tile : (n > 0 ? 1 : 0); }
  __host__ __device__ int64_t tile_begin(int64_t t) const { return t == 0 ? 0 : head + t * tile; }
  __host__ __device__ int64_t tile_end(int64_t t) const {
    const int64_t e = head + (t + 1) * tile;
    return e < n ? e : n;
  }
};

/// Elements before the first 16-byte boundary of `data` (0 when it is aligned; at most
/// 16 / sizeof(T) - 1), capped at n.
template <class T>
__host__ int64_t unaligned_head(const T* data, int64_t n) {
  const auto misalign = int64_t(reinterpret_cast<uintptr_t>(data) % 16);
  const int64_t head = misalign == 0 ? 0 : (16 - misalign) / int64_t(sizeof(T));
  return head < n ? head : n;
}

/// The warp's inclusive sum of x in lane order (every lane calls it): the scans' places of each
/// thread's items (the copy-outs of selection and find).
template <class X>
__device__ GSEARCH_FORCEINLINE X warp_inclusive_sum(X x) {
  const int lane = int(threadIdx.x % 32);
  GSEARCH_UNROLL
  for (int o = 1; o < 32; o *= 2) {
    const X y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  return x;
}

/// In place, over `size` ints in shared memory: the exclusive prefix sums, then data[size] = the
/// total. Each thread sums a run of consecutive entries, a block scan joins the runs. The tile
/// sorts by bucket of the partitioned search's and the selection's scatters.
template <int Threads>
__device__ __forceinline__ void block_exclusive_scan(int* data, int size) {
  using scan_t = cub::BlockScan<int, Threads>;
  __shared__ typename scan_t::TempStorage scan_storage;
  const int per = (size + Threads - 1) / Threads;
  const int begin = int(threadIdx.x) * per;
  const int end = begin + per < size ? begin + per : size;
  int sum = 0;
  for (int i = begin; i < end; ++i) sum += data[i];
  int before_run = 0, total = 0;
  scan_t(scan_storage).ExclusiveSum(sum, before_run, total);
  for (int i = begin; i < end; ++i) {
    const int v = data[i];
    data[i] = before_run;
    before_run += v;
  }
  if (threadIdx.x == 0) data[size] = total;
}

}  // namespace gsearch::cuda_backend
