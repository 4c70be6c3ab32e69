// core/pary.hpp: the P-ary search's step arithmetic (probe points, narrowing, the step bound)
// and its CPU form against std::lower_bound / std::upper_bound, for 1 to 1024 lanes: every query
// of every small key list, random lists with duplicates, edge values and NaN; every key read
// bounds-checked, and the steps within pary_max_steps.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/pary.hpp"
#include "test_util.hpp"

namespace {

using gsearch::before;
using gsearch::side;
using gsearch::core::pary_max_steps;
using gsearch::core::pary_narrow;
using gsearch::core::pary_probe;
using gsearch::core::pary_rank;
using gsearch::test::reference;

// A warp needs 6 steps for 2^30 keys, a 1024-lane block 3, a binary search (1 lane) 31.
static_assert(pary_max_steps(int64_t{1} << 30, 32) == 6);
static_assert(pary_max_steps(int64_t{1} << 30, 1024) == 3);
static_assert(pary_max_steps(int64_t{1} << 30, 1) == 31);
static_assert(pary_max_steps(0, 32) == 0 && pary_max_steps(1, 32) == 1 && pary_max_steps(33, 32) == 2);

TEST(PAry, ProbesSplitTheRange) {
  // 10 unread keys [5, 15), 4 lanes: the points 5 + floor(i * 10 / 5), i = 1..4.
  EXPECT_EQ(pary_probe(5, 15, 0, 4), 7);
  EXPECT_EQ(pary_probe(5, 15, 3, 4), 13);
  // Fewer keys than lanes: lanes share keys, non-decreasing, inside [a, b - 1].
  for (int lanes : {1, 2, 7, 32, 1024}) {
    for (int64_t n = 1; n < 40; ++n) {
      for (int lane = 0; lane < lanes; ++lane) {
        const int64_t p = pary_probe(100, 100 + n, lane, lanes);
        ASSERT_GE(p, 100);
        ASSERT_LT(p, 100 + n);
        if (lane > 0) {
          ASSERT_GE(p, pary_probe(100, 100 + n, lane - 1, lanes));
        }
      }
    }
  }
  int64_t a = 5, b = 15;
  pary_narrow(a, b, 0, 4);  // no lane before q: the rank is at most the first probe
  EXPECT_EQ(a, 5);
  EXPECT_EQ(b, 7);
  a = 5, b = 15;
  pary_narrow(a, b, 4, 4);  // every lane before q: past the last probe
  EXPECT_EQ(a, 14);
  EXPECT_EQ(b, 15);
}

template <class T>
void check_all(const std::vector<T>& keys, const std::vector<T>& queries, int lanes) {
  const int64_t k = int64_t(keys.size());
  bool out_of_bounds = false;
  const auto acc = [&](int64_t i) {
    if (i < 0 || i >= k) {
      out_of_bounds = true;
      return T{};
    }
    return keys[size_t(i)];
  };
  for (T q : queries) {
    int steps = 0;
    ASSERT_EQ(pary_rank(acc, k, before<true, T>{q}, lanes, &steps), reference(keys, q, side::left))
        << "lanes=" << lanes << " k=" << k << " q=" << +q;
    ASSERT_LE(steps, pary_max_steps(k, lanes));
    ASSERT_EQ(pary_rank(acc, k, before<false, T>{q}, lanes, &steps), reference(keys, q, side::right))
        << "lanes=" << lanes << " k=" << k << " q=" << +q;
    ASSERT_LE(steps, pary_max_steps(k, lanes));
  }
  ASSERT_FALSE(out_of_bounds) << "lanes=" << lanes << " k=" << k;
}

TEST(PAry, EveryQueryOfSmallLists) {
  for (int lanes : {1, 2, 3, 7, 32, 512, 1024}) {  // 512: the server's wide steps
    for (int64_t k = 0; k <= 70; ++k) {
      std::vector<int32_t> keys(static_cast<size_t>(k)), queries;
      for (int64_t i = 0; i < k; ++i) keys[size_t(i)] = int32_t(2 * (i / 3));  // runs of 3 equal keys
      for (int32_t q = -2; q <= int32_t(2 * k / 3 + 2); ++q) queries.push_back(q);
      check_all(keys, queries, lanes);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(PAry, RandomListsAndEdgeValues) {
  std::mt19937_64 rng(gsearch::test::test_seed());
  for (int rep = 0; rep < 40; ++rep) {
    const int64_t k = int64_t(rng() % (rep < 30 ? 3000 : 200000));
    std::vector<double> keys(static_cast<size_t>(k));
    const auto edges = gsearch::test::edge_values<double>();
    for (double& x : keys) x = rng() % 5 == 0 ? edges[rng() % edges.size()] : gsearch::test::small_value<double>(rng, 500);
    gsearch::test::sort_keys(keys);
    std::vector<double> queries = edges;
    queries.push_back(std::numeric_limits<double>::quiet_NaN());
    for (int i = 0; i < 200; ++i) queries.push_back(gsearch::test::small_value<double>(rng, 600));
    for (int lanes : {1, 32, 512, 1024}) {
      check_all(keys, queries, lanes);
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
