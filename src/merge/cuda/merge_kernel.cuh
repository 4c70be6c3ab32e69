#pragma once
/// \file
/// Merge Path tiles on the GPU (seeds/002): a partition kernel finds where every tile's first
/// output diagonal crosses the two inputs (core::merge_path in global memory, one thread per
/// tile); then one block per tile stages its slices of A and B in shared memory, each thread
/// finds its own split there and merges `Items` elements in registers (core::serial_merge_staged),
/// and the block writes the tile back through shared memory, coalesced. The same tile serves
/// merge (two_lists) and the passes of merge sort (run_pairs), and block_sort_kernel sorts the
/// tiles merge sort starts from.

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/merge_path.hpp"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/stream_buffer.cuh"

namespace gsearch::cuda_backend {

/// One tile's merge problem: inputs A and B (with their values, or null), the diagonals
/// [d0, d1) of their merge the tile writes, and the output index of that merge's diagonal 0.
template <class T>
struct merge_segment {
  const T* a;
  int64_t na;
  const T* b;
  int64_t nb;
  const int64_t* a_values;
  const int64_t* b_values;
  int64_t d0, d1;
  int64_t out;
};

/// merge(): tile t writes diagonals [t * tile, (t + 1) * tile) of the one merge of a and b.
template <class T>
struct two_lists {
  const T* a;
  int64_t na;
  const T* b;
  int64_t nb;
  const int64_t* a_values;
  const int64_t* b_values;
  __device__ merge_segment<T> segment(int64_t t, int64_t tile) const {
    const int64_t d0 = t * tile;
    return {a, na, b, nb, a_values, b_values, d0, min(na + nb, d0 + tile), 0};
  }
};

/// A merge-sort pass: the sorted runs of `width` elements are merged in pairs; tile t lies in the
/// pair that holds output t * tile (the tile divides 2 * width).
template <class T>
struct run_pairs {
  const T* keys;
  const int64_t* values;
  int64_t n, width;
  __device__ merge_segment<T> segment(int64_t t, int64_t tile) const {
    const int64_t start = t * tile, pair = start / (2 * width) * (2 * width);
    const int64_t na = min(width, n - pair), nb = min(width, n - pair - na);
    return {keys + pair, na, keys + pair + na, nb,
            values ? values + pair : nullptr, values ? values + pair + na : nullptr,
            start - pair, min(start + tile, pair + na + nb) - pair, pair};
  }
};

/// Reads element i of a device array (the accessor the core functions take).
template <class T>
struct global_reader {
  const T* p;
  __device__ T operator()(int64_t i) const { return p[i]; }
};

/// Stages a tile's two slices in shared memory, coalesced: dst[0, na) = a[0, na), then
/// dst[na, count) = b[0, count - na), count <= Threads * Items. The copies are asynchronous
/// (cp.async, global to shared without registers), so all of a thread's Items loads are in flight
/// at once at no cost in registers. Each thread waits for its own copies before returning; the
/// caller's next __syncthreads makes the whole tile visible to the block.
template <int Threads, int Items, class T>
__device__ __forceinline__ void stage_two_slices(T* dst, const T* a, int na, const T* b,
                                                 int count) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cp.async copies 4, 8 or 16 bytes");
  // B's slice addressed as if it began at index na, so each copy is one select of a base and one
  // address computation (integer arithmetic: b - na may lie before B's allocation).
  const T* b_from_na = reinterpret_cast<const T*>(reinterpret_cast<uintptr_t>(b) -
                                                  uintptr_t(na) * sizeof(T));
  GSEARCH_UNROLL
  for (int i = 0; i < Items; ++i) {
    const int idx = int(threadIdx.x) + i * Threads;
    if (idx < count) __pipeline_memcpy_async(dst + idx, (idx < na ? a : b_from_na) + idx, sizeof(T));
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
}

/// partitions[t] = A's share of the merge before tile t's first diagonal, t < tiles.
template <class Layout>
__global__ void merge_partition_kernel(Layout layout, int64_t tile, int64_t tiles,
                                       int64_t* partitions) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tiles) return;
  const auto s = layout.segment(t, tile);
  using T = decltype(+*s.a);
  partitions[t] = core::merge_path(global_reader<T>{s.a}, s.na, global_reader<T>{s.b}, s.nb, s.d0);
}

/// One tile of a merge per block (see the file comment). Values, when carried, follow their
/// keys through the source index each output remembers (the tile position it was staged at).
template <int Threads, int Items, bool Values, int MinBlocks, class Layout, class T>
__global__ __launch_bounds__(Threads, MinBlocks) void merge_tiles_kernel(Layout layout,
                                                              const int64_t* partitions, T* out,
                                                              int64_t* out_values) {
  constexpr int tile = Threads * Items;
  __shared__ T keys_s[tile + 1];  // a spare slot: serial_merge_staged reads one past B
  __shared__ int src_s[Values ? tile : 1];
  const int64_t t = blockIdx.x;
  const auto s = layout.segment(t, tile);
  // The tile's slices, made monotone (core::monotone_range; a no-op on sorted inputs): on
  // unsorted ones, with the check off, the next tile's split may lie before this one's, or more
  // than a tile after it, and a slice would be negative.
  const int64_t a_start = partitions[t];
  const int64_t a_end = s.d1 == s.na + s.nb ? s.na : partitions[t + 1];
  const auto range = core::monotone_range(a_start, s.d0 - a_start, a_end, s.d1 - a_end);
  const int64_t a0 = range.a0, b0 = range.b0;
  const int na = int(range.a1 - a0), count = int(s.d1 - s.d0), nb = count - na;

  stage_two_slices<Threads, Items>(keys_s, s.a + a0, na, s.b + b0, count);
  __syncthreads();

  // This thread's split of the tile, then its Items outputs in registers. (No clamp here: a
  // split inside the tile is within it on any input, and a thread merges from its own split
  // alone, writing its own Items outputs.)
  const auto as = [&](int i) { return keys_s[i]; };
  const auto bs = [&](int j) { return keys_s[na + j]; };
  const int diag = min(int(threadIdx.x) * Items, count);
  const int p = core::merge_path(as, na, bs, nb, diag);
  T r[Items];
  int src[Items];
  // A is keys_s[p, na) here and B keys_s[na + diag - p, count) (`as` reads the whole tile): the
  // source index each output remembers is its position in the tile.
  core::serial_merge_staged<Items>(as, p, na, na + diag - p, count,
                                   [&](int k, bool, int i, T key) {
                                     r[k] = key;
                                     if constexpr (Values) src[k] = i;
                                   });
  __syncthreads();

  // Back through shared memory (Items is odd: thread-contiguous stores hit distinct banks).
  for (int k = 0; k < Items; ++k) {
    if (diag + k < count) {
      keys_s[diag + k] = r[k];
      if constexpr (Values) src_s[diag + k] = src[k];
    }
  }
  __syncthreads();
  const int64_t o = s.out + s.d0;
  // The values are read a batch at a time before the batch is written: out_values may alias the
  // inputs as far as the compiler knows, so a read after a write would wait for it, one global
  // round trip per item. Batches of 8 bound the registers the values take (16).
  constexpr int batch = Values ? (Items < 8 ? Items : 8) : Items;
  GSEARCH_UNROLL
  for (int first = 0; first < Items; first += batch) {
    int64_t v[Values ? batch : 1];
    if constexpr (Values) {
      GSEARCH_UNROLL
      for (int i = first; i < first + batch && i < Items; ++i) {
        const int idx = int(threadIdx.x) + i * Threads;
        if (idx < count) {
          const int from = src_s[idx];
          v[i - first] = from < na ? s.a_values[a0 + from] : s.b_values[b0 + from - na];
        }
      }
    }
    GSEARCH_UNROLL
    for (int i = first; i < first + batch && i < Items; ++i) {
      const int idx = int(threadIdx.x) + i * Threads;
      if (idx < count) {
        out[o + idx] = keys_s[idx];
        if constexpr (Values) out_values[o + idx] = v[i - first];
      }
    }
  }
}

/// Sorts each tile of Threads * Items keys (stable): each thread sorts its Items keys in
/// registers (odd-even transposition: compares and swaps only strictly out-of-order neighbours,
/// so equal keys keep their order), then the block merges runs of Items, 2 Items, ... in shared
/// memory with core::merge_path and serial_merge_staged. A short last tile is padded with the
/// largest key, which stays after any equal real key because the merges are stable and the
/// padding comes last. out may be keys, out_values may be values (each block reads its whole
/// tile before it writes).
template <int Threads, int Items, bool Values, class T>
__global__ __launch_bounds__(Threads) void block_sort_kernel(const T* keys, const int64_t* values,
                                                             int64_t n, T* out,
                                                             int64_t* out_values) {
  constexpr int tile = Threads * Items;
  __shared__ T keys_s[tile + 1];  // a spare slot: serial_merge_staged reads one past B
  __shared__ int src_s[Values ? tile : 1];
  const int64_t base = int64_t(blockIdx.x) * tile;
  const int count = int(min(int64_t{tile}, n - base));
  stage_two_slices<Threads, Items>(keys_s, keys + base, count, keys, count);  // B is empty
  for (int i = 0; i < Items; ++i) {
    const int idx = int(threadIdx.x) + i * Threads;
    if (idx >= count) keys_s[idx] = key_traits<T>::highest();
  }
  __syncthreads();

  const int first = int(threadIdx.x) * Items;
  T r[Items];
  int src[Items];
  for (int k = 0; k < Items; ++k) {
    r[k] = keys_s[first + k];
    src[k] = first + k;
  }
  for (int pass = 0; pass < Items; ++pass) {
    for (int k = pass & 1; k + 1 < Items; k += 2) {
      if (key_less(r[k + 1], r[k])) {
        const T x = r[k];
        r[k] = r[k + 1];
        r[k + 1] = x;
        const int y = src[k];
        src[k] = src[k + 1];
        src[k + 1] = y;
      }
    }
  }
  for (int width = Items; width < tile; width *= 2) {
    __syncthreads();
    for (int k = 0; k < Items; ++k) {
      keys_s[first + k] = r[k];
      if constexpr (Values) src_s[first + k] = src[k];
    }
    __syncthreads();
    const int pair = first / (2 * width) * (2 * width);
    const auto as = [&](int i) { return keys_s[pair + i]; };
    const auto bs = [&](int j) { return keys_s[pair + width + j]; };
    const int diag = first - pair;
    const int p = core::merge_path(as, width, bs, width, diag);
    core::serial_merge_staged<Items>([&](int i) { return keys_s[i]; }, pair + p, pair + width,
                                     pair + width + diag - p, pair + 2 * width,
                                     [&](int k, bool, int i, T key) {
                                       r[k] = key;
                                       if constexpr (Values) src[k] = src_s[i];
                                     });
  }
  __syncthreads();
  for (int k = 0; k < Items; ++k) {
    keys_s[first + k] = r[k];
    if constexpr (Values) src_s[first + k] = src[k];
  }
  __syncthreads();
  int64_t v[Values ? Items : 1];
  if constexpr (Values) {
    for (int i = 0; i < Items; ++i) {
      const int idx = int(threadIdx.x) + i * Threads;
      if (idx < count) v[i] = values[base + src_s[idx]];
    }
    __syncthreads();  // every value of the tile read before any is overwritten (in place)
  }
  for (int i = 0; i < Items; ++i) {
    const int idx = int(threadIdx.x) + i * Threads;
    if (idx < count) {
      out[base + idx] = keys_s[idx];
      if constexpr (Values) out_values[base + idx] = v[i];
    }
  }
}

/// Enqueues a whole merge on `stream`: partitions for `tiles` tiles of Threads * Items outputs
/// (8 bytes per tile, stream-ordered), then the tiles. MinBlocks: the tile kernel's
/// __launch_bounds__ minimum of resident blocks per SM (registers capped to fit them; 0 leaves
/// the compiler free).
template <int Threads, int Items, bool Values, int MinBlocks = 0, class Layout, class T>
void launch_merge(cudaStream_t stream, const Layout& layout, int64_t tiles, T* out,
                  int64_t* out_values) {
  if (tiles <= 0) return;
  constexpr int tile = Threads * Items;
  stream_buffer partitions(stream, size_t(tiles) * sizeof(int64_t));
  auto* parts = static_cast<int64_t*>(partitions.get());
  constexpr int partition_threads = 256;
  launch(merge_partition_kernel<Layout>, (tiles + partition_threads - 1) / partition_threads, partition_threads, 0,
         stream, layout, tile, tiles, parts);
  launch(merge_tiles_kernel<Threads, Items, Values, MinBlocks, Layout, T>, tiles, Threads, 0, stream, layout, parts,
         out, out_values);
}

/// Enqueues a whole merge sort of n keys (and values) on `stream`: block_sort_kernel sorts runs
/// of SortThreads * Items keys, then Merge Path passes (run_pairs, in merge tiles of Threads *
/// Items) merge runs of doubling width, ping-ponging between the output and one temporary copy;
/// the block sort writes to whichever of the two makes the last pass land in the output. A block
/// sort of more threads than the merge's makes longer runs, and may save a pass. MinBlocks caps
/// the passes' registers as in launch_merge. src/merge/cuda/merge_sort.cu runs src/merge/tuning.hpp's
/// merge_sort_config; the sweep (bench/merge/merge_sweep.cu) others.
template <int SortThreads, int Threads, int Items, int MinBlocks, bool Values, class T>
void launch_merge_sort(cudaStream_t stream, const T* keys, int64_t n, const int64_t* values, T* out,
                       int64_t* out_values) {
  if (n <= 0) return;
  constexpr int64_t run = int64_t(SortThreads) * Items, tile = int64_t(Threads) * Items;
  const int64_t runs = (n + run - 1) / run, tiles = (n + tile - 1) / tile;
  int passes = 0;
  for (int64_t width = run; width < n; width *= 2) ++passes;

  stream_buffer temp_keys(stream, passes > 0 ? size_t(n) * sizeof(T) : 0);
  stream_buffer temp_values(stream, passes > 0 && Values ? size_t(n) * sizeof(int64_t) : 0);
  T* other = static_cast<T*>(temp_keys.get());
  int64_t* other_values = static_cast<int64_t*>(temp_values.get());
  // After the block sort, each pass swaps src and dst: an odd number of passes starts in temp.
  T* dst = passes % 2 ? other : out;
  int64_t* dst_values = passes % 2 ? other_values : out_values;
  T* spare = passes % 2 ? out : other;
  int64_t* spare_values = passes % 2 ? out_values : other_values;

  launch(block_sort_kernel<SortThreads, Items, Values, T>, runs, SortThreads, 0, stream, keys, values, n, dst,
         dst_values);
  for (int64_t width = run; width < n; width *= 2) {
    const run_pairs<T> runs{dst, Values ? dst_values : nullptr, n, width};
    launch_merge<Threads, Items, Values, MinBlocks>(stream, runs, tiles, spare, spare_values);
    std::swap(dst, spare);
    std::swap(dst_values, spare_values);
  }
}

}  // namespace gsearch::cuda_backend
