// search() and equal_range() with a sorter (numpy's sorter=) on the CPU backend: the cases of
// sorter_cases.hpp against std::lower_bound / std::upper_bound over the keys gathered by hand,
// every algorithm; the errors leave the output as it was.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "cpu/tuning.hpp"  // cpu_sorter_in_place
#include "sorter_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T, class Out>
std::vector<int64_t> run_cpu_out(const cpu_t& exec, const std::vector<T>& keys, const std::vector<int64_t>& sorter,
                                 const std::vector<T>& queries, side s, bool equal, const search_options& options) {
  const span<const T> k(keys), q(queries);
  const span<const int64_t> order(sorter);
  std::vector<Out> out(queries.size(), Out(-7)), upper(queries.size(), Out(-7));
  if (equal)
    equal_range(exec, k, order, q, span<Out>(out), span<Out>(upper), options);
  else
    search(exec, s, k, order, q, span<Out>(out), options);
  std::vector<int64_t> r(out.begin(), out.end());
  if (equal) r.insert(r.end(), upper.begin(), upper.end());
  return r;
}

template <class T>
std::vector<int64_t> run_cpu(const std::vector<T>& keys, const std::vector<int64_t>& sorter,
                             const std::vector<T>& queries, side s, bool out32, bool equal,
                             const search_options& options) {
  return out32 ? run_cpu_out<T, int32_t>(cpu, keys, sorter, queries, s, equal, options)
               : run_cpu_out<T, int64_t>(cpu, keys, sorter, queries, s, equal, options);
}

template <class T>
class CpuSorter : public subset_typed_test<T> {};
TYPED_TEST_SUITE(CpuSorter, KeyTypes);

TYPED_TEST(CpuSorter, MatchesStdOnGatheredKeys) {
  using T = TypeParam;
  run_sorter_matrix<T>(run_cpu<T>, 200,
                       {algorithm::auto_, algorithm::binary, algorithm::index, algorithm::partitioned, algorithm::pary,
                        algorithm::pbs, algorithm::pbs_cf, algorithm::pbs_cl, algorithm::merge},
                       test_seed());
}

TYPED_TEST(CpuSorter, ErrorsAndEdges) { run_sorter_errors<TypeParam>(run_cpu<TypeParam>); }

// One thread and many: the gather's chunks name the least position out of range. (20,000
// queries in 10^5 keys: gathered, cpu_sorter_in_place says, which checks every position.)
TYPED_TEST(CpuSorter, ThreadsAndLeastBadPosition) {
  using T = TypeParam;
  const int64_t k = 100000;
  std::vector<T> keys = gen::sorted_keys<T>(k, 3);
  std::vector<int64_t> sorter(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) sorter[size_t(i)] = k - 1 - i;  // keys reversed, then sorted back
  std::reverse(keys.begin(), keys.end());
  ASSERT_FALSE(cpu_backend::cpu_sorter_in_place(k, 20000));
  const std::vector<T> queries = gen::random_queries_from_keys(keys.data(), k, 20000, 7);
  const std::vector<T> sorted = gathered(keys, sorter);
  for (const int threads : {1, 2, 7}) {
    const cpu_t exec = cpu.with_threads(threads);
    EXPECT_EQ((run_cpu_out<T, int64_t>(exec, keys, sorter, queries, side::left, false, {})),
              reference_all(sorted, queries, side::left));
    std::vector<int64_t> bad = sorter;
    bad[size_t(k - 1)] = k;
    bad[size_t(k / 3)] = -1;
    bad[size_t(k / 2)] = k + 5;
    try {
      run_cpu_out<T, int64_t>(exec, keys, bad, queries, side::left, false, {});
      ADD_FAILURE() << "no error";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("sorter[" + std::to_string(k / 3) + "]"), std::string::npos) << e.what();
    }
  }
}

// Few queries in many keys: searched through the sorter in place (cpu_sorter_in_place), as numpy
// does: the answers of the gathered keys; an index out of range that the searches read is an
// error naming it, with nothing written; one they do not read is not looked at (numpy's rule too).
TYPED_TEST(CpuSorter, FewQueriesSearchThroughTheSorter) {
  using T = TypeParam;
  const int64_t k = int64_t{1} << 16;
  std::vector<T> keys = gen::sorted_keys<T>(k, 11);
  std::vector<int64_t> sorter(static_cast<size_t>(k));
  std::iota(sorter.begin(), sorter.end(), 0);
  std::shuffle(sorter.begin(), sorter.end(), std::mt19937_64(5));
  std::vector<T> shuffled(static_cast<size_t>(k));  // shuffled[sorter[i]] = keys[i]: sorter sorts it
  for (int64_t i = 0; i < k; ++i) shuffled[size_t(sorter[size_t(i)])] = keys[size_t(i)];
  std::vector<T> queries = gen::random_queries_from_keys(keys.data(), k, 64, 2);
  if constexpr (std::is_floating_point_v<T>) queries[3] = std::numeric_limits<T>::quiet_NaN();
  ASSERT_TRUE(cpu_backend::cpu_sorter_in_place(k, int64_t(queries.size())));
  for (const side s : all_sides)
    for (const int threads : {1, 2})
      EXPECT_EQ((run_cpu_out<T, int64_t>(cpu.with_threads(threads), shuffled, sorter, queries, s, false, {})),
                reference_all(keys, queries, s))
          << "side " << to_string(s) << ", " << threads << " threads";
  // Position k - 1 is read only by a search of a query above every key but the last two.
  std::vector<int64_t> unread = sorter;
  unread[size_t(k - 1)] = -1;
  std::vector<T> low(queries.begin(), queries.end());
  for (T& q : low) q = q == q ? std::min(q, keys[size_t(k / 2)]) : keys[0];  // (a NaN's search reads k - 1)
  EXPECT_EQ((run_cpu_out<T, int64_t>(cpu, shuffled, unread, low, side::left, false, {})),
            reference_all(keys, low, side::left));
  // Every position out of range: the first read fails, and out keeps its values.
  const std::vector<int64_t> all_bad(static_cast<size_t>(k), k);
  std::vector<int64_t> out(queries.size(), -7);
  EXPECT_THROW(search(cpu, side::right, span<const T>(shuffled), span<const int64_t>(all_bad), span<const T>(queries),
                      span<int64_t>(out)),
               invalid_argument);
  EXPECT_EQ(out, std::vector<int64_t>(queries.size(), -7));
}

// Nothing is written on an error: out keeps its values.
TEST(CpuSorter, ErrorsWriteNothing) {
  const std::vector<double> keys{3.0, 1.0, 2.0};
  const std::vector<double> queries{0.0, 2.5};
  std::vector<int64_t> out{-7, -7}, upper{-7, -7};
  const auto search_with = [&](const std::vector<int64_t>& sorter, const search_options& o) {
    search(cpu, side::left, span<const double>(keys), span<const int64_t>(sorter), span<const double>(queries),
           span<int64_t>(out), o);
  };
  EXPECT_THROW(search_with({1, 2, 3}, {}), invalid_argument);
  EXPECT_THROW(search_with({1, 2}, {}), invalid_argument);
  EXPECT_THROW(search_with({0, 1, 2}, {algorithm::auto_, true}), invalid_argument);
  // (15 bytes: less than the 16 of the in-place search's results and the 24 of the gathered keys)
  EXPECT_THROW(search_with({1, 2, 0}, {algorithm::auto_, false, queries_order::any, 15}), invalid_argument);
  EXPECT_THROW(equal_range(cpu, span<const double>(keys), span<const int64_t>(std::vector<int64_t>{1, -2, 0}),
                           span<const double>(queries), span<int64_t>(out), span<int64_t>(upper)),
               invalid_argument);
  EXPECT_EQ(out, (std::vector<int64_t>{-7, -7}));
  EXPECT_EQ(upper, (std::vector<int64_t>{-7, -7}));
  // Null data with a size, and outputs of the wrong size, as without a sorter.
  EXPECT_THROW(search(cpu, side::left, span<const double>(keys), span<const int64_t>(nullptr, 3),
                      span<const double>(queries), span<int64_t>(out)),
               invalid_argument);
  EXPECT_THROW(search(cpu, side::left, span<const double>(keys), span<const int64_t>(std::vector<int64_t>{1, 2, 0}),
                      span<const double>(queries), span<int64_t>(out.data(), 1)),
               invalid_argument);
  search_with({1, 2, 0}, {algorithm::auto_, true, queries_order::any, 24});
  EXPECT_EQ(out, (std::vector<int64_t>{0, 2}));
}

}  // namespace
}  // namespace gsearch::test
