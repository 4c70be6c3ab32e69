// search() of sorted queries on the GPU (search_options::queries_sorted): sorted_search_kernel.cuh.

#include "cuda/launch.hpp"
#include "merge/backend.hpp"
#include "merge/cuda/sorted_search_kernel.cuh"
#include "merge/tuning.hpp"

namespace gsearch::cuda_backend {

template <class T, class Out>
void sorted_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries,
                   int64_t n, Out* out, launch_gate gate) {
  if (n <= 0) return;
  with_policy(merge_policies{}, current_device_limits().arch, [&]<class P>() {
    constexpr launch_config c = P::template sorted_search_config<sizeof(T)>;
    visit_side_exact(s, [&]<bool Strict, bool Pred>() {
      launch_sorted_search<c.threads, c.items, Strict, Pred>(stream, keys, k, queries, n, out, gate);
    });
  });
}

#define GSEARCH_CUDA_SORTED_SEARCH_INSTANTIATE(T)                                          \
  template void sorted_search<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, \
                                          int64_t, int64_t*, launch_gate);                 \
  template void sorted_search<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, \
                                          int64_t, int32_t*, launch_gate);
GSEARCH_KEY_TYPES(GSEARCH_CUDA_SORTED_SEARCH_INSTANTIATE)
#undef GSEARCH_CUDA_SORTED_SEARCH_INSTANTIATE

}  // namespace gsearch::cuda_backend
