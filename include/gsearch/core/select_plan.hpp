#pragma once
/// \file
/// One level of the sampled-bracket select (core/selection.hpp) for a few ranks, as a fixed-size
/// state that the host or one GPU thread can advance: plan_level chooses the splitters (sample
/// indices) and the buckets to copy out, resolve_level reads a pass's bucket counts and places the
/// ranks (answered by a splitter, or among the copied candidates, whose level comes next). The
/// CUDA select runs a whole chain of levels from it without returning to the host in between
/// (src/selection/cuda/select.cu, "planned levels"); anything the state cannot hold (more splitters than
/// the bucket pass keeps in registers, ranks the sample missed, brackets too dense) sets
/// `status = plan_status::host`, and the caller falls back to the host-driven levels, which
/// follow the same rules with vectors.

#include <cmath>
#include <cstdint>

#include "gsearch/core/config.hpp"
#include "gsearch/core/selection.hpp"

namespace gsearch::core {

/// The most ranks a planned select carries, and the most splitters a level may use (the
/// register-counting bucket pass's limit: src/selection/tuning.hpp's select_register_splitters).
inline constexpr int plan_max_ranks = 4;
inline constexpr int plan_max_splitters = 4;

enum class plan_status : int32_t {
  running = 0,  ///< the level described is to be run
  done = 1,     ///< every rank is answered (value[])
  host = 2,     ///< the plan cannot go on: the caller selects on the host-driven path
};

/// A level: its elements (the data, then each level's candidates), the open ranks among them,
/// and what its pass does.
template <class T>
struct select_level {
  int64_t n = 0;                                    ///< elements at this level
  int64_t rank[plan_max_ranks] = {};                ///< open ranks in [0, n), ascending, distinct
  int32_t slot[plan_max_ranks] = {};                ///< the answer each open rank fills
  int32_t r = 0;                                    ///< open ranks
  int32_t status = int32_t(plan_status::running);
  int32_t final_level = 0;                          ///< n fits the sample: select the ranks directly
  int32_t s = 0;                                    ///< elements the sample select reads (n when final)
  int32_t m = 0;                                    ///< splitters (the ranks themselves when final)
  int32_t index[2 * plan_max_ranks] = {};           ///< their ranks in the sorted sample, ascending
  uint8_t copy[2 * plan_max_splitters + 1] = {};    ///< buckets whose members are copied out
  double expected = 0;                              ///< candidates expected from the copied buckets
  T value[plan_max_ranks] = {};                     ///< the answers, by slot
  /// Set by the CUDA chain after the first level, for a caller that reads that level's
  /// candidates (topk's gather): how many there were (-1: not yet), and whether every rank went
  /// among them (none was answered by a splitter: the elements equal to it are then among them).
  int64_t first_count = -1;
  int32_t first_even = 0;
};

/// Starts a plan for the ranks (ascending, distinct, each in [0, n)) of n elements.
template <class T>
GSEARCH_HD void start_plan(select_level<T>& L, int64_t n, const int64_t* ranks, int r) {
  L.n = n;
  L.r = r;
  L.status = int32_t(r <= plan_max_ranks ? plan_status::running : plan_status::host);
  for (int i = 0; i < r && i < plan_max_ranks; ++i) {
    L.rank[i] = ranks[i];
    L.slot[i] = i;
  }
}

/// Plans the level's pass with a sample of `sample` elements (select_sample_size): the
/// brackets of the open ranks (bracket_of), their endpoints as the splitters (deduplicated), the
/// even buckets inside a bracket copied out; or, when n <= sample, the ranks selected directly.
/// `dense_fraction`: above it (the copied buckets expected to hold more of the level) the plan
/// gives up (status host; the host path sorts).
template <class T>
GSEARCH_HD void plan_level(select_level<T>& L, int64_t sample, double dense_fraction) {
  if (L.status != int32_t(plan_status::running)) return;
  for (int b = 0; b < 2 * plan_max_splitters + 1; ++b) L.copy[b] = 0;
  if (L.n <= sample) {
    L.final_level = 1;
    L.s = int32_t(L.n);
    L.m = L.r;
    for (int i = 0; i < L.r; ++i) L.index[i] = int32_t(L.rank[i]);
    L.expected = 0;
    return;
  }
  L.final_level = 0;
  L.s = int32_t(sample);
  // The brackets' endpoints, sorted and deduplicated (at most 2r, insertion into a short array).
  int m = 0;
  sample_bracket br[plan_max_ranks];
  for (int i = 0; i < L.r; ++i) {
    br[i] = bracket_of(L.rank[i], L.n, sample);
    const int64_t ends[2] = {br[i].lo, br[i].hi};
    for (const int64_t e : ends) {
      if (e < 0 || e >= sample) continue;  // open on that side
      int at = 0;
      while (at < m && L.index[at] < e) ++at;
      if (at < m && L.index[at] == e) continue;
      for (int j = m; j > at; --j) L.index[j] = L.index[j - 1];
      L.index[at] = int32_t(e);
      ++m;
    }
  }
  if (m > plan_max_splitters) {
    L.status = int32_t(plan_status::host);
    return;
  }
  L.m = m;
  // Gap g (bucket 2g, between splitters g - 1 and g) is copied when some bracket spans it.
  const auto position = [&](int64_t e) {
    int p = 0;
    while (p < m && L.index[p] < e) ++p;
    return p;
  };
  double expected = 0;
  for (int g = 0; g <= m; ++g) {
    bool open = false;
    for (int i = 0; i < L.r && !open; ++i) {
      const int first = br[i].lo < 0 ? 0 : position(br[i].lo) + 1;
      const int last = br[i].hi >= sample ? m : position(br[i].hi);
      open = first <= g && g <= last;
    }
    if (!open) continue;
    L.copy[2 * g] = 1;
    const int64_t below = g == 0 ? -1 : L.index[g - 1], above = g == m ? sample : L.index[g];
    expected += double(above - below) * double(L.n) / double(sample);
  }
  L.expected = expected;
  if (expected > dense_fraction * double(L.n)) L.status = int32_t(plan_status::host);
}

/// After the level's pass (or its direct selection, when final): hist[0, 2m] the bucket counts
/// (core::select_bucket's buckets), `candidates` how many elements the copied buckets held (all
/// of them were written when candidates <= capacity), splitters[0, m) the splitters' values (when
/// final: the ranks' values). Places each open rank: in an odd bucket it is that splitter; in a
/// copied even bucket it becomes a rank among the candidates, the next level's elements; anywhere
/// else (the sample missed it, or the candidates overflowed) the plan stops (status host).
template <class T, class Count>
GSEARCH_HD void resolve_level(select_level<T>& L, const Count* hist, Count candidates, int64_t capacity,
                              const T* splitters) {
  if (L.status != int32_t(plan_status::running)) return;
  if (L.final_level) {
    for (int i = 0; i < L.r; ++i) L.value[L.slot[i]] = splitters[i];
    L.r = 0;
    L.status = int32_t(plan_status::done);
    return;
  }
  const bool overflow = int64_t(candidates) > capacity;
  int open = 0;
  int64_t start = 0, copied_before = 0;  // elements in buckets before `bucket`; those copied out
  int bucket = 0;
  for (int i = 0; i < L.r; ++i) {
    while (start + int64_t(hist[bucket]) <= L.rank[i]) {
      start += int64_t(hist[bucket]);
      if (L.copy[bucket]) copied_before += int64_t(hist[bucket]);
      ++bucket;
    }
    if (bucket % 2 == 1) {
      L.value[L.slot[i]] = splitters[bucket / 2];
    } else if (L.copy[bucket] && !overflow) {
      L.rank[open] = copied_before + (L.rank[i] - start);
      L.slot[open] = L.slot[i];
      ++open;
    } else {
      L.status = int32_t(plan_status::host);
      return;
    }
  }
  L.r = open;
  L.n = int64_t(candidates);
  if (open == 0) L.status = int32_t(plan_status::done);
}

}  // namespace gsearch::core
