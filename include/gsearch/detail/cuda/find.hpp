#pragma once
/// \file
/// The CUDA backend of the unsorted search, as the public API sees it: host-compilable
/// declarations, defined in src/cuda/find.cu (never called without CUDA: src/backend.hpp).

#include <cstdint>
#include <functional>

#include "gsearch/core/find.hpp"

struct CUstream_st;

namespace gsearch::cuda_backend {

/// Enqueues the answer of `mode` over data[0, n) into *result (device memory) on `stream`.
template <class T>
void find(CUstream_st* stream, find_mode mode, const T* data, int64_t n, const predicate<T>& pred,
          find_strategy strategy, int64_t per_thread, uint64_t seed, int64_t* result);

/// find() with its result returned: through an 8-byte device word kept per host thread and
/// device (allocated once), one copy back, a wait for the stream.
template <class T>
int64_t find_value(CUstream_st* stream, find_mode mode, const T* data, int64_t n,
                   const predicate<T>& pred, find_strategy strategy, int64_t per_thread,
                   uint64_t seed);

/// Every matching index, ascending, into allocate(count) (device memory); waits for the count.
/// `room`, when not null, is device memory for n indices (room for any result): the indices
/// are then written there without waiting for the count first, and allocate(count) must return
/// it (the span form of the public API, with an output of at least n elements).
template <class T>
int64_t find_all(CUstream_st* stream, const T* data, int64_t n, const predicate<T>& pred,
                 const std::function<int64_t*(int64_t)>& allocate, int64_t* room);

/// out[i] = (elements[i] is among tests[0, m)) != invert, enqueued on `stream`. `method` is an
/// isin_method (auto_, sorted, hash).
template <class T>
void isin(CUstream_st* stream, const T* elements, int64_t n, const T* tests, int64_t m, bool* out,
          bool invert, int method);

/// The find entry points above for key type T: the one list src/cuda/find.cu expands for every
/// key type.
#define GSEARCH_CUDA_FIND_INSTANTIATE(T)                                                          \
  template void find<T>(CUstream_st*, find_mode, const T*, int64_t, const predicate<T>&,          \
                        find_strategy, int64_t, uint64_t, int64_t*);                              \
  template int64_t find_value<T>(CUstream_st*, find_mode, const T*, int64_t, const predicate<T>&, \
                                 find_strategy, int64_t, uint64_t);                               \
  template int64_t find_all<T>(CUstream_st*, const T*, int64_t, const predicate<T>&,              \
                               const std::function<int64_t*(int64_t)>&, int64_t*);                \
  template void isin<T>(CUstream_st*, const T*, int64_t, const T*, int64_t, bool*, bool, int);

}  // namespace gsearch::cuda_backend
