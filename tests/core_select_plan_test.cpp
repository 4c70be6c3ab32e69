// core/select_plan.hpp, the planned levels of the CUDA select, run on the host: a level's pass
// done with plain loops (the sample sorted, core::select_bucket per element, the copied buckets'
// members appended in the data's order or reversed), the plan advanced by plan_level and
// resolve_level until it is done or gives up; every answer against a sort of the data, every
// give-up only where the state cannot go on (too many splitters, a missed or overflowing bucket).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/select_plan.hpp"
#include "gsearch/core/selection.hpp"
#include "selection_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using namespace gsearch::test::selection;
using core::plan_status;

template <class T>
class CoreSelectPlan : public ::testing::Test {};
TYPED_TEST_SUITE(CoreSelectPlan, KeyTypes);

template <class T>
struct plan_run {
  core::select_level<T> level;
  int levels = 0;
};

// Runs the plan to its end over `data` with a sample of `sample` elements. capacity < 0: the
// CUDA select's (1.25 x the first level's expected count, plus slack, at most n).
template <class T>
plan_run<T> run_plan(const std::vector<T>& data, const std::vector<int64_t>& ranks, int64_t sample,
                     bool reverse_copies, int64_t capacity = -1) {
  plan_run<T> run;
  core::select_level<T>& L = run.level;
  core::start_plan(L, int64_t(data.size()), ranks.data(), int(ranks.size()));
  std::vector<T> cur = data;
  while (L.status == int32_t(plan_status::running)) {
    core::plan_level(L, sample, 0.5);
    if (L.status != int32_t(plan_status::running)) break;
    ++run.levels;
    EXPECT_EQ(int64_t(cur.size()), L.n);
    // The sample select: sort the s elements at sample_position, pick index[j].
    std::vector<T> picked;
    for (int64_t i = 0; i < L.s; ++i) picked.push_back(cur[size_t(core::sample_position(i, L.s, L.n))]);
    picked = sorted_copy(picked);
    std::vector<T> splitters;
    for (int j = 0; j < L.m; ++j) splitters.push_back(picked[size_t(L.index[j])]);
    if (L.final_level) {
      core::resolve_level(L, static_cast<const uint64_t*>(nullptr), uint64_t(0), 0, splitters.data());
      break;
    }
    if (capacity < 0) capacity = std::min<int64_t>(L.n, int64_t(std::ceil(1.25 * L.expected)) + 4096);
    // The bucket pass.
    std::vector<uint64_t> hist(size_t(2 * L.m + 1), 0);
    std::vector<T> next;
    const auto at = [&](int i) { return splitters[size_t(i)]; };
    for (const T x : cur) {
      const int b = core::select_bucket(at, L.m, x);
      ++hist[size_t(b)];
      if (L.copy[b]) next.push_back(x);
    }
    if (reverse_copies) std::reverse(next.begin(), next.end());
    const uint64_t count = next.size();
    if (int64_t(next.size()) > capacity) next.resize(size_t(capacity));
    core::resolve_level(L, hist.data(), count, capacity, splitters.data());
    cur = std::move(next);
  }
  return run;
}

// "" when every slot holds the sorted data's value at its rank (equal keys: the same radix bits).
template <class T>
std::string check_answers(const core::select_level<T>& L, const std::vector<T>& sorted,
                          const std::vector<int64_t>& ranks) {
  for (size_t i = 0; i < ranks.size(); ++i)
    if (core::radix_bits(L.value[i]) != core::radix_bits(sorted[size_t(ranks[i])]))
      return "rank " + std::to_string(ranks[i]) + ": " + show(L.value[i]) + ", want " + show(sorted[size_t(ranks[i])]);
  return "";
}

TYPED_TEST(CoreSelectPlan, PlannedLevelsSelectLikeASort) {
  using T = TypeParam;
  const int64_t sample = 256;  // small, so that 10^5 elements take several levels
  int done = 0, runs = 0;
  for (shape sh : kShapes)
    for (int64_t n : {int64_t(1), int64_t(200), int64_t(257), int64_t(5000), int64_t(100003)}) {
      const std::vector<T> data = make_input<T>(sh, n, 5 + uint64_t(n), 64);
      const std::vector<T> sorted = sorted_copy(data);
      const std::vector<std::vector<int64_t>> rank_sets = {
          {0}, {n - 1}, {n / 2}, {(n - 1) / 2, n / 2}, {n / 3, n / 3 + 1, n - 1}, {0, n / 4, n / 2, n - 1}};
      for (const std::vector<int64_t>& raw : rank_sets) {
        std::vector<int64_t> ranks;
        for (const int64_t r : raw)
          if (r < n) ranks.push_back(r);
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        for (bool reverse : {false, true}) {
          const plan_run<T> run = run_plan(data, ranks, sample, reverse);
          ++runs;
          if (run.level.status == int32_t(plan_status::host)) continue;  // allowed; counted below
          ASSERT_EQ(run.level.status, int32_t(plan_status::done)) << name(sh) << " n=" << n;
          ASSERT_EQ(check_answers(run.level, sorted, ranks), "") << name(sh) << " n=" << n << " ranks=" << ranks.size();
          ++done;
          if (n <= sample) {
            EXPECT_EQ(run.levels, 1);
          }
        }
      }
    }
  // Giving up is for brackets the state cannot hold (four far-apart ranks need 8 splitters) and
  // the rare missed bracket: most runs finish on the plan.
  EXPECT_GT(done, runs * 2 / 3) << done << " of " << runs;
}

TYPED_TEST(CoreSelectPlan, OneRankOfRandomDataFinishesOnThePlan) {
  using T = TypeParam;
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 20000 + int64_t(rng() % 50000);
    const std::vector<T> data = make_input<T>(shape::random, n, rng());
    const std::vector<int64_t> ranks = {int64_t(rng() % uint64_t(n))};
    const plan_run<T> run = run_plan(data, ranks, 512, trial % 2 == 1);
    ASSERT_EQ(run.level.status, int32_t(plan_status::done)) << "n=" << n << " rank=" << ranks[0];
    ASSERT_EQ(check_answers(run.level, sorted_copy(data), ranks), "");
    EXPECT_GE(run.levels, 2);
  }
}

TYPED_TEST(CoreSelectPlan, GivesUpWhereTheStateCannotGoOn) {
  using T = TypeParam;
  const int64_t n = 100000;
  const std::vector<T> data = make_input<T>(shape::random, n, 3);
  // Five ranks: more than the state carries.
  const std::vector<int64_t> five = {1, 2, 3, 4, 5};
  core::select_level<T> L;
  core::start_plan(L, n, five.data(), 5);
  EXPECT_EQ(L.status, int32_t(plan_status::host));
  // Four far-apart ranks: eight splitters, more than the register bucket pass keeps.
  const std::vector<int64_t> spread = {n / 8, 3 * n / 8, 5 * n / 8, 7 * n / 8};
  core::start_plan(L, n, spread.data(), 4);
  core::plan_level(L, 4096, 0.5);
  EXPECT_EQ(L.status, int32_t(plan_status::host));
  // Candidates beyond the capacity.
  const plan_run<T> tight = run_plan(data, {n / 2}, 4096, false, 10);
  EXPECT_EQ(tight.level.status, int32_t(plan_status::host));
  // Brackets covering most of the level (dense ranks in a small sample).
  const std::vector<int64_t> dense = {n / 2 - 1, n / 2};
  core::start_plan(L, n, dense.data(), 2);
  core::plan_level(L, 16, 0.5);
  EXPECT_EQ(L.status, int32_t(plan_status::host));
}

TYPED_TEST(CoreSelectPlan, AnOddBucketAnswersAtOnce) {
  using T = TypeParam;
  // All equal: the first level's splitters equal every element; the rank lands in an odd bucket.
  const std::vector<T> data(30000, T(7));
  const std::vector<int64_t> ranks = {12345};
  const plan_run<T> run = run_plan(data, ranks, 1024, false);
  ASSERT_EQ(run.level.status, int32_t(plan_status::done));
  EXPECT_EQ(run.levels, 1);
  EXPECT_EQ(run.level.value[0], T(7));
}

}  // namespace
}  // namespace gsearch::test
