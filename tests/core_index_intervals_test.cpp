// The shared pieces of index intervals (core/index_intervals.hpp) against plain references: the
// three-way class and the median of three against sorts; ordered_bits one to one and in the key
// order (every NaN, -0.0, the ends); three_way_destination a stable partition; and the host's
// record (interval_set) driven by splits done here with std::stable_partition, its invariants
// checked after each step by check_intervals, its lower_bracket against a count, and
// check_intervals catching broken states.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gsearch/core/index_intervals.hpp"
#include "selection_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using namespace gsearch::test::selection;

template <class T>
class CoreIntervals : public ::testing::Test {};
TYPED_TEST_SUITE(CoreIntervals, KeyTypes);

template <class T>
std::vector<T> probe_values(uint64_t seed) {
  std::vector<T> v = edge_values<T>();
  const std::vector<T> more = make_input<T>(shape::specials, 200, seed);
  v.insert(v.end(), more.begin(), more.end());
  if constexpr (std::is_floating_point_v<T>) {
    // NaNs of both signs and other payloads.
    using U = core::radix_bits_t<T>;
    for (U bits : {U(~U(0)), U(~U(0)) >> 1, U(U(U(1) << (8 * sizeof(T) - 1)) | U((U(~U(0)) >> 1) - 1))}) {
      T x;
      std::memcpy(&x, &bits, sizeof(T));
      v.push_back(x);
    }
  }
  return v;
}

TYPED_TEST(CoreIntervals, ThreeWayClassAndMedianOfThree) {
  using T = TypeParam;
  const std::vector<T> v = probe_values<T>(1);
  for (T x : v)
    for (T s : v) {
      const int c = core::three_way_class(x, s);
      ASSERT_EQ(c, key_less(x, s) ? 0 : key_equal(x, s) ? 1 : 2) << show(x) << " vs " << show(s);
    }
  std::mt19937_64 rng(2);
  for (int i = 0; i < 2000; ++i) {
    std::vector<T> three = {v[rng() % v.size()], v[rng() % v.size()], v[rng() % v.size()]};
    const T m = core::median_of_three(three[0], three[1], three[2]);
    ASSERT_TRUE(key_equal(m, sorted_copy(three)[1])) << show(three[0]) << " " << show(three[1]) << " " << show(three[2]);
  }
}

TYPED_TEST(CoreIntervals, KeyBitsAreOneToOneAndInTheKeyOrder) {
  using T = TypeParam;
  using U = core::radix_bits_t<T>;
  const std::vector<T> v = probe_values<T>(3);
  for (T a : v) {
    const T back = core::from_ordered_bits<T>(core::ordered_bits(a));
    ASSERT_EQ(std::memcmp(&back, &a, sizeof(T)), 0) << show(a);
    for (T b : v)
      if (key_less(a, b)) {
        ASSERT_LT(core::ordered_bits(a), core::ordered_bits(b)) << show(a) << " < " << show(b);
      }
  }
  // Random bit patterns: every one maps back to itself, and sorting by bits sorts by keys.
  std::mt19937_64 rng(4);
  std::vector<U> bits(5000);
  for (U& b : bits) b = U(rng());
  std::sort(bits.begin(), bits.end());
  T prev = core::from_ordered_bits<T>(bits[0]);
  for (U b : bits) {
    ASSERT_EQ(core::ordered_bits(core::from_ordered_bits<T>(b)), b);
    const T x = core::from_ordered_bits<T>(b);
    ASSERT_FALSE(key_less(x, prev)) << show(prev) << " then " << show(x);
    prev = x;
  }
  if constexpr (std::is_floating_point_v<T>) {
    EXPECT_EQ(core::ordered_bits(-std::numeric_limits<T>::infinity()), U(0));  // -inf first
    EXPECT_LT(core::ordered_bits(std::numeric_limits<T>::infinity()), core::ordered_bits(-std::numeric_limits<T>::quiet_NaN()));
  }
}

TEST(CoreIntervals, DestinationsAreAStablePartition) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + int(rng() % 60);
    std::vector<int> x(static_cast<size_t>(n), 0);
    for (int& e : x) e = int(rng() % 5);
    const int s = x[rng() % x.size()];
    int64_t less = 0, equal = 0;
    for (int e : x) {
      less += e < s;
      equal += e == s;
    }
    std::vector<int> out(static_cast<size_t>(n), -1), order(static_cast<size_t>(n));
    int64_t lb = 0, eb = 0;
    for (int i = 0; i < n; ++i) {
      const int c = core::three_way_class(x[size_t(i)], s);
      const int64_t d = core::three_way_destination<int64_t>(c, i, lb, eb, less, equal);
      ASSERT_EQ(out[size_t(d)], -1);
      out[size_t(d)] = x[size_t(i)];
      order[size_t(d)] = i;
      lb += c == 0;
      eb += c == 1;
    }
    std::vector<int> idx(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) idx[size_t(i)] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
      return core::three_way_class(x[size_t(a)], s) < core::three_way_class(x[size_t(b)], s);
    });
    ASSERT_EQ(order, idx);
  }
  EXPECT_EQ(core::packed_less(core::pack_counts(123456, 789)), 123456);
  EXPECT_EQ(core::packed_equal(core::pack_counts(123456, 789)), 789);
}

// One improve done here: a stable three-way partition of data[lo, hi) by s, recorded in set.
template <class T>
void split_here(std::vector<T>& data, core::interval_set<T>& set, int64_t lo, int64_t hi, T s) {
  std::vector<T> part[3];
  for (int64_t i = lo; i < hi; ++i) part[core::three_way_class(data[size_t(i)], s)].push_back(data[size_t(i)]);
  int64_t at = lo;
  for (auto& p : part)
    for (T x : p) data[size_t(at++)] = x;
  set.split(lo, s, int64_t(part[0].size()), int64_t(part[1].size()));
}

TYPED_TEST(CoreIntervals, IntervalSetFollowsSplitsAndBracketsEveryValue) {
  using T = TypeParam;
  for (shape sh : kShapes)
    for (int64_t n : {1, 2, 3, 10, 257, 3000}) {
      std::vector<T> data = make_input<T>(sh, n, uint64_t(n) * 7 + 1);
      const std::vector<T> sorted = sorted_copy(data);
      core::interval_set<T> set(n);
      ASSERT_EQ(core::check_intervals(set, data.data(), n), "");
      std::mt19937_64 rng{uint64_t(n)};
      for (int step = 0; step < 60; ++step) {
        const T v = data[rng() % data.size()];
        const int64_t truth = std::lower_bound(sorted.begin(), sorted.end(), v, [](T a, T b) { return key_less(a, b); }) - sorted.begin();
        const core::position_bracket b = set.lower_bracket(v);
        if (b.exact >= 0) {
          ASSERT_EQ(b.exact, truth) << name(sh) << " n=" << n << " v=" << show(v);
        } else {
          ASSERT_TRUE(b.piece.lo <= truth && truth <= b.piece.hi) << name(sh) << " n=" << n;
          ASSERT_EQ(set.at(b.piece.lo), b.piece);
        }
        // Alternate: a split by the value (as range does) and one by a member at a random position.
        if (step % 2 == 0 && b.exact < 0 && !b.piece.settled) {
          split_here(data, set, b.piece.lo, b.piece.hi, v);
        } else {
          const index_interval p = set.at(int64_t(rng() % uint64_t(n)));
          if (p.settled) continue;
          const T s = core::choose_splitter([&](int64_t i) { return data[size_t(p.lo + i)]; }, p.size());
          split_here(data, set, p.lo, p.hi, s);
        }
        ASSERT_EQ(core::check_intervals(set, data.data(), n), "") << name(sh) << " n=" << n << " step " << step;
      }
      set.settle_all();
      std::sort(data.begin(), data.end(), [](T a, T b) { return key_less(a, b); });
      ASSERT_EQ(core::check_intervals(set, data.data(), n), "");
      ASSERT_EQ(set.count(), 1);
      ASSERT_EQ(set.unplaced(), 0);
    }
}

TEST(CoreIntervals, CheckIntervalsFindsBrokenStates) {
  std::vector<int> data = {5, 1, 4, 2, 3, 9, 7, 8};
  core::interval_set<int> set(8);
  split_here(data, set, 0, 8, 4);  // [1 2 3] [4] [5 9 7 8]
  ASSERT_EQ(core::check_intervals(set, data.data(), 8), "");
  EXPECT_EQ(set.count(), 3);
  EXPECT_EQ(set.unplaced(), 7);
  std::vector<int> bad = data;
  std::swap(bad[0], bad[5]);  // 9 among the smaller ones
  EXPECT_NE(core::check_intervals(set, bad.data(), 8), "");
  bad = data;
  std::swap(bad[3], bad[4]);  // the settled 4 moved out of its place
  EXPECT_NE(core::check_intervals(set, bad.data(), 8), "");
  EXPECT_NE(core::check_intervals(set, data.data(), 7), "");
  // A settled piece that is not sorted.
  std::vector<int> two = {2, 1};
  core::interval_set<int> s2(2);
  s2.settle_all();
  EXPECT_NE(core::check_intervals(s2, two.data(), 2), "");
}

TEST(CoreIntervals, SettledNeighboursMerge) {
  std::vector<int> data = {3, 1, 2};
  core::interval_set<int> set(3);
  split_here(data, set, 0, 3, 2);  // [1] [2] [3]: all settled, one piece
  EXPECT_EQ(set.count(), 1);
  EXPECT_EQ(set.unplaced(), 0);
  EXPECT_EQ(set.at(2), (index_interval{0, 3, true}));
  EXPECT_EQ(core::check_intervals(set, data.data(), 3), "");
}

}  // namespace
}  // namespace gsearch::test
