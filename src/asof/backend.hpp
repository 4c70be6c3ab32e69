#pragma once
/// \file
/// The as-of join's backends (src/backend_ops.hpp): each operation once for the CPU (the handle:
/// its thread count) and CUDA (the stream), defined in cpu.cpp and cuda/asof.cu. Arguments are
/// validated by the public layer (api.cpp) before they get here. On CUDA every pointer is device
/// memory and the calls are enqueued on the stream; those that return an answer wait for it.
///
///   asof_join    out[i] = the match of left row i (core/asof.hpp's rule) among the right rows
///                [0, m) (of its group, left_by[i], when left_by is not null: then right_by too,
///                codes in [0, groups)), the right row's original index or -1; keys sorted. The CPU
///                sweeps as pandas does (core::asof_sweep, a chunk of left rows a thread); CUDA
///                groups the right rows by a stable radix sort of their codes and runs a thread a
///                left row (core::asof_row: a binary search within the group)
///   asof_sort    keys[0, n) sorted stably (the merge family's sort: -0.0 and 0.0 one key), with
///                their codes when not null: calls then(sorted keys, their codes (null without),
///                perm, scratch), perm[i] = the original position of sorted row i, scratch room
///                for n int64; memory that lives for the call (as asof_group's)
///   asof_unsort  out[left_perm[i]] = matched[i] < 0 ? -1 : right_perm[matched[i]], i in [0, n)
///   has_nan      whether keys[0, n) holds a NaN (false for integer keys); `sorted`: the keys are
///                sorted in key_traits.hpp's order, so only the last can be NaN
///   first_code_outside  the first i with codes[i] outside [0, groups), or -1

#include <cstdint>
#include <functional>

#include "backend_ops.hpp"
#include "gsearch/core/asof.hpp"

#define GSEARCH_ASOF_OPS(X, T)                                                                        \
  X(T, void, asof_join,                                                                                \
    (const T* left, const int64_t* left_by, int64_t n, const T* right, const int64_t* right_by, int64_t m,  \
     int64_t groups, const asof_rule<T>& rule, int64_t* out))                                           \
  X(T, void, asof_sort,                                                                                \
    (const T* keys, const int64_t* codes, int64_t n,                                                   \
     const std::function<void(const T*, const int64_t*, const int64_t*, int64_t*)>& then))             \
  X(T, bool, has_nan, (const T* keys, int64_t n, bool sorted))

GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_ASOF_OPS)

GSEARCH_IN_BOTH_BACKENDS(
    int64_t first_code_outside(handle h, const int64_t* codes, int64_t n, int64_t groups);
    void asof_unsort(handle h, const int64_t* matched, const int64_t* left_perm, const int64_t* right_perm,
                     int64_t n, int64_t* out);)
