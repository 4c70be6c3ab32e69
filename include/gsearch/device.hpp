#pragma once
/// \file
/// What this build and this machine offer, and the little device-memory handling that programs
/// without CUDA headers (the CLI, tests, the Python bindings) need to call the CUDA backend.
/// Every function here that touches a device throws gsearch::invalid_argument when the library
/// was built without CUDA, and cuda_error / out_of_memory when CUDA fails.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ranges>
#include <string>
#include <type_traits>
#include <utility>

#include "gsearch/core/span.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

/// True when the library was built with the CUDA backend (GSEARCH_CUDA=ON).
bool built_with_cuda() noexcept;

/// Number of usable CUDA devices: 0 when built without CUDA, or with no driver or GPU.
int cuda_device_count() noexcept;

/// A one-line description of the current CUDA device ("NVIDIA H100 80GB HBM3, sm_90, 132 SMs"),
/// or an empty string when there is none.
std::string cuda_device_name();

/// What benchmarks and tools report about the current CUDA device (all zero / empty without one).
struct cuda_device_info {
  std::string name;
  int compute_capability = 0;      ///< 90 for sm_90
  int sms = 0;
  int64_t l2_bytes = 0;
  int64_t shared_per_block_optin = 0;
  int64_t global_bytes = 0;
  int driver_version = 0, runtime_version = 0;  ///< as CUDA encodes them (13000 = 13.0)
};
cuda_device_info cuda_device_properties();

/// The calling thread's current CUDA device (cudaGetDevice); 0 when built without CUDA.
int cuda_current_device();
/// Makes `device` the calling thread's current CUDA device (cudaSetDevice).
void cuda_set_device(int device);

/// cudaMalloc / cudaFree.
void* device_malloc(size_t bytes);
void device_free(void* p) noexcept;
/// Synchronous copies between host and device memory.
void copy_to_device(void* device_dst, const void* host_src, size_t bytes);
void copy_to_host(void* host_dst, const void* device_src, size_t bytes);
/// Waits for all work on the stream.
void synchronize(const cuda_t& exec);
/// Runs `work` (which enqueues on exec's stream) between two CUDA events and returns the
/// elapsed device time in milliseconds; waits for the work to finish.
double elapsed_ms(const cuda_t& exec, const std::function<void()>& work);

/// An owning array in device memory.
template <class T>
class device_vector {
 public:
  device_vector() = default;
  explicit device_vector(int64_t n) : n_(n) {
    if (n > 0) p_ = static_cast<T*>(device_malloc(size_t(n) * sizeof(T)));
  }
  /// A device copy of host data.
  explicit device_vector(span<const T> host) : device_vector(host.size()) {
    if (n_ > 0) copy_to_device(p_, host.data(), size_t(n_) * sizeof(T));
  }
  device_vector(const device_vector&) = delete;
  device_vector& operator=(const device_vector&) = delete;
  device_vector(device_vector&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  device_vector& operator=(device_vector&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~device_vector() { device_free(p_); }

  T* data() const { return p_; }
  int64_t size() const { return n_; }
  span<T> view() const { return {p_, n_}; }
  operator span<T>() const { return view(); }              // NOLINT: a view, like std::span
  operator span<const T>() const { return {p_, n_}; }      // NOLINT
  /// Copies to host memory (host.size() must be size()).
  void copy_to(span<T> host) const {
    if (n_ > 0) copy_to_host(host.data(), p_, size_t(n_) * sizeof(T));
  }

 private:
  T* p_ = nullptr;
  int64_t n_ = 0;
};

/// A device copy of a contiguous host range: `auto d = gsearch::to_device(host_vector)`.
/// (Avoids `device_vector<T> v(span<const T>(x));`, which C++ parses as a function declaration.)
template <class R>
auto to_device(const R& host_range) {
  using T = std::remove_cvref_t<decltype(*std::ranges::data(host_range))>;
  return device_vector<T>(span<const T>(host_range));
}

}  // namespace gsearch
