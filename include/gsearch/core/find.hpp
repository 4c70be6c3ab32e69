#pragma once
/// \file
/// Unsorted search, the per-element and per-thread pieces both backends share: what a match is,
/// which elements a thread of each study strategy reads (seeds/001), the seeded draw of
/// find_random, membership in sorted test elements (isin) and the hash set isin uses when the
/// test elements do not fit in shared memory.

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/pbs.hpp"

namespace gsearch {

/// The predicates of find / count: how each element x compares with the value. numpy's and
/// torch's elementwise comparisons (IEEE): -0.0 == 0.0, and NaN satisfies only `ne`.
enum class find_op : int {
  eq,        ///< x == value
  ne,        ///< x != value
  lt,        ///< x < value
  le,        ///< x <= value
  gt,        ///< x > value
  ge,        ///< x >= value
  in_range,  ///< value <= x < hi
};

/// The CLI's name of an op ("eq", "ne", ..., "in").
constexpr std::string_view to_string(find_op op) {
  constexpr std::string_view names[] = {"eq", "ne", "lt", "le", "gt", "ge", "in"};
  return names[int(op)];
}
/// The operator's symbol ("==", "!=", "<", "<=", ">", ">=", "in"): Python's name.
constexpr std::string_view to_symbol(find_op op) {
  constexpr std::string_view names[] = {"==", "!=", "<", "<=", ">", ">=", "in"};
  return names[int(op)];
}
/// Inverse of to_string and to_symbol; nullopt for an unknown name.
constexpr std::optional<find_op> find_op_from_string(std::string_view s) {
  for (int i = 0; i <= int(find_op::in_range); ++i)
    if (to_string(find_op(i)) == s || to_symbol(find_op(i)) == s) return find_op(i);
  return std::nullopt;
}

/// What find / count look for: `op` against `value` (and `hi` for in_range: [value, hi)).
template <class T>
struct predicate {
  find_op op = find_op::eq;
  T value{};
  T hi{};
};
/// x == v, x != v, ..., and v <= x < hi.
template <class T> constexpr predicate<T> equal_to(T v) { return {find_op::eq, v, v}; }
template <class T> constexpr predicate<T> not_equal_to(T v) { return {find_op::ne, v, v}; }
template <class T> constexpr predicate<T> less(T v) { return {find_op::lt, v, v}; }
template <class T> constexpr predicate<T> less_equal(T v) { return {find_op::le, v, v}; }
template <class T> constexpr predicate<T> greater(T v) { return {find_op::gt, v, v}; }
template <class T> constexpr predicate<T> greater_equal(T v) { return {find_op::ge, v, v}; }
template <class T> constexpr predicate<T> in_range(T lo, T hi) { return {find_op::in_range, lo, hi}; }

/// What a find returns: the lowest matching index, any matching index, a seeded uniformly random
/// one (-1 when nothing matches), or the number of matches.
enum class find_mode : int { first, any, random, count };
constexpr std::string_view to_string(find_mode m) {
  constexpr std::string_view names[] = {"first", "any", "random", "count"};
  return names[int(m)];
}

/// How the GPU reads the data (seeds/001). `auto_` is the tuned scan: 16-byte loads, several in
/// flight per thread, a grid sized to the chip, early exit. The others are the seed's kernels,
/// kept for study: k elements per thread (`per_thread`), one thread per k elements, scalar loads,
/// no early exit.
enum class find_strategy : int {
  auto_,
  strided,         ///< thread t reads t*k, t*k + 1, ..., t*k + k - 1
  coalesced,       ///< thread t of m reads t, t + m, ..., t + (k-1)*m
  unrolled,        ///< coalesced, with its k loads issued 8 at a time before any compare
  one_per_thread,  ///< thread t reads element t (k = 1)
};
constexpr std::string_view to_string(find_strategy s) {
  constexpr std::string_view names[] = {"auto", "strided", "coalesced", "unrolled", "one-per-thread"};
  return names[int(s)];
}
constexpr std::optional<find_strategy> find_strategy_from_string(std::string_view s) {
  for (int i = 0; i <= int(find_strategy::one_per_thread); ++i)
    if (to_string(find_strategy(i)) == s) return find_strategy(i);
  return std::nullopt;
}

/// How isin finds an element among the test elements.
enum class isin_method : int {
  auto_,   ///< sorted while the sorted test elements fit in shared memory, else hash
  sorted,  ///< sort the test elements once, then a lower-bound search per element (PBS-CL in
           ///< shared memory on the GPU when they fit, binary search in global memory if not)
  hash,    ///< a hash set of the test elements (in L2 on the GPU), one expected probe per element
};
constexpr std::string_view to_string(isin_method m) {
  constexpr std::string_view names[] = {"auto", "sorted", "hash"};
  return names[int(m)];
}

namespace core {

/// The predicate as the scans evaluate it: one interval test with open or closed ends, possibly
/// inverted, so that every op runs the same branch-free code (no kernel per op):
///   eq: [v, v]   ne: not [v, v]   lt: [lowest, v)   le: [lowest, v]   gt: (v, highest]
///   ge: [v, highest]   in_range: [lo, hi)
/// In IEEE comparisons a NaN element is in no interval, so it matches only `ne`, as in numpy.
template <class T>
struct match {
  T lo, hi;
  bool lo_open, hi_open, invert;

  GSEARCH_HD GSEARCH_FORCEINLINE bool operator()(T x) const {
    const bool above = lo_open ? x > lo : x >= lo;
    const bool below = hi_open ? x < hi : x <= hi;
    return (above && below) != invert;
  }
};

/// The lowest value of T in IEEE comparisons (-inf for floats, the minimum for integers).
template <class T>
GSEARCH_HD constexpr T lowest_value() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::lowest();
}
template <class T>
GSEARCH_HD constexpr T highest_value() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::max();
}

template <class T>
constexpr match<T> make_match(const predicate<T>& p) {
  const T v = p.value;
  switch (p.op) {
    case find_op::eq: return {v, v, false, false, false};
    case find_op::ne: return {v, v, false, false, true};
    case find_op::lt: return {lowest_value<T>(), v, false, true, false};
    case find_op::le: return {lowest_value<T>(), v, false, false, false};
    case find_op::gt: return {v, highest_value<T>(), true, false, false};
    case find_op::ge: return {v, highest_value<T>(), false, false, false};
    case find_op::in_range: return {v, p.hi, false, true, false};
  }
  return {v, v, false, false, false};
}

// --- the study strategies: element e (0 <= e < k) of thread t ------------------------------

/// seeds/001's "strided": each thread a contiguous run of k elements.
GSEARCH_HD constexpr int64_t strided_element(int64_t t, int64_t e, int64_t k) { return t * k + e; }
/// seeds/001's "coalesced" (and "unrolled"): thread t of `threads` reads t + e * threads, so the
/// threads of a warp read neighbouring elements at every step.
GSEARCH_HD constexpr int64_t coalesced_element(int64_t t, int64_t e, int64_t threads) {
  return t + e * threads;
}
/// The element of step e of thread t under `s` (one_per_thread: k = 1, threads = n).
GSEARCH_HD constexpr int64_t strategy_element(find_strategy s, int64_t t, int64_t e, int64_t k,
                                              int64_t threads) {
  return s == find_strategy::strided ? strided_element(t, e, k) : coalesced_element(t, e, threads);
}
/// Threads a study strategy launches for n elements at k per thread: ceil(n / k).
GSEARCH_HD constexpr int64_t strategy_threads(int64_t n, int64_t k) { return (n + k - 1) / k; }

// --- find_random -----------------------------------------------------------------------------

/// SplitMix64's output function: a bijective mix of 64 bits.
GSEARCH_HD constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// (a * b) >> 64 without a 128-bit type on the device.
GSEARCH_HD constexpr uint64_t mul_high(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return uint64_t((unsigned __int128)a * b >> 64);
#endif
}

/// A uniformly distributed integer in [0, n) drawn from `seed` (n >= 1): Lemire's
/// multiply-and-reject on the SplitMix64 stream seeded by `seed`. Deterministic, so the CPU and
/// the GPU pick the same match for the same seed.
GSEARCH_HD constexpr int64_t random_below(uint64_t seed, int64_t n) {
  const uint64_t range = uint64_t(n);
  const uint64_t threshold = (0 - range) % range;  // 2^64 mod n: the low values that bias
  uint64_t state = seed;
  for (;;) {
    state += 0x9e3779b97f4a7c15ull;
    const uint64_t x = mix64(state);
    const uint64_t low = x * range;
    if (low >= threshold) return int64_t(mul_high(x, range));
  }
}

// --- isin ------------------------------------------------------------------------------------

/// The value isin stores for x: -0.0 becomes 0.0 (they are equal, and must hash and sort alike).
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE T canonical(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x == T(0) ? T(0) : x;
  } else {
    return x;
  }
}

/// True when x is among the k sorted test elements read by `acc` (k >= 1), searched with
/// algorithm A on lane `lane`: the lower bound of x, then one equality test. Both in IEEE
/// comparisons (ieee_before): a NaN x is before no key, so its rank is 0 and the test fails; NaN
/// test elements sort last and equal nothing. So NaN is never a member, as in np.isin.
template <algorithm A, int N, int Copies = 1, class Accessor, class T, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void sorted_members(const Accessor& acc, Index k, const T (&x)[N],
                                                   int lane, bool (&member)[N],
                                                   Index replica_stride = 0) {
  ieee_before<true, T> preds[N];
  Index rank[N];
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) preds[i].q = x[i];
  search_ranks<A, N, Copies>(acc, k, preds, lane, rank, replica_stride);
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) member[i] = rank[i] < k && acc(rank[i]) == x[i];
}

/// The bits of a key, as the unsigned integer of its size (what the hash set compares and swaps).
template <class T>
using key_bits_t = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
template <class T>
GSEARCH_HD GSEARCH_FORCEINLINE key_bits_t<T> key_bits(T x) {
  key_bits_t<T> b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

/// An open-addressing hash set of keys with linear probing, `capacity` a power of two at least
/// twice the number of keys (so a probe sequence is short and always ends at an empty slot).
/// Empty slots hold all-ones bits (memset 0xFF fills a table): -1 for signed integers, the
/// maximum for unsigned ones, a NaN for floats. A NaN is never a member, so never stored; an
/// integer key with those bits is not stored either, its membership is the flag
/// `holds_empty_key`. Keys are stored canonical (-0.0 as 0.0) and compared with IEEE ==.
template <class T>
struct hash_set_view {
  T* slots;
  uint64_t mask;  ///< capacity - 1
  bool holds_empty_key;

  GSEARCH_HD static constexpr key_bits_t<T> empty_bits() { return ~key_bits_t<T>(0); }
  GSEARCH_HD static T empty_key() {
    const key_bits_t<T> b = empty_bits();
    T x;
    std::memcpy(&x, &b, sizeof x);
    return x;
  }
  GSEARCH_HD static GSEARCH_FORCEINLINE bool is_empty(T slot) { return key_bits(slot) == empty_bits(); }
  GSEARCH_HD static GSEARCH_FORCEINLINE uint64_t hash(T x) {
    return mix64(uint64_t(key_bits(canonical(x))));
  }

  /// 0 or 1 when x's membership needs no probe (a NaN; the empty bits), else -1.
  GSEARCH_HD GSEARCH_FORCEINLINE int answer_without_probe(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      return x != x ? 0 : -1;
    } else {
      return key_bits(x) == empty_bits() ? int(holds_empty_key) : -1;
    }
  }
  /// The slot x's probe sequence starts at.
  GSEARCH_HD GSEARCH_FORCEINLINE uint64_t home(T x) const { return hash(x) & mask; }
  /// Finishes the probe of x from slot i, whose content s has been read (slots read through
  /// `load`, so the GPU can choose its cache path and issue first reads of several keys at once).
  template <class Load>
  GSEARCH_HD GSEARCH_FORCEINLINE bool probe(T x, uint64_t i, T s, Load load) const {
    for (;;) {
      if (s == x) return true;  // IEEE ==: -0.0 finds 0.0
      if (is_empty(s)) return false;
      i = (i + 1) & mask;
      s = load(slots + i);
    }
  }
  /// Membership of x.
  template <class Load>
  GSEARCH_HD GSEARCH_FORCEINLINE bool contains(T x, Load load) const {
    const int a = answer_without_probe(x);
    if (a >= 0) return a == 1;
    const uint64_t i = home(x);
    return probe(x, i, load(slots + i), load);
  }
};

/// The slots a hash set for n keys uses: the power of two >= 2n (at least 16).
GSEARCH_HD constexpr int64_t hash_set_capacity(int64_t n) {
  int64_t c = 16;
  while (c < 2 * n) c *= 2;
  return c;
}

}  // namespace core
}  // namespace gsearch
