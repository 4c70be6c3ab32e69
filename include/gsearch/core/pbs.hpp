#pragma once
/// \file
/// The per-lane search algorithms of Karsin, Casanova and Sitchinava, "Efficient Batched
/// Predecessor Search in Shared Memory on GPUs" (seeds/000): PBS, PBS-CF and PBS-CL, plus the
/// plain branch-free binary search. Each is one function, written once and run by both backends:
/// on the GPU each thread calls it with its lane (threadIdx.x % 32) and an accessor that reads the
/// keys staged in shared memory; on the CPU it runs for every lane of a simulated warp. A
/// recording accessor (bank_model.hpp) logs the addresses, which is how the paper's
/// bank-conflict analysis becomes a test.
///
/// Common contract:
///  - `keys(i)` returns the i-th key for i in [-w, k + w), w = warp_width: the sorted keys with
///    w padding sentinels at each end, key_traits<T>::lowest() in front and highest() behind.
///    The padded list must be sorted in the order of key_traits.hpp (the sentinels are the
///    ends of that order, so it is). `binary` reads only [0, k).
///  - `before(key)` is the monotone predicate of key_traits.hpp (key < q or key <= q).
///  - The result is the rank of q: the number of keys before q, in [0, k]. So
///    lower_bound = rank with key < q, upper_bound = rank with key <= q, predecessor =
///    upper_bound - 1.
///  - Every lane of a warp runs the same number of steps (no divergent trip counts), one key
///    read per step, so the steps of a warp line up: step s of every lane is one SIMD access.
///  - Index is the index type (int32 for shared memory, int64 for global memory and the CPU).
///
/// Sentinels may compare "before" q when q is itself an end of the order (lower_bound of the
/// lowest value, upper_bound of the highest or of NaN). The result is then clamped into
/// [0, k], which is exact: such a q has every key, or no key, before it.

#include <cstdint>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/config.hpp"

namespace gsearch::core {

template <class Index>
GSEARCH_HD GSEARCH_FORCEINLINE constexpr Index clamp_rank(Index last_before, Index k) {
  // last_before is the padded index of the last key before q; the rank is one past it.
  const Index r = last_before + 1;
  return r < 0 ? Index{0} : (r > k ? k : r);
}

/// The accessor of item i of a batched search: one accessor shared by all N items, or an array
/// of N accessors, one per item. The row-batched search (search_rows) passes an array when the
/// N queries a lane searches in lockstep belong to different rows; every other caller passes one.
template <class Accessor>
GSEARCH_HD GSEARCH_FORCEINLINE constexpr const Accessor& item_keys(const Accessor& keys, int) {
  return keys;
}
template <class Accessor, int N>
GSEARCH_HD GSEARCH_FORCEINLINE constexpr const Accessor& item_keys(const Accessor (&keys)[N], int i) {
  return keys[i];
}

// Each algorithm comes in a batched form, `<name>_n<N>`, that searches N queries per lane in
// lockstep: the steps of the N searches are interleaved, so a thread has N independent key reads
// in flight (the GPU kernels use it to hide shared-memory latency). The one-query form is N = 1.

/// PBS: Algorithm 1 of the paper, as written (index = floor(k/2), delta = ceil(k/4), halved
/// with rounding up, ceil(log2 k) iterations, then one final comparison), with the min/max
/// bounds checks replaced by the padding. The index wanders at most ceil(log2 k) + 1 past
/// either end, so w = 32 sentinels suffice for k < 2^31.
/// Reads: ceil(log2 k) + 1 per lane. Bank conflicts: up to w-way per step (Corollary 4.1).
template <int N, class Accessor, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void pbs_n(const Accessor& keys, Index k, const Pred (&before)[N],
                                          int /*lane*/, Index (&rank)[N]) {
  Index index[N];
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) index[i] = k / 2;
  Index delta = (k + 3) / 4;
  const int steps = ceil_log2(k);
  for (int s = 0; s < steps; ++s) {
    GSEARCH_UNROLL
    for (int i = 0; i < N; ++i) index[i] += before[i](item_keys(keys, i)(index[i])) ? delta : -delta;
    delta = (delta + 1) / 2;
  }
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) rank[i] = clamp_rank(index[i] - (before[i](item_keys(keys, i)(index[i])) ? 0 : 1), k);
}

/// Stage 1 of PBS-CF and PBS-CL (Algorithm 2). Lane l only reads keys whose index is congruent
/// to l modulo `stride` (w for the paper's algorithms), so with stride = number of banks each
/// lane stays in a bank of its own and the stage is free of bank conflicts. It is a binary
/// search over the lane's column l, l + stride, l + 2 stride, ...: it returns the index s of
/// the last column entry before q (s = l - stride when there is none), so the answer lies in
/// [s, s + stride).
///
/// The paper's version rounds delta down to a multiple of w, which loses keys when k is not a
/// multiple of 2w^2 (k = 100: delta rounds to 0 and stage 1 does nothing); this one searches the
/// column exactly for every k, in ceil(log2(ceil(k/stride) + 1)) steps, the same for all lanes.
/// With stride = 1 and lane = 0 it is the plain branch-free binary search.
template <int N, class Accessor, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void strided_stage_n(const Accessor& keys, Index k, const Pred (&before)[N],
                                                    Index stride, Index lane, Index (&s)[N]) {
  const Index columns = (k + stride - 1) / stride;  // the same for every lane
  // s is the index of column entry `base`; entry -1 (in the front padding) is taken as before q,
  // and the answer is a column entry in [base, base + len).
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) s[i] = lane - stride;
  Index len = columns + 1;
  while (len > 1) {
    const Index half = len / 2;
    const Index step = half * stride;
    GSEARCH_UNROLL
    for (int i = 0; i < N; ++i) {
      const Index probe = s[i] + step;
      s[i] = before[i](item_keys(keys, i)(probe)) ? probe : s[i];
    }
    len -= half;
  }
  // A lane whose last column entry is past the keys lands on it only when the back padding
  // compares before q, and then every key does; stepping back to the lane's last real entry
  // keeps the stage-2 window [s, s + stride) inside the padding without changing the answer.
  const Index last = ((k - lane + stride - 1) / stride - 1) * stride + lane;
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) s[i] = s[i] > last ? last : s[i];
}

/// PBS-CF: stage 1 above, then Algorithm 3's linear stage 2: the lane reads the w - 1 keys
/// after s in lockstep, s + 1, s + 2, ..., each step one key per bank: no bank conflicts on any
/// input. Reads: ceil(log2(ceil(k/w) + 1)) + w - 1 per lane.
template <int N, class Accessor, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void pbs_cf_n(const Accessor& keys, Index k, const Pred (&before)[N],
                                             int lane, Index (&rank)[N]) {
  constexpr int w = warp_width;
  Index s[N], count[N];
  strided_stage_n(keys, k, before, Index{w}, Index(lane), s);
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) count[i] = 0;
  GSEARCH_UNROLL
  for (int j = 1; j < w; ++j) {
    GSEARCH_UNROLL
    for (int i = 0; i < N; ++i) count[i] += before[i](item_keys(keys, i)(s[i] + j)) ? 1 : 0;
  }
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) rank[i] = clamp_rank(s[i] + count[i], k);
}

/// PBS-CL: stage 1 above, then a binary stage 2 over the window [s, s + w) in which every lane
/// uses the same deltas w/2, w/4, ..., 1, so the lanes keep their distinct offsets from stage 1:
/// step j of stage 2 has at most a 2^j-way conflict, at most w - 1 accesses in all.
/// Reads: ceil(log2(ceil(k/w) + 1)) + log2(w) per lane.
///
/// Copies > 1 (gsearch's extension, not in the paper): stage 2 reads from Copies replicas of the
/// padded keys (replicated_layout below), each shifted by a fraction of a bank row, and a lane
/// that has moved a distance a into its window reads the replica whose shift cancels the high
/// part of a. The lanes' banks then differ by their offsets modulo row / Copies only, which cuts
/// the worst case of stage 2 from w - 1 passes to (with 32 banks of 4 bytes) 16 for two copies
/// and 9 for four. The accessor must read the replicas at keys(i + c * replica_stride).
template <int N, int Copies = 1, class Accessor, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void pbs_cl_n(const Accessor& keys, Index k, const Pred (&before)[N],
                                             int lane, Index (&rank)[N], Index replica_stride = 0) {
  constexpr int w = warp_width;
  using T = decltype(item_keys(keys, 0)(Index{0}));
  constexpr int row = bank_row_keys<T>();  // keys per row of banks: a lane's bank is index % row
  constexpr int unit = row / Copies;       // the shift between consecutive replicas
  Index p[N], d[N];  // the physical index read from, and its distance from the logical index
  strided_stage_n(keys, k, before, Index{w}, Index(lane), p);
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) d[i] = 0;
  GSEARCH_UNROLL
  for (int half = w / 2; half >= 1; half /= 2) {
    // Moving by `half` changes the replica when half is a multiple of the unit within a row: a
    // compile-time property of the unrolled step, so the other steps cost what they cost
    // without replicas.
    const bool jump_step = Copies > 1 && half >= unit && half < row;
    const Index jump = jump_step ? Index(half / unit) * replica_stride : Index{0};
    GSEARCH_UNROLL
    for (int i = 0; i < N; ++i) {
      const bool moved = before[i](item_keys(keys, i)(p[i] + half));
      p[i] = moved ? p[i] + half + jump : p[i];
      if (jump_step) d[i] = moved ? d[i] + jump : d[i];
    }
  }
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) rank[i] = clamp_rank(p[i] - d[i], k);
}

/// Branch-free binary search over [0, k) (no padding read): ceil(log2(k + 1)) reads.
template <int N, class Accessor, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void binary_n(const Accessor& keys, Index k, const Pred (&before)[N],
                                             int /*lane*/, Index (&rank)[N]) {
  strided_stage_n(keys, k, before, Index{1}, Index{0}, rank);
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) rank[i] += 1;
}

/// Distance, in elements, between consecutive replicas of the padded keys for PBS-CL with
/// `copies` copies: at least the padded length, and congruent to -(row / copies) modulo the
/// bank row (32 banks of 4 bytes: 32 keys of 4 bytes, 16 of 8 bytes).
template <class T>
constexpr int64_t replica_stride(int64_t k, int copies) {
  if (copies <= 1) return 0;
  const int64_t row = bank_row_keys<T>(), padded = k + 2 * warp_width;
  return (padded + row - 1) / row * row + (row - row / copies);
}

/// Elements of the replicated layout: copies of the padded keys, replica_stride apart.
template <class T>
constexpr int64_t replicated_size(int64_t k, int copies) {
  return (copies - 1) * replica_stride<T>(k, copies) + k + 2 * warp_width;
}

/// Number of key reads of stage 1 of PBS-CF / PBS-CL per lane (used by the model to label
/// steps as stage 1 or stage 2).
constexpr int stage1_steps(int64_t k, int w = warp_width) { return ceil_log2((k + w - 1) / w + 1); }

/// Runs the algorithm named at compile time on N queries. `A` must not be algorithm::auto_.
/// `Copies` and `replica_stride` apply to PBS-CL only (see pbs_cl_n); the others read copy 0.
template <algorithm A, int N, int Copies = 1, class Accessor, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void search_ranks(const Accessor& keys, Index k, const Pred (&before)[N],
                                                 int lane, Index (&rank)[N], Index replica_stride = 0) {
  static_assert(A != algorithm::auto_, "resolve algorithm::auto_ before dispatching");
  if constexpr (A == algorithm::pbs) pbs_n(keys, k, before, lane, rank);
  else if constexpr (A == algorithm::pbs_cf) pbs_cf_n(keys, k, before, lane, rank);
  else if constexpr (A == algorithm::pbs_cl) pbs_cl_n<N, Copies>(keys, k, before, lane, rank, replica_stride);
  else binary_n(keys, k, before, lane, rank);
}

/// One query: the rank of q (the number of keys before it) by algorithm A on `lane`.
template <algorithm A, class Accessor, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE Index search_rank(const Accessor& keys, Index k, Pred before, int lane) {
  const Pred one[1] = {before};
  Index rank[1];
  search_ranks<A, 1>(keys, k, one, lane, rank);
  return rank[0];
}

/// Reads a sorted array with warp_width sentinels in front: `data` points at key 0.
template <class T>
struct padded_accessor {
  const T* data;
  template <class Index>
  GSEARCH_HD GSEARCH_FORCEINLINE T operator()(Index i) const { return data[i]; }
};

/// Reads an unpadded sorted array and supplies the sentinels for indices outside [0, k): the
/// same algorithms then run straight over keys in global memory, with no copy.
template <class T, class Sentinels>
struct bounded_accessor {
  const T* data;
  int64_t k;
  template <class Index>
  GSEARCH_HD GSEARCH_FORCEINLINE T operator()(Index i) const {
    return i < 0 ? Sentinels::lowest() : (i >= k ? Sentinels::highest() : data[i]);
  }
};

}  // namespace gsearch::core
