// find_bench's CUB peers, built against the newer CCCL headers given by
// GSEARCH_BENCH_CCCL_INCLUDE (scripts/fetch-cccl.sh puts PyPI's cuda-cccl, CCCL 3.6, there; the
// CUDA 13.0 toolkit's CCCL 3.0.1 has no cub::DeviceFind): cub::DeviceFind::FindIf and
// cub::DeviceSelect::If over a counting iterator. Without those headers the functions throw.
//
// The CCCL 3.6 signatures called here (cub/device/device_find.cuh, device_select.cuh):
//   DeviceFind::FindIf(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
//                      OutputIteratorT d_out, ScanOpT scan_op, NumItemsT num_items,
//                      const EnvT& env = {})
//   DeviceSelect::If(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
//                    OutputIteratorT d_out, NumSelectedIteratorT d_num_selected_out,
//                    int64_t num_items, SelectOp select_op, const EnvT& env = {})
// The stream travels in `env`: CUB asks it with cuda::get_stream, which takes a
// cuda::stream_ref. FindIf writes num_items to *d_out when nothing matches.

#include <cuda_runtime.h>

#include "find_peers.hpp"
#include "gsearch/core/error.hpp"
#include "cuda/check.cuh"

#if GSEARCH_BENCH_HAS_NEW_CCCL
#include "new_cccl.cuh"
#include <cub/device/device_find.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/iterator>
#include <cuda/stream_ref>
#endif

namespace gsearch::bench::find_peers {

#if GSEARCH_BENCH_HAS_NEW_CCCL
namespace {

template <class T>
struct equals {
  T v;
  __host__ __device__ bool operator()(const T& x) const { return x == v; }
};

// DeviceSelect::If's predicate on an index: does data[i] match?
template <class T>
struct index_matches {
  const T* data;
  T v;
  __host__ __device__ bool operator()(int64_t i) const { return data[i] == v; }
};

}  // namespace

template <class T>
size_t cub_find_if_temp_bytes(const T* data, int64_t n, int64_t* out) {
  size_t bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceFind::FindIf(nullptr, bytes, data, out, equals<T>{T{}}, n));
  return bytes;
}

template <class T>
void cub_find_if(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, int64_t n, T value,
                 int64_t* out) {
  GSEARCH_CUDA_CHECK(cub::DeviceFind::FindIf(temp, temp_bytes, data, out, equals<T>{value}, n,
                                             cuda::stream_ref{stream}));
}

template <class T>
size_t cub_select_temp_bytes(const T* data, int64_t n, int64_t* out, int64_t* count) {
  size_t bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, cuda::counting_iterator<int64_t>(0), out, count, n,
                                           index_matches<T>{data, T{}}));
  return bytes;
}

template <class T>
void cub_select_indices(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, int64_t n, T value,
                        int64_t* out, int64_t* count) {
  GSEARCH_CUDA_CHECK(cub::DeviceSelect::If(temp, temp_bytes, cuda::counting_iterator<int64_t>(0), out, count, n,
                                           index_matches<T>{data, value}, cuda::stream_ref{stream}));
}

#else  // no newer CCCL in this build

namespace {
[[noreturn]] void missing() {
  throw gsearch::invalid_argument(
      "find_bench was built without the newer CCCL (run scripts/fetch-cccl.sh and reconfigure): no CUB 3.6 peers");
}
}  // namespace
template <class T>
size_t cub_find_if_temp_bytes(const T*, int64_t, int64_t*) { missing(); }
template <class T>
void cub_find_if(CUstream_st*, void*, size_t, const T*, int64_t, T, int64_t*) { missing(); }
template <class T>
size_t cub_select_temp_bytes(const T*, int64_t, int64_t*, int64_t*) { missing(); }
template <class T>
void cub_select_indices(CUstream_st*, void*, size_t, const T*, int64_t, T, int64_t*, int64_t*) { missing(); }

#endif

#define GSEARCH_INSTANTIATE(T)                                                                       \
  template size_t cub_find_if_temp_bytes<T>(const T*, int64_t, int64_t*);                           \
  template void cub_find_if<T>(CUstream_st*, void*, size_t, const T*, int64_t, T, int64_t*);        \
  template size_t cub_select_temp_bytes<T>(const T*, int64_t, int64_t*, int64_t*);                  \
  template void cub_select_indices<T>(CUstream_st*, void*, size_t, const T*, int64_t, T, int64_t*, int64_t*);
GSEARCH_INSTANTIATE(int32_t)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch::bench::find_peers
