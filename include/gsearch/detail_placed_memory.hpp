#pragma once
/// \file
/// An implementation detail, not gsearch's API (it may change in any release): the one owner of
/// "memory here or on device d" that the stateful classes hold. static_index's layout and
/// index_intervals' copy (their private members, hence this public header), the CUDA server's
/// index, control block and request list, and the GPU functional-arrays machines' cells are each
/// a detail::placed_memory; src/placed_memory.cpp defines it (the stream-ordered pool's two calls:
/// src/cuda/device.cu, src/no_cuda.cpp).
///
/// It owns bytes in one of three places, and knows which:
///  - host memory: 64-byte aligned (a static index node is one cache line), from 4 MB on
///    2 MB-aligned and advised into transparent huge pages (Linux), which spares a search a TLB
///    miss per level and a build most of its page faults (docs/perf-notes.md, "Static index");
///  - the current device's memory (cudaMalloc), freed with that device current whichever is
///    current at the free;
///  - the current device's memory from gsearch's stream-ordered pool, on a stream, and freed on
///    it (cudaFreeAsync): nothing waits, where cudaFree waits for every kernel of the device, a
///    persistent kernel's too, which never ends by itself (the server's, the functional arrays').
/// Zero bytes allocate nothing but keep the place (an index_intervals of no elements built with
/// gsearch::cuda is on its device). Move-only; a moved-from owner is empty host memory, and a move
/// assignment swaps (the other frees what this held), as device_vector's does.
///
/// The checks of a call name the class and the object, so that each class keeps its message:
///   check_backend(true, "gsearch::static_index", "the index") throws invalid_argument
///     "gsearch::static_index: the index is in host memory (built with gsearch::cpu), searched with gsearch::cuda";
///   check_device_current("gsearch::index_intervals", "the data") throws invalid_argument
///     "gsearch::index_intervals: the data is on CUDA device 0 but device 1 is current".

#include <cstddef>
#include <cstdint>

#include "gsearch/execution.hpp"  // CUstream_st

namespace gsearch::detail {

class placed_memory {
 public:
  /// Nothing, in host memory.
  placed_memory() noexcept = default;
  /// `bytes` of host memory (aligned as above). std::bad_alloc when there is none.
  static placed_memory host(size_t bytes);
  /// `bytes` of the current device's memory (cudaMalloc). cuda_error / out_of_memory; in a build
  /// without CUDA, invalid_argument.
  static placed_memory device(size_t bytes);
  /// `bytes` of the current device's memory from gsearch's stream-ordered pool, allocated on
  /// `stream` and freed on it (the stream must outlive the memory, or reset() come first).
  static placed_memory device_ordered(size_t bytes, CUstream_st* stream);

  placed_memory(placed_memory&& other) noexcept;
  placed_memory& operator=(placed_memory&& other) noexcept;  // swaps
  placed_memory(const placed_memory&) = delete;
  placed_memory& operator=(const placed_memory&) = delete;
  ~placed_memory() { reset(); }

  void* get() const noexcept { return p_; }
  template <class T>
  T* data() const noexcept {
    return static_cast<T*>(p_);
  }
  /// The bytes asked for (host memory is rounded up to its alignment beyond them).
  size_t bytes() const noexcept { return bytes_; }
  /// How many T the bytes hold.
  template <class T>
  int64_t count() const noexcept {
    return int64_t(bytes_ / sizeof(T));
  }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  /// True for device memory (either kind).
  bool on_device() const noexcept { return device_ >= 0; }
  /// The CUDA device the memory is on; -1 in host memory.
  int device() const noexcept { return device_; }

  /// Frees the memory now; the owner becomes empty host memory.
  void reset() noexcept;
  /// Forgets the memory without freeing it (a kernel that could not be stopped still reads it);
  /// the owner becomes empty host memory.
  void abandon() noexcept;

  /// invalid_argument "<who>: <what> is in device memory (built with gsearch::cuda), searched
  /// with gsearch::cpu" (or host memory and gsearch::cpu, searched with gsearch::cuda) unless the
  /// memory is where the backend works: on a device when `cuda`, else in host memory.
  void check_backend(bool cuda, const char* who, const char* what) const;
  /// For device memory: invalid_argument "<who>: <what> is on CUDA device d but device c is
  /// current" unless device d is the calling thread's current device. Nothing for host memory.
  void check_device_current(const char* who, const char* what) const;

 private:
  enum class kind : unsigned char { host, device, ordered };
  static void* ordered_malloc(size_t bytes, CUstream_st* stream);       // src/cuda/device.cu
  static void ordered_free(void* p, CUstream_st* stream) noexcept;      // (src/no_cuda.cpp)

  void* p_ = nullptr;
  size_t bytes_ = 0;
  int device_ = -1;
  kind kind_ = kind::host;
  CUstream_st* stream_ = nullptr;  // kind::ordered: the stream it is freed on
};

}  // namespace gsearch::detail
