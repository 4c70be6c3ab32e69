#pragma once
/// \file
/// The selection family's backends: each operation once, for the CPU (the handle: its thread
/// count) and CUDA (the stream), in one list per file that defines it (src/backend_ops.hpp says
/// how): select and partition in cpu_select.cpp / cuda/select.cu, quantile and median in
/// cpu_quantile.cpp / cuda/select.cu, their rows forms in cpu_quantile.cpp / cuda/quantile_rows.cu,
/// the rows' topk and kthvalue in cpu_rows.cpp / cuda/topk.cu.
/// Arguments are validated, and ranks / kth normalized, by the public layer (api.cpp) before they
/// get here: ranks in [0, n), kth sorted and distinct, q in [0, 1], sizes checked. On CUDA, data
/// and outputs are in device memory, ranks / kth / q in host memory, and each call is enqueued on
/// the stream and synchronizes it before returning (the counts of one pass choose the next),
/// but for the forms whose steps the device decides (include/gsearch/selection.hpp says which).
///
///   select     values[i] = the element of rank ranks[i] of data[0, n) (n >= 1), for i < m
///   partition  numpy.partition / argpartition of data[0, n) at kth[0, m) (sorted, distinct): the
///              values into out and / or the indices into out_indices (either may be null, not both)
///   quantile   numpy.quantile (skip_nan: nanquantile) of data[0, n) at q[0, m) into out (n >= 1),
///              in numpy's arithmetic of `dtypes`
///   median     numpy.median (skip_nan: nanmedian) of data[0, n) into *out (n >= 1)
///   quantile_rows  quantile of each row of the rows x cols array (rows >= 2, cols >= 1) into
///              out[i * rows + r] (numpy's layout of quantile(axis=-1): q first, then the rows)
///   median_rows    median of each row of the rows x cols array (rows >= 2, cols >= 1) into out[r]
///   topk       torch.topk of each row of the rows x cols array (1 <= k <= cols), rows x k outputs
///   partition_rows  partition of each row of the rows x cols array (rows >= 2) at kth[0, m) (in
///              [0, cols), sorted, distinct), into out and / or out_indices (indices within the row)
///   kthvalue   per row: the element of rank `rank` (0 <= rank < cols) and the index of one equal

#include <cstdint>

#include "backend_ops.hpp"
#include "gsearch/core/selection.hpp"

#define GSEARCH_SELECT_OPS(X, T)                                                                       \
  X(T, void, select, (const T* data, int64_t n, const int64_t* ranks, int64_t m, T* values))           \
  X(T, void, partition, (const T* data, int64_t n, const int64_t* kth, int64_t m, T* out, int64_t* out_indices))

#define GSEARCH_QUANTILE_OPS(X, T)                                                                     \
  X(T, void, quantile,                                                                                  \
    (const T* data, int64_t n, const double* q, int64_t m, quantile_method method,                      \
     const quantile_dtypes& dtypes, bool skip_nan, double* out))                                        \
  X(T, void, median, (const T* data, int64_t n, bool skip_nan, double* out))

#define GSEARCH_QUANTILE_ROWS_OPS(X, T)                                                                \
  X(T, void, quantile_rows,                                                                             \
    (const T* data, int64_t rows, int64_t cols, const double* q, int64_t m, quantile_method method,     \
     const quantile_dtypes& dtypes, bool skip_nan, double* out))                                        \
  X(T, void, median_rows, (const T* data, int64_t rows, int64_t cols, bool skip_nan, double* out))

#define GSEARCH_ROWS_OPS(X, T)                                                                         \
  X(T, void, topk,                                                                                      \
    (const T* data, int64_t rows, int64_t cols, int64_t k, bool largest, bool sorted, T* values,        \
     int64_t* indices))                                                                                 \
  X(T, void, kthvalue, (const T* data, int64_t rows, int64_t cols, int64_t rank, T* values, int64_t* indices))  \
  X(T, void, partition_rows,                                                                            \
    (const T* data, int64_t rows, int64_t cols, const int64_t* kth, int64_t m, T* out, int64_t* out_indices))

GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_SELECT_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_QUANTILE_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_QUANTILE_ROWS_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_ROWS_OPS)
