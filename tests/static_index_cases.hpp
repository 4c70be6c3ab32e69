#pragma once
// The static index's test matrix, shared by the CPU tests and the GPU tests: search_cases.hpp's
// matrix (its key and query sets, every side, each result against std::lower_bound /
// std::upper_bound) over key counts around the node and level boundaries of both backends'
// layouts. `IndexRunner` builds an index on a backend and searches.

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

/// search_cases.hpp's matrix over index_key_counts, each search through `run` (the algorithm
/// argument is the matrix's one entry and unused).
template <class T>
void run_index_matrix(const IndexRunner<T>& run, int64_t queries_per_case, uint64_t seed) {
  const Runner<T> search = [&](const std::vector<T>& keys, const std::vector<T>& queries, side s, algorithm,
                               bool out32) { return run(keys, queries, s, out32); };
  run_search_matrix<T>(search, queries_per_case, {algorithm::index}, seed, index_key_counts<T>());
}

}  // namespace gsearch::test
