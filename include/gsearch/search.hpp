#pragma once
/// \file
/// Batched search of sorted keys: lower_bound, upper_bound and predecessor for many queries.
///
/// Semantics (numpy.searchsorted and torch.searchsorted, with side='left' / 'right'):
///   lower_bound(q)  = first i with keys[i] >= q  (the number of keys < q)
///   upper_bound(q)  = first i with keys[i] > q   (the number of keys <= q)
///   predecessor(q)  = largest i with keys[i] <= q, or -1 (upper_bound(q) - 1)
/// in the order of core/key_traits.hpp: floats with NaN after +inf and -0.0 equal to 0.0.
///
/// Key and query types: int32_t, uint32_t, int64_t, uint64_t, float, double; keys and queries
/// must have the same type (a mixed call does not compile: nothing is cast). The output is
/// int64_t, or int32_t as an opt-in for speed, which throws invalid_argument when keys.size()
/// does not fit in int32.
///
/// Precondition: keys sorted in that order. Unsorted keys give unspecified (but in-range)
/// results, unless options.check_sorted is set, in which case the call throws
/// invalid_argument and writes nothing.
///
/// Complexity: O(queries * log(keys)) work; on the GPU keys that fit in shared memory are
/// staged once per block, larger key lists are searched in global memory.
///
/// Execution: gsearch::cpu takes host memory; gsearch::cuda (or gsearch::cuda.on(stream))
/// takes device memory and is stream-ordered: it returns once the work is enqueued, except
/// with check_sorted, which waits for the check.
///
/// Temporary memory, per call (host memory on the CPU, freed before the call returns; device
/// memory on CUDA, from gsearch's stream-ordered pool, cuda/stream_buffer.cuh, freed in stream
/// order; the pool keeps up to 256 MB of freed memory for later calls). K keys, Q queries:
///   binary, pary; pbs / pbs_cf / pbs_cl on the GPU   none
///   pbs / pbs_cf / pbs_cl on the CPU   a padded copy of the keys, (K + 64) keys; none where
///                                      that is over max_temp_bytes (the keys read in place)
///   index          the static index's layout, about K (1 + 1/B) keys (B = 4 on the GPU and 16
///                  on the CPU for 4-byte keys, 2 and 8 for 8-byte keys)
///   partitioned    a window of min(Q, 2^22) queries grouped: GPU 10 bytes a query (4-byte keys)
///                  or 18 (8-byte), plus the splitters (K / 49,152 or K / 24,576 keys), a count
///                  matrix (4 bytes per bucket and block) and CUB's scan scratch: about 42 MB or
///                  76 MB from 2^22 queries; CPU 12 + key-size bytes a query, plus 8 bytes per
///                  bucket (256 KB of keys) and thread: about 67 MB or 84 MB from 2^22 queries
///   queries_sorted GPU 8 bytes per tile of 4,864 (4-byte keys) or 3,840 (8-byte) merged keys
///                  and queries; CPU none
///   check_sorted   none per call (the GPU reads its answer through a device word that calls
///                  reuse)
/// auto_ takes the index or the partitioned search for large key sets (docs/semantics.md,
/// "Algorithms"), so a call with the default options may allocate tens of MB.
/// search_temp_bytes() tells how much a call would take; search_options::max_temp_bytes caps it
/// (0: none at all). The CPU's fork-join bookkeeping (a few bytes per thread) is not counted.
///
/// Errors: invalid_argument (sizes that differ, null data, unsorted keys when checked, an
/// int32 output too small, an algorithm the backend lacks, an algorithm that needs more
/// temporary memory than max_temp_bytes, a negative max_temp_bytes), cuda_error, out_of_memory.
///
/// Sorter (numpy.searchsorted's and torch.searchsorted's sorter=): search() and equal_range()
/// with `sorter` after the keys search the keys in sorter's order, keys[sorter[0]],
/// keys[sorter[1]], ..., which must be sorted (check_sorted checks them in that order): the
/// results are positions in that order, as numpy's. sorter holds K int64 indices (an argsort of
/// the keys, say), each in [0, K); it need not be a permutation. Two ways, by the sizes:
///   - few queries in many keys on the CPU (Q * ceil(log2(K + 1)) <= 2K: cpu_sorter_in_place, with
///     check_sorted off, algo auto_ or binary, queries not declared sorted): the binary search
///     reads keys[sorter[i]] as it goes, numpy's way, about 2 log2 K reads a query; the indices it
///     reads are checked (as numpy checks them; an index out of range that no search reads is
///     not looked at); its temporary memory a copy of the results (Q outputs);
///   - else the K keys are gathered into temporary memory (K key-sized elements, counted against
///     max_temp_bytes: the search itself gets what is left of the cap; a cap below the copy is
///     invalid_argument), every index checked, and the search above runs on the copy: O(K) more
///     work, K random reads. On CUDA the call waits for the range check, before the search is
///     enqueued.
/// Errors, besides search()'s: invalid_argument "sorter.size must equal a.size" (numpy's words)
/// when sorter.size() != K, and "Sorter index out of range" (numpy's), naming a position (the
/// first, where all are checked), when an index checked is negative or >= K (nothing written).
/// With no queries nothing is read or checked but the size (numpy's answer).

#include <cstdint>
#include <limits>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/error.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

/// search_options::max_temp_bytes's default: no cap.
inline constexpr int64_t unlimited_temp_bytes = std::numeric_limits<int64_t>::max();

/// What a search knows of its queries' order (search_options::queries_sorted). Converts from
/// bool: true is `sorted`, false `any`.
struct queries_order {
  enum value_t : int {
    any,     ///< any order: the search of `algo`
    sorted,  ///< ascending (NaN last): the sorted search (Merge Path), whatever `algo` says
    detect,  ///< the library looks, where the sorted search would pay: on a GPU, keys beyond shared
             ///< memory and at least 2^20 queries, a quarter as many as keys (src/search/tuning.hpp's
             ///< sorted_detect_*), a check of the queries' order on the device picks the sorted
             ///< search when they are sorted, `algo` otherwise, without waiting: both searches
             ///< are enqueued behind the check and gated on its answer (unsorted queries are read
             ///< only until a pair out of order turns up). Never on the CPU (nothing to gain).
  };
  value_t value = any;
  constexpr queries_order(value_t v = any) : value(v) {}
  constexpr queries_order(bool is_sorted) : value(is_sorted ? sorted : any) {}
  friend constexpr bool operator==(queries_order, queries_order) = default;
};

/// Options common to the batched searches.
struct search_options {
  /// Which algorithm; auto_ picks per backend, key count and key type (docs/design.md).
  /// On the CPU, pbs / pbs_cf / pbs_cl run the GPU's per-lane code warp by warp (slower than
  /// the default, which is the branch-free binary search on all cores).
  algorithm algo = algorithm::auto_;
  /// Check that the keys are sorted first (O(keys)); throw invalid_argument if not.
  bool check_sorted = false;
  /// queries_order::sorted (or true): the queries are sorted too (same order): search them by
  /// Merge Path (seeds/002's "vectorized sorted search"), O(keys + queries) work and both read
  /// once, instead of O(queries * log(keys)). `algo` is then ignored. Unsorted queries give
  /// unspecified (but in-range) results, unless check_sorted is set, which then checks the
  /// queries as well. queries_order::detect: the library decides (see queries_order).
  queries_order queries_sorted = queries_order::any;
  /// The most temporary memory (bytes) the call may allocate; see the file comment for what each
  /// algorithm takes. auto_ then picks only algorithms within the cap (0: only those that
  /// allocate nothing: PBS-CL in shared memory, P-ary, binary); an explicit index or partitioned
  /// that would take more throws invalid_argument naming the cap; the CPU's pbs / pbs_cf / pbs_cl
  /// read the keys in place instead of padding a copy; queries_sorted on the GPU runs the
  /// search of unsorted queries instead. Results never change. Negative: invalid_argument.
  int64_t max_temp_bytes = unlimited_temp_bytes;
};

#define GSEARCH_DECLARE_SEARCH(EXEC, T, OUT)                                                     \
  /** Batched search on `side`; see the file comment. */                                         \
  void search(const EXEC& exec, side s, span<const T> keys, span<const T> queries, span<OUT> out, \
              const search_options& options = {});                                               \
  /** numpy side='left': the number of keys < q. */                                             \
  inline void lower_bound(const EXEC& exec, span<const T> keys, span<const T> queries,           \
                          span<OUT> out, const search_options& options = {}) {                   \
    search(exec, side::left, keys, queries, out, options);                                       \
  }                                                                                              \
  /** numpy side='right': the number of keys <= q. */                                           \
  inline void upper_bound(const EXEC& exec, span<const T> keys, span<const T> queries,           \
                          span<OUT> out, const search_options& options = {}) {                   \
    search(exec, side::right, keys, queries, out, options);                                      \
  }                                                                                              \
  /** The largest i with keys[i] <= q, or -1. */                                                \
  inline void predecessor(const EXEC& exec, span<const T> keys, span<const T> queries,           \
                          span<OUT> out, const search_options& options = {}) {                   \
    search(exec, side::pred, keys, queries, out, options);                                       \
  }                                                                                              \
  /** lower[j], upper[j] = lower_bound and upper_bound of queries[j]: keys[lower[j], upper[j])   \
      are the keys equal to it, upper[j] - lower[j] their count. Two searches. */               \
  void equal_range(const EXEC& exec, span<const T> keys, span<const T> queries,                 \
                   span<OUT> lower, span<OUT> upper, const search_options& options = {});        \
  /** numpy's sorter=: search() of keys[sorter[0]], keys[sorter[1]], ... (see "Sorter"). */     \
  void search(const EXEC& exec, side s, span<const T> keys, span<const int64_t> sorter,          \
              span<const T> queries, span<OUT> out, const search_options& options = {});        \
  /** equal_range() of the keys in sorter's order: one gather for both searches. */             \
  void equal_range(const EXEC& exec, span<const T> keys, span<const int64_t> sorter,             \
                   span<const T> queries, span<OUT> lower, span<OUT> upper,                      \
                   const search_options& options = {});

#define GSEARCH_DECLARE_SEARCH_ALL_OUT(EXEC, T) \
  GSEARCH_DECLARE_SEARCH(EXEC, T, int64_t)      \
  GSEARCH_DECLARE_SEARCH(EXEC, T, int32_t)

GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_SEARCH_ALL_OUT, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_SEARCH_ALL_OUT, cuda_t)

/// The rank a search returns for a query outside the key type's range (a Python integer beyond
/// int64, say): below every key (above = false) or above every key, for k keys on side s.
/// lower_bound and upper_bound give 0 or k, predecessor -1 or k - 1.
constexpr int64_t rank_outside(side s, int64_t k, bool above) {
  return visit_side(s, [&]<bool>(int offset) { return (above ? k : 0) + offset; });
}

/// The algorithm a search with `requested` runs for k keys of key_bytes bytes and `queries`
/// queries on this backend (and, for CUDA, the current device, its shared memory included):
/// `requested` itself unless it is algorithm::auto_, whose choice leaves out what allocates more
/// than max_temp_bytes. queries < 0: not known, taken as many (a batch at least as large as k).
/// float_keys: the keys are float or double (auto_ takes algorithm::merge for integer keys only:
/// its radix sort of the queries is measured for them).
algorithm resolve_algorithm(const cpu_t& exec, algorithm requested, int key_bytes, int64_t k,
                            int64_t queries = -1, int64_t max_temp_bytes = unlimited_temp_bytes,
                            bool float_keys = false);
algorithm resolve_algorithm(const cuda_t& exec, algorithm requested, int key_bytes, int64_t k,
                            int64_t queries = -1, int64_t max_temp_bytes = unlimited_temp_bytes,
                            bool float_keys = false);

/// The temporary memory (bytes) a search with `algo` allocates per call for k keys of key_bytes
/// bytes and `queries` queries (< 0: taken as k) on this backend (the CPU: with exec.threads
/// threads; CUDA: on the current device), with no cap: auto_ as it resolves with no cap, the
/// table in the file comment made exact. Not counting queries_sorted, which search_options
/// chooses apart from the algorithm. Exact on the CPU; on CUDA, for unsigned keys of that size
/// on side right (other types and sides may differ by part of the partitioned search's count
/// matrix, whose block count follows each kernel's occupancy).
int64_t search_temp_bytes(const cpu_t& exec, algorithm algo, int key_bytes, int64_t k, int64_t queries = -1);
int64_t search_temp_bytes(const cuda_t& exec, algorithm algo, int key_bytes, int64_t k, int64_t queries = -1);

#define GSEARCH_DECLARE_IS_SORTED(EXEC, T)                                                  \
  /** True when keys are sorted in the order of key_traits.hpp. On CUDA it synchronizes. */ \
  bool is_sorted(const EXEC& exec, span<const T> keys);
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_IS_SORTED, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_IS_SORTED, cuda_t)

/// Row-batched search: torch.searchsorted with an N-D sorted_sequence. `rows` independent
/// searches, row r's queries searching row r's keys only:
///   keys    rows x k, row-major (k = keys.size() / rows), each row sorted;
///   queries rows x m, row-major (m = queries.size() / rows);
///   out     rows x m: out[r * m + j] = the 1-D search of queries[r * m + j] in row r's k keys,
///           an index in [0, k] (or [-1, k) for side::pred), not an offset into `keys`.
/// Same semantics, types, options and errors as search(); `check_sorted` checks every row;
/// algorithm::index and algorithm::partitioned run as binary beyond shared memory (an index or a
/// partition per row would cost more than it saves).
/// rows == 0 needs empty keys and queries; otherwise both sizes must be multiples of rows
/// (invalid_argument names the sizes if not). int32 output needs k to fit in int32.
///
/// GPU: each block stages one or more whole rows in shared memory (as many as fill a tile of
/// queries) and runs the per-lane search on them; rows too long for shared memory are searched
/// in global memory. CPU: all cores over the flat query range, the branch-free search per row.
/// Complexity: O(rows * m * log k) work, keys and queries read once.
#define GSEARCH_DECLARE_SEARCH_ROWS(EXEC, T, OUT)                                                \
  void search_rows(const EXEC& exec, side s, int64_t rows, span<const T> keys,                   \
                   span<const T> queries, span<OUT> out, const search_options& options = {});
#define GSEARCH_DECLARE_SEARCH_ROWS_ALL_OUT(EXEC, T) \
  GSEARCH_DECLARE_SEARCH_ROWS(EXEC, T, int64_t)      \
  GSEARCH_DECLARE_SEARCH_ROWS(EXEC, T, int32_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_SEARCH_ROWS_ALL_OUT, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_SEARCH_ROWS_ALL_OUT, cuda_t)

#define GSEARCH_DECLARE_IS_SORTED_ROWS(EXEC, T)                                                 \
  /** True when each of the `rows` rows of keys (rows x keys.size() / rows, row-major) is sorted \
      in the order of key_traits.hpp. On CUDA it synchronizes. */                               \
  bool is_sorted_rows(const EXEC& exec, int64_t rows, span<const T> keys);
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_IS_SORTED_ROWS, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_IS_SORTED_ROWS, cuda_t)

#undef GSEARCH_DECLARE_SEARCH
#undef GSEARCH_DECLARE_SEARCH_ALL_OUT
#undef GSEARCH_DECLARE_IS_SORTED
#undef GSEARCH_DECLARE_SEARCH_ROWS
#undef GSEARCH_DECLARE_SEARCH_ROWS_ALL_OUT
#undef GSEARCH_DECLARE_IS_SORTED_ROWS

}  // namespace gsearch
