#pragma once
/// \file
/// The unsorted search's backends: each operation once for the CPU (the handle: its thread count)
/// and CUDA (the stream), in one list per file that defines it (src/backend_ops.hpp): find in
/// cpu.cpp / cuda/find.cu, isin in cpu.cpp / cuda/isin.cu; find_all and CUDA's find_value differ
/// per backend. Arguments are validated by the public layer (api.cpp) before they get here. On
/// CUDA, data and outputs are in device memory and the calls are enqueued on the stream.
///
///   find        *result = the answer of `mode` over data[0, n). On the CPU the default strategy
///               scans blocks of 4,096 elements on all cores (first / any: blocks taken in order,
///               stopping past the best hit); a study strategy runs as a simulated grid of
///               core::strategy_threads(n, k) threads.
///   isin        out[i] = (elements[i] is among tests[0, m)) != invert. `method` is an isin_method:
///               auto_ and sorted sort a copy of the test elements and run the branch-free search
///               (on the CPU 8 elements in lockstep); hash builds core::hash_set_view.
///   find_all    every matching index, ascending, into allocate(count) (device memory on CUDA);
///               returns the count. On CUDA it waits for the count; `room`, when not null, is
///               device memory for n indices (room for any result): the indices are then written
///               there without waiting for the count first, and allocate(count) must return it
///               (the span form of the public API, with an output of at least n elements).
///   find_value  (CUDA) find() with its result returned: through a host_wait_word
///               (cuda/launch.cuh), one copy back, a wait for the stream.

#include <cstdint>
#include <functional>

#include "backend_ops.hpp"
#include "gsearch/core/find.hpp"

#define GSEARCH_FIND_OPS(X, T)                                                                         \
  X(T, void, find,                                                                                      \
    (find_mode mode, const T* data, int64_t n, const predicate<T>& pred, find_strategy strategy,        \
     int64_t per_thread, uint64_t seed, int64_t* result))

#define GSEARCH_ISIN_OPS(X, T)                                                                         \
  X(T, void, isin, (const T* elements, int64_t n, const T* tests, int64_t m, bool* out, bool invert, int method))

#define GSEARCH_FIND_CPU_OPS(X, T)                                                                     \
  X(T, int64_t, find_all,                                                                               \
    (const T* data, int64_t n, const predicate<T>& pred, const std::function<int64_t*(int64_t)>& allocate))

#define GSEARCH_FIND_CUDA_OPS(X, T)                                                                    \
  X(T, int64_t, find_value,                                                                             \
    (find_mode mode, const T* data, int64_t n, const predicate<T>& pred, find_strategy strategy,        \
     int64_t per_thread, uint64_t seed))                                                                \
  X(T, int64_t, find_all,                                                                               \
    (const T* data, int64_t n, const predicate<T>& pred, const std::function<int64_t*(int64_t)>& allocate, \
     int64_t* room))

GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_FIND_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_ISIN_OPS)
GSEARCH_DECLARE_CPU_OPS(GSEARCH_FIND_CPU_OPS)
GSEARCH_DECLARE_CUDA_OPS(GSEARCH_FIND_CUDA_OPS)
