#pragma once
/// \file
/// Supported key types and the order gsearch searches in.
///
/// Integers order as usual. Floating-point keys order like numpy's sort and searchsorted:
/// -inf < finite values < +inf < NaN, with -0.0 equal to 0.0 and every NaN equal to every other.
/// This is a total order, so sorted key lists and search results are well defined for any input.

#include <cstdint>
#include <limits>
#include <type_traits>

#include "gsearch/core/algorithm.hpp"  // side
#include "gsearch/core/config.hpp"

namespace gsearch {

template <class T>
struct key_traits;  // only the supported key types have one

#define GSEARCH_INTEGER_KEY(T, NAME, DESCR)                                      \
  template <>                                                                     \
  struct key_traits<T> {                                                          \
    static constexpr const char* name = NAME;   /* as numpy spells the dtype */   \
    static constexpr const char* npy_descr = DESCR; /* .npy header descr */     \
    /** The first and last values of the order: the padding sentinels. */        \
    GSEARCH_HD static constexpr T lowest() { return std::numeric_limits<T>::min(); } \
    GSEARCH_HD static constexpr T highest() { return std::numeric_limits<T>::max(); } \
  };
GSEARCH_INTEGER_KEY(int32_t, "int32", "<i4")
GSEARCH_INTEGER_KEY(uint32_t, "uint32", "<u4")
GSEARCH_INTEGER_KEY(int64_t, "int64", "<i8")
GSEARCH_INTEGER_KEY(uint64_t, "uint64", "<u8")
#undef GSEARCH_INTEGER_KEY

#define GSEARCH_FLOAT_KEY(T, NAME, DESCR)                                                   \
  template <>                                                                                \
  struct key_traits<T> {                                                                     \
    static constexpr const char* name = NAME;                                                \
    static constexpr const char* npy_descr = DESCR;                                          \
    GSEARCH_HD static constexpr T lowest() { return -std::numeric_limits<T>::infinity(); }  \
    GSEARCH_HD static constexpr T highest() { return std::numeric_limits<T>::quiet_NaN(); } \
  };
GSEARCH_FLOAT_KEY(float, "float32", "<f4")
GSEARCH_FLOAT_KEY(double, "float64", "<f8")
#undef GSEARCH_FLOAT_KEY

/// Expands X(T) for every supported key type: explicit instantiations are written once per list.
#define GSEARCH_KEY_TYPES(X) X(int32_t) X(uint32_t) X(int64_t) X(uint64_t) X(float) X(double)
/// The same with a first argument: X(ARG, T) for every key type (declarations per backend).
#define GSEARCH_FOR_EACH_KEY_TYPE(X, ARG) \
  X(ARG, int32_t) X(ARG, uint32_t) X(ARG, int64_t) X(ARG, uint64_t) X(ARG, float) X(ARG, double)

/// True for the key types gsearch supports.
template <class T>
concept key_type = requires { key_traits<T>::name; };

/// a < b in the total order described above.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE constexpr bool key_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a < b || (b != b && a == a);  // NaN is after everything but NaN
  } else {
    return a < b;
  }
}

/// a <= b in the total order described above.
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE constexpr bool key_less_equal(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a <= b || b != b;  // everything is <= NaN; NaN is <= nothing else
  } else {
    return a <= b;
  }
}

/// The predicate every search counts: the keys "before" q. Monotone over a sorted key list
/// (true on a prefix), so the result of a search is the length of that prefix.
///   Strict = true : key < q   (lower_bound)
///   Strict = false: key <= q  (upper_bound, predecessor)
template <bool Strict, class T>
struct before {
  T q;
  GSEARCH_HD GSEARCH_FORCEINLINE constexpr bool operator()(T key) const {
    if constexpr (Strict) {
      return key_less(key, q);
    } else {
      return key_less_equal(key, q);
    }
  }
};

/// `before` in IEEE comparisons alone: key < q or key <= q. The same order as `before` for
/// every q but NaN (NaN keys compare false, so they stay after q; -0.0 == 0.0 already), and
/// branch-free where key_less needs a second comparison for NaN: g++ makes key_less branch on
/// every step of a search, which costs 7x once the queries are too many for the branch
/// predictor to learn (docs/perf-notes.md). Callers answer NaN queries apart, or, like isin,
/// need no rank for them.
template <bool Strict, class T>
struct ieee_before {
  T q;
  GSEARCH_HD GSEARCH_FORCEINLINE constexpr bool operator()(T key) const {
    return Strict ? key < q : key <= q;
  }
};

}  // namespace gsearch
