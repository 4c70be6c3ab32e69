#pragma once
/// \file
/// How every family's CUDA backend launches a kernel: the device's limits (launch.hpp), the
/// resident blocks of a kernel (the occupancy, asked once per kernel, configuration and device),
/// its dynamic shared memory allowed, a grid that fills the device, and the launch helpers
/// (`launch`, `launch_filling`, `launch_plain`), in moderngpu's manner: a family's launch_* says
/// its sizes and makes one call, and `launch` is the one place a kernel of the library is
/// launched and checked. Defined in src/cuda/launch.cu (host_wait_word in src/cuda/device.cu).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <source_location>
#include <utility>

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

/// The stream a kernel is launched on, and the place in the source that launched it. A
/// cudaStream_t converts to it at the call of a helper below, where the default argument names the
/// caller's line: a failed launch is reported where the family launched it (as
/// GSEARCH_CUDA_CHECK_LAUNCH() written there did), not in this header.
struct launch_stream {
  launch_stream(cudaStream_t s, std::source_location site = std::source_location::current())  // NOLINT: converts
      : stream(s), at(site) {}
  cudaStream_t stream;
  std::source_location at;
};

/// kernel<<<blocks, threads, smem, stream>>>(args...), then the launch checked (a bad
/// configuration, or an earlier asynchronous failure: GSEARCH_CUDA_CHECK_LAUNCH()): the one place
/// a kernel of the library is launched. The arguments are forwarded, so they convert to the
/// kernel's parameters exactly as they would at a <<<>>> launch (implicitly: an int64_t to an int
/// parameter as before, and nothing that needs a cast). The caller has allowed smem above 48 KB
/// (allow_dynamic_shared), or uses launch_filling, which does. Not for the persistent kernels (the
/// search server's, the functional arrays'): cudaLaunchCooperativeKernel, which guarantees that
/// every block is resident at once, launches those.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), int64_t blocks, int threads, int64_t smem, launch_stream stream,
            Args&&... args) {
  kernel<<<unsigned(blocks), unsigned(threads), size_t(smem), stream.stream>>>(std::forward<Args>(args)...);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw_cuda_error(e, "cudaGetLastError()", stream.at.file_name(), int(stream.at.line()));
}

/// launch on a grid that fills the device for `tiles` tiles of work (grid_size: the resident
/// blocks of every SM, no more than tiles; the kernel takes the tiles grid-stride), its dynamic
/// shared memory allowed first (allow_dynamic_shared, which checks it against the device's limit)
/// when there is any: the launch of the tuned tile kernels. tiles > 0 (the callers return before).
template <class... Params, class... Args>
void launch_filling(void (*kernel)(Params...), int threads, int64_t smem, int64_t tiles, launch_stream stream,
                    const device_limits& dev, Args&&... args) {
  if (smem > 0) allow_dynamic_shared(reinterpret_cast<const void*>(kernel), smem, dev);
  launch(kernel, grid_size(kernel, threads, smem, tiles, dev), threads, smem, stream, std::forward<Args>(args)...);
}

/// launch of one thread per element for a light pass over n elements (plain_grid: at most 8
/// blocks per SM, grid-stride beyond), no dynamic shared memory.
template <class... Params, class... Args>
void launch_plain(void (*kernel)(Params...), int64_t n, int threads, launch_stream stream, const device_limits& dev,
                  Args&&... args) {
  launch(kernel, plain_grid(n, threads, dev), threads, 0, stream, std::forward<Args>(args)...);
}

}  // namespace gsearch::cuda_backend
