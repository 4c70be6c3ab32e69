// The unsorted search on the CPU backend (find.hpp) against a plain loop: every mode (first, any,
// random, count, find_all) and predicate for every key type, sizes around the powers of two and
// the 4,096-element blocks, match positions (first, last, none, all, duplicates, one in the
// middle), NaN / -0.0 / inf and the integer extremes; find_random's definition (the r-th match,
// r = core::random_below(seed, count)) and its uniformity over seeds; the study strategies;
// isin against np.isin's semantics for every method; and the argument checks.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "find_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

constexpr find_op kOps[] = {find_op::eq, find_op::ne, find_op::lt, find_op::le,
                            find_op::gt, find_op::ge, find_op::in_range};
constexpr find_strategy kStudyStrategies[] = {find_strategy::strided, find_strategy::coalesced,
                                              find_strategy::unrolled, find_strategy::one_per_thread};
constexpr isin_method kIsinMethods[] = {isin_method::auto_, isin_method::sorted, isin_method::hash};

// --- the reference: plain loops, numpy's elementwise (IEEE) comparisons ----------------------

template <class T>
std::vector<int64_t> plain_find_all(const std::vector<T>& data, const predicate<T>& p) {
  std::vector<int64_t> all;
  for (size_t i = 0; i < data.size(); ++i)
    if (plain_match(p, data[i])) all.push_back(int64_t(i));
  return all;
}

template <class T>
std::string describe(const predicate<T>& p) {
  std::ostringstream s;
  s << to_string(p.op) << "(" << p.value;
  if (p.op == find_op::in_range) s << ", " << p.hi;
  s << ")";
  return s.str();
}

/// A bool buffer (std::vector<bool> has no data()).
struct Mask {
  explicit Mask(int64_t n, bool fill = false) : n(n), p(new bool[size_t(std::max<int64_t>(n, 1))]) {
    std::fill_n(p.get(), size_t(std::max<int64_t>(n, 0)), fill);
  }
  span<bool> view() const { return {p.get(), n}; }
  bool operator[](int64_t i) const { return p[size_t(i)]; }
  bool& operator[](int64_t i) { return p[size_t(i)]; }
  int64_t n;
  std::unique_ptr<bool[]> p;
};

/// Every mode of find, and find_all, for one (data, predicate) against the plain loop.
template <class T>
void check_modes(const cpu_t& exec, const std::vector<T>& data, const predicate<T>& p, const std::string& what) {
  const span<const T> d(data);
  const int64_t n = d.size();
  const std::vector<int64_t> all = plain_find_all(data, p);
  const int64_t c = int64_t(all.size());
  const int64_t first = c ? all[0] : -1;
  const auto ctx = [&] { return what + " n=" + std::to_string(n) + " pred=" + describe(p); };

  ASSERT_EQ(find_first(exec, d, p), first) << ctx();
  ASSERT_EQ(gsearch::count(exec, d, p), c) << ctx();
  const int64_t any = find_any(exec, d, p);
  if (c == 0) {
    ASSERT_EQ(any, -1) << ctx();
  } else {
    ASSERT_TRUE(any >= 0 && any < n) << ctx() << " any=" << any;
    ASSERT_TRUE(plain_match(p, data[size_t(any)])) << ctx() << " any=" << any << " is no match";
  }
  for (uint64_t seed : {uint64_t(0), uint64_t(77), uint64_t(0xfedcba9876543210ull)}) {
    const int64_t want = c ? all[size_t(core::random_below(seed, c))] : -1;
    ASSERT_EQ(find_random(exec, d, p, seed), want) << ctx() << " seed=" << seed;
  }
  // The generic forms: the result span and the returning find.
  for (find_mode mode : {find_mode::first, find_mode::count}) {
    int64_t r = -7;
    find(exec, mode, d, p, span<int64_t>(&r, 1));
    ASSERT_EQ(r, mode == find_mode::count ? c : first) << ctx() << " find(" << to_string(mode) << ")";
  }
  // find_all: the callback once, with the count; ascending indices.
  int calls = 0;
  int64_t asked = -1;
  std::vector<int64_t> out;
  const int64_t got = find_all(exec, d, p, [&](int64_t k) {
    ++calls;
    asked = k;
    out.assign(size_t(k), -7);
    return out.data();
  });
  ASSERT_EQ(calls, 1) << ctx();
  ASSERT_EQ(asked, c) << ctx();
  ASSERT_EQ(got, c) << ctx();
  ASSERT_EQ(out, all) << ctx();
}

// --- inputs: where the matches are, and a predicate that tells hits from misses for each op ---


// Around 2^k, warps, the CPU's 4,096-element blocks and the GPU's tiles; several blocks.
const std::vector<int64_t> kSmallSizes{0,   1,    2,    3,    31,   32,   33,   255,  256,  257,
                                       1023, 1025, 4095, 4096, 4097, 8191, 8192, 8193, 3 * 4096 + 5};
const std::vector<int64_t> kBigSizes{65535, 65537, (int64_t(1) << 17) + 1, int64_t(1) << 20};

template <class T>
class CpuFind : public ::testing::Test {};
TYPED_TEST_SUITE(CpuFind, KeyTypes);

// Every op, pattern and small size; on the big sizes a few patterns, each with another op.
TYPED_TEST(CpuFind, AllModesOpsPatternsSizes) {
  using T = TypeParam;
  for (int64_t n : kSmallSizes)
    for (Pattern pat : kPatterns) {
      const auto h = hits(pat, n, uint64_t(n) * 31 + uint64_t(pat));
      for (find_op op : kOps) {
        const OpCase<T> c = op_case<T>(op);
        ASSERT_NO_FATAL_FAILURE(check_modes(cpu, make_data(c, h), c.pred, std::string("pattern=") + name(pat)));
      }
    }
  int rotate = 0;
  for (int64_t n : kBigSizes)
    for (Pattern pat : {Pattern::none, Pattern::last, Pattern::middle, Pattern::late, Pattern::random_10}) {
      const OpCase<T> c = op_case<T>(kOps[rotate++ % 7]);
      const auto h = hits(pat, n, uint64_t(n) * 31 + uint64_t(pat));
      ASSERT_NO_FATAL_FAILURE(check_modes(cpu, make_data(c, h), c.pred, std::string("pattern=") + name(pat)));
    }
}

// Random data with many duplicates and the type's edge values, predicates with values from the
// data, the edges (NaN, +-inf, -0.0, the extremes) and random; in_range with lo > hi too.
TYPED_TEST(CpuFind, RandomDataAllOps) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const auto edges = edge_values<T>();
  for (int64_t n : {1, 2, 33, 4097, 3 * 4096 + 5, 50001}) {
    for (int variant = 0; variant < 3; ++variant) {
      std::vector<T> data(static_cast<size_t>(n));
      for (auto& x : data) {
        if (variant == 0) x = small_value<T>(rng, 5);
        else if (variant == 1) x = small_value<T>(rng, 1000);
        else x = rng() % 4 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, 50);
      }
      const auto pick = [&]() -> T {
        switch (rng() % 3) {
          case 0: return data[rng() % data.size()];
          case 1: return edges[rng() % edges.size()];
          default: return small_value<T>(rng, 60);
        }
      };
      for (int q = 0; q < 14; ++q) {
        const T v = pick(), hi = pick();
        const predicate<T> p{kOps[q % 7], v, q % 7 == 6 ? hi : v};
        ASSERT_NO_FATAL_FAILURE(check_modes(cpu, data, p, "random variant=" + std::to_string(variant)));
      }
    }
  }
}

// NaN matches only ne (as an element and as a value); x < NaN is false; -0.0 == 0.0; inf. For
// integers: the extremes.
TYPED_TEST(CpuFind, SpecialValues) {
  using T = TypeParam;
  if constexpr (std::is_floating_point_v<T>) {
    const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
    const std::vector<T> specials{nan, -nan, T(-0.0), T(0), inf, -inf, T(1), T(-1),
                                  std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max()};
    std::mt19937_64 rng(12345);
    for (int64_t n : {1, 33, 4097, 3 * 4096 + 5}) {
      std::vector<std::pair<std::string, std::vector<T>>> sets;
      sets.emplace_back("all-nan", std::vector<T>(size_t(n), nan));
      std::vector<T> nan_then_zero(size_t(n), nan);
      nan_then_zero.back() = T(-0.0);
      sets.emplace_back("nan-then-(-0.0)", nan_then_zero);
      std::vector<T> mixed(static_cast<size_t>(n));
      for (auto& x : mixed) x = specials[rng() % specials.size()];
      sets.emplace_back("mixed", mixed);
      for (const auto& [dname, data] : sets)
        for (find_op op : kOps)
          for (T v : specials)
            for (T hi : op == find_op::in_range ? std::vector<T>{nan, inf, T(0), T(-0.0)} : std::vector<T>{v})
              ASSERT_NO_FATAL_FAILURE(check_modes(cpu, data, predicate<T>{op, v, hi}, dname));
    }
    // Explicitly (not only against the loop).
    const std::vector<T> all_nan(100, nan);
    const span<const T> d(all_nan);
    EXPECT_EQ(gsearch::count(cpu, d, equal_to(nan)), 0);
    EXPECT_EQ(gsearch::count(cpu, d, not_equal_to(nan)), 100);
    EXPECT_EQ(gsearch::count(cpu, d, not_equal_to(T(1))), 100);
    EXPECT_EQ(find_first(cpu, d, not_equal_to(nan)), 0);
    EXPECT_EQ(gsearch::count(cpu, d, less(inf)), 0);
    EXPECT_EQ(gsearch::count(cpu, d, greater_equal(-inf)), 0);
    EXPECT_EQ(gsearch::count(cpu, d, in_range(-inf, inf)), 0);
    EXPECT_EQ(find_first(cpu, d, less_equal(nan)), -1);
    EXPECT_EQ(find_any(cpu, d, greater(nan)), -1);
    EXPECT_EQ(find_random(cpu, d, equal_to(nan), 3), -1);
    const std::vector<T> zeros{T(1), T(-0.0), T(0), nan, inf, -inf};
    const span<const T> z(zeros);
    EXPECT_EQ(find_first(cpu, z, equal_to(T(0))), 1);
    EXPECT_EQ(find_first(cpu, z, equal_to(T(-0.0))), 1);
    EXPECT_EQ(gsearch::count(cpu, z, equal_to(T(-0.0))), 2);
    EXPECT_EQ(gsearch::count(cpu, z, less(T(0))), 1);                  // -inf
    EXPECT_EQ(gsearch::count(cpu, z, less_equal(T(-0.0))), 3);         // -0.0, 0.0, -inf
    EXPECT_EQ(gsearch::count(cpu, z, in_range(T(-0.0), T(0))), 0);     // empty
    EXPECT_EQ(gsearch::count(cpu, z, greater(std::numeric_limits<T>::max())), 1);  // inf
    EXPECT_EQ(find_first(cpu, z, equal_to(inf)), 4);
    EXPECT_EQ(find_first(cpu, z, less_equal(-inf)), 5);
    EXPECT_EQ(gsearch::count(cpu, z, in_range(-inf, inf)), 4);         // not NaN, not inf
    EXPECT_EQ(gsearch::count(cpu, z, not_equal_to(T(0))), 4);          // 1, NaN, inf, -inf
    std::vector<int64_t> out(2);
    EXPECT_EQ(find_all(cpu, z, equal_to(T(0)), span<int64_t>(out)), 2);
    EXPECT_EQ(out, (std::vector<int64_t>{1, 2}));
  } else {
    const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const std::vector<T> data{lo, hi, T(0), hi, lo, T(hi - 1), T(lo + 1)};
    const span<const T> d(data);
    EXPECT_EQ(gsearch::count(cpu, d, greater(hi)), 0);
    EXPECT_EQ(gsearch::count(cpu, d, greater_equal(hi)), 2);
    EXPECT_EQ(gsearch::count(cpu, d, less(lo)), 0);
    EXPECT_EQ(gsearch::count(cpu, d, less_equal(lo)), lo == T(0) ? 3 : 2);  // unsigned: min is 0
    EXPECT_EQ(find_first(cpu, d, equal_to(hi)), 1);
    EXPECT_EQ(find_first(cpu, d, less(T(lo + 1))), 0);
    EXPECT_EQ(gsearch::count(cpu, d, in_range(lo, hi)), 5);
    EXPECT_EQ(gsearch::count(cpu, d, in_range(hi, lo)), 0);
    EXPECT_EQ(gsearch::count(cpu, d, not_equal_to(hi)), 5);
    EXPECT_EQ(gsearch::count(cpu, d, greater_equal(lo)), 7);
    EXPECT_EQ(gsearch::count(cpu, d, less_equal(hi)), 7);
    std::vector<int64_t> out(3, -7);
    EXPECT_EQ(find_all(cpu, d, equal_to(hi), span<int64_t>(out)), 2);
    EXPECT_EQ(out, (std::vector<int64_t>{1, 3, -7}));
    for (find_op op : kOps)
      for (T v : edge_values<T>())
        for (T h : edge_values<T>())
          ASSERT_NO_FATAL_FAILURE(check_modes(cpu, data, predicate<T>{op, v, h}, "extremes"));
  }
}

// Several threads (more than the cores), each with many blocks: the same results as one thread.
template <class T>
void check_thread_counts() {
  const int64_t n = (int64_t(1) << 19) + 3;
  for (Pattern pat : {Pattern::none, Pattern::first, Pattern::last, Pattern::late, Pattern::middle,
                      Pattern::random_10, Pattern::block_ends}) {
    const OpCase<T> c = op_case<T>(find_op::eq);
    const auto data = make_data(c, hits(pat, n, 99));
    for (int threads : {1, 3, 8})
      ASSERT_NO_FATAL_FAILURE(check_modes(cpu.with_threads(threads), data, c.pred,
                                          std::string("pattern=") + name(pat) + " threads=" + std::to_string(threads)));
  }
}
TEST(CpuFindThreads, Int32) { check_thread_counts<int32_t>(); }
TEST(CpuFindThreads, Double) { check_thread_counts<double>(); }

// --- find_random --------------------------------------------------------------------------------

// The chi-square statistic of `counts` against equal expected counts.
double chi_square(const std::vector<int64_t>& counts) {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const double expect = double(total) / double(counts.size());
  double chi = 0;
  for (int64_t c : counts) chi += (double(c) - expect) * (double(c) - expect) / expect;
  return chi;
}

// 20 matches, many fixed seeds: only matches, every match reached, uniform (chi-square with 19
// degrees of freedom below 80, above its 1e-7 quantile of about 71: generous, and it cannot
// flake, the seeds are fixed).
template <class T>
void check_random_uniform(const std::vector<T>& data, const predicate<T>& p, int64_t seeds, const std::string& what) {
  const auto all = plain_find_all(data, p);
  ASSERT_EQ(all.size(), 20u);
  std::vector<int64_t> counts(all.size(), 0);
  for (int64_t s = 0; s < seeds; ++s) {
    const int64_t r = find_random(cpu, span<const T>(data), p, uint64_t(s) * 0x9e3779b97f4a7c15ull + 1);
    const auto it = std::lower_bound(all.begin(), all.end(), r);
    ASSERT_TRUE(it != all.end() && *it == r) << what << ": seed " << s << " gave " << r << ", no match";
    ++counts[size_t(it - all.begin())];
  }
  for (size_t j = 0; j < counts.size(); ++j) EXPECT_GT(counts[j], 0) << what << ": match " << all[j] << " never drawn";
  EXPECT_LT(chi_square(counts), 80.0) << what << " chi-square";
}

// find_all's two ways of writing a block (from the first pass's bits where it is sparse, from
// the data where more than 1 in 16 match) side by side: random matches at densities from 1 in
// 10^4 to all, and blocks of alternating density, over sizes that end inside a block and inside
// a 64-element mask word, on 1 and 2 threads.
TYPED_TEST(CpuFind, FindAllAtEveryDensity) {
  using T = TypeParam;
  std::mt19937_64 rng(4242);
  for (const int64_t n : {int64_t(4096 * 3 + 77), int64_t(4096 * 64 + 4096 - 63)}) {
    for (const double density : {1e-4, 0.01, 0.05, 0.0625, 0.07, 0.5, 1.0, -1.0}) {  // -1: alternating
      std::vector<T> data(static_cast<size_t>(n), T(1));
      for (int64_t i = 0; i < n; ++i) {
        const double d = density >= 0 ? density : (i / 4096) % 2 ? 0.3 : 0.003;
        if (double(rng() % 1000000) < d * 1e6) data[size_t(i)] = T(2);
      }
      for (const int threads : {1, 2}) {
        std::vector<int64_t> out;
        const int64_t got = find_all(cpu_t{threads}, span<const T>(data), equal_to(T(2)), [&](int64_t k) {
          out.assign(size_t(k), -7);
          return out.data();
        });
        ASSERT_EQ(out, plain_find_all(data, equal_to(T(2)))) << "n=" << n << " density=" << density << " threads=" << threads;
        ASSERT_EQ(got, int64_t(out.size()));
      }
    }
  }
}

TYPED_TEST(CpuFind, RandomIsUniformOverSeeds) {
  using T = TypeParam;
  std::vector<T> data(1000, T(1));
  std::mt19937_64 rng(2024);
  int placed = 0;
  while (placed < 20) {
    const size_t i = rng() % data.size();
    if (data[i] != T(7)) data[i] = T(7), ++placed;
  }
  check_random_uniform(data, equal_to(T(7)), 20000, "one block");
}

// Matches spread over several blocks (several in one block, blocks without any), on all threads.
TEST(CpuFindRandom, UniformOverBlocks) {
  std::vector<int32_t> data(3 * 4096 + 5, 1);
  for (int64_t i : {0, 1, 2, 100, 4094, 4095, 4096, 4097, 5000, 6000, 8190, 8191, 8192, 9000, 10000, 11000,
                    12000, 12290, 12291, 12292})
    data[size_t(i)] = -3;
  check_random_uniform(data, less(int32_t(0)), 10000, "multi-block");
}

TYPED_TEST(CpuFind, RandomDeterministicForASeed) {
  using T = TypeParam;
  const int64_t n = 200003;
  const auto data = make_data(op_case<T>(find_op::eq), hits(Pattern::random_10, n, 5));
  const span<const T> d(data);
  const auto all = plain_find_all(data, equal_to(T(20)));
  std::vector<int64_t> seen;
  for (uint64_t seed : {uint64_t(0), uint64_t(1), uint64_t(2), uint64_t(123456789), ~uint64_t(0)}) {
    const int64_t r = find_random(cpu, d, equal_to(T(20)), seed);
    EXPECT_EQ(r, all[size_t(core::random_below(seed, int64_t(all.size())))]) << "seed=" << seed;
    for (int threads : {1, 3})
      EXPECT_EQ(find_random(cpu.with_threads(threads), d, equal_to(T(20)), seed), r) << "seed=" << seed;
    find_options opt;
    opt.seed = seed;
    EXPECT_EQ(find(cpu, find_mode::random, d, equal_to(T(20)), opt), r);
    seen.push_back(r);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_GT(std::unique(seen.begin(), seen.end()) - seen.begin(), 3) << "different seeds, the same draws";
}

// --- the study strategies -----------------------------------------------------------------------

TYPED_TEST(CpuFind, StudyStrategiesEqualDefault) {
  using T = TypeParam;
  int rotate = 0;
  for (int64_t n : {0, 1, 2, 11, 12, 13, 100, 4097, 3 * 4096 + 5, 100003})
    for (Pattern pat : {Pattern::none, Pattern::first, Pattern::last, Pattern::middle, Pattern::every_7th,
                        Pattern::all, Pattern::random_10}) {
      const OpCase<T> c = op_case<T>(kOps[rotate++ % 7]);
      const auto data = make_data(c, hits(pat, n, uint64_t(n) + 7));
      const span<const T> d(data);
      const auto all = plain_find_all(data, c.pred);
      const int64_t first = all.empty() ? -1 : all[0];
      ASSERT_EQ(find_first(cpu, d, c.pred), first);
      for (find_strategy s : kStudyStrategies)
        for (int64_t k : {0, 1, 3, 12, 64}) {
          if (s == find_strategy::one_per_thread && k != 0 && k != 3) continue;  // k is ignored
          const find_options opt{s, k, 0};
          const auto ctx = [&] {
            return std::string(to_string(s)) + " k=" + std::to_string(k) + " n=" + std::to_string(n) +
                   " pattern=" + name(pat) + " pred=" + describe(c.pred);
          };
          ASSERT_EQ(find_first(cpu, d, c.pred, opt), first) << ctx();
          ASSERT_EQ(gsearch::count(cpu, d, c.pred, opt), int64_t(all.size())) << ctx();
          const int64_t any = find_any(cpu, d, c.pred, opt);
          if (all.empty()) ASSERT_EQ(any, -1) << ctx();
          else ASSERT_TRUE(std::binary_search(all.begin(), all.end(), any)) << ctx() << " any=" << any;
        }
    }
}

TEST(CpuFindErrors, StudyStrategyOnlyForFirstAnyCount) {
  const std::vector<int32_t> data{1, 2, 3, 2};
  const span<const int32_t> d(data);
  for (find_strategy s : kStudyStrategies) {
    const find_options opt{s, 4, 9};
    EXPECT_THROW(find(cpu, find_mode::random, d, equal_to(2), opt), invalid_argument) << to_string(s);
    EXPECT_THROW(find_random(cpu, d, equal_to(2), 9, opt), invalid_argument) << to_string(s);
    int64_t r = -7;
    EXPECT_THROW(find(cpu, find_mode::random, d, equal_to(2), span<int64_t>(&r, 1), opt), invalid_argument);
    EXPECT_EQ(r, -7);
    EXPECT_EQ(find_first(cpu, d, equal_to(2), opt), 1);
    EXPECT_EQ(gsearch::count(cpu, d, equal_to(2), opt), 2);
  }
}

// An out-of-range mode or strategy is refused like an unknown op (it once ran as something else).
TEST(CpuFindErrors, UnknownModeOrStrategyThrows) {
  const std::vector<int32_t> data{1, 2, 3};
  const span<const int32_t> d(data);
  int64_t r = -7;
  EXPECT_THROW(find(cpu, find_mode(9), d, equal_to(2), span<int64_t>(&r, 1)), invalid_argument);
  EXPECT_THROW(find(cpu, find_mode(-1), d, equal_to(2)), invalid_argument);
  EXPECT_THROW(find_first(cpu, d, equal_to(2), find_options{find_strategy(9), 0, 0}), invalid_argument);
  EXPECT_THROW(gsearch::count(cpu, d, equal_to(2), find_options{find_strategy(-1), 0, 0}), invalid_argument);
}

TEST(CpuFindErrors, NegativePerThread) {
  const std::vector<double> data{1, 2, 3};
  const span<const double> d(data);
  for (find_strategy s : {find_strategy::auto_, find_strategy::strided, find_strategy::unrolled})
    for (find_mode m : {find_mode::first, find_mode::count}) {
      const find_options opt{s, -1, 0};
      EXPECT_THROW(find(cpu, m, d, equal_to(2.0), opt), invalid_argument) << to_string(s) << " " << to_string(m);
    }
}

// --- find_all -------------------------------------------------------------------------------------

TYPED_TEST(CpuFind, FindAllIntoSpan) {
  using T = TypeParam;
  const int64_t n = 3 * 4096 + 5;
  const auto data = make_data(op_case<T>(find_op::eq), hits(Pattern::every_7th, n, 0));
  const span<const T> d(data);
  const auto all = plain_find_all(data, equal_to(T(20)));
  const int64_t c = int64_t(all.size());
  // Too small: throws, writes nothing.
  for (int64_t size : {int64_t(0), int64_t(1), c - 1}) {
    std::vector<int64_t> out(size_t(size) + 2, -7);  // two guards after the span too
    EXPECT_THROW(find_all(cpu, d, equal_to(T(20)), span<int64_t>(out.data(), size)), invalid_argument) << size;
    EXPECT_EQ(out, std::vector<int64_t>(size_t(size) + 2, -7)) << "written though too small: " << size;
  }
  // Exactly the size; larger (the rest untouched).
  std::vector<int64_t> exact(size_t(c), -7);
  EXPECT_EQ(find_all(cpu, d, equal_to(T(20)), span<int64_t>(exact)), c);
  EXPECT_EQ(exact, all);
  std::vector<int64_t> larger(size_t(c) + 5, -7);
  EXPECT_EQ(find_all(cpu, d, equal_to(T(20)), span<int64_t>(larger)), c);
  EXPECT_TRUE(std::equal(all.begin(), all.end(), larger.begin()));
  EXPECT_EQ(std::count(larger.begin() + c, larger.end(), -7), 5);
  // No match: an empty span is enough, and a null one.
  EXPECT_EQ(find_all(cpu, d, equal_to(T(99)), span<int64_t>()), 0);
  std::vector<int64_t> none(3, -7);
  EXPECT_EQ(find_all(cpu, d, equal_to(T(99)), span<int64_t>(none)), 0);
  EXPECT_EQ(none, std::vector<int64_t>(3, -7));
}

TYPED_TEST(CpuFind, FindAllCallsAllocateOnce) {
  using T = TypeParam;
  for (int64_t n : {0, 1, 4096, 5000})
    for (Pattern pat : {Pattern::none, Pattern::all, Pattern::last}) {
      const auto data = make_data(op_case<T>(find_op::eq), hits(pat, n, 1));
      std::vector<int64_t> asked;
      std::vector<int64_t> out;
      const int64_t c = find_all(cpu, span<const T>(data), equal_to(T(20)), [&](int64_t k) -> int64_t* {
        asked.push_back(k);
        out.assign(size_t(k), -7);
        return k ? out.data() : nullptr;
      });
      const auto all = plain_find_all(data, equal_to(T(20)));
      ASSERT_EQ(asked, std::vector<int64_t>{int64_t(all.size())}) << "n=" << n << " " << name(pat);
      EXPECT_EQ(c, int64_t(all.size()));
      EXPECT_EQ(out, all);
    }
}

// --- argument errors ----------------------------------------------------------------------------

TYPED_TEST(CpuFind, ArgumentErrors) {
  using T = TypeParam;
  const span<const T> null5(nullptr, 5);
  for (find_mode m : {find_mode::first, find_mode::any, find_mode::random, find_mode::count})
    EXPECT_THROW(find(cpu, m, null5, equal_to(T(1))), invalid_argument) << to_string(m);
  std::vector<int64_t> buf(4, -7);
  EXPECT_THROW(find_all(cpu, null5, equal_to(T(1)), span<int64_t>(buf)), invalid_argument);
  EXPECT_THROW(find_all(cpu, null5, equal_to(T(1)), [&](int64_t) { return buf.data(); }), invalid_argument);
  // Null with size 0 is an empty array.
  const span<const T> empty(nullptr, 0);
  EXPECT_EQ(find_first(cpu, empty, equal_to(T(1))), -1);
  EXPECT_EQ(find_any(cpu, empty, equal_to(T(1))), -1);
  EXPECT_EQ(find_random(cpu, empty, equal_to(T(1)), 5), -1);
  EXPECT_EQ(gsearch::count(cpu, empty, equal_to(T(1))), 0);
  EXPECT_EQ(find_all(cpu, empty, equal_to(T(1)), span<int64_t>()), 0);
  // Negative size.
  const std::vector<T> data{T(1), T(2), T(3)};
  EXPECT_THROW(find_first(cpu, span<const T>(data.data(), -1), equal_to(T(1))), invalid_argument);
  // The result span holds exactly one element; nothing is written otherwise.
  for (int64_t size : {0, 2}) {
    EXPECT_THROW(find(cpu, find_mode::first, span<const T>(data), equal_to(T(2)), span<int64_t>(buf.data(), size)),
                 invalid_argument)
        << size;
    EXPECT_EQ(buf, std::vector<int64_t>(4, -7));
  }
  EXPECT_THROW(find(cpu, find_mode::count, span<const T>(data), equal_to(T(2)), span<int64_t>(nullptr, 1)),
               invalid_argument);
  // An op outside the enum.
  EXPECT_THROW(find_first(cpu, span<const T>(data), predicate<T>{find_op(99), T(1), T(1)}), invalid_argument);
  EXPECT_THROW(find_first(cpu, span<const T>(data), predicate<T>{find_op(-1), T(1), T(1)}), invalid_argument);
  // isin: null elements / tests with a size, an output of another size, an unknown method.
  Mask out(3);
  EXPECT_THROW(isin(cpu, span<const T>(nullptr, 3), span<const T>(data), out.view()), invalid_argument);
  EXPECT_THROW(isin(cpu, span<const T>(data), span<const T>(nullptr, 2), out.view()), invalid_argument);
  Mask short_out(2), long_out(4);
  EXPECT_THROW(isin(cpu, span<const T>(data), span<const T>(data), short_out.view()), invalid_argument);
  EXPECT_THROW(isin(cpu, span<const T>(data), span<const T>(data), long_out.view()), invalid_argument);
  EXPECT_THROW(isin(cpu, span<const T>(data), span<const T>(data), span<bool>(nullptr, 3)), invalid_argument);
  EXPECT_THROW(isin(cpu, span<const T>(data), span<const T>(data), out.view(), {false, isin_method(9)}),
               invalid_argument);
  EXPECT_NO_THROW(isin(cpu, span<const T>(nullptr, 0), span<const T>(data), span<bool>(nullptr, 0)));
}

// --- isin: np.isin(elements, test_elements, invert) ---------------------------------------------

// The reference: a plain loop (IEEE ==: NaN is never a member, -0.0 == 0.0) for small inputs,
// else binary search in the sorted non-NaN test elements (operator<, where -0.0 ~ 0.0).
template <class T>
std::vector<char> plain_isin(const std::vector<T>& elements, const std::vector<T>& tests, bool invert) {
  std::vector<char> want(elements.size());
  if (elements.size() * tests.size() <= 4000000) {
    for (size_t i = 0; i < elements.size(); ++i) {
      bool member = false;
      for (T t : tests) member |= t == elements[i];
      want[i] = member != invert;
    }
    return want;
  }
  std::vector<T> sorted;
  for (T t : tests)
    if (t == t) sorted.push_back(t);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < elements.size(); ++i) {
    const T x = elements[i];
    want[i] = (x == x && std::binary_search(sorted.begin(), sorted.end(), x)) != invert;
  }
  return want;
}

template <class T>
void check_isin(const cpu_t& exec, const std::vector<T>& elements, const std::vector<T>& tests,
                const std::string& what) {
  const int64_t n = int64_t(elements.size());
  for (bool invert : {false, true}) {
    const auto want = plain_isin(elements, tests, invert);
    for (isin_method method : kIsinMethods) {
      Mask out(n);
      for (int64_t i = 0; i < n; ++i) out[i] = !want[size_t(i)];  // every element must be written
      isin(exec, span<const T>(elements), span<const T>(tests), out.view(), {invert, method});
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(out[i], bool(want[size_t(i)]))
            << what << " method=" << to_string(method) << (invert ? " invert" : "") << " n=" << n
            << " m=" << tests.size() << " at " << i << " element=" << elements[size_t(i)];
    }
  }
}

TYPED_TEST(CpuFind, IsinMatchesPlainLoop) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  auto edges = edge_values<T>();
  if constexpr (std::is_signed_v<T> && !std::is_floating_point_v<T>) edges.push_back(T(-1));  // all ones
  for (int64_t m : {0, 1, 2, 3, 16, 17, 255, 1000, 4096, 4097, 1 << 16})
    for (int64_t n : {0, 1, 2, 33, 4097, 20000}) {
      if (m >= 4096 && n < 4097) continue;
      // Tests with duplicates and edge values; elements half from the tests, half around them.
      const int range = int(std::min<int64_t>(3 * m + 10, 1 << 20));
      std::vector<T> tests(static_cast<size_t>(m));
      for (auto& t : tests) t = rng() % 8 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, range);
      std::vector<T> elements(static_cast<size_t>(n));
      for (auto& x : elements) {
        const uint64_t r = rng() % 8;
        x = r < 4 && m > 0 ? tests[rng() % tests.size()] : r == 4 ? edges[rng() % edges.size()] : small_value<T>(rng, range);
      }
      ASSERT_NO_FATAL_FAILURE(check_isin(cpu, elements, tests, "random"));
    }
}

TYPED_TEST(CpuFind, IsinSpecialValues) {
  using T = TypeParam;
  std::vector<T> edges = edge_values<T>();
  if constexpr (std::is_signed_v<T> && !std::is_floating_point_v<T>) edges.push_back(T(-1));  // all ones
  // Every subset-like slice of the edges as tests, all edges (each many times) as elements.
  std::vector<T> elements;
  for (int rep = 0; rep < 40; ++rep) elements.insert(elements.end(), edges.begin(), edges.end());
  for (size_t a = 0; a < edges.size(); ++a)
    for (size_t len : {size_t(1), size_t(2), edges.size()}) {
      std::vector<T> tests;
      for (size_t j = 0; j < len; ++j) tests.push_back(edges[(a + j) % edges.size()]);
      ASSERT_NO_FATAL_FAILURE(check_isin(cpu, elements, tests, "edges"));
    }
  // The hash set's empty marker for integers (all-ones bits: -1, or the maximum of an unsigned
  // type) and the maximum, as a needle and as an element.
  std::vector<T> markers{std::numeric_limits<T>::max()};
  if constexpr (!std::is_floating_point_v<T>) markers.push_back(T(~T(0)));
  for (const T mk : markers) {
    const std::vector<T> with_mk{T(0), mk, T(5), mk, T(7)};
    for (const auto& tests : {std::vector<T>{mk}, std::vector<T>{mk, mk, mk}, std::vector<T>{T(5)},
                              std::vector<T>{T(5), mk}, std::vector<T>{T(mk - 1)}, std::vector<T>{T(7), T(1), T(2)}})
      ASSERT_NO_FATAL_FAILURE(check_isin(cpu, with_mk, tests, "marker"));
    for (isin_method method : kIsinMethods) {
      Mask out(5);
      isin(cpu, span<const T>(with_mk), span<const T>(std::vector<T>{mk}), out.view(), {false, method});
      EXPECT_TRUE(!out[0] && out[1] && !out[2] && out[3] && !out[4]) << to_string(method) << " " << mk;
      isin(cpu, span<const T>(with_mk), span<const T>(std::vector<T>{T(5)}), out.view(), {false, method});
      EXPECT_TRUE(!out[0] && !out[1] && out[2] && !out[3] && !out[4]) << to_string(method) << " " << mk;
      isin(cpu, span<const T>(with_mk), span<const T>(std::vector<T>{T(5), mk}), out.view(), {true, method});
      EXPECT_TRUE(out[0] && !out[1] && !out[2] && !out[3] && out[4]) << to_string(method) << " " << mk;
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const std::vector<T> els{nan, T(-0.0), T(0), T(1), -nan};
    for (isin_method method : kIsinMethods) {
      Mask out(5);
      isin(cpu, span<const T>(els), span<const T>(std::vector<T>{nan, T(0)}), out.view(), {false, method});
      EXPECT_TRUE(!out[0] && out[1] && out[2] && !out[3] && !out[4]) << to_string(method);
      isin(cpu, span<const T>(els), span<const T>(std::vector<T>{T(-0.0)}), out.view(), {true, method});
      EXPECT_TRUE(out[0] && !out[1] && !out[2] && out[3] && out[4]) << to_string(method) << " invert";
      isin(cpu, span<const T>(els), span<const T>(std::vector<T>{nan, nan}), out.view(), {false, method});
      EXPECT_TRUE(!out[0] && !out[1] && !out[2] && !out[3] && !out[4]) << to_string(method) << " only NaN";
    }
  }
}

TYPED_TEST(CpuFind, IsinEmptyInputs) {
  using T = TypeParam;
  const std::vector<T> elements{T(1), T(2), T(3)};
  for (isin_method method : kIsinMethods)
    for (bool invert : {false, true}) {
      Mask out(3, !invert);
      isin(cpu, span<const T>(elements), span<const T>(), out.view(), {invert, method});
      EXPECT_TRUE(out[0] == invert && out[1] == invert && out[2] == invert) << to_string(method);
      isin(cpu, span<const T>(), span<const T>(elements), span<bool>(), {invert, method});
      isin(cpu, span<const T>(), span<const T>(), span<bool>(), {invert, method});
    }
}

// Many elements over all threads (chunk edges), many needles (beyond any shared-memory size).
TEST(CpuIsin, ManyElementsAllThreads) {
  std::mt19937_64 rng(77);
  std::vector<int64_t> tests(5000), elements((1 << 18) + 7);
  for (auto& t : tests) t = int64_t(rng() % 20000) - 10000;
  for (auto& x : elements) x = int64_t(rng() % 40000) - 20000;
  elements.back() = std::numeric_limits<int64_t>::max();
  tests.back() = std::numeric_limits<int64_t>::max();
  for (int threads : {1, 3})
    ASSERT_NO_FATAL_FAILURE(check_isin(cpu.with_threads(threads), elements, tests, "threads=" + std::to_string(threads)));
}

}  // namespace
}  // namespace gsearch::test
