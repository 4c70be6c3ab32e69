#pragma once
/// \file
/// The CUDA backend's tuning data for the partitioned search (partition_kernel.cuh): the bucket
/// configuration, the kernels' tiles, their shared memory, and how the shape is fitted to the
/// device's shared memory (fit_partition). When `auto` takes it: src/search/tuning.hpp.
/// The numbers come from the H100 runs under bench/results/h100/ (see docs/perf-notes.md); change
/// them only with a measurement.
///
/// Host-compilable: plain C++ with no CUDA headers, so g++ code (the tests' tile sizes, bench
/// drivers) reads the same constants the kernels are compiled with.

#include <cstdint>

#include "gsearch/core/config.hpp"
#include "gsearch/core/partition.hpp"
#include "cuda/tuning_common.hpp"

namespace gsearch::cuda_backend {

/// Partitioned search (partition_kernel.cuh, core::partition_config): 192 KB of keys a bucket
/// (about the most that PBS-CL stages in one copy on the H100; devices with less shared memory
/// stage smaller buckets: fit_partition), windows of 2^22 queries, pieces of 32,768
/// grouped queries a search block. The best of partition-sweep-4 (7 configurations; int32 and
/// int64, K = 2^20, 2^24, 2^27, Q = 2^27, H100, count and scatter 512 x 8; bench/results/h100/
/// tuning/) but at int64 2^27 (24.1 ms; the best, 22.6, with 128 KB and windows of 2^23): int32
/// 4.29 / 6.92 / 14.4 ms, int64 6.41 / 9.47 / 24.1 (with the shapes below, index.json: 6.10 /
/// 9.15 / 23.8). Larger buckets mean fewer splitters to search, fewer runs for the scatter
/// and fewer stagings; pieces of 65,536 leave SMs idle (4.69 against 4.33 ms at int32 2^20, 128
/// KB); windows of 2^22 keep most of a window's data in L2 (2^23: 5.18 against 4.33).
template <int KeyBytes>
inline constexpr core::partition_config partitioned_config = {192 * 1024, 16384, int64_t{1} << 22, 32768};
/// Windows of 2^24 queries where the keys take 1 GiB or more (8-byte keys from K = 2^27): every
/// window stages all the buckets, so it reads all the keys once, and fewer windows read them
/// fewer times. partitioned_config otherwise. Measured (bench/results/h100/issue24/
/// psweep-windows-<commit>.json; 192 KB buckets, pieces of 32,768, Q = 2^27, windows of 2^22 /
/// 2^23 / 2^24 / 2^25): int64 K = 2^27 (1 GiB) 23.8 / 20.1 / 20.0 / 19.5 ms; int32 K = 2^27
/// (512 MB) 13.7 / 13.7 / 15.8 / 16.0 (a larger window's grouped queries no longer sit in L2);
/// K = 2^24 int32 6.6 / 6.9 / 10.4 / 11.0, int64 9.1 / 10.1 / 13.1 / 13.6. 2^24 rather than 2^25:
/// within 3% with half the temporary memory.
inline constexpr int64_t partitioned_large_window = int64_t{1} << 24;
inline constexpr int64_t partitioned_large_window_from_bytes = int64_t{1} << 30;
template <int KeyBytes>
constexpr core::partition_config partitioned_config_for(int64_t k) {
  core::partition_config c = partitioned_config<KeyBytes>;
  if (k * KeyBytes >= partitioned_large_window_from_bytes) c.window = partitioned_large_window;
  return c;
}
/// The partition kernels' tile (count and scatter: threads x queries per thread) and the bucket
/// search's (PBS-CL over a staged bucket). partition-sweep-3.json (6 shapes x 5 configurations):
/// 4-byte keys 512 x 8 (4.35 / 7.36 ms at K = 2^20 / 2^24 against 4.58 / 7.47 for 1024 x 4; 3%
/// behind it at 2^27), 8-byte keys 1024 x 4 (9.86 / 25.9 ms at 2^24 / 2^27 against 10.25 / 27.2;
/// 5% behind 512 x 4 at 2^20). The bucket search keeps 1024 x 4 (512 x 8 and 1024 x 8 slower at
/// every point).
template <int KeyBytes>
inline constexpr launch_config partition_tile = KeyBytes <= 4 ? launch_config{512, 8} : launch_config{1024, 4};
inline constexpr launch_config bucket_tile = {1024, 4};
/// The count and scatter kernels' tile where partition_tile's leaves too few buckets in the
/// device's shared memory (a tile of 4,096 8-byte keys' grouped queries is 72 KB: more than a
/// 48 KB device has): 1,024 queries, 10-18 KB. Not measured; auto never takes it (partitioned_fits).
inline constexpr launch_config partition_small_tile = {256, 4};

/// The most buckets the GPU pipeline takes: bucket numbers are kept in 2 bytes, and the count
/// and scatter kernels keep a counter or two per bucket in shared memory.
inline constexpr int64_t partition_max_buckets = 16384;

/// Dynamic shared memory of the partition kernels (partition_kernel.cuh), by key size: the count
/// kernel stages the m splitters padded for PBS-CL and m + 1 counters; the scatter kernel a tile
/// of grouped queries (8 bytes with 4-byte keys, 16 with 8-byte keys) and their 2-byte buckets,
/// and 2 x buckets + 1 counters.
constexpr int64_t grouped_query_bytes(int key_bytes) { return key_bytes <= 4 ? 8 : 16; }
constexpr int64_t partition_count_smem(int key_bytes, int64_t splitters) {
  return (splitters + 2 * warp_width) * key_bytes + (splitters + 1) * 4;
}
constexpr int64_t partition_scatter_smem(int key_bytes, int64_t tile, int64_t buckets) {
  return tile * (grouped_query_bytes(key_bytes) + 2) + (2 * buckets + 1) * 4;
}

/// How the partitioned search runs k keys of key_bytes bytes on a device whose blocks have
/// `limit` bytes of shared memory (the opt-in maximum, or the testing override: search.hpp's
/// shared_limit_override): fit_partition's answer.
struct partition_fit {
  core::partition_shape shape;  ///< buckets of shape.chunk keys (more than one: the pipeline runs)
  bool small_tile = false;      ///< count and scatter run partition_small_tile, not the tuned tile
  bool staged = true;           ///< each bucket's keys fit in shared memory (else the bucket search reads global memory)
  bool ok = true;               ///< false: not even two buckets' counters fit; the pipeline cannot run
};

/// The buckets the count and scatter kernels hold in `limit` bytes with a tile of `tile` queries
/// (their static shared memory: count_static, scatter_static bytes), at most max_buckets.
constexpr int64_t partition_bucket_room(int key_bytes, int64_t limit, int64_t tile, int64_t max_buckets,
                                        int64_t count_static, int64_t scatter_static) {
  // count: (m + 64) kb + (m + 1) 4 <= limit - static, m = buckets - 1.
  const int64_t count_room = limit - count_static - 2 * warp_width * key_bytes - 4;
  const int64_t by_count = count_room < 0 ? 0 : count_room / (key_bytes + 4) + 1;
  // scatter: tile (g + 2) + (2 buckets + 1) 4 <= limit - static.
  const int64_t scatter_room = limit - scatter_static - tile * (grouped_query_bytes(key_bytes) + 2) - 4;
  const int64_t by_scatter = scatter_room < 0 ? 0 : scatter_room / 8;
  int64_t b = max_buckets < partition_max_buckets ? max_buckets : partition_max_buckets;
  if (by_count < b) b = by_count;
  if (by_scatter < b) b = by_scatter;
  return b;
}

/// The partitioned search's shape on a device with `limit` bytes of shared memory per block:
/// buckets of cfg.chunk_bytes of keys, or fewer where a bucket padded for PBS-CL would not fit
/// (163 KB on an A100 and 99 KB on an Ada card stage 162 KB and 98 KB buckets where the H100
/// stages 192 KB); as many buckets as the count and scatter kernels' counters leave room for with
/// the tuned tile (`tile` queries), or with the small tile (`small_tile` queries, 0 for none) when
/// only it keeps the buckets in shared memory; past that the chunks grow (core::partition_shape)
/// and the bucket search reads them from global memory. ok is false when neither tile holds the
/// counters of two buckets (only under limits far below any CUDA device's 48 KB).
constexpr partition_fit fit_partition(int key_bytes, int64_t k, int64_t limit, const core::partition_config& cfg,
                                      int64_t tile, int64_t small_tile, int64_t count_static, int64_t scatter_static,
                                      int64_t small_count_static, int64_t small_scatter_static) {
  int64_t chunk = cfg.chunk_bytes / key_bytes;
  const int64_t fits = limit / key_bytes - 2 * warp_width;  // keys PBS-CL stages in one copy
  if (chunk > fits) chunk = fits;
  if (chunk < 1) chunk = 1;
  const auto staged = [&](const core::partition_shape& s) { return (s.chunk + 2 * warp_width) * key_bytes <= limit; };
  partition_fit f;
  const int64_t tuned_room =
      partition_bucket_room(key_bytes, limit, tile, cfg.max_buckets, count_static, scatter_static);
  f.shape = core::partition_shape(k, chunk, tuned_room < 1 ? 1 : tuned_room);
  f.staged = staged(f.shape);
  if (tuned_room >= 2 && (f.staged || small_tile == 0)) return f;
  if (small_tile > 0) {
    const int64_t small_room = partition_bucket_room(key_bytes, limit, small_tile, cfg.max_buckets,
                                                     small_count_static, small_scatter_static);
    if (small_room >= 2 && (small_room > tuned_room)) {
      const core::partition_shape s(k, chunk, small_room);
      if (staged(s) || tuned_room < 2) {
        f.shape = s;
        f.staged = staged(s);
        f.small_tile = true;
        return f;
      }
    }
  }
  if (tuned_room >= 2) return f;  // neither keeps the buckets staged: the tuned tile, grown chunks
  // Room for one bucket only: fine when the keys are one chunk (the plain search), else no pipeline.
  f.shape = core::partition_shape(k, chunk, 1);
  f.staged = staged(f.shape);
  f.ok = k <= chunk;
  return f;
}

}  // namespace gsearch::cuda_backend
