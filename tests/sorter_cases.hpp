#pragma once
// search() and equal_range() with a sorter (numpy's sorter=), shared by the CPU and GPU tests:
// unsorted keys and the indices that sort them (and sorters that are no permutation), every side,
// algorithm and output type, against std::lower_bound / std::upper_bound over the keys gathered
// by hand; and the errors (numpy's words), the temporary-memory cap and check_sorted in sorter's
// order. `SorterRunner` runs one call on a backend.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gsearch/search.hpp"
#include "search_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {

/// One call: search(keys, sorter, queries) on side s (equal_range: lower then upper, 2n results,
/// side ignored), int64 or int32 output, with `options`; the results as int64.
template <class T>
using SorterRunner =
    std::function<std::vector<int64_t>(const std::vector<T>& keys, const std::vector<int64_t>& sorter,
                                       const std::vector<T>& queries, side s, bool out32, bool equal_range,
                                       const search_options& options)>;

/// keys[sorter[0]], keys[sorter[1]], ...: the reference's keys, gathered by hand.
template <class T>
std::vector<T> gathered(const std::vector<T>& keys, const std::vector<int64_t>& sorter) {
  std::vector<T> g;
  for (int64_t i : sorter) g.push_back(keys[size_t(i)]);
  return g;
}

/// The indices that sort keys in the library's order (stable), as numpy.argsort(kind='stable').
template <class T>
std::vector<int64_t> argsort(const std::vector<T>& keys) {
  std::vector<int64_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), int64_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return key_less(keys[size_t(a)], keys[size_t(b)]); });
  return idx;
}

/// Sorted key sets of key_sets() shuffled (duplicates, all-equal, NaN and the edge values
/// included), each with its argsort, and two sorters that are no permutation (numpy does not
/// check that): every key's index repeated for an all-equal list, and a sorter that takes each
/// index of the sorted order twice over the first half of an unsorted list.
template <class T>
std::vector<std::pair<std::string, std::pair<std::vector<T>, std::vector<int64_t>>>> sorter_sets(int64_t k,
                                                                                                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::string, std::pair<std::vector<T>, std::vector<int64_t>>>> sets;
  for (auto& [name, keys] : key_sets<T>(k, rng())) {
    std::shuffle(keys.begin(), keys.end(), rng);
    sets.push_back({"shuffled-" + name, {keys, argsort(keys)}});
  }
  if (k > 0) {
    sets.push_back({"repeated-index", {std::vector<T>(size_t(k), T(5)), std::vector<int64_t>(size_t(k), k / 2)}});
    std::vector<T> keys = gen::sorted_keys<T>(k, rng());
    std::shuffle(keys.begin(), keys.end(), rng);
    const std::vector<int64_t> order = argsort(keys);
    std::vector<int64_t> twice(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) twice[size_t(i)] = order[size_t(i / 2)];
    sets.push_back({"each-twice", {keys, twice}});
  }
  return sets;
}

/// The matrix: key counts of key_count_sweep() (the shared-memory boundary included), every
/// sorter set, the query sets of search_cases.hpp, every side and `algos`, int32 spot checks,
/// equal_range; check_sorted on (the gathered keys are sorted).
template <class T>
void run_sorter_matrix(const SorterRunner<T>& run, int64_t queries_per_case, const std::vector<algorithm>& algos,
                       uint64_t seed, const std::vector<int64_t>& ks = key_count_sweep<T>()) {
  for (int64_t k : ks) {
    for (const auto& [sname, set] : sorter_sets<T>(k, seed + uint64_t(k))) {
      if ((k > 5000 || test_subset()) && sname != "shuffled-random" && sname != "shuffled-duplicates") continue;
      const auto& [keys, sorter] = set;
      const std::vector<T> sorted = gathered(keys, sorter);
      for (const auto& [qname, queries] : query_sets<T>(sorted, queries_per_case, seed ^ uint64_t(k))) {
        if (test_subset() && qname != "random") continue;
        const auto where = [&](const std::string& what) {
          return "keys=" + sname + " k=" + std::to_string(k) + " queries=" + qname + " " + what;
        };
        for (algorithm a : algos) {
          const search_options options{a, /*check_sorted=*/true};
          for (side s : {side::left, side::right, side::pred}) {
            for (bool out32 : {false, true}) {
              if (out32 && (a != algos.front() || s != side::right)) continue;  // int32 out: spot checks
              ASSERT_EQ(run(keys, sorter, queries, s, out32, false, options), reference_all(sorted, queries, s))
                  << where(std::string("side=") + side_name(s) + " algo=" + std::string(to_string(a)) +
                           (out32 ? " int32" : " int64"));
            }
          }
          if (a != algos.front()) continue;
          std::vector<int64_t> both = reference_all(sorted, queries, side::left);
          const std::vector<int64_t> upper = reference_all(sorted, queries, side::right);
          both.insert(both.end(), upper.begin(), upper.end());
          ASSERT_EQ(run(keys, sorter, queries, side::left, false, true, options), both) << where("equal_range");
        }
      }
    }
  }
}

/// The errors and the edges: sizes (numpy's "sorter.size must equal a.size"), indices out of
/// range (numpy's "Sorter index out of range", negative or >= k; the least such position named),
/// no queries (only the size checked, as numpy), empty keys, check_sorted in sorter's order (keys
/// unsorted but sorted by the sorter pass; a sorter that does not sort fails), the cap on
/// temporary memory (the gathered copy counts).
template <class T>
void run_sorter_errors(const SorterRunner<T>& run) {
  const auto expect_error = [&](const std::vector<T>& keys, const std::vector<int64_t>& sorter,
                                const std::vector<T>& queries, const search_options& options, const std::string& words,
                                bool equal_range = false) {
    try {
      run(keys, sorter, queries, side::left, false, equal_range, options);
      ADD_FAILURE() << "no error; expected one saying '" << words << "'";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  const std::vector<T> keys{T(30), T(10), T(20), T(40), T(0)};
  const std::vector<int64_t> order{4, 1, 2, 0, 3};
  const std::vector<T> queries{T(0), T(15), T(20), T(45), T(10)};
  const search_options plain{};
  // The answer in sorter's order, and without the check.
  EXPECT_EQ(run(keys, order, queries, side::left, false, false, plain), (std::vector<int64_t>{0, 2, 2, 5, 1}));
  EXPECT_EQ(run(keys, order, queries, side::right, true, false, plain), (std::vector<int64_t>{1, 2, 3, 5, 2}));
  EXPECT_EQ(run(keys, order, queries, side::pred, false, false, plain), (std::vector<int64_t>{0, 1, 2, 4, 1}));

  expect_error(keys, {4, 1, 2, 0}, queries, plain, "sorter.size must equal a.size (4 sorter indices for 5 keys)");
  expect_error(keys, {4, 1, 2, 0, 3, 3}, queries, plain, "sorter.size must equal a.size");
  expect_error(keys, {}, queries, plain, "sorter.size must equal a.size");
  expect_error(keys, {4, 1, -1, 0, 3}, queries, plain, "Sorter index out of range: sorter[2] is not in [0, 5)");
  expect_error(keys, {4, 1, 2, 5, 3}, queries, plain, "Sorter index out of range: sorter[3]");
  expect_error(keys, {4, 1, 2, 0, std::numeric_limits<int64_t>::min()}, queries, plain, "sorter[4]");
  expect_error(keys, {9, 1, 2, -3, 3}, queries, plain, "sorter[0]");  // the least position
  expect_error(keys, {4, 1, 2, 0, 5}, queries, plain, "Sorter index out of range", /*equal_range=*/true);
  expect_error(keys, {4, 1, 0}, queries, plain, "sorter.size must equal a.size", /*equal_range=*/true);

  // No queries: the size is checked, the indices are not (numpy's answer).
  EXPECT_TRUE(run(keys, {4, 1, 2, 0, 9}, {}, side::left, false, false, plain).empty());
  expect_error(keys, {4, 1}, {}, plain, "sorter.size must equal a.size");
  // Empty keys: every query at 0 (pred -1).
  EXPECT_EQ(run({}, {}, queries, side::right, false, false, {algorithm::auto_, true}), std::vector<int64_t>(5, 0));
  EXPECT_EQ(run({}, {}, queries, side::pred, true, false, plain), std::vector<int64_t>(5, -1));
  expect_error({}, {0}, queries, plain, "sorter.size must equal a.size (1 sorter indices for 0 keys)");

  // check_sorted checks the keys in sorter's order: unsorted keys pass, a sorter that does not
  // sort them fails (and so does the identity).
  const search_options checked{algorithm::auto_, true};
  EXPECT_EQ(run(keys, order, queries, side::left, false, false, checked), (std::vector<int64_t>{0, 2, 2, 5, 1}));
  expect_error(keys, {0, 1, 2, 3, 4}, queries, checked, "keys[sorter] are not sorted");
  expect_error(keys, {4, 2, 1, 0, 3}, queries, checked, "keys[sorter] are not sorted", /*equal_range=*/true);

  // NaN keys: last in the order, as searched without a sorter.
  if constexpr (std::is_floating_point_v<T>) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const std::vector<T> fk{nan, T(1), T(-0.0), nan, T(0.0), -std::numeric_limits<T>::infinity()};
    const std::vector<int64_t> fs = argsort(fk);
    EXPECT_EQ(fs, (std::vector<int64_t>{5, 2, 4, 1, 0, 3}));
    EXPECT_EQ(run(fk, fs, {nan, T(0.0), T(2)}, side::left, false, false, checked), (std::vector<int64_t>{4, 1, 4}));
    EXPECT_EQ(run(fk, fs, {nan, T(-0.0), T(2)}, side::right, false, false, checked), (std::vector<int64_t>{6, 3, 4}));
  }

  // The temporary-memory cap: the gathered copy (5 keys) counts; the search gets the rest.
  const int64_t copy = int64_t(keys.size() * sizeof(T));
  for (const int64_t cap : {int64_t{0}, copy - 1})
    expect_error(keys, order, queries, {algorithm::auto_, false, queries_order::any, cap},
                 "more than search_options::max_temp_bytes = " + std::to_string(cap));
  EXPECT_EQ(run(keys, order, queries, side::left, false, false, {algorithm::auto_, false, queries_order::any, copy}),
            (std::vector<int64_t>{0, 2, 2, 5, 1}));
  expect_error(keys, order, queries, {algorithm::index, false, queries_order::any, copy}, "algorithm::index needs");
  // Sorted queries (Merge Path) and detection run on the gathered keys too.
  const std::vector<T> ascending{T(0), T(10), T(15), T(20), T(45)};
  for (const queries_order o : {queries_order::sorted, queries_order::detect})
    EXPECT_EQ(run(keys, order, ascending, side::right, false, false, {algorithm::auto_, true, o}),
              (std::vector<int64_t>{1, 2, 2, 3, 5}));
}

}  // namespace gsearch::test
