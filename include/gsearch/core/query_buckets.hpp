#pragma once
/// \file
/// The buckets of algorithm::merge's sort of the queries (issue 42), shared by both backends.
///
/// A sort that only has to bring together the queries that read the same few keys need not sort
/// all their bits: each query's radix bits (radix_bits.hpp) are taken relative to the keys' range
/// [lo, hi] (the first and the last key's bits) and shifted up until hi - lo's top bit is the
/// code's top bit. The code's top `bits` bits are then a bucket of keys whose width is the
/// range over 2^bits, and a radix sort on those bits alone (ceil(bits / 8) passes, whatever the
/// key's width: 2 where a whole sort of int64 took 8) puts the queries in bucket order. Each
/// query is then searched among its bucket's keys only, [start[b], start[b + 1]), a partition
/// point of the keys by bucket (bucket_start). The order within a bucket, and where queries
/// outside the keys' range land, change only which keys a tile of queries reads together, never
/// an answer: every query's code gives back its radix bits or says below / above the keys.
///
/// The range is the keys' less their outer 1/1,024 at each end (bucket_range_of): one outlier
/// key (a sentinel such as INT64_MAX) would otherwise stretch it so that all the other keys
/// share a few buckets. A query outside the range is searched among the outer keys on its side,
/// [0, start[0]) or [start[2^bits], k), its value read again (the code keeps only its side).
///
/// Codes (U = radix_bits_t<T>, W its bits, shift = the leading zeros of hi - lo, at most W - 1):
///   shift >= 1: in range (u - lo) << shift, even; below the keys 1; above them ~0 (both odd).
///   shift == 0 (hi - lo >= 2^(W-1): no bit to spare): u - lo, wrapping, one to one; in range
///              when at most hi - lo, else u = code + lo says below (u < lo) or above.

#include <cstdint>

#include "gsearch/core/config.hpp"
#include "gsearch/core/radix_bits.hpp"

namespace gsearch::core {

/// Where a query's code puts it: below the buckets' range, in it, or above it.
enum class bucket_place : int { below, inside, above };

template <class T>
struct query_buckets {
  using U = radix_bits_t<T>;
  static constexpr int width = int(8 * sizeof(U));

  U lo = 0, hi = 0;  ///< the radix bits of the range's first and last key (bucket_range_of)
  int shift = 0;     ///< in-range codes are (u - lo) << shift
  int bits = 1;      ///< the buckets are the codes' top `bits` bits (1 ... 32, at most width)

  /// The buckets of the range [first, last] (keys, sorted), 2^bits of them.
  GSEARCH_HD static query_buckets of(T first, T last, int bits) {
    query_buckets b;
    b.lo = radix_bits(first);
    b.hi = radix_bits(last);
    const int lz = leading_zeros(U(b.hi - b.lo));
    b.shift = lz < width - 1 ? lz : width - 1;  // (all keys equal: lz = W, one code, 0)
    b.bits = bits < 1 ? 1 : bits > 32 ? 32 : bits;
    return b;
  }

  GSEARCH_HD int64_t buckets() const { return int64_t(1) << bits; }

  /// The query's code (the sort's key).
  GSEARCH_HD U encode(T q) const {
    const U u = radix_bits(q);
    if (shift == 0) return U(u - lo);
    if (u < lo) return U(1);
    if (u > hi) return U(~U(0));
    return U(U(u - lo) << shift);
  }

  GSEARCH_HD bucket_place place(U code) const {
    if (shift == 0) {
      if (code <= U(hi - lo)) return bucket_place::inside;
      return U(code + lo) < lo ? bucket_place::below : bucket_place::above;
    }
    if ((code & 1) == 0) return bucket_place::inside;
    return code == U(1) ? bucket_place::below : bucket_place::above;
  }

  /// The radix bits of an inside code's query.
  GSEARCH_HD U radix(U code) const { return U(U(code >> shift) + lo); }

  /// The bucket of an inside code, in [0, 2^bits).
  GSEARCH_HD int64_t bucket(U code) const { return int64_t(code >> (width - bits)); }

  /// A key's bucket, -1 below the range and 2^bits above it: never decreasing in key order.
  GSEARCH_HD int64_t key_bucket(T key) const {
    const U u = radix_bits(key);
    return u < lo ? -1 : u > hi ? buckets() : bucket(encode(key));
  }
};

/// The outer keys left out of the buckets' range at each end: 1/2^10 of them (none below 2^10
/// keys, which the range then spans whole).
inline constexpr int bucket_trim_shift = 10;

/// The buckets of k sorted keys (acc(j) -> key j, k > 0): their range less the outer keys.
template <class T, class Acc>
GSEARCH_HD query_buckets<T> bucket_range_of(const Acc& keys, int64_t k, int bits) {
  const int64_t trim = k >> bucket_trim_shift;
  return query_buckets<T>::of(keys(trim), keys(k - 1 - trim), bits);
}

/// start[b]: the count of keys in buckets before b (the keys below the range counted in), for b
/// in [0, 2^bits]: start[0] the keys below the range, start[2^bits] those up to its end; a
/// partition point of the sorted keys (acc(j) -> key j), their key_bucket never decreasing.
template <class T, class Acc>
GSEARCH_HD int64_t bucket_start(const query_buckets<T>& buckets, const Acc& keys, int64_t k, int64_t b) {
  int64_t first = 0, count = k;
  while (count > 0) {
    const int64_t half = count / 2;
    if (buckets.key_bucket(keys(first + half)) < b) {
      first += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return first;
}

/// A query's binary search among keys [first, first + n), as steps that a caller may run for
/// several queries in lockstep (the GPU's tile interleaves a thread's 8): each step halves n
/// without a branch on the keys (the compare picks the half), a step with n <= 1 does nothing,
/// and bit_width(n) steps always suffice; then rank_finish.
template <class Index = int64_t>
struct rank_cursor {
  Index first, n;
};

/// Keys before a query of radix bits u: those < u (Strict: lower_bound) or <= u.
template <bool Strict, class U>
GSEARCH_HD GSEARCH_FORCEINLINE bool bits_before(U key_bits, U u) {
  return Strict ? key_bits < u : key_bits <= u;
}

template <bool Strict, class U, class Acc, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void rank_step(const Acc& key_bits, rank_cursor<Index>& c, U u) {
  if (c.n > 1) {
    const Index half = c.n / 2;
    if (bits_before<Strict>(U(key_bits(c.first + half)), u)) c.first += half;
    c.n -= half;
  }
}

/// The rank the steps reached: first, plus one where its last key is before the query.
template <bool Strict, class U, class Acc, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE Index rank_finish(const Acc& key_bits, const rank_cursor<Index>& c, U u) {
  return c.first + (c.n == 1 && bits_before<Strict>(U(key_bits(c.first)), u) ? 1 : 0);
}

/// The count of keys in [first, last) before a query of radix bits u (Strict: keys whose bits
/// are < u, lower_bound; else <= u), plus first: acc(j) -> key j's radix bits. The keys before
/// `first` are all before the query and those from `last` on all after it (its bucket's range).
template <bool Strict, class U, class Acc>
GSEARCH_HD int64_t rank_in_bucket(const Acc& key_bits, int64_t first, int64_t last, U u) {
  rank_cursor<int64_t> c{first, last - first};
  while (c.n > 1) rank_step<Strict>(key_bits, c, u);
  return rank_finish<Strict>(key_bits, c, u);
}

/// The rank of a query (the keys before it, as rank_in_bucket) from its code: in the range, its
/// bucket's start plus its rank there; outside it, its rank among the outer keys on its side,
/// the query's value read by query() (the code keeps only the side).
template <bool Strict, class T, class Acc, class Query>
GSEARCH_HD int64_t bucket_rank(const query_buckets<T>& buckets, const Acc& key_bits, int64_t k, const int64_t* start,
                               radix_bits_t<T> code, const Query& query) {
  const bucket_place p = buckets.place(code);
  if (p == bucket_place::inside) {
    const int64_t b = buckets.bucket(code);
    return rank_in_bucket<Strict>(key_bits, start[b], start[b + 1], buckets.radix(code));
  }
  // Beyond every key at once (two loads that every query outside reads: cached): the queries
  // of a call that all lie past the keys (a time series' newest values) cost what they did
  // before the range was trimmed.
  const radix_bits_t<T> u = radix_bits(T(query()));
  if (p == bucket_place::below)
    return u < radix_bits_t<T>(key_bits(0)) ? 0 : rank_in_bucket<Strict>(key_bits, int64_t(0), start[0], u);
  return u > radix_bits_t<T>(key_bits(k - 1)) ? k : rank_in_bucket<Strict>(key_bits, start[buckets.buckets()], k, u);
}

}  // namespace gsearch::core
