// The CUDA backend of the search by sorting the queries (algorithm::merge, issue 42): the
// queries and their positions sorted stably (CUB's radix sort for integer keys, the merge
// family's merge sort for floats), the sorted search by Merge Path over them (every key read
// once, at 91-99% of its roofline), the answers put back at the queries' positions. Its cost is
// a sort of the queries, whatever K: where the staged searches restage K keys per window of
// queries (the partitioned search at K = 2^27: some 16 GB of key reads for 1 GB of queries,
// docs/perf-notes.md), this reads the keys once.
//
// Two choices come from one H200 profile (ncu, int32, K = 2^24, Q = 2^27, at 681d641: 15.5 ms in
// all; docs/perf-notes.md "Issue 42: algorithm::merge on the H200"):
// - positions of 4 bytes where the queries number less than 2^32: CUB's onesweep passes move
//   (key, position) pairs, 12 bytes with int64 positions (1.5 ms a pass, four passes), 8 with
//   uint32 ones;
// - the answers go back in two steps, not one scatter: out[perm[i]] = answers[i] wrote 2^27
//   4-byte answers to random addresses in 8.4 ms (a partial 32-byte sector each, 16 G writes/s),
//   and 7.6 ms still when a radix pass first grouped them by window of 2^19 positions (2 MB, held
//   in L2: 5f117fe, ncu at 30fd27a): random 4-byte stores cost that much in L2 as well. So the
//   windows are made to fit shared memory (32 KB of answers: 2^13 int32 or 2^12 int64, two radix
//   passes on the positions' top bits at Q = 2^27, where one did), and a block puts each window
//   together there and writes it out in whole lines.

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <bit>
#include <cstdint>
#include <type_traits>

#include "cuda/launch.cuh"
#include "cuda/sort_support.cuh"  // with_cub_scratch, fill_positions
#include "cuda/stream_buffer.cuh"
#include "merge/backend.hpp"  // sort, sorted_search
#include "search/backend.hpp"  // sorted_temp_bytes
#include "search/cuda/gated.hpp"

namespace gsearch::cuda_backend {
namespace {

constexpr int merge_threads = 256;
// Positions per window of the answers' way back (see above): 32 KB of answers, one block's static
// shared memory.
template <class Out>
constexpr int window_bits = sizeof(Out) == 4 ? 13 : 12;

// out[p] = answers[i] where perm[i] = p, for the positions p of each window, [w W, (w + 1) W)
// within n (W = 2^window_bits), a block a window: grouped by window (or n within one), perm holds exactly
// those positions at the same indices. The answers go into shared memory at their offsets in the
// window, then the window to out in whole lines.
template <class P, class Out>
__global__ void __launch_bounds__(merge_threads)
    window_scatter_kernel(const Out* __restrict__ answers, const P* __restrict__ perm, int64_t n,
                          Out* __restrict__ out, launch_gate gate) {
  constexpr int64_t W = int64_t{1} << window_bits<Out>;
  __shared__ Out window[W];
  if (gate.closed()) return;
  for (int64_t first = int64_t(blockIdx.x) * W; first < n; first += int64_t(gridDim.x) * W) {
    const int64_t size = n - first < W ? n - first : W;
    for (int64_t j = threadIdx.x; j < size; j += blockDim.x) window[int64_t(perm[first + j]) - first] = answers[first + j];
    __syncthreads();
    for (int64_t j = threadIdx.x; j < size; j += blockDim.x) out[first + j] = window[j];
    __syncthreads();
  }
}

constexpr size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

/// CUB's radix sort of n (key, value) pairs on key bits [begin_bit, end_bit), apart (its
/// scratch, with the passes' double buffers, from gsearch's pool).
template <class K, class V>
void radix_pairs(cudaStream_t stream, const K* keys, K* keys_out, const V* values, V* values_out, int64_t n,
                 int begin_bit, int end_bit) {
  with_cub_scratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, keys, keys_out, values, values_out, n, begin_bit, end_bit,
                                           stream);
  });
}

/// The queries sorted with their positions (0 ... n - 1), stable: integer keys by CUB's radix
/// sort with positions of P, floats by the merge family's sort (int64 positions; its order puts
/// NaNs last, as the search's does, where CUB's radix order of floats does not).
template <class T, class P>
void sort_queries(cudaStream_t stream, const device_limits& dev, const T* queries, int64_t n, P* positions, T* sorted,
                  P* perm) {
  fill_positions(stream, dev, positions, n);
  if constexpr (std::is_integral_v<T>) {
    radix_pairs(stream, queries, sorted, positions, perm, n, 0, int(sizeof(T) * 8));
  } else {
    static_assert(std::is_same_v<P, int64_t>, "the merge sort carries int64 values");
    sort(stream, queries, n, positions, sorted, perm);
  }
}

/// out[perm[i]] = answers[i] for i < n, perm a permutation of 0 ... n - 1: grouped by windows of
/// 2^window_bits positions (radix passes on perm's bits above them) when n has more, then each
/// window put together in shared memory and written whole. grouped_perm and grouped_answers: n
/// each.
template <class P, class Out>
void answers_back(cudaStream_t stream, const device_limits& dev, const Out* answers, const P* perm, int64_t n, P* grouped_perm,
                  Out* grouped_answers, Out* out, launch_gate gate) {
  const int bits = int(std::bit_width(uint64_t(n - 1)));  // the positions' bits
  if (bits > window_bits<Out>) {
    radix_pairs(stream, perm, grouped_perm, answers, grouped_answers, n, window_bits<Out>, bits);
    perm = grouped_perm;
    answers = grouped_answers;
  }
  const int64_t windows = ((n - 1) >> window_bits<Out>) + 1;
  launch_filling(window_scatter_kernel<P, Out>, merge_threads, 0, windows, stream, dev, answers, perm, n, out, gate);
}

template <class T, class P, class Out>
void merge_search_with(cudaStream_t stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                       launch_gate gate) {
  const size_t q = round_up(size_t(n) * sizeof(T)), p = round_up(size_t(n) * sizeof(P)),
               o = round_up(size_t(n) * sizeof(Out));
  const stream_buffer buffer(stream, q + 3 * p + 2 * o);
  char* base = static_cast<char*>(buffer.get());
  T* sorted = reinterpret_cast<T*>(base);
  P* positions = reinterpret_cast<P*>(base + q);
  P* perm = reinterpret_cast<P*>(base + q + p);
  P* grouped_perm = reinterpret_cast<P*>(base + q + 2 * p);
  Out* answers = reinterpret_cast<Out*>(base + q + 3 * p);
  Out* grouped_answers = reinterpret_cast<Out*>(base + q + 3 * p + o);
  const device_limits& dev = current_device_limits();
  sort_queries(stream, dev, queries, n, positions, sorted, perm);  // stable: equal queries keep their order
  sorted_search(stream, s, keys, k, sorted, n, answers, gate);
  answers_back(stream, dev, answers, perm, n, grouped_perm, grouped_answers, out, gate);
}

}  // namespace

int64_t merge_temp_bytes(int key_bytes, int64_t k, int64_t n) {
  if (n <= 0) return 0;
  // merge_search_with's buffer (the sorted queries, three arrays of positions, two of answers:
  // int64 at most) and a sort's scratch, bounded by another copy of the queries and their
  // positions (CUB's double buffers; the merge sort's), then the sorted search's tiles.
  const size_t q = round_up(size_t(n) * size_t(key_bytes)), w = round_up(size_t(n) * 8);
  return int64_t(2 * q + 6 * w) + sorted_temp_bytes(key_bytes, k, n);
}

template <class T, class Out>
void merge_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                  launch_gate gate) {
  if (n <= 0) return;
  if constexpr (std::is_integral_v<T>) {
    if (n <= int64_t(UINT32_MAX)) return merge_search_with<T, uint32_t>(stream, s, keys, k, queries, n, out, gate);
  }
  merge_search_with<T, int64_t>(stream, s, keys, k, queries, n, out, gate);
}

#define GSEARCH_CUDA_MERGE_SEARCH_INSTANTIATE(T)                                                              \
  template void merge_search<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int64_t*,  \
                                         launch_gate);                                                        \
  template void merge_search<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int32_t*,  \
                                         launch_gate);
GSEARCH_KEY_TYPES(GSEARCH_CUDA_MERGE_SEARCH_INSTANTIATE)
#undef GSEARCH_CUDA_MERGE_SEARCH_INSTANTIATE

}  // namespace gsearch::cuda_backend
