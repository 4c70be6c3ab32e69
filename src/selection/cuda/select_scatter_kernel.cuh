#pragma once
/// \file
/// partition / argpartition's scatter: every element to its bucket's range of the output, the
/// buckets being those of the distinct kth values (core::select_bucket: the elements strictly
/// between two of them, or equal to one), laid out in bucket order from the counts of a bucket
/// pass (selection_kernel.cuh) and their exclusive prefix sums (`cursors`, each bucket's next free
/// slot). The order within a bucket is free (numpy's partition promises none), so a tile needs no
/// look-back: it ranks its elements within their buckets by shared atomics, reserves each
/// bucket's range with one global atomic on its cursor, sorts itself by bucket in shared memory
/// and writes each bucket's run with consecutive threads.
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

/// The shared memory of partition_scatter_kernel for m splitters and tiles of `tile` elements:
/// the splitters; per bucket the tile's count, then its first place in the sorted tile (2m + 2
/// ints, the scan's total last), and its base in the output; the tile sorted by bucket: the
/// elements, each one's bucket and its place in the tile (16-bit: a tile holds at most 16,384).
template <class T>
struct scatter_shared {
  int m, tile;  // tile: 0 where the scatter does not sort its tiles
  static constexpr size_t up16(size_t b) { return (b + 15) / 16 * 16; }
  __host__ __device__ size_t count_offset() const { return up16(size_t(m) * sizeof(T)); }
  __host__ __device__ size_t start_offset() const { return count_offset() + up16(size_t(2 * m + 1) * 4); }
  __host__ __device__ size_t base_offset() const { return start_offset() + up16(size_t(2 * m + 2) * 4); }
  __host__ __device__ size_t sorted_offset() const { return base_offset() + up16(size_t(2 * m + 1) * 8); }
  __host__ __device__ size_t bucket_offset() const {
    return sorted_offset() + up16(size_t(tile) * sizeof(T));
  }
  __host__ __device__ size_t place_offset() const { return bucket_offset() + up16(size_t(tile) * 2); }
  __host__ __device__ size_t bytes() const { return place_offset() + up16(size_t(tile) * 2); }
};

/// Writes data[i] (out, when not null) and i (out_indices, when not null) at the next free slot
/// of its bucket; cursors[b] starts at bucket b's first position (the exclusive prefix sum of the
/// bucket counts) and ends at its last plus one, or, for even b where even_down, starts at its
/// last plus one and ends at its first.
///
/// Sorted (more than scatter_few_buckets buckets): each tile is sorted by bucket in shared memory before
/// it is written (a counting sort: ranks from shared atomics, block_exclusive_scan of the tile's
/// counts), so that consecutive threads write consecutive places of a bucket's run. Written
/// straight from the registers, a warp's stores of 100 kth's 201 buckets landed on some 30 runs
/// an instruction: sorting the tile took partition of 100 kth of 2^26 from 1.55-2.17 to 0.94-1.48
/// ms on random inputs (H200, docs/perf-notes.md). One or two kth (3-5 buckets, a few runs a warp)
/// write from the registers: the sort cost them 5% there. The ranks: a warp's lanes of one bucket
/// by one atomic (__match_any_sync) for up to scatter_few_buckets buckets, whose atomics would otherwise
/// queue on 2-5 addresses; else an atomic an element.
inline constexpr int scatter_few_buckets = 8;

template <class T, int Threads, int Loads, bool Sorted>
__global__ void __launch_bounds__(Threads)
    partition_scatter_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                             const T* __restrict__ splitters, int m, u64* __restrict__ cursors,
                             bool even_down, T* __restrict__ out, int64_t* __restrict__ out_indices) {
  using view_t = tile_items<T, Threads, Loads>;
  static_assert(view_t::items * Threads <= 65536, "a tile's places are 16-bit");
  extern __shared__ __align__(16) unsigned char scatter_bytes[];
  const scatter_shared<T> shape{m, int(layout.tile)};
  T* const s = reinterpret_cast<T*>(scatter_bytes);
  int* const tile_count = reinterpret_cast<int*>(scatter_bytes + shape.count_offset());
  int* const tile_start = reinterpret_cast<int*>(scatter_bytes + shape.start_offset());
  u64* const tile_base = reinterpret_cast<u64*>(scatter_bytes + shape.base_offset());
  T* const sorted = reinterpret_cast<T*>(scatter_bytes + shape.sorted_offset());
  uint16_t* const sorted_bucket = reinterpret_cast<uint16_t*>(scatter_bytes + shape.bucket_offset());
  uint16_t* const sorted_place = reinterpret_cast<uint16_t*>(scatter_bytes + shape.place_offset());
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

  // Tile 0's head, by thread 0 of the block that takes tile 0 (fewer than one 16-byte vector): a slot each.
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
    // Cached loads: where a bucket pass counted (partition's general path) it read the same data
    // just before, and it stays in L2 when the input fits there.
    view.template load<true>(data, layout, t);
    // Each valid item's bucket (low 16 bits) and its rank among the tile's elements of that
    // bucket (high 16 bits): one register an item.
    uint32_t where[view_t::items];
    GSEARCH_UNROLL
    for (int j = 0; j < view_t::items; ++j) {
      const int b = view.valid >> j & 1 ? core::select_bucket(split, m, view.x[j]) : -1;
      int rank = 0;
      if (!Sorted) {  // buckets <= scatter_few_buckets
        const unsigned peers = __match_any_sync(0xffffffffu, b);
        const int leader = __ffs(int(peers)) - 1;
        int first = 0;
        if (b >= 0 && lane == leader) first = atomicAdd(tile_count + b, __popc(peers));
        rank = __shfl_sync(0xffffffffu, first, leader) + __popc(peers & lanes_below);
      } else if (b >= 0) {
        rank = atomicAdd(tile_count + b, 1);
      }
      where[j] = uint32_t(rank) << 16 | uint32_t(b & 0xffff);
    }
    __syncthreads();  // the tile's counts are complete
    for (int b = threadIdx.x; b < buckets; b += Threads) {
      const int c = tile_count[b];
      if (Sorted) tile_start[b] = c;
      if (c) tile_base[b] = reserve(b, u64(c));
      tile_count[b] = 0;  // for the next tile, whose counting starts after this tile's last barrier
    }
    __syncthreads();
    const int64_t body = layout.head + t * layout.tile;
    if constexpr (!Sorted) {
      GSEARCH_UNROLL
      for (int j = 0; j < view_t::items; ++j)
        if (view.valid >> j & 1)
          put(int64_t(tile_base[where[j] & 0xffff]) + int(where[j] >> 16), view.x[j], view_t::index(body, j));
    } else {
      block_exclusive_scan<Threads>(tile_start, buckets);  // tile_start[buckets]: the tile's elements
      __syncthreads();
      GSEARCH_UNROLL
      for (int j = 0; j < view_t::items; ++j)
        if (view.valid >> j & 1) {
          const int at = tile_start[where[j] & 0xffff] + int(where[j] >> 16);
          sorted[at] = view.x[j];
          sorted_bucket[at] = uint16_t(where[j]);
          sorted_place[at] = uint16_t(view_t::index(0, j));
        }
      __syncthreads();
      for (int at = threadIdx.x; at < tile_start[buckets]; at += Threads) {
        const int b = sorted_bucket[at];
        put(int64_t(tile_base[b]) + (at - tile_start[b]), sorted[at], body + sorted_place[at]);
      }
    }
    __syncthreads();  // the sorted tile, its starts and bases are read before the next tile's
  }
}

}  // namespace gsearch::cuda_backend
