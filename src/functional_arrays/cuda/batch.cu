// Batch lookups on a GPU functional-arrays machine (src/functional_arrays/cuda/batch.hpp).

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "gsearch/core/key_traits.hpp"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "functional_arrays/cuda/batch.hpp"
#include "cuda/stream_buffer.cuh"

namespace gsearch::cuda_backend {
namespace {

constexpr int batch_threads = 256;
constexpr int64_t no_cell = -1;
constexpr int64_t last_index = std::numeric_limits<int64_t>::max();

/// Each cell's sort key: its index when the version sees it, else last_index (sorted after every
/// piece the version sees). A piece of index last_index itself is told apart by *max_cell.
__global__ void fa_batch_keys(const int64_t* index, const core::fa_span* spans, int64_t cells, const int64_t* open,
                              int64_t* keys, int64_t* ids, int64_t* max_cell) {
  const int64_t at = *open;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < cells; c += int64_t(gridDim.x) * blockDim.x) {
    const core::fa_span s = spans[c];
    const bool held = !core::fa_is_free(s) && core::fa_holds(s, at);
    keys[c] = held ? index[c] : last_index;
    ids[c] = c;
    if (held && index[c] == last_index) *max_cell = c;  // at most one piece of an index holds the version
  }
}

template <class V>
__global__ void fa_batch_search(const int64_t* keys, const int64_t* ids, int64_t cells, const int64_t* max_cell,
                                const V* cell_values, const int64_t* idx, int64_t n, V* values, uint8_t* found) {
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t q = idx[k];
    int64_t c = no_cell;
    if (q == last_index) {
      c = *max_cell;
    } else {
      int64_t lo = 0, len = cells;  // lower bound of q
      while (len > 0) {
        const int64_t half = len / 2;
        if (keys[lo + half] < q) {
          lo += half + 1;
          len -= half + 1;
        } else {
          len = half;
        }
      }
      if (lo < cells && keys[lo] == q) c = ids[lo];
    }
    found[k] = c != no_cell;
    values[k] = c != no_cell ? cell_values[c] : V{};
  }
}

bool on_device(const void* p) {
  cudaPointerAttributes a{};
  if (p == nullptr || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

unsigned grid_for(int64_t n) { return unsigned(n / batch_threads + 1 < 65536 ? n / batch_threads + 1 : 65536); }

}  // namespace

template <class V>
void fa_batch_lookup(cudaStream_t stream, const int64_t* index, const core::fa_span* spans, const V* cell_values,
                     int64_t cells, const int64_t* open, const int64_t* idx, int64_t n, V* values, uint8_t* found) {
  if (n == 0) return;
  // The sorted keys of the version's pieces.
  const stream_buffer keys(stream, size_t(cells) * sizeof(int64_t)), ids(stream, size_t(cells) * sizeof(int64_t)),
      sorted_keys(stream, size_t(cells) * sizeof(int64_t)), sorted_ids(stream, size_t(cells) * sizeof(int64_t)),
      max_cell(stream, sizeof(int64_t));
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(max_cell.get(), 0xff, sizeof(int64_t), stream));  // no_cell
  launch(fa_batch_keys, grid_for(cells), batch_threads, 0, stream, index, spans, cells, open,
         static_cast<int64_t*>(keys.get()), static_cast<int64_t*>(ids.get()), static_cast<int64_t*>(max_cell.get()));
  size_t sort_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, static_cast<const int64_t*>(nullptr),
                                                     static_cast<int64_t*>(nullptr), static_cast<const int64_t*>(nullptr),
                                                     static_cast<int64_t*>(nullptr), cells, 0, 64, stream));
  const stream_buffer sort_temp(stream, sort_bytes);
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      sort_temp.get(), sort_bytes, static_cast<const int64_t*>(keys.get()), static_cast<int64_t*>(sorted_keys.get()),
      static_cast<const int64_t*>(ids.get()), static_cast<int64_t*>(sorted_ids.get()), cells, 0, 64, stream));
  // The lookups: in place when the arrays are the device's, else through device copies.
  const bool device = on_device(idx) && on_device(values) && on_device(found);
  stream_buffer idx_copy, values_copy, found_copy;
  const int64_t* d_idx = idx;
  V* d_values = values;
  uint8_t* d_found = found;
  if (!device) {
    idx_copy = stream_buffer(stream, size_t(n) * sizeof(int64_t));
    values_copy = stream_buffer(stream, size_t(n) * sizeof(V));
    found_copy = stream_buffer(stream, size_t(n));
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(idx_copy.get(), idx, size_t(n) * sizeof(int64_t), cudaMemcpyDefault, stream));
    d_idx = static_cast<const int64_t*>(idx_copy.get());
    d_values = static_cast<V*>(values_copy.get());
    d_found = static_cast<uint8_t*>(found_copy.get());
  }
  launch(fa_batch_search<V>, grid_for(n), batch_threads, 0, stream, static_cast<const int64_t*>(sorted_keys.get()),
         static_cast<const int64_t*>(sorted_ids.get()), cells, static_cast<const int64_t*>(max_cell.get()), cell_values,
         d_idx, n, d_values, d_found);
  if (!device) {
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(values, d_values, size_t(n) * sizeof(V), cudaMemcpyDefault, stream));
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(found, d_found, size_t(n), cudaMemcpyDefault, stream));
  }
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

#define GSEARCH_FA_BATCH_INSTANTIATE(V)                                                                          \
  template void fa_batch_lookup<V>(cudaStream_t, const int64_t*, const core::fa_span*, const V*, int64_t,       \
                                   const int64_t*, const int64_t*, int64_t, V*, uint8_t*);
GSEARCH_KEY_TYPES(GSEARCH_FA_BATCH_INSTANTIATE)
#undef GSEARCH_FA_BATCH_INSTANTIATE

}  // namespace gsearch::cuda_backend
