#pragma once
// The static index's test matrix, shared by the CPU tests and the GPU tests: for every key type,
// key counts around the node and level boundaries of both backends' layouts, the key and query
// sets of search_cases.hpp (random, duplicates, all equal, edge values; random, worst case,
// sorted, reversed, all below, all above) and every side, each result against
// std::lower_bound / std::upper_bound. `IndexRunner` builds an index on a backend and searches.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "gsearch/static_index.hpp"
#include "search_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {

/// Builds an index of keys, searches queries on side s: results as int64.
template <class T>
using IndexRunner = std::function<std::vector<int64_t>(const std::vector<T>&, const std::vector<T>&, side, bool out32)>;

/// Key counts: empty, one node, and each level boundary of both layouts (B = cpu_node_keys and
/// cuda_node_keys: n = B (B+1)^h and one either side), up to three levels.
template <class T>
std::vector<int64_t> index_key_counts() {
  std::vector<int64_t> n{0, 1, 2, 7, 100};
  for (int64_t b : {int64_t(core::cpu_node_keys<T>), int64_t(core::cuda_node_keys<T>)}) {
    for (int64_t full = b; full <= 40000; full *= b + 1) {
      n.insert(n.end(), {full - 1, full, full + 1});
    }
  }
  return n;
}

template <class T>
void run_index_matrix(const IndexRunner<T>& run, int64_t queries_per_case, uint64_t seed) {
  for (int64_t k : index_key_counts<T>()) {
    for (const auto& [kname, keys] : key_sets<T>(k, seed + uint64_t(k))) {
      if ((k > 5000 || test_subset()) && kname != "random" && kname != "edge-values") continue;
      for (const auto& [qname, queries] : query_sets<T>(keys, queries_per_case, seed ^ uint64_t(k))) {
        if (test_subset() && qname != "random" && qname != "all-above") continue;
        for (side s : {side::left, side::right, side::pred}) {
          const auto want = reference_all(keys, queries, s);
          for (bool out32 : {false, true}) {
            if (out32 && s != side::right) continue;  // int32 out: spot checks
            const auto got = run(keys, queries, s, out32);
            ASSERT_EQ(got.size(), want.size());
            for (size_t i = 0; i < want.size(); ++i)
              ASSERT_EQ(got[i], want[i]) << "keys=" << kname << " k=" << k << " queries=" << qname
                                         << " side=" << side_name(s) << (out32 ? " int32" : " int64")
                                         << " at query " << i << " q=" << queries[i];
          }
        }
      }
    }
  }
}

}  // namespace gsearch::test
