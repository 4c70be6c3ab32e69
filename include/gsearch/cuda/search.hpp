#pragma once
/// \file
/// The CUDA backend of the batched search, as the public API sees it: host-compilable
/// declarations (no CUDA headers), defined in src/cuda/ (or src/cuda_disabled.cpp when the
/// library is built without CUDA, where each throws gsearch::error).

#include <cstdint>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"

struct CUstream_st;

namespace gsearch::cuda_backend {

/// out[j] = result of query j, enqueued on `stream`. Device pointers. `algo` may be auto_.
template <class T, class Out>
void search(CUstream_st* stream, side s, algorithm algo, const T* keys, int64_t k,
            const T* queries, int64_t n, Out* out);

/// The partitioned search (algorithm::partitioned, partition_kernel.cuh), enqueued on `stream`.
template <class T, class Out>
void partitioned_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n,
                        Out* out);

/// P-ary search (algorithm::pary): one warp per query (cuda/pary_kernel.cuh), enqueued on `stream`.
template <class T, class Out>
void pary_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out);

/// Row-batched search (rows x k keys, rows x m queries, row-major), enqueued on `stream`.
template <class T, class Out>
void search_rows(CUstream_st* stream, side s, algorithm algo, int64_t rows, const T* keys,
                 int64_t k, const T* queries, int64_t m, Out* out);

/// Each of the `rows` rows of k keys sorted; waits for the answer.
template <class T>
bool is_sorted_rows(CUstream_st* stream, const T* keys, int64_t rows, int64_t k);

/// Keys sorted in the order of key_traits.hpp; waits for the answer.
template <class T>
bool is_sorted(CUstream_st* stream, const T* keys, int64_t k);

/// `requested`, or for algorithm::auto_ the choice of tuning.hpp for k keys of key_bytes bytes and
/// q queries on the current device.
algorithm resolve(algorithm requested, int key_bytes, int64_t k, int64_t q);

/// Instantiates the entry points above for key type T (both output types): the one list that
/// src/cuda/search.cu and, without CUDA, src/cuda_disabled.cpp expand for every key type.
#define GSEARCH_CUDA_BACKEND_INSTANTIATE(T)                                                      \
  template void search<T, int64_t>(CUstream_st*, side, algorithm, const T*, int64_t, const T*,  \
                                   int64_t, int64_t*);                                          \
  template void search<T, int32_t>(CUstream_st*, side, algorithm, const T*, int64_t, const T*,  \
                                   int64_t, int32_t*);                                          \
  template bool is_sorted<T>(CUstream_st*, const T*, int64_t);                                  \
  template bool is_sorted_rows<T>(CUstream_st*, const T*, int64_t, int64_t);                    \
  template void search_rows<T, int64_t>(CUstream_st*, side, algorithm, int64_t, const T*,        \
                                        int64_t, const T*, int64_t, int64_t*);                   \
  template void search_rows<T, int32_t>(CUstream_st*, side, algorithm, int64_t, const T*,        \
                                        int64_t, const T*, int64_t, int32_t*);

/// Instantiates partitioned_search for key type T (src/cuda/partitioned.cu, src/cuda_disabled.cpp).
#define GSEARCH_CUDA_PARTITIONED_INSTANTIATE(T)                                                           \
  template void partitioned_search<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t,  \
                                               int64_t*);                                                 \
  template void partitioned_search<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t,  \
                                               int32_t*);
/// Instantiates pary_search for key type T (src/cuda/pary.cu, src/cuda_disabled.cpp).
#define GSEARCH_CUDA_PARY_INSTANTIATE(T)                                                                     \
  template void pary_search<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int64_t*); \
  template void pary_search<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int32_t*);

}  // namespace gsearch::cuda_backend
