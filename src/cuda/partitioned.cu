// The CUDA backend of the partitioned search (algorithm::partitioned): partition_kernel.cuh with
// the configuration of tuning.hpp.

#include "gsearch/cuda/partition_kernel.cuh"
#include "gsearch/cuda/search.hpp"

namespace gsearch::cuda_backend {

#define GSEARCH_DECLARE_PBS_CL_T(T) GSEARCH_DECLARE_LAUNCH_SEARCH_T(algorithm::pbs_cl, T)
GSEARCH_KEY_TYPES(GSEARCH_DECLARE_PBS_CL_T)  // one bucket: the shared-memory search (search_pbs_cl.cu)
#undef GSEARCH_DECLARE_PBS_CL_T

template <class T, class Out>
void partitioned_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n,
                        Out* out) {
  const device_limits dev = current_device_limits();
  const core::partition_config& cfg = partitioned_config<int(sizeof(T))>;
  const int offset = s == side::pred ? -1 : 0;
  if (s == side::left) {
    launch_partitioned<true>(stream, offset, keys, k, queries, n, out, dev, cfg);
  } else {
    launch_partitioned<false>(stream, offset, keys, k, queries, n, out, dev, cfg);
  }
}

GSEARCH_KEY_TYPES(GSEARCH_CUDA_PARTITIONED_INSTANTIATE)

}  // namespace gsearch::cuda_backend
