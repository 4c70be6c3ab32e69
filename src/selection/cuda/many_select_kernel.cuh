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
#include "selection/cuda/selection_kernel.cuh"  // tile_items

namespace gsearch::cuda_backend {

/// The dynamic shared memory of a pass: the bins' 32-bit counts, then the tables' 16-bit slots
/// where they fit (else the kernel reads them from global memory, through L1).
inline int64_t many_pass_shared_bytes(const core::many_pass& p) {
  return int64_t(p.bins) * 4 + (p.tables_in_shared ? (int64_t(p.table_entries) * 2 + 15) / 16 * 16 : 0);
}

/// One pass over src[0, n) (`layout`: its unaligned head and tiles), grid-stride over the tiles:
/// hist[b] += the elements of bin b (the block's counts in shared memory, 32-bit: the launch gives
/// no block 2^31 elements). `roots`: for a copy, each element's slot where the tables begin (null
/// for the data: slot 0). Where Copy, every element in a bin is appended to `copy`, its slot
/// (bin >> the counted digit's bits) to `copy_roots` (the plan knows their number, so no capacity
/// is needed: a tile's elements take their places from a block scan and one global atomic). A
/// thread counts its items' equal bins in a row with one atomic, so a constant input or a sorted
/// one costs an atomic a thread a tile, not one an element.
template <class T, int Threads, int Loads, bool Copy>
__global__ void __launch_bounds__(Threads)
    many_select_pass_kernel(const T* __restrict__ src, const uint16_t* __restrict__ roots,
                            scan_layout<T, Threads, Loads> layout, core::many_pass p,
                            const int16_t* __restrict__ tables, u64* __restrict__ hist, T* __restrict__ copy,
                            uint16_t* __restrict__ copy_roots, u64* __restrict__ copied) {
  using view_t = tile_items<T, Threads, Loads>;
  constexpr int warps = Threads / 32;
  extern __shared__ __align__(16) uint32_t many_shared[];
  uint32_t* const bins = many_shared;
  int16_t* const staged = reinterpret_cast<int16_t*>(many_shared + p.bins);
  const int16_t* const table = p.tables_in_shared ? staged : tables;
  __shared__ int warp_copies[2][warps];  // alternate tiles: no barrier before rewriting them
  __shared__ u64 tile_base[2];
  for (int i = threadIdx.x; i < p.bins; i += Threads) bins[i] = 0;
  if (p.tables_in_shared)
    for (int i = threadIdx.x; i < p.table_entries; i += Threads) staged[i] = tables[i];
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, counted_bits = p.digit[p.levels].bits;
  const auto bin_of = [&](T x, int64_t i) {
    return core::many_bin(p, table, core::radix_bits(x), roots ? int(roots[i]) : 0);
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
  int parity = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, parity ^= 1) {
    view_t view;
    view.load(src, layout, t);
    const int64_t body = layout.head + t * layout.tile;
    uint32_t counted = 0;                     // bit j: item j is in a bin
    uint16_t slot[Copy ? view_t::items : 1];  // the counted items' slots, for the copy
    int run_bin = -1;
    uint32_t run = 0;
    GSEARCH_UNROLL
    for (int j = 0; j < view_t::items; ++j) {
      const int b = (view.valid >> j & 1) ? bin_of(view.x[j], view_t::index(body, j)) : -1;
      if (b != run_bin) {
        if (run) atomicAdd(bins + run_bin, run);
        run_bin = b;
        run = 0;
      }
      run += b >= 0;
      counted |= uint32_t(b >= 0) << j;
      if constexpr (Copy) slot[j] = uint16_t(b >> counted_bits);
    }
    if (run) atomicAdd(bins + run_bin, run);
    if constexpr (Copy) {
      const int mine = __popc(counted);
      const int inclusive = warp_inclusive_sum(mine);
      if (lane == 31) warp_copies[parity][warp] = inclusive;
      __syncthreads();
      if (threadIdx.x == 0) {
        int total = 0;
        for (int w = 0; w < warps; ++w) total += warp_copies[parity][w];
        tile_base[parity] = total > 0 ? atomicAdd(copied, u64(total)) : 0;
      }
      __syncthreads();
      if (counted) {
        int64_t at = int64_t(tile_base[parity]) + inclusive - mine;
        for (int w = 0; w < warp; ++w) at += warp_copies[parity][w];
        GSEARCH_UNROLL
        for (int j = 0; j < view_t::items; ++j)
          if (counted >> j & 1) {
            copy[at] = view.x[j];
            copy_roots[at] = slot[j];
            ++at;
          }
      }
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < p.bins; b += Threads)
    if (bins[b]) atomicAdd(hist + b, u64(bins[b]));
}

}  // namespace gsearch::cuda_backend
