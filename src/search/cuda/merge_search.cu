// The CUDA backend of the search by sorting the queries (algorithm::merge, issue 42): the
// queries and their positions sorted stably by the merge family's sort (CUB's radix sort for
// integer keys, the merge sort for floats), the sorted search by Merge Path over them (every key
// read once, at 91-99% of its roofline), the answers scattered back to the queries' positions.
// Its cost is a sort of the queries, whatever K: where the staged searches restage K keys per
// window of queries (the partitioned search at K = 2^27: some 16 GB of key reads for 1 GB of
// queries, docs/perf-notes.md), this reads the keys once.

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/launch.cuh"
#include "cuda/stream_buffer.cuh"
#include "merge/backend.hpp"  // sort, sorted_search
#include "search/backend.hpp"  // sorted_temp_bytes
#include "search/cuda/gated.hpp"

namespace gsearch::cuda_backend {
namespace {

constexpr int merge_threads = 256;

__global__ void __launch_bounds__(merge_threads) positions_kernel(int64_t* __restrict__ positions, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    positions[i] = i;
}

// out[perm[i]] = sorted_answers[i]: each answer back at its query's position.
template <class Out>
__global__ void __launch_bounds__(merge_threads)
    scatter_answers_kernel(const Out* __restrict__ sorted_answers, const int64_t* __restrict__ perm, int64_t n,
                           Out* __restrict__ out, launch_gate gate) {
  if (gate.closed()) return;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[perm[i]] = sorted_answers[i];
}

constexpr size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

int64_t merge_temp_bytes(int key_bytes, int64_t k, int64_t n) {
  if (n <= 0) return 0;
  // The sorted queries, the positions before and after the sort, the sorted answers (int64 at
  // most), the sorted search's tiles; the sort's own scratch, bounded by another copy of the
  // queries and positions (the merge sort's double buffer; CUB's radix sort takes less).
  const size_t q = round_up(size_t(n) * size_t(key_bytes)), w = round_up(size_t(n) * 8);
  return int64_t(2 * q + 4 * w) + sorted_temp_bytes(key_bytes, k, n);
}

template <class T, class Out>
void merge_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                  launch_gate gate) {
  if (n <= 0) return;
  const size_t q = round_up(size_t(n) * sizeof(T)), w = round_up(size_t(n) * 8);
  const stream_buffer buffer(stream, q + 3 * w);
  char* base = static_cast<char*>(buffer.get());
  T* sorted = reinterpret_cast<T*>(base);
  auto* positions = reinterpret_cast<int64_t*>(base + q);
  auto* perm = reinterpret_cast<int64_t*>(base + q + w);
  Out* answers = reinterpret_cast<Out*>(base + q + 2 * w);
  const device_limits& dev = current_device_limits();
  launch_plain(positions_kernel, n, merge_threads, stream, dev, positions, n);
  sort(stream, queries, n, positions, sorted, perm);  // stable: equal queries keep their order
  sorted_search(stream, s, keys, k, sorted, n, answers, gate);
  launch_plain(scatter_answers_kernel<Out>, n, merge_threads, stream, dev, answers, perm, n, out, gate);
}

#define GSEARCH_CUDA_MERGE_SEARCH_INSTANTIATE(T)                                                              \
  template void merge_search<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int64_t*,  \
                                         launch_gate);                                                        \
  template void merge_search<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int32_t*,  \
                                         launch_gate);
GSEARCH_KEY_TYPES(GSEARCH_CUDA_MERGE_SEARCH_INSTANTIATE)
#undef GSEARCH_CUDA_MERGE_SEARCH_INSTANTIATE

}  // namespace gsearch::cuda_backend
