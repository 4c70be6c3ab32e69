#pragma once
/// \file
/// isin's kernels: membership by a lower-bound search of the sorted test elements (staged in
/// shared memory for PBS-CL when they fit, else the branch-free search in global memory), or by
/// the hash set of core/find.hpp, built and probed in global memory (it stays in L2).
/// Instantiated in src/cuda/isin.cu.

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "gsearch/core/find.hpp"
#include "search/cuda/search_kernel.cuh"

namespace gsearch::cuda_backend {

/// The test elements as isin sorts them: -0.0 as 0.0, every NaN as the positive quiet NaN, which
/// a radix sort puts after +inf (where the library's order has NaN).
template <class T>
__global__ void canonical_copy_kernel(const T* __restrict__ in, int64_t m, T* __restrict__ out) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < m;
       j += int64_t(gridDim.x) * blockDim.x) {
    const T x = in[j];
    out[j] = x != x ? std::numeric_limits<T>::quiet_NaN() : core::canonical(x);
  }
}

/// One tile of Threads x Items elements, element j on lane j % 32 as in search_tile.
template <algorithm A, int Threads, int Items, int Copies, class Accessor, class T, class Index>
__device__ __forceinline__ void isin_tile(const Accessor& acc, Index k, const T* __restrict__ elements,
                                          int64_t tile_begin, int64_t n, bool* __restrict__ out,
                                          bool invert, Index replica_stride) {
  const int64_t first = tile_begin + threadIdx.x;
  T x[Items];
  bool member[Items];
  GSEARCH_UNROLL
  for (int i = 0; i < Items; ++i) {
    const int64_t j = first + i * Threads;
    x[i] = elements[j < n ? j : n - 1];
  }
  core::sorted_members<A, Items, Copies>(acc, k, x, int(threadIdx.x % warp_width), member, replica_stride);
  GSEARCH_UNROLL
  for (int i = 0; i < Items; ++i)
    if (first + i * Threads < n) out[first + i * Threads] = member[i] != invert;
}

/// Sorted test elements staged in shared memory (Copies replicas for PBS-CL).
template <algorithm A, class T, int Threads, int Items, int Copies>
__global__ void __launch_bounds__(Threads)
    isin_shared_kernel(const T* __restrict__ tests, int k, const T* __restrict__ elements, int64_t n,
                       bool* __restrict__ out, bool invert) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* staged = reinterpret_cast<T*>(shared_bytes);
  const int stride = stage_padded_keys<Threads, Copies>(tests, k, staged);
  const core::padded_accessor<T> acc{staged + warp_width};
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile)
    isin_tile<A, Threads, Items, Copies>(acc, k, elements, begin, n, out, invert, stride);
}

/// Sorted test elements searched in global memory.
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    isin_global_kernel(const T* __restrict__ tests, int64_t k, const T* __restrict__ elements,
                       int64_t n, bool* __restrict__ out, bool invert) {
  const core::bounded_accessor<T, key_traits<T>> acc{tests, k};
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile)
    isin_tile<algorithm::binary, Threads, Items, 1>(acc, k, elements, begin, n, out, invert, int64_t{0});
}

/// Inserts the test elements into the hash set (slots all-ones beforehand), one thread per
/// element, claiming slots with atomicCAS on the key's bits.
template <class T>
__global__ void hash_build_kernel(const T* __restrict__ tests, int64_t m, core::hash_set_view<T> set,
                                  int* __restrict__ holds_empty_key) {
  using bits_t = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
  const bits_t empty = bits_t(set.empty_bits());
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < m;
       j += int64_t(gridDim.x) * blockDim.x) {
    const T x = core::canonical(tests[j]);
    if (set.answer_without_probe(x) >= 0) {  // a NaN (never a member) or the empty bits
      if constexpr (!std::is_floating_point_v<T>) *holds_empty_key = 1;
      continue;
    }
    const bits_t b = bits_t(core::key_bits(x));
    for (uint64_t i = set.home(x);; i = (i + 1) & set.mask) {
      const bits_t prev = atomicCAS(reinterpret_cast<bits_t*>(set.slots + i), empty, b);
      if (prev == empty || prev == b) break;
    }
  }
}

/// Probes the hash set for Items elements per thread, their first slot reads issued together.
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    isin_hash_kernel(const T* __restrict__ elements, int64_t n, core::hash_set_view<T> set,
                     const int* __restrict__ holds_empty_key, bool* __restrict__ out, bool invert) {
  set.holds_empty_key = *holds_empty_key != 0;
  const auto load = [](const T* p) { return __ldg(p); };
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile) {
    T x[Items], s[Items];
    uint64_t home[Items];
    int answer[Items];
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = begin + threadIdx.x + i * Threads;
      x[i] = elements[j < n ? j : n - 1];
      answer[i] = set.answer_without_probe(x[i]);
      home[i] = set.home(x[i]);
      if (answer[i] < 0) s[i] = load(set.slots + home[i]);
    }
    GSEARCH_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int64_t j = begin + threadIdx.x + i * Threads;
      const bool member = answer[i] >= 0 ? answer[i] == 1 : set.probe(x[i], home[i], s[i], load);
      if (j < n) out[j] = member != invert;
    }
  }
}

}  // namespace gsearch::cuda_backend
