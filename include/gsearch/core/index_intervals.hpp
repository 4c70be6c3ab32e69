#pragma once
/// \file
/// Index intervals (seeds/004 §4.1-4.2), the pieces both backends share: the three-way
/// classification of an improve step, the splitter choice, where each element goes, the bits that
/// sort like the keys, and the host's record of what is known (interval_set).
///
/// The seed keeps, for every element, the interval [lo, hi] of positions it may take in the sorted
/// array. An improve step takes the members of one interval, picks a splitter among them, compares
/// every member with it, counts (a fold), and narrows every member's interval. Here the members of
/// an interval are kept contiguous, at the positions [lo, hi) they may take (database cracking),
/// so an interval is a piece of the array and one record per piece replaces one per element: an
/// improve is a stable three-way partition of the piece in place (< s, == s, > s), and the piece
/// is replaced by the up to three parts; the equal part is settled (its members are placed).
///
/// What the host records (interval_set):
///  - the pieces, in order, each flagged `settled` when its members are sorted, so that every
///    member sits at its position in the sorted order: a run of equal values, a single element,
///    or pieces a sort settled. Adjacent settled pieces merge (their union is sorted too), so a
///    sorted array is one piece;
///  - facts: at a piece boundary p, a value v and whether the boundary is strict: every element
///    before p is < v (strict) or <= v (not strict), every element after p is >= v (strict) or
///    > v (not strict). Each split leaves one at each new boundary. Their values never decrease
///    with p, so the piece that holds #(x < v) is found by a binary search over the facts
///    (lower_bracket), which is how range(lo, hi) finds what to refine.
///
/// Invariants (check_intervals): the pieces cover [0, n), disjoint and in order; every element of
/// a piece is after every element of the pieces before it, strictly (equal values always share a
/// piece: a three-way split never separates them); settled pieces are sorted; every fact holds;
/// the fact values never decrease.
///
/// The order is key_traits.hpp's (np.sort's): NaN last, -0.0 equal to 0.0.

#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/radix_bits.hpp"  // ordered_bits
#include "gsearch/core/selection.hpp"  // sample_position

namespace gsearch {

/// A piece of an index_intervals array: positions [lo, hi); settled when its members are sorted
/// (each at its final position).
struct index_interval {
  int64_t lo = 0, hi = 0;
  bool settled = false;
  int64_t size() const { return hi - lo; }
  friend bool operator==(const index_interval&, const index_interval&) = default;
};

namespace core {

// --- one improve step (GSEARCH_HD: both backends) --------------------------------------------

/// The class of x against the splitter s: 0 before it, 1 equal, 2 after it.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE int three_way_class(T x, T s) {
  return key_less(x, s) ? 0 : key_less(s, x) ? 2 : 1;
}

/// The median of three values in the key order.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE T median_of_three(T a, T b, T c) {
  if (key_less(b, a)) {
    const T t = a;
    a = b;
    b = t;
  }
  // a <= b
  if (key_less(c, a)) return a;
  if (key_less(b, c)) return b;
  return c;
}

/// The members a splitter is chosen from: the i-th of three (i < 3) at core::sample_position's
/// evenly spread positions of a piece of n >= 1 elements (about n/6, n/2, 5n/6): its formula
/// with s = 3, written out so that the division is by a constant (a multiply on the GPU, where a
/// 64-bit division by a variable is a subroutine), in Index (int in one block, else int64_t).
template <class Index>
GSEARCH_HD GSEARCH_FORCEINLINE Index splitter_sample(int i, Index n) {
  const Index stride = n / 3, rest = n % 3;
  return Index(i) * stride + (Index(i) * rest) / 3 + stride / 2;
}

/// The splitter of a piece of n >= 1 elements, read through at(i): the median of three members at
/// spread positions. The seed says "an element of Y"; a member guarantees progress (its equal
/// part is never empty), the median of three avoids the worst splits of sorted and reversed
/// input (its samples are then the quartiles' neighbours), and fixed positions make the choice
/// deterministic, so that both backends, whose partitions are stable, take the same steps.
template <class Index, class Read>
GSEARCH_HD GSEARCH_FORCEINLINE auto choose_splitter(const Read& at, Index n) {
  return median_of_three(at(splitter_sample(0, n)), at(splitter_sample(1, n)), at(splitter_sample(2, n)));
}

/// What one improve learnt: the splitter and how many members were before it and equal to it
/// (the rest are after it).
template <class T>
struct split_counts {
  T splitter{};
  int64_t less = 0, equal = 0;
};

/// Where member i (its index in the piece) of class c goes in the stable three-way partition of
/// a piece with `less` and `equal` members before and equal to the splitter, given how many
/// members before it are before (less_before) and equal to (equal_before) the splitter.
/// Index: int64_t, or int within one block (fewer registers).
template <class Index>
GSEARCH_HD GSEARCH_FORCEINLINE Index three_way_destination(int c, Index i, Index less_before, Index equal_before, Index less,
                                                           Index equal) {
  if (c == 0) return less_before;
  if (c == 1) return less + equal_before;
  return less + equal + (i - less_before - equal_before);  // the members after it before i
}

/// Two counts in one word for a single scan: `less` in the high 32 bits, `equal` in the low ones
/// (each below 2^32: counts of one block or one tile).
GSEARCH_HD inline uint64_t pack_counts(uint64_t less, uint64_t equal) { return less << 32 | equal; }
GSEARCH_HD inline int64_t packed_less(uint64_t p) { return int64_t(p >> 32); }
GSEARCH_HD inline int64_t packed_equal(uint64_t p) { return int64_t(p & 0xffffffffu); }

// --- the host's record (host code) -----------------------------------------------------------

/// A fact at a piece boundary (see the file comment).
template <class T>
struct boundary_fact {
  int64_t position = 0;
  T value{};
  bool strict = false;  ///< before: < value, after: >= value; else before <= value, after > value
};

/// Where #(x < v) lies (lower_bracket): exactly at `exact` when it is known (>= 0), else somewhere
/// in [piece.lo, piece.hi]: the members of `piece` straddle v.
struct position_bracket {
  index_interval piece;
  int64_t exact = -1;
};

/// The pieces of [0, n) and the facts at their boundaries. Host memory; knows no element.
template <class T>
class interval_set {
 public:
  interval_set() = default;
  /// One unsettled piece [0, n) (settled when n == 1; none when n == 0).
  explicit interval_set(int64_t n) : n_(n) {
    if (n > 0) insert_piece(0, n, n == 1);
  }

  int64_t elements() const { return n_; }
  /// The number of pieces.
  int64_t count() const { return int64_t(pieces_.size()); }
  /// Elements in unsettled pieces.
  int64_t unplaced() const { return unplaced_; }

  /// The piece holding position (0 <= position < n).
  index_interval at(int64_t position) const {
    auto it = std::prev(pieces_.upper_bound(position));
    return {it->first, it->second.hi, it->second.settled};
  }

  /// Every piece, in order.
  std::vector<index_interval> list() const {
    std::vector<index_interval> v;
    v.reserve(pieces_.size());
    for (const auto& [lo, p] : pieces_) v.push_back({lo, p.hi, p.settled});
    return v;
  }

  /// Every fact, in position order.
  std::vector<boundary_fact<T>> facts() const {
    std::vector<boundary_fact<T>> v;
    v.reserve(facts_.size());
    for (const auto& [p, f] : facts_) v.push_back({p, f.value, f.strict});
    return v;
  }

  /// Records the improve of the unsettled piece starting at lo by the splitter s, which found
  /// `less` members before s and `equal` equal to it: the piece becomes its non-empty parts, the
  /// equal one settled (as is a part of one element), and the facts of the new boundaries are
  /// recorded (replacing an older fact at the same position: the new one bounds the same
  /// elements by a value in between). s need not be a member (a range bound), but when it is not,
  /// the piece must be the one lower_bracket(s) named, so that the facts stay in order.
  void split(int64_t lo, T s, int64_t less, int64_t equal) {
    const int64_t hi = pieces_.at(lo).hi;
    const int64_t mid = lo + less, top = lo + less + equal;
    set_fact(mid, s, true);
    if (equal > 0) set_fact(top, s, false);
    erase_piece(lo);
    if (less > 0) insert_piece(lo, mid, less == 1);
    if (equal > 0) insert_piece(mid, top, true);
    if (top < hi) insert_piece(top, hi, hi - top == 1);
    for (int64_t p : {lo, mid, top}) merge_settled_at(p);
    if (hi < n_) merge_settled_at(hi);
  }

  /// Marks every piece settled (after a sort of the unsettled ones): one piece [0, n).
  void settle_all() {
    if (n_ == 0) return;
    pieces_.clear();
    std::map<int64_t, fact> edges;
    for (const auto& [p, f] : facts_)
      if (p == 0 || p == n_) edges.emplace(p, f);
    facts_ = std::move(edges);
    by_value_.clear();
    for (const auto& [p, f] : facts_) by_value_.insert(value_key{f.value, p});
    insert_piece_raw(0, n_, true);
    unplaced_ = 0;
  }

  /// Where #(x < v) lies, from the facts: between the last fact whose value is before v and the
  /// first whose value is not (0 and n when there is none), and as every boundary has a fact,
  /// those two are the ends of one piece. Exact when the second is strict with a value equal to
  /// v (everything before it is < v, everything after >= v), or when both are one position (a
  /// fact at 0 whose value is not before v, or one at n whose value is).
  position_bracket lower_bracket(T v) const {
    if (n_ == 0) return {{0, 0, true}, 0};
    int64_t lo = 0, hi = n_;
    // by_value_ is facts_ in value order, which is their position order (see value_key).
    const auto it = by_value_.lower_bound(value_key{v, std::numeric_limits<int64_t>::min()});
    if (it != by_value_.begin()) lo = std::prev(it)->position;
    if (it != by_value_.end()) {
      hi = it->position;
      const fact& f = facts_.at(hi);
      if (f.strict && !key_less(v, f.value)) return {piece_near(hi), hi};  // f.value == v
    }
    if (lo == hi) return {piece_near(lo), lo};
    return {at(lo), -1};
  }

 private:
  struct piece {
    int64_t hi;
    bool settled;
  };
  struct fact {
    T value;
    bool strict;
  };
  // A fact's place in the value order: (value, position), ties by position. Facts' values never
  // decrease with position, so this order is the position order.
  struct value_key {
    T value;
    int64_t position;
  };
  struct value_order {
    bool operator()(const value_key& a, const value_key& b) const {
      if (key_less(a.value, b.value)) return true;
      if (key_less(b.value, a.value)) return false;
      return a.position < b.position;
    }
  };

  index_interval piece_near(int64_t p) const { return at(p < n_ ? p : n_ - 1); }
  void insert_piece_raw(int64_t lo, int64_t hi, bool settled) { pieces_.emplace(lo, piece{hi, settled}); }
  void insert_piece(int64_t lo, int64_t hi, bool settled) {
    insert_piece_raw(lo, hi, settled);
    if (!settled) unplaced_ += hi - lo;
  }
  void erase_piece(int64_t lo) {
    auto it = pieces_.find(lo);
    if (!it->second.settled) unplaced_ -= it->second.hi - lo;
    pieces_.erase(it);
  }
  void set_fact(int64_t p, T v, bool strict) {
    erase_fact(p);
    facts_.emplace(p, fact{v, strict});
    by_value_.insert(value_key{v, p});
  }
  void erase_fact(int64_t p) {
    auto it = facts_.find(p);
    if (it == facts_.end()) return;
    by_value_.erase(value_key{it->second.value, p});
    facts_.erase(it);
  }
  // Merges the pieces that meet at p when both are settled (their union is sorted); the fact at
  // p goes with the boundary.
  void merge_settled_at(int64_t p) {
    if (p <= 0 || p >= n_) return;
    auto right = pieces_.find(p);
    if (right == pieces_.end() || right == pieces_.begin()) return;
    auto left = std::prev(right);
    if (!left->second.settled || !right->second.settled) return;
    left->second.hi = right->second.hi;
    pieces_.erase(right);
    erase_fact(p);
  }

  int64_t n_ = 0, unplaced_ = 0;
  std::map<int64_t, piece> pieces_;  // by first position
  std::map<int64_t, fact> facts_;    // by position: piece boundaries, and 0 or n
  std::set<value_key, value_order> by_value_;
};

/// The invariants of the file comment for the elements data[0, n) (host memory) and their record;
/// "" when they hold, else the first one broken. O(n) time and memory, plus the pieces and facts.
template <class T>
std::string check_intervals(const interval_set<T>& set, const T* data, int64_t n) {
  std::ostringstream why;
  if (set.elements() != n) return "the record is of " + std::to_string(set.elements()) + " elements, not " + std::to_string(n);
  int64_t next = 0, unplaced = 0;
  bool has_prev = false;
  T prev_max{};
  for (const index_interval& piece : set.list()) {
    if (piece.lo != next || piece.hi <= piece.lo) {
      why << "piece [" << piece.lo << ", " << piece.hi << ") does not follow position " << next;
      return why.str();
    }
    next = piece.hi;
    if (!piece.settled) unplaced += piece.size();
    T lo_v = data[piece.lo], hi_v = data[piece.lo];
    for (int64_t i = piece.lo; i < piece.hi; ++i) {
      if (piece.settled && i > piece.lo && key_less(data[i], data[i - 1])) {
        why << "settled piece [" << piece.lo << ", " << piece.hi << ") is not sorted at " << i;
        return why.str();
      }
      if (key_less(data[i], lo_v)) lo_v = data[i];
      if (key_less(hi_v, data[i])) hi_v = data[i];
    }
    if (has_prev && !key_less(prev_max, lo_v)) {
      why << "piece [" << piece.lo << ", " << piece.hi << ") has an element not after every element before it";
      return why.str();
    }
    has_prev = true;
    prev_max = hi_v;
  }
  if (next != n) return "the pieces end at " + std::to_string(next) + ", not " + std::to_string(n);
  if (unplaced != set.unplaced()) return "unplaced() is " + std::to_string(set.unplaced()) + ", the unsettled pieces hold " + std::to_string(unplaced);
  // The facts, against the largest element before each position and the smallest after it.
  std::vector<T> max_before(size_t(n) + 1), min_after(size_t(n) + 1);
  for (int64_t i = 0; i < n; ++i)
    max_before[size_t(i + 1)] = i == 0 || key_less(max_before[size_t(i)], data[i]) ? data[i] : max_before[size_t(i)];
  for (int64_t i = n - 1; i >= 0; --i)
    min_after[size_t(i)] = i == n - 1 || key_less(data[i], min_after[size_t(i + 1)]) ? data[i] : min_after[size_t(i + 1)];
  bool first = true;
  T last{};
  for (const boundary_fact<T>& f : set.facts()) {
    if (f.position < 0 || f.position > n) return "a fact at position " + std::to_string(f.position);
    if (!first && key_less(f.value, last)) return "the fact at " + std::to_string(f.position) + " has a value before the previous fact's";
    first = false;
    last = f.value;
    const size_t p = size_t(f.position);
    const bool before_ok = f.position == 0 || (f.strict ? key_less(max_before[p], f.value) : key_less_equal(max_before[p], f.value));
    const bool after_ok = f.position == n || (f.strict ? key_less_equal(f.value, min_after[p]) : key_less(f.value, min_after[p]));
    if (!before_ok || !after_ok) {
      why << "the " << (f.strict ? "strict " : "") << "fact at " << f.position << " fails on the elements "
          << (before_ok ? "after" : "before") << " it";
      return why.str();
    }
  }
  return "";
}

}  // namespace core
}  // namespace gsearch
