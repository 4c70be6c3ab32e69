#pragma once
/// \file
/// Temporary device memory in stream order: allocated from gsearch's memory pool on a stream
/// (cudaMallocFromPoolAsync) and freed with cudaFreeAsync on it when the owner goes out of scope,
/// so kernels enqueued before the free may still use it, and nothing waits.
///
/// The pool (one per device, made on first use, src/cuda/device.cu) keeps up to
/// temporary_pool_keep_bytes of freed memory between calls. The device's default pool keeps
/// none unless the application raises its release threshold: it hands its memory back at every
/// synchronisation, and the next call maps it again, which cost 0.1-0.15 ms per call on the H100
/// (a quarter of a 2^27-element merge; docs/perf-notes.md). A pool of gsearch's own keeps that
/// choice out of the application's pool.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "gsearch/detail/cuda/check.cuh"

namespace gsearch::cuda_backend {

/// Freed memory the pool keeps for the next call (the rest goes back to the device).
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
