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
#include "gsearch/cuda/check.cuh"
#include "gsearch/cuda/tuning.hpp"

namespace gsearch::cuda_backend {

/// "No match yet" in the result word of first / any: all bits set, which is -1 as an int64 (the
/// answer when nothing matches) and the largest value for atomicMin on its unsigned bits, so the
/// result is initialised by one memset and needs no fix-up after the scan.
using u64 = unsigned long long;  // the type of CUDA's 64-bit atomics
inline constexpr u64 no_match = ~0ull;

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

/// Sum of v over the block (every thread gets it). `shared` holds Threads / 32 values.
template <int Threads, class V>
__device__ V block_sum(V v, V* shared) {
  GSEARCH_UNROLL
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();  // shared may still be read by a previous call
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  V total = 0;
  GSEARCH_UNROLL
  for (int w = 0; w < Threads / 32; ++w) total += shared[w];
  return total;
}

/// first / any: tiles in increasing order per block (grid-stride), each first checking the
/// best hit so far: a block stops once a hit lies before its next tile (first) or once any hit
/// is known (any). Hits go to *result by atomicMin on the index's unsigned bits.
/// count: every tile, one atomicAdd per warp at the end.
template <find_mode Mode, class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads)
    scan_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout, core::match<T> m,
                u64* __restrict__ result) {
  static_assert(Mode == find_mode::first || Mode == find_mode::any || Mode == find_mode::count);
  const int64_t tiles = layout.tiles();
  u64 matches = 0;
  // The best hit so far, as this block knows it: thread 0 reads the global word once per tile,
  // along with the tile's loads, and leaves it in shared memory, where every thread checks it
  // before its next tile. One read per block and tile rather than one per warp: the word lives
  // in one L2 slice, and a read per warp and tile made find_first 5% slower than count on the
  // H100 (docs/perf-notes.md). It is read and written with relaxed atomics and no barrier: a
  // stale value is a larger one, which only means scanning one more tile. A block may read a
  // tile or two past a published hit.
  __shared__ u64 block_best_word;
  cuda::atomic_ref<u64, cuda::thread_scope_block> block_best(block_best_word);
  if constexpr (Mode != find_mode::count) {
    if (threadIdx.x == 0) block_best.store(no_match, cuda::memory_order_relaxed);
    __syncthreads();
  }
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    u64 global_best = no_match, best = no_match;
    if constexpr (Mode != find_mode::count) {
      // Threads may see different values, so some leave earlier than others: nothing below
      // synchronises the block.
      best = block_best.load(cuda::memory_order_relaxed);
      if (Mode == find_mode::any ? best != no_match : best < u64(layout.tile_begin(t))) return;
      // Issued before the tile's loads, first used after them: it costs no stall.
      if (threadIdx.x == 0) global_best = *const_cast<volatile u64*>(result);
    }
    thread_view<T, Threads, Loads> view;
    view.load(data, layout, t, m);
    const uint32_t head = t == 0 ? head_flags(data, layout.head, m) : 0;
    if constexpr (Mode == find_mode::count) {
      matches += __popc(view.flags) + __popc(head);
    } else {
      if (head) atomicMin(result, u64(__ffs(int(head)) - 1));
      else if (view.flags) atomicMin(result, u64(view.first(layout.head + t * layout.tile)));
      if (threadIdx.x == 0 && global_best < best) block_best.store(global_best, cuda::memory_order_relaxed);
    }
  }
  if constexpr (Mode == find_mode::count) {
    GSEARCH_UNROLL
    for (int o = 16; o > 0; o /= 2) matches += __shfl_xor_sync(0xffffffffu, matches, o);
    if (threadIdx.x % 32 == 0 && matches) atomicAdd(result, matches);
  }
}

/// The number of matches in each tile, for find_random and find_all.
template <class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads)
    tile_counts_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                       core::match<T> m, int64_t* __restrict__ counts) {
  __shared__ int warp_sums[Threads / 32];
  const int64_t tiles = layout.tiles();
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    thread_view<T, Threads, Loads> view;
    view.load(data, layout, t, m);
    const uint32_t head = t == 0 ? head_flags(data, layout.head, m) : 0;
    const int c = block_sum<Threads>(__popc(view.flags) + __popc(head), warp_sums);
    if (threadIdx.x == 0) counts[t] = c;
  }
}

/// For the elements [begin, end) read in rounds of Threads, in index order: calls
/// on_match(i, rank) for each match, rank counting the matches before it in the range. Stops
/// after `wanted` matches. Block-wide (every thread must call it). `warp_counts`: Threads / 32 ints.
template <int Threads, class T, class OnMatch>
__device__ void matches_in_order(const T* __restrict__ data, int64_t begin, int64_t end,
                                 const core::match<T>& m, int64_t wanted, int* warp_counts,
                                 OnMatch on_match) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int64_t seen = 0;
  for (int64_t base = begin; base < end && seen < wanted; base += Threads) {
    const int64_t i = base + threadIdx.x;
    const bool hit = i < end && m(data[i]);
    const unsigned ballot = __ballot_sync(0xffffffffu, hit);
    __syncthreads();  // warp_counts of the previous round have been read
    if (lane == 0) warp_counts[warp] = __popc(ballot);
    __syncthreads();
    int before = 0, round = 0;
    GSEARCH_UNROLL
    for (int w = 0; w < Threads / 32; ++w) {
      before += w < warp ? warp_counts[w] : 0;
      round += warp_counts[w];
    }
    if (hit) on_match(i, seen + before + __popc(ballot & ((1u << lane) - 1)));
    seen += round;
  }
}

/// find_all's second pass: each block takes tiles with matches (grid-stride) and writes their
/// indices, ascending, at the tile's offset.
template <class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads)
    write_matches_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                         core::match<T> m, const int64_t* __restrict__ counts,
                         const int64_t* __restrict__ offsets, int64_t* __restrict__ out) {
  __shared__ int warp_counts[Threads / 32];
  const int64_t tiles = layout.tiles();
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t c = counts[t];
    if (c == 0) continue;
    int64_t* dst = out + offsets[t];
    matches_in_order<Threads>(data, layout.tile_begin(t), layout.tile_end(t), m, c, warp_counts,
                              [&](int64_t i, int64_t rank) { dst[rank] = i; });
  }
}

/// find_random's pick, one block: draws r uniform in [0, total) from the seed (core::random_below,
/// as the CPU does), finds the tile holding the r-th match by binary search of the offsets, and
/// the match within it.
template <class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads)
    pick_random_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                       core::match<T> m, const int64_t* __restrict__ counts,
                       const int64_t* __restrict__ offsets, uint64_t seed, int64_t* __restrict__ result) {
  __shared__ int warp_counts[Threads / 32];
  const int64_t tiles = layout.tiles();
  const int64_t total = tiles == 0 ? 0 : offsets[tiles - 1] + counts[tiles - 1];
  if (total == 0) {
    if (threadIdx.x == 0) *result = -1;
    return;
  }
  const int64_t r = core::random_below(seed, total);
  int64_t lo = 0, hi = tiles;  // the last tile with offsets[t] <= r (it holds the r-th match)
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (offsets[mid] <= r ? lo : hi) = mid;
  }
  const int64_t wanted = r - offsets[lo];
  matches_in_order<Threads>(data, layout.tile_begin(lo), layout.tile_end(lo), m, wanted + 1,
                            warp_counts, [&](int64_t i, int64_t rank) {
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
