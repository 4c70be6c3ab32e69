#pragma once
/// \file
/// partition / argpartition's scatter: every element to its bucket's range of the output, the
/// buckets being those of the distinct kth values (core::select_bucket: the elements strictly
/// between two of them, or equal to one), laid out in bucket order from the counts of a bucket
/// pass (selection_kernel.cuh) and their exclusive prefix sums (`cursors`, each bucket's next free
/// slot). The order within a bucket is free (numpy's partition promises none), so a tile needs no
/// look-back: it ranks its elements within their buckets by warp-aggregated shared atomics, then
/// reserves each bucket's range with one global atomic on its cursor, and writes.
///
/// The cursors come from one of two places. The bucket pass's counts: each bucket filled from its
/// first position up. Or the radix select's answers (one to radix_select_max_ranks kth), which
/// give each kth value v_i the count L_i of the elements less than it but not how many equal it:
/// then the elements equal to v_i fill up from L_i and those strictly between v_{i-1} and v_i (the
/// even bucket 2i) fill down from L_i, their end (the last even bucket's end is n), and the two
/// meet where the equal ones end, with no count pass (`even_down`; select.cu's partition_cursors_kernel).
/// Launched from src/selection/cuda/select.cu.

#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/selection.hpp"
#include "selection/cuda/selection_kernel.cuh"  // tile_items, scan_layout

namespace gsearch::cuda_backend {

/// The shared memory of partition_scatter_kernel for m splitters: the splitters, then per bucket
/// the tile's count and its base in the output.
template <class T>
struct scatter_shared {
  int m;
  __host__ __device__ size_t count_offset() const { return (size_t(m) * sizeof(T) + 15) / 16 * 16; }
  __host__ __device__ size_t base_offset() const {
    return (count_offset() + size_t(2 * m + 1) * 4 + 15) / 16 * 16;
  }
  __host__ __device__ size_t bytes() const { return base_offset() + size_t(2 * m + 1) * 8; }
};

/// Writes data[i] (out, when not null) and i (out_indices, when not null) at the next free slot
/// of its bucket; cursors[b] starts at bucket b's first position (the exclusive prefix sum of the
/// bucket counts) and ends at its last plus one, or, for even b where even_down, starts at its
/// last plus one and ends at its first.
template <class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads)
    partition_scatter_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                             const T* __restrict__ splitters, int m, u64* __restrict__ cursors,
                             bool even_down, T* __restrict__ out, int64_t* __restrict__ out_indices) {
  using view_t = tile_items<T, Threads, Loads>;
  extern __shared__ __align__(16) unsigned char scatter_bytes[];
  const scatter_shared<T> shape{m};
  T* const s = reinterpret_cast<T*>(scatter_bytes);
  uint32_t* const tile_count = reinterpret_cast<uint32_t*>(scatter_bytes + shape.count_offset());
  u64* const tile_base = reinterpret_cast<u64*>(scatter_bytes + shape.base_offset());
  const int buckets = 2 * m + 1, lane = threadIdx.x % 32;
  const unsigned lanes_below = (1u << lane) - 1;
  for (int i = threadIdx.x; i < m; i += Threads) s[i] = splitters[i];
  for (int b = threadIdx.x; b < buckets; b += Threads) tile_count[b] = 0;
  __syncthreads();
  const auto split = [&](int i) { return s[i]; };
  const auto put = [&](int64_t at, T x, int64_t i) {
    if (out) out[at] = x;
    if (out_indices) out_indices[at] = i;
  };

  // Tile 0's head, by thread 0 of the block that takes tile 0 (at most 3 elements): a slot each.
  // Where `c` elements of bucket b go: the first of c slots taken from its cursor.
  const auto reserve = [&](int b, u64 c) {
    return even_down && b % 2 == 0 ? atomicAdd(cursors + b, u64(0) - c) - c : atomicAdd(cursors + b, c);
  };
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (int64_t i = 0; i < layout.head; ++i) {
      const int b = core::select_bucket(split, m, data[i]);
      put(int64_t(reserve(b, 1)), data[i], i);
    }
  const int64_t tiles = layout.tiles();
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    view_t view;
    // Cached loads: the counting pass read the same data just before (it stays in L2 when the
    // input fits there).
    view.template load<true>(data, layout, t);
    int bucket[view_t::items];
    uint32_t slot[view_t::items];  // the item's rank among the tile's elements of its bucket
    GSEARCH_UNROLL
    for (int j = 0; j < view_t::items; ++j) {
      const int b = view.valid >> j & 1 ? core::select_bucket(split, m, view.x[j]) : -1;
      const unsigned peers = __match_any_sync(0xffffffffu, b);
      const int leader = __ffs(int(peers)) - 1;
      uint32_t first = 0;
      if (b >= 0 && lane == leader) first = atomicAdd(tile_count + b, uint32_t(__popc(peers)));
      first = __shfl_sync(0xffffffffu, first, leader);
      bucket[j] = b;
      slot[j] = first + uint32_t(__popc(peers & lanes_below));
    }
    __syncthreads();  // the tile's counts are complete
    for (int b = threadIdx.x; b < buckets; b += Threads) {
      const uint32_t c = tile_count[b];
      if (c) {
        tile_base[b] = reserve(b, c);
        tile_count[b] = 0;  // for the next tile, whose counting starts after the barrier below
      }
    }
    __syncthreads();  // the bases are known (and are rewritten only after the next tile's first barrier)
    const int64_t body = layout.head + t * layout.tile;
    GSEARCH_UNROLL
    for (int j = 0; j < view_t::items; ++j)
      if (bucket[j] >= 0) put(int64_t(tile_base[bucket[j]]) + slot[j], view.x[j], view_t::index(body, j));
  }
}

}  // namespace gsearch::cuda_backend
