// core/merge_path.hpp against std::merge and the definition of Balanced Path: every diagonal of
// every pair of small sorted inputs with heavy duplicates (values 0..3), and random larger ones;
// the set operations and the sorted search cut into tiles of every width, each tile's serial
// loop between its splits, concatenated, against std::set_* and std::lower_bound / upper_bound.
// And a host replay of the GPU kernels' tiles and threads on unsorted inputs (check_sorted off):
// every slice non-negative and inside its tile, every tile's outputs inside its staged arrays.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "gsearch/core/merge_path.hpp"
#include "gsearch/core/set_ops.hpp"
#include "gsearch/core/sorted_search.hpp"
#include "merge/tuning.hpp"
#include "merge_cases.hpp"

namespace {

using gsearch::core::balanced_path;
using gsearch::core::merge_path;
using gsearch::core::serial_merge;
using gsearch::set_op;

struct acc {
  const std::vector<int>* v;
  int operator()(int64_t i) const { return (*v)[size_t(i)]; }
};

// The stable merge as (value, from A, index) triples: std::merge keeps A's copy first on ties.
struct item {
  int value;
  bool from_a;
  int64_t index;
};
std::vector<item> reference_merge(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<item> ia, ib, out(a.size() + b.size());
  for (size_t i = 0; i < a.size(); ++i) ia.push_back({a[i], true, int64_t(i)});
  for (size_t i = 0; i < b.size(); ++i) ib.push_back({b[i], false, int64_t(i)});
  std::merge(ia.begin(), ia.end(), ib.begin(), ib.end(), out.begin(),
             [](const item& x, const item& y) { return x.value < y.value; });
  return out;
}

std::vector<int> sorted_random(std::mt19937& g, int n, int range) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int& x : v) x = int(g() % unsigned(range));
  std::sort(v.begin(), v.end());
  return v;
}

void check_merge_path(const std::vector<int>& a, const std::vector<int>& b) {
  const auto ref = reference_merge(a, b);
  const int64_t na = int64_t(a.size()), nb = int64_t(b.size());
  int64_t from_a = 0;
  for (int64_t d = 0; d <= na + nb; ++d) {
    ASSERT_EQ(merge_path(acc{&a}, na, acc{&b}, nb, d), from_a) << "d=" << d;
    // The serial merge from this split reproduces the rest of the reference.
    const int64_t i = from_a, j = d - from_a, count = na + nb - d;
    serial_merge(acc{&a}, na, acc{&b}, nb, i, j, count, [&](int64_t k, bool is_a, int64_t index) {
      const item& r = ref[size_t(d + k)];
      ASSERT_EQ(is_a, r.from_a) << "d=" << d << " k=" << k;
      ASSERT_EQ(index, r.index) << "d=" << d << " k=" << k;
    });
    if (d < na + nb && ref[size_t(d)].from_a) ++from_a;
  }
}

// Balanced Path's definition: the prefix (a_index of A, diag - a_index + star of B) holds
// diag + star elements, no element of it comes after one outside it, and each key's copies are
// paired by rank (equal counts, or the side with more has passed all of the other's copies).
void check_balanced_path(const std::vector<int>& a, const std::vector<int>& b) {
  const int64_t na = int64_t(a.size()), nb = int64_t(b.size());
  std::map<int, int64_t> total_a, total_b;
  for (int x : a) ++total_a[x];
  for (int x : b) ++total_b[x];
  int64_t last_a = 0, last_b = 0;
  for (int64_t d = 0; d <= na + nb; ++d) {
    const auto s = balanced_path(acc{&a}, na, acc{&b}, nb, d);
    const int64_t ai = s.a_index, bi = d - s.a_index + (s.star ? 1 : 0);
    ASSERT_TRUE(ai >= 0 && ai <= na && bi >= 0 && bi <= nb) << "d=" << d;
    ASSERT_TRUE(ai >= last_a && bi >= last_b) << "d=" << d << ": not monotone";
    last_a = ai;
    last_b = bi;
    int max_in = INT32_MIN, min_out = INT32_MAX;
    if (ai > 0) max_in = std::max(max_in, a[size_t(ai - 1)]);
    if (bi > 0) max_in = std::max(max_in, b[size_t(bi - 1)]);
    if (ai < na) min_out = std::min(min_out, a[size_t(ai)]);
    if (bi < nb) min_out = std::min(min_out, b[size_t(bi)]);
    ASSERT_LE(max_in, min_out) << "d=" << d;
    std::map<int, int64_t> in_a, in_b;
    for (int64_t i = 0; i < ai; ++i) ++in_a[a[size_t(i)]];
    for (int64_t i = 0; i < bi; ++i) ++in_b[b[size_t(i)]];
    for (const auto& [x, ta] : total_a) {
      const int64_t ca = in_a[x], cb = in_b[x], tb = total_b.count(x) ? total_b[x] : 0;
      ASSERT_TRUE(ca == cb || (ca > cb && cb == tb) || (cb > ca && ca == ta))
          << "d=" << d << " key " << x << ": " << ca << " of A, " << cb << " of B";
    }
    for (const auto& [x, tb] : total_b) {
      const int64_t ca = in_a[x], cb = in_b[x], ta = total_a.count(x) ? total_a[x] : 0;
      ASSERT_TRUE(ca == cb || (ca > cb && cb == tb) || (cb > ca && ca == ta))
          << "d=" << d << " key " << x << ": " << ca << " of A, " << cb << " of B";
    }
  }
}

TEST(MergePath, EveryDiagonalOfSmallInputs) {
  std::mt19937 g(7);
  for (int na = 0; na <= 9; ++na)
    for (int nb = 0; nb <= 9; ++nb)
      for (int trial = 0; trial < 6; ++trial) {
        const auto a = sorted_random(g, na, 4), b = sorted_random(g, nb, 4);
        check_merge_path(a, b);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

TEST(MergePath, RandomLargerInputs) {
  std::mt19937 g(11);
  for (int trial = 0; trial < 20; ++trial) {
    const auto a = sorted_random(g, int(g() % 300), 1 + int(g() % 50));
    const auto b = sorted_random(g, int(g() % 300), 1 + int(g() % 50));
    check_merge_path(a, b);
    if (HasFatalFailure()) return;
  }
}

TEST(BalancedPath, EveryDiagonalOfSmallInputs) {
  std::mt19937 g(13);
  for (int na = 0; na <= 9; ++na)
    for (int nb = 0; nb <= 9; ++nb)
      for (int trial = 0; trial < 6; ++trial) {
        const auto a = sorted_random(g, na, 3), b = sorted_random(g, nb, 3);
        check_balanced_path(a, b);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

TEST(BalancedPath, AllEqualAndDisjoint) {
  for (int na = 0; na <= 12; ++na)
    for (int nb = 0; nb <= 12; ++nb) {
      check_balanced_path(std::vector<int>(size_t(na), 5), std::vector<int>(size_t(nb), 5));
      std::vector<int> lo(static_cast<size_t>(na)), hi(static_cast<size_t>(nb));
      for (int i = 0; i < na; ++i) lo[size_t(i)] = i;
      for (int i = 0; i < nb; ++i) hi[size_t(i)] = 100 + i;
      check_balanced_path(lo, hi);
      check_balanced_path(hi, lo);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// --- set operations: set_tile_ranges + serial_set_op ------------------------------------------

// std::set_* on (value, from A, index) items compared by value: which copy each output element is,
// per the C++ rules (A's copies for pairs; the last m - n copies of the side with more).
std::vector<std::pair<bool, int64_t>> reference_set_op(set_op op, const std::vector<int>& a,
                                                       const std::vector<int>& b) {
  std::vector<item> ia, ib, out;
  for (size_t i = 0; i < a.size(); ++i) ia.push_back({a[i], true, int64_t(i)});
  for (size_t i = 0; i < b.size(); ++i) ib.push_back({b[i], false, int64_t(i)});
  const auto by_value = [](const item& x, const item& y) { return x.value < y.value; };
  auto o = std::back_inserter(out);
  switch (op) {
    case set_op::intersection: std::set_intersection(ia.begin(), ia.end(), ib.begin(), ib.end(), o, by_value); break;
    case set_op::union_: std::set_union(ia.begin(), ia.end(), ib.begin(), ib.end(), o, by_value); break;
    case set_op::difference: std::set_difference(ia.begin(), ia.end(), ib.begin(), ib.end(), o, by_value); break;
    case set_op::symmetric_difference:
      std::set_symmetric_difference(ia.begin(), ia.end(), ib.begin(), ib.end(), o, by_value);
      break;
  }
  std::vector<std::pair<bool, int64_t>> r;
  for (const item& x : out) r.emplace_back(x.from_a, x.index);
  return r;
}

// The tiles of width `width` over the diagonals [0, na + nb), each running serial_set_op on its
// set_tile_ranges, concatenated.
std::vector<std::pair<bool, int64_t>> tiled_set_op(set_op op, const std::vector<int>& a,
                                                   const std::vector<int>& b, int64_t width) {
  const int64_t na = int64_t(a.size()), nb = int64_t(b.size());
  std::vector<std::pair<bool, int64_t>> r;
  int64_t last_a1 = 0, last_b1 = 0;
  for (int64_t d0 = 0; d0 < na + nb; d0 += width) {
    const auto t = gsearch::core::set_tile_ranges(acc{&a}, na, acc{&b}, nb, d0, d0 + width);
    // Consecutive tiles meet exactly; the last ends at (na, nb).
    EXPECT_EQ(t.a0, last_a1) << "d0=" << d0;
    EXPECT_EQ(t.b0, last_b1) << "d0=" << d0;
    EXPECT_TRUE(t.a0 <= t.a1 && t.b0 <= t.b1) << "d0=" << d0;
    last_a1 = t.a1;
    last_b1 = t.b1;
    gsearch::core::visit_set_op(op, [&]<set_op Op>() {
      gsearch::core::serial_set_op<Op>(acc{&a}, t.a0, t.a1, acc{&b}, t.b0, t.b1,
                                       [&](bool from_a, int64_t i) { r.emplace_back(from_a, i); });
    });
  }
  EXPECT_EQ(last_a1, na);
  EXPECT_EQ(last_b1, nb);
  return r;
}

constexpr set_op kSetOps[] = {set_op::intersection, set_op::union_, set_op::difference,
                              set_op::symmetric_difference};

void check_set_ops(const std::vector<int>& a, const std::vector<int>& b) {
  const int64_t total = int64_t(a.size() + b.size());
  for (set_op op : kSetOps) {
    const auto want = reference_set_op(op, a, b);
    ASSERT_LE(int64_t(want.size()), gsearch::core::set_op_bound(op, int64_t(a.size()), int64_t(b.size())));
    for (int64_t width = 1; width <= std::max<int64_t>(total, 1); ++width) {
      const auto got = tiled_set_op(op, a, b, width);
      ASSERT_EQ(got, want) << gsearch::to_string(op) << " width=" << width << " na=" << a.size()
                           << " nb=" << b.size();
    }
  }
}

TEST(SetOps, EveryTileWidthOfSmallMultisets) {
  std::mt19937 g(17);
  for (int na = 0; na <= 9; ++na)
    for (int nb = 0; nb <= 9; ++nb)
      for (int trial = 0; trial < 4; ++trial) {
        const auto a = sorted_random(g, na, 1 + trial), b = sorted_random(g, nb, 1 + trial);
        check_set_ops(a, b);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

TEST(SetOps, RandomLargerMultisets) {
  std::mt19937 g(19);
  for (int trial = 0; trial < 12; ++trial) {
    const auto a = sorted_random(g, int(g() % 60), 1 + int(g() % 12));
    const auto b = sorted_random(g, int(g() % 60), 1 + int(g() % 12));
    check_set_ops(a, b);
    if (HasFatalFailure()) return;
  }
}

// --- sorted search: sorted_search_split + serial_sorted_search ----------------------------------

template <bool Strict>
void check_sorted_search(const std::vector<int>& keys, const std::vector<int>& queries) {
  const int64_t nk = int64_t(keys.size()), nq = int64_t(queries.size());
  std::vector<int64_t> want(queries.size());
  for (size_t j = 0; j < queries.size(); ++j)
    want[j] = (Strict ? std::lower_bound(keys.begin(), keys.end(), queries[j])
                      : std::upper_bound(keys.begin(), keys.end(), queries[j])) - keys.begin();
  for (int64_t width = 1; width <= std::max<int64_t>(nk + nq, 1); ++width) {
    std::vector<int64_t> got;
    for (int64_t d0 = 0; d0 < nk + nq; d0 += width) {
      const int64_t d1 = std::min(nk + nq, d0 + width);
      const auto s0 = gsearch::core::sorted_search_split<Strict>(acc{&keys}, nk, acc{&queries}, nq, d0);
      const auto s1 = gsearch::core::sorted_search_split<Strict>(acc{&keys}, nk, acc{&queries}, nq, d1);
      ASSERT_EQ(s0.k + s0.q, d0);
      ASSERT_EQ(s1.k + s1.q, d1);
      ASSERT_TRUE(s0.k <= s1.k && s0.q <= s1.q) << "d0=" << d0 << " width=" << width;
      gsearch::core::serial_sorted_search<Strict>(acc{&keys}, s0.k, s1.k, acc{&queries}, s0.q, s1.q,
                                                  [&](int64_t j, int64_t rank) {
                                                    EXPECT_EQ(j, int64_t(got.size()));
                                                    got.push_back(rank);
                                                  });
    }
    ASSERT_EQ(got, want) << (Strict ? "lower" : "upper") << " width=" << width << " nk=" << nk
                         << " nq=" << nq;
  }
}

TEST(SortedSearch, EveryTileWidthOfSmallInputs) {
  std::mt19937 g(23);
  for (int nk = 0; nk <= 9; ++nk)
    for (int nq = 0; nq <= 9; ++nq)
      for (int trial = 0; trial < 4; ++trial) {
        const auto keys = sorted_random(g, nk, 2 + trial), queries = sorted_random(g, nq, 3 + trial);
        check_sorted_search<true>(keys, queries);
        check_sorted_search<false>(keys, queries);
        if (::testing::Test::HasFatalFailure()) return;
      }
  const auto keys = sorted_random(g, 80, 20), queries = sorted_random(g, 70, 25);
  check_sorted_search<true>(keys, queries);
  check_sorted_search<false>(keys, queries);
}

}  // namespace

// The GPU's unrolled set operation (registers by step) writes what the plain loop writes, for
// ranges of up to Count elements (a GPU thread's slice), every op, many random multisets.
namespace {
template <gsearch::set_op Op, bool Padded>
void check_unrolled_set_op(std::mt19937& rng) {
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<int> a(rng() % 9), b(rng() % 9);
    for (auto& x : a) x = int(rng() % 5);
    for (auto& x : b) x = int(rng() % 5);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    // The padded form may read one past each end: A's next slot is B's first element, B's a
    // spare, as in a tile staged in shared memory; .at() fails a read beyond them.
    std::vector<int> tile(a);
    tile.insert(tile.end(), b.begin(), b.end());
    tile.push_back(-1000);
    const int na = int(a.size());
    const auto acc_a = [&](int i) { return Padded ? tile.at(size_t(i)) : a.at(size_t(i)); };
    const auto acc_b = [&](int j) { return Padded ? tile.at(size_t(na + j)) : b.at(size_t(j)); };
    std::vector<int> want, got(16, -1);
    gsearch::core::serial_set_op<Op>(acc_a, 0, int(a.size()), acc_b, 0, int(b.size()),
                                     [&](bool from_a, int i) { want.push_back(from_a ? a[size_t(i)] : b[size_t(i)]); });
    unsigned taken = 0;
    gsearch::core::serial_set_op_unrolled<16, Op, Padded>(acc_a, 0, int(a.size()), acc_b, 0, int(b.size()),
                                                  [&](int k, int key) { got[size_t(k)] = key; taken |= 1u << k; });
    std::vector<int> packed;
    for (int k = 0; k < 16; ++k)
      if (taken >> k & 1) packed.push_back(got[size_t(k)]);
    ASSERT_EQ(want, packed) << gsearch::to_string(Op) << " trial " << trial;
  }
}
}  // namespace

TEST(CoreSetOp, UnrolledEqualsThePlainLoop) {
  std::mt19937 rng(7);
  for (bool padded : {false, true}) {
    const auto check = [&]<gsearch::set_op Op>() {
      if (padded) check_unrolled_set_op<Op, true>(rng);
      else check_unrolled_set_op<Op, false>(rng);
    };
    check.operator()<gsearch::set_op::intersection>();
    check.operator()<gsearch::set_op::union_>();
    check.operator()<gsearch::set_op::difference>();
    check.operator()<gsearch::set_op::symmetric_difference>();
  }
}

// The GPU tiles' unrolled merges against std::merge from every split of small multisets: Count
// steps from split (i, j) give the next Count elements of the stable merge (steps past the end
// are ignored). The staged form reads A and B from one array laid out as a tile is in shared
// memory (A, then B, then one spare slot holding a poison value), so a read beyond keys(a_end) or
// keys(b_end) would show in the result or trip the vector's bounds check.
namespace {
template <bool Staged>
void check_unrolled_merge(std::mt19937& rng) {
  constexpr int count = 7;
  for (int trial = 0; trial < 3000; ++trial) {
    const auto a = sorted_random(rng, int(rng() % 10), 4), b = sorted_random(rng, int(rng() % 10), 4);
    const int na = int(a.size()), nb = int(b.size());
    std::vector<int> tile(a);
    tile.insert(tile.end(), b.begin(), b.end());
    tile.push_back(-1000);  // the spare slot: never part of a result
    const auto ref = reference_merge(a, b);
    int from_a = 0;
    for (int d = 0; d <= na + nb; ++d) {
      const auto check = [&](int k, bool is_a, int index, int key) {
        if (d + k >= na + nb) return;
        const item& r = ref[size_t(d + k)];
        ASSERT_EQ(is_a, r.from_a) << "trial " << trial << " d=" << d << " k=" << k;
        ASSERT_EQ(index, r.index) << "trial " << trial << " d=" << d << " k=" << k;
        ASSERT_EQ(key, r.value) << "trial " << trial << " d=" << d << " k=" << k;
      };
      if constexpr (Staged) {
        gsearch::core::serial_merge_staged<count>(
            [&](int i) { return tile.at(size_t(i)); }, from_a, na, na + d - from_a, na + nb,
            [&](int k, bool is_a, int index, int key) { check(k, is_a, is_a ? index : index - na, key); });
      } else {
        gsearch::core::serial_merge_unrolled<count>([&](int i) { return a.at(size_t(i)); }, na,
                                                    [&](int j) { return b.at(size_t(j)); }, nb,
                                                    from_a, d - from_a, check);
      }
      if (d < na + nb && ref[size_t(d)].from_a) ++from_a;
    }
  }
}
}  // namespace

TEST(CoreMerge, UnrolledEqualsStdMerge) {
  std::mt19937 rng(11);
  check_unrolled_merge<false>(rng);
  check_unrolled_merge<true>(rng);
}

// --- unsorted inputs, check_sorted off: a host replay of the GPU tiles ---------------------------
//
// merge_tiles_kernel, sorted_search_kernel and set_op_kernel, step by step on the host with the
// kernels' tile shapes (cuda/tuning.hpp) and the core functions they call: the partition kernel's
// split per tile, the tile's slices (core::monotone_range), the staged array (tile + 1 slots, a
// spare after the slices; + 2 for the set operations, whose tile may hold one more element), each
// thread's split and its serial loop. Reads go through .at(), so one past the staged array
// throws; every slice must be non-negative and inside its tile, and a tile's outputs must fit
// the array they go back through. Results are not checked: unsorted inputs have none specified.
namespace {

using gsearch::core::monotone_range;

TEST(MonotoneRange, KeepsTheTotalAndStaysBetweenTheSplits) {
  std::mt19937 g(29);
  for (int trial = 0; trial < 200000; ++trial) {
    const int na = int(g() % 12), nb = int(g() % 12);
    int a0 = int(g() % unsigned(na + 1)), b0 = int(g() % unsigned(nb + 1));
    int a1 = int(g() % unsigned(na + 1)), b1 = int(g() % unsigned(nb + 1));
    if (a0 + b0 > a1 + b1) {
      std::swap(a0, a1);
      std::swap(b0, b1);
    }
    const auto r = monotone_range(a0, b0, a1, b1);
    ASSERT_EQ(r.a0, a0);
    ASSERT_EQ(r.b0, b0);
    ASSERT_EQ(r.a1 + r.b1, a1 + b1);
    ASSERT_TRUE(a0 <= r.a1 && b0 <= r.b1) << a0 << "," << b0 << " -> " << a1 << "," << b1;
    ASSERT_TRUE(r.a1 <= std::max(a0, a1) && r.b1 <= std::max(b0, b1));  // so within [0, n]
    if (a0 <= a1 && b0 <= b1) {  // in order, as on sorted inputs: unchanged
      ASSERT_TRUE(r.a1 == a1 && r.b1 == b1);
    }
  }
}

using gsearch::test::name;
using gsearch::test::unsorted;
using gsearch::test::unsorted_input;
constexpr unsorted kUnsorted[] = {unsorted::random,  unsorted::reversed,
                                  unsorted::modular, unsorted::equal_then_descending,
                                  unsorted::sawtooth, unsorted::sorted};

template <class T>
struct reader {
  const std::vector<T>* v;
  T operator()(int64_t i) const { return v->at(size_t(i)); }
};

// 0 <= lo <= hi <= n.
::testing::AssertionResult in_order(int64_t lo, int64_t hi, int64_t n) {
  if (0 <= lo && lo <= hi && hi <= n) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "[" << lo << ", " << hi << ") not within [0, " << n << "]";
}

// A tile's slices A[a0, a1) and B[b0, b1) side by side in `slots` elements, the rest poison.
template <class T>
std::vector<T> stage(const std::vector<T>& a, int64_t a0, int64_t a1, const std::vector<T>& b,
                     int64_t b0, int64_t b1, size_t slots) {
  std::vector<T> staged(a.begin() + a0, a.begin() + a1);
  staged.insert(staged.end(), b.begin() + b0, b.begin() + b1);
  staged.resize(slots, T(-77));
  return staged;
}

// merge_tiles_kernel (merge_partition_kernel's splits, two_lists' tiles).
template <class P, class T>
void replay_merge(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  constexpr auto c = P::template merge_config<sizeof(T)>;
  constexpr int tile = c.threads * c.items;
  const int64_t na = int64_t(a.size()), nb = int64_t(b.size());
  const int64_t tiles = (na + nb + tile - 1) / tile;
  std::vector<int64_t> partitions(static_cast<size_t>(tiles));
  for (int64_t t = 0; t < tiles; ++t)
    partitions[size_t(t)] = merge_path(reader<T>{&a}, na, reader<T>{&b}, nb, t * tile);
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t d0 = t * tile, d1 = std::min(d0 + tile, na + nb);
    const int64_t a_start = partitions[size_t(t)];
    const int64_t a_end = d1 == na + nb ? na : partitions[size_t(t) + 1];
    const auto range = monotone_range(a_start, d0 - a_start, a_end, d1 - a_end);
    ASSERT_TRUE(in_order(range.a0, range.a1, na)) << what << " tile " << t << " A";
    ASSERT_TRUE(in_order(range.b0, range.b1, nb)) << what << " tile " << t << " B";
    const int ta = int(range.a1 - range.a0), count = int(d1 - d0), tb = count - ta;
    ASSERT_EQ(range.b1 - range.b0, tb) << what << " tile " << t;
    const auto staged = stage(a, range.a0, range.a1, b, range.b0, range.b1, size_t(tile) + 1);
    const auto as = [&](int i) { return staged.at(size_t(i)); };
    const auto bs = [&](int j) { return staged.at(size_t(ta + j)); };
    std::vector<int> written(size_t(count), 0);
    for (int thread = 0; thread < c.threads; ++thread) {
      const int diag = std::min(thread * c.items, count);
      const int p = merge_path(as, ta, bs, tb, diag);
      ASSERT_TRUE(in_order(p, ta, ta) && in_order(diag - p, tb, tb)) << what << " tile " << t << " thread " << thread;
      gsearch::core::serial_merge_staged<c.items>(as, p, ta, ta + diag - p, count,
                                                  [&](int k, bool, int i, T) {
                                                    ASSERT_TRUE(in_order(i, i, count)) << what;
                                                    if (diag + k < count) ++written.at(size_t(diag + k));
                                                  });
      if (::testing::Test::HasFatalFailure()) return;
    }
    ASSERT_EQ(written, std::vector<int>(size_t(count), 1)) << what << " tile " << t;
  }
}

// sorted_search_kernel (sorted_search_partition_kernel's splits), lower_bound (Strict) or
// upper_bound.
template <class P, bool Strict, class T>
void replay_sorted_search(const std::vector<T>& keys, const std::vector<T>& queries,
                          const std::string& what) {
  constexpr auto c = P::template sorted_search_config<sizeof(T)>;
  constexpr int tile = c.threads * c.items;
  const int64_t k = int64_t(keys.size()), q = int64_t(queries.size());
  const int64_t tiles = (k + q + tile - 1) / tile;
  std::vector<int64_t> key_splits(static_cast<size_t>(tiles));
  for (int64_t t = 0; t < tiles; ++t)
    key_splits[size_t(t)] = gsearch::core::sorted_search_split<Strict>(
                                reader<T>{&keys}, k, reader<T>{&queries}, q, t * tile).k;
  // Every query is written by some tile: its staged slice, or the tile's own range (between its
  // two splits) where the clamp cut it off (the kernel's write_alone).
  std::vector<char> written(size_t(q), 0);
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t d0 = t * tile, d1 = std::min(d0 + tile, k + q);
    const int64_t k_start = key_splits[size_t(t)], k_end = t + 1 < tiles ? key_splits[size_t(t) + 1] : k;
    const auto range = monotone_range(k_start, d0 - k_start, k_end, d1 - k_end);
    for (int64_t j = range.b0; j < range.b1; ++j) written[size_t(j)] = 1;
    for (int64_t j = std::max<int64_t>(d0 - k_start, 0); j < std::min(d1 - k_end, q); ++j) written[size_t(j)] = 1;
    ASSERT_TRUE(in_order(range.a0, range.a1, k)) << what << " tile " << t << " keys";
    ASSERT_TRUE(in_order(range.b0, range.b1, q)) << what << " tile " << t << " queries";
    const int nk = int(range.a1 - range.a0), count = int(d1 - d0), nq = count - nk;
    ASSERT_EQ(range.b1 - range.b0, nq) << what << " tile " << t;
    const auto staged = stage(keys, range.a0, range.a1, queries, range.b0, range.b1, size_t(tile) + 1);
    const auto ks = [&](int i) { return staged.at(size_t(i)); };
    const auto qs = [&](int j) { return staged.at(size_t(nk + j)); };
    std::vector<int> ranks(size_t(tile), -1);
    const auto rank = [&](int s, int j, int diag) {
      ASSERT_TRUE(in_order(j, j + 1, nq)) << what << " tile " << t << ": query " << j;
      ranks.at(size_t(j)) = diag + s - j;
      ASSERT_TRUE(in_order(ranks[size_t(j)], ranks[size_t(j)], nk)) << what << " tile " << t;
    };
    for (int thread = 0; thread < c.threads; ++thread) {
      const int diag = std::min(thread * c.items, count);
      const auto split = gsearch::core::sorted_search_split<Strict>(ks, nk, qs, nq, diag);
      ASSERT_TRUE(in_order(split.k, nk, nk) && in_order(split.q, nq, nq)) << what << " thread " << thread;
      if constexpr (Strict) {
        gsearch::core::serial_merge_staged<c.items>(ks, nk + split.q, count, split.k, nk,
                                                    [&](int s, bool is_query, int i, T) {
                                                      if (is_query && diag + s < count) rank(s, i - nk, diag);
                                                    });
      } else {
        gsearch::core::serial_merge_staged<c.items>(ks, split.k, nk, nk + split.q, count,
                                                    [&](int s, bool is_key, int i, T) {
                                                      if (!is_key && diag + s < count) rank(s, i - nk, diag);
                                                    });
      }
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  const auto unwritten = std::find(written.begin(), written.end(), 0);
  EXPECT_EQ(unwritten, written.end()) << what << ": query " << (unwritten - written.begin()) << " never written";
}

// set_op_kernel (set_partition_kernel's splits).
template <class P, gsearch::set_op Op, class T>
void replay_set_op(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  constexpr auto c = P::template set_op_config<sizeof(T)>;
  constexpr int tile = c.threads * c.items;  // diagonals per tile
  constexpr int staged_slots = tile + 2;     // the kernel's staged[tile + 1] of tile + 1 elements
  constexpr int steps = c.items + 1;
  const int64_t na = int64_t(a.size()), nb = int64_t(b.size());
  const int64_t tiles = (na + nb + tile - 1) / tile;
  std::vector<int64_t> a_splits(static_cast<size_t>(tiles)), b_splits(static_cast<size_t>(tiles));
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t d = t * tile;
    const auto split = balanced_path(reader<T>{&a}, na, reader<T>{&b}, nb, d);
    a_splits[size_t(t)] = split.a_index;
    b_splits[size_t(t)] = d - split.a_index + int64_t(split.star);
    ASSERT_TRUE(in_order(a_splits[size_t(t)], na, na) && in_order(b_splits[size_t(t)], nb, nb)) << what;
  }
  int64_t elements = 0;  // over all tiles: na + nb, as on sorted inputs
  for (int64_t t = 0; t < tiles; ++t) {
    const auto range = monotone_range(a_splits[size_t(t)], b_splits[size_t(t)],
                                      t + 1 < tiles ? a_splits[size_t(t) + 1] : na,
                                      t + 1 < tiles ? b_splits[size_t(t) + 1] : nb);
    ASSERT_TRUE(in_order(range.a0, range.a1, na)) << what << " tile " << t << " A";
    ASSERT_TRUE(in_order(range.b0, range.b1, nb)) << what << " tile " << t << " B";
    const int ta = int(range.a1 - range.a0), tb = int(range.b1 - range.b0), count = ta + tb;
    ASSERT_LE(count, tile + 1) << what << " tile " << t << ": more than the staged array holds";
    elements += count;
    const auto staged = stage(a, range.a0, range.a1, b, range.b0, range.b1, staged_slots);
    const auto as = [&](int i) { return staged.at(size_t(i)); };
    const auto bs = [&](int j) { return staged.at(size_t(ta + j)); };
    std::vector<int> thread_a(size_t(c.threads) + 1), thread_b(size_t(c.threads) + 1);
    for (int thread = 0; thread < c.threads; ++thread) {
      const int diag = std::min(thread * c.items, count);
      const auto split = balanced_path(as, ta, bs, tb, diag);
      thread_a[size_t(thread)] = split.a_index;
      thread_b[size_t(thread)] = diag - split.a_index + int(split.star);
    }
    thread_a[size_t(c.threads)] = ta;
    thread_b[size_t(c.threads)] = tb;
    int tile_count = 0;  // the outputs, which go back through the staged array
    for (int thread = 0; thread < c.threads; ++thread) {
      const auto slice = monotone_range(thread_a[size_t(thread)], thread_b[size_t(thread)],
                                        thread_a[size_t(thread) + 1], thread_b[size_t(thread) + 1]);
      ASSERT_TRUE(in_order(slice.a0, slice.a1, ta)) << what << " tile " << t << " thread " << thread << " A";
      ASSERT_TRUE(in_order(slice.b0, slice.b1, tb)) << what << " tile " << t << " thread " << thread << " B";
      ASSERT_LE((slice.a1 - slice.a0) + (slice.b1 - slice.b0), steps) << what << " thread " << thread;
      gsearch::core::serial_set_op_unrolled<steps, Op, true>(as, slice.a0, slice.a1, bs, slice.b0,
                                                             slice.b1, [&](int, T) { ++tile_count; });
    }
    ASSERT_LE(tile_count, count) << what << " tile " << t;
    ASSERT_LE(tile_count, staged_slots) << what << " tile " << t << ": outputs past the staged array";
  }
  EXPECT_EQ(elements, na + nb) << what;
}

// The kernels' tiles of the merge family's policy P (merge/tuning.hpp).
template <class P, class T>
void replay_policy(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  ASSERT_NO_FATAL_FAILURE((replay_merge<P>(a, b, "merge " + what)));
  ASSERT_NO_FATAL_FAILURE((replay_sorted_search<P, true>(a, b, "lower_bound " + what)));
  ASSERT_NO_FATAL_FAILURE((replay_sorted_search<P, false>(a, b, "upper_bound " + what)));
  ASSERT_NO_FATAL_FAILURE((replay_set_op<P, set_op::intersection>(a, b, "intersection " + what)));
  ASSERT_NO_FATAL_FAILURE((replay_set_op<P, set_op::union_>(a, b, "union " + what)));
  ASSERT_NO_FATAL_FAILURE((replay_set_op<P, set_op::difference>(a, b, "difference " + what)));
  ASSERT_NO_FATAL_FAILURE(
      (replay_set_op<P, set_op::symmetric_difference>(a, b, "symmetric difference " + what)));
}

// Every policy's tiles (merge_policies: one per architecture measured).
template <class T>
void replay_all(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  gsearch::cuda_backend::for_each_policy(gsearch::cuda_backend::merge_policies{}, [&]<class P>() {
    ASSERT_NO_FATAL_FAILURE((replay_policy<P>(a, b, what + " (sm_" + std::to_string(P::arch) + ")")));
  });
}

template <class T>
void replay_unsorted(int64_t tile) {
  std::mt19937 g(31);
  const std::pair<int64_t, int64_t> sizes[] = {
      {3 * tile + 17, 2 * tile + 5}, {tile / 3, 4 * tile + 1}, {5 * tile, 1}, {7, 5}, {0, 2 * tile + 3}};
  for (auto [na, nb] : sizes)
    for (unsorted ua : kUnsorted)
      for (unsorted ub : kUnsorted) {
        if (ua == unsorted::sorted && ub == unsorted::sorted) continue;
        const auto a = unsorted_input<T>(ua, na, g), b = unsorted_input<T>(ub, nb, g);
        const std::string what = std::string(name(ua)) + " x " + name(ub) + " na=" +
                                 std::to_string(na) + " nb=" + std::to_string(nb);
        ASSERT_NO_FATAL_FAILURE(replay_all(a, b, what));
        ASSERT_NO_FATAL_FAILURE(replay_all(b, a, what + " (swapped)"));
      }
}

TEST(GpuTileReplay, UnsortedInputsStayInTheirTiles4ByteKeys) {
  replay_unsorted<int32_t>(int64_t{256} * 23);  // the largest of the 4-byte tiles
}
TEST(GpuTileReplay, UnsortedInputsStayInTheirTiles8ByteKeys) {
  replay_unsorted<int64_t>(int64_t{256} * 7);
}

}  // namespace
