#pragma once
/// \file
/// The merge-like operations' backends: each operation once for the CPU (the handle: its thread
/// count) and CUDA (the stream), one list per CUDA file that defines it (src/backend_ops.hpp;
/// the CPU defines them all in cpu.cpp). Arguments are validated by the public layer (api.cpp)
/// before they get here. Each operation cuts its output at the same Merge Path / Balanced Path
/// diagonals on both backends (core/merge_path.hpp), so both write the same elements in the same
/// places. On CUDA, arrays are in device memory, calls are enqueued on the stream, and the ones
/// that return a size wait for it.
///
///   merge               out[0, na + nb) = the stable merge of a and b; with values (out_values
///                       non-null; a_values or b_values is null when its side is empty, as an
///                       empty span's data() may be) out_values carries each key's value
///   merge_sort          out[0, n) = keys sorted, stable; out may equal keys. values / out_values:
///                       both null, or both non-null (out_values may equal values)
///   sort                merge_sort's contract by the fastest stable sort for T (CUDA: the radix
///                       sort for integer keys, the merge sort for floating-point keys; the CPU:
///                       the merge sort, no other stable sort is faster there yet)
///   set_operation_size  the size of op(a, b)
///   set_operation       writes op(a, b) to out (room for core::set_op_bound(op, na, nb) elements,
///                       or at least for the result) and returns its size
///   join_size           the number of rows of the join
///   join                the join's gather maps into allocate(rows) (core/join.hpp: order and
///                       positions); returns rows
///   sorted_search       search() of sorted queries by Merge Path: out[j] = the search of
///                       queries[j] on side s (declared per backend: its result type is a second
///                       template parameter, and CUDA's takes a launch_gate, launch_gate.hpp)

#include <cstdint>
#include <functional>

#include "backend_ops.hpp"
#include "cuda/launch_gate.hpp"
#include "gsearch/core/join.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/set_ops.hpp"

#define GSEARCH_MERGE_OPS(X, T)                                                                        \
  X(T, void, merge,                                                                                     \
    (const T* a, int64_t na, const T* b, int64_t nb, T* out, const int64_t* a_values,                   \
     const int64_t* b_values, int64_t* out_values))

#define GSEARCH_MERGE_SORT_OPS(X, T)                                                                   \
  X(T, void, merge_sort, (const T* keys, int64_t n, const int64_t* values, T* out, int64_t* out_values))

#define GSEARCH_SORT_OPS(X, T)                                                                         \
  X(T, void, sort, (const T* keys, int64_t n, const int64_t* values, T* out, int64_t* out_values))

#define GSEARCH_SET_OPS(X, T)                                                                          \
  X(T, int64_t, set_operation_size, (set_op op, const T* a, int64_t na, const T* b, int64_t nb))       \
  X(T, int64_t, set_operation, (set_op op, const T* a, int64_t na, const T* b, int64_t nb, T* out))

#define GSEARCH_JOIN_OPS(X, T)                                                                         \
  X(T, int64_t, join_size, (join_kind kind, const T* left, int64_t nl, const T* right, int64_t nr))    \
  X(T, int64_t, join,                                                                                   \
    (join_kind kind, const T* left, int64_t nl, const T* right, int64_t nr,                             \
     const std::function<join_output(int64_t)>& allocate))

GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_MERGE_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_MERGE_SORT_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_SORT_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_SET_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_JOIN_OPS)

namespace gsearch::cpu_backend {
template <class T, class Out>
void sorted_search(int threads, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out);
}  // namespace gsearch::cpu_backend
namespace gsearch::cuda_backend {
template <class T, class Out>
void sorted_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                   launch_gate gate = {});
}  // namespace gsearch::cuda_backend
