#pragma once
/// \file
/// numpy's quantile and median arithmetic (numpy 2.4, lib/_function_base_impl.py: _QuantileMethods,
/// _quantile, _compute_virtual_index, _get_indexes, _get_gamma, _lerp, _median), for both
/// backends: which ranks of the sorted data one q needs, and how their values combine into
/// numpy's result, bit for bit.
///
/// Usage: p = quantile_point_of(method, q, n, dtypes); select the elements of ranks p.lo and p.hi
/// (the key order of key_traits.hpp; n = the non-NaN count for nanquantile);
/// quantile_combine(p, lo, hi, dtypes). Median: ranks median_ranks_of(n), median_combine(lo, hi, n).
///
/// The types (quantile_dtypes, core/selection.hpp) are numpy's, as its NEP 50 promotion sets them:
/// the virtual index, ranks and gamma in q's dtype (`index`); the lerp in the result dtype
/// (`lerp`), after b - a in the data's own dtype. Every numpy operation is done here in double and
/// rounded once to its format (round_to): for + - * that equals the operation done in the format
/// itself, since double's 53 bits are at least twice binary32's 24 plus 2 (a double rounding is
/// then innocuous: Figueroa, "When is double rounding innocuous?", 1995). The discrete methods
/// return the element itself (numpy's take; the caller converts it to numpy's dtype).
///
/// Deliberate difference: numpy subtracts two integer elements in their own type, which wraps
/// around (np.quantile(int32 [-2^31, 2^31 - 1], 0.5) gives 2147483647.5); here the difference is
/// exact (taken in the unsigned type, the larger minus the smaller), which equals numpy's wherever
/// numpy does not overflow. Float data keeps numpy's IEEE results, including its NaN for a lerp
/// between inf and anything (np.quantile([1, inf], 0.5) is NaN) and np.median's overflow of
/// lo + hi (float32 [3e38, 3e38] gives inf).
///
/// float16 q: numpy's float16 index arithmetic overflows from n = 65520 (n rounds to inf; numpy
/// then answers NaN or raises IndexError); the public API refuses that (invalid_argument). Where
/// the rounding of a float16 or float32 index passes the last element (numpy: IndexError or
/// ValueError), the last element is taken.
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
/// (the weight of hi, a value of the index format). `discrete`: the result is the element of
/// rank lo itself (numpy's take, for inverted_cdf, closest_observation, lower, higher, nearest,
/// and linear with an integer q); lo == hi then.
struct quantile_point {
  int64_t lo = 0, hi = 0;
  double gamma = 0;
  bool discrete = true;
};

/// x rounded to the nearest binary16 value (ties to even; inf from 65520 on, as IEEE), as a
/// double: numpy's float16 result of an operation whose exact value x is.
GSEARCH_HD inline double round_to_binary16(double x) {
  const double a = fabs(x);
  if (!(a < 65520.0)) return a >= 65520.0 ? copysign(HUGE_VAL, x) : x;  // overflow; NaN stays
  if (a < 0x1p-14) return rint(x * 0x1p24) * 0x1p-24;  // subnormal: multiples of 2^-24
  int e = 0;
  (void)frexp(a, &e);                     // 2^(e-1) <= a < 2^e
  const double ulp = ldexp(1.0, e - 11);  // 11 significant bits
  return rint(x / ulp) * ulp;             // both exact: ulp is a power of two
}

/// x rounded to format f (round to nearest, ties to even).
GSEARCH_HD inline double round_to(float_format f, double x) {
  switch (f) {
    case float_format::binary16: return round_to_binary16(x);
    case float_format::binary32: return double(float(x));
    case float_format::binary64: break;
  }
  return x;
}

namespace quantile_detail {

// Rounded (never fused) double products and sums.
GSEARCH_HD GSEARCH_FORCEINLINE double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
GSEARCH_HD GSEARCH_FORCEINLINE double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// numpy's arithmetic in one dtype: each operation rounded once to its format; a Python scalar
// operand (n, 1, alpha) first converted to it (NEP 50's weak scalars), by of().
struct in_format {
  float_format f;
  GSEARCH_HD double of(double x) const { return round_to(f, x); }
  GSEARCH_HD double add(double a, double b) const { return round_to(f, add_rn(a, b)); }
  GSEARCH_HD double sub(double a, double b) const { return round_to(f, add_rn(a, -b)); }
  GSEARCH_HD double mul(double a, double b) const { return round_to(f, mul_rn(a, b)); }
};

// Python's x % 2 for an integral double (the sign of the divisor: -1 % 2 == 1).
GSEARCH_HD inline double floor_mod2(double x) { return x - 2.0 * floor(x / 2.0); }

// _compute_virtual_index: n * q + (alpha + q * (1 - alpha - beta)) - 1, in Python's order, in
// q's format (1 - alpha - beta is Python's float arithmetic, then converted).
GSEARCH_HD inline double virtual_index(in_format F, int64_t n, double q, double alpha, double beta) {
  const double c = (1.0 - alpha) - beta;
  return F.sub(F.add(F.mul(F.of(double(n)), q), F.add(F.of(alpha), F.mul(q, F.of(c)))), 1.0);
}

// _discrete_interpolation_to_boundaries: floor(index) where the condition holds, else
// floor + 1 (computed in the index format), clipped below at 0.
GSEARCH_HD inline int64_t discrete_boundary(in_format F, double index, bool take_floor) {
  const double previous = floor(index);
  const int64_t r = int64_t(take_floor ? previous : F.add(previous, 1.0));
  return r < 0 ? 0 : r;
}

// A rank past the last element (q of float16 or float32 whose rounding takes n q - 1 or (n - 1) q
// to n or more: numpy raises IndexError or ValueError there) is the last element.
GSEARCH_HD inline int64_t at_most(int64_t rank, int64_t n) { return rank < n - 1 ? rank : n - 1; }

GSEARCH_HD inline quantile_point discrete(int64_t rank, int64_t n) {
  const int64_t r = at_most(rank, n);
  return {r, r, 0.0, true};
}

// The continuous methods: _get_indexes' neighbours of the virtual index vi (floor(vi) and
// floor(vi) + 1 in the index format; both the last element where vi >= n - 1, both the first
// where vi < 0) and _get_gamma's gamma = vi minus the *adjusted* previous index (-1 for the last
// element, as numpy indexes it), before fix_gamma.
GSEARCH_HD inline quantile_point continuous(in_format F, double vi, int64_t n) {
  double previous = floor(vi);
  int64_t lo = at_most(int64_t(previous), n), hi = at_most(int64_t(F.add(previous, 1.0)), n);
  if (vi >= F.of(double(n - 1))) {  // numpy converts the Python int n - 1 to q's dtype
    previous = -1.0;
    lo = hi = n - 1;
  }
  if (vi < 0) {
    previous = 0.0;
    lo = hi = 0;
  }
  return {lo, hi, F.sub(vi, previous), false};
}

}  // namespace quantile_detail

/// numpy's ranks and gamma of quantile q (0 <= q <= 1, a value of dtypes.index) of n >= 1
/// sorted elements by `method`, in numpy's arithmetic of dtypes.index.
GSEARCH_HD inline quantile_point quantile_point_of(quantile_method method, double q, int64_t n,
                                                   const quantile_dtypes& dtypes = {}) {
  using namespace quantile_detail;
  const in_format F{dtypes.index};
  const double last = F.mul(F.of(double(n - 1)), q);  // (n - 1) * q
  switch (method) {
    case quantile_method::inverted_cdf: {  // floor where n q - 1 is whole, else the next
      const double index = F.sub(F.mul(F.of(double(n)), q), 1.0);
      return discrete(discrete_boundary(F, index, F.sub(index, floor(index)) == 0.0), n);
    }
    case quantile_method::closest_observation: {  // the even order statistic (1-based) at g = 0
      const double index = F.sub(F.sub(F.mul(F.of(double(n)), q), 1.0), 0.5);
      const bool take_floor = F.sub(index, floor(index)) == 0.0 && floor_mod2(floor(index)) == 1.0;
      return discrete(discrete_boundary(F, index, take_floor), n);
    }
    case quantile_method::lower: return discrete(int64_t(floor(last)), n);
    case quantile_method::higher: return discrete(int64_t(ceil(last)), n);
    case quantile_method::nearest: return discrete(int64_t(rint(last)), n);  // half to even
    case quantile_method::averaged_inverted_cdf: {
      quantile_point p = continuous(F, F.sub(F.mul(F.of(double(n)), q), 1.0), n);
      p.gamma = p.gamma == 0.0 ? 0.5 : 1.0;
      return p;
    }
    case quantile_method::midpoint: {
      const double vi = F.mul(0.5, F.add(floor(last), ceil(last)));
      quantile_point p = continuous(F, vi, n);
      p.gamma = vi - floor(vi) == 0.0 ? 0.0 : 0.5;  // numpy: index % 1 == 0
      return p;
    }
    case quantile_method::interpolated_inverted_cdf: return continuous(F, virtual_index(F, n, q, 0, 1), n);
    case quantile_method::hazen: return continuous(F, virtual_index(F, n, q, 0.5, 0.5), n);
    case quantile_method::weibull: return continuous(F, virtual_index(F, n, q, 0, 0), n);
    case quantile_method::median_unbiased:
      return continuous(F, virtual_index(F, n, q, 1 / 3.0, 1 / 3.0), n);
    case quantile_method::normal_unbiased:
      return continuous(F, virtual_index(F, n, q, 3 / 8.0, 3 / 8.0), n);
    case quantile_method::linear: break;
  }
  // linear: (n - 1) q, numpy's own rounding-friendly form; an integer q takes the element.
  if (dtypes.integer_q) return discrete(int64_t(last), n);
  return continuous(F, last, n);
}

namespace quantile_detail {

// b - a as numpy's lerp has it: the floats' subtraction in the data's dtype (binary16 for float16
// data held as float); for integers (a <= b) the exact difference, taken in the unsigned type so
// that it cannot overflow, then rounded to double.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE double difference(T a, T b, const quantile_dtypes& dtypes) {
  if constexpr (std::is_floating_point_v<T>) {
    const double d = add_rn(double(b), -double(a));
    return round_to(std::is_same_v<T, double>  ? float_format::binary64
                    : dtypes.half_data         ? float_format::binary16
                                               : float_format::binary32,
                    d);
  } else {
    using U = std::make_unsigned_t<T>;
    return a <= b ? double(U(U(b) - U(a))) : -double(U(U(a) - U(b)));
  }
}

}  // namespace quantile_detail

/// numpy's _lerp(a, b, t): a + (b - a) t, or b - (b - a)(1 - t) from t >= 0.5, in dtypes.lerp:
/// b - a in the data's dtype, t (a value of the index format, or a Python float) converted to the
/// lerp's, 1 - t computed in the index format (Python's float for a scalar q) then converted.
template <class T>
GSEARCH_HD inline double numpy_lerp(T a, T b, double t, const quantile_dtypes& dtypes) {
  using namespace quantile_detail;
  const in_format L{dtypes.lerp};
  const double diff = L.of(difference(a, b, dtypes));
  if (t >= 0.5) return L.sub(L.of(double(b)), L.mul(diff, L.of(round_to(dtypes.index, 1.0 - t))));
  return L.add(L.of(double(a)), L.mul(diff, L.of(t)));
}

/// The quantile p describes from the elements of ranks p.lo and p.hi (lo_value <= hi_value in
/// the key order; neither NaN: the caller answers NaN data first), held exactly in the double.
template <class T>
GSEARCH_HD inline double quantile_combine(const quantile_point& p, T lo_value, T hi_value,
                                          const quantile_dtypes& dtypes = scalar_q_dtypes<T>()) {
  if (p.discrete) return double(lo_value);
  return numpy_lerp(lo_value, hi_value, p.gamma, dtypes);
}

/// The median's ranks of n >= 1 elements: one middle element (lo == hi) or the two middle ones.
struct median_ranks {
  int64_t lo, hi;
};
GSEARCH_HD inline median_ranks median_ranks_of(int64_t n) { return {(n - 1) / 2, n / 2}; }

/// np.median from the elements of median_ranks_of(n): np.mean of the middle one or two, floats
/// summed and divided in their own type (float32 stays float32; float16 data, held as float, is
/// summed in float32 as np.mean does: the caller rounds the result to float16), integers in
/// float64.
template <class T>
GSEARCH_HD inline double median_combine(T lo_value, T hi_value, int64_t n) {
  using quantile_detail::add_rn;
  if (n % 2 == 1) return double(lo_value);
  if constexpr (std::is_floating_point_v<T>) {
    return double(T(T(add_rn(lo_value, hi_value)) / T(2)));
  } else {
    return add_rn(double(lo_value), double(hi_value)) / 2.0;
  }
}

}  // namespace gsearch::core
