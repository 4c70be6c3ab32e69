// CUDA's gather_keys (search/backend.hpp): the keys in a sorter's order (numpy's sorter=),
// copied into the stream-ordered pool with every index checked, the check's answer read on the
// host before the search is enqueued on the copy.

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

#include "cuda/launch.cuh"
#include "cuda/stream_buffer.cuh"
#include "search/backend.hpp"

namespace gsearch::cuda_backend {
namespace {

constexpr int gather_threads = 256;

// gathered[i] = keys[sorter[i]] for i in [0, k), grid-stride; an index outside [0, k) leaves its
// slot unwritten and lowers *least_bad (set to all ones before) to its position.
template <class T>
__global__ void __launch_bounds__(gather_threads)
    gather_kernel(const T* __restrict__ keys, int64_t k, const int64_t* __restrict__ sorter, T* __restrict__ gathered,
                  unsigned long long* least_bad) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < k; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = sorter[i];
    if (j < 0 || j >= k)
      atomicMin(least_bad, static_cast<unsigned long long>(i));
    else
      gathered[i] = keys[j];
  }
}

}  // namespace

template <class T>
int64_t gather_keys(cudaStream_t stream, const T* keys, int64_t k, const int64_t* sorter,
                    const std::function<void(const T*)>& then) {
  if (k == 0) {
    then(keys);
    return -1;
  }
  const stream_buffer copy(stream, size_t(k) * sizeof(T));
  T* gathered = static_cast<T*>(copy.get());
  unsigned long long least_bad = 0;
  {
    const host_wait_word word(stream);  // no allocation per call
    auto* bad = reinterpret_cast<unsigned long long*>(word.get());
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(bad, 0xff, sizeof(*bad), stream));
    launch_plain(gather_kernel<T>, k, gather_threads, stream, current_device_limits(), keys, k, sorter, gathered, bad);
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&least_bad, bad, sizeof(least_bad), cudaMemcpyDeviceToHost, stream));
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  if (least_bad != ~0ULL) return int64_t(least_bad);
  then(gathered);  // enqueued before `copy` is freed (in stream order)
  return -1;
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_GATHER_OPS)

}  // namespace gsearch::cuda_backend
