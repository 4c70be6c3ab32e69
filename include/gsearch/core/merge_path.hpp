#pragma once
/// \file
/// The partitions of the merge-like operations (seeds/002, Baxter and Merrill): Merge Path for
/// merge and sorted search, Balanced Path for multiset set operations, the monotone range every
/// tile and thread cuts between two splits, and the serial merges a thread runs between two
/// partition points. Plain functions of the index, shared by both backends: a GPU block runs them
/// on its tile in shared memory, the CPU on its chunks, so both split the work at the same places.
/// The set operations' serial loops are in set_ops.hpp, the sorted search's in sorted_search.hpp.
///
/// Order: the library's total order (key_less: NaN last, -0.0 == 0.0). A stable merge of A and B
/// takes A's element first on ties.

#include <cstdint>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"

namespace gsearch::core {

/// Merge Path: the number of elements of A among the first `diag` elements of the stable merge
/// of sorted A (na elements) and sorted B (nb), 0 <= diag <= na + nb. A binary search along the
/// cross-diagonal: i elements of A and diag - i of B precede the split when A[i] goes after
/// B[diag - 1 - i] (strictly, since ties take A first). O(log min(diag, na, nb)) reads.
template <class AccA, class AccB, class Index>
GSEARCH_HD Index merge_path(const AccA& a, Index na, const AccB& b, Index nb, Index diag) {
  Index lo = diag > nb ? diag - nb : Index{0};
  Index hi = diag < na ? diag : na;
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (key_less(b(diag - 1 - mid), a(mid))) {
      hi = mid;  // A[mid] comes after B[diag - 1 - mid]: fewer than mid + 1 from A
    } else {
      lo = mid + 1;  // A[mid] <= B[diag - 1 - mid]: A[mid] is in the prefix
    }
  }
  return lo;
}

/// The part of the two inputs between two splits of one path: A[a0, a1) and B[b0, b1).
template <class Index>
struct path_range {
  Index a0, a1, b0, b1;
};

/// The range from split (a0, b0) to split (a1, b1) of one path, made monotone: the one rule by
/// which every tile and every thread of the merge-like operations cuts its part, on both backends.
/// Each split on its own is always within [0, na] x [0, nb] (the searches only narrow index
/// ranges), but on unsorted inputs (check_sorted off) two splits need not be in order. The end
/// keeps its total a1 + b1 (the diagonal, plus a star) and its A index is clamped to
/// [a0, a1 + b1 - b0], so neither slice is negative, the range holds exactly
/// (a1 + b1) - (a0 + b0) elements (consecutive ranges add up to their span, as on sorted inputs)
/// and each side stays between the two splits' values, so in bounds. Sorted inputs give monotone
/// splits: unchanged. Needs a0 + b0 <= a1 + b1 (the later split's total is never smaller).
/// (Written as a clamp of A's share of the range's length: the merge tile kernels keep their
/// register counts in this form, where a clamp of the end index itself cost them up to 16.)
template <class Index>
GSEARCH_HD GSEARCH_FORCEINLINE path_range<Index> monotone_range(Index a0, Index b0, Index a1,
                                                                Index b1) {
  const Index length = (a1 + b1) - (a0 + b0);
  Index taken = a1 - a0;  // A's share: between 0 and the length
  taken = taken > 0 ? taken : 0;
  taken = taken < length ? taken : length;
  return {a0, a0 + taken, b0, b0 + (length - taken)};
}

/// The first i in [begin, end) with !(acc(i) < x), or end: lower bound over a sorted range.
template <class Acc, class T, class Index>
GSEARCH_HD Index lower_bound_in(const Acc& acc, Index begin, Index end, T x) {
  while (begin < end) {
    const Index mid = begin + (end - begin) / 2;
    if (key_less(acc(mid), x)) begin = mid + 1;
    else end = mid;
  }
  return begin;
}
/// The first i in [begin, end) with x < acc(i), or end.
template <class Acc, class T, class Index>
GSEARCH_HD Index upper_bound_in(const Acc& acc, Index begin, Index end, T x) {
  while (begin < end) {
    const Index mid = begin + (end - begin) / 2;
    if (key_less(x, acc(mid))) end = mid;
    else begin = mid + 1;
  }
  return begin;
}

/// lower_bound_in(acc, 0, end, x), searched from the end: probes end - 1, end - 2, end - 4, ...
/// until one is before x, then binary-searches the last gap. O(log r) reads for a run of r
/// elements not before x at the end, which is how Balanced Path finds the start of the run of
/// its split key (short, in most data) without a search over the whole prefix.
template <class Acc, class T, class Index>
GSEARCH_HD Index lower_bound_from_end(const Acc& acc, Index end, T x) {
  Index hi = end;  // the answer is at most hi
  for (Index step = 1; hi > 0; step *= 2) {
    const Index probe = hi > step ? hi - step : Index{0};
    if (key_less(acc(probe), x)) return lower_bound_in(acc, probe + 1, hi, x);
    hi = probe;  // acc(probe) is not before x: neither is anything after it
  }
  return 0;
}

/// Where Balanced Path crosses diagonal `diag`: a_index elements of A and diag - a_index of B
/// precede the split, plus, when `star`, one more of B (B[diag - a_index]).
template <class Index>
struct balanced_split {
  Index a_index;
  bool star;
};

/// Balanced Path (seeds/002): the Merge Path split moved so that equal keys are paired by rank,
/// the r-th copy of a key in A on the same side as the r-th copy in B, which is what the
/// multiset operations need (min(m, n) pairs, the rest A's or B's alone). From the Merge Path
/// split, the run of the key x = B[b_index] before the split is re-divided: of its xCount copies
/// (from A and B), B gives max(xCount / 2, xCount - aRun) (as many as it has), A the rest; when
/// that leaves A one copy ahead and B has another copy of x, the split is "starred": that copy of
/// B joins the prefix, to stay with its partner in A. So the prefix holds diag + star elements.
template <class AccA, class AccB, class Index>
GSEARCH_HD balanced_split<Index> balanced_path(const AccA& a, Index na, const AccB& b, Index nb,
                                               Index diag) {
  const Index p = merge_path(a, na, b, nb, diag);
  Index a_index = p;
  const Index b_index = diag - p;
  bool star = false;
  if (b_index < nb) {
    const auto x = b(b_index);
    const Index a_start = lower_bound_from_end(a, a_index, x);  // the run of x before the split
    const Index b_start = lower_bound_from_end(b, b_index, x);
    const Index a_run = a_index - a_start;
    Index b_run = b_index - b_start;
    const Index x_count = a_run + b_run;
    Index b_advance = x_count / 2 > x_count - a_run ? x_count / 2 : x_count - a_run;
    const Index b_end = b_start + b_advance + 1 < nb ? b_start + b_advance + 1 : nb;
    b_run = upper_bound_in(b, b_index, b_end, x) - b_start;  // B's copies of x, up to b_end
    if (b_advance > b_run) b_advance = b_run;
    const Index a_advance = x_count - b_advance;
    star = a_advance == b_advance + 1 && b_advance < b_run;
    a_index = a_start + a_advance;
  }
  return {a_index, star};
}

/// The serial merge between two Merge Path splits: writes `count` elements of the stable merge
/// starting with A[i] and B[j] through out(k, from_a, index), k = 0 .. count-1 (from_a: the
/// element is A[index], else B[index]). Ties take A first, as merge_path assumes.
template <class AccA, class AccB, class Index, class Out>
GSEARCH_HD void serial_merge(const AccA& a, Index na, const AccB& b, Index nb, Index i, Index j,
                             Index count, Out out) {
  Index k = 0;
  if (i < na && j < nb) {  // both sides left: one comparison per element, each read once
    auto x = a(i);
    auto y = b(j);
    while (k < count) {
      if (!key_less(y, x)) {
        out(k++, true, i);
        if (++i == na) break;
        x = a(i);
      } else {
        out(k++, false, j);
        if (++j == nb) break;
        y = b(j);
      }
    }
  }
  for (; k < count && i < na; ++k) out(k, true, i++);  // then what is left of one side
  for (; k < count; ++k) out(k, false, j++);
}

/// serial_merge with a compile-time count, unrolled so a GPU thread keeps its Count results in
/// registers, and reading each input element once (the next element of A and of B are kept):
/// calls out(k, from_a, index, key). Once both inputs are exhausted it goes on calling
/// out(k, true, index >= na, any key): a caller with fewer than Count elements left ignores
/// those steps.
template <int Count, class AccA, class AccB, class Index, class Out>
GSEARCH_HD GSEARCH_FORCEINLINE void serial_merge_unrolled(const AccA& a, Index na, const AccB& b,
                                                          Index nb, Index i, Index j, Out out) {
  using T = decltype(a(i));
  T x{}, y{};
  if (i < na) x = a(i);
  if (j < nb) y = b(j);
  GSEARCH_UNROLL
  for (int k = 0; k < Count; ++k) {
    const bool take_a = j >= nb || (i < na && !key_less(y, x));
    if (take_a) {
      out(k, true, i, x);
      if (++i < na) x = a(i);
    } else {
      out(k, false, j, y);
      if (++j < nb) y = b(j);
    }
  }
}

/// serial_merge_unrolled for inputs staged in one array, as a GPU tile holds them in shared
/// memory: A is keys[i, a_end) and B is keys[j, b_end), and keys(a_end) and keys(b_end) can be
/// read (the next slice, or a spare slot after the tile; the values read there are never used).
/// Each step then is one compare, selects and one load from the index it picks, with no branch
/// and no test for the end before the load. Calls out(k, from_a, index, key) with index into
/// keys; once both inputs are exhausted it goes on calling out(k, true, a_end, any key).
template <int Count, class Keys, class Index, class Out>
GSEARCH_HD GSEARCH_FORCEINLINE void serial_merge_staged(const Keys& keys, Index i, Index a_end,
                                                        Index j, Index b_end, Out out) {
  auto x = keys(i), y = keys(j);
  GSEARCH_UNROLL
  for (int k = 0; k < Count; ++k) {
    const bool take_a = j >= b_end || (i < a_end && !key_less(y, x));
    out(k, take_a, take_a ? i : j, take_a ? x : y);
    const Index next = take_a ? i + Index(i < a_end) : j + 1;  // B never passes b_end
    const auto key = keys(next);
    if (take_a) {
      i = next;
      x = key;
    } else {
      j = next;
      y = key;
    }
  }
}

}  // namespace gsearch::core
