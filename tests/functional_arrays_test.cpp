// gsearch::functional_arrays on the CPU against the executable specification: the examples of
// the header, every value type, each adversarial mix at several cell counts (a reduced share of
// the 12.5 million operations: GSEARCH_FA_STEPS raises it), a full machine, handles (tied
// to their machine and generation), a backend pass that fails.

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

#include "functional_arrays_cases.hpp"
#include "gsearch/functional_arrays_stream.hpp"
#include "gsearch/gsearch.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

TEST(FunctionalArrays, HeaderExample) {
  functional_arrays<int64_t> fa(cpu, 64);
  fa_header_example(fa);
}

TEST(FunctionalArrays, OldVersionsKeepTheirValues) {
  functional_arrays<int32_t> fa(cpu, 256);
  std::vector<functional_arrays<int32_t>::array> v{fa.empty()};
  for (int k = 0; k < 50; ++k) v.push_back(fa.update(v.back(), k % 5, k));  // a chain over 5 indices
  for (int k = 1; k <= 50; ++k)
    for (int i = 0; i < 5; ++i) {
      // After step k the last write to i was at the largest k' <= k - 1 with k' % 5 == i.
      const int last = (k - 1) - ((k - 1 - i) % 5 + 5) % 5;
      EXPECT_EQ(fa.lookup(v[size_t(k)], i), last >= 0 && last >= i ? std::optional<int32_t>(last) : std::nullopt)
          << "version " << k << ", index " << i;
    }
  // A fan: 20 children of one version, each with its own value at index 2.
  std::vector<functional_arrays<int32_t>::array> kids;
  for (int k = 0; k < 20; ++k) kids.push_back(fa.update(v[10], 2, 100 + k));
  for (int k = 0; k < 20; ++k) EXPECT_EQ(fa.lookup(kids[size_t(k)], 2), 100 + k);
  EXPECT_EQ(fa.lookup(v[10], 2), 7);
  EXPECT_EQ(fa.check(), "");
}

TEST(FunctionalArrays, ExtremeIndicesAndNext) {
  functional_arrays<double> fa(cpu, 32);
  constexpr int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  auto a = fa.update(fa.update(fa.update(fa.empty(), hi, 1.5), lo, -2.0), 0, 0.25);
  EXPECT_EQ(fa.lookup(a, lo), -2.0);
  EXPECT_EQ(fa.lookup(a, hi), 1.5);
  EXPECT_EQ(fa.next(a, lo), 0);
  EXPECT_EQ(fa.next(a, 0), hi);
  EXPECT_EQ(fa.next(a, hi), std::nullopt);
  EXPECT_EQ(fa.size(a), 3);
  std::vector<int64_t> idx;
  std::vector<double> vals;
  fa.items(a, idx, vals);
  EXPECT_EQ(idx, (std::vector<int64_t>{lo, 0, hi}));
  EXPECT_EQ(vals, (std::vector<double>{-2.0, 0.25, 1.5}));
}

TEST(FunctionalArrays, AFullMachineLosesNothing) {
  functional_arrays<int64_t> fa(cpu, 8);
  auto a = fa.empty();
  std::vector<functional_arrays<int64_t>::array> held{a};
  for (int k = 0; k < 4; ++k) held.push_back(a = fa.update(a, k, k * 10));  // 4 cells (no carves)
  EXPECT_EQ(fa.free_cells(), 4);
  auto b = fa.update(held[2], 0, 99);  // carves index 0's piece: 2 cells
  EXPECT_EQ(fa.free_cells(), 2);
  auto c = fa.update(b, 1, 98);
  EXPECT_EQ(fa.free_cells(), 0);
  EXPECT_THROW(fa.update(c, 5, 1), out_of_memory);  // every cell is seen by a live array
  EXPECT_EQ(fa.collections(), 1);
  EXPECT_EQ(fa.lookup(c, 1), 98);
  EXPECT_EQ(fa.lookup(held[4], 3), 30);
  EXPECT_EQ(fa.lookup(held[4], 0), 0);
  EXPECT_EQ(fa.check(), "");
  // Releasing makes room: the sweep frees what only released arrays saw.
  fa.release(c);
  fa.release(b);
  const auto d = fa.update(held[4], 9, 9);
  EXPECT_EQ(fa.lookup(d, 9), 9);
  EXPECT_EQ(fa.lookup(d, 3), 30);
  EXPECT_EQ(fa.check(), "");
  // Version slots: all taken is out_of_memory too.
  functional_arrays<int64_t> tiny(cpu, 4, functional_arrays_options{2});
  const auto e = tiny.empty();
  tiny.empty();
  EXPECT_THROW(tiny.remove(e, 1), out_of_memory);
  EXPECT_THROW(tiny.empty(), out_of_memory);
  EXPECT_THROW(functional_arrays<int64_t>(cpu, 0), invalid_argument);
}

TEST(FunctionalArrays, BatchForms) {
  functional_arrays<float> fa(cpu, 64);
  const std::vector<int64_t> idx{3, 1, 3, 8};
  const std::vector<float> vals{1, 2, 3, 4};
  const auto a = fa.update(fa.empty(), span<const int64_t>(idx.data(), 4), span<const float>(vals.data(), 4));
  EXPECT_EQ(fa.live_arrays(), 2);  // the empty one and a: the arrays in between are released
  EXPECT_EQ(fa.size(a), 3);
  EXPECT_EQ(fa.lookup(a, 3), 3.0f);
  const std::vector<int64_t> q{8, 2, 3, 1};
  std::vector<float> got(4);
  std::vector<uint8_t> found(4);
  fa.lookup(a, span<const int64_t>(q.data(), 4), span<float>(got.data(), 4), span<uint8_t>(found.data(), 4));
  EXPECT_EQ(found, (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(got[0], 4.0f);
  EXPECT_EQ(got[2], 3.0f);
  EXPECT_EQ(got[3], 2.0f);
  EXPECT_THROW(fa.update(a, span<const int64_t>(idx.data(), 4), span<const float>(vals.data(), 3)), invalid_argument);
}

// Queries posted and taken later: each ticket once, answers as the array was when posted.
TEST(FunctionalArrays, PostedQueries) {
  functional_arrays<int64_t> fa(cpu, 32);
  const auto a = fa.update(fa.update(fa.empty(), 3, 30), 8, 80);
  const auto t1 = fa.post_lookup(a, 3), t2 = fa.post_size(a), t3 = fa.post_next(a, 3), t4 = fa.post_next(a, 8),
             t5 = fa.post_lookup(a, 4);
  fa.release(a);  // after posting: the answers are the array's as posted
  fa.sync();
  EXPECT_EQ(fa.take(t3).number, 8);
  const auto r1 = fa.take(t1);
  EXPECT_TRUE(r1.found);
  EXPECT_EQ(r1.value, 30);
  EXPECT_EQ(fa.take(t2).number, 2);
  EXPECT_FALSE(fa.take(t4).found);
  EXPECT_FALSE(fa.take(t5).found);
  EXPECT_THROW(fa.take(t1), invalid_argument);  // taken already
  EXPECT_THROW(fa.post_size(a), invalid_argument);  // released
}

// Another machine's handle (of either value type), a released slot's reused: refused, and
// nothing changes on the machine that refused it.
TEST(FunctionalArrays, HandlesAreTiedToTheirMachine) {
  functional_arrays<int64_t> a(cpu, 16), b(cpu, 16);
  functional_arrays<double> c(cpu, 16);
  fa_handles_are_tied_to_their_machine(a, b, c);
  functional_arrays<int64_t> moved(std::move(a));  // the handles follow the machine
  EXPECT_EQ(moved.live_arrays(), 3);
  const auto x = moved.empty();
  EXPECT_EQ(x.machine, moved.id());
  const std::string gone = fa_refusal([&] { a.lookup(x, 0); });  // NOLINT(bugprone-use-after-move)
  EXPECT_NE(gone.find("a moved-from machine"), std::string::npos) << gone;
}

// A backend pass that throws (on the GPU, a CUDA error) gives the new array's slot back.
TEST(FunctionalArrays, AFailedPassKeepsNoSlot) {
  functional_arrays<int64_t> fa(cpu, 16, functional_arrays_options{4});
  fa_failed_pass_keeps_no_slot(fa);
}

// The streams `gsearch esfa gen` makes replay on a machine of their cell count equal to the spec,
// and parse refuses what is not a stream.
TEST(FunctionalArrays, GeneratedStreamsEqualTheSpecification) {
  for (const fa_stream::mix kind : {fa_stream::mix::paper, fa_stream::mix::chains, fa_stream::mix::fans,
                                    fa_stream::mix::sparse}) {
    for (const int64_t cells : {int64_t(16), int64_t(300)}) {
      const std::vector<fa_stream::row> rows = fa_stream::parse(fa_stream::generate(4000, cells, kind, test_seed()));
      functional_arrays<int64_t> fa(cpu, cells);
      functional_arrays_spec<int64_t> spec;
      std::vector<int64_t> f1, v1, f2, v2;
      fa_stream::replay(fa, rows, f1, v1, [](size_t) {});
      fa_stream::replay(spec, rows, f2, v2, [](size_t) {});
      EXPECT_EQ(f1, f2) << fa_stream::mix_names[int(kind)] << ", " << cells << " cells";
      EXPECT_EQ(v1, v2) << fa_stream::mix_names[int(kind)] << ", " << cells << " cells";
      EXPECT_EQ(fa.check(), "");
      functional_arrays<int64_t> piped(cpu, cells);  // the pipelined replay (queries taken at the end)
      std::vector<int64_t> f3, v3;
      fa_stream::replay_pipelined(piped, rows, f3, v3);
      EXPECT_EQ(f3, f2) << fa_stream::mix_names[int(kind)] << ", " << cells << " cells, pipelined";
      EXPECT_EQ(v3, v2) << fa_stream::mix_names[int(kind)] << ", " << cells << " cells, pipelined";
    }
  }
  EXPECT_THROW(fa_stream::parse({0, -1, 0}), invalid_argument);
  EXPECT_THROW(fa_stream::parse({3, 0, 0, 0}), invalid_argument);              // no earlier row
  EXPECT_THROW(fa_stream::parse({0, -1, 0, 0, 6, 0, 0, 0, 4, 0, 0, 0}), invalid_argument);  // released
}

template <class V>
class FunctionalArraysMix : public ::testing::Test {};
TYPED_TEST_SUITE(FunctionalArraysMix, KeyTypes);

// Each mix at 16 to 8,192 cells (the seed's sizes), every answer against the spec; the steps per
// run from GSEARCH_FA_STEPS (default small for CI).
TYPED_TEST(FunctionalArraysMix, EqualsTheSpecification) {
  using V = TypeParam;
  const char* env = std::getenv("GSEARCH_FA_STEPS");
  const int64_t steps = env ? std::atoll(env) : test_subset() ? 600 : 3000;  // subset: the sanitizers' build
  int64_t ops = 0;
  for (const int64_t cells : {int64_t(16), int64_t(64), int64_t(512), int64_t(8192)}) {
    for (const fa_mix& m : fa_mixes()) {
      functional_arrays<V> fa(cpu, cells);
      const std::string d = fa_replay(fa, m, cells <= 64 ? steps : steps / 2, test_seed() + uint64_t(cells), &ops);
      ASSERT_EQ(d, "") << cells << " cells";
    }
  }
  std::printf("[ fa       ] %lld operations equal to the specification\n", (long long)ops);
}

}  // namespace
}  // namespace gsearch::test
