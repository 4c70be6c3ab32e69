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

/// The most threads per block a search kernel is compiled for (its __launch_bounds__): it caps
/// registers at 65536 / max_block_threads, so every tuned launch fits.
inline constexpr int max_block_threads = 512;

/// How a search kernel is launched.
struct launch_config {
  int threads;  ///< threads per block (a multiple of 32, at most max_block_threads)
};

/// Launch parameters for an algorithm, key size and key count.
constexpr launch_config tuned_config(algorithm /*a*/, int /*key_bytes*/, int64_t /*k*/) {
  return launch_config{512};
}

/// The algorithm `auto_` picks: keys in shared memory -> PBS-CL (the paper's best); larger key
/// lists -> the branch-free binary search in global memory.
constexpr algorithm auto_choice(int key_bytes, int64_t k, int64_t max_shared_per_block) {
  const int64_t staged = (k + 64) * key_bytes;
  return staged <= max_shared_per_block ? algorithm::pbs_cl : algorithm::binary;
}

}  // namespace gsearch::cuda_backend
