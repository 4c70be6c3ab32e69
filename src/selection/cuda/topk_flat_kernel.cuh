#pragma once
/// \file
/// The 1-D top-k and kthvalue pieces (a row too long for one block), and the sort of the k
/// outputs that both paths share. Given the threshold (the element of rank n - k or k - 1 that
/// cuda_backend::select found, in device memory):
///  - gather_beyond_kernel: one pass over the data (or over a planned select's first-level
///    candidates, which hold every element beyond the threshold when its plan says so: some 3%
///    of the data for k up to about n / 32); the elements strictly before the threshold
///    in the request's order (fewer than k) go straight to the outputs, the indices of the first
///    k elements equal to it (in any order) to a side list; a block claims its slots with one
///    atomic per counter and tile, after a block scan of its threads' counts;
///  - fill_ties_kernel: the slots after those, from the side list;
///  - first_equal_kernel: kthvalue's index, the lowest of an element equal to the value, by find's
///    early-exit scan (a block stops once a hit lies before its next tile).
/// And the sort of each row's k outputs (sorted = true): sort_rows_kernel for k up to
/// topk_block_sort_max_k (one block per row, cub::BlockRadixSort, stable: ties keep their
/// output order), else the radix keys written out (radix_keys_kernel) for cub's device sorts and
/// the values gathered back by index (gather_values_kernel).
/// Instantiated in src/cuda/topk.cu.

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "cuda/scan.cuh"  // scan_layout, unaligned_head, u64
#include "selection/cuda/planned_select.cuh"  // plan_done
#include "selection/cuda/topk_kernel.cuh"

namespace gsearch::cuda_backend {

/// Where gather_beyond_kernel reads, and whether it runs. The data itself (an element's index is
/// its position), or a planned select's first-level candidates (planned_select.cuh: their
/// positions in the data alongside, their count in device memory; every element beyond the
/// threshold is among them when the plan says so). A launch runs only when the plan (if any) is
/// done and, with first_even set, when *first_even == use_first: topk enqueues both sources and
/// exactly one works.
struct gather_source {
  const int64_t* positions = nullptr;  ///< the candidates' positions in the data; null: the data
  const int64_t* count = nullptr;      ///< the candidates' count (with positions)
  const int32_t* plan_status = nullptr;
  const int32_t* first_even = nullptr;
  bool use_first = false;
};

/// One pass of the 1-D top-k (see the file comment). counters[0]: elements before the threshold
/// so far (their slots), counters[1]: elements equal to it so far (their side-list slots; only
/// the first k are kept); both zero on entry. `source`: what it reads and whether it runs.
/// Tiles as find's scan_layout: tile 0 also holds the unaligned head, read by thread 0.
template <class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads)
    gather_beyond_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                         const T* __restrict__ threshold, core::radix_bits_t<T> flip, int64_t k,
                         T* __restrict__ values, int64_t* __restrict__ indices,
                         int64_t* __restrict__ tie_indices, u64* __restrict__ counters, gather_source source) {
  using K = core::radix_bits_t<T>;
  if (!plan_done(source.plan_status)) return;  // uniform: the threshold is a planned select's, which gave up
  if (source.first_even && (*source.first_even != 0) != source.use_first) return;  // the other source's turn
  if (source.count) layout.n = *source.count;  // the candidates (16-byte aligned: no head)
  constexpr int per_vector = 16 / int(sizeof(T));
  constexpr int items = Loads * per_vector;
  constexpr int head_max = per_vector - 1;
  static_assert(items <= 32, "item masks are 32 bits");
  // Counts per thread and block are packed in one word: before in the low half, equal in the high.
  static_assert(int64_t(Threads) * (items + head_max) < (1 << 16), "a block's counts fit 16 bits");
  using block_scan = cub::BlockScan<unsigned, Threads>;
  __shared__ typename block_scan::TempStorage scan_temp;
  __shared__ u64 block_base[2];
  const K t = core::radix_bits(*threshold) ^ flip;
  const int64_t tiles = layout.tiles();
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t body = layout.head + tile * layout.tile;
    // Item b of this thread: element body + (b / per_vector * Threads + thread) * per_vector + b % per_vector.
    const auto index = [&](int b) {
      return body + (int64_t(b / per_vector) * Threads + threadIdx.x) * per_vector + b % per_vector;
    };
    T x[items] = {};
    uint32_t before = 0, equal = 0, valid = ~0u;
    const bool full = body + layout.tile <= layout.n;
    if (full) {
      const uint4* v = reinterpret_cast<const uint4*>(data + body);
      uint4 raw[Loads];
      GSEARCH_UNROLL
      for (int u = 0; u < Loads; ++u) raw[u] = __ldcs(v + u * Threads + threadIdx.x);
      GSEARCH_UNROLL
      for (int u = 0; u < Loads; ++u) memcpy(x + u * per_vector, &raw[u], 16);
    }
    GSEARCH_UNROLL
    for (int b = 0; b < items; ++b) {
      if (!full) {
        const int64_t i = index(b);
        if (i < layout.n) x[b] = data[i];
        else valid &= ~(1u << b);
      }
      const K key = core::radix_bits(x[b]) ^ flip;
      before |= uint32_t(key < t) << b;
      equal |= uint32_t(key == t) << b;
    }
    uint32_t head_before = 0, head_equal = 0;  // tile 0's head, thread 0
    if (tile == 0 && threadIdx.x == 0)
      for (int64_t i = 0; i < layout.head; ++i) {
        const K key = core::radix_bits(data[i]) ^ flip;
        head_before |= uint32_t(key < t) << i;
        head_equal |= uint32_t(key == t) << i;
      }
    before &= valid;
    equal &= valid;
    const unsigned mine = unsigned(__popc(before) + __popc(head_before)) |
                          unsigned(__popc(equal) + __popc(head_equal)) << 16;
    if (!__syncthreads_or(mine != 0)) continue;  // most tiles: nothing to write, no scan
    unsigned offset, total;
    block_scan(scan_temp).ExclusiveSum(mine, offset, total);
    if (threadIdx.x == 0) {
      block_base[0] = (total & 0xffffu) ? atomicAdd(&counters[0], u64(total & 0xffffu)) : 0;
      block_base[1] = (total >> 16) ? atomicAdd(&counters[1], u64(total >> 16)) : 0;
    }
    __syncthreads();  // block_base is read below and rewritten only after the next tile's barrier
    u64 slot = block_base[0] + (offset & 0xffffu), tie = block_base[1] + (offset >> 16);
    const auto emit = [&](T value, int64_t at, bool is_before, bool is_equal) {
      const int64_t i = source.positions ? source.positions[at] : at;
      if (is_before) {
        if (slot < u64(k)) {  // always, for a correct threshold: fewer than k are before it
          values[slot] = value;
          indices[slot] = i;
        }
        ++slot;
      } else if (is_equal) {
        if (tie < u64(k)) tie_indices[tie] = i;
        ++tie;
      }
    };
    for (int64_t i = 0; i < 3; ++i)
      if ((head_before | head_equal) >> i & 1u) emit(data[i], i, head_before >> i & 1u, head_equal >> i & 1u);
    GSEARCH_UNROLL
    for (int b = 0; b < items; ++b)
      if ((before | equal) >> b & 1u) emit(x[b], index(b), before >> b & 1u, equal >> b & 1u);
  }
}

/// Slots [counters[0], k) of the 1-D top-k: the side list's first elements equal to the
/// threshold (there are at least k - counters[0] of them), with their own values; plan_status as
/// gather_beyond_kernel's.
template <class T>
__global__ void fill_ties_kernel(const T* __restrict__ data, int64_t k, const u64* __restrict__ counters,
                                 const int64_t* __restrict__ tie_indices, T* __restrict__ values,
                                 int64_t* __restrict__ indices, const int32_t* __restrict__ plan_status) {
  if (!plan_done(plan_status)) return;  // the side list is only complete for the true threshold
  const int64_t before = int64_t(counters[0]);
  for (int64_t j = before + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < k;
       j += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = tie_indices[j - before];
    indices[j] = i;
    values[j] = data[i];
  }
}

/// *result = the lowest i with data[i] equal to *value in the key order (NaN equals NaN), by
/// atomicMin on the index's unsigned bits; *result = no_match (all ones) on entry. Tiles of
/// Threads x Items consecutive elements in increasing order per block; at each tile thread 0
/// reads the best hit so far and the block leaves once it lies before the tile (two shared words
/// on alternate tiles, as find's scan_kernel, so a slow reader never sees the next tile's word).
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    first_equal_kernel(const T* __restrict__ data, int64_t n, const T* __restrict__ value,
                       u64* __restrict__ result) {
  using K = core::radix_bits_t<T>;
  __shared__ u64 best[2];
  const K wanted = core::radix_bits(*value);
  constexpr int64_t tile = int64_t(Threads) * Items;
  const int64_t tiles = (n + tile - 1) / tile;
  int parity = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, parity ^= 1) {
    const int64_t begin = t * tile;
    if (threadIdx.x == 0) best[parity] = *const_cast<volatile u64*>(result);
    __syncthreads();
    if (best[parity] < u64(begin)) return;  // uniform: every thread read the same word
    T x[Items] = {};
    GSEARCH_UNROLL
    for (int u = 0; u < Items; ++u) {
      const int64_t i = begin + int64_t(u) * Threads + threadIdx.x;
      if (i < n) x[u] = data[i];
    }
    GSEARCH_UNROLL
    for (int u = 0; u < Items; ++u) {
      const int64_t i = begin + int64_t(u) * Threads + threadIdx.x;
      if (i < n && core::radix_bits(x[u]) == wanted) {
        atomicMin(result, u64(i));  // this thread's lowest hit in the tile
        break;
      }
    }
  }
}

/// Sorts each row's k outputs (values / indices + row * k; k <= Threads * Items) by core::radix_bits ^
/// flip, smallest first, one block per row. Stable (cub's block radix sort), so equal values keep
/// their output order (index order from the row kernel). The slots past k hold the largest key
/// and sort after every real one (stable: a real key of all ones stays before them). Every read
/// of a row's old outputs precedes the barrier, every write follows it.
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    sort_rows_kernel(T* __restrict__ values, int64_t* __restrict__ indices, int64_t rows, int k,
                     core::radix_bits_t<T> flip) {
  using K = core::radix_bits_t<T>;
  using block_sort = cub::BlockRadixSort<K, Threads, Items, int>;
  __shared__ typename block_sort::TempStorage sort_temp;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* row_values = values + r * k;
    int64_t* row_indices = indices + r * k;
    K keys[Items];
    int slots[Items];
    GSEARCH_UNROLL
    for (int j = 0; j < Items; ++j) {  // blocked: thread t holds slots t * Items + j
      const int s = int(threadIdx.x) * Items + j;
      keys[j] = s < k ? core::radix_bits(row_values[s]) ^ flip : ~K(0);
      slots[j] = s;
    }
    __syncthreads();  // the previous row's sort is done with sort_temp
    block_sort(sort_temp).SortBlockedToStriped(keys, slots);
    T v[Items];
    int64_t ix[Items];
    GSEARCH_UNROLL
    for (int j = 0; j < Items; ++j) {  // striped: sorted position j * Threads + t
      const int p = j * Threads + int(threadIdx.x);
      if (p < k) {
        v[j] = row_values[slots[j]];
        ix[j] = row_indices[slots[j]];
      }
    }
    __syncthreads();  // every old output read before any is overwritten
    GSEARCH_UNROLL
    for (int j = 0; j < Items; ++j) {
      const int p = j * Threads + int(threadIdx.x);
      if (p < k) {
        row_values[p] = v[j];
        row_indices[p] = ix[j];
      }
    }
  }
}

/// keys[j] = core::radix_bits(values[j]) ^ flip, copies[j] = indices[j], j < n: the inputs of cub's
/// device sorts (k beyond the block sorts).
template <class T>
__global__ void radix_keys_kernel(const T* __restrict__ values, const int64_t* __restrict__ indices,
                                  int64_t n, core::radix_bits_t<T> flip, core::radix_bits_t<T>* __restrict__ keys,
                                  int64_t* __restrict__ copies) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += int64_t(gridDim.x) * blockDim.x) {
    keys[j] = core::radix_bits(values[j]) ^ flip;
    copies[j] = indices[j];
  }
}

/// values[j] = data[(j / k) * cols + indices[j]], j < n = rows * k: the sorted indices' values.
template <class T>
__global__ void gather_values_kernel(const T* __restrict__ data, int64_t cols, int64_t k, int64_t n,
                                     const int64_t* __restrict__ indices, T* __restrict__ values) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += int64_t(gridDim.x) * blockDim.x)
    values[j] = data[(j / k) * cols + indices[j]];
}

}  // namespace gsearch::cuda_backend
