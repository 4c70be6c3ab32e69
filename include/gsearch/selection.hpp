#pragma once
/// \file
/// Selection: order statistics of unsorted data without sorting it.
///
///   select(exec, data, ranks, values)     values[i] = sort(data)[ranks[i]] (ranks from 0)
///   partition(exec, data, kth, out)       numpy.partition: out[kth[i]] = sort(data)[kth[i]],
///                                         every element before it <= it, every one after >= it
///   argpartition(exec, data, kth, out)    numpy.argpartition: the same order, as indices
///   partition(exec, data, rows, kth, out) the same along the last axis of a rows x cols array
///                                         (argpartition too), in one call
///   topk(exec, data, rows, k, opts, v, i) torch.topk over the last axis of a rows x cols array
///   kthvalue(exec, data, rows, r, v, i)   torch.kthvalue (r from 0 here; torch counts from 1)
///   quantile(exec, data, q, method, ...)  numpy.quantile / nanquantile of the whole array
///   median(exec, data, skip_nan, out)     numpy.median / nanmedian (the mean of the two middle
///                                         values when the count is even)
///   quantile(exec, data, rows, q, ...),   the same along the last axis of a rows x cols array
///   median(exec, data, rows, ...)         (numpy's axis=-1), in one call
///
/// The order is np.sort's (key_traits.hpp): -inf < finite < +inf < NaN, -0.0 equal to 0.0.
/// The algorithm (core/selection.hpp): a sorted sample brackets each requested rank, one pass
/// counts the data per bucket of the brackets and copies out the few elements between them, and
/// the ranks are selected among those: O(n) reads whatever the values, constant data included.
///
/// Types: int32_t, uint32_t, int64_t, uint64_t, float, double. Sizes, ranks and indices are int64.
///
/// Memory: `data` and every output live with the execution tag (host memory for gsearch::cpu,
/// device memory for gsearch::cuda); the small parameter arrays (ranks, kth, q) are host memory
/// on both. The CUDA forms are stream-ordered; select of one rank, partition / argpartition of
/// one or two kth (of 2^16 elements or more) and topk may return before the device has finished
/// (their steps are decided on the device: the radix select of
/// src/selection/cuda/radix_select.cuh, a block a row), the other forms synchronize the stream
/// (the counts choose the next step). Temporary device memory comes from gsearch's pool
/// (cuda/stream_buffer.cuh), freed in stream order.
///
/// Errors (invalid_argument, nothing written): empty data where a result needs an element, a rank
/// or kth out of [-n, n) (negative values count from the end, as numpy's kth), k out of [0, cols],
/// an output of the wrong size, a null pointer with a non-zero size, q outside [0, 1] or NaN, an
/// unknown method. cuda_error, out_of_memory from the GPU.

#include <cstdint>

#include "gsearch/core/error.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/selection.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

/// Options of topk(), torch's: the k largest (else the k smallest), sorted by value (largest
/// first when `largest`, else smallest first; ties in any order), else in any order.
struct topk_options {
  bool largest = true;
  bool sorted = true;
};

#define GSEARCH_DECLARE_SELECTION(EXEC, T)                                                         \
  /** values[i] = the element of rank ranks[i] (from 0; negative from the end) in the key       \
      order. values.size() == ranks.size(); ranks in host memory. */                             \
  void select(const EXEC& exec, span<const T> data, span<const int64_t> ranks, span<T> values);  \
  /** numpy.partition(data, kth) into out (out.size() == data.size(); kth in host memory, any    \
      order, repeats allowed, negative from the end). */                                         \
  void partition(const EXEC& exec, span<const T> data, span<const int64_t> kth, span<T> out);    \
  /** numpy.argpartition(data, kth): out holds indices into data (int64). */                    \
  void argpartition(const EXEC& exec, span<const T> data, span<const int64_t> kth,              \
                    span<int64_t> out);                                                          \
  /** numpy.partition(data.reshape(rows, cols), kth, axis=-1): each row of cols = data.size() /  \
      rows elements partitioned at kth (in [-cols, cols)), in one call (rows >= 1 divides      \
      data.size()). Short rows are shared out among the CPU's threads, or sorted a block each   \
      on CUDA (a sorted row is partitioned at every kth); long rows one after another. */      \
  void partition(const EXEC& exec, span<const T> data, int64_t rows, span<const int64_t> kth,   \
                 span<T> out);                                                                   \
  /** numpy.argpartition(data.reshape(rows, cols), kth, axis=-1): indices within each row. */  \
  void argpartition(const EXEC& exec, span<const T> data, int64_t rows, span<const int64_t> kth, \
                    span<int64_t> out);                                                          \
  /** torch.topk(data.view(rows, cols), k, dim=-1): values and indices are rows x k (row-major), \
      indices within the row. rows >= 1 and divides data.size(); 0 <= k <= cols. */             \
  void topk(const EXEC& exec, span<const T> data, int64_t rows, int64_t k,                       \
            const topk_options& options, span<T> values, span<int64_t> indices);                 \
  /** torch.kthvalue(data.view(rows, cols), rank + 1, dim=-1): per row, the element of rank     \
      `rank` (from 0) and the index of an element of that value. values, indices: rows each. */  \
  void kthvalue(const EXEC& exec, span<const T> data, int64_t rows, int64_t rank,                \
                span<T> values, span<int64_t> indices);                                          \
  /** numpy.quantile(data, q, method=method) (skip_nan: numpy.nanquantile) into out (float64,   \
      out.size() == q.size(), q in host memory), bit for bit numpy's for a Python float q:     \
      float data interpolated in T (float32 data gives float32 results, held exactly in out),  \
      integers in float64. A NaN in the data gives NaN (unless skip_nan; all-NaN data then     \
      gives NaN). */                                                                             \
  void quantile(const EXEC& exec, span<const T> data, span<const double> q,                     \
                quantile_method method, bool skip_nan, span<double> out);                        \
  /** The same in numpy's arithmetic of `dtypes` (core/selection.hpp): numpy's result for q of  \
      another dtype (an array, np.float32, ...), or for float16 data held as float. q: values  \
      of dtypes.index; a binary16 index needs data.size() < 65520. */                           \
  void quantile(const EXEC& exec, span<const T> data, span<const double> q,                     \
                quantile_method method, const quantile_dtypes& dtypes, bool skip_nan,           \
                span<double> out);                                                               \
  /** numpy.median(data) (skip_nan: numpy.nanmedian) into out[0] (out.size() == 1). */          \
  void median(const EXEC& exec, span<const T> data, bool skip_nan, span<double> out);            \
  /** numpy.quantile(data.reshape(rows, cols), q, axis=-1, method=method) in the arithmetic of  \
      `dtypes` (skip_nan: nanquantile): out[i * rows + r] is q[i]'s quantile of row r (numpy's   \
      layout, q first; out.size() == q.size() * rows). rows >= 1 divides data.size(), cols =   \
      data.size() / rows >= 1. Short rows are shared out among the CPU's threads, long rows one \
      after another; on CUDA the rows one after another. */                                    \
  void quantile(const EXEC& exec, span<const T> data, int64_t rows, span<const double> q,       \
                quantile_method method, const quantile_dtypes& dtypes, bool skip_nan,           \
                span<double> out);                                                               \
  /** numpy.median(data.reshape(rows, cols), axis=-1) (skip_nan: nanmedian) into out[0, rows). */ \
  void median(const EXEC& exec, span<const T> data, int64_t rows, bool skip_nan, span<double> out);

GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_SELECTION, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_SELECTION, cuda_t)
#undef GSEARCH_DECLARE_SELECTION

}  // namespace gsearch
