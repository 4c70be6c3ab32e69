#pragma once
/// \file
/// Launch parameters and the `auto` choice, as data. The numbers come from the H100 runs under
/// bench/results/h100/ (see docs/perf-notes.md); change them only with a measurement.

#include <cstdint>

#include "gsearch/core/algorithm.hpp"

namespace gsearch::cuda_backend {

/// What the dispatcher needs to know of the current device.
struct device_limits {
  int sms = 0;
  int64_t max_shared_per_block = 0;  ///< the opt-in maximum (227 KB on the H100)
};

/// How a search kernel is launched: both are compile-time parameters of the kernel.
struct launch_config {
  int threads;  ///< threads per block (a multiple of 32); also the kernel's __launch_bounds__
  int items;    ///< queries per thread searched in lockstep (independent reads in flight)
};

/// The configuration the library's kernels are compiled with, per algorithm and key size, for
/// keys in shared memory. Global-memory search always runs global_config.
template <algorithm A, int KeyBytes>
inline constexpr launch_config shared_config = {512, 1};
inline constexpr launch_config global_config = {512, 1};

/// The algorithm `auto_` picks: keys in shared memory -> PBS-CL (the paper's best); larger key
/// lists -> the branch-free binary search in global memory.
constexpr algorithm auto_choice(int key_bytes, int64_t k, int64_t max_shared_per_block) {
  const int64_t staged = (k + 64) * key_bytes;
  return staged <= max_shared_per_block ? algorithm::pbs_cl : algorithm::binary;
}

}  // namespace gsearch::cuda_backend
