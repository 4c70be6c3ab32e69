#pragma once
/// \file
/// The CUDA backend's tuning data for the merge-like operations: the tiles of merge, merge sort
/// and the joins' expansion, of the set operations and of the search of sorted queries. A tile
/// holds threads x items outputs; the GPU tests size their inputs around these tiles.
/// The numbers come from the H100 runs under bench/results/h100/ and, for 8-byte keys, the H200's
/// (bench/results/h200/issue40/merge-sweep-int64.json; see docs/perf-notes.md); change them only
/// with a measurement. They are a policy per architecture (tuning_common.hpp's
/// policy_list and with_policy, as CUB's ChainedPolicy): merge_policy_sm90, measured on the H100
/// (sm_90), which the H200 (also sm_90), later architectures and, unmeasured, older ones use until
/// a policy of their own is measured; merge_policies lists them. A launch site takes its shape
/// from the policy of the device it runs on: with_policy(merge_policies{}, dev.arch,
/// [&]<class P>() { ... P::template merge_config<sizeof(T)> ... }).
///
/// Host-compilable: plain C++ with no CUDA headers, so g++ code (the tests' tile sizes, bench
/// drivers) reads the same constants the kernels are compiled with.

#include <cstdint>

#include "cuda/tuning_common.hpp"

namespace gsearch::cuda_backend {

/// The merge family's policy for sm_90: the tiles below, 4-byte keys measured on the H100, 8-byte
/// keys on the H200 (both sm_90). The H200's 4-byte sweep (merge-sweep-int32.json) chose the H100's
/// shapes again, but for the sorted search (below).
struct merge_policy_sm90 {
  static constexpr int arch = 90;

  /// The merge tiles (merge_kernel.cuh: merge, the merge-sort passes and the block sort; the joins'
  /// expansion, join_kernel.cuh): threads per block and elements per thread of a tile staged in
  /// shared memory, as in moderngpu and CUB's merge. The set operations and the sorted search have
  /// their own entries below. The item counts are odd so a thread's run of `items` consecutive
  /// shared-memory words (the transposes between the staged tile and the per-thread registers)
  /// falls on distinct banks. 4-byte keys: 256 x 19, the best of the 11 shapes swept (128-512
  /// threads x 7-23 items) for merge (0.413 ms; 256 x 23 0.412, 256 x 15 0.436, the worst 0.527) of
  /// 2 x 2^26 int32 on the H100 (bench/results/h100/tuning/merge-sweep-5.json, the kernels with
  /// cp.async staging and serial_merge_staged; merge-sweep-4.json chose the same shape for the
  /// kernels before them; docs/perf-notes.md "Merge"). More items per thread mean fewer per-thread
  /// splits and fewer tiles, until registers and shared memory cut the blocks per SM. 8-byte keys:
  /// 256 x 15, the best of 15 shapes (128-512 threads x 5-23 items, three register caps) on the
  /// H200 for merge (2 x 2^26 int64: 0.584 ms, 95% of the copy roofline's 0.552; 128 x 23 0.584,
  /// the former 256 x 7 0.654), the key-value merge (1.129 ms; 512 x 5 1.128, 256 x 7 1.157) and
  /// the merge sort (2^27 int64: 10.75 ms; 256 x 7 12.76) (merge-sweep-int64.json); its staged
  /// tile and sources, 46 KB, fit the 48 KB of static shared memory.
  template <int KeyBytes>
  static constexpr launch_config merge_config = KeyBytes <= 4 ? launch_config{256, 19}
                                                              : launch_config{256, 15};
  /// The merge sort (launch_merge_sort) of keys alone (Values false) or with int64 values: its
  /// passes' merge tile, with their registers capped for min_blocks resident blocks per SM (0:
  /// uncapped), and the threads of its block sort, whose runs are merge_sort_block_threads x items
  /// keys. 4-byte keys alone: 256 x 19 capped for 5 blocks, runs of 512 x 19 (2^27 int32 in 14
  /// passes, not 15): 7.04 ms against 7.38 for the merge's shape (merge-sweep-7.json, H100; CUB
  /// 3.6's merge sort 7.03 in merge_bench the same day). With values the cap costs (the key-value
  /// merge 1.17 -> 1.57 ms at 5 blocks) and a 512-thread block sort's keys and sources outgrow
  /// 48 KB of static shared memory: the merge's shape. 8-byte keys: the merge's shape (the best
  /// of the H200's sweep, above; longer runs, 512 x 11 and 1024 x 5, were slower: 11.08, 13.31 ms).
  template <int KeyBytes, bool Values>
  static constexpr launch_config merge_sort_config =
      KeyBytes <= 4 && !Values ? launch_config{256, 19, 5} : merge_config<KeyBytes>;
  template <int KeyBytes, bool Values>
  static constexpr int merge_sort_block_threads =
      KeyBytes <= 4 && !Values ? 512 : merge_config<KeyBytes>.threads;
  /// The set operations (set_ops_kernel.cuh): 4-byte keys 256 x 23 with registers capped for 6
  /// blocks per SM (40 registers, 32 bytes spilled): union 0.574 ms, intersection 0.381, against
  /// 0.568 and 0.403 at 256 x 19 x 6 and 0.683 and 0.530 at 256 x 19 with min_blocks 1
  /// (merge-sweep-6.json: 2 x 2^26 int32, H100; the H200 agrees: 0.486 / 0.366 ms, the best or
  /// within 1%). 8-byte keys: 128 x 23, the best of the H200's 15 shapes for both (2 x 2^26
  /// int64: union 0.760 ms, intersection 0.521; 256 x 15 0.800 / 0.587, the former 256 x 7
  /// 0.994 / 0.834; merge-sweep-int64.json).
  template <int KeyBytes>
  static constexpr launch_config set_op_config = KeyBytes <= 4 ? launch_config{256, 23, 6}
                                                               : launch_config{128, 23};
  /// The search of sorted queries (sorted_search_kernel.cuh): 256 x 19 for 4-byte keys, the best of
  /// the same sweep (0.440 ms for 2^27 queries in 2^24 keys; 256 x 15 0.455, 256 x 11 0.453, the
  /// worst 0.502; merge-sweep-4 had preferred 256 x 15 before the staging changes). The H200 prefers
  /// 128 x 23 (0.414 ms against 0.444; on the H100 it was 7% slower, 0.471): both are sm_90, so
  /// one policy holds both, and the H100's choice stays until a rule that tells them apart (their
  /// memory bandwidth, not their architecture) is worth its instantiations. 8-byte keys: 256 x 15,
  /// the best of the H200's 12 shapes that fit (2^27 int64 queries in 2^24 keys: 0.561 ms; 256 x 11
  /// 0.577, the former 256 x 7 0.629; merge-sweep-int64.json).
  template <int KeyBytes>
  static constexpr launch_config sorted_search_config = KeyBytes <= 4 ? launch_config{256, 19}
                                                                      : launch_config{256, 15};
};

/// The merge family's policies, oldest first (tuning_common.hpp's policy_list): one today. A
/// policy measured on another architecture is a struct like merge_policy_sm90 with its arch and
/// an entry here; every launch site then instantiates its kernels for each.
using merge_policies = policy_list<merge_policy_sm90>;

}  // namespace gsearch::cuda_backend
