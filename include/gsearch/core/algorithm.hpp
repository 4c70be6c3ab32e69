#pragma once
/// \file
/// The names of the search algorithms and sides, shared by the API, the backends, the model and
/// the CLI.

#include <optional>
#include <string_view>

namespace gsearch {

/// Which side of equal keys a search lands on: numpy's `side`, plus the predecessor.
enum class side : int {
  left,   ///< lower_bound: the first i with keys[i] >= q (numpy side='left')
  right,  ///< upper_bound: the first i with keys[i] > q (numpy side='right')
  pred,   ///< predecessor: the largest i with keys[i] <= q, or -1 (upper_bound - 1)
};

inline constexpr side all_sides[] = {side::left, side::right, side::pred};

/// The side's name in the bindings' tables ("left", "right", "pred").
constexpr std::string_view to_string(side s) {
  return s == side::left ? "left" : s == side::right ? "right" : "pred";
}

/// Calls f.template operator()<Strict>(offset): the one place a side becomes what the searches
/// compute. Strict = true counts the keys < q (lower_bound), false the keys <= q; `offset` is
/// added to that count (-1 for the predecessor, else 0).
template <class F>
constexpr decltype(auto) visit_side(side s, F&& f) {
  if (s == side::left) return f.template operator()<true>(0);
  return f.template operator()<false>(s == side::pred ? -1 : 0);
}

/// Calls f.template operator()<Strict, Pred>(): visit_side for code that takes the predecessor's
/// -1 at compile time too (the search of sorted queries, whose kernels subtract it as they write).
/// Strict as in visit_side; Pred is true for side::pred alone, whose answer is the count of keys
/// <= q less 1. Three forms where visit_side has two: use it only where Pred is a template
/// parameter already.
template <class F>
constexpr decltype(auto) visit_side_exact(side s, F&& f) {
  if (s == side::left) return f.template operator()<true, false>();
  if (s == side::right) return f.template operator()<false, false>();
  return f.template operator()<false, true>();
}

/// Which search runs. `auto_` lets the backend choose from its tuning table.
enum class algorithm : int {
  auto_,   ///< the backend picks (by key count, key size and device)
  pbs,     ///< Parallel Binary Search: the paper's Algorithm 1, one query per lane
  pbs_cf,  ///< PBS-CF: bank-exclusive stage 1, linear (conflict-free) stage 2
  pbs_cl,  ///< PBS-CL: bank-exclusive stage 1, binary stage 2 that keeps the lane offsets
  binary,  ///< branch-free binary search over the unpadded keys (global memory on the GPU)
  index,   ///< a static index (static_index.hpp's S+ tree) built for the call, then searched:
           ///< O(keys) to build, then one node of 64 bytes (CPU) / 16 bytes (GPU) per level
  partitioned,  ///< queries grouped by bucket of keys (core/partition.hpp), each bucket's keys
                ///< read once for all its queries (shared memory on the GPU), results scattered back
  pary,  ///< P-ary search (core/pary.hpp): a warp of 32 lanes per query on the GPU, each step
         ///< cutting the range into 33 parts; for one query or few: response time, not throughput
  merge,   ///< the queries put in key order by bucket (core/query_buckets.hpp: a radix sort on
           ///< 8 or 16 bits on the GPU, a counting sort on the CPU), each searched among its
           ///< bucket's keys (every key read about once, whatever K), the answers put back at
           ///< the queries' positions: cost ~ one or two radix passes over the queries
};

/// Every algorithm, auto_ first and the last one added last: the one list the CLI, the binding's
/// range check and the tests read.
inline constexpr algorithm all_algorithms[] = {algorithm::auto_,  algorithm::pbs,   algorithm::pbs_cf,
                                               algorithm::pbs_cl, algorithm::binary, algorithm::index,
                                               algorithm::partitioned, algorithm::pary, algorithm::merge};

/// What a row of search_rows runs for `a`: the per-lane algorithms as they are, and binary for
/// the others (an index, a partition or a sort per row would not pay, and P-ary is for single
/// queries), which the backends and the CLI's summary follow alike.
constexpr algorithm rows_algorithm(algorithm a) {
  const bool whole_call = a == algorithm::index || a == algorithm::partitioned || a == algorithm::pary ||
                          a == algorithm::merge;
  return whole_call ? algorithm::binary : a;
}

/// The name used by the CLI, the JSON output and the docs ("auto", "pbs", "pbs-cf", ...).
constexpr std::string_view to_string(algorithm a) {
  switch (a) {
    case algorithm::auto_: return "auto";
    case algorithm::pbs: return "pbs";
    case algorithm::pbs_cf: return "pbs-cf";
    case algorithm::pbs_cl: return "pbs-cl";
    case algorithm::binary: return "binary";
    case algorithm::index: return "index";
    case algorithm::partitioned: return "partitioned";
    case algorithm::pary: return "pary";
    case algorithm::merge: return "merge";
  }
  return "?";
}

/// Calls f.template operator()<A>() with A the compile-time form of `a`: how the backends turn
/// the runtime choice into a kernel or loop instantiated per algorithm. `auto_` must have been
/// resolved by the caller; it is treated as `binary`, the choice that is right for any K.
/// `index`, `partitioned`, `pary` and `merge` are not per-lane algorithms: the backends run them before they get here.
template <class F>
constexpr decltype(auto) visit_algorithm(algorithm a, F&& f) {
  switch (a) {
    case algorithm::pbs: return f.template operator()<algorithm::pbs>();
    case algorithm::pbs_cf: return f.template operator()<algorithm::pbs_cf>();
    case algorithm::pbs_cl: return f.template operator()<algorithm::pbs_cl>();
    case algorithm::binary:
    case algorithm::index:
    case algorithm::partitioned:
    case algorithm::pary:
    case algorithm::merge:
    case algorithm::auto_: break;
  }
  return f.template operator()<algorithm::binary>();
}

/// Inverse of to_string; nullopt for an unknown name.
constexpr std::optional<algorithm> algorithm_from_string(std::string_view s) {
  for (algorithm a : all_algorithms) {
    if (to_string(a) == s) return a;
  }
  return std::nullopt;
}

}  // namespace gsearch
