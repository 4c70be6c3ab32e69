#pragma once
/// \file
/// Partitioned search on the GPU (core/partition.hpp): key lists too large for shared memory,
/// searched in shared memory one bucket of keys at a time. For each window of queries:
///   1. partition_count_kernel   each of G blocks stages the splitters, finds the buckets of its
///                               tiles' queries (PBS-CL in shared memory), keeps each query's
///                               bucket (2 bytes) and writes how many fell in each bucket:
///                               counts[b][block];
///   2. cub::DeviceScan          over that bucket-major matrix: where each block's queries of
///                               each bucket go (the radix sort's upsweep / downsweep, so the
///                               scatter needs no global atomics); its column 0 is where each
///                               bucket's queries start;
///   3. partition_scatter_kernel the same blocks and tiles again: each tile is sorted by bucket
///                               in shared memory (a counting sort), then written out, each
///                               query and its position as one vector, to its block's run of
///                               its bucket, so that a warp's stores land on a few runs;
///   4. bucket_search_kernel     block i takes grouped slots [i S, (i + 1) S): for each bucket
///                               they hold, it stages the bucket's keys in shared memory and
///                               searches its queries with PBS-CL, writing each result at its
///                               query's position.
/// Windows of queries keep the grouped copy and the scattered results in L2 when the keys are
/// few, and bound the temporary memory. Instantiated in src/search/cuda/partitioned.cu; bench/ calls
/// launch_partitioned with other configurations to tune them.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <iterator>
#include <string>
#include <utility>

#include "cuda/check.cuh"
#include "cuda/scan.cuh"  // block_exclusive_scan
#include "cuda/stream_buffer.cuh"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/partition.hpp"
#include "gsearch/core/pary.hpp"
#include "search/cuda/search_kernel.cuh"
#include "search/tuning.hpp"
#include "search/tuning_partitioned.hpp"

namespace gsearch::cuda_backend {

/// A query of the grouped copy with its position in the window: one 8-byte (4-byte keys) or
/// 16-byte vector, so the scatter writes, and the bucket search reads, one access per query.
template <class T>
struct alignas(sizeof(T) >= 8 ? 16 : 8) grouped_query {
  T q;
  int32_t position;
};
static_assert(sizeof(grouped_query<int32_t>) == grouped_query_bytes(4) &&
              sizeof(grouped_query<int64_t>) == grouped_query_bytes(8), "tuning.hpp's sizes");

/// splitters[j] = keys[(j + 1) x chunk]: the compact copy that the partition kernels stage.
template <class T>
__global__ void gather_splitters_kernel(const T* __restrict__ keys, core::partition_shape shape,
                                        T* __restrict__ splitters, launch_gate gate) {
  if (gate.closed()) return;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < shape.splitters(); j += stride)
    splitters[j] = keys[shape.splitter_key(j)];
}

/// Shared memory of the count kernel: the m splitters padded for PBS-CL, then m + 1 counters.
template <class T>
constexpr int64_t count_shared_bytes(int64_t m) {
  static_assert(staged_bytes<T>(1000) + 1001 * 4 == partition_count_smem(int(sizeof(T)), 1000), "tuning.hpp's sizes");
  return partition_count_smem(int(sizeof(T)), m);
}

/// counts[b x gridDim.x + block] = the number of the block's queries in bucket b (b in [0, m]),
/// and bucket_of[j] = query j's bucket. Blocks take tiles grid-stride, as partition_scatter_kernel
/// does with the same grid. The splitter search is PBS-CL: the plain binary search's probes at
/// power-of-two distances fall on one bank (ncu: 8.8 shared wavefronts a warp-step at m = 1023).
template <bool Strict, class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    partition_count_kernel(const T* __restrict__ splitters, int m, const T* __restrict__ queries, int64_t n,
                           uint16_t* __restrict__ bucket_of, int* __restrict__ counts, launch_gate gate) {
  if (gate.closed()) return;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  int* counters = reinterpret_cast<int*>(shared_bytes + staged_bytes<T>(m));
  for (int b = threadIdx.x; b <= m; b += Threads) counters[b] = 0;
  stage_padded_keys<Threads, 1>(splitters, m, staged);  // (its barrier covers the counters too)
  const core::padded_accessor<T> acc{staged + warp_width};
  const int lane = int(threadIdx.x) % warp_width;
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile) {
    before<Strict, T> preds[Items];
    int bucket[Items];
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = begin + threadIdx.x + int64_t(i) * Threads;
      preds[i].q = queries[j < n ? j : n - 1];
    }
    core::bucket_n<Items, algorithm::pbs_cl>(acc, m, preds, bucket, lane);
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = begin + threadIdx.x + int64_t(i) * Threads;
      if (j < n) {
        bucket_of[j] = uint16_t(bucket[i]);
        atomicAdd(&counters[bucket[i]], 1);
      }
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b <= m; b += Threads) counts[int64_t(b) * gridDim.x + blockIdx.x] = counters[b];
}

/// Shared memory of the scatter kernel: a tile of grouped queries and their buckets, the block's
/// next slot per bucket, the tile's first local slot per bucket (buckets + 1).
template <class T, int Tile>
constexpr int64_t scatter_shared_bytes(int64_t buckets) {
  return partition_scatter_smem(int(sizeof(T)), Tile, buckets);
}

/// Writes every query of the window and its position into its bucket: first[b x gridDim.x +
/// block] is the block's first slot in bucket b (the scanned counts), and the block's queries of
/// a bucket fill its slots from there, tile by tile. Each tile is first sorted by bucket in
/// shared memory (ranks from shared atomics, then a scan of the tile's bucket counts), so that
/// consecutive threads write consecutive slots of a bucket's run. Within a bucket the order is
/// unspecified (each query carries its position).
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    partition_scatter_kernel(int buckets, const T* __restrict__ queries, const uint16_t* __restrict__ bucket_of,
                             int64_t n, const int* __restrict__ first, grouped_query<T>* __restrict__ grouped,
                             launch_gate gate) {
  if (gate.closed()) return;
  constexpr int tile = Threads * Items;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  grouped_query<T>* sorted = reinterpret_cast<grouped_query<T>*>(shared_bytes);
  uint16_t* sorted_bucket = reinterpret_cast<uint16_t*>(sorted + tile);
  int* next = reinterpret_cast<int*>(sorted_bucket + tile);  // (tile is even: 4-byte aligned)
  int* start = next + buckets;
  for (int b = threadIdx.x; b < buckets; b += Threads) next[b] = first[int64_t(b) * gridDim.x + blockIdx.x];
  // 4-byte keys: each tile's queries and buckets are read during the tile before (the loads'
  // latency and the barriers were the scatter's stalls; with the bucket search's prefetch, 0.5-4.6%
  // faster, perf-notes). 8-byte keys run 1024 threads, 64 registers, where the prefetched tile
  // spills: they load each tile in its turn.
  constexpr bool prefetch = sizeof(T) <= 4;
  T q[Items];
  int bucket[Items];
  auto load_tile = [&](int64_t at) {
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = at + threadIdx.x + int64_t(i) * Threads;
      if (j < n) {
        q[i] = queries[j];
        bucket[i] = bucket_of[j];
      }
    }
  };
  if constexpr (prefetch) load_tile(int64_t(blockIdx.x) * tile);
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile) {
    for (int b = threadIdx.x; b < buckets; b += Threads) start[b] = 0;
    __syncthreads();
    grouped_query<T> item[Items];
    int tile_bucket[Items], rank[Items];
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = begin + threadIdx.x + int64_t(i) * Threads;
      if (j < n) {
        if constexpr (!prefetch) {
          q[i] = queries[j];
          bucket[i] = bucket_of[j];
        }
        item[i] = {q[i], int32_t(j)};
        tile_bucket[i] = bucket[i];
        rank[i] = atomicAdd(&start[bucket[i]], 1);
      }
    }
    if constexpr (prefetch) load_tile(begin + int64_t(gridDim.x) * tile);
    __syncthreads();
    block_exclusive_scan<Threads>(start, buckets);
    __syncthreads();
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      if (begin + threadIdx.x + int64_t(i) * Threads < n) {
        const int s = start[tile_bucket[i]] + rank[i];
        sorted[s] = item[i];
        sorted_bucket[s] = uint16_t(tile_bucket[i]);
      }
    }
    __syncthreads();
    const int valid = n - begin < tile ? int(n - begin) : tile;
    for (int s = threadIdx.x; s < valid; s += Threads) {
      const int b = sorted_bucket[s];
      grouped[next[b] + (s - start[b])] = sorted[s];
    }
    __syncthreads();
    for (int b = threadIdx.x; b < buckets; b += Threads) next[b] += start[b + 1] - start[b];
    __syncthreads();
  }
}

/// Block i searches grouped slots [i x piece, (i + 1) x piece) (bucket b's queries are slots
/// [first[b x blocks], first[(b + 1) x blocks]), the last bucket's end n): for each bucket those
/// slots reach, Staged, the bucket's keys are staged in shared memory and searched with PBS-CL
/// (Copies replicas); else (chunks too large for shared memory) the binary search reads them
/// from global memory. out[position] = the query's rank + offset. A piece much smaller than
/// the buckets' query counts stages about one bucket; one larger meets several.
template <bool Staged, bool Strict, class T, class Out, int Threads, int Items, int Copies>
__global__ void __launch_bounds__(Threads)
    bucket_search_kernel(const T* __restrict__ keys, core::partition_shape shape, const int* __restrict__ first,
                         int blocks, const grouped_query<T>* __restrict__ grouped, int n, int piece,
                         Out* __restrict__ out, int offset, launch_gate gate) {
  if (gate.closed()) return;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  const int buckets = int(shape.buckets);
  const int lo = int(blockIdx.x) * piece;
  const int hi = n - lo < piece ? n : lo + piece;
  auto bucket_start = [&](int b) { return b < buckets ? first[int64_t(b) * blocks] : n; };
  // The bucket of slot lo: how many of buckets 1 .. buckets - 1 start at or before it (bucket 0
  // starts at 0), by a P-ary search of the whole block (core/pary.hpp, seeds/003): two
  // dependent reads of L2 for up to 16384 buckets, where a binary search takes 14.
  int64_t a = 0, e = buckets - 1;
  while (a < e) {
    const int64_t probe = core::pary_probe(a, e, int(threadIdx.x), Threads);
    core::pary_narrow(a, e, __syncthreads_count(bucket_start(int(probe) + 1) <= lo), Threads);
  }
  int b = int(a);
  constexpr int tile = Threads * Items;
  for (int b_begin = bucket_start(b); b_begin < hi; ++b) {
    const int b_end = bucket_start(b + 1);
    const int s0 = b_begin > lo ? b_begin : lo, s1 = b_end < hi ? b_end : hi;
    b_begin = b_end;
    if (s0 >= s1) continue;  // an empty bucket
    const int64_t key_begin = shape.begin(b);
    const int k = int(shape.size(b));
    int stride = 0;
    if constexpr (Staged) {
      __syncthreads();  // the previous bucket's searches are done with its keys
      stride = stage_padded_keys<Threads, Copies, true>(keys + key_begin, k, staged);
    }
    // 4-byte keys: the grouped queries of the next tile are read before this tile's search (the
    // reads' latency was the search's second stall, after the shared-memory steps); 8-byte keys'
    // 16-byte entries would spill at 64 registers, so they read each tile in its turn.
    constexpr bool prefetch = sizeof(T) <= 4;
    grouped_query<T> g[Items];
    auto load_tile = [&](int at) {
      GSEARCH_UNROLL
      for (int u = 0; u < Items; ++u) {
        const int p = at + int(threadIdx.x) + u * Threads;
        g[u] = grouped[p < s1 ? p : s1 - 1];
      }
    };
    if constexpr (prefetch) load_tile(s0);
    for (int t = s0; t < s1; t += tile) {
      if constexpr (!prefetch) load_tile(t);
      before<Strict, T> preds[Items];
      int position[Items], rank[Items];
      GSEARCH_UNROLL
      for (int u = 0; u < Items; ++u) {
        preds[u].q = g[u].q;
        position[u] = g[u].position;
      }
      if (prefetch && t + tile < s1) load_tile(t + tile);
      if constexpr (Staged) {
        const core::padded_accessor<T> acc{staged + warp_width};
        core::search_ranks<algorithm::pbs_cl, Items, Copies>(acc, k, preds, int(threadIdx.x) % warp_width, rank, stride);
      } else {
        const core::bounded_accessor<T, key_traits<T>> acc{keys + key_begin, k};
        core::search_ranks<algorithm::binary, Items>(acc, k, preds, 0, rank);
      }
      GSEARCH_UNROLL
      for (int u = 0; u < Items; ++u)
        if (t + int(threadIdx.x) + u * Threads < s1) out[position[u]] = Out(core::bucket_rank(shape, b, rank[u]) + offset);
    }
  }
}

/// What launch_partitioned decides before it enqueues anything (plan_partitioned): the buckets
/// (fit_partition: the device's shared memory, or the testing override, bounds their size and
/// count), the tile of the count and scatter kernels, their grid and shared memory, and the
/// temporary memory, which partitioned_temp_bytes reports without launching.
struct partition_plan {
  core::partition_shape shape;
  bool small_tile = false;  ///< the count and scatter kernels run partition_small_tile
  int grid = 0;             ///< blocks of the count and scatter kernels
  int64_t window = 0;       ///< queries grouped at a time
  int64_t count_smem = 0, scatter_smem = 0;
  int64_t cells = 0;        ///< the count matrix, buckets x grid
  size_t scan_bytes = 0;    ///< CUB's scan scratch
  /// Temporary memory, 16-byte aligned parts: splitters, the count matrix, the scan's scratch,
  /// the window's queries' buckets, the grouped queries.
  int64_t parts[5] = {};
  int64_t temp_bytes() const {
    int64_t t = 0;
    for (int64_t b : parts) t += b;
    return t;
  }
};

/// The grid, shared memory and temporary memory of the plan with count / scatter tiles of TT x TI.
template <bool Strict, int TT, int TI, class T>
void plan_tile(partition_plan& p, const device_limits& dev) {
  auto count = partition_count_kernel<Strict, T, TT, TI>;
  auto scatter = partition_scatter_kernel<T, TT, TI>;
  const int m = int(p.shape.splitters()), buckets = int(p.shape.buckets);
  p.count_smem = count_shared_bytes<T>(m);
  p.scatter_smem = scatter_shared_bytes<T, TT * TI>(buckets);
  allow_dynamic_shared(reinterpret_cast<const void*>(count), p.count_smem, dev);
  allow_dynamic_shared(reinterpret_cast<const void*>(scatter), p.scatter_smem, dev);
  // One grid for both partition kernels (the scatter replays the count's tiles): the blocks both
  // can keep resident, no more than the window's tiles.
  const int64_t window_tiles = (p.window + int64_t(TT) * TI - 1) / (int64_t(TT) * TI);
  const int resident = std::min(blocks_per_sm(reinterpret_cast<const void*>(count), TT, p.count_smem, dev),
                                blocks_per_sm(reinterpret_cast<const void*>(scatter), TT, p.scatter_smem, dev)) * dev.sms;
  p.grid = int(window_tiles < resident ? window_tiles : resident);
  p.cells = int64_t(buckets) * p.grid;
  GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, p.scan_bytes, static_cast<int*>(nullptr),
                                                   static_cast<int*>(nullptr), p.cells, cudaStream_t{}));
  auto round16 = [](int64_t bytes) { return (bytes + 15) / 16 * 16; };
  const int64_t parts[] = {round16(m * int64_t(sizeof(T))), round16(p.cells * 4), round16(int64_t(p.scan_bytes)),
                           round16(p.window * 2), p.window * int64_t(sizeof(grouped_query<T>))};
  std::copy(std::begin(parts), std::end(parts), std::begin(p.parts));
}

/// The plan of the partitioned search of n > 0 queries in k keys with configuration `cfg` and
/// count / scatter tiles of PT x PI (0: partition_tile, or partition_small_tile where the tuned
/// tile leaves too few buckets in the device's shared memory). shape.buckets == 1: the plain
/// search runs instead, and nothing else is planned.
template <bool Strict, int PT = 0, int PI = 0, class T>
partition_plan plan_partitioned(int64_t k, int64_t n, const device_limits& dev, const core::partition_config& cfg) {
  if (cfg.window < 1 || cfg.window > (int64_t{1} << 30) || cfg.piece < 1)
    throw invalid_argument("partition_config: window must be in [1, 2^30] and piece positive");
  if (cfg.max_buckets > partition_max_buckets)
    throw invalid_argument("partition_config: the GPU takes at most 16384 buckets (max_buckets)");
  constexpr int kb = int(sizeof(T));
  constexpr int pt = PT ? PT : partition_tile<kb>.threads;
  constexpr int pi = PI ? PI : partition_tile<kb>.items;
  constexpr bool may_shrink = PT == 0 && PI == 0;  // a sweep's explicit tile is kept
  constexpr int spt = partition_small_tile.threads, spi = partition_small_tile.items;
  const auto statics = [&](auto count, auto scatter) {
    return std::pair<int64_t, int64_t>{static_shared_bytes(reinterpret_cast<const void*>(count), dev),
                                       static_shared_bytes(reinterpret_cast<const void*>(scatter), dev)};
  };
  const auto [count_static, scatter_static] =
      statics(partition_count_kernel<Strict, T, pt, pi>, partition_scatter_kernel<T, pt, pi>);
  std::pair<int64_t, int64_t> small_statics{0, 0};
  if constexpr (may_shrink)
    small_statics = statics(partition_count_kernel<Strict, T, spt, spi>, partition_scatter_kernel<T, spt, spi>);
  const partition_fit fit =
      fit_partition(kb, k, dev.max_shared_per_block, cfg, int64_t(pt) * pi, may_shrink ? int64_t(spt) * spi : 0,
                    count_static, scatter_static, small_statics.first, small_statics.second);
  if (!fit.ok)
    throw invalid_argument("gsearch: algorithm::partitioned cannot run here: " +
                           std::to_string(dev.max_shared_per_block) +
                           " bytes of shared memory per block (device " + std::to_string(dev.device) +
                           ") do not hold the counters of two buckets; use algorithm::binary or index");
  partition_plan p;
  p.shape = fit.shape;
  p.small_tile = fit.small_tile;
  if (p.shape.buckets == 1) return p;
  p.window = n < cfg.window ? n : cfg.window;
  if constexpr (may_shrink) {
    if (p.small_tile) {
      plan_tile<Strict, spt, spi, T>(p, dev);
      return p;
    }
  }
  plan_tile<Strict, pt, pi, T>(p, dev);
  return p;
}

/// Enqueues the planned pipeline (plan.shape.buckets > 1) with count / scatter tiles of TT x TI and
/// the bucket search's ST x SI. The kernels do their work when `gate` is open (launch_gate.hpp;
/// CUB's scan of the count matrix runs either way, over whatever the matrix holds, and writes only
/// the matrix).
template <bool Strict, int TT, int TI, int ST, int SI, class T, class Out>
void run_partitioned(const partition_plan& p, cudaStream_t stream, int offset, const T* keys, const T* queries,
                     int64_t n, Out* out, const device_limits& dev, const core::partition_config& cfg,
                     launch_gate gate = {}) {
  auto count = partition_count_kernel<Strict, T, TT, TI>;
  auto scatter = partition_scatter_kernel<T, TT, TI>;
  const core::partition_shape& shape = p.shape;
  const int m = int(shape.splitters()), buckets = int(shape.buckets);
  const int piece = cfg.piece, grid = p.grid;
  const int64_t window = p.window;

  const int copies = pbs_cl_copies<T>(shape.chunk, dev.max_shared_per_block);
  const bool staged = fits_shared<T>(shape.chunk, dev);
  auto search = !staged        ? bucket_search_kernel<false, Strict, T, Out, ST, SI, 1>
                : copies == 2 ? bucket_search_kernel<true, Strict, T, Out, ST, SI, 2>
                              : bucket_search_kernel<true, Strict, T, Out, ST, SI, 1>;
  const int64_t search_smem = staged ? staged_bytes<T>(shape.chunk, copies) : 0;
  allow_dynamic_shared(reinterpret_cast<const void*>(search), search_smem, dev);
  // Raised here, in the function that launches them, though plan_tile raised them too: nvcc gives
  // each translation unit its own host stub of a template kernel (-static-global-template-stub),
  // and the linker may keep plan_tile's copy from another unit (a test's or a benchmark's that
  // plans too), whose stub is another kernel to the runtime. The launch then found its own
  // kernel at the 48 KB default (seen on the H100: 74,140 bytes asked, 44,896 allowed).
  allow_dynamic_shared(reinterpret_cast<const void*>(count), p.count_smem, dev);
  allow_dynamic_shared(reinterpret_cast<const void*>(scatter), p.scatter_smem, dev);

  const stream_buffer memory(stream, size_t(p.temp_bytes()));
  unsigned char* at = static_cast<unsigned char*>(memory.get());
  auto take = [&](int part) {
    unsigned char* q = at;
    at += p.parts[part];
    return q;
  };
  T* splitters = reinterpret_cast<T*>(take(0));
  int* first = reinterpret_cast<int*>(take(1));
  void* scan_temp = take(2);
  uint16_t* bucket_of = reinterpret_cast<uint16_t*>(take(3));
  grouped_query<T>* grouped = reinterpret_cast<grouped_query<T>*>(take(4));

  launch(gather_splitters_kernel<T>, (m + 255) / 256, 256, 0, stream, keys, shape, splitters, gate);
  for (int64_t w0 = 0; w0 < n; w0 += window) {
    const int64_t wn = n - w0 < window ? n - w0 : window;
    launch(count, grid, TT, p.count_smem, stream, splitters, m, queries + w0, wn, bucket_of, first, gate);
    size_t bytes = p.scan_bytes;
    GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp, bytes, first, first, p.cells, stream));
    GSEARCH_CUDA_CHECK_LAUNCH();  // (CUB returns what its launches report; this keeps its errors its own)
    try {
      launch(scatter, grid, TT, p.scatter_smem, stream, buckets, queries + w0, bucket_of, wn, first, grouped, gate);
    } catch (const cuda_error& e) {  // the shape, and what the runtime allows this kernel (see above)
      cudaFuncAttributes a{};
      cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(scatter));
      throw cuda_error(std::string("partition_scatter_kernel launch: ") + cudaGetErrorName(cudaError_t(e.code())) +
                           ": grid " + std::to_string(grid) + " x " + std::to_string(TT) + " threads, " +
                           std::to_string(p.scatter_smem) + " bytes of dynamic shared memory (allowed " +
                           std::to_string(a.maxDynamicSharedSizeBytes) + ", static " +
                           std::to_string(a.sharedSizeBytes) + ", " + std::to_string(a.numRegs) + " registers)",
                       e.code());
    }
    const int64_t pieces = (wn + piece - 1) / piece;
    launch(search, pieces, ST, search_smem, stream, keys, shape, first, grid, grouped, int(wn), piece, out + w0, offset,
           gate);
  }
}

/// Enqueues the partitioned search of n queries in k keys on `stream` with configuration `cfg`
/// (tuning.hpp's partitioned_config, or a sweep's) and the kernels' shapes (threads x queries per
/// thread: PT x PI for the count and scatter, ST x SI for the bucket search; 0 for tuning.hpp's
/// partition_tile and bucket_tile). The device's shared memory (dev.max_shared_per_block) bounds
/// the buckets: smaller buckets than cfg.chunk_bytes where those would not fit, fewer of them
/// where their counters would not (then the chunks grow, and past what shared memory stages the
/// bucket search reads global memory), and partition_small_tile where only it leaves room for the
/// counters (PT = PI = 0 only). Key lists of one bucket run the plain search. The kernels do their
/// work when `gate` is open.
template <bool Strict, int PT = 0, int PI = 0, int ST = 0, int SI = 0, class T, class Out>
void launch_partitioned(cudaStream_t stream, int offset, const T* keys, int64_t k, const T* queries, int64_t n,
                        Out* out, const device_limits& dev, const core::partition_config& cfg,
                        launch_gate gate = {}) {
  if (n == 0) return;
  const partition_plan p = plan_partitioned<Strict, PT, PI, T>(k, n, dev, cfg);
  if (p.shape.buckets == 1) {  // one bucket is the shared-memory search (or, huge chunks, global)
    return launch_search<algorithm::pbs_cl>(stream, Strict, offset, keys, k, queries, n, out, dev, gate);
  }
  constexpr int kb = int(sizeof(T));
  constexpr int pt = PT ? PT : partition_tile<kb>.threads;
  constexpr int pi = PI ? PI : partition_tile<kb>.items;
  constexpr int st = ST ? ST : bucket_tile.threads, si = SI ? SI : bucket_tile.items;
  if constexpr (PT == 0 && PI == 0) {
    if (p.small_tile) {
      constexpr int spt = partition_small_tile.threads, spi = partition_small_tile.items;
      return run_partitioned<Strict, spt, spi, st, si>(p, stream, offset, keys, queries, n, out, dev, cfg, gate);
    }
  }
  run_partitioned<Strict, pt, pi, st, si>(p, stream, offset, keys, queries, n, out, dev, cfg, gate);
}

}  // namespace gsearch::cuda_backend
