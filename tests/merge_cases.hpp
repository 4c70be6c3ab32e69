#pragma once
// The references of the merge-family tests, shared by the CPU tests (merge_test.cpp) and the GPU
// tests (gpu_merge_test.cpp): gsearch's key order, std::merge / std::stable_sort of key-value
// pairs, std::set_* and the join written from its definition (core/join.hpp's order).

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "gsearch/gsearch.hpp"

namespace gsearch::test {

// gsearch's order (NaN last, -0.0 == 0.0) and its equality.
template <class T>
bool less(T a, T b) {
  return key_less(a, b);
}
template <class T>
bool equal_keys(T a, T b) {
  return !key_less(a, b) && !key_less(b, a);
}

constexpr set_op kSetOps[] = {set_op::intersection, set_op::union_, set_op::difference,
                              set_op::symmetric_difference};
constexpr join_kind kJoins[] = {join_kind::inner, join_kind::left, join_kind::right,
                                join_kind::full,  join_kind::semi, join_kind::anti};

// Keys with their values.
template <class T>
struct KeyValues {
  std::vector<T> keys;
  std::vector<int64_t> values;
};

// The stable key-value merge: std::merge of the (key, value) pairs, by key.
template <class T>
KeyValues<T> reference_merge(const std::vector<T>& a, const std::vector<int64_t>& av,
                             const std::vector<T>& b, const std::vector<int64_t>& bv) {
  using kv = std::pair<T, int64_t>;
  std::vector<kv> pa(a.size()), pb(b.size()), pw(a.size() + b.size());
  for (size_t i = 0; i < a.size(); ++i) pa[i] = {a[i], av[i]};
  for (size_t j = 0; j < b.size(); ++j) pb[j] = {b[j], bv[j]};
  std::merge(pa.begin(), pa.end(), pb.begin(), pb.end(), pw.begin(),
             [](const kv& x, const kv& y) { return key_less(x.first, y.first); });
  KeyValues<T> r{std::vector<T>(pw.size()), std::vector<int64_t>(pw.size())};
  for (size_t k = 0; k < pw.size(); ++k) std::tie(r.keys[k], r.values[k]) = pw[k];
  return r;
}

// The stable key-value sort: std::stable_sort of the (key, value) pairs, by key.
template <class T>
KeyValues<T> reference_sort(const std::vector<T>& keys, const std::vector<int64_t>& values) {
  using kv = std::pair<T, int64_t>;
  std::vector<kv> pairs(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) pairs[i] = {keys[i], values[i]};
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const kv& x, const kv& y) { return key_less(x.first, y.first); });
  KeyValues<T> r{std::vector<T>(pairs.size()), std::vector<int64_t>(pairs.size())};
  for (size_t i = 0; i < pairs.size(); ++i) std::tie(r.keys[i], r.values[i]) = pairs[i];
  return r;
}

// The multiset set operation of sorted a and b: std::set_*.
template <class T>
std::vector<T> reference_set(set_op op, const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> r;
  auto out = std::back_inserter(r);
  switch (op) {
    case set_op::intersection: std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), out, less<T>); break;
    case set_op::union_: std::set_union(a.begin(), a.end(), b.begin(), b.end(), out, less<T>); break;
    case set_op::difference: std::set_difference(a.begin(), a.end(), b.begin(), b.end(), out, less<T>); break;
    case set_op::symmetric_difference:
      std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), out, less<T>);
      break;
  }
  return r;
}

// A join's rows: left and right indices (-1: no row); no right indices for semi and anti.
struct Pairs {
  std::vector<int64_t> left, right;
};

// The join from its definition (core/join.hpp), group by group of equal keys: both sides
// present, the cross product (left index major); left alone, (i, -1); right alone, (-1, j).
template <class T>
Pairs reference_join(join_kind kind, const std::vector<T>& l, const std::vector<T>& r) {
  Pairs p;
  const bool left_only = kind == join_kind::semi || kind == join_kind::anti;
  const auto emit = [&](int64_t i, int64_t j) {
    p.left.push_back(i);
    if (!left_only) p.right.push_back(j);
  };
  size_t i = 0, j = 0;
  while (i < l.size() || j < r.size()) {
    T x;
    if (j == r.size() || (i < l.size() && !key_less(r[j], l[i]))) x = l[i];
    else x = r[j];
    size_t i1 = i, j1 = j;
    while (i1 < l.size() && equal_keys(l[i1], x)) ++i1;
    while (j1 < r.size() && equal_keys(r[j1], x)) ++j1;
    const bool both = i1 > i && j1 > j;
    for (size_t a = i; a < i1; ++a) {
      if (both) {
        if (kind == join_kind::semi) emit(int64_t(a), -1);
        else if (kind != join_kind::anti)
          for (size_t b = j; b < j1; ++b) emit(int64_t(a), int64_t(b));
      } else if (kind == join_kind::left || kind == join_kind::full || kind == join_kind::anti) {
        emit(int64_t(a), -1);
      }
    }
    if (!both && (kind == join_kind::right || kind == join_kind::full))
      for (size_t b = j; b < j1; ++b) emit(-1, int64_t(b));
    i = i1;
    j = j1;
  }
  return p;
}

// Input sizes (na, nb) around a tile of `tile` outputs (a kernel's threads x items, read from the
// tuning headers as CUB's "almost a tile" tests read the policy): nothing, tiny, one tile exactly
// (on either side, and split), one tile - 1 and + 1, several tiles - 1 and + 1, five tiles and a
// few. Tiles are cut on the output diagonals na + nb.
inline std::vector<std::pair<int64_t, int64_t>> sizes_around_tile(int64_t tile) {
  return {{0, 0},
          {0, 5},
          {5, 0},
          {1, 1},
          {tile - 1, 1},
          {tile, 0},
          {0, tile},
          {tile / 2, tile - tile / 2 - 1},
          {tile / 2, tile / 2 + 1},
          {1, tile},
          {2 * tile - 1, tile},
          {2 * tile, tile + 1},
          {3 * tile + 7, 2 * tile - 3}};
}

// Two runs of equal keys a side, the first run's copies (from A and B) ending `shift` + 1 past
// diagonal `boundary`: Balanced Path pairs the copies by rank, and at the tile boundary the star
// split keeps a pair together. A holds boundary / 2 + shift ones and `tile` twos, B boundary / 2
// + 1 ones and tile + shift twos.
template <class T>
std::pair<std::vector<T>, std::vector<T>> straddling_runs(int64_t boundary, int64_t tile, int64_t shift) {
  std::vector<T> a(size_t(boundary / 2 + shift), T(1)), b(size_t(boundary / 2 + 1), T(1));
  a.insert(a.end(), size_t(tile), T(2));
  b.insert(b.end(), size_t(tile + shift), T(2));
  return {a, b};
}

/// Unsorted inputs (issue 19: the merge family with the check off must stay in bounds): the
/// shapes that cross the Merge Path and Balanced Path searches. `sorted` is sorted, for pairing
/// with an unsorted other side. Shared by core_merge_path_test.cpp's host replay of the GPU tiles
/// and gpu_merge_test.cpp's GpuMergeUnchecked.
enum class unsorted { random, reversed, modular, equal_then_descending, sawtooth, sorted };
inline const char* name(unsorted u) {
  constexpr const char* names[] = {"random", "reversed", "modular", "equal-then-descending",
                                   "sawtooth", "sorted"};
  return names[int(u)];
}
template <class T, class Rng>
std::vector<T> unsorted_input(unsorted u, int64_t n, Rng& rng) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t x = 0;
    switch (u) {
      case unsorted::random: x = int64_t(rng() % 1000); break;
      case unsorted::reversed: x = n - i; break;
      case unsorted::modular: x = i % 7; break;
      case unsorted::equal_then_descending: x = i < n / 2 ? 5 : n - i; break;
      case unsorted::sawtooth: x = i % 1000; break;
      case unsorted::sorted: x = i / 3; break;
    }
    v[size_t(i)] = T(x);
  }
  return v;
}

}  // namespace gsearch::test
