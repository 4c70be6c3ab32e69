#pragma once
/// \file
/// The CUDA backend's searches that its search() runs gated (launch_gate.hpp: enqueued, done only
/// when the gate's word opens them, as queries_order::detect needs): host-compilable
/// declarations, defined in partitioned.cu and pary.cu. The operations the public layer calls
/// are in search/backend.hpp.

#include <cstdint>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"
#include "cuda/launch_gate.hpp"

struct CUstream_st;

namespace gsearch::cuda_backend {

/// The partitioned search (algorithm::partitioned, partition_kernel.cuh), enqueued on `stream`,
/// done when `gate` is open.
template <class T, class Out>
void partitioned_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n,
                        Out* out, launch_gate gate = {});

/// P-ary search (algorithm::pary): one warp per query (cuda/pary_kernel.cuh), enqueued on
/// `stream`, done when `gate` is open.
template <class T, class Out>
void pary_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                 launch_gate gate = {});

/// The search by sorting the queries (algorithm::merge, merge_search.cu): the queries' codes
/// (core/query_buckets.hpp) sorted with their positions on their top 8 or 16 bits, each query
/// searched among its bucket's keys a tile at a time, the answers put back; the codes and the
/// sort run whatever the gate (CUB's kernels take none), the search and the way back only when
/// `gate` is open. Temporary memory: merge_temp_bytes.
template <class T, class Out>
void merge_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                  launch_gate gate = {});

/// merge_search's temporary memory for n queries of key_bytes (the codes before and after the
/// sort, the positions, the answers, the buckets' starts, the sort's scratch).
int64_t merge_temp_bytes(int key_bytes, int64_t k, int64_t n);

/// Instantiates partitioned_search for key type T (src/search/cuda/partitioned.cu).
#define GSEARCH_CUDA_PARTITIONED_INSTANTIATE(T)                                                           \
  template void partitioned_search<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t,  \
                                               int64_t*, launch_gate);                                    \
  template void partitioned_search<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t,  \
                                               int32_t*, launch_gate);
/// Instantiates pary_search for key type T (src/search/cuda/pary.cu).
#define GSEARCH_CUDA_PARY_INSTANTIATE(T)                                                                     \
  template void pary_search<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int64_t*, \
                                        launch_gate);                                                       \
  template void pary_search<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int32_t*, \
                                        launch_gate);

}  // namespace gsearch::cuda_backend
