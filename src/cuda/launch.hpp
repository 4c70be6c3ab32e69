#pragma once
/// \file
/// What every family's CUDA backend asks of the device before it launches, host-compilable (no
/// CUDA headers): the device's limits, queried once per device, and the testing override of its
/// shared memory. launch.cuh has the launch helpers built on them; src/cuda/launch.cu defines both.

#include <cstdint>

#include "cuda/tuning_common.hpp"  // device_limits

namespace gsearch::cuda_backend {

/// The current device's SM count, opt-in shared memory per block and compute capability (which
/// chooses the tuning policies: tuning_common.hpp's with_policy), queried once per device,
/// the shared memory lowered to the testing override where one is set (below): the one place the
/// library's kernels learn the limit from.
device_limits current_device_limits();

/// Testing hook: a smaller shared memory per block than the device's opt-in maximum, so that the
/// paths of smaller GPUs run on a large one (163 KB: an A100; 99 KB: an Ada or Ampere consumer
/// card; 48 KB: the least any CUDA device has). Every kernel launch of the library sizes its
/// shared memory by current_device_limits(), where this applies: the shared-memory search, the
/// partitioned search's buckets and counters, the index's staged levels, isin's staged tests, the
/// row-batched search's tiles. 0 (the default) is no override; values under
/// min_shared_limit_override count as that. The initial value is the environment variable
/// GSEARCH_SHARED_LIMIT_BYTES (read once, when a search first asks; a value that is not a byte
/// count throws invalid_argument). Not for production use: it only ever lowers the limit.
void set_shared_limit_override(int64_t bytes);
int64_t shared_limit_override();
inline constexpr int64_t min_shared_limit_override = 48 * 1024;

/// The device words host_wait_word (launch.cuh) has made for calls that wait for their
/// answer (find's value forms, the sortedness check), on all devices: the most such calls that
/// ever ran at once, not the number of threads that made them (for tests; src/cuda/device.cu).
int64_t host_wait_words();

}  // namespace gsearch::cuda_backend
