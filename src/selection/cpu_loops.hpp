#pragma once
// The select's per-element loops (cpu_select.cpp): the counts, bucket numbers and compaction of
// one pass, each compiled for AVX-512, AVX2 and plain x86-64.

#include <cstdint>

namespace gsearch::cpu_backend::select_detail {

// The loops are compiled for AVX-512, AVX2 and plain x86-64
// (the library targets baseline x86-64; GCC's target_clones picks the CPU's best at load time, as
// src/static_index/cpu.cpp does). Each compares every element with one splitter s (not NaN) in
// IEEE comparisons, which are the key order's here: !(x < s) is s <= x and !(x <= s) is s < x for
// every x, NaN included (it compares false, and it is after every s).

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define GSEARCH_SELECT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GSEARCH_SELECT_CLONES
#endif

// The elements of x[0, len) (len < 2^32) with s <= x, and with s < x.
template <class T>
GSEARCH_SELECT_CLONES void count_from(const T* x, int64_t len, T s, int64_t* at_least, int64_t* above) {
  uint32_t a = 0, c = 0;
  for (int64_t i = 0; i < len; ++i) {
    a += !(x[i] < s);
    c += !(x[i] <= s);
  }
  *at_least = a;
  *above = c;
}

// The NaN elements of x[0, len) (len < 2^32).
template <class T>
GSEARCH_SELECT_CLONES int64_t count_nan_in(const T* x, int64_t len) {
  uint32_t k = 0;
  for (int64_t i = 0; i < len; ++i) k += x[i] != x[i];
  return k;
}

// b[i] += (s <= x[i]) + (s < x[i]): one splitter's step of the bucket numbers.
template <class T, class B>
GSEARCH_SELECT_CLONES void add_splitter_steps(const T* x, int64_t len, T s, B* b) {
  for (int64_t i = 0; i < len; ++i) b[i] = B(b[i] + B(!(x[i] < s)) + B(!(x[i] <= s)));
}

// b[i] += (x[i] is NaN): a NaN splitter's step (<= only NaN, < nothing).
template <class T, class B>
GSEARCH_SELECT_CLONES void add_nan_steps(const T* x, int64_t len, B* b) {
  for (int64_t i = 0; i < len; ++i) b[i] = B(b[i] + B(x[i] != x[i]));
}

// Writes the x[i] with b[i] == want to out, in order, without branches; returns how many.
template <class T, class B>
GSEARCH_SELECT_CLONES int64_t compact_bucket(const T* x, const B* b, int64_t len, B want, T* out) {
  int64_t o = 0;
  for (int64_t i = 0; i < len; ++i) {
    out[o] = x[i];
    o += b[i] == want;
  }
  return o;
}

}  // namespace gsearch::cpu_backend::select_detail
