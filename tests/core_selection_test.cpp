// The shared pieces of selection (core/selection.hpp, core/quantile.hpp) against plain
// references: select_bucket against a loop over the splitters, sample_position's range and
// spread, bracket_of's coverage of the true rank, and every numpy quantile method and the median
// against numpy's formulas written out in selection_cases.hpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gsearch/core/quantile.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/selection.hpp"
#include "selection_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using namespace gsearch::test::selection;

template <class T>
class CoreSelection : public ::testing::Test {};
TYPED_TEST_SUITE(CoreSelection, KeyTypes);

// The bucket from its definition: u = the splitters <= x; 2u - 1 when the u-th equals x.
template <class T>
int plain_bucket(const std::vector<T>& s, T x) {
  int u = 0;
  for (T v : s) u += key_less_equal(v, x);
  return u > 0 && key_equal(s[size_t(u - 1)], x) ? 2 * u - 1 : 2 * u;
}

TYPED_TEST(CoreSelection, SelectBucketMatchesALoopOverTheSplitters) {
  using T = TypeParam;
  std::mt19937_64 rng(3);
  for (shape sh : {shape::random, shape::few_distinct, shape::specials}) {
    for (int m : {0, 1, 2, 3, 7, 16, 33}) {
      // Sorted splitters drawn from the data, and probes: the data itself (equal to splitters,
      // between them, beyond both ends).
      const std::vector<T> data = make_input<T>(sh, 200, rng());
      // Both with duplicates among the splitters (the GPU dedupes by sample index, not value)
      // and without.
      const std::vector<T> with_repeats = sorted_copy(std::vector<T>(data.begin(), data.begin() + m));
      std::vector<T> distinct = with_repeats;
      distinct.erase(std::unique(distinct.begin(), distinct.end(), key_equal<T>), distinct.end());
      for (const std::vector<T>& s : {with_repeats, distinct}) {
        const auto at = [&](int i) { return s[size_t(i)]; };
        for (T x : data)
          ASSERT_EQ(core::select_bucket(at, int(s.size()), x), plain_bucket(s, x))
              << name(sh) << " m=" << s.size() << " x=" << show(x);
      }
    }
  }
}

TEST(CoreSelection, SelectBucketOrdersNanLastAndZerosEqual) {
  const std::vector<double> s = {-0.0, 1.0, std::numeric_limits<double>::quiet_NaN()};
  const auto at = [&](int i) { return s[size_t(i)]; };
  EXPECT_EQ(core::select_bucket(at, 3, -1.0), 0);
  EXPECT_EQ(core::select_bucket(at, 3, 0.0), 1);   // equal to -0.0
  EXPECT_EQ(core::select_bucket(at, 3, 0.5), 2);
  EXPECT_EQ(core::select_bucket(at, 3, 1.0), 3);
  EXPECT_EQ(core::select_bucket(at, 3, std::numeric_limits<double>::infinity()), 4);
  EXPECT_EQ(core::select_bucket(at, 3, -std::numeric_limits<double>::quiet_NaN()), 5);
}

TEST(CoreSelection, SamplePositionsAreInRangeIncreasingAndOnePerStride) {
  for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{7}, int64_t{1000}, int64_t{1} << 20, (int64_t{1} << 40) + 12345,
                    (int64_t{1} << 61) + 3}) {
    for (int64_t s : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{255}, int64_t{4096}}) {
      if (s > n) continue;
      int64_t previous = -1;
      for (int64_t i = 0; i < s; ++i) {
        const int64_t p = core::sample_position(i, s, n);
        ASSERT_TRUE(p >= 0 && p < n) << n << " " << s << " " << i;
        ASSERT_GT(p, previous) << n << " " << s << " " << i;
        // Inside the i-th of s equal strides [i n / s, (i + 1) n / s).
        const __int128 lo = __int128(i) * n / s, hi = __int128(i + 1) * n / s;
        ASSERT_TRUE(p >= lo && p < hi) << n << " " << s << " " << i << " " << p;
        previous = p;
      }
    }
  }
}

TEST(CoreSelection, BracketsAreOrderedAndClippedToTheSample) {
  for (int64_t n : {int64_t{10}, int64_t{1000}, int64_t{1} << 24}) {
    for (int64_t s : {int64_t{1}, int64_t{16}, int64_t{1024}}) {
      for (int64_t r : {int64_t{0}, n / 3, n / 2, n - 1}) {
        const core::sample_bracket b = core::bracket_of(r, n, s);
        ASSERT_GE(b.lo, -1);
        ASSERT_LE(b.hi, s);
        ASSERT_LT(b.lo, b.hi);
        const double center = (double(r) + 0.5) * double(s) / double(n);
        ASSERT_LE(double(b.lo), center);
        ASSERT_GE(double(b.hi), center);
      }
      EXPECT_EQ(core::bracket_of(0, n, s).lo, -1);
      EXPECT_EQ(core::bracket_of(n - 1, n, s).hi, s);
    }
  }
}

// The statistical promise: over random data, the r-th element lies between the bracket's two
// sample elements (inclusive; an open side always holds) in all but a rare trial.
TEST(CoreSelection, BracketsHoldTheRankOfRandomData) {
  std::mt19937_64 rng(5);
  const int64_t n = 1 << 16, s = 512;
  int misses = 0, trials = 0;
  for (int t = 0; t < 40; ++t) {
    std::vector<uint32_t> data(static_cast<size_t>(n));
    for (auto& x : data) x = uint32_t(rng());
    std::vector<uint32_t> sample(static_cast<size_t>(s));
    for (int64_t i = 0; i < s; ++i) sample[size_t(i)] = data[size_t(core::sample_position(i, s, n))];
    std::sort(sample.begin(), sample.end());
    const std::vector<uint32_t> sorted = sorted_copy(data);
    for (int64_t r = 0; r < n; r += 997) {
      const core::sample_bracket b = core::bracket_of(r, n, s);
      const uint32_t x = sorted[size_t(r)];
      const bool above = b.lo < 0 || sample[size_t(b.lo)] <= x, below = b.hi >= s || x <= sample[size_t(b.hi)];
      misses += !(above && below);
      ++trials;
    }
  }
  EXPECT_LE(misses, trials / 1000 + 1) << misses << " of " << trials;
}

TEST(CoreSelection, MethodNamesRoundTrip) {
  for (quantile_method m : kMethods) {
    EXPECT_EQ(quantile_method_from_string(to_string(m)), m);
  }
  EXPECT_EQ(to_string(quantile_method::linear), "linear");
  EXPECT_FALSE(quantile_method_from_string("cubic").has_value());
}

// Sorted data with values that stress the arithmetic: wide ranges, the type's extremes, infs.
template <class T>
std::vector<std::vector<T>> quantile_inputs(std::mt19937_64& rng) {
  std::vector<std::vector<T>> inputs;
  for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 10, 11, 100, 1001}) {
    inputs.push_back(sorted_copy(make_input<T>(shape::random, n, rng())));
    inputs.push_back(sorted_copy(make_input<T>(shape::few_distinct, n, rng())));
  }
  using L = std::numeric_limits<T>;
  inputs.push_back({L::lowest(), L::max()});
  inputs.push_back({L::lowest(), T(0), T(1), L::max()});
  if constexpr (std::is_floating_point_v<T>) {
    inputs.push_back({-L::infinity(), T(1), T(2), L::infinity()});
    inputs.push_back({T(1), L::infinity()});
    inputs.push_back({L::infinity(), L::infinity()});
    inputs.push_back({T(-0.0), T(0.0), T(0.0)});
  }
  return inputs;
}

TYPED_TEST(CoreSelection, EveryQuantileMethodMatchesNumpysFormulas) {
  using T = TypeParam;
  std::mt19937_64 rng(11);
  for (const std::vector<T>& s : quantile_inputs<T>(rng)) {
    const int64_t n = int64_t(s.size());
    for (quantile_method m : kMethods) {
      for (double q : quantile_qs(n, rng())) {
        const core::quantile_point p = core::quantile_point_of(m, q, n);
        ASSERT_TRUE(0 <= p.lo && p.lo <= p.hi && p.hi < n) << to_string(m) << " n=" << n << " q=" << q;
        if (p.discrete) {
          ASSERT_EQ(p.lo, p.hi);
        }
        const double got = core::quantile_combine(p, s[size_t(p.lo)], s[size_t(p.hi)]);
        const double want = numpy_quantile_sorted(s, q, m);
        ASSERT_TRUE(same_result(got, want))
            << to_string(m) << " n=" << n << " q=" << q << ": " << show(got) << ", want " << show(want);
      }
    }
  }
}

// Known numpy results (numpy 2.4, printed by np.quantile / np.median with a scalar q).
TEST(CoreSelection, QuantilesEqualNumpysPrintedResults) {
  const std::vector<double> a = {1, 2, 3, 4.5, 7};
  const auto q = [&](quantile_method m, double x) {
    const core::quantile_point p = core::quantile_point_of(m, x, 5);
    return core::quantile_combine(p, a[size_t(p.lo)], a[size_t(p.hi)]);
  };
  EXPECT_DOUBLE_EQ(q(quantile_method::linear, 0.3), 2.2);
  EXPECT_DOUBLE_EQ(q(quantile_method::lower, 0.3), 2);
  EXPECT_DOUBLE_EQ(q(quantile_method::higher, 0.3), 3);
  EXPECT_DOUBLE_EQ(q(quantile_method::midpoint, 0.3), 2.5);
  EXPECT_DOUBLE_EQ(q(quantile_method::nearest, 0.3), 2);
  EXPECT_DOUBLE_EQ(q(quantile_method::nearest, 0.375), 3);  // index 1.5 rounds to the even 2
  EXPECT_DOUBLE_EQ(q(quantile_method::nearest, 0.125), 1);  // index 0.5 rounds to the even 0
  EXPECT_DOUBLE_EQ(q(quantile_method::hazen, 0.3), 2.0);
  // numpy's NaN for a lerp that touches inf: np.quantile([1, inf], 0.5) is nan, 0.25 is inf.
  const auto inf = std::numeric_limits<double>::infinity();
  const core::quantile_point half = core::quantile_point_of(quantile_method::linear, 0.5, 2);
  EXPECT_TRUE(std::isnan(core::quantile_combine(half, 1.0, inf)));
  const core::quantile_point quarter = core::quantile_point_of(quantile_method::linear, 0.25, 2);
  EXPECT_EQ(core::quantile_combine(quarter, 1.0, inf), inf);
  // Integers: the exact difference where numpy's int32 subtraction wraps (numpy: 2147483647.5).
  const core::quantile_point mid = core::quantile_point_of(quantile_method::linear, 0.5, 2);
  EXPECT_EQ(core::quantile_combine(mid, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()),
            -0.5);
}

// numpy's arithmetic in the dtypes its promotion picks (quantile_dtypes), values printed by numpy
// 2.4: q's dtype for the index, the result dtype for the lerp, b - a in the data's dtype.
TEST(CoreSelection, QuantilesFollowNumpysDtypes) {
  using core::quantile_combine;
  using core::quantile_point_of;
  const auto of = [](const auto& s, quantile_method m, double q, const quantile_dtypes& d) {
    const core::quantile_point p = quantile_point_of(m, q, int64_t(s.size()), d);
    return quantile_combine(p, s[size_t(p.lo)], s[size_t(p.hi)], d);
  };
  // Issue 38: np.quantile(float32 [0.5, 1, 2, 3, 7], [0.1]) is float64 0.7 (a float64 array q
  // interpolates float32 data in float64); a Python float q keeps float32 (0.699999988...).
  const std::vector<float> a = {0.5f, 1, 2, 3, 7};
  quantile_dtypes array_q;  // float64 index and lerp
  EXPECT_EQ(of(a, quantile_method::linear, 0.1, array_q), 0.7);
  EXPECT_EQ(of(a, quantile_method::linear, 0.1, scalar_q_dtypes<float>()), double(0.7f));
  // A float32 q: the virtual index in float32. np.quantile(np.arange(10001.0), np.float32(0.3),
  // method='hazen') is 2999.800048828125; with the Python float 0.3, 2999.7999999999997.
  std::vector<double> r(10001);
  for (size_t i = 0; i < r.size(); ++i) r[i] = double(i);
  quantile_dtypes f32_q;
  f32_q.index = float_format::binary32;
  EXPECT_EQ(of(r, quantile_method::hazen, double(0.3f), f32_q), 2999.800048828125);
  EXPECT_EQ(of(r, quantile_method::hazen, 0.3, array_q), 2999.7999999999997);
  // float16 data (held as float): b - a rounds to float16 (1000 - 2^-10 is 1000 there).
  // np.quantile(float16 [2^-10, 1000], [0.3]) is 300.0009765625; with 0.3, float16 300.
  const std::vector<float> h = {0.0009765625f, 1000.0f};
  quantile_dtypes half = array_q;
  half.half_data = true;
  EXPECT_EQ(of(h, quantile_method::linear, 0.3, half), 300.0009765625);
  half.lerp = float_format::binary16;
  EXPECT_EQ(of(h, quantile_method::linear, 0.3, half), 300.0);
  EXPECT_EQ(of(h, quantile_method::linear, 0.7, half), 700.0);
  // An integer q takes the element at 'linear' (numpy's take): inf, where 1.0 gives inf - inf.
  const std::vector<double> inf = {1.0, std::numeric_limits<double>::infinity()};
  quantile_dtypes int_q;
  int_q.integer_q = true;
  EXPECT_EQ(of(inf, quantile_method::linear, 1.0, int_q), inf[1]);
  EXPECT_TRUE(std::isnan(of(inf, quantile_method::linear, 1.0, array_q)));
  // float16 q past the end: (n - 1) q = 9999 rounds to 10000 in float16 (numpy: IndexError);
  // the last element here, never out of bounds.
  quantile_dtypes f16_q;
  f16_q.index = float_format::binary16;
  for (quantile_method m : kMethods) {
    const core::quantile_point p = quantile_point_of(m, 1.0, 10000, f16_q);
    EXPECT_TRUE(p.lo <= p.hi && p.hi == 9999) << to_string(m);
  }
}

TEST(CoreSelection, RoundToBinary16IsNumpysFloat16) {
  // float(np.float16(x)) for each x (numpy 2.4).
  const std::pair<double, double> cases[] = {
      {0.1, 0.0999755859375}, {65504, 65504}, {65519, 65504}, {1e-8, 0.0}, {3e-8, 5.960464477539063e-08},
      {-2049, -2048}, {2049, 2048}, {2051, 2052}, {-0.0, -0.0}, {1.0 / 3, 0.333251953125}};
  for (auto [x, want] : cases) {
    EXPECT_EQ(core::round_to_binary16(x), want) << x;
    EXPECT_EQ(std::signbit(core::round_to_binary16(x)), std::signbit(want)) << x;
  }
  EXPECT_EQ(core::round_to_binary16(65520), std::numeric_limits<double>::infinity());
  EXPECT_EQ(core::round_to_binary16(-1e6), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(core::round_to_binary16(std::nan(""))));
  EXPECT_EQ(core::round_to(float_format::binary32, 0.1), double(0.1f));
  EXPECT_EQ(core::round_to(float_format::binary64, 0.1), 0.1);
}

TYPED_TEST(CoreSelection, MedianCombineIsNumpysMean) {
  using T = TypeParam;
  std::mt19937_64 rng(13);
  for (const std::vector<T>& s : quantile_inputs<T>(rng)) {
    const int64_t n = int64_t(s.size());
    const core::median_ranks r = core::median_ranks_of(n);
    ASSERT_EQ(r.lo, (n - 1) / 2);
    ASSERT_EQ(r.hi, n / 2);
    const double got = core::median_combine(s[size_t(r.lo)], s[size_t(r.hi)], n);
    ASSERT_TRUE(same_result(got, reference_median(s, false))) << "n=" << n << " " << show(got);
  }
  // np.median(float32 [3e38, 3e38]) overflows to inf in float32; int64 in float64.
  if constexpr (std::is_same_v<T, float>) {
    EXPECT_TRUE(std::isinf(core::median_combine(3e38f, 3e38f, 2)));
  }
  if constexpr (std::is_same_v<T, uint64_t>) {
    EXPECT_EQ(core::median_combine(uint64_t{0}, ~uint64_t{0}, 2), 9.223372036854776e18);
  }
}

// core/radix_bits.hpp: radix_bits orders like the keys and merges exactly the equal ones (what the
// GPU's radix selects count by); from_radix_bits gives back an equal key; ordered_bits is one to
// one and orders like the keys too.
TYPED_TEST(CoreSelection, RadixBitsOrderLikeTheKeys) {
  using T = TypeParam;
  for (shape sh : {shape::random, shape::few_distinct, shape::specials}) {
    const std::vector<T> data = make_input<T>(sh, 300, 11);
    for (T a : data)
      for (T b : data) {
        ASSERT_EQ(key_less(a, b), core::radix_bits(a) < core::radix_bits(b)) << show(a) << " " << show(b);
        ASSERT_EQ(key_equal(a, b), core::radix_bits(a) == core::radix_bits(b)) << show(a) << " " << show(b);
        if (key_less(a, b)) {
          ASSERT_LT(core::ordered_bits(a), core::ordered_bits(b)) << show(a) << " " << show(b);
        }
      }
    for (T a : data) {
      ASSERT_TRUE(key_equal(core::from_radix_bits<T>(core::radix_bits(a)), a)) << show(a);
      const T back = core::from_ordered_bits<T>(core::ordered_bits(a));
      ASSERT_EQ(std::memcmp(&back, &a, sizeof(T)), 0) << show(a);
    }
  }
}

}  // namespace
}  // namespace gsearch::test
