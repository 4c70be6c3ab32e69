// The shared pieces of the unsorted search (core/find.hpp) against plain C++: the predicate as
// the scans evaluate it (core::match) against the plain comparison, the study strategies' index
// arithmetic (every element read exactly once), the seeded draw of find_random (always in range,
// uniform by a chi-square test on fixed seeds), isin's sorted membership on every algorithm and
// lane, and the hash set's membership (the empty marker included).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "gsearch/core/find.hpp"
#include "gsearch/core/padding.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

constexpr find_op kOps[] = {find_op::eq, find_op::ne, find_op::lt, find_op::le,
                            find_op::gt, find_op::ge, find_op::in_range};

// The plain comparison, numpy's elementwise semantics (IEEE).
template <class T>
bool plain_match(find_op op, T v, T hi, T x) {
  switch (op) {
    case find_op::eq: return x == v;
    case find_op::ne: return x != v;
    case find_op::lt: return x < v;
    case find_op::le: return x <= v;
    case find_op::gt: return x > v;
    case find_op::ge: return x >= v;
    case find_op::in_range: return v <= x && x < hi;
  }
  return false;
}

template <class T>
predicate<T> make_pred(find_op op, T v, T hi) {
  switch (op) {
    case find_op::eq: return equal_to(v);
    case find_op::ne: return not_equal_to(v);
    case find_op::lt: return less(v);
    case find_op::le: return less_equal(v);
    case find_op::gt: return greater(v);
    case find_op::ge: return greater_equal(v);
    case find_op::in_range: return in_range(v, hi);
  }
  return {};
}

// Values at the edges of T plus a few ordinary ones (duplicates of each other's neighbours).
template <class T>
std::vector<T> match_values() {
  std::vector<T> v = edge_values<T>();
  v.insert(v.end(), {T(2), T(3), T(100)});
  if constexpr (std::is_floating_point_v<T>) {
    v.insert(v.end(), {T(-2.5), T(0.5), std::numeric_limits<T>::min(), -std::numeric_limits<T>::max(),
                       -std::numeric_limits<T>::quiet_NaN()});
  } else {
    v.push_back(std::numeric_limits<T>::max() / 2);
    if constexpr (std::is_signed_v<T>) v.insert(v.end(), {T(-1), T(-100)});
  }
  return v;
}

template <class T>
class CoreFind : public ::testing::Test {};
TYPED_TEST_SUITE(CoreFind, KeyTypes);

TYPED_TEST(CoreFind, PredicateBuildersSetOpAndValues) {
  using T = TypeParam;
  EXPECT_EQ(equal_to(T(3)).op, find_op::eq);
  EXPECT_EQ(not_equal_to(T(3)).op, find_op::ne);
  EXPECT_EQ(less(T(3)).op, find_op::lt);
  EXPECT_EQ(less_equal(T(3)).op, find_op::le);
  EXPECT_EQ(greater(T(3)).op, find_op::gt);
  EXPECT_EQ(greater_equal(T(3)).op, find_op::ge);
  const auto r = in_range(T(3), T(7));
  EXPECT_EQ(r.op, find_op::in_range);
  EXPECT_EQ(r.value, T(3));
  EXPECT_EQ(r.hi, T(7));
}

// core::make_match(p)(x) == the plain comparison, for every op and every (value, hi, x) among
// the edge values: NaN, -0.0, +-inf, denormals, the integer extremes.
TYPED_TEST(CoreFind, MatchEqualsPlainComparison) {
  using T = TypeParam;
  const auto values = match_values<T>();
  for (find_op op : kOps)
    for (T v : values)
      for (T hi : values) {
        if (op != find_op::in_range && hi != values[0]) continue;  // hi matters for in_range only
        const core::match<T> m = core::make_match(make_pred(op, v, op == find_op::in_range ? hi : v));
        for (T x : values)
          ASSERT_EQ(m(x), plain_match(op, v, hi, x))
              << "op=" << to_string(op) << " value=" << v << " hi=" << hi << " x=" << x;
      }
}

TYPED_TEST(CoreFind, MatchRandomValues) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    const T v = small_value<T>(rng, 40), hi = small_value<T>(rng, 40), x = small_value<T>(rng, 40);
    const find_op op = kOps[rng() % 7];
    ASSERT_EQ(core::make_match(make_pred(op, v, hi))(x), plain_match(op, v, hi, x))
        << "op=" << to_string(op) << " value=" << v << " hi=" << hi << " x=" << x;
  }
}

TYPED_TEST(CoreFind, MatchNanZeroInf) {
  using T = TypeParam;
  if constexpr (std::is_floating_point_v<T>) {
    const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
    // A NaN element matches only ne; a NaN value too.
    for (find_op op : kOps) {
      EXPECT_EQ(core::make_match(make_pred(op, T(1), T(2)))(nan), op == find_op::ne) << to_string(op);
      EXPECT_EQ(core::make_match(make_pred(op, nan, nan))(T(1)), op == find_op::ne) << to_string(op);
      EXPECT_EQ(core::make_match(make_pred(op, nan, nan))(nan), op == find_op::ne) << to_string(op);
    }
    EXPECT_FALSE(core::make_match(in_range(T(0), nan))(T(1)));
    EXPECT_FALSE(core::make_match(in_range(nan, T(5)))(T(1)));
    // -0.0 == 0.0.
    EXPECT_TRUE(core::make_match(equal_to(T(0)))(T(-0.0)));
    EXPECT_TRUE(core::make_match(equal_to(T(-0.0)))(T(0)));
    EXPECT_FALSE(core::make_match(not_equal_to(T(-0.0)))(T(0)));
    EXPECT_FALSE(core::make_match(less(T(0)))(T(-0.0)));
    EXPECT_FALSE(core::make_match(greater(T(-0.0)))(T(0)));
    EXPECT_FALSE(core::make_match(in_range(T(-0.0), T(0)))(T(-0.0)));
    EXPECT_TRUE(core::make_match(in_range(T(0), T(1)))(T(-0.0)));
    // inf: the ends of the open intervals are reachable.
    EXPECT_TRUE(core::make_match(less(T(0)))(-inf));
    EXPECT_TRUE(core::make_match(greater(T(0)))(inf));
    EXPECT_FALSE(core::make_match(greater(inf))(inf));
    EXPECT_TRUE(core::make_match(greater_equal(inf))(inf));
    EXPECT_FALSE(core::make_match(less(-inf))(-inf));
    EXPECT_TRUE(core::make_match(less_equal(-inf))(-inf));
    EXPECT_FALSE(core::make_match(in_range(-inf, inf))(inf));
    EXPECT_TRUE(core::make_match(in_range(-inf, inf))(-inf));
  } else {
    const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    EXPECT_FALSE(core::make_match(less(lo))(lo));
    EXPECT_TRUE(core::make_match(less_equal(lo))(lo));
    EXPECT_FALSE(core::make_match(greater(hi))(hi));
    EXPECT_TRUE(core::make_match(greater_equal(hi))(hi));
    EXPECT_TRUE(core::make_match(less_equal(hi))(hi));
    EXPECT_TRUE(core::make_match(greater_equal(lo))(lo));
    EXPECT_FALSE(core::make_match(in_range(lo, hi))(hi));
    EXPECT_TRUE(core::make_match(in_range(lo, hi))(lo));
    EXPECT_TRUE(core::make_match(not_equal_to(hi))(lo));
  }
}

TEST(CoreFindNames, RoundTrip) {
  for (find_op op : kOps) {
    EXPECT_EQ(find_op_from_string(to_string(op)), op);
    EXPECT_EQ(find_op_from_string(to_symbol(op)), op);
  }
  EXPECT_EQ(find_op_from_string("<="), find_op::le);
  EXPECT_EQ(find_op_from_string("in"), find_op::in_range);
  EXPECT_FALSE(find_op_from_string("=").has_value());
  EXPECT_FALSE(find_op_from_string("").has_value());
  for (int s = 0; s <= int(find_strategy::one_per_thread); ++s)
    EXPECT_EQ(find_strategy_from_string(to_string(find_strategy(s))), find_strategy(s));
  EXPECT_EQ(find_strategy_from_string("one-per-thread"), find_strategy::one_per_thread);
  EXPECT_FALSE(find_strategy_from_string("fast").has_value());
  EXPECT_EQ(to_string(find_mode::random), "random");
  EXPECT_EQ(to_string(isin_method::hash), "hash");
}

// --- the study strategies' index arithmetic --------------------------------------------------

TEST(CoreFindStrategy, ThreadsIsCeilDivision) {
  for (int64_t n : {0, 1, 2, 11, 12, 13, 500000})
    for (int64_t k : {1, 3, 12, 64})
      EXPECT_EQ(core::strategy_threads(n, k), n / k + (n % k ? 1 : 0)) << "n=" << n << " k=" << k;
  const int64_t big = (int64_t(1) << 40) + 7;
  EXPECT_EQ(core::strategy_threads(big, 12), big / 12 + 1);
}

TEST(CoreFindStrategy, StridedAndCoalescedLayouts) {
  // strided: thread t reads a contiguous run; coalesced: neighbouring threads read neighbours.
  EXPECT_EQ(core::strided_element(5, 2, 12), 62);
  EXPECT_EQ(core::coalesced_element(5, 2, 100), 205);
  EXPECT_EQ(core::strategy_element(find_strategy::strided, 5, 2, 12, 100), 62);
  EXPECT_EQ(core::strategy_element(find_strategy::coalesced, 5, 2, 12, 100), 205);
  EXPECT_EQ(core::strategy_element(find_strategy::unrolled, 5, 2, 12, 100), 205);
  // 64-bit: no overflow past 2^31.
  const int64_t threads = (int64_t(1) << 31) / 3;
  EXPECT_EQ(core::coalesced_element(threads - 1, 2, threads), 3 * threads - 1);
  EXPECT_EQ(core::strided_element(threads, 11, 12), threads * 12 + 11);
}

// Over threads = strategy_threads(n, k) and steps e < k, the indices i < n cover [0, n) exactly
// once, for every strategy (one_per_thread: k = 1, threads = n).
TEST(CoreFindStrategy, EveryElementExactlyOnce) {
  for (find_strategy s : {find_strategy::strided, find_strategy::coalesced, find_strategy::unrolled,
                          find_strategy::one_per_thread})
    for (int64_t n : {0, 1, 2, 5, 11, 12, 13, 31, 32, 33, 100, 767, 768, 769, 4097, 50001})
      for (int64_t k : {1, 2, 3, 8, 12, 13, 64}) {
        const int64_t kk = s == find_strategy::one_per_thread ? 1 : k;
        const int64_t threads = core::strategy_threads(n, kk);
        std::vector<int> seen(size_t(n), 0);
        int64_t out_of_range_low = 0;
        for (int64_t t = 0; t < threads; ++t)
          for (int64_t e = 0; e < kk; ++e) {
            const int64_t i = core::strategy_element(s, t, e, kk, threads);
            if (i < 0) ++out_of_range_low;
            else if (i < n) ++seen[size_t(i)];
          }
        ASSERT_EQ(out_of_range_low, 0);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(seen[size_t(i)], 1) << to_string(s) << " n=" << n << " k=" << kk << " element " << i;
      }
}

// --- find_random's draw -------------------------------------------------------------------------

// The chi-square statistic of `counts` against equal expected counts.
double chi_square(const std::vector<int64_t>& counts) {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const double expect = double(total) / double(counts.size());
  double chi = 0;
  for (int64_t c : counts) chi += (double(c) - expect) * (double(c) - expect) / expect;
  return chi;
}

TEST(CoreFindRandom, AlwaysBelowN) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> ns{1, 2, 3, 7, 1000, 4097, (int64_t(1) << 31) + 5, (int64_t(1) << 32) + 1,
                                (int64_t(1) << 62) + 1, int64_t(3) << 61, max - 1, max};
  for (int64_t n : ns)
    for (uint64_t seed = 0; seed < 5000; ++seed) {
      const int64_t r = core::random_below(seed * 0x9e3779b97f4a7c15ull + 17, n);
      ASSERT_GE(r, 0) << "n=" << n << " seed=" << seed;
      ASSERT_LT(r, n) << "n=" << n << " seed=" << seed;
    }
  for (uint64_t seed : {uint64_t(0), uint64_t(1), ~uint64_t(0), uint64_t(1) << 63})
    EXPECT_EQ(core::random_below(seed, 1), 0);
}

TEST(CoreFindRandom, DeterministicAndSeedDependent) {
  std::set<int64_t> distinct;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const int64_t r = core::random_below(seed, int64_t(1) << 40);
    EXPECT_EQ(r, core::random_below(seed, int64_t(1) << 40));
    distinct.insert(r);
  }
  EXPECT_GT(distinct.size(), 95u);  // 100 draws from 2^40 values: collisions are ~impossible
  static_assert(core::random_below(42, 10) == core::random_below(42, 10));  // constexpr
}

// Uniform over [0, n): a chi-square test on fixed seeds (so it cannot flake) against a
// generous critical value (the 1e-6 upper quantile is below the bound used).
TEST(CoreFindRandom, UniformChiSquare) {
  struct Case {
    int64_t n;
    double critical;  // chi-square, n - 1 degrees of freedom: far above the 1e-6 quantile
  };
  for (const Case c : {Case{2, 30}, Case{3, 35}, Case{10, 60}, Case{37, 110}, Case{1000, 1300}}) {
    std::vector<int64_t> counts(size_t(c.n), 0);
    const int64_t draws = 200 * c.n;
    for (int64_t s = 0; s < draws; ++s) ++counts[size_t(core::random_below(uint64_t(s) * 7919 + 3, c.n))];
    for (int64_t v = 0; v < c.n; ++v) EXPECT_GT(counts[size_t(v)], 0) << "n=" << c.n << " value " << v;
    EXPECT_LT(chi_square(counts), c.critical) << "n=" << c.n;
  }
  // Huge n (where Lemire's rejection threshold is large): the top of the range is reached as
  // often as the bottom. n = 3 * 2^61 in 3 buckets; n = 2^63 - 1 in 8 buckets; n = 2^62 + 1.
  const int64_t max = std::numeric_limits<int64_t>::max();
  struct Big {
    int64_t n, buckets;
  };
  for (const Big b : {Big{int64_t(3) << 61, 3}, Big{max, 8}, Big{(int64_t(1) << 62) + 1, 4}}) {
    std::vector<int64_t> counts(size_t(b.buckets), 0);
    const int64_t width = b.n / b.buckets + (b.n % b.buckets ? 1 : 0);
    for (uint64_t s = 0; s < 40000; ++s) ++counts[size_t(core::random_below(s, b.n) / width)];
    EXPECT_LT(chi_square(counts), 60) << "n=" << b.n;
  }
}

// --- isin: membership in sorted test elements, every algorithm and lane ------------------------

template <class T>
bool plain_member(const std::vector<T>& tests, T x) {
  for (T t : tests)
    if (t == x) return true;  // IEEE ==: NaN is never a member, -0.0 == 0.0
  return false;
}

template <algorithm A, class T>
void check_sorted_members(const std::vector<T>& sorted, const std::vector<T>& xs) {
  const int64_t k = int64_t(sorted.size());
  const auto padded = core::pad_keys(sorted.data(), k);
  const core::padded_accessor<T> acc{padded.data() + warp_width};
  for (size_t i = 0; i + 4 <= xs.size(); i += 4)
    for (int lane : {0, 1, 17, 31}) {
      const T x[4] = {xs[i], xs[i + 1], xs[i + 2], xs[i + 3]};
      bool member[4];
      core::sorted_members<A>(acc, k, x, lane, member);
      for (int j = 0; j < 4; ++j)
        ASSERT_EQ(member[j], plain_member(sorted, x[j]))
            << to_string(A) << " k=" << k << " lane=" << lane << " x=" << x[j];
    }
}

TYPED_TEST(CoreFind, SortedMembersEveryAlgorithm) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const auto edges = edge_values<T>();
  for (int64_t k : {1, 2, 3, 31, 32, 33, 100, 1025}) {
    std::vector<T> tests(static_cast<size_t>(k));
    for (auto& t : tests) t = rng() % 5 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, 60);
    sort_keys(tests);  // the library's order: NaN last, duplicates kept
    std::vector<T> xs;
    for (int i = 0; i < 200; ++i) xs.push_back(small_value<T>(rng, 80));
    xs.insert(xs.end(), edges.begin(), edges.end());
    while (xs.size() % 4) xs.push_back(T(0));
    check_sorted_members<algorithm::binary>(tests, xs);
    check_sorted_members<algorithm::pbs>(tests, xs);
    check_sorted_members<algorithm::pbs_cf>(tests, xs);
    check_sorted_members<algorithm::pbs_cl>(tests, xs);
  }
}

// --- isin's hash set -------------------------------------------------------------------------

TEST(CoreFindHash, Capacity) {
  EXPECT_EQ(core::hash_set_capacity(0), 16);
  EXPECT_EQ(core::hash_set_capacity(1), 16);
  EXPECT_EQ(core::hash_set_capacity(8), 16);
  EXPECT_EQ(core::hash_set_capacity(9), 32);
  for (int64_t n : {1, 100, 1000, 65536, 65537, 1 << 20}) {
    const int64_t c = core::hash_set_capacity(n);
    EXPECT_GE(c, 2 * n);
    EXPECT_LT(c, std::max<int64_t>(32, 4 * n));
    EXPECT_EQ(c & (c - 1), 0) << "not a power of two: " << c;
  }
}

TYPED_TEST(CoreFind, CanonicalFoldsNegativeZero) {
  using T = TypeParam;
  if constexpr (std::is_floating_point_v<T>) {
    EXPECT_FALSE(std::signbit(core::canonical(T(-0.0))));
    EXPECT_EQ(core::key_bits(core::canonical(T(-0.0))), core::key_bits(T(0)));
    EXPECT_TRUE(std::isnan(core::canonical(std::numeric_limits<T>::quiet_NaN())));
    EXPECT_TRUE(std::signbit(core::canonical(T(-1))));
    EXPECT_EQ(core::hash_set_view<T>::hash(T(-0.0)), core::hash_set_view<T>::hash(T(0)));
  }
  for (T x : edge_values<T>())
    if (x == x && x != T(0)) {
      EXPECT_EQ(core::key_bits(core::canonical(x)), core::key_bits(x));
    }
}

// A set built the documented way (hash_set_capacity(m) slots of empty_key(), linear probing from
// hash(x) & mask, an integer key with the empty bits kept in the flag): contains() agrees with
// the plain loop for members and non-members, NaN and the empty marker included.
template <class T>
struct built_set {
  std::vector<T> slots;
  core::hash_set_view<T> view;
};

template <class T>
built_set<T> build_set(const std::vector<T>& keys) {
  using set = core::hash_set_view<T>;
  built_set<T> b;
  b.slots.assign(size_t(core::hash_set_capacity(int64_t(keys.size()))), set::empty_key());
  b.view = set{b.slots.data(), uint64_t(b.slots.size()) - 1, false};
  for (T k : keys) {
    const T x = core::canonical(k);
    if (x != x) continue;
    if constexpr (!std::is_floating_point_v<T>)
      if (core::key_bits(x) == core::key_bits(set::empty_key())) {
        b.view.holds_empty_key = true;
        continue;
      }
    for (uint64_t s = set::hash(x) & b.view.mask;; s = (s + 1) & b.view.mask) {
      if (set::is_empty(b.slots[s])) {
        b.slots[s] = x;
        break;
      }
      if (b.slots[s] == x) break;
    }
  }
  b.view.slots = b.slots.data();
  return b;
}

TYPED_TEST(CoreFind, HashSetContains) {
  using T = TypeParam;
  using set = core::hash_set_view<T>;
  // Empty slots hold all-ones bits (a table is filled with memset 0xFF): a NaN for floats.
  EXPECT_EQ(core::key_bits(set::empty_key()), ~core::key_bits_t<T>(0));
  EXPECT_TRUE(set::is_empty(set::empty_key()));
  if constexpr (std::is_floating_point_v<T>) {
    EXPECT_TRUE(std::isnan(set::empty_key()));
  }
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  auto edges = edge_values<T>();
  if constexpr (std::is_signed_v<T> && !std::is_floating_point_v<T>) edges.push_back(T(-1));  // all ones
  const auto load = [](const T* p) { return *p; };
  for (int64_t m : {0, 1, 2, 7, 8, 9, 100, 5000}) {
    for (bool with_edges : {false, true}) {
      std::vector<T> keys(static_cast<size_t>(m));
      for (auto& k : keys) k = with_edges && rng() % 3 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, 4 * int(m) + 4);
      const auto b = build_set(keys);
      std::vector<T> xs = edges;
      for (int i = 0; i < 300; ++i) xs.push_back(small_value<T>(rng, 4 * int(m) + 8));
      for (T x : xs)
        ASSERT_EQ(b.view.contains(x, load), plain_member(keys, x))
            << "m=" << m << " x=" << x << (with_edges ? " (edge values among the keys)" : "");
    }
  }
  // The empty marker (all-ones bits: -1 or the maximum) and the maximum, as keys and as queries.
  const T mx = std::numeric_limits<T>::max();
  std::vector<T> markers{set::empty_key(), mx, T(mx - 1)};
  if constexpr (!std::is_floating_point_v<T>) markers.push_back(T(~T(0)));
  for (T marker : markers) {
    if (marker != marker) continue;  // the float marker is a NaN, never a member
    EXPECT_TRUE(build_set<T>({marker}).view.contains(marker, load)) << marker;
    EXPECT_FALSE(build_set<T>({T(1)}).view.contains(marker, load)) << marker;
    EXPECT_TRUE(build_set<T>({T(1), marker}).view.contains(T(1), load)) << marker;
    EXPECT_TRUE(build_set<T>({T(1), marker, T(2)}).view.contains(marker, load)) << marker;
    EXPECT_FALSE(build_set<T>({T(1), marker, T(2)}).view.contains(T(3), load)) << marker;
  }
  if constexpr (std::is_floating_point_v<T>) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    EXPECT_FALSE(build_set<T>({nan, T(1)}).view.contains(nan, load));
    EXPECT_TRUE(build_set<T>({T(-0.0)}).view.contains(T(0), load));
    EXPECT_TRUE(build_set<T>({T(0)}).view.contains(T(-0.0), load));
  }
}

}  // namespace
}  // namespace gsearch::test
