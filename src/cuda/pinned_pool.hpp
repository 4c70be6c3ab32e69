#pragma once
/// \file
/// Mapped page-locked host memory for the persistent kernels (the search server's ring, the
/// functional-arrays machine's): blocks of stopped kernels are kept for the next one of the
/// process rather than freed, because cudaFreeHost waits for every kernel of the device, and
/// another persistent kernel never ends by itself (the first H100 run of the server hung there,
/// destroying one of two servers). src/cuda/pinned_pool.cu.

#include <cstddef>

namespace gsearch::cuda_backend {

struct pinned_block {
  void* p = nullptr;
  size_t bytes = 0;
};

/// A mapped, portable page-locked block of at least `bytes` (a kept one of up to twice that, or
/// new). Its contents are whatever the last owner left.
pinned_block pinned_acquire(size_t bytes);

/// Gives the block back to the pool (never to the driver); b becomes empty.
void pinned_release(pinned_block& b) noexcept;

}  // namespace gsearch::cuda_backend
