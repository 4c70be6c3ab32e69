// The CUDA backend of index intervals: index_intervals_kernel.cuh's kernels with the shapes of
// tuning_index_intervals.hpp. An improve enqueues its kernels and one copy back of the splitter
// and counts, then waits: the host needs the counts to record the new pieces.

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/check.cuh"
#include "index_intervals/backend.hpp"
#include "index_intervals/cuda/index_intervals_kernel.cuh"
#include "cuda/launch.cuh"
#include "cuda/stream_buffer.cuh"
#include "index_intervals/tuning.hpp"

namespace gsearch::cuda_backend {
namespace {

constexpr int block_threads = intervals_block_config.threads, block_items = intervals_block_config.items;
template <class T>
constexpr int tile_threads = intervals_tile_config(int(sizeof(T))).threads;
template <class T>
constexpr int tile_items = intervals_tile_config(int(sizeof(T))).items;
template <class T>
constexpr int64_t tile_size = int64_t(tile_threads<T>) * tile_items<T>;

size_t align16(size_t bytes) { return (bytes + 15) / 16 * 16; }
void wait(cudaStream_t stream) { GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream)); }

template <class T>
int64_t block_cells(const device_limits& dev) {
  const int64_t compiled = int64_t(block_threads) * block_items;
  const int64_t fits = (dev.max_shared_per_block - 4096) / int64_t(2 * sizeof(T));  // 4 KB: the static scan storage
  return std::min(compiled, fits);
}

template <class T>
core::split_counts<T> read_words(cudaStream_t stream, const improve_words<T>* words) {
  improve_words<T> h;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&h, words, sizeof h, cudaMemcpyDeviceToHost, stream));
  wait(stream);
  return {h.splitter, h.less, h.equal};
}

// The one-block improve of data[0, n) into *words (and *clock when timed).
template <class T, bool Timed>
void launch_block_improve(cudaStream_t stream, T* data, int64_t n, const T* splitter, improve_words<T>* words,
                          improve_clock* clock, const device_limits& dev) {
  auto kernel = improve_block_kernel<T, block_threads, block_items, Timed>;
  const int64_t smem = int64_t(2 * n) * int64_t(sizeof(T));
  allow_dynamic_shared(reinterpret_cast<const void*>(kernel), smem, dev);
  launch(kernel, 1, block_threads, smem, stream, data, int(n), splitter != nullptr, splitter ? *splitter : T{}, words,
         clock);
}

// The multi-block improve of data[0, n): splitter, tile counts, their scan, the scatter into
// scratch, the copy back; the counts into *words.
template <class T>
void launch_tiled_improve(cudaStream_t stream, T* data, int64_t n, const T* splitter, improve_words<T>* words) {
  const int64_t tiles = (n + tile_size<T> - 1) / tile_size<T>;
  size_t scan_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, static_cast<const class_totals*>(nullptr),
                                                   static_cast<class_totals*>(nullptr), tiles, stream));
  const size_t parts_bytes = align16(size_t(n) * sizeof(T)), counts_bytes = align16(size_t(tiles) * sizeof(class_totals));
  const stream_buffer memory(stream, parts_bytes + 2 * counts_bytes + scan_bytes);
  auto* base = static_cast<unsigned char*>(memory.get());
  T* parts = reinterpret_cast<T*>(base);
  auto* counts = reinterpret_cast<class_totals*>(base + parts_bytes);
  auto* inclusive = reinterpret_cast<class_totals*>(base + parts_bytes + counts_bytes);
  void* scan_temp = base + parts_bytes + 2 * counts_bytes;

  launch(choose_splitter_kernel<T>, 1, 1, 0, stream, data, n, splitter != nullptr, splitter ? *splitter : T{}, words);
  launch(count_tiles_kernel<T, tile_threads<T>, tile_items<T>>, tiles, tile_threads<T>, 0, stream, data, n, words,
         counts);
  GSEARCH_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scan_temp, scan_bytes, counts, inclusive, tiles, stream));
  launch(scatter_tiles_kernel<T, tile_threads<T>, tile_items<T>>, tiles, tile_threads<T>, 0, stream, data, n, words,
         inclusive, tiles, parts);
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(data, parts, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

template <class T>
int64_t intervals_block_cells() {
  return block_cells<T>(current_device_limits());
}

template <class T>
core::split_counts<T> intervals_improve(CUstream_st* stream, T* data, int64_t n, const T* splitter) {
  const device_limits dev = current_device_limits();
  const stream_buffer memory(stream, sizeof(improve_words<T>));
  auto* words = static_cast<improve_words<T>*>(memory.get());
  if (n <= block_cells<T>(dev))
    launch_block_improve<T, false>(stream, data, n, splitter, words, nullptr, dev);
  else
    launch_tiled_improve(stream, data, n, splitter, words);
  return read_words(stream, words);
}

template <class T>
core::split_counts<T> intervals_improve_in_block_timed(CUstream_st* stream, T* data, int64_t n, const T* splitter,
                                                       improve_clock* clock) {
  const device_limits dev = current_device_limits();
  if (n < 1 || n > block_cells<T>(dev))
    throw invalid_argument("intervals_improve_in_block_timed: " + std::to_string(n) + " elements; one block takes 1 to " +
                           std::to_string(block_cells<T>(dev)));
  const stream_buffer memory(stream, align16(sizeof(improve_words<T>)) + sizeof(improve_clock));
  auto* words = static_cast<improve_words<T>*>(memory.get());
  auto* d_clock = reinterpret_cast<improve_clock*>(static_cast<unsigned char*>(memory.get()) + align16(sizeof(improve_words<T>)));
  launch_block_improve<T, true>(stream, data, n, splitter, words, d_clock, dev);
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(clock, d_clock, sizeof(improve_clock), cudaMemcpyDeviceToHost, stream));
  return read_words(stream, words);
}

// The unsettled pieces' elements as ordered bits (one to one), one segmented radix sort of every
// unsettled piece into scratch, and back. A settled piece keeps its order, as on the CPU: its
// members are equal or sorted already, and a run of 0.0 and -0.0 (or of NaNs) is settled
// without being in ordered-bits order, so sorting it would make the backends differ bit for bit.
// The scratch starts as a copy of the bits, so what no segment covers comes back unchanged.
template <class T>
void intervals_sort(CUstream_st* stream, T* data, int64_t n, const index_interval* pieces, int64_t count) {
  using U = core::radix_bits_t<T>;
  std::vector<int64_t> offsets;  // the unsettled pieces' starts, then their ends
  for (int64_t i = 0; i < count; ++i)
    if (!pieces[i].settled && pieces[i].size() > 1) offsets.push_back(pieces[i].lo);
  const int64_t segments = int64_t(offsets.size());
  for (int64_t i = 0; i < count; ++i)
    if (!pieces[i].settled && pieces[i].size() > 1) offsets.push_back(pieces[i].hi);
  if (n <= 1 || segments == 0) return;
  U* bits = reinterpret_cast<U*>(data);  // in place: same size, element by element
  size_t sort_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(nullptr, sort_bytes, static_cast<const U*>(nullptr),
                                                        static_cast<U*>(nullptr), n, segments,
                                                        static_cast<const int64_t*>(nullptr),
                                                        static_cast<const int64_t*>(nullptr), stream));
  const size_t sorted_bytes = align16(size_t(n) * sizeof(U)), offsets_bytes = align16(offsets.size() * sizeof(int64_t));
  const stream_buffer memory(stream, sorted_bytes + offsets_bytes + sort_bytes);
  auto* base = static_cast<unsigned char*>(memory.get());
  U* sorted = reinterpret_cast<U*>(base);
  auto* d_offsets = reinterpret_cast<int64_t*>(base + sorted_bytes);
  // From pageable memory: staged before the call returns, so `offsets` may go with this function.
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(d_offsets, offsets.data(), offsets.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream));
  const unsigned grid = unsigned(std::min<int64_t>((n + 255) / 256, 8192));
  launch(to_ordered_bits_kernel<T>, grid, 256, 0, stream, data, n, bits);
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(sorted, bits, size_t(n) * sizeof(U), cudaMemcpyDeviceToDevice, stream));
  GSEARCH_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(base + sorted_bytes + offsets_bytes, sort_bytes, bits, sorted, n,
                                                        segments, d_offsets, d_offsets + segments, stream));
  launch(from_ordered_bits_kernel<T>, grid, 256, 0, stream, sorted, n, data);
}

template <class T>
T intervals_read(CUstream_st* stream, const T* data, int64_t position) {
  T x;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&x, data + position, sizeof(T), cudaMemcpyDeviceToHost, stream));
  wait(stream);
  return x;
}

template <class T>
int64_t intervals_lower_bound(CUstream_st* stream, const T* data, int64_t lo, int64_t hi, T v) {
  const host_wait_word word(stream);
  launch(lower_bound_kernel<T>, 1, 1, 0, stream, data, lo, hi, v, word.get());
  int64_t out = 0;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&out, word.get(), sizeof out, cudaMemcpyDeviceToHost, stream));
  wait(stream);
  return out;
}

template <class T>
void intervals_copy(CUstream_st* stream, T* dst, const T* src, int64_t n) {
  if (n > 0) GSEARCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
}

template <class T>
void intervals_to_host(CUstream_st* stream, T* host, const T* data, int64_t n) {
  if (n <= 0) return;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(host, data, size_t(n) * sizeof(T), cudaMemcpyDeviceToHost, stream));
  wait(stream);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_INDEX_INTERVALS_OPS)
#define GSEARCH_INSTANTIATE_FOR_BENCH(T)                                                                          \
  template int64_t intervals_block_cells<T>();                                                                     \
  template core::split_counts<T> intervals_improve_in_block_timed<T>(CUstream_st*, T*, int64_t, const T*,          \
                                                                     improve_clock*);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE_FOR_BENCH)
#undef GSEARCH_INSTANTIATE_FOR_BENCH

}  // namespace gsearch::cuda_backend
