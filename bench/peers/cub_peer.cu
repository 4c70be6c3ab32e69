// cub::DeviceFind::UpperBound, built against the newer CCCL headers given by
// GSEARCH_BENCH_CCCL_INCLUDE (scripts/fetch-cccl.sh puts PyPI's cuda-cccl there). Without them
// this file only says that the peer is missing.

#include <cuda_runtime.h>

#include <string>

#include "gsearch/cuda/check.cuh"
#include "peers.hpp"

#if GSEARCH_BENCH_HAS_NEW_CCCL
#include <cub/device/device_find.cuh>
#include <cub/version.cuh>
#include <cuda/std/functional>
#endif

namespace gsearch::bench {

#if GSEARCH_BENCH_HAS_NEW_CCCL
bool cub_available() { return true; }
std::string cub_version() {
  return std::to_string(CUB_MAJOR_VERSION) + "." + std::to_string(CUB_MINOR_VERSION) + "." +
         std::to_string(CUB_SUBMINOR_VERSION);
}

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
#else
bool cub_available() { return false; }
std::string cub_version() { return {}; }
template <class T>
size_t cub_temp_bytes(const T*, int64_t, const T*, int64_t, int32_t*) {
  return 0;
}
template <class T>
void cub_upper_bound(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, int32_t*) {
  throw gsearch::invalid_argument("this benchmark was built without the newer CCCL (cub::DeviceFind)");
}
#endif

#define GSEARCH_INSTANTIATE(T)                                                                      \
  template size_t cub_temp_bytes<T>(const T*, int64_t, const T*, int64_t, int32_t*);               \
  template void cub_upper_bound<T>(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, \
                                   int32_t*);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch::bench
