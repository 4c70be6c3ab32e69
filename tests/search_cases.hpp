#pragma once
// The batched-search test matrix, shared by the CPU tests and the GPU tests: for every key type,
// a size sweep and adversarial inputs, each run through every algorithm and side and checked
// against std::lower_bound / std::upper_bound. `Runner` runs one search on a backend.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tools/query_gen.hpp"
#include "cuda/launch.hpp"
#include "gsearch/device.hpp"
#include "gsearch/search.hpp"
#include "test_util.hpp"

namespace gsearch::test {

struct SearchCase {
  std::string name;
  int64_t k;
};

/// The shared memory per block the sweep's boundary is drawn at: the testing override where one
/// is set (cuda/search.hpp's set_shared_limit_override, GSEARCH_SHARED_LIMIT_BYTES), else the
/// current device's opt-in maximum, else (no GPU) the H100's 227 KB.
inline int64_t shared_limit_for_tests() {
  int64_t limit = cuda_device_count() > 0 ? cuda_device_properties().shared_per_block_optin : 232448;
  if (const int64_t o = cuda_backend::shared_limit_override(); o > 0)
    limit = std::min(limit, std::max(o, cuda_backend::min_shared_limit_override));
  return limit;
}

/// Key counts of the sweep: 0, 1, 2, 31, 32, 33, w^2, the shared-memory maximum for T (that
/// limit less the padding: 227 KB on the H100) and one more (the global-memory path).
template <class T>
std::vector<int64_t> key_count_sweep() {
  const int64_t smem_max = shared_limit_for_tests() / int64_t(sizeof(T)) - 2 * warp_width;
  return {0, 1, 2, 31, 32, 33, 1024, 4097, smem_max, smem_max + 1};
}

/// Query sets for a key list: (name, queries).
template <class T>
std::vector<std::pair<std::string, std::vector<T>>> query_sets(const std::vector<T>& keys, int64_t q,
                                                                uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t k = int64_t(keys.size());
  std::vector<std::pair<std::string, std::vector<T>>> sets;
  // Random: half drawn from the keys (hits), half random values (mostly misses), edges mixed in.
  std::vector<T> random = gen::random_queries_from_keys(keys.data(), k, q, rng());
  const auto edges = edge_values<T>();
  gen::splitmix64 values{rng()};
  for (int64_t i = 0; i < q; ++i) {
    if (i % 2 == 1) random[i] = gen::random_value<T>(values);
    if (i % 97 == 0) random[i] = edges[size_t(i / 97) % edges.size()];
  }
  sets.emplace_back("random", random);
  if (k > 0) sets.emplace_back("worst-case", gen::worst_case_queries(keys.data(), k, q, rng()));
  std::vector<T> sorted = random;
  sort_keys(sorted);
  sets.emplace_back("sorted", sorted);
  sets.emplace_back("reversed", std::vector<T>(sorted.rbegin(), sorted.rend()));
  sets.emplace_back("all-below", std::vector<T>(size_t(q), std::numeric_limits<T>::lowest()));
  sets.emplace_back("all-above", std::vector<T>(size_t(q), key_traits<T>::highest()));
  return sets;
}

/// Key lists of k keys: random (wide range), heavy duplicates, all equal, with edge values.
template <class T>
std::vector<std::pair<std::string, std::vector<T>>> key_sets(int64_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::string, std::vector<T>>> sets;
  sets.emplace_back("random", gen::sorted_keys<T>(k, rng()));
  std::vector<T> dup(static_cast<size_t>(k));
  for (auto& x : dup) x = small_value<T>(rng, 13);
  sort_keys(dup);
  sets.emplace_back("duplicates", dup);
  sets.emplace_back("all-equal", std::vector<T>(size_t(k), T(3)));
  std::vector<T> edgy(static_cast<size_t>(k));
  const auto edges = edge_values<T>();
  for (auto& x : edgy) x = rng() % 4 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, 1000);
  sort_keys(edgy);
  sets.emplace_back("edge-values", edgy);
  return sets;
}

/// Runs one search: (keys, queries, side, algorithm, int32 output?) -> results as int64.
template <class T>
using Runner = std::function<std::vector<int64_t>(const std::vector<T>&, const std::vector<T>&, side,
                                                  algorithm, bool)>;

/// The whole matrix for one key type. `queries_per_case` queries per (keys, query set);
/// `algos` the algorithms to cover; `ks` the key counts (default: key_count_sweep).
template <class T>
void run_search_matrix(const Runner<T>& run, int64_t queries_per_case, const std::vector<algorithm>& algos,
                       uint64_t seed, const std::vector<int64_t>& ks = key_count_sweep<T>()) {
  for (int64_t k : ks) {
    for (const auto& [kname, keys] : key_sets<T>(k, seed + uint64_t(k))) {
      // Big key lists: one key set is enough to cover the shared-memory limit.
      if ((k > 5000 || test_subset()) && kname != "random" && kname != "duplicates") continue;
      for (const auto& [qname, queries] : query_sets<T>(keys, queries_per_case, seed ^ uint64_t(k))) {
        // (all-below in the subset too: a tile with no query among the keys read past the
        // merge's bucket table, which only the full matrix had caught)
        if (test_subset() && qname != "random" && qname != "worst-case" && qname != "all-below") continue;
        for (side s : {side::left, side::right, side::pred}) {
          if (test_subset() && s == side::pred) continue;
          const auto want = reference_all(keys, queries, s);
          for (algorithm a : algos) {
            for (bool out32 : {false, true}) {
              if (out32 && (a != algos.front() || s != side::right)) continue;  // int32 out: spot checks
              const auto got = run(keys, queries, s, a, out32);
              ASSERT_EQ(got.size(), want.size());
              for (size_t i = 0; i < want.size(); ++i)
                ASSERT_EQ(got[i], want[i]) << "keys=" << kname << " k=" << k << " queries=" << qname
                                           << " side=" << side_name(s) << " algo=" << to_string(a)
                                           << (out32 ? " int32" : " int64") << " at query " << i
                                           << " q=" << queries[i];
            }
          }
        }
      }
    }
  }
}

}  // namespace gsearch::test
