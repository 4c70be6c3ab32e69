#pragma once
/// \file
/// Search of unsorted data: find the first / any / a random match, count the matches, list them
/// all, and isin (membership in a set of test elements).
///
/// A match is `x op value` for one predicate of core/find.hpp (==, !=, <, <=, >, >=, or
/// value <= x < hi), compared as numpy and torch compare elementwise: -0.0 == 0.0 and a NaN
/// element satisfies only !=. Build one with gsearch::equal_to(v), less(v), in_range(lo, hi), ...
///
///   find(exec, find_mode::first, ...)   the lowest matching index, or -1
///   find(exec, find_mode::any, ...)     some matching index (the fastest to find), or -1
///   find(exec, find_mode::random, ...)  a uniformly random matching index drawn from
///                                       options.seed (the same on both backends), or -1
///   find(exec, find_mode::count, ...)   the number of matches
///   find_all                            every matching index, ascending (int64)
///   isin                                np.isin(elements, test_elements, invert=...)
///
/// Types: int32_t, uint32_t, int64_t, uint64_t, float, double; data and value have the same type.
/// Sizes and indices are int64.
///
/// Execution: gsearch::cpu takes host memory (all cores); gsearch::cuda(.on(stream)) takes
/// device memory and is stream-ordered. find() writes its one result to `result` (device memory
/// on CUDA) and does not synchronize; the forms that return a value (find_first, find_any,
/// find_random, count) wait for it; find_all waits for the count, which sizes its output, and
/// writes the indices stream-ordered. Temporary device memory, where an operation needs
/// it (find_random: 16 bytes, find_all: 48 bytes per 16 KB tile of data; isin: two copies of the test
/// elements, or a hash set of 2-4 slots per test element), is allocated stream-ordered from
/// gsearch's own pool (cuda/stream_buffer.cuh), which keeps up to a quarter of the device's memory freed between
/// calls. On the CPU, find_all takes n / 8 bytes (a bit per element) and 8 bytes per 4,096.
///
/// Early exit: once a result is certain the scan stops (first: a block stops at its next tile
/// once a hit lies before it; any: at its next tile once any hit is known), so the bytes read
/// past the hit are about one tile per block, not the rest of the data.
///
/// Complexity: O(n) reads, stopping early for first and any; find_random and find_all read
/// the data once, and again only the 16 KB tiles that hold matches. isin:
/// O(m log m) to sort the m test elements, then O(n log m) (in shared memory) or O(n) expected
/// (hash set), see isin_options.
///
/// Errors: invalid_argument (null data with a non-zero size, a result span of the wrong size,
/// per_thread < 0, a study strategy with a mode other than first / any / count, an output of
/// the wrong size), cuda_error, out_of_memory.

#include <cstdint>
#include <functional>
#include <string_view>

#include "gsearch/core/error.hpp"
#include "gsearch/core/find.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

/// Options of find().
struct find_options {
  /// How the GPU reads the data: auto_ (the tuned scan) or one of seeds/001's kernels, for
  /// study (first, any and count only; the CPU runs them as a simulated grid, one element per
  /// simulated thread step, to test their index arithmetic).
  find_strategy strategy = find_strategy::auto_;
  /// Elements per thread k for strided / coalesced / unrolled; 0 = 12 (seeds/001's best).
  int64_t per_thread = 0;
  /// The seed of find_mode::random.
  uint64_t seed = 0;
};

/// Options of isin().
struct isin_options {
  bool invert = false;  ///< np.isin's invert: out[i] = elements[i] is *not* among test_elements
  isin_method method = isin_method::auto_;
};

#define GSEARCH_DECLARE_FIND(EXEC, T)                                                              \
  /** One result of `mode` into result[0] (result.size() == 1); see the file comment. */          \
  void find(const EXEC& exec, find_mode mode, span<const T> data, const predicate<T>& pred,       \
            span<int64_t> result, const find_options& options = {});                               \
  /** The result of `mode`, returned (on CUDA: waits for it). */                                   \
  int64_t find(const EXEC& exec, find_mode mode, span<const T> data, const predicate<T>& pred,    \
               const find_options& options = {});                                                  \
  /** The lowest index i with pred(data[i]), or -1. */                                            \
  inline int64_t find_first(const EXEC& exec, span<const T> data, const predicate<T>& pred,       \
                            const find_options& options = {}) {                                    \
    return find(exec, find_mode::first, data, pred, options);                                      \
  }                                                                                                \
  /** Some index i with pred(data[i]), or -1. */                                                  \
  inline int64_t find_any(const EXEC& exec, span<const T> data, const predicate<T>& pred,         \
                          const find_options& options = {}) {                                      \
    return find(exec, find_mode::any, data, pred, options);                                        \
  }                                                                                                \
  /** A uniformly random index among the matches, drawn from `seed`, or -1. */                    \
  inline int64_t find_random(const EXEC& exec, span<const T> data, const predicate<T>& pred,      \
                             uint64_t seed, find_options options = {}) {                           \
    options.seed = seed;                                                                           \
    return find(exec, find_mode::random, data, pred, options);                                     \
  }                                                                                                \
  /** The number of i with pred(data[i]). */                                                      \
  inline int64_t count(const EXEC& exec, span<const T> data, const predicate<T>& pred,            \
                       const find_options& options = {}) {                                         \
    return find(exec, find_mode::count, data, pred, options);                                      \
  }                                                                                                \
  /** Every index i with pred(data[i]), ascending: counts them (c), calls allocate(c) once, on   \
      the calling thread, for c int64 (device memory on CUDA; c may be 0) and fills it. Returns  \
      c. On CUDA it waits for the count, then writes the indices stream-ordered. */              \
  int64_t find_all(const EXEC& exec, span<const T> data, const predicate<T>& pred,                \
                   const std::function<int64_t*(int64_t)>& allocate);                              \
  /** The same into `out`; throws invalid_argument, writing nothing, when out is too small. */    \
  int64_t find_all(const EXEC& exec, span<const T> data, const predicate<T>& pred,                \
                   span<int64_t> out);                                                             \
  /** out[i] = elements[i] is among test_elements (np.isin; != with options.invert). NaN is     \
      never a member; -0.0 and 0.0 are the same element. out.size() == elements.size(). */      \
  void isin(const EXEC& exec, span<const T> elements, span<const T> test_elements,               \
            span<bool> out, const isin_options& options = {});

GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_FIND, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_FIND, cuda_t)
#undef GSEARCH_DECLARE_FIND

}  // namespace gsearch
