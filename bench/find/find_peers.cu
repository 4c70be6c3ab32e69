// find_bench's peers built against the CUDA toolkit's own CCCL (3.0.1 with CUDA 13.0): the
// read-only roofline kernel and thrust's find, count, copy_if and sort + binary_search.
// See find_peers.hpp.

#include <cuda_runtime.h>
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/find.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sort.h>

#include "find_peers.hpp"
#include "gsearch/core/error.hpp"
#include "cuda/check.cuh"
#include "../common/thrust_cache.cuh"

namespace gsearch::bench::find_peers {
namespace {

constexpr uint32_t sink_magic = 0x9e3779b9u;

template <bool Streaming>
__device__ __forceinline__ int4 load16(const int4* p) {
  if constexpr (Streaming) {
    return __ldcs(p);  // ld.global.cs: evict-first, the data is read once
  } else {
    return __ldg(p);  // ld.global.nc: the read-only path
  }
}

// Grid-stride over 16-byte words, Unroll independent loads issued before any is used. Each
// thread folds what it read into one word and stores it only if it equals sink_magic.
template <int Unroll, bool Streaming>
__global__ void __launch_bounds__(1024) read_kernel(const int4* __restrict__ in, int64_t vecs, uint32_t* sink) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t acc = 0;
  for (; i + (Unroll - 1) * stride < vecs; i += Unroll * stride) {
    int4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) v[u] = load16<Streaming>(in + i + u * stride);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc ^= uint32_t(v[u].x ^ v[u].y ^ v[u].z ^ v[u].w);
  }
  for (; i < vecs; i += stride) {
    const int4 v = load16<Streaming>(in + i);
    acc ^= uint32_t(v.x ^ v.y ^ v.z ^ v.w);
  }
  if (acc == sink_magic) *sink = acc;
}

template <class T>
struct equals {
  T v;
  __host__ __device__ bool operator()(const T& x) const { return x == v; }
};

int sm_count() {
  int device = 0, sms = 0;
  GSEARCH_CUDA_CHECK(cudaGetDevice(&device));
  GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace

std::vector<read_config> read_configs() {
  std::vector<read_config> c;
  for (bool streaming : {false, true})
    for (int unroll : {1, 2, 4, 8})
      for (int blocks : {4, 8, 16}) c.push_back({unroll, blocks, 256, streaming});
  c.push_back({4, 2, 1024, false});
  c.push_back({8, 2, 1024, false});
  return c;
}

void roofline_read(CUstream_st* stream, const void* data, int64_t bytes, read_config cfg, uint32_t* sink) {
  if (bytes % 16 != 0 || reinterpret_cast<uintptr_t>(data) % 16 != 0)
    throw gsearch::invalid_argument("roofline_read: the data must be 16-byte aligned and a multiple of 16 bytes");
  const int64_t vecs = bytes / 16;
  const int blocks = sm_count() * cfg.blocks_per_sm;
  const auto* in = static_cast<const int4*>(data);
  const auto launch = [&](auto kernel) { kernel<<<blocks, cfg.threads, 0, stream>>>(in, vecs, sink); };
  switch (cfg.unroll * 2 + int(cfg.streaming)) {
    case 2: launch(read_kernel<1, false>); break;
    case 3: launch(read_kernel<1, true>); break;
    case 4: launch(read_kernel<2, false>); break;
    case 5: launch(read_kernel<2, true>); break;
    case 8: launch(read_kernel<4, false>); break;
    case 9: launch(read_kernel<4, true>); break;
    case 16: launch(read_kernel<8, false>); break;
    case 17: launch(read_kernel<8, true>); break;
    default: throw gsearch::invalid_argument("roofline_read: unroll must be 1, 2, 4 or 8");
  }
  GSEARCH_CUDA_CHECK_LAUNCH();
}

template <class T>
int64_t thrust_find(CUstream_st* stream, const T* data, int64_t n, T value) {
  const T* it = thrust::find(thrust::cuda::par_nosync(thrust_cache()).on(stream), data, data + n, value);
  GSEARCH_CUDA_CHECK_LAUNCH();
  return it == data + n ? -1 : int64_t(it - data);
}

template <class T>
int64_t thrust_count(CUstream_st* stream, const T* data, int64_t n, T value) {
  const auto c = thrust::count(thrust::cuda::par_nosync(thrust_cache()).on(stream), data, data + n, value);
  GSEARCH_CUDA_CHECK_LAUNCH();
  return int64_t(c);
}

template <class T>
int64_t thrust_find_all(CUstream_st* stream, const T* data, int64_t n, T value, int64_t* out) {
  const thrust::counting_iterator<int64_t> first(0);
  int64_t* end = thrust::copy_if(thrust::cuda::par_nosync(thrust_cache()).on(stream), first, first + n, data, out, equals<T>{value});
  GSEARCH_CUDA_CHECK_LAUNCH();
  return int64_t(end - out);
}

template <class T>
void thrust_isin(CUstream_st* stream, const T* elements, int64_t n, const T* tests, int64_t m, T* scratch,
                 bool* out) {
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(scratch, tests, size_t(m) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  const auto policy = thrust::cuda::par_nosync(thrust_cache()).on(stream);
  thrust::sort(policy, scratch, scratch + m);
  thrust::binary_search(policy, scratch, scratch + m, elements, elements + n, out);
  GSEARCH_CUDA_CHECK_LAUNCH();
}

#define GSEARCH_INSTANTIATE(T)                                                                    \
  template int64_t thrust_find<T>(CUstream_st*, const T*, int64_t, T);                           \
  template int64_t thrust_count<T>(CUstream_st*, const T*, int64_t, T);                          \
  template int64_t thrust_find_all<T>(CUstream_st*, const T*, int64_t, T, int64_t*);             \
  template void thrust_isin<T>(CUstream_st*, const T*, int64_t, const T*, int64_t, T*, bool*);
GSEARCH_INSTANTIATE(int32_t)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch::bench::find_peers
