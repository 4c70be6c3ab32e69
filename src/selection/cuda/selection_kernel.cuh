#pragma once
/// \file
/// The select kernels (core/selection.hpp describes the algorithm): the one-block sort of a
/// sample (or of a whole small input) on the keys' order-preserving bits, the bucket pass (the one
/// full read of the data: a histogram over the splitters' buckets and the copy-out of the
/// candidate buckets), and the small kernels of the sorting fallback. The bucket of an element is
/// core::select_bucket, as on the CPU. Launched from src/cuda/select.cu.

#include <cub/block/block_radix_sort.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/select_plan.hpp"
#include "gsearch/core/selection.hpp"
#include "cuda/scan.cuh"  // scan_layout, unaligned_head, u64
#include "selection/tuning.hpp"

namespace gsearch::cuda_backend {

/// The one-block radix sort of the sample kernel: its type and the dynamic shared memory it needs
/// (the CUB temporary storage, then the sorted keys in the same bytes).
template <class T, int Threads, int Items>
struct sample_sort {
  using sort_t = cub::BlockRadixSort<core::radix_bits_t<T>, Threads, Items>;
  static constexpr size_t keys_bytes = size_t(Threads) * Items * sizeof(core::radix_bits_t<T>);
  static constexpr size_t shared_bytes = sizeof(typename sort_t::TempStorage) > keys_bytes
                                             ? sizeof(typename sort_t::TempStorage)
                                             : keys_bytes;
};

/// One block: sorts the s <= Threads * Items elements of data at core::sample_position(i, s, n)
/// (all of data when s == n), writes splitters[j] = sorted[index[j]] for j < m, and the whole
/// sorted sample to `sorted` when it is not null. Elements past s are padded with the largest
/// bits, which sort last and are never read back.
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads, 1)
    sort_sample_kernel(const T* __restrict__ data, int64_t n, int s, const int32_t* __restrict__ index,
                       int m, T* __restrict__ splitters, T* __restrict__ sorted) {
  using U = core::radix_bits_t<T>;
  using sorter = sample_sort<T, Threads, Items>;
  extern __shared__ __align__(16) unsigned char sort_shared[];
  U keys[Items];
  GSEARCH_UNROLL
  for (int k = 0; k < Items; ++k) {
    const int i = int(threadIdx.x) * Items + k;  // blocked: thread t holds sample t * Items ...
    keys[k] = i < s ? core::radix_bits(data[core::sample_position(i, s, n)]) : ~U(0);
  }
  typename sorter::sort_t(*reinterpret_cast<typename sorter::sort_t::TempStorage*>(sort_shared)).Sort(keys);
  __syncthreads();  // the temporary storage is read no more: the sorted keys go in its place
  U* staged = reinterpret_cast<U*>(sort_shared);
  GSEARCH_UNROLL
  for (int k = 0; k < Items; ++k) staged[int(threadIdx.x) * Items + k] = keys[k];
  __syncthreads();
  for (int j = threadIdx.x; j < m; j += Threads) splitters[j] = core::from_radix_bits<T>(staged[index[j]]);
  if (sorted)
    for (int i = threadIdx.x; i < s; i += Threads) sorted[i] = core::from_radix_bits<T>(staged[i]);
}

/// Adds one element of bucket b (-1: none) to a shared histogram; every lane of the warp calls it.
/// Lanes with the same bucket are counted by one atomic of their lowest lane: on skewed data
/// (most elements in one bucket) a plain atomic per lane would serialise the warp on one address.
__device__ GSEARCH_FORCEINLINE void add_to_histogram(uint32_t* hist, int b) {
  const unsigned peers = __match_any_sync(0xffffffffu, b);
  if (b >= 0 && int(threadIdx.x % 32) == __ffs(int(peers)) - 1) atomicAdd(hist + b, uint32_t(__popc(peers)));
}

/// The most splitters sample_select_kernel finds at once (its shared histograms: 8 KB).
inline constexpr int sample_select_max_targets = 8;

/// One block: the same sample as sort_sample_kernel (the s <= Threads * Items elements of data at
/// core::sample_position(i, s, n)), but only m <= sample_select_max_targets of its order
/// statistics: splitters[j] = the index[j]-th smallest (from 0). A radix select on the keys'
/// bits, 8 bits a round from the top, every j at once: a round histograms, for each j, the digit
/// of the elements that share j's prefix so far, and warp j finds the digit that holds j's rank.
/// Four rounds for 4-byte keys where the block sort runs eight 4-bit passes and a scan of the
/// whole block per pass (the sort took 40-53 us of a 2^26 select's 355 us on the H100).
template <class T, int Threads, int Items>
__device__ void sample_select_block(const T* __restrict__ data, int64_t n, int s, const int32_t* __restrict__ index,
                                    int m, T* __restrict__ splitters) {
  using U = core::radix_bits_t<T>;
  constexpr int digit_bits = 8, digits = 1 << digit_bits, key_bits = 8 * int(sizeof(U));
  constexpr int targets = sample_select_max_targets;
  static_assert(Threads / 32 >= targets, "one warp per target finds its digit");
  __shared__ uint32_t hist[targets][digits];
  __shared__ U prefix[targets];         // the bits of j's element found so far (above the round's digit)
  __shared__ uint32_t remaining[targets];  // j's rank among the elements that share that prefix
  U keys[Items];
  uint32_t valid = 0;
  GSEARCH_UNROLL
  for (int k = 0; k < Items; ++k) {
    const int i = int(threadIdx.x) * Items + k;
    keys[k] = i < s ? core::radix_bits(data[core::sample_position(i, s, n)]) : U(0);
    valid |= uint32_t(i < s) << k;
  }
  if (int(threadIdx.x) < m) {
    prefix[threadIdx.x] = 0;
    remaining[threadIdx.x] = uint32_t(index[threadIdx.x]);
  }
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  for (int shift = key_bits - digit_bits; shift >= 0; shift -= digit_bits) {
    for (int i = threadIdx.x; i < targets * digits; i += Threads) (&hist[0][0])[i] = 0;
    __syncthreads();  // the histograms are zero; prefix and remaining are the last round's
    for (int t = 0; t < m; ++t) {
      const U high = shift + digit_bits < key_bits ? U(prefix[t] >> (shift + digit_bits)) : U(0);
      GSEARCH_UNROLL
      for (int k = 0; k < Items; ++k) {
        const bool match = (valid >> k & 1) &&
                           (shift + digit_bits >= key_bits || U(keys[k] >> (shift + digit_bits)) == high);
        add_to_histogram(hist[t], match ? int(keys[k] >> shift) & (digits - 1) : -1);
      }
    }
    __syncthreads();  // the round's histograms are complete
    if (warp < m) {  // warp t: the digit in which t's rank falls; lane l holds digits 8l .. 8l + 7
      const int t = warp;
      const uint32_t r = remaining[t];
      uint32_t c[digits / 32], sum = 0;
      GSEARCH_UNROLL
      for (int b = 0; b < digits / 32; ++b) sum += c[b] = hist[t][lane * (digits / 32) + b];
      const uint32_t inclusive = warp_inclusive_sum(sum);
      __syncwarp();  // every lane has read remaining[t] before one lane rewrites it
      uint32_t before = inclusive - sum;
      if (r >= before && r < inclusive) {  // exactly one lane: r is a rank among the counted
        int d = -1;
        GSEARCH_UNROLL
        for (int b = 0; b < digits / 32; ++b) {
          if (d >= 0) continue;
          if (r < before + c[b]) d = lane * (digits / 32) + b;
          else before += c[b];
        }
        prefix[t] |= U(d) << shift;
        remaining[t] = r - before;
      }
    }
    __syncthreads();  // prefix and remaining are final for the round
  }
  if (int(threadIdx.x) < m) splitters[threadIdx.x] = core::from_radix_bits<T>(prefix[threadIdx.x]);
}

template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads, 1)
    sample_select_kernel(const T* __restrict__ data, int64_t n, int s, const int32_t* __restrict__ index,
                         int m, T* __restrict__ splitters) {
  sample_select_block<T, Threads, Items>(data, n, s, index, m, splitters);
}

/// sample_select_kernel for a planned level (core/select_plan.hpp): its size, sample and
/// splitters (or, on the final level, its ranks) from the plan in device memory; nothing once
/// the plan is done or has given up.
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads, 1)
    planned_sample_select_kernel(const T* __restrict__ data, const core::select_level<T>* __restrict__ plan,
                                 T* __restrict__ splitters) {
  if (plan->status != int32_t(core::plan_status::running)) return;  // uniform
  sample_select_block<T, Threads, Items>(data, plan->n, plan->s, plan->index, plan->m, splitters);
}

/// One tile of a scan_layout as one thread holds it: Loads 16-byte vectors, vector u of thread t
/// being vector u * Threads + t of the tile (each load instruction of a warp reads 512
/// contiguous bytes), and which of the items exist (the last tile is partial). Tile 0's head
/// (the elements before the first 16-byte boundary) is not in it: for_each_head_element.
template <class T, int Threads, int Loads>
struct tile_items {
  static constexpr int per_vector = 16 / int(sizeof(T));
  static constexpr int items = Loads * per_vector;
  static_assert(items <= 32, "valid holds one bit per item");
  T x[items];
  uint32_t valid = 0;

  /// Element index of item j of a tile whose body starts at `body`.
  __device__ static int64_t index(int64_t body, int j) {
    return body + (int64_t(j / per_vector) * Threads + threadIdx.x) * per_vector + j % per_vector;
  }

  /// Streamed: every element is read once (__ldcs, evict first) unless Cached.
  template <bool Cached = false>
  __device__ void load(const T* __restrict__ data, const scan_layout<T, Threads, Loads>& layout,
                       int64_t t) {
    const int64_t body = layout.head + t * layout.tile;
    if (body + layout.tile <= layout.n) {
      const uint4* v = reinterpret_cast<const uint4*>(data + body);
      uint4 raw[Loads];
      GSEARCH_UNROLL
      for (int u = 0; u < Loads; ++u)
        raw[u] = Cached ? v[u * Threads + threadIdx.x] : __ldcs(v + u * Threads + threadIdx.x);
      GSEARCH_UNROLL
      for (int u = 0; u < Loads; ++u) memcpy(x + u * per_vector, &raw[u], 16);
      valid = items == 32 ? ~0u : (1u << items) - 1;
    } else {
      valid = 0;
      GSEARCH_UNROLL
      for (int j = 0; j < items; ++j) {
        const int64_t i = index(body, j);
        if (i < layout.n) {
          x[j] = data[i];
          valid |= 1u << j;
        } else {
          x[j] = T(0);
        }
      }
    }
  }
};

/// The full tiles of a scan_layout brought into shared memory ahead of their use, Stages - 1
/// tiles of a thread in flight while it works on one (cp.async: no register holds the bytes
/// while they travel, so the bytes in flight do not depend on the warps the registers allow; a
/// pass that loaded its tile into registers and then worked on it kept DRAM at 58% of its peak,
/// ncu on the H200, docs/perf-notes.md). Each thread copies its own Loads vectors of a tile into
/// its own slots and reads back only those, so no barrier is needed: its cp.async.wait_group
/// orders its copies before its reads, and a stage is refilled only after the thread's reads of
/// it were used. A partial tile (the last) is loaded directly. Tile t of the thread's i-th turn
/// lives in stage i % Stages: fetch the tile Stages - 1 turns ahead, then take this one.
template <class T, int Threads, int Loads, int Stages>
struct tile_ring {
  using view_t = tile_items<T, Threads, Loads>;
  using layout_t = scan_layout<T, Threads, Loads>;
  static_assert(Stages >= 2, "a stage in use and one in flight at the least");
  /// The shared memory the ring takes (16-byte aligned).
  static constexpr int64_t bytes = int64_t(Stages) * Loads * Threads * 16;
  uint4* slots;        ///< this thread's first vector: stage s, vector u at slots[(s * Loads + u) * Threads]
  unsigned to;         ///< the same as a shared-window address (cp.async's)
  const uint4* from;   ///< this thread's first vector of tile 0 (16-byte aligned: the layout's body)
  int64_t full_tiles;  ///< the layout's tiles before the partial one
  uint64_t policy;     ///< L2 evict-first: each element is read once

  __device__ tile_ring(void* shared, const T* data, const layout_t& layout)
      : slots(static_cast<uint4*>(shared) + threadIdx.x),
        to(unsigned(__cvta_generic_to_shared(slots))),
        from(reinterpret_cast<const uint4*>(data + layout.head) + threadIdx.x),
        full_tiles(layout.n > layout.head ? (layout.n - layout.head) / layout.tile : 0) {
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  }
  /// Starts tile t's copy into `stage` when it is a full tile of the layout; always one group.
  /// The stage's address is chosen among per-thread values (stage_to), not a per-thread address
  /// plus the stage's offset: where ptxas (CUDA 13.0) kept that offset in a uniform register it
  /// encoded the LDGSTS with it and the cache policy together, a form whose policy register
  /// nothing writes (scripts/device/sass_desc_check.py finds it), and the 4-slot radix pass ended
  /// in cudaErrorIllegalInstruction on the H200 (issue 41, 969230d), as radix_probe's own ring
  /// kernels had before. Without the cache hint the copy the select's first pass writes no longer
  /// stayed in L2 for the second: one rank of 2^26 took ~9 us more (20945d5).
  __device__ void fetch(int64_t t, int stage) {
    if (t < full_tiles) {
      const uint4* v = from + t * (Loads * Threads);
      GSEARCH_UNROLL
      for (int u = 0; u < Loads; ++u)
        asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(
                         stage_to(stage) + unsigned(u * Threads * 16)),
                     "l"(v + u * Threads), "l"(policy)
                     : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  /// This thread's first slot of `stage` as a shared-window address, chosen among per-thread
  /// values rather than added to: see fetch.
  __device__ unsigned stage_to(int stage) const {
    unsigned at = to;
    GSEARCH_UNROLL
    for (int s = 1; s < Stages; ++s) at = stage == s ? to + unsigned(s * Loads * Threads * 16) : at;
    return at;
  }
  /// Item j of this thread's part of the tile in `stage` (a full tile's, once taken).
  __device__ T item(int stage, int j) const {
    return reinterpret_cast<const T*>(slots + (stage * Loads + j / view_t::per_vector) * Threads)[j % view_t::per_vector];
  }
  /// Tile t, fetched into `stage` Stages - 1 groups ago, into view (waits for that group).
  __device__ void take(view_t& view, const T* __restrict__ data, const layout_t& layout, int64_t t, int stage) {
    asm volatile("cp.async.wait_group %0;" ::"n"(Stages - 1) : "memory");
    if (t < full_tiles) {
      GSEARCH_UNROLL
      for (int u = 0; u < Loads; ++u) {
        const uint4 raw = slots[(stage * Loads + u) * Threads];
        memcpy(view.x + u * view_t::per_vector, &raw, 16);
      }
      view.valid = view_t::items == 32 ? ~0u : (1u << view_t::items) - 1;
    } else {
      view.load(data, layout, t);
    }
  }
};

/// How the bucket pass counts (select_register_splitters chooses).
enum class bucket_counting {
  registers,  ///< per-thread counters of the 2m + 1 <= 2 * select_register_splitters + 1 buckets
  shared,     ///< a shared-memory histogram, warp-aggregated atomics
};


/// The shared memory of bucket_pass_kernel for m splitters: the splitters, the block's histogram
/// of the 2m + 1 buckets, and which buckets are copied out.
template <class T>
struct bucket_pass_shared {
  int m;
  __host__ __device__ size_t hist_offset() const { return (size_t(m) * sizeof(T) + 15) / 16 * 16; }
  __host__ __device__ size_t copy_offset() const { return hist_offset() + size_t(2 * m + 1) * 4; }
  __host__ __device__ size_t bytes() const { return copy_offset() + size_t(2 * m + 1); }
};

/// The bucket pass over data[0, n): hist[b] += the elements of bucket b (core::select_bucket over
/// the m splitters, sorted), and the elements of the buckets with copy[b] != 0 appended to
/// candidates[0, capacity) in any order (and, when candidate_indices is not null, their positions
/// in data to it), *candidate_count counting them all (past the capacity too: an overflow is seen,
/// and nothing is written past it). `copying` false: no bucket is
/// copied (the counting passes of partition and of NaNs). Tiles grid-stride; per tile, the
/// copied elements take one global atomic (the block's count) and are written at their rank in
/// the block's exclusive scan. The block's histogram (32-bit: the launch gives no block more
/// than 2^31 elements) is added to hist at the end.
template <class T, int Threads, int Loads, bucket_counting Counting>
__device__ void bucket_pass_block(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                                  const T* __restrict__ splitters, int m, const uint8_t* __restrict__ copy,
                                  bool copying, u64* __restrict__ hist, T* __restrict__ candidates,
                                  int64_t* __restrict__ candidate_indices, int64_t capacity,
                                  u64* __restrict__ candidate_count) {
  constexpr int warps = Threads / 32;
  constexpr int register_buckets = 2 * select_register_splitters + 1;
  using view_t = tile_items<T, Threads, Loads>;
  extern __shared__ __align__(16) unsigned char pass_shared[];
  const bucket_pass_shared<T> shape{m};
  T* const s = reinterpret_cast<T*>(pass_shared);
  uint32_t* const block_hist = reinterpret_cast<uint32_t*>(pass_shared + shape.hist_offset());
  uint8_t* const copy_s = pass_shared + shape.copy_offset();
  __shared__ int warp_copies[2][warps];  // alternate tiles: no barrier before rewriting them
  __shared__ u64 tile_base[2];
  const int buckets = 2 * m + 1, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int i = threadIdx.x; i < m; i += Threads) s[i] = splitters[i];
  for (int b = threadIdx.x; b < buckets; b += Threads) {
    block_hist[b] = 0;
    copy_s[b] = copying ? copy[b] : 0;
  }
  __syncthreads();
  const auto split = [&](int i) { return s[i]; };
  // bucket_counting::registers: the splitters' radix bits, and for each splitter k the elements
  // at or above it and those strictly above it; the bucket counts are differences of these (see
  // the end). An element costs its radix bits and 2m integer compares, where a binary search of
  // the splitters in the key order (NaN tests and all) made the pass compute-bound: 206 us for a
  // 2^26 float32 read of 90 us on the H100 (docs/perf-notes.md).
  using U = core::radix_bits_t<T>;
  constexpr int R = select_register_splitters;
  U split_bits[R];
  uint32_t at_or_above[R] = {}, above[R] = {}, counted = 0, copy_mask = 0;
  if constexpr (Counting == bucket_counting::registers) {
    GSEARCH_UNROLL
    for (int k = 0; k < R; ++k) split_bits[k] = k < m ? core::radix_bits(s[k]) : U(0);
    for (int b = 0; b < buckets; ++b) copy_mask |= uint32_t(copy_s[b]) << b;
  }

  // Tile 0's head, by thread 0 of the block that takes tile 0: at most 3 elements.
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (int64_t i = 0; i < layout.head; ++i) {
      const int b = core::select_bucket(split, m, data[i]);
      atomicAdd(block_hist + b, 1u);
      if (copy_s[b]) {
        const u64 at = atomicAdd(candidate_count, 1ull);
        if (int64_t(at) < capacity) {
          candidates[at] = data[i];
          if (candidate_indices) candidate_indices[at] = i;
        }
      }
    }
  }
  const int64_t tiles = layout.tiles();
  int parity = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, parity ^= 1) {
    view_t view;
    view.load(data, layout, t);
    uint32_t copied = 0;  // bit j: item j goes to the candidates
    GSEARCH_UNROLL
    for (int j = 0; j < view_t::items; ++j) {
      const bool here = view.valid >> j & 1;
      if constexpr (Counting == bucket_counting::registers) {
        if (!here) continue;
        // core::select_bucket's bucket from the counts: le splitters <= x, lt of them < x; x
        // equals a splitter (the last of its equal run, s[le - 1]) exactly when le > lt.
        const U u = core::radix_bits(view.x[j]);
        int le = 0, lt = 0;
        GSEARCH_UNROLL
        for (int k = 0; k < R; ++k) {
          if (k >= m) break;  // uniform
          const uint32_t a = split_bits[k] <= u, b = split_bits[k] < u;
          at_or_above[k] += a;
          above[k] += b;
          le += int(a);
          lt += int(b);
        }
        ++counted;
        const int b = 2 * le - int(le > lt);
        copied |= (copy_mask >> b & 1u) << j;
      } else {
        const int b = here ? core::select_bucket(split, m, view.x[j]) : -1;
        add_to_histogram(block_hist, b);
        if (b >= 0) copied |= uint32_t(copy_s[b]) << j;
      }
    }
    if (!copying) continue;  // uniform: no barrier below is skipped by some threads only
    // The tile's copies: an exclusive scan over the block, one global atomic for its base.
    const int mine = __popc(copied);
    const int inclusive = warp_inclusive_sum(mine);
    if (lane == 31) warp_copies[parity][warp] = inclusive;
    __syncthreads();
    if (threadIdx.x == 0) {
      int total = 0;
      for (int w = 0; w < warps; ++w) total += warp_copies[parity][w];
      tile_base[parity] = total > 0 ? atomicAdd(candidate_count, u64(total)) : 0;
    }
    __syncthreads();
    if (copied) {
      int64_t at = int64_t(tile_base[parity]) + inclusive - mine;
      for (int w = 0; w < warp; ++w) at += warp_copies[parity][w];
      GSEARCH_UNROLL
      for (int j = 0; j < view_t::items; ++j)
        if (copied >> j & 1) {
          if (at < capacity) {
            candidates[at] = view.x[j];
            if (candidate_indices) candidate_indices[at] = view_t::index(layout.head + t * layout.tile, j);
          }
          ++at;
        }
    }
  }
  if constexpr (Counting == bucket_counting::registers) {
    // The thread's bucket counts (core::select_bucket's buckets, equal splitters included: the
    // elements equal to a run of them go to the run's last odd bucket, and the even buckets
    // inside the run stay empty).
    uint32_t counters[register_buckets] = {};
    if (m == 0) counters[0] = counted;
    GSEARCH_UNROLL
    for (int k = 0; k < R; ++k) {
      if (k >= m) break;
      if (k == 0) counters[0] = counted - at_or_above[0];  // below s[0]
      else if (split_bits[k - 1] != split_bits[k]) counters[2 * k] = above[k - 1] - at_or_above[k];
      if (k == m - 1 || split_bits[k] != split_bits[k + 1 < R ? k + 1 : k]) counters[2 * k + 1] = at_or_above[k] - above[k];
      if (k == m - 1) counters[2 * k + 2] = above[k];  // above the last splitter
    }
    GSEARCH_UNROLL
    for (int k = 0; k < register_buckets; ++k) {  // compile-time k: the counters stay in registers
      if (k >= buckets) break;                     // uniform across the block
      uint32_t c = counters[k];
      GSEARCH_UNROLL
      for (int o = 16; o > 0; o /= 2) c += __shfl_xor_sync(0xffffffffu, c, o);
      if (lane == 0 && c) atomicAdd(block_hist + k, c);
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < buckets; b += Threads)
    if (block_hist[b]) atomicAdd(hist + b, u64(block_hist[b]));
}

template <class T, int Threads, int Loads, bucket_counting Counting>
__global__ void __launch_bounds__(Threads)
    bucket_pass_kernel(const T* __restrict__ data, scan_layout<T, Threads, Loads> layout,
                       const T* __restrict__ splitters, int m, const uint8_t* __restrict__ copy,
                       bool copying, u64* __restrict__ hist, T* __restrict__ candidates,
                       int64_t* __restrict__ candidate_indices, int64_t capacity, u64* __restrict__ candidate_count) {
  bucket_pass_block<T, Threads, Loads, Counting>(data, layout, splitters, m, copy, copying, hist, candidates,
                                                 candidate_indices, capacity, candidate_count);
}

/// The bucket pass of a planned level (not the first, whose data may start unaligned): its
/// elements (the last level's candidates, 16-byte aligned), splitters and copied buckets from
/// the plan; nothing on the final level or once the plan is done or has given up. Launched for
/// the first level's capacity: blocks past the level's tiles find none.
template <class T, int Threads, int Loads>
__global__ void __launch_bounds__(Threads)
    planned_bucket_pass_kernel(const T* __restrict__ data, const core::select_level<T>* __restrict__ plan,
                               const T* __restrict__ splitters, u64* __restrict__ hist, T* __restrict__ candidates,
                               int64_t capacity, u64* __restrict__ candidate_count) {
  if (plan->status != int32_t(core::plan_status::running) || plan->final_level) return;  // uniform
  const scan_layout<T, Threads, Loads> layout{plan->n, 0};
  bucket_pass_block<T, Threads, Loads, bucket_counting::registers>(data, layout, splitters, plan->m, plan->copy,
                                                                   true, hist, candidates, nullptr, capacity,
                                                                   candidate_count);
}

/// One thread: the level's counts (hist[0, 2m], the candidate count in hist[planned_count_slot])
/// resolved into the plan (core::resolve_level), the next level planned (core::plan_level), and
/// the counts zeroed for it.
inline constexpr int planned_count_slot = 2 * core::plan_max_splitters + 1;
template <class T>
__global__ void resolve_level_kernel(core::select_level<T>* __restrict__ plan, u64* __restrict__ hist,
                                     const T* __restrict__ splitters, int64_t capacity, int64_t sample,
                                     double dense_fraction) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  core::select_level<T> level = *plan;
  if (level.status != int32_t(core::plan_status::running)) return;
  const bool first = level.first_count < 0;
  const int32_t open = level.r;
  core::resolve_level(level, hist, hist[planned_count_slot], capacity, splitters);
  if (first) {  // the first level's candidates, for a caller that reads them (topk)
    level.first_count = int64_t(hist[planned_count_slot]);
    level.first_even = level.r == open;
  }
  core::plan_level(level, sample, dense_fraction);
  for (int b = 0; b <= planned_count_slot; ++b) hist[b] = 0;
  *plan = level;
}

/// bits[i] = core::radix_bits(data[i]): the sorting fallback's keys.
template <class T>
__global__ void radix_bits_kernel(const T* __restrict__ data, int64_t n, core::radix_bits_t<T>* __restrict__ bits) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    bits[i] = core::radix_bits(data[i]);
}

/// values[j] = the element of rank ranks[j] of the sorted bits (the sorting fallback's answer).
template <class T>
__global__ void gather_ranks_kernel(const core::radix_bits_t<T>* __restrict__ sorted, const int64_t* __restrict__ ranks,
                                    int64_t m, T* __restrict__ values) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < m; j += int64_t(gridDim.x) * blockDim.x)
    values[j] = core::from_radix_bits<T>(sorted[ranks[j]]);
}

}  // namespace gsearch::cuda_backend
