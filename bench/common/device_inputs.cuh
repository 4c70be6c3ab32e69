#pragma once
// Kernels the GPU benchmarks share to build their inputs on the device and to put results back in
// query order (internal linkage: each translation unit that includes this has its own):
//   random_keys_kernel      keys[i] = T(word(seed, i)) (int32: the word's top 32 bits), word(s, i)
//                           = output i of splitmix64{s} (bench_host.hpp); sort them afterwards
//   queries_from_keys_kernel queries[j] = keys[word(seed, j) mod k] (the paper's random queries)
//   iota_kernel, scatter_kernel  p[i] = i; out[positions[i]] = ranks[i] (a sort-search-scatter
//                           pipeline's first and last steps; I = int32_t)

#include <cstdint>

#include "bench_host.hpp"

namespace gsearch::bench {
namespace {

template <class T>
__global__ void random_keys_kernel(T* keys, int64_t n, uint64_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t w = core::mix64(seed + uint64_t(i + 1) * host::golden);
    keys[i] = sizeof(T) == 4 ? T(uint32_t(w >> 32)) : T(w);
  }
}

template <class T>
__global__ void queries_from_keys_kernel(const T* keys, int64_t k, T* queries, int64_t n, uint64_t seed) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += int64_t(gridDim.x) * blockDim.x)
    queries[j] = keys[core::mix64(seed + uint64_t(j + 1) * host::golden) % uint64_t(k)];
}

template <class I>
__global__ void iota_kernel(I* p, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = I(i);
}

template <class I>
__global__ void scatter_kernel(const I* ranks, const I* positions, int64_t n, I* out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[positions[i]] = ranks[i];
}

}  // namespace
}  // namespace gsearch::bench
