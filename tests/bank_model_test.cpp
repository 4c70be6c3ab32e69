// The paper's bank-conflict analysis, stated as tests on the model (src/tools/bank_model.hpp):
// Section IV-A (PBS worst case, the A_PBS formula), IV-B (PBS-CF is conflict free) and IV-C
// (PBS-CL: at most w - 1 accesses in stage 2), and Section V-B's explanation of the GTX 770's
// 4-byte mode.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tools/bank_model.hpp"
#include "gsearch/core/padding.hpp"
#include "tools/query_gen.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using model::bank_config;
constexpr int w = warp_width;
const bank_config h100{32, 4, true};

int log2i(int64_t x) { return ceil_log2(x); }

template <class T>
model::run_summary run_model(algorithm a, const std::vector<T>& keys, const std::vector<T>& queries,
                             const bank_config& cfg = h100, side s = side::right) {
  return model::model_run(a, s, keys.data(), int64_t(keys.size()), queries.data(),
                          int64_t(queries.size()), cfg);
}

TEST(BankModel, CostOfAccess) {
  std::vector<int64_t> addr(32);
  for (int l = 0; l < 32; ++l) addr[l] = 4 * l;  // 32 consecutive words: one pass
  auto c = model::cost_of_access(addr, 4, h100);
  EXPECT_EQ(c.passes, 1);
  EXPECT_EQ(c.conflicts(), 0);
  for (int l = 0; l < 32; ++l) addr[l] = 128 * l;  // stride 32 words: all in bank 0
  c = model::cost_of_access(addr, 4, h100);
  EXPECT_EQ(c.passes, 32);
  EXPECT_EQ(c.conflicts(), 31);
  EXPECT_EQ(c.words_per_bank[0], 32);
  for (int l = 0; l < 32; ++l) addr[l] = 64;  // one address: multicast
  EXPECT_EQ(model::cost_of_access(addr, 4, h100).passes, 1);
  EXPECT_EQ(model::cost_of_access(addr, 4, bank_config{32, 4, false}).passes, 32);
  for (int l = 0; l < 32; ++l) addr[l] = 8 * l;  // 32 consecutive 8-byte keys: two passes, ideal
  c = model::cost_of_access(addr, 8, h100);
  EXPECT_EQ(c.passes, 2);
  EXPECT_EQ(c.conflicts(), 0);
  EXPECT_EQ(model::cost_of_access(addr, 8, bank_config{32, 8, true}).passes, 1);
}

// Section IV-A: with worst-case queries (Corollary 4.1) and k a power of two >= w^2, PBS's
// ceil(log2 k) loop steps cost max(2^i, w) passes each, in all w(log2 k - log2 w + 1) - 1 per
// warp. Algorithm 1's final comparison is one more step, also a w-way conflict.
TEST(BankModel, PbsWorstCaseMatchesThePaper) {
  for (int64_t k : {1024, 2048, 4096, 16384, 32768}) {
    const auto keys = gen::sorted_keys<uint32_t>(k, 7);
    std::vector<uint32_t> distinct(k);
    for (int64_t i = 0; i < k; ++i) distinct[i] = uint32_t(3 * i + 1);
    for (const auto* kk : {&distinct}) {
      const auto queries = gen::worst_case_queries(kk->data(), k, 64 * w, 11);
      const auto r = run_model(algorithm::pbs, *kk, queries);
      const int lk = log2i(k);
      ASSERT_EQ(int(r.step_passes.size()), lk + 1) << "k=" << k;
      int64_t loop = 0;
      for (int i = 0; i < lk; ++i) {
        EXPECT_EQ(r.step_passes[i], r.warps * std::min<int64_t>(int64_t(1) << i, w)) << "k=" << k << " step " << i;
        loop += r.step_passes[i];
      }
      EXPECT_EQ(loop / r.warps, int64_t(w) * (lk - log2i(w) + 1) - 1) << "k=" << k;
      EXPECT_EQ(r.step_passes[lk], r.warps * w) << "final comparison, k=" << k;
    }
    (void)keys;
  }
}

// Below w^2 keys there are fewer than w cells per bank: at most k / w passes per step.
TEST(BankModel, PbsSmallKBoundedByCellsPerBank) {
  for (int64_t k : {32, 64, 128, 256, 512}) {
    std::vector<int32_t> keys(k);
    for (int64_t i = 0; i < k; ++i) keys[i] = int32_t(i);
    const auto queries = gen::worst_case_queries(keys.data(), k, 16 * w, 3);
    const auto r = run_model(algorithm::pbs, keys, queries);
    for (size_t s = 0; s < r.step_passes.size(); ++s)
      EXPECT_LE(r.step_passes[s], r.warps * std::max<int64_t>(1, k / w + 1)) << "k=" << k << " step " << s;
  }
}

struct Inputs {
  const char* name;
  std::vector<int64_t> keys, queries;
};

std::vector<Inputs> model_inputs(uint64_t seed) {
  std::vector<Inputs> v;
  std::mt19937_64 rng(seed);
  for (int64_t k : {1, 31, 32, 33, 100, 1000, 1024, 4096, 5000, 16384}) {
    auto keys = gen::sorted_keys<int64_t>(k, rng());
    v.push_back({"random", keys, gen::random_queries_from_keys(keys.data(), k, 32 * w, rng())});
    v.push_back({"worst", keys, gen::worst_case_queries(keys.data(), k, 32 * w, rng())});
    std::vector<int64_t> dup(k);
    for (auto& x : dup) x = small_value<int64_t>(rng, 7);
    sort_keys(dup);
    v.push_back({"duplicates", dup, gen::random_queries_from_keys(dup.data(), k, 32 * w, rng())});
    v.push_back({"all-equal", std::vector<int64_t>(k, 5), std::vector<int64_t>(32 * w, 5)});
    std::vector<int64_t> outside(32 * w);
    for (size_t i = 0; i < outside.size(); ++i) outside[i] = (i % 2) ? INT64_MIN : INT64_MAX;
    v.push_back({"outside", keys, outside});
  }
  return v;
}

// Section IV-B: PBS-CF has no bank conflicts on any input, when a key fills at least one bank
// word: 8-byte keys in 4- or 8-byte banks, 4-byte keys in 4-byte banks. (4-byte keys in 8-byte
// banks share cells, so lanes of different columns can meet in one bank: not conflict free.)
TEST(BankModel, PbsCfIsConflictFree) {
  for (const auto& in : model_inputs(test_seed())) {
    for (const bank_config cfg : {h100, bank_config{32, 8, true}}) {
      for (side s : {side::left, side::right}) {
        const auto r64 = run_model(algorithm::pbs_cf, in.keys, in.queries, cfg, s);
        EXPECT_EQ(r64.conflicts, 0) << in.name << " k=" << in.keys.size() << " banks of " << cfg.bank_bytes;
        std::vector<int32_t> k32(in.keys.size()), q32(in.queries.size());
        // 4-byte keys: the same order-preserving shape (ranks, not values).
        for (size_t i = 0; i < k32.size(); ++i) k32[i] = int32_t(i / 2);
        for (size_t i = 0; i < q32.size(); ++i) q32[i] = int32_t(i * 7 % (k32.size() + 3)) - 1;
        const auto r32 = run_model(algorithm::pbs_cf, k32, q32, cfg, s);
        if (cfg.bank_bytes == 4) {
          EXPECT_EQ(r32.conflicts, 0) << in.name;
        } else if (k32.size() >= 4 * w) {
          EXPECT_GT(r32.conflicts, 0) << in.name;
        }
      }
    }
  }
}

// Section IV-C: PBS-CL's stage 1 is conflict free and its stage 2 takes at most w - 1 accesses
// (passes) per warp, when a key fills one bank word (the paper's setting: here 8-byte keys in
// 8-byte banks). 8-byte keys in the H100's 4-byte banks pair lanes l and l + 16 on each bank
// pair, which doubles the bound: 2(w - 1) passes, never below the 2 per step any 8-byte read takes.
TEST(BankModel, PbsClConflictsLimitedToStageTwo) {
  for (const auto& in : model_inputs(test_seed())) {
    const int64_t k = int64_t(in.keys.size());
    const auto padded = core::pad_keys(in.keys.data(), k);
    for (const bank_config cfg : {bank_config{32, 8, true}, h100}) {
      const int64_t bound = cfg.bank_bytes == 8 ? w - 1 : 2 * (w - 1);
      for (int64_t base = 0; base < int64_t(in.queries.size()); base += w) {
        const auto t = model::trace_warp(algorithm::pbs_cl, side::right, padded, k,
                                         in.queries.data() + base, w, cfg);
        for (size_t s = 0; s < t.steps.size(); ++s) {
          if (t.stage[s] == 1) {
            EXPECT_EQ(t.steps[s].conflicts(), 0) << in.name << " k=" << k << " step " << s;
          }
        }
        EXPECT_EQ(int(t.steps.size()) - core::stage1_steps(k), log2i(w));
        EXPECT_LE(t.stage_passes(2), bound) << in.name << " k=" << k << " banks of " << cfg.bank_bytes;
      }
    }
  }
}

// PBS-CL's bound is tight: the paper's Figure 6 case reaches w - 1 stage-2 accesses.
TEST(BankModel, PbsClStageTwoBoundIsReached) {
  const int64_t k = 4096;
  std::vector<int32_t> keys(k);
  for (int64_t i = 0; i < k; ++i) keys[i] = int32_t(i);
  int64_t worst = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const auto queries = gen::worst_case_queries(keys.data(), k, w, seed);
    const auto padded = core::pad_keys(keys.data(), k);
    const auto t = model::trace_warp(algorithm::pbs_cl, side::right, padded, k, queries.data(), w, h100);
    worst = std::max(worst, t.stage_passes(2));
  }
  // And a hand-made set: lane l queries key l * (k / w) + (w - 1 - l).
  std::vector<int32_t> q(w);
  for (int l = 0; l < w; ++l) q[l] = int32_t(l * (k / w) + (w - 1) - l);
  const auto padded = core::pad_keys(keys.data(), k);
  const auto t = model::trace_warp(algorithm::pbs_cl, side::right, padded, k, q.data(), w, h100);
  worst = std::max(worst, t.stage_passes(2));
  EXPECT_LE(worst, w - 1);
  EXPECT_GT(worst, int64_t(log2i(w)));  // worst-case queries do conflict in stage 2
}

// Section V-B: on the GTX 770 with 4-byte keys in 8-byte mode, two keys share a cell, so for
// k = w^2 worst-case PBS saw at most 16-way conflicts, and only from k = 2048 the full 32-way.
TEST(BankModel, GtxEightByteModeHalvesFourByteConflicts) {
  const bank_config kepler8{32, 8, true};
  for (int64_t k : {1024, 2048}) {
    std::vector<uint32_t> keys(k);
    for (int64_t i = 0; i < k; ++i) keys[i] = uint32_t(i);
    const auto queries = gen::worst_case_queries(keys.data(), k, 16 * w, 5);
    const auto r = run_model(algorithm::pbs, keys, queries, kepler8);
    int64_t max_step = 0;
    for (auto p : r.step_passes) max_step = std::max(max_step, p / r.warps);
    EXPECT_EQ(max_step, k == 1024 ? 16 : 32) << "k=" << k;
  }
  // With 8-byte keys the estimate holds exactly (Figure 8).
  const int64_t k = 2048;
  std::vector<uint64_t> keys(k);
  for (int64_t i = 0; i < k; ++i) keys[i] = uint64_t(i);
  const auto queries = gen::worst_case_queries(keys.data(), k, 16 * w, 5);
  const auto r = run_model(algorithm::pbs, keys, queries, kepler8);
  int64_t loop = 0;
  for (int i = 0; i < log2i(k); ++i) loop += r.step_passes[i];
  EXPECT_EQ(loop / r.warps, int64_t(w) * (log2i(k) - log2i(w) + 1) - 1);
}

// Random queries on at most w keys: one cell per bank, so PBS never conflicts (Section V-C).
TEST(BankModel, PbsNoConflictsWithOneCellPerBank) {
  std::vector<int32_t> keys(32);
  for (int i = 0; i < 32; ++i) keys[i] = i;
  // The padding adds one cell per bank at each end; the searched range stays in one.
  const auto queries = gen::random_queries_from_keys(keys.data(), 32, 64 * w, 9);
  const auto r = run_model(algorithm::pbs, keys, queries);
  EXPECT_LE(r.conflicts, r.warps * 2);
}

}  // namespace
}  // namespace gsearch::test
