// gsearch::static_index on the CPU backend: built and searched for every key type, size and
// adversarial input against std::lower_bound / std::upper_bound; thread counts; the handle;
// moves; the argument checks (wrong backend, sizes, null data, unsorted keys).

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "static_index_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T>
std::vector<int64_t> run_cpu_index(const std::vector<T>& keys, const std::vector<T>& queries, side s, bool out32) {
  const static_index<T> index(cpu, span<const T>(keys), {/*check_sorted=*/true});
  EXPECT_EQ(index.size(), int64_t(keys.size()));
  EXPECT_FALSE(index.on_device());
  if (out32) {
    std::vector<int32_t> out(queries.size(), -7);
    index.search(cpu, s, span<const T>(queries), span<int32_t>(out));
    return {out.begin(), out.end()};
  }
  std::vector<int64_t> out(queries.size(), -7);
  index.search(cpu, s, span<const T>(queries), span<int64_t>(out));
  return out;
}

template <class T>
class CpuIndex : public ::testing::Test {};
TYPED_TEST_SUITE(CpuIndex, KeyTypes);

TYPED_TEST(CpuIndex, MatchesStdAlgorithms) {
  run_index_matrix<TypeParam>(run_cpu_index<TypeParam>, 300, test_seed());
}

// Many queries over 1, 2 and 3 threads (chunks that split lockstep groups), and the one-query
// handle, against the batch.
TYPED_TEST(CpuIndex, ThreadsAndHandle) {
  using T = TypeParam;
  const auto keys = gen::sorted_keys<T>(70001, 1);
  const auto queries = gen::random_queries_from_keys(keys.data(), int64_t(keys.size()), 100003, 2);
  const static_index<T> index(cpu, span<const T>(keys));
  const auto want = reference_all(keys, queries, side::right);
  for (int threads : {1, 2, 3}) {
    std::vector<int64_t> out(queries.size());
    index.upper_bound(cpu.with_threads(threads), span<const T>(queries), span<int64_t>(out));
    EXPECT_EQ(out, want) << "threads=" << threads;
  }
  const auto ref = index.host_ref();
  for (size_t i = 0; i < queries.size(); i += 101) {
    ASSERT_EQ(ref.upper_bound(queries[i]), want[i]);
    ASSERT_EQ(ref.predecessor(queries[i]), want[i] - 1);
    ASSERT_EQ(ref.lower_bound(queries[i]), reference(keys, queries[i], side::left));
  }
  EXPECT_EQ(index.node_keys(), core::cpu_node_keys<T>);
  EXPECT_EQ(index.levels(), ref.shape.levels);
  EXPECT_EQ(index.memory_bytes(), ref.shape.size() * int64_t(sizeof(T)));
  constexpr int64_t B = core::cpu_node_keys<T>;  // keys, about 1/B more, whole nodes
  EXPECT_LE(index.memory_bytes(), (int64_t(keys.size()) * (B + 1) / B + B * (index.levels() + 1)) * int64_t(sizeof(T)));
  EXPECT_THROW(index.device_ref(), invalid_argument);
}

TEST(CpuIndexApi, EmptyAndMoved) {
  static_index<int32_t> empty;
  const std::vector<int32_t> q{-5, 3, 5};
  std::vector<int64_t> out(3);
  empty.predecessor(cpu, span<const int32_t>(q), span<int64_t>(out));
  EXPECT_EQ(out, (std::vector<int64_t>{-1, -1, -1}));

  const std::vector<int32_t> keys{1, 3, 3, 9};
  static_index<int32_t> a(cpu, span<const int32_t>(keys));
  static_index<int32_t> b(std::move(a));
  b.lower_bound(cpu, span<const int32_t>(q), span<int64_t>(out));
  EXPECT_EQ(out, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_THROW(a.upper_bound(cpu, span<const int32_t>(q), span<int64_t>(out)), invalid_argument);  // moved from
  a = std::move(b);
  a.upper_bound(cpu, span<const int32_t>(q), span<int64_t>(out));
  EXPECT_EQ(out, (std::vector<int64_t>{0, 3, 3}));
}

TEST(CpuIndexApi, ArgumentChecks) {
  const std::vector<double> keys{1, 2, 3};
  const std::vector<double> unsorted{3, 2, 1};
  const std::vector<double> q{1.5, 2.5};
  EXPECT_THROW(static_index<double>(cpu, span<const double>(unsorted), {true}), invalid_argument);
  EXPECT_THROW(static_index<double>(cpu, span<const double>(nullptr, 3)), invalid_argument);
  const static_index<double> index(cpu, span<const double>(keys));
  std::vector<int64_t> short_out(1);
  EXPECT_THROW(index.upper_bound(cpu, span<const double>(q), span<int64_t>(short_out)), invalid_argument);
  std::vector<int64_t> out(2, -7);
  EXPECT_THROW(index.upper_bound(cuda, span<const double>(q), span<int64_t>(out)), invalid_argument);
  EXPECT_EQ(out, (std::vector<int64_t>{-7, -7}));  // nothing written
  EXPECT_THROW(index.upper_bound(cpu, span<const double>(nullptr, 2), span<int64_t>(out)), invalid_argument);
}

}  // namespace
}  // namespace gsearch::test
