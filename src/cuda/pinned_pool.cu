// The pool of mapped page-locked blocks (src/cuda/pinned_pool.hpp).

#include <cuda_runtime.h>

#include <map>
#include <mutex>

#include "cuda/check.cuh"
#include "cuda/pinned_pool.hpp"

namespace gsearch::cuda_backend {
namespace {

std::mutex pinned_mutex;
std::multimap<size_t, void*>& pinned_free() {
  static auto* blocks = new std::multimap<size_t, void*>;  // never destroyed: no cudaFreeHost at exit either
  return *blocks;
}

}  // namespace

pinned_block pinned_acquire(size_t bytes) {
  bytes = bytes > 0 ? bytes : 1;
  {
    const std::lock_guard<std::mutex> lock(pinned_mutex);
    auto& kept = pinned_free();
    const auto it = kept.lower_bound(bytes);
    if (it != kept.end() && it->first <= 2 * bytes) {
      const pinned_block b{it->second, it->first};
      kept.erase(it);
      return b;
    }
  }
  void* p = nullptr;
  GSEARCH_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  return {p, bytes};
}

void pinned_release(pinned_block& b) noexcept {
  if (!b.p) return;
  const std::lock_guard<std::mutex> lock(pinned_mutex);
  pinned_free().emplace(b.bytes, b.p);
  b = {};
}

}  // namespace gsearch::cuda_backend
