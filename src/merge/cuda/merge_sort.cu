// merge_sort() on the GPU: merge_kernel.cuh's launch_merge_sort (a block sort of each tile, then
// Merge Path passes over runs of doubling width) with merge/tuning.hpp's merge_sort_config, of the
// device's policy.

#include "cuda/launch.hpp"
#include "merge/backend.hpp"
#include "merge/cuda/merge_kernel.cuh"
#include "merge/tuning.hpp"

namespace gsearch::cuda_backend {

namespace {

template <bool Values, class T>
void sort_with(CUstream_st* stream, const T* keys, int64_t n, const int64_t* values, T* out, int64_t* out_values) {
  with_policy(merge_policies{}, current_device_limits().arch, [&]<class P>() {
    constexpr launch_config c = P::template merge_sort_config<sizeof(T), Values>;
    constexpr int sort_threads = P::template merge_sort_block_threads<sizeof(T), Values>;
    launch_merge_sort<sort_threads, c.threads, c.items, c.min_blocks, Values>(stream, keys, n, values, out,
                                                                              out_values);
  });
}

}  // namespace

template <class T>
void merge_sort(CUstream_st* stream, const T* keys, int64_t n, const int64_t* values, T* out,
                int64_t* out_values) {
  if (values) {
    sort_with<true>(stream, keys, n, values, out, out_values);
  } else {
    sort_with<false>(stream, keys, n, values, out, out_values);
  }
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_MERGE_SORT_OPS)

}  // namespace gsearch::cuda_backend
