// The distributed operations on the CPU with in-process ranks (dist_threads.hpp): 1 to 4 ranks,
// every case of dist_cases.hpp. The same cases run over MPI in dist_mpi_test.cpp (mpirun) and
// over NCCL in gpu_dist_test.cpp; core/dist.hpp's plans are tested here directly.

#include <gtest/gtest.h>

#include "dist_cases.hpp"
#include "dist_threads.hpp"
#include "gsearch/core/dist.hpp"

namespace gsearch::test {
namespace {

TEST(CoreDist, OwnerPlanSkipsEmptyRanks) {
  // Ranks 0 and 2 empty, 1 holds {5, 6}, 3 holds {9}, 4 empty: queries never go to an empty
  // rank but 0 (whose offset is 0, which is right for queries below every key).
  const auto plan = core::dist::make_owner_plan<int>({0, 2, 0, 1, 0}, {0, 5, 0, 9, 0});
  EXPECT_EQ(plan.boundaries, (std::vector<int>{5, 9, 9}));
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 0, 2, 2, 3, 3}));
  EXPECT_EQ(plan.owner(side::left, 5), 0);   // lower_bound 0: rank 0's offset + 0
  EXPECT_EQ(plan.owner(side::right, 5), 1);  // upper_bound 1: rank 1's 0 + 1
  EXPECT_EQ(plan.owner(side::left, 9), 1);   // 2: rank 1's 0 + 2
  EXPECT_EQ(plan.owner(side::right, 9), 3);  // 3: rank 3's 2 + 1
  EXPECT_EQ(plan.owner(side::right, 100), 3);
}

TEST(CoreDist, SplittersBalanceEqualKeys) {
  // Two ranks of 100 equal keys: the tags cut the run in half.
  std::vector<core::dist::sample<int>> samples;
  for (int r = 0; r < 2; ++r)
    for (int64_t pos : core::dist::sample_positions(100, 10)) samples.push_back({7, r, pos, 10.0});
  const auto s = core::dist::choose_splitters(samples, 2);
  ASSERT_EQ(s.size(), 1u);
  const int64_t cut0 = core::dist::cut(0, 100, 0, s[0].rank, s[0].position);
  const int64_t cut1 = core::dist::cut(0, 100, 1, s[0].rank, s[0].position);
  // Rank 0's elements below the cut and rank 1's: half of the 200, within one sample's weight.
  EXPECT_NEAR(double(cut0 + cut1), 100.0, 10.0);
  EXPECT_EQ(s[0].rank == 0 ? cut1 : cut0, s[0].rank == 0 ? 0 : 100);  // the other rank: all or none
  EXPECT_EQ(core::dist::counts_from_cuts({cut0}, 100), (std::vector<int64_t>{cut0, 100 - cut0}));
}

TEST(CoreDist, SampleCountsFollowTheShares) {
  EXPECT_EQ(core::dist::sample_count(0, 100, 4), 0);
  EXPECT_EQ(core::dist::sample_count(10, 10, 4), 10);    // all of a small run
  EXPECT_EQ(core::dist::sample_count(500, 1000, 2), 64);  // half the data, half the 128
}

class DistThreads : public testing::TestWithParam<int> {};

TEST_P(DistThreads, AllCases) {
  const uint64_t seed = test_seed();
  thread_group group(GetParam(), false);
  group.run([&](dist::communicator& comm) {
    dist_cases::host_memory mem;
    dist_cases::all_cases(mem, comm, seed);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, DistThreads, testing::Values(1, 2, 3, 4));

// Rank r fails at every agreement point of every operation in turn (GSEARCH_DIST_FAULT): every
// rank throws, or none does, and none waits for ever.
TEST_P(DistThreads, RanksFailTogether) {
  const int p = GetParam();
  thread_group group(p, false);
  dist_cases::every_fault(p, [&](int op, int faulty) {
    std::vector<int> threw(size_t(p), 0);
    group.run([&](dist::communicator& comm) {
      dist_cases::host_memory mem;
      threw[size_t(comm.rank())] = dist_cases::fault_thrown(mem, comm, op, faulty);
    });
    for (int t : threw)
      if (t != threw[0]) return -1;
    return threw[0];
  });
  for (int faulty = 0; faulty < p; ++faulty)
    group.run([&](dist::communicator& comm) {
      dist_cases::host_memory mem;
      dist_cases::failed_allocation(mem, comm, faulty);
    });
  group.run([&](dist::communicator& comm) {
    dist_cases::host_memory mem;
    dist_cases::replicated_keys_as_sharded(mem, comm);
  });
}

TEST(DistThreads, MemoryMismatchIsAnError) {
  thread_group group(1, true);  // device-memory ranks, called with gsearch::cpu
  group.run([](dist::communicator& comm) {
    std::vector<int> keys{1, 2}, q{1};
    std::vector<int64_t> out(1);
    EXPECT_THROW(dist::search(cpu, comm, side::left, span<const int>(keys), span<const int>(q), span<int64_t>(out)),
                 invalid_argument);
  });
}

}  // namespace
}  // namespace gsearch::test
