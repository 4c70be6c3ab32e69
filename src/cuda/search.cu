// The CUDA backend's entry points: device limits, the `auto` choice, dispatch to the kernels
// instantiated per algorithm, the sortedness check, and the device queries of device.hpp.

#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gsearch/cuda/search.hpp"
#include "gsearch/cuda/static_index.hpp"
#include "gsearch/cuda/stream_buffer.cuh"
#include "gsearch/cuda/search_kernel.cuh"
#include "gsearch/cuda/search_rows_kernel.cuh"

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

device_limits current_device_limits() {
  // Attributes of a device do not change: query each device once (a benign race may query it
  // twice). cudaGetDevice itself is a thread-local read.
  constexpr int max_devices = 64;
  static device_limits cache[max_devices];
  static std::atomic<bool> known[max_devices];
  int dev = 0;
  GSEARCH_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev >= 0 && dev < max_devices && known[dev].load(std::memory_order_acquire)) return cache[dev];
  device_limits d;
  d.device = dev;
  int optin = 0;
  GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev));
  GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  d.max_shared_per_block = optin;
  if (dev >= 0 && dev < max_devices) {
    cache[dev] = d;
    known[dev].store(true, std::memory_order_release);
  }
  return d;
}

namespace {

// What the launch helpers remember per (kernel, device): occupancy per (threads, smem), and the
// dynamic shared memory the kernel has been allowed.
struct kernel_key {
  const void* kernel;
  int device;
  bool operator==(const kernel_key&) const = default;
};
struct kernel_key_hash {
  size_t operator()(const kernel_key& k) const {
    return std::hash<const void*>{}(k.kernel) ^ (size_t(k.device) * 0x9E3779B97F4A7C15ull);
  }
};
struct kernel_facts {
  int64_t allowed_smem = 48 * 1024;
  std::vector<std::pair<std::pair<int, int64_t>, int>> occupancy;  // ((threads, smem), blocks)
};
std::mutex facts_mutex;
std::unordered_map<kernel_key, kernel_facts, kernel_key_hash> facts;

}  // namespace

int blocks_per_sm(const void* kernel, int threads, int64_t smem, const device_limits& dev) {
  const std::lock_guard<std::mutex> lock(facts_mutex);
  auto& known = facts[{kernel, dev.device}].occupancy;
  for (const auto& [config, blocks] : known)
    if (config.first == threads && config.second == smem) return blocks;
  int per_sm = 0;
  GSEARCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, size_t(smem)));
  if (per_sm < 1) per_sm = 1;
  if (known.size() < 64) known.push_back({{threads, smem}, per_sm});  // a handful per kernel
  return per_sm;
}

void allow_dynamic_shared(const void* kernel, int64_t smem, const device_limits& dev) {
  const std::lock_guard<std::mutex> lock(facts_mutex);
  int64_t& allowed = facts[{kernel, dev.device}].allowed_smem;
  if (smem <= allowed) return;
  GSEARCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  allowed = smem;
}

namespace {

// Sets *flag when some keys[i + 1] < keys[i] within a row of row_length keys (pairs that
// straddle two rows are not compared); a single list is one row of n keys.
template <class T>
__global__ void find_unsorted_kernel(const T* __restrict__ keys, int64_t n, int64_t row_length,
                                     int* __restrict__ flag) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  bool bad = false;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i + 1 < n; i += stride)
    bad |= (i + 1) % row_length != 0 && key_less(keys[i + 1], keys[i]);
  if (__syncthreads_or(bad) && threadIdx.x == 0) *flag = 1;
}

// Runs find_unsorted_kernel and waits for its answer.
template <class T>
bool sorted_rows(CUstream_st* stream, const T* keys, int64_t n, int64_t row_length) {
  if (n < 2 || row_length < 2) return true;
  const stream_buffer memory(stream, sizeof(int));
  int* flag = static_cast<int*>(memory.get());
  int host_flag = 0;
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(int), stream));
  const device_limits dev = current_device_limits();
  const int64_t blocks = (n + 255) / 256;
  const int grid = int(blocks < 4LL * dev.sms ? blocks : 4LL * dev.sms);
  find_unsorted_kernel<<<grid, 256, 0, stream>>>(keys, n, row_length, flag);
  GSEARCH_CUDA_CHECK_LAUNCH();
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&host_flag, flag, sizeof(int), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host_flag == 0;
}

}  // namespace

algorithm resolve(algorithm requested, int key_bytes, int64_t k, int64_t q) {
  if (requested != algorithm::auto_) return requested;
  return auto_choice(key_bytes, k, q, current_device_limits().max_shared_per_block);
}

template <class T, class Out>
void search(CUstream_st* stream, side s, algorithm algo, const T* keys, int64_t k,
            const T* queries, int64_t n, Out* out) {
  const device_limits dev = current_device_limits();
  if (algo == algorithm::auto_) algo = auto_choice(int(sizeof(T)), k, n, dev.max_shared_per_block);
  if (algo == algorithm::index) return index_search_keys(stream, s, keys, k, queries, n, out);
  if (algo == algorithm::partitioned) return partitioned_search(stream, s, keys, k, queries, n, out);
  if (algo == algorithm::pary) return pary_search(stream, s, keys, k, queries, n, out);
  const bool strict = s == side::left;
  const int offset = s == side::pred ? -1 : 0;
  visit_algorithm(algo, [&]<algorithm A>() {
    launch_search<A>(stream, strict, offset, keys, k, queries, n, out, dev);
  });
}

template <class T, class Out>
void search_rows(CUstream_st* stream, side s, algorithm algo, int64_t rows, const T* keys,
                 int64_t k, const T* queries, int64_t m, Out* out) {
  const device_limits dev = current_device_limits();
  if (algo == algorithm::auto_) algo = auto_choice(int(sizeof(T)), k, m, dev.max_shared_per_block);
  // An index or a partition per row would not pay, and P-ary is for single queries: rows too long
  // for shared memory run binary.
  if (algo == algorithm::index || algo == algorithm::partitioned || algo == algorithm::pary) algo = algorithm::binary;
  const bool strict = s == side::left;
  const int offset = s == side::pred ? -1 : 0;
  visit_algorithm(algo, [&]<algorithm A>() {
    launch_search_rows<A>(stream, strict, offset, rows, keys, k, queries, m, out, dev);
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

GSEARCH_KEY_TYPES(GSEARCH_CUDA_BACKEND_INSTANTIATE)

}  // namespace gsearch::cuda_backend
