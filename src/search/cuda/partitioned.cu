// The CUDA backend of the partitioned search (algorithm::partitioned): partition_kernel.cuh with
// the configuration of tuning.hpp, sized for the current device's shared memory.

#include "search/cuda/partition_kernel.cuh"
#include "search/cuda/gated.hpp"
#include "search/tuning_partitioned.hpp"

namespace gsearch::cuda_backend {

#define GSEARCH_DECLARE_PBS_CL_T(T) GSEARCH_DECLARE_LAUNCH_SEARCH_T(algorithm::pbs_cl, T)
GSEARCH_KEY_TYPES(GSEARCH_DECLARE_PBS_CL_T)  // one bucket: the shared-memory search (search_pbs_cl.cu)
#undef GSEARCH_DECLARE_PBS_CL_T

template <class T, class Out>
void partitioned_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n,
                        Out* out, launch_gate gate) {
  const device_limits dev = current_device_limits();
  const core::partition_config cfg = partitioned_config_for<int(sizeof(T))>(k);
  visit_side(s, [&]<bool Strict>(int offset) {
    launch_partitioned<Strict>(stream, offset, keys, k, queries, n, out, dev, cfg, gate);
  });
}

template <class T>
int64_t partitioned_temp_bytes(bool strict, int64_t k, int64_t n, const device_limits& dev) {
  if (n <= 0) return 0;
  const core::partition_config cfg = partitioned_config_for<int(sizeof(T))>(k);
  const partition_plan p = strict ? plan_partitioned<true, 0, 0, T>(k, n, dev, cfg)
                                  : plan_partitioned<false, 0, 0, T>(k, n, dev, cfg);
  return p.shape.buckets == 1 ? 0 : p.temp_bytes();
}

namespace {
template <class T>
bool fits_for(int64_t k, const device_limits& dev) {
  constexpr int kb = int(sizeof(T));
  constexpr launch_config tile = partition_tile<kb>;
  const int64_t count_static =
      static_shared_bytes(reinterpret_cast<const void*>(partition_count_kernel<false, T, tile.threads, tile.items>), dev);
  const int64_t scatter_static =
      static_shared_bytes(reinterpret_cast<const void*>(partition_scatter_kernel<T, tile.threads, tile.items>), dev);
  const partition_fit f = fit_partition(kb, k, dev.max_shared_per_block, partitioned_config<kb>,
                                        int64_t(tile.threads) * tile.items, 0, count_static, scatter_static, 0, 0);
  return f.ok && f.staged && !f.small_tile;
}
}  // namespace

bool partitioned_fits(int key_bytes, int64_t k, const device_limits& dev) {
  return key_bytes <= 4 ? fits_for<uint32_t>(k, dev) : fits_for<uint64_t>(k, dev);
}

GSEARCH_KEY_TYPES(GSEARCH_CUDA_PARTITIONED_INSTANTIATE)
#define GSEARCH_INSTANTIATE_PARTITIONED_TEMP(T) \
  template int64_t partitioned_temp_bytes<T>(bool, int64_t, int64_t, const device_limits&);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE_PARTITIONED_TEMP)
#undef GSEARCH_INSTANTIATE_PARTITIONED_TEMP

}  // namespace gsearch::cuda_backend
