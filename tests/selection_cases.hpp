#pragma once
// The inputs and references of the selection tests, shared by the CPU tests (selection_test.cpp,
// core_selection_test.cpp) and the GPU tests (gpu_selection_test.cpp): input shapes (adversarial
// ones included), sizes and rank lists; the references (std::sort of a copy in the key order,
// plain loops, numpy's quantile formulas written out from its Python source); and checkers that
// return "" for a correct result or a description of the first fault, so that either test can
// ASSERT_EQ(check_...(...), "").

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>

#include "gsearch/selection.hpp"

namespace gsearch::test::selection {

// --- the key order ----------------------------------------------------------------------------

template <class T>
bool key_equal(T a, T b) {
  return !key_less(a, b) && !key_less(b, a);
}

template <class T>
std::vector<T> sorted_copy(std::vector<T> v) {
  std::sort(v.begin(), v.end(), [](T a, T b) { return key_less(a, b); });
  return v;
}

template <class T>
std::string show(T x) {
  std::ostringstream s;
  s.precision(17);
  if constexpr (sizeof(T) == 1) s << int(x);
  else s << x;
  return s.str();
}

// --- inputs -----------------------------------------------------------------------------------

enum class shape {
  random,        // full-range bits (integers) / normal values of every magnitude (floats)
  few_distinct,  // five values
  all_equal,
  sorted,
  reversed,
  specials,      // floats: NaN, +-inf, -0.0 and 0.0 among random values; integers: the extremes
  sample_aligned // a spike every `period` elements at the phase of core::sample_position's strides
};
constexpr shape kShapes[] = {shape::random,   shape::few_distinct, shape::all_equal, shape::sorted,
                             shape::reversed, shape::specials,     shape::sample_aligned};
inline const char* name(shape s) {
  constexpr const char* names[] = {"random", "few-distinct", "all-equal", "sorted",
                                   "reversed", "specials", "sample-aligned"};
  return names[int(s)];
}

// A random value of T: any bit pattern that is a number for integers; normal with a random
// scale (1e-3 .. 1e6) for floats.
template <class T, class Rng>
T random_value(Rng& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    std::normal_distribution<double> normal;
    return T(normal(rng) * std::pow(10.0, double(int(rng() % 10) - 3)));
  } else {
    return T(rng());
  }
}

// The periods of shape::sample_aligned: each element whose index is period / 2 modulo `period`
// holds a large value (every sample position lands on one whenever the sample stride is a
// multiple of the period: a sample of only the largest values, which brackets no low rank).
inline constexpr int64_t kAlignedPeriods[] = {16, 64, 256, 1024, 4096};

template <class T>
std::vector<T> make_input(shape s, int64_t n, uint64_t seed, int64_t period = 256) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(static_cast<size_t>(std::max<int64_t>(n, 0)));
  const T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  for (int64_t i = 0; i < n; ++i) {
    T x{};
    switch (s) {
      case shape::random: x = random_value<T>(rng); break;
      case shape::few_distinct: x = T(int(rng() % 5) * 3 + 1); break;
      case shape::all_equal: x = T(7); break;
      case shape::sorted: x = T(i / 3); break;
      case shape::reversed: x = T(n - i); break;
      case shape::specials: {
        const int pick = int(rng() % 10);
        if constexpr (std::is_floating_point_v<T>) {
          constexpr T specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                                    -std::numeric_limits<T>::infinity(), T(-0.0), T(0.0)};
          x = pick < 5 ? specials[pick] : random_value<T>(rng);
        } else {
          x = pick == 0 ? lo : pick == 1 ? hi : pick == 2 ? T(0) : random_value<T>(rng);
        }
        break;
      }
      case shape::sample_aligned:
        x = i % period == period / 2 ? T(hi - T(i % 1000)) : T(rng() % 100);
        break;
    }
    v[size_t(i)] = x;
  }
  return v;
}

// Sizes: nothing, tiny, around powers of two, and large enough for the sampled select to recurse
// (2^20 + 3). `large`: also 2^22 + 1.
inline std::vector<int64_t> sizes(bool large = false) {
  std::vector<int64_t> s = {0, 1, 2, 3, 5, 7};
  for (int k : {3, 4, 5, 8, 10, 12, 14, 16})
    for (int d : {-1, 0, 1}) s.push_back((int64_t{1} << k) + d);
  s.push_back(100003);
  s.push_back((int64_t{1} << 20) + 3);
  if (large) s.push_back((int64_t{1} << 22) + 1);
  return s;
}

// `count` ranks spread evenly over [0, n) (numpy's quantiles of evenly spaced q), distinct: the
// many-rank select's lists (with cluster_ranks).
inline std::vector<int64_t> spread_ranks(int64_t n, int64_t count) {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < count; ++i) r.push_back(count == 1 ? 0 : i * (n - 1) / (count - 1));
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}
// 100 neighbouring ranks, every third from n / 3 (n > 300): a cluster in a few bins.
inline std::vector<int64_t> cluster_ranks(int64_t n) {
  std::vector<int64_t> r;
  for (int64_t k = n / 3; k < n / 3 + 300; k += 3) r.push_back(k);
  return r;
}

// Rank lists for n elements (raw: negative ones count from the end, repeats kept).
inline std::vector<std::vector<int64_t>> rank_lists(int64_t n) {
  std::vector<std::vector<int64_t>> lists;
  if (n <= 0) return lists;
  for (int64_t r : {int64_t{0}, n - 1, n / 2, (n - 1) / 2, int64_t{1} % n, n - 1 - (int64_t{1} % n), n / 3})
    lists.push_back({r});
  lists.push_back({-1});
  lists.push_back({-n});
  lists.push_back({n / 2, 0, n / 2, -1, n / 4});  // repeats, negative, unsorted
  std::vector<int64_t> spread;                    // 101 ranks, as quantiles need
  for (int64_t i = 0; i <= 100; ++i) spread.push_back(i * (n - 1) / 100);
  lists.push_back(spread);
  if (n <= 300) {  // every rank, backwards
    std::vector<int64_t> all(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) all[size_t(i)] = n - 1 - i;
    lists.push_back(all);
  }
  return lists;
}

inline int64_t normalize(int64_t r, int64_t n) { return r < 0 ? r + n : r; }

// kth as the backends take it: normalized, sorted, distinct.
inline std::vector<int64_t> normalized_kth(const std::vector<int64_t>& kth, int64_t n) {
  std::vector<int64_t> k;
  for (int64_t r : kth) k.push_back(normalize(r, n));
  std::sort(k.begin(), k.end());
  k.erase(std::unique(k.begin(), k.end()), k.end());
  return k;
}

// A value no correct result holds, to see what an erroring call wrote.
template <class T>
T poison() {
  if constexpr (std::is_floating_point_v<T>) return T(-12345.5);
  else return T(0x5A5A5A5A);
}

// --- references and checks --------------------------------------------------------------------

template <class T>
std::vector<T> reference_select(const std::vector<T>& data, const std::vector<int64_t>& ranks) {
  const std::vector<T> s = sorted_copy(data);
  std::vector<T> v;
  for (int64_t r : ranks) v.push_back(s[size_t(normalize(r, int64_t(s.size())))]);
  return v;
}

// select's values against the sorted copy of the data.
template <class T>
std::string check_select_sorted(const std::vector<T>& sorted, const std::vector<int64_t>& ranks,
                                const std::vector<T>& values) {
  if (values.size() != ranks.size()) return "wrong number of values";
  for (size_t i = 0; i < ranks.size(); ++i) {
    const T want = sorted[size_t(normalize(ranks[i], int64_t(sorted.size())))];
    if (!key_equal(values[i], want))
      return "rank " + std::to_string(ranks[i]) + ": " + show(values[i]) + ", want " + show(want);
  }
  return "";
}
template <class T>
std::string check_select(const std::vector<T>& data, const std::vector<int64_t>& ranks,
                         const std::vector<T>& values) {
  return check_select_sorted(sorted_copy(data), ranks, values);
}

// The bit patterns of v, sorted: equal for two permutations of the same elements (-0.0 and 0.0
// and every NaN told apart).
template <class T>
std::vector<uint64_t> sorted_bits(const std::vector<T>& v) {
  std::vector<uint64_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    uint64_t x = 0;
    std::memcpy(&x, &v[i], sizeof(T));
    b[i] = x;
  }
  std::sort(b.begin(), b.end());
  return b;
}

// A fingerprint of the multiset of v's bit patterns, in O(n): sums of two 64-bit mixes of each
// element (independent of the order; two different multisets collide with probability ~2^-128).
template <class T>
std::pair<uint64_t, uint64_t> multiset_fingerprint(const std::vector<T>& v) {
  const auto mix = [](uint64_t x) {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  std::pair<uint64_t, uint64_t> f{0, 0};
  for (const T& e : v) {
    uint64_t x = 0;
    std::memcpy(&x, &e, sizeof(T));
    f.first += mix(x);
    f.second += mix(x ^ 0x9e3779b97f4a7c15ull) * 3;
  }
  return f;
}

// numpy.partition's contract for out (a permutation of data): out[k] is the element of rank k,
// the elements before it are <= it and those after >= it, for every k of kth (raw). `s`: the
// sorted copy of the data.
template <class T>
std::string check_partition_sorted(const std::vector<T>& data, const std::vector<T>& s,
                                   const std::vector<int64_t>& kth, const std::vector<T>& out) {
  const int64_t n = int64_t(data.size());
  if (out.size() != data.size()) return "wrong output size";
  if (multiset_fingerprint(out) != multiset_fingerprint(data)) return "the output is not a permutation of the data";
  const std::vector<int64_t> ks = normalized_kth(kth, n);
  int64_t begin = 0;  // out[begin, k) lies between the previous kth's value and this one's
  for (size_t i = 0; i <= ks.size(); ++i) {
    const int64_t k = i < ks.size() ? ks[i] : n;
    if (k < n && !key_equal(out[size_t(k)], s[size_t(k)]))
      return "out[" + std::to_string(k) + "] = " + show(out[size_t(k)]) + ", want " + show(s[size_t(k)]);
    for (int64_t j = begin; j < k; ++j) {
      if (k < n && key_less(out[size_t(k)], out[size_t(j)]))
        return "out[" + std::to_string(j) + "] = " + show(out[size_t(j)]) + " after out[" +
               std::to_string(k) + "] = " + show(out[size_t(k)]);
      if (i > 0 && key_less(out[size_t(j)], out[size_t(ks[i - 1])]))
        return "out[" + std::to_string(j) + "] = " + show(out[size_t(j)]) + " before out[" +
               std::to_string(ks[i - 1]) + "]";
    }
    begin = k + 1;
  }
  return "";
}
template <class T>
std::string check_partition(const std::vector<T>& data, const std::vector<int64_t>& kth, const std::vector<T>& out) {
  return check_partition_sorted(data, sorted_copy(data), kth, out);
}

// numpy.argpartition's: the indices are a permutation of [0, n) and data[out] is a partition.
template <class T>
std::string check_argpartition_sorted(const std::vector<T>& data, const std::vector<T>& sorted,
                                      const std::vector<int64_t>& kth, const std::vector<int64_t>& out) {
  if (out.size() != data.size()) return "wrong output size";
  std::vector<char> seen(data.size(), 0);
  for (int64_t i : out) {
    if (i < 0 || i >= int64_t(data.size()) || seen[size_t(i)]) return "the indices are not a permutation of [0, n)";
    seen[size_t(i)] = 1;
  }
  std::vector<T> gathered(out.size());
  for (size_t i = 0; i < out.size(); ++i) gathered[i] = data[size_t(out[i])];
  return check_partition_sorted(data, sorted, kth, gathered);
}
template <class T>
std::string check_argpartition(const std::vector<T>& data, const std::vector<int64_t>& kth,
                               const std::vector<int64_t>& out) {
  return check_argpartition_sorted(data, sorted_copy(data), kth, out);
}

// The same along the last axis of a rows x cols array: each row by itself (kth within a row). No
// kth: numpy's copy (indices: 0 .. cols - 1 in every row).
template <class T>
std::vector<T> row_of(const std::vector<T>& x, int64_t cols, int64_t r) {
  return std::vector<T>(x.begin() + r * cols, x.begin() + (r + 1) * cols);
}
template <class T>
std::string check_partition_rows(const std::vector<T>& data, int64_t rows, const std::vector<int64_t>& kth,
                                 const std::vector<T>& out, const std::vector<int64_t>& idx) {
  const int64_t cols = rows > 0 ? int64_t(data.size()) / rows : 0;
  if (out.size() != data.size() || idx.size() != data.size()) return "wrong output size";
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<T> row = row_of(data, cols, r);
    std::string e = kth.empty() ? (std::memcmp(out.data() + r * cols, row.data(), size_t(cols) * sizeof(T)) == 0
                                       ? ""
                                       : std::string("not the data's copy"))
                                : check_partition(row, kth, row_of(out, cols, r));
    if (e.empty()) e = check_argpartition(row, kth, row_of(idx, cols, r));
    if (e.empty() && kth.empty())
      for (int64_t j = 0; j < cols && e.empty(); ++j)
        if (idx[size_t(r * cols + j)] != j) e = "indices not 0 .. cols - 1";
    if (!e.empty()) return "row " + std::to_string(r) + " of " + std::to_string(rows) + ": " + e;
  }
  return "";
}

// torch.topk's contract per row, by plain loops: k distinct indices into the row, each value
// bit-equal to the element it points at, in order (largest first, or smallest first) when
// `sorted`, and no element left out better (larger, or smaller, in the key order: NaN largest)
// than the worst one taken: so the values are the row's k best, whichever of equal ones.
template <class T>
std::string check_topk(const std::vector<T>& data, int64_t rows, int64_t k, bool largest, bool sorted,
                       const std::vector<T>& values, const std::vector<int64_t>& indices) {
  const int64_t cols = rows > 0 ? int64_t(data.size()) / rows : 0;
  if (int64_t(values.size()) != rows * k || int64_t(indices.size()) != rows * k) return "wrong output size";
  const auto better = [largest](T a, T b) { return largest ? key_less(b, a) : key_less(a, b); };
  std::vector<char> taken(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const std::string row = "row " + std::to_string(r) + ": ";
    const T* x = data.data() + r * cols;
    std::fill(taken.begin(), taken.end(), 0);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t i = indices[size_t(r * k + j)];
      const T v = values[size_t(r * k + j)];
      if (i < 0 || i >= cols) return row + "index " + std::to_string(i) + " out of the row";
      if (taken[size_t(i)]) return row + "index " + std::to_string(i) + " twice";
      taken[size_t(i)] = 1;
      if (std::memcmp(&x[i], &v, sizeof(T)) != 0)
        return row + "index " + std::to_string(i) + " holds " + show(x[i]) + ", not the value " + show(v);
      if (sorted && j > 0 && better(v, values[size_t(r * k + j - 1)]))
        return row + "value " + std::to_string(j) + " = " + show(v) + " out of order";
    }
    if (k == 0) continue;
    T worst = values[size_t(r * k)];
    for (int64_t j = 1; j < k; ++j)
      if (better(worst, values[size_t(r * k + j)])) worst = values[size_t(r * k + j)];
    for (int64_t i = 0; i < cols; ++i)
      if (!taken[size_t(i)] && better(x[i], worst))
        return row + "element " + std::to_string(i) + " = " + show(x[i]) + " left out, better than " + show(worst);
  }
  return "";
}

// torch.kthvalue's per row: the element of rank `rank` (raw) and the index of an element equal
// to it in the key order.
template <class T>
std::string check_kthvalue(const std::vector<T>& data, int64_t rows, int64_t rank, const std::vector<T>& values,
                           const std::vector<int64_t>& indices) {
  const int64_t cols = int64_t(data.size()) / rows;
  if (int64_t(values.size()) != rows || int64_t(indices.size()) != rows) return "wrong output size";
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<T> row(data.begin() + r * cols, data.begin() + (r + 1) * cols);
    const T want = sorted_copy(row)[size_t(normalize(rank, cols))];
    const std::string at = "row " + std::to_string(r) + ": ";
    if (!key_equal(values[size_t(r)], want)) return at + show(values[size_t(r)]) + ", want " + show(want);
    const int64_t i = indices[size_t(r)];
    if (i < 0 || i >= cols || !key_equal(row[size_t(i)], want))
      return at + "index " + std::to_string(i) + " does not hold " + show(want);
  }
  return "";
}

// --- numpy's quantile, written out from numpy 2.4's lib/_function_base_impl.py ----------------
// (_QuantileMethods, _compute_virtual_index, _discrete_interpolation_to_boundaries,
// _get_indexes, _get_gamma, _lerp, _median), for a scalar q: float data interpolates in float,
// the rest in double. Integer differences exact (numpy's wrap around on overflow; see
// core/quantile.hpp).

template <class T>
using numpy_float_t = std::conditional_t<std::is_same_v<T, float>, float, double>;

// Python's a % b for doubles (the sign of b).
inline double py_mod(double a, double b) { return a - b * std::floor(a / b); }

// numpy.around: halves to even.
inline double round_half_even(double x) {
  const double f = std::floor(x), d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return py_mod(f, 2) == 0 ? f : f + 1;
}

template <class T>
numpy_float_t<T> numpy_lerp(T a, T b, double t) {
  using F = numpy_float_t<T>;
  F diff;
  if constexpr (std::is_floating_point_v<T>) diff = b - a;
  else diff = F(static_cast<long double>(b) - static_cast<long double>(a));  // exact, then rounded
  const F lerp = F(a) + diff * F(t);
  return t >= 0.5 ? F(F(b) - diff * F(1 - t)) : lerp;
}

// The quantile q of the sorted, NaN-free s (s.size() >= 1), numpy's `method`.
template <class T>
double numpy_quantile_sorted(const std::vector<T>& s, double q, quantile_method method) {
  const int64_t n = int64_t(s.size());
  const double nd = double(n);
  const auto take = [&](double i) { return double(s[size_t(int64_t(i))]); };
  // _discrete_interpolation_to_boundaries(index, cond): floor where cond(gamma, index), else the next; >= 0.
  const auto boundary = [&](double index, auto cond) {
    const double previous = std::floor(index), gamma = index - previous;
    return std::max(0.0, cond(gamma, index) ? previous : previous + 1);
  };
  double vi = 0;  // the continuous methods' virtual index, and their alpha, beta
  const auto hf = [&](double alpha, double beta) { return nd * q + (alpha + q * (1 - alpha - beta)) - 1; };
  switch (method) {
    case quantile_method::inverted_cdf:
      return take(boundary(nd * q - 1, [](double g, double) { return g == 0; }));
    case quantile_method::closest_observation:
      return take(boundary(nd * q - 1 - 0.5,
                           [](double g, double i) { return g == 0 && py_mod(std::floor(i), 2) == 1; }));
    case quantile_method::lower: return take(std::floor((nd - 1) * q));
    case quantile_method::higher: return take(std::ceil((nd - 1) * q));
    case quantile_method::nearest: return take(round_half_even((nd - 1) * q));
    case quantile_method::averaged_inverted_cdf: vi = nd * q - 1; break;
    case quantile_method::interpolated_inverted_cdf: vi = hf(0, 1); break;
    case quantile_method::hazen: vi = hf(0.5, 0.5); break;
    case quantile_method::weibull: vi = hf(0, 0); break;
    case quantile_method::linear: vi = (nd - 1) * q; break;
    case quantile_method::median_unbiased: vi = hf(1 / 3.0, 1 / 3.0); break;
    case quantile_method::normal_unbiased: vi = hf(3 / 8.0, 3 / 8.0); break;
    case quantile_method::midpoint: vi = 0.5 * (std::floor((nd - 1) * q) + std::ceil((nd - 1) * q)); break;
  }
  // _get_indexes: -1 (the last) at or above n - 1, 0 below 0.
  double previous = std::floor(vi), next = previous + 1;
  if (vi >= nd - 1) previous = next = -1;
  if (vi < 0) previous = next = 0;
  double gamma = vi - previous;  // _get_gamma, then fix_gamma
  if (method == quantile_method::averaged_inverted_cdf) gamma = gamma == 0 ? 0.5 : 1.0;
  if (method == quantile_method::midpoint) gamma = py_mod(vi, 1) == 0 ? 0.0 : 0.5;
  const auto at = [&](double i) { return s[size_t(i < 0 ? n - 1 : int64_t(i))]; };
  return double(numpy_lerp(at(previous), at(next), gamma));
}

// numpy.quantile (skip_nan: nanquantile) of unsorted data (data.size() >= 1) at each q, the
// data sorted once.
template <class T>
std::vector<double> reference_quantiles(const std::vector<T>& data, const std::vector<double>& qs,
                                        quantile_method method, bool skip_nan) {
  std::vector<T> s;
  for (T x : data)
    if (x == x) s.push_back(x);
  std::vector<double> r(qs.size(), std::numeric_limits<double>::quiet_NaN());
  if (s.empty() || (!skip_nan && s.size() != data.size())) return r;
  s = sorted_copy(s);
  for (size_t i = 0; i < qs.size(); ++i) r[i] = numpy_quantile_sorted(s, qs[i], method);
  return r;
}

template <class T>
double reference_quantile(const std::vector<T>& data, double q, quantile_method method, bool skip_nan) {
  return reference_quantiles(data, std::vector<double>{q}, method, skip_nan)[0];
}

// numpy.median (skip_nan: nanmedian): np.mean of the middle one or two (floats in their type).
template <class T>
double reference_median(const std::vector<T>& data, bool skip_nan) {
  std::vector<T> s;
  for (T x : data)
    if (x == x) s.push_back(x);
  if (s.empty() || (!skip_nan && s.size() != data.size())) return std::numeric_limits<double>::quiet_NaN();
  s = sorted_copy(s);
  const size_t n = s.size();
  if (n % 2 == 1) return double(s[n / 2]);
  if constexpr (std::is_floating_point_v<T>) return double(T(T(s[n / 2 - 1] + s[n / 2]) / T(2)));
  else return (double(s[n / 2 - 1]) + double(s[n / 2])) / 2.0;
}

// Equal as numpy's results compare in a test: the same double, or both NaN.
inline bool same_result(double a, double b) { return a == b || (a != a && b != b); }

// numpy.quantile(data.reshape(rows, cols), q, axis=-1) (skip_nan: nanquantile) in numpy's layout,
// out[i * rows + r] (q first), and numpy.median(..., axis=-1) into med[r]: each row against the
// references of that row alone.
template <class T>
std::string check_quantile_rows(const std::vector<T>& data, int64_t rows, const std::vector<double>& qs,
                                quantile_method method, bool skip_nan, const std::vector<double>& out,
                                const std::vector<double>& med) {
  const int64_t cols = int64_t(data.size()) / rows, m = int64_t(qs.size());
  if (int64_t(out.size()) != m * rows || int64_t(med.size()) != rows) return "wrong output size";
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<T> row(data.begin() + r * cols, data.begin() + (r + 1) * cols);
    const std::vector<double> want = reference_quantiles(row, qs, method, skip_nan);
    for (int64_t i = 0; i < m; ++i)
      if (!same_result(out[size_t(i * rows + r)], want[size_t(i)]))
        return "row " + std::to_string(r) + ", q " + std::to_string(qs[size_t(i)]) + ": " +
               show(out[size_t(i * rows + r)]) + ", want " + show(want[size_t(i)]);
    const double want_median = reference_median(row, skip_nan);
    if (!same_result(med[size_t(r)], want_median))
      return "row " + std::to_string(r) + ": median " + show(med[size_t(r)]) + ", want " + show(want_median);
  }
  return "";
}

constexpr quantile_method kMethods[] = {
    quantile_method::inverted_cdf, quantile_method::averaged_inverted_cdf,
    quantile_method::closest_observation, quantile_method::interpolated_inverted_cdf,
    quantile_method::hazen, quantile_method::weibull, quantile_method::linear,
    quantile_method::median_unbiased, quantile_method::normal_unbiased, quantile_method::lower,
    quantile_method::higher, quantile_method::midpoint, quantile_method::nearest};

// q values that hit every branch: the ends, halves, exact multiples of 1 / (n - 1) and 1 / n
// (whole virtual indexes), and a few random ones.
inline std::vector<double> quantile_qs(int64_t n, uint64_t seed) {
  std::vector<double> q = {0.0, 1.0, 0.5, 0.25, 0.75, 0.01, 0.99};
  for (int64_t k = 0; k < std::min<int64_t>(n, 4); ++k) {
    if (n > 1) q.push_back(double(k) / double(n - 1));
    q.push_back(double(k) / double(n));
    q.push_back((double(k) + 0.5) / double(n));
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 4; ++i) q.push_back(double(rng() >> 11) * 0x1.0p-53);
  return q;
}

}  // namespace gsearch::test::selection
