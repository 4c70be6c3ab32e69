#pragma once
/// \file
/// The pass kernel of the select of many ranks (core/many_select.hpp describes the algorithm;
/// many_select.cu runs it): every element's bin through the plan's tables (core::many_bin), the
/// bins counted in shared memory, and, in a copying pass, every counted element copied out.

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/scan.cuh"  // scan_layout, u64, warp_inclusive_sum
#include "gsearch/core/many_select.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/selection.hpp"           // sample_position
#include "selection/cuda/selection_kernel.cuh"  // tile_items

namespace gsearch::cuda_backend {

/// Elements a warp of a copying pass stages before it moves them to the copy (one global atomic a
/// stage, the stores coalesced): at 2.4% of the data copied, a block-wide scan and two barriers a
/// tile made the copying pass 385 us for a 62 us read of 2^26 float32 (ncu, H200, 0a58b57).
inline constexpr int many_stage = 256;
/// The blocks of 512 a multiprocessor at the least: a copying pass two (64 registers: the general
/// copying kernel, which walks the levels at run time, took 112 once the first level was the
/// cells', and with it one block). A counting pass takes 32-56 as it is (asking for four blocks
/// made the 8-byte kernels spill).
constexpr int many_pass_min_blocks(bool copy) { return copy ? 2 : 0; }  // (0: unasked; 1 took 48 registers)

/// The dynamic shared memory of a pass: the bins' 32-bit counts, the first pass's cell entries
/// where the pass reads the data (core::many_first_bin), the ranges and the tables' 16-bit slots
/// where they fit (else the kernel reads them from global memory, through L1), and in a copying
/// pass each warp's stage (keys, then their 16-bit slots).
template <class T>
struct many_shared_layout {
  int64_t bins, cells, range_entries, table_entries;
  bool in_shared;
  int threads;
  bool copying;
  using range_t = core::many_range<core::radix_bits_t<T>>;
  __host__ __device__ many_shared_layout(const core::many_pass& p, int threads_, bool copying_)
      : bins(p.bins),
        cells(p.mapped ? p.cell_count : 0),
        range_entries(p.range_entries),
        table_entries(p.table_entries),
        in_shared(p.tables_in_shared != 0),
        threads(threads_),
        copying(copying_) {}
  __host__ __device__ int64_t entries_at() const { return bins * 4; }  // 16-byte aligned: 8 bins or more
  __host__ __device__ int64_t ranges_at() const { return entries_at() + (cells * 4 + 15) / 16 * 16; }
  __host__ __device__ int64_t tables_at() const {
    return ranges_at() + (in_shared ? range_entries * int64_t(sizeof(range_t)) : 0);
  }
  __host__ __device__ int64_t stages_at() const {
    return tables_at() + (in_shared ? (table_entries * 2 + 15) / 16 * 16 : 0);
  }
  __host__ __device__ int64_t bytes() const {
    return stages_at() + (copying ? int64_t(threads / 32) * many_stage * int64_t(sizeof(T) + 2) : 0);
  }
};

/// One block, Threads x Items >= s: the s elements of data at core::sample_position, their least
/// and largest radix bits to extent[0, 2), then their cells (core::many_cells over that extent)
/// and each cell's elements of the sample to counts[0, cells): core::many_sample_cells on the
/// device, what core::many_plan places the first pass's bins by.
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    many_sample_cells_kernel(const T* __restrict__ data, int64_t n, int64_t s,
                             core::radix_bits_t<T>* __restrict__ extent, uint32_t* __restrict__ counts) {
  using U = core::radix_bits_t<T>;
  __shared__ U least[Threads / 32], most[Threads / 32];
  __shared__ uint32_t cell_counts[core::many_max_cells];
  U u[Items];
  U lo = U(~U(0)), hi = U(0);
  GSEARCH_UNROLL
  for (int j = 0; j < Items; ++j) {
    const int64_t i = int64_t(j) * Threads + threadIdx.x;
    u[j] = i < s ? core::radix_bits(data[core::sample_position(i, s, n)]) : U(0);
    if (i < s) {
      lo = u[j] < lo ? u[j] : lo;
      hi = u[j] > hi ? u[j] : hi;
    }
  }
  GSEARCH_UNROLL
  for (int o = 16; o > 0; o /= 2) {
    const U a = __shfl_xor_sync(0xffffffffu, lo, o), b = __shfl_xor_sync(0xffffffffu, hi, o);
    lo = a < lo ? a : lo;
    hi = b > hi ? b : hi;
  }
  if (threadIdx.x % 32 == 0) {
    least[threadIdx.x / 32] = lo;
    most[threadIdx.x / 32] = hi;
  }
  for (int c = threadIdx.x; c < core::many_max_cells; c += Threads) cell_counts[c] = 0;
  __syncthreads();
  lo = least[0];
  hi = most[0];
  for (int w = 1; w < Threads / 32; ++w) {
    lo = least[w] < lo ? least[w] : lo;
    hi = most[w] > hi ? most[w] : hi;
  }
  const core::many_cells<U> cells = core::many_cells<U>::over(lo, hi);
  GSEARCH_UNROLL
  for (int j = 0; j < Items; ++j)
    if (int64_t(j) * Threads + threadIdx.x < s) atomicAdd(cell_counts + cells.of(u[j]), 1u);
  __syncthreads();
  if (threadIdx.x == 0) {
    extent[0] = lo;
    extent[1] = hi;
  }
  for (int c = threadIdx.x; c < cells.count; c += Threads) counts[c] = cell_counts[c];
}

/// One pass over src[0, n) (`layout`: its unaligned head and tiles), grid-stride over the tiles:
/// partial[block][b] = the block's elements of bin b (counted in shared memory, 32-bit: the launch
/// gives no block 2^31 elements). `roots`: for a copy, each element's slot where the tables begin (null
/// for the data: slot 0). Where Copy, every element in a bin is appended to `copy`, its slot
/// (bin >> the counted level's bits) to `copy_roots`, through the warp's stage (the plan knows
/// their number, so no capacity is needed). Levels >= 0: p.levels at compile time, the tables in
/// shared memory (core::many_bin's walk unrolled).
template <class T, int Threads, int Loads, bool Copy, int Levels = -1>
__global__ void __launch_bounds__(Threads, many_pass_min_blocks(Copy))
    many_select_pass_kernel(const T* __restrict__ src, const uint16_t* __restrict__ roots,
                            scan_layout<T, Threads, Loads> layout, core::many_pass p,
                            const int16_t* __restrict__ tables,
                            const core::many_range<core::radix_bits_t<T>>* __restrict__ ranges,
                            const uint32_t* __restrict__ entries, uint32_t* __restrict__ partial,
                            T* __restrict__ copy, uint16_t* __restrict__ copy_roots,
                            u64* __restrict__ copied) {
  using view_t = tile_items<T, Threads, Loads>;
  using range_t = core::many_range<core::radix_bits_t<T>>;
  constexpr int warps = Threads / 32;
  extern __shared__ __align__(16) unsigned char many_shared[];
  const many_shared_layout<T> at{p, Threads, Copy};
  uint32_t* const bins = reinterpret_cast<uint32_t*>(many_shared);
  auto* const staged_entries = reinterpret_cast<uint32_t*>(many_shared + at.entries_at());
  auto* const staged_ranges = reinterpret_cast<range_t*>(many_shared + at.ranges_at());
  auto* const staged_tables = reinterpret_cast<int16_t*>(many_shared + at.tables_at());
  // Levels >= 0: the launch staged the tables in shared memory (shared loads, where a pointer to
  // either space took generic ones).
  const int16_t* const table = Levels >= 0 || p.tables_in_shared ? staged_tables : tables;
  const range_t* const range = Levels >= 0 || p.tables_in_shared ? staged_ranges : ranges;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, counted_bits = p.bits[p.levels];
  T* const stage = reinterpret_cast<T*>(many_shared + at.stages_at()) + warp * many_stage;
  uint16_t* const stage_roots =
      reinterpret_cast<uint16_t*>(many_shared + at.stages_at() +
                                  int64_t(warps) * many_stage * int64_t(sizeof(T))) +
      warp * many_stage;
  for (int i = threadIdx.x; i < p.bins; i += Threads) bins[i] = 0;
  if (p.mapped)
    for (int i = threadIdx.x; i < p.cell_count; i += Threads) staged_entries[i] = entries[i];
  if (p.tables_in_shared) {
    for (int i = threadIdx.x; i < p.table_entries; i += Threads) staged_tables[i] = tables[i];
    for (int i = threadIdx.x; i < p.range_entries; i += Threads) staged_ranges[i] = ranges[i];
  }
  __syncthreads();
  // The first pass (Levels == 0) reads the data, every element in the one slot: its bins by the
  // sample's cells.
  const auto bin_of = [&](T x, int64_t i) {
    if constexpr (Levels == 0)
      return core::many_first_bin(p, staged_entries, core::radix_bits(x));
    else
      return core::many_bin<Levels>(p, table, range, staged_entries, core::radix_bits(x),
                                    roots ? int(roots[i]) : 0);
  };
  int staged = 0;  // uniform in the warp
  const auto take = [&](int count) {  // `count` places in the copy, from lane 0
    u64 at = 0;
    if (lane == 0) at = atomicAdd(copied, u64(count));
    return int64_t(__shfl_sync(0xffffffffu, at, 0));
  };
  const auto flush = [&] {
    __syncwarp();
    const int64_t at = take(staged);
    for (int i = lane; i < staged; i += 32) {
      copy[at + i] = stage[i];
      copy_roots[at + i] = stage_roots[i];
    }
    __syncwarp();
    staged = 0;
  };

  // Tile 0's head (fewer than one vector), by one thread.
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (int64_t i = 0; i < layout.head; ++i) {
      const int b = bin_of(src[i], i);
      if (b < 0) continue;
      atomicAdd(bins + b, 1u);
      if (Copy) {
        const u64 at = atomicAdd(copied, 1ull);
        copy[at] = src[i];
        copy_roots[at] = uint16_t(b >> counted_bits);
      }
    }
  const int64_t tiles = layout.tiles();
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    view_t view;
    view.load(src, layout, t);
    const int64_t body = layout.head + t * layout.tile;
    uint32_t counted = 0;  // bit j: item j is in a bin
    uint16_t slot[Copy ? view_t::items : 1];  // the counted items' slots, for the copy
    GSEARCH_UNROLL
    for (int j = 0; j < view_t::items; ++j) {
      const int b = (view.valid >> j & 1) ? bin_of(view.x[j], view_t::index(body, j)) : -1;
      // A warp whose lanes share the bin (a constant input, a sorted one) adds 32 by one atomic;
      // otherwise a lane an atomic (a thread's run of equal bins, merged in a branch an item, took
      // 11 of the first pass's 57 instructions a warp of elements).
      const int first = __shfl_sync(0xffffffffu, b, 0);
      if (__all_sync(0xffffffffu, b == first)) {
        if (lane == 0 && first >= 0) atomicAdd(bins + first, 32u);
      } else if (b >= 0) {
        atomicAdd(bins + b, 1u);
      }
      counted |= uint32_t(b >= 0) << j;
      if constexpr (Copy) slot[j] = uint16_t(b >> counted_bits);
    }
    if constexpr (Copy) {
      const int mine = __popc(counted);
      const int inclusive = warp_inclusive_sum(mine);
      const int total = __shfl_sync(0xffffffffu, inclusive, 31);
      if (total == 0) continue;  // uniform in the warp
      if (staged + total > many_stage) flush();
      if (total > many_stage) {  // a dense tile: straight to the copy
        int64_t at = take(total) + inclusive - mine;
        GSEARCH_UNROLL
        for (int j = 0; j < view_t::items; ++j)
          if (counted >> j & 1) {
            copy[at] = view.x[j];
            copy_roots[at] = slot[j];
            ++at;
          }
      } else {
        int at = staged + inclusive - mine;
        GSEARCH_UNROLL
        for (int j = 0; j < view_t::items; ++j)
          if (counted >> j & 1) {
            stage[at] = view.x[j];
            stage_roots[at] = slot[j];
            ++at;
          }
        staged += total;
      }
    }
  }
  if (Copy && staged > 0) flush();
  __syncthreads();
  // The block's counts to its row of `partial` (many_sum_kernel adds the rows): a global atomic a
  // bin and a block was some 6.5 million atomics a pass of 2^14 bins on 396 blocks.
  uint32_t* const row = partial + int64_t(blockIdx.x) * p.bins;
  for (int b = threadIdx.x; b < p.bins; b += Threads) row[b] = bins[b];
}

/// hist[b] += the rows' counts of bin b (partial: rows x bins, a row a block of the pass): a thread
/// a bin, `slices` slices of the rows (blockIdx.x / the bins' blocks), each added by one atomic.
__global__ void many_sum_kernel(const uint32_t* __restrict__ partial, int rows, int bins, int slices,
                                u64* __restrict__ hist) {
  const int bin_blocks = (bins + int(blockDim.x) - 1) / int(blockDim.x);
  const int b = int(blockIdx.x) % bin_blocks * int(blockDim.x) + int(threadIdx.x);
  const int slice = int(blockIdx.x) / bin_blocks;
  if (b >= bins) return;
  const int per = (rows + slices - 1) / slices, first = slice * per;
  const int last = first + per < rows ? first + per : rows;
  u64 sum = 0;
#pragma unroll 8
  for (int r = first; r < last; ++r) sum += partial[int64_t(r) * bins + b];
  if (sum) atomicAdd(hist + b, sum);
}

}  // namespace gsearch::cuda_backend
