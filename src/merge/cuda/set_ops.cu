// The multiset set operations on the GPU: set_ops_kernel.cuh (Balanced Path tiles, one pass with
// decoupled look-back).

#include "cuda/launch.hpp"
#include "merge/backend.hpp"
#include "merge/cuda/set_ops_kernel.cuh"
#include "merge/tuning.hpp"

namespace gsearch::cuda_backend {

template <class T>
int64_t set_operation_size(CUstream_st* stream, set_op op, const T* a, int64_t na, const T* b,
                           int64_t nb) {
  return with_policy(merge_policies{}, current_device_limits().arch, [&]<class P>() {
    constexpr launch_config c = P::template set_op_config<sizeof(T)>;
    return run_set_op<c.threads, c.items, c.min_blocks>(stream, op, a, na, b, nb, static_cast<T*>(nullptr));
  });
}

template <class T>
int64_t set_operation(CUstream_st* stream, set_op op, const T* a, int64_t na, const T* b,
                      int64_t nb, T* out) {
  if (core::set_op_bound(op, na, nb) == 0) return 0;
  return with_policy(merge_policies{}, current_device_limits().arch, [&]<class P>() {
    constexpr launch_config c = P::template set_op_config<sizeof(T)>;
    return run_set_op<c.threads, c.items, c.min_blocks>(stream, op, a, na, b, nb, out);
  });
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_SET_OPS)

}  // namespace gsearch::cuda_backend
