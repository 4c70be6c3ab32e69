#pragma once
/// \file
/// The index-interval kernels (core/index_intervals.hpp has the step; launched from
/// src/index_intervals/cuda/index_intervals.cu). Every partition is stable: thread t owns the `Items` consecutive
/// elements t * Items ... of its block's range (a blocked arrangement), so an exclusive scan of
/// the threads' counts gives each element the counts of its class before it, and
/// core::three_way_destination its place; the CPU's partition is stable too, so both backends
/// leave the same array.
///
///  - improve_block_kernel: a piece of up to Threads x Items elements in ONE block, in shared
///    memory (the seed's Table 1 setting: one cell per element): load, splitter (thread 0),
///    compare, the fold of the counts (one block scan of (less, equal) packed in a word), scatter
///    into a second shared array, store; int arithmetic (a block's piece is far below 2^31). With Timed, thread 0 reads clock64 and %globaltimer after
///    the load and after the scatter's barrier (the compare, fold and scatter of every thread).
///  - larger pieces: choose_splitter_kernel (one thread) -> count_tiles_kernel (each tile's
///    counts) -> an inclusive scan of the tiles' counts (CUB) -> scatter_tiles_kernel (into a
///    scratch array) -> copied back.
///  - to_ordered_bits_kernel / from_ordered_bits_kernel around the segmented radix sort of
///    sort(), and lower_bound_kernel (one thread) for the boundary in a settled piece.

#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/index_intervals.hpp"
#include "index_intervals/backend.hpp"  // improve_clock

namespace gsearch::cuda_backend {

/// What an improve leaves in device memory for the host: the splitter and the counts.
template <class T>
struct improve_words {
  int64_t less;
  int64_t equal;
  T splitter;
};

/// Counts of the three-way classes, summed over tiles by the scan (int64: a piece may exceed 2^32).
/// (No member initializers: CUB keeps it in unions of its temporary storage.)
struct class_totals {
  int64_t less, equal;
  __host__ __device__ class_totals operator+(const class_totals& o) const { return {less + o.less, equal + o.equal}; }
};

/// The nanosecond clock of the device (%globaltimer).
__device__ inline int64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return int64_t(t);
}

/// One word per thread: its items' classes counted, packed (core::pack_counts).
template <int Items>
__device__ GSEARCH_FORCEINLINE uint64_t packed_classes(const uint8_t (&cls)[Items], int valid_items) {
  uint64_t less = 0, equal = 0;
  GSEARCH_UNROLL
  for (int j = 0; j < Items; ++j) {
    if (j < valid_items) {
      less += cls[j] == 0;
      equal += cls[j] == 1;
    }
  }
  return core::pack_counts(less, equal);
}

/// The one-block improve of data[0, n), n <= Threads * Items: dynamic shared memory of
/// 2 n sizeof(T) bytes (the piece and its partition). has_splitter: split by `splitter`, else by
/// core::choose_splitter. Writes *words; with Timed, *clock.
template <class T, int Threads, int Items, bool Timed>
__global__ void __launch_bounds__(Threads, 1)
    improve_block_kernel(T* __restrict__ data, int n, bool has_splitter, T splitter, improve_words<T>* __restrict__ words,
                         improve_clock* __restrict__ clock) {
  // Warp scans: 32 registers; the default raking scan of 64-bit words over 1024 threads took the
  // 64 registers a thread may have here and spilled 140 to 180 bytes (ptxas -v, sm_90).
  using scan_t = cub::BlockScan<uint64_t, Threads, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename scan_t::TempStorage scan_storage;
  __shared__ T split;
  extern __shared__ __align__(16) unsigned char improve_shared[];
  T* const piece = reinterpret_cast<T*>(improve_shared);
  T* const parts = piece + n;

  for (int i = threadIdx.x; i < n; i += Threads) piece[i] = data[i];
  __syncthreads();
  int64_t cycles0 = 0, ns0 = 0;
  if (Timed && threadIdx.x == 0) {
    ns0 = global_timer_ns();
    cycles0 = clock64();
  }
  if (threadIdx.x == 0) split = has_splitter ? splitter : core::choose_splitter([&](int i) { return piece[i]; }, n);
  __syncthreads();
  const T s = split;
  // Thread t's items are t * Items ...: counted, then (after the fold) classed again and written
  // to their places. Classing twice costs two compares, keeping the classes would cost Items
  // registers, which 1024 threads (64 registers each) do not have.
  const int first = int(threadIdx.x) * Items;
  const int valid_items = n - first;  // may be <= 0 or > Items
  int less_mine = 0, equal_mine = 0;
  GSEARCH_UNROLL
  for (int j = 0; j < Items; ++j) {
    if (j < valid_items) {
      const int c = core::three_way_class(piece[first + j], s);
      less_mine += c == 0;
      equal_mine += c == 1;
    }
  }
  uint64_t before, all;
  scan_t(scan_storage).ExclusiveSum(core::pack_counts(uint64_t(less_mine), uint64_t(equal_mine)), before, all);
  const int less = int(core::packed_less(all)), equal = int(core::packed_equal(all));
  int less_before = int(core::packed_less(before)), equal_before = int(core::packed_equal(before));
  GSEARCH_UNROLL
  for (int j = 0; j < Items; ++j) {
    if (j < valid_items) {
      const int i = first + j;
      const T x = piece[i];
      const int c = core::three_way_class(x, s);
      parts[core::three_way_destination<int>(c, i, less_before, equal_before, less, equal)] = x;
      less_before += c == 0;
      equal_before += c == 1;
    }
  }
  __syncthreads();
  if (Timed && threadIdx.x == 0) {
    clock->cycles = clock64() - cycles0;
    clock->ns = global_timer_ns() - ns0;
  }
  for (int i = threadIdx.x; i < n; i += Threads) data[i] = parts[i];
  if (threadIdx.x == 0) *words = {less, equal, s};
}

/// One thread: words->splitter = splitter, or the median of three of data[0, n).
template <class T>
__global__ void choose_splitter_kernel(const T* __restrict__ data, int64_t n, bool has_splitter, T splitter,
                                       improve_words<T>* __restrict__ words) {
  words->splitter = has_splitter ? splitter : core::choose_splitter([&](int64_t i) { return data[i]; }, n);
}

/// A tile of Threads x Items elements of data[0, n) in the blocked arrangement (coalesced loads,
/// transposed through shared memory), and the classes of its items against words->splitter.
template <class T, int Threads, int Items>
struct tile_classes {
  using load_t = cub::BlockLoad<T, Threads, Items, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  static constexpr int64_t tile = int64_t(Threads) * Items;

  T x[Items];
  uint8_t cls[Items];
  int valid_items;  // of this thread

  __device__ tile_classes(const T* data, int64_t n, int64_t t, T s, typename load_t::TempStorage& storage) {
    const int64_t base = t * tile;
    const int valid = int(n - base < tile ? n - base : tile);
    load_t(storage).Load(data + base, x, valid, s);
    valid_items = valid - int(threadIdx.x) * Items;
    GSEARCH_UNROLL
    for (int j = 0; j < Items; ++j) cls[j] = j < valid_items ? uint8_t(core::three_way_class(x[j], s)) : 0;
  }
};

/// counts[t] = tile t's class counts.
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    count_tiles_kernel(const T* __restrict__ data, int64_t n, const improve_words<T>* __restrict__ words,
                       class_totals* __restrict__ counts) {
  using tiles_t = tile_classes<T, Threads, Items>;
  using reduce_t = cub::BlockReduce<uint64_t, Threads>;
  __shared__ union {
    typename tiles_t::load_t::TempStorage load;
    typename reduce_t::TempStorage reduce;
  } storage;
  const int64_t t = blockIdx.x;
  const tiles_t tile(data, n, t, words->splitter, storage.load);
  __syncthreads();  // the load's storage is reused by the reduction
  const uint64_t sum = reduce_t(storage.reduce).Sum(packed_classes(tile.cls, tile.valid_items));
  if (threadIdx.x == 0) counts[t] = {core::packed_less(sum), core::packed_equal(sum)};
}

/// Writes tile t's elements to out at their places in the stable partition of data[0, n), from
/// the inclusive scan of the tiles' counts; block 0 also writes the totals to words.
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    scatter_tiles_kernel(const T* __restrict__ data, int64_t n, improve_words<T>* __restrict__ words,
                         const class_totals* __restrict__ inclusive, int64_t tiles, T* __restrict__ out) {
  using tiles_t = tile_classes<T, Threads, Items>;
  using scan_t = cub::BlockScan<uint64_t, Threads>;
  __shared__ union {
    typename tiles_t::load_t::TempStorage load;
    typename scan_t::TempStorage scan;
  } storage;
  const int64_t t = blockIdx.x;
  const tiles_t tile(data, n, t, words->splitter, storage.load);
  __syncthreads();
  uint64_t before;
  scan_t(storage.scan).ExclusiveSum(packed_classes(tile.cls, tile.valid_items), before);
  const class_totals total = inclusive[tiles - 1];
  const class_totals tile_before = t > 0 ? inclusive[t - 1] : class_totals{0, 0};
  int64_t less_before = tile_before.less + core::packed_less(before);
  int64_t equal_before = tile_before.equal + core::packed_equal(before);
  const int64_t first = t * tiles_t::tile + int64_t(threadIdx.x) * Items;
  GSEARCH_UNROLL
  for (int j = 0; j < Items; ++j) {
    if (j < tile.valid_items) {
      out[core::three_way_destination<int64_t>(tile.cls[j], first + j, less_before, equal_before, total.less, total.equal)] =
          tile.x[j];
      less_before += tile.cls[j] == 0;
      equal_before += tile.cls[j] == 1;
    }
  }
  if (t == 0 && threadIdx.x == 0) {
    words->less = total.less;
    words->equal = total.equal;
  }
}

/// bits[i] = core::ordered_bits(data[i]) (bits may alias data: same size, element by element).
template <class T>
__global__ void to_ordered_bits_kernel(const T* data, int64_t n, core::radix_bits_t<T>* bits) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    bits[i] = core::ordered_bits(data[i]);
}

/// data[i] = the element of bits[i].
template <class T>
__global__ void from_ordered_bits_kernel(const core::radix_bits_t<T>* __restrict__ bits, int64_t n, T* __restrict__ data) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    data[i] = core::from_ordered_bits<T>(bits[i]);
}

/// One thread: *out = the first position in [lo, hi) of sorted data not before v (hi if none).
template <class T>
__global__ void lower_bound_kernel(const T* __restrict__ data, int64_t lo, int64_t hi, T v, int64_t* __restrict__ out) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (key_less(data[mid], v)) lo = mid + 1;
    else hi = mid;
  }
  *out = lo;
}

}  // namespace gsearch::cuda_backend
