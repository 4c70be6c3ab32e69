#pragma once
/// \file
/// The CUDA backend's tuning data for the search of sorted keys: the shared-memory and
/// global-memory kernels, PBS-CL's replicas, the row-batched search, the static index, the P-ary
/// search and the `auto` choice among all algorithms (with the partitioned search's auto rule;
/// its pipeline's shapes are in tuning_partitioned.hpp).
/// The numbers come from the H100 runs under bench/results/h100/ (see docs/perf-notes.md); change
/// them only with a measurement.
///
/// Host-compilable: plain C++ with no CUDA headers, so g++ code (the tests' tile sizes, bench
/// drivers) reads the same constants the kernels are compiled with.

#include <cstdint>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/config.hpp"
#include "gsearch/core/pbs.hpp"
#include "cuda/tuning_common.hpp"

namespace gsearch::cuda_backend {

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

/// When the search by sorting the queries (algorithm::merge: the queries sorted by bucket of
/// keys on 8 or 16 bits, each searched among its bucket's keys, the answers put back by windows)
/// beats the partitioned search and the index: its cost is one or two radix passes over the
/// queries whatever K, where theirs grows with K. The first rule whose min_keys k reaches decides:
/// merge when q >= min_queries. H200, ms, merge against the better of partitioned and index.
/// 4-byte keys, 9171f52 (bench/results/h200/issue42/qsweep-9171f52-q*.json, merge-9171f52.json):
/// K = 2^27: 0.717 vs 0.386 at Q = 2^22, 1.44 vs 1.52 at 2^24, 4.20 vs 6.06 at 2^26, 7.90 vs
/// 11.7 at 2^27; K = 2^26: 1.27 vs 1.09 at 2^24, 4.04 vs 4.29 at 2^26; K = 2^25: 3.94 vs 3.37 at
/// 2^26; the bucket sort at 1607c74 (qsweep-1607c74-q67108864.txt, bucket-255eb9a.json) faster
/// still where merge was taken (K = 2^26 / 2^27 at Q = 2^26: 3.44 / 3.69 vs 4.32 / 6.09) and even
/// at K = 2^25, Q = 2^26 (3.32 vs 3.42), behind at K = 2^24, Q = 2^27 (6.17 vs 5.63). 8-byte keys,
/// the bucket sort (255eb9a, 1607c74): K = 2^27: 8.61 vs 15.98 at Q = 2^27; K = 2^25: 4.14 vs
/// 5.02 at Q = 2^26; K = 2^24: 7.52 vs 7.95 at Q = 2^27; and 9171f52's K = 2^27 rows (2.35 vs
/// 2.01 at Q = 2^24: merge only from 2^26, not measured since between). Integer keys only: float
/// keys whose values are uniform (not their bits) pile into a few of the buckets of equal bit
/// width, and the tiles search in global memory (float32 K = 2^24, Q = 2^27: 13.1 ms vs the
/// partitioned search's 5.85, 1607c74).
struct merge_auto_rule {
  int64_t min_keys;
  int64_t min_queries;
};
inline constexpr merge_auto_rule merge_auto_rules_4[] = {{int64_t{1} << 27, int64_t{1} << 24},
                                                         {int64_t{1} << 26, int64_t{1} << 26}};
inline constexpr merge_auto_rule merge_auto_rules_8[] = {{int64_t{1} << 25, int64_t{1} << 26},
                                                         {int64_t{1} << 24, int64_t{1} << 27}};

/// True when auto takes algorithm::merge for k integer keys (beyond shared memory) and q queries.
constexpr bool merge_auto(int key_bytes, int64_t k, int64_t q) {
  auto first_match = [&](const auto& rules) {
    for (const merge_auto_rule& r : rules)
      if (k >= r.min_keys) return q >= r.min_queries;
    return false;
  };
  return key_bytes <= 4 ? first_match(merge_auto_rules_4) : first_match(merge_auto_rules_8);
}

/// The algorithm `auto_` picks for k keys and q queries: keys in shared memory -> PBS-CL (the
/// paper's best); larger key lists -> P-ary for a few queries (q known and at most
/// pary_auto_max_queries), the search by sorting the queries for many queries in the largest
/// key lists (merge_auto), the partitioned search for many (partitioned_auto), the static index
/// by index_auto_rules, else the branch-free binary search in global memory.
/// `partitioned_ok` false (the device's shared memory would not keep the tuned pipeline's buckets
/// staged: partitioned_fits in src/search/cuda/partitioned.cu; or its temporary memory is over
/// search_options::max_temp_bytes), `index_ok` false (the index's copy of the keys is over the
/// cap) and `merge_ok` false (float keys, or its temporary memory over the cap) leave those out:
/// the rules fall through to the next choice.
constexpr algorithm auto_choice(int key_bytes, int64_t k, int64_t q, int64_t max_shared_per_block,
                                bool partitioned_ok = true, bool index_ok = true, bool merge_ok = true) {
  const int64_t staged = (k + 2 * warp_width) * key_bytes;
  if (staged <= max_shared_per_block) return algorithm::pbs_cl;
  if (q >= 0 && q <= pary_auto_max_queries) return algorithm::pary;
  if (merge_ok && merge_auto(key_bytes, k, q)) return algorithm::merge;
  if (partitioned_ok && partitioned_auto(key_bytes, k, q)) return algorithm::partitioned;
  for (const index_auto_rule& r : index_auto_rules)
    if (k >= r.min_keys) return index_ok && q >= k / r.keys_per_query ? algorithm::index : algorithm::binary;
  return algorithm::binary;
}

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

/// search_options::queries_sorted = detect (Python's sorted_queries=None) looks at the queries
/// only where the sorted search (Merge Path, at the copy roofline: docs/results-h100.md) beats a
/// global-memory search by enough to pay for its check of the queries' order on the device (one
/// read of sorted queries; search_detecting_order in src/search/cuda/search.cu): keys
/// beyond shared memory (auto would run the index, the partitioned or the binary search), at
/// least 2^20 queries and at least k / 4 of them (Merge Path reads every key once). Measured at one
/// point only (docs/results-h100.md: 2^24 keys, 2^27 sorted queries, 0.486 ms sorted against
/// 4.23 ms plain); the thresholds are conservative guesses around it, not a sweep (issue 24).
inline constexpr int64_t sorted_detect_min_queries = int64_t{1} << 20;
inline constexpr int64_t sorted_detect_keys_per_query = 4;

}  // namespace gsearch::cuda_backend
