#pragma once
// The CPU select's small inputs: a vectorized quickselect for one rank, its steps the one-bracket
// split kernels of select_split.hpp. Included by cpu_select.cpp only (one rank of up to
// split_min keys, and the leaves of its split paths).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>

#include "select_split.hpp"

namespace gsearch::cpu_backend::split {

// At or below quick_min keys nth_element finishes a quickselect (a step's set-up costs more
// there: 100 keys took 0.34 us with a step of 64, 0.23 without), and after quick_steps steps (a
// bracket that keeps missing: adversarial data) nth_element takes over. Each step samples
// quick_sample keys and brackets k's rank by quick_margin sample ranks on each side. Measured
// against a single pivot, the median of 5 (one rank n / 2, the worst case for a bracket; A/B
// rounds in bench/results/cpu/issue41/quickselect_ab.txt): 16 keys and 3 ranks 1.15-1.32x at 300
// and 1,000 keys, 0.88-1.05x at 2,000, 1.07-1.16x at 10^4 (the split's leaves); 32 and 4 lost at
// 1,000-2,000 (0.79-0.97x: sorting the sample costs more than the smaller middle saves).
constexpr int64_t quick_min = 256;
constexpr int quick_steps = 48;
constexpr int quick_sample = 16;
constexpr int quick_margin = 3;

// What std::nth_element(buf, buf + k, buf + n) does, for n up to a few thousand keys and no NaN:
// buf[k] the element of rank k, none after it smaller and none before it larger. A quickselect
// in the manner of Floyd and Rivest whose steps are the one-bracket split (select_split.hpp:
// AVX-512 compressing stores, 16 4-byte keys an instruction): a sorted sample of the range gives
// two keys a <= b around k's rank, the range is copied to tmp (n elements) and split back into
// buf, the keys before a up from the range's start and those after b down from its end, the
// middle (compacted in tmp) copied into the gap: a permutation (-0.0 and 0.0, equal, keep their
// bits). The next step takes the part holding k: the middle, some 2 x 3 / 16 of the range, or,
// when the sample missed, a side. numpy's partition of small inputs is x86-simd-sort's
// vectorized quickselect; nth_element's scalar introselect took 2-3x its time (docs/perf-notes.md,
// issue 41).
template <class T>
void quickselect(T* buf, int64_t n, int64_t k, T* tmp) {
  int64_t lo = 0, hi = n;
  uint64_t state = 0x9e3779b97f4a7c15ull ^ uint64_t(n);
  for (int step = 0; hi - lo > quick_min && step < quick_steps; ++step) {
    const int64_t len = hi - lo;
    T s[quick_sample];
    for (T& x : s) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;  // an LCG: positions, not statistics
      x = buf[lo + int64_t((state >> 33) % uint64_t(len))];
    }
    std::sort(s, s + quick_sample);
    const int at = int((k - lo) * quick_sample / len), ia = at - quick_margin, ib = at + quick_margin;
    const split_keys<T> keys{ia >= 0 ? s[ia] : T{}, ib < quick_sample ? s[ib] : T{}, ia >= 0, ib < quick_sample};
    std::memcpy(tmp, buf + lo, size_t(len) * sizeof(T));
    T *to_lo = buf + lo, *to_mid = tmp, *to_hi = buf + hi;  // the middle compacted in tmp, in place
    split_scatter(keys, tmp, len, to_lo, to_mid, to_hi);
    std::memcpy(to_lo, tmp, size_t(to_mid - tmp) * sizeof(T));
    const int64_t l = to_lo - buf, r = to_hi - buf;
    if (k < l) {
      hi = l;
    } else if (k >= r) {
      lo = r;
    } else {
      if (keys.has_a && keys.has_b && !(keys.a < keys.b)) return;  // a == b: the middle is all equal
      lo = l;
      hi = r;
    }
  }
  std::nth_element(buf + lo, buf + k, buf + hi, std::less<T>{});
}

// std::nth_element(buf, buf + k, buf + n) (no NaN): by quickselect for 4-byte keys where the
// split kernels are vectorized (AVX-512), else nth_element itself. Measured (C++ driver, one
// rank of n / 2, random keys; bench/results/cpu/issue41/quickselect_ab.*, three A/B runs on this
// shared 2-core machine, whose runs differ by up to 30%): 4-byte keys 1.3-3.1x nth_element at
// 1,000-2,000 keys in every run; 8-byte keys (8 lanes a vector) between 0.7x and 1.4x, so they
// keep nth_element. A scalar quickselect's copies cost more than they save. tmp: n elements.
template <class T>
void small_nth_element(T* buf, int64_t n, int64_t k, T* tmp) {
#ifdef GSEARCH_SPLIT_AVX512
  if (sizeof(T) == 4 && has_avx512()) return quickselect(buf, n, k, tmp);
#endif
  (void)tmp;
  std::nth_element(buf, buf + k, buf + n, std::less<T>{});
}

}  // namespace gsearch::cpu_backend::split
