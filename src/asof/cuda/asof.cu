// The CUDA backend of the as-of join: core/asof.hpp's match for every left row, the right rows
// grouped by CUB's radix sort of their group codes (stable, so each group keeps its rows' order),
// and the checks' answers through a host_wait_word.
//
// Why a search per row rather than a merge: the left rows are sorted by key, so no copy or sort
// of the left side is needed, and the searches of neighbouring rows land near each other. Each
// block takes a run of consecutive left rows, a tile of them at a time, and keeps in shared
// memory a hint per group (asof_match's `from`): where the group's last search ended. A row's
// search gallops from its group's hint (a few reads in one or two lines of keys) instead of
// searching the whole group (some 14 dependent reads through the directory and a window, each an
// L2 transaction: 8 ms of the 10^8 x 10^7, 1,000-group call on an H200). The hints are read at
// the start of a tile and advanced (atomicMax) after every row of the tile has read its own: a
// later tile's keys are not before an earlier one's. More groups than shared memory holds hints
// for: the search per row through the directory alone (asof_match_kernel).

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "asof/backend.hpp"
#include "cuda/launch.cuh"
#include "cuda/sort_support.cuh"  // fill_positions
#include "cuda/stream_buffer.cuh"
#include "merge/backend.hpp"  // sort

namespace gsearch::cuda_backend {
namespace {

constexpr int asof_threads = 256;

template <class T>
__global__ void __launch_bounds__(asof_threads)
    asof_match_kernel(const T* __restrict__ left, const int64_t* __restrict__ left_by, int64_t n,
                      core::asof_sampled_keys<T> keys, int64_t m, const int64_t* __restrict__ group_start,
                      const int64_t* __restrict__ order, asof_rule<T> rule, int64_t* __restrict__ out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = core::asof_row(left, left_by, i, keys, m, group_start, order, rule);
}

constexpr int64_t asof_max_hinted_groups = 6144;  // 48 KB of hints: no opt-in to more shared memory

// A block's rows [begin, end) (rows_per_block of them, consecutive), a tile of asof_threads rows
// at a time, with a hint per group in shared memory (groups <= asof_max_hinted_groups; one
// without groups).
template <class T>
__global__ void __launch_bounds__(asof_threads)
    asof_hinted_kernel(const T* __restrict__ left, const int64_t* __restrict__ left_by, int64_t n,
                       core::asof_sampled_keys<T> keys, int64_t m, const int64_t* __restrict__ group_start,
                       const int64_t* __restrict__ order, asof_rule<T> rule, int64_t* __restrict__ out,
                       int64_t groups, int64_t rows_per_block) {
  extern __shared__ long long hints[];  // per group: asof_match's `from`, -1 for none yet
  for (int64_t g = threadIdx.x; g < groups; g += blockDim.x) hints[g] = -1;
  const int64_t begin = int64_t(blockIdx.x) * rows_per_block;
  const int64_t end = begin + rows_per_block < n ? begin + rows_per_block : n;
  for (int64_t tile = begin; tile < end; tile += blockDim.x) {
    __syncthreads();  // the tile before has advanced the hints (the first: they are set)
    const int64_t i = tile + threadIdx.x;
    const int64_t g = i < end && left_by ? left_by[i] : 0;
    int64_t from = i < end ? int64_t(hints[g]) : -1;
    __syncthreads();  // every row of the tile holds its hint before any is advanced
    if (i < end) {
      const int64_t hint = from;
      out[i] = core::asof_row(left, left_by, i, keys, m, group_start, order, rule, from);
      if (from > hint) atomicMax(&hints[g], static_cast<long long>(from));
    }
  }
}

// The directory of the searches (core::asof_sampled_keys): dir[t] = keys[t sample].
template <class T>
__global__ void __launch_bounds__(asof_threads)
    directory_kernel(const T* __restrict__ keys, int64_t entries, T* __restrict__ dir) {
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < entries; t += int64_t(gridDim.x) * blockDim.x)
    dir[t] = keys[t * core::asof_sampled_keys<T>::sample];
}

template <class T>
int64_t directory_entries(int64_t m) {
  return (m + core::asof_sampled_keys<T>::sample - 1) / core::asof_sampled_keys<T>::sample;
}

// start[g] = the first position of group g among the sorted codes (lower bound), g in [0, groups].
__global__ void __launch_bounds__(asof_threads)
    group_start_kernel(const uint64_t* __restrict__ sorted, int64_t m, int64_t groups, int64_t* __restrict__ start) {
  for (int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g <= groups; g += int64_t(gridDim.x) * blockDim.x)
    start[g] = core::lower_bound_in(core::asof_keys<uint64_t>{sorted}, int64_t{0}, m, uint64_t(g));
}

template <class T>
__global__ void __launch_bounds__(asof_threads)
    gather_kernel(const T* __restrict__ right, const int64_t* __restrict__ order, int64_t m, T* __restrict__ keys) {
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < m; p += int64_t(gridDim.x) * blockDim.x)
    keys[p] = right[order[p]];
}

// sorted_codes[i] = codes[perm[i]].
__global__ void __launch_bounds__(asof_threads)
    gather_codes_kernel(const int64_t* __restrict__ codes, const int64_t* __restrict__ perm, int64_t n,
                        int64_t* __restrict__ sorted_codes) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    sorted_codes[i] = codes[perm[i]];
}

__global__ void __launch_bounds__(asof_threads)
    unsort_kernel(const int64_t* __restrict__ matched, const int64_t* __restrict__ left_perm,
                  const int64_t* __restrict__ right_perm, int64_t n, int64_t* __restrict__ out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[left_perm[i]] = matched[i] < 0 ? -1 : right_perm[matched[i]];
}

// *first = the least i with codes[i] outside [0, groups) (all ones before: none).
__global__ void __launch_bounds__(asof_threads)
    code_check_kernel(const int64_t* __restrict__ codes, int64_t n, int64_t groups, int64_t* first) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if (codes[i] < 0 || codes[i] >= groups)
      atomicMin(reinterpret_cast<unsigned long long*>(first), static_cast<unsigned long long>(i));
}

// *found = 1 when keys[0, n) holds a NaN (0 before).
template <class T>
__global__ void __launch_bounds__(asof_threads) nan_kernel(const T* __restrict__ keys, int64_t n, int64_t* found) {
  bool any = false;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    any |= keys[i] != keys[i];
  if (__syncthreads_or(any) && threadIdx.x == 0) *found = 1;
}

// The word's value after `fill` (a memset byte), `kernel`'s launch over n and a wait.
template <class Kernel, class... Args>
int64_t answer_of(cudaStream_t stream, int fill, Kernel kernel, int64_t n, Args... args) {
  const host_wait_word word(stream);
  int64_t value = 0;
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(word.get(), fill, sizeof(int64_t), stream));
  launch_plain(kernel, n, asof_threads, stream, current_device_limits(), args..., word.get());
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&value, word.get(), sizeof(value), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

}  // namespace

namespace {

// The right rows sorted by group code, stably: calls then(keys in that order with their
// directory, each group's first position (groups + 1 of them, the last = m), each position's
// original row), memory that lives for the call (enqueued work on it is safe: the pool frees it
// in stream order).
template <class T>
void group_right(cudaStream_t stream, const T* right, const int64_t* right_by, int64_t m, int64_t groups,
                 const std::function<void(core::asof_sampled_keys<T>, const int64_t*, const int64_t*)>& then) {
  // Codes are in [0, groups) (checked): as unsigned words their low bit_width(groups - 1) bits
  // order them, and the radix sort reads only those.
  const int end_bit = std::max(1, int(std::bit_width(uint64_t(std::max<int64_t>(groups, 1) - 1))));
  const auto* codes = reinterpret_cast<const uint64_t*>(right_by);
  size_t sort_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, codes, static_cast<uint64_t*>(nullptr),
                                                     static_cast<const int64_t*>(nullptr),
                                                     static_cast<int64_t*>(nullptr), m, 0, end_bit, stream));
  const auto round = [](size_t b) { return (b + 255) / 256 * 256; };
  const size_t words = round(size_t(m) * 8);
  const size_t keys_bytes = round(size_t(m) * sizeof(T)), start_bytes = round(size_t(groups + 1) * 8);
  const size_t dir_bytes = round(size_t(directory_entries<T>(m)) * sizeof(T));
  // One allocation: the sorted codes, the positions before and after the sort, the keys in group
  // order, the group starts, CUB's temporary space, the keys' directory.
  sort_bytes = round(sort_bytes);  // the directory after it stays aligned
  const stream_buffer buffer(stream, 3 * words + keys_bytes + start_bytes + sort_bytes + dir_bytes);
  char* base = static_cast<char*>(buffer.get());
  auto* sorted = reinterpret_cast<uint64_t*>(base);
  auto* positions = reinterpret_cast<int64_t*>(base + words);
  auto* order = reinterpret_cast<int64_t*>(base + 2 * words);
  auto* keys = reinterpret_cast<T*>(base + 3 * words);
  auto* start = reinterpret_cast<int64_t*>(base + 3 * words + keys_bytes);
  void* sort_temp = base + 3 * words + keys_bytes + start_bytes;
  auto* dir = reinterpret_cast<T*>(base + 3 * words + keys_bytes + start_bytes + sort_bytes);
  const device_limits& dev = current_device_limits();
  if (m > 0) {
    fill_positions(stream, dev, positions, m);
    GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp, sort_bytes, codes, sorted, positions, order, m, 0,
                                                       end_bit, stream));
    launch_plain(gather_kernel<T>, m, asof_threads, stream, dev, right, order, m, keys);
    launch_plain(directory_kernel<T>, directory_entries<T>(m), asof_threads, stream, dev, keys, directory_entries<T>(m), dir);
  }
  launch_plain(group_start_kernel, groups + 1, asof_threads, stream, dev, sorted, m, groups, start);
  then(core::asof_sampled_keys<T>{keys, dir}, start, order);  // enqueued before `buffer` is freed, in stream order
}

}  // namespace

template <class T>
void asof_join(cudaStream_t stream, const T* left, const int64_t* left_by, int64_t n, const T* right,
               const int64_t* right_by, int64_t m, int64_t groups, const asof_rule<T>& rule, int64_t* out) {
  if (n == 0) return;
  const device_limits& dev = current_device_limits();
  const auto match = [&](core::asof_sampled_keys<T> keys, const int64_t* group_start, const int64_t* order) {
    if (groups > asof_max_hinted_groups) {
      launch_plain(asof_match_kernel<T>, n, asof_threads, stream, dev, left, left_by, n, keys, m, group_start, order,
                   rule, out);
      return;
    }
    // Blocks that fill the device, each a run of whole tiles: the fewer blocks, the fewer first
    // searches without a hint (one per group a block meets).
    const int64_t smem = groups * int64_t(sizeof(long long)), tiles = (n + asof_threads - 1) / asof_threads;
    const int blocks = grid_size(asof_hinted_kernel<T>, asof_threads, smem, tiles, dev);
    const int64_t rows_per_block = (tiles + blocks - 1) / blocks * asof_threads;
    launch(asof_hinted_kernel<T>, (n + rows_per_block - 1) / rows_per_block, asof_threads, smem, stream, left,
           left_by, n, keys, m, group_start, order, rule, out, groups, rows_per_block);
  };
  if (!left_by) {
    const int64_t entries = directory_entries<T>(m);
    const stream_buffer dir(stream, size_t(entries) * sizeof(T));
    if (entries > 0)
      launch_plain(directory_kernel<T>, entries, asof_threads, stream, dev, right, entries, static_cast<T*>(dir.get()));
    match(core::asof_sampled_keys<T>{right, static_cast<const T*>(dir.get())}, nullptr, nullptr);
    return;
  }
  group_right<T>(stream, right, right_by, m, groups, match);
}

template <class T>
void asof_sort(cudaStream_t stream, const T* keys, const int64_t* codes, int64_t n,
               const std::function<void(const T*, const int64_t*, const int64_t*, int64_t*)>& then) {
  const auto round = [](size_t b) { return (b + 255) / 256 * 256; };
  const size_t words = round(size_t(n) * 8), keys_bytes = round(size_t(n) * sizeof(T));
  // The positions before the sort, the permutation, the codes in order, the scratch, the keys.
  const stream_buffer buffer(stream, 4 * words + keys_bytes);
  char* base = static_cast<char*>(buffer.get());
  auto* positions = reinterpret_cast<int64_t*>(base);
  auto* perm = reinterpret_cast<int64_t*>(base + words);
  auto* sorted_codes = reinterpret_cast<int64_t*>(base + 2 * words);
  auto* scratch = reinterpret_cast<int64_t*>(base + 3 * words);
  auto* sorted = reinterpret_cast<T*>(base + 4 * words);
  const device_limits& dev = current_device_limits();
  if (n > 0) {
    fill_positions(stream, dev, positions, n);
    sort(stream, keys, n, positions, sorted, perm);
    if (codes) launch_plain(gather_codes_kernel, n, asof_threads, stream, dev, codes, perm, n, sorted_codes);
  }
  then(sorted, codes ? sorted_codes : nullptr, perm, scratch);  // enqueued before `buffer` is freed
}

void asof_unsort(cudaStream_t stream, const int64_t* matched, const int64_t* left_perm, const int64_t* right_perm,
                 int64_t n, int64_t* out) {
  if (n > 0)
    launch_plain(unsort_kernel, n, asof_threads, stream, current_device_limits(), matched, left_perm, right_perm, n,
                 out);
}

template <class T>
bool has_nan(cudaStream_t stream, const T* keys, int64_t n, bool sorted) {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  } else {
    if (n == 0) return false;
    if (sorted) {  // NaN sorts last
      T last{};
      GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&last, keys + (n - 1), sizeof(T), cudaMemcpyDeviceToHost, stream));
      GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      return last != last;
    }
    return answer_of(stream, 0, nan_kernel<T>, n, keys, n) != 0;
  }
}

int64_t first_code_outside(cudaStream_t stream, const int64_t* codes, int64_t n, int64_t groups) {
  if (n == 0) return -1;
  return answer_of(stream, 0xff, code_check_kernel, n, codes, n, groups);  // all ones, -1: none
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_ASOF_OPS)

}  // namespace gsearch::cuda_backend
