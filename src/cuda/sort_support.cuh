#pragma once
/// \file
/// What the CUDA backend's sorts of (key, position) pairs share: CUB's scratch from gsearch's
/// pool, and the positions 0 ... n - 1 a sort carries as its values.

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/stream_buffer.cuh"

namespace gsearch::cuda_backend {

/// CUB's scratch for `call` (a cub::Device* call made first with d_temp_storage == nullptr to
/// ask its size), then the call itself with it; the scratch from gsearch's pool, freed in stream
/// order.
template <class Call>
void with_cub_scratch(cudaStream_t stream, Call&& call) {
  size_t bytes = 0;
  GSEARCH_CUDA_CHECK(call(nullptr, bytes));
  const stream_buffer scratch(stream, bytes);
  GSEARCH_CUDA_CHECK(call(scratch.get(), bytes));
  GSEARCH_CUDA_CHECK_LAUNCH();
}

template <class P>
__global__ void __launch_bounds__(256) positions_kernel(P* __restrict__ out, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = P(i);
}

/// out[i] = i for i < n, stream-ordered (P: int64_t, or uint32_t where n <= 2^32).
template <class P>
void fill_positions(cudaStream_t stream, const device_limits& dev, P* out, int64_t n) {
  if (n > 0) launch_plain(positions_kernel<P>, n, 256, stream, dev, out, n);
}

}  // namespace gsearch::cuda_backend
