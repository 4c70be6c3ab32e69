#pragma once
/// \file
/// Row-batched top-k and kthvalue (torch.topk / torch.kthvalue over the last axis of a rows x cols
/// array): one block per row, the row staged in shared memory when it fits.
///
/// Each element is turned into an unsigned radix key whose unsigned order is the library's key
/// order (key_traits.hpp: NaN last, -0.0 equal to 0.0), complemented for `largest`, so that every
/// request is "the smallest": topk(k) wants the elements of key rank < k, kthvalue(r) the element
/// of rank r. The block finds the key of rank r (r = k - 1 for topk) by a radix select, most
/// significant digit first: a shared-memory histogram of the digit over the candidates (the
/// elements that share the digits chosen so far; warp-aggregated atomics, so a skewed digit, as
/// the exponent byte of uniform floats, costs one atomic per distinct digit and warp), a block
/// scan of the bins, and the bin that holds the rank becomes the next digit. It stops early when
/// one candidate is left. Then two passes write the outputs in index order: each warp counts the
/// elements before the threshold and equal to it in its own contiguous slice, and writes them at
/// its offsets: every element strictly before the threshold, then the first (by index) of those
/// equal to it, as many as k needs. A sorted topk of up to topk_rows_sort_max_k outputs is then
/// sorted by the block itself (sort_row_outputs); more are sorted afterwards (topk.cu's
/// sort_outputs). A block's row may be a piece of a longer row (row_pieces: topk.cu's split).
/// Instantiated in src/selection/cuda/topk.cu.

#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gsearch/core/config.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/key_traits.hpp"
#include "selection/tuning_topk.hpp"

namespace gsearch::cuda_backend {

/// The mask a request's keys are XORed with: all ones for `largest` (the largest elements get the
/// smallest keys), else none.
template <class T>
GSEARCH_HD constexpr core::radix_bits_t<T> selection_flip(bool largest) {
  return largest ? ~core::radix_bits_t<T>(0) : core::radix_bits_t<T>(0);
}

/// Where the block's radix select stands: the digits chosen (prefix, under mask) and the rank
/// still wanted among the candidates (the elements whose key has that prefix).
template <class K>
struct radix_state {
  K prefix = 0, mask = 0;
  int rank = 0;
};

/// Copies row[0, cols) into shared memory as radix keys (XOR flip) and returns where key 0 is:
/// `base` plus the slack that puts the row's 16-byte aligned elements on 16-byte aligned keys, so
/// each 16-byte load from global memory is one 16-byte store. Loads issued `Loads` per thread at
/// a time. Caller synchronizes before and after.
template <int Threads, int Loads, class T>
__device__ core::radix_bits_t<T>* stage_row_keys(core::radix_bits_t<T>* base, const T* __restrict__ row, int cols,
                                          core::radix_bits_t<T> flip) {
  using K = core::radix_bits_t<T>;
  static_assert(sizeof(K) == sizeof(T));
  constexpr int per_vector = 16 / int(sizeof(T));
  const int misalign = int(reinterpret_cast<uintptr_t>(row) % 16) / int(sizeof(T));
  const int head_raw = misalign == 0 ? 0 : per_vector - misalign;
  const int head = head_raw < cols ? head_raw : cols;
  K* keys = base + (per_vector - head) % per_vector;  // keys + head is 16-byte aligned
  if (int(threadIdx.x) < head) keys[threadIdx.x] = core::radix_bits(row[threadIdx.x]) ^ flip;
  const int vectors = (cols - head) / per_vector;
  const uint4* body = reinterpret_cast<const uint4*>(row + head);
  uint4* staged = reinterpret_cast<uint4*>(keys + head);
  for (int v0 = 0; v0 < vectors; v0 += Threads * Loads) {
    uint4 raw[Loads];
    GSEARCH_UNROLL
    for (int u = 0; u < Loads; ++u) {
      const int v = v0 + u * Threads + int(threadIdx.x);
      if (v < vectors) raw[u] = __ldg(body + v);
    }
    GSEARCH_UNROLL
    for (int u = 0; u < Loads; ++u) {
      const int v = v0 + u * Threads + int(threadIdx.x);
      if (v >= vectors) continue;
      T x[per_vector];
      K k[per_vector];
      memcpy(x, &raw[u], 16);
      GSEARCH_UNROLL
      for (int j = 0; j < per_vector; ++j) k[j] = core::radix_bits(x[j]) ^ flip;
      memcpy(&raw[u], k, 16);
      staged[v] = raw[u];
    }
  }
  for (int i = head + vectors * per_vector + int(threadIdx.x); i < cols; i += Threads)
    keys[i] = core::radix_bits(row[i]) ^ flip;
  return keys;
}

/// The row's keys, from shared memory (staged) or recomputed from global memory on every read.
template <class T, bool Staged>
struct row_keys {
  using K = core::radix_bits_t<T>;
  const K* staged;
  const T* __restrict__ row;
  K flip;
  __device__ GSEARCH_FORCEINLINE K operator()(int i) const {
    if constexpr (Staged) {
      return staged[i];
    } else {
      return core::radix_bits(row[i]) ^ flip;
    }
  }
};

/// One digit of the radix select: the histogram of the digit at `shift` over the candidates, the
/// bin holding state.rank, and the state narrowed to it. Returns the candidates left (the bin's
/// count). `histogram` is zero on entry and left zero. The warps read whole strides of 32
/// consecutive keys (the loop bound is uniform per warp, so the warp-wide match and ballot see
/// every lane); equal digits of a warp are counted by their lowest lane with one atomic.
template <int Threads, class Keys, class K>
__device__ int select_digit(const Keys& key, int cols, int shift, radix_state<K>& state,
                            unsigned* histogram, unsigned* choice,
                            typename cub::BlockScan<unsigned, Threads>::TempStorage& scan_temp) {
  constexpr int bins = topk_radix_bins;
  static_assert(Threads >= bins && Threads % 32 == 0);
  const int lane = int(threadIdx.x) % 32;
  for (int i0 = int(threadIdx.x) - lane; i0 < cols; i0 += Threads) {
    const int i = i0 + lane;
    bool candidate = false;
    unsigned digit = bins;  // not a bin: lanes that count nothing match only each other
    if (i < cols) {
      const K x = key(i);
      candidate = (x & state.mask) == state.prefix;
      if (candidate) digit = unsigned(x >> shift) & unsigned(bins - 1);
    }
    if (!__any_sync(0xffffffffu, candidate)) continue;
    const unsigned peers = __match_any_sync(0xffffffffu, digit);
    if (candidate && lane == __ffs(int(peers)) - 1) atomicAdd(&histogram[digit], unsigned(__popc(int(peers))));
  }
  __syncthreads();  // the histogram is complete
  unsigned count = 0;
  if (threadIdx.x < bins) {
    count = histogram[threadIdx.x];
    histogram[threadIdx.x] = 0;  // only this thread reads this bin: zeroed for the next digit
  }
  unsigned below;
  cub::BlockScan<unsigned, Threads>(scan_temp).ExclusiveSum(count, below);
  // The bins' ranges [below, below + count) tile [0, candidates) and rank < candidates: exactly
  // one thread writes the choice.
  const unsigned rank = unsigned(state.rank);
  if (threadIdx.x < bins && below <= rank && rank < below + count) {
    choice[0] = threadIdx.x;
    choice[1] = below;
    choice[2] = count;
  }
  __syncthreads();  // the choice is written; read by all before the next digit's barrier
  const unsigned bin = choice[0];
  state.prefix |= K(bin) << shift;
  state.mask |= K(bins - 1) << shift;
  state.rank -= int(choice[1]);
  return int(choice[2]);
}

/// The key of rank `rank` among key(0 .. cols) (its radix select), and in state.rank its rank
/// among the keys equal to it (so rank - state.rank keys are smaller).
template <int Threads, class Keys, class K>
__device__ K select_rank(const Keys& key, int cols, int rank, radix_state<K>& state,
                         unsigned* histogram, unsigned* choice, K* unique_key,
                         typename cub::BlockScan<unsigned, Threads>::TempStorage& scan_temp) {
  constexpr int key_bits = 8 * int(sizeof(K));
  static_assert(key_bits % topk_radix_bits == 0);
  state = radix_state<K>{};
  state.rank = rank;
  for (int shift = key_bits - topk_radix_bits; shift >= 0; shift -= topk_radix_bits) {
    const int left = select_digit<Threads>(key, cols, shift, state, histogram, choice, scan_temp);
    if (left == 1 && shift > 0) {
      // One candidate: it is the answer (and no other key equals it). Its only holder writes it.
      for (int i = int(threadIdx.x); i < cols; i += Threads) {
        const K x = key(i);
        if ((x & state.mask) == state.prefix) *unique_key = x;
      }
      __syncthreads();
      state.prefix = *unique_key;
      state.mask = ~K(0);
      break;  // uniform: every thread read the same count
    }
  }
  return state.prefix;
}

/// Writes the row's outputs in index order, each warp over its own contiguous slice of the keys
/// key(0 .. cols) (a whole number of 32-key strides), key(i) being the row's element at(i) (at
/// increasing: the row itself, or its filtered candidates): topk (first_tie_only false): the keys
/// before `threshold` at slots [0, less) and the first `ties` keys equal to it at [less, less +
/// ties); kthvalue (first_tie_only): the first key equal to it at slot 0. Values are read from
/// the row in global memory (their own bits: -0.0 and NaN payloads kept), indices are
/// index_of(position). warp_less / warp_equal: Threads / 32 shared counters.
template <int Threads, class Keys, class At, class IndexOf, class K, class T>
__device__ void write_row_outputs(const Keys& key, const At& at, const IndexOf& index_of,
                                  const T* __restrict__ row, int cols, K threshold, int less, int ties,
                                  bool first_tie_only, T* __restrict__ values, int64_t* __restrict__ indices,
                                  int* warp_less, int* warp_equal) {
  constexpr int warps = Threads / 32;
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  const int slice = int(((int64_t(cols) + warps - 1) / warps + 31) / 32 * 32);
  const int begin = int(int64_t(warp) * slice < cols ? int64_t(warp) * slice : cols);
  const int end = int(int64_t(begin) + slice < cols ? int64_t(begin) + slice : cols);
  const unsigned lanes_below = (1u << lane) - 1u;
  // 1. Each warp's counts: each lane counts its own keys, then one warp-wide sum (a ballot and a
  // count a stride cost three times the instructions).
  unsigned lane_less = 0, lane_equal = 0;
  for (int i = begin + lane; i < end; i += 32) {
    const K x = key(i);
    lane_less += unsigned(x < threshold);
    lane_equal += unsigned(x == threshold);
  }
  const int my_less = int(__reduce_add_sync(0xffffffffu, lane_less));
  const int my_equal = int(__reduce_add_sync(0xffffffffu, lane_equal));
  if (lane == 0) {
    warp_less[warp] = my_less;
    warp_equal[warp] = my_equal;
  }
  __syncthreads();
  int less_before = 0, equal_before = 0;
  for (int w = 0; w < warp; ++w) {
    less_before += warp_less[w];
    equal_before += warp_equal[w];
  }
  // 2. The writes: a warp with nothing left to write stops.
  for (int i0 = begin; i0 < end; i0 += 32) {
    if (equal_before >= ties && (first_tie_only || less_before == less)) break;  // uniform
    const int i = i0 + lane;
    const K x = i < end ? key(i) : K(0);
    const bool is_less = i < end && x < threshold, is_equal = i < end && x == threshold;
    const unsigned less_lanes = __ballot_sync(0xffffffffu, is_less);
    const unsigned equal_lanes = __ballot_sync(0xffffffffu, is_equal);
    int slot = -1;
    if (is_less && !first_tie_only) slot = less_before + __popc(int(less_lanes & lanes_below));
    if (is_equal) {
      const int tie = equal_before + __popc(int(equal_lanes & lanes_below));
      if (tie < ties) slot = (first_tie_only ? 0 : less) + tie;
    }
    if (slot >= 0) {
      const int p = at(i);
      values[slot] = row[p];
      indices[slot] = index_of(p);
    }
    less_before += __popc(int(less_lanes));
    equal_before += __popc(int(equal_lanes));
  }
}

/// The row's filtered candidates: key(j) = staged[at[j]].
template <class K>
struct candidate_keys {
  const K* staged;
  const topk_filter_position* at;
  __device__ GSEARCH_FORCEINLINE K operator()(int j) const { return staged[at[j]]; }
};

/// The filter's bound for the key of rank `rank` (< groups, a power of two dividing Threads): the
/// largest of the least keys of `groups` groups of the staged row, group g the positions = g mod
/// groups. One key a group lies at or below it, so rank + 1 keys do, and the row's key of rank
/// `rank` too. Thread t's keys (positions t, t + Threads, ...) all lie in group t mod groups: each
/// thread takes its least, lanes of one group in a warp combine by shuffles, and the warps by
/// atomic maxima of the complements in `scratch` (groups keys, zero on entry: the complement of
/// a group's least, so zero stands for none yet). Every warp then reads the bound; the caller
/// zeroes scratch after its next barrier.
template <int Threads, class K>
__device__ K group_min_bound(const K* staged, int cols, int groups, K* scratch) {
  const int lane = int(threadIdx.x) % 32;
  K least = K(~K(0));
  for (int i = int(threadIdx.x); i < cols; i += Threads) least = staged[i] < least ? staged[i] : least;
  for (int o = groups; o < 32; o *= 2) {
    const K other = __shfl_xor_sync(0xffffffffu, least, o);
    least = other < least ? other : least;
  }
  if (lane < groups) {
    K* const slot = &scratch[int(threadIdx.x) % groups];
    if constexpr (sizeof(K) == 8)
      atomicMax(reinterpret_cast<unsigned long long*>(slot), static_cast<unsigned long long>(K(~least)));
    else
      atomicMax(slot, K(~least));
  }
  __syncthreads();
  K fewest = K(~K(0));  // the least complement: the bound's
  for (int g = lane; g < groups; g += 32) fewest = scratch[g] < fewest ? scratch[g] : fewest;
  for (int o = 16; o > 0; o /= 2) {
    const K other = __shfl_xor_sync(0xffffffffu, fewest, o);
    fewest = other < fewest ? other : fewest;
  }
  return K(~fewest);
}

/// The candidates for the key of a rank below `groups` of a staged row: group_min_bound's bound and the
/// positions of the row's keys at or below it, in index order (each warp over its own contiguous
/// slice, as write_row_outputs), into at[0, capacity). Returns their count, which includes the
/// row's keys of ranks 0 ... rank and every key equal to the one of rank `rank`; or -1, with
/// nothing written, when there are more than `capacity` (the caller selects over the whole row
/// then). `histogram` (zero on entry, left zero) holds the groups' keys meanwhile.
template <int Threads, class K>
__device__ int filter_row(const K* staged, int cols, int groups, topk_filter_position* at, int capacity,
                          unsigned* histogram, int* warp_count) {
  constexpr int warps = Threads / 32;
  K* const scratch = reinterpret_cast<K*>(histogram);
  const K bound = group_min_bound<Threads>(staged, cols, groups, scratch);
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  const int slice = int(((int64_t(cols) + warps - 1) / warps + 31) / 32 * 32);
  const int begin = int(int64_t(warp) * slice < cols ? int64_t(warp) * slice : cols);
  const int end = int(int64_t(begin) + slice < cols ? int64_t(begin) + slice : cols);
  unsigned lane_count = 0;  // (each lane its own keys, then one warp-wide sum: write_row_outputs')
  for (int i = begin + lane; i < end; i += 32) lane_count += unsigned(staged[i] <= bound);
  const int mine = int(__reduce_add_sync(0xffffffffu, lane_count));
  if (lane == 0) warp_count[warp] = mine;
  __syncthreads();  // (every warp has read the bound: scratch is free)
  for (int i = int(threadIdx.x); i < groups * int(sizeof(K) / sizeof(unsigned)); i += Threads)
    histogram[i] = 0;
  int before = 0, total = 0;
  for (int w = 0; w < warps; ++w) {
    before += w < warp ? warp_count[w] : 0;
    total += warp_count[w];
  }
  // warp_count read by all (the caller's next use rewrites it).
  __syncthreads();
  if (total > capacity) return -1;  // uniform
  const unsigned lanes_below = (1u << lane) - 1u;
  for (int i0 = begin; i0 < end; i0 += 32) {
    const int i = i0 + lane;
    const bool in = i < end && staged[i] <= bound;
    const unsigned in_lanes = __ballot_sync(0xffffffffu, in);
    if (in) at[before + __popc(int(in_lanes & lanes_below))] = topk_filter_position(i);
    before += __popc(int(in_lanes));
  }
  __syncthreads();
  return total;
}

/// What the row kernel writes for each row: topk's k outputs in index order (the elements before
/// the threshold, then the first ties), the same sorted (by key, ties in index order: a stable
/// sort's order; k <= the block's threads), or kthvalue's one (the element of the rank and the
/// index of the first element equal to it).
enum class row_outputs { topk, topk_sorted, first_tie };

/// Sorts a row's k outputs, just written at values / indices [0, k) by this block (k <= Threads;
/// the caller's barrier makes them visible): each thread takes one, puts its key in `scratch`
/// (k keys of shared memory, and room to read up to the next 16 bytes: nvcc reads the last keys
/// with one 16-byte load), and after a barrier writes it at its rank among the k (the keys
/// before it, and the equal ones at lower slots: equal keys keep their order). One compare a key
/// and thread, where a separate launch sorted every row's outputs again (4096 rows of 64: 36 us).
template <int Threads, class T, class K>
__device__ void sort_row_outputs(int k, K flip, T* __restrict__ values, int64_t* __restrict__ indices,
                                 K* scratch) {
  const int i = int(threadIdx.x);
  T value{};
  int64_t index = 0;
  K key = 0;
  if (i < k) {
    value = values[i];
    index = indices[i];
    key = core::radix_bits(value) ^ flip;
    scratch[i] = key;
  }
  __syncthreads();  // every key in scratch, every output read
  if (i < k) {
    int rank = 0;
    for (int j = 0; j < k; ++j) {
      const K other = scratch[j];
      rank += int(other < key || (other == key && j < i));
    }
    values[rank] = value;
    indices[rank] = index;
  }
}

/// Where the row kernel's rows come from (topk.cu's launches): each of the data's rows of `cols`
/// keys read as `parts` pieces of `part` keys, the last piece the rest (parts 1, part = cols: the
/// rows whole; else the first step of a split, tuning_topk.hpp's topk_row_split). A block's row r
/// is piece r % parts of row r / parts. Its output indices are positions in the data's row (the
/// piece's start added), or, where `origin` is set (the split's second step, whose rows are the
/// first's candidates: rows x cols positions beside them), origin's entry for the position.
struct row_pieces {
  int64_t cols = 0;
  int part = 0;
  int parts = 1;
  const int64_t* origin = nullptr;
};

/// One block per row (grid-stride over rows x pieces.parts rows: row_pieces): the element of
/// rank `rank` of each row in the order of core::radix_bits ^ flip, and then
///  - topk (first_tie_only false; rank = k - 1): the row's k outputs, unsorted (index order:
///    the elements before the threshold, then the first ties), at values / indices + row * k;
///  - kthvalue (first_tie_only true): the element and the index of the first element equal to
///    it, at values / indices + row;
///  - topk_sorted: topk's, then sorted in place (sort_row_outputs; k <= Threads).
/// Staged: the row's keys in dynamic shared memory (topk_staged_max_cols; topk_staged_row_bytes
/// of pieces.part keys, then `filter` positions at topk_filter_positions_offset); else read from
/// global memory on every pass (dynamic shared memory: the sort's k keys, if any). filter > 0
/// (staged rows only, topk_filter_rows): the row's candidates first (filter_row), the select and
/// the outputs over them when there are at most `filter`. pieces.part <= topk_rows_max_cols.
template <class T, int Threads, bool Staged>
__global__ void __launch_bounds__(Threads, topk_rows_blocks_per_sm)
    topk_rows_kernel(const T* __restrict__ data, int64_t rows, row_pieces pieces, int rank,
                     core::radix_bits_t<T> flip, row_outputs outputs, T* __restrict__ values,
                     int64_t* __restrict__ indices, int filter) {
  using K = core::radix_bits_t<T>;
  extern __shared__ __align__(16) unsigned char topk_shared[];
  __shared__ __align__(8) unsigned histogram[topk_radix_bins];  // (also filter_row's groups' keys)
  __shared__ unsigned choice[3];
  __shared__ K unique_key;
  __shared__ int warp_less[Threads / 32], warp_equal[Threads / 32];
  __shared__ typename cub::BlockScan<unsigned, Threads>::TempStorage scan_temp;
  for (int i = int(threadIdx.x); i < topk_radix_bins; i += Threads) histogram[i] = 0;
  // Ordered before the first histogram by the barrier after staging (or, unstaged, the one below).
  if constexpr (!Staged) __syncthreads();
  const bool first_tie_only = outputs == row_outputs::first_tie;
  const int64_t out_stride = first_tie_only ? 1 : int64_t(rank) + 1;
  for (int64_t r = blockIdx.x; r < rows * pieces.parts; r += gridDim.x) {
    const int64_t whole = pieces.parts == 1 ? r : r / pieces.parts;  // (one 64-bit division a piece)
    const int begin = int(r - whole * pieces.parts) * pieces.part;
    const int cols = int(pieces.cols - begin < pieces.part ? pieces.cols - begin : pieces.part);
    const T* row = data + whole * pieces.cols + begin;
    const int64_t* const origin = pieces.origin ? pieces.origin + whole * pieces.cols + begin : nullptr;
    const auto index_of = [origin, begin](int p) { return origin ? origin[p] : int64_t(begin) + p; };
    row_keys<T, Staged> key{nullptr, row, flip};
    if constexpr (Staged) {
      __syncthreads();  // the previous row is done with the staged keys
      key.staged = stage_row_keys<Threads, topk_stage_loads>(reinterpret_cast<K*>(topk_shared), row, cols, flip);
      __syncthreads();
    }
    radix_state<K> state;
    int candidates = -1;
    topk_filter_position* const at = reinterpret_cast<topk_filter_position*>(
        topk_shared + topk_filter_positions_offset(pieces.part, sizeof(T)));
    if constexpr (Staged)
      if (filter > 0)  // uniform
        candidates =
            filter_row<Threads>(key.staged, cols, topk_filter_groups(rank), at, filter, histogram, warp_less);
    if (candidates >= 0) {  // uniform
      const candidate_keys<K> among{key.staged, at};
      const K threshold =
          select_rank<Threads>(among, candidates, rank, state, histogram, choice, &unique_key, scan_temp);
      write_row_outputs<Threads>(
          among, [at](int j) { return int(at[j]); }, index_of, row, candidates, threshold, rank - state.rank,
          first_tie_only ? 1 : state.rank + 1, first_tie_only, values + r * out_stride,
          indices + r * out_stride, warp_less, warp_equal);
    } else {
      const K threshold =
          select_rank<Threads>(key, cols, rank, state, histogram, choice, &unique_key, scan_temp);
      const int less = rank - state.rank;                    // keys before the threshold
      const int ties = first_tie_only ? 1 : state.rank + 1;  // equal keys to write
      write_row_outputs<Threads>(
          key, [](int i) { return i; }, index_of, row, cols, threshold, less, ties, first_tie_only,
          values + r * out_stride, indices + r * out_stride, warp_less, warp_equal);
    }
    if (outputs == row_outputs::topk_sorted) {  // uniform
      // After the barrier that makes the outputs visible to the block; the sort's keys in the
      // staged row's place (read by then) or, unstaged, the launch's k keys.
      __syncthreads();
      sort_row_outputs<Threads>(rank + 1, flip, values + r * out_stride, indices + r * out_stride,
                                reinterpret_cast<K*>(topk_shared));
    }
  }
}

}  // namespace gsearch::cuda_backend
