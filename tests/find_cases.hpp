#pragma once
// The inputs of the find tests, shared by the CPU tests (find_test.cpp) and the GPU tests
// (gpu_find_test.cpp): where the matches are (Pattern), and for each op a predicate with a value
// that matches it and two that do not.

#include <cstdint>
#include <random>
#include <vector>

#include "gsearch/find.hpp"

namespace gsearch::test {

// The reference match: numpy's elementwise (IEEE) comparisons, written out.
template <class T>
inline bool plain_match(const predicate<T>& p, T x) {
  switch (p.op) {
    case find_op::eq: return x == p.value;
    case find_op::ne: return x != p.value;
    case find_op::lt: return x < p.value;
    case find_op::le: return x <= p.value;
    case find_op::gt: return x > p.value;
    case find_op::ge: return x >= p.value;
    case find_op::in_range: return p.value <= x && x < p.hi;
  }
  return false;
}

enum class Pattern { none, first, last, first_and_last, middle, late, all, every_7th, random_10, block_ends };
constexpr Pattern kPatterns[] = {Pattern::none,   Pattern::first, Pattern::last,      Pattern::first_and_last,
                                 Pattern::middle, Pattern::late,  Pattern::all,       Pattern::every_7th,
                                 Pattern::random_10, Pattern::block_ends};
inline const char* name(Pattern p) {
  constexpr const char* names[] = {"none", "first", "last", "first-and-last", "middle", "late",
                                   "all", "every-7th", "random-10%", "block-ends"};
  return names[int(p)];
}

inline std::vector<char> hits(Pattern p, int64_t n, uint64_t seed) {
  std::vector<char> h(static_cast<size_t>(n));
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < n; ++i) {
    bool hit = false;
    switch (p) {
      case Pattern::none: break;
      case Pattern::first: hit = i == 0; break;
      case Pattern::last: hit = i == n - 1; break;
      case Pattern::first_and_last: hit = i == 0 || i == n - 1; break;
      case Pattern::middle: hit = i == n / 2; break;
      case Pattern::late: hit = i == n - n / 7 - 1; break;
      case Pattern::all: hit = true; break;
      case Pattern::every_7th: hit = i % 7 == 3; break;
      case Pattern::random_10: hit = rng() % 10 == 0; break;
      case Pattern::block_ends: hit = i % 4096 == 4095 || i % 65536 == 1 || i == n - 1; break;
    }
    h[size_t(i)] = hit;
  }
  return h;
}

template <class T>
struct OpCase {
  predicate<T> pred;
  T hit, miss0, miss1;
};
template <class T>
OpCase<T> op_case(find_op op) {
  switch (op) {
    case find_op::eq: return {equal_to(T(20)), T(20), T(10), T(21)};
    case find_op::ne: return {not_equal_to(T(10)), T(20), T(10), T(10)};
    case find_op::lt: return {less(T(15)), T(14), T(15), T(20)};
    case find_op::le: return {less_equal(T(10)), T(10), T(11), T(20)};
    case find_op::gt: return {greater(T(10)), T(11), T(10), T(3)};
    case find_op::ge: return {greater_equal(T(20)), T(20), T(19), T(0)};
    case find_op::in_range: return {in_range(T(20), T(22)), T(21), T(19), T(22)};
  }
  return {};
}

template <class T>
std::vector<T> make_data(const OpCase<T>& c, const std::vector<char>& h) {
  std::vector<T> data(h.size());
  for (size_t i = 0; i < h.size(); ++i) data[i] = h[i] ? c.hit : (i & 1 ? c.miss1 : c.miss0);
  return data;
}

}  // namespace gsearch::test
