// The CUDA backend of the static index: static_index_kernel.cuh's build and search, with the
// launch configuration of tuning.hpp.

#include "static_index/backend.hpp"
#include "static_index/cuda/static_index_kernel.cuh"
#include "cuda/stream_buffer.cuh"
#include "search/tuning.hpp"

namespace gsearch::cuda_backend {

template <class T>
void index_build(CUstream_st* stream, const T* keys, int64_t n, T* layout) {
  launch_index_build(stream, keys, core::static_index_shape<node_keys<T>>(n), layout, current_device_limits());
}

template <class T, class Out>
void index_search(CUstream_st* stream, side s, const index_ref<T>& ref, const T* queries, int64_t q, Out* out) {
  launch_index_search<index_config.threads, index_config.items>(stream, s, ref.layout, ref.shape,
                                                                index_shared_bytes<int(sizeof(T))>, queries, q, out,
                                                                current_device_limits());
}

template <class T, class Out>
void index_search_keys(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t q, Out* out,
                       launch_gate gate) {
  if (q <= 0) return;
  const device_limits dev = current_device_limits();
  const core::static_index_shape<node_keys<T>> shape(k);
  const stream_buffer memory(stream, size_t(shape.size()) * sizeof(T));
  T* layout = static_cast<T*>(memory.get());
  launch_index_build(stream, keys, shape, layout, dev, gate);
  launch_index_search<index_config.threads, index_config.items>(stream, s, layout, shape,
                                                                index_shared_bytes<int(sizeof(T))>, queries, q, out,
                                                                dev, gate);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_INDEX_BUILD_OPS)
GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS(GSEARCH_INDEX_SEARCH_OPS)
GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS(GSEARCH_INDEX_KEYS_CUDA_OPS)

}  // namespace gsearch::cuda_backend
