// merge() on the GPU: Merge Path tiles (merge_kernel.cuh), keys or key-value.

#include "cuda/launch.hpp"
#include "merge/backend.hpp"
#include "merge/cuda/merge_kernel.cuh"
#include "merge/tuning.hpp"

namespace gsearch::cuda_backend {

template <class T>
void merge(CUstream_st* stream, const T* a, int64_t na, const T* b, int64_t nb, T* out,
           const int64_t* a_values, const int64_t* b_values, int64_t* out_values) {
  with_policy(merge_policies{}, current_device_limits().arch, [&]<class P>() {
    constexpr launch_config c = P::template merge_config<sizeof(T)>;
    constexpr int64_t tile = int64_t(c.threads) * c.items;
    const int64_t tiles = (na + nb + tile - 1) / tile;
    const two_lists<T> lists{a, na, b, nb, a_values, b_values};
    if (out_values) {
      launch_merge<c.threads, c.items, true, c.min_blocks>(stream, lists, tiles, out, out_values);
    } else {
      launch_merge<c.threads, c.items, false, c.min_blocks>(stream, lists, tiles, out, out_values);
    }
  });
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_MERGE_OPS)

}  // namespace gsearch::cuda_backend
