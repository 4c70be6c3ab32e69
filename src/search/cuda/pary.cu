// The CUDA backend of the P-ary search (algorithm::pary): pary_kernel.cuh's warp search, one warp
// per query, for the response time of one or few queries.

#include "cuda/launch.cuh"
#include "search/cuda/pary_kernel.cuh"
#include "search/cuda/gated.hpp"
#include "search/tuning.hpp"

namespace gsearch::cuda_backend {

// P-ary search, a warp per query: warp w of block b takes queries b x (Threads / 32) + w, then
// one grid further, and so on (the loop's bounds are the same for the whole warp).
template <bool Strict, class T, class Out, int Threads>
__global__ void __launch_bounds__(Threads)
    pary_search_kernel(const T* __restrict__ keys, int64_t k, const T* __restrict__ queries, int64_t n,
                       Out* __restrict__ out, int offset, launch_gate gate) {
  if (gate.closed()) return;
  constexpr int warps = Threads / warp_width;
  for (int64_t j = int64_t(blockIdx.x) * warps + threadIdx.x / warp_width; j < n; j += int64_t(gridDim.x) * warps) {
    const int64_t rank = pary_warp_rank(keys, k, before<Strict, T>{queries[j]});
    if (threadIdx.x % warp_width == 0) out[j] = Out(rank + offset);
  }
}

template <class T, class Out>
void pary_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                 launch_gate gate) {
  if (n <= 0) return;
  constexpr int threads = pary_threads;
  const int64_t blocks = (n + threads / warp_width - 1) / (threads / warp_width);
  const unsigned grid = unsigned(blocks < (int64_t{1} << 20) ? blocks : (int64_t{1} << 20));
  visit_side(s, [&]<bool Strict>(int offset) {
    launch(pary_search_kernel<Strict, T, Out, threads>, grid, threads, 0, stream, keys, k, queries, n, out, offset,
           gate);
  });
}

GSEARCH_KEY_TYPES(GSEARCH_CUDA_PARY_INSTANTIATE)

}  // namespace gsearch::cuda_backend
