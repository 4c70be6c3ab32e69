#pragma once
/// \file
/// Host-side passes over a functional-arrays machine's cells, shared by the CPU's machine (its
/// own arrays) and the GPU's (a copy brought to the host): a version's view (items), the sweep
/// that frees the cells no live version holds (collect), and the invariants (check). The per-
/// operation passes are core/functional_arrays.hpp's, run where the cells live.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gsearch/core/functional_arrays.hpp"
#include "gsearch/core/span.hpp"

namespace gsearch::detail {

/// The cells of a version (open position `open`) in index order.
inline std::vector<int64_t> fa_held_cells(const int64_t* index, const core::fa_span* spans, int64_t cells,
                                          int64_t open) {
  std::vector<int64_t> held;
  for (int64_t c = 0; c < cells; ++c)
    if (!core::fa_is_free(spans[c]) && core::fa_holds(spans[c], open)) held.push_back(c);
  std::sort(held.begin(), held.end(), [&](int64_t a, int64_t b) { return index[a] < index[b]; });
  return held;
}

/// The defined indices of the version whose open is `open`, and their values, in index order.
template <class V>
void fa_items(const int64_t* index, const V* value, const core::fa_span* spans, int64_t cells, int64_t open,
              std::vector<int64_t>& idx, std::vector<V>& values) {
  const std::vector<int64_t> held = fa_held_cells(index, spans, cells, open);
  idx.resize(held.size());
  values.resize(held.size());
  for (size_t k = 0; k < held.size(); ++k) {
    idx[k] = index[size_t(held[k])];
    values[k] = value[size_t(held[k])];
  }
}

/// The open positions of the `live` version slots.
inline std::vector<int64_t> fa_opens_of(const int64_t* open, span<const int64_t> live) {
  std::vector<int64_t> opens;
  opens.reserve(size_t(live.size()));
  for (const int64_t s : live) opens.push_back(open[size_t(s)]);
  return opens;
}

/// A GPU machine's cells and opens brought to the host (what items, the sweep and the checks read).
template <class V>
struct fa_host_copy {
  std::vector<int64_t> index;
  std::vector<V> value;
  std::vector<core::fa_span> spans;
  std::vector<int64_t> open;
};

/// Frees (in `spans`) every used cell that no live open lies in; returns every free cell.
inline std::vector<int64_t> fa_sweep(core::fa_span* spans, int64_t cells, std::vector<int64_t> live_opens) {
  std::sort(live_opens.begin(), live_opens.end());
  std::vector<int64_t> free_cells;
  for (int64_t c = 0; c < cells; ++c) {
    core::fa_span& s = spans[c];
    if (!core::fa_is_free(s)) {
      const auto it = std::lower_bound(live_opens.begin(), live_opens.end(), s.first);
      if (it != live_opens.end() && *it <= s.last) continue;  // a live version holds it
      s = core::fa_free_cell();
    }
    free_cells.push_back(c);
  }
  return free_cells;
}

/// The pieces of index i disjoint and on the line [0, end): "" when they are.
inline std::string fa_check_index(const int64_t* index, const core::fa_span* spans, int64_t cells, int64_t i,
                                  int64_t end) {
  std::vector<core::fa_span> pieces;
  for (int64_t c = 0; c < cells; ++c)
    if (!core::fa_is_free(spans[c]) && index[c] == i) pieces.push_back(spans[c]);
  std::sort(pieces.begin(), pieces.end(), [](const core::fa_span& a, const core::fa_span& b) { return a.first < b.first; });
  for (size_t k = 0; k < pieces.size(); ++k) {
    if (pieces[k].first < 0 || pieces[k].last >= end) return "a piece of index " + std::to_string(i) + " lies outside the line";
    if (k > 0 && pieces[k - 1].last >= pieces[k].first) return "two pieces of index " + std::to_string(i) + " overlap";
  }
  return "";
}

/// Every invariant: each used piece on the line, the pieces of one index disjoint, the live
/// opens on the line and distinct. "" when they hold.
inline std::string fa_check(const int64_t* index, const core::fa_span* spans, int64_t cells,
                            std::vector<int64_t> live_opens, int64_t end) {
  std::vector<int64_t> used;
  for (int64_t c = 0; c < cells; ++c) {
    if (core::fa_is_free(spans[c])) continue;
    if (spans[c].first < 0 || spans[c].last >= end)
      return "cell " + std::to_string(c) + " holds positions [" + std::to_string(spans[c].first) + ", " +
             std::to_string(spans[c].last) + "] outside [0, " + std::to_string(end) + ")";
    used.push_back(c);
  }
  std::sort(used.begin(), used.end(), [&](int64_t a, int64_t b) {
    return index[a] != index[b] ? index[a] < index[b] : spans[a].first < spans[b].first;
  });
  for (size_t k = 1; k < used.size(); ++k) {
    const int64_t a = used[k - 1], b = used[k];
    if (index[a] == index[b] && spans[a].last >= spans[b].first)
      return "cells " + std::to_string(a) + " and " + std::to_string(b) + " of index " + std::to_string(index[a]) +
             " overlap";
  }
  std::sort(live_opens.begin(), live_opens.end());
  for (size_t k = 0; k < live_opens.size(); ++k) {
    if (live_opens[k] < 0 || live_opens[k] >= end) return "a live version's open position is outside the line";
    if (k > 0 && live_opens[k] == live_opens[k - 1]) return "two live versions share an open position";
  }
  return "";
}

}  // namespace gsearch::detail
