#pragma once
/// \file
/// The as-of match (pandas.merge_asof, polars' join_asof) of one left key, shared by both
/// backends: within the right rows of the left row's group, sorted by key, the one row whose key
/// is the closest in a direction.
///
///   backward  the last right row whose key is <= the left key (< without exact matches)
///   forward   the first right row whose key is >= the left key (> without exact matches)
///   nearest   the backward and the forward match, each within the tolerance; of two, the
///             closer, and the backward one when they are as close (pandas' `bdiff <= fdiff`)
///
/// "Last" and "first" are in the right rows' order, which within a group is their original
/// order (the grouping is stable): of equal right keys, backward takes the last, forward the
/// first, as pandas does. A match farther than the tolerance is no match (the tolerance is
/// inclusive). Keys compare in key_traits.hpp's order (-0.0 == 0.0; NaN keys are refused before
/// they get here). Distances: integers exactly (an unsigned difference, where pandas subtracts in
/// the key's type and wraps past its range), floats by the key type's subtraction, compared as
/// pandas compares them (a match is refused only when `distance > tolerance`: inf - inf, a NaN,
/// refuses nothing).

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"

namespace gsearch {

/// Which right row an as-of join takes for a left row (pandas' `direction`).
enum class asof_direction : int { backward, forward, nearest };

/// The direction's name, as pandas spells it.
constexpr std::string_view to_string(asof_direction d) {
  return d == asof_direction::backward ? "backward" : d == asof_direction::forward ? "forward" : "nearest";
}

/// The direction named `name` (pandas' names), or nothing.
constexpr std::optional<asof_direction> parse_asof_direction(std::string_view name) {
  for (asof_direction d : {asof_direction::backward, asof_direction::forward, asof_direction::nearest})
    if (to_string(d) == name) return d;
  return std::nullopt;
}

/// What an as-of match follows, for key type T: the public options less their checks.
template <class T>
struct asof_rule {
  asof_direction direction = asof_direction::backward;
  bool allow_exact_matches = true;
  bool has_tolerance = false;
  T tolerance{};  ///< >= 0, when has_tolerance
};

namespace core {

/// Whether `later` - `earlier` (later >= earlier in key order) is within the tolerance.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE bool asof_within(T later, T earlier, T tolerance) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return U(U(later) - U(earlier)) <= U(tolerance);  // exact: later >= earlier, tolerance >= 0
  } else {
    return !(later - earlier > tolerance);  // pandas refuses `diff > tolerance` only
  }
}

/// Whether the backward match (left - back) is at least as close as the forward one (fore -
/// left): pandas' `bdiff <= fdiff`.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE bool asof_backward_wins(T left, T back, T fore) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return U(U(left) - U(back)) <= U(U(fore) - U(left));
  } else {
    return left - back <= fore - left;
  }
}

/// nearest's choice between the backward match `back` (key bk) and the forward one `fore` (key
/// fk), either -1 for none: the backward one when both are as close.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE int64_t asof_pick(T x, int64_t back, int64_t fore, T bk, T fk) {
  if (back >= 0 && fore >= 0) return asof_backward_wins(x, bk, fk) ? back : fore;
  return back >= 0 ? back : fore;
}

/// The right keys in global (or host) memory, read in place.
template <class T>
struct asof_keys {
  const T* data;
  GSEARCH_HD GSEARCH_FORCEINLINE T operator()(int64_t i) const { return data[i]; }
};

/// Right keys with a directory of every sample-th one (dir[t] = data[t sample], for t <
/// ceil(m / sample)): a bound takes a binary search of the directory's entries within the range,
/// then one of a window of sample keys. On the GPU the steps of a search over a whole group that
/// miss L2 (the keys of 10^7 right rows: 80 MB) become steps in the directory (1/64 of the keys:
/// L2-resident) and in one window (512 bytes of int64: a few lines). The directory's entries
/// within one group's range are sorted, as its keys are.
template <class T>
struct asof_sampled_keys {
  static constexpr int64_t sample = 64;
  const T* data;
  const T* dir;
  GSEARCH_HD GSEARCH_FORCEINLINE T operator()(int64_t i) const { return data[i]; }
};

/// The first i in [lo, hi) where pred(right(i)) holds, or hi, for pred false and then true along
/// the range: a plain binary search (every step a read of right).
template <class Acc, class Pred>
GSEARCH_HD GSEARCH_FORCEINLINE int64_t asof_binary_search(const Acc& right, int64_t lo, int64_t hi, Pred pred) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (pred(right(mid))) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/// The first i in [lo, hi) where pred(right(i)) holds, or hi, for pred false and then true along
/// the range (x < key: an upper bound; !(key < x): a lower bound). Two levels for sampled keys.
template <class Acc, class Pred>
GSEARCH_HD GSEARCH_FORCEINLINE int64_t asof_partition_point(const Acc& right, int64_t lo, int64_t hi, Pred pred) {
  if constexpr (requires { right.dir; }) {
    constexpr int64_t S = Acc::sample;
    int64_t tl = (lo + S - 1) / S, th = (hi + S - 1) / S;  // the entries at positions in [lo, hi)
    while (tl < th) {  // the first entry where pred holds
      const int64_t mid = tl + (th - tl) / 2;
      if (pred(right.dir[mid])) th = mid;
      else tl = mid + 1;
    }
    // pred holds at tl S (or tl S >= hi), and not at (tl - 1) S when that is in the range.
    const int64_t a = tl > 0 && (tl - 1) * S >= lo ? (tl - 1) * S + 1 : lo;
    const int64_t b = tl * S < hi ? tl * S : hi;
    return asof_binary_search(right, a, b, pred);
  } else {
    return asof_binary_search(right, lo, hi, pred);
  }
}

/// asof_partition_point over [from, hi) for a point known to lie near `from` (at or after it):
/// galloping probes, each skipping twice the keys of the one before (at from, then after gaps of
/// 1, 2, 4, ... 32 keys), then a binary search of the gap where pred turned true, all within a
/// few neighbouring lines of keys; past the last probe (70 keys on), asof_partition_point of the
/// rest. What a search for a key a little after the last one costs.
template <class Acc, class Pred>
GSEARCH_HD GSEARCH_FORCEINLINE int64_t asof_gallop(const Acc& right, int64_t from, int64_t hi, Pred pred) {
  int64_t a = from;  // pred fails before a
  for (int64_t gap = 0; gap <= 32; gap = gap ? 2 * gap : 1) {
    const int64_t probe = a + gap;
    if (probe >= hi) return asof_binary_search(right, a, hi, pred);
    if (pred(right(probe))) return asof_binary_search(right, a, probe, pred);
    a = probe + 1;
  }
  return asof_partition_point(right, a, hi, pred);
}

/// The as-of match of key x among right(lo) .. right(hi - 1), sorted ascending in key order:
/// its position in [lo, hi), or -1. `right` is an accessor, right(i) the key at i (asof_keys,
/// asof_sampled_keys).
///
/// One search for every direction: where the keys a backward match may take end (the keys not
/// after x, or before it without exact matches), the keys a forward match may take begin, unless
/// keys equal to x lie at that end; then a second search finds the other end of their run.
///
/// `from` is a hint for a run of keys x taken in ascending order: -1 (none), or a position in
/// [lo, hi] not after x's lower bound (the first key not before x), where the searches then
/// start, galloping (asof_gallop). On return it is such a position for x, and so for any later
/// key: what the next call of the same range may start from. (A hint that breaks the rule, from
/// keys out of order, gives unspecified matches in [lo, hi), never a read outside it.)
template <class T, class Acc>
GSEARCH_HD int64_t asof_match(const Acc& right, int64_t lo, int64_t hi, T x, const asof_rule<T>& rule, int64_t& from) {
  const bool exact = rule.allow_exact_matches;
  const auto after_x = [x](T k) { return key_less(x, k); };
  const auto not_before_x = [x](T k) { return !key_less(k, x); };
  const auto search = [&](int64_t a, int64_t b, auto pred) {
    return from >= a ? asof_gallop(right, from, b, pred) : asof_partition_point(right, a, b, pred);
  };
  const int64_t end = exact ? search(lo, hi, after_x) : search(lo, hi, not_before_x);
  // Without exact matches `end` is x's lower bound; with them, it is when the key before it (if
  // any) is before x, and otherwise the run of keys equal to x starts before it.
  const bool run_before_end = exact && end > lo && !key_less(T(right(end - 1)), x);
  if (!run_before_end) from = end;
  int64_t back = -1, fore = -1;
  if (rule.direction != asof_direction::forward) {
    if (end > lo && (!rule.has_tolerance || asof_within(x, T(right(end - 1)), rule.tolerance))) back = end - 1;
    if (rule.direction == asof_direction::backward) return back;
  }
  // Forward's start: the first key not before x (exact) or after x. With exact matches that is
  // `end` unless right(end - 1) equals x; without, unless right(end) does.
  int64_t start = end;
  if (run_before_end) from = start = search(lo, end, not_before_x);
  if (!exact && end < hi && !key_less(x, T(right(end)))) start = asof_gallop(right, end, hi, after_x);
  if (start < hi && (!rule.has_tolerance || asof_within(T(right(start)), x, rule.tolerance))) fore = start;
  if (rule.direction == asof_direction::forward) return fore;
  return asof_pick(x, back, fore, back >= 0 ? T(right(back)) : x, fore >= 0 ? T(right(fore)) : x);
}

/// asof_match without a hint.
template <class T, class Acc>
GSEARCH_HD int64_t asof_match(const Acc& right, int64_t lo, int64_t hi, T x, const asof_rule<T>& rule) {
  int64_t from = -1;
  return asof_match(right, lo, hi, x, rule, from);
}

/// Left row i's match, as both backends write it: the row's group g (0 without groups) is the
/// right rows keys[group_start[g], group_start[g + 1]) (all m of them without groups), whose
/// original positions are order[...] (the identity when order is null). The right row's original
/// index, or -1. `keys` is the keys' accessor (asof_keys, asof_sampled_keys); `from`, asof_match's
/// hint for the row's group (-1: none), is advanced for the group's next row.
template <class T, class Keys>
GSEARCH_HD int64_t asof_row(const T* left, const int64_t* left_by, int64_t i, const Keys& keys, int64_t m,
                            const int64_t* group_start, const int64_t* order, const asof_rule<T>& rule,
                            int64_t& from) {
  int64_t lo = 0, hi = m;
  if (left_by) {
    const int64_t g = left_by[i];
    lo = group_start[g];
    hi = group_start[g + 1];
  }
  const int64_t j = asof_match(keys, lo, hi, left[i], rule, from);
  return j < 0 || !order ? j : order[j];
}

/// asof_row without a hint.
template <class T, class Keys>
GSEARCH_HD int64_t asof_row(const T* left, const int64_t* left_by, int64_t i, const Keys& keys, int64_t m,
                            const int64_t* group_start, const int64_t* order, const asof_rule<T>& rule) {
  int64_t from = -1;
  return asof_row(left, left_by, i, keys, m, group_start, order, rule, from);
}

/// The as-of matches of left rows [begin, end) by pandas' sweep, for a host thread: the right
/// rows (sorted, all m, in their original order) are taken in key order while they come before
/// the left key, each recorded as its group's latest in latest[g] (`groups` entries: scratch,
/// overwritten), and a left row's backward match is its group's latest; forward sweeps down from
/// the end the same way. O(end - begin + m + groups): each call starts from the first (or last)
/// right row, so a thread's chunk needs no state from the one before it. Without groups (left_by
/// and right_by null) groups is 1. The answers are asof_match's (tested against it).
template <class T>
void asof_sweep(const T* left, const int64_t* left_by, int64_t begin, int64_t end, const T* right,
                const int64_t* right_by, int64_t m, const asof_rule<T>& rule, int64_t* latest, int64_t groups,
                int64_t* out) {
  const bool exact = rule.allow_exact_matches;
  const auto group = [](const int64_t* by, int64_t i) { return by ? by[i] : int64_t{0}; };
  if (rule.direction != asof_direction::forward) {
    for (int64_t g = 0; g < groups; ++g) latest[g] = -1;
    int64_t j = 0;
    for (int64_t i = begin; i < end; ++i) {
      const T x = left[i];
      for (; j < m && (exact ? key_less_equal(right[j], x) : key_less(right[j], x)); ++j) latest[group(right_by, j)] = j;
      const int64_t back = latest[group(left_by, i)];
      out[i] = back >= 0 && rule.has_tolerance && !asof_within(x, right[back], rule.tolerance) ? -1 : back;
    }
  }
  if (rule.direction != asof_direction::backward) {
    for (int64_t g = 0; g < groups; ++g) latest[g] = -1;
    int64_t j = m - 1;
    for (int64_t i = end - 1; i >= begin; --i) {
      const T x = left[i];
      for (; j >= 0 && (exact ? !key_less(right[j], x) : key_less(x, right[j])); --j) latest[group(right_by, j)] = j;
      int64_t fore = latest[group(left_by, i)];
      if (fore >= 0 && rule.has_tolerance && !asof_within(right[fore], x, rule.tolerance)) fore = -1;
      if (rule.direction == asof_direction::forward) {
        out[i] = fore;
      } else {
        const int64_t back = out[i];
        out[i] = asof_pick(x, back, fore, back >= 0 ? right[back] : x, fore >= 0 ? right[fore] : x);
      }
    }
  }
}

}  // namespace core
}  // namespace gsearch
