#pragma once
/// \file
/// The multiset set operations (intersection, union, difference, symmetric difference) on sorted
/// inputs, as the merge-like tiles run them: the tile's ranges between two Balanced Path splits
/// (merge_path.hpp) and the serial loops a thread runs over them. Shared by both backends.

#include <cstdint>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/merge_path.hpp"

namespace gsearch {

/// The multiset set operations (C++ semantics: a key m times in A and n times in B is written
/// min(m, n) times by intersection, max(m, n) by union, max(m - n, 0) by difference and |m - n|
/// by symmetric difference; intersection and union write A's copies where both have one).
enum class set_op : int { intersection, union_, difference, symmetric_difference };

/// The name used by the CLI and the JSON ("intersection", "union", "difference",
/// "symmetric-difference").
constexpr const char* to_string(set_op op) {
  switch (op) {
    case set_op::intersection: return "intersection";
    case set_op::union_: return "union";
    case set_op::difference: return "difference";
    case set_op::symmetric_difference: return "symmetric-difference";
  }
  return "?";
}

}  // namespace gsearch

namespace gsearch::core {

/// The most elements `op` can write for inputs of na and nb elements.
constexpr int64_t set_op_bound(set_op op, int64_t na, int64_t nb) {
  switch (op) {
    case set_op::intersection: return na < nb ? na : nb;
    case set_op::difference: return na;
    case set_op::union_:
    case set_op::symmetric_difference: break;
  }
  return na + nb;
}

/// The serial set operation on A[i, a_end) and B[j, b_end): calls emit(from_a, index) for each
/// element of the result in order (from_a: A[index], else B[index]). Between two Balanced Path
/// splits the copies of a key are paired by rank on each side of the split, so this plain loop
/// over a tile's ranges writes exactly the tile's part of the whole result.
template <set_op Op, class AccA, class AccB, class Index, class Emit>
GSEARCH_HD void serial_set_op(const AccA& a, Index i, Index a_end, const AccB& b, Index j,
                              Index b_end, Emit emit) {
  while (i < a_end && j < b_end) {
    const auto x = a(i);
    const auto y = b(j);
    if (key_less(x, y)) {  // A alone
      if constexpr (Op != set_op::intersection) emit(true, i);
      ++i;
    } else if (key_less(y, x)) {  // B alone
      if constexpr (Op == set_op::union_ || Op == set_op::symmetric_difference) emit(false, j);
      ++j;
    } else {  // a pair: A's copy for intersection and union
      if constexpr (Op == set_op::intersection || Op == set_op::union_) emit(true, i);
      ++i;
      ++j;
    }
  }
  if constexpr (Op != set_op::intersection) {
    for (; i < a_end; ++i) emit(true, i);
  }
  if constexpr (Op == set_op::union_ || Op == set_op::symmetric_difference) {
    for (; j < b_end; ++j) emit(false, j);
  }
}

/// serial_set_op in at most Count steps, unrolled, for a GPU thread whose ranges hold at most
/// Count elements: step k compares the next element of A and of B (kept in registers, each
/// read once), takes one of them or a pair, and calls emit(k, key) when the result gets an
/// element (A's copy of a pair). Steps past the end of both ranges do nothing. A thread keeps
/// its outputs in registers by step, so it can count them before it writes them.
///
/// Padded (the GPU tile's form): the caller guarantees that a(a_end) and b(b_end) can be read
/// (the next slice, or a spare slot after the staged tile; the values read there are never used),
/// so each step loads the next keys of the sides it advanced without testing for the end first,
/// as serial_merge_staged does for the merge.
template <int Count, set_op Op, bool Padded = false, class AccA, class AccB, class Index,
          class Emit>
GSEARCH_HD GSEARCH_FORCEINLINE void serial_set_op_unrolled(const AccA& a, Index i, Index a_end,
                                                           const AccB& b, Index j, Index b_end,
                                                           Emit emit) {
  using T = decltype(a(i));
  T x{}, y{};
  if (Padded || i < a_end) x = a(i);
  if (Padded || j < b_end) y = b(j);
  GSEARCH_UNROLL
  for (int k = 0; k < Count; ++k) {
    const bool has_a = i < a_end, has_b = j < b_end;
    const bool a_alone = has_a && (!has_b || key_less(x, y));
    const bool b_alone = has_b && (!has_a || key_less(y, x));
    const bool pair = has_a && has_b && !a_alone && !b_alone;
    constexpr bool keep_a = Op != set_op::intersection;
    constexpr bool keep_b = Op == set_op::union_ || Op == set_op::symmetric_difference;
    constexpr bool keep_pair = Op == set_op::intersection || Op == set_op::union_;
    if ((keep_a && a_alone) || (keep_b && b_alone) || (keep_pair && pair))
      emit(k, b_alone ? y : x);
    const bool advance_a = a_alone || pair, advance_b = b_alone || pair;
    if constexpr (Padded) {
      i += Index(advance_a);
      j += Index(advance_b);
      if (advance_a) x = a(i);
      if (advance_b) y = b(j);
    } else {
      if (advance_a && ++i < a_end) x = a(i);
      if (advance_b && ++j < b_end) y = b(j);
    }
  }
}

/// Calls f.template operator()<Op>() with Op the compile-time form of `op`.
template <class F>
constexpr decltype(auto) visit_set_op(set_op op, F&& f) {
  switch (op) {
    case set_op::intersection: return f.template operator()<set_op::intersection>();
    case set_op::union_: return f.template operator()<set_op::union_>();
    case set_op::difference: return f.template operator()<set_op::difference>();
    case set_op::symmetric_difference: break;
  }
  return f.template operator()<set_op::symmetric_difference>();
}

/// The A and B ranges of the tile of the Balanced Path between diagonals d0 < d1: the tile's
/// set operation reads A[a0, a1) and B[b0, b1). Every tile but the last is cut at a diagonal
/// below na + nb, where Balanced Path may take one more element of B (the star). Made monotone
/// (monotone_range: a no-op on sorted inputs).
template <class Index>
using set_tile = path_range<Index>;
template <class AccA, class AccB, class Index>
GSEARCH_HD set_tile<Index> set_tile_ranges(const AccA& a, Index na, const AccB& b, Index nb,
                                           Index d0, Index d1) {
  const auto start = balanced_path(a, na, b, nb, d0);
  const Index a0 = start.a_index, b0 = d0 - start.a_index + Index(start.star);
  if (d1 >= na + nb) return {a0, na, b0, nb};
  const auto end = balanced_path(a, na, b, nb, d1);
  return monotone_range(a0, b0, end.a_index, d1 - end.a_index + Index(end.star));
}

}  // namespace gsearch::core
