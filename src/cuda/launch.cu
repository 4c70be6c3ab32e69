// The launch helpers of every family's CUDA backend (launch.hpp, launch.cuh): the device's limits,
// queried once per device, with the testing override of its shared memory; what is remembered
// per kernel and device (its occupancy per configuration, its static and allowed dynamic shared
// memory): the runtime's answers cost microseconds, which a small call made again and again would
// pay every time.

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cuda/launch.cuh"
#include "gsearch/core/error.hpp"

namespace gsearch::cuda_backend {

namespace {

// The testing override of the shared memory per block (0: none), GSEARCH_SHARED_LIMIT_BYTES when
// the process starts using it, then whatever set_shared_limit_override sets.
std::atomic<int64_t>& shared_limit_override_value() {
  static std::atomic<int64_t> value{[] {
    const char* env = std::getenv("GSEARCH_SHARED_LIMIT_BYTES");
    if (!env || !*env) return int64_t{0};
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end == env || *end != '\0' || v < 0)
      throw invalid_argument(std::string("GSEARCH_SHARED_LIMIT_BYTES: not a byte count: '") + env + "'");
    return int64_t(v);
  }()};
  return value;
}

}  // namespace

int64_t shared_limit_override() { return shared_limit_override_value().load(std::memory_order_relaxed); }

void set_shared_limit_override(int64_t bytes) {
  if (bytes < 0) throw invalid_argument("set_shared_limit_override: negative byte count");
  shared_limit_override_value().store(bytes, std::memory_order_relaxed);
}

device_limits current_device_limits() {
  // Attributes of a device do not change: query each device once (a benign race may query it
  // twice). cudaGetDevice itself is a thread-local read.
  constexpr int max_devices = 64;
  static device_limits cache[max_devices];
  static std::atomic<bool> known[max_devices];
  int dev = 0;
  GSEARCH_CUDA_CHECK(cudaGetDevice(&dev));
  device_limits d;
  if (dev >= 0 && dev < max_devices && known[dev].load(std::memory_order_acquire)) {
    d = cache[dev];
  } else {
    d.device = dev;
    int optin = 0;
    GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev));
    GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    d.max_shared_per_block = optin;
    int major = 0, minor = 0;
    GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    d.arch = major * 10 + minor;
    if (dev >= 0 && dev < max_devices) {
      cache[dev] = d;
      known[dev].store(true, std::memory_order_release);
    }
  }
  // The one place the testing override applies: every kernel sizes its shared memory from here.
  if (const int64_t cap = shared_limit_override(); cap > 0) {
    const int64_t floor = min_shared_limit_override;
    d.max_shared_per_block = std::min(d.max_shared_per_block, std::max(cap, floor));
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
  int64_t allowed_smem = -1;  // the kernel's dynamic shared-memory maximum (-1: not yet asked)
  int64_t static_smem = -1;   // its static shared memory (-1: not yet asked)
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

namespace {
// The kernel's attributes, asked once: its static shared memory, and the dynamic shared memory it
// may take before cudaFuncSetAttribute raises it (48 KB less the static part by default).
int64_t static_shared_locked(kernel_facts& f, const void* kernel) {
  if (f.static_smem < 0) {
    cudaFuncAttributes attr{};
    GSEARCH_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    f.static_smem = int64_t(attr.sharedSizeBytes);
    f.allowed_smem = int64_t(attr.maxDynamicSharedSizeBytes);
  }
  return f.static_smem;
}
}  // namespace

int64_t static_shared_bytes(const void* kernel, const device_limits& dev) {
  const std::lock_guard<std::mutex> lock(facts_mutex);
  return static_shared_locked(facts[{kernel, dev.device}], kernel);
}

void allow_dynamic_shared(const void* kernel, int64_t smem, const device_limits& dev) {
  const std::lock_guard<std::mutex> lock(facts_mutex);
  kernel_facts& f = facts[{kernel, dev.device}];
  // Every kernel that asks for more than 48 KB comes through here: the one check that a block's
  // shared memory (static and dynamic) stays within the device's limit, or the testing override.
  const int64_t fixed = static_shared_locked(f, kernel);
  if (fixed + smem > dev.max_shared_per_block)
    throw invalid_argument("gsearch: a kernel would need " + std::to_string(fixed + smem) +
                           " bytes of shared memory per block; device " + std::to_string(dev.device) +
                           " allows " + std::to_string(dev.max_shared_per_block) +
                           (shared_limit_override() > 0 ? " (GSEARCH_SHARED_LIMIT_BYTES / the testing override)" : ""));
  if (smem <= f.allowed_smem) return;
  GSEARCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  f.allowed_smem = smem;
}

}  // namespace gsearch::cuda_backend
