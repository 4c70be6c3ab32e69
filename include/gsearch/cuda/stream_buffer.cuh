#pragma once
/// \file
/// Temporary device memory in stream order: allocated with cudaMallocAsync on a stream and freed
/// with cudaFreeAsync on it when the owner goes out of scope, so kernels enqueued before the free
/// may still use it, and nothing waits.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gsearch/cuda/check.cuh"

namespace gsearch::cuda_backend {

class stream_buffer {
 public:
  stream_buffer() = default;
  stream_buffer(cudaStream_t stream, size_t bytes) : stream_(stream) {
    if (bytes > 0) GSEARCH_CUDA_CHECK(cudaMallocAsync(&p_, bytes, stream));
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
