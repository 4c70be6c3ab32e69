#pragma once
/// \file
/// A GPU functional-arrays machine's cells and opens brought to the host (both forms: the launch
/// form's home arrays, the persistent machine's after a dump), for items, the sweep and the
/// checks (detail/functional_arrays_host.hpp).

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "gsearch/detail/cuda/check.cuh"
#include "gsearch/detail/functional_arrays_host.hpp"

namespace gsearch::cuda_backend {

/// Copies on `stream` and waits for them.
template <class V>
detail::fa_host_copy<V> fa_download(cudaStream_t stream, const int64_t* index, const V* value,
                                    const core::fa_span* spans, const int64_t* open, int64_t cells, int64_t slots) {
  detail::fa_host_copy<V> h{std::vector<int64_t>(size_t(cells)), std::vector<V>(size_t(cells)),
                            std::vector<core::fa_span>(size_t(cells)), std::vector<int64_t>(size_t(slots))};
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h.index.data(), index, size_t(cells) * sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h.value.data(), value, size_t(cells) * sizeof(V), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h.spans.data(), spans, size_t(cells) * sizeof(core::fa_span), cudaMemcpyDeviceToHost,
                                     stream));
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h.open.data(), open, size_t(slots) * sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

}  // namespace gsearch::cuda_backend
