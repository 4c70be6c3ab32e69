#pragma once
/// \file
/// Temporary device memory in stream order: allocated from gsearch's memory pool on a stream
/// (cudaMallocFromPoolAsync) and freed with cudaFreeAsync on it when the owner goes out of scope,
/// so kernels enqueued before the free may still use it, and nothing waits.
///
/// The pool (one per device, made on first use, src/cuda/device.cu) keeps up to a quarter of the
/// device's memory (at least temporary_pool_keep_bytes; GSEARCH_POOL_KEEP_BYTES sets it) of freed
/// memory between calls: what a call took once, the next call of its size finds again. Keeping
/// 256 MB alone, calls that take gigabytes (a merge sort of 2^29 keys, the distributed
/// operations) mapped them again every time: 28 -> 42 ms for that sort on an H200, 39 -> 67 ms for
/// a sharded search on two (docs/perf-notes.md, "Distributed"). PyTorch's caching allocator keeps
/// everything; a quarter bounds what gsearch holds idle. The device's default pool keeps
/// none unless the application raises its release threshold: it hands its memory back at every
/// synchronisation, and the next call maps it again, which cost 0.1-0.15 ms per call on the H100
/// (a quarter of a 2^27-element merge; docs/perf-notes.md). A pool of gsearch's own keeps that
/// choice out of the application's pool.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "cuda/check.cuh"

namespace gsearch::cuda_backend {

/// The least freed memory the pool keeps for the next call (the rest goes back to the device).
inline constexpr uint64_t temporary_pool_keep_bytes = uint64_t{256} << 20;

/// gsearch's pool for the current device.
cudaMemPool_t temporary_pool();

class stream_buffer {
 public:
  stream_buffer() = default;
  stream_buffer(cudaStream_t stream, size_t bytes) : stream_(stream) {
    if (bytes > 0) GSEARCH_CUDA_CHECK(cudaMallocFromPoolAsync(&p_, bytes, temporary_pool(), stream));
  }
  stream_buffer(const stream_buffer&) = delete;
  stream_buffer& operator=(const stream_buffer&) = delete;
  stream_buffer(stream_buffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), stream_(o.stream_) {}
  stream_buffer& operator=(stream_buffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(stream_, o.stream_);
    return *this;
  }
  ~stream_buffer() {
    if (p_) cudaFreeAsync(p_, stream_);  // a failure here has no one to report to
  }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace gsearch::cuda_backend
