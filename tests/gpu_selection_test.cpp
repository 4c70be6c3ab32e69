// Selection on the GPU (label `gpu`): select, partition / argpartition, quantile / nanquantile
// (every method), median / nanmedian, and topk / kthvalue, for every key type, through the CUDA
// backend; each result checked against the references of selection_cases.hpp (std::sort of a
// copy, numpy's formulas) and equal to the CPU backend's. Sizes around the kernels' shapes, read
// from src/selection/tuning.hpp: the one-block sort's sample (+-1: a block sort or a sampled level),
// the bucket pass's tile, sizes deep enough for two and three levels of candidates; data
// pointers off the 16-byte alignment of the vector loads; every input shape (the adversarial
// sample-aligned spikes, against the fixed sample positions, included); ranks dense enough for
// the sorting fallback, and kth values past partition_max_splitters. Skips visibly without a GPU;
// GSEARCH_TEST_SUBSET=1 (compute-sanitizer) keeps every path with fewer combinations.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "selection/tuning.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/selection.hpp"
#include "gsearch/gsearch.hpp"
#include "selection_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using namespace selection;
using cuda_backend::partition_max_splitters;
using cuda_backend::select_pass_config;
using cuda_backend::select_sample_size;

template <class T>
class GpuSelection : public ::testing::Test {
 protected:
  void SetUp() override { GSEARCH_GPU_OR_SKIP(); }
};
TYPED_TEST_SUITE(GpuSelection, KeyTypes);

// --- device copies at an element offset (off the 16-byte alignment for offset 1) ------------------

template <class T>
struct OnDevice {
  device_vector<T> buf;
  int64_t offset = 0, n = 0;
  OnDevice(const std::vector<T>& host, int64_t off) : buf(int64_t(host.size()) + off + 1), offset(off), n(int64_t(host.size())) {
    if (n) copy_to_device(buf.data() + offset, host.data(), size_t(n) * sizeof(T));
  }
  span<const T> view() const { return {buf.data() + offset, n}; }
};

template <class T>
std::vector<T> host_of(const device_vector<T>& d) {
  std::vector<T> h(static_cast<size_t>(d.size()));
  if (d.size()) copy_to_host(h.data(), d.data(), size_t(d.size()) * sizeof(T));
  return h;
}

// Sizes where the select changes its path (from the tuning it is compiled with).
template <class T>
std::vector<int64_t> gpu_sizes() {
  const int64_t s = select_sample_size(int(sizeof(T)));
  const int64_t tile = int64_t(select_pass_config.threads) * select_pass_config.items * (16 / int64_t(sizeof(T)));
  // The sanitizers' subset (GSEARCH_TEST_SUBSET): one size a path: tiny, around the sample (a
  // block sort or a sampled level), a tile + 1 and several (the bucket pass's partial tiles), and
  // 100003 (the radix select from radix_select_min_n, and its copy's passes).
  if (test_subset()) return {1, 33, s - 1, s + 1, tile + 1, 3 * tile + 5, 100003};
  std::vector<int64_t> v = {1, 2, 3, 5, 31, 33, 1000, s - 1, s, s + 1, 2 * s + 7, tile - 1, tile + 1,
                            3 * tile + 5, 100003};
  {
    v.push_back((int64_t{1} << 20) + 3);   // two levels of candidates
    v.push_back((int64_t{1} << 23) + 17);  // three
  }
  return v;
}

// rank_lists, or under the sanitizers' subset the lists that reach distinct paths: one rank (the
// radix select), several with repeats and negatives (the planned levels), 101 (the host levels).
std::vector<std::vector<int64_t>> gpu_rank_lists(int64_t n) {
  if (!test_subset() || n <= 0) return rank_lists(n);
  std::vector<std::vector<int64_t>> all = rank_lists(n), kept;
  for (const auto& l : all)
    if ((l.size() == 1 && (l[0] == n / 2 || l[0] == 0)) || l.size() == 5 || l.size() == 101) kept.push_back(l);
  return kept;
}

std::vector<shape> gpu_shapes() {
  if (test_subset()) return {shape::random, shape::all_equal, shape::specials, shape::sample_aligned};
  return {std::begin(kShapes), std::end(kShapes)};
}

// partition and argpartition of data (at an element offset) at kth, each checked.
template <class T>
void check_partitions(const std::vector<T>& data, int64_t offset, const std::vector<int64_t>& kth) {
  const int64_t n = int64_t(data.size());
  const OnDevice<T> d(data, offset);
  device_vector<T> out(n);
  device_vector<int64_t> idx(n);
  partition(cuda, d.view(), span<const int64_t>(kth), out.view());
  ASSERT_EQ(check_partition(data, kth, host_of(out)), "");
  argpartition(cuda, d.view(), span<const int64_t>(kth), idx.view());
  ASSERT_EQ(check_argpartition(data, kth, host_of(idx)), "");
}

// --- select -----------------------------------------------------------------------------------------

TYPED_TEST(GpuSelection, SelectEqualsSortAndCpu) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  for (const int64_t n : gpu_sizes<T>())
    for (const shape sh : gpu_shapes()) {
      const std::vector<T> data = make_input<T>(sh, n, seed + uint64_t(n));
      const OnDevice<T> d(data, n % 2);  // odd sizes start off the 16-byte alignment
      const std::vector<T> sorted = sorted_copy(data);
      for (const auto& ranks : gpu_rank_lists(n)) {
        if (n > 1000000 && ranks.size() > 1 && ranks.size() < 101) continue;  // the big ones: one and 101 ranks
        SCOPED_TRACE(std::string(name(sh)) + ", n = " + std::to_string(n) + ", " + std::to_string(ranks.size()) +
                     " ranks, first " + std::to_string(ranks[0]));
        device_vector<T> values(int64_t(ranks.size()));
        select(cuda, d.view(), span<const int64_t>(ranks), values.view());
        const std::vector<T> got = host_of(values);
        std::vector<T> want;
        for (const int64_t r : ranks) want.push_back(sorted[size_t(normalize(r, n))]);
        for (size_t i = 0; i < ranks.size(); ++i)
          ASSERT_TRUE(key_equal(got[i], want[i])) << "rank " << ranks[i] << ": " << show(got[i]) << ", want " << show(want[i]);
        if (n <= 100003) {
          std::vector<T> cpu_values(ranks.size());
          select(cpu, span<const T>(data), span<const int64_t>(ranks), span<T>(cpu_values));
          for (size_t i = 0; i < ranks.size(); ++i) ASSERT_TRUE(key_equal(got[i], cpu_values[i])) << "GPU != CPU";
        }
      }
    }
}

// Spikes at the phase of every sample stride: the sample sees only the spikes, the brackets miss,
// and the fallback pass must find the ranks.
TYPED_TEST(GpuSelection, SelectSurvivesSampleAlignedInputs) {
  using T = TypeParam;
  const int64_t n = 3 * select_sample_size(int(sizeof(T))) * 16;
  for (const int64_t period : kAlignedPeriods) {
    const std::vector<T> data = make_input<T>(shape::sample_aligned, n, 7, period);
    const OnDevice<T> d(data, 0);
    for (const auto& ranks : gpu_rank_lists(n)) {
      device_vector<T> values(int64_t(ranks.size()));
      select(cuda, d.view(), span<const int64_t>(ranks), values.view());
      ASSERT_EQ(check_select(data, ranks, host_of(values)), "") << "period " << period;
    }
  }
}

// The radix select (up to radix_select_max_ranks ranks of radix_select_min_n elements or more):
// a window sample that lies (the largest value at every one of its positions, small values
// elsewhere: every inner rank misses below its bracket and the next pass reads the data again),
// and an input whose radix bits share their top 16 (one pass over the data, the rest in the copy),
// each with one, two neighbouring, a median's three (its NaN check the largest) and four spread
// ranks (radix_select_routed_ranks: up to two take the radix select), the data off the 16-byte
// alignment.
TYPED_TEST(GpuSelection, RadixSelectSurvivesAMisleadingSampleAndEqualTopBits) {
  using T = TypeParam;
  using U = core::radix_bits_t<T>;
  const int64_t n = cuda_backend::radix_select_min_n * 3 + 5;
  const int64_t s = 2 * int64_t(cuda_backend::radix_window_threads);
  std::mt19937_64 rng(21);
  std::vector<T> lying(static_cast<size_t>(n)), top(static_cast<size_t>(n));
  for (auto& x : lying) x = T(rng() % 50);
  for (int64_t i = 0; i < s; ++i) lying[size_t(core::sample_position(i, s, n))] = std::numeric_limits<T>::max();
  const U prefix = U(U(0xA5C3) << (8 * sizeof(U) - 16));
  for (auto& x : top) x = core::from_radix_bits<T>(U(prefix | U(rng() & 0xffff)));
  for (const std::vector<T>* data : {&lying, &top}) {
    const OnDevice<T> d(*data, 1);
    for (const std::vector<int64_t>& ranks : {std::vector<int64_t>{n / 2},
                                              {n / 2 - 1, n / 2},
                                              {n / 2 - 1, n / 2, n - 1},
                                              {0, n / 3, n - s - 1, n - 1},
                                              {n - 1024}}) {
      device_vector<T> values(int64_t(ranks.size()));
      select(cuda, d.view(), span<const int64_t>(ranks), values.view());
      ASSERT_EQ(check_select(*data, ranks, host_of(values)), "")
          << (data == &lying ? "misleading sample" : "equal top bits") << ", rank " << ranks[0];
      // partition at the same kth (up to radix_select_routed_ranks: from the radix select's answers)
      SCOPED_TRACE(std::string(data == &lying ? "misleading sample" : "equal top bits") + ", partition, " +
                   std::to_string(ranks.size()) + " kth");
      check_partitions(*data, 1, ranks);
    }
  }
}

// Ranks dense enough that their brackets cover most of the sample: the sorting fallback.
TYPED_TEST(GpuSelection, SelectManyRanksSorts) {
  using T = TypeParam;
  const int64_t n = 4 * select_sample_size(int(sizeof(T))) + 3;
  const std::vector<T> data = make_input<T>(shape::random, n, 11);
  const OnDevice<T> d(data, 1);
  std::vector<int64_t> ranks;
  for (int64_t r = n - 1; r >= 0; r -= 7) ranks.push_back(r);
  device_vector<T> values(int64_t(ranks.size()));
  select(cuda, d.view(), span<const int64_t>(ranks), values.view());
  ASSERT_EQ(check_select(data, ranks, host_of(values)), "");
}

// More ranks than the planned levels take (core::plan_max_ranks): the many-rank radix select
// (many_select.cu), whose passes narrow every rank at once, copy the open slots' elements once
// they are few and sort the last few thousand in one block. 100 and 1,000 ranks spread as
// numpy's quantiles are, a cluster of neighbours, every shape (ties, NaN and -0.0, a spike at the
// sample's stride); partition's buckets placed from the answers and the elements under them.
TYPED_TEST(GpuSelection, SelectManyRanksByRadixPasses) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const std::vector<int64_t> sizes =
      test_subset() ? std::vector<int64_t>{100003} : std::vector<int64_t>{100003, (int64_t{1} << 20) + 3};
  for (const int64_t n : sizes)
    for (const shape sh : gpu_shapes()) {
      const std::vector<T> data = make_input<T>(sh, n, seed ^ uint64_t(n) ^ 41);
      const OnDevice<T> d(data, 1);
      for (const std::vector<int64_t>& ranks :
           {spread_ranks(n, 5), spread_ranks(n, 100), spread_ranks(n, 1000), cluster_ranks(n)}) {
        SCOPED_TRACE(std::string(name(sh)) + ", n = " + std::to_string(n) + ", " +
                     std::to_string(ranks.size()) + " ranks");
        device_vector<T> values(int64_t(ranks.size()));
        select(cuda, d.view(), span<const int64_t>(ranks), values.view());
        ASSERT_EQ(check_select(data, ranks, host_of(values)), "");
        if (n < 200000 && ranks.size() <= 100)
          check_partitions(data, 1, ranks);  // the checker: quadratic in the gaps
      }
    }
}

TYPED_TEST(GpuSelection, SelectRejectsBadRanks) {
  using T = TypeParam;
  const std::vector<T> data = make_input<T>(shape::random, 100, 3);
  const OnDevice<T> d(data, 0);
  device_vector<T> values(1);
  const std::vector<int64_t> bad = {100};
  EXPECT_THROW(select(cuda, d.view(), span<const int64_t>(bad), values.view()), invalid_argument);
}

// --- partition / argpartition --------------------------------------------------------------------

// The 1-D select's radix route is also partition's for one or two kth (radix_select_routed_ranks)
// of radix_select_min_n elements or more: the buckets placed from the answers and the counts
// under them, the even ones filled from their end. Every shape (ties: few distinct values, all
// equal; NaN and -0.0 / 0.0: specials), the kth at both ends, neighbouring, far apart.
TYPED_TEST(GpuSelection, PartitionOnTheRadixRoute) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const std::vector<int64_t> sizes =
      test_subset() ? std::vector<int64_t>{cuda_backend::radix_select_min_n + 7}
                    : std::vector<int64_t>{cuda_backend::radix_select_min_n,
                                           cuda_backend::radix_select_min_n * 2 + 7, (int64_t{1} << 20) + 3};
  for (const int64_t n : sizes)
    for (const shape sh : gpu_shapes()) {
      const std::vector<T> data = make_input<T>(sh, n, seed ^ uint64_t(n) ^ 77);
      for (const std::vector<int64_t>& kth : {std::vector<int64_t>{n / 2},
                                              {0},
                                              {n - 1},
                                              {n / 2 - 1, n / 2},
                                              {0, n - 1},
                                              {n / 3, 2 * n / 3},
                                              {n - 2, n - 1}}) {
        SCOPED_TRACE(std::string(name(sh)) + ", n = " + std::to_string(n) + ", kth " +
                     std::to_string(kth[0]) +
                     (kth.size() > 1 ? ", " + std::to_string(kth[1]) : std::string()));
        check_partitions(data, n % 2, kth);
      }
    }
}

// Along the last axis of a rows x cols array in one call: short rows (each sorted by a block),
// rows just past the block sorts' tiles (each by the 1-D partition), every shape; and the CPU's
// answer checked the same way.
TYPED_TEST(GpuSelection, PartitionOfRows) {
  using T = TypeParam;
  const struct { int64_t rows, cols; } shapes[] = {{4096, 7}, {300, 100}, {70, 4096}, {3, 4097}, {2, 1}};
  uint64_t seed = test_seed();
  for (const auto& [rows, cols] : shapes) {
    for (const shape sh : gpu_shapes()) {
      const std::vector<T> data = make_input<T>(sh, rows * cols, ++seed);
      const OnDevice<T> d(data, 0);
      for (const std::vector<int64_t>& kth :
           std::vector<std::vector<int64_t>>{{0}, {cols / 2}, {-1, cols / 3}, {}}) {
        SCOPED_TRACE(std::string(name(sh)) + ", " + std::to_string(rows) + " x " + std::to_string(cols) + ", " +
                     std::to_string(kth.size()) + " kth");
        device_vector<T> out(rows * cols);
        device_vector<int64_t> idx(rows * cols);
        partition(cuda, d.view(), rows, span<const int64_t>(kth), out.view());
        argpartition(cuda, d.view(), rows, span<const int64_t>(kth), idx.view());
        ASSERT_EQ(check_partition_rows(data, rows, kth, host_of(out), host_of(idx)), "");
      }
    }
  }
}

// numpy's axis=-1 of quantile / median: every row sorted at once (quantile_rows.cu), scattered into
// numpy's layout (q first); each row against its own reference.
TYPED_TEST(GpuSelection, QuantileAndMedianOfRows) {
  using T = TypeParam;
  const struct { int64_t rows, cols; } shapes[] = {{300, 100}, {3, 4097}, {2, 1}};
  uint64_t seed = test_seed();
  for (const auto& [rows, cols] : shapes) {
    for (const shape sh : {shape::random, shape::specials}) {
      const std::vector<T> data = make_input<T>(sh, rows * cols, ++seed);
      const OnDevice<T> d(data, 0);
      const std::vector<double> q = quantile_qs(cols, seed);
      for (bool skip_nan : {false, true}) {
        SCOPED_TRACE(std::string(name(sh)) + ", " + std::to_string(rows) + " x " + std::to_string(cols));
        device_vector<double> out(int64_t(q.size()) * rows), med(rows);
        quantile(cuda, d.view(), rows, span<const double>(q), quantile_method::linear, scalar_q_dtypes<T>(), skip_nan,
                 out.view());
        median(cuda, d.view(), rows, skip_nan, med.view());
        ASSERT_EQ(check_quantile_rows(data, rows, q, quantile_method::linear, skip_nan, host_of(out), host_of(med)), "");
      }
    }
  }
}

TYPED_TEST(GpuSelection, PartitionAndArgpartition) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  for (const int64_t n : gpu_sizes<T>()) {
    if (n > 200000) continue;  // the checker is quadratic in the gaps between kth
    for (const shape sh : gpu_shapes()) {
      const std::vector<T> data = make_input<T>(sh, n, seed ^ uint64_t(n));
      for (const auto& kth : gpu_rank_lists(n)) {
        if (n > 5000 && kth.size() == 1 && kth[0] != n / 2 && kth[0] != 0) continue;
        SCOPED_TRACE(std::string(name(sh)) + ", n = " + std::to_string(n) + ", " + std::to_string(kth.size()) + " kth");
        check_partitions(data, n % 2, kth);
      }
    }
  }
}

// No kth: numpy's copy of the data (argpartition: the identity), in the data's order.
TYPED_TEST(GpuSelection, PartitionWithoutKthCopies) {
  using T = TypeParam;
  const std::vector<T> data = make_input<T>(shape::random, 1001, 9);
  const OnDevice<T> d(data, 1);
  device_vector<T> out(1001);
  device_vector<int64_t> idx(1001);
  partition(cuda, d.view(), span<const int64_t>(), out.view());
  argpartition(cuda, d.view(), span<const int64_t>(), idx.view());
  EXPECT_EQ(sorted_bits(host_of(out)), sorted_bits(data));
  EXPECT_EQ(std::memcmp(host_of(out).data(), data.data(), data.size() * sizeof(T)), 0);
  const std::vector<int64_t> got = host_of(idx);
  for (int64_t i = 0; i < 1001; ++i) ASSERT_EQ(got[size_t(i)], i);
}

// More distinct kth values than the bucket scatter takes: partition sorts.
TYPED_TEST(GpuSelection, PartitionManyKthSorts) {
  using T = TypeParam;
  const int64_t n = 4 * (partition_max_splitters + 1) + 1;
  const std::vector<T> data = make_input<T>(shape::random, n, 5);
  std::vector<int64_t> kth;
  for (int64_t k = 0; k < n; k += 2) kth.push_back(k);
  check_partitions(data, 1, kth);
}

// --- quantile / median ----------------------------------------------------------------------------

TYPED_TEST(GpuSelection, QuantileEveryMethodEqualsNumpyAndCpu) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::vector<int64_t> ns = {1, 2, 3, 10, select_sample_size(int(sizeof(T))) + 1, 300007};
  for (const int64_t n : ns)
    for (const shape sh : {shape::random, shape::specials, shape::few_distinct}) {
      const std::vector<T> data = make_input<T>(sh, n, seed + 3 * uint64_t(n));
      const OnDevice<T> d(data, 1);
      const std::vector<double> qs = quantile_qs(n, seed);
      for (const quantile_method method : kMethods)
        for (const bool skip_nan : {false, true}) {
          // The methods differ only on the host (core/quantile.hpp, tested on the CPU): the
          // sanitizers' subset keeps an interpolating and two discontinuous ones.
          if (test_subset() && method != quantile_method::linear && method != quantile_method::lower &&
              method != quantile_method::inverted_cdf)
            continue;
          SCOPED_TRACE(std::string(name(sh)) + ", n = " + std::to_string(n) + ", " + std::string(to_string(method)) +
                       (skip_nan ? ", nanquantile" : ""));
          device_vector<double> out(int64_t(qs.size()));
          quantile(cuda, d.view(), span<const double>(qs), method, skip_nan, out.view());
          const std::vector<double> got = host_of(out);
          std::vector<double> cpu_out(qs.size());
          quantile(cpu, span<const T>(data), span<const double>(qs), method, skip_nan, span<double>(cpu_out));
          // One sort for every q (the test's own time was the reference's, a sort per q).
          const std::vector<double> want = reference_quantiles(data, qs, method, skip_nan);
          for (size_t i = 0; i < qs.size(); ++i) {
            ASSERT_TRUE(same_result(got[i], want[i])) << "q = " << qs[i] << ": " << got[i] << ", want " << want[i];
            ASSERT_TRUE(same_result(got[i], cpu_out[i])) << "GPU != CPU at q = " << qs[i];
          }
        }
    }
}

TYPED_TEST(GpuSelection, MedianEqualsNumpyAndCpu) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  for (const int64_t n : gpu_sizes<T>())
    for (const shape sh : gpu_shapes()) {
      if (n > 1000000 && sh != shape::random) continue;
      const std::vector<T> data = make_input<T>(sh, n, seed + uint64_t(n));
      const OnDevice<T> d(data, n % 2);
      for (const bool skip_nan : {false, true}) {
        device_vector<double> out(1);
        median(cuda, d.view(), skip_nan, out.view());
        const double got = host_of(out)[0];
        double cpu_out = 0;
        median(cpu, span<const T>(data), skip_nan, span<double>(&cpu_out, 1));
        ASSERT_TRUE(same_result(got, reference_median(data, skip_nan)))
            << name(sh) << ", n = " << n << (skip_nan ? ", nanmedian: " : ": ") << got << ", want "
            << reference_median(data, skip_nan);
        ASSERT_TRUE(same_result(got, cpu_out)) << "GPU != CPU";
      }
    }
}

// One NaN, in the unaligned head, the middle or the last partial tile: the radix select's first
// pass counts it (quantile's NaN check without a rank n - 1), and every result is NaN; nanmedian
// and nanquantile skip it.
TYPED_TEST(GpuSelection, OneNaNMakesTheQuantilesNaN) {
  using T = TypeParam;
  if constexpr (std::is_floating_point_v<T>) {
    const int64_t n = cuda_backend::radix_select_min_n + 100003;
    const std::vector<T> clean = make_input<T>(shape::random, n, test_seed());
    const std::vector<double> qs = {0.3, 0.5};
    for (const int64_t at : {int64_t(0), n / 2, n - 1}) {
      std::vector<T> data = clean;
      data[size_t(at)] = std::numeric_limits<T>::quiet_NaN();
      const OnDevice<T> d(data, 1);
      for (const bool skip_nan : {false, true}) {
        SCOPED_TRACE("NaN at " + std::to_string(at) + (skip_nan ? ", skipped" : ""));
        device_vector<double> med(1), out(int64_t(qs.size()));
        median(cuda, d.view(), skip_nan, med.view());
        quantile(cuda, d.view(), span<const double>(qs), quantile_method::linear, skip_nan, out.view());
        ASSERT_TRUE(same_result(host_of(med)[0], reference_median(data, skip_nan)));
        const std::vector<double> want = reference_quantiles(data, qs, quantile_method::linear, skip_nan);
        for (size_t i = 0; i < qs.size(); ++i) ASSERT_TRUE(same_result(host_of(out)[i], want[i])) << qs[i];
      }
    }
    const OnDevice<T> d(clean, 0);
    device_vector<double> med(1);
    median(cuda, d.view(), false, med.view());
    ASSERT_TRUE(same_result(host_of(med)[0], reference_median(clean, false))) << "no NaN";
  }
}

// --- topk / kthvalue (their kernels: src/selection/cuda/topk.cu) against the references and the CPU -------------

TYPED_TEST(GpuSelection, TopkAndKthvalueEqualCpu) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  struct Shape {
    int64_t rows, cols;
  };
  for (const Shape s : {Shape{1, 1}, Shape{1, 1000}, Shape{1, 100003}, Shape{7, 4097}, Shape{64, 300}})
    for (const shape sh : {shape::random, shape::specials, shape::all_equal}) {
      const std::vector<T> data = make_input<T>(sh, s.rows * s.cols, seed + uint64_t(s.cols));
      const OnDevice<T> d(data, 1);
      for (const int64_t k : {int64_t{0}, int64_t{1}, std::min<int64_t>(s.cols, 64), s.cols})
        for (const bool largest : {true, false})
          for (const bool sorted : {true, false}) {
            SCOPED_TRACE(std::string(name(sh)) + ", " + std::to_string(s.rows) + " x " + std::to_string(s.cols) +
                         ", k = " + std::to_string(k) + (largest ? ", largest" : ", smallest") + (sorted ? ", sorted" : ""));
            device_vector<T> v(s.rows * k);
            device_vector<int64_t> i(s.rows * k);
            topk(cuda, d.view(), s.rows, k, topk_options{largest, sorted}, v.view(), i.view());
            ASSERT_EQ(check_topk(data, s.rows, k, largest, sorted, host_of(v), host_of(i)), "");
          }
      for (const int64_t rank : {int64_t{0}, s.cols / 2, s.cols - 1}) {
        device_vector<T> v(s.rows);
        device_vector<int64_t> i(s.rows);
        kthvalue(cuda, d.view(), s.rows, rank, v.view(), i.view());
        const std::vector<T> got = host_of(v);
        ASSERT_EQ(check_kthvalue(data, s.rows, rank, got, host_of(i)), "") << name(sh) << ", rank " << rank;
        std::vector<T> cpu_v(static_cast<size_t>(s.rows));
        std::vector<int64_t> cpu_i(static_cast<size_t>(s.rows));
        kthvalue(cpu, span<const T>(data), s.rows, rank, span<T>(cpu_v), span<int64_t>(cpu_i));
        for (int64_t r = 0; r < s.rows; ++r) ASSERT_TRUE(key_equal(got[size_t(r)], cpu_v[size_t(r)])) << "GPU != CPU";
      }
    }
}

}  // namespace
}  // namespace gsearch::test
