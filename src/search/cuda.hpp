#pragma once
/// \file
/// The CUDA backend of the batched search, as the public API sees it: host-compilable
/// declarations (no CUDA headers), defined in src/cuda/ (a build without CUDA never calls them:
/// src/on_backend.hpp throws first).

#include <cstdint>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"
#include "cuda/launch.hpp"  // set_shared_limit_override, for the tests
#include "cuda/launch_gate.hpp"

struct CUstream_st;

namespace gsearch::cuda_backend {

/// out[j] = result of query j, enqueued on `stream`. Device pointers. `algo` may be auto_, which
/// takes only algorithms whose temporary memory is at most max_temp_bytes; an explicit `algo`
/// that would allocate more throws invalid_argument naming the cap (search_options::max_temp_bytes).
template <class T, class Out>
void search(CUstream_st* stream, side s, algorithm algo, const T* keys, int64_t k,
            const T* queries, int64_t n, Out* out, int64_t max_temp_bytes);

/// search() for search_options::queries_order::detect where sorted_search_pays: one check of the
/// queries' order on the device, then the sorted search (Merge Path) and the search of `algo`,
/// both enqueued and each gated on the check's answer (launch_gate.hpp). Nothing waits, and
/// unsorted queries are read only until the check meets a pair out of order (about one tile a
/// block); sorted ones once by the check and once by the sorted search. Temporary memory: the
/// larger of the two searches' (the sorted one's is freed, in stream order, before the other's
/// is taken) and detect_word_bytes.
inline constexpr int64_t detect_word_bytes = 16;
template <class T, class Out>
void search_detecting_order(CUstream_st* stream, side s, algorithm algo, const T* keys, int64_t k,
                            const T* queries, int64_t n, Out* out, int64_t max_temp_bytes);

/// The temporary device memory (bytes, from the stream-ordered pool) the search with `algo` (not
/// auto_) allocates for k keys of key_bytes bytes and q queries on the current device: the index's
/// layout (about a copy of the keys), the partitioned search's splitters, count matrix, scan
/// scratch and grouped queries of one window (10 or 18 bytes a query); 0 for the others. Sized
/// for the integer key type of that size; other types of that size differ by a few bytes at most.
int64_t temp_bytes(algorithm algo, int key_bytes, int64_t k, int64_t q);
/// The temporary device memory of the sorted-query search (search_options::queries_sorted): 8
/// bytes per tile of sorted_search_config's merged keys and queries.
int64_t sorted_temp_bytes(int key_bytes, int64_t k, int64_t q);
/// Whether search_options::queries_sorted = detect should look at q queries of k keys of
/// key_bytes bytes on the current device (tuning_search.hpp's sorted_detect_* rule).
bool sorted_search_pays(int key_bytes, int64_t k, int64_t q);

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
/// q queries on the current device, leaving out what allocates more than max_temp_bytes.
algorithm resolve(algorithm requested, int key_bytes, int64_t k, int64_t q, int64_t max_temp_bytes);

/// Instantiates the entry points above for key type T (both output types): the one list that
/// src/search/cuda/search.cu expands for every key type.
#define GSEARCH_CUDA_BACKEND_INSTANTIATE(T)                                                      \
  template void search<T, int64_t>(CUstream_st*, side, algorithm, const T*, int64_t, const T*,  \
                                   int64_t, int64_t*, int64_t);                                 \
  template void search<T, int32_t>(CUstream_st*, side, algorithm, const T*, int64_t, const T*,  \
                                   int64_t, int32_t*, int64_t);                                 \
  template void search_detecting_order<T, int64_t>(CUstream_st*, side, algorithm, const T*, int64_t, \
                                                   const T*, int64_t, int64_t*, int64_t);            \
  template void search_detecting_order<T, int32_t>(CUstream_st*, side, algorithm, const T*, int64_t, \
                                                   const T*, int64_t, int32_t*, int64_t);            \
  template bool is_sorted<T>(CUstream_st*, const T*, int64_t);                                  \
  template bool is_sorted_rows<T>(CUstream_st*, const T*, int64_t, int64_t);                    \
  template void search_rows<T, int64_t>(CUstream_st*, side, algorithm, int64_t, const T*,        \
                                        int64_t, const T*, int64_t, int64_t*);                   \
  template void search_rows<T, int32_t>(CUstream_st*, side, algorithm, int64_t, const T*,        \
                                        int64_t, const T*, int64_t, int32_t*);

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
