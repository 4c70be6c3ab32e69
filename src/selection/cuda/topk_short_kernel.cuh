#pragma once
/// \file
/// torch.topk of short rows (core::short_row_list: up to 128 keys, k up to 32), one thread a row:
/// core/topk_list.hpp's sorted list of the L smallest radix keys, each key offered once. A block
/// takes topk_short_threads consecutive rows (one contiguous stretch of the data) at a time and
/// copies them into shared memory with coalesced loads, topk_short_loads a thread in flight (each
/// element's row by a multiply and a shift: core::fast_divider), a row's keys at a stride of cols
/// rounded up to odd, so that the threads, each reading its own row, hit 32 different banks;
/// then each thread offers its row's keys to its list and writes the list's first k entries,
/// which are torch.topk's outputs in sorted order (the values read back from the staged row: their
/// own bits, -0.0 and NaN payloads kept). Where a block a row (topk_kernel.cuh) spends four digit
/// passes with block barriers and scans on every row, whatever its length.
/// Launched from src/selection/cuda/topk.cu.

#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/fast_divide.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/topk_list.hpp"
#include "selection/tuning_topk.hpp"

namespace gsearch::cuda_backend {

/// The staged rows' stride in elements: cols, or cols + 1 where cols is even (an odd stride puts
/// the same column of 32 rows in 32 banks of 4-byte words; 8-byte keys take two banks each and
/// keep the reads at two wavefronts, the least for 8 bytes a thread).
__host__ __device__ constexpr int64_t topk_short_stride(int64_t cols) { return cols | 1; }

/// rows x cols data (cols <= core::short_row_max_cols), k <= L: values / indices + row * k.
/// Dynamic shared memory: Threads x topk_short_stride(cols) elements.
template <class T, int L, int Threads>
__global__ void __launch_bounds__(Threads)
    topk_short_rows_kernel(const T* __restrict__ data, int64_t rows, int cols, int k,
                           core::radix_bits_t<T> flip, T* __restrict__ values,
                           int64_t* __restrict__ indices) {
  using K = core::radix_bits_t<T>;
  extern __shared__ __align__(16) unsigned char topk_short_shared[];
  T* const staged = reinterpret_cast<T*>(topk_short_shared);
  constexpr int U = topk_short_loads;
  const int stride = int(topk_short_stride(cols));
  const core::fast_divider by_cols{uint32_t(cols)};
  for (int64_t first = int64_t(blockIdx.x) * Threads; first < rows; first += int64_t(gridDim.x) * Threads) {
    const int count = int(rows - first < Threads ? rows - first : Threads);
    const T* const block_data = data + first * int64_t(cols);
    const int total = count * cols;
    __syncthreads();  // the rows before are read
    for (int e0 = int(threadIdx.x); e0 < total; e0 += Threads * U) {
      T x[U];
      GSEARCH_UNROLL
      for (int u = 0; u < U; ++u)
        if (e0 + u * Threads < total) x[u] = block_data[e0 + u * Threads];
      GSEARCH_UNROLL
      for (int u = 0; u < U; ++u) {
        const int e = e0 + u * Threads;
        if (e < total) {
          const int r = int(by_cols.divide(uint32_t(e)));
          staged[r * stride + (e - r * cols)] = x[u];
        }
      }
    }
    __syncthreads();
    const int r = int(threadIdx.x);
    if (r >= count) continue;
    const T* const row = staged + r * stride;
    core::smallest_list<L, K> list;
    list.clear();
    list.offer_row([&](int c) { return K(core::radix_bits(row[c]) ^ flip); }, cols);
    T* const v = values + (first + r) * int64_t(k);
    int64_t* const ix = indices + (first + r) * int64_t(k);
    GSEARCH_UNROLL
    for (int j = 0; j < L; ++j)
      if (j < k) {
        v[j] = row[list.at[j]];
        ix[j] = int64_t(list.at[j]);
      }
  }
}

}  // namespace gsearch::cuda_backend
