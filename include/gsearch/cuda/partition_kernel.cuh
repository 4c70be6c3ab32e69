#pragma once
/// \file
/// Partitioned search on the GPU (core/partition.hpp): key lists too large for shared memory,
/// searched in shared memory one bucket of keys at a time. For each window of queries:
///   1. partition_count_kernel  each block stages the splitters, finds its queries' buckets
///                              (binary search in shared memory) and counts them;
///   2. cub::DeviceScan         the counts become each bucket's first slot;
///   3. partition_scatter_kernel the same buckets again; a block reserves a run of slots per
///                              bucket for its tile (one global atomic per bucket it holds) and
///                              writes each query, and its position, into its bucket's run;
///   4. bucket_search_kernel    block i takes slots [i S, (i + 1) S) of the bucketed queries and,
///                              bucket by bucket, stages the bucket's keys in shared memory,
///                              searches them with PBS-CL and writes each result at its query's
///                              position.
/// Windows of queries keep the bucketed copy and the scattered results in L2 when the keys are
/// few, and bound the temporary memory. Instantiated in src/cuda/partitioned.cu; bench/ calls
/// launch_partitioned with other configurations to tune them.

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

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

/// Adds the number of queries in each bucket to counts[0..m] (zeroed by the caller).
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
  for (int b = threadIdx.x; b <= m; b += Threads)
    if (counters[b] != 0) atomicAdd(&counts[b], counters[b]);
}

/// Writes every query and its position into its bucket's run: cursor[b] is the next free slot of
/// bucket b (the scan of the counts; each bucket's end afterwards). A block reserves the slots of
/// a tile with one atomic per bucket the tile holds; the order within a bucket is not kept.
template <bool Strict, class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    partition_scatter_kernel(const T* __restrict__ splitters, int m, const T* __restrict__ queries, int64_t n,
                             int* __restrict__ cursor, T* __restrict__ bucketed, int* __restrict__ position) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  int* counters = stage_splitters<Threads>(splitters, m, staged);  // then each bucket's first slot
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile) {
    before<Strict, T> preds[Items];
    int bucket[Items], slot[Items];
    tile_buckets<Strict, Threads, Items>(staged, m, queries, begin, n, preds, bucket);
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i)
      slot[i] = begin + threadIdx.x + int64_t(i) * Threads < n ? atomicAdd(&counters[bucket[i]], 1) : 0;
    __syncthreads();
    for (int b = threadIdx.x; b <= m; b += Threads) {
      const int c = counters[b];
      counters[b] = c != 0 ? atomicAdd(&cursor[b], c) : 0;
    }
    __syncthreads();
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = begin + threadIdx.x + int64_t(i) * Threads;
      if (j < n) {
        const int s = counters[bucket[i]] + slot[i];
        bucketed[s] = preds[i].q;
        position[s] = int(j);
      }
    }
    __syncthreads();
    for (int b = threadIdx.x; b <= m; b += Threads) counters[b] = 0;
    __syncthreads();
  }
}

/// The first bucket whose run ends after slot s (ends[] ascending, `buckets` of them).
__device__ __forceinline__ int bucket_at(const int* __restrict__ ends, int buckets, int s) {
  int lo = 0, hi = buckets - 1;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (ends[mid] > s) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/// Block i searches slots [i x segment, (i + 1) x segment) of the bucketed queries of a window of
/// n, bucket by bucket: Staged, the bucket's keys are staged in shared memory and searched with
/// PBS-CL (Copies replicas); else (chunks too large for shared memory) the binary search reads
/// them from global memory. out[position] = the query's rank + offset.
template <bool Staged, bool Strict, class T, class Out, int Threads, int Items, int Copies>
__global__ void __launch_bounds__(Threads)
    bucket_search_kernel(const T* __restrict__ keys, core::partition_shape shape, const int* __restrict__ ends,
                         const T* __restrict__ bucketed, const int* __restrict__ position, int n, int segment,
                         Out* __restrict__ out, int offset) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  __shared__ int first_bucket;
  const int s0 = int(blockIdx.x) * segment;
  const int s1 = n - s0 < segment ? n : s0 + segment;
  const int buckets = int(shape.buckets);
  if (threadIdx.x == 0) first_bucket = bucket_at(ends, buckets, s0);
  __syncthreads();
  constexpr int tile = Threads * Items;
  for (int b = first_bucket; b < buckets; ++b) {
    const int run_begin = b == 0 ? 0 : ends[b - 1];
    if (run_begin >= s1) break;
    const int lo = run_begin > s0 ? run_begin : s0;
    const int hi = ends[b] < s1 ? ends[b] : s1;
    if (lo >= hi) continue;  // an empty bucket: nothing to stage
    const int64_t key_begin = shape.begin(b);
    const int k = int(shape.size(b));
    int stride = 0;
    if constexpr (Staged) {
      __syncthreads();  // the previous bucket's searches are done with the staged keys
      stride = stage_padded_keys<Threads, Copies>(keys + key_begin, k, staged);
    }
    for (int t = lo; t < hi; t += tile) {
      before<Strict, T> preds[Items];
      int rank[Items];
      GSEARCH_UNROLL
      for (int i = 0; i < Items; ++i) {
        const int p = t + int(threadIdx.x) + i * Threads;
        preds[i].q = bucketed[p < hi ? p : hi - 1];
      }
      if constexpr (Staged) {
        const core::padded_accessor<T> acc{staged + warp_width};
        core::search_ranks<algorithm::pbs_cl, Items, Copies>(acc, k, preds, int(threadIdx.x) % warp_width, rank,
                                                             stride);
      } else {
        const core::bounded_accessor<T, key_traits<T>> acc{keys + key_begin, k};
        core::search_ranks<algorithm::binary, Items>(acc, k, preds, 0, rank);
      }
      GSEARCH_UNROLL
      for (int i = 0; i < Items; ++i) {
        const int p = t + int(threadIdx.x) + i * Threads;
        if (p < hi) out[position[p]] = Out(core::bucket_rank(shape, b, rank[i]) + offset);
      }
    }
  }
}

/// Enqueues the partitioned search of n queries in k keys on `stream` with configuration `cfg`
/// (tuning.hpp's partitioned_config, or a sweep's). Key lists of one bucket run the plain search.
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

  // Temporary memory, 16-byte aligned pieces: splitters, bucket ends, the scan's scratch, the
  // bucketed queries and their positions.
  auto round16 = [](int64_t bytes) { return (bytes + 15) / 16 * 16; };
  size_t scan_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<int*>(nullptr),
                                                   static_cast<int*>(nullptr), buckets, stream));
  const int64_t splitter_bytes = round16(m * int64_t(sizeof(T))), ends_bytes = round16(buckets * int64_t(sizeof(int)));
  const int64_t bucketed_bytes = round16(window * int64_t(sizeof(T)));
  const stream_buffer memory(stream, size_t(splitter_bytes + ends_bytes + round16(int64_t(scan_bytes)) +
                                            bucketed_bytes + window * int64_t(sizeof(int))));
  unsigned char* base = static_cast<unsigned char*>(memory.get());
  T* splitters = reinterpret_cast<T*>(base);
  int* ends = reinterpret_cast<int*>(base + splitter_bytes);
  void* scan_temp = base + splitter_bytes + ends_bytes;
  T* bucketed = reinterpret_cast<T*>(base + splitter_bytes + ends_bytes + round16(int64_t(scan_bytes)));
  int* position = reinterpret_cast<int*>(reinterpret_cast<unsigned char*>(bucketed) + bucketed_bytes);

  gather_splitters_kernel<<<(m + 255) / 256, 256, 0, stream>>>(keys, shape, splitters);
  GSEARCH_CUDA_CHECK_LAUNCH();

  constexpr int pt = partition_tile.threads, pi = partition_tile.items;
  auto count = partition_count_kernel<Strict, T, pt, pi>;
  auto scatter = partition_scatter_kernel<Strict, T, pt, pi>;
  const int64_t partition_smem = partition_shared_bytes<T>(m);
  allow_dynamic_shared(reinterpret_cast<const void*>(count), partition_smem, dev);
  allow_dynamic_shared(reinterpret_cast<const void*>(scatter), partition_smem, dev);

  constexpr int st = bucket_tile.threads, si = bucket_tile.items;
  const int copies = pbs_cl_copies<T>(shape.chunk, dev.max_shared_per_block);
  const bool staged = fits_shared<T>(shape.chunk, dev);
  auto search = !staged        ? bucket_search_kernel<false, Strict, T, Out, st, si, 1>
                : copies == 2 ? bucket_search_kernel<true, Strict, T, Out, st, si, 2>
                              : bucket_search_kernel<true, Strict, T, Out, st, si, 1>;
  const int64_t search_smem = staged ? staged_bytes<T>(shape.chunk, copies) : 0;
  allow_dynamic_shared(reinterpret_cast<const void*>(search), search_smem, dev);

  for (int64_t w0 = 0; w0 < n; w0 += window) {
    const int64_t wn = n - w0 < window ? n - w0 : window;
    const int64_t tiles = (wn + int64_t(pt) * pi - 1) / (int64_t(pt) * pi);
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(ends, 0, size_t(buckets) * sizeof(int), stream));
    count<<<grid_size(count, pt, partition_smem, tiles, dev), pt, size_t(partition_smem), stream>>>(
        splitters, m, queries + w0, wn, ends);
    GSEARCH_CUDA_CHECK_LAUNCH();
    GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, ends, ends, buckets, stream));
    scatter<<<grid_size(scatter, pt, partition_smem, tiles, dev), pt, size_t(partition_smem), stream>>>(
        splitters, m, queries + w0, wn, ends, bucketed, position);
    GSEARCH_CUDA_CHECK_LAUNCH();
    const int64_t segments = (wn + cfg.segment - 1) / cfg.segment;
    search<<<unsigned(segments), st, size_t(search_smem), stream>>>(keys, shape, ends, bucketed, position, int(wn),
                                                                   cfg.segment, out + w0, offset);
    GSEARCH_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace gsearch::cuda_backend
