// The CUDA backend's entry points: the `auto` choice, dispatch to the kernels
// instantiated per algorithm, the sortedness check, and the device queries of device.hpp.

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "merge/backend.hpp"  // sorted_search, for search_detecting_order
#include "search/backend.hpp"
#include "search/cuda/gated.hpp"
#include "static_index/backend.hpp"
#include "cuda/stream_buffer.cuh"
#include "search/cuda/search_kernel.cuh"
#include "search/cuda/search_rows_kernel.cuh"
#include "merge/tuning.hpp"
#include "search/tuning.hpp"

namespace gsearch::cuda_backend {

#define GSEARCH_DECLARE_BOTH_T(A, T)    \
  GSEARCH_DECLARE_LAUNCH_SEARCH_T(A, T) \
  GSEARCH_DECLARE_LAUNCH_SEARCH_ROWS_T(A, T)
#define GSEARCH_DECLARE_ALL_T(A)            \
  GSEARCH_DECLARE_BOTH_T(A, int32_t)        \
  GSEARCH_DECLARE_BOTH_T(A, uint32_t)       \
  GSEARCH_DECLARE_BOTH_T(A, int64_t)        \
  GSEARCH_DECLARE_BOTH_T(A, uint64_t)       \
  GSEARCH_DECLARE_BOTH_T(A, float)          \
  GSEARCH_DECLARE_BOTH_T(A, double)
GSEARCH_DECLARE_ALL_T(algorithm::pbs)
GSEARCH_DECLARE_ALL_T(algorithm::pbs_cf)
GSEARCH_DECLARE_ALL_T(algorithm::pbs_cl)
GSEARCH_DECLARE_ALL_T(algorithm::binary)
#undef GSEARCH_DECLARE_ALL_T
#undef GSEARCH_DECLARE_BOTH_T

namespace {

// Sets *unsorted once some keys[j + 1] < keys[j] within a row of row_length keys (pairs that
// straddle two rows are not compared; a single list is one row of n keys). Blocks take tiles of
// Threads x Items pairs in order, grid-stride, and leave at the first tile that holds a pair out
// of order or finds the word set by another block: unsorted keys are read about one tile a
// block, sorted ones once (both loads of a pair coalesce; the second is mostly the next thread's
// first). The check behind is_sorted / check_sorted (which waits for the word) and behind
// queries_order::detect (whose kernels are gated on it, with no wait).
constexpr int order_check_threads = 256, order_check_items = 8;
template <class T>
__global__ void __launch_bounds__(order_check_threads)
    order_check_kernel(const T* __restrict__ keys, int64_t n, int64_t row_length, int* unsorted) {
  constexpr int64_t tile = int64_t(order_check_threads) * order_check_items;
  const bool one_row = row_length >= n;  // no pair straddles rows: no division per pair
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin + 1 < n; begin += int64_t(gridDim.x) * tile) {
    bool out_of_order = false;
    GSEARCH_UNROLL
    for (int i = 0; i < order_check_items; ++i) {
      const int64_t j = begin + threadIdx.x + int64_t(i) * order_check_threads;
      if (j + 1 < n && (one_row || (j + 1) % row_length != 0)) out_of_order |= key_less(keys[j + 1], keys[j]);
    }
    const bool answered = threadIdx.x == 0 && *reinterpret_cast<volatile int*>(unsorted) != 0;
    if (__syncthreads_or(out_of_order || answered)) {
      if (threadIdx.x == 0) *unsorted = 1;
      return;
    }
  }
}

// Clears *unsorted and enqueues order_check_kernel on n keys in rows of row_length.
template <class T>
void launch_order_check(CUstream_st* stream, const T* keys, int64_t n, int64_t row_length, int* unsorted) {
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(unsorted, 0, sizeof(int), stream));
  constexpr int64_t tile = int64_t(order_check_threads) * order_check_items;
  const int64_t tiles = (n + tile - 1) / tile;
  const int64_t most = 4LL * current_device_limits().sms;
  launch(order_check_kernel<T>, int(tiles < most ? tiles : most), order_check_threads, 0, stream, keys, n, row_length,
         unsorted);
}

// Runs order_check_kernel and waits for its answer.
template <class T>
bool sorted_rows(CUstream_st* stream, const T* keys, int64_t n, int64_t row_length) {
  if (n < 2 || row_length < 2) return true;
  const host_wait_word word(stream);  // no allocation per call (search_options::max_temp_bytes)
  int* flag = reinterpret_cast<int*>(word.get());
  int host_flag = 0;
  launch_order_check(stream, keys, n, row_length, flag);
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&host_flag, flag, sizeof(int), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host_flag == 0;
}

}  // namespace

namespace {

constexpr int64_t no_cap = std::numeric_limits<int64_t>::max();

// The index's layout: core::static_index_shape's slots, in the stream-ordered pool.
template <class T>
int64_t index_temp_bytes(int64_t k, int64_t n) {
  return n <= 0 ? 0 : core::static_index_shape<core::cuda_node_keys<T>>(k).size() * int64_t(sizeof(T));
}

template <class T>
int64_t algorithm_temp_bytes(algorithm a, bool strict, int64_t k, int64_t n, const device_limits& dev) {
  if (a == algorithm::index) return index_temp_bytes<T>(k, n);
  if (a == algorithm::partitioned) return partitioned_temp_bytes<T>(strict, k, n, dev);
  if (a == algorithm::merge) return merge_temp_bytes(int(sizeof(T)), k, n);
  return 0;
}

// The algorithm a search of T runs: `requested`, or auto_'s choice without what does not fit the
// device (the partitioned search's buckets, partitioned_fits) or the cap. An explicit algorithm
// whose temporary memory is over the cap throws.
template <class T>
algorithm pick(algorithm requested, bool strict, int64_t k, int64_t n, int64_t cap, const device_limits& dev) {
  constexpr int kb = int(sizeof(T));
  if (requested != algorithm::auto_) {
    if (cap < no_cap) {
      const int64_t need = algorithm_temp_bytes<T>(requested, strict, k, n, dev);
      if (need > cap)
        throw invalid_argument("gsearch::search: algorithm::" + std::string(to_string(requested)) + " needs " +
                               std::to_string(need) + " bytes of temporary device memory for " +
                               std::to_string(k) + " keys and " + std::to_string(n) +
                               " queries, more than search_options::max_temp_bytes = " + std::to_string(cap));
    }
    return requested;
  }
  const bool index_ok = cap == no_cap || index_temp_bytes<T>(k, n) <= cap;
  // (merge for integer keys only: tuning.hpp's merge_auto_rules measure their radix sort)
  const bool merge_ok = std::is_integral_v<T> && (cap == no_cap || merge_temp_bytes(kb, k, n) <= cap);
  algorithm a = auto_choice(kb, k, n, dev.max_shared_per_block, true, index_ok, merge_ok);
  if (a == algorithm::partitioned &&
      (!partitioned_fits(kb, k, dev) || (cap < no_cap && partitioned_temp_bytes<T>(strict, k, n, dev) > cap)))
    a = auto_choice(kb, k, n, dev.max_shared_per_block, false, index_ok, merge_ok);
  return a;
}

}  // namespace

algorithm resolve(CUstream_st*, algorithm requested, int key_bytes, int64_t k, int64_t q, int64_t max_temp_bytes,
                  bool float_keys) {
  if (requested != algorithm::auto_) return requested;
  const device_limits dev = current_device_limits();
  if (float_keys)
    return key_bytes <= 4 ? pick<float>(requested, false, k, q, max_temp_bytes, dev)
                          : pick<double>(requested, false, k, q, max_temp_bytes, dev);
  return key_bytes <= 4 ? pick<uint32_t>(requested, false, k, q, max_temp_bytes, dev)
                        : pick<uint64_t>(requested, false, k, q, max_temp_bytes, dev);
}

int64_t temp_bytes(CUstream_st* stream, algorithm algo, int key_bytes, int64_t k, int64_t q) {
  const device_limits dev = current_device_limits();
  if (algo == algorithm::auto_) algo = resolve(stream, algo, key_bytes, k, q, no_cap, false);
  return key_bytes <= 4 ? algorithm_temp_bytes<uint32_t>(algo, false, k, q, dev)
                        : algorithm_temp_bytes<uint64_t>(algo, false, k, q, dev);
}

bool sorted_search_pays(int key_bytes, int64_t k, int64_t q) {
  if (q < sorted_detect_min_queries || q * sorted_detect_keys_per_query < k) return false;
  const algorithm a = auto_choice(key_bytes, k, q, current_device_limits().max_shared_per_block);
  return a != algorithm::pbs && a != algorithm::pbs_cf && a != algorithm::pbs_cl;
}

int64_t sorted_temp_bytes(int key_bytes, int64_t k, int64_t q) {
  // sorted_search_kernel.cuh's launch_sorted_search: one int64_t per tile of the merge (the
  // tile of the device's merge policy, as sorted_search.cu launches it).
  if (q <= 0) return 0;
  const launch_config c = with_policy(merge_policies{}, current_device_limits().arch, [&]<class P>() {
    return key_bytes <= 4 ? P::template sorted_search_config<4> : P::template sorted_search_config<8>;
  });
  const int64_t tile = int64_t(c.threads) * c.items;
  return (k + q + tile - 1) / tile * int64_t(sizeof(int64_t));
}

namespace {

// The search of `algo` (auto_: pick's choice), its kernels gated on `gate`.
template <class T, class Out>
void search_gated(CUstream_st* stream, side s, algorithm algo, const T* keys, int64_t k, const T* queries, int64_t n,
                  Out* out, int64_t max_temp_bytes, launch_gate gate) {
  const device_limits dev = current_device_limits();
  const bool strict = s == side::left;
  algo = pick<T>(algo, strict, k, n, max_temp_bytes, dev);
  if (algo == algorithm::index) return index_search_keys(stream, s, keys, k, queries, n, out, gate);
  if (algo == algorithm::partitioned) return partitioned_search(stream, s, keys, k, queries, n, out, gate);
  if (algo == algorithm::pary) return pary_search(stream, s, keys, k, queries, n, out, gate);
  if (algo == algorithm::merge) return merge_search(stream, s, keys, k, queries, n, out, gate);
  visit_side(s, [&]<bool Strict>(int offset) {
    visit_algorithm(algo, [&]<algorithm A>() { launch_search<A>(stream, Strict, offset, keys, k, queries, n, out, dev, gate); });
  });
}

}  // namespace

template <class T, class Out>
void search(CUstream_st* stream, side s, algorithm algo, const T* keys, int64_t k,
            const T* queries, int64_t n, Out* out, int64_t max_temp_bytes) {
  search_gated(stream, s, algo, keys, k, queries, n, out, max_temp_bytes, launch_gate{});
}

template <class T, class Out>
void search_detecting_order(CUstream_st* stream, side s, algorithm algo, const T* keys, int64_t k,
                            const T* queries, int64_t n, Out* out, int64_t max_temp_bytes) {
  if (n <= 0) return;
  const stream_buffer word(stream, detect_word_bytes);
  int* unsorted = static_cast<int*>(word.get());
  launch_order_check(stream, queries, n, n, unsorted);
  sorted_search(stream, s, keys, k, queries, n, out, launch_gate{unsorted, 0});
  search_gated(stream, s, algo, keys, k, queries, n, out, max_temp_bytes, launch_gate{unsorted, 1});
}

template <class T, class Out>
void search_rows(CUstream_st* stream, side s, algorithm algo, int64_t rows, const T* keys,
                 int64_t k, const T* queries, int64_t m, Out* out, int64_t /*max_temp_bytes*/) {
  const device_limits dev = current_device_limits();
  // (Nothing here allocates: max_temp_bytes does not matter.)
  if (algo == algorithm::auto_) algo = auto_choice(int(sizeof(T)), k, m, dev.max_shared_per_block);
  algo = rows_algorithm(algo);  // rows too long for shared memory run binary
  visit_side(s, [&]<bool Strict>(int offset) {
    visit_algorithm(algo, [&]<algorithm A>() {
      launch_search_rows<A>(stream, Strict, offset, rows, keys, k, queries, m, out, dev);
    });
  });
}

template <class T>
bool is_sorted(CUstream_st* stream, const T* keys, int64_t k) {
  return sorted_rows(stream, keys, k, k);
}

template <class T>
bool is_sorted_rows(CUstream_st* stream, const T* keys, int64_t rows, int64_t k) {
  return sorted_rows(stream, keys, rows * k, k);
}

GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS(GSEARCH_SEARCH_OPS)
GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS(GSEARCH_SEARCH_CUDA_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_ORDER_OPS)

}  // namespace gsearch::cuda_backend
