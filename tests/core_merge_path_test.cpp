// core/merge_path.hpp against std::merge and the definition of Balanced Path: every diagonal of
// every pair of small sorted inputs with heavy duplicates (values 0..3), and random larger ones.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "gsearch/core/merge_path.hpp"

namespace {

using gsearch::core::balanced_path;
using gsearch::core::merge_path;
using gsearch::core::serial_merge;

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

}  // namespace
