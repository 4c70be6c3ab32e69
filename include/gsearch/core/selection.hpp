#pragma once
/// \file
/// Selection (order statistics of unsorted data), the pieces both backends share.
///
/// The algorithm is seeds/004's index-interval `improve`, done for many splitters at once and
/// steered by a sample (in the manner of sample select):
///  1. Draw a sample of S elements at fixed, evenly spread positions (sample_position), sort it.
///  2. For each requested rank r, take the two sample elements that bracket r with high
///     probability (bracket_of): the true r-th element lies between them unless the sample is
///     unrepresentative (probability ~1e-4 per bracket side with the margins below).
///  3. One pass over the data: each element falls in a bucket of the sorted splitters (select_bucket; even buckets are the open intervals between splitters, odd
///     buckets hold the elements equal to a splitter), counted per bucket. The elements of the
///     buckets that should hold a rank are copied out (a few per cent of the data at most).
///  4. Each rank's bucket is found from the counts' prefix sums: an odd bucket answers it at once
///     (its value is the splitter: this is what makes constant data and few distinct values
///     cheap), an even bucket is selected in recursively (its elements are few; the recursion
///     ends in a sort). A rank whose bucket was not copied out (the sample missed) costs one more
///     pass that copies that bucket.
/// The order is key_traits.hpp's (np.sort's): NaN after +inf, -0.0 equal to 0.0.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"

namespace gsearch {

/// numpy.quantile's methods (numpy >= 1.22 `method=`), in numpy's documentation order. The first
/// nine are H&F's sample quantiles, the last four numpy's discontinuous and mean variants.
enum class quantile_method : int {
  inverted_cdf,
  averaged_inverted_cdf,
  closest_observation,
  interpolated_inverted_cdf,
  hazen,
  weibull,
  linear,
  median_unbiased,
  normal_unbiased,
  lower,
  higher,
  midpoint,
  nearest,
};

/// numpy's name of a method ("linear", "lower", ...).
constexpr std::string_view to_string(quantile_method m) {
  constexpr std::string_view names[] = {
      "inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
      "hazen",        "weibull",               "linear",              "median_unbiased",
      "normal_unbiased", "lower",              "higher",              "midpoint",
      "nearest"};
  return names[int(m)];
}
/// Inverse of to_string; nullopt for an unknown name.
constexpr std::optional<quantile_method> quantile_method_from_string(std::string_view s) {
  for (int i = 0; i <= int(quantile_method::nearest); ++i)
    if (to_string(quantile_method(i)) == s) return quantile_method(i);
  return std::nullopt;
}

/// The IEEE formats of numpy's float16, float32 and float64 dtypes: the types numpy's quantile
/// arithmetic runs in (one rounding to the format after every operation).
enum class float_format : int { binary16, binary32, binary64 };

/// The dtypes numpy 2 computes one quantile call in (its NEP 50 promotion decides them; numpy 2.4,
/// _quantile / _lerp). quantile() follows them so that its results equal numpy's bit for bit:
///   index:     q's dtype (float64 for a Python float or an integer q): the virtual index, the
///              ranks and gamma are computed in it (np.quantile(a, np.float32(0.1)) rounds
///              (n - 1) * q to float32);
///   lerp:      the interpolation's: numpy's result dtype for the interpolating methods, the
///              promotion of the data's dtype with q's (float32 data with a float64 array q:
///              float64), the data's own for a Python float q (float32 stays float32);
///   half_data: the data is numpy float16, held as float (no C++ key type is 16-bit): its
///              b - a rounds to binary16, as numpy subtracts in the data's dtype;
///   integer_q: q of an integer or bool dtype (0 or 1): 'linear' takes the element (numpy's
///              integer virtual index), where a float q interpolates (inf - inf: NaN).
struct quantile_dtypes {
  float_format index = float_format::binary64;
  float_format lerp = float_format::binary64;
  bool half_data = false;
  bool integer_q = false;
};

/// numpy's dtypes for a Python float q (np.quantile(a, 0.3)): float64 indices, float data
/// interpolated in its own dtype, integers in float64. What quantile() without dtypes uses.
template <class T>
constexpr quantile_dtypes scalar_q_dtypes() {
  quantile_dtypes d;
  if (std::is_same_v<T, float>) d.lerp = float_format::binary32;
  return d;
}

namespace core {

/// The bucket of x among the sorted splitters s[0, m): 2u where u splitters are before x and x
/// equals none of them (the open interval (s[u-1], s[u])), 2u - 1 where x equals s[u - 1].
/// Buckets run 0 .. 2m, in the key order: every element of bucket b is before every element of
/// bucket b + 1. Equal splitters are allowed: the buckets between two equal splitters stay
/// empty, and the elements equal to them fall in the last one's odd bucket. `s` is any accessor
/// (shared memory, a host array).
template <class Splitters, class T>
GSEARCH_HD GSEARCH_FORCEINLINE int select_bucket(const Splitters& s, int m, T x) {
  int lo = 0, n = m;  // u = the splitters <= x: a branch-free binary search
  while (n > 0) {
    const int half = n / 2;
    const bool right = key_less_equal(s(lo + half), x);
    lo = right ? lo + half + 1 : lo;
    n = right ? n - half - 1 : half;
  }
  return lo > 0 && !key_less(s(lo - 1), x) ? 2 * lo - 1 : 2 * lo;
}

/// The position of sample element i of s, spread evenly over n elements (n >= s >= 1): the
/// middle of the i-th of s equal strides, so that sorted or periodic data give a fair sample.
GSEARCH_HD inline int64_t sample_position(int64_t i, int64_t s, int64_t n) {
  // (2i + 1) * n / (2s) without overflow: n < 2^62 and i < s.
  const int64_t stride = n / s, rest = n % s;
  return i * stride + (i * rest) / s + stride / 2;
}

/// A sample's bracket of a rank: the sample elements sorted[lo] and sorted[hi] between which the
/// r-th of n elements lies with high probability; lo = -1 / hi = s mean "no splitter on that
/// side" (the bracket is open there).
struct sample_bracket {
  int64_t lo, hi;
};

/// The bracket of rank r (0 <= r < n) in a sorted sample of s elements of n. The r-th element's
/// rank within the sample is about r * s / n, with a standard deviation of at most sqrt(s) / 2;
/// `margin` standard deviations on each side (4 by default: the bracket misses with probability
/// about 3e-5 per side, and a miss costs one more pass, never a wrong answer).
GSEARCH_HD inline sample_bracket bracket_of(int64_t r, int64_t n, int64_t s, double margin = 4.0) {
  const double center = (double(r) + 0.5) * double(s) / double(n);
  const double half = margin * 0.5 * sqrt(double(s)) + 1.0;
  const int64_t lo = int64_t(floor(center - half)), hi = int64_t(ceil(center + half));
  return {lo < 0 ? -1 : lo, hi >= s ? s : hi};
}

}  // namespace core
}  // namespace gsearch
