// Index intervals on the CPU (label `cpu`): improve / select / range / sort through
// gsearch::index_intervals for every key type against std::sort and counting loops, the
// invariants (core::check_intervals), a permutation of the input and the settled positions
// checked after every improve; the reuse of earlier steps counted with improves(); every input
// shape of selection_cases.hpp (all equal, few distinct, sorted, reversed, NaN / inf / -0.0);
// sizes 0, 1, 2, small, around the GPU's one-block piece, and long enough for the parallel
// partition; errors.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "index_intervals/backend.hpp"
#include "gsearch/gsearch.hpp"
#include "index_intervals_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using namespace intervals;

template <class T>
class IndexIntervals : public subset_typed_test<T> {};
TYPED_TEST_SUITE(IndexIntervals, KeyTypes);

// 4 threads: long pieces take the parallel partition (min_partition_per_thread elements per thread).
constexpr cpu_t exec = cpu.with_threads(4);

// Under GSEARCH_TEST_SUBSET (the sanitizers' -O0 build, where the parallel size was a third of CI's
// sanitizer stage) the parallel size runs for int32 only: the parallel partition's code does not
// depend on the key type, whose comparisons every smaller size covers.
template <class T>
std::vector<int64_t> sizes() {
  const int64_t parallel = 4 * cpu_backend::intervals_tuning::min_partition_per_thread + 7;
  std::vector<int64_t> v{0, 1, 2, 3, 5, 33, 1000, 11263, 11264, 11265, 40000, parallel};
  if (test_subset() && !std::is_same_v<T, int32_t>) v.pop_back();
  return v;
}

std::vector<shape> shapes() { return {std::begin(selection::kShapes), std::end(selection::kShapes)}; }

// The sizes beyond 40,000 (the parallel partition) with two shapes only: every check reads and
// sorts the whole array after each step.
bool skipped(shape sh, int64_t n) { return n > 40000 && sh != shape::random && sh != shape::few_distinct; }

TYPED_TEST(IndexIntervals, ImproveWalkKeepsTheInvariants) {
  using T = TypeParam;
  for (shape sh : shapes())
    for (int64_t n : sizes<T>()) {
      if (skipped(sh, n)) continue;
      const std::vector<T> input = make_input<T>(sh, n, 11 + uint64_t(n));
      index_intervals<T> ii(exec, input);
      ASSERT_EQ(ii.check(), "") << selection::name(sh) << " n=" << n;
      ASSERT_EQ(improve_walk(ii, input, 5, n > 40000 ? 12 : 40), "") << selection::name(sh) << " n=" << n;
    }
}

TYPED_TEST(IndexIntervals, SelectMatchesTheSort) {
  using T = TypeParam;
  for (shape sh : shapes())
    for (int64_t n : sizes<T>()) {
      if (n == 0 || skipped(sh, n)) continue;
      const std::vector<T> input = make_input<T>(sh, n, 23 + uint64_t(n));
      index_intervals<T> ii(exec, input);
      ASSERT_EQ(check_selects(ii, input, ranks_of(n, 3)), "") << selection::name(sh) << " n=" << n;
    }
}

TYPED_TEST(IndexIntervals, RangeHoldsExactlyTheValuesBetween) {
  using T = TypeParam;
  for (shape sh : shapes())
    for (int64_t n : sizes<T>()) {
      if (skipped(sh, n)) continue;
      const std::vector<T> input = make_input<T>(sh, n, 31 + uint64_t(n));
      index_intervals<T> ii(exec, input);
      ASSERT_EQ(check_ranges(ii, input, range_queries(input, 9)), "") << selection::name(sh) << " n=" << n;
      // The same queries again refine nothing: their boundaries are known.
      const int64_t improves = ii.improves();
      ASSERT_EQ(check_ranges(ii, input, range_queries(input, 9)), "") << selection::name(sh) << " n=" << n;
      EXPECT_EQ(ii.improves(), improves) << selection::name(sh) << " n=" << n;
    }
}

TYPED_TEST(IndexIntervals, SortSettlesEverything) {
  using T = TypeParam;
  for (shape sh : shapes())
    for (int64_t n : sizes<T>()) {
      if (skipped(sh, n)) continue;
      const std::vector<T> input = make_input<T>(sh, n, 41 + uint64_t(n));
      index_intervals<T> fresh(exec, input);
      ASSERT_EQ(check_sort(fresh, input), "") << selection::name(sh) << " n=" << n;
      // After some refinement, then selects and ranges on the sorted array (no more improves).
      index_intervals<T> ii(exec, input);
      ASSERT_EQ(improve_walk(ii, input, 7, 5), "");
      ASSERT_EQ(check_sort(ii, input), "") << selection::name(sh) << " n=" << n;
      const int64_t improves = ii.improves();
      ASSERT_EQ(check_selects(ii, input, ranks_of(n, 4)), "");
      ASSERT_EQ(check_ranges(ii, input, range_queries(input, 5)), "");
      EXPECT_EQ(ii.improves(), improves);
    }
}

// The point of index intervals: later queries reuse what earlier ones learnt.
TYPED_TEST(IndexIntervals, SelectsReuseEarlierImproves) {
  using T = TypeParam;
  const int64_t n = 100003;
  const std::vector<T> input = make_input<T>(shape::random, n, 77);
  index_intervals<T> ii(exec, input);
  EXPECT_EQ(ii.unplaced(), n);
  ii.select(n / 2);
  const int64_t first = ii.improves();
  EXPECT_GT(first, 3);
  EXPECT_LT(ii.unplaced(), n);
  ii.select(n / 2);  // known: no step
  EXPECT_EQ(ii.improves(), first);
  // A neighbour's piece is one of the small pieces around n/2: far fewer steps than from scratch.
  ii.select(n / 2 + 5);
  EXPECT_LT(ii.improves() - first, first);
  // Every rank: far fewer steps than n, each of them checked.
  index_intervals<T> small(exec, std::vector<T>(input.begin(), input.begin() + 3000));
  for (int64_t k = 0; k < 3000; ++k) ASSERT_EQ(small.select(k), sorted_copy(std::vector<T>(input.begin(), input.begin() + 3000))[size_t(k)]);
  EXPECT_EQ(small.unplaced(), 0);
  EXPECT_EQ(small.intervals(), 1);  // every piece settled: merged into one
  EXPECT_LT(small.improves(), 3000);
}

TYPED_TEST(IndexIntervals, RangeCracksAtItsBounds) {
  using T = TypeParam;
  const std::vector<T> input = make_input<T>(shape::reversed, 5000, 1);  // 5000 .. 1
  index_intervals<T> ii(exec, input);
  const position_range r = ii.range(T(1000), T(2000));
  EXPECT_EQ(r, (position_range{999, 1999}));
  EXPECT_EQ(ii.improves(), 2);  // one split by each bound
  // [1 .. 999] [1000] [1001 .. 1999] [2000] [2001 .. 5000]: the bounds' equal parts are placed.
  EXPECT_EQ(ii.intervals(), 5);
  EXPECT_EQ(ii.unplaced(), 4998);
  EXPECT_EQ(ii.check(), "");
  EXPECT_EQ(ii.range(T(1000), T(2000)), r);
  EXPECT_EQ(ii.range(T(1500), T(1501)), (position_range{1499, 1500}));
  EXPECT_EQ(ii.improves(), 4);
  EXPECT_EQ(ii.check(), "");
}

TYPED_TEST(IndexIntervals, EdgeSizesAndErrors) {
  using T = TypeParam;
  index_intervals<T> empty(exec, std::vector<T>{});
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(empty.intervals(), 0);
  EXPECT_EQ(empty.unplaced(), 0);
  EXPECT_THROW(empty.select(0), invalid_argument);
  EXPECT_THROW(empty.improve(0), invalid_argument);
  EXPECT_EQ(empty.range(T(0), T(1)), (position_range{0, 0}));
  empty.sort();
  EXPECT_EQ(empty.check(), "");

  index_intervals<T> one(exec, std::vector<T>{T(3)});
  EXPECT_EQ(one.unplaced(), 0);  // a single element is placed
  EXPECT_EQ(one.select(0), T(3));
  EXPECT_EQ(one.improves(), 0);
  EXPECT_EQ(one.interval(0), (index_interval{0, 1, true}));
  EXPECT_THROW(one.select(1), invalid_argument);
  EXPECT_THROW(one.select(-1), invalid_argument);
  EXPECT_THROW(one.improve(1), invalid_argument);
  EXPECT_THROW(one.interval(-1), invalid_argument);

  const std::vector<T> input = make_input<T>(shape::random, 100, 2);
  index_intervals<T> ii(exec, input);
  EXPECT_EQ(ii.range(T(5), T(1)), (position_range{0, 0}));  // inverted: empty
  EXPECT_EQ(ii.improves(), 0);
  EXPECT_THROW((index_intervals<T>(exec, span<const T>(nullptr, 3))), invalid_argument);

  // Moves keep the state; the moved-from object is empty.
  ii.select(50);
  const int64_t improves = ii.improves(), pieces = ii.intervals();
  index_intervals<T> moved(std::move(ii));
  EXPECT_EQ(moved.improves(), improves);
  EXPECT_EQ(moved.intervals(), pieces);
  EXPECT_EQ(moved.check(), "");
  EXPECT_EQ(ii.size(), 0);  // NOLINT(bugprone-use-after-move): the documented state
  ii = std::move(moved);
  EXPECT_EQ(ii.select(50), sorted_copy(input)[50]);
}

TEST(IndexIntervals, CudaWithoutADevice) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a device is present: gpu_index_intervals_test covers CUDA";
  const std::vector<float> v = {1, 2, 3};
  EXPECT_THROW((index_intervals<float>(cuda, v)), error);
}

}  // namespace
}  // namespace gsearch::test
