#pragma once
/// \file
/// As-of joins (pandas.merge_asof, polars' join_asof): for every left row, the one right row
/// whose key is the closest in a direction, optionally among the right rows of the same group.
///
///   asof_join(exec, left_on, right_on, right_index, options)
///   asof_join(exec, left_on, right_on, left_by, right_by, groups, right_index, options)
///
/// The result is a gather map: right_index[i] is the right row matched to left row i, or -1
/// (cuDF's shape), so the caller gathers whichever columns it wants. The rule of a match is
/// core/asof.hpp's (backward / forward / nearest, exact matches allowed or not, an inclusive
/// tolerance), pandas.merge_asof's to the tie: of equal right keys backward takes the last row,
/// forward the first; nearest takes the backward match when both are as close.
///
/// Groups (pandas' `by`): left_by[i] and right_by[j] are group codes in [0, groups), the same code
/// for the same group on both sides (Python factorizes any number of `by` columns into them); a
/// left row is matched only with right rows of its group, and a group on one side only matches
/// nothing.
///
/// Order: left_on and right_on must each be sorted ascending (key_traits.hpp's order, -0.0 ==
/// 0.0) and hold no NaN, as pandas requires of `on` (over the whole column, not per group); the
/// checks throw pandas' messages ("left keys must be sorted", "Merge keys contain null values on
/// right side"). options.check_sorted = false skips them for a caller who knows (unsorted keys
/// then give unspecified matches, never a read out of bounds). options.sort = true takes keys in
/// any order: each side is sorted stably (with its group codes) into temporary memory, joined,
/// and the result written for the left rows in their original order, naming right rows by their
/// original positions; equal to the join of the stably sorted inputs.
///
/// Types: int32_t, uint32_t, int64_t, uint64_t, float, double, both keys the same type; group
/// codes and the result int64. Sizes are int64.
///
/// Execution: gsearch::cpu takes host memory (all cores); gsearch::cuda(.on(stream)) device memory.
/// On CUDA the checks (sortedness, NaN, the group codes' range) wait for their answers, one
/// round trip each; the join itself is stream-ordered and does not synchronize. Temporary memory,
/// grouped form: the right rows in group order (m keys and m int64 positions) and groups + 1
/// int64 offsets; options.sort: both sides' sorted keys, codes and positions (n + m keys, 2(n +
/// m) int64); on CUDA also the radix sorts' (all stream-ordered, from gsearch's pool).
///
/// Complexity: the CPU sweeps as pandas does, the right rows taken in key order beside the left
/// ones, each group's latest right row kept by its code: O(n + T (m + groups)) for T threads (a
/// thread's chunk of left rows sweeps the right from its start; T is kept where that pays). CUDA
/// runs a thread a left row, a binary search within its group's right rows (O(n log m)), after a
/// stable radix sort of the right rows by group code (O(m)).
///
/// Errors: invalid_argument (sizes that differ, null pointers with a non-zero size, groups < 0,
/// a group code outside [0, groups), a negative or NaN tolerance, unsorted or NaN keys, an unknown
/// direction), cuda_error, out_of_memory. Nothing is written when a check fails.

#include <cstdint>
#include <optional>

#include "gsearch/core/asof.hpp"
#include "gsearch/core/error.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

/// Options of asof_join(), for keys of type T.
template <class T>
struct asof_options {
  asof_direction direction = asof_direction::backward;
  /// pandas' allow_exact_matches: false takes only right keys strictly before (backward) or
  /// after (forward) the left key.
  bool allow_exact_matches = true;
  /// The largest distance of a match, inclusive (>= 0); none: any distance.
  std::optional<T> tolerance;
  /// Check that both keys are sorted and hold no NaN (pandas' errors); false: the caller vouches.
  bool check_sorted = true;
  /// Keys in any order: both sides are sorted stably first (a copy; -0.0 and 0.0 one key), the
  /// result still in the left's original order and naming the right's original rows. NaN keys
  /// are refused all the same.
  bool sort = false;
};

#define GSEARCH_DECLARE_ASOF(EXEC, T)                                                                 \
  /** right_index[i] = the right row matched to left_on[i], or -1; right_index.size() ==          \
      left_on.size(). */                                                                             \
  void asof_join(const EXEC& exec, span<const T> left_on, span<const T> right_on, span<int64_t> right_index, \
                 const asof_options<T>& options = {});                                               \
  /** The same within groups: left_by / right_by are the rows' group codes in [0, groups). */       \
  void asof_join(const EXEC& exec, span<const T> left_on, span<const T> right_on, span<const int64_t> left_by, \
                 span<const int64_t> right_by, int64_t groups, span<int64_t> right_index,              \
                 const asof_options<T>& options = {});

GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_ASOF, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_ASOF, cuda_t)
#undef GSEARCH_DECLARE_ASOF

}  // namespace gsearch
