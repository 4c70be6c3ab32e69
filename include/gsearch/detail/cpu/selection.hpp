#pragma once
/// \file
/// The CPU backend of selection (src/cpu/selection.cpp, instantiated for every key type).
/// Arguments are validated, and ranks / kth normalized, by the public API (src/selection.cpp)
/// before they get here: ranks in [0, n), kth sorted and distinct, q in [0, 1], sizes checked.

#include <cstdint>

#include "gsearch/core/selection.hpp"

namespace gsearch::cpu_backend {

/// values[i] = the element of rank ranks[i] of data[0, n) (n >= 1), for i < m.
template <class T>
void select(int threads, const T* data, int64_t n, const int64_t* ranks, int64_t m, T* values);

/// numpy.partition / argpartition of data[0, n) at kth[0, m) (sorted, distinct): the values into
/// out and / or the indices into out_indices (either may be null, not both).
template <class T>
void partition(int threads, const T* data, int64_t n, const int64_t* kth, int64_t m, T* out,
               int64_t* out_indices);

/// torch.topk of each row of the rows x cols array (1 <= k <= cols), rows x k outputs.
template <class T>
void topk(int threads, const T* data, int64_t rows, int64_t cols, int64_t k, bool largest,
          bool sorted, T* values, int64_t* indices);

/// Per row: the element of rank `rank` (0 <= rank < cols) and the index of one equal to it.
template <class T>
void kthvalue(int threads, const T* data, int64_t rows, int64_t cols, int64_t rank, T* values,
              int64_t* indices);

/// numpy.quantile (skip_nan: nanquantile) of data[0, n) at q[0, m) into out (n >= 1), in
/// numpy's arithmetic of `dtypes`.
template <class T>
void quantile(int threads, const T* data, int64_t n, const double* q, int64_t m,
              quantile_method method, const quantile_dtypes& dtypes, bool skip_nan, double* out);

/// numpy.median (skip_nan: nanmedian) of data[0, n) into *out (n >= 1).
template <class T>
void median(int threads, const T* data, int64_t n, bool skip_nan, double* out);

}  // namespace gsearch::cpu_backend
