#pragma once
/// \file
/// P-ary search on the GPU (core/pary.hpp): one query searched by a whole warp (P = 32, the vote
/// a ballot) or a whole block (P = blockDim.x, the vote __syncthreads_count). Every lane reads
/// one key a step and all lanes leave with the rank; log_{P+1}(k) steps of one read each, the
/// response time of one query (seeds/003). Device functions, callable from any kernel whose
/// warp / block calls them together with the same query.

#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/pary.hpp"

namespace gsearch::cuda_backend {

/// The rank of `before.q` among key(0), ..., key(k - 1): called by all 32 lanes of a full warp
/// with the same query. An accessor, for keys that may change while the kernel runs (the search
/// server's, after a replace_keys), which must not go through the read-only path.
template <class Key, class Pred>
__device__ int64_t pary_warp_rank_at(const Key& key, int64_t k, Pred before) {
  const int lane = threadIdx.x % 32;
  int64_t a = 0, b = k;
  while (a < b) {  // the same a and b in every lane: the loop is uniform
    const bool is_before = before(key(core::pary_probe(a, b, lane, 32)));
    core::pary_narrow(a, b, __popc(__ballot_sync(0xffffffffu, is_before)), 32);
  }
  return a;
}

/// The same over keys[0, k), read through the read-only path.
template <class T, class Pred>
__device__ int64_t pary_warp_rank(const T* __restrict__ keys, int64_t k, Pred before) {
  return pary_warp_rank_at([keys](int64_t i) { return __ldg(keys + i); }, k, before);
}

/// The same for a whole block of blockDim.x lanes (up to 1024), all calling it with the same
/// query; it synchronizes the block once a step.
template <class T, class Pred>
__device__ int64_t pary_block_rank(const T* __restrict__ keys, int64_t k, Pred before) {
  const int lanes = int(blockDim.x);
  int64_t a = 0, b = k;
  while (a < b) {
    const bool is_before = before(__ldg(keys + core::pary_probe(a, b, int(threadIdx.x), lanes)));
    core::pary_narrow(a, b, __syncthreads_count(is_before), lanes);
  }
  return a;
}

}  // namespace gsearch::cuda_backend
