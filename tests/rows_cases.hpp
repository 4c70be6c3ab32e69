#pragma once
// The row-batched search test matrix (gsearch::search_rows), shared by the CPU and GPU tests:
// shapes (rows x k keys, rows x m queries) chosen around the kernel's tiling (many short rows to
// a tile, one row over several tiles, rows too long for shared memory, empty rows and empty
// query lists), each row's keys drawn on their own (random, duplicates, edge values), checked row
// by row against std::lower_bound / std::upper_bound on that row alone.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tools/query_gen.hpp"
#include "gsearch/search.hpp"
#include "test_util.hpp"

namespace gsearch::test {

struct RowsShape {
  int64_t rows, k, m;
};

/// The shapes: the 256 x 4 tile holds 1024 / m rows of m queries; the H100's 227 KB of shared
/// memory per block holds one padded row of up to 232448 / sizeof(T) - 64 keys.
template <class T>
std::vector<RowsShape> rows_shapes() {
  const int64_t smem_row_max = 232448 / int64_t(sizeof(T)) - 2 * warp_width;
  std::vector<RowsShape> v = {{0, 0, 0},  {1, 0, 5},     {4, 0, 3},    {3, 7, 0},     {1, 1, 1},
                              {5, 1, 7},  {7, 31, 33},   {33, 64, 128}, {100, 64, 128}, {9, 3, 1000},
                              {2, 1000, 3000}, {3, 4097, 100}, {50, 17, 13}};
  if (!test_subset()) v.push_back({1025, 8, 1});
  v.push_back({2, smem_row_max, 700});      // one row fills a block's shared memory
  v.push_back({2, smem_row_max + 1, 700});  // too long: global memory
  return v;
}

/// rows x k keys, each row sorted on its own; rows x m queries: row r's queries are drawn from
/// row r's keys, random values and edge values (so most rows see misses, hits and both ends).
template <class T>
std::pair<std::vector<T>, std::vector<T>> rows_inputs(const RowsShape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> keys(size_t(s.rows * s.k)), queries(size_t(s.rows * s.m));
  const auto edges = edge_values<T>();
  gen::splitmix64 values{rng()};
  for (int64_t r = 0; r < s.rows; ++r) {
    auto row = keys.begin() + r * s.k;
    const int kind = int(r % 3);  // random, heavy duplicates, edge values mixed in
    for (int64_t i = 0; i < s.k; ++i)
      row[i] = kind == 0   ? gen::random_value<T>(values)
               : kind == 1 ? small_value<T>(rng, 7)
                           : (rng() % 4 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, 100));
    std::sort(row, row + s.k, [](T a, T b) { return key_less(a, b); });
    for (int64_t j = 0; j < s.m; ++j) {
      T& q = queries[size_t(r * s.m + j)];
      const int pick = int(rng() % 4);
      q = pick == 0 && s.k > 0 ? row[rng() % uint64_t(s.k)]
          : pick == 1          ? edges[rng() % edges.size()]
          : pick == 2          ? small_value<T>(rng, 100)
                               : gen::random_value<T>(values);
    }
  }
  return {keys, queries};
}

/// The reference: each query searched in its own row only.
template <class T>
std::vector<int64_t> rows_reference(const RowsShape& s, const std::vector<T>& keys,
                                    const std::vector<T>& queries, side sd) {
  std::vector<int64_t> want(queries.size());
  for (int64_t r = 0; r < s.rows; ++r) {
    const std::vector<T> row(keys.begin() + r * s.k, keys.begin() + (r + 1) * s.k);
    for (int64_t j = 0; j < s.m; ++j)
      want[size_t(r * s.m + j)] = reference(row, queries[size_t(r * s.m + j)], sd);
  }
  return want;
}

/// Runs one row-batched search: (rows, keys, queries, side, algorithm, int32 output?) -> results.
template <class T>
using RowsRunner = std::function<std::vector<int64_t>(int64_t, const std::vector<T>&, const std::vector<T>&,
                                                      side, algorithm, bool)>;

template <class T>
void run_rows_matrix(const RowsRunner<T>& run, uint64_t seed) {
  for (const RowsShape& s : rows_shapes<T>()) {
    const auto [keys, queries] = rows_inputs<T>(s, seed + uint64_t(s.rows * 1000003 + s.k * 131 + s.m));
    const bool long_rows = s.k > 5000;
    for (side sd : {side::left, side::right, side::pred}) {
      const auto want = rows_reference(s, keys, queries, sd);
      for (algorithm a : {algorithm::auto_, algorithm::pbs_cl, algorithm::binary, algorithm::pbs, algorithm::pbs_cf}) {
        if ((long_rows || test_subset()) && a != algorithm::auto_ && a != algorithm::binary) continue;
        for (bool out32 : {false, true}) {
          if (out32 && sd == side::left) continue;
          const auto got = run(s.rows, keys, queries, sd, a, out32);
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < want.size(); ++i)
            ASSERT_EQ(got[i], want[i]) << "rows=" << s.rows << " k=" << s.k << " m=" << s.m
                                       << " side=" << side_name(sd) << " algo=" << to_string(a)
                                       << (out32 ? " int32" : " int64") << " at row " << int64_t(i) / s.m
                                       << " query " << int64_t(i) % s.m << " q=" << queries[i];
        }
      }
    }
  }
}

}  // namespace gsearch::test
