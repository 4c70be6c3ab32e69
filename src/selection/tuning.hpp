#pragma once
/// \file
/// The CUDA backend's tuning data for selection (select, partition, quantile, median;
/// selection_kernel.cuh, select_scatter_kernel.cuh, src/selection/cuda/select.cu).
///
/// None of these numbers is measured yet: they are first choices, each with the reason for it and
/// what will decide it on the H100 (bench/selection/, to be written; docs/perf-notes.md). Change
/// them only with a measurement.
///
/// Host-compilable: plain C++ with no CUDA headers, so g++ code (the tests' sizes, bench drivers)
/// reads the same constants the kernels are compiled with.

#include <cstdint>

#include "cuda/tuning_common.hpp"

namespace gsearch::cuda_backend {

/// The one-block sort of the sample (and of the whole input once it is that small): 1024 threads,
/// cub::BlockRadixSort of the keys' order-preserving bits, 16 keys a thread for 4-byte keys, 8
/// for 8-byte ones (64 KB of keys either way, in dynamic shared memory). A larger sample narrows
/// each bracket (its width is ~ margin / sqrt(S) of the data: 3.1% at S = 16,384, 4.4% at 8,192)
/// and so shrinks the candidates the next level reads, at a longer sort. To measure: the sort
/// alone, and one select of 2^26 float32 at 8 / 16 items a thread.
inline constexpr int select_sort_threads = 1024;
constexpr int select_sort_items(int key_bytes) { return key_bytes <= 4 ? 16 : 8; }
/// Sample size (and the largest input sorted in one block): threads x items.
constexpr int64_t select_sample_size(int key_bytes) {
  return int64_t(select_sort_threads) * select_sort_items(key_bytes);
}

/// The bucket pass (the one full read of the data): find's tile shape, 256 threads x 4 16-byte
/// loads, at which find's count pass ran at 99.9% of the read roofline (find-sweep-3.json); the
/// per-element work here is larger (a binary search of the splitters in shared memory and a
/// histogram), so 512 x 4 and 256 x 8 are to be swept on 2^28 float32, one rank and 100 ranks.
inline constexpr launch_config select_pass_config = {256, 4};

/// Up to this many splitters (two per rank's bracket: one rank, or the two neighbouring ranks of
/// a median, after deduplication) the pass counts buckets in per-thread registers (2m + 1
/// counters, no atomics); above it, in a shared-memory histogram with warp-aggregated atomics
/// (__match_any_sync), so skewed data (most elements in one bucket) does not serialise 32 lanes on
/// one address. To measure: one rank on constant, uniform and sorted data in both modes.
inline constexpr int select_register_splitters = 4;

/// The candidate buffer: capacity_factor x the expected count (the sample intervals the brackets
/// cover, times n / S) plus slack. The count between two sample elements d apart varies by about
/// 1 / sqrt(d) (4.4% at the 514 of one bracket at S = 16,384), so 1.25 is ~5 standard deviations;
/// an overflow is counted and costs one more pass with the exact capacity, never a wrong answer.
inline constexpr double select_capacity_factor = 1.25;
inline constexpr int64_t select_capacity_slack = 4096;
/// When the brackets would copy out more than this fraction of the data (ranks so dense that
/// their brackets cover most of the sample), the select sorts instead (cub::DeviceRadixSort of
/// the keys' bits) and gathers the ranks: a level that does not shrink the data is no progress.
inline constexpr double select_dense_fraction = 0.5;
/// Levels of recursion before the select gives up on sampling and sorts (each level normally
/// divides the data by ~30: 2^26 -> 2^21 -> 2^16 -> 2^11, then one block; only bad luck, or
/// adversarial data against the fixed sample positions, goes deeper).
inline constexpr int select_max_depth = 12;

/// The radix select (radix_select.cu, core/radix_select.hpp), which answers up to
/// radix_select_max_ranks ranks of radix_select_min_n elements or more before the sampled
/// brackets above are tried. Its window kernel sorts a sample of 2 x radix_window_threads
/// elements in one block: a rank's first range is its bracket there, +-radix_select_margin
/// standard deviations of the rank's place in the sample, which the first pass copies out and the
/// second reads (4,096 keys took the one block 54 us to sort, more than the 4.5% of the data it
/// saves in the copy: docs/perf-notes.md). The passes: radix_pass_config tiles,
/// radix_pass_blocks_per_sm blocks a multiprocessor (each block adds its nonzero counts of 2,048
/// bins a rank to the pass's at its end: fewer, longer blocks add fewer), radix_pass_stages.
inline constexpr int radix_select_max_ranks = 4;
/// The ranks select() routes to the radix select (the rest to the sampled brackets): two. Measured
/// on one H200 (bench/results/h200/issue41/, radix_probe's end-to-end rows, uniform float32, the
/// answers on the host; f28b4fb): one rank 0.166 / 0.421 ms at 2^26 / 2^28 by the radix select,
/// 0.380 / 0.903 by the planned levels; a median's two 0.211 / 0.574 against 0.455 / 1.096 (and
/// 0.221 / 0.613 with the first pass counting NaNs, quantile's NaN check); but three ranks took
/// 0.278 / 0.814 and four (three quartiles and the largest: some 17% of the data in the first
/// ranges) 0.827 / 1.970, where the planned levels gave up and the host's levels were not timed.
/// (At 0aa6cda, an earlier pass, only one rank was routed.)
inline constexpr int radix_select_routed_ranks = 2;
inline constexpr int64_t radix_select_min_n = int64_t{1} << 16;
inline constexpr int radix_window_threads = 1024;
/// The first range's half width in standard deviations of the rank's place in the sample
/// (bracket_of's margin; sqrt(2048) / 2 = 22.6 sample places): 4 made it +-91 places, 9% of the
/// data at the median, and the first pass spent 28 instructions a warp of elements where one
/// that finds no member takes about 11 (ncu and the SASS at 9932cb8: staging and counting the
/// members); the second pass read the 9% copy (18 us of 2^26). 3 copies three quarters of that;
/// the sample misses a side with probability 1.3e-3 where 4 missed with 3e-5, and a miss costs
/// one more read of the data (~0.1 ms at 2^26): 0.3 us on average against some 8 us saved.
inline constexpr double radix_select_margin = 3.0;
/// 512 threads, 4 vectors (16 keys of 4 bytes) a thread a tile: the pass's time is its
/// instructions (ncu, f8530b3: 66% of the issue slots busy, DRAM at 50%), and a tile's own work
/// (the ring, the warp scan, the loop) is spread over twice the keys of 2 vectors, which took 36
/// instructions a warp of elements where 4 vectors in registers had taken 28.
inline constexpr launch_config radix_pass_config = {512, 4};
/// The tiles a pass's thread has in a shared ring (tile_ring): Stages - 1 of them in flight while
/// it counts one. 2 stages of 32 KB a block (64 KB in flight a multiprocessor at 2 blocks).
/// Measured on one H200 (bench/results/h200/issue41/, one rank of 2^26 / 2^28 float32): 3 stages
/// for one rank of 4-byte keys with a 128-key warp stage to make the room (fc62eb2) took 0.131-0.157
/// / 0.344-0.532 ms where 2 stages with 256 (aed3f57) took 0.126-0.147 / 0.352-0.477; the first
/// pass waited on its copies more, not less (ncu: 6.7 of 17.6 cycles, 5.0 of 13.7 at aed3f57), and
/// its DRAM throughput stayed at 51-56% either way.
constexpr int radix_pass_stages(int /*slots*/, int /*key_bytes*/) { return 2; }
/// Elements a warp stages before it counts them and moves them to the copy (one global atomic a
/// stage); at least a sparse tile's members (a quarter of 16 keys x 32 lanes). 128 (fc62eb2,
/// with 3 ring stages) was slower at k = n/2, whose members fill a stage every few tiles.
inline constexpr int radix_stage = 256;
inline constexpr int radix_pass_blocks_per_sm = 2;

/// The select of many ranks (many_select.cu, core/many_select.hpp): more than plan_max_ranks (4)
/// ranks of more than one sample, up to many_select_max_ranks (above: the sort), where the
/// sampled brackets of 100 ranks covered the data and sorted it (11.7x one rank at 2^26 on the
/// H200, docs/perf-notes.md). Its passes: tiles of 512 threads x 4 vectors: a pass's bins take
/// up to 64 KB of shared memory a block, and 256 threads a block left 4 blocks, 41% of the
/// warps, to a pass of 12,800 bins (ncu, H200, 0a58b57: 192 us, DRAM 29%). A copy holds at most
/// 1 / many_copy_fraction of the data (the plan copies only what is at most a third of the pass's
/// source: the copy's write and its later reads cost less than a second read of the data). A
/// quarter: 100 ranks of normal float32 hold some 20% of it after the first pass (0.23% a bin in
/// [0.5, 1)), which a copy of an eighth could not take: a third read of the data.
inline constexpr int many_select_max_ranks = 2048;  // 2^14 bins: 8 a slot (core::many_min_bits)
inline constexpr launch_config many_pass_config = {512, 4};
inline constexpr int64_t many_copy_fraction = 4;

/// partition / argpartition's scatter (select_scatter_kernel.cuh): tiles of 256 threads x 4
/// 16-byte loads; each tile ranks its elements within their buckets by warp-aggregated shared
/// atomics and reserves its ranges with one global atomic per non-empty bucket. To sweep with
/// 8 loads (half the global atomics) on 2^26 float32, one kth and 100.
inline constexpr launch_config partition_scatter_config = {256, 4};
/// Distinct kth values (buckets 2m + 1) up to which partition scatters by buckets; above it
/// (kth dense in the array) it sorts: a full sort is a valid partition, and the per-tile bucket
/// work would cost more than the sort.
inline constexpr int partition_max_splitters = 511;

}  // namespace gsearch::cuda_backend
