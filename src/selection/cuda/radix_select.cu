// The radix select's host side (radix_select.cuh): the copy buffers' size from the sample's
// brackets, the window kernel and the chain of passes, and the one wait.

#include "selection/cuda/radix_select.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/radix_select.hpp"
#include "gsearch/core/selection.hpp"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "selection/backend.hpp"
#include "selection/cuda/radix_select_kernel.cuh"
#include "selection/tuning.hpp"

namespace gsearch::cuda_backend {

template <class T>
std::optional<radix_select<T>> radix_select<T>::enqueue(cudaStream_t stream, const T* data, int64_t n,
                                                        const std::vector<int64_t>& ranks, bool keep_first,
                                                        bool count_nan) {
  using U = core::radix_bits_t<T>;
  using state_t = radix_select_state<T>;
  constexpr int threads = radix_pass_config.threads, loads = radix_pass_config.items;
  if (ranks.empty() || int64_t(ranks.size()) > radix_select_max_ranks || n < radix_select_min_n) return std::nullopt;
  const device_limits dev = current_device_limits();
  radix_ranks params{};
  params.r = int32_t(ranks.size());
  std::copy(ranks.begin(), ranks.end(), params.rank);

  const int64_t capacity = radix_copy_capacity(n, ranks.data(), int(ranks.size()));
  // Kept, the first copy and its positions stay for the caller (32-bit positions in the stage).
  keep_first = keep_first && ranks.size() == 1 && n <= int64_t(UINT32_MAX);
  const size_t state_bytes = (sizeof(state_t) + 255) / 256 * 256;
  const int buffer_count = keep_first ? 3 : 2;
  stream_buffer memory(stream, state_bytes + size_t(buffer_count) * size_t(capacity) * sizeof(T) +
                                   (keep_first ? size_t(capacity) * sizeof(int64_t) : 0));
  auto* st = static_cast<state_t*>(memory.get());
  T* buffers = reinterpret_cast<T*>(static_cast<unsigned char*>(memory.get()) + state_bytes);
  int64_t* positions = keep_first ? reinterpret_cast<int64_t*>(buffers + buffer_count * capacity) : nullptr;

  launch(radix_window_kernel<T, radix_window_threads>, 1, radix_window_threads, 0, stream, data, n, params,
         st, keep_first, count_nan && std::is_floating_point_v<T>);
  // Every pass on the same grid: radix_pass_blocks_per_sm blocks a multiprocessor, and enough
  // that no block counts 2^31 elements in its 32-bit shared counts.
  const scan_layout<T, threads, loads> layout{n, unaligned_head(data, n)};
  const int64_t most_tiles = (int64_t(1) << 31) / layout.tile;
  const int64_t grid = std::max<int64_t>(std::min<int64_t>(layout.tiles(), int64_t(radix_pass_blocks_per_sm) * dev.sms),
                                         (layout.tiles() + most_tiles - 1) / most_tiles);
  // The pass kernel for as few slots as hold the ranks (its registers: 64 at 2 blocks a
  // multiprocessor, and 4 slots' ranges, counts and extents take about 40).
  const auto enqueue_passes = [&](auto first, auto next, auto slots) {
    constexpr int R = decltype(slots)::value;
    constexpr int stages = radix_pass_stages(R, sizeof(T));
    const int64_t first_smem = radix_pass_shared_bytes<T, threads, loads, stages>(R, keep_first);
    const int64_t smem = radix_pass_shared_bytes<T, threads, loads, stages>(R, false);
    allow_dynamic_shared(reinterpret_cast<const void*>(first), first_smem, dev);
    allow_dynamic_shared(reinterpret_cast<const void*>(next), smem, dev);
    launch(first, grid, threads, first_smem, stream, data, n, layout.head, st, buffers, capacity, positions);
    for (int pass = 1; pass < core::radix_max_passes<U>(); ++pass)
      launch(next, grid, threads, smem, stream, data, n, layout.head, st, buffers, capacity,
             static_cast<int64_t*>(nullptr));
  };
  using one = std::integral_constant<int, 1>;
  using two = std::integral_constant<int, 2>;
  using most = std::integral_constant<int, radix_select_max_ranks>;
  if (ranks.size() == 1)
    enqueue_passes(radix_pass_kernel<T, threads, loads, true, 1>, radix_pass_kernel<T, threads, loads, false, 1>, one{});
  else if (ranks.size() == 2)
    enqueue_passes(radix_pass_kernel<T, threads, loads, true, 2>, radix_pass_kernel<T, threads, loads, false, 2>, two{});
  else
    enqueue_passes(radix_pass_kernel<T, threads, loads, true, radix_select_max_ranks>,
                   radix_pass_kernel<T, threads, loads, false, radix_select_max_ranks>, most{});
  return radix_select(stream, std::move(memory), st, int(ranks.size()), capacity, keep_first);
}

template <class T>
const T* radix_select<T>::first_values() const {
  return reinterpret_cast<const T*>(static_cast<const unsigned char*>(state_) +
                                    (sizeof(radix_select_state<T>) + 255) / 256 * 256);
}
template <class T>
const int64_t* radix_select<T>::first_positions() const {
  return kept_ ? reinterpret_cast<const int64_t*>(first_values() + 3 * capacity_) : nullptr;
}
template <class T>
const int64_t* radix_select<T>::first_count() const {
  return reinterpret_cast<const int64_t*>(static_cast<const unsigned char*>(state_) +
                                          offsetof(radix_select_state<T>, first_count));
}
template <class T>
const int32_t* radix_select<T>::first_holds(bool top) const {
  return reinterpret_cast<const int32_t*>(
      static_cast<const unsigned char*>(state_) +
      (top ? offsetof(radix_select_state<T>, first_holds_top) : offsetof(radix_select_state<T>, first_holds_bottom)));
}

template <class T>
const T* radix_select<T>::values() const {
  return reinterpret_cast<const T*>(static_cast<const unsigned char*>(state_) + offsetof(radix_select_state<T>, value));
}
template <class T>
const int64_t* radix_select<T>::less() const {
  return reinterpret_cast<const int64_t*>(static_cast<const unsigned char*>(state_) +
                                          offsetof(radix_select_state<T>, less));
}
template <class T>
const int32_t* radix_select<T>::status() const {
  return reinterpret_cast<const int32_t*>(static_cast<const unsigned char*>(state_) +
                                          offsetof(radix_select_state<T>, status));
}

template <class T>
std::optional<std::vector<T>> radix_select<T>::finish(int64_t* nan_count) {
  using U = core::radix_bits_t<T>;
  using state_t = radix_select_state<T>;
  // The slots and the status (the state's head; the counts stay on the device).
  core::radix_slot<U> slots[radix_select_max_ranks];
  int32_t status = 0;
  u64 nans = 0;
  const auto* base = static_cast<const unsigned char*>(state_);
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(slots, base + offsetof(state_t, slot), sizeof(slots), cudaMemcpyDeviceToHost, stream_));
  GSEARCH_CUDA_CHECK(
      cudaMemcpyAsync(&status, base + offsetof(state_t, status), sizeof(status), cudaMemcpyDeviceToHost, stream_));
  if (nan_count)
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&nans, base + offsetof(state_t, nan_count), sizeof(nans),
                                       cudaMemcpyDeviceToHost, stream_));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (nan_count) *nan_count = int64_t(nans);
  if (status != int32_t(core::plan_status::done)) return std::nullopt;
  std::vector<T> values;
  for (int k = 0; k < r_; ++k) values.push_back(core::from_radix_bits<T>(slots[k].range.lo));
  return values;
}

#define GSEARCH_INSTANTIATE_RADIX_SELECT(T) template class radix_select<T>;
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE_RADIX_SELECT)
#undef GSEARCH_INSTANTIATE_RADIX_SELECT

}  // namespace gsearch::cuda_backend
