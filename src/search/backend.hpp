#pragma once
/// \file
/// The batched search's backends: each operation once for the CPU (the handle: its thread count)
/// and CUDA (the stream), in lists that both backends instantiate (src/backend_ops.hpp says how):
/// the CPU's in cpu.cpp, CUDA's in cuda/search.cu (the gather's in cuda/gather.cu). Arguments are
/// validated by the public layer (api.cpp) before they get here. On CUDA the arrays are in device memory and calls are
/// enqueued on the stream; the ones that return an answer (is_sorted) wait for it.
///
///   search          out[j] = the search of queries[j] in keys[0, k) on side s. `algo` may be
///                   auto_ (resolve's choice, leaving out what allocates more than
///                   max_temp_bytes); an explicit `algo` that would allocate more throws
///                   invalid_argument naming the cap (search_options::max_temp_bytes). The CPU's
///                   binary search is branch-free on all cores; its pbs / pbs_cf / pbs_cl run the
///                   GPU's per-lane code, query j on lane j % 32 of a simulated warp.
///   search_rows     row-batched: out[r * m + j] = the search of queries[r * m + j] in row r of
///                   keys (rows x k, rows x m, row-major); index, partitioned and pary run binary
///                   (an index or a partition per row would not pay). The CPU's pbs forms copy a
///                   padded row per thread while the copies fit max_temp_bytes; CUDA's allocate
///                   nothing (the cap does not matter there).
///   is_sorted       keys[0, k) sorted in the order of key_traits.hpp
///   is_sorted_rows  each of the `rows` rows of k keys sorted
///   resolve         `requested`, or for auto_ the backend's choice (the CPU: cpu_index_rules,
///                   src/cpu/tuning.hpp; CUDA: search/tuning.hpp on the current device) for k keys
///                   of key_bytes bytes and q queries, leaving out what allocates more than
///                   max_temp_bytes
///   temp_bytes      the temporary memory the search with `algo` allocates, with no cap (auto_
///                   resolved first): the index's layout (about a copy of the keys), the
///                   partitioned search's window, the CPU's padded copy of the keys for pbs forms
///   gather_keys     sorter= (gsearch::search's overload with a sorter): copies keys[sorter[i]]
///                   for i in [0, k) into temporary memory of k keys (host memory; CUDA: the
///                   stream-ordered pool), checking every index against [0, k), then calls
///                   then(copy) while the copy lives (CUDA: then enqueues on the stream; the copy
///                   is freed in stream order after it). Returns -1 when every index was in
///                   range, else the least position i whose sorter[i] is not (then not called).
///                   k == 0: then(keys), nothing allocated. The CPU's body in cpu.cpp, CUDA's in
///                   cuda/gather.cu, which waits for the range check's answer (a host_wait_word).
///
/// CUDA's own (the CPU has no sorted-query detection to gate: its sorted search allocates nothing
/// and the public layer asks no question of it):
///
///   search_detecting_order  search() for queries_order::detect where sorted_search_pays: one check
///                   of the queries' order on the device, then the sorted search (Merge Path) and
///                   the search of `algo`, both enqueued and each gated on the check's answer
///                   (launch_gate.hpp). Nothing waits; unsorted queries are read only until the
///                   check meets a pair out of order (about one tile a block). Temporary memory:
///                   the larger of the two searches' and detect_word_bytes.
///   sorted_temp_bytes       the sorted-query search's temporary memory: 8 bytes per tile of
///                   sorted_search_config's merged keys and queries
///   sorted_search_pays      whether queries_order::detect should look at q queries of k keys
///                   (search/tuning.hpp's sorted_detect_* rule)

#include <cstdint>
#include <functional>

#include "backend_ops.hpp"
#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"

#define GSEARCH_SEARCH_OPS(X, T, Out)                                                                  \
  X(T, Out, void, search,                                                                               \
    (side s, algorithm algo, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,            \
     int64_t max_temp_bytes))                                                                           \
  X(T, Out, void, search_rows,                                                                          \
    (side s, algorithm algo, int64_t rows, const T* keys, int64_t k, const T* queries, int64_t m,        \
     Out* out, int64_t max_temp_bytes))

#define GSEARCH_SEARCH_CUDA_OPS(X, T, Out)                                                             \
  X(T, Out, void, search_detecting_order,                                                               \
    (side s, algorithm algo, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,            \
     int64_t max_temp_bytes))

#define GSEARCH_ORDER_OPS(X, T)                                                                        \
  X(T, bool, is_sorted, (const T* keys, int64_t k))                                                    \
  X(T, bool, is_sorted_rows, (const T* keys, int64_t rows, int64_t k))

#define GSEARCH_GATHER_OPS(X, T)                                                                       \
  X(T, int64_t, gather_keys,                                                                           \
    (const T* keys, int64_t k, const int64_t* sorter, const std::function<void(const T*)>& then))

// The CPU's search of few queries through the sorter, in place (search_through_sorter: what numpy
// does; the GPU gathers, at its bandwidth). Returns the least position of sorter its search read
// out of [0, k), or -1; writes `out` only when there is none.
#define GSEARCH_SORTER_CPU_OPS(X, T, Out)                                                              \
  X(T, Out, int64_t, search_through_sorter,                                                             \
    (side s, const T* keys, int64_t k, const int64_t* sorter, const T* queries, int64_t n, Out* out))

GSEARCH_DECLARE_BACKEND_RESULT_OPS(GSEARCH_SEARCH_OPS)
GSEARCH_DECLARE_CPU_RESULT_OPS(GSEARCH_SORTER_CPU_OPS)
GSEARCH_DECLARE_CUDA_RESULT_OPS(GSEARCH_SEARCH_CUDA_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_ORDER_OPS)
GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_GATHER_OPS)

GSEARCH_IN_BOTH_BACKENDS(
    algorithm resolve(handle h, algorithm requested, int key_bytes, int64_t k, int64_t q, int64_t max_temp_bytes,
                      bool float_keys);
    int64_t temp_bytes(handle h, algorithm algo, int key_bytes, int64_t k, int64_t q);)

namespace gsearch::cuda_backend {
inline constexpr int64_t detect_word_bytes = 16;
int64_t sorted_temp_bytes(int key_bytes, int64_t k, int64_t q);
bool sorted_search_pays(int key_bytes, int64_t k, int64_t q);
}  // namespace gsearch::cuda_backend
