#pragma once
/// \file
/// Partitioned search on the GPU (core/partition.hpp): key lists too large for shared memory,
/// searched in shared memory one bucket of keys at a time. For each window of queries:
///   1. partition_count_kernel   each of G blocks stages the splitters, finds the buckets of its
///                               tiles' queries (binary search in shared memory) and writes how
///                               many fell in each bucket: counts[b][block];
///   2. cub::DeviceScan          over that bucket-major matrix: where each block's queries of
///                               each bucket go (the radix sort's upsweep / downsweep, so the
///                               scatter needs no global atomics);
///   3. bucket_pieces_kernel + scan  each bucket cut into pieces of at most S queries, numbered;
///   4. partition_scatter_kernel the same blocks, tiles and buckets again: each query and its
///                               position go to the next slot of its block's run of its bucket;
///   5. bucket_search_kernel     block i takes piece i: stages its bucket's keys in shared memory,
///                               searches the piece's queries with PBS-CL, writes each result at
///                               its query's position.
/// Windows of queries keep the grouped copy and the scattered results in L2 when the keys are
/// few, and bound the temporary memory. Instantiated in src/cuda/partitioned.cu; bench/ calls
/// launch_partitioned with other configurations to tune them.

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/partition.hpp"
#include "gsearch/cuda/check.cuh"
#include "gsearch/cuda/search_kernel.cuh"
#include "gsearch/cuda/stream_buffer.cuh"
#include "gsearch/cuda/tuning.hpp"

namespace gsearch::cuda_backend {

/// splitters[j] = keys[(j + 1) x chunk]: the compact copy that the partition kernels stage.
template <class T>
__global__ void gather_splitters_kernel(const T* __restrict__ keys, core::partition_shape shape,
                                        T* __restrict__ splitters) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < shape.splitters(); j += stride)
    splitters[j] = keys[shape.splitter_key(j)];
}

/// Shared memory of the partition kernels: the m splitters, then m + 1 bucket counters.
template <class T>
constexpr int64_t partition_shared_bytes(int64_t m) {
  return m * int64_t(sizeof(T)) + (m + 1) * int64_t(sizeof(int));
}

/// Stages the m splitters and zeroes the m + 1 counters behind them; the block meets at a barrier.
template <int Threads, class T>
__device__ __forceinline__ int* stage_splitters(const T* __restrict__ splitters, int m, T* staged) {
  int* counters = reinterpret_cast<int*>(staged + m);
  for (int i = threadIdx.x; i < m; i += Threads) staged[i] = splitters[i];
  for (int i = threadIdx.x; i <= m; i += Threads) counters[i] = 0;
  __syncthreads();
  return counters;
}

/// The queries of a tile (thread t: queries t, t + Threads, ... of it; past n, the last query
/// again) and their buckets among the m staged splitters.
template <bool Strict, int Threads, int Items, class T>
__device__ __forceinline__ void tile_buckets(const T* staged, int m, const T* __restrict__ queries,
                                             int64_t tile_begin, int64_t n, before<Strict, T> (&preds)[Items],
                                             int (&bucket)[Items]) {
  GSEARCH_UNROLL
  for (int i = 0; i < Items; ++i) {
    const int64_t j = tile_begin + threadIdx.x + int64_t(i) * Threads;
    preds[i].q = queries[j < n ? j : n - 1];
  }
  core::bucket_n(core::padded_accessor<T>{staged}, m, preds, bucket);
}

/// counts[b x gridDim.x + block] = the number of the block's queries in bucket b (b in [0, m]).
/// Blocks take tiles grid-stride, as partition_scatter_kernel does with the same grid.
template <bool Strict, class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    partition_count_kernel(const T* __restrict__ splitters, int m, const T* __restrict__ queries, int64_t n,
                           int* __restrict__ counts) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  int* counters = stage_splitters<Threads>(splitters, m, staged);
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile) {
    before<Strict, T> preds[Items];
    int bucket[Items];
    tile_buckets<Strict, Threads, Items>(staged, m, queries, begin, n, preds, bucket);
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i)
      if (begin + threadIdx.x + int64_t(i) * Threads < n) atomicAdd(&counters[bucket[i]], 1);
  }
  __syncthreads();
  for (int b = threadIdx.x; b <= m; b += Threads) counts[int64_t(b) * gridDim.x + blockIdx.x] = counters[b];
}

/// Writes every query and its position into its bucket: first[b x gridDim.x + block] is the
/// block's first slot in bucket b (the scanned counts), and the block's queries of a bucket fill
/// its slots from there, in no particular order (each carries its position).
template <bool Strict, class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    partition_scatter_kernel(const T* __restrict__ splitters, int m, const T* __restrict__ queries, int64_t n,
                             const int* __restrict__ first, T* __restrict__ bucketed, int* __restrict__ position) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  int* next = reinterpret_cast<int*>(staged + m);  // the block's next slot per bucket
  for (int i = threadIdx.x; i < m; i += Threads) staged[i] = splitters[i];
  for (int b = threadIdx.x; b <= m; b += Threads) next[b] = first[int64_t(b) * gridDim.x + blockIdx.x];
  __syncthreads();
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile) {
    before<Strict, T> preds[Items];
    int bucket[Items];
    tile_buckets<Strict, Threads, Items>(staged, m, queries, begin, n, preds, bucket);
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = begin + threadIdx.x + int64_t(i) * Threads;
      if (j < n) {
        const int s = atomicAdd(&next[bucket[i]], 1);
        bucketed[s] = preds[i].q;
        position[s] = int(j);
      }
    }
  }
}

/// Bucket b's queries are slots [first[b x blocks], end) of the grouped copy (end: bucket b + 1's
/// first slot, or n). pieces[b] = how many pieces of at most `piece` queries they make;
/// pieces[buckets] = 0, so that the exclusive scan's last entry is the number of pieces. (A
/// template, Index = int, so that the header can be included by more than one translation unit.)
template <class Index>
__global__ void bucket_pieces_kernel(const Index* __restrict__ first, int blocks, int buckets, Index n, Index piece,
                                     Index* __restrict__ pieces) {
  for (int b = int(blockIdx.x) * blockDim.x + threadIdx.x; b <= buckets; b += gridDim.x * blockDim.x) {
    if (b == buckets) {
      pieces[b] = 0;
    } else {
      const Index begin = first[int64_t(b) * blocks];
      const Index end = b + 1 < buckets ? first[int64_t(b + 1) * blocks] : n;
      pieces[b] = (end - begin + piece - 1) / piece;
    }
  }
}

/// The bucket whose pieces include piece i: the last b with piece_first[b] <= i.
__device__ __forceinline__ int bucket_of_piece(const int* __restrict__ piece_first, int buckets, int i) {
  int lo = 0, hi = buckets - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (piece_first[mid] <= i) lo = mid; else hi = mid - 1;
  }
  return lo;
}

/// Block i searches piece i: queries [start + p x piece, ...) of its bucket b, at most `piece`
/// of them. Staged, the bucket's keys are staged in shared memory and searched with PBS-CL
/// (Copies replicas); else (chunks too large for shared memory) the binary search reads them from
/// global memory. out[position] = the query's rank + offset.
template <bool Staged, bool Strict, class T, class Out, int Threads, int Items, int Copies>
__global__ void __launch_bounds__(Threads)
    bucket_search_kernel(const T* __restrict__ keys, core::partition_shape shape, const int* __restrict__ first,
                         int blocks, const int* __restrict__ piece_first, const T* __restrict__ bucketed,
                         const int* __restrict__ position, int n, int piece, Out* __restrict__ out, int offset) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  const int buckets = int(shape.buckets);
  const int i = int(blockIdx.x);
  if (i >= piece_first[buckets]) return;  // the grid is an upper bound on the pieces
  const int b = bucket_of_piece(piece_first, buckets, i);
  const int bucket_end = b + 1 < buckets ? first[int64_t(b + 1) * blocks] : n;
  const int lo = first[int64_t(b) * blocks] + (i - piece_first[b]) * piece;
  const int hi = bucket_end - lo < piece ? bucket_end : lo + piece;
  const int64_t key_begin = shape.begin(b);
  const int k = int(shape.size(b));
  int stride = 0;
  if constexpr (Staged) stride = stage_padded_keys<Threads, Copies>(keys + key_begin, k, staged);
  constexpr int tile = Threads * Items;
  for (int t = lo; t < hi; t += tile) {
    before<Strict, T> preds[Items];
    int rank[Items];
    GSEARCH_UNROLL
    for (int u = 0; u < Items; ++u) {
      const int p = t + int(threadIdx.x) + u * Threads;
      preds[u].q = bucketed[p < hi ? p : hi - 1];
    }
    if constexpr (Staged) {
      const core::padded_accessor<T> acc{staged + warp_width};
      core::search_ranks<algorithm::pbs_cl, Items, Copies>(acc, k, preds, int(threadIdx.x) % warp_width, rank, stride);
    } else {
      const core::bounded_accessor<T, key_traits<T>> acc{keys + key_begin, k};
      core::search_ranks<algorithm::binary, Items>(acc, k, preds, 0, rank);
    }
    GSEARCH_UNROLL
    for (int u = 0; u < Items; ++u) {
      const int p = t + int(threadIdx.x) + u * Threads;
      if (p < hi) out[position[p]] = Out(core::bucket_rank(shape, b, rank[u]) + offset);
    }
  }
}

/// Enqueues the partitioned search of n queries in k keys on `stream` with configuration `cfg`
/// (tuning.hpp's partitioned_config, or a sweep's; cfg.segment is the piece). Key lists of one
/// bucket run the plain search.
template <bool Strict, class T, class Out>
void launch_partitioned(cudaStream_t stream, int offset, const T* keys, int64_t k, const T* queries, int64_t n,
                        Out* out, const device_limits& dev, const core::partition_config& cfg) {
  if (n == 0) return;
  if (cfg.window < 1 || cfg.window > (int64_t{1} << 30) || cfg.segment < 1)
    throw invalid_argument("partition_config: window must be in [1, 2^30] and segment positive");
  const int64_t chunk = cfg.chunk_bytes / int64_t(sizeof(T));
  const core::partition_shape shape(k, chunk, cfg.max_buckets);
  if (shape.buckets == 1) {  // one bucket is the shared-memory search (or, huge chunks, global)
    return launch_search<algorithm::pbs_cl>(stream, Strict, offset, keys, k, queries, n, out, dev);
  }
  const int m = int(shape.splitters()), buckets = int(shape.buckets);
  const int64_t window = n < cfg.window ? n : cfg.window;
  const int piece = cfg.segment;

  constexpr int pt = partition_tile.threads, pi = partition_tile.items;
  auto count = partition_count_kernel<Strict, T, pt, pi>;
  auto scatter = partition_scatter_kernel<Strict, T, pt, pi>;
  const int64_t partition_smem = partition_shared_bytes<T>(m);
  allow_dynamic_shared(reinterpret_cast<const void*>(count), partition_smem, dev);
  allow_dynamic_shared(reinterpret_cast<const void*>(scatter), partition_smem, dev);
  // One grid for both partition kernels (the scatter replays the count's tiles): the blocks both
  // can keep resident, no more than the window's tiles.
  const int64_t window_tiles = (window + int64_t(pt) * pi - 1) / (int64_t(pt) * pi);
  const int resident = std::min(blocks_per_sm(reinterpret_cast<const void*>(count), pt, partition_smem, dev),
                                blocks_per_sm(reinterpret_cast<const void*>(scatter), pt, partition_smem, dev)) * dev.sms;
  const int grid = int(window_tiles < resident ? window_tiles : resident);
  const int64_t cells = int64_t(m + 1) * grid;  // the count matrix

  constexpr int st = bucket_tile.threads, si = bucket_tile.items;
  const int copies = pbs_cl_copies<T>(shape.chunk, dev.max_shared_per_block);
  const bool staged = fits_shared<T>(shape.chunk, dev);
  auto search = !staged        ? bucket_search_kernel<false, Strict, T, Out, st, si, 1>
                : copies == 2 ? bucket_search_kernel<true, Strict, T, Out, st, si, 2>
                              : bucket_search_kernel<true, Strict, T, Out, st, si, 1>;
  const int64_t search_smem = staged ? staged_bytes<T>(shape.chunk, copies) : 0;
  allow_dynamic_shared(reinterpret_cast<const void*>(search), search_smem, dev);

  // Temporary memory, 16-byte aligned pieces: splitters, the count matrix, the pieces and their
  // scan, the scans' scratch, the grouped queries and their positions.
  auto round16 = [](int64_t bytes) { return (bytes + 15) / 16 * 16; };
  size_t scan_bytes = 0, piece_scan_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<int*>(nullptr),
                                                   static_cast<int*>(nullptr), cells, stream));
  GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, piece_scan_bytes, static_cast<int*>(nullptr),
                                                   static_cast<int*>(nullptr), buckets + 1, stream));
  if (piece_scan_bytes > scan_bytes) scan_bytes = piece_scan_bytes;
  const int64_t sizes[] = {round16(m * int64_t(sizeof(T))), round16(cells * 4), round16((buckets + 1) * int64_t(4)),
                           round16((buckets + 1) * int64_t(4)), round16(int64_t(scan_bytes)),
                           round16(window * int64_t(sizeof(T))), window * 4};
  int64_t total = 0;
  for (int64_t b : sizes) total += b;
  const stream_buffer memory(stream, size_t(total));
  unsigned char* at = static_cast<unsigned char*>(memory.get());
  auto take = [&](int part) {
    unsigned char* p = at;
    at += sizes[part];
    return p;
  };
  T* splitters = reinterpret_cast<T*>(take(0));
  int* first = reinterpret_cast<int*>(take(1));
  int* pieces = reinterpret_cast<int*>(take(2));
  int* piece_first = reinterpret_cast<int*>(take(3));
  void* scan_temp = take(4);
  T* bucketed = reinterpret_cast<T*>(take(5));
  int* position = reinterpret_cast<int*>(take(6));

  gather_splitters_kernel<<<(m + 255) / 256, 256, 0, stream>>>(keys, shape, splitters);
  GSEARCH_CUDA_CHECK_LAUNCH();
  for (int64_t w0 = 0; w0 < n; w0 += window) {
    const int64_t wn = n - w0 < window ? n - w0 : window;
    count<<<grid, pt, size_t(partition_smem), stream>>>(splitters, m, queries + w0, wn, first);
    GSEARCH_CUDA_CHECK_LAUNCH();
    size_t bytes = scan_bytes;
    GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp, bytes, first, first, cells, stream));
    bucket_pieces_kernel<int><<<(buckets + 256) / 256, 256, 0, stream>>>(first, grid, buckets, int(wn), piece, pieces);
    GSEARCH_CUDA_CHECK_LAUNCH();
    bytes = scan_bytes;
    GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp, bytes, pieces, piece_first, buckets + 1, stream));
    scatter<<<grid, pt, size_t(partition_smem), stream>>>(splitters, m, queries + w0, wn, first, bucketed, position);
    GSEARCH_CUDA_CHECK_LAUNCH();
    const int64_t most_pieces = buckets + (wn + piece - 1) / piece;  // each bucket's last piece may be short
    search<<<unsigned(most_pieces), st, size_t(search_smem), stream>>>(keys, shape, first, grid, piece_first, bucketed,
                                                                      position, int(wn), piece, out + w0, offset);
    GSEARCH_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace gsearch::cuda_backend
