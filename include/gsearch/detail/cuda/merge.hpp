#pragma once
/// \file
/// The CUDA backend of the merge-like operations, as the public API sees it: host-compilable
/// declarations, defined in src/cuda/merge.cu, merge_sort.cu, sort.cu, sorted_search.cu, set_ops.cu and
/// join.cu (never called in a build without CUDA: src/backend.hpp). Same contracts as include/gsearch/detail/cpu/merge.hpp,
/// on device memory, enqueued on `stream`; the functions that return a size wait for it.

#include <cstdint>
#include <functional>

#include "gsearch/core/join.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/set_ops.hpp"
#include "gsearch/detail/cuda/launch_gate.hpp"

struct CUstream_st;

namespace gsearch::cuda_backend {

template <class T>
void merge(CUstream_st* stream, const T* a, int64_t na, const T* b, int64_t nb, T* out,
           const int64_t* a_values, const int64_t* b_values, int64_t* out_values);

template <class T>
void merge_sort(CUstream_st* stream, const T* keys, int64_t n, const int64_t* values, T* out,
                int64_t* out_values);

/// A stable ascending sort: merge_sort's contract, by the fastest stable sort for T (sort.cu: the
/// radix sort for integer keys, the merge sort for floating-point keys).
template <class T>
void sort(CUstream_st* stream, const T* keys, int64_t n, const int64_t* values, T* out, int64_t* out_values);

/// The search of sorted queries (Merge Path), done when `gate` is open (launch_gate.hpp).
template <class T, class Out>
void sorted_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries,
                   int64_t n, Out* out, launch_gate gate = {});

template <class T>
int64_t set_operation_size(CUstream_st* stream, set_op op, const T* a, int64_t na, const T* b,
                           int64_t nb);

template <class T>
int64_t set_operation(CUstream_st* stream, set_op op, const T* a, int64_t na, const T* b,
                      int64_t nb, T* out);

template <class T>
int64_t join_size(CUstream_st* stream, join_kind kind, const T* left, int64_t nl, const T* right,
                  int64_t nr);

template <class T>
int64_t join(CUstream_st* stream, join_kind kind, const T* left, int64_t nl, const T* right,
             int64_t nr, const std::function<join_output(int64_t)>& allocate);

/// The entry points above for key type T, one list per file that defines them.
#define GSEARCH_CUDA_MERGE_INSTANTIATE(T)                                                        \
  template void merge<T>(CUstream_st*, const T*, int64_t, const T*, int64_t, T*, const int64_t*, \
                         const int64_t*, int64_t*);
#define GSEARCH_CUDA_MERGE_SORT_INSTANTIATE(T) \
  template void merge_sort<T>(CUstream_st*, const T*, int64_t, const int64_t*, T*, int64_t*);
#define GSEARCH_CUDA_SORT_INSTANTIATE(T) \
  template void sort<T>(CUstream_st*, const T*, int64_t, const int64_t*, T*, int64_t*);
#define GSEARCH_CUDA_SORTED_SEARCH_INSTANTIATE(T)                                          \
  template void sorted_search<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, \
                                          int64_t, int64_t*, launch_gate);                 \
  template void sorted_search<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, \
                                          int64_t, int32_t*, launch_gate);
#define GSEARCH_CUDA_SET_OPS_INSTANTIATE(T)                                                   \
  template int64_t set_operation_size<T>(CUstream_st*, set_op, const T*, int64_t, const T*,   \
                                         int64_t);                                            \
  template int64_t set_operation<T>(CUstream_st*, set_op, const T*, int64_t, const T*, int64_t, \
                                    T*);
#define GSEARCH_CUDA_JOIN_INSTANTIATE(T)                                                        \
  template int64_t join_size<T>(CUstream_st*, join_kind, const T*, int64_t, const T*, int64_t); \
  template int64_t join<T>(CUstream_st*, join_kind, const T*, int64_t, const T*, int64_t,       \
                           const std::function<join_output(int64_t)>&);

}  // namespace gsearch::cuda_backend
