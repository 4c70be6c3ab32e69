#pragma once
/// \file
/// The CPU backend of the batched search (instantiated in src/search/cpu.cpp for every key and
/// output type). Arguments are validated by the public API (src/search/api.cpp) before they get here.

#include <cstdint>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/partition.hpp"
#include "cpu/tuning.hpp"  // cpu_partitioned_config

namespace gsearch::cpu_backend {

/// out[j] = result of query j. `algo` may be auto_ (resolve): binary is the CPU's own fast path
/// (branch-free, all cores); pbs / pbs_cf / pbs_cl run the per-lane GPU code, query j on lane
/// j % 32 of a simulated warp, over keys padded as the GPU stages them (a copy, or the keys in
/// place through a bounded accessor where the copy would exceed max_temp_bytes). index and
/// partitioned allocate (temp_bytes): with more than max_temp_bytes they throw invalid_argument
/// naming the cap.
template <class T, class Out>
void search(int threads, side s, algorithm algo, const T* keys, int64_t k, const T* queries,
            int64_t n, Out* out, int64_t max_temp_bytes);

/// The temporary host memory the search with `algo` allocates for k keys of key_bytes bytes and
/// q queries on `threads` threads (0: all), with no cap: the index's layout (about a copy of the
/// keys), the partitioned search's window (partitioned_temp_bytes), pbs / pbs_cf / pbs_cl's padded
/// copy of the keys; 0 for binary and pary. auto_ is resolved first (with no cap).
int64_t temp_bytes(int threads, algorithm algo, int key_bytes, int64_t k, int64_t q);

/// The partitioned search (algorithm::partitioned, src/search/cpu_partitioned.cpp): queries grouped by
/// bucket of keys, each bucket searched for all its queries while it is in cache.
template <class T, class Out>
void partitioned_search(int threads, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                        const core::partition_config& cfg = cpu_partitioned_config);
/// Its temporary memory: the splitters, and for a window of min(n, cfg.window) queries their
/// buckets, grouped copies and positions (12 + key_bytes bytes a query) and the per-thread bucket
/// counters (8 bytes per bucket and thread).
int64_t partitioned_temp_bytes(int threads, int key_bytes, int64_t k, int64_t n,
                               const core::partition_config& cfg = cpu_partitioned_config);

/// Row-batched search: out[r * m + j] = result of queries[r * m + j] in row r of keys (rows x k,
/// row-major). All cores over the flat range of rows * m queries; the same per-lane functions
/// (pbs / pbs_cf / pbs_cl: a padded copy of a row per thread, or none where those copies would
/// exceed max_temp_bytes).
template <class T, class Out>
void search_rows(int threads, side s, algorithm algo, int64_t rows, const T* keys, int64_t k,
                 const T* queries, int64_t m, Out* out, int64_t max_temp_bytes);

/// What algorithm::auto_ means on the CPU for k keys and q queries: the static index where its
/// build pays for itself (cpu_index_rules, src/cpu/tuning.hpp) and its layout is within
/// max_temp_bytes, else the branch-free binary search.
algorithm resolve(algorithm requested, int key_bytes, int64_t k, int64_t q, int64_t max_temp_bytes);

/// keys sorted in the order of key_traits.hpp.
template <class T>
bool is_sorted(const T* keys, int64_t k);

/// Each of the `rows` rows of k keys sorted.
template <class T>
bool is_sorted_rows(const T* keys, int64_t rows, int64_t k);

}  // namespace gsearch::cpu_backend
