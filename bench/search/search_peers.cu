// search_bench's peers built against the CUDA toolkit's own CCCL: the roofline kernel and
// thrust::upper_bound (search_peers.hpp).

#include <cuda_runtime.h>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>

#include "cuda/check.cuh"
#include "search/cuda/search_kernel.cuh"
#include "search_peers.hpp"

namespace gsearch::bench::search_peers {
namespace {

// Thread i moves 16 bytes of input and 16 bytes of output per iteration; when the element
// sizes differ (8-byte keys, 4-byte results) the two streams are walked at their own pace.
// Each output word depends on the input, so nothing is optimized away.
template <class T>
__global__ void roofline_kernel(const int4* __restrict__ in, int64_t in_vecs, int4* __restrict__ out,
                                int64_t out_vecs) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t steps = in_vecs > out_vecs ? in_vecs : out_vecs;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < steps; i += stride) {
    int4 v = make_int4(0, 0, 0, 0);
    if (i < in_vecs) v = in[i];
    if (i < out_vecs) out[i] = make_int4(v.x ^ v.y, v.y, v.z ^ v.w, v.w);
  }
}

}  // namespace

template <class T>
void roofline_copy(CUstream_st* stream, const T* in, int64_t n, int32_t* out) {
  // n is a multiple of 4 in every benchmark; a remainder would be left unread.
  const int64_t in_vecs = n * int64_t(sizeof(T)) / 16, out_vecs = n * 4 / 16;
  const int sms = cuda_backend::current_device_limits().sms;
  roofline_kernel<T><<<sms * 8, 256, 0, stream>>>(reinterpret_cast<const int4*>(in), in_vecs,
                                                   reinterpret_cast<int4*>(out), out_vecs);
  GSEARCH_CUDA_CHECK_LAUNCH();
}

template <class T>
void thrust_upper_bound(CUstream_st* stream, const T* keys, int64_t k, const T* queries, int64_t n,
                        int32_t* out) {
  thrust::upper_bound(thrust::cuda::par_nosync.on(stream), keys, keys + k, queries, queries + n, out);
  GSEARCH_CUDA_CHECK_LAUNCH();
}

#define GSEARCH_INSTANTIATE(T)                                                       \
  template void roofline_copy<T>(CUstream_st*, const T*, int64_t, int32_t*);         \
  template void thrust_upper_bound<T>(CUstream_st*, const T*, int64_t, const T*, int64_t, int32_t*);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch::bench::search_peers
