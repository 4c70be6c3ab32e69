#pragma once
// Thrust's temporary memory for the benchmarks' thrust peers, from a cache: thrust allocates the
// scratch of a call (a sort's buffers, a set operation's or copy_if's counts) with cudaMalloc and
// frees it with cudaFree inside the call, so a timed thrust call paid two allocations (and the
// device-wide synchronization of cudaFree) that gsearch and CUB, which take their temporary
// memory before the timed runs, do not (issue 24). With the cache, the warm-up's blocks are
// handed out again: thrust::cuda::par_nosync(thrust_cache()).on(stream).
//
// Header-only and free of thrust's own headers, so each translation unit, with its own CCCL
// first on the include path (the toolkit's, or the newer one of cub_merge_peer.cu), uses it.

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <new>

namespace gsearch::bench {
namespace {

/// Thrust's allocator interface (value_type, allocate, deallocate): a block freed by thrust is
/// kept and given to the next request of the same size or less (the smallest that fits); blocks
/// are never returned to CUDA (the process's end does that).
class thrust_cache_allocator {
 public:
  using value_type = char;

  char* allocate(std::ptrdiff_t n) {
    const auto it = free_.lower_bound(n);
    char* p = nullptr;
    if (it != free_.end()) {
      p = it->second;
      n = it->first;
      free_.erase(it);
    } else if (cudaMalloc(reinterpret_cast<void**>(&p), size_t(n)) != cudaSuccess) {
      (void)cudaGetLastError();
      throw std::bad_alloc();
    }
    used_.emplace(p, n);
    return p;
  }

  void deallocate(char* p, size_t) {
    const auto it = used_.find(p);
    if (it == used_.end()) return;
    free_.emplace(it->second, p);
    used_.erase(it);
  }

 private:
  std::multimap<std::ptrdiff_t, char*> free_;  // by size
  std::map<char*, std::ptrdiff_t> used_;
};

/// The translation unit's cache (thrust takes its allocator by reference).
inline thrust_cache_allocator& thrust_cache() {
  static thrust_cache_allocator cache;
  return cache;
}

}  // namespace
}  // namespace gsearch::bench
