#pragma once
/// \file
/// The CUDA backend of the static index, as the public layer sees it: host-compilable
/// declarations, defined in src/static_index/cuda/static_index.cu (a build without CUDA never calls them:
/// src/on_backend.hpp).

#include <cstdint>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/static_index.hpp"
#include "cuda/launch_gate.hpp"

struct CUstream_st;

namespace gsearch::cuda_backend {

/// Enqueues on `stream` the build of the layout of the n sorted keys (device memory; the layout
/// has core::static_index_shape<cuda_node_keys<T>>(n).size() slots).
template <class T>
void index_build(CUstream_st* stream, const T* keys, int64_t n, T* layout);

/// Enqueues out[j] = the result of queries[j] on side s (device memory).
template <class T, class Out>
void index_search(CUstream_st* stream, side s, const static_index_device_ref<T>& ref, const T* queries, int64_t q, Out* out);

/// The one-shot search of algorithm::index: a temporary index of the k keys (from the
/// stream-ordered pool), built and searched on `stream`, when `gate` is open (launch_gate.hpp).
template <class T, class Out>
void index_search_keys(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t q, Out* out,
                       launch_gate gate = {});

#define GSEARCH_CUDA_INDEX_INSTANTIATE(T)                                                              \
  template void index_build<T>(CUstream_st*, const T*, int64_t, T*);                                   \
  template void index_search<T, int64_t>(CUstream_st*, side, const static_index_device_ref<T>&, const T*, int64_t, int64_t*); \
  template void index_search<T, int32_t>(CUstream_st*, side, const static_index_device_ref<T>&, const T*, int64_t, int32_t*); \
  template void index_search_keys<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int64_t*, \
                                              launch_gate);                                                     \
  template void index_search_keys<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int32_t*, \
                                              launch_gate);

}  // namespace gsearch::cuda_backend
