#pragma once
/// \file
/// P-ary search (Kaldewey, Hagen, Di Blas and Sedlar, "Parallel search on video cards",
/// seeds/003): P lanes cooperate on one query. Each step every lane reads one key, at P points
/// that split the range still open into P + 1 parts; a vote counts the lanes whose key is before
/// the query, and that count names the part to keep. So a search takes about log_{P+1}(k) steps
/// of one key read per lane, where a one-thread binary search takes log2(k) dependent reads: a
/// warp (P = 32) needs 6 steps for 2^30 keys, a block of 1024 lanes 3. That is the response time
/// of one query, the point of the method; its throughput for many queries is lower than one
/// query per thread.
///
/// The arithmetic is split so that both backends run the same code: `pary_probe` is a lane's
/// read position, `pary_narrow` the range every lane computes alike from the vote. On the GPU
/// the vote is __popc(__ballot_sync(...)) (a warp) or __syncthreads_count (a block); on the CPU
/// a loop over the lanes (`pary_rank`), which is also what the tests run.
///
/// The range is a rank interval [a, b]: the rank of q (the number of keys before it) is known
/// to lie in it; keys a .. b - 1 are the ones not yet read past. It starts as [0, k] and ends
/// when a == b. Lanes read keys in [a, b - 1] only, so [0, k) is all a search ever reads.

#include <cstdint>

#include "gsearch/core/config.hpp"

namespace gsearch::core {

/// The key lane `lane` of `lanes` reads in the step over [a, b] (a < b): the (lane + 1)-th of
/// `lanes` points splitting the n = b - a unread keys into lanes + 1 parts, a + floor((lane + 1)
/// n / (lanes + 1)), in [a, b - 1] and non-decreasing in the lane (lanes share a key once n <
/// lanes + 1). 128-bit-free: n (lanes + 1) fits int64 for n < 2^52 and lanes <= 2048.
GSEARCH_HD GSEARCH_FORCEINLINE constexpr int64_t pary_probe(int64_t a, int64_t b, int lane, int lanes) {
  return a + (int64_t(lane) + 1) * (b - a) / (int64_t(lanes) + 1);
}

/// The range after a step over [a, b] in which `count` lanes read a key before q. The before-set
/// of a sorted list is a prefix, and the probes are non-decreasing, so the lanes that answered
/// "before" are lanes 0 .. count - 1: the rank is past lane count - 1's key and at most lane
/// count's position (b for count == lanes).
GSEARCH_HD GSEARCH_FORCEINLINE constexpr void pary_narrow(int64_t& a, int64_t& b, int count, int lanes) {
  const int64_t lo = count == 0 ? a : pary_probe(a, b, count - 1, lanes) + 1;
  const int64_t hi = count == lanes ? b : pary_probe(a, b, count, lanes);
  a = lo;
  b = hi;
}

/// Steps a P-ary search of k keys takes at most: each step leaves at most floor(n / (lanes + 1))
/// unread keys of n (the widest part), so this many steps bring any k to 0.
GSEARCH_HD constexpr int pary_max_steps(int64_t k, int lanes) {
  int steps = 0;
  for (int64_t n = k; n > 0; n /= (int64_t(lanes) + 1)) ++steps;
  return steps;
}

/// The rank of q among keys(0 .. k - 1) by a P-ary search of `lanes` simulated lanes: the CPU's
/// form (and the reference of the GPU's), the vote a loop over the lanes. `before(key)` is the
/// monotone predicate of key_traits.hpp. `steps`, if not null, receives the number of steps.
template <class Accessor, class Pred>
GSEARCH_HD int64_t pary_rank(const Accessor& keys, int64_t k, Pred before, int lanes, int* steps = nullptr) {
  int64_t a = 0, b = k;
  int s = 0;
  for (; a < b; ++s) {
    int count = 0;
    for (int lane = 0; lane < lanes; ++lane) count += int(before(keys(pary_probe(a, b, lane, lanes))));
    pary_narrow(a, b, count, lanes);
  }
  if (steps) *steps = s;
  return a;
}

}  // namespace gsearch::core
