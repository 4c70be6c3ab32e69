#pragma once
/// \file
/// Unsigned bits that order like the keys (key_traits.hpp's order), for radix sorts and radix
/// selects: two maps.
///   radix_bits    equal keys give equal bits (every NaN one NaN, -0.0 the bits of 0.0): a radix
///                 select counts equal elements together (selection, top-k).
///   ordered_bits  one to one (every NaN payload and sign, -0.0 kept): a radix sort of the bits
///                 and back returns the very elements (index intervals' sort).
/// Both are strictly increasing in the key order where the keys differ.

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "gsearch/core/config.hpp"

namespace gsearch::core {

/// The unsigned integer as wide as T (uint64_t, a key type: the CPU's sorts take it).
template <class T>
using radix_bits_t = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

/// The leading zero bits of x (its width for 0). Not std::countl_zero in device code: with nvcc
/// 13.0 and libstdc++ 12 it compiles to the constant 64 for a 64-bit argument (std::bit_width to
/// 0, std::countr_zero to 64: the PTX of a test kernel), which the GPU tests of
/// algorithm::merge caught (2026-11-30); the device takes CUDA's __clz / __clzll.
template <class U>
GSEARCH_HD GSEARCH_FORCEINLINE int leading_zeros(U x) {
  static_assert(std::is_unsigned_v<U> && (sizeof(U) == 4 || sizeof(U) == 8));
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(U) == 8) return __clzll(static_cast<long long>(x));
  else return __clz(static_cast<int>(x));
#else
  return std::countl_zero(x);
#endif
}

/// T's key order as unsigned bits, equal keys equal: signed integers with the sign bit flipped;
/// floats with every NaN made the positive quiet NaN and -0.0 made 0.0, then negative values'
/// bits inverted and positive ones' sign bit set (IEEE bits then order as unsigned integers, the
/// NaN after +inf).
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE radix_bits_t<T> radix_bits(T x) {
  using U = radix_bits_t<T>;
  constexpr U sign = U(1) << (8 * sizeof(T) - 1);
  if constexpr (std::is_unsigned_v<T>) {
    return U(x);
  } else if constexpr (std::is_integral_v<T>) {
    return U(x) ^ sign;
  } else {
    constexpr U quiet_nan = sizeof(T) == 4 ? U(0x7fc00000u) : U(0x7ff8000000000000ull);
    U bits;
    memcpy(&bits, &x, sizeof(T));
    bits = x != x ? quiet_nan : (x == T(0) ? U(0) : bits);
    return bits & sign ? U(~bits) : U(bits | sign);
  }
}

/// The inverse of radix_bits (the positive quiet NaN and 0.0 for the values it merged).
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE T from_radix_bits(radix_bits_t<T> u) {
  using U = radix_bits_t<T>;
  constexpr U sign = U(1) << (8 * sizeof(T) - 1);
  if constexpr (std::is_unsigned_v<T>) {
    return T(u);
  } else if constexpr (std::is_integral_v<T>) {
    return T(u ^ sign);
  } else {
    const U bits = u & sign ? U(u ^ sign) : U(~u);
    T x;
    memcpy(&x, &bits, sizeof(T));
    return x;
  }
}

/// T's key order as unsigned bits, one to one, so that a radix sort of the bits and back returns
/// the very elements (every NaN payload and sign, -0.0) in the key order. Integers: the sign bit
/// flipped. Floats: negative values inverted, positive ones with the sign bit set (IEEE order;
/// -0.0 just before 0.0, which the key order allows as they are equal), then all of it rotated
/// down by the count of negative NaN patterns, 2^mantissa - 1: -inf becomes 0, and the negative
/// NaNs, which the first map puts below -inf, wrap round to the top, after the positive NaNs.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE radix_bits_t<T> ordered_bits(T x) {
  using U = radix_bits_t<T>;
  constexpr U sign = U(1) << (8 * sizeof(T) - 1);
  if constexpr (std::is_unsigned_v<T>) {
    return x;
  } else if constexpr (std::is_integral_v<T>) {
    return U(x) ^ sign;
  } else {
    constexpr U negative_nans = (U(1) << (std::numeric_limits<T>::digits - 1)) - 1;
    using S = std::make_signed_t<U>;
    U u;
    memcpy(&u, &x, sizeof(T));
    // u & sign ? ~u : u | sign, as one xor with the sign spread (2 instructions on the GPU, not 3)
    const U ieee = u ^ (U(S(u) >> (8 * sizeof(T) - 1)) | sign);
    return U(ieee - negative_nans);
  }
}

/// The inverse of ordered_bits.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE T from_ordered_bits(radix_bits_t<T> b) {
  using U = radix_bits_t<T>;
  constexpr U sign = U(1) << (8 * sizeof(T) - 1);
  if constexpr (std::is_unsigned_v<T>) {
    return b;
  } else if constexpr (std::is_integral_v<T>) {
    return T(b ^ sign);
  } else {
    constexpr U negative_nans = (U(1) << (std::numeric_limits<T>::digits - 1)) - 1;
    const U ieee = U(b + negative_nans);
    const U u = ieee & sign ? U(ieee ^ sign) : U(~ieee);
    T x;
    memcpy(&x, &u, sizeof(T));
    return x;
  }
}

}  // namespace gsearch::core
