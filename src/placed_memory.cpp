// detail::placed_memory (gsearch/detail_placed_memory.hpp): the owner of "memory here or on
// device d" of the stateful classes. The stream-ordered pool's allocation and free are CUDA's
// (src/cuda/device.cu; src/no_cuda.cpp in a build without it); the rest goes through device.hpp.

#include "gsearch/detail_placed_memory.hpp"

#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "gsearch/core/error.hpp"
#include "gsearch/device.hpp"

namespace gsearch::detail {

placed_memory placed_memory::host(size_t bytes) {
  placed_memory m;
  if (bytes == 0) return m;
  constexpr size_t huge = size_t{2} << 20;
  const size_t align = bytes >= 2 * huge ? huge : 64;
  const size_t rounded = (bytes + align - 1) / align * align;
  m.p_ = std::aligned_alloc(align, rounded);
  if (!m.p_) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (align == huge) madvise(m.p_, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  m.bytes_ = bytes;
  return m;
}

placed_memory placed_memory::device(size_t bytes) {
  placed_memory m;
  if (bytes > 0) m.p_ = device_malloc(bytes);
  m.bytes_ = bytes;
  m.kind_ = kind::device;
  m.device_ = cuda_current_device();  // after the allocation: without CUDA, its error comes first
  return m;
}

placed_memory placed_memory::device_ordered(size_t bytes, CUstream_st* stream) {
  placed_memory m;
  if (bytes > 0) m.p_ = ordered_malloc(bytes, stream);
  m.bytes_ = bytes;
  m.kind_ = kind::ordered;
  m.stream_ = stream;
  m.device_ = cuda_current_device();
  return m;
}

placed_memory::placed_memory(placed_memory&& other) noexcept
    : p_(std::exchange(other.p_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(std::exchange(other.device_, -1)),
      kind_(std::exchange(other.kind_, kind::host)),
      stream_(std::exchange(other.stream_, nullptr)) {}

placed_memory& placed_memory::operator=(placed_memory&& other) noexcept {
  std::swap(p_, other.p_);
  std::swap(bytes_, other.bytes_);
  std::swap(device_, other.device_);
  std::swap(kind_, other.kind_);
  std::swap(stream_, other.stream_);
  return *this;
}

void placed_memory::reset() noexcept {
  if (p_) {
    if (kind_ == kind::host) {
      std::free(p_);
    } else if (kind_ == kind::ordered) {
      ordered_free(p_, stream_);  // the stream's device: whichever is current
    } else {
      // cudaFree with the memory's device current, and the caller's current again after.
      int current = -1;
      try {
        current = cuda_current_device();
        if (current != device_) cuda_set_device(device_);
      } catch (...) {  // a failure here has no one to report to: free where we are
      }
      device_free(p_);
      if (current >= 0 && current != device_) {
        try {
          cuda_set_device(current);
        } catch (...) {
        }
      }
    }
  }
  abandon();
}

void placed_memory::abandon() noexcept {
  p_ = nullptr;
  bytes_ = 0;
  device_ = -1;
  kind_ = kind::host;
  stream_ = nullptr;
}

void placed_memory::check_backend(bool cuda, const char* who, const char* what) const {
  if (on_device() != cuda)
    throw invalid_argument(std::string(who) + ": " + what + " is in " +
                           (on_device() ? "device memory (built with gsearch::cuda)"
                                        : "host memory (built with gsearch::cpu)") +
                           ", searched with gsearch::" + (cuda ? "cuda" : "cpu"));
}

void placed_memory::check_device_current(const char* who, const char* what) const {
  if (!on_device()) return;
  if (const int current = cuda_current_device(); current != device_)
    throw invalid_argument(std::string(who) + ": " + what + " is on CUDA device " + std::to_string(device_) +
                           " but device " + std::to_string(current) + " is current");
}

}  // namespace gsearch::detail
