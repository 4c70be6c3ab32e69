#pragma once
// The GPU peers search_bench (and index_bench) measure beside gsearch's batched search, behind a
// host-compilable interface:
//   search_peers.cu     (the CUDA toolkit's CCCL): the vectorized roofline copy, thrust::upper_bound;
//   cub_search_peer.cu  (the newer CCCL of scripts/fetch-cccl.sh, cccl.hpp): cub::DeviceFind::
//                       UpperBound, and the sort + UpperBoundSortedValues + scatter pipeline;
//   search_sweep.cu     gsearch's own kernels at launch configurations other than the tuned one
//                       (search_bench --sweep).
// Every function enqueues one run on `stream`; device pointers throughout; outputs are int32 (the
// peers' fastest form, as in PEERS-H100.md). The CUB ones throw without the newer CCCL
// (bench::new_cccl_available() is false).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"

struct CUstream_st;

namespace gsearch::bench::search_peers {

/// Reads n keys of type T and writes n int32, 16 bytes per access: the memory roofline of a
/// search that reads each query once and writes each result once.
template <class T>
void roofline_copy(CUstream_st* stream, const T* in, int64_t n, int32_t* out);

/// thrust::upper_bound(keys, keys + k, queries, queries + n, out), CUDA toolkit's CCCL.
template <class T>
void thrust_upper_bound(CUstream_st* stream, const T* keys, int64_t k, const T* queries, int64_t n,
                        int32_t* out);

/// cub::DeviceFind::UpperBound from the newer CCCL. temp: at least cub_temp_bytes().
template <class T>
size_t cub_temp_bytes(const T* keys, int64_t k, const T* queries, int64_t n, int32_t* out);
template <class T>
void cub_upper_bound(CUstream_st* stream, void* temp, size_t temp_bytes, const T* keys, int64_t k,
                     const T* queries, int64_t n, int32_t* out);

/// Issue 9's peer for unsorted queries: sort the queries (cub::DeviceRadixSort::SortPairs of
/// (query, position)), cub::DeviceFind::UpperBoundSortedValues of the sorted queries, then scatter
/// each result to its query's position. `temp` holds cub_sort_search_bytes(k, n) bytes (sorted
/// copies, positions, ranks and CUB's own temporary storage).
template <class T>
size_t cub_sort_search_bytes(const T* keys, int64_t k, int64_t n);
template <class T>
void cub_sort_search_scatter(CUstream_st* stream, void* temp, size_t temp_bytes, const T* keys, int64_t k,
                             const T* queries, int64_t n, int32_t* out);

/// A launch configuration of gsearch's shared-memory kernel that the sweep can run.
struct kernel_config {
  algorithm algo;
  int threads;
  int items;
  int copies;  ///< replicas of the keys (PBS-CL), 1 otherwise
};
/// The configurations compiled into the sweep (for 4- and 8-byte keys: int32_t, int64_t).
std::vector<kernel_config> sweep_configs();
/// gsearch's upper_bound with an explicit kernel configuration (one of sweep_configs()).
template <class T>
void gsearch_upper_bound_with(CUstream_st* stream, kernel_config cfg, const T* keys, int64_t k,
                              const T* queries, int64_t n, int32_t* out);

}  // namespace gsearch::bench::search_peers
