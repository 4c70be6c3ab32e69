#pragma once
/// \file
/// The merge-like operations (seeds/002, Baxter and Merrill): merge, merge sort, multiset set
/// operations and sort-merge joins. Each partitions its output exactly with Merge Path (Balanced
/// Path for the set operations) from core/merge_path.hpp and runs a short serial loop per part:
/// the GPU per tile in shared memory, the CPU per chunk on all cores, at the same split points.
/// (The fourth member of the family, the search of sorted queries, is search() with
/// search_options::queries_sorted.)
///
///   merge                    the stable merge of sorted a and b (ties: a's elements first)
///   merge_sort               a stable sort (ascending)
///   sort                     the same by the fastest stable sort for the key type (radix sort
///                            of integer keys on CUDA)
///   set_operation            a multiset intersection / union / difference / symmetric
///                            difference of sorted a and b (std::set_* semantics)
///   join                     inner / left / right / full / semi / anti join of sorted keys, as
///                            int64 gather maps (core/join.hpp documents the output order)
///
/// Order: the library's total order (core/key_traits.hpp): NaN after +inf, -0.0 equal to 0.0,
/// all NaNs equal. So -0.0 and 0.0 are the same set element and a join key matches both.
///
/// Types: keys int32_t, uint32_t, int64_t, uint64_t, float, double; values (the key-value
/// forms) int64_t, which carries any 8-byte payload bit for bit, or an index to gather by.
/// Sizes and indices are int64: outputs may exceed 2^31 elements.
///
/// Preconditions: inputs named sorted must be sorted in that order; merge_options::check_sorted
/// (on by default) checks them first and throws invalid_argument, writing nothing, if not. With
/// the check off, unsorted inputs give unspecified results (never out-of-bounds accesses).
/// Outputs must not overlap the inputs, except merge_sort's and sort's, which may be their input
/// exactly.
///
/// Execution: gsearch::cpu takes host memory (all cores); gsearch::cuda(.on(stream)) takes
/// device memory. merge, merge_sort and sort are stream-ordered (they return once the work is
/// enqueued) unless check_sorted waits for its check; the functions that return a size
/// (set_operation, join and their *_size) wait for it, and the allocate forms call allocate on
/// the calling thread once the size is known. Temporary device memory is allocated
/// stream-ordered from gsearch's own pool (cuda/stream_buffer.cuh): merge and sorted search 8
/// bytes per tile of 4,864 outputs (3,840 for 8-byte keys); merge sort that and one copy of its
/// keys and values; the radix sort (sort of integer keys) one copy of its keys and values and
/// CUB's histograms; set operations 32 bytes per tile; joins 24 bytes per row of each side (left
/// only for inner, left, semi and anti joins).
///
/// Complexity: merge, set operations O(na + nb); merge_sort O(n log n); sort of integer keys on
/// CUDA O(n x key bits / 8); join O(nl + nr + output).
///
/// Errors: invalid_argument (unsorted inputs when checked, sizes that differ, null data with a
/// non-zero size, an output too small, overlapping outputs), cuda_error, out_of_memory.

#include <cstdint>
#include <functional>

#include "gsearch/core/error.hpp"
#include "gsearch/core/join.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/set_ops.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

/// Options of the merge-like operations.
struct merge_options {
  /// Check that the inputs that must be sorted are (O(n); on CUDA it waits for the check).
  bool check_sorted = true;
};

#define GSEARCH_DECLARE_MERGE(EXEC, T)                                                             \
  /** out = the stable merge of sorted a and b; out.size() == a.size() + b.size(). */             \
  void merge(const EXEC& exec, span<const T> a, span<const T> b, span<T> out,                     \
             const merge_options& options = {});                                                   \
  /** The same carrying a value per key: out_values[k] is the value of the key out[k] came from. */ \
  void merge(const EXEC& exec, span<const T> a, span<const int64_t> a_values, span<const T> b,    \
             span<const int64_t> b_values, span<T> out, span<int64_t> out_values,                  \
             const merge_options& options = {});                                                   \
  /** out = keys sorted ascending, stable; out may be keys itself (in place). */                   \
  void merge_sort(const EXEC& exec, span<const T> keys, span<T> out);                              \
  /** The same carrying a value per key (stable: equal keys keep their values' order). */          \
  void merge_sort(const EXEC& exec, span<const T> keys, span<const int64_t> values,                \
                  span<T> out_keys, span<int64_t> out_values);                                     \
  /** merge_sort's contract (stable, ascending, in place or apart) by the fastest stable sort for \
      T: the radix sort for integer keys (on the CPU from 2^12 keys), the merge sort for         \
      floating-point keys. */                                                                      \
  void sort(const EXEC& exec, span<const T> keys, span<T> out);                                    \
  /** The same carrying a value per key (stable: equal keys keep their values' order). */          \
  void sort(const EXEC& exec, span<const T> keys, span<const int64_t> values, span<T> out_keys,    \
            span<int64_t> out_values);                                                             \
  /** The number of elements set_operation(op, a, b) writes. */                                   \
  int64_t set_operation_size(const EXEC& exec, set_op op, span<const T> a, span<const T> b,       \
                             const merge_options& options = {});                                   \
  /** Writes op(a, b) to out[0, size) and returns size; throws invalid_argument, writing nothing, \
      when out is smaller than the result. With out.size() >= core::set_op_bound(op, na, nb) it   \
      is one pass (and stream-ordered on CUDA), else a counting pass first. */                     \
  int64_t set_operation(const EXEC& exec, set_op op, span<const T> a, span<const T> b,            \
                        span<T> out, const merge_options& options = {});                           \
  /** op(a, b) into allocate(size) (device memory on CUDA; called once, size may be 0). */       \
  int64_t set_operation(const EXEC& exec, set_op op, span<const T> a, span<const T> b,            \
                        const std::function<T*(int64_t)>& allocate,                                \
                        const merge_options& options = {});                                        \
  /** The number of rows join(kind, left, right) writes. */                                       \
  int64_t join_size(const EXEC& exec, join_kind kind, span<const T> left, span<const T> right,    \
                    const merge_options& options = {});                                            \
  /** The join's gather maps into allocate(rows) (device memory on CUDA; called once, rows may be \
      0); returns rows. */                                                                         \
  int64_t join(const EXEC& exec, join_kind kind, span<const T> left, span<const T> right,         \
               const std::function<join_output(int64_t)>& allocate,                                \
               const merge_options& options = {});                                                 \
  /** The same into spans of at least `rows` elements (right_index empty for semi and anti);      \
      throws invalid_argument, writing nothing, when they are too small. */                       \
  int64_t join(const EXEC& exec, join_kind kind, span<const T> left, span<const T> right,         \
               span<int64_t> left_index, span<int64_t> right_index,                                \
               const merge_options& options = {});                                                 \
  inline int64_t set_intersection(const EXEC& exec, span<const T> a, span<const T> b,             \
                                  span<T> out, const merge_options& options = {}) {                \
    return set_operation(exec, set_op::intersection, a, b, out, options);                          \
  }                                                                                                \
  inline int64_t set_union(const EXEC& exec, span<const T> a, span<const T> b, span<T> out,       \
                           const merge_options& options = {}) {                                    \
    return set_operation(exec, set_op::union_, a, b, out, options);                                \
  }                                                                                                \
  inline int64_t set_difference(const EXEC& exec, span<const T> a, span<const T> b, span<T> out,  \
                                const merge_options& options = {}) {                               \
    return set_operation(exec, set_op::difference, a, b, out, options);                            \
  }                                                                                                \
  inline int64_t set_symmetric_difference(const EXEC& exec, span<const T> a, span<const T> b,     \
                                          span<T> out, const merge_options& options = {}) {        \
    return set_operation(exec, set_op::symmetric_difference, a, b, out, options);                  \
  }

GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_MERGE, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_MERGE, cuda_t)
#undef GSEARCH_DECLARE_MERGE

}  // namespace gsearch
