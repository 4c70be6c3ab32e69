// Selection on the CPU backend (selection.hpp) against selection_cases.hpp's references (std::sort
// of a copy in the key order, plain loops, numpy's quantile formulas): select, partition,
// argpartition, topk, kthvalue, quantile (every method, nanquantile) and median for every key
// type, over the input shapes (random, few distinct, all equal, sorted, reversed, NaN / inf /
// -0.0, a periodic pattern aligned with the sample's stride), sizes from 0 to 2^20 + 3 (the
// sampled select recursing), one and many ranks, repeated and negative kth; with 1 thread, the
// default pool and more threads than cores; and every argument error, with nothing written.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "selection_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using namespace gsearch::test::selection;

constexpr cpu_t kExecs[] = {cpu.with_threads(1), cpu, cpu.with_threads(5)};

template <class T>
class Selection : public subset_typed_test<T> {};
TYPED_TEST_SUITE(Selection, KeyTypes);

// The inputs of a test: every shape at every size, sample_aligned with each period from 4,096
// elements; above 2^16 elements (where the reference's sorts dominate) random, few distinct,
// specials and two periods (GSEARCH_TEST_SUBSET, the sanitizer builds: random, few distinct and
// one period).
template <class T>
struct input {
  std::vector<T> data;
  std::string what;
};
template <class T>
std::vector<input<T>> inputs(int64_t max_n = int64_t{1} << 30) {
  std::vector<input<T>> all;
  uint64_t seed = 1;
  for (int64_t n : sizes()) {
    if (n > max_n) continue;
    const bool large = n > (int64_t{1} << 16);
    for (shape s : kShapes) {
      if (large && (s == shape::all_equal || s == shape::sorted || s == shape::reversed)) continue;
      if (large && test_subset() && s == shape::specials) continue;
      if (s == shape::sample_aligned && n >= 4096) {
        for (int64_t period : kAlignedPeriods) {
          if (large && period != 16 && period != 1024) continue;
          if (large && test_subset() && period != 1024) continue;
          all.push_back({make_input<T>(s, n, ++seed, period),
                         std::string(name(s)) + "/" + std::to_string(period) + " n=" + std::to_string(n)});
        }
      } else {
        all.push_back({make_input<T>(s, n, ++seed), std::string(name(s)) + " n=" + std::to_string(n)});
      }
    }
  }
  return all;
}

// The rank lists a size gets: all of them up to 2^16, three at the large sizes (the reference
// sorts once per check).
std::vector<std::vector<int64_t>> ranks_for(int64_t n) {
  std::vector<std::vector<int64_t>> lists = rank_lists(n);
  if (n > (int64_t{1} << 16) && lists.size() > 3) {
    return {lists[2], lists[9], lists[10]};  // n / 2; repeats and negative; 101 spread
  }
  return lists;
}

TYPED_TEST(Selection, SelectMatchesTheSortedCopy) {
  using T = TypeParam;
  for (const input<T>& in : inputs<T>()) {
    const int64_t n = int64_t(in.data.size());
    const std::vector<T> sorted = sorted_copy(in.data);
    for (const std::vector<int64_t>& ranks : ranks_for(n)) {
      const cpu_t exec = kExecs[ranks.size() % 3];
      std::vector<T> values(ranks.size(), poison<T>());
      select(exec, span<const T>(in.data), span<const int64_t>(ranks), span<T>(values));
      ASSERT_EQ(check_select_sorted(sorted, ranks, values), "") << in.what << " ranks=" << ranks.size();
    }
  }
}

// Eight ranks or more of a large input take the many-rank radix passes (cpu_many_select.cpp):
// 8, 1,000 and 2,048 spread ranks and a cluster of neighbours, every shape, one and two threads.
TYPED_TEST(Selection, ManyRanksByRadixPassesMatchTheSortedCopy) {
  using T = TypeParam;
  const int64_t n = (int64_t{1} << 18) + 3;
  uint64_t seed = 91;
  for (const shape sh : kShapes) {
    const std::vector<T> data = make_input<T>(sh, n, ++seed);
    const std::vector<T> sorted = sorted_copy(data);
    for (const std::vector<int64_t>& ranks :
         {spread_ranks(n, 8), spread_ranks(n, 1000), spread_ranks(n, 2048), cluster_ranks(n)}) {
      const cpu_t exec = kExecs[ranks.size() % 3];
      std::vector<T> values(ranks.size(), poison<T>());
      select(exec, span<const T>(data), span<const int64_t>(ranks), span<T>(values));
      ASSERT_EQ(check_select_sorted(sorted, ranks, values), "") << name(sh) << " ranks=" << ranks.size();
    }
  }
}

TYPED_TEST(Selection, PartitionAndArgpartitionKeepNumpysContract) {
  using T = TypeParam;
  for (const input<T>& in : inputs<T>()) {
    const int64_t n = int64_t(in.data.size());
    const std::vector<T> sorted = sorted_copy(in.data);
    std::vector<std::vector<int64_t>> kths = ranks_for(n);
    kths.push_back({});  // no kth: numpy's copy
    for (const std::vector<int64_t>& kth : kths) {
      const cpu_t exec = kExecs[kth.size() % 3];
      std::vector<T> out(in.data.size(), poison<T>());
      partition(exec, span<const T>(in.data), span<const int64_t>(kth), span<T>(out));
      ASSERT_EQ(check_partition_sorted(in.data, sorted, kth, out), "") << in.what << " kth=" << kth.size();
      if (kth.empty() && n > 0) {  // numpy's copy, in the data's order
        ASSERT_EQ(std::memcmp(out.data(), in.data.data(), in.data.size() * sizeof(T)), 0);
      }
      std::vector<int64_t> idx(in.data.size(), -7);
      argpartition(exec, span<const T>(in.data), span<const int64_t>(kth), span<int64_t>(idx));
      ASSERT_EQ(check_argpartition_sorted(in.data, sorted, kth, idx), "") << in.what << " kth=" << kth.size();
    }
  }
}

TYPED_TEST(Selection, TopkMatchesTorchsContract) {
  using T = TypeParam;
  for (const input<T>& in : inputs<T>((int64_t{1} << 20) + 3)) {
    const int64_t n = int64_t(in.data.size());
    for (int64_t rows : {int64_t{1}, int64_t{3}, int64_t{64}}) {
      if (n == 0 || n % rows != 0) continue;
      const int64_t cols = n / rows;
      for (int64_t k : {int64_t{1}, int64_t{2}, cols / 2, cols - 1, cols}) {
        if (k < 1 || k > cols || (n > (1 << 16) && k != 1 && k != cols / 2)) continue;
        for (bool largest : {true, false}) {
          for (bool sorted : {true, false}) {
            // The sanitizers' subset, large sizes: one row count but 3, two of the four flags.
            if (test_subset() && n > (1 << 16) && (rows == 3 || largest == sorted)) continue;
            const cpu_t exec = kExecs[(k + rows) % 3];
            std::vector<T> values(size_t(rows * k), poison<T>());
            std::vector<int64_t> indices(size_t(rows * k), -7);
            topk(exec, span<const T>(in.data), rows, k, topk_options{largest, sorted}, span<T>(values),
                 span<int64_t>(indices));
            ASSERT_EQ(check_topk(in.data, rows, k, largest, sorted, values, indices), "")
                << in.what << " rows=" << rows << " k=" << k << " largest=" << largest << " sorted=" << sorted;
          }
        }
      }
    }
  }
}

TYPED_TEST(Selection, TopkWithKZeroWritesNothing) {
  using T = TypeParam;
  const std::vector<T> data = make_input<T>(shape::random, 12, 3);
  std::vector<T> values(1, poison<T>());
  std::vector<int64_t> indices(1, -7);
  topk(cpu, span<const T>(data), 3, 0, {}, span<T>(values.data(), 0), span<int64_t>(indices.data(), 0));
  EXPECT_EQ(values[0], poison<T>());
  EXPECT_EQ(indices[0], -7);
  topk(cpu, span<const T>(), 1, 0, {}, span<T>(), span<int64_t>());  // empty data, k = 0
}

TYPED_TEST(Selection, KthvalueMatchesTheSortedRows) {
  using T = TypeParam;
  for (const input<T>& in : inputs<T>(int64_t{1} << 16)) {
    const int64_t n = int64_t(in.data.size());
    for (int64_t rows : {int64_t{1}, int64_t{2}, int64_t{16}}) {
      if (n == 0 || n % rows != 0) continue;
      const int64_t cols = n / rows;
      for (int64_t rank : {int64_t{0}, cols / 2, cols - 1, int64_t{-1}}) {
        std::vector<T> values(size_t(rows), poison<T>());
        std::vector<int64_t> indices(size_t(rows), -7);
        kthvalue(kExecs[rows % 3], span<const T>(in.data), rows, rank, span<T>(values), span<int64_t>(indices));
        ASSERT_EQ(check_kthvalue(in.data, rows, rank, values, indices), "")
            << in.what << " rows=" << rows << " rank=" << rank;
      }
    }
  }
}

TYPED_TEST(Selection, QuantileMatchesNumpyForEveryMethod) {
  using T = TypeParam;
  for (const input<T>& in : inputs<T>()) {
    const int64_t n = int64_t(in.data.size());
    if (n == 0) continue;
    const std::vector<double> q = quantile_qs(n, uint64_t(n));
    for (quantile_method m : kMethods) {
      // Every method on the small inputs; the large ones (where the reference's sorts cost) with
      // two, and under GSEARCH_TEST_SUBSET (the sanitizer builds) from 2^12 elements.
      const int64_t all_methods_to = test_subset() ? int64_t(1) << 12 : int64_t(1) << 16;
      if (n > all_methods_to && m != quantile_method::linear && m != quantile_method::nearest) continue;
      for (bool skip_nan : {false, true}) {
        std::vector<double> out(q.size(), -1.5);
        quantile(kExecs[int(m) % 3], span<const T>(in.data), span<const double>(q), m, skip_nan, span<double>(out));
        const std::vector<double> want = reference_quantiles(in.data, q, m, skip_nan);
        for (size_t i = 0; i < q.size(); ++i)
          ASSERT_TRUE(same_result(out[i], want[i])) << in.what << " " << to_string(m) << " skip_nan=" << skip_nan
                                                    << " q=" << q[i] << ": " << show(out[i]) << ", want " << show(want[i]);
      }
    }
  }
}

TYPED_TEST(Selection, MedianIsNumpysMean) {
  using T = TypeParam;
  for (const input<T>& in : inputs<T>()) {
    if (in.data.empty()) continue;
    for (bool skip_nan : {false, true}) {
      std::vector<double> out(1, -1.5);
      median(cpu, span<const T>(in.data), skip_nan, span<double>(out));
      const double want = reference_median(in.data, skip_nan);
      ASSERT_TRUE(same_result(out[0], want)) << in.what << " skip_nan=" << skip_nan << ": " << out[0] << ", want " << want;
    }
  }
}

TEST(Selection, NanRulesOfQuantileAndMedian) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> some = {3, nan, 1, 2}, none = {nan, nan};
  const std::vector<double> q = {0.0, 0.5, 1.0};
  std::vector<double> out(3);
  quantile(cpu, span<const double>(some), span<const double>(q), quantile_method::linear, false, span<double>(out));
  for (double x : out) EXPECT_TRUE(std::isnan(x));
  quantile(cpu, span<const double>(some), span<const double>(q), quantile_method::linear, true, span<double>(out));
  EXPECT_EQ(out, (std::vector<double>{1, 2, 3}));
  quantile(cpu, span<const double>(none), span<const double>(q), quantile_method::lower, true, span<double>(out));
  for (double x : out) EXPECT_TRUE(std::isnan(x));
  std::vector<double> med(1);
  median(cpu, span<const double>(some), true, span<double>(med));
  EXPECT_EQ(med[0], 2);
  median(cpu, span<const double>(some), false, span<double>(med));
  EXPECT_TRUE(std::isnan(med[0]));
}

// --- errors: invalid_argument, nothing written -----------------------------------------------

template <class F>
void expect_invalid(F&& call, const char* what) {
  EXPECT_THROW(call(), invalid_argument) << what;
}

TEST(SelectionErrors, SelectRanksOutOfRangeOrSizesWrong) {
  const std::vector<float> data = {3, 1, 2};
  std::vector<float> values(2, poison<float>());
  const std::vector<int64_t> bad_hi = {0, 3}, bad_lo = {-4, 0}, ok = {0, 1};
  const span<const float> d(data);
  expect_invalid([&] { select(cpu, d, span<const int64_t>(bad_hi), span<float>(values)); }, "rank n");
  expect_invalid([&] { select(cpu, d, span<const int64_t>(bad_lo), span<float>(values)); }, "rank -n - 1");
  expect_invalid([&] { select(cpu, d, span<const int64_t>(ok), span<float>(values.data(), 1)); }, "values size");
  expect_invalid([&] { select(cpu, span<const float>(), span<const int64_t>(ok), span<float>(values)); }, "empty");
  expect_invalid([&] { select(cpu, span<const float>(nullptr, 3), span<const int64_t>(ok), span<float>(values)); },
                 "null data");
  expect_invalid([&] { select(cpu, d, span<const int64_t>(ok), span<float>(nullptr, 2)); }, "null values");
  for (float v : values) EXPECT_EQ(v, poison<float>());
  select(cpu, span<const float>(), span<const int64_t>(), span<float>());  // nothing asked: fine
}

// numpy.partition(data.reshape(rows, cols), kth, axis=-1) in one call: many short rows (shared out
// among the threads), a few long ones (one after another, each on all of them), and every
// thread count.
TYPED_TEST(Selection, PartitionOfRowsKeepsNumpysContractPerRow) {
  using T = TypeParam;
  // Rows of 2 .. short_row_cols in batches of 16 go through the sorting network (a partial last
  // batch, padding to the next power of two, the largest network), fewer rows or longer ones
  // through each row's 1-D partition.
  const struct { int64_t rows, cols; } shapes[] = {{1000, 7}, {257, 64}, {3, 5000}, {2, 1},  {5, 1},  {1, 300},
                                                   {16, 2},   {15, 16},  {40, 33},  {17, 256}, {16, 257}};
  uint64_t seed = 11;
  for (const auto& [rows, cols] : shapes) {
    for (const shape sh : {shape::random, shape::few_distinct, shape::specials}) {
      const std::vector<T> data = make_input<T>(sh, rows * cols, ++seed);
      for (const std::vector<int64_t>& kth : std::vector<std::vector<int64_t>>{
               {0}, {cols - 1}, {cols / 2}, {-1, cols / 3, 0}, {}}) {
        const cpu_t exec = kExecs[size_t(seed % 3)];
        std::vector<T> out(data.size(), poison<T>());
        std::vector<int64_t> idx(data.size(), -7);
        partition(exec, span<const T>(data), rows, span<const int64_t>(kth), span<T>(out));
        argpartition(exec, span<const T>(data), rows, span<const int64_t>(kth), span<int64_t>(idx));
        ASSERT_EQ(check_partition_rows(data, rows, kth, out, idx), "")
            << name(sh) << " " << rows << " x " << cols << ", " << kth.size() << " kth";
      }
    }
  }
}

// numpy's axis=-1 of quantile / median: short rows shared out among the threads, long rows one
// after another, one row (the 1-D call); each row against its own reference.
TYPED_TEST(Selection, QuantileAndMedianOfRowsAreEachRows) {
  using T = TypeParam;
  const struct { int64_t rows, cols; } shapes[] = {{1000, 7}, {257, 64}, {3, 5000}, {2, 1}, {5, 2}, {1, 300}};
  uint64_t seed = 23;
  for (const auto& [rows, cols] : shapes) {
    for (const shape sh : {shape::random, shape::few_distinct, shape::specials}) {
      const std::vector<T> data = make_input<T>(sh, rows * cols, ++seed);
      const std::vector<double> q = quantile_qs(cols, seed);
      for (quantile_method m : {quantile_method::linear, quantile_method::nearest, quantile_method::hazen}) {
        for (bool skip_nan : {false, true}) {
          const cpu_t exec = kExecs[size_t(seed % 3)];
          const quantile_dtypes dtypes = scalar_q_dtypes<T>();
          std::vector<double> out(q.size() * size_t(rows), -1.5), med(size_t(rows), -1.5);
          quantile(exec, span<const T>(data), rows, span<const double>(q), m, dtypes, skip_nan, span<double>(out));
          median(exec, span<const T>(data), rows, skip_nan, span<double>(med));
          ASSERT_EQ(check_quantile_rows(data, rows, q, m, skip_nan, out, med), "")
              << name(sh) << " " << rows << " x " << cols << " " << to_string(m) << " skip_nan=" << skip_nan;
        }
      }
    }
  }
  std::vector<double> out(2), q = {0.5};  // rows must divide the data; out is q.size() * rows
  const std::vector<T> d4 = make_input<T>(shape::random, 4, 1);
  EXPECT_THROW(quantile(cpu, span<const T>(d4), 3, span<const double>(q), quantile_method::linear,
                        scalar_q_dtypes<T>(), false, span<double>(out)), invalid_argument);
  EXPECT_THROW(quantile(cpu, span<const T>(d4), 2, span<const double>(q), quantile_method::linear,
                        scalar_q_dtypes<T>(), false, span<double>(out.data(), 1)), invalid_argument);
  EXPECT_THROW(median(cpu, span<const T>(d4), 0, false, span<double>(out)), invalid_argument);
}

TEST(SelectionErrors, PartitionKthOutOfRangeOrOutputWrong) {
  const std::vector<int32_t> data = {3, 1, 2, 5};
  std::vector<int32_t> out(4, poison<int32_t>());
  std::vector<int64_t> idx(4, -7);
  const std::vector<int64_t> bad = {1, 4}, ok = {1};
  const span<const int32_t> d(data);
  expect_invalid([&] { partition(cpu, d, span<const int64_t>(bad), span<int32_t>(out)); }, "kth n");
  expect_invalid([&] { argpartition(cpu, d, span<const int64_t>(bad), span<int64_t>(idx)); }, "arg kth n");
  expect_invalid([&] { partition(cpu, d, span<const int64_t>(ok), span<int32_t>(out.data(), 3)); }, "out size");
  expect_invalid([&] { argpartition(cpu, d, span<const int64_t>(ok), span<int64_t>(idx.data(), 5)); }, "idx size");
  expect_invalid([&] { partition(cpu, span<const int32_t>(), span<const int64_t>(ok), span<int32_t>()); }, "empty");
  expect_invalid([&] { partition(cpu, d, span<const int64_t>(nullptr, 1), span<int32_t>(out)); }, "null kth");
  // Rows: rows must divide the data, kth is within a row.
  expect_invalid([&] { partition(cpu, d, 3, span<const int64_t>(ok), span<int32_t>(out)); }, "rows 3");
  expect_invalid([&] { partition(cpu, d, 0, span<const int64_t>(ok), span<int32_t>(out)); }, "rows 0");
  const std::vector<int64_t> past_row = {2};
  expect_invalid([&] { argpartition(cpu, d, 2, span<const int64_t>(past_row), span<int64_t>(idx)); }, "kth 2 of 2");
  for (int32_t v : out) EXPECT_EQ(v, poison<int32_t>());
  for (int64_t v : idx) EXPECT_EQ(v, -7);
}

TEST(SelectionErrors, TopkAndKthvalueShapes) {
  const std::vector<double> data(12, 1.0);
  const span<const double> d(data);
  std::vector<double> values(12, poison<double>());
  std::vector<int64_t> indices(12, -7);
  const auto v = [&](int64_t size) { return span<double>(values.data(), size); };
  const auto i = [&](int64_t size) { return span<int64_t>(indices.data(), size); };
  expect_invalid([&] { topk(cpu, d, 5, 1, {}, v(5), i(5)); }, "rows not dividing");
  expect_invalid([&] { topk(cpu, d, 0, 1, {}, v(0), i(0)); }, "rows 0");
  expect_invalid([&] { topk(cpu, d, 3, 5, {}, v(12), i(12)); }, "k > cols");
  expect_invalid([&] { topk(cpu, d, 3, -1, {}, v(0), i(0)); }, "k < 0");
  expect_invalid([&] { topk(cpu, d, 3, 2, {}, v(5), i(6)); }, "values size");
  expect_invalid([&] { topk(cpu, d, 3, 2, {}, v(6), i(7)); }, "indices size");
  expect_invalid([&] { kthvalue(cpu, d, 3, 4, v(3), i(3)); }, "rank = cols");
  expect_invalid([&] { kthvalue(cpu, d, 3, -5, v(3), i(3)); }, "rank < -cols");
  expect_invalid([&] { kthvalue(cpu, d, 3, 0, v(2), i(3)); }, "kth values size");
  expect_invalid([&] { kthvalue(cpu, span<const double>(), 1, 0, v(1), i(1)); }, "empty rows");
  for (double x : values) EXPECT_EQ(x, poison<double>());
  for (int64_t x : indices) EXPECT_EQ(x, -7);
}

TEST(SelectionErrors, QuantileAndMedianArguments) {
  const std::vector<uint64_t> data = {4, 1, 9};
  const span<const uint64_t> d(data);
  std::vector<double> out(2, -1.5);
  const std::vector<double> ok = {0.5, 1.0}, above = {0.5, 1.5}, below = {-0.1, 0.5},
                            nan = {0.5, std::numeric_limits<double>::quiet_NaN()};
  const auto q = [](const std::vector<double>& v) { return span<const double>(v); };
  expect_invalid([&] { quantile(cpu, d, q(above), quantile_method::linear, false, span<double>(out)); }, "q > 1");
  expect_invalid([&] { quantile(cpu, d, q(below), quantile_method::linear, false, span<double>(out)); }, "q < 0");
  expect_invalid([&] { quantile(cpu, d, q(nan), quantile_method::linear, false, span<double>(out)); }, "q NaN");
  expect_invalid([&] { quantile(cpu, d, q(ok), quantile_method(13), false, span<double>(out)); }, "method 13");
  expect_invalid([&] { quantile(cpu, d, q(ok), quantile_method(-1), false, span<double>(out)); }, "method -1");
  expect_invalid([&] { quantile(cpu, d, q(ok), quantile_method::linear, false, span<double>(out.data(), 1)); },
                 "out size");
  expect_invalid([&] { quantile(cpu, span<const uint64_t>(), q(ok), quantile_method::linear, true, span<double>(out)); },
                 "empty data");
  expect_invalid([&] { median(cpu, span<const uint64_t>(), false, span<double>(out.data(), 1)); }, "empty median");
  expect_invalid([&] { median(cpu, d, false, span<double>(out)); }, "median out size 2");
  for (double x : out) EXPECT_EQ(x, -1.5);
}

TEST(SelectionErrors, CudaWithoutCudaIsAnError) {
  if (built_with_cuda()) GTEST_SKIP() << "built with CUDA";
  const std::vector<float> data = {1, 2};
  std::vector<float> values(1);
  const std::vector<int64_t> ranks = {0};
  EXPECT_THROW(select(cuda, span<const float>(data), span<const int64_t>(ranks), span<float>(values)),
               invalid_argument);
}

}  // namespace
}  // namespace gsearch::test
