// The per-architecture tuning policies (src/cuda/tuning_common.hpp: policy_list, policy_index,
// with_policy, for_each_policy; CUB's ChainedPolicy as data), on the CPU: which policy a compute
// capability gets (the newest measured at or below it; the oldest for a device older than all),
// that with_policy calls the chosen policy's code once and returns its answer, and the merge
// family's list (src/merge/tuning.hpp): ascending, sm_90 for the H100 / H200 and for every other
// architecture until one of theirs is measured, and every policy's tiles within the 48 KB of
// static shared memory their kernels declare. The row top-k's split (src/selection/tuning_topk.hpp:
// topk_row_split): its pieces' invariants over a grid of shapes, and where it splits the
// benchmarks' shapes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/tuning_common.hpp"
#include "merge/tuning.hpp"
#include "search/tuning.hpp"
#include "selection/tuning_topk.hpp"

namespace {

using namespace gsearch::cuda_backend;

struct policy_sm70 {
  static constexpr int arch = 70;
  static constexpr int tile = 1;
};
struct policy_sm90 {
  static constexpr int arch = 90;
  static constexpr int tile = 2;
};
struct policy_sm100 {
  static constexpr int arch = 100;
  static constexpr int tile = 3;
};
using three = policy_list<policy_sm70, policy_sm90, policy_sm100>;

TEST(TuningPolicy, IndexIsTheNewestPolicyAtOrBelowTheDevice) {
  const int archs[] = {70, 90, 100};
  EXPECT_EQ(policy_index(archs, 60), 0);  // older than every policy: the oldest
  EXPECT_EQ(policy_index(archs, 0), 0);   // device_limits' default
  EXPECT_EQ(policy_index(archs, 70), 0);
  EXPECT_EQ(policy_index(archs, 75), 0);
  EXPECT_EQ(policy_index(archs, 89), 0);
  EXPECT_EQ(policy_index(archs, 90), 1);
  EXPECT_EQ(policy_index(archs, 99), 1);
  EXPECT_EQ(policy_index(archs, 100), 2);
  EXPECT_EQ(policy_index(archs, 120), 2);  // a later architecture: the newest measured
  const int one[] = {90};
  for (int arch : {0, 70, 80, 86, 89, 90, 100, 103, 120}) EXPECT_EQ(policy_index(one, arch), 0) << arch;
  static_assert(policy_index(three::archs, 95) == 1);  // constexpr
}

TEST(TuningPolicy, ArchsAscending) {
  const int good[] = {70, 90, 100}, equal[] = {90, 90}, down[] = {100, 90};
  EXPECT_TRUE(policy_archs_ascending(good));
  EXPECT_FALSE(policy_archs_ascending(equal));
  EXPECT_FALSE(policy_archs_ascending(down));
  static_assert(policy_archs_ascending(three::archs));
  static_assert(policy_archs_ascending(merge_policies::archs));
}

TEST(TuningPolicy, WithPolicyCallsTheChosenPolicyOnce) {
  for (auto [arch, want] : std::vector<std::pair<int, int>>{{60, 1}, {80, 1}, {90, 2}, {100, 3}, {120, 3}}) {
    int calls = 0;
    const int got = with_policy(three{}, arch, [&]<class P>() {
      ++calls;
      return P::tile;
    });
    EXPECT_EQ(got, want) << arch;
    EXPECT_EQ(calls, 1) << arch;
  }
  int seen = 0;
  with_policy(three{}, 90, [&]<class P>() { seen = P::arch; });  // a void f
  EXPECT_EQ(seen, 90);
  // The answer's type is f's (a launch_config here, as the launch sites read their shapes).
  const auto c = with_policy(merge_policies{}, 90, []<class P>() { return P::template merge_config<4>; });
  static_assert(std::is_same_v<decltype(c), const launch_config>);
  EXPECT_EQ(c.tile(), merge_policy_sm90::merge_config<4>.tile());
}

TEST(TuningPolicy, ForEachPolicyOldestFirst) {
  std::vector<int> archs;
  for_each_policy(three{}, [&]<class P>() { archs.push_back(P::arch); });
  EXPECT_EQ(archs, (std::vector<int>{70, 90, 100}));
}

// The merge family: measured on the H100 (sm_90), the one policy today, which the H200 (sm_90),
// later and older architectures use.
TEST(TuningPolicy, MergeFamilyUsesSm90Everywhere) {
  for (int arch : {0, 70, 80, 89, 90, 100, 120}) {
    const int chosen = with_policy(merge_policies{}, arch, []<class P>() { return P::arch; });
    EXPECT_EQ(chosen, 90) << arch;
  }
}

// Every policy's shapes as the kernels need them: whole warps, odd items (merge/tuning.hpp: a
// thread's run of items words on distinct banks), and the static shared arrays of
// merge_tiles_kernel and block_sort_kernel (keys_s[tile + 1] and, with values, src_s[tile] ints),
// sorted_search_kernel (staged[tile + 1], ranks[tile] ints) and set_op_kernel (staged[tile + 2],
// thread_a / thread_b[threads + 1] ints) within 48 KB (CUB's temporary storage beside them, a few
// hundred bytes, is not counted here).
template <class P, int KeyBytes>
void check_shapes() {
  constexpr int64_t limit = 48 * 1024;
  const std::string what = "sm_" + std::to_string(P::arch) + " " + std::to_string(KeyBytes) + "-byte keys";
  const auto shape_ok = [&](launch_config c, const char* name) {
    EXPECT_EQ(c.threads % 32, 0) << what << " " << name;
    EXPECT_EQ(c.items % 2, 1) << what << " " << name;
    EXPECT_GE(c.min_blocks, 0) << what << " " << name;
  };
  const auto merge_smem = [](int64_t tile, bool values) { return (tile + 1) * KeyBytes + (values ? tile * 4 : 4); };

  constexpr launch_config m = P::template merge_config<KeyBytes>;
  shape_ok(m, "merge");
  EXPECT_LE(merge_smem(m.tile(), true), limit) << what << " merge with values";
  for (bool values : {false, true}) {
    const launch_config s = values ? P::template merge_sort_config<KeyBytes, true>
                                   : P::template merge_sort_config<KeyBytes, false>;
    const int sort_threads = values ? P::template merge_sort_block_threads<KeyBytes, true>
                                    : P::template merge_sort_block_threads<KeyBytes, false>;
    shape_ok(s, "merge sort");
    EXPECT_EQ(sort_threads % 32, 0) << what;
    EXPECT_LE(merge_smem(s.tile(), values), limit) << what << " merge sort pass, values " << values;
    EXPECT_LE(merge_smem(int64_t(sort_threads) * s.items, values), limit)
        << what << " block sort, values " << values;
  }
  constexpr launch_config q = P::template sorted_search_config<KeyBytes>;
  shape_ok(q, "sorted search");
  EXPECT_LE((q.tile() + 1) * KeyBytes + q.tile() * 4, limit) << what << " sorted search";
  constexpr launch_config o = P::template set_op_config<KeyBytes>;
  shape_ok(o, "set operations");
  EXPECT_LE((o.tile() + 2) * KeyBytes + 2 * (o.threads + 1) * 4, limit) << what << " set operations";
}

TEST(TuningPolicy, MergePoliciesFitStaticSharedMemory) {
  for_each_policy(merge_policies{}, []<class P>() {
    check_shapes<P, 4>();
    check_shapes<P, 8>();
  });
}

// The search's auto_ choice beyond shared memory (the device's limit: 227 KB): the search by
// sorting the queries for many queries in the largest key lists, where merge_auto_rules measured
// it first, and not where merge_ok is false (float keys, over the cap).
TEST(TuningPolicy, AutoTakesMergeForManyQueriesInTheLargestKeyLists) {
  constexpr int64_t smem = 227 * 1024;
  const auto pick = [](int key_bytes, int64_t k, int64_t q, bool merge_ok = true) {
    return auto_choice(key_bytes, k, q, smem, true, true, merge_ok);
  };
  EXPECT_EQ(pick(4, int64_t{1} << 27, int64_t{1} << 24), gsearch::algorithm::merge);
  EXPECT_EQ(pick(4, int64_t{1} << 27, int64_t{1} << 23), gsearch::algorithm::partitioned);
  EXPECT_EQ(pick(4, int64_t{1} << 30, int64_t{1} << 27), gsearch::algorithm::merge);
  EXPECT_EQ(pick(4, int64_t{1} << 26, int64_t{1} << 26), gsearch::algorithm::merge);
  EXPECT_EQ(pick(4, int64_t{1} << 26, int64_t{1} << 25), gsearch::algorithm::partitioned);
  EXPECT_EQ(pick(4, int64_t{1} << 25, int64_t{1} << 27), gsearch::algorithm::partitioned);
  EXPECT_EQ(pick(8, int64_t{1} << 27, int64_t{1} << 26), gsearch::algorithm::merge);
  EXPECT_EQ(pick(8, int64_t{1} << 27, int64_t{1} << 25), gsearch::algorithm::partitioned);
  EXPECT_EQ(pick(8, int64_t{1} << 26, int64_t{1} << 27), gsearch::algorithm::merge);
  EXPECT_EQ(pick(8, int64_t{1} << 25, int64_t{1} << 26), gsearch::algorithm::merge);
  EXPECT_EQ(pick(8, int64_t{1} << 25, int64_t{1} << 25), gsearch::algorithm::partitioned);
  EXPECT_EQ(pick(8, int64_t{1} << 24, int64_t{1} << 27), gsearch::algorithm::merge);
  EXPECT_EQ(pick(8, int64_t{1} << 24, int64_t{1} << 26), gsearch::algorithm::partitioned);
  EXPECT_EQ(pick(4, int64_t{1} << 27, int64_t{1} << 27, false), gsearch::algorithm::partitioned);
  EXPECT_EQ(pick(4, int64_t{1} << 27, 32), gsearch::algorithm::pary);  // a few queries first
}

// The pieces of every split: a multiple of 32 keys, at least 4 k and topk_split_min_piece, the
// last at least k and no longer than the others, both steps within the staged limit, the second
// step at most half the first; and the split's choices at the benchmarks' shapes (an H200: 132
// SMs, 227 KB of shared memory a block).
TEST(TuningPolicy, TopkRowSplitPieces) {
  const int sms = 132;
  for (const int key_bytes : {1, 2, 4, 8}) {
    const int64_t staged = topk_staged_max_cols(key_bytes, 227 * 1024);
    for (const int64_t rows :
         {int64_t(1), int64_t(3), int64_t(64), int64_t(263), int64_t(264), int64_t(4096)})
      for (const int64_t cols : {int64_t(2047), int64_t(2048), int64_t(9001), int64_t(16384), staged,
                                 staged + 1, int64_t(524288), int64_t(1) << 22, (int64_t(1) << 26) + 3})
        for (const int64_t k : {int64_t(1), int64_t(64), int64_t(256), int64_t(512), int64_t(4097)}) {
          const topk_split s = topk_row_split(rows, cols, k, key_bytes, staged, sms);
          SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) + ", k " + std::to_string(k) +
                       ", " + std::to_string(key_bytes) + " B");
          if (s.parts <= 1) continue;
          EXPECT_EQ(s.part % 32, 0);
          EXPECT_GE(s.part, std::max(4 * k, topk_split_min_piece));
          const int64_t last = cols - (s.parts - 1) * s.part;
          EXPECT_GE(last, k);
          EXPECT_LE(last, s.part);
          EXPECT_LE(s.part, staged);
          EXPECT_LE(s.parts * k, staged);
          EXPECT_LE(2 * s.parts * k, cols);
        }
  }
  const int64_t staged = topk_staged_max_cols(4, 227 * 1024);
  const topk_split flash = topk_row_split(256, 524288, 256, 4, staged, sms);  // FlashInfer's shape
  EXPECT_EQ(flash.parts, 32);
  EXPECT_EQ(flash.part, 16384);
  EXPECT_EQ(topk_row_split(64, 16384, 512, 4, staged, sms).parts, 5);             // too few rows: 5 pieces
  EXPECT_EQ(topk_row_split(4096, 16384, 64, 4, staged, sms).parts, 1);            // the row kernel alone
  EXPECT_EQ(topk_row_split(1, int64_t(1) << 26, 1024, 4, staged, sms).parts, 1);  // the 1-D path
  EXPECT_EQ(topk_row_split(1, int64_t(1) << 24, 1, 4, staged, sms).parts, 1);     // the 1-D path (model)
  EXPECT_GT(topk_row_split(1, int64_t(1) << 22, 1, 4, staged, sms).parts, 1);
}

}  // namespace
