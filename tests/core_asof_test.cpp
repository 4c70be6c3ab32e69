// core/asof.hpp's match within one group's range [lo, hi) of a sorted array, and asof_row's
// mapping through a group's starts and the rows' original order.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "gsearch/core/asof.hpp"

namespace gsearch::core {
namespace {

TEST(CoreAsof, MatchStaysInsideItsRange) {
  const std::vector<int32_t> keys = {1, 4, 4, 6, 9, 9, 12};
  const asof_keys<int32_t> acc{keys.data()};
  asof_rule<int32_t> rule;
  EXPECT_EQ(asof_match(acc, 0, 7, 5, rule), 2);
  EXPECT_EQ(asof_match(acc, 3, 7, 5, rule), -1);  // nothing <= 5 in [3, 7)
  EXPECT_EQ(asof_match(acc, 3, 5, 20, rule), 4);  // the range's last, not the array's
  rule.direction = asof_direction::forward;
  EXPECT_EQ(asof_match(acc, 0, 3, 5, rule), -1);  // nothing >= 5 in [0, 3)
  EXPECT_EQ(asof_match(acc, 0, 7, 9, rule), 4);
  rule.allow_exact_matches = false;
  EXPECT_EQ(asof_match(acc, 0, 7, 9, rule), 6);
  rule.direction = asof_direction::nearest;
  rule.allow_exact_matches = true;
  EXPECT_EQ(asof_match(acc, 0, 7, 7, rule), 3);   // 6 at 1, 9 at 2
  EXPECT_EQ(asof_match(acc, 0, 7, 5, rule), 2);   // 4 and 6 both at 1: backward, the run's last
  rule.has_tolerance = true;
  rule.tolerance = 0;
  EXPECT_EQ(asof_match(acc, 0, 7, 5, rule), -1);
  EXPECT_EQ(asof_match(acc, 0, 0, 5, rule), -1);  // an empty range
}

TEST(CoreAsof, DistancesAreExactForIntegers) {
  EXPECT_FALSE(asof_within<int64_t>(INT64_MAX, INT64_MIN, INT64_MAX));
  EXPECT_TRUE(asof_within<uint64_t>(UINT64_MAX, 0, UINT64_MAX));
  EXPECT_TRUE(asof_within<int32_t>(5, -5, 10));
  EXPECT_FALSE(asof_within<int32_t>(5, -5, 9));
  EXPECT_TRUE(asof_backward_wins<int64_t>(0, INT64_MIN + 1, INT64_MAX));  // equal distances
  EXPECT_FALSE(asof_backward_wins<int64_t>(0, INT64_MIN, INT64_MAX));
}

TEST(CoreAsof, RowMapsThroughGroupsAndOrder) {
  // Right rows (key, group) in their original order: (1,b) (2,a) (3,b) (5,a); grouped stably:
  // a: rows 1, 3 (keys 2, 5); b: rows 0, 2 (keys 1, 3).
  const std::vector<double> keys = {2, 5, 1, 3};
  const std::vector<int64_t> start = {0, 2, 4}, order = {1, 3, 0, 2};
  const std::vector<double> left = {2.5, 2.5, 9};
  const std::vector<int64_t> left_by = {0, 1, 1};
  const asof_rule<double> rule;
  EXPECT_EQ(asof_row(left.data(), left_by.data(), 0, asof_keys<double>{keys.data()}, 4, start.data(), order.data(), rule), 1);
  EXPECT_EQ(asof_row(left.data(), left_by.data(), 1, asof_keys<double>{keys.data()}, 4, start.data(), order.data(), rule), 0);
  EXPECT_EQ(asof_row(left.data(), left_by.data(), 2, asof_keys<double>{keys.data()}, 4, start.data(), order.data(), rule), 2);
  EXPECT_EQ(asof_row(left.data(), nullptr, 2, asof_keys<double>{keys.data()}, 2, nullptr, nullptr, rule), 1);  // ungrouped: [0, m)
}

// The sweep (the CPU's) and the per-row binary search (CUDA's) give the same matches, for every
// rule, with and without groups, over chunks that start anywhere.
TEST(CoreAsof, SweepEqualsTheSearchPerRow) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = int64_t(rng() % 60), m = int64_t(rng() % 40), groups = 1 + int64_t(rng() % 4);
    const bool grouped = trial % 2;
    std::vector<int32_t> left(static_cast<size_t>(n)), right(static_cast<size_t>(m));
    for (auto& x : left) x = int32_t(rng() % 15);
    for (auto& x : right) x = int32_t(rng() % 15);
    std::sort(left.begin(), left.end());
    std::sort(right.begin(), right.end());
    std::vector<int64_t> lb(static_cast<size_t>(n)), rb(static_cast<size_t>(m));
    for (auto& g : lb) g = int64_t(rng() % uint64_t(groups));
    for (auto& g : rb) g = int64_t(rng() % uint64_t(groups));
    // The right rows grouped stably, for the per-row search.
    std::vector<int64_t> order, start(size_t(groups) + 1, 0);
    for (int64_t g = 0; g < groups; ++g) {
      start[size_t(g)] = int64_t(order.size());
      for (int64_t j = 0; j < m; ++j)
        if (!grouped || rb[size_t(j)] == g) order.push_back(j);
      if (!grouped) break;
    }
    start[size_t(grouped ? groups : 1)] = int64_t(order.size());
    std::vector<int32_t> keys;
    for (int64_t j : order) keys.push_back(right[size_t(j)]);
    for (int d = 0; d < 3; ++d)
      for (bool exact : {true, false})
        for (int tol : {-1, 0, 2}) {
          asof_rule<int32_t> rule{asof_direction(d), exact, tol >= 0, int32_t(tol >= 0 ? tol : 0)};
          std::vector<int64_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n), -9), latest(static_cast<size_t>(groups));
          for (int64_t i = 0; i < n; ++i)
            want[size_t(i)] = asof_row(left.data(), grouped ? lb.data() : nullptr, i, asof_keys<int32_t>{keys.data()}, m, start.data(),
                                       order.data(), rule);
          const int64_t cut = n ? int64_t(rng() % uint64_t(n + 1)) : 0;  // two chunks
          for (auto [b, e] : {std::pair{int64_t{0}, cut}, std::pair{cut, n}})
            asof_sweep(left.data(), grouped ? lb.data() : nullptr, b, e, right.data(), grouped ? rb.data() : nullptr, m,
                       rule, latest.data(), grouped ? groups : 1, got.data());
          ASSERT_EQ(got, want) << "trial " << trial << " direction " << d << " exact " << exact << " tol " << tol;
        }
  }
}

// The match by a linear scan of [lo, hi): the rule as core/asof.hpp states it, for the searches.
template <class T>
int64_t scanned_match(const std::vector<T>& keys, int64_t lo, int64_t hi, T x, const asof_rule<T>& rule) {
  int64_t back = -1, fore = -1;
  for (int64_t j = lo; j < hi; ++j) {
    const T k = keys[size_t(j)];
    if (rule.allow_exact_matches ? k <= x : k < x) back = j;  // the last
    if (fore < 0 && (rule.allow_exact_matches ? k >= x : k > x)) fore = j;  // the first
  }
  if (rule.has_tolerance && back >= 0 && x - keys[size_t(back)] > rule.tolerance) back = -1;
  if (rule.has_tolerance && fore >= 0 && keys[size_t(fore)] - x > rule.tolerance) fore = -1;
  if (rule.direction == asof_direction::backward) return back;
  if (rule.direction == asof_direction::forward) return fore;
  if (back >= 0 && fore >= 0) return x - keys[size_t(back)] <= keys[size_t(fore)] - x ? back : fore;
  return back >= 0 ? back : fore;
}

// m sorted keys drawn from [0, span) and their directory of every sample-th key
// (asof_sampled_keys' dir), for the searches' tests.
struct SortedKeys {
  std::vector<int64_t> keys, dir;
  SortedKeys(std::mt19937_64& rng, int64_t m, int64_t span) : keys(static_cast<size_t>(m)) {
    for (auto& k : keys) k = int64_t(rng() % uint64_t(span));
    std::sort(keys.begin(), keys.end());
    for (int64_t t = 0; t * asof_sampled_keys<int64_t>::sample < m; ++t)
      dir.push_back(keys[size_t(t * asof_sampled_keys<int64_t>::sample)]);
  }
};

// The one search per row (a second only at a run of keys equal to x) and the two-level search
// through a directory of every 64th key (CUDA's grouped path) against a scan: ranges anywhere in
// the array (not on the directory's steps), runs of equal keys longer than a window, every rule.
TEST(CoreAsof, SearchesEqualAScan) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t m = int64_t(rng() % 3000);
    const int64_t span = trial % 3 == 0 ? 4 : trial % 3 == 1 ? 200 : 1000000;  // runs of equal keys, or few
    const SortedKeys sk(rng, m, span);
    const std::vector<int64_t>& keys = sk.keys;
    const asof_keys<int64_t> plain{keys.data()};
    const asof_sampled_keys<int64_t> sampled{keys.data(), sk.dir.data()};
    for (int q = 0; q < 40; ++q) {
      int64_t lo = m ? int64_t(rng() % uint64_t(m + 1)) : 0, hi = m ? int64_t(rng() % uint64_t(m + 1)) : 0;
      if (lo > hi) std::swap(lo, hi);
      if (q % 4 == 0) lo = 0, hi = m;
      const int64_t x = m && q % 2 ? keys[size_t(rng() % uint64_t(m))] : int64_t(rng() % uint64_t(span + 2)) - 1;
      for (int d = 0; d < 3; ++d)
        for (bool exact : {true, false})
          for (int64_t tol : {int64_t{-1}, int64_t{0}, span / 8}) {
            const asof_rule<int64_t> rule{asof_direction(d), exact, tol >= 0, tol >= 0 ? tol : 0};
            const int64_t want = scanned_match(keys, lo, hi, x, rule);
            ASSERT_EQ(asof_match(plain, lo, hi, x, rule), want) << "m " << m << " [" << lo << ", " << hi << ") x " << x << " d " << d << " exact " << exact << " tol " << tol;
            ASSERT_EQ(asof_match(sampled, lo, hi, x, rule), want) << "sampled: m " << m << " [" << lo << ", " << hi << ") x " << x << " d " << d << " exact " << exact << " tol " << tol;
          }
    }
  }
}

// asof_match's hint: a run of ascending keys (with repeats, and jumps far past the gallop's
// reach) searched with one hint carried from each key to the next equals the scan, for every
// rule, plain and sampled; the hint returned never passes the key's lower bound.
TEST(CoreAsof, HintedSearchesEqualAScan) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t m = int64_t(rng() % 3000);
    const int64_t span = trial % 3 == 0 ? 4 : trial % 3 == 1 ? 200 : 1000000;
    const SortedKeys sk(rng, m, span);
    const std::vector<int64_t>& keys = sk.keys;
    const asof_keys<int64_t> plain{keys.data()};
    const asof_sampled_keys<int64_t> sampled{keys.data(), sk.dir.data()};
    int64_t lo = m ? int64_t(rng() % uint64_t(m + 1)) : 0, hi = m ? int64_t(rng() % uint64_t(m + 1)) : 0;
    if (lo > hi) std::swap(lo, hi);
    if (trial % 2 == 0) lo = 0, hi = m;
    std::vector<int64_t> xs(100);  // ascending: from the keys, between them, repeated, past both ends
    for (size_t q = 0; q < xs.size(); ++q)
      xs[q] = m && q % 3 ? keys[size_t(rng() % uint64_t(m))] : int64_t(rng() % uint64_t(span + 2)) - 1;
    if (trial % 4 == 1) xs.resize(8);  // few keys: long jumps between them
    std::sort(xs.begin(), xs.end());
    for (int d = 0; d < 3; ++d)
      for (bool exact : {true, false})
        for (int64_t tol : {int64_t{-1}, int64_t{0}, span / 8}) {
          const asof_rule<int64_t> rule{asof_direction(d), exact, tol >= 0, tol >= 0 ? tol : 0};
          int64_t from_plain = -1, from_sampled = -1;
          for (int64_t x : xs) {
            const int64_t want = scanned_match(keys, lo, hi, x, rule);
            const int64_t lower = std::lower_bound(keys.begin() + lo, keys.begin() + hi, x) - keys.begin();
            ASSERT_EQ(asof_match(plain, lo, hi, x, rule, from_plain), want)
                << "m " << m << " [" << lo << ", " << hi << ") x " << x << " d " << d << " exact " << exact;
            ASSERT_EQ(asof_match(sampled, lo, hi, x, rule, from_sampled), want)
                << "sampled: m " << m << " [" << lo << ", " << hi << ") x " << x << " d " << d << " exact " << exact;
            for (int64_t from : {from_plain, from_sampled}) {
              ASSERT_LE(from, lower) << "the hint passes x's lower bound";
              ASSERT_TRUE(from == -1 || from >= lo) << "the hint leaves the range";
            }
          }
        }
  }
}

TEST(CoreAsof, DirectionNames) {
  for (asof_direction d : {asof_direction::backward, asof_direction::forward, asof_direction::nearest})
    EXPECT_EQ(parse_asof_direction(to_string(d)), d);
  EXPECT_FALSE(parse_asof_direction("closest").has_value());
}

}  // namespace
}  // namespace gsearch::core
