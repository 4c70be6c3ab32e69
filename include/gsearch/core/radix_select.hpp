#pragma once
/// \file
/// The radix select with a sampled window (issue 41): the per-rank steps that the CUDA select
/// (src/selection/cuda/radix_select.cu) runs on the device and a host driver runs in the tests.
///
/// A rank's answer lies in a range [lo, hi] of the keys' radix bits (radix_bits.hpp: equal keys
/// equal bits, the key order the bits' order). A pass over a source that holds every element of
/// the range counts the range's elements in radix_bins bins of equal width 2^shift (radix_bin),
/// and the source's elements below the range (only the first pass, over the whole data, needs
/// them); radix_pick then narrows the range to the bin that holds the rank. A range of one value
/// answers its rank.
///
/// The first range is the rank's bracket in a sorted sample (selection.hpp's bracket_of), not the
/// top bits: its bins are fine where the rank is, whatever the distribution (uniform floats put
/// an eighth of the data in one bin of their top 11 bits; an input whose top 16 bits are all
/// equal, in one bin of its top 16). The elements in any rank's range are copied out during a
/// pass, and the next pass reads that copy (a few per cent of the data after the first pass), so
/// the data is read once. Where the sample misses (the rank is below or above its bracket) the
/// range becomes everything below (above) the bracket and the next pass reads the data again: a
/// slower answer, never a wrong one.

#include <cstdint>
#include <limits>
#include <type_traits>

#include "gsearch/core/config.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/selection.hpp"

namespace gsearch::core {

/// Bins of a range in one pass (2^11: 8 KB of 32-bit counters a rank in shared memory; the
/// range narrows 2046-fold a pass, so 32-bit keys take at most 3 passes, 64-bit ones 6).
inline constexpr int radix_bin_bits = 11;
inline constexpr int radix_bins = 1 << radix_bin_bits;

/// The keys' radix bits in [lo, hi], binned from `base`: bins 1 .. radix_bins - 2 are 2^shift wide
/// from base on, bin 0 holds [lo, base) and the last bin whatever lies past the others, up to hi.
/// A range binned over all of itself (base = lo, its width in the middle bins) leaves the two edge
/// bins empty; a first range open on a side (a rank near an end, whose bracket reaches the
/// smallest or the largest bits) is binned over the sample's extent instead, so that its bins
/// are as fine as the data and not spread over bits no element has.
template <class U>
struct radix_range {
  U lo = 0, hi = 0, base = 0;
  int32_t shift = 0;
};

/// [lo, hi] binned over [from, to] (lo <= from <= to <= hi): the least shift that fits to - from
/// in the middle bins.
template <class U>
GSEARCH_HD radix_range<U> radix_range_of(U lo, U hi, U from, U to) {
  const U width = U(to - from);
  int shift = 0;
  while (U(width >> shift) > U(radix_bins - 3)) ++shift;
  return {lo, hi, from, shift};
}
/// [lo, hi] binned over all of itself.
template <class U>
GSEARCH_HD radix_range<U> radix_range_of(U lo, U hi) {
  return radix_range_of(lo, hi, lo, hi);
}

/// The bin of bits u in r, or -1 when u is outside it.
template <class U>
GSEARCH_HD GSEARCH_FORCEINLINE int radix_bin(const radix_range<U>& r, U u) {
  if (U(u - r.lo) > U(r.hi - r.lo)) return -1;
  if (u < r.base) return 0;
  const U q = U(U(u - r.base) >> r.shift);
  return q < U(radix_bins - 2) ? int(q) + 1 : radix_bins - 1;
}

/// A range as a pass tests each element against it: in ordered_bits (radix_bits.hpp), which are
/// one to one and cost a float 3 instructions where radix_bits, merging every NaN and -0.0 into
/// one value, cost 7 (the first pass's membership took 17 an element in all, in the SASS of 9513bff). x is
/// below the range when ordered_bits(x) < lo and in it when lo <= ordered_bits(x) <= hi, exactly
/// as its radix bits are below or in [range.lo, range.hi] (radix_ordered_range).
template <class U>
struct radix_ordered {
  U lo = 0, hi = 0;
  GSEARCH_HD GSEARCH_FORCEINLINE bool below(U o) const { return o < lo; }
  GSEARCH_HD GSEARCH_FORCEINLINE bool inside(U o) const { return o >= lo && o <= hi; }
};

/// The ordered bits of the keys whose radix bits lie in [lo, hi]: ordered_bits puts -0.0 just
/// below 0.0 and every NaN pattern above +inf (negative ones too), where radix_bits counts -0.0 as
/// 0.0 and the NaNs as one value after +inf; so a bound on 0.0 takes -0.0 with it, a bound between
/// +inf and the NaN takes every NaN or none, and a bound on a bit pattern no key has (-0.0's, a
/// NaN's other than the quiet one) moves to the next key inward. Integers: the same bits. Ranges
/// end at keys' bits or at the ends (every range of the select does: radix_narrow closes a bin to
/// the data's extent, radix_miss steps past a key), so lo <= radix_bits(NaN) and hi >= -inf's.
template <class T>
GSEARCH_HD radix_ordered<radix_bits_t<T>> radix_ordered_range(radix_bits_t<T> lo, radix_bits_t<T> hi) {
  using U = radix_bits_t<T>;
  if constexpr (!std::is_floating_point_v<T>) {
    return {lo, hi};
  } else {
    const T inf = std::numeric_limits<T>::infinity();
    const U zero = radix_bits(T(0)), nan = radix_bits(std::numeric_limits<T>::quiet_NaN());
    const U top_finite = radix_bits(inf), bottom = radix_bits(-inf);
    const U below_zero = U(ordered_bits(T(0)) - 1);  // -0.0's ordered bits
    radix_ordered<U> r;
    if (lo <= bottom) r.lo = 0;
    else if (lo > top_finite) r.lo = U(ordered_bits(inf) + 1);  // the NaNs only
    else if (lo == zero || lo == U(zero - 1)) r.lo = below_zero;  // -0.0 with 0.0
    else r.lo = ordered_bits(from_radix_bits<T>(lo));
    if (hi >= nan) r.hi = U(~U(0));  // every NaN pattern
    else if (hi >= top_finite) r.hi = ordered_bits(inf);
    else if (hi == U(zero - 1)) r.hi = U(below_zero - 1);  // below 0.0: not -0.0
    else r.hi = ordered_bits(from_radix_bits<T>(hi));
    return r;
  }
}

/// A range of floating-point keys as a pass tests each key in its own order: below when x < lo,
/// inside when !(x < lo) and (open_top or x <= hi), exactly as the radix bits are below or in
/// [lo, hi] (radix_native_range) wherever `exact`: every range of the select but those whose
/// lower end lies among the NaNs, which the ordered bits test. One compare a bound, where the
/// ordered bits and two unsigned compares took 9.5 instructions a float with its masks (the SASS
/// of aed3f57's first pass, 152 of its 282 a tile of 16 keys).
template <class T>
struct radix_native {
  T lo{}, hi{};
  bool open_top = false;  ///< the range reaches the NaN: no upper bound (NaN passes !(x < lo))
  bool exact = false;
  GSEARCH_HD GSEARCH_FORCEINLINE bool below(T x) const { return x < lo; }
  GSEARCH_HD GSEARCH_FORCEINLINE bool inside(T x) const { return !(x < lo) && (open_top || x <= hi); }
};

/// [lo, hi] of radix bits as radix_native: -0.0 compares equal to 0.0 as its radix bits are
/// 0.0's, so an upper bound on the slot no key has between the negatives and 0.0 (-0.0's own
/// pattern, whose value compares as 0.0) becomes -denorm_min; a bound past +inf takes +inf (every
/// non-NaN) and one at the NaN no bound at all; below -inf's bits nothing lies, so -inf. Not
/// exact when lo lies past +inf (the range holds NaNs alone: "not below" would have to mean "not
/// a NaN") or hi below -inf (no key: outside the select's ranges).
template <class T>
GSEARCH_HD radix_native<T> radix_native_range(radix_bits_t<T> lo, radix_bits_t<T> hi) {
  static_assert(std::is_floating_point_v<T>, "integers test their ordered bits: one instruction");
  using U = radix_bits_t<T>;
  const T inf = std::numeric_limits<T>::infinity();
  const U zero = radix_bits(T(0)), nan = radix_bits(std::numeric_limits<T>::quiet_NaN());
  const U top = radix_bits(inf), bottom = radix_bits(-inf);
  radix_native<T> r;
  r.exact = lo <= top && hi >= bottom;
  r.lo = lo <= bottom ? -inf : from_radix_bits<T>(lo);
  r.open_top = hi >= nan;
  r.hi = hi >= top ? inf : hi == U(zero - 1) ? from_radix_bits<T>(U(zero - 2)) : from_radix_bits<T>(hi);
  return r;
}

/// One rank between passes: its range and its rank among the data's elements in the range.
template <class U>
struct radix_slot {
  radix_range<U> range;
  int64_t rank = 0;
  int32_t done = 0;  ///< the range is one value: range.lo is the answer
};

/// The first range of rank r of n: its bracket in the sorted sample sorted[0, s) of radix bits
/// (bracket_of's, `margin` standard deviations a side), reaching the smallest (largest) bits on an
/// open side, binned over the sample's part of it.
template <class U>
GSEARCH_HD radix_slot<U> radix_first_slot(const U* sorted, int64_t s, int64_t r, int64_t n, double margin = 4.0) {
  const sample_bracket b = bracket_of(r, n, s, margin);
  const U from = sorted[b.lo < 0 ? 0 : b.lo], to = sorted[b.hi >= s ? s - 1 : b.hi];
  radix_slot<U> slot;
  slot.range = radix_range_of(b.lo < 0 ? U(0) : from, b.hi >= s ? U(~U(0)) : to, from, to);
  slot.rank = r;
  slot.done = 0;
  return slot;
}

/// The rank is in bin b, after `before` of the range's elements (those of the bins before b and,
/// in the first pass, those below the range): the range becomes the bin, less what lies outside
/// [least, most], the least and the largest bits the pass saw in the range (the first and the last
/// bin end at the data: a constant input is answered in one pass).
template <class U>
GSEARCH_HD void radix_narrow(radix_slot<U>& s, int b, int64_t before, U least = U(0), U most = U(~U(0))) {
  const radix_range<U>& r = s.range;
  U lo, hi;
  if (b == 0) {
    lo = r.lo;
    hi = U(r.base - 1);  // bin 0 has an element, so base > lo
  } else {
    lo = U(r.base + (U(b - 1) << r.shift));  // at most an element of the bin: no overflow
    const U last = U((U(1) << r.shift) - 1);  // a middle bin's width less one
    hi = b == radix_bins - 1 || U(r.hi - lo) < last ? r.hi : U(lo + last);
  }
  lo = lo < least ? least : lo;  // the bin holds the rank, so an element: least <= hi, most >= lo
  hi = hi > most ? most : hi;
  s.range = radix_range_of(lo, hi);
  s.rank -= before;
  s.done = lo == hi;
}

/// The sample missed: the rank is among the `below` elements under the range, or past the
/// range's `inside` elements (then after `below + inside` of them). The range becomes everything
/// on that side; the next pass must read the whole data.
template <class U>
GSEARCH_HD void radix_miss(radix_slot<U>& s, int64_t below, int64_t inside) {
  if (s.rank < below) {
    s.range = radix_range_of(U(0), U(s.range.lo - 1));  // below > 0, so lo > 0
  } else {
    s.range = radix_range_of(U(s.range.hi + 1), U(~U(0)));  // elements above, so hi < max
    s.rank -= below + inside;
  }
  s.done = s.range.lo == s.range.hi;
}

/// A pass's counts for one slot, resolved on one thread: bins[0, radix_bins), `below` the
/// source's elements under the range, [least, most] the extent of its elements in the range. True
/// when the rank was inside the range (the next range is inside this one), false when the sample
/// missed.
template <class U, class Count>
GSEARCH_HD bool radix_pick(radix_slot<U>& s, const Count* bins, int64_t below, U least = U(0), U most = U(~U(0))) {
  if (s.done) return true;
  int64_t before = below;
  if (s.rank >= below) {
    for (int b = 0; b < radix_bins; ++b) {
      if (s.rank < before + int64_t(bins[b])) {
        radix_narrow(s, b, before, least, most);
        return true;
      }
      before += int64_t(bins[b]);
    }
  }
  radix_miss(s, below, before - below);
  return false;
}

/// The passes that answer any rank of keys of U: one per 11 bits, and one for a miss.
template <class U>
constexpr int radix_max_passes() {
  return (int(8 * sizeof(U)) + radix_bin_bits - 1) / radix_bin_bits + 1;
}

}  // namespace gsearch::core
