#pragma once
// The as-of join's cases, shared by the CPU tests (asof_test.cpp) and the GPU tests
// (gpu_asof_test.cpp): sorted keys with long runs of duplicates, the type's extremes, -0.0 / 0.0 /
// inf, groups present on one side only, and every rule (direction x exact matches x tolerance),
// against a reference that is pandas.merge_asof's definition written as plain scans (no search,
// no grouping step, exact integer distances).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <utility>
#include <string>
#include <type_traits>
#include <vector>

#include "gsearch/asof.hpp"

namespace gsearch::test {

template <class T>
struct AsofCase {
  std::string what;
  std::vector<T> left, right;
  bool grouped = false;
  int64_t groups = 0;
  std::vector<int64_t> left_by, right_by;
};

// later - earlier <= tolerance, exactly for integers (128-bit), by T's subtraction for floats as
// pandas computes it (refused only when the difference is > the tolerance).
template <class T>
bool plain_within(T later, T earlier, T tolerance) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<__int128>(later) - static_cast<__int128>(earlier) <= static_cast<__int128>(tolerance);
  } else {
    return !(later - earlier > tolerance);
  }
}

template <class T>
bool plain_backward_wins(T left, T back, T fore) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<__int128>(left) - back <= static_cast<__int128>(fore) - left;
  } else {
    return left - back <= fore - left;
  }
}

// pandas' definition: backward = the last right row of the group with key <= the left key (<
// without exact matches), forward = the first with key >= (>), each dropped when farther than the
// tolerance; nearest = the closer of the two, backward on a tie.
// A left row scans every right row of its group (listed once per call: the scan of all right rows
// a left row made the 40,000 x 3,000 case the slowest test under the sanitizers).
template <class T>
std::vector<int64_t> reference_asof(const AsofCase<T>& c, const asof_options<T>& o) {
  std::vector<int64_t> out(c.left.size(), -1);
  const bool exact = o.allow_exact_matches;
  std::map<int64_t, std::vector<size_t>> rows_of;  // group code -> its right rows, in order
  for (size_t j = 0; j < c.right.size(); ++j) rows_of[c.grouped ? c.right_by[j] : 0].push_back(j);
  const std::vector<size_t> none;
  for (size_t i = 0; i < c.left.size(); ++i) {
    const T x = c.left[i];
    int64_t back = -1, fore = -1;
    const auto group = rows_of.find(c.grouped ? c.left_by[i] : 0);
    for (size_t j : group == rows_of.end() ? none : group->second) {
      const T r = c.right[j];
      if (exact ? r <= x : r < x) back = int64_t(j);
      if (fore < 0 && (exact ? r >= x : r > x)) fore = int64_t(j);
    }
    if (o.tolerance) {
      if (back >= 0 && !plain_within(x, c.right[size_t(back)], *o.tolerance)) back = -1;
      if (fore >= 0 && !plain_within(c.right[size_t(fore)], x, *o.tolerance)) fore = -1;
    }
    if (o.direction == asof_direction::backward) out[i] = back;
    else if (o.direction == asof_direction::forward) out[i] = fore;
    else if (back >= 0 && fore >= 0) out[i] = plain_backward_wins(x, c.right[size_t(back)], c.right[size_t(fore)]) ? back : fore;
    else out[i] = back >= 0 ? back : fore;
  }
  return out;
}

// Every rule: the three directions, exact matches allowed or not, no tolerance, 0, a small one
// and the largest.
template <class T>
std::vector<asof_options<T>> asof_rules() {
  std::vector<asof_options<T>> all;
  const std::optional<T> tolerances[] = {std::nullopt, T(0), T(3), std::numeric_limits<T>::max()};
  for (asof_direction d : {asof_direction::backward, asof_direction::forward, asof_direction::nearest})
    for (bool exact : {true, false})
      for (const auto& tol : tolerances) {
        asof_options<T> o;
        o.direction = d;
        o.allow_exact_matches = exact;
        o.tolerance = tol;
        all.push_back(o);
      }
  return all;
}

template <class T>
std::string describe(const asof_options<T>& o) {
  std::string s(to_string(o.direction));
  s += o.allow_exact_matches ? " exact" : " strict";
  if (o.tolerance) s += " tolerance " + std::to_string(double(*o.tolerance));
  return s;
}

// n sorted keys drawn from `pool` (with repeats: long runs when the pool is small).
template <class T>
std::vector<T> sorted_draw(const std::vector<T>& pool, int64_t n, std::mt19937_64& rng) {
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) x = pool[rng() % pool.size()];
  std::sort(v.begin(), v.end(), [](T a, T b) { return key_less(a, b); });
  return v;
}

// The key pools: small integers (many duplicates), the type's extremes beside small values, and
// for floats -0.0 / 0.0 / inf / fractions.
template <class T>
std::vector<std::vector<T>> asof_pools() {
  using L = std::numeric_limits<T>;
  std::vector<std::vector<T>> pools;
  std::vector<T> small;
  for (int v = 0; v < 20; ++v) small.push_back(T(std::is_signed_v<T> ? v - 8 : v));
  pools.push_back(small);
  pools.push_back({L::lowest(), T(L::lowest() + T(1)), T(0), T(1), T(2), T(L::max() - T(1)), L::max()});
  if constexpr (std::is_floating_point_v<T>)
    pools.push_back({-L::infinity(), T(-2.5), T(-0.0), T(0.0), T(0.25), T(1.5), T(1.75), L::infinity()});
  return pools;
}

// Random cases: each pool, sizes from 0 to `largest` on each side, 0 to 4 groups (one group
// absent on the right, one on the left where there are several).
template <class T>
std::vector<AsofCase<T>> asof_cases(int64_t largest, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<AsofCase<T>> cases;
  const auto pools = asof_pools<T>();
  const int64_t sizes[] = {0, 1, 2, 7, 33, largest};
  for (size_t p = 0; p < pools.size(); ++p)
    for (int64_t n : sizes)
      for (int64_t m : sizes) {
        if ((n == 0) + (m == 0) == 0 && n != largest && m != largest && rng() % 2) continue;  // fewer small pairs
        for (int64_t groups : {0, 1, 4}) {
          AsofCase<T> c;
          c.what = "pool " + std::to_string(p) + ", " + std::to_string(n) + " x " + std::to_string(m) + ", " +
                   (groups ? std::to_string(groups) + " groups" : std::string("ungrouped"));
          c.left = sorted_draw(pools[p], n, rng);
          c.right = sorted_draw(pools[p], m, rng);
          c.grouped = groups > 0;
          c.groups = groups;
          if (c.grouped) {
            // Group 3 of 4 never on the right, group 2 never on the left.
            for (int64_t i = 0; i < n; ++i) c.left_by.push_back(groups == 4 ? int64_t(rng() % 4 == 2 ? 3 : rng() % 4) : 0);
            for (int64_t j = 0; j < m; ++j) c.right_by.push_back(groups == 4 ? int64_t(rng() % 3) : 0);
          }
          cases.push_back(std::move(c));
        }
      }
  return cases;
}

// The case with both sides shuffled (their codes with them), and what options.sort must give for
// it: the join of the stably sorted shuffled sides, written for the left rows in their shuffled
// order and naming the right rows by their shuffled positions.
template <class T>
std::pair<AsofCase<T>, std::vector<int64_t>> shuffled(const AsofCase<T>& c, const asof_options<T>& o, uint64_t seed) {
  std::mt19937_64 rng(seed);
  AsofCase<T> s = c;
  const auto shuffle = [&](std::vector<T>& keys, std::vector<int64_t>& codes) {
    std::vector<size_t> p(keys.size());
    for (size_t i = 0; i < p.size(); ++i) p[i] = i;
    std::shuffle(p.begin(), p.end(), rng);
    std::vector<T> k(keys.size());
    std::vector<int64_t> g(codes.size());
    for (size_t i = 0; i < p.size(); ++i) {
      k[i] = keys[p[i]];
      if (!codes.empty()) g[i] = codes[p[i]];
    }
    keys = k;
    codes = g;
  };
  shuffle(s.left, s.left_by);
  shuffle(s.right, s.right_by);
  // The stable sort of each shuffled side, then the definition on the sorted sides.
  const auto stable_order = [](const std::vector<T>& keys) {
    std::vector<int64_t> p(keys.size());
    for (size_t i = 0; i < p.size(); ++i) p[i] = int64_t(i);
    std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) { return key_less(keys[size_t(a)], keys[size_t(b)]); });
    return p;
  };
  const auto lp = stable_order(s.left), rp = stable_order(s.right);
  AsofCase<T> sorted = s;
  for (size_t i = 0; i < lp.size(); ++i) {
    sorted.left[i] = s.left[size_t(lp[i])];
    if (s.grouped) sorted.left_by[i] = s.left_by[size_t(lp[i])];
  }
  for (size_t j = 0; j < rp.size(); ++j) {
    sorted.right[j] = s.right[size_t(rp[j])];
    if (s.grouped) sorted.right_by[j] = s.right_by[size_t(rp[j])];
  }
  const std::vector<int64_t> r = reference_asof(sorted, o);
  std::vector<int64_t> want(r.size());
  for (size_t i = 0; i < r.size(); ++i) want[size_t(lp[i])] = r[i] < 0 ? -1 : rp[size_t(r[i])];
  return {s, want};
}

// The join of a case on the CPU backend (`threads`: 0 all), the output poisoned first.
template <class T>
inline std::vector<int64_t> cpu_asof(const AsofCase<T>& c, const asof_options<T>& o, int threads = 0) {
  std::vector<int64_t> out(c.left.size(), -7);
  const cpu_t exec{threads};
  if (c.grouped)
    asof_join(exec, span<const T>(c.left), span<const T>(c.right), span<const int64_t>(c.left_by),
              span<const int64_t>(c.right_by), c.groups, span<int64_t>(out), o);
  else
    asof_join(exec, span<const T>(c.left), span<const T>(c.right), span<int64_t>(out), o);
  return out;
}

// pandas' documented example (merge_asof's docstring): left a = [1, 5, 10], right a = [1, 2, 3,
// 6, 7]: backward [0, 2, 4], forward [0, 3, -1], nearest [0, 3, 4], backward without exact
// matches [-1, 2, 4].
template <class T>
AsofCase<T> pandas_example() {
  AsofCase<T> c;
  c.what = "pandas' docstring example";
  c.left = {T(1), T(5), T(10)};
  c.right = {T(1), T(2), T(3), T(6), T(7)};
  return c;
}

}  // namespace gsearch::test
