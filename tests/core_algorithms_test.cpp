// The per-lane algorithms of core/pbs.hpp against std::lower_bound / std::upper_bound:
// every algorithm, side, lane and accessor, exhaustively on small key lists and on the edges
// of every key type's order.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tools/bank_model.hpp"
#include "gsearch/core/fast_divide.hpp"
#include "gsearch/core/padding.hpp"
#include "tools/query_gen.hpp"
#include "gsearch/core/pbs.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

constexpr algorithm kAlgorithms[] = {algorithm::pbs, algorithm::pbs_cf, algorithm::pbs_cl,
                                     algorithm::binary};
constexpr side kSides[] = {side::left, side::right, side::pred};

// Rank of q by algorithm `a` on `lane`, through the padded accessor (as in shared memory) or
// the bounded accessor (as in global memory). Index type I as the GPU uses it.
template <class T, class I = int64_t>
int64_t run_one(algorithm a, side s, const std::vector<T>& keys, const std::vector<T>& padded,
                T q, int lane, bool bounded) {
  const I k = I(keys.size());
  auto go = [&](const auto& acc) -> int64_t {
    auto with = [&](auto pred) -> int64_t {
      switch (a) {
        case algorithm::pbs: return core::search_rank<algorithm::pbs>(acc, k, pred, lane);
        case algorithm::pbs_cf: return core::search_rank<algorithm::pbs_cf>(acc, k, pred, lane);
        case algorithm::pbs_cl: return core::search_rank<algorithm::pbs_cl>(acc, k, pred, lane);
        default: return core::search_rank<algorithm::binary>(acc, k, pred, lane);
      }
    };
    const int64_t r = s == side::left ? with(before<true, T>{q}) : with(before<false, T>{q});
    return s == side::pred ? r - 1 : r;
  };
  if (bounded) return go(core::bounded_accessor<T, key_traits<T>>{keys.data(), int64_t(keys.size())});
  return go(core::padded_accessor<T>{padded.data() + warp_width});
}

template <class T, class I = int64_t>
void check_all(const std::vector<T>& keys, const std::vector<T>& queries, const char* what) {
  const auto padded = core::pad_keys(keys.data(), int64_t(keys.size()));
  for (algorithm a : kAlgorithms)
    for (side s : kSides)
      for (const T q : queries) {
        const int64_t want = reference(keys, q, s);
        for (int lane = 0; lane < warp_width; ++lane)
          for (bool bounded : {false, true}) {
            const int64_t got = run_one<T, I>(a, s, keys, padded, q, lane, bounded);
            ASSERT_EQ(got, want) << what << ": " << to_string(a) << " side=" << side_name(s)
                                 << " k=" << keys.size() << " q=" << q << " lane=" << lane
                                 << (bounded ? " (global accessor)" : " (padded)");
          }
      }
}

// Every k up to 3w + 1 and some around w^2, distinct even keys, every query from below the
// first key to above the last (hits and misses).
TEST(CoreAlgorithms, ExhaustiveSmallDistinct) {
  std::vector<int> sizes;
  for (int k = 0; k <= 3 * warp_width + 1; ++k) sizes.push_back(k);
  for (int k : {127, 128, 129, 255, 256, 1023, 1024, 1025, 2048, 3000}) sizes.push_back(k);
  for (int k : sizes) {
    std::vector<int32_t> keys(k);
    for (int i = 0; i < k; ++i) keys[i] = 2 * i;
    std::vector<int32_t> queries;
    const int step = k > 200 ? 7 : 1;
    for (int q = -2; q <= 2 * k + 1; q += step) queries.push_back(q);
    check_all(keys, queries, "distinct");
    check_all<int32_t, int32_t>(keys, queries, "distinct, int32 index");
  }
}

TEST(CoreAlgorithms, DuplicatesAndAllEqual) {
  std::mt19937_64 rng(test_seed());
  for (int k : {1, 2, 31, 32, 33, 100, 1024, 1500}) {
    for (int range : {1, 2, 5, 50}) {
      std::vector<int64_t> keys(k);
      for (auto& x : keys) x = small_value<int64_t>(rng, range);
      sort_keys(keys);
      std::vector<int64_t> queries;
      for (int q = -range; q <= range; ++q) queries.push_back(q);
      check_all(keys, queries, "duplicates");
    }
  }
}

template <class T>
class CoreAlgorithmsTyped : public ::testing::Test {};
TYPED_TEST_SUITE(CoreAlgorithmsTyped, KeyTypes);

// Keys and queries at the ends of the order: the sentinels themselves (lowest, highest, NaN,
// +-inf) must not confuse any algorithm.
TYPED_TEST(CoreAlgorithmsTyped, EdgeValues) {
  using T = TypeParam;
  const std::vector<T> edges = edge_values<T>();
  std::mt19937_64 rng(test_seed());
  for (int k : {1, 2, 31, 32, 33, 64, 100, 1024}) {
    for (int rep = 0; rep < 3; ++rep) {
      std::vector<T> keys(k);
      for (auto& x : keys) x = rng() % 3 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, 20);
      sort_keys(keys);
      std::vector<T> queries = edges;
      for (int i = 0; i < 20; ++i) queries.push_back(small_value<T>(rng, 24));
      check_all(keys, queries, "edges");
    }
  }
  // All keys at one end of the order.
  for (T v : {std::numeric_limits<T>::lowest(), key_traits<T>::highest()}) {
    check_all(std::vector<T>(33, v), edges, "all keys at an end");
  }
}

TEST(CoreAlgorithms, NegativeZeroEqualsZero) {
  const std::vector<float> keys{-1.f, -0.f, 0.f, -0.f, 2.f};  // sorted: -0 == 0
  check_all(keys, std::vector<float>{0.f, -0.f}, "signed zeros");
  EXPECT_EQ(reference(keys, 0.f, side::left), 1);
  EXPECT_EQ(reference(keys, -0.f, side::right), 4);
}

}  // namespace
}  // namespace gsearch::test

namespace gsearch::test {
namespace {

// The batched form (N queries per lane in lockstep, as the GPU kernels run it) gives the same
// ranks as N separate searches.
template <algorithm A, int N>
void check_batched(const std::vector<int32_t>& keys, const std::vector<int32_t>& queries) {
  const auto padded = core::pad_keys(keys.data(), int64_t(keys.size()));
  const core::padded_accessor<int32_t> acc{padded.data() + warp_width};
  for (size_t base = 0; base + N <= queries.size(); base += N) {
    before<false, int32_t> preds[N];
    for (int i = 0; i < N; ++i) preds[i] = {queries[base + i]};
    int rank[N];
    core::search_ranks<A, N>(acc, int(keys.size()), preds, int(base % warp_width), rank);
    for (int i = 0; i < N; ++i)
      ASSERT_EQ(rank[i], reference(keys, queries[base + i], side::right))
          << to_string(A) << " N=" << N << " k=" << keys.size() << " q=" << queries[base + i];
  }
}

TEST(CoreAlgorithms, BatchedFormsMatch) {
  std::mt19937_64 rng(test_seed());
  for (int k : {1, 5, 32, 33, 1000, 4096}) {
    std::vector<int32_t> keys(k);
    for (auto& x : keys) x = small_value<int32_t>(rng, 3 * k);
    sort_keys(keys);
    std::vector<int32_t> queries(96);
    for (auto& x : queries) x = small_value<int32_t>(rng, 3 * k + 4);
    check_batched<algorithm::pbs, 4>(keys, queries);
    check_batched<algorithm::pbs_cf, 3>(keys, queries);
    check_batched<algorithm::pbs_cl, 4>(keys, queries);
    check_batched<algorithm::pbs_cl, 2>(keys, queries);
    check_batched<algorithm::binary, 4>(keys, queries);
  }
}

}  // namespace
}  // namespace gsearch::test

namespace gsearch::test {
namespace {

// PBS-CL with replicated keys (2 or 4 copies, read through replica_stride) gives the same ranks.
template <class T, int Copies>
void check_replicated(const std::vector<T>& keys, const std::vector<T>& queries) {
  const int64_t k = int64_t(keys.size());
  const auto layout = core::pad_keys_replicated(keys.data(), k, Copies);
  ASSERT_EQ(int64_t(layout.size()), core::replicated_size<T>(k, Copies));
  const core::padded_accessor<T> acc{layout.data() + warp_width};
  const int64_t stride = core::replica_stride<T>(k, Copies);
  EXPECT_EQ(((stride % bank_row_keys<T>()) + bank_row_keys<T>() / Copies) % bank_row_keys<T>(), 0);
  for (size_t j = 0; j < queries.size(); ++j) {
    for (bool strict : {false, true}) {
      int64_t rank[1];
      if (strict) {
        const before<true, T> p[1] = {{queries[j]}};
        core::search_ranks<algorithm::pbs_cl, 1, Copies>(acc, k, p, int(j % warp_width), rank, stride);
      } else {
        const before<false, T> p[1] = {{queries[j]}};
        core::search_ranks<algorithm::pbs_cl, 1, Copies>(acc, k, p, int(j % warp_width), rank, stride);
      }
      ASSERT_EQ(rank[0], reference(keys, queries[j], strict ? side::left : side::right))
          << "copies=" << Copies << " k=" << k << " q=" << queries[j];
    }
  }
}

TEST(CoreAlgorithms, ReplicatedPbsClMatches) {
  std::mt19937_64 rng(test_seed());
  for (int k : {0, 1, 31, 32, 33, 100, 1024, 1500, 4096}) {
    std::vector<int32_t> k32(k);
    for (auto& x : k32) x = small_value<int32_t>(rng, 2 * k + 2);
    sort_keys(k32);
    std::vector<int32_t> q32(300);
    for (auto& x : q32) x = small_value<int32_t>(rng, 2 * k + 6);
    for (int i = 0; i < 8; ++i) q32.push_back(edge_values<int32_t>()[size_t(i) % edge_values<int32_t>().size()]);
    check_replicated<int32_t, 2>(k32, q32);
    check_replicated<int32_t, 4>(k32, q32);
    std::vector<double> k64(k32.begin(), k32.end()), q64(q32.begin(), q32.end());
    q64.push_back(std::numeric_limits<double>::quiet_NaN());
    check_replicated<double, 2>(k64, q64);
    check_replicated<double, 4>(k64, q64);
  }
}

// The model with replicated keys: the worst case of PBS-CL's stage 2 drops from w - 1 = 31 passes
// to at most 16 (two copies) and 9 (four), 4-byte keys in 4-byte banks.
TEST(CoreAlgorithms, ReplicatedPbsClBoundsStageTwo) {
  for (int64_t k : {1024, 4096, 16384}) {
    const auto keys = gen::sorted_keys<uint32_t>(k, 3);
    const auto queries = gen::worst_case_queries(keys.data(), k, 64 * warp_width, 4);
    for (int copies : {1, 2, 4}) {
      const auto r = model::model_run(algorithm::pbs_cl, side::right, keys.data(), k, queries.data(),
                                      int64_t(queries.size()), model::bank_config{}, copies);
      int64_t per_warp_stage2 = 0;
      for (size_t s = 0; s < r.step_passes.size(); ++s)
        if (r.stage[s] == 2) per_warp_stage2 += r.step_passes[s];
      per_warp_stage2 /= r.warps;
      const int64_t bound = copies == 1 ? 31 : copies == 2 ? 16 : 9;
      EXPECT_LE(per_warp_stage2, bound) << "k=" << k << " copies=" << copies;
      if (copies == 1) {
        EXPECT_EQ(per_warp_stage2, 31) << "the worst case reaches the paper's bound";
      }
    }
  }
}

}  // namespace
}  // namespace gsearch::test

namespace gsearch::test {
namespace {

// The multiply-shift divider against the division it replaces: every numerator below 2^17 for
// the small divisors (row lengths of short rows), random and extreme numerators up to 2^31 - 1
// for divisors up to 2^31 - 1.
TEST(CoreAlgorithms, FastDividerIsExact) {
  for (uint32_t d = 1; d <= 300; ++d) {
    const core::fast_divider div(d);
    for (uint32_t n = 0; n < (1u << 17); ++n) ASSERT_EQ(div.divide(n), n / d) << n << " / " << d;
  }
  std::mt19937_64 rng(test_seed());
  const uint32_t top = (1u << 31) - 1;
  for (int trial = 0; trial < 2000; ++trial) {
    const uint32_t d = trial < 31 ? (1u << trial) + (trial % 2 ? 0u : 1u) : uint32_t(rng() % top) + 1;
    const core::fast_divider div(std::min(d, top));
    for (uint32_t n : {0u, 1u, div.divisor - 1, div.divisor, div.divisor + 1, top - 1, top, uint32_t(rng() % top)}) {
      if (n > top) continue;
      ASSERT_EQ(div.divide(n), n / div.divisor) << n << " / " << div.divisor;
    }
  }
}

}  // namespace
}  // namespace gsearch::test
