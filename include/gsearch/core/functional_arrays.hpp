#pragma once
/// \file
/// Extensible sparse functional arrays (seed 004 §4.3-4.4, issue 23) as a machine of cells in
/// which every operation is a broadcast, a compare-and-increment in every cell, and a fold: the
/// per-cell steps both backends run (the CPU's loop, the GPU's kernel), and the rules that make
/// them right (docs/design.md, "Functional arrays").
///
/// The versions (the arrays ever made) form a tree: update(a, i, v) and remove(a, i) make a child
/// of a, empty() a root. The tree is kept as a line of positions, its Euler tour: a version is
/// its `open` position, and its descendants are the versions whose open lies after it and before
/// its close. A new child of a is inserted right after open(a): every position after open(a) in
/// the whole machine moves up by 2 (the compare-and-increment step) and the child takes
/// open(a) + 1 (its close is open(a) + 2).
///
/// A cell is a piece: (index i, value v, positions [first, last]) says "the versions whose open
/// lies in [first, last] have a[i] == v". Invariant: the pieces of one index are disjoint, so a
/// version sees at most one piece of each index, and
///   lookup(a, i) = the value of the piece of index i that contains open(a), or absent;
///   size(a)      = the number of pieces containing open(a);
///   next(a, i)   = the least index > i among the pieces containing open(a);
/// each one pass over the cells and a fold, whatever the history. An update (or remove) of index
/// i at version a (p = open(a)) keeps the invariant by carving the new version's positions out of
/// the piece of i that contains p, in the same pass as the increment:
///   [first, last] (first <= p <= last) becomes [first, p] (in place) and [p + 3, last + 2] (a
///   free cell: the versions after the new child's subtree still see the old value), and an update
///   adds the piece [p + 1, p + 2] with the new value (the new child and, later, its descendants).
/// So an update takes at most 2 free cells and a remove 1; the machine checks that it has them
/// before it changes anything (a full machine loses nothing).
///
/// The increment rule: inserting after p, a piece's first moves when first > p, its last when
/// last >= p (a piece ending at p holds the version at p, whose new child it must hold too), a
/// version's open when open > p.
///
/// Released versions leave their positions on the line (no cell names a version); a cell is
/// garbage once no live version's open lies in [first, last], found by a sweep (fa_live: the live
/// opens sorted, one search per cell) when the machine runs out of free cells.

#include <cstdint>

#include "gsearch/core/config.hpp"

namespace gsearch::core {

/// A cell's positions. Free cells have last < first (fa_free_cell).
struct fa_span {
  int64_t first = 1;
  int64_t last = 0;
};

/// The positions of a free cell.
GSEARCH_HD inline fa_span fa_free_cell() { return {1, 0}; }
GSEARCH_HD inline bool fa_is_free(const fa_span& s) { return s.last < s.first; }

/// Whether the piece holds the version whose open position is `open`.
GSEARCH_HD inline bool fa_holds(const fa_span& s, int64_t open) { return s.first <= open && open <= s.last; }

/// The increment step, inserting two positions right after p (see the file comment).
GSEARCH_HD inline int64_t fa_shift_first(int64_t first, int64_t p) { return first > p ? first + 2 : first; }
GSEARCH_HD inline int64_t fa_shift_last(int64_t last, int64_t p) { return last >= p ? last + 2 : last; }
GSEARCH_HD inline int64_t fa_shift_open(int64_t open, int64_t p) { return open > p ? open + 2 : open; }

/// What an operation does to the machine in its one pass.
enum class fa_change : int32_t {
  update = 1,  ///< a child of the version at p with index i bound (to the operation's value)
  remove = 2,  ///< a child of the version at p without index i
};

/// One cell's part of an update or remove of index i at the version whose open is p: its
/// increment, and, when it is the piece of i that holds p, the carve. Returns the piece left
/// after the new child's subtree ([p + 3, last + 2]; free when there is none) for the caller to
/// put in a free cell; `carved` says whether this cell was the piece of i at p (at most one is).
GSEARCH_HD inline fa_span fa_insert_step(fa_span& s, int64_t cell_index, int64_t i, int64_t p, bool& carved) {
  carved = false;
  if (fa_is_free(s)) return fa_free_cell();
  const bool mine = cell_index == i && fa_holds(s, p);
  s.first = fa_shift_first(s.first, p);
  s.last = fa_shift_last(s.last, p);
  if (!mine) return fa_free_cell();
  carved = true;
  // Here first <= p and last >= p + 2 (shifted): the part before the child, the child's
  // positions [p + 1, p + 2] taken out, and the part after.
  const fa_span after{p + 3, s.last};
  s.last = p;
  return after;
}

/// The new child's own piece (an update's new binding).
GSEARCH_HD inline fa_span fa_child_span(int64_t p) { return {p + 1, p + 2}; }

/// The open position of a new root (empty()): after every position in use, `end` being one past
/// the last (the machine keeps it, and moves it up by 2 with every insertion).
GSEARCH_HD inline int64_t fa_root_open(int64_t end) { return end; }

/// Cells an operation may need free: update 2 (the carved remainder and the new piece), remove 1.
GSEARCH_HD inline int fa_cells_needed(fa_change c) { return c == fa_change::update ? 2 : 1; }

/// The queries, and what one answers: lookup (found, value), size (number), next (found,
/// number: the index).
enum class fa_query : int32_t { lookup = 0, size = 1, next = 2 };
template <class V>
struct fa_result {
  bool found = false;
  int64_t number = 0;
  V value{};
};

/// Fold identities and steps for the queries (the CPU's loop and the GPU's reduction combine
/// them the same way).
inline constexpr int64_t fa_no_cell = -1;  ///< lookup: no piece of i holds the version

/// next's fold: the least index found so far (every int64 is an index, so a flag says "none").
struct fa_next_best {
  int64_t index = 0;
  bool found = false;
};
GSEARCH_HD inline fa_next_best fa_next_combine(fa_next_best a, fa_next_best b) {
  if (!a.found) return b;
  if (!b.found) return a;
  return a.index <= b.index ? a : b;
}

/// Whether a cell is the piece of index i holding the version at `open` (lookup's match).
GSEARCH_HD inline bool fa_lookup_match(const fa_span& s, int64_t cell_index, int64_t i, int64_t open) {
  return !fa_is_free(s) && cell_index == i && fa_holds(s, open);
}

/// next's candidate from one cell: its index when it holds the version and lies above i.
GSEARCH_HD inline fa_next_best fa_next_candidate(const fa_span& s, int64_t cell_index, int64_t i, int64_t open) {
  return {cell_index, !fa_is_free(s) && cell_index > i && fa_holds(s, open)};
}

}  // namespace gsearch::core
