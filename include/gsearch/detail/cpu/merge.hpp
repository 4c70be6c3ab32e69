#pragma once
/// \file
/// The CPU backend of the merge-like operations (src/cpu/merge.cpp, instantiated for every key
/// type). Arguments are validated by the public API (src/merge.cpp) before they get here. Each
/// operation cuts its output at the same Merge Path / Balanced Path diagonals as the GPU
/// (core/merge_path.hpp), so both backends write the same elements in the same places.

#include <cstdint>
#include <functional>

#include "gsearch/core/join.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/set_ops.hpp"

namespace gsearch::cpu_backend {

/// out[0, na + nb) = the stable merge of a and b; with values (out_values non-null; a_values
/// or b_values is null when its side is empty, as an empty span's data() may be) out_values
/// carries each key's value.
template <class T>
void merge(int threads, const T* a, int64_t na, const T* b, int64_t nb, T* out,
           const int64_t* a_values, const int64_t* b_values, int64_t* out_values);

/// out[0, n) = keys sorted, stable; out may equal keys. values / out_values: both null, or
/// both non-null (out_values may equal values).
template <class T>
void merge_sort(int threads, const T* keys, int64_t n, const int64_t* values, T* out,
                int64_t* out_values);

/// sort(): the merge sort (on the CPU no other stable sort is faster yet).
template <class T>
void sort(int threads, const T* keys, int64_t n, const int64_t* values, T* out, int64_t* out_values) {
  merge_sort(threads, keys, n, values, out, out_values);
}

/// search() of sorted queries by Merge Path: out[j] = the search of queries[j] on side s.
template <class T, class Out>
void sorted_search(int threads, side s, const T* keys, int64_t k, const T* queries, int64_t n,
                   Out* out);

/// The size of op(a, b).
template <class T>
int64_t set_operation_size(int threads, set_op op, const T* a, int64_t na, const T* b,
                           int64_t nb);

/// Writes op(a, b) to out (room for core::set_op_bound(op, na, nb) elements, or at least for
/// the result) and returns its size.
template <class T>
int64_t set_operation(int threads, set_op op, const T* a, int64_t na, const T* b, int64_t nb,
                      T* out);

/// The number of rows of the join.
template <class T>
int64_t join_size(int threads, join_kind kind, const T* left, int64_t nl, const T* right,
                  int64_t nr);

/// The join's gather maps into allocate(rows) (core/join.hpp: order and positions); returns
/// rows.
template <class T>
int64_t join(int threads, join_kind kind, const T* left, int64_t nl, const T* right, int64_t nr,
             const std::function<join_output(int64_t)>& allocate);

}  // namespace gsearch::cpu_backend
