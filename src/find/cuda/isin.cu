// The CUDA backend of isin: the test elements sorted on the device (CUB's radix sort, from the
// toolkit) and searched with PBS-CL in shared memory, or in global memory, or put in a hash set.

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/find.hpp"
#include "find/backend.hpp"
#include "cuda/launch.cuh"
#include "find/cuda/isin_kernel.cuh"
#include "cuda/stream_buffer.cuh"
#include "find/tuning.hpp"
#include "search/tuning.hpp"

namespace gsearch::cuda_backend {
namespace {

// Bytes rounded up to 256, so that buffers carved out of one allocation stay aligned.
constexpr size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

template <class T>
void isin_sorted(cudaStream_t stream, const T* elements, int64_t n, const T* tests, int64_t m,
                 bool* out, bool invert, const device_limits& dev) {
  // Canonical copy, then the radix sort into a second buffer.
  size_t sort_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, static_cast<const T*>(nullptr),
                                                    static_cast<T*>(nullptr), m, 0, int(sizeof(T) * 8), stream));
  const size_t key_bytes = aligned(size_t(m) * sizeof(T));
  const stream_buffer memory(stream, 2 * key_bytes + sort_bytes);
  T* canon = static_cast<T*>(memory.get());
  T* sorted = reinterpret_cast<T*>(static_cast<char*>(memory.get()) + key_bytes);
  void* sort_temp = static_cast<char*>(memory.get()) + 2 * key_bytes;
  const int copy_grid = int(std::min<int64_t>((m + 255) / 256, 4LL * dev.sms));
  launch(canonical_copy_kernel<T>, copy_grid, 256, 0, stream, tests, m, canon);
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(sort_temp, sort_bytes, canon, sorted, m, 0,
                                                    int(sizeof(T) * 8), stream));
  // NaNs, now last, stay: they equal nothing.
  constexpr launch_config cfg = shared_config<algorithm::pbs_cl, int(sizeof(T))>;
  const auto launch_shared = [&](auto kernel, int copies) {
    const int64_t tiles = (n + cfg.threads * cfg.items - 1) / (cfg.threads * cfg.items);
    launch_filling(kernel, cfg.threads, staged_bytes<T>(m, copies), tiles, stream, dev, sorted, int(m), elements, n, out,
                   invert);
  };
  if (fits_shared<T>(m, dev, 2)) {
    launch_shared(isin_shared_kernel<algorithm::pbs_cl, T, cfg.threads, cfg.items, 2>, 2);
  } else if (fits_shared<T>(m, dev)) {
    launch_shared(isin_shared_kernel<algorithm::pbs_cl, T, cfg.threads, cfg.items, 1>, 1);
  } else {
    constexpr launch_config g = rows_global_config;  // 4 independent global searches per thread
    auto kernel = isin_global_kernel<T, g.threads, g.items>;
    launch_filling(kernel, g.threads, 0, (n + g.threads * g.items - 1) / (g.threads * g.items), stream, dev, sorted, m,
                   elements, n, out, invert);
  }
}

template <class T>
void isin_hash(cudaStream_t stream, const T* elements, int64_t n, const T* tests, int64_t m,
               bool* out, bool invert, const device_limits& dev) {
  const int64_t capacity = core::hash_set_capacity(m);
  const size_t slot_bytes = aligned(size_t(capacity) * sizeof(T));
  const stream_buffer memory(stream, slot_bytes + sizeof(int));
  T* slots = static_cast<T*>(memory.get());
  int* holds_empty_key = reinterpret_cast<int*>(static_cast<char*>(memory.get()) + slot_bytes);
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(slots, 0xFF, size_t(capacity) * sizeof(T), stream));  // all empty
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(holds_empty_key, 0, sizeof(int), stream));
  const core::hash_set_view<T> set{slots, uint64_t(capacity) - 1, false};
  const int build_grid = int(std::min<int64_t>((m + 255) / 256, 8LL * dev.sms));
  launch(hash_build_kernel<T>, build_grid, 256, 0, stream, tests, m, set, holds_empty_key);
  constexpr launch_config cfg = isin_hash_config;
  auto kernel = isin_hash_kernel<T, cfg.threads, cfg.items>;
  launch_filling(kernel, cfg.threads, 0, (n + cfg.threads * cfg.items - 1) / (cfg.threads * cfg.items), stream, dev,
                 elements, n, set, holds_empty_key, out, invert);
}

}  // namespace

template <class T>
void isin(CUstream_st* stream, const T* elements, int64_t n, const T* tests, int64_t m, bool* out,
          bool invert, int method) {
  if (n == 0) return;
  if (m == 0) {  // nothing is a member
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(out, invert ? 1 : 0, size_t(n), stream));
    return;
  }
  const device_limits dev = current_device_limits();
  isin_method how = isin_method(method);
  if (how == isin_method::auto_)
    how = fits_shared<T>(m, dev) ? isin_method::sorted : isin_method::hash;
  if (how == isin_method::hash) {
    isin_hash(stream, elements, n, tests, m, out, invert, dev);
  } else {
    isin_sorted(stream, elements, n, tests, m, out, invert, dev);
  }
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_ISIN_OPS)

}  // namespace gsearch::cuda_backend
