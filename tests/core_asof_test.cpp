// core/asof.hpp's match within one group's range [lo, hi) of a sorted array, and asof_row's
// mapping through a group's starts and the rows' original order.

#include <gtest/gtest.h>

#include <cstdint>
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
  EXPECT_EQ(asof_row(left.data(), left_by.data(), 0, keys.data(), 4, start.data(), order.data(), rule), 1);
  EXPECT_EQ(asof_row(left.data(), left_by.data(), 1, keys.data(), 4, start.data(), order.data(), rule), 0);
  EXPECT_EQ(asof_row(left.data(), left_by.data(), 2, keys.data(), 4, start.data(), order.data(), rule), 2);
  EXPECT_EQ(asof_row(left.data(), nullptr, 2, keys.data(), 2, nullptr, nullptr, rule), 1);  // ungrouped: [0, m)
}

TEST(CoreAsof, DirectionNames) {
  for (asof_direction d : {asof_direction::backward, asof_direction::forward, asof_direction::nearest})
    EXPECT_EQ(parse_asof_direction(to_string(d)), d);
  EXPECT_FALSE(parse_asof_direction("closest").has_value());
}

}  // namespace
}  // namespace gsearch::core
