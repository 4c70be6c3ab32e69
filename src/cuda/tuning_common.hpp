#pragma once
/// \file
/// The CUDA backend's tuning data, common part: what the dispatchers know of the device and the
/// shape of a kernel's launch. The families' parameters and `auto` rules are in tuning_search.hpp
/// (shared-memory search, rows, the static index, P-ary, the `auto` choice),
/// tuning_partitioned.hpp, tuning_find.hpp and tuning_merge.hpp; tuning.hpp includes them all.
/// The numbers come from the H100 runs under bench/results/h100/ (see docs/perf-notes.md); change
/// them only with a measurement.
///
/// Host-compilable: plain C++ with no CUDA headers, so g++ code (the tests' tile sizes, bench
/// drivers) reads the same constants the kernels are compiled with.

#include <cstdint>

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
  /// of them and ran 40% slower (bench/results/h100/tuning/merge-sweep-6.json, the rows with
  /// min_blocks 1).
  int min_blocks = 0;
  /// The elements of one tile of the merge-like kernels: threads x items.
  constexpr int64_t tile() const { return int64_t(threads) * items; }
};

}  // namespace gsearch::cuda_backend
