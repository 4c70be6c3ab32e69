#pragma once
// What the selection family's CPU files share (cpu_select.cpp defines the two selects; the small
// helpers are inline): cpu_rows.cpp and cpu_quantile.cpp select through select_values, as
// select and partition do.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cpu/parallel.hpp"
#include "cpu/tuning.hpp"
#include "gsearch/core/key_traits.hpp"

namespace gsearch::cpu_backend::select_detail {

/// The elements of `ranks` (any order, repeats allowed) of data[0, n), in one select; in the
/// order of the sorted distinct ranks.
template <class T>
std::vector<T> select_values(int threads, const T* data, int64_t n, std::vector<int64_t> ranks);

/// values[k] = the element of rank ranks[k] (sorted, distinct, in [0, n)) of data[0, n) by the
/// many-rank radix passes (cpu_many_select.cpp); false, nothing written, where its plan gives up
/// or m is past selection_tuning::many_max_ranks (the caller selects another way).
template <class T>
bool select_many(int threads, const T* data, int64_t n, const int64_t* ranks, int64_t m, T* values);

/// NaN elements of data[0, n) (0 for integer keys), counted on all cores.
template <class T>
int64_t count_nan(int threads, const T* data, int64_t n);

template <class T>
inline bool key_equal(T a, T b) {
  return !key_less(a, b) && !key_less(b, a);
}

// body(part, begin, end) for `parts` contiguous parts of [0, n), in parallel: the part index
// keys the per-part counts.
template <class Body>
void for_parts(int64_t n, int parts, Body body) {
  const int64_t len = (n + parts - 1) / parts;
  parallel_for(parts, parts, 1, [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) body(int(p), p * len, std::min(n, (p + 1) * len));
  });
}

/// Parts of n elements for `threads` threads, each at least selection_tuning::min_elements_per_thread.
inline int parts_for(int threads, int64_t n) { return thread_count(threads, n, selection_tuning::min_elements_per_thread); }

// The element of rank r, of a select whose sorted distinct ranks and values are given.
template <class T>
T value_of(const std::vector<int64_t>& sorted_ranks, const std::vector<T>& values, int64_t r) {
  return values[size_t(std::lower_bound(sorted_ranks.begin(), sorted_ranks.end(), r) - sorted_ranks.begin())];
}

inline std::vector<int64_t> sorted_distinct(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace gsearch::cpu_backend::select_detail
