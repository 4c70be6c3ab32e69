#pragma once
// What the search server's tests share (server_test.cpp, server_socket_test.cpp): sorted keys and
// queries of small ranges (duplicates), and the three sides. The reference is test_util.hpp's
// reference_all (std::lower_bound / std::upper_bound in gsearch's order).

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "test_util.hpp"

namespace gsearch::test {

template <class T>
std::vector<T> sorted_keys(int64_t n, uint64_t seed, int range) {
  std::mt19937_64 rng(seed);
  std::vector<T> k(static_cast<size_t>(n));
  for (T& x : k) x = small_value<T>(rng, range);
  sort_keys(k);
  return k;
}

template <class T>
std::vector<T> random_queries(std::mt19937_64& rng, int64_t n, int range) {
  std::vector<T> q(static_cast<size_t>(n));
  for (T& x : q) x = small_value<T>(rng, range);
  return q;
}

inline constexpr side server_sides[] = {side::left, side::right, side::pred};

}  // namespace gsearch::test
