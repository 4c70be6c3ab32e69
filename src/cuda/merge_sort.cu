// merge_sort() on the GPU: block_sort_kernel sorts tiles of Threads * Items keys, then Merge
// Path passes (merge_kernel.cuh's run_pairs) merge runs of doubling width, ping-ponging between
// the output and one temporary copy; the first step writes to whichever of the two makes the
// last pass land in the output.

#include <utility>

#include "gsearch/detail/cuda/merge.hpp"
#include "gsearch/detail/cuda/merge_kernel.cuh"
#include "gsearch/detail/cuda/tuning_merge.hpp"

namespace gsearch::cuda_backend {
namespace {

template <bool Values, class T>
void sort(cudaStream_t stream, const T* keys, int64_t n, const int64_t* values, T* out,
          int64_t* out_values) {
  constexpr launch_config c = merge_config<sizeof(T)>;
  constexpr int64_t tile = int64_t(c.threads) * c.items;
  const int64_t tiles = (n + tile - 1) / tile;
  int passes = 0;
  for (int64_t width = tile; width < n; width *= 2) ++passes;

  stream_buffer temp_keys(stream, passes > 0 ? size_t(n) * sizeof(T) : 0);
  stream_buffer temp_values(stream, passes > 0 && Values ? size_t(n) * sizeof(int64_t) : 0);
  T* other = static_cast<T*>(temp_keys.get());
  int64_t* other_values = static_cast<int64_t*>(temp_values.get());
  // After the block sort, each pass swaps src and dst: an odd number of passes starts in temp.
  T* dst = passes % 2 ? other : out;
  int64_t* dst_values = passes % 2 ? other_values : out_values;
  T* spare = passes % 2 ? out : other;
  int64_t* spare_values = passes % 2 ? out_values : other_values;

  block_sort_kernel<c.threads, c.items, Values>
      <<<unsigned(tiles), c.threads, 0, stream>>>(keys, values, n, dst, dst_values);
  GSEARCH_CUDA_CHECK_LAUNCH();
  for (int64_t width = tile; width < n; width *= 2) {
    const run_pairs<T> runs{dst, Values ? dst_values : nullptr, n, width};
    launch_merge<c.threads, c.items, Values, c.min_blocks>(stream, runs, tiles, spare, spare_values);
    std::swap(dst, spare);
    std::swap(dst_values, spare_values);
  }
}

}  // namespace

template <class T>
void merge_sort(CUstream_st* stream, const T* keys, int64_t n, const int64_t* values, T* out,
                int64_t* out_values) {
  if (n <= 0) return;
  if (values) {
    sort<true>(stream, keys, n, values, out, out_values);
  } else {
    sort<false>(stream, keys, n, values, out, out_values);
  }
}

GSEARCH_KEY_TYPES(GSEARCH_CUDA_MERGE_SORT_INSTANTIATE)

}  // namespace gsearch::cuda_backend
