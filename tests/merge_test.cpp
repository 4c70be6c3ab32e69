// The merge-like operations on the CPU backend (merge.hpp, and search() with queries_sorted)
// against independent references: std::merge, std::stable_sort on key-value pairs (stability),
// std::set_intersection / union / difference / symmetric_difference, a join written from its
// definition (core/join.hpp's order) and cross-checked with a nested loop, std::lower_bound /
// upper_bound. Every key type; sizes 0, 1, 2, around the CPU's 2^16-diagonal tile, several tiles
// with 1, 2 and 3 threads (the tile and thread boundaries are where the Merge Path / Balanced
// Path splits fall); heavy duplicates, all-equal, disjoint, interleaved, one side empty, NaN /
// -0.0 / inf and the integer extremes. Results are compared bit for bit, so -0.0 against 0.0 and
// NaN payloads show where each element came from. Then the argument checks.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu/tuning.hpp"
#include "gsearch/gsearch.hpp"
#include "merge_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

// src/merge/cpu.cpp's tile (src/cpu/tuning.hpp): a thread's share of the output diagonals is a
// whole number of these.
constexpr int64_t kTile = cpu_backend::merge_tuning::tile;

template <class T>
std::string show(T x) {
  std::ostringstream s;
  if constexpr (std::is_floating_point_v<T>) {
    if (x != x) return std::signbit(x) ? "-nan" : "nan";
    if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  }
  s << +x;
  return s.str();
}

/// Bit-for-bit equality of two arrays, naming the first difference.
template <class T>
::testing::AssertionResult same(const std::vector<T>& want, const std::vector<T>& got) {
  if (want.size() != got.size())
    return ::testing::AssertionFailure() << "size " << got.size() << ", expected " << want.size();
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&want[i], &got[i], sizeof(T)) != 0)
      return ::testing::AssertionFailure() << "element " << i << " of " << want.size() << " is "
                                           << show(got[i]) << ", expected " << show(want[i]);
  return ::testing::AssertionSuccess();
}

// --- inputs ----------------------------------------------------------------------------------

enum class Shape { random, dups, all_equal, disjoint, interleaved, edges };
constexpr Shape kShapes[] = {Shape::random,   Shape::dups,        Shape::all_equal,
                             Shape::disjoint, Shape::interleaved, Shape::edges};
const char* name(Shape s) {
  switch (s) {
    case Shape::random: return "random";
    case Shape::dups: return "dups";
    case Shape::all_equal: return "all-equal";
    case Shape::disjoint: return "disjoint";
    case Shape::interleaved: return "interleaved";
    case Shape::edges: return "edges";
  }
  return "?";
}

/// A value spread over T's range (integers: every bit pattern; floats: +-2.5e5 in quarters).
template <class T>
T wide_value(std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<T>) return T(double(int64_t(rng() % 2000001) - 1000000) / 4);
  else return T(rng());
}

/// The edge values, plus -NaN for floats (every NaN is equal to every other).
template <class T>
std::vector<T> edges_and_nans() {
  auto e = edge_values<T>();
  if constexpr (std::is_floating_point_v<T>) e.push_back(-std::numeric_limits<T>::quiet_NaN());
  return e;
}

/// An input of n elements of a shape (unsorted); `which` tells A (0) from B (1) for disjoint
/// (A below B) and interleaved (A even, B odd).
template <class T>
std::vector<T> make_values(Shape s, int64_t n, int which, std::mt19937_64& rng) {
  std::vector<T> v(static_cast<size_t>(n));
  const auto edges = edges_and_nans<T>();
  for (T& x : v) {
    switch (s) {
      case Shape::random: x = wide_value<T>(rng); break;
      case Shape::dups: x = small_value<T>(rng, 16); break;
      case Shape::all_equal: x = T(7); break;
      case Shape::disjoint: x = T(int64_t(rng() % 1000) + 2000 * which); break;
      case Shape::interleaved: x = T(2 * int64_t(rng() % 100000) + which); break;
      case Shape::edges:
        x = rng() % 3 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, 8);
        if constexpr (std::is_floating_point_v<T>)
          if (rng() % 5 == 0) x = rng() % 2 ? T(0.0) : T(-0.0);
        break;
    }
  }
  return v;
}

template <class T>
std::vector<T> make_sorted(Shape s, int64_t n, int which, std::mt19937_64& rng) {
  auto v = make_values<T>(s, n, which, rng);
  sort_keys(v);  // std::sort: -0.0 / 0.0 and the NaNs land in arbitrary order, which is fine
  return v;
}

/// The sorted multi-tile inputs, made once per process and key type (sorting them is most of
/// the tests' time) and shared by the merge, set and search tests; freed after each suite.
template <class T>
std::map<std::tuple<int, int64_t, int>, std::vector<T>>& input_cache() {
  static std::map<std::tuple<int, int64_t, int>, std::vector<T>> cache;
  return cache;
}
template <class T>
const std::vector<T>& cached_sorted(Shape s, int64_t n, int which) {
  static const uint64_t seed = test_seed();
  auto& cache = input_cache<T>();
  const auto key = std::make_tuple(int(s), n, which);
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::mt19937_64 rng(seed ^ (uint64_t(n) * 0x9e3779b97f4a7c15ull) ^ (uint64_t(s) << 8) ^ uint64_t(which));
    it = cache.emplace(key, make_sorted<T>(s, n, which, rng)).first;
  }
  return it->second;
}

struct Sizes {
  int64_t a, b;
};
// A and B sizes: empty, one side empty, tiny (one thread: below two tiles)...
const std::vector<Sizes> kSmallPairs{{0, 0}, {0, 1}, {1, 0}, {1, 1},     {2, 1},
                                     {2, 2}, {0, 5}, {5, 0}, {100, 37}, {3000, 2000}};
// ... and A + B around the tiles where a second thread starts (2 tiles: one worker below, two
// above, the second with a single diagonal at 2 tiles + 1), several tiles (three workers, the
// third at 4 tiles), one element against several tiles, one side empty.
// Each with the threads that split it differently: 2 around two tiles (3 would give the same
// two workers), 2 and 3 on five tiles, 3 on four; the five tiles with every shape.
struct BigCase {
  Sizes s;
  std::vector<int> threads;
  bool swapped;  // also run with A and B exchanged, and with every shape (else three)
};
bool runs_shape(const BigCase& c, Shape shape) {
  return c.swapped || shape == Shape::dups || shape == Shape::edges || shape == Shape::disjoint;
}
const std::vector<BigCase> kBigPairs{{{kTile, kTile - 1}, {2}, false},
                                     {{kTile, kTile}, {2}, false},
                                     {{kTile + 1, kTile}, {2}, false},
                                     {{3 * kTile + 7, 2 * kTile - 3}, {2, 3}, true},
                                     {{1, 4 * kTile}, {3}, true},
                                     {{4 * kTile, 0}, {3}, false}};
// Threads for other multi-tile inputs: two, and three (more than the cores: a third split
// point). (One thread runs every small input: they are below two tiles.)
const int kThreads[] = {2, 3};

std::string ctx(const char* shape, Sizes s, int threads) {
  return std::string("shape=") + shape + " na=" + std::to_string(s.a) + " nb=" + std::to_string(s.b) +
         " threads=" + std::to_string(threads);
}

// Runs check(exec, a, b, what, every_form) on the input pairs of the merge and set tests, for
// each shape: the small pairs on one thread, also swapped where the sizes differ (B first:
// disjoint B below A); then the big pairs (cached) on each of their threads, also swapped where
// the case says. every_form: on the small pairs and on the five tiles with three threads (not
// swapped); a check may do less elsewhere.
template <class T, class Check>
void for_each_pair(const Check& check) {
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (Shape shape : kShapes) {
    for (Sizes s : kSmallPairs) {
      const auto a = make_sorted<T>(shape, s.a, 0, rng), b = make_sorted<T>(shape, s.b, 1, rng);
      ASSERT_NO_FATAL_FAILURE(check(cpu, a, b, ctx(name(shape), s, 0), true));
      if (s.a != s.b) {
        ASSERT_NO_FATAL_FAILURE(check(cpu, b, a, ctx(name(shape), {s.b, s.a}, 0) + " swapped", true));
      }
    }
    for (const BigCase& big : kBigPairs) {
      if (!runs_shape(big, shape)) continue;
      const auto& [s, threads_list, swapped] = big;
      const auto &a = cached_sorted<T>(shape, s.a, 0), &b = cached_sorted<T>(shape, s.b, 1);
      for (int threads : threads_list) {
        ASSERT_NO_FATAL_FAILURE(check(cpu.with_threads(threads), a, b, ctx(name(shape), s, threads),
                                      threads == 3 && swapped));
        if (swapped) {
          ASSERT_NO_FATAL_FAILURE(check(cpu.with_threads(threads), b, a,
                                        ctx(name(shape), {s.b, s.a}, threads) + " swapped", false));
        }
      }
    }
  }
}

template <class T>
class CpuMerge : public subset_typed_test<T> {
 public:
  static void TearDownTestSuite() { input_cache<T>().clear(); }
};
TYPED_TEST_SUITE(CpuMerge, KeyTypes);

// --- merge -----------------------------------------------------------------------------------

template <class T>
void check_merge(const cpu_t& exec, const std::vector<T>& a, const std::vector<T>& b,
                 const std::string& what) {
  const size_t n = a.size() + b.size();
  std::vector<T> want(n);
  std::merge(a.begin(), a.end(), b.begin(), b.end(), want.begin(), less<T>);
  std::vector<T> got(n, T(3));
  merge(exec, span<const T>(a), span<const T>(b), span<T>(got));
  ASSERT_TRUE(same(want, got)) << what << " (keys)";

  // Key-value: A's values 0, 1, ..., B's -1, -2, ...; std::merge of the pairs is stable.
  std::vector<int64_t> av(a.size()), bv(b.size());
  for (size_t i = 0; i < a.size(); ++i) av[i] = int64_t(i);
  for (size_t j = 0; j < b.size(); ++j) bv[j] = -1 - int64_t(j);
  const auto [want_keys, want_values] = reference_merge(a, av, b, bv);
  std::vector<int64_t> got_values(n, 99);
  std::fill(got.begin(), got.end(), T(3));
  merge(exec, span<const T>(a), span<const int64_t>(av), span<const T>(b), span<const int64_t>(bv),
        span<T>(got), span<int64_t>(got_values));
  ASSERT_TRUE(same(want_keys, got)) << what << " (key-value: keys)";
  ASSERT_TRUE(same(want_values, got_values)) << what << " (key-value: values)";
}

TYPED_TEST(CpuMerge, MergeAgainstStdMerge) {
  using T = TypeParam;
  ASSERT_NO_FATAL_FAILURE(for_each_pair<T>([](const cpu_t& exec, const std::vector<T>& a, const std::vector<T>& b,
                                              const std::string& what, bool) { check_merge(exec, a, b, what); }));
}

// --- merge sort ------------------------------------------------------------------------------

// fastest: gsearch::sort (on the CPU the radix sort for integer keys from 2^12, else the merge
// sort), else gsearch::merge_sort.
template <class T>
void check_sort(const cpu_t& exec, const std::vector<T>& keys, const std::string& what, bool fastest = false) {
  const auto run_keys = [&](span<const T> k, span<T> out) { fastest ? sort(exec, k, out) : merge_sort(exec, k, out); };
  const auto run_pairs = [&](span<const T> k, span<const int64_t> v, span<T> out, span<int64_t> ov) {
    fastest ? sort(exec, k, v, out, ov) : merge_sort(exec, k, v, out, ov);
  };
  const size_t n = keys.size();
  std::vector<int64_t> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = int64_t(i) * 3 - 5;
  const auto [want_keys, want_values] = reference_sort(keys, values);

  std::vector<T> got(n, T(3));
  run_keys(span<const T>(keys), span<T>(got));
  ASSERT_TRUE(same(want_keys, got)) << what << " (keys)";
  std::vector<int64_t> got_values(n, 99);
  std::fill(got.begin(), got.end(), T(3));
  run_pairs(span<const T>(keys), span<const int64_t>(values), span<T>(got), span<int64_t>(got_values));
  ASSERT_TRUE(same(want_keys, got)) << what << " (key-value: keys)";
  ASSERT_TRUE(same(want_values, got_values)) << what << " (key-value: values)";
  // In place.
  std::vector<T> in_place = keys;
  run_keys(span<const T>(in_place), span<T>(in_place));
  ASSERT_TRUE(same(want_keys, in_place)) << what << " (in place)";
  in_place = keys;
  std::vector<int64_t> values_in_place = values;
  run_pairs(span<const T>(in_place), span<const int64_t>(values_in_place), span<T>(in_place),
            span<int64_t>(values_in_place));
  ASSERT_TRUE(same(want_keys, in_place)) << what << " (key-value in place: keys)";
  ASSERT_TRUE(same(want_values, values_in_place)) << what << " (key-value in place: values)";
}

// sort: integer keys from merge_tuning::radix_sort_from (2^12) by the radix sort: every shape,
// one and three threads, and keys of 8, 16 and 24 bits, whose other digits are skipped (an odd
// and an even count of passes: the last must still land in `out`, in place too).
TYPED_TEST(CpuMerge, SortIsStdStableSort) {
  using T = TypeParam;
  std::mt19937_64 rng(test_seed());
  for (Shape shape : {Shape::random, Shape::dups, Shape::all_equal, Shape::edges})
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{100}, int64_t{4097}, kTile + 1})
      for (const cpu_t& exec : {cpu, cpu.with_threads(3)})
        ASSERT_NO_FATAL_FAILURE(check_sort(exec, make_values<T>(shape, n, 0, rng),
                                           std::string("sort shape=") + name(shape) + " n=" + std::to_string(n) +
                                               " threads=" + std::to_string(exec.threads),
                                           true));
  for (int bits : {8, 16, 24}) {
    std::vector<T> keys(5000);
    for (auto& k : keys) k = T(rng() % (uint64_t{1} << bits));
    ASSERT_NO_FATAL_FAILURE(check_sort(cpu, keys, "sort of " + std::to_string(bits) + "-bit keys", true));
  }
}

TYPED_TEST(CpuMerge, MergeSortIsStdStableSort) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (Shape shape : {Shape::random, Shape::dups, Shape::all_equal, Shape::edges}) {
    for (int64_t n : {0, 1, 2, 3, 100, 4097, int(kTile) + 1}) {
      const auto keys = make_values<T>(shape, n, 0, rng);
      ASSERT_NO_FATAL_FAILURE(check_sort(cpu, keys, std::string("shape=") + name(shape) + " n=" + std::to_string(n)));
    }
  }
  // Several runs and merge passes: 1 to 5 threads (0 to 3 passes; odd and even counts start
  // the ping-pong in different buffers); sorted, reversed and duplicate-heavy inputs.
  const int64_t n = 170001;
  std::vector<std::pair<std::string, std::vector<T>>> inputs;
  inputs.emplace_back("random", make_values<T>(Shape::random, n, 0, rng));
  inputs.emplace_back("edges", make_values<T>(Shape::edges, n, 0, rng));
  auto sorted = make_sorted<T>(Shape::dups, n, 0, rng);
  inputs.emplace_back("sorted", sorted);
  std::reverse(sorted.begin(), sorted.end());
  inputs.emplace_back("reversed", sorted);
  for (const auto& [what, keys] : inputs)
    for (int threads : {1, 2, 3, 5})
      ASSERT_NO_FATAL_FAILURE(check_sort(cpu.with_threads(threads), keys,
                                         what + " n=" + std::to_string(n) + " threads=" + std::to_string(threads)));
}

// --- set operations --------------------------------------------------------------------------

template <class T>
void check_set_ops(const cpu_t& exec, const std::vector<T>& a, const std::vector<T>& b,
                   const std::string& what, bool every_form = true) {
  const span<const T> sa(a), sb(b);
  const T fill = T(5);
  for (set_op op : kSetOps) {
    const std::string w = what + " op=" + to_string(op);
    const std::vector<T> want = reference_set(op, a, b);
    const int64_t size = int64_t(want.size());
    ASSERT_EQ(set_operation_size(exec, op, sa, sb), size) << w;
    // Room for the bound: one pass; the rest of out untouched.
    const int64_t bound = core::set_op_bound(op, sa.size(), sb.size());
    std::vector<T> out(size_t(bound), fill);
    ASSERT_EQ(set_operation(exec, op, sa, sb, span<T>(out)), size) << w;
    ASSERT_TRUE(same(want, std::vector<T>(out.begin(), out.begin() + size))) << w << " (bound-sized out)";
    for (int64_t k = size; k < bound; ++k) ASSERT_TRUE(out[size_t(k)] == fill) << w << " wrote past the result at " << k;
    if (!every_form) continue;
    // Room for the result only.
    std::vector<T> exact(size_t(size), fill);
    ASSERT_EQ(set_operation(exec, op, sa, sb, span<T>(exact)), size) << w;
    ASSERT_TRUE(same(want, exact)) << w << " (result-sized out)";
    // The allocate form: called once, with the size.
    int calls = 0;
    std::vector<T> alloc;
    ASSERT_EQ(set_operation(exec, op, sa, sb, std::function<T*(int64_t)>([&](int64_t k) {
                              ++calls;
                              EXPECT_EQ(k, size) << w;
                              alloc.assign(size_t(k), fill);
                              return alloc.data();
                            })),
              size)
        << w;
    ASSERT_EQ(calls, 1) << w;
    ASSERT_TRUE(same(want, alloc)) << w << " (allocate form)";
  }
  if (!every_form) return;
  // The named forms.
  std::vector<T> out(a.size() + b.size());
  const span<T> so(out);
  EXPECT_EQ(set_intersection(exec, sa, sb, so), int64_t(reference_set(set_op::intersection, a, b).size())) << what;
  EXPECT_EQ(set_union(exec, sa, sb, so), int64_t(reference_set(set_op::union_, a, b).size())) << what;
  EXPECT_EQ(set_difference(exec, sa, sb, so), int64_t(reference_set(set_op::difference, a, b).size())) << what;
  EXPECT_EQ(set_symmetric_difference(exec, sa, sb, so),
            int64_t(reference_set(set_op::symmetric_difference, a, b).size()))
      << what;
}

TYPED_TEST(CpuMerge, SetOperationsAgainstStd) {
  using T = TypeParam;
  // Every form on the small pairs and the five tiles with three threads, the sizes and the
  // bound-sized form elsewhere.
  ASSERT_NO_FATAL_FAILURE(for_each_pair<T>(check_set_ops<T>));
}

// Long runs of one key split across tiles and threads: Balanced Path pairs the copies by rank,
// the star split keeps a pair together at a tile boundary.
TYPED_TEST(CpuMerge, SetOperationsLongRunsAcrossTiles) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 4; ++trial) {
    // A few keys, each with a run of up to 2 tiles on either side.
    std::vector<T> a, b;
    for (int key = 0; key < 5; ++key) {
      a.insert(a.end(), size_t(rng() % (2 * kTile)), T(key));
      b.insert(b.end(), size_t(rng() % (2 * kTile)), T(key));
    }
    for (int threads : kThreads)
      ASSERT_NO_FATAL_FAILURE(check_set_ops(cpu.with_threads(threads), a, b,
                                            "runs trial " + std::to_string(trial) + " threads=" + std::to_string(threads), false));
  }
  // Runs that straddle the first tile boundary by one element, on either side.
  for (int64_t shift : {-2, -1, 0, 1, 2}) {
    const auto [a2, b2] = straddling_runs<T>(kTile, kTile, shift);
    for (int threads : {1, 2})
      ASSERT_NO_FATAL_FAILURE(check_set_ops(cpu.with_threads(threads), a2, b2, "straddle shift " + std::to_string(shift), false));
  }
}

// --- joins -----------------------------------------------------------------------------------

// The same by a nested loop over all (i, j), then sorted by (key, left index, right index):
// a cross-check of the reference above on small inputs.
template <class T>
Pairs nested_loop_join(join_kind kind, const std::vector<T>& l, const std::vector<T>& r) {
  struct row {
    T key;
    int64_t i, j;
  };
  std::vector<row> rows;
  std::vector<char> right_matched(r.size(), 0);
  for (size_t i = 0; i < l.size(); ++i) {
    bool matched = false;
    for (size_t j = 0; j < r.size(); ++j)
      if (equal_keys(l[i], r[j])) {
        matched = true;
        right_matched[j] = 1;
        if (kind != join_kind::semi && kind != join_kind::anti) rows.push_back({l[i], int64_t(i), int64_t(j)});
      }
    if ((kind == join_kind::semi && matched) || (kind == join_kind::anti && !matched) ||
        (!matched && (kind == join_kind::left || kind == join_kind::full)))
      rows.push_back({l[i], int64_t(i), -1});
  }
  if (kind == join_kind::right || kind == join_kind::full)
    for (size_t j = 0; j < r.size(); ++j)
      if (!right_matched[j]) rows.push_back({r[j], -1, int64_t(j)});
  std::sort(rows.begin(), rows.end(), [](const row& x, const row& y) {
    if (key_less(x.key, y.key) || key_less(y.key, x.key)) return key_less(x.key, y.key);
    return std::tie(x.i, x.j) < std::tie(y.i, y.j);
  });
  Pairs p;
  for (const row& x : rows) {
    p.left.push_back(x.i);
    if (kind != join_kind::semi && kind != join_kind::anti) p.right.push_back(x.j);
  }
  return p;
}

template <class T>
void check_join(const cpu_t& exec, const std::vector<T>& l, const std::vector<T>& r,
                const std::string& what, bool nested = false) {
  const span<const T> sl(l), sr(r);
  for (join_kind kind : kJoins) {
    const std::string w = what + " join=" + to_string(kind);
    const bool left_only = kind == join_kind::semi || kind == join_kind::anti;
    const Pairs want = reference_join(kind, l, r);
    if (nested) {
      const Pairs loop = nested_loop_join(kind, l, r);
      ASSERT_EQ(loop.left, want.left) << w << ": the references disagree";
      ASSERT_EQ(loop.right, want.right) << w << ": the references disagree";
    }
    const int64_t rows = int64_t(want.left.size());
    ASSERT_EQ(join_size(exec, kind, sl, sr), rows) << w;
    // The allocate form: once, with the row count.
    int calls = 0;
    Pairs got;
    const int64_t n = join(exec, kind, sl, sr, std::function<join_output(int64_t)>([&](int64_t k) {
                             ++calls;
                             EXPECT_EQ(k, rows) << w;
                             got.left.assign(size_t(k), -7);
                             got.right.assign(left_only ? 0 : size_t(k), -7);
                             return join_output{got.left.data(), left_only ? nullptr : got.right.data()};
                           }));
    ASSERT_EQ(n, rows) << w;
    ASSERT_EQ(calls, 1) << w;
    ASSERT_TRUE(same(want.left, got.left)) << w << " (left indices)";
    ASSERT_TRUE(same(want.right, got.right)) << w << " (right indices)";
    // The span form, with one spare row left untouched.
    std::vector<int64_t> li(size_t(rows) + 1, -7), ri(left_only ? 0 : size_t(rows) + 1, -7);
    ASSERT_EQ(join(exec, kind, sl, sr, span<int64_t>(li), span<int64_t>(ri)), rows) << w;
    ASSERT_EQ(li.back(), -7) << w;
    li.pop_back();
    ASSERT_TRUE(same(want.left, li)) << w << " (span form, left)";
    if (!left_only) {
      ASSERT_EQ(ri.back(), -7) << w;
      ri.pop_back();
      ASSERT_TRUE(same(want.right, ri)) << w << " (span form, right)";
    }
  }
}

TYPED_TEST(CpuMerge, JoinsAgainstDefinitionAndNestedLoop) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  // Small: every shape, checked against the nested loop too.
  for (Shape shape : kShapes)
    for (Sizes s : {Sizes{0, 0}, Sizes{0, 3}, Sizes{3, 0}, Sizes{1, 1}, Sizes{2, 1}, Sizes{1, 2},
                    Sizes{40, 50}, Sizes{300, 200}}) {
      const auto l = make_sorted<T>(shape, s.a, 0, rng), r = make_sorted<T>(shape, s.b, 1, rng);
      ASSERT_NO_FATAL_FAILURE(check_join(cpu, l, r, ctx(name(shape), s, 0), true));
    }
  // Several tiles of rows, about one match per row (keys in [0, n)), 1 to 3 threads.
  for (Sizes s : {Sizes{3 * kTile + 5, 2 * kTile + 1}, Sizes{kTile + 1, 5 * kTile}}) {
    std::vector<T> l(static_cast<size_t>(s.a)), r(static_cast<size_t>(s.b));
    for (T& x : l) x = T(int64_t(rng() % uint64_t(s.a)));
    for (T& x : r) x = T(int64_t(rng() % uint64_t(s.a)));
    sort_keys(l);
    sort_keys(r);
    for (int threads : kThreads)
      ASSERT_NO_FATAL_FAILURE(check_join(cpu.with_threads(threads), l, r, ctx("one-per-row", s, threads)));
  }
  // Heavy duplicates: one left row owning 300,000 outputs (the writers split inside it), and a
  // 600 x 500 cross product, between unmatched rows on both sides.
  {
    std::vector<T> l{T(1), T(5), T(9)}, r(300000, T(5));
    r.insert(r.begin(), T(0));
    r.push_back(T(10));
    for (int threads : kThreads) ASSERT_NO_FATAL_FAILURE(check_join(cpu.with_threads(threads), l, r, "one heavy row"));
    ASSERT_NO_FATAL_FAILURE(check_join(cpu.with_threads(3), r, l, "one heavy row, swapped"));
  }
  {
    std::vector<T> l(600, T(4)), r(500, T(4));
    l.insert(l.begin(), 1000, T(2));
    r.insert(r.end(), 1000, T(6));
    for (int threads : kThreads) ASSERT_NO_FATAL_FAILURE(check_join(cpu.with_threads(threads), l, r, "cross product"));
  }
}

// NaN joins NaN (all NaNs are equal), -0.0 joins 0.0, inf joins inf.
TYPED_TEST(CpuMerge, JoinSpecialValues) {
  using T = TypeParam;
  if constexpr (std::is_floating_point_v<T>) {
    const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
    const std::vector<T> l{-inf, T(-0.0), T(1), inf, nan, -nan}, r{T(0.0), T(0.0), inf, nan};
    std::vector<int64_t> li(7, -7), ri(7, -7);
    ASSERT_EQ(join(cpu, join_kind::inner, span<const T>(l), span<const T>(r), span<int64_t>(li), span<int64_t>(ri)), 5);
    EXPECT_EQ(li, (std::vector<int64_t>{1, 1, 3, 4, 5, -7, -7}));
    EXPECT_EQ(ri, (std::vector<int64_t>{0, 1, 2, 3, 3, -7, -7}));
    // Full: -inf and 1 alone on the left.
    std::vector<int64_t> fl(7, -7), fr(7, -7);
    ASSERT_EQ(join(cpu, join_kind::full, span<const T>(l), span<const T>(r), span<int64_t>(fl), span<int64_t>(fr)), 7);
    EXPECT_EQ(fl, (std::vector<int64_t>{0, 1, 1, 2, 3, 4, 5}));
    EXPECT_EQ(fr, (std::vector<int64_t>{-1, 0, 1, -1, 2, 3, 3}));
  } else {
    const T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    const std::vector<T> l{lo, lo, T(1), hi}, r{lo, hi, hi};
    std::vector<int64_t> li(6), ri(6);
    ASSERT_EQ(join(cpu, join_kind::inner, span<const T>(l), span<const T>(r), span<int64_t>(li), span<int64_t>(ri)), 4);
    EXPECT_EQ(std::vector<int64_t>(li.begin(), li.begin() + 4), (std::vector<int64_t>{0, 1, 3, 3}));
    EXPECT_EQ(std::vector<int64_t>(ri.begin(), ri.begin() + 4), (std::vector<int64_t>{0, 0, 1, 2}));
  }
}

// --- sorted search ---------------------------------------------------------------------------

template <class T, class Out>
void check_sorted_search(const cpu_t& exec, const std::vector<T>& keys, const std::vector<T>& queries,
                         const std::string& what) {
  search_options o;
  o.queries_sorted = true;
  const span<const T> sk(keys), sq(queries);
  const auto check = [&](const std::vector<int64_t>& want, const std::vector<Out>& got, const std::string& form) {
    const std::vector<int64_t> got64(got.begin(), got.end());
    if (got64 == want) return ::testing::AssertionSuccess();
    size_t j = 0;
    while (got64[j] == want[j]) ++j;
    return ::testing::AssertionFailure() << what << " " << form << " out=int" << (sizeof(Out) * 8) << ": query " << j
                                         << " = " << show(queries[j]) << " gave " << got64[j] << ", expected " << want[j];
  };
  const auto want_lower = reference_all(keys, queries, side::left);
  const auto want_upper = reference_all(keys, queries, side::right);
  for (side s : {side::left, side::right, side::pred}) {
    std::vector<Out> got(queries.size(), Out(-9));
    search(exec, s, sk, sq, span<Out>(got), o);
    std::vector<int64_t> want = s == side::left ? want_lower : want_upper;
    if (s == side::pred)
      for (int64_t& x : want) --x;
    ASSERT_TRUE(check(want, got, std::string("side=") + side_name(s)));
  }
  std::vector<Out> lower(queries.size(), Out(-9)), upper(queries.size(), Out(-9));
  equal_range(exec, sk, sq, span<Out>(lower), span<Out>(upper), o);
  ASSERT_TRUE(check(want_lower, lower, "equal_range lower"));
  ASSERT_TRUE(check(want_upper, upper, "equal_range upper"));
}

TYPED_TEST(CpuMerge, SortedSearchAgainstStdBounds) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (Shape shape : kShapes) {
    for (Sizes s : kSmallPairs) {
      // Keys A, queries B (and the other way round): queries between, equal to and outside keys.
      const auto keys = make_sorted<T>(shape, s.a, 0, rng), queries = make_sorted<T>(shape, s.b, 1, rng);
      ASSERT_NO_FATAL_FAILURE((check_sorted_search<T, int64_t>(cpu, keys, queries, ctx(name(shape), s, 0))));
      ASSERT_NO_FATAL_FAILURE((check_sorted_search<T, int32_t>(cpu, queries, keys, ctx(name(shape), s, 0) + " swapped")));
    }
    for (const BigCase& big : kBigPairs) {
      if (!runs_shape(big, shape)) continue;
      const auto& [s, threads_list, swapped] = big;
      const auto &keys = cached_sorted<T>(shape, s.a, 0), &queries = cached_sorted<T>(shape, s.b, 1);
      for (int threads : threads_list) {
        ASSERT_NO_FATAL_FAILURE((check_sorted_search<T, int64_t>(cpu.with_threads(threads), keys, queries,
                                                                 ctx(name(shape), s, threads))));
        if (swapped) {
          ASSERT_NO_FATAL_FAILURE((check_sorted_search<T, int32_t>(cpu.with_threads(threads), queries, keys,
                                                                   ctx(name(shape), s, threads) + " swapped")));
        }
      }
    }
  }
  // Queries drawn from the keys themselves (every one present, runs of equal queries).
  const auto keys = make_sorted<T>(Shape::dups, 3 * kTile, 0, rng);
  std::vector<T> queries(size_t(2 * kTile));
  for (T& q : queries) q = keys[rng() % keys.size()];
  sort_keys(queries);
  for (int threads : kThreads)
    ASSERT_NO_FATAL_FAILURE((check_sorted_search<T, int64_t>(cpu.with_threads(threads), keys, queries, "queries from keys")));
}

// --- argument checks ---------------------------------------------------------------------------

TYPED_TEST(CpuMerge, UnsortedInputsThrowAndWriteNothing) {
  using T = TypeParam;
  const std::vector<T> sorted{T(1), T(2), T(3)}, unsorted{T(2), T(1), T(3)};
  const span<const T> s(sorted), u(unsorted);
  std::vector<T> out(6, T(9));
  EXPECT_THROW(merge(cpu, u, s, span<T>(out)), invalid_argument);
  EXPECT_THROW(merge(cpu, s, u, span<T>(out)), invalid_argument);
  for (set_op op : kSetOps) {
    EXPECT_THROW(set_operation(cpu, op, u, s, span<T>(out)), invalid_argument) << to_string(op);
    EXPECT_THROW(set_operation(cpu, op, s, u, span<T>(out)), invalid_argument) << to_string(op);
    EXPECT_THROW(set_operation_size(cpu, op, s, u), invalid_argument) << to_string(op);
  }
  EXPECT_EQ(out, std::vector<T>(6, T(9)));
  std::vector<int64_t> li(9, -7), ri(9, -7);
  for (join_kind kind : kJoins) {
    const bool left_only = kind == join_kind::semi || kind == join_kind::anti;
    const span<int64_t> r = left_only ? span<int64_t>() : span<int64_t>(ri);
    EXPECT_THROW(join(cpu, kind, u, s, span<int64_t>(li), r), invalid_argument) << to_string(kind);
    EXPECT_THROW(join(cpu, kind, s, u, span<int64_t>(li), r), invalid_argument) << to_string(kind);
    EXPECT_THROW(join_size(cpu, kind, s, u), invalid_argument) << to_string(kind);
    int calls = 0;
    EXPECT_THROW(join(cpu, kind, u, s, std::function<join_output(int64_t)>([&](int64_t) {
                   ++calls;
                   return join_output{li.data(), ri.data()};
                 })),
                 invalid_argument);
    EXPECT_EQ(calls, 0);
  }
  EXPECT_EQ(li, std::vector<int64_t>(9, -7));
  EXPECT_EQ(ri, std::vector<int64_t>(9, -7));
  // Sorted search: unsorted queries with check_sorted; unsorted keys too.
  search_options o;
  o.queries_sorted = true;
  o.check_sorted = true;
  std::vector<int64_t> r(3, -9);
  EXPECT_THROW(lower_bound(cpu, s, u, span<int64_t>(r), o), invalid_argument);
  EXPECT_THROW(lower_bound(cpu, u, s, span<int64_t>(r), o), invalid_argument);
  std::vector<int64_t> r2(3, -9);
  EXPECT_THROW(equal_range(cpu, s, u, span<int64_t>(r), span<int64_t>(r2), o), invalid_argument);
  EXPECT_EQ(r, std::vector<int64_t>(3, -9));
  EXPECT_EQ(r2, std::vector<int64_t>(3, -9));
  // NaN in the middle is unsorted for floats.
  if constexpr (std::is_floating_point_v<T>) {
    const std::vector<T> nan_mid{T(1), std::numeric_limits<T>::quiet_NaN(), T(2)};
    EXPECT_THROW(merge(cpu, span<const T>(nan_mid), s, span<T>(out)), invalid_argument);
  }
}

// With check_sorted off, unsorted inputs give unspecified results but stay in bounds (the
// sanitizer build checks the accesses); sizes are still what the counting passes say.
TYPED_TEST(CpuMerge, UncheckedUnsortedInputsStayInBounds) {
  using T = TypeParam;
  std::mt19937_64 rng(99);
  merge_options off;
  off.check_sorted = false;
  for (int64_t n : {int64_t{7}, 3 * kTile + 11}) {
    const auto a = make_values<T>(Shape::dups, n, 0, rng), b = make_values<T>(Shape::random, n + 3, 1, rng);
    const span<const T> sa(a), sb(b);
    for (int threads : {1, 3}) {
      const cpu_t exec = cpu.with_threads(threads);
      std::vector<T> m(a.size() + b.size());
      merge(exec, sa, sb, span<T>(m), off);
      for (set_op op : kSetOps) {
        const int64_t size = set_operation_size(exec, op, sa, sb, off);
        EXPECT_LE(size, core::set_op_bound(op, n, n + 3));
        std::vector<T> out(static_cast<size_t>(size));
        EXPECT_EQ(set_operation(exec, op, sa, sb, span<T>(out), off), size) << to_string(op);
        std::vector<T> big(size_t(core::set_op_bound(op, n, n + 3)));
        EXPECT_LE(set_operation(exec, op, sa, sb, span<T>(big), off), int64_t(big.size())) << to_string(op);
      }
      for (join_kind kind : kJoins) {
        const int64_t rows = join_size(exec, kind, sa, sb, off);
        EXPECT_GE(rows, 0);
        if (rows > 50'000'000) continue;
        std::vector<int64_t> li(static_cast<size_t>(rows)), ri(static_cast<size_t>(rows));
        const bool left_only = kind == join_kind::semi || kind == join_kind::anti;
        EXPECT_EQ(join(exec, kind, sa, sb, span<int64_t>(li), left_only ? span<int64_t>() : span<int64_t>(ri), off), rows);
      }
      search_options so;
      so.queries_sorted = true;
      std::vector<int64_t> r(b.size());
      search(exec, side::pred, sa, sb, span<int64_t>(r), so);
      for (int64_t x : r) EXPECT_TRUE(x >= -1 && x <= n);
    }
  }
}

TYPED_TEST(CpuMerge, SizesAndOverlapsThrow) {
  using T = TypeParam;
  std::vector<T> a{T(1), T(2), T(3)}, b{T(2), T(4)};
  const span<const T> sa(a), sb(b);
  std::vector<T> out(5, T(9));
  const std::vector<T> untouched = out;
  // merge: out of the wrong size; out overlapping an input; values of the wrong size.
  EXPECT_THROW(merge(cpu, sa, sb, span<T>(out.data(), 4)), invalid_argument);
  std::vector<T> out6(6, T(9));
  EXPECT_THROW(merge(cpu, sa, sb, span<T>(out6)), invalid_argument);
  EXPECT_EQ(out6, std::vector<T>(6, T(9)));
  std::vector<T> ab(8);
  std::copy(a.begin(), a.end(), ab.begin());
  EXPECT_THROW(merge(cpu, span<const T>(ab.data(), 3), sb, span<T>(ab.data() + 2, 5)), invalid_argument);
  std::vector<int64_t> av{0, 1, 2}, bv{3, 4}, ov(5, -1);
  EXPECT_THROW(merge(cpu, sa, span<const int64_t>(av.data(), 2), sb, span<const int64_t>(bv), span<T>(out),
                     span<int64_t>(ov)),
               invalid_argument);
  EXPECT_THROW(merge(cpu, sa, span<const int64_t>(av), sb, span<const int64_t>(bv), span<T>(out),
                     span<int64_t>(ov.data(), 4)),
               invalid_argument);
  EXPECT_EQ(out, untouched);
  EXPECT_EQ(ov, std::vector<int64_t>(5, -1));
  // merge_sort: sizes; a partial overlap (in place exactly is fine, tested above).
  EXPECT_THROW(merge_sort(cpu, sa, span<T>(out.data(), 2)), invalid_argument);
  std::vector<T> buf{T(3), T(1), T(2), T(0)};
  EXPECT_THROW(merge_sort(cpu, span<const T>(buf.data(), 3), span<T>(buf.data() + 1, 3)), invalid_argument);
  EXPECT_EQ(buf, (std::vector<T>{T(3), T(1), T(2), T(0)}));
  std::vector<int64_t> v{0, 1, 2}, vo(2);
  EXPECT_THROW(merge_sort(cpu, span<const T>(buf.data(), 3), span<const int64_t>(v), span<T>(out.data(), 3),
                          span<int64_t>(vo)),
               invalid_argument);
  // set_operation: out too small for the result (the union has 4 elements) writes nothing;
  // large enough for the result though smaller than the bound works.
  EXPECT_THROW(set_union(cpu, sa, sb, span<T>(out.data(), 3)), invalid_argument);
  EXPECT_EQ(out, untouched);
  EXPECT_EQ(set_union(cpu, sa, sb, span<T>(out.data(), 4)), 4);
  EXPECT_EQ(std::vector<T>(out.begin(), out.begin() + 4), (std::vector<T>{T(1), T(2), T(3), T(4)}));
  EXPECT_EQ(set_intersection(cpu, sa, sb, span<T>(out.data(), 1)), 1);
  EXPECT_THROW(set_intersection(cpu, sa, sb, span<T>(out.data(), 0)), invalid_argument);
  EXPECT_THROW(set_difference(cpu, span<const T>(ab.data(), 3), sb, span<T>(ab.data() + 2, 3)), invalid_argument);
  EXPECT_THROW(set_operation(cpu, set_op(7), sa, sb, span<T>(out)), invalid_argument);
  // join: outputs too small write nothing; semi / anti take no right output; unknown kind.
  std::vector<int64_t> li(3, -7), ri(3, -7);
  const std::vector<T> l{T(1), T(1), T(2)}, r{T(1), T(1)};  // inner: 4 rows
  EXPECT_THROW(join(cpu, join_kind::inner, span<const T>(l), span<const T>(r), span<int64_t>(li), span<int64_t>(ri)),
               invalid_argument);
  std::vector<int64_t> ri4(4, -7);
  EXPECT_THROW(join(cpu, join_kind::inner, span<const T>(l), span<const T>(r), span<int64_t>(li), span<int64_t>(ri4)),
               invalid_argument);
  EXPECT_EQ(li, std::vector<int64_t>(3, -7));
  EXPECT_EQ(ri4, std::vector<int64_t>(4, -7));
  EXPECT_THROW(join(cpu, join_kind::semi, span<const T>(l), span<const T>(r), span<int64_t>(li), span<int64_t>(ri)),
               invalid_argument);
  EXPECT_EQ(join(cpu, join_kind::semi, span<const T>(l), span<const T>(r), span<int64_t>(li), span<int64_t>()), 2);
  EXPECT_EQ(std::vector<int64_t>(li.begin(), li.begin() + 2), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(join(cpu, join_kind::anti, span<const T>(l), span<const T>(r), span<int64_t>(li), span<int64_t>()), 1);
  EXPECT_EQ(li[0], 2);
  std::vector<int64_t> both(8);
  EXPECT_THROW(join(cpu, join_kind::inner, span<const T>(l), span<const T>(r), span<int64_t>(both.data(), 4),
                    span<int64_t>(both.data() + 3, 4)),
               invalid_argument);
  EXPECT_THROW(join_size(cpu, join_kind(9), span<const T>(l), span<const T>(r)), invalid_argument);
  // Null data with a non-zero size.
  EXPECT_THROW(merge(cpu, span<const T>(nullptr, 2), sb, span<T>(out.data(), 4)), invalid_argument);
  // equal_range: sizes, and lower == upper.
  std::vector<int64_t> lo(2), hi(3);
  EXPECT_THROW(equal_range(cpu, sa, sb, span<int64_t>(lo.data(), 1), span<int64_t>(lo)), invalid_argument);
  EXPECT_THROW(equal_range(cpu, sa, sb, span<int64_t>(lo), span<int64_t>(hi)), invalid_argument);
  EXPECT_THROW(equal_range(cpu, sa, sb, span<int64_t>(lo), span<int64_t>(lo)), invalid_argument);
}

}  // namespace
}  // namespace gsearch::test
