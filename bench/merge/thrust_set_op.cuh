#pragma once
// The four thrust set operations as one call, for the two thrust peers of merge_bench: the
// toolkit's CCCL (merge_peers.cu's thrust_set_op) and the newer one (cub_merge_peer.cu's
// thrust36_set_op). Each translation unit includes it with its own CCCL first on the include path;
// internal linkage keeps the two instantiations apart.

#include <thrust/set_operations.h>

#include <cstdint>
#include <string>

#include "gsearch/core/error.hpp"
#include "cuda/check.cuh"

namespace gsearch::bench::merge_peers {
namespace {

/// thrust::set_intersection / set_union / set_difference / set_symmetric_difference on `policy`,
/// `op` as gsearch::set_op (0 to 3); returns the size written (thrust waits for it). `name` says
/// who asked, in the error for another op.
template <class Policy, class T>
int64_t set_op_with(const Policy& policy, const char* name, int op, const T* a, int64_t na, const T* b, int64_t nb,
                    T* out) {
  T* end = out;
  switch (op) {
    case 0: end = thrust::set_intersection(policy, a, a + na, b, b + nb, out); break;
    case 1: end = thrust::set_union(policy, a, a + na, b, b + nb, out); break;
    case 2: end = thrust::set_difference(policy, a, a + na, b, b + nb, out); break;
    case 3: end = thrust::set_symmetric_difference(policy, a, a + na, b, b + nb, out); break;
    default: throw gsearch::invalid_argument(std::string(name) + ": op must be 0..3");
  }
  GSEARCH_CUDA_CHECK_LAUNCH();
  return int64_t(end - out);
}

}  // namespace
}  // namespace gsearch::bench::merge_peers
