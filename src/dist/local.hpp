#pragma once
// The per-element steps of the distributed operations on each backend (private to src/dist/):
// operations.hpp is written once over a `Local`, which owns temporary arrays in its memory and
// does the few things the public API has no call for (route, pack, unpack, shift). The CPU's are
// loops here; the CUDA backend's are kernels (src/dist/cuda.hpp).

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "gsearch/core/span.hpp"
#include "cpu/parallel.hpp"
#include "dist/cuda.hpp"
#include "gsearch/execution.hpp"

namespace gsearch::dist::detail {

/// An owned temporary array of the backend's memory.
template <class T>
class array {
 public:
  array() = default;
  array(T* p, int64_t n, void (*release)(void*, void*), void* context)
      : p_(p), n_(n), release_(release), context_(context) {}
  array(array&& o) noexcept { swap(o); }
  array& operator=(array&& o) noexcept {
    swap(o);
    return *this;
  }
  array(const array&) = delete;
  array& operator=(const array&) = delete;
  ~array() {
    if (p_ && release_) release_(context_, p_);
  }
  T* data() const { return p_; }
  int64_t size() const { return n_; }
  span<T> view() const { return {p_, n_}; }
  span<const T> cview() const { return {p_, n_}; }

 private:
  void swap(array& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(release_, o.release_);
    std::swap(context_, o.context_);
  }
  T* p_ = nullptr;
  int64_t n_ = 0;
  void (*release_)(void*, void*) = nullptr;
  void* context_ = nullptr;
};

struct local_cpu {
  static constexpr bool device = false;
  cpu_t exec;
  CUstream_st* stream() const { return nullptr; }

  template <class T>
  array<T> make(int64_t n) const {
    return {n > 0 ? new T[size_t(n)] : nullptr, n, [](void*, void* p) { delete[] static_cast<T*>(p); },
            nullptr};
  }
  // Copies between this backend's memory and the host, or within it.
  void copy(void* dst, const void* src, int64_t bytes) const {
    if (bytes > 0) std::memcpy(dst, src, size_t(bytes));
  }
  void to_host(void* dst, const void* src, int64_t bytes) const { copy(dst, src, bytes); }
  void from_host(void* dst, const void* src, int64_t bytes) const { copy(dst, src, bytes); }
  void wait() const {}

  template <class Body>
  void each(int64_t n, Body body) const {
    const int threads = cpu_backend::thread_count(exec.threads, n, int64_t{1} << 16);
    cpu_backend::parallel_for(n, threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) body(i);
    });
  }
  void iota(int64_t* x, int64_t n, int64_t start) const {
    each(n, [=](int64_t i) { x[i] = start + i; });
  }
  void shift(int64_t* x, int64_t n, int64_t delta) const {
    if (delta != 0) each(n, [=](int64_t i) { x[i] = x[i] >= 0 ? x[i] + delta : x[i]; });
  }
  void map_rows(int64_t* rows, int64_t n, const int64_t* ids) const {
    each(n, [=](int64_t i) { rows[i] = rows[i] < 0 ? -1 : ids[rows[i]]; });
  }
  template <class T>
  void gather(const T* src, const int64_t* idx, int64_t n, T* dst) const {
    each(n, [=](int64_t i) { dst[i] = src[idx[i]]; });
  }
  template <class T>
  void scatter(const T* src, const int64_t* idx, int64_t n, T* dst) const {
    each(n, [=](int64_t i) { dst[idx[i]] = src[i]; });
  }
  /// A counting sort of the indices by owner (stable).
  std::vector<int64_t> partition(const int32_t* owner, int64_t n, int ranks, int64_t* perm) const {
    std::vector<int64_t> counts(size_t(ranks), 0), next(size_t(ranks), 0);
    for (int64_t i = 0; i < n; ++i) ++counts[size_t(owner[i])];
    for (int r = 1; r < ranks; ++r) next[size_t(r)] = next[size_t(r - 1)] + counts[size_t(r - 1)];
    for (int64_t i = 0; i < n; ++i) perm[next[size_t(owner[i])]++] = i;
    return counts;
  }
  void replicate(const void* src, int64_t bytes, int copies, void* dst) const {
    for (int c = 0; c < copies; ++c) copy(static_cast<char*>(dst) + int64_t(c) * bytes, src, bytes);
  }
};

struct local_cuda {
  static constexpr bool device = true;
  cuda_t exec;
  CUstream_st* stream() const { return exec.stream; }

  template <class T>
  array<T> make(int64_t n) const {
    auto* p = static_cast<T*>(cuda_backend::dist_alloc(exec.stream, n * int64_t(sizeof(T))));
    return {p, n, [](void* s, void* q) { cuda_backend::dist_free(static_cast<CUstream_st*>(s), q); },
            exec.stream};
  }
  void copy(void* dst, const void* src, int64_t bytes) const {
    cuda_backend::dist_copy(exec.stream, dst, src, bytes, false);
  }
  // To the host: waits for it. From the host: the source may go once this returns.
  void to_host(void* dst, const void* src, int64_t bytes) const {
    cuda_backend::dist_copy(exec.stream, dst, src, bytes, true);
  }
  void from_host(void* dst, const void* src, int64_t bytes) const {
    cuda_backend::dist_copy(exec.stream, dst, src, bytes, true);
  }
  void wait() const { cuda_backend::dist_copy(exec.stream, nullptr, nullptr, 0, true); }
  void iota(int64_t* x, int64_t n, int64_t start) const { cuda_backend::dist_iota(exec.stream, x, n, start); }
  void shift(int64_t* x, int64_t n, int64_t delta) const { cuda_backend::dist_shift(exec.stream, x, n, delta); }
  void map_rows(int64_t* rows, int64_t n, const int64_t* ids) const {
    cuda_backend::dist_map_rows(exec.stream, rows, n, ids);
  }
  template <class T>
  void gather(const T* src, const int64_t* idx, int64_t n, T* dst) const {
    cuda_backend::dist_gather(exec.stream, src, idx, n, dst, int(sizeof(T)));
  }
  template <class T>
  void scatter(const T* src, const int64_t* idx, int64_t n, T* dst) const {
    cuda_backend::dist_scatter(exec.stream, src, idx, n, dst, int(sizeof(T)));
  }
  std::vector<int64_t> partition(const int32_t* owner, int64_t n, int ranks, int64_t* perm) const {
    return cuda_backend::dist_partition(exec.stream, owner, n, ranks, perm);
  }
  void replicate(const void* src, int64_t bytes, int copies, void* dst) const {
    cuda_backend::dist_replicate(exec.stream, src, bytes, copies, dst);
  }
};

inline local_cpu local_for(const cpu_t& exec) { return {exec}; }
inline local_cuda local_for(const cuda_t& exec) { return {exec}; }

}  // namespace gsearch::dist::detail
