#pragma once
/// \file
/// The row-batched search kernels (gsearch::search_rows, torch.searchsorted with an N-D sorted
/// sequence): `rows` independent searches, row r's m queries in row r's k keys. The per-lane
/// algorithms are core/pbs.hpp's, given one accessor per item (core::item_keys) because the
/// queries a thread searches in lockstep may lie in different rows.
///
/// Short rows (the typical use: per-ray CDFs of 64 bins, 128 samples each) are why this is not
/// a loop of 1-D searches: a block stages as many whole rows as make a tile of queries (for 64
/// keys x 128 queries, 8 rows per 256 x 4 tile), so every thread has work and every row's keys
/// are read from global memory once. Long rows take one row per tile and several tiles of
/// queries. Rows too long for shared memory are searched in global memory.
/// Instantiated once per algorithm in src/cuda/search_<algorithm>.cu.

#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/fast_divide.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/pbs.hpp"
#include "cuda/check.cuh"
#include "search/cuda/search_kernel.cuh"
#include "search/tuning.hpp"

namespace gsearch::cuda_backend {

/// Writes the 2w sentinels of each of the `nrows` padded rows (w in front, w behind the k keys;
/// rows `padded` = k + 2w elements apart). Their slots are the same for every tile, so a block
/// writes them once.
template <int Threads, class T>
__device__ __forceinline__ void stage_sentinels(T* staged, int nrows, int k) {
  constexpr int w = warp_width;
  const int padded = k + 2 * w;
  for (int e = threadIdx.x; e < nrows * 2 * w; e += Threads) {
    const int r = e / (2 * w), i = e % (2 * w);  // a power of two: shifts
    staged[r * padded + (i < w ? i : k + i)] = i < w ? key_traits<T>::lowest() : key_traits<T>::highest();
  }
}

/// Copies the keys of rows [row0, row0 + nrows) into their padded rows in shared memory. The
/// rows are contiguous in global memory, so they are read coalesced, 16 bytes at a time when
/// a row is a whole number of 16-byte words and the keys are 16-byte aligned (then every row
/// starts on a word in both places: w keys of padding are 128 or 256 bytes).
template <int Threads, class T>
__device__ __forceinline__ void stage_rows(T* staged, const T* __restrict__ keys, int64_t row0, int nrows,
                                           int k, const core::fast_divider& by_k) {
  constexpr int w = warp_width;
  const int padded = k + 2 * w;
  const T* tile_keys = keys + row0 * k;
  constexpr int per_word = 16 / int(sizeof(T));
  if (k % per_word == 0 && reinterpret_cast<uintptr_t>(keys) % 16 == 0) {
    const uint4* words = reinterpret_cast<const uint4*>(tile_keys);
    for (int e = threadIdx.x * per_word; e < nrows * k; e += Threads * per_word) {
      const int r = int(by_k.divide(uint32_t(e)));
      *reinterpret_cast<uint4*>(staged + r * padded + w + (e - r * k)) = words[e / per_word];
    }
    return;
  }
  for (int e = threadIdx.x; e < nrows * k; e += Threads) {
    const int r = int(by_k.divide(uint32_t(e)));
    staged[r * padded + w + (e - r * k)] = tile_keys[e];
  }
}

/// Each block loops over tiles of `tile_rows` consecutive rows (the host picks tile_rows, so
/// that tile_rows * m < 2^31; by_k and by_m divide by k and m), staging their padded keys in shared memory and searching their
/// queries. Two regimes, chosen per launch:
///  - tile_rows == 1 (m >= Threads * Items): one row, searched like the 1-D search
///    (search_tile: one accessor, full tiles without bounds checks), tile after tile of queries.
///  - tile_rows > 1 (short rows): the tile's tile_rows * m <= Threads * Items queries are one
///    batch, thread t taking queries t, t + Threads, ... (coalesced), each with the accessor of
///    its own row (core::item_keys), the row found by a multiply-shift division. The batch's
///    queries are loaded before the staging barrier, so their loads overlap the keys'.
template <algorithm A, bool Strict, class T, class Out, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    search_rows_shared_kernel(const T* __restrict__ keys, int k, const T* __restrict__ queries,
                              int64_t rows, int m, Out* __restrict__ out, int offset, int tile_rows,
                              core::fast_divider by_k, core::fast_divider by_m) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  constexpr int w = warp_width;
  const int padded = k + 2 * w;
  stage_sentinels<Threads, T>(staged, tile_rows, k);  // ordered before the first search by the
                                                      // barrier after the first staging
  for (int64_t row0 = int64_t(blockIdx.x) * tile_rows; row0 < rows; row0 += int64_t(gridDim.x) * tile_rows) {
    const int nrows = int(rows - row0 < tile_rows ? rows - row0 : tile_rows);
    const T* tile_queries = queries + row0 * m;
    Out* tile_out = out + row0 * m;
    if (tile_rows == 1) {
      __syncthreads();  // the previous row's searches are done with the staged keys
      stage_rows<Threads>(staged, keys, row0, 1, k, by_k);
      __syncthreads();
      const core::padded_accessor<T> acc{staged + w};
      for (int64_t begin = 0; begin < m; begin += int64_t(Threads) * Items)
        search_tile<A, Strict, Threads, Items>(acc, k, tile_queries, begin, int64_t(m), tile_out, offset);
      continue;
    }
    const int n = nrows * m;  // <= Threads * Items: one batch
    before<Strict, T> preds[Items];
    int row[Items];
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      int j = int(threadIdx.x) + i * Threads;
      j = j < n ? j : n - 1;  // past the end: repeat the last query, write nothing
      preds[i].q = tile_queries[j];
      row[i] = int(by_m.divide(uint32_t(j)));
    }
    __syncthreads();  // the previous tile's searches are done with the staged rows
    stage_rows<Threads>(staged, keys, row0, nrows, k, by_k);
    __syncthreads();
    core::padded_accessor<T> acc[Items];
    int rank[Items];
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) acc[i].data = staged + row[i] * padded + w;
    core::search_ranks<A, Items>(acc, k, preds, int(threadIdx.x) % w, rank);
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int j = int(threadIdx.x) + i * Threads;
      if (j < n) tile_out[j] = Out(rank[i] + offset);
    }
  }
}

/// Rows too long for shared memory: the flat range of rows * m queries in tiles, each query
/// searching its row in global memory through the bounded accessor (same algorithm, no copy).
template <algorithm A, bool Strict, class T, class Out, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    search_rows_global_kernel(const T* __restrict__ keys, int64_t k, const T* __restrict__ queries,
                              int64_t n, int64_t m, Out* __restrict__ out, int offset) {
  using accessor = core::bounded_accessor<T, key_traits<T>>;
  const int lane = threadIdx.x % warp_width;
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile) {
    accessor acc[Items];
    before<Strict, T> preds[Items];
    int64_t rank[Items];
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      int64_t j = begin + threadIdx.x + int64_t(i) * Threads;
      j = j < n ? j : n - 1;
      acc[i] = accessor{keys + (j / m) * k, k};
      preds[i].q = queries[j];
    }
    core::search_ranks<A, Items>(acc, k, preds, lane, rank);
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = begin + threadIdx.x + int64_t(i) * Threads;
      if (j < n) out[j] = Out(rank[i] + offset);
    }
  }
}

/// Rows staged per tile: enough rows of m queries to fill a tile of `tile_queries`, no more
/// than fit in `max_shared` bytes, at least 1; 0 when one padded row does not fit.
template <class T>
constexpr int64_t rows_per_tile(int64_t k, int64_t m, int64_t tile_queries, int64_t max_shared) {
  const int64_t row_bytes = (k + 2 * warp_width) * int64_t(sizeof(T));
  const int64_t fit = max_shared / row_bytes;
  if (fit < 1) return 0;
  const int64_t want = m > 0 && m < tile_queries ? tile_queries / m : 1;
  return want < fit ? want : fit;
}

/// Enqueues the row-batched search with algorithm A (not auto_) and an explicit launch
/// configuration of the shared-memory kernel: rows staged in shared memory when one padded row
/// fits (and a tile's queries number fewer than 2^31), else searched in global memory.
template <algorithm A, int Threads, int Items, class T, class Out>
void launch_search_rows_with(cudaStream_t stream, bool strict, int offset, int64_t rows, const T* keys,
                             int64_t k, const T* queries, int64_t m, Out* out, const device_limits& dev) {
  if (rows == 0 || m == 0) return;
  constexpr int64_t tile = int64_t(Threads) * Items;
  const int64_t tile_rows = rows_per_tile<T>(k, m, tile, dev.max_shared_per_block);
  if (tile_rows > 0 && tile_rows * m < (int64_t(1) << 31) - tile) {
    auto kernel = strict ? search_rows_shared_kernel<A, true, T, Out, Threads, Items>
                         : search_rows_shared_kernel<A, false, T, Out, Threads, Items>;
    const int64_t smem = tile_rows * (k + 2 * warp_width) * int64_t(sizeof(T));
    const core::fast_divider by_k{uint32_t(k > 0 ? k : 1)}, by_m{uint32_t(m)};  // the kernel divides by these
    launch_filling(kernel, Threads, smem, (rows + tile_rows - 1) / tile_rows, stream, dev, keys, int(k), queries, rows,
                   int(m), out, offset, int(tile_rows), by_k, by_m);
  } else {
    constexpr int threads = rows_global_config.threads, items = rows_global_config.items;
    auto kernel = strict ? search_rows_global_kernel<A, true, T, Out, threads, items>
                         : search_rows_global_kernel<A, false, T, Out, threads, items>;
    const int64_t n = rows * m;
    launch_filling(kernel, threads, 0, (n + threads * items - 1) / (threads * items), stream, dev, keys, k, queries, n,
                   m, out, offset);
  }
}

/// Enqueues the row-batched search with algorithm A and the tuned configuration of tuning.hpp.
template <algorithm A, class T, class Out>
void launch_search_rows(cudaStream_t stream, bool strict, int offset, int64_t rows, const T* keys,
                        int64_t k, const T* queries, int64_t m, Out* out, const device_limits& dev) {
  constexpr launch_config cfg = rows_config<int(sizeof(T))>;
  launch_search_rows_with<A, cfg.threads, cfg.items>(stream, strict, offset, rows, keys, k, queries, m, out, dev);
}

#define GSEARCH_ROWS_SIGNATURE_T(A, T, OUT) \
  void launch_search_rows<A, T, OUT>(cudaStream_t, bool, int, int64_t, const T*, int64_t, const T*, int64_t, OUT*, \
                                     const device_limits&)

/// Instantiates launch_search_rows<A> for every key and output type (in the algorithm's .cu).
#define GSEARCH_INSTANTIATE_LAUNCH_SEARCH_ROWS_T(A, T) \
  template GSEARCH_ROWS_SIGNATURE_T(A, T, int64_t);    \
  template GSEARCH_ROWS_SIGNATURE_T(A, T, int32_t);
#define GSEARCH_DECLARE_LAUNCH_SEARCH_ROWS_T(A, T)         \
  extern template GSEARCH_ROWS_SIGNATURE_T(A, T, int64_t); \
  extern template GSEARCH_ROWS_SIGNATURE_T(A, T, int32_t);
#define GSEARCH_INSTANTIATE_LAUNCH_SEARCH_ROWS(A)       \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_ROWS_T(A, int32_t)  \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_ROWS_T(A, uint32_t) \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_ROWS_T(A, int64_t)  \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_ROWS_T(A, uint64_t) \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_ROWS_T(A, float)    \
  GSEARCH_INSTANTIATE_LAUNCH_SEARCH_ROWS_T(A, double)

}  // namespace gsearch::cuda_backend
