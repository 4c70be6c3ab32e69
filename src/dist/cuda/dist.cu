// The CUDA backend's steps of the distributed operations (src/dist/cuda.hpp): memory, copies,
// and the per-element kernels around the exchanges. The stable partition by owner is CUB's radix
// sort of the owners (a pass of ceil(log2 ranks) bits) carrying the element indices.

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "gsearch/core/error.hpp"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "dist/cuda.hpp"
#include "cuda/stream_buffer.cuh"

namespace gsearch::cuda_backend {
namespace {

constexpr int threads = 256;

int blocks_for(int64_t n) {
  const int64_t b = (n + threads - 1) / threads;
  return int(b < 65535 * 16 ? b : 65535 * 16);  // grid-stride beyond
}

#define GSEARCH_GRID_STRIDE(i, n)                                                             \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);                  \
       i += int64_t(gridDim.x) * blockDim.x)

__global__ void iota_kernel(int64_t* x, int64_t n, int64_t start) {
  GSEARCH_GRID_STRIDE(i, n) x[i] = start + i;
}

__global__ void shift_kernel(int64_t* x, int64_t n, int64_t delta) {
  GSEARCH_GRID_STRIDE(i, n) {
    if (x[i] >= 0) x[i] += delta;
  }
}

__global__ void map_rows_kernel(int64_t* rows, int64_t n, const int64_t* ids) {
  GSEARCH_GRID_STRIDE(i, n) {
    const int64_t r = rows[i];
    rows[i] = r < 0 ? -1 : ids[r];
  }
}

template <class U>
__global__ void gather_kernel(const U* src, const int64_t* idx, int64_t n, U* dst) {
  GSEARCH_GRID_STRIDE(i, n) dst[i] = src[idx[i]];
}

template <class U>
__global__ void scatter_kernel(const U* src, const int64_t* idx, int64_t n, U* dst) {
  GSEARCH_GRID_STRIDE(i, n) dst[idx[i]] = src[i];
}

// Where each owner's run starts in the sorted owners: starts[o] = the first i with sorted[i] == o
// (left at -1 for an owner with no element). No atomics: the partition's counts follow.
__global__ void run_starts_kernel(const int32_t* sorted, int64_t n, int64_t* starts) {
  GSEARCH_GRID_STRIDE(i, n) {
    if (i == 0 || sorted[i] != sorted[i - 1]) starts[sorted[i]] = i;
  }
}

template <class U>
void launch_move(cudaStream_t stream, bool gather, const void* src, const int64_t* idx, int64_t n,
                 void* dst) {
  launch(gather ? gather_kernel<U> : scatter_kernel<U>, blocks_for(n), threads, 0, stream, static_cast<const U*>(src),
         idx, n, static_cast<U*>(dst));
}

void move(cudaStream_t stream, bool gather, const void* src, const int64_t* idx, int64_t n, void* dst,
          int element_bytes) {
  if (n <= 0) return;
  switch (element_bytes) {
    case 1: return launch_move<uint8_t>(stream, gather, src, idx, n, dst);
    case 4: return launch_move<uint32_t>(stream, gather, src, idx, n, dst);
    case 8: return launch_move<uint64_t>(stream, gather, src, idx, n, dst);
    default: throw invalid_argument("gsearch::dist: elements of " + std::to_string(element_bytes) +
                                    " bytes cannot be moved");
  }
}

}  // namespace

void* dist_alloc(CUstream_st* stream, int64_t bytes) {
  void* p = nullptr;
  if (bytes > 0) GSEARCH_CUDA_CHECK(cudaMallocFromPoolAsync(&p, size_t(bytes), temporary_pool(), stream));
  return p;
}

void dist_free(CUstream_st* stream, void* p) noexcept {
  if (p) cudaFreeAsync(p, stream);
}

void dist_copy(CUstream_st* stream, void* dst, const void* src, int64_t bytes, bool wait) {
  if (bytes > 0) GSEARCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDefault, stream));
  if (wait) GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void dist_iota(CUstream_st* stream, int64_t* x, int64_t n, int64_t start) {
  if (n <= 0) return;
  launch(iota_kernel, blocks_for(n), threads, 0, stream, x, n, start);
}

void dist_shift(CUstream_st* stream, int64_t* x, int64_t n, int64_t delta) {
  if (n <= 0 || delta == 0) return;
  launch(shift_kernel, blocks_for(n), threads, 0, stream, x, n, delta);
}

void dist_map_rows(CUstream_st* stream, int64_t* rows, int64_t n, const int64_t* ids) {
  if (n <= 0) return;
  launch(map_rows_kernel, blocks_for(n), threads, 0, stream, rows, n, ids);
}

void dist_gather(CUstream_st* stream, const void* src, const int64_t* idx, int64_t n, void* dst,
                 int element_bytes) {
  move(stream, true, src, idx, n, dst, element_bytes);
}

void dist_scatter(CUstream_st* stream, const void* src, const int64_t* idx, int64_t n, void* dst,
                  int element_bytes) {
  move(stream, false, src, idx, n, dst, element_bytes);
}

std::vector<int64_t> dist_partition(CUstream_st* stream, const int32_t* owner, int64_t n, int ranks,
                                    int64_t* perm) {
  std::vector<int64_t> counts(size_t(ranks), 0);
  if (n <= 0) return counts;
  const int end_bit = std::max(1, int(std::bit_width(unsigned(ranks - 1))));
  // One allocation: the sorted owners, the indices to carry, the run starts, CUB's temporary space.
  size_t sort_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, owner, static_cast<int32_t*>(nullptr),
                                                     static_cast<const int64_t*>(nullptr), perm, n, 0,
                                                     end_bit, stream));
  const size_t keys_bytes = (size_t(n) * 4 + 255) / 256 * 256, index_bytes = size_t(n) * 8;
  const size_t starts_bytes = (size_t(ranks) * 8 + 255) / 256 * 256;
  stream_buffer buffer(stream, keys_bytes + index_bytes + starts_bytes + sort_bytes);
  auto* base = static_cast<char*>(buffer.get());
  auto* sorted_owner = reinterpret_cast<int32_t*>(base);
  auto* index = reinterpret_cast<int64_t*>(base + keys_bytes);
  auto* starts = reinterpret_cast<int64_t*>(base + keys_bytes + index_bytes);
  void* sort_temp = base + keys_bytes + index_bytes + starts_bytes;
  dist_iota(stream, index, n, 0);
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp, sort_bytes, owner, sorted_owner, index,
                                                     perm, n, 0, end_bit, stream));
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(starts, 0xff, size_t(ranks) * 8, stream));  // -1: no run
  launch(run_starts_kernel, blocks_for(n), threads, 0, stream, sorted_owner, n, starts);
  std::vector<int64_t> start(static_cast<size_t>(ranks));
  dist_copy(stream, start.data(), starts, int64_t(ranks) * 8, true);
  int64_t end = n;  // an owner's run ends where the next present owner's starts
  for (int r = ranks - 1; r >= 0; --r) {
    if (start[size_t(r)] < 0) continue;
    counts[size_t(r)] = end - start[size_t(r)];
    end = start[size_t(r)];
  }
  return counts;
}

void dist_replicate(CUstream_st* stream, const void* src, int64_t bytes, int copies, void* dst) {
  for (int c = 0; c < copies; ++c)
    dist_copy(stream, static_cast<char*>(dst) + int64_t(c) * bytes, src, bytes, false);
}

}  // namespace gsearch::cuda_backend
