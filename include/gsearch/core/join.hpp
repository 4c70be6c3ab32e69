#pragma once
/// \file
/// The arithmetic of the sort-merge joins, shared by both backends: which rows a join writes and
/// where, from the two sorted searches of the keys (left into right, right into left).
///
/// A join of sorted `left` (nl rows) and sorted `right` (nr rows) writes pairs (left index,
/// right index), -1 for the missing side, ordered by key, then left index, then right index:
/// for each key in increasing order, the cross product of its left rows and right rows (left
/// index major), a left row with no match as (i, -1) (left and full joins), a right row with no
/// match as (-1, j) (right and full joins). Semi and anti joins write left indices alone: the
/// rows with at least one match, or with none.
///
/// Positions: left row i owns weight(i) consecutive outputs, right row j one output when it is
/// kept unmatched. With SL the exclusive scan of the left weights and SR that of the right ones,
/// left row i's outputs start at SL[i] + SR[lo_i] (lo_i = lower_bound(right, left[i]): the
/// right rows before it in key order) and unmatched right row j's output at SR[j] + SL[rl_j]
/// (rl_j = lower_bound(left, right[j])). The left rows' outputs, in left-only order
/// u = SL[i] + t, sit at u + SR[lo_i]: a load-balanced expansion over u covers them.

#include <cstdint>

#include "gsearch/core/config.hpp"

namespace gsearch {

/// The joins on sorted keys.
enum class join_kind : int { inner, left, right, full, semi, anti };

/// The name used by the CLI and the JSON ("inner", "left", "right", "full", "semi", "anti").
constexpr const char* to_string(join_kind k) {
  switch (k) {
    case join_kind::inner: return "inner";
    case join_kind::left: return "left";
    case join_kind::right: return "right";
    case join_kind::full: return "full";
    case join_kind::semi: return "semi";
    case join_kind::anti: return "anti";
  }
  return "?";
}

/// Where a join writes its gather maps: `left` for every kind, `right` except for semi and anti
/// (nullptr there).
struct join_output {
  int64_t* left = nullptr;
  int64_t* right = nullptr;
};

}  // namespace gsearch

namespace gsearch::core {

/// True when the join writes only left indices (semi, anti).
GSEARCH_HD constexpr bool join_left_only(join_kind k) {
  return k == join_kind::semi || k == join_kind::anti;
}

/// The outputs of a left row with `matches` equal right rows.
GSEARCH_HD constexpr int64_t join_left_weight(join_kind k, int64_t matches) {
  switch (k) {
    case join_kind::inner:
    case join_kind::right: return matches;
    case join_kind::left:
    case join_kind::full: return matches > 0 ? matches : 1;
    case join_kind::semi: return matches > 0 ? 1 : 0;
    case join_kind::anti: return matches > 0 ? 0 : 1;
  }
  return 0;
}

/// The outputs of a right row with `matches` equal left rows: 1 when it is kept unmatched.
GSEARCH_HD constexpr int64_t join_right_weight(join_kind k, int64_t matches) {
  return (k == join_kind::right || k == join_kind::full) && matches == 0 ? 1 : 0;
}

/// Output t (0 <= t < join_left_weight) of left row i, whose matches are right rows
/// [lo, lo + matches): the pair's right index (-1 when unmatched). Semi and anti write only i.
GSEARCH_HD constexpr int64_t join_right_index(int64_t lo, int64_t matches, int64_t t) {
  return matches > 0 ? lo + t : -1;
}

}  // namespace gsearch::core
