// core/static_index.hpp: the S+ tree's shape worked out by hand for small n; the layout checked
// slot by slot against its definition (leaves = padded keys, separator = first key of the next
// child's subtree); and static_index_rank against std::lower_bound / upper_bound in key_less order, for
// the six key types, B = 16 and 32, sizes around each level boundary and random sizes, heavy
// duplicates, all-equal keys, the edge values (lowest, highest, NaN, +-inf, -0.0) as keys and
// queries. Every layout read is bounds-checked.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "gsearch/core/static_index.hpp"
#include "test_util.hpp"

namespace {

using gsearch::key_less;
using gsearch::key_traits;
using gsearch::side;
using gsearch::core::static_index_build;
using gsearch::core::static_index_rank;
using gsearch::core::static_index_ranks;
using gsearch::core::static_index_shape;
using gsearch::core::static_index_slot;
using gsearch::test::reference;

// ---- shape arithmetic, by hand ----------------------------------------------------------------

template <int B>
void expect_shape(int64_t n, std::vector<int64_t> offsets) {
  const static_index_shape<B> s(n);
  ASSERT_EQ(s.levels + 1, int(offsets.size())) << "B=" << B << " n=" << n;
  for (int h = 0; h <= s.levels; ++h) EXPECT_EQ(s.offset[h], offsets[size_t(h)]) << "n=" << n << " h=" << h;
  EXPECT_EQ(s.size(), offsets.back());
  EXPECT_EQ(s.offset[0], 0);
  EXPECT_EQ(s.nodes(s.levels - 1), 1) << "one root";
}

TEST(StaticIndexShape, ByHand) {
  // B = 16: a leaf holds 16 keys, an internal node has 17 children.
  expect_shape<16>(0, {0, 16});  // one leaf of padding
  expect_shape<16>(1, {0, 16});
  expect_shape<16>(16, {0, 16});
  expect_shape<16>(17, {0, 32, 48});             // 2 leaves, a root
  expect_shape<16>(16 * 17 - 1, {0, 272, 288});  // 17 leaves: the root's 17 children
  expect_shape<16>(16 * 17, {0, 272, 288});
  expect_shape<16>(16 * 17 + 1, {0, 288, 320, 336});                // 18 leaves, 2 nodes, a root
  expect_shape<16>(16 * 17 * 17, {0, 4624, 4896, 4912});            // 289 leaves, 17 nodes, a root
  expect_shape<16>(16 * 17 * 17 + 1, {0, 4640, 4928, 4960, 4976});  // 290, 18, 2, 1
  // B = 32.
  expect_shape<32>(0, {0, 32});
  expect_shape<32>(32, {0, 32});
  expect_shape<32>(33, {0, 64, 96});
  expect_shape<32>(32 * 33, {0, 1056, 1088});
  expect_shape<32>(32 * 33 + 1, {0, 1088, 1152, 1184});
  // B = 2, small enough to draw: 7 keys = 4 leaves, 2 nodes, a root.
  expect_shape<2>(7, {0, 8, 12, 14});
}

TEST(StaticIndexShape, LevelsAreLogarithmic) {
  // levels = 1 + ceil(log_{B+1}(leaves)); the levels above the leaves add about n / B slots.
  for (int64_t n : {int64_t{1000}, int64_t{1} << 20, int64_t{1} << 24, int64_t{1} << 32, int64_t{1} << 40,
                    int64_t{1} << 62}) {
    const static_index_shape<16> s(n);
    int64_t leaves = (n + 15) / 16, cover = 1;
    int levels = 1;
    while (cover < leaves) cover *= 17, ++levels;
    EXPECT_EQ(s.levels, levels) << n;
    EXPECT_LE(s.size(), n + n / 16 + 16 * (s.levels + 1)) << n;
    EXPECT_LE(s.levels, static_index_shape<16>::max_levels);
  }
  constexpr static_index_shape<32> c(1000000);  // usable in constant expressions
  static_assert(c.levels == 4 && c.offset[0] == 0);
}

// B = 2, keys 10, 20, ..., 70: leaves [10 20][30 40][50 60][70 pad]; level 1 has node 0 over
// leaves 0-2, [30 50], and node 1 over leaf 3 alone, [pad pad] (its children 1 and 2 are
// missing); the root over the two: [70 pad].
TEST(StaticIndexLayout, SmallByHand) {
  const std::vector<int32_t> keys{10, 20, 30, 40, 50, 60, 70};
  const static_index_shape<2> s(7);
  std::vector<int32_t> layout(size_t(s.size()));
  static_index_build([&](int64_t i) { return keys[size_t(i)]; }, s, layout.data(), 0, s.size());
  constexpr int32_t pad = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(layout, (std::vector<int32_t>{10, 20, 30, 40, 50, 60, 70, pad, 30, 50, pad, pad, 70, pad}));
}

// ---- search against the reference ------------------------------------------------------------

template <class T_, int B_>
struct cfg {
  using T = T_;
  static constexpr int B = B_;
};
// B = 16 / 8: a 64-byte CPU line of 4- / 8-byte keys; 8 / 4: a 32-byte GPU sector; 32: both.
using Configs = ::testing::Types<cfg<int32_t, 16>, cfg<uint32_t, 16>, cfg<int64_t, 16>, cfg<uint64_t, 16>,
                                 cfg<float, 16>, cfg<double, 16>, cfg<int32_t, 32>, cfg<uint32_t, 32>,
                                 cfg<int64_t, 32>, cfg<uint64_t, 32>, cfg<float, 32>, cfg<double, 32>,
                                 cfg<int32_t, 8>, cfg<float, 8>, cfg<int64_t, 4>, cfg<double, 4>,
                                 cfg<uint64_t, 8>, cfg<double, 8>>;

template <class C>
class StaticIndex : public ::testing::Test {};
TYPED_TEST_SUITE(StaticIndex, Configs);

// Equal in the library's order: NaN == NaN, -0.0 == 0.0.
template <class T>
bool same_key(T a, T b) {
  return !key_less(a, b) && !key_less(b, a);
}

// The layout, read through a bounds-checking accessor.
template <class T, int B>
struct tree {
  static_index_shape<B> shape;
  std::vector<T> slots;
  mutable bool out_of_bounds = false;

  explicit tree(const std::vector<T>& keys) : shape(int64_t(keys.size())), slots(size_t(shape.size())) {
    static_index_build([&](int64_t i) { return keys[size_t(i)]; }, shape, slots.data(), 0, shape.size());
  }
  T operator()(int64_t s) const {
    if (s < 0 || s >= shape.size()) {
      out_of_bounds = true;
      return T{};
    }
    return slots[size_t(s)];
  }
};

// The layout against its definition, slot by slot.
template <class T, int B>
void check_layout(const tree<T, B>& t, const std::vector<T>& keys) {
  const auto& s = t.shape;
  const int64_t n = int64_t(keys.size());
  const T pad = key_traits<T>::highest();
  for (int64_t i = 0; i < s.offset[1]; ++i) {
    ASSERT_TRUE(same_key(t.slots[size_t(i)], i < n ? keys[size_t(i)] : pad)) << "leaf slot " << i;
  }
  int64_t span = 1;  // leaves under a node of level h - 1
  for (int h = 1; h < s.levels; ++h, span *= B + 1) {
    for (int64_t i = 0; i < s.offset[h + 1] - s.offset[h]; ++i) {
      const int64_t child = (i / B) * (B + 1) + i % B + 1;  // of level h - 1
      const int64_t first = child * span * B;
      const T want = first < n ? keys[size_t(first)] : pad;
      ASSERT_TRUE(same_key(t.slots[size_t(s.offset[h] + i)], want)) << "level " << h << " slot " << i;
    }
  }
}

// Every query against std::lower_bound / std::upper_bound.
template <class T, int B>
void check_search(const std::vector<T>& keys, const std::vector<T>& queries) {
  const tree<T, B> t(keys);
  check_layout(t, keys);
  for (T q : queries) {
    ASSERT_EQ(static_index_rank<true>(t, t.shape, q), reference(keys, q, side::left))
        << "lower_bound q=" << +q << " n=" << keys.size();
    ASSERT_EQ(static_index_rank<false>(t, t.shape, q), reference(keys, q, side::right))
        << "upper_bound q=" << +q << " n=" << keys.size();
  }
  ASSERT_FALSE(t.out_of_bounds) << "n=" << keys.size();
  // The lockstep form, 5 queries at a time (the last group padded with the first query).
  constexpr int N = 5;
  for (size_t j = 0; j < queries.size(); j += N) {
    T q[N];
    for (int i = 0; i < N; ++i) q[i] = queries[j + size_t(i) < queries.size() ? j + size_t(i) : 0];
    int64_t lower[N], upper[N];
    static_index_ranks<true>(t, t.shape, q, lower);
    static_index_ranks<false>(t, t.shape, q, upper);
    for (int i = 0; i < N; ++i) {
      ASSERT_EQ(lower[i], reference(keys, q[i], side::left)) << "lockstep lower_bound q=" << +q[i] << " n=" << keys.size();
      ASSERT_EQ(upper[i], reference(keys, q[i], side::right)) << "lockstep upper_bound q=" << +q[i] << " n=" << keys.size();
    }
  }
  ASSERT_FALSE(t.out_of_bounds) << "lockstep, n=" << keys.size();
}

// Queries: every key, its neighbours in T, the edge values, and random values.
template <class T>
std::vector<T> queries_for(const std::vector<T>& keys, std::mt19937_64& rng, size_t random = 64) {
  std::vector<T> q = gsearch::test::edge_values<T>();
  q.push_back(key_traits<T>::lowest());
  q.push_back(key_traits<T>::highest());
  const size_t step = keys.size() > 4096 ? keys.size() / 4096 : 1;  // every key of small lists
  for (size_t i = 0; i < keys.size(); i += step) {
    const T k = keys[i];
    q.push_back(k);
    if constexpr (std::is_floating_point_v<T>) {
      q.push_back(std::nextafter(k, -std::numeric_limits<T>::infinity()));
      q.push_back(std::nextafter(k, std::numeric_limits<T>::infinity()));
    } else {
      using U = std::make_unsigned_t<T>;  // wraps at the ends: another valid query
      q.push_back(T(U(k) - 1));
      q.push_back(T(U(k) + 1));
    }
  }
  for (size_t i = 0; i < random; ++i) q.push_back(gsearch::test::small_value<T>(rng, 1000));
  return q;
}

// Random keys: a small range (heavy duplicates), or any bit pattern (NaNs and infinities
// included for floats).
template <class T>
std::vector<T> random_keys(std::mt19937_64& rng, int64_t n, bool duplicates) {
  std::vector<T> v(size_t(n), T{});
  for (T& x : v) {
    if (duplicates) {
      x = gsearch::test::small_value<T>(rng, 50);
    } else {
      const uint64_t bits = rng();
      std::memcpy(&x, &bits, sizeof(T));
    }
  }
  gsearch::test::sort_keys(v);
  return v;
}

template <class T, int B>
std::vector<int64_t> sizes() {
  std::vector<int64_t> n{0, 1, 2, 3, B - 1, B, B + 1, 2 * B, 2 * B + 1};
  for (int64_t base : {int64_t(B) * (B + 1), int64_t(B) * (B + 1) * (B + 1)}) {
    n.insert(n.end(), {base - 1, base, base + 1, base + B, base + B + 1});
  }
  return n;
}

TYPED_TEST(StaticIndex, SizesAroundLevelBoundaries) {
  using T = typename TypeParam::T;
  constexpr int B = TypeParam::B;
  std::mt19937_64 rng(gsearch::test::test_seed());
  for (int64_t n : sizes<T, B>()) {
    for (bool duplicates : {false, true}) {
      const auto keys = random_keys<T>(rng, n, duplicates);
      check_search<T, B>(keys, queries_for(keys, rng));
      if (this->HasFatalFailure()) return;
    }
  }
}

TYPED_TEST(StaticIndex, RandomSizes) {
  using T = typename TypeParam::T;
  constexpr int B = TypeParam::B;
  std::mt19937_64 rng(gsearch::test::test_seed());
  for (int rep = 0; rep < 12; ++rep) {
    const int64_t n = int64_t(rng() % (rep < 8 ? 5000 : 100000)) + 1;
    const auto keys = random_keys<T>(rng, n, rep % 2 == 1);
    check_search<T, B>(keys, queries_for(keys, rng, 2000));
    if (this->HasFatalFailure()) return;
  }
}

TYPED_TEST(StaticIndex, AllEqualKeys) {
  using T = typename TypeParam::T;
  constexpr int B = TypeParam::B;
  std::mt19937_64 rng(gsearch::test::test_seed());
  for (int64_t n : sizes<T, B>()) {
    for (T v : gsearch::test::edge_values<T>()) {
      const std::vector<T> keys(size_t(n), v);
      check_search<T, B>(keys, gsearch::test::edge_values<T>());
      if (this->HasFatalFailure()) return;
    }
  }
}

// The padding value as a key: highest() keys sit among the padding and must be counted, the
// padding never; lowest() keys at the front; queries below and above all keys.
TYPED_TEST(StaticIndex, EdgeValuesAsKeys) {
  using T = typename TypeParam::T;
  constexpr int B = TypeParam::B;
  std::mt19937_64 rng(gsearch::test::test_seed());
  const T lo = key_traits<T>::lowest(), hi = key_traits<T>::highest();
  for (int64_t n : sizes<T, B>()) {
    for (int64_t ends : {int64_t{1}, int64_t{B} - 1, int64_t{B} + 3}) {
      std::vector<T> keys = random_keys<T>(rng, n, true);
      for (int64_t i = 0; i < std::min(ends, n); ++i) {
        keys[size_t(i)] = lo;
        keys[size_t(n - 1 - i)] = hi;
      }
      gsearch::test::sort_keys(keys);
      check_search<T, B>(keys, queries_for(keys, rng, 16));
      if (this->HasFatalFailure()) return;
    }
  }
}

// Floats: NaN, infinities and both zeros, mixed, as keys and queries.
TYPED_TEST(StaticIndex, FloatSpecials) {
  using T = typename TypeParam::T;
  constexpr int B = TypeParam::B;
  if constexpr (std::is_floating_point_v<T>) {
    std::mt19937_64 rng(gsearch::test::test_seed());
    using lim = std::numeric_limits<T>;
    const T nan = lim::quiet_NaN(), inf = lim::infinity();
    const std::vector<T> specials{nan,       -nan, inf, -inf, T(0.0), T(-0.0), T(1), T(-1), lim::denorm_min(),
                                  lim::max()};
    for (int64_t n : sizes<T, B>()) {
      std::vector<T> keys(static_cast<size_t>(n));
      for (T& x : keys) x = specials[rng() % specials.size()];
      gsearch::test::sort_keys(keys);
      check_search<T, B>(keys, specials);
      if (this->HasFatalFailure()) return;
    }
  }
}

// The handle: a view of a built layout that answers one query at a time.
TEST(StaticIndexRef, SearchesItsLayout) {
  std::vector<double> keys{-1.5, 0.0, 0.0, 2.0, 7.0, std::numeric_limits<double>::quiet_NaN()};
  const static_index_shape<4> shape(int64_t(keys.size()));
  std::vector<double> layout(size_t(shape.size()));
  static_index_build([&](int64_t i) { return keys[size_t(i)]; }, shape, layout.data(), 0, shape.size());
  const gsearch::core::static_index_ref<double, 4> ref{layout.data(), shape};
  static_assert(std::is_trivially_copyable_v<decltype(ref)>);
  EXPECT_EQ(ref.size(), 6);
  EXPECT_EQ(ref.lower_bound(0.0), 1);
  EXPECT_EQ(ref.upper_bound(-0.0), 3);
  EXPECT_EQ(ref.predecessor(-2.0), -1);
  EXPECT_EQ(ref.predecessor(100.0), 4);
  EXPECT_EQ(ref.lower_bound(std::numeric_limits<double>::quiet_NaN()), 5);
  EXPECT_EQ(ref.upper_bound(std::numeric_limits<double>::quiet_NaN()), 6);
}

}  // namespace
