#pragma once
/// \file
/// The CPU backend's thresholds, block sizes and `auto` rule, as data, the way
/// src/<family>/tuning*.hpp keep the GPU's: each with what chose it, and the measurement where
/// there is one (docs/perf-notes.md, the CPU sections; committed runs under bench/results/cpu/).
/// Measured on this project's 2-core machine unless said otherwise; change them only with a
/// measurement. Plain C++, no backend code.
///
/// The constants that only one source file reads sit in a namespace per family (search_tuning,
/// index_tuning, partitioned_tuning, find_tuning, merge_tuning, selection_tuning), which that file opens with a
/// using-directive, so short names such as `tile` cannot collide; what other files or the docs
/// name (cpu_index_rules, cpu_partitioned_config, lockstep) is at cpu_backend scope.

#include <algorithm>
#include <cstdint>

#include "gsearch/core/partition.hpp"

namespace gsearch::cpu_backend {

/// Queries (or elements) one thread searches in lockstep: the branch-free binary search
/// (src/search/cpu.cpp), the static index's walk, the partitioned search's buckets and isin's
/// search of the sorted tests. Their chains of dependent key reads overlap (memory-level
/// parallelism once the keys outgrow L1), where one query at a time waits for each read before
/// the next: int32, side left, K = 2^20, Q = 2^22: 68.8 ms against 741 for numpy (10.8x numpy,
/// 1.75x with one query at a time); K = 2^10, Q = 2^22: 18x numpy (was 6.5x)
/// (bench/search/cpu_bench.py; docs/perf-notes.md, "CPU fast path against numpy.searchsorted",
/// section 2). The buckets take 8 for the same reason; the index's walk takes more
/// (index_tuning::walk_lockstep).
inline constexpr int lockstep = 8;

// --- search (src/search/cpu.cpp) -------------------------------------------------------------

/// sorter= on the CPU (src/search/api.cpp): q queries search k keys through the sorter in place
/// (search_through_sorter) while q * ceil(log2(k + 1)) <= sorter_steps_per_key * k, and the keys
/// are gathered into sorter's order first beyond. A step through the sorter is two dependent
/// random reads, 8 queries in lockstep; a gathered key a sequential read of the sorter, a random
/// read of the keys and a write, on all cores. Measured (int32, all threads of this 2-core machine,
/// gather / in place): at q * steps / k = 1.06 (k = 2^16, q = 4,096) 1.54x, at 1.31 (k = 2^20,
/// q = 65,536) 1.22x, at 3.25 (k = 2^12, q = 1,024) 0.99x, at 4.25 (k = 2^16, q = 16,384) 0.78x;
/// below 1 in place wins by 2.0-75,000x (k = 2^23, q = 16: 0.6 us against 48 ms), above 3 the
/// gather by up to 1.7x (bench/cpu/sorter_route_bench.cpp at 45356a6:
/// bench/results/cpu/sorter_route.txt).
inline constexpr int64_t sorter_steps_per_key = 2;
constexpr bool cpu_sorter_in_place(int64_t k, int64_t q) {
  int64_t steps = 0;
  while ((int64_t{1} << steps) < k + 1) ++steps;
  return k > 0 && q <= sorter_steps_per_key * k / steps;  // (q * steps <= 2k, without overflow)
}

namespace search_tuning {
/// Queries per thread below which spawning threads costs more than it saves.
inline constexpr int64_t min_queries_per_thread = int64_t{1} << 14;
}  // namespace search_tuning

/// auto_ on the CPU (resolve, src/search/cpu.cpp): the static index (algorithm::index, built for
/// the call) once its build, about a copy of the keys, is paid back by the queries it speeds up;
/// else the binary search. Measured on this project's 2-core machine, int32, upper_bound, binary /
/// index time per call (docs/perf-notes.md, "Static index", CPU): K = 2^14: 0.83 at Q = K, 0.48 at
/// K/16; 2^16: 1.61 at Q = K, 1.11 at K/4, 0.68 at K/16; 2^20: 2.23 at K, 1.65 at K/4, 0.56 at
/// K/16; 2^24: 4.02 at K, 2.73 at K/16, 1.52 at K/64. So: from 2^16 keys with Q >= K/4, from 2^22
/// keys with Q >= K/64. The first rule whose min_keys k reaches decides.
struct cpu_index_rule {
  int64_t min_keys;
  int64_t keys_per_query;  // the index when q >= k / keys_per_query
};
inline constexpr cpu_index_rule cpu_index_rules[] = {{int64_t{1} << 22, 64}, {int64_t{1} << 16, 4}};

// --- static index (src/static_index/cpu.cpp) -------------------------------------------------

namespace index_tuning {
/// Slots (build) and queries (search) per thread below which a thread costs more than it saves.
inline constexpr int64_t min_slots_per_thread = int64_t{1} << 16;
inline constexpr int64_t min_queries_per_thread = int64_t{1} << 12;
/// Queries a thread walks down the index in lockstep, each one's next node prefetched as soon
/// as it is known (core::static_index_descend). Measured (this 2-core AMD EPYC, K = 2^24, Q =
/// 2^22, side left, the CLI's --repeat 5 medians, build included; one run, noisy): int64 197 ms
/// with 8 queries and no prefetch, 184 with 8 prefetching, 140 with 16, 131 with 32, 126 with
/// 64; int32 133 / 103 / 100 / 70 / 76 (docs/perf-notes.md, issue 42's CPU process). Without the
/// prefetch, 16 and 32 were no better than 8 (the reorder buffer fills with the first queries'
/// steps).
inline constexpr int walk_lockstep = 32;
}  // namespace index_tuning

// --- partitioned search (src/search/cpu_partitioned.cpp) --------------------------------------------

/// The CPU's partitioning: 256 KB of keys per bucket, a quarter of a core's 1-2 MB L2 with room
/// for the queries streamed past them; at most 2^16 buckets (each thread counts them all); 2^22
/// queries grouped at a time (the grouped copy, 12-20 bytes a query, reused window to window).
/// PROVISIONAL: chosen, not yet swept.
inline constexpr core::partition_config cpu_partitioned_config = {256 * 1024, int64_t{1} << 16, int64_t{1} << 22, 0};

namespace partitioned_tuning {
/// Queries of a window per thread (part) below which another part costs more than it saves.
inline constexpr int64_t min_queries_per_part = int64_t{1} << 14;
}  // namespace partitioned_tuning

// --- unsorted search (src/find/cpu.cpp) ------------------------------------------------------

namespace find_tuning {
/// Elements per block: the unit of early exit (first / any) and of the counts find_random and
/// find_all keep. 16 KB of int32: small enough that a thread past the best hit stops soon, large
/// enough that the atomic per block costs nothing.
inline constexpr int64_t block_elements = 4096;
/// Elements per thread below which more threads cost more than they save (isin's loops take a
/// quarter of it).
inline constexpr int64_t min_elements_per_thread = int64_t{1} << 16;
/// A study strategy's k when the caller passes 0: seeds/001's best.
inline constexpr int64_t default_per_thread = 12;
/// Elements tested together before looking for the matches among them: a vectorized count of 16,
/// and the scalar loop only for a group that has one.
inline constexpr int64_t group = 16;
}  // namespace find_tuning

// --- merge-like operations (src/merge/cpu.cpp) -----------------------------------------------

namespace merge_tuning {
/// Diagonals per tile: a thread's work is a whole number of tiles (the last one partial).
inline constexpr int64_t tile = int64_t{1} << 16;
/// Elements per thread below which merge sort sorts on one thread.
inline constexpr int64_t min_sort_per_thread = int64_t{1} << 15;
/// Rows per thread below which the join's scans and writes run on one thread.
inline constexpr int64_t min_rows_per_thread = int64_t{1} << 16;
/// sort() of integer keys: the LSD radix sort (src/merge/cpu_radix_sort.hpp) from this many
/// elements, the merge sort below. Measured (this 2-core machine, quiet, best of 3-200 calls,
/// random keys, keys alone / with int64 values, radix against merge sort;
/// bench/results/cpu/issue42/sort_ab.txt): 2^12 int32 3.6x / 3.4x, int64 1.6x / 1.5x, uint64
/// 2.2x / 1.4x; 2^16 int32 4.0x / 2.7x, int64 1.7x / 1.2x; 2^20 int32 4.3x / 3.4x, int64 2.4x /
/// 1.7x; 2^22 int64 1.5x / 1.25x. Up to 2^11 both take the same time (0.94-1.14x; both run the
/// merge sort there), so the line sits at 2^12 (docs/perf-notes.md "The CPU's radix sort").
inline constexpr int64_t radix_sort_from = int64_t{1} << 12;
}  // namespace merge_tuning

// --- selection (src/selection/cpu.cpp) -------------------------------------------------------

namespace selection_tuning {
/// Inputs up to this size are selected by std::nth_element on a copy, on one thread: below it the
/// sample, the counting pass and the threads cost more than introselect. Measured (this machine,
/// shared, one rank of uniform float32, best of 50): 10^4 elements 0.097 ms with 2^15 (all
/// nth_element), 0.019 with 2^12, 0.021 with 2^10; 10^5: 0.45, 0.15, 0.16 ms.
inline constexpr int64_t small_select = int64_t{1} << 12;
/// Ranks at or above one per `dense_ranks` elements: nth_element / sort instead of buckets (the
/// buckets would be tiny and many).
inline constexpr int64_t dense_ranks = 16;
/// Splitters up to this many are counted by vectorized sums of comparisons (2 per splitter and
/// element); more by select_bucket's binary search and a histogram. PROVISIONAL.
inline constexpr int few_splitters = 8;
/// Wanted buckets up to this many are copied out by one compaction each per block of `block`
/// elements; more by a scatter with a branch per element. (2^24 float32, 3 buckets: 65 ms by the
/// scatter.) PROVISIONAL.
inline constexpr int few_wanted = 8;
/// Recursion levels before nth_element finishes whatever is left (a sample that keeps missing,
/// adversarial data): the worst case stays O(n log n).
inline constexpr int max_depth = 6;
/// Elements whose buckets are computed together (a stack array), and summed in 32 bits.
inline constexpr int64_t block = 1024;
inline constexpr int64_t count_chunk = int64_t{1} << 15;
/// Elements per thread below which another thread costs more than it saves.
inline constexpr int64_t min_elements_per_thread = int64_t{1} << 16;
/// partition / argpartition of many rows (at least 16): rows up to short_row_cols are each sorted
/// by an odd-even merge network, 16 rows at once in vector lanes (cpu_rows.cpp), where the 1-D
/// partition of each row took 6-7x numpy's time at 10^5 x 16. Measured on this 2-core machine
/// (AVX-512, loaded by builds: ratios within one run; docs/perf-notes.md, issue 41), against
/// numpy 2.4: values only, 16 and 32 columns 1.1-1.4x numpy, 64-256 columns 0.5-1.0x (numpy's
/// introselect of a row is cheaper than a sort there, but each row's 1-D partition is 0.15-0.36x);
/// with indices (4-byte keys: the key and its column one 64-bit word), 1.0-2.6x up to 256.
/// 8-byte keys with indices need two words a lane, and that form measured slower than each
/// row's 1-D partition (0.21x numpy at 256 columns, against 0.30-0.59x): they keep the latter.
inline constexpr int64_t short_row_cols = 256;  // the network's largest (its stack buffer)
constexpr bool short_rows_sorted(int64_t cols, size_t key_bytes, bool indices) {
  return cols >= 2 && cols <= short_row_cols && (!indices || key_bytes == 4);
}
/// The sample of n elements: about sqrt(n) (sorting it costs s log s; each rank's bracket holds
/// about 4 / sqrt(s) of the data, copied and selected again), within [256, 2^14]. PROVISIONAL.
inline int64_t sample_size(int64_t n) {
  int64_t s = 256;
  while (s < (int64_t{1} << 14) && s * s < n) s *= 2;
  return std::min(s, n);
}
/// The many-rank select (cpu_many_select.cpp, core/many_select.hpp's radix passes) for
/// many_min_ranks to many_max_ranks ranks of more than small_select elements, at the select's first
/// level: the sampled brackets of 100 ranks cover the data. Its first bins span the extent of
/// many_sample sampled elements; a copy holds at most 1 / many_copy_fraction of the data; the last
/// many_sort_max elements or fewer are sorted. The threshold measured on this 2-core EPYC
/// (gsearch.select of m evenly spread ranks of uniform float32 / int32, the other path against
/// this one in one session, bench/results/cpu/issue41/many_ranks_ab.json): at 3 and 5 ranks the
/// brackets' path (one bracket: the split) is 1.1-6.2x faster; from 8 the radix passes are, 0.19-0.79x
/// its time (8 ranks of 2^24 int32 41 ms against 105, 100 ranks 42 against 222).
inline constexpr int64_t many_min_ranks = 8;
inline constexpr int64_t many_max_ranks = 2048;
inline constexpr int64_t many_sample = int64_t{1} << 14;
inline constexpr int64_t many_copy_fraction = 4;
inline constexpr int64_t many_sort_max = int64_t{1} << 14;
}  // namespace selection_tuning

}  // namespace gsearch::cpu_backend
