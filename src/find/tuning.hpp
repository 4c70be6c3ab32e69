#pragma once
/// \file
/// The CUDA backend's tuning data for the unsorted search: find's tuned scan and tiles, isin's
/// hash-set probe, the study kernels.
/// The numbers come from the H100 runs under bench/results/h100/ (see docs/perf-notes.md); change
/// them only with a measurement.
///
/// Host-compilable: plain C++ with no CUDA headers, so g++ code (the tests' tile sizes, bench
/// drivers) reads the same constants the kernels are compiled with.

#include <cstdint>

#include "cuda/tuning_common.hpp"

namespace gsearch::cuda_backend {

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

}  // namespace gsearch::cuda_backend
