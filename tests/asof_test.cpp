// The as-of join on the CPU backend (asof.hpp) against pandas.merge_asof's definition written as
// plain scans (asof_cases.hpp): every key type, direction, exact-match rule and tolerance, with
// and without groups, duplicates in long runs, the type's extremes, -0.0 / 0.0 / inf; pandas'
// docstring example by hand; the checks (pandas' messages) and that a refused call writes nothing.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "asof_cases.hpp"
#include "gsearch/gsearch.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T>
class Asof : public ::testing::Test {};
TYPED_TEST_SUITE(Asof, KeyTypes);

TYPED_TEST(Asof, MatchesTheDefinitionForEveryRule) {
  using T = TypeParam;
  for (const auto& c : asof_cases<T>(test_subset() ? 100 : 300, 11))
    for (const auto& o : asof_rules<T>())
      ASSERT_EQ(cpu_asof(c, o), reference_asof(c, o)) << c.what << ", " << describe(o);
}

TYPED_TEST(Asof, ManyThreadsAndManyGroupsMatchTheDefinition) {
  using T = TypeParam;
  std::mt19937_64 rng(5);
  AsofCase<T> c;
  c.what = "40000 x 3000, 50 groups";
  std::vector<T> pool;
  for (int v = 0; v < 1000; ++v) pool.push_back(T(v));
  c.left = sorted_draw(pool, 40000, rng);
  c.right = sorted_draw(pool, 3000, rng);
  c.grouped = true;
  c.groups = 50;
  for (size_t i = 0; i < c.left.size(); ++i) c.left_by.push_back(int64_t(rng() % 50));
  for (size_t j = 0; j < c.right.size(); ++j) c.right_by.push_back(int64_t(rng() % 50));
  for (const auto& o : asof_rules<T>()) {
    const auto want = reference_asof(c, o);
    ASSERT_EQ(cpu_asof(c, o, 0), want) << describe(o);
    ASSERT_EQ(cpu_asof(c, o, 3), want) << describe(o);
  }
}

TYPED_TEST(Asof, SortTakesAnyOrder) {
  using T = TypeParam;
  for (const auto& c : asof_cases<T>(test_subset() ? 100 : 300, 13))
    for (auto o : asof_rules<T>()) {
      o.sort = true;
      const auto [s, want] = shuffled(c, o, 17);
      ASSERT_EQ(cpu_asof(s, o), want) << c.what << ", " << describe(o) << ", sorted by the join";
    }
}

TYPED_TEST(Asof, PandasDocstringExample) {
  using T = TypeParam;
  const AsofCase<T> c = pandas_example<T>();
  asof_options<T> o;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{0, 2, 4}));
  o.direction = asof_direction::forward;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{0, 3, -1}));
  o.direction = asof_direction::nearest;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{0, 3, 4}));
  o.direction = asof_direction::backward;
  o.allow_exact_matches = false;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{-1, 2, 4}));
}

// Equal right keys: backward takes the last of the run, forward the first, nearest (a tie at
// distance 0 on both sides) the backward one; a tie at equal distances takes the backward match.
TYPED_TEST(Asof, TiesFollowPandas) {
  using T = TypeParam;
  AsofCase<T> c;
  c.left = {T(4), T(5)};
  c.right = {T(3), T(5), T(5), T(5), T(7)};
  asof_options<T> o;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{0, 3}));
  o.direction = asof_direction::forward;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{1, 1}));
  o.direction = asof_direction::nearest;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{0, 3}));  // 4: 3 and 5 both at 1, backward
  o.allow_exact_matches = false;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{0, 0}));  // 5: 3 at 2 against 7 at 2, backward
  o.tolerance = T(1);
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{0, -1}));  // inclusive: 4 - 3 = 1 is within
}

// The full range of the type: distances past its range are exact, not wrapped.
TYPED_TEST(Asof, DistancesAcrossTheWholeRange) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  AsofCase<T> c;
  c.left = {L::max()};
  c.right = {L::lowest()};
  asof_options<T> o;
  o.tolerance = T(1);
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{-1}));
  o.tolerance = L::max();
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{std::is_unsigned_v<T> ? 0 : -1}));  // floats: max - lowest is inf
}

TEST(AsofFloat, SignedZerosAreOneKeyAndInfinitiesMatch) {
  AsofCase<double> c;
  c.left = {-0.0, 0.0, std::numeric_limits<double>::infinity()};
  c.right = {0.0, -0.0, std::numeric_limits<double>::infinity()};  // sorted: -0.0 == 0.0
  asof_options<double> o;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{1, 1, 2}));
  o.direction = asof_direction::forward;
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{0, 0, 2}));
  o.tolerance = 0.0;  // inf - inf is NaN, which pandas does not refuse
  EXPECT_EQ(cpu_asof(c, o), (std::vector<int64_t>{0, 0, 2}));
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(AsofErrors, PandasMessagesAndNothingWritten) {
  const std::vector<double> sorted = {1, 2, 3}, unsorted = {2, 1, 3}, nan = {1, 2, std::nan("")};
  const std::vector<double> nan_unsorted = {std::nan(""), 1, 2};
  std::vector<int64_t> out(3, -7);
  const std::vector<int64_t> codes = {0, 1, 0}, bad_codes = {0, 2, 0};
  const auto join = [&](const std::vector<double>& l, const std::vector<double>& r, asof_options<double> o = {}) {
    return error_of([&] { asof_join(cpu, span<const double>(l), span<const double>(r), span<int64_t>(out), o); });
  };
  EXPECT_EQ(join(unsorted, sorted), "left keys must be sorted");
  EXPECT_EQ(join(sorted, unsorted), "right keys must be sorted");
  EXPECT_EQ(join(nan, sorted), "Merge keys contain null values on left side");
  EXPECT_EQ(join(sorted, nan_unsorted), "Merge keys contain null values on right side");
  asof_options<double> o;
  o.tolerance = -1.0;
  EXPECT_EQ(join(sorted, sorted, o), "tolerance must be positive");
  o.tolerance = std::nan("");
  EXPECT_NE(join(sorted, sorted, o).find("NaN"), std::string::npos);
  o = {};
  o.direction = asof_direction(7);
  EXPECT_NE(join(sorted, sorted, o).find("unknown direction"), std::string::npos);
  EXPECT_EQ(out, std::vector<int64_t>(3, -7));

  const auto grouped = [&](const std::vector<int64_t>& lb, const std::vector<int64_t>& rb, int64_t groups,
                           span<int64_t> o2) {
    return error_of([&] {
      asof_join(cpu, span<const double>(sorted), span<const double>(sorted), span<const int64_t>(lb),
                span<const int64_t>(rb), groups, o2);
    });
  };
  EXPECT_NE(grouped(codes, bad_codes, 2, out).find("right_by[1] is outside [0, groups = 2)"), std::string::npos);
  EXPECT_NE(grouped(bad_codes, codes, 2, out).find("left_by[1]"), std::string::npos);
  EXPECT_NE(grouped(codes, codes, -1, out).find("negative"), std::string::npos);
  EXPECT_NE(grouped({0, 1}, codes, 2, out).find("left_by has 2 elements"), std::string::npos);
  EXPECT_NE(grouped(codes, codes, 2, span<int64_t>(out.data(), 2)).find("right_index has 2"), std::string::npos);
  EXPECT_EQ(out, std::vector<int64_t>(3, -7));
  EXPECT_EQ(grouped(codes, codes, 2, out), "no error");
  EXPECT_EQ(out, (std::vector<int64_t>{0, 1, 2}));
}

TEST(AsofErrors, SortRefusesNaNAndTakesUnsortedKeys) {
  const std::vector<double> l = {3, 1, 2}, r = {2, std::nan(""), 1};
  std::vector<int64_t> out(3, -7);
  asof_options<double> o;
  o.sort = true;
  EXPECT_EQ(error_of([&] { asof_join(cpu, span<const double>(l), span<const double>(r), span<int64_t>(out), o); }),
            "Merge keys contain null values on right side");
  EXPECT_EQ(out, std::vector<int64_t>(3, -7));
  const std::vector<double> r2 = {2, 0, 1};
  asof_join(cpu, span<const double>(l), span<const double>(r2), span<int64_t>(out), o);
  EXPECT_EQ(out, (std::vector<int64_t>{0, 2, 0}));  // 3 -> 2 (row 0), 1 -> 1 (row 2), 2 -> 2 (row 0)
}

TEST(AsofErrors, UncheckedKeysSkipTheChecks) {
  const std::vector<int32_t> l = {3, 1}, r = {1, 2};
  std::vector<int64_t> out(2, -7);
  asof_options<int32_t> o;
  o.check_sorted = false;
  asof_join(cpu, span<const int32_t>(l), span<const int32_t>(r), span<int64_t>(out), o);
  EXPECT_EQ(out[0], 1);  // the keys were sorted where it matters for this row
}

}  // namespace
}  // namespace gsearch::test
