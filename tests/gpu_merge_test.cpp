// The merge family on the GPU (label `gpu`): merge (keys and key-value), merge sort (in place
// too), the search of sorted queries, the four multiset set operations and the six joins, for
// every key type, against std::merge / std::stable_sort / std::set_* / std::lower_bound and a
// group-by-group join, and equal to the CPU backend. Sizes around each kernel's tile, read from
// the tuning the library runs on this device (src/merge/tuning.hpp: threads x items of its
// policy's merge_config, sorted_search_config, set_op_config; one tile, one tile +- 1, several tiles +- 1)
// and up to many tiles; heavy duplicates, all-equal, disjoint, interleaved, one side empty,
// NaN / -0.0 / inf; runs of equal keys straddling a set-operation tile boundary (the star split).
// And unsorted inputs with the check off
// (GpuMergeUnchecked, issue 19): in bounds, sizes within their bounds, results in range, nothing
// written past an output. Skips visibly without a GPU.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/launch.hpp"
#include "merge/tuning.hpp"
#include "gsearch/gsearch.hpp"
#include "merge_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T>
class GpuMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    GSEARCH_GPU_OR_SKIP();
  }
};
TYPED_TEST_SUITE(GpuMerge, KeyTypes);

// Bit-for-bit equality (so -0.0 vs 0.0 and which copy of a key was written are checked).
template <class T>
void expect_same_bits(const std::vector<T>& want, const std::vector<T>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(0, std::memcmp(&want[i], &got[i], sizeof(T))) << what << " at " << i << ": want "
                                                           << want[i] << ", got " << got[i];
}

template <class T>
std::vector<T> to_host(const device_vector<T>& d) {
  std::vector<T> h(static_cast<size_t>(d.size()));
  d.copy_to(span<T>(h.data(), int64_t(h.size())));
  return h;
}
template <class T>
device_vector<T> dev(const std::vector<T>& h) {
  return device_vector<T>(span<const T>(h.data(), int64_t(h.size())));
}

// Shapes of the sorted inputs.
// full_bits: every bit of the key random (the radix sort's every digit; floats from the bits,
// NaNs and -0.0 among them).
enum class shape { random, duplicates, all_equal, disjoint, interleaved, specials, full_bits };
const char* name(shape s) {
  constexpr const char* names[] = {"random", "duplicates", "all-equal", "disjoint", "interleaved", "specials",
                                   "full-bits"};
  return names[int(s)];
}

template <class T>
std::vector<T> sorted_input(int64_t n, shape s, int side, std::mt19937_64& rng) {
  std::vector<T> v(static_cast<size_t>(n));
  const auto specials = edge_values<T>();
  for (int64_t i = 0; i < n; ++i) {
    T x{};
    switch (s) {
      case shape::random: x = T(rng() % 1000000); break;
      case shape::duplicates: x = T(rng() % 7); break;
      case shape::all_equal: x = T(3); break;
      case shape::disjoint: x = T(side * 1000000 + int64_t(rng() % 1000)); break;
      case shape::interleaved: x = T(2 * i + side); break;
      case shape::specials: x = specials[rng() % specials.size()]; break;
      case shape::full_bits: {
        const uint64_t bits = rng();
        std::memcpy(&x, &bits, sizeof(T));
        break;
      }
    }
    v[size_t(i)] = x;
  }
  std::stable_sort(v.begin(), v.end(), less<T>);
  return v;
}

constexpr shape kShapes[] = {shape::random, shape::duplicates, shape::all_equal,
                             shape::disjoint, shape::interleaved, shape::specials};

// The kernels' tiles (threads x items outputs) for keys of T, as the library runs them on this
// device: f's answer for the merge family's policy of its compute capability (with_policy).
template <class F>
auto of_device_policy(F f) {
  return cuda_backend::with_policy(cuda_backend::merge_policies{}, cuda_backend::current_device_limits().arch, f);
}
template <class T>
int64_t merge_tile() {
  return of_device_policy([]<class P>() { return P::template merge_config<sizeof(T)>.tile(); });
}
template <class T>
int64_t sorted_search_tile() {
  return of_device_policy([]<class P>() { return P::template sorted_search_config<sizeof(T)>.tile(); });
}
template <class T>
int64_t set_op_tile() {
  return of_device_policy([]<class P>() { return P::template set_op_config<sizeof(T)>.tile(); });
}
// The merge sort's: its passes' merge tile, keys alone (Values false) or with values, and its
// block sort's runs of keys alone.
template <class T, bool Values>
int64_t merge_sort_tile() {
  return of_device_policy([]<class P>() { return P::template merge_sort_config<sizeof(T), Values>.tile(); });
}
template <class T>
int64_t merge_sort_run() {
  return of_device_policy([]<class P>() {
    return int64_t(P::template merge_sort_block_threads<sizeof(T), false>) *
           P::template merge_sort_config<sizeof(T), false>.items;
  });
}

// Sizes around a kernel's tile (merge_cases.hpp), then many tiles.
// Under test_subset() (compute-sanitizer, whose cost follows the calls made: some 80 ms a call
// under memcheck in bd04340's logs), one size a path: both sides empty (the early return), one
// side empty, one element a side, one tile exactly, one tile + 1 (a second, one-element tile) and
// several tiles + 1 (interior tiles and a partial last one), the last one the size every shape
// runs at (in_subset below).
std::vector<std::pair<int64_t, int64_t>> size_pairs(int64_t tile) {
  if (test_subset()) return {{0, 0}, {0, 5}, {1, 1}, {tile - 1, 1}, {tile / 2, tile / 2 + 1}, {2 * tile, tile + 1}};
  std::vector<std::pair<int64_t, int64_t>> sizes = sizes_around_tile(tile);
  sizes.push_back({100000, 37});
  sizes.push_back({(1 << 20) + 3, (1 << 19) + 1});
  return sizes;
}

// Under test_subset(): not every shape at every size. The random shape runs at every size (each
// tile boundary); the others (duplicates and all-equal: ties in the Merge Path / Balanced Path
// searches at every split, the set operations' star; disjoint: a side exhausted in a tile;
// interleaved: the splits alternating sides; specials: NaN, -0.0, inf through key_less) at the
// size `last` marks, which spans several tiles + 1, so each one meets interior tile boundaries.
bool in_subset(shape s, bool last) { return !test_subset() || s == shape::random || last; }

TYPED_TEST(GpuMerge, MergeEqualsStdMergeAndTheCpu) {
  using T = TypeParam;
  std::mt19937_64 rng(test_seed());
  const auto sizes = size_pairs(merge_tile<T>());
  for (auto [na, nb] : sizes) {
    for (shape s : kShapes) {
      if (!in_subset(s, na == sizes.back().first && nb == sizes.back().second)) continue;
      const std::string what = std::string(name(s)) + " na=" + std::to_string(na) + " nb=" + std::to_string(nb);
      const auto a = sorted_input<T>(na, s, 0, rng), b = sorted_input<T>(nb, s, 1, rng);
      std::vector<T> want(a.size() + b.size());
      std::merge(a.begin(), a.end(), b.begin(), b.end(), want.begin(), less<T>);
      auto da = dev(a), db = dev(b);
      device_vector<T> dout(na + nb);
      merge(cuda, span<const T>(da), span<const T>(db), dout.view());
      expect_same_bits(want, to_host(dout), "merge " + what);
      std::vector<T> cpu_out(want.size());
      merge(cpu, span<const T>(a), span<const T>(b), span<T>(cpu_out));
      expect_same_bits(want, cpu_out, "cpu merge " + what);

      // Key-value: each value names its source, so stability shows.
      std::vector<int64_t> av(a.size()), bv(b.size());
      for (size_t i = 0; i < av.size(); ++i) av[i] = int64_t(i);
      for (size_t j = 0; j < bv.size(); ++j) bv[j] = (int64_t{1} << 40) + int64_t(j);
      const std::vector<int64_t> want_values = reference_merge(a, av, b, bv).values;
      auto dav = dev(av), dbv = dev(bv);
      device_vector<int64_t> dov(na + nb);
      device_vector<T> dout2(na + nb);
      merge(cuda, span<const T>(da), span<const int64_t>(dav), span<const T>(db),
            span<const int64_t>(dbv), dout2.view(), dov.view());
      expect_same_bits(want, to_host(dout2), "merge pairs keys " + what);
      EXPECT_EQ(want_values, to_host(dov)) << "merge pairs values " << what;
    }
  }
}

// merge_sort and sort (the radix sort for integer keys: CUB's passes, in place through its
// DoubleBuffer with a copy back where the result lands in the temporary one) against
// std::stable_sort, apart, in place, and with one of keys / values in place.
TYPED_TEST(GpuMerge, SortsEqualStdStableSort) {
  using T = TypeParam;
  std::mt19937_64 rng(test_seed());
  // The merge tile of the passes and the block sort's runs, with and without values.
  std::vector<int64_t> sizes = {0, 1, 2, 100003};
  for (int64_t tile : {merge_sort_tile<T, false>(), merge_sort_run<T>(), merge_sort_tile<T, true>()})
    sizes.insert(sizes.end(), {tile - 1, tile, tile + 1, 2 * tile + 1, 5 * tile + 3});
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (!test_subset()) sizes.push_back((1 << 21) + 5);
  // Under test_subset(): empty, one key, one block-sort run exactly (the block sort alone), one
  // run + 1 (a partial run and one pass; for 4-byte keys 2 x the pass tile + 1, for 8-byte keys
  // one pass tile + 1), 5 runs + 3 (six runs: passes over several tiles and an odd run count on
  // the second pass) and 100,003 (the radix sort's multi-tile passes, eleven runs). The random
  // shape at each; full_bits (every radix digit, NaN and -0.0 from the bits) at run + 1 and
  // 100,003; duplicates, all-equal and specials (stability among equal keys, key_less's floats)
  // at 5 runs + 3. Both algorithms and all six call forms (apart, in place, pairs, keys / values /
  // both in place) at each kept case.
  const int64_t run = merge_sort_run<T>();
  if (test_subset()) sizes = {0, 1, run, run + 1, 5 * run + 3, 100003};
  const auto kept = [&](int64_t n, shape s) {
    if (!test_subset() || s == shape::random) return true;
    if (s == shape::full_bits) return n == run + 1 || n == 100003;
    return n == 5 * run + 3;
  };
  using keys_only = void (*)(const cuda_t&, span<const T>, span<T>);
  using pairs = void (*)(const cuda_t&, span<const T>, span<const int64_t>, span<T>, span<int64_t>);
  struct algorithm_under_test {
    const char* name;
    keys_only sort_keys;
    pairs sort_pairs;
  };
  const algorithm_under_test algorithms[] = {{"merge_sort", gsearch::merge_sort, gsearch::merge_sort}, {"sort", gsearch::sort, gsearch::sort}};
  for (int64_t n : sizes) {
    for (shape s : {shape::random, shape::duplicates, shape::all_equal, shape::specials, shape::full_bits}) {
      if (!kept(n, s)) continue;
      auto keys = sorted_input<T>(n, s, 0, rng);
      std::shuffle(keys.begin(), keys.end(), rng);
      if (n % 3 == 0) std::reverse(keys.begin(), keys.end());
      std::vector<int64_t> values;
      for (int64_t i = 0; i < n; ++i) values.push_back(i);
      const auto [want, want_values] = reference_sort(keys, values);
      for (const algorithm_under_test& a : algorithms) {
        const std::string what = std::string(a.name) + " " + name(s) + " n=" + std::to_string(n);
        auto dk = dev(keys);
        device_vector<T> dout(n);
        a.sort_keys(cuda, span<const T>(dk), dout.view());
        expect_same_bits(want, to_host(dout), what);
        a.sort_keys(cuda, span<const T>(dk), dk.view());
        expect_same_bits(want, to_host(dk), what + " in place");

        auto dk2 = dev(keys);
        auto dv = dev(values);
        device_vector<T> dko(n);
        device_vector<int64_t> dvo(n);
        a.sort_pairs(cuda, span<const T>(dk2), span<const int64_t>(dv), dko.view(), dvo.view());
        expect_same_bits(want, to_host(dko), what + " pairs");
        EXPECT_EQ(want_values, to_host(dvo)) << what << " pairs: values";
        a.sort_pairs(cuda, span<const T>(dk2), span<const int64_t>(dv), dk2.view(), dvo.view());  // keys in place
        expect_same_bits(want, to_host(dk2), what + " pairs, keys in place");
        EXPECT_EQ(want_values, to_host(dvo)) << what << " pairs, keys in place: values";
        auto dk3 = dev(keys);
        a.sort_pairs(cuda, span<const T>(dk3), span<const int64_t>(dv), dko.view(), dv.view());  // values in place
        expect_same_bits(want, to_host(dko), what + " pairs, values in place");
        EXPECT_EQ(want_values, to_host(dv)) << what << " pairs, values in place: values";
        auto dv2 = dev(values);
        a.sort_pairs(cuda, span<const T>(dk3), span<const int64_t>(dv2), dk3.view(), dv2.view());  // both
        expect_same_bits(want, to_host(dk3), what + " pairs in place");
        EXPECT_EQ(want_values, to_host(dv2)) << what << " pairs in place: values";
      }
    }
  }
}

// One merge sort small enough for compute-sanitizer's racecheck (its filter picks *OneSmall*):
// two block-sort runs and a few more keys, so the block sort, a partial run and the passes all
// run, keys alone and with values, against std::stable_sort.
TYPED_TEST(GpuMerge, OneSmallMergeSort) {
  using T = TypeParam;
  std::mt19937_64 rng(test_seed());
  const int64_t n = 2 * merge_sort_run<T>() + 3;
  auto keys = sorted_input<T>(n, shape::duplicates, 0, rng);
  std::shuffle(keys.begin(), keys.end(), rng);
  std::vector<int64_t> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[size_t(i)] = i;
  const auto [want, want_values] = reference_sort(keys, values);
  auto dk = dev(keys);
  auto dv = dev(values);
  device_vector<T> dout(n);
  device_vector<int64_t> dvo(n);
  merge_sort(cuda, span<const T>(dk), dout.view());
  expect_same_bits(want, to_host(dout), "merge_sort");
  merge_sort(cuda, span<const T>(dk), span<const int64_t>(dv), dout.view(), dvo.view());
  expect_same_bits(want, to_host(dout), "merge_sort pairs");
  EXPECT_EQ(want_values, to_host(dvo)) << "merge_sort pairs: values";
}

TYPED_TEST(GpuMerge, SortedQueriesEqualStdBounds) {
  using T = TypeParam;
  std::mt19937_64 rng(test_seed());
  const auto sizes = size_pairs(sorted_search_tile<T>());
  for (auto [k, q] : sizes) {
    for (shape s : kShapes) {
      if (!in_subset(s, k == sizes.back().first && q == sizes.back().second)) continue;
      const auto keys = sorted_input<T>(k, s, 0, rng), queries = sorted_input<T>(q, s, 1, rng);
      auto dk = dev(keys), dq = dev(queries);
      search_options o;
      o.queries_sorted = true;
      o.check_sorted = true;
      for (side sd : {side::left, side::right, side::pred}) {
        const std::string what = std::string(name(s)) + " k=" + std::to_string(k) + " q=" +
                                 std::to_string(q) + " side=" + side_name(sd);
        const auto want = reference_all(keys, queries, sd);
        device_vector<int64_t> out(q);
        search(cuda, sd, span<const T>(dk), span<const T>(dq), out.view(), o);
        EXPECT_EQ(want, to_host(out)) << what;
        device_vector<int32_t> out32(q);
        search(cuda, sd, span<const T>(dk), span<const T>(dq), out32.view(), o);
        const auto got32 = to_host(out32);
        EXPECT_EQ(want, std::vector<int64_t>(got32.begin(), got32.end())) << "int32 " << what;
      }
    }
  }
}

// The four set operations of sorted a and b on the GPU (the size, one pass with room for any
// result, and a counting pass first with room for the result alone) and on the CPU, against
// std::set_*.
template <class T>
void check_set_ops(const std::vector<T>& a, const std::vector<T>& b, const std::string& what_inputs) {
  const int64_t na = int64_t(a.size()), nb = int64_t(b.size());
  auto da = dev(a), db = dev(b);
  for (set_op op : kSetOps) {
    const std::string what = std::string(to_string(op)) + " " + what_inputs;
    const auto want = reference_set(op, a, b);
    EXPECT_EQ(int64_t(want.size()), set_operation_size(cuda, op, span<const T>(da), span<const T>(db))) << what;
    // One pass (room for any result), then exactly the result's size (a counting pass first).
    for (int64_t room : {core::set_op_bound(op, na, nb), int64_t(want.size())}) {
      device_vector<T> out(room);
      const int64_t size = set_operation(cuda, op, span<const T>(da), span<const T>(db), out.view());
      ASSERT_EQ(int64_t(want.size()), size) << what;
      auto got = to_host(out);
      got.resize(size_t(size));
      expect_same_bits(want, got, what);
    }
    std::vector<T> cpu_out(size_t(core::set_op_bound(op, na, nb)));
    const int64_t cpu_size = set_operation(cpu, op, span<const T>(a), span<const T>(b), span<T>(cpu_out));
    cpu_out.resize(size_t(cpu_size));
    expect_same_bits(want, cpu_out, "cpu " + what);
  }
}

TYPED_TEST(GpuMerge, SetOperationsEqualStdSetAlgorithms) {
  using T = TypeParam;
  std::mt19937_64 rng(test_seed());
  const auto sizes = size_pairs(set_op_tile<T>());
  for (auto [na, nb] : sizes) {
    for (shape s : kShapes) {
      if (!in_subset(s, na == sizes.back().first && nb == sizes.back().second)) continue;
      const auto a = sorted_input<T>(na, s, 0, rng), b = sorted_input<T>(nb, s, 1, rng);
      ASSERT_NO_FATAL_FAILURE(check_set_ops(a, b, std::string(name(s)) + " na=" + std::to_string(na) +
                                                      " nb=" + std::to_string(nb)));
    }
  }
}

// The set-operation tile's edges: runs of equal keys whose copies end just before, at and just
// after a tile boundary (the first, and the third: several tiles), where Balanced Path's star
// moves one element of B into the tile; and runs of a few copies (3 in A, 2 in B, so the
// boundaries fall inside runs) over one tile - 1, one tile + 1 and several tiles +- 1.
// Under test_subset(): the first boundary with the run ending one before, at and one after it
// (the star split's three cases), the third (several tiles) at it, and the 3 + 2 runs over one
// tile + 1 and several tiles + 1.
TYPED_TEST(GpuMerge, SetOperationsAroundTheTile) {
  using T = TypeParam;
  const int64_t tile = set_op_tile<T>();
  for (int64_t boundary : {tile, 3 * tile}) {
    for (int64_t shift : {-2, -1, 0, 1, 2}) {
      if (test_subset() && (shift < -1 || shift > 1 || (boundary != tile && shift != 0))) continue;
      const auto [a, b] = straddling_runs<T>(boundary, tile, shift);
      ASSERT_NO_FATAL_FAILURE(check_set_ops(a, b, "straddling boundary=" + std::to_string(boundary) +
                                                      " shift=" + std::to_string(shift)));
    }
  }
  for (int64_t total : {tile - 1, tile, tile + 1, 3 * tile - 1, 3 * tile + 1}) {
    if (test_subset() && total != tile + 1 && total != 3 * tile + 1) continue;
    std::vector<T> a, b;
    for (int64_t i = 0; int64_t(a.size() + b.size()) < total; ++i) {
      const bool to_a = i % 5 < 3;  // key i / 5: three copies in A, two in B
      (to_a ? a : b).push_back(T(i / 5));
    }
    ASSERT_NO_FATAL_FAILURE(check_set_ops(a, b, "runs 3 + 2 total=" + std::to_string(total)));
  }
}

// The set operations and the search of sorted queries small enough for racecheck (its filter in
// final_checks.sh picks *OneSmall*): several tiles + 1 of each kernel, duplicates (runs across
// the tile boundaries: Balanced Path's star, ties in the sorted search's splits), every set
// operation (counting pass and one pass) and every side, against std::set_* and std::lower_bound.
TYPED_TEST(GpuMerge, OneSmallSetOperationsAndSortedSearch) {
  using T = TypeParam;
  std::mt19937_64 rng(test_seed());
  const int64_t st = set_op_tile<T>();
  const auto a = sorted_input<T>(2 * st, shape::duplicates, 0, rng), b = sorted_input<T>(st + 1, shape::duplicates, 1, rng);
  ASSERT_NO_FATAL_FAILURE(check_set_ops(a, b, "duplicates na=" + std::to_string(2 * st) + " nb=" + std::to_string(st + 1)));
  const int64_t qt = sorted_search_tile<T>();
  const auto keys = sorted_input<T>(2 * qt, shape::duplicates, 0, rng), queries = sorted_input<T>(qt + 1, shape::random, 1, rng);
  auto dk = dev(keys), dq = dev(queries);
  search_options o;
  o.queries_sorted = true;
  for (side sd : {side::left, side::right, side::pred}) {
    device_vector<int64_t> out(qt + 1);
    search(cuda, sd, span<const T>(dk), span<const T>(dq), out.view(), o);
    EXPECT_EQ(reference_all(keys, queries, sd), to_host(out)) << "sorted search, side " << side_name(sd);
  }
}

TYPED_TEST(GpuMerge, JoinsEqualTheGroupByGroupJoin) {
  using T = TypeParam;
  std::mt19937_64 rng(test_seed());
  std::vector<std::pair<int64_t, int64_t>> sizes = {{0, 0}, {0, 4}, {4, 0}, {1, 1}, {100, 3000}, {3000, 100}};
  if (!test_subset()) sizes.push_back({20000, 20011});
  // Under test_subset(): the small sizes (no rows, a side empty: the outer and anti joins' rows
  // of one side alone, one row) with the random shape; each shape once on a larger size: all-equal
  // (every left row expanded over tiles), random and specials on 100 x 3000, duplicates (seven
  // keys: groups of ~430 x 14 rows), disjoint (no match: outer / anti rows only) and interleaved on 3000 x 100.
  const auto kept = [](int64_t nl, shape s) {
    if (!test_subset()) return true;
    if (nl <= 4) return s == shape::random;
    if (nl == 100) return s == shape::random || s == shape::all_equal || s == shape::specials;
    return s == shape::duplicates || s == shape::disjoint || s == shape::interleaved;
  };
  for (auto [nl, nr] : sizes) {
    for (shape s : kShapes) {
      if (!kept(nl, s)) continue;
      const auto l = sorted_input<T>(nl, s, 0, rng), r = sorted_input<T>(nr, s, 1, rng);
      // All-equal or 7 distinct keys on 20,000 rows a side: 10^7 to 4 x 10^8 rows, too many here.
      if ((s == shape::all_equal || s == shape::duplicates) && nl * nr > 1000000) continue;
      auto dl = dev(l), dr = dev(r);
      for (join_kind kind : kJoins) {
        const std::string what = std::string(to_string(kind)) + " " + name(s) + " nl=" +
                                 std::to_string(nl) + " nr=" + std::to_string(nr);
        const auto [want_l, want_r] = reference_join(kind, l, r);
        const int64_t rows = int64_t(want_l.size());
        EXPECT_EQ(rows, join_size(cuda, kind, span<const T>(dl), span<const T>(dr))) << what;
        device_vector<int64_t> gl(rows), gr(core::join_left_only(kind) ? 0 : rows);
        const int64_t got_rows = join(cuda, kind, span<const T>(dl), span<const T>(dr), gl.view(), gr.view());
        ASSERT_EQ(rows, got_rows) << what;
        EXPECT_EQ(want_l, to_host(gl)) << what;
        if (!core::join_left_only(kind)) EXPECT_EQ(want_r, to_host(gr)) << what;

        std::vector<int64_t> cl(static_cast<size_t>(rows)), cr(core::join_left_only(kind) ? 0 : static_cast<size_t>(rows));
        EXPECT_EQ(rows, join(cpu, kind, span<const T>(l), span<const T>(r), span<int64_t>(cl), span<int64_t>(cr))) << what;
        EXPECT_EQ(want_l, cl) << "cpu " << what;
        if (!core::join_left_only(kind)) EXPECT_EQ(want_r, cr) << "cpu " << what;
      }
    }
  }
}

// One left row matching many right rows, and the reverse: the expansion spreads a row over tiles.
TYPED_TEST(GpuMerge, JoinOfHeavyKeysSpreadsOverTiles) {
  using T = TypeParam;
  std::vector<T> l{T(1), T(2), T(2), T(5)}, r(300000, T(2));
  r.push_back(T(9));
  auto dl = dev(l), dr = dev(r);
  for (join_kind kind : {join_kind::inner, join_kind::full}) {
    const auto [want_l, want_r] = reference_join(kind, l, r);
    device_vector<int64_t> gl(int64_t(want_l.size())), gr(int64_t(want_r.size()));
    ASSERT_EQ(int64_t(want_l.size()), join(cuda, kind, span<const T>(dl), span<const T>(dr), gl.view(), gr.view()));
    EXPECT_EQ(want_l, to_host(gl));
    EXPECT_EQ(want_r, to_host(gr));
  }
}

TYPED_TEST(GpuMerge, UnsortedInputsAreRefusedAndNothingIsWritten) {
  using T = TypeParam;
  const std::vector<T> a{T(1), T(3), T(2)}, b{T(1), T(2)};
  auto da = dev(a), db = dev(b);
  const std::vector<T> poison(5, T(7));
  auto dout = dev(poison);
  EXPECT_THROW(merge(cuda, span<const T>(da), span<const T>(db), dout.view()), invalid_argument);
  EXPECT_THROW(set_operation(cuda, set_op::union_, span<const T>(da), span<const T>(db), dout.view()),
               invalid_argument);
  expect_same_bits(poison, to_host(dout), "untouched");
}

// --- unsorted inputs, check_sorted off --------------------------------------------------------
//
// The GPU twin of CpuMerge.UncheckedUnsortedInputsStayInBounds (merge_test.cpp): the results are
// unspecified, but every access stays in bounds (run under compute-sanitizer memcheck on the GPU
// machine, which sees the kernels' reads), sizes stay within their bounds, every value written is
// one the operation may write, and nothing lands past an output: each output is the head of a
// device buffer whose tail, kGuard elements, holds poison that must survive. Patterns that
// cross the Merge Path and Balanced Path searches (random, reversed, modular, equal then
// descending, and sorted against unsorted), sizes of one tile and of many (2^18).

template <class T>
class GpuMergeUnchecked : public ::testing::Test {
 protected:
  void SetUp() override { GSEARCH_GPU_OR_SKIP(); }
};
using UncheckedTypes = ::testing::Types<int32_t, int64_t, double>;
TYPED_TEST_SUITE(GpuMergeUnchecked, UncheckedTypes);

// (A, B) patterns: each unsorted shape on both sides, and sorted against unsorted both ways.
constexpr std::pair<unsorted, unsorted> kUnsortedPairs[] = {
    {unsorted::random, unsorted::random},
    {unsorted::reversed, unsorted::reversed},
    {unsorted::modular, unsorted::modular},
    {unsorted::equal_then_descending, unsorted::random},
    {unsorted::sorted, unsorted::reversed},
    {unsorted::reversed, unsorted::sorted}};


std::vector<std::pair<int64_t, int64_t>> unchecked_sizes() {
  std::vector<std::pair<int64_t, int64_t>> sizes = {{7, 5}, {1, 0}, {0, 3}, {3000, 2000},
                                                    {int64_t{1} << 18, (int64_t{1} << 18) + 3}};
  if (!test_subset()) sizes.push_back({(int64_t{1} << 20) + 1, 4000});
  return sizes;
}

// Under test_subset(): the tiny sizes (a side empty, both under a tile) with random x random
// alone; one tile's worth (3000 x 2000) with every pair; many tiles (2^18) with the three pairs
// whose searches land furthest out of order (random, reversed, equal then descending), where the
// cross-tile partition searches run.
bool unchecked_kept(int64_t na, std::pair<unsorted, unsorted> p) {
  if (!test_subset() || na == 3000) return true;
  if (na < 3000) return p.first == unsorted::random && p.second == unsorted::random;
  return p.second == unsorted::random || (p.first == unsorted::reversed && p.second == unsorted::reversed);
}

constexpr int64_t kGuard = 4096;

// A device buffer of n elements of `fill` and kGuard of `poison` after them: view() is the first
// n, the output under test.
template <class T>
struct guarded {
  device_vector<T> buffer;
  int64_t n;
  T poison;
  guarded(int64_t n_, T fill, T poison_) : n(n_), poison(poison_) {
    std::vector<T> h(size_t(n + kGuard), poison);
    std::fill(h.begin(), h.begin() + n, fill);
    buffer = dev(h);
  }
  span<T> view() const { return span<T>(buffer.data(), n); }
  // The output, after checking that the guard still holds its poison.
  std::vector<T> output(const std::string& what) const {
    auto h = to_host(buffer);
    for (int64_t i = n; i < n + kGuard; ++i)
      EXPECT_EQ(0, std::memcmp(&h[size_t(i)], &poison, sizeof(T)))
          << what << ": written past the output, at " << i - n << " after its end";
    h.resize(size_t(n));
    return h;
  }
};

// The values an output may hold: those of a and b (the merge-like operations copy, never make).
template <class T>
struct value_set {
  std::vector<T> sorted;
  value_set(const std::vector<T>& a, const std::vector<T>& b) : sorted(a) {
    sorted.insert(sorted.end(), b.begin(), b.end());
    std::sort(sorted.begin(), sorted.end(), less<T>);
  }
  bool has(T x) const { return std::binary_search(sorted.begin(), sorted.end(), x, less<T>); }
};

// The most rows a join of nl and nr rows can write.
int64_t join_bound(join_kind kind, int64_t nl, int64_t nr) {
  switch (kind) {
    case join_kind::inner: return nl * nr;
    case join_kind::left: return nl * std::max<int64_t>(nr, 1);
    case join_kind::right: return nl * nr + nr;
    case join_kind::full: return nl * std::max<int64_t>(nr, 1) + nr;
    case join_kind::semi:
    case join_kind::anti: break;
  }
  return nl;
}

// Thrown by a join's allocate to skip writing a result too large for the test (unsorted inputs
// can match most rows with most rows).
struct too_many_rows {};

TYPED_TEST(GpuMergeUnchecked, UnsortedInputsStayInBounds) {
  using T = TypeParam;
  std::mt19937_64 rng(test_seed());
  merge_options off;
  off.check_sorted = false;
  const T poison = T(-12345);  // never an input value (they are >= 0)
  int joins_written = 0, joins_skipped = 0;
  for (auto [na, nb] : unchecked_sizes()) {
    for (auto [ua, ub] : kUnsortedPairs) {
      if (!unchecked_kept(na, {ua, ub})) continue;
      const std::string what = std::string(name(ua)) + " x " + name(ub) + " na=" + std::to_string(na) +
                               " nb=" + std::to_string(nb);
      const auto a = unsorted_input<T>(ua, na, rng), b = unsorted_input<T>(ub, nb, rng);
      const value_set<T> values(a, b);
      auto da = dev(a), db = dev(b);
      const span<const T> sa(da), sb(db);

      // merge: every output is an input element; the values name their sources.
      {
        guarded<T> out(na + nb, poison, poison);  // every output is written: none keeps poison
        merge(cuda, sa, sb, out.view(), off);
        for (T x : out.output("merge " + what)) ASSERT_TRUE(values.has(x)) << "merge " << what << ": " << x;
        std::vector<int64_t> av(a.size()), bv(b.size());
        for (size_t i = 0; i < av.size(); ++i) av[i] = int64_t(i);
        for (size_t j = 0; j < bv.size(); ++j) bv[j] = (int64_t{1} << 40) + int64_t(j);
        auto dav = dev(av), dbv = dev(bv);
        guarded<T> keys(na + nb, poison, poison);
        guarded<int64_t> vals(na + nb, 0, -1);
        merge(cuda, sa, span<const int64_t>(dav), sb, span<const int64_t>(dbv), keys.view(), vals.view(), off);
        for (T x : keys.output("merge pairs " + what)) ASSERT_TRUE(values.has(x)) << what;
        for (int64_t v : vals.output("merge pairs values " + what))
          ASSERT_TRUE((v >= 0 && v < na) || (v >= (int64_t{1} << 40) && v < (int64_t{1} << 40) + nb))
              << "merge pairs " << what << ": value " << v;
      }
      // merge_sort sorts whatever it is given.
      {
        guarded<T> out(na, T(0), poison);
        merge_sort(cuda, sa, out.view());
        auto want = a;
        std::stable_sort(want.begin(), want.end(), less<T>);
        expect_same_bits(want, out.output("merge_sort " + what), "merge_sort " + what);
      }
      // Sorted search (queries_sorted, unchecked): ranks of b's elements among a's, in range,
      // every one written (the output starts out of range: on unsorted inputs the clamp may cut
      // queries off a tile's slice, which the tile then searches alone).
      for (side sd : {side::left, side::right, side::pred}) {
        search_options so;
        so.queries_sorted = true;
        const int64_t lo = sd == side::pred ? -1 : 0, hi = sd == side::pred ? na - 1 : na;
        const std::string w = std::string("search side=") + side_name(sd) + " " + what;
        guarded<int64_t> r64(nb, -777, -777);
        search(cuda, sd, sa, sb, r64.view(), so);
        for (int64_t x : r64.output(w)) ASSERT_TRUE(x >= lo && x <= hi) << w << ": " << x;
        guarded<int32_t> r32(nb, -777, -777);
        search(cuda, sd, sa, sb, r32.view(), so);
        for (int32_t x : r32.output("int32 " + w)) ASSERT_TRUE(x >= lo && x <= hi) << "int32 " << w << ": " << x;
      }
      // Set operations: the size within the bound, and the same size written, in one pass (room
      // for the bound) and after a counting pass (room for the size alone).
      for (set_op op : kSetOps) {
        const std::string w = std::string(to_string(op)) + " " + what;
        const int64_t bound = core::set_op_bound(op, na, nb);
        const int64_t size = set_operation_size(cuda, op, sa, sb, off);
        ASSERT_TRUE(size >= 0 && size <= bound) << w << ": size " << size << ", bound " << bound;
        for (int64_t room : {bound, size}) {
          guarded<T> out(room, poison, poison);
          const int64_t written = set_operation(cuda, op, sa, sb, out.view(), off);
          ASSERT_EQ(written, size) << w << " room " << room;
          const auto got = out.output(w + " room " + std::to_string(room));
          for (int64_t i = 0; i < written; ++i) ASSERT_TRUE(values.has(got[size_t(i)])) << w << " at " << i;
        }
      }
      // Joins: the size within the bound; the write (allocate form) into guarded outputs, whose
      // indices stay in [-1, n). Positions may coincide on unsorted inputs, so the outputs start
      // at -1, an index a join may write.
      for (join_kind kind : kJoins) {
        const std::string w = std::string(to_string(kind)) + " join " + what;
        const int64_t bound = join_bound(kind, na, nb);
        const int64_t size = join_size(cuda, kind, sa, sb, off);
        ASSERT_TRUE(size >= 0 && size <= bound) << w << ": size " << size << ", bound " << bound;
        const bool left_only = core::join_left_only(kind);
        std::unique_ptr<guarded<int64_t>> li, ri;
        int64_t rows = -1;
        try {
          const int64_t returned = join(cuda, kind, sa, sb, std::function<join_output(int64_t)>([&](int64_t n) {
            rows = n;
            if (n < 0 || n > bound) return join_output{};  // null: refused (and reported below)
            if (n > (int64_t{1} << 24)) throw too_many_rows{};
            li = std::make_unique<guarded<int64_t>>(n, -1, int64_t{-999});
            if (!left_only) ri = std::make_unique<guarded<int64_t>>(n, -1, int64_t{-999});
            return join_output{li->buffer.data(), left_only ? nullptr : ri->buffer.data()};
          }), off);
          ASSERT_EQ(returned, rows) << w;
        } catch (const too_many_rows&) {
          ++joins_skipped;
          continue;
        } catch (const invalid_argument& e) {  // the allocate above refused rows past the bound
          ADD_FAILURE() << w << ": rows " << rows << ", bound " << bound << ": " << e.what();
          continue;
        }
        if (!li) continue;
        ++joins_written;
        for (int64_t x : li->output(w + " left")) ASSERT_TRUE(x >= -1 && x < na) << w << ": left " << x;
        if (ri)
          for (int64_t x : ri->output(w + " right")) ASSERT_TRUE(x >= -1 && x < nb) << w << ": right " << x;
      }
    }
  }
  std::printf("[ joins    ] %d written and checked, %d skipped (over 2^24 rows)\n", joins_written,
              joins_skipped);
}

}  // namespace
}  // namespace gsearch::test
