// merge_bench's peers built against the CUDA toolkit's own CCCL (3.0.1 with CUDA 13.0): the
// vectorized copy / read roofline kernel and thrust's merge, merge_by_key, set operations,
// upper_bound, sort and sort_by_key. See merge_peers.hpp.

#include <cuda_runtime.h>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <thrust/merge.h>
#include <thrust/set_operations.h>
#include <thrust/sort.h>

#include "gsearch/core/error.hpp"
#include "cuda/check.cuh"
#include "merge_peers.hpp"
#include "thrust_set_op.cuh"
#include "../common/thrust_cache.cuh"

namespace gsearch::bench::merge_peers {
namespace {

constexpr uint32_t sink_magic = 0x9e3779b9u;
constexpr int roof_threads = 256;

constexpr int max_segments = 4;

struct segments4 {
  const int4* src[max_segments];
  int4* dst[max_segments];
  int64_t end[max_segments];  // cumulative 16-byte words
};

// Grid-stride over the concatenated segments' words, Unroll loads issued before any store.
template <int Unroll>
__global__ void __launch_bounds__(roof_threads) roof_kernel(segments4 s, uint32_t* sink) {
  const int64_t total = s.end[max_segments - 1];
  const int64_t stride = int64_t(gridDim.x) * roof_threads;
  uint32_t acc = 0;
  auto locate = [&](int64_t w, int& seg, int64_t& off) {
    seg = w < s.end[0] ? 0 : (w < s.end[1] ? 1 : (w < s.end[2] ? 2 : 3));
    off = w - (seg == 0 ? 0 : s.end[seg - 1]);
  };
  for (int64_t base = int64_t(blockIdx.x) * roof_threads + threadIdx.x; base < total; base += Unroll * stride) {
    int4 v[Unroll];
    int seg[Unroll];
    int64_t off[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const int64_t w = base + u * stride;
      seg[u] = -1;
      if (w < total) {
        locate(w, seg[u], off[u]);
        v[u] = __ldcs(s.src[seg[u]] + off[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      if (seg[u] < 0) continue;
      if (s.dst[seg[u]] != nullptr) {
        __stcs(s.dst[seg[u]] + off[u], v[u]);
      } else {
        acc ^= uint32_t(v[u].x ^ v[u].y ^ v[u].z ^ v[u].w);
      }
    }
  }
  if (acc == sink_magic) *sink = acc;
}

int sm_count() {
  int device = 0, sms = 0;
  GSEARCH_CUDA_CHECK(cudaGetDevice(&device));
  GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

template <class T>
struct less_than {
  __host__ __device__ bool operator()(const T& x, const T& y) const { return x < y; }
};

}  // namespace

std::vector<roofline_config> roofline_configs() {
  std::vector<roofline_config> c;
  for (int unroll : {1, 2, 4})
    for (int blocks : {4, 8, 16}) c.push_back({unroll, blocks});
  return c;
}

void roofline(CUstream_st* stream, const std::vector<segment>& segments, roofline_config cfg, uint32_t* sink) {
  if (segments.size() > max_segments) throw gsearch::invalid_argument("roofline: at most 4 segments");
  segments4 s{};
  int64_t end = 0;
  for (size_t i = 0; i < max_segments; ++i) {
    if (i < segments.size()) {
      const segment& g = segments[i];
      if (g.bytes % 16 != 0 || reinterpret_cast<uintptr_t>(g.src) % 16 != 0 ||
          reinterpret_cast<uintptr_t>(g.dst) % 16 != 0)
        throw gsearch::invalid_argument("roofline: segments must be 16-byte aligned multiples of 16 bytes");
      s.src[i] = static_cast<const int4*>(g.src);
      s.dst[i] = static_cast<int4*>(g.dst);
      end += g.bytes / 16;
    }
    s.end[i] = end;
  }
  if (end == 0) return;
  const int blocks = sm_count() * cfg.blocks_per_sm;
  switch (cfg.unroll) {
    case 1: roof_kernel<1><<<blocks, roof_threads, 0, stream>>>(s, sink); break;
    case 2: roof_kernel<2><<<blocks, roof_threads, 0, stream>>>(s, sink); break;
    case 4: roof_kernel<4><<<blocks, roof_threads, 0, stream>>>(s, sink); break;
    default: throw gsearch::invalid_argument("roofline: unroll must be 1, 2 or 4");
  }
  GSEARCH_CUDA_CHECK_LAUNCH();
}

template <class T>
void thrust_merge(CUstream_st* stream, const T* a, int64_t na, const T* b, int64_t nb, T* out) {
  thrust::merge(thrust::cuda::par_nosync(thrust_cache()).on(stream), a, a + na, b, b + nb, out);
  GSEARCH_CUDA_CHECK_LAUNCH();
}

template <class T>
void thrust_merge_by_key(CUstream_st* stream, const T* a, const int64_t* av, int64_t na, const T* b,
                         const int64_t* bv, int64_t nb, T* out, int64_t* out_values) {
  thrust::merge_by_key(thrust::cuda::par_nosync(thrust_cache()).on(stream), a, a + na, b, b + nb, av, bv, out, out_values);
  GSEARCH_CUDA_CHECK_LAUNCH();
}

template <class T>
int64_t thrust_set_op(CUstream_st* stream, int op, const T* a, int64_t na, const T* b, int64_t nb, T* out) {
  return set_op_with(thrust::cuda::par(thrust_cache()).on(stream), "thrust_set_op", op, a, na, b, nb, out);
}

template <class T>
void thrust_upper_bound(CUstream_st* stream, const T* keys, int64_t k, const T* queries, int64_t q, int32_t* out) {
  thrust::upper_bound(thrust::cuda::par_nosync(thrust_cache()).on(stream), keys, keys + k, queries, queries + q, out);
  GSEARCH_CUDA_CHECK_LAUNCH();
}

template <class T>
void thrust_sort(CUstream_st* stream, T* data, int64_t n) {
  thrust::sort(thrust::cuda::par_nosync(thrust_cache()).on(stream), data, data + n);
  GSEARCH_CUDA_CHECK_LAUNCH();
}

template <class T>
void thrust_sort_by_key(CUstream_st* stream, T* keys, int64_t* values, int64_t n) {
  thrust::sort_by_key(thrust::cuda::par_nosync(thrust_cache()).on(stream), keys, keys + n, values);
  GSEARCH_CUDA_CHECK_LAUNCH();
}

#define GSEARCH_INSTANTIATE(T)                                                                              \
  template void thrust_merge<T>(CUstream_st*, const T*, int64_t, const T*, int64_t, T*);                     \
  template void thrust_merge_by_key<T>(CUstream_st*, const T*, const int64_t*, int64_t, const T*,            \
                                       const int64_t*, int64_t, T*, int64_t*);                               \
  template int64_t thrust_set_op<T>(CUstream_st*, int, const T*, int64_t, const T*, int64_t, T*);            \
  template void thrust_upper_bound<T>(CUstream_st*, const T*, int64_t, const T*, int64_t, int32_t*);         \
  template void thrust_sort<T>(CUstream_st*, T*, int64_t);                                                   \
  template void thrust_sort_by_key<T>(CUstream_st*, T*, int64_t*, int64_t);
GSEARCH_INSTANTIATE(int32_t)
#undef GSEARCH_INSTANTIATE
// 8-byte keys: the int64 merge and the sort of its inputs only.
template void thrust_merge<int64_t>(CUstream_st*, const int64_t*, int64_t, const int64_t*, int64_t, int64_t*);
template void thrust_sort<int64_t>(CUstream_st*, int64_t*, int64_t);

}  // namespace gsearch::bench::merge_peers
