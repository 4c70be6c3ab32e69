// search_bench's CUB peers, built against the newer CCCL headers given by
// GSEARCH_BENCH_CCCL_INCLUDE (scripts/fetch-cccl.sh puts PyPI's cuda-cccl there):
// cub::DeviceFind::UpperBound, and sort + UpperBoundSortedValues + scatter. Without those headers
// the functions throw (search_peers.hpp).

#include <cuda_runtime.h>

#include "gsearch/core/error.hpp"
#include "cuda/check.cuh"
#include "search_peers.hpp"

#if GSEARCH_BENCH_HAS_NEW_CCCL
#include "new_cccl.cuh"
#include <cub/device/device_find.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cuda/std/functional>

#include "device_inputs.cuh"
#endif

namespace gsearch::bench::search_peers {

#if GSEARCH_BENCH_HAS_NEW_CCCL

template <class T>
size_t cub_temp_bytes(const T* keys, int64_t k, const T* queries, int64_t n, int32_t* out) {
  size_t bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceFind::UpperBound(nullptr, bytes, keys, k, queries, n, out, cuda::std::less<T>{}));
  return bytes;
}

template <class T>
void cub_upper_bound(CUstream_st* stream, void* temp, size_t temp_bytes, const T* keys, int64_t k,
                     const T* queries, int64_t n, int32_t* out) {
  GSEARCH_CUDA_CHECK(cub::DeviceFind::UpperBound(temp, temp_bytes, keys, k, queries, n, out,
                                                 cuda::std::less<T>{}, stream));
}
// The pieces of cub_sort_search_scatter's temporary storage, 256-byte aligned, in one allocation.
template <class T>
struct sort_search_parts {
  size_t sort_bytes = 0, search_bytes = 0;
  size_t offsets[6] = {};  // sorted queries, positions in, positions out, ranks, sort temp, search temp
  size_t total = 0;
  sort_search_parts(const T* keys, int64_t k, int64_t n) {
    GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, static_cast<const T*>(nullptr),
                                                       static_cast<T*>(nullptr), static_cast<const int32_t*>(nullptr),
                                                       static_cast<int32_t*>(nullptr), n));
    GSEARCH_CUDA_CHECK(cub::DeviceFind::UpperBoundSortedValues(nullptr, search_bytes, keys, k,
                                                               static_cast<const T*>(nullptr), n,
                                                               static_cast<int32_t*>(nullptr), cuda::std::less<T>{}));
    const size_t sizes[6] = {size_t(n) * sizeof(T), size_t(n) * 4, size_t(n) * 4, size_t(n) * 4, sort_bytes, search_bytes};
    for (int i = 0; i < 6; ++i) {
      offsets[i] = total;
      total += (sizes[i] + 255) / 256 * 256;
    }
  }
};

template <class T>
size_t cub_sort_search_bytes(const T* keys, int64_t k, int64_t n) {
  return sort_search_parts<T>(keys, k, n).total;
}

template <class T>
void cub_sort_search_scatter(CUstream_st* stream, void* temp, size_t temp_bytes, const T* keys, int64_t k,
                             const T* queries, int64_t n, int32_t* out) {
  const sort_search_parts<T> p(keys, k, n);
  if (temp_bytes < p.total) throw gsearch::invalid_argument("cub_sort_search_scatter: temporary storage too small");
  auto* base = static_cast<unsigned char*>(temp);
  T* sorted = reinterpret_cast<T*>(base + p.offsets[0]);
  auto* pos_in = reinterpret_cast<int32_t*>(base + p.offsets[1]);
  auto* pos_out = reinterpret_cast<int32_t*>(base + p.offsets[2]);
  auto* ranks = reinterpret_cast<int32_t*>(base + p.offsets[3]);
  size_t sort_bytes = p.sort_bytes, search_bytes = p.search_bytes;
  bench::iota_kernel<<<1024, 256, 0, stream>>>(pos_in, n);
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(base + p.offsets[4], sort_bytes, queries, sorted, pos_in, pos_out,
                                                     n, 0, int(sizeof(T) * 8), stream));
  GSEARCH_CUDA_CHECK(cub::DeviceFind::UpperBoundSortedValues(base + p.offsets[5], search_bytes, keys, k, sorted, n,
                                                             ranks, cuda::std::less<T>{}, stream));
  bench::scatter_kernel<<<1024, 256, 0, stream>>>(ranks, pos_out, n, out);
  GSEARCH_CUDA_CHECK_LAUNCH();
}
#else
template <class T>
size_t cub_temp_bytes(const T*, int64_t, const T*, int64_t, int32_t*) {
  return 0;
}
template <class T>
void cub_upper_bound(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, int32_t*) {
  throw gsearch::invalid_argument("this benchmark was built without the newer CCCL (cub::DeviceFind)");
}
template <class T>
size_t cub_sort_search_bytes(const T*, int64_t, int64_t) {
  return 0;
}
template <class T>
void cub_sort_search_scatter(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, int32_t*) {
  throw gsearch::invalid_argument("this benchmark was built without the newer CCCL (cub::DeviceFind)");
}
#endif

#define GSEARCH_INSTANTIATE(T)                                                                      \
  template size_t cub_temp_bytes<T>(const T*, int64_t, const T*, int64_t, int32_t*);               \
  template void cub_upper_bound<T>(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, \
                                   int32_t*);                                                       \
  template size_t cub_sort_search_bytes<T>(const T*, int64_t, int64_t);                            \
  template void cub_sort_search_scatter<T>(CUstream_st*, void*, size_t, const T*, int64_t, const T*, \
                                           int64_t, int32_t*);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch::bench::search_peers
