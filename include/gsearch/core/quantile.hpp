#pragma once
/// \file
/// numpy's quantile and median arithmetic (numpy 2.4, lib/_function_base_impl.py: _QuantileMethods,
/// _quantile, _get_indexes, _get_gamma, _lerp, _median), for both backends: which ranks of the
/// sorted data one q needs, and how their values combine into numpy's result.
///
/// Usage: p = quantile_point_of(method, q, n); select the elements of ranks p.lo and p.hi (the
/// key order of key_traits.hpp; n = the non-NaN count for nanquantile); quantile_combine(p, lo,
/// hi). Median: ranks median_ranks(n), median_combine(lo, hi, n).
///
/// The arithmetic type is numpy's for a scalar q (np.quantile(a, 0.3), weak promotion):
///   float data   -> float arithmetic, a float result (held exactly in the double it returns);
///   double data  -> double;
///   integer data -> double for the interpolating methods (linear, hazen, weibull, midpoint,
///                   averaged_inverted_cdf, interpolated_inverted_cdf, median_unbiased,
///                   normal_unbiased) and for the median (np.mean's float64 accumulator); the
///                   discrete methods (inverted_cdf, closest_observation, lower, higher, nearest)
///                   return the element itself (numpy: the integer dtype), here converted to
///                   double (exact up to 2^53).
/// numpy with an array q (np.quantile(a, [0.3])) computes float data's interpolation in float64
/// instead (gamma is a float64 array): results may differ from the float ones in the last bit.
///
/// Deliberate difference: numpy subtracts two integer elements in their own type, which wraps
/// around (np.quantile(int32 [-2^31, 2^31 - 1], 0.5) gives 2147483647.5); here the difference is
/// exact (taken in the unsigned type, the larger minus the smaller), which equals numpy's wherever
/// numpy does not overflow. Float data keeps numpy's IEEE results, including its NaN for a lerp
/// between inf and anything (np.quantile([1, inf], 0.5) is NaN) and np.median's overflow of
/// lo + hi (float32 [3e38, 3e38] gives inf).
///
/// NaN: a NaN in the data makes every quantile and the median NaN (numpy checks the largest
/// element); nanquantile / nanmedian take the ranks among the non-NaN elements (they sort last),
/// and all-NaN data gives NaN. Those rules sit in the backends; this file is the per-q arithmetic.
///
/// No FMA: a contracted a + d * t rounds differently from numpy; the device path uses the _rn
/// intrinsics (never contracted) and the host build targets no FMA instructions.

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "gsearch/core/config.hpp"
#include "gsearch/core/selection.hpp"

namespace gsearch::core {

/// One quantile's needs: the elements of ranks lo and hi of the sorted data, and numpy's gamma
/// (the weight of hi). `discrete`: the result is the element of rank lo itself (numpy's take, for
/// inverted_cdf, closest_observation, lower, higher, nearest); lo == hi then.
struct quantile_point {
  int64_t lo = 0, hi = 0;
  double gamma = 0;
  bool discrete = true;
};

namespace quantile_detail {

// Python's x % 2 for an integral double (the sign of the divisor: -1 % 2 == 1).
GSEARCH_HD inline double floor_mod2(double x) { return x - 2.0 * floor(x / 2.0); }

// _compute_virtual_index: n * q + (alpha + q * (1 - alpha - beta)) - 1, in Python's order.
GSEARCH_HD inline double virtual_index(int64_t n, double q, double alpha, double beta) {
  return double(n) * q + (alpha + q * ((1.0 - alpha) - beta)) - 1.0;
}

// _discrete_interpolation_to_boundaries: floor(index) where the condition holds, else floor + 1,
// clipped below at 0 (the index never exceeds n - 1 for q in [0, 1]).
GSEARCH_HD inline int64_t discrete_boundary(double index, bool take_floor) {
  const double previous = floor(index);
  const int64_t r = int64_t(take_floor ? previous : previous + 1.0);
  return r < 0 ? 0 : r;
}

GSEARCH_HD inline quantile_point discrete(int64_t rank) { return {rank, rank, 0.0, true}; }

// The continuous methods: _get_indexes' neighbours of the virtual index vi (both clamped to the
// last element at or above n - 1, both to the first below 0) and _get_gamma's gamma = vi minus
// the *adjusted* previous index (-1 for the last element, as numpy indexes it), before fix_gamma.
GSEARCH_HD inline quantile_point continuous(double vi, int64_t n) {
  double previous = floor(vi);
  int64_t lo = int64_t(previous), hi = lo + 1;
  if (vi >= double(n - 1)) {
    previous = -1.0;
    lo = hi = n - 1;
  }
  if (vi < 0) {
    previous = 0.0;
    lo = hi = 0;
  }
  return {lo, hi, vi - previous, false};
}

}  // namespace quantile_detail

/// numpy's ranks and gamma of quantile q (0 <= q <= 1) of n >= 1 sorted elements by `method`.
GSEARCH_HD inline quantile_point quantile_point_of(quantile_method method, double q, int64_t n) {
  using namespace quantile_detail;
  const double last = double(n - 1);
  switch (method) {
    case quantile_method::inverted_cdf: {  // floor where n q - 1 is whole, else the next
      const double index = double(n) * q - 1.0;
      return discrete(discrete_boundary(index, index - floor(index) == 0.0));
    }
    case quantile_method::closest_observation: {  // the even order statistic (1-based) at g = 0
      const double index = double(n) * q - 1.0 - 0.5;
      const bool take_floor = index - floor(index) == 0.0 && floor_mod2(floor(index)) == 1.0;
      return discrete(discrete_boundary(index, take_floor));
    }
    case quantile_method::lower: return discrete(int64_t(floor(last * q)));
    case quantile_method::higher: return discrete(int64_t(ceil(last * q)));
    case quantile_method::nearest: return discrete(int64_t(rint(last * q)));  // half to even
    case quantile_method::averaged_inverted_cdf: {
      quantile_point p = continuous(double(n) * q - 1.0, n);
      p.gamma = p.gamma == 0.0 ? 0.5 : 1.0;
      return p;
    }
    case quantile_method::midpoint: {
      const double vi = 0.5 * (floor(last * q) + ceil(last * q));
      quantile_point p = continuous(vi, n);
      p.gamma = vi - floor(vi) == 0.0 ? 0.0 : 0.5;  // numpy: index % 1 == 0
      return p;
    }
    case quantile_method::interpolated_inverted_cdf: return continuous(virtual_index(n, q, 0, 1), n);
    case quantile_method::hazen: return continuous(virtual_index(n, q, 0.5, 0.5), n);
    case quantile_method::weibull: return continuous(virtual_index(n, q, 0, 0), n);
    case quantile_method::median_unbiased:
      return continuous(virtual_index(n, q, 1 / 3.0, 1 / 3.0), n);
    case quantile_method::normal_unbiased:
      return continuous(virtual_index(n, q, 3 / 8.0, 3 / 8.0), n);
    case quantile_method::linear: break;
  }
  return continuous(last * q, n);  // linear: (n - 1) q, numpy's own rounding-friendly form
}

/// The type numpy interpolates T in (for a scalar q): float for float, double otherwise.
template <class T>
using quantile_compute_t = std::conditional_t<std::is_same_v<T, float>, float, double>;

namespace quantile_detail {

// Rounded (never fused) products and sums, float or double.
template <class C>
GSEARCH_HD GSEARCH_FORCEINLINE C mul_rn(C a, C b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
template <class C>
GSEARCH_HD GSEARCH_FORCEINLINE C add_rn(C a, C b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>) return __fadd_rn(a, b);
  else return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// b - a in numpy's arithmetic type: the floats' own subtraction; for integers (a <= b) the exact
// difference, taken in the unsigned type so that it cannot overflow, then rounded to double.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE quantile_compute_t<T> difference(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return b - a;
  } else {
    using U = std::make_unsigned_t<T>;
    return a <= b ? double(U(U(b) - U(a))) : -double(U(U(a) - U(b)));
  }
}

}  // namespace quantile_detail

/// numpy's _lerp(a, b, t): a + (b - a) t, or b - (b - a)(1 - t) from t >= 0.5, in
/// quantile_compute_t<T> (t and 1 - t are double, then rounded to the arithmetic type, as a
/// Python float meets a float32 scalar).
template <class T>
GSEARCH_HD inline quantile_compute_t<T> numpy_lerp(T a, T b, double t) {
  using C = quantile_compute_t<T>;
  using namespace quantile_detail;
  const C diff = difference(a, b);
  if (t >= 0.5) return add_rn(C(b), -mul_rn(diff, C(1.0 - t)));
  return add_rn(C(a), mul_rn(diff, C(t)));
}

/// The quantile p describes from the elements of ranks p.lo and p.hi (lo_value <= hi_value in
/// the key order; neither NaN: the caller answers NaN data first).
template <class T>
GSEARCH_HD inline double quantile_combine(const quantile_point& p, T lo_value, T hi_value) {
  if (p.discrete) return double(lo_value);
  return double(numpy_lerp(lo_value, hi_value, p.gamma));
}

/// The median's ranks of n >= 1 elements: one middle element (lo == hi) or the two middle ones.
struct median_ranks {
  int64_t lo, hi;
};
GSEARCH_HD inline median_ranks median_ranks_of(int64_t n) { return {(n - 1) / 2, n / 2}; }

/// np.median from the elements of median_ranks_of(n): np.mean of the middle one or two, floats
/// summed and divided in their own type (float32 stays float32), integers in float64.
template <class T>
GSEARCH_HD inline double median_combine(T lo_value, T hi_value, int64_t n) {
  using quantile_detail::add_rn;
  if (n % 2 == 1) return double(lo_value);
  if constexpr (std::is_floating_point_v<T>) {
    return double(T(add_rn(lo_value, hi_value) / T(2)));
  } else {
    return add_rn(double(lo_value), double(hi_value)) / 2.0;
  }
}

}  // namespace gsearch::core
