#pragma once
// The CPU select's three-way split by two splitters (src/selection/cpu.cpp's one-bracket path):
// the per-block kernels, scalar and AVX-512 (chosen at run time), and the non-temporal copy that
// partition's two-thread path streams its pages with. Included by selection.cpp only.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gsearch/core/key_traits.hpp"
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

namespace gsearch::cpu_backend::split {

// Most calls ask for one rank (select, partition with one kth, median, a quantile's two
// neighbours): one bracket of the sample, two splitters a <= b, and the data splits three ways,
// left (x < a), middle, right (b < x). Only the middle (a few per cent) is selected in again, so
// select reads the data once, counting left and right and copying the middle in the same pass,
// and partition reads it twice (the counts, then a scatter straight into the output). a is never
// NaN (a bracket whose lower end is NaN takes the general path); a NaN b is no right side. In
// IEEE comparisons, then: x < a is key_less(x, a) (a NaN x compares false, and it is not before
// a), !(x <= b) is key_less(b, x) (a NaN x compares false, and it is after b).

template <class T>
struct split_keys {
  T a{}, b{};
  bool has_a = false, has_b = false;
};

template <class T, bool A, bool B>
int64_t split_count_copy_scalar(const T* x, int64_t len, T a, T b, int64_t* left, int64_t* right, T* mid) {
  int64_t l = 0, r = 0, m = 0;
  for (int64_t i = 0; i < len; ++i) {
    const T v = x[i];
    const bool is_left = A && v < a, is_right = B && !(v <= b);
    l += is_left;
    r += is_right;
    if (mid) {
      mid[m] = v;
      m += !is_left && !is_right;
    }
  }
  *left += l;
  *right += r;
  return mid ? m : len - l - r;
}

template <class T, bool A, bool B>
void split_scatter_scalar(const T* x, int64_t len, T a, T b, T*& lo, T*& mid, T*& hi) {
  // Branches, not unconditional writes: the parts' output ranges touch, and a write one past a
  // range's end would race with the next part's.
  for (int64_t i = 0; i < len; ++i) {
    const T v = x[i];
    if (A && v < a) *lo++ = v;
    else if (B && !(v <= b)) *--hi = v;
    else *mid++ = v;
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GSEARCH_SPLIT_AVX512 1
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,popcnt,bmi,bmi2")

// Bytes ahead of the loads that the loops prefetch, one line a vector. Without it the pass that
// copies the middle took 9.7 ms for 2^24 int32 against 7.2 for counting alone (the stores'
// addresses wait for the loads, and the store buffer, full, stops the loads running ahead);
// with 8 KB ahead 4.9 ms (one thread; a distance of 1 KB: 6.8 ms, 4 KB: 5.4).
constexpr int prefetch_ahead = 8192;

// AVX-512 lanes of the key types: loads, the two comparisons and a compressing store.
template <class T>
struct lanes;
template <>
struct lanes<float> {
  using V = __m512;
  static constexpr int n = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V set1(float v) { return _mm512_set1_ps(v); }
  static uint32_t lt(V x, V a) { return _mm512_cmp_ps_mask(x, a, _CMP_LT_OQ); }
  static uint32_t gt(V x, V b) { return _mm512_cmp_ps_mask(x, b, _CMP_NLE_UQ); }
  static void store(float* p, uint32_t m, V x) {
    _mm512_mask_storeu_ps(p, __mmask16(_bzhi_u32(0xffffu, unsigned(__builtin_popcount(m)))), _mm512_maskz_compress_ps(__mmask16(m), x));
  }
};
template <>
struct lanes<double> {
  using V = __m512d;
  static constexpr int n = 8;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V set1(double v) { return _mm512_set1_pd(v); }
  static uint32_t lt(V x, V a) { return _mm512_cmp_pd_mask(x, a, _CMP_LT_OQ); }
  static uint32_t gt(V x, V b) { return _mm512_cmp_pd_mask(x, b, _CMP_NLE_UQ); }
  static void store(double* p, uint32_t m, V x) {
    _mm512_mask_storeu_pd(p, __mmask8(_bzhi_u32(0xffu, unsigned(__builtin_popcount(m)))), _mm512_maskz_compress_pd(__mmask8(m), x));
  }
};
template <class I, bool Signed>
struct int_lanes {
  using V = __m512i;
  static constexpr int n = 64 / int(sizeof(I));
  static V load(const I* p) { return _mm512_loadu_si512(p); }
  static V set1(I v) {
    if constexpr (sizeof(I) == 4) return _mm512_set1_epi32(int(v));
    else return _mm512_set1_epi64((long long)(v));
  }
  static uint32_t lt(V x, V a) {
    if constexpr (sizeof(I) == 4) return Signed ? _mm512_cmplt_epi32_mask(x, a) : _mm512_cmplt_epu32_mask(x, a);
    else return Signed ? _mm512_cmplt_epi64_mask(x, a) : _mm512_cmplt_epu64_mask(x, a);
  }
  static uint32_t gt(V x, V b) {
    if constexpr (sizeof(I) == 4) return Signed ? _mm512_cmpgt_epi32_mask(x, b) : _mm512_cmpgt_epu32_mask(x, b);
    else return Signed ? _mm512_cmpgt_epi64_mask(x, b) : _mm512_cmpgt_epu64_mask(x, b);
  }
  static void store(I* p, uint32_t m, V x) {
    const unsigned c = unsigned(__builtin_popcount(m));
    if constexpr (sizeof(I) == 4)
      _mm512_mask_storeu_epi32(p, __mmask16(_bzhi_u32(0xffffu, c)), _mm512_maskz_compress_epi32(__mmask16(m), x));
    else
      _mm512_mask_storeu_epi64(p, __mmask8(_bzhi_u32(0xffu, c)), _mm512_maskz_compress_epi64(__mmask8(m), x));
  }
};
template <>
struct lanes<int32_t> : int_lanes<int32_t, true> {};
template <>
struct lanes<uint32_t> : int_lanes<uint32_t, false> {};
template <>
struct lanes<int64_t> : int_lanes<int64_t, true> {};
template <>
struct lanes<uint64_t> : int_lanes<uint64_t, false> {};

template <class T, bool A, bool B>
int64_t split_count_copy_avx512(const T* x, int64_t len, T a, T b, int64_t* left, int64_t* right, T* mid) {
  using L = lanes<T>;
  const typename L::V va = L::set1(a), vb = L::set1(b);
  constexpr uint32_t all = L::n == 16 ? 0xffffu : 0xffu;
  int64_t l = 0, r = 0, m = 0, i = 0;
  for (; i + L::n <= len; i += L::n) {
    _mm_prefetch(reinterpret_cast<const char*>(x + i) + prefetch_ahead, _MM_HINT_T0);
    const typename L::V v = L::load(x + i);
    const uint32_t ml = A ? L::lt(v, va) : 0u, mr = B ? L::gt(v, vb) : 0u;
    l += __builtin_popcount(ml);
    r += __builtin_popcount(mr);
    if (mid) {
      const uint32_t mm = ~(ml | mr) & all;
      L::store(mid + m, mm, v);
      m += __builtin_popcount(mm);
    }
  }
  int64_t tl = 0, tr = 0;
  const int64_t tm = split_count_copy_scalar<T, A, B>(x + i, len - i, a, b, &tl, &tr, mid ? mid + m : nullptr);
  *left += l + tl;
  *right += r + tr;
  return mid ? m + tm : len - l - tl - r - tr;
}

template <class T, bool A, bool B>
void split_scatter_avx512(const T* x, int64_t len, T a, T b, T*& lo, T*& mid, T*& hi) {
  using L = lanes<T>;
  const typename L::V va = L::set1(a), vb = L::set1(b);
  constexpr uint32_t all = L::n == 16 ? 0xffffu : 0xffu;
  T *pl = lo, *pm = mid, *ph = hi;
  int64_t i = 0;
  for (; i + L::n <= len; i += L::n) {
    _mm_prefetch(reinterpret_cast<const char*>(x + i) + prefetch_ahead, _MM_HINT_T0);
    const typename L::V v = L::load(x + i);
    const uint32_t ml = A ? L::lt(v, va) : 0u, mr = B ? L::gt(v, vb) : 0u, mm = ~(ml | mr) & all;
    if (A) {
      L::store(pl, ml, v);
      pl += __builtin_popcount(ml);
    }
    if (B) {
      ph -= __builtin_popcount(mr);
      L::store(ph, mr, v);
    }
    L::store(pm, mm, v);
    pm += __builtin_popcount(mm);
  }
  split_scatter_scalar<T, A, B>(x + i, len - i, a, b, pl, pm, ph);
  lo = pl;
  mid = pm;
  hi = ph;
}
// dst[0, bytes) = src[0, bytes) by non-temporal stores (dst 64-byte aligned, bytes a multiple
// of 64): the output's lines are not read for ownership first.
inline void stream_copy(void* dst, const void* src, int64_t bytes) {
  auto* d = static_cast<__m512i*>(dst);
  const auto* sp = static_cast<const char*>(src);
  for (int64_t i = 0; i < bytes / 64; ++i) _mm512_stream_si512(d + i, _mm512_loadu_si512(sp + 64 * i));
}
inline void stream_fence() { _mm_sfence(); }
#pragma GCC pop_options

inline bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("bmi2");
  return yes;
}
#endif

// f(std::bool_constant<A>, std::bool_constant<B>) for the keys' sides.
template <class T, class F>
decltype(auto) with_sides(const split_keys<T>& k, F&& f) {
  if (k.has_a) {
    if (k.has_b) return f(std::true_type{}, std::true_type{});
    return f(std::true_type{}, std::false_type{});
  }
  if (k.has_b) return f(std::false_type{}, std::true_type{});
  return f(std::false_type{}, std::false_type{});
}

// Adds x[0, len)'s left and right counts; copies the middle to mid (when not null); returns the
// middle's count.
template <class T>
int64_t split_count_copy(const split_keys<T>& k, const T* x, int64_t len, int64_t* left, int64_t* right, T* mid) {
  return with_sides(k, [&](auto a, auto b) {
#ifdef GSEARCH_SPLIT_AVX512
    if (has_avx512()) return split_count_copy_avx512<T, decltype(a)::value, decltype(b)::value>(x, len, k.a, k.b, left, right, mid);
#endif
    return split_count_copy_scalar<T, decltype(a)::value, decltype(b)::value>(x, len, k.a, k.b, left, right, mid);
  });
}

// Writes x[0, len) to lo or mid, each advanced past what it wrote, or before hi, which moves
// down past what it wrote (the right side fills the output from its end).
template <class T>
void split_scatter(const split_keys<T>& k, const T* x, int64_t len, T*& lo, T*& mid, T*& hi) {
  with_sides(k, [&](auto a, auto b) {
#ifdef GSEARCH_SPLIT_AVX512
    if (has_avx512()) return split_scatter_avx512<T, decltype(a)::value, decltype(b)::value>(x, len, k.a, k.b, lo, mid, hi);
#endif
    return split_scatter_scalar<T, decltype(a)::value, decltype(b)::value>(x, len, k.a, k.b, lo, mid, hi);
  });
}

}  // namespace gsearch::cpu_backend::split
