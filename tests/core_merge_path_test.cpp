// core/merge_path.hpp against std::merge and the definition of Balanced Path: every diagonal of
// every pair of small sorted inputs with heavy duplicates (values 0..3), and random larger ones;
// the set operations and the sorted search cut into tiles of every width, each tile's serial
// loop between its splits, concatenated, against std::set_* and std::lower_bound / upper_bound.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <iterator>
#include <utility>
#include <vector>

#include "gsearch/core/merge_path.hpp"

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
