#pragma once
/// \file
/// The CUDA backend's tuning data for top-k and kthvalue (topk_kernel.cuh, topk_flat_kernel.cuh,
/// src/selection/cuda/topk.cu): the row kernel's block, digits and staging, the 1-D gather pass, the sorts
/// of the k outputs, and the rule between the two paths for rows too long for shared memory.
///
/// NOT YET MEASURED: every number below is a first choice made from the H100's limits (227 KB
/// of shared memory per block, 64K registers and 2,048 threads per SM), written before any
/// run; the topk sweep of bench/selection/ (4096 x 16384 float32 and its neighbours, k = 1 ...
/// 4096; 1-D 2^26 with k = 1 ... 2^20) is to choose them and cite its JSON here.
///
/// Host-compilable: plain C++ with no CUDA headers (tests read the staged-row limit from here).

#include <cstdint>

#include "cuda/tuning_common.hpp"

namespace gsearch::cuda_backend {

/// Threads of the row kernel (one block per row). 256: a 16,384-float row staged in 64 KB lets
/// three blocks share an SM (3 x 66 KB of shared memory), and 3 x 256 threads leave each thread
/// up to 85 registers; 512 would cap them at 42. Must be at least topk_radix_bins (one bin per
/// thread in the digit choice).
inline constexpr int topk_rows_threads = 256;
/// The row kernel's blocks an SM that its registers must allow (__launch_bounds__: at most 80
/// registers a thread for three 256-thread blocks, as three staged 16,384-float rows fit): the
/// sort of the outputs in the kernel, inlined at two places, took it to 96 registers and two
/// blocks, and 4096 x 16384, k = 64 from 0.194 to 0.235 ms (sixteenth session, call 4); at one
/// place, 76-80 registers and no spills.
inline constexpr int topk_rows_blocks_per_sm = 3;
/// Bits per digit of the row kernel's radix select: 4 passes for 32-bit keys, 8 for 64-bit (fewer
/// when a digit leaves one candidate). 8 keeps the histogram at 1 KB and the digit choice at one
/// bin per thread; 11 (AIR top-k's) would save a pass of 32-bit keys for an 8 KB histogram.
inline constexpr int topk_radix_bits = 8;
inline constexpr int topk_radix_bins = 1 << topk_radix_bits;
/// 16-byte loads each thread of the row kernel has in flight while staging a row (256 x 8 x 16 B:
/// half of a 64 KB row per batch).
inline constexpr int topk_stage_loads = 8;
/// Bytes of shared memory the row kernel's static part may take (2,304 with nvcc 13.0 for every
/// key type: the 1 KB histogram, the block scan, per-warp counts): the staged-row rule below
/// leaves them room, and src/selection/cuda/topk.cu checks the kernel's real figure too.
inline constexpr int64_t topk_rows_reserved_shared = 3072;
/// The staged row kernel's filter (topk_kernel.cuh's filter_row): a bound, the largest of the
/// least keys of G groups of the row (group g: the positions = g mod G; G the power of two at
/// or above rank + 1, so G keys, one a group, lie at or below it), then the select over the row's
/// keys at or below it alone, up to topk_filter_capacity of them (2-byte positions in shared
/// memory after the row). A random row keeps about G ln(G / ln 2) keys (the median of the largest
/// of G minima of cols / G keys: 290 for k = 64, where the earlier bound, the wanted rank among
/// 2,048 keys spaced along the row, kept ~520 and cost four digit passes over them), where the
/// whole-row select reads the row once a digit with a warp-wide match a key; more than the
/// capacity (ties, a group of large keys) selects over the whole row as before. Taken where the
/// expected count is at most half the capacity and a quarter of the row, and G divides the
/// block's threads (each thread's keys then lie in one group).
inline constexpr int topk_filter_capacity = 2048;
/// The most positions the filter may take (8 KB): G = 256 (rank 128 ... 255) expects ~1,500
/// candidates, which want twice that room.
inline constexpr int topk_filter_max_capacity = 4096;
/// A filtered key's position in its staged row.
using topk_filter_position = uint16_t;
inline constexpr int64_t topk_filter_max_cols = int64_t(1) << 16;
/// G for the key of rank `rank`: the least power of two >= rank + 1.
constexpr int topk_filter_groups(int64_t rank) {
  int g = 1;
  while (g < rank + 1 && g <= topk_rows_threads) g *= 2;
  return g;
}
/// A random row's expected candidates for G groups, G ln(G / ln 2) (ln as 0.693 log2 + 0.367).
constexpr int64_t topk_filter_expected(int groups) {
  int log2 = 0;
  while ((1 << log2) < groups) ++log2;
  return int64_t(groups) * (693 * log2 + 367) / 1000;
}
/// The staged row kernel's dynamic shared memory: the row's keys with the slack that lands its
/// 16-byte loads on 16-byte aligned keys (16 / key_bytes - 1 keys: topk_kernel.cuh's
/// stage_row_keys), then, from the next 16-byte boundary, the filter's positions
/// (topk_filter_position: 2 bytes, so rows up to 65,536 keys; 4-byte ones cost the 16,384-key
/// pieces of a split at k = 256 a third of their blocks: 80 KB a block, two an SM, 638 us for
/// 8,192 pieces in call 2 of the sixteenth session).
/// The launch sizes it and the kernel finds the positions by these two alone.
constexpr int64_t topk_staged_row_bytes(int64_t cols, int key_bytes) {
  return (cols + 16 / key_bytes - 1) * key_bytes;
}
constexpr int64_t topk_filter_positions_offset(int64_t cols, int key_bytes) {
  return (topk_staged_row_bytes(cols, key_bytes) + 15) / 16 * 16;
}
/// The filter's capacity for a staged row of `cols` keys of key_bytes bytes and the key of rank
/// `rank`, or 0 (none): topk_filter_capacity, doubled up to topk_filter_max_capacity while under
/// twice the expected count. The groups' least keys live in the kernel's 1 KB histogram meanwhile:
/// 256 groups of 4-byte keys, 128 of 8-byte ones.
constexpr int topk_filter_rows(int64_t cols, int64_t rank, int key_bytes) {
  const int groups = topk_filter_groups(rank);
  const int64_t expected = topk_filter_expected(groups);
  int capacity = topk_filter_capacity;
  while (capacity < 2 * expected && capacity < topk_filter_max_capacity) capacity *= 2;
  return groups <= topk_rows_threads && topk_rows_threads % groups == 0 &&
                 groups * key_bytes <= topk_radix_bins * 4 && 2 * expected <= capacity &&
                 4 * expected <= cols && cols <= topk_filter_max_cols
             ? capacity
             : 0;
}
/// The most outputs the row kernel sorts itself (topk_kernel.cuh's sort_row_outputs: one a
/// thread); more go to the separate sorts below.
inline constexpr int64_t topk_rows_sort_max_k = topk_rows_threads;
/// The longest row the row kernels take (int32 positions inside a row, with a block of slack);
/// longer rows go through the 1-D path one at a time.
inline constexpr int64_t topk_rows_max_cols = int64_t(1) << 30;

/// The most elements of key_bytes bytes a row may have to be staged in shared memory under a
/// per-block limit of shared_limit bytes (the device's, or the testing override): the keys, the
/// slack that lets the 16-byte loads land 16-byte aligned (16 / key_bytes - 1 keys), and the
/// kernel's static part.
constexpr int64_t topk_staged_max_cols(int key_bytes, int64_t shared_limit) {
  const int64_t room = shared_limit - topk_rows_reserved_shared;
  const int64_t cols = room / key_bytes - (16 / key_bytes - 1);
  return cols > 0 ? cols : 0;
}

/// Rows split into pieces (topk.cu's launch_split): the row kernel takes each piece of a row
/// for the piece's own k smallest (by key, then position: exactly the outputs of the row's
/// smallest that lie in the piece, and more), then each row's parts x k candidates for the
/// row's k (split again while those are still too few rows to fill the device: a third launch).
/// One read of the data and small further ones. For rows too long for
/// shared memory (in pieces of topk_split_piece keys: the row kernel's measured shape, in place
/// of the global-memory row kernel's block a row) and for fewer rows than fill the device (in
/// as many pieces as fill it, no more than balance the two steps' lengths, cols / parts against
/// parts x k). A piece holds at least topk_split_min_piece keys and 4 k (its k outputs a
/// quarter of it at most), its length a multiple of 32 keys, the last piece at least k; the
/// candidates must fit the staged row kernel. First choices, measured against the rows whole at
/// four shapes in one run (GSEARCH_TOPK_SPLIT=0; bench/results/h200/issue41/rows-split-b4c95ed.json
/// and rows-whole-b4c95ed.json): 256 x 524,288, k = 256 0.558 ms (5.34 whole), 8 x 1,048,576,
/// k = 256 0.076 ms (7.56), 64 x 16,384, k = 512 37 us (56); the piece length, the fill and the
/// model's constants not swept.
struct topk_split {
  int64_t part = 0;  ///< keys of every piece but the last (0: no split)
  int64_t parts = 1;
};
inline constexpr int64_t topk_split_piece = 16384;
inline constexpr int64_t topk_split_min_piece = 1024;
/// Blocks the few-rows split aims at: this many an SM.
inline constexpr int topk_split_blocks_per_sm = 2;
/// Against the 1-D path (a few very long rows): the split's time as one launch of the row kernel
/// over all the data at split_gb_per_s (4096 x 16384 float32, k = 64, unsorted: 0.188 ms, 1.43
/// TB/s: bench/results/h200/issue41/rows-ce37e82.json) plus split_fixed_us, the 1-D path's as
/// flat_row_us a row plus two reads at flat_gb_per_s (topk of 2^26 float32 k = 1,024: 0.136-0.154
/// ms). Guessed where not cited.
struct topk_split_model {
  double split_gb_per_s = 1400;
  double split_fixed_us = 10;  // the second launch (guess)
  double flat_row_us = 20;     // a 1-D row's launches (guess)
  double flat_gb_per_s = 4300;
};
inline constexpr topk_split_model topk_split_costs = {};

/// The split of rows x cols keys of key_bytes bytes for the key of rank k - 1, or none (parts 1);
/// staged_max: topk_staged_max_cols under the device's shared memory.
constexpr topk_split topk_row_split(int64_t rows, int64_t cols, int64_t k, int key_bytes, int64_t staged_max,
                                    int sms, const topk_split_model& m = topk_split_costs) {
  const int64_t least = 4 * k > topk_split_min_piece ? 4 * k : topk_split_min_piece;
  if (rows <= 0 || k <= 0 || cols < 2 * least) return {};
  int64_t parts = 1;
  if (cols > staged_max) parts = (cols + topk_split_piece - 1) / topk_split_piece;
  const int64_t fill = int64_t(sms) * topk_split_blocks_per_sm;
  if (rows < fill) {
    int64_t want = (fill + rows - 1) / rows;
    int64_t balance = 1;  // the least parts with parts x k >= cols / parts, about sqrt(cols / k)
    while (balance * balance * k < cols) ++balance;
    if (want > balance) want = balance;
    if (want > parts) parts = want;
  }
  if (parts > cols / least) parts = cols / least;
  if (parts < 2) return {};
  int64_t part = 0;
  for (; parts >= 2; --parts) {  // pieces of a multiple of 32 keys; the last at least k
    part = ((cols + parts - 1) / parts + 31) / 32 * 32;
    if (cols - (parts - 1) * part >= k) break;
  }
  if (parts < 2 || part > staged_max || parts * k > staged_max || 2 * parts * k > cols) return {};
  const double bytes = double(rows) * double(cols) * key_bytes;
  const double split_us = bytes / (m.split_gb_per_s * 1e3) + m.split_fixed_us;
  const double flat_us = double(rows) * m.flat_row_us + 2 * bytes / (m.flat_gb_per_s * 1e3);
  // Rows too long to stage: the split or the 1-D path (the global-memory row kernel reads a row
  // some key_bytes + 2 times with one block). Rows that stage: the split fills the device where
  // the row kernel alone would not.
  if (cols > staged_max && split_us > flat_us) return {};
  return {part, parts};
}

/// Testing hook and A/B switch: false keeps every row whole (the row kernel, the global-memory
/// one, the 1-D path, as before the split). Starts as the environment variable GSEARCH_TOPK_SPLIT
/// says ("0": off; unset or anything else: on). Defined in src/selection/cuda/topk.cu.
void set_topk_split_enabled(bool on);
bool topk_split_enabled();

/// Short rows, a thread a row (topk_short_kernel.cuh; which rows: core::short_row_list): rows a
/// block, and the elements each thread has in flight while the block's rows are staged (128 x 16
/// 4-byte loads: 8 KB a block; the per-SM bandwidth wants ~20 KB in flight at the H200's
/// latency, and a 64-column float row stages 128 rows in 33 KB, six blocks an SM). First
/// choices, measured at one point: 10^6 x 64, k = 8, 0.276 ms on one H200, 21% of the read
/// roofline (bench/results/h200/issue41/rows-ce37e82.json; perf-notes, fifteenth session).
inline constexpr int topk_short_threads = 128;
inline constexpr int topk_short_loads = 16;

/// The 1-D gather pass (topk_flat_kernel.cuh): 256 threads x 4 16-byte loads per tile, the shape
/// of find's tiles (find_tiles_config, 99.9% of the read roofline on count).
inline constexpr launch_config topk_gather_config = {256, 4};
/// The 1-D kthvalue's search for an element equal to the selected value: find's scan shape,
/// scalar loads (elements per thread in flight), early exit per tile.
inline constexpr launch_config topk_first_equal_config = {256, 16};

/// The block sorts of the k outputs of each row, smallest first (threads x items >= k); k above
/// the last goes to cub::DeviceSegmentedSort / DeviceRadixSort. Small k gets a small block: the
/// typical k = 64 of 4096 rows is 4096 blocks of 128 threads.
inline constexpr launch_config topk_sort_tiers[] = {{128, 1}, {128, 4}, {256, 8}, {512, 8}};
inline constexpr int64_t topk_block_sort_max_k = 512 * 8;

/// Rows too long for shared memory (and no longer than topk_rows_max_cols): the row kernel reading
/// global memory on every pass (one block per row; some (key_bytes + 2) reads of each row at the
/// bandwidth one block gets), or each row through the 1-D path (select, one gather pass: about
/// three reads at the chip's bandwidth, plus launches and a synchronisation per row). A model of
/// the two times with guessed constants, to be replaced by the sweep's measurement.
struct topk_path_model {
  double block_gb_per_s = 100;   ///< one block reading a row alone (guess)
  double chip_gb_per_s = 2500;   ///< the chip's read bandwidth
  double per_row_1d_us = 50;     ///< launches and the synchronisation of one 1-D row (guess)
  int blocks_per_sm = 4;         ///< resident row kernels per SM without staging
};
inline constexpr topk_path_model topk_path = {};

/// True when rows x cols (too long for shared memory) should run in the global-memory row kernel
/// rather than row by row through the 1-D path.
constexpr bool topk_rows_in_global(int64_t rows, int64_t cols, int key_bytes, int sms,
                                   const topk_path_model& m = topk_path) {
  if (cols > topk_rows_max_cols) return false;
  const double row_bytes = double(cols) * key_bytes;
  const double passes = key_bytes + 2;  // digits of 8 bits, then the count and write passes
  const double slots = double(sms) * m.blocks_per_sm;
  const double waves = double((rows + int64_t(slots) - 1) / int64_t(slots));
  const double per_block_us = passes * row_bytes / (m.block_gb_per_s * 1e3);
  const double chip_us = double(rows) * passes * row_bytes / (m.chip_gb_per_s * 1e3);
  const double global_us = waves * per_block_us > chip_us ? waves * per_block_us : chip_us;
  const double flat_us = double(rows) * (m.per_row_1d_us + 3 * row_bytes / (m.chip_gb_per_s * 1e3));
  return global_us <= flat_us;
}

}  // namespace gsearch::cuda_backend
