#pragma once
// The GPU peers `merge_bench` (merge_bench.cu) measures beside gsearch's merge family
// (issue 8), behind a host-compilable interface:
//   merge_peers.cu      (the CUDA toolkit's CCCL, 3.0.1 with CUDA 13.0): the vectorized copy /
//                       read roofline kernel, thrust::merge, thrust::merge_by_key,
//                       thrust::set_*, thrust::upper_bound, thrust::sort, thrust::sort_by_key
//                       (also used to sort the benchmark's inputs on the device);
//   cub_merge_peer.cu   (the newer CCCL of scripts/fetch-cccl.sh, 3.6): cub::DeviceMerge,
//                       cub::DeviceMergeSort, cub::DeviceRadixSort,
//                       cub::DeviceFind::UpperBoundSortedValues, thrust::set_* from CCCL 3.6 and
//                       a sort-merge join built from CUB primitives (DeviceFind's sorted-value
//                       searches, DeviceScan::ExclusiveSum, an expand kernel).
// One translation unit never mixes the two CCCL versions. Device pointers throughout; every
// function runs on `stream`. The CUB functions follow CUB's two-phase convention: with
// temp == nullptr they only return the temporary storage they need; otherwise they enqueue
// (temp_bytes at least that) and return it. Functions that return a count (thrust's set
// operations, the join) wait for it. Keys int32_t (int64_t for the merges and sorts of keys
// alone: thrust_merge, thrust_sort, cub_merge_keys); values int64_t.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct CUstream_st;

namespace gsearch::bench::merge_peers {

// ---- merge_peers.cu: the roofline and thrust (CUDA toolkit CCCL) ------------------------------

/// One piece of the roofline's traffic: `bytes` (a multiple of 16, 16-byte aligned) read from
/// src and, when dst is not null, written to dst (a copy); dst == nullptr: read only.
struct segment {
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t bytes = 0;
};
/// A launch configuration of the roofline: `unroll` 16-byte loads in flight per thread,
/// `blocks_per_sm` x SMs blocks of 256 threads, grid-stride over all segments.
struct roofline_config {
  int unroll;
  int blocks_per_sm;
};
/// The configurations compiled in (the bench times them all; the fastest counts).
std::vector<roofline_config> roofline_configs();
/// Moves the segments (up to 4) in one launch: every 16-byte word read once, copied words
/// written once; read-only words are folded into one word per thread, stored to *sink only if
/// it equals a constant (practically never).
void roofline(CUstream_st* stream, const std::vector<segment>& segments, roofline_config cfg, uint32_t* sink);

/// thrust::merge(a, b) -> out (enqueues only).
template <class T>
void thrust_merge(CUstream_st* stream, const T* a, int64_t na, const T* b, int64_t nb, T* out);
/// thrust::merge_by_key (enqueues only).
template <class T>
void thrust_merge_by_key(CUstream_st* stream, const T* a, const int64_t* av, int64_t na, const T* b,
                         const int64_t* bv, int64_t nb, T* out, int64_t* out_values);
/// thrust::set_intersection / set_union / set_difference / set_symmetric_difference, `op` as
/// gsearch::set_op (0 intersection, 1 union, 2 difference, 3 symmetric difference); returns the
/// size written (waits).
template <class T>
int64_t thrust_set_op(CUstream_st* stream, int op, const T* a, int64_t na, const T* b, int64_t nb, T* out);
/// thrust::upper_bound(keys, queries) -> int32 out (enqueues only).
template <class T>
void thrust_upper_bound(CUstream_st* stream, const T* keys, int64_t k, const T* queries, int64_t q, int32_t* out);
/// thrust::sort(data, data + n), in place (enqueues only; thrust may allocate and free).
template <class T>
void thrust_sort(CUstream_st* stream, T* data, int64_t n);
/// thrust::sort_by_key(keys, keys + n, values), in place (enqueues only).
template <class T>
void thrust_sort_by_key(CUstream_st* stream, T* keys, int64_t* values, int64_t n);

// ---- cub_merge_peer.cu: CUB and thrust from the newer CCCL -------------------------------------

// Without the newer CCCL (bench::new_cccl_available() false, cccl.hpp) these throw.

/// cub::DeviceMerge::MergeKeys(a, na, b, nb, out, less).
template <class T>
size_t cub_merge_keys(CUstream_st* stream, void* temp, size_t temp_bytes, const T* a, int64_t na, const T* b,
                      int64_t nb, T* out);
/// cub::DeviceMerge::MergePairs.
template <class T>
size_t cub_merge_pairs(CUstream_st* stream, void* temp, size_t temp_bytes, const T* a, const int64_t* av,
                       int64_t na, const T* b, const int64_t* bv, int64_t nb, T* out, int64_t* out_values);
/// cub::DeviceFind::UpperBoundSortedValues(keys, k, queries, q, int32 out, less).
template <class T>
size_t cub_upper_bound_sorted(CUstream_st* stream, void* temp, size_t temp_bytes, const T* keys, int64_t k,
                              const T* queries, int64_t q, int32_t* out);
/// cub::DeviceMergeSort::SortKeysCopy(in, out, n, less) (stable merge sort, out of place).
template <class T>
size_t cub_merge_sort_keys(CUstream_st* stream, void* temp, size_t temp_bytes, const T* in, T* out, int64_t n);
/// cub::DeviceMergeSort::SortPairsCopy.
template <class T>
size_t cub_merge_sort_pairs(CUstream_st* stream, void* temp, size_t temp_bytes, const T* in, const int64_t* vin,
                            T* out, int64_t* vout, int64_t n);
/// cub::DeviceRadixSort::SortKeys(in, out, n) (all bits).
template <class T>
size_t cub_radix_sort_keys(CUstream_st* stream, void* temp, size_t temp_bytes, const T* in, T* out, int64_t n);
/// cub::DeviceRadixSort::SortPairs.
template <class T>
size_t cub_radix_sort_pairs(CUstream_st* stream, void* temp, size_t temp_bytes, const T* in, const int64_t* vin,
                            T* out, int64_t* vout, int64_t n);
/// thrust::set_* from CCCL 3.6 (`op` as thrust_set_op); returns the size written (waits).
template <class T>
int64_t thrust36_set_op(CUstream_st* stream, int op, const T* a, int64_t na, const T* b, int64_t nb, T* out);

/// The sort-merge join built from CUB primitives, `kind` as gsearch::join_kind (0 inner, 1 left,
/// 2 right (not implemented: throws), 3 full, 4 semi, 5 anti), on sorted keys:
///   lo[i], hi[i] = DeviceFind::LowerBoundSortedValues / UpperBoundSortedValues of left[i] in
///   right (the left keys are sorted: the sorted-values search); w[i] = the kind's output count
///   of left row i (inner: hi - lo; left / full: max(hi - lo, 1); semi: hi > lo; anti: hi == lo);
///   off = DeviceScan::ExclusiveSum(w) (nl + 1 entries, int64); the total is copied to the host
///   (waits); an expand kernel writes output u from left row i = upper_bound(off, u) - 1 (a
///   binary search per output), right index lo[i] + (u - off[i]) or -1. Full joins then search
///   the right keys in the left the same way and append the unmatched right rows (-1, j) with an
///   exclusive scan of their flags and a scatter.
/// Output order: the left-driven rows in left order (then, for full joins, the unmatched right
/// rows in right order): the same rows as gsearch::join, not necessarily in its order.
/// Returns the rows; throws when `capacity` is smaller (after the count, writing nothing).
/// right_index is ignored (may be null) for semi and anti joins.
template <class T>
size_t cub_join_temp_bytes(int kind, const T* left, int64_t nl, const T* right, int64_t nr);
template <class T>
int64_t cub_join(CUstream_st* stream, void* temp, size_t temp_bytes, int kind, const T* left, int64_t nl,
                 const T* right, int64_t nr, int64_t* left_index, int64_t* right_index, int64_t capacity);

}  // namespace gsearch::bench::merge_peers
