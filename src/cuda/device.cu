// device.hpp on CUDA: device queries, memory, copies and event timing.

#include <cuda_runtime.h>

#include <exception>
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/stream_buffer.cuh"
#include "gsearch/detail_placed_memory.hpp"
#include "gsearch/device.hpp"

namespace gsearch {

bool built_with_cuda() noexcept { return true; }

int cuda_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the "no device" / "insufficient driver" error
    return 0;
  }
  return n;
}

std::string cuda_device_name() {
  cuda_device_info p;
  try {
    p = cuda_device_properties();
  } catch (const error&) {
    return {};
  }
  if (p.name.empty()) return {};
  return p.name + ", sm_" + std::to_string(p.compute_capability) + ", " + std::to_string(p.sms) + " SMs";
}

cuda_device_info cuda_device_properties() {
  cuda_device_info info;
  if (cuda_device_count() == 0) return info;
  int dev = 0;
  cudaDeviceProp p{};
  GSEARCH_CUDA_CHECK(cudaGetDevice(&dev));
  GSEARCH_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  info.name = p.name;
  info.compute_capability = p.major * 10 + p.minor;
  info.sms = p.multiProcessorCount;
  info.l2_bytes = p.l2CacheSize;
  info.shared_per_block_optin = int64_t(p.sharedMemPerBlockOptin);
  info.global_bytes = int64_t(p.totalGlobalMem);
  GSEARCH_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  GSEARCH_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  return info;
}

int cuda_current_device() {
  int dev = 0;
  GSEARCH_CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}

void cuda_set_device(int device) { GSEARCH_CUDA_CHECK(cudaSetDevice(device)); }

void* device_malloc(size_t bytes) {
  void* p = nullptr;
  GSEARCH_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void device_free(void* p) noexcept {
  if (p) cudaFree(p);
}

void copy_to_device(void* dst, const void* src, size_t bytes) {
  GSEARCH_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

void copy_to_host(void* dst, const void* src, size_t bytes) {
  GSEARCH_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void synchronize(const cuda_t& exec) { GSEARCH_CUDA_CHECK(cudaStreamSynchronize(exec.stream)); }

double elapsed_ms(const cuda_t& exec, const std::function<void()>& work) {
  cudaEvent_t start = nullptr, stop = nullptr;
  GSEARCH_CUDA_CHECK(cudaEventCreate(&start));
  GSEARCH_CUDA_CHECK(cudaEventCreate(&stop));
  float ms = 0;
  try {
    GSEARCH_CUDA_CHECK(cudaEventRecord(start, exec.stream));
    work();
    GSEARCH_CUDA_CHECK(cudaEventRecord(stop, exec.stream));
    GSEARCH_CUDA_CHECK(cudaEventSynchronize(stop));
    GSEARCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

}  // namespace gsearch

namespace gsearch::cuda_backend {

namespace {
// The free lists of host_wait_word, per device, and how many words exist. Never destroyed: a
// thread may still hand a word back while the process exits.
struct wait_words {
  std::mutex mutex;
  std::vector<std::vector<int64_t*>> free;  // per device
  int64_t made = 0;
};
wait_words& words() {
  static wait_words* w = new wait_words;
  return *w;
}
}  // namespace

host_wait_word::host_wait_word(cudaStream_t stream) : stream_(stream), exceptions_(std::uncaught_exceptions()) {
  GSEARCH_CUDA_CHECK(cudaGetDevice(&device_));
  wait_words& w = words();
  {
    const std::lock_guard<std::mutex> lock(w.mutex);
    if (w.free.size() <= size_t(device_)) w.free.resize(size_t(device_) + 1);
    auto& list = w.free[size_t(device_)];
    if (!list.empty()) {
      word_ = list.back();
      list.pop_back();
      return;
    }
  }
  GSEARCH_CUDA_CHECK(cudaMalloc(&word_, sizeof(int64_t)));
  const std::lock_guard<std::mutex> lock(w.mutex);
  ++w.made;
}

host_wait_word::~host_wait_word() {
  if (!word_) return;
  // Unwinding: work enqueued before the failure may still write the word.
  if (std::uncaught_exceptions() > exceptions_) cudaStreamSynchronize(stream_);
  wait_words& w = words();
  const std::lock_guard<std::mutex> lock(w.mutex);
  w.free[size_t(device_)].push_back(word_);
}

int64_t host_wait_words() {
  wait_words& w = words();
  const std::lock_guard<std::mutex> lock(w.mutex);
  return w.made;
}

cudaMemPool_t temporary_pool() {
  static std::mutex mutex;
  static std::vector<cudaMemPool_t> pools;  // per device; made once, kept for the process
  int device = 0;
  GSEARCH_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  if (pools.size() <= size_t(device)) pools.resize(size_t(device) + 1, nullptr);
  cudaMemPool_t& pool = pools[size_t(device)];
  if (!pool) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    GSEARCH_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    // A quarter of the device's memory, at least temporary_pool_keep_bytes (stream_buffer.cuh
    // says why); GSEARCH_POOL_KEEP_BYTES sets it.
    size_t free_bytes = 0, total_bytes = 0;
    GSEARCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    uint64_t keep = std::max<uint64_t>(temporary_pool_keep_bytes, total_bytes / 4);
    if (const char* e = std::getenv("GSEARCH_POOL_KEEP_BYTES"); e && *e) keep = std::strtoull(e, nullptr, 10);
    GSEARCH_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  return pool;
}

}  // namespace gsearch::cuda_backend

namespace gsearch::detail {

// placed_memory's stream-ordered kind (gsearch/detail_placed_memory.hpp): the pool of
// stream_buffer.cuh, on the caller's stream.
void* placed_memory::ordered_malloc(size_t bytes, CUstream_st* stream) {
  void* p = nullptr;
  GSEARCH_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, cuda_backend::temporary_pool(), stream));
  return p;
}

void placed_memory::ordered_free(void* p, CUstream_st* stream) noexcept {
  cudaFreeAsync(p, stream);  // a failure here has no one to report to
}

}  // namespace gsearch::detail
