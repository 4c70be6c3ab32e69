#pragma once
/// \file
/// The arithmetic of the distributed operations (gsearch/dist.hpp), the same on every backend and
/// every transport: where a query goes, how a sorted run is cut for the ranks, how splitters are
/// chosen from samples. Host code (the plans are a few values per rank); the per-element work
/// (routing, packing, the local searches) runs on the backends.
///
/// A distributed sorted key set is range-partitioned: rank r holds keys[offset_r, offset_r + n_r)
/// of the global sorted order, so every key of rank r is <= every key of rank r + 1 (as
/// dist::sort leaves them). Ranks may be empty.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"

namespace gsearch::core::dist {

/// Exclusive prefix sums: offsets[r] = counts[0] + ... + counts[r - 1]; offsets.back() = total.
inline std::vector<int64_t> exclusive_offsets(const std::vector<int64_t>& counts) {
  std::vector<int64_t> offsets(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  return offsets;
}

/// Where the queries of a search go. A query q belongs to the rank whose range decides it:
/// lower_bound(q) = offset_r + lower_bound(keys of r, q) for r = the number of boundaries < q
/// (upper_bound: <= q), where boundary r - 1 is the first key of rank r. Every key of the ranks
/// before r is then below q (they are <= boundary r - 1 < q) and every key after r is >= q.
/// An empty rank takes the boundary of the next non-empty one, so no query lands on it (its
/// boundary equals the next, and none can be both above one and not above the other); the
/// empty ranks after the last non-empty one get no boundary at all (owner() never exceeds it).
template <class T>
struct owner_plan {
  std::vector<T> boundaries;     ///< boundaries[i]: the first key of rank i + 1 (after the fill)
  std::vector<int64_t> offsets;  ///< offsets[r]: the global index of rank r's first key

  /// The rank of query q for the side (pred goes as right: predecessor = upper_bound - 1).
  int owner(side s, T q) const {
    const auto less = [](T a, T b) { return key_less(a, b); };
    return visit_side(s, [&]<bool Strict>(int /*offset*/) {
      const auto it = Strict ? std::lower_bound(boundaries.begin(), boundaries.end(), q, less)
                             : std::upper_bound(boundaries.begin(), boundaries.end(), q, less);
      return int(it - boundaries.begin());
    });
  }
};

/// The plan from every rank's key count and first key (first[r] is ignored when counts[r] == 0).
template <class T>
owner_plan<T> make_owner_plan(const std::vector<int64_t>& counts, const std::vector<T>& first) {
  owner_plan<T> plan;
  plan.offsets = exclusive_offsets(counts);
  int last = -1;  // the last non-empty rank
  for (int r = 0; r < int(counts.size()); ++r)
    if (counts[r] > 0) last = r;
  if (last <= 0) return plan;  // one rank (or none) holds every key: no boundary
  plan.boundaries.resize(size_t(last));
  T next = first[size_t(last)];
  for (int r = last; r >= 1; --r) {
    if (counts[r] > 0) next = first[size_t(r)];
    plan.boundaries[size_t(r - 1)] = next;
  }
  return plan;
}

/// A sample of a rank's sorted run, tagged with where it stands in the global stable order:
/// (key, rank, position in the rank's sorted run). Tags are distinct and ordered like the
/// elements of a stable sort, so cutting at a tag splits even a run of equal keys between ranks.
template <class T>
struct sample {
  T key;
  int32_t rank;
  int64_t position;
  double weight;  ///< the elements this sample stands for (its rank's count / its sample count)
};

template <class T>
bool tag_less(const sample<T>& a, const sample<T>& b) {
  if (key_less(a.key, b.key)) return true;
  if (key_less(b.key, a.key)) return false;
  return a.rank != b.rank ? a.rank < b.rank : a.position < b.position;
}

/// The positions this rank samples of its sorted run of n elements: `want` of them, evenly
/// spaced (the middle of each stretch), all n when n <= want.
inline std::vector<int64_t> sample_positions(int64_t n, int64_t want) {
  std::vector<int64_t> pos;
  if (n <= 0 || want <= 0) return pos;
  const int64_t s = std::min(n, want);
  pos.reserve(size_t(s));
  for (int64_t i = 0; i < s; ++i) pos.push_back(int64_t((double(i) + 0.5) * double(n) / double(s)));
  return pos;
}

/// The samples a rank of n elements takes when the ranks hold `total` in all: a share of
/// per_rank * ranks proportional to n, so that every sample stands for about as many elements
/// and the weighted quantiles below balance the ranks whatever their sizes.
inline int64_t sample_count(int64_t n, int64_t total, int ranks, int64_t per_rank = 64) {
  if (n <= 0 || total <= 0) return 0;
  const double share = double(per_rank) * ranks * double(n) / double(total);
  return std::min<int64_t>(n, std::max<int64_t>(1, int64_t(share + 0.999999)));
}

/// The ranks - 1 splitters: the samples at the weighted quantiles j / ranks (j = 1 .. ranks - 1)
/// of all ranks' samples. `samples` is sorted here. With fewer samples than cuts, the missing
/// splitters repeat the last (the ranks after it receive nothing).
template <class T>
std::vector<sample<T>> choose_splitters(std::vector<sample<T>> samples, int ranks) {
  std::sort(samples.begin(), samples.end(), tag_less<T>);
  std::vector<sample<T>> splitters;
  if (samples.empty() || ranks <= 1) return splitters;
  double total = 0;
  for (const auto& s : samples) total += s.weight;
  double seen = 0;
  size_t i = 0;
  for (int j = 1; j < ranks; ++j) {
    const double target = total * j / ranks;
    while (i < samples.size() && seen + samples[i].weight <= target) seen += samples[i++].weight;
    splitters.push_back(samples[std::min(i, samples.size() - 1)]);
  }
  return splitters;
}

/// Where rank `me`'s sorted run is cut by splitter s: the number of its elements whose tag is
/// below s's, given [lo, hi) = the run's elements equal to s.key (lower and upper bound).
inline int64_t cut(int64_t lo, int64_t hi, int me, int splitter_rank, int64_t splitter_position) {
  if (me < splitter_rank) return hi;
  if (me > splitter_rank) return lo;
  return std::clamp(splitter_position, lo, hi);
}

/// Send counts from the cut points of a run of n elements: the part of rank d is
/// [cuts[d - 1], cuts[d]) with cuts[-1] = 0 and cuts[ranks - 1] = n.
inline std::vector<int64_t> counts_from_cuts(const std::vector<int64_t>& cuts, int64_t n) {
  std::vector<int64_t> counts(cuts.size() + 1);
  int64_t prev = 0;
  for (size_t d = 0; d < cuts.size(); ++d) {
    const int64_t c = std::clamp(cuts[d], prev, n);
    counts[d] = c - prev;
    prev = c;
  }
  counts.back() = n - prev;
  return counts;
}

}  // namespace gsearch::core::dist
