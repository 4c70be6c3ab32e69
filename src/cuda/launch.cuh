#pragma once
/// \file
/// What every family's CUDA backend asks before it launches a kernel: the device's limits
/// (launch.hpp), the resident blocks of a kernel (the occupancy, asked once per kernel,
/// configuration and device), its dynamic shared memory allowed, a grid that fills the device.
/// Defined in src/cuda/launch.cu (host_wait_word in src/cuda/device.cu).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>  // for the files that include this one (as before)

#include "cuda/check.cuh"
#include "cuda/launch.hpp"

namespace gsearch::cuda_backend {

/// Resident blocks per SM of `kernel` with `threads` threads and `smem` bytes of dynamic shared
/// memory on dev.device (cudaOccupancyMaxActiveBlocksPerMultiprocessor), remembered per kernel,
/// configuration and device: the runtime's answer costs microseconds, which a small search
/// called again and again would pay every time (src/cuda/launch.cu).
int blocks_per_sm(const void* kernel, int threads, int64_t smem, const device_limits& dev);

/// Lets `kernel` use `smem` bytes of dynamic shared memory on dev.device (the attribute is needed
/// above 48 KB), setting it only when it grows: once per kernel and device in practice. Throws
/// invalid_argument, naming the limit, when the kernel's static shared memory and smem together
/// exceed dev.max_shared_per_block: a launch would fail, so the sizing that asked is a bug.
void allow_dynamic_shared(const void* kernel, int64_t smem, const device_limits& dev);

/// The kernel's static shared memory (cudaFuncGetAttributes' sharedSizeBytes), asked once per
/// kernel and device: what a kernel with static and dynamic shared memory has less of the limit.
int64_t static_shared_bytes(const void* kernel, const device_limits& dev);

/// A device word for a call that waits for its answer before it returns (find's value forms, the
/// sortedness check): taken from a per-device free list for the call and handed back after it,
/// so words are reused by later calls and other threads. The list grows to the most calls that
/// ever ran at once and is kept for the process (src/cuda/device.cu): no allocation per call, and
/// none per thread that is never freed. Handed back during an exception, the word is first let
/// finish what the stream still has in flight.
class host_wait_word {
 public:
  explicit host_wait_word(cudaStream_t stream);
  ~host_wait_word();
  host_wait_word(const host_wait_word&) = delete;
  host_wait_word& operator=(const host_wait_word&) = delete;
  int64_t* get() const { return word_; }

 private:
  int64_t* word_ = nullptr;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  int exceptions_ = 0;
};

/// A grid that fills the device: the resident blocks of every SM, no more blocks than tiles.
template <class Kernel>
int grid_size(Kernel kernel, int threads, int64_t smem, int64_t tiles, const device_limits& dev) {
  const int per_sm = blocks_per_sm(reinterpret_cast<const void*>(kernel), threads, smem, dev);
  return int(tiles < int64_t(per_sm) * dev.sms ? tiles : int64_t(per_sm) * dev.sms);
}

/// A grid of one thread per element for a light pass (a fill, a gather): enough blocks for n
/// elements, at most 8 per SM, grid-stride beyond.
inline int plain_grid(int64_t n, int threads, const device_limits& dev) {
  const int64_t blocks = (n + threads - 1) / threads, most = int64_t(dev.sms) * 8;
  return int(std::max<int64_t>(1, std::min(blocks, most)));
}

}  // namespace gsearch::cuda_backend
