#pragma once
/// \file
/// The CPU's partitioned search (algorithm::partitioned, src/search/cpu_partitioned.cpp), which the
/// CPU's search() runs and the tests call with small configurations: queries grouped by bucket of
/// keys, each bucket searched for all its queries while it is in cache. The operations the public
/// layer calls are in backend.hpp.

#include <cstdint>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/partition.hpp"
#include "cpu/tuning.hpp"  // cpu_partitioned_config

namespace gsearch::cpu_backend {

/// out[j] = the search of queries[j] on side s, by buckets of cfg.
template <class T, class Out>
void partitioned_search(int threads, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                        const core::partition_config& cfg = cpu_partitioned_config);
/// Its temporary memory: the splitters, and for a window of min(n, cfg.window) queries their
/// buckets, grouped copies and positions (12 + key_bytes bytes a query) and the per-thread bucket
/// counters (8 bytes per bucket and thread).
int64_t partitioned_temp_bytes(int threads, int key_bytes, int64_t k, int64_t n,
                               const core::partition_config& cfg = cpu_partitioned_config);

}  // namespace gsearch::cpu_backend
