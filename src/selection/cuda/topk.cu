// The CUDA backend of topk and kthvalue (torch.topk / torch.kthvalue over the last axis):
//  - short rows and small k (core::short_row_list), topk only: a thread a row, its outputs
//    sorted as they are found (topk_short_kernel.cuh);
//  - rows too long for shared memory, or too few to fill the device (tuning_topk.hpp's
//    topk_row_split): split in pieces, the row kernel over the pieces, then over each row's
//    pieces' outputs (launch_split);
//  - rows that fit in shared memory (and, by topk_rows_in_global, long rows when there are enough
//    of them): the row kernel, one block per row (topk_kernel.cuh);
//  - other rows, one at a time: the threshold by a planned select (planned_select.cuh: in device
//    memory, no wait before the gather), then one gather pass (topk_flat_kernel.cuh);
// then, for a sorted topk, the sort of each row's k outputs (in the row kernels up to
// topk_rows_sort_max_k; else a block sort up to topk_block_sort_max_k, cub's device sorts beyond).

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <optional>
#include <string_view>

#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/stream_buffer.cuh"
#include "gsearch/core/topk_list.hpp"
#include "selection/backend.hpp"
#include "selection/cuda/planned_select.cuh"
#include "selection/cuda/radix_select.cuh"
#include "selection/cuda/topk_flat_kernel.cuh"
#include "selection/cuda/topk_kernel.cuh"
#include "selection/cuda/topk_short_kernel.cuh"
#include "selection/tuning.hpp"
#include "selection/tuning_topk.hpp"

namespace gsearch::cuda_backend {
namespace {

constexpr int row_threads = topk_rows_threads;

// Slices of one stream_buffer, each 256-byte aligned.
struct carve {
  char* p;
  template <class U>
  U* take(int64_t count) {
    U* r = reinterpret_cast<U*>(p);
    p += (size_t(count) * sizeof(U) + 255) / 256 * 256;
    return r;
  }
};
constexpr size_t carve_bytes(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The staged row kernel over `rows` rows read as `pieces`, with the filter's positions after
// each piece where they fit (topk_filter_rows); false (nothing launched) when a piece does not fit
// shared memory. The rule of tuning_topk.hpp (what the tests size their rows by), and the
// kernel's real static shared memory, which the rule's reserve is meant to cover.
template <class T>
bool launch_staged_rows(cudaStream_t stream, const T* data, int64_t rows, const row_pieces& pieces,
                        int64_t rank, core::radix_bits_t<T> flip, row_outputs outputs, T* values,
                        int64_t* indices, const device_limits& dev) {
  const auto staged = topk_rows_kernel<T, row_threads, true>;
  const int64_t staged_bytes = topk_staged_row_bytes(pieces.part, int(sizeof(T)));
  const int64_t static_bytes = static_shared_bytes(reinterpret_cast<const void*>(staged), dev);
  if (pieces.part > topk_staged_max_cols(int(sizeof(T)), dev.max_shared_per_block) ||
      staged_bytes + static_bytes > dev.max_shared_per_block)
    return false;
  int filter = topk_filter_rows(pieces.part, rank, int(sizeof(T)));
  const int64_t filter_bytes = topk_filter_positions_offset(pieces.part, int(sizeof(T))) +
                               int64_t(filter) * int64_t(sizeof(topk_filter_position));
  if (filter_bytes + static_bytes > dev.max_shared_per_block) filter = 0;
  launch_filling(staged, row_threads, filter ? filter_bytes : staged_bytes, rows * pieces.parts, stream, dev,
                 data, rows, pieces, int(rank), flip, outputs, values, indices, filter);
  return true;
}

// The split of tuning_topk.hpp's topk_row_split: the staged row kernel over each row's pieces
// for their rank + 1 smallest (by key, then position), into a buffer; then over each row's
// parts x (rank + 1) of them, in piece order, with their positions beside (split again where
// they are still too few rows to fill the device). That order keeps the outputs the whole row's:
// the keys equal to the threshold come out in position order (within a piece they lie all
// before its own threshold or all at it: its outputs' two runs, each in position order), so the
// first ties (and kthvalue's first equal element) are the row's. origin: the rows' positions in
// the caller's rows (a split's candidates), or null.
template <class T>
bool launch_split(cudaStream_t stream, const T* data, int64_t rows, int64_t cols, const int64_t* origin,
                  const topk_split& split, int64_t rank, core::radix_bits_t<T> flip, row_outputs outputs,
                  T* values, int64_t* indices, const device_limits& dev) {
  const int64_t width = split.parts * (rank + 1);  // each row's candidates
  const stream_buffer memory(stream, carve_bytes(size_t(rows * width) * sizeof(T)) +
                                         carve_bytes(size_t(rows * width) * sizeof(int64_t)));
  carve c{static_cast<char*>(memory.get())};
  T* candidates = c.take<T>(rows * width);
  int64_t* positions = c.take<int64_t>(rows * width);
  if (!launch_staged_rows(stream, data, rows, row_pieces{cols, int(split.part), int(split.parts), origin},
                          rank, flip, row_outputs::topk, candidates, positions, dev))
    return false;
  // (The rule sized both steps to fit shared memory; were the second to decline, the caller's
  // other paths would write every output.)
  const int64_t staged_max = topk_staged_max_cols(int(sizeof(T)), dev.max_shared_per_block);
  if (const topk_split again = topk_row_split(rows, width, rank + 1, int(sizeof(T)), staged_max, dev.sms);
      again.parts > 1)
    return launch_split(stream, candidates, rows, width, positions, again, rank, flip, outputs, values,
                        indices, dev);
  return launch_staged_rows(stream, candidates, rows, row_pieces{width, int(width), 1, positions}, rank, flip,
                            outputs, values, indices, dev);
}

// The row kernels over every row when they take them (see tuning_topk.hpp): split in pieces
// (topk_row_split), staged in shared memory when the row fits, else reading global memory (when
// topk_rows_in_global says so). False when the rows are for the 1-D path.
template <class T>
bool launch_rows(cudaStream_t stream, const T* data, int64_t rows, int64_t cols, int64_t rank, bool largest,
                 row_outputs outputs, T* values, int64_t* indices, const device_limits& dev) {
  if (cols > topk_rows_max_cols) return false;
  const auto flip = selection_flip<T>(largest);
  const int64_t staged_max = topk_staged_max_cols(int(sizeof(T)), dev.max_shared_per_block);
  if (topk_split_enabled())
    if (const topk_split split = topk_row_split(rows, cols, rank + 1, int(sizeof(T)), staged_max, dev.sms);
        split.parts > 1 &&
        launch_split(stream, data, rows, cols, nullptr, split, rank, flip, outputs, values, indices, dev))
      return true;
  if (launch_staged_rows(stream, data, rows, row_pieces{cols, int(cols), 1, nullptr}, rank, flip, outputs,
                         values, indices, dev))
    return true;
  if (!topk_rows_in_global(rows, cols, int(sizeof(T)), dev.sms)) return false;
  // The sort's k keys, in whole 16-byte words: nvcc reads the rank loop's last keys with one
  // 16-byte load, past the k-th (memcheck, call 5: a 4-byte allocation read 16 bytes). (The staged
  // kernel's keys lie in the row's place, with its slack of 16 bytes less one key after them.)
  const int64_t sort_bytes =
      outputs == row_outputs::topk_sorted ? ((rank + 1) * int64_t(sizeof(T)) + 15) / 16 * 16 : 0;
  launch_filling(topk_rows_kernel<T, row_threads, false>, row_threads, sort_bytes, rows, stream, dev, data,
                 rows, row_pieces{cols, int(cols), 1, nullptr}, int(rank), flip, outputs, values, indices, 0);
  return true;
}

// The short rows' kernel for a list of `list` entries (core::short_row_list's), block after
// block of topk_short_threads rows.
template <class T>
void launch_short_rows(cudaStream_t stream, const T* data, int64_t rows, int64_t cols, int64_t k,
                       bool largest, int list, T* values, int64_t* indices, const device_limits& dev) {
  constexpr int threads = topk_short_threads;
  const int64_t smem = threads * topk_short_stride(cols) * int64_t(sizeof(T));
  const int64_t tiles = (rows + threads - 1) / threads;
  core::with_short_row_list(list, [&](auto length) {
    launch_filling(topk_short_rows_kernel<T, length(), threads>, threads, smem, tiles, stream, dev, data,
                   rows, int(cols), int(k), selection_flip<T>(largest), values, indices);
  });
}

// The 1-D topk of data[0, n) into values / indices [0, k), unsorted: the threshold (rank n - k
// for the largest, k - 1 for the smallest) by select, then one gather pass and the ties. The
// threshold of the radix select stays in device memory and the gather is enqueued behind it, with
// no wait (the chain answers every input: radix_select.cuh); a planned select's
// (planned_select.cuh) the same, with one wait for the whole. When the select's first level copied out every
// element beyond its bracket's splitter (k up to about n / 32: the bracket is open on the top-k
// side) and the threshold fell among them, the gather reads those candidates (some 3% of the
// data, with their positions) instead of the data: two launches, one per source, of which the
// plan's flag lets exactly one work. If the plan gave up (neither did anything), the host-driven
// select and the gather of the data.
template <class T>
void topk_flat(cudaStream_t stream, const T* data, int64_t n, int64_t k, bool largest, T* values,
               int64_t* indices, const device_limits& dev) {
  constexpr int threads = topk_gather_config.threads, loads = topk_gather_config.items;
  const int64_t rank = largest ? n - k : k - 1;
  const stream_buffer memory(stream, carve_bytes(2 * sizeof(u64)) + carve_bytes(sizeof(T)) +
                                         carve_bytes(size_t(k) * sizeof(int64_t)));
  carve c{static_cast<char*>(memory.get())};
  u64* counters = c.take<u64>(2);
  T* threshold = c.take<T>(1);
  int64_t* tie_indices = c.take<int64_t>(k);
  const auto gather_from = [&](const T* from, scan_layout<T, threads, loads> layout, const T* at,
                               const gather_source& source) {
    launch_filling(gather_beyond_kernel<T, threads, loads>, threads, 0, layout.tiles(), stream, dev, from, layout, at,
                   selection_flip<T>(largest), k, values, indices, tie_indices, counters, source);
  };
  const scan_layout<T, threads, loads> whole{n, unaligned_head(data, n)};
  const auto fill_ties = [&](const int32_t* plan_status) {
    launch_plain(fill_ties_kernel<T>, k, 256, stream, dev, data, k, counters, tie_indices, values, indices,
                 plan_status);
  };
  // The radix select's threshold first (src/selection/cuda/radix_select.cuh), then the gather,
  // and no wait: the chain answers every input. The gather reads the select's first copy (some
  // 3-5% of the data, positions beside) where that holds every element beyond the threshold (the
  // first range reached the top k's end of the keys: k up to about n / 45), else the data: two
  // launches, of which the copy's flag lets exactly one work.
  if (std::optional<radix_select<T>> radix = radix_select<T>::enqueue(stream, data, n, {rank}, true)) {
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(counters, 0, 2 * sizeof(u64), stream));
    const int32_t* holds = radix->first_positions() ? radix->first_holds(largest) : nullptr;
    if (holds)
      gather_from(
          radix->first_values(), {radix->first_capacity(), 0}, radix->values(),
          gather_source{radix->first_positions(), radix->first_count(), radix->status(), holds, true});
    gather_from(data, whole, radix->values(), gather_source{nullptr, nullptr, radix->status(), holds, false});
    fill_ties(radix->status());
    return;
  }
  std::optional<planned_select<T>> planned = planned_select<T>::enqueue(stream, data, n, {rank}, true);
  if (planned) {
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(counters, 0, 2 * sizeof(u64), stream));
    gather_source from_data{nullptr, nullptr, planned->status(), nullptr, false};
    if (largest ? planned->first_holds_top() : planned->first_holds_bottom()) {
      const gather_source from_first{planned->first_indices(), planned->first_count(), planned->status(),
                                     planned->first_even(), true};
      // Launched for the largest count the candidates can have; the kernel reads the true one.
      gather_from(planned->first_values(), {planned->first_capacity(), 0}, planned->values(), from_first);
      from_data.first_even = planned->first_even();  // the data only when the candidates cannot serve
    }
    gather_from(data, whole, planned->values(), from_data);
    fill_ties(planned->status());
    if (planned->finish()) return;
  }
  select<T>(stream, data, n, &rank, 1, threshold);
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(counters, 0, 2 * sizeof(u64), stream));
  gather_from(data, whole, threshold, gather_source{});
  fill_ties(nullptr);
}

// The 1-D kthvalue of data[0, n): *value by select, *index the lowest index of an element equal
// to it (indices start at all ones, the scan's "no hit yet").
template <class T>
void kthvalue_flat(cudaStream_t stream, const T* data, int64_t n, int64_t rank, T* value, int64_t* index,
                   const device_limits& dev) {
  constexpr int threads = topk_first_equal_config.threads, items = topk_first_equal_config.items;
  select<T>(stream, data, n, &rank, 1, value);
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(index, 0xFF, sizeof(int64_t), stream));
  const int64_t tiles = (n + int64_t(threads) * items - 1) / (int64_t(threads) * items);
  launch_filling(first_equal_kernel<T, threads, items>, threads, 0, tiles, stream, dev, data, n, value,
                 reinterpret_cast<u64*>(index));
}

template <class T, int Tier>
void launch_block_sort(cudaStream_t stream, T* values, int64_t* indices, int64_t rows, int64_t k, bool largest,
                       const device_limits& dev) {
  constexpr int threads = topk_sort_tiers[Tier].threads, items = topk_sort_tiers[Tier].items;
  launch_filling(sort_rows_kernel<T, threads, items>, threads, 0, rows, stream, dev, values, indices, rows, int(k),
                 selection_flip<T>(largest));
}

// offsets[r] = r * k for r <= rows: the segments of cub::DeviceSegmentedSort.
__global__ void segment_offsets_kernel(int64_t rows, int64_t k, int64_t* __restrict__ offsets) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= rows; r += int64_t(gridDim.x) * blockDim.x)
    offsets[r] = r * k;
}

// Sorts each row's k outputs: largest first when `largest`, else smallest first; ties in output
// order (the block sorts and cub's sorts here are stable).
template <class T>
void sort_outputs(cudaStream_t stream, const T* data, int64_t rows, int64_t cols, int64_t k, bool largest,
                  T* values, int64_t* indices, const device_limits& dev) {
  static_assert(std::size(topk_sort_tiers) == 4);
  if (k <= 1) return;
  const auto fits = [&](int tier) { return k <= topk_sort_tiers[tier].tile(); };
  if (fits(0)) return launch_block_sort<T, 0>(stream, values, indices, rows, k, largest, dev);
  if (fits(1)) return launch_block_sort<T, 1>(stream, values, indices, rows, k, largest, dev);
  if (fits(2)) return launch_block_sort<T, 2>(stream, values, indices, rows, k, largest, dev);
  if (fits(3)) return launch_block_sort<T, 3>(stream, values, indices, rows, k, largest, dev);
  // Beyond the block sorts: the radix keys and a copy of the indices, cub's stable device sort of
  // the pairs into `indices`, and the values read back through the sorted indices.
  using K = core::radix_bits_t<T>;
  const int64_t n = rows * k;
  K* no_keys = nullptr;
  int64_t* no_indices = nullptr;
  int64_t* no_offsets = nullptr;
  size_t sort_bytes = 0;
  if (rows == 1) {
    GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, no_keys, no_keys, no_indices,
                                                       no_indices, n, 0, int(8 * sizeof(K)), stream));
  } else {
    GSEARCH_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, sort_bytes, no_keys, no_keys, no_indices,
                                                                 no_indices, n, rows, no_offsets, no_offsets + 1,
                                                                 stream));
  }
  const stream_buffer memory(stream, 2 * carve_bytes(size_t(n) * sizeof(K)) + carve_bytes(size_t(n) * sizeof(int64_t)) +
                                         carve_bytes(size_t(rows + 1) * sizeof(int64_t)) + carve_bytes(sort_bytes));
  carve c{static_cast<char*>(memory.get())};
  K* keys_in = c.take<K>(n);
  K* keys_out = c.take<K>(n);
  int64_t* indices_in = c.take<int64_t>(n);
  int64_t* offsets = c.take<int64_t>(rows + 1);
  void* sort_temp = c.take<char>(int64_t(sort_bytes));
  launch_plain(radix_keys_kernel<T>, n, 256, stream, dev, values, indices, n, selection_flip<T>(largest), keys_in,
               indices_in);
  if (rows == 1) {
    GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp, sort_bytes, keys_in, keys_out, indices_in, indices,
                                                       n, 0, int(8 * sizeof(K)), stream));
  } else {
    launch_plain(segment_offsets_kernel, rows + 1, 256, stream, dev, rows, k, offsets);
    GSEARCH_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(sort_temp, sort_bytes, keys_in, keys_out, indices_in,
                                                                 indices, n, rows, offsets, offsets + 1, stream));
  }
  launch_plain(gather_values_kernel<T>, n, 256, stream, dev, data, cols, k, n, indices, values);
}

// indices[i] = i % cols: each row's positions, the partition's sort's second key.
__global__ void row_iota_kernel(int64_t* __restrict__ indices, int64_t cols, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    indices[i] = i % cols;
}

std::atomic<bool>& topk_split_switch() {
  static std::atomic<bool> on{[] {
    const char* env = std::getenv("GSEARCH_TOPK_SPLIT");
    return !(env && std::string_view(env) == "0");
  }()};
  return on;
}

}  // namespace

void set_topk_split_enabled(bool on) { topk_split_switch().store(on, std::memory_order_relaxed); }
bool topk_split_enabled() { return topk_split_switch().load(std::memory_order_relaxed); }

template <class T>
void topk(CUstream_st* stream, const T* data, int64_t rows, int64_t cols, int64_t k, bool largest,
          bool sorted, T* values, int64_t* indices) {
  if (rows <= 0 || k <= 0) return;
  const device_limits dev = current_device_limits();
  if (const int list = core::short_row_list(cols, k)) {  // its outputs come sorted
    launch_short_rows(stream, data, rows, cols, k, largest, list, values, indices, dev);
    return;
  }
  // The row kernels sort up to topk_rows_sort_max_k outputs themselves.
  const row_outputs outputs =
      sorted && k <= topk_rows_sort_max_k ? row_outputs::topk_sorted : row_outputs::topk;
  if (launch_rows(stream, data, rows, cols, k - 1, largest, outputs, values, indices, dev)) {
    if (sorted && outputs != row_outputs::topk_sorted)
      sort_outputs(stream, data, rows, cols, k, largest, values, indices, dev);
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    topk_flat(stream, data + r * cols, cols, k, largest, values + r * k, indices + r * k, dev);
  if (sorted) sort_outputs(stream, data, rows, cols, k, largest, values, indices, dev);
}

template <class T>
void kthvalue(CUstream_st* stream, const T* data, int64_t rows, int64_t cols, int64_t rank, T* values,
              int64_t* indices) {
  if (rows <= 0) return;
  const device_limits dev = current_device_limits();
  if (!launch_rows(stream, data, rows, cols, rank, false, row_outputs::first_tie, values, indices, dev))
    for (int64_t r = 0; r < rows; ++r) kthvalue_flat(stream, data + r * cols, cols, rank, values + r, indices + r, dev);
}

// numpy.partition along the last axis. Rows up to topk_block_sort_max_k long: every row sorted,
// which partitions it at every kth, by the top-k's output sort (a block per row, one launch for
// all rows; cub's segmented sort beyond the block sorts' tiles is not taken: long rows select).
// Longer rows: each row by the 1-D partition, which fills the device on its own. m = 0: numpy's
// copy in the data's order.
template <class T>
void partition_rows(CUstream_st* stream, const T* data, int64_t rows, int64_t cols, const int64_t* kth, int64_t m,
                    T* out, int64_t* out_indices) {
  if (rows <= 0 || cols <= 0) return;
  const device_limits dev = current_device_limits();
  const int64_t n = rows * cols;
  if (m > 0 && cols > topk_block_sort_max_k) {
    for (int64_t r = 0; r < rows; ++r)
      partition(stream, data + r * cols, cols, kth, m, out ? out + r * cols : nullptr,
                out_indices ? out_indices + r * cols : nullptr);
    return;
  }
  // The sort moves values and indices together: the one the caller does not want goes to a buffer.
  const stream_buffer spare(stream, out && out_indices ? 0 : size_t(n) * (out ? sizeof(int64_t) : sizeof(T)));
  T* values = out ? out : static_cast<T*>(spare.get());
  int64_t* indices = out_indices ? out_indices : static_cast<int64_t*>(spare.get());
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(values, data, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  launch_plain(row_iota_kernel, n, 256, stream, dev, indices, cols, n);
  if (m > 0) sort_outputs(stream, data, rows, cols, cols, /*largest=*/false, values, indices, dev);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_ROWS_OPS)

}  // namespace gsearch::cuda_backend
