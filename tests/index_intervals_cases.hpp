#pragma once
// The checks of the index-interval tests, shared by the CPU test (index_intervals_test.cpp) and
// the GPU test (gpu_index_intervals_test.cpp): each drives an index_intervals object (on whichever
// backend it was built) and returns "" when everything held, else a description of the first
// fault, so that either test can ASSERT_EQ(..., ""). References: std::sort of a copy of the input
// in the key order (selection_cases.hpp's inputs and helpers) and plain counting loops.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "selection_cases.hpp"

namespace gsearch::test::intervals {

using selection::key_equal;
using selection::make_input;
using selection::shape;
using selection::show;
using selection::sorted_copy;

/// A host copy of ii.data().
template <class T>
std::vector<T> host_data(const index_intervals<T>& ii) {
  std::vector<T> h(static_cast<size_t>(ii.size()));
  if (ii.size() == 0) return h;
  if (ii.on_device()) {
    copy_to_host(h.data(), ii.data().data(), h.size() * sizeof(T));
  } else {
    std::memcpy(h.data(), ii.data().data(), h.size() * sizeof(T));
  }
  return h;
}

/// "" when `now` holds the very elements of `input` (bit for bit: NaN payloads, -0.0), in any order.
template <class T>
std::string check_permutation(const std::vector<T>& input, const std::vector<T>& now) {
  if (input.size() != now.size()) return "size changed";
  std::vector<core::radix_bits_t<T>> a(input.size()), b(now.size());
  for (size_t i = 0; i < a.size(); ++i) {
    std::memcpy(&a[i], &input[i], sizeof(T));
    std::memcpy(&b[i], &now[i], sizeof(T));
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b ? "" : "data() is not a permutation of the input";
}

/// "" when the settled pieces of ii hold the elements of the sorted reference at their positions.
template <class T>
std::string check_settled_against(const index_intervals<T>& ii, const std::vector<T>& data, const std::vector<T>& sorted) {
  for (const index_interval& p : ii.interval_list()) {
    if (!p.settled) continue;
    for (int64_t i = p.lo; i < p.hi; ++i)
      if (!key_equal(data[size_t(i)], sorted[size_t(i)]))
        return "settled position " + std::to_string(i) + " holds " + show(data[size_t(i)]) + ", the sort " +
               show(sorted[size_t(i)]);
  }
  return "";
}

/// Everything that must hold of ii at any time: its invariants, a permutation of the input, and
/// its settled positions equal to the sorted input's.
template <class T>
std::string check_state(const index_intervals<T>& ii, const std::vector<T>& input, const std::vector<T>& sorted) {
  if (std::string why = ii.check(); !why.empty()) return "invariants: " + why;
  const std::vector<T> data = host_data(ii);
  if (std::string why = check_permutation(input, data); !why.empty()) return why;
  return check_settled_against(ii, data, sorted);
}

/// improve() at random positions, `steps` times, the state checked after every step: the piece
/// holding the position shrinks (or stays, settled, at no cost), improves() counts the steps.
template <class T>
std::string improve_walk(index_intervals<T>& ii, const std::vector<T>& input, uint64_t seed, int steps) {
  const std::vector<T> sorted = sorted_copy(input);
  std::mt19937_64 rng(seed);
  for (int s = 0; s < steps && ii.size() > 0; ++s) {
    const int64_t p = int64_t(rng() % uint64_t(ii.size()));
    const index_interval before = ii.interval(p);
    const int64_t count = ii.improves();
    const index_interval after = ii.improve(p);
    std::ostringstream at;
    at << "step " << s << ", position " << p << ", piece [" << before.lo << ", " << before.hi << "): ";
    if (before.settled) {
      if (ii.improves() != count || !(after.lo <= before.lo && before.hi <= after.hi) || !after.settled)
        return at.str() + "a settled piece changed or was improved";
      continue;
    }
    if (ii.improves() != count + 1) return at.str() + "improves() did not count the step";
    // An unsettled piece shrinks; a settled one may have merged with settled neighbours.
    if (after.lo > p || after.hi <= p) return at.str() + "the piece returned does not hold the position";
    if (!after.settled && (after.lo < before.lo || after.hi > before.hi || after.size() == before.size()))
      return at.str() + "the piece did not shrink";
    if (std::string why = check_state(ii, input, sorted); !why.empty()) return at.str() + why;
  }
  return "";
}

/// select(k) for each k against the sort; the state checked after each.
template <class T>
std::string check_selects(index_intervals<T>& ii, const std::vector<T>& input, const std::vector<int64_t>& ranks) {
  const std::vector<T> sorted = sorted_copy(input);
  for (int64_t k : ranks) {
    const T v = ii.select(k);
    if (!key_equal(v, sorted[size_t(k)]))
      return "select(" + std::to_string(k) + ") = " + show(v) + ", the sort has " + show(sorted[size_t(k)]);
    if (!ii.interval(k).settled) return "select(" + std::to_string(k) + ") left its piece unsettled";
    if (std::string why = check_state(ii, input, sorted); !why.empty()) return "after select(" + std::to_string(k) + "): " + why;
  }
  return "";
}

/// range(lo, hi) for each pair against counting loops; data()[b, e) holds exactly the x with
/// lo <= x < hi; the state checked after each.
template <class T>
std::string check_ranges(index_intervals<T>& ii, const std::vector<T>& input, const std::vector<std::pair<T, T>>& queries) {
  const std::vector<T> sorted = sorted_copy(input);
  for (const auto& [lo, hi] : queries) {
    const position_range r = ii.range(lo, hi);
    std::ostringstream q;
    q << "range(" << show(lo) << ", " << show(hi) << ") = [" << r.begin << ", " << r.end << "): ";
    if (!key_less(lo, hi)) {
      if (r.size() != 0) return q.str() + "not empty";
      continue;
    }
    int64_t below = 0, inside = 0;
    for (T x : input) {
      below += key_less(x, lo);
      inside += !key_less(x, lo) && key_less(x, hi);
    }
    if (r.begin != below || r.size() != inside)
      return q.str() + "expected [" + std::to_string(below) + ", " + std::to_string(below + inside) + ")";
    const std::vector<T> data = host_data(ii);
    for (int64_t i = r.begin; i < r.end; ++i)
      if (key_less(data[size_t(i)], lo) || !key_less(data[size_t(i)], hi))
        return q.str() + "position " + std::to_string(i) + " holds " + show(data[size_t(i)]);
    if (std::string why = check_state(ii, input, sorted); !why.empty()) return q.str() + why;
  }
  return "";
}

/// sort(): data() equals the sorted input, one settled piece, nothing unplaced.
template <class T>
std::string check_sort(index_intervals<T>& ii, const std::vector<T>& input) {
  ii.sort();
  const std::vector<T> sorted = sorted_copy(input), data = host_data(ii);
  for (size_t i = 0; i < data.size(); ++i)
    if (!key_equal(data[i], sorted[i])) return "sort(): position " + std::to_string(i) + " holds " + show(data[i]);
  if (ii.unplaced() != 0 || ii.intervals() != (input.empty() ? 0 : 1)) return "sort() left pieces unsettled";
  return check_state(ii, input, sorted);
}

/// Rank lists: the ends, the middle, neighbours (reuse), a few random ones.
inline std::vector<int64_t> ranks_of(int64_t n, uint64_t seed) {
  std::vector<int64_t> r;
  if (n <= 0) return r;
  for (int64_t k : {n / 2, n / 2 + 1, int64_t{0}, n - 1, n / 3, n / 2 - 1}) r.push_back(std::clamp<int64_t>(k, 0, n - 1));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 4; ++i) r.push_back(int64_t(rng() % uint64_t(n)));
  return r;
}

/// Range queries: bounds drawn from the data (equal to elements), beyond both ends, empty and
/// inverted ones, and for floats NaN and the infinities as bounds.
template <class T>
std::vector<std::pair<T, T>> range_queries(const std::vector<T>& input, uint64_t seed) {
  std::vector<std::pair<T, T>> q;
  const T lowest = key_traits<T>::lowest(), highest = key_traits<T>::highest();
  q.push_back({lowest, highest});
  if (input.empty()) return q;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 6; ++i) {
    T a = input[rng() % input.size()], b = input[rng() % input.size()];
    if (key_less(b, a)) std::swap(a, b);
    q.push_back({a, b});
  }
  q.push_back({input[0], input[0]});      // empty
  q.push_back({input.back(), lowest});    // inverted, unless input.back() is lowest
  q.push_back({lowest, input[input.size() / 2]});
  q.push_back({input[input.size() / 2], highest});
  if constexpr (std::is_floating_point_v<T>) {
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    q.push_back({T(-0.0), T(1)});
    q.push_back({T(0.0), nan});
    q.push_back({-inf, inf});
    q.push_back({inf, nan});
  }
  return q;
}

}  // namespace gsearch::test::intervals
