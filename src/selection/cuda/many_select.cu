// The select of many ranks (many_select.cuh): the planner of core/many_select.hpp on the host, a
// pass kernel (many_select_kernel.cuh) a digit, one wait a pass for its counts.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/pinned_pool.hpp"
#include "cuda/stream_buffer.cuh"
#include "gsearch/core/many_select.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "selection/backend.hpp"
#include "selection/cuda/many_select.cuh"
#include "selection/cuda/many_select_kernel.cuh"
#include "selection/tuning.hpp"

namespace gsearch::cuda_backend {

namespace {

// The pass kernel for p: its level count at compile time where it is 0, 1 or 2 and the tables are
// in shared memory (a pass after a copy walks one level, the first none), else the general one.
template <class T, int Threads, int Loads>
auto pass_kernel(const core::many_pass& p, bool copies) {
  using kernel_t = decltype(&many_select_pass_kernel<T, Threads, Loads, false>);
  const auto of = [&](auto copy) -> kernel_t {
    constexpr bool C = decltype(copy)::value;
    if (p.tables_in_shared) {
      if (p.levels == 0) return many_select_pass_kernel<T, Threads, Loads, C, 0>;
      if (p.levels == 1) return many_select_pass_kernel<T, Threads, Loads, C, 1>;
      if (p.levels == 2) return many_select_pass_kernel<T, Threads, Loads, C, 2>;
    }
    return many_select_pass_kernel<T, Threads, Loads, C, -1>;
  };
  return copies ? of(std::true_type{}) : of(std::false_type{});
}

}  // namespace

template <class T>
std::optional<many_answers<T>> many_select(cudaStream_t stream, const T* data, int64_t n,
                                           const std::vector<int64_t>& ranks) {
  using U = core::radix_bits_t<T>;
  using plan_t = core::many_plan<U>;
  using range_t = core::many_range<U>;
  constexpr int threads = many_pass_config.threads, loads = many_pass_config.items;
  using layout_t = scan_layout<T, threads, loads>;
  if (ranks.empty() || int64_t(ranks.size()) > many_select_max_ranks || n <= 0) return std::nullopt;
  const int64_t capacity = std::max<int64_t>(n / many_copy_fraction, 1);
  // The last few thousand elements sorted by one block (the select's sample sort) and read off.
  const int64_t sort_max = select_sample_size(int(sizeof(T)));
  const device_limits dev = current_device_limits();

  // The counts (the most bins a pass has, then the copy's count), the sample's extent and cells, the tables,
  // the ranges, two copies (each element's slot beside it).
  const auto align = [](size_t b) { return (b + 255) / 256 * 256; };
  // (beside the counts, the sample's cells' counts, then the cells' entries)
  const size_t counts_end = align(size_t(core::many_pass_bins + 1) * 8 + 2 * sizeof(U));
  const size_t hist_bytes = counts_end + align(size_t(core::many_max_cells) * 4);
  const size_t table_bytes = align(size_t(plan_t::max_table_entries) * 2);
  const size_t range_bytes = align(size_t(plan_t::max_ranges) * sizeof(range_t));
  const size_t copy_bytes = align(size_t(capacity) * sizeof(T)), root_bytes = align(size_t(capacity) * 2);
  // A pass's blocks' counts, a row a block: the most blocks a pass has (the resident blocks of
  // every multiprocessor, or more where a block would count 2^31 elements) x the most bins.
  const int64_t most_tiles = (int64_t(1) << 31) / layout_t::tile;
  constexpr int most_threads_per_sm = 2048;  // sm_70 to sm_90's most
  const int64_t most_rows = std::max<int64_t>(int64_t(dev.sms) * (most_threads_per_sm / threads),
                                              (layout_t{n, 0}.tiles() + 1 + most_tiles - 1) / most_tiles);
  const size_t partial_bytes = align(size_t(most_rows) * size_t(core::many_pass_bins) * 4);
  stream_buffer memory(
      stream, hist_bytes + table_bytes + range_bytes + partial_bytes + 2 * (copy_bytes + root_bytes));
  auto* base = static_cast<unsigned char*>(memory.get());
  auto* hist = reinterpret_cast<u64*>(base);
  u64* copied = hist + core::many_pass_bins;
  U* extent = reinterpret_cast<U*>(copied + 1);
  auto* cells = reinterpret_cast<uint32_t*>(base + counts_end);
  auto* tables = reinterpret_cast<int16_t*>(base + hist_bytes);
  auto* ranges = reinterpret_cast<range_t*>(base + hist_bytes + table_bytes);
  auto* partial = reinterpret_cast<uint32_t*>(base + hist_bytes + table_bytes + range_bytes);
  unsigned char* const buffers = base + hist_bytes + table_bytes + range_bytes + partial_bytes;
  T* copies[2] = {reinterpret_cast<T*>(buffers), reinterpret_cast<T*>(buffers + copy_bytes)};
  uint16_t* roots[2] = {reinterpret_cast<uint16_t*>(buffers + 2 * copy_bytes),
                        reinterpret_cast<uint16_t*>(buffers + 2 * copy_bytes + root_bytes)};

  // Page-locked staging for what crosses between passes (a pageable copy of a pass's counts took
  // tens of microseconds): the counts, the newest table, the ranges, the sorted last copy.
  struct staging {
    pinned_block block;
    ~staging() { pinned_release(block); }
  } host;
  const size_t counts_bytes = size_t(core::many_pass_bins) * 8, newest_bytes = size_t(core::many_pass_bins) * 2;
  const size_t host_range_bytes = size_t(plan_t::max_ranges) * sizeof(range_t);
  host.block =
      pinned_acquire(counts_bytes + newest_bytes + host_range_bytes + size_t(sort_max) * sizeof(T) + 16);
  auto* const staged = static_cast<unsigned char*>(host.block.p);
  auto* counts = reinterpret_cast<u64*>(staged);
  auto* newest = reinterpret_cast<int16_t*>(staged + counts_bytes);
  auto* host_ranges = reinterpret_cast<range_t*>(staged + counts_bytes + newest_bytes);
  auto* last_keys = reinterpret_cast<T*>(staged + counts_bytes + newest_bytes + host_range_bytes);

  // The sample's extent and cells (the first pass's bins: core::many_plan), then the cells'
  // entries for every pass that reads the data.
  constexpr int sample_threads = 1024, sample_items = 16;
  static_assert(sample_threads * sample_items >= select_sample_size(int(sizeof(T))),
                "one block holds the sample");
  launch(many_sample_cells_kernel<T, sample_threads, sample_items>, 1, sample_threads, 0, stream, data, n,
         std::min<int64_t>(n, sort_max), extent, cells);
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(counts, extent, 2 * sizeof(U), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(
      cudaMemcpyAsync(counts + 2, cells, size_t(core::many_max_cells) * 4, cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  U from, to;
  std::memcpy(&from, counts, sizeof(U));
  std::memcpy(&to, reinterpret_cast<const unsigned char*>(counts) + sizeof(U), sizeof(U));
  const core::many_cells<U> sample_cells = core::many_cells<U>::over(from, to);
  const auto* cell_counts = reinterpret_cast<const uint32_t*>(counts + 2);
  plan_t plan(n, ranks, sample_cells, std::vector<uint32_t>(cell_counts, cell_counts + sample_cells.count),
              capacity, sort_max);
  // (through the tables' staging: the first pass uploads no table, and each pass waits before the
  // next rewrites it)
  std::copy(plan.cell_entries().begin(), plan.cell_entries().end(), reinterpret_cast<uint32_t*>(newest));
  GSEARCH_CUDA_CHECK(
      cudaMemcpyAsync(cells, newest, plan.cell_entries().size() * 4, cudaMemcpyHostToDevice, stream));

  int source = -1;  // the copy the next pass reads (-1: the data)
  while (!plan.done()) {
    if (plan.gave_up()) return std::nullopt;
    const core::many_pass& p = plan.pass();
    const std::vector<int16_t>& t = plan.tables();  // the newest table: the others are on the device
    if (const auto from_entry = size_t(plan.new_tables_from()); t.size() > from_entry) {
      std::copy(t.begin() + int64_t(from_entry), t.end(), newest);  // one table: at most a pass's bins
      GSEARCH_CUDA_CHECK(cudaMemcpyAsync(tables + from_entry, newest, (t.size() - from_entry) * 2,
                                         cudaMemcpyHostToDevice, stream));
    }
    std::copy(plan.ranges().begin(), plan.ranges().end(), host_ranges);  // every level's (a copy moves them)
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(ranges, host_ranges, plan.ranges().size() * sizeof(range_t),
                                       cudaMemcpyHostToDevice, stream));
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(hist, 0, size_t(p.bins) * 8, stream));
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(copied, 0, 8, stream));
    const T* src = source < 0 ? data : copies[source];
    const layout_t layout{plan.source_n(), source < 0 ? unaligned_head(data, n) : 0};
    const int out = source == 0 ? 1 : 0;
    auto kernel = pass_kernel<T, threads, loads>(p, plan.copies());
    const int64_t smem = many_shared_layout<T>(p, threads, plan.copies()).bytes();
    allow_dynamic_shared(reinterpret_cast<const void*>(kernel), smem, dev);
    // No block counts 2^31 elements in its 32-bit shared counts.
    const int64_t tiles = layout.tiles();
    const int64_t grid =
        std::min<int64_t>(most_rows, std::max<int64_t>(grid_size(kernel, threads, smem, tiles, dev),
                                                       (tiles + most_tiles - 1) / most_tiles));
    launch(kernel, grid, threads, smem, stream, src,
           source < 0 ? static_cast<const uint16_t*>(nullptr) : roots[source], layout, p,
           static_cast<const int16_t*>(tables), static_cast<const range_t*>(ranges),
           static_cast<const uint32_t*>(cells), partial, copies[out], roots[out], copied);
    constexpr int sum_threads = 256, slices = 8;
    launch(many_sum_kernel, (p.bins + sum_threads - 1) / sum_threads * slices, sum_threads, 0, stream,
           static_cast<const uint32_t*>(partial), int(grid), p.bins, slices, hist);
    if (plan.sorts()) {  // the copy sorted by one block (a smaller one for a few thousand), read off
      const int64_t count = plan.copied_count();
      T* sorted = copies[1 - out];  // never the copy it sorts; the pass has read its source
      const auto sort_with = [&](auto kernel, int64_t shared_bytes) {
        allow_dynamic_shared(reinterpret_cast<const void*>(kernel), shared_bytes, dev);
        launch(kernel, 1, select_sort_threads, shared_bytes, stream, static_cast<const T*>(copies[out]), count,
               int(count), static_cast<const int32_t*>(nullptr), 0, static_cast<T*>(nullptr), sorted);
      };
      constexpr int threads_s = select_sort_threads, items = select_sort_items(int(sizeof(T))), few = items / 4;
      if (count <= int64_t(threads_s) * few)
        sort_with(sort_sample_kernel<T, threads_s, few>, int64_t(sample_sort<T, threads_s, few>::shared_bytes));
      else
        sort_with(sort_sample_kernel<T, threads_s, items>, int64_t(sample_sort<T, threads_s, items>::shared_bytes));
      GSEARCH_CUDA_CHECK(cudaMemcpyAsync(last_keys, sorted, size_t(count) * sizeof(T), cudaMemcpyDeviceToHost, stream));
      GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<U> bits(static_cast<size_t>(count));
      for (size_t i = 0; i < bits.size(); ++i) bits[i] = core::radix_bits(last_keys[i]);
      plan.finish_from(bits.data());
      break;
    }
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(counts, hist, size_t(p.bins) * 8, cudaMemcpyDeviceToHost, stream));
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    const bool copying = plan.copies();
    plan.absorb(counts);
    if (copying) source = out;
  }
  many_answers<T> answers;
  for (size_t k = 0; k < plan.size(); ++k) {
    answers.values.push_back(core::from_radix_bits<T>(plan.answer(k)));
    answers.less.push_back(plan.less(k));
  }
  return answers;
}

#define GSEARCH_INSTANTIATE_MANY_SELECT(T)                                                \
  template std::optional<many_answers<T>> many_select<T>(cudaStream_t, const T*, int64_t, \
                                                         const std::vector<int64_t>&);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE_MANY_SELECT)
#undef GSEARCH_INSTANTIATE_MANY_SELECT

}  // namespace gsearch::cuda_backend
