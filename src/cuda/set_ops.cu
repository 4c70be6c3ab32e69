// The multiset set operations on the GPU: set_ops_kernel.cuh (Balanced Path tiles, one pass with
// decoupled look-back).

#include "gsearch/detail/cuda/merge.hpp"
#include "gsearch/detail/cuda/set_ops_kernel.cuh"
#include "gsearch/detail/cuda/tuning_merge.hpp"

namespace gsearch::cuda_backend {

template <class T>
int64_t set_operation_size(CUstream_st* stream, set_op op, const T* a, int64_t na, const T* b,
                           int64_t nb) {
  constexpr launch_config c = set_op_config<sizeof(T)>;
  return run_set_op<c.threads, c.items, c.min_blocks>(stream, op, a, na, b, nb,
                                                      static_cast<T*>(nullptr));
}

template <class T>
int64_t set_operation(CUstream_st* stream, set_op op, const T* a, int64_t na, const T* b,
                      int64_t nb, T* out) {
  if (core::set_op_bound(op, na, nb) == 0) return 0;
  constexpr launch_config c = set_op_config<sizeof(T)>;
  return run_set_op<c.threads, c.items, c.min_blocks>(stream, op, a, na, b, nb, out);
}

GSEARCH_KEY_TYPES(GSEARCH_CUDA_SET_OPS_INSTANTIATE)

}  // namespace gsearch::cuda_backend
