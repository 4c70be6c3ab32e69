#pragma once
/// \file
/// The unsorted-search kernels: the tuned scan (16-byte loads, several in flight per thread,
/// a grid sized to the chip, early exit), the per-tile match counts that find_random and
/// find_all build on, the ordered write of find_all, the seeded pick of find_random, and
/// seeds/001's study strategies. The match itself is core::match (core/find.hpp), shared with
/// the CPU backend. Instantiated in src/cuda/find.cu.

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "gsearch/core/find.hpp"
#include "cuda/check.cuh"
#include "cuda/scan.cuh"
#include "find/tuning.hpp"

namespace gsearch::cuda_backend {

/// "No match yet" in the result word of first / any: all bits set, which is -1 as an int64 (the
/// answer when nothing matches) and the largest value for atomicMin on its unsigned bits, so the
/// result is initialised by one memset and needs no fix-up after the scan.
inline constexpr u64 no_match = ~0ull;

/// What one thread sees of a tile: its Loads x per_vector elements (vector u of thread t is
/// vector u * Threads + t of the tile, so each load instruction of a warp reads 512 contiguous
/// bytes), as match flags and element indices. A full tile uses 16-byte loads and no bounds
/// checks; tile 0's head and the last, partial tile use checked scalar loads.
template <class T, int Threads, int Loads>
struct thread_view {
  static constexpr int per_vector = 16 / int(sizeof(T));
  static constexpr int items = Loads * per_vector;
  uint32_t flags = 0;  // bit u * per_vector + j: element j of vector u matches (items <= 32)

  /// Element index of item bit b (b = u * per_vector + j) for a tile body starting at `body`.
  __device__ static int64_t index(int64_t body, int b) {
    return body + (int64_t(b / per_vector) * Threads + threadIdx.x) * per_vector + b % per_vector;
  }

  __device__ void load(const T* __restrict__ data, const scan_layout<T, Threads, Loads>& layout,
                       int64_t t, const core::match<T>& m) {
    static_assert(items <= 32, "flags hold at most 32 items");
    const int64_t body = layout.head + t * layout.tile;
    if (body + layout.tile <= layout.n) {
      const uint4* v = reinterpret_cast<const uint4*>(data + body);
      uint4 raw[Loads];
      GSEARCH_UNROLL
      for (int u = 0; u < Loads; ++u) raw[u] = __ldcs(v + u * Threads + threadIdx.x);  // streamed once
      GSEARCH_UNROLL
      for (int u = 0; u < Loads; ++u) {
        T x[per_vector];
        memcpy(x, &raw[u], 16);
        GSEARCH_UNROLL
        for (int j = 0; j < per_vector; ++j) flags |= uint32_t(m(x[j])) << (u * per_vector + j);
      }
    } else {
      GSEARCH_UNROLL
      for (int b = 0; b < items; ++b) {
        const int64_t i = index(body, b);
        if (i < layout.n) flags |= uint32_t(m(data[i])) << b;
      }
    }
  }
  /// The lowest matching index this thread saw (flags != 0); vectors are interleaved across
  /// threads, so the lowest bit is the lowest index.
  __device__ int64_t first(int64_t body) const { return index(body, __ffs(int(flags)) - 1); }
};

/// Matches among tile 0's head elements [0, head), read by thread 0 (at most 3).
template <class T>
__device__ uint32_t head_flags(const T* __restrict__ data, int64_t head, const core::match<T>& m) {
  uint32_t f = 0;
  if (threadIdx.x == 0)
    for (int64_t i = 0; i < head; ++i) f |= uint32_t(m(data[i])) << i;
  return f;
}

/// How scan_kernel learns of hits found by other blocks (first / any).
enum class hit_check {
  /// Thread 0 reads the global word at the start of each tile, the block meets at a barrier and
  /// tests it: a block sees every hit published before its tile starts.
  barrier,
  /// Thread 0 reads it along with the tile's loads and leaves it in shared memory (relaxed
  /// atomics, no barrier) for the next tile's test: no stall, but a hit is seen a tile late.
  lagged,
};

/// first / any: tiles in increasing order per block (grid-stride), each first checking the
/// best hit so far: a block stops once a hit lies before its next tile (first) or once any hit
/// is known (any). Hits go to *result by atomicMin on the index's unsigned bits. One read of
/// that word per block and tile, by thread 0, shared through shared memory: the word lives in
/// one L2 slice, and a read per warp and tile made find_first 5% slower than count on the H100
/// (docs/perf-notes.md). Check says how the block learns of it.
/// count: every tile, one atomicAdd per warp at the end.
template <find_mode Mode, class T, int Threads, int Loads, hit_check Check = hit_check::barrier>
__global__ void __launch_bounds__(Threads)
    scan_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout, core::match<T> m,
                u64* __restrict__ result) {
  static_assert(Mode == find_mode::first || Mode == find_mode::any || Mode == find_mode::count);
  constexpr bool searching = Mode != find_mode::count;
  const int64_t tiles = layout.tiles();
  u64 matches = 0;
  // barrier: two words, written on alternate tiles, so thread 0 never overwrites the one a slow
  // thread is still reading. lagged: one word, relaxed atomics (a stale value is a larger one,
  // which only means scanning one more tile).
  __shared__ u64 best_words[2];
  cuda::atomic_ref<u64, cuda::thread_scope_block> lagged_best(best_words[0]);
  if constexpr (searching && Check == hit_check::lagged) {
    if (threadIdx.x == 0) lagged_best.store(no_match, cuda::memory_order_relaxed);
    __syncthreads();
  }
  int parity = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, parity ^= 1) {
    u64 global_best = no_match, best = no_match;
    if constexpr (searching && Check == hit_check::barrier) {
      if (threadIdx.x == 0) best_words[parity] = *const_cast<volatile u64*>(result);
      __syncthreads();
      best = best_words[parity];
    } else if constexpr (searching) {
      best = lagged_best.load(cuda::memory_order_relaxed);
      // Issued before the tile's loads, first used after them: it costs no stall.
      if (threadIdx.x == 0) global_best = *const_cast<volatile u64*>(result);
    }
    // Uniform across the block with a barrier; with lagged, threads may see different values and
    // leave at different tiles (nothing below synchronises the block then).
    if constexpr (Mode == find_mode::any) {
      if (best != no_match) return;
    } else if constexpr (Mode == find_mode::first) {
      if (best < u64(layout.tile_begin(t))) return;
    }
    thread_view<T, Threads, Loads> view;
    view.load(data, layout, t, m);
    const uint32_t head = t == 0 ? head_flags(data, layout.head, m) : 0;
    if constexpr (Mode == find_mode::count) {
      matches += __popc(view.flags) + __popc(head);
    } else {
      if (head) atomicMin(result, u64(__ffs(int(head)) - 1));
      else if (view.flags) atomicMin(result, u64(view.first(layout.head + t * layout.tile)));
      if (Check == hit_check::lagged && threadIdx.x == 0 && global_best < best)
        lagged_best.store(global_best, cuda::memory_order_relaxed);
    }
  }
  if constexpr (Mode == find_mode::count) {
    GSEARCH_UNROLL
    for (int o = 16; o > 0; o /= 2) matches += __shfl_xor_sync(0xffffffffu, matches, o);
    if (threadIdx.x % 32 == 0 && matches) atomicAdd(result, matches);
  }
}

/// Matches a tile may keep in tile_counts_kernel's side list (find_all's sparse tiles).
inline constexpr int kept_per_tile = 4;

/// The number of matches in each tile (counts zeroed beforehand), for find_random and find_all;
/// with `kept` (find_all), the indices of the matches of every tile with at most kept_per_tile
/// of them, in any order, at kept[t * kept_per_tile ...], so that the second pass need not read
/// those tiles again. No barrier: each warp adds its count to the tile's with one atomicAdd,
/// whose old value numbers the warp's kept slots.
template <class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads)
    tile_counts_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                       core::match<T> m, u64* __restrict__ counts, int64_t* __restrict__ kept) {
  const int lane = threadIdx.x % 32;
  const int64_t tiles = layout.tiles();
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    thread_view<T, Threads, Loads> view;
    view.load(data, layout, t, m);
    const uint32_t head = t == 0 ? head_flags(data, layout.head, m) : 0;
    const int mine = __popc(view.flags) + __popc(head);
    int inclusive = mine;  // the warp's inclusive scan of the per-thread counts
    GSEARCH_UNROLL
    for (int o = 1; o < 32; o *= 2) {
      const int y = __shfl_up_sync(0xffffffffu, inclusive, o);
      if (lane >= o) inclusive += y;
    }
    const int warp_total = __shfl_sync(0xffffffffu, inclusive, 31);
    if (warp_total == 0) continue;
    u64 base = 0;
    if (lane == 31) base = atomicAdd(counts + t, u64(warp_total));
    base = __shfl_sync(0xffffffffu, base, 31);
    if (kept && base < kept_per_tile && mine > 0) {
      u64 slot = base + u64(inclusive - mine);
      for (uint32_t f = head; f && slot < kept_per_tile; f &= f - 1)
        kept[t * kept_per_tile + int64_t(slot++)] = __ffs(int(f)) - 1;
      for (uint32_t f = view.flags; f && slot < kept_per_tile; f &= f - 1)
        kept[t * kept_per_tile + int64_t(slot++)] =
            view.index(layout.head + t * layout.tile, __ffs(int(f)) - 1);
    }
  }
}

/// Calls on_match(i, rank) for every match i of tile t, rank counting the matches before i in
/// the tile. Block-wide (every thread must call it), one pass over the tile: thread k reads
/// the Loads 16-byte vectors k * Loads ... (its elements contiguous, so its matches are in
/// order), and an exclusive block scan of the per-thread counts gives each its first rank.
/// `warp_totals`: Threads / 32 ints.
template <class T, int Threads, int Loads, class OnMatch>
__device__ void tile_matches_in_order(const T* __restrict__ data,
                                      const scan_layout<T, Threads, Loads>& layout, int64_t t,
                                      const core::match<T>& m, int* warp_totals, OnMatch on_match) {
  constexpr int per_vector = 16 / int(sizeof(T)), items = Loads * per_vector;
  const int64_t body = layout.head + t * layout.tile;
  const int64_t first = body + int64_t(threadIdx.x) * items;  // this thread's first element
  T x[items];
  uint32_t flags = 0;
  if (body + layout.tile <= layout.n) {
    const uint4* v = reinterpret_cast<const uint4*>(data + first);
    uint4 raw[Loads];
    GSEARCH_UNROLL
    for (int u = 0; u < Loads; ++u) raw[u] = v[u];  // cached: the thread's 64 bytes, 4 loads
    GSEARCH_UNROLL
    for (int u = 0; u < Loads; ++u) memcpy(x + u * per_vector, &raw[u], 16);
    GSEARCH_UNROLL
    for (int j = 0; j < items; ++j) flags |= uint32_t(m(x[j])) << j;
  } else {
    GSEARCH_UNROLL
    for (int j = 0; j < items; ++j)
      if (first + j < layout.n) flags |= uint32_t(m(data[first + j])) << j;
  }
  const uint32_t head = t == 0 ? head_flags(data, layout.head, m) : 0;  // thread 0's, before all
  // Exclusive scan of the per-thread counts: in the warp by shuffles, then over the warps.
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int mine = __popc(flags) + __popc(head);
  int inclusive = mine;
  GSEARCH_UNROLL
  for (int o = 1; o < 32; o *= 2) {
    const int y = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o) inclusive += y;
  }
  __syncthreads();  // warp_totals of a previous call have been read
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  int rank = inclusive - mine;
  for (int w = 0; w < warp; ++w) rank += warp_totals[w];
  for (uint32_t f = head; f; f &= f - 1) on_match(int64_t(__ffs(int(f)) - 1), rank++);
  for (uint32_t f = flags; f; f &= f - 1) on_match(first + __ffs(int(f)) - 1, rank++);
}

/// Tiles per chunk of find_all's second pass.
inline constexpr int tiles_per_chunk = 32;

/// find_all's second pass, a chunk of 32 consecutive tiles per block (grid-stride). Thread j < 32
/// reads tile j's count: a tile whose matches were all kept, it writes itself (their ranks among
/// at most kept_per_tile, so in order); the tiles with more are read again by the whole block,
/// one after the other, their matches ranked in order (tile_matches_in_order), staged in shared
/// memory as offsets into the tile, and written out coalesced.
template <class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads, 4)  // at least 4 blocks per SM: each reads tiles in turn
    write_matches_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                         core::match<T> m, const u64* __restrict__ counts,
                         const int64_t* __restrict__ ends, const int64_t* __restrict__ kept,
                         int64_t* __restrict__ out) {
  static_assert(Threads >= tiles_per_chunk);
  constexpr int tile_elements = Threads * Loads * (16 / int(sizeof(T)));
  __shared__ int warp_totals[Threads / 32];
  __shared__ int64_t dense[tiles_per_chunk];
  __shared__ int dense_count;
  __shared__ uint32_t staged[tile_elements + 4];  // offsets in the tile (+ tile 0's head)
  const int64_t tiles = layout.tiles();
  for (int64_t chunk = blockIdx.x; chunk * tiles_per_chunk < tiles; chunk += gridDim.x) {
    if (threadIdx.x == 0) dense_count = 0;
    __syncthreads();
    if (threadIdx.x < tiles_per_chunk) {
      const int64_t t = chunk * tiles_per_chunk + threadIdx.x;
      const u64 c = t < tiles ? counts[t] : 0;
      if (c > kept_per_tile) {
        dense[atomicAdd(&dense_count, 1)] = t;
      } else if (c > 0) {
        const int64_t* k = kept + t * kept_per_tile;
        int64_t* dst = out + ends[t] - int64_t(c);
        for (u64 a = 0; a < c; ++a) {
          int rank = 0;
          for (u64 b = 0; b < c; ++b) rank += k[b] < k[a];
          dst[rank] = k[a];
        }
      }
    }
    __syncthreads();
    for (int d = 0; d < dense_count; ++d) {
      const int64_t t = dense[d], begin = layout.tile_begin(t);
      tile_matches_in_order(data, layout, t, m, warp_totals,
                            [&](int64_t i, int rank) { staged[rank] = uint32_t(i - begin); });
      __syncthreads();
      const int c = int(counts[t]);
      int64_t* dst = out + ends[t] - c;
      for (int k = threadIdx.x; k < c; k += Threads) dst[k] = begin + staged[k];
      __syncthreads();  // staged is read before the next tile overwrites it
    }
  }
}

/// find_random's pick, one block: draws r uniform in [0, total) from the seed (core::random_below,
/// as the CPU does), finds the tile holding the r-th match by binary search of the tiles' ends
/// (the inclusive prefix sums of their counts), and the match within it.
template <class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads)
    pick_random_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                       core::match<T> m, const u64* __restrict__ counts,
                       const int64_t* __restrict__ ends, uint64_t seed, int64_t* __restrict__ result) {
  __shared__ int warp_totals[Threads / 32];
  const int64_t tiles = layout.tiles();
  const int64_t total = tiles == 0 ? 0 : ends[tiles - 1];
  if (total == 0) {
    if (threadIdx.x == 0) *result = -1;
    return;
  }
  const int64_t r = core::random_below(seed, total);
  int64_t lo = -1, hi = tiles - 1;  // the first tile with ends[t] > r (it holds the r-th match)
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (ends[mid] > r ? hi : lo) = mid;
  }
  const int wanted = int(r - (ends[hi] - int64_t(counts[hi])));
  tile_matches_in_order(data, layout, hi, m, warp_totals, [&](int64_t i, int rank) {
    if (rank == wanted) *result = i;
  });
}

/// seeds/001's kernels, for study: thread t of `threads` reads its k elements
/// (core::strategy_element) with scalar loads and no early exit. Unrolled issues 8 loads before
/// comparing any. first / any: atomicMin of the thread's lowest hit; count: a warp sum, then
/// atomicAdd.
template <find_strategy S, class T>
__global__ void __launch_bounds__(study_threads)
    study_kernel(const T* __restrict__ data, int64_t n, int64_t k, int64_t threads,
                 core::match<T> m, bool count, u64* __restrict__ result) {
  const int64_t t = int64_t(blockIdx.x) * study_threads + threadIdx.x;
  u64 lowest = no_match, matches = 0;
  if (t < threads) {
    constexpr int group = S == find_strategy::unrolled ? 8 : 1;
    for (int64_t e0 = 0; e0 < k; e0 += group) {
      T x[group];
      int64_t idx[group];
      GSEARCH_UNROLL
      for (int j = 0; j < group; ++j) {
        idx[j] = core::strategy_element(S, t, e0 + j, k, threads);
        if (e0 + j < k && idx[j] < n) x[j] = data[idx[j]];
        else idx[j] = -1;
      }
      GSEARCH_UNROLL
      for (int j = 0; j < group; ++j)
        if (idx[j] >= 0 && m(x[j])) {
          ++matches;
          if (u64(idx[j]) < lowest) lowest = u64(idx[j]);
        }
    }
  }
  if (count) {
    GSEARCH_UNROLL
    for (int o = 16; o > 0; o /= 2) matches += __shfl_xor_sync(0xffffffffu, matches, o);
    if (threadIdx.x % 32 == 0 && matches) atomicAdd(result, matches);
  } else if (lowest != no_match) {
    atomicMin(result, lowest);
  }
}

}  // namespace gsearch::cuda_backend
