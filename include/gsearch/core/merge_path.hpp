#pragma once
/// \file
/// The partitions of the merge-like operations (seeds/002, Baxter and Merrill): Merge Path for
/// merge and sorted search, Balanced Path for multiset set operations, and the serial merge a
/// thread runs between two partition points. Plain functions of the index, shared by both
/// backends: a GPU block runs them on its tile in shared memory, the CPU on its chunks, so both
/// split the work at the same places.
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
    const Index a_start = lower_bound_in(a, Index{0}, a_index, x);  // the run of x before the split
    const Index b_start = lower_bound_in(b, Index{0}, b_index, x);
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
  for (Index k = 0; k < count; ++k) {
    const bool take_a = j >= nb || (i < na && !key_less(b(j), a(i)));
    if (take_a) {
      out(k, true, i++);
    } else {
      out(k, false, j++);
    }
  }
}

}  // namespace gsearch::core
