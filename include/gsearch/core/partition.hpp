#pragma once
/// \file
/// Partitioned search (algorithm::partitioned), the arithmetic both backends share. The k sorted
/// keys are cut into buckets of `chunk` consecutive keys; the key that opens each bucket but the
/// first is a splitter. A query's bucket is the number of splitters before it (a search over
/// the splitters), and its rank is the bucket's first index plus its rank among the bucket's
/// keys. The backends group the queries by bucket (a count, a scan and a scatter), so that each
/// bucket's keys are read once for all its queries: into shared memory by a GPU block, into the
/// cache by a CPU thread; then write each result back at its query's position.
///
/// Why the rank is exact: with `before` monotone over the sorted keys, bucket b >= 1 means the
/// splitter keys[b * chunk] is before q, so are all keys in front of it; and the next splitter,
/// keys[(b + 1) * chunk], is not, nor any key behind it. So the keys before q are the first
/// b * chunk keys and those before q among bucket b's own keys.

#include <cstdint>

#include "gsearch/core/config.hpp"
#include "gsearch/core/pbs.hpp"

namespace gsearch::core {

/// A backend's partitioning, runtime values so that tests and sweeps can vary them without
/// recompiling (the library's: src/search/tuning_partitioned.hpp's partitioned_config,
/// src/cpu/tuning.hpp's cpu_partitioned_config).
struct partition_config {
  int64_t chunk_bytes;  ///< bytes of keys per bucket (staged in shared memory, or cached, per bucket)
  int64_t max_buckets;  ///< past chunk x max_buckets keys the chunks grow instead (GPU: leave shared memory)
  int64_t window;       ///< queries grouped and searched at a time (at most 2^30)
  int piece;            ///< GPU: grouped queries a block of the bucket search takes
};

/// How k keys are cut into buckets: `chunk` keys per bucket (the last may hold fewer), at most
/// `max_buckets` buckets: past chunk x max_buckets keys the chunks grow instead (the bucket
/// counters and the splitters live in shared memory on the GPU). k = 0 is one empty bucket.
struct partition_shape {
  int64_t k = 0;
  int64_t chunk = 1;    ///< keys per bucket
  int64_t buckets = 1;  ///< ceil(k / chunk), at least 1

  constexpr partition_shape() = default;
  constexpr partition_shape(int64_t keys, int64_t preferred_chunk, int64_t max_buckets) : k(keys) {
    chunk = preferred_chunk < 1 ? 1 : preferred_chunk;
    if (max_buckets < 1) max_buckets = 1;
    if ((k + chunk - 1) / chunk > max_buckets) chunk = (k + max_buckets - 1) / max_buckets;
    buckets = k <= chunk ? 1 : (k + chunk - 1) / chunk;
  }
  /// Index of bucket b's first key.
  GSEARCH_HD constexpr int64_t begin(int64_t b) const { return b * chunk; }
  /// Keys in bucket b.
  GSEARCH_HD constexpr int64_t size(int64_t b) const {
    const int64_t rest = k - b * chunk;
    return rest < chunk ? rest : chunk;
  }
  /// Splitters: buckets - 1, splitter j being key (j + 1) x chunk.
  GSEARCH_HD constexpr int64_t splitters() const { return buckets - 1; }
  GSEARCH_HD constexpr int64_t splitter_key(int64_t j) const { return (j + 1) * chunk; }
};

/// The buckets of N queries: the number of splitters before each, by algorithm A over the m
/// splitters that `splitters(i)` reads: the branch-free binary search (the CPU's; it reads i in
/// [0, m)), or PBS-CL run by lane `lane` of a warp (the GPU's, over splitters staged in shared
/// memory with pbs.hpp's padding sentinels).
template <int N, algorithm A = algorithm::binary, class Accessor, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void bucket_n(const Accessor& splitters, Index m, const Pred (&before)[N],
                                             Index (&bucket)[N], int lane = 0) {
  search_ranks<A, N>(splitters, m, before, lane, bucket);
}

/// The rank of a query from its bucket and its rank among that bucket's keys.
GSEARCH_HD GSEARCH_FORCEINLINE constexpr int64_t bucket_rank(const partition_shape& shape, int64_t bucket,
                                                             int64_t local_rank) {
  return shape.begin(bucket) + local_rank;
}

}  // namespace gsearch::core
