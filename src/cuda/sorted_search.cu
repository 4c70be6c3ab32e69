// search() of sorted queries on the GPU (search_options::queries_sorted): sorted_search_kernel.cuh.

#include "gsearch/cuda/merge.hpp"
#include "gsearch/cuda/sorted_search_kernel.cuh"
#include "gsearch/cuda/tuning.hpp"

namespace gsearch::cuda_backend {
namespace {

template <bool Strict, bool Pred, class T, class Out>
void launch(cudaStream_t stream, const T* keys, int64_t k, const T* queries, int64_t q, Out* out) {
  constexpr launch_config c = merge_config<sizeof(T)>;
  constexpr int64_t tile = int64_t(c.threads) * c.items;
  const int64_t tiles = (k + q + tile - 1) / tile;
  stream_buffer splits(stream, size_t(tiles) * sizeof(int64_t));
  auto* key_splits = static_cast<int64_t*>(splits.get());
  constexpr int partition_threads = 256;
  sorted_search_partition_kernel<Strict>
      <<<unsigned((tiles + partition_threads - 1) / partition_threads), partition_threads, 0,
         stream>>>(keys, k, queries, q, tile, tiles, key_splits);
  GSEARCH_CUDA_CHECK_LAUNCH();
  sorted_search_kernel<c.threads, c.items, Strict, Pred>
      <<<unsigned(tiles), c.threads, 0, stream>>>(keys, k, queries, q, key_splits, tiles, out);
  GSEARCH_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <class T, class Out>
void sorted_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries,
                   int64_t n, Out* out) {
  if (n <= 0) return;
  switch (s) {
    case side::left: return launch<true, false>(stream, keys, k, queries, n, out);
    case side::right: return launch<false, false>(stream, keys, k, queries, n, out);
    case side::pred: return launch<false, true>(stream, keys, k, queries, n, out);
  }
}

GSEARCH_KEY_TYPES(GSEARCH_CUDA_SORTED_SEARCH_INSTANTIATE)

}  // namespace gsearch::cuda_backend
