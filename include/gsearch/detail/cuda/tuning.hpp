#pragma once
/// \file
/// Launch parameters and the `auto` choice, as data. The numbers come from the H100 runs under
/// bench/results/h100/ (see docs/perf-notes.md); change them only with a measurement.

#include <cstdint>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/partition.hpp"
#include "gsearch/core/pbs.hpp"

namespace gsearch::cuda_backend {

/// What the dispatcher needs to know of the current device.
struct device_limits {
  int device = 0;  ///< the CUDA device these are of
  int sms = 0;
  int64_t max_shared_per_block = 0;  ///< the opt-in maximum (227 KB on the H100)
};

/// How a search kernel is launched: both are compile-time parameters of the kernel.
struct launch_config {
  int threads;  ///< threads per block (a multiple of 32); also the kernel's __launch_bounds__
  int items;    ///< queries per thread searched in lockstep (independent reads in flight)
  /// Resident blocks per SM the kernel's registers are capped for (__launch_bounds__' second
  /// argument), used by the merge-like tile kernels. 0 leaves the compiler free, which is not
  /// what 1 does: with a minimum of 1 nvcc allows up to 255 registers, and the merge tile took 96
  /// of them and ran 40% slower (merge-sweep-6.json, the rows with min_blocks 1).
  int min_blocks = 0;
};

/// The configuration the library's kernels are compiled with, per algorithm and key size, for
/// keys in shared memory. Global-memory search always runs global_config.
///
/// 1024 threads x 4 queries per thread: the best or within 3% of the best of the 11 swept
/// configurations (256/512/1024 threads x 1/2/4/8 queries) for PBS, PBS-CF and PBS-CL, 4- and
/// 8-byte keys, K from 1,024 to the shared-memory maximum, on the H100
/// (bench/results/h100/tuning/sweep-2-*.json, docs/perf-notes.md). Four independent searches per
/// thread hide the shared-memory latency; 1024-thread blocks keep 32 warps per SM even when the
/// keys take more than half of the SM's shared memory and only one block fits.
template <algorithm A, int KeyBytes>
inline constexpr launch_config shared_config = {1024, 4};
inline constexpr launch_config global_config = {512, 1};

/// The row-batched search (search_rows_kernel.cuh): 256 threads x 8 queries per thread, a tile
/// of 2,048 queries and as many whole rows as it holds. Within 5% of the best of the 8 swept
/// configurations (128-1024 threads x 4-8 queries) on each of the four shapes of the H100 sweep,
/// float32 (bench/results/h100/tuning/rows-sweep-3.json; -1 and -2 are earlier kernels;
/// docs/perf-notes.md):
/// smaller blocks than the 1-D search because a block stages its rows and waits at a barrier
/// once per tile, and with short rows (64 keys, 128 queries) tiles are small, so many blocks per
/// SM keep the chip busy through the barriers; 8 queries per thread keep 8 loads in flight.
/// 128 x 8 is 2% faster on 64-key rows and 5% faster on 1K-key rows, 17% slower on 16K-key rows.
template <int KeyBytes>
inline constexpr launch_config rows_config = {256, 8};

/// Rows too long for shared memory (search_rows_global_kernel): 512 threads x 4 queries, four
/// independent global-memory searches in flight per thread. A choice, not a measurement: no
/// benchmark shape has rows this long, so it has not been swept.
inline constexpr launch_config rows_global_config = {512, 4};

/// The tuned scan of find first / any / count (find_kernel.cuh's scan_kernel): 1024 threads,
/// each with 4 16-byte loads in flight per tile (a tile of 64 KB), the grid filling the chip,
/// hits learnt through a barrier per tile (hit_check::barrier). On 2^28 int32, H100: no match,
/// first 0.346 ms and count 0.346 ms against a read roofline of 0.343 ms measured beside them;
/// the only match at 0 or at N/100, first in 12.9 / 13.9 us, where checking a tile late
/// (hit_check::lagged) took 23.5 / 26.8 us and read a second wave of tiles
/// (bench/results/h100/tuning/find-sweep-5.json; -1 to -3 are earlier kernels; docs/perf-notes.md,
/// "Unsorted search"). 1024 x 2 is faster with an early match (8.3 / 11.8 us) and 0.6% slower
/// without; 256 x 4 and 512 x 4 are within 1% without a match.
inline constexpr launch_config find_scan_config = {1024, 4};
/// The tiles whose matches find_random and find_all count, and whose indices find_all writes:
/// 256 threads x 4 16-byte loads, a tile of 4,096 int32. Smaller tiles than the scan's so that,
/// with rare matches, find_all's second pass re-reads few bytes (at 1 match in 10^5 elements,
/// 4% of the tiles hold one); count at this configuration ran at 99.9% of the roofline
/// (find-sweep-3.json, 256 x 4).
inline constexpr launch_config find_tiles_config = {256, 4};
/// isin's hash-set probe (isin_kernel.cuh): 256 threads x 4 elements per thread, whose first
/// slot reads are issued together (four independent L2 reads in flight per thread).
inline constexpr launch_config isin_hash_config = {256, 4};
/// Threads per block of seeds/001's study kernels (find_strategy other than auto_).
inline constexpr int study_threads = 256;

/// Replicas of the keys PBS-CL stages for its stage 2 (core::pbs_cl_n): 2 when two padded copies
/// fit in shared memory, else 1. Two copies cut the worst case of stage 2 from 31 to 16 passes
/// per warp; on the H100 that brings worst-case queries to within 2% of random ones (from 30-37%
/// slower), for 3-14% less throughput on random queries (int32 K = 1,024: 282 vs 322 G queries/s).
/// Four copies (9 passes) measured slower than two on both (bench/results/h100/tuning/sweep-4-*;
/// docs/perf-notes.md), so the kernels are compiled for 1 and 2.
template <class T>
constexpr int pbs_cl_copies(int64_t k, int64_t max_shared_per_block) {
  return core::replicated_size<T>(k, 2) * int64_t(sizeof(T)) <= max_shared_per_block ? 2 : 1;
}

/// When the static index, built for the call, beats the binary search beyond shared memory: q >=
/// k / keys_per_query from min_keys keys on. One-shot index against binary, int32, H100
/// (index-sweep-3.json, qsweep rows; binary / index time): K = 2^20: 0.47 at Q = K/8, 1.58 at K;
/// 2^24: 0.79 at K/16, 1.84 at K/2; 2^26: 0.79 at K/8 (with the staging since replaced; about
/// 1.3 expected now), 2^27: 0.24 at K/128, 1.15 at K/16. The build is a copy of the keys plus
/// a pool allocation (13 us at 2^20, 0.87 ms at 2^27), which few queries do not pay back.
struct index_auto_rule {
  int64_t min_keys;
  int64_t keys_per_query;
};
inline constexpr index_auto_rule index_auto_rules[] = {{int64_t{1} << 25, 16}, {int64_t{1} << 22, 4}, {0, 2}};

/// P-ary search (algorithm::pary): 128 threads, four warps, one query each.
inline constexpr int pary_threads = 128;
/// auto takes the P-ary search for at most this many queries in keys beyond shared memory: each
/// query has its own warp, far from filling the device, so the response time of one query is
/// what counts. In-kernel, one query, int32, warm caches: warp P-ary 1.8 / 2.2 / 3.1 us at K = 2^20
/// / 2^24 / 2^30, the one-thread binary search 3.4 / 6.0 / 9.0 us; end to end (launch, wait,
/// copy back) 21.2 / 21.1 / 21.7 against 23.7 / 26.0 / 28.8 us (bench/results/h100/pary.json).
/// Where more queries start to fill the device has not been measured: 32 is a safe side.
inline constexpr int64_t pary_auto_max_queries = 32;

/// When the partitioned search (algorithm::partitioned) beats the one-shot index and the binary
/// search beyond shared memory: q >= 2^20 and q >= k x 2^query_shift (k / 2^-query_shift for a
/// negative shift) from min_keys keys on. int32, H100, the configuration below (partitioned against
/// the better of index and binary, ms; bench/results/h100/tuning/partition-qsweep-1.json): K =
/// 2^20: 0.095 vs 0.064 at Q = K, 0.274 vs 0.336 at 8K, 2.13 vs 2.34 at 64K; K = 2^24: 0.143 vs
/// 0.160 at K/16, 0.442 vs 0.692 at K/2; 2^26: 0.313 vs 0.237 at K/64, 0.668 vs 1.45 at K/8;
/// 2^27: 0.551 vs 0.337 at K/128, 0.924 vs 2.48 at K/16. 8-byte keys at Q = 2^27 (index.json, G
/// queries/s against the one-shot index): 2^20 22.0 vs 23.1 (the index keeps it), 2^22 18.3 vs
/// 16.4, 2^24 14.7 vs 8.9, 2^27 5.6 vs 5.0; so the row for 2^20 keys is 4-byte keys' only.
struct partitioned_auto_rule {
  int64_t min_keys;
  int query_shift;
};
inline constexpr int64_t partitioned_auto_min_queries = int64_t{1} << 20;
inline constexpr partitioned_auto_rule partitioned_auto_rules_4[] = {{int64_t{1} << 22, -4}, {int64_t{1} << 20, 3}};
inline constexpr partitioned_auto_rule partitioned_auto_rules_8[] = {{int64_t{1} << 22, -4}};

/// True when auto takes the partitioned search for k keys (beyond shared memory) and q queries.
constexpr bool partitioned_auto(int key_bytes, int64_t k, int64_t q) {
  if (q < partitioned_auto_min_queries) return false;
  auto first_match = [&](const auto& rules) {
    for (const partitioned_auto_rule& r : rules)
      if (k >= r.min_keys) return r.query_shift >= 0 ? q / (int64_t{1} << r.query_shift) >= k : q >= (k >> -r.query_shift);
    return false;
  };
  return key_bytes <= 4 ? first_match(partitioned_auto_rules_4) : first_match(partitioned_auto_rules_8);
}

/// The algorithm `auto_` picks for k keys and q queries: keys in shared memory -> PBS-CL (the
/// paper's best); larger key lists -> P-ary for a few queries (q known and at most
/// pary_auto_max_queries), the partitioned search for many (partitioned_auto), the static index by
/// index_auto_rules, else the branch-free binary search in global memory.
/// `partitioned_ok` false (the device's shared memory would not keep the tuned pipeline's buckets
/// staged: partitioned_fits in src/cuda/partitioned.cu; or its temporary memory is over
/// search_options::max_temp_bytes) and `index_ok` false (the index's copy of the keys is over the
/// cap) leave those out: the rules fall through to the next choice, the index or binary.
constexpr algorithm auto_choice(int key_bytes, int64_t k, int64_t q, int64_t max_shared_per_block,
                                bool partitioned_ok = true, bool index_ok = true) {
  const int64_t staged = (k + 2 * warp_width) * key_bytes;
  if (staged <= max_shared_per_block) return algorithm::pbs_cl;
  if (q >= 0 && q <= pary_auto_max_queries) return algorithm::pary;
  if (partitioned_ok && partitioned_auto(key_bytes, k, q)) return algorithm::partitioned;
  for (const index_auto_rule& r : index_auto_rules)
    if (k >= r.min_keys) return index_ok && q >= k / r.keys_per_query ? algorithm::index : algorithm::binary;
  return algorithm::binary;
}

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

/// The merge tiles (merge_kernel.cuh: merge, the merge-sort passes and the block sort; the joins'
/// expansion, join_kernel.cuh): threads per block and elements per thread of a tile staged in
/// shared memory, as in moderngpu and CUB's merge. The set operations and the sorted search have
/// their own entries below. The item counts are odd so a thread's run of `items` consecutive
/// shared-memory words (the transposes between the staged tile and the per-thread registers)
/// falls on distinct banks. 4-byte keys: 256 x 19, the best of the 11 shapes swept (128-512
/// threads x 7-23 items) for merge (0.413 ms; 256 x 23 0.412, 256 x 15 0.436, the worst 0.527)
/// of 2 x 2^26 int32 on the H100 (bench/results/h100/tuning/merge-sweep-5.json, the kernels with
/// cp.async staging and serial_merge_staged; merge-sweep-4.json chose the same shape for the
/// kernels before them; docs/perf-notes.md "Merge"). More items per thread mean fewer per-thread
/// splits and fewer tiles, until registers and shared memory cut the blocks per SM. 8-byte keys:
/// 256 x 7, about the bytes per tile of 256 x 15 int32; not yet swept.
template <int KeyBytes>
inline constexpr launch_config merge_config = KeyBytes <= 4 ? launch_config{256, 19}
                                                            : launch_config{256, 7};
/// The set operations (set_ops_kernel.cuh): 4-byte keys 256 x 23 with registers capped for 6
/// blocks per SM (40 registers, 32 bytes spilled): union 0.574 ms, intersection 0.381, against
/// 0.568 and 0.403 at 256 x 19 x 6 and 0.683 and 0.530 at 256 x 19 with min_blocks 1
/// (merge-sweep-6.json: 2 x 2^26 int32, H100). 8-byte keys: merge_config's shape, not yet swept.
template <int KeyBytes>
inline constexpr launch_config set_op_config = KeyBytes <= 4 ? launch_config{256, 23, 6}
                                                             : launch_config{256, 7};
/// The search of sorted queries (sorted_search_kernel.cuh): 256 x 19 for 4-byte keys, the best
/// of the same sweep (0.440 ms for 2^27 queries in 2^24 keys; 256 x 15 0.455, 256 x 11 0.453,
/// the worst 0.502; merge-sweep-4 had preferred 256 x 15 before the staging changes).
template <int KeyBytes>
inline constexpr launch_config sorted_search_config = KeyBytes <= 4 ? launch_config{256, 19}
                                                                   : launch_config{256, 7};

/// The static index's search (static_index_kernel.cuh): threads per block, queries per thread
/// walked in lockstep, and the most bytes of the tree's top levels a block stages in shared
/// memory (whole levels: fewer when the next level would not fit). 1024 x 4 with 96 KB, 16-byte
/// nodes (4 int32 keys), int32, Q = 2^27: 29.2 / 16.0 / 11.6 / 9.8 G queries/s at K = 2^20 / 2^24 /
/// 2^26 / 2^27 (bench/results/h100/tuning/index-sweep-3.json), within 3% of the best of the 20
/// 16-byte-node shapes of index-sweep-2 at 2^20 and 2^27 and 11% under it at 2^24. Larger
/// budgets stage a level of 5-11K nodes at some K: 160 KB gains that 11% at 2^24 but halves 2^26
/// (5.4 G queries/s: its 5.4K-node level staged), 220 KB loses 2.4x at 2^27; and budgets that
/// leave one block of 256 threads per SM lose 2x (the walk is latency-bound). 8-byte keys (16-byte
/// nodes of 2 keys) take 160 KB: int64 30.1 / 16.4 / 9.1 / 6.8 / 5.8 G queries/s at K = 2^20 / 2^22
/// / 2^24 / 2^26 / 2^27 (index.json of 5065d45, run at 160 KB for both key sizes) against 23.3 /
/// 16.4 / 9.0 / 6.8 / 5.7 at 96 KB (index.json of 6bb315f).
inline constexpr launch_config index_config = {1024, 4};
template <int KeyBytes>
inline constexpr int64_t index_shared_bytes = KeyBytes <= 4 ? 96 * 1024 : 160 * 1024;

}  // namespace gsearch::cuda_backend
