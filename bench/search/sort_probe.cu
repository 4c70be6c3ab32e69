// What the merge search's radix passes cost by their layout (src/search/cuda/merge_search.cu,
// issue 42): CUB's onesweep moved 8-byte (code, position) pairs at 1.6 TB/s on the H200 (1.23 ms
// a pass at 2^27, ncu at 255eb9a), four passes two thirds of the call. The same passes as the
// library runs them (SortPairs of two arrays) beside the pair packed into one 64-bit key
// (SortKeys: one load and one store an item), and the way back's grouping in two passes or one.
// Random 32-bit codes and 27-bit positions, n = 2^27 by default; each row the median of 10 runs
// between CUDA events after 2 warm-ups, the scratch allocated once; GB/s counts each pass's read
// and write of every item. Nothing is checked (CUB's own tests are).
//
//   sort_probe [--n N] [--json FILE]

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_host.hpp"
#include "report.hpp"
#include "cuda/check.cuh"
#include "gsearch/core/config.hpp"
#include "gsearch/device.hpp"

namespace {

using json = nlohmann::json;

__host__ __device__ uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// codes[i] random 32 bits, positions[i] = i, wide[i] = a random 64-bit code, packed[i] = code << 32 | i,
// perm[i] random 27 bits (a stand-in for the positions in bucket order), back[i] = perm << 32 | answer.
__global__ void fill_kernel(uint32_t* codes, uint32_t* positions, uint64_t* wide, uint64_t* packed, uint32_t* perm,
                            uint64_t* back, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t r = mix(uint64_t(i));
    codes[i] = uint32_t(r >> 32);
    positions[i] = uint32_t(i);
    wide[i] = mix(r);
    packed[i] = (r >> 32 << 32) | uint64_t(i);
    perm[i] = uint32_t(r) & ((1u << 27) - 1);
    back[i] = uint64_t(perm[i]) << 32 | uint32_t(r >> 32);
  }
}

template <class Launch>
double median_ms(Launch launch) {
  cudaEvent_t a, b;
  GSEARCH_CUDA_CHECK(cudaEventCreate(&a));
  GSEARCH_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> times;
  for (int run = 0; run < 12; ++run) {
    GSEARCH_CUDA_CHECK(cudaEventRecord(a));
    launch();
    GSEARCH_CUDA_CHECK(cudaEventRecord(b));
    GSEARCH_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    GSEARCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    if (run >= 2) times.push_back(ms);
  }
  GSEARCH_CUDA_CHECK(cudaEventDestroy(a));
  GSEARCH_CUDA_CHECK(cudaEventDestroy(b));
  std::sort(times.begin(), times.end());
  return (times[4] + times[5]) / 2;
}

// A CUB call's median time, its scratch asked for and allocated once.
template <class Call>
double cub_ms(Call call) {
  size_t bytes = 0;
  GSEARCH_CUDA_CHECK(call(nullptr, bytes));
  void* scratch = nullptr;
  GSEARCH_CUDA_CHECK(cudaMalloc(&scratch, bytes));
  const double ms = median_ms([&] { GSEARCH_CUDA_CHECK(call(scratch, bytes)); });
  GSEARCH_CUDA_CHECK(cudaFree(scratch));
  return ms;
}

template <class T>
T* device_array(int64_t n) {
  T* p = nullptr;
  GSEARCH_CUDA_CHECK(cudaMalloc(&p, size_t(n) * sizeof(T)));
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = int64_t(1) << 27;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--n" && i + 1 < argc) {
      n = std::atoll(argv[++i]);
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: sort_probe [--n N] [--json FILE]\n");
      return 2;
    }
  }
  if (gsearch::cuda_device_count() == 0 || n <= 0 || n > (int64_t(1) << 31)) {
    std::fprintf(stderr, "sort_probe: %s\n", n <= 0 || n > (int64_t(1) << 31) ? "n out of (0, 2^31]" : "no CUDA device");
    return 2;
  }
  cudaDeviceProp prop{};
  GSEARCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  auto* codes = device_array<uint32_t>(n);
  auto* codes_out = device_array<uint32_t>(n);
  auto* positions = device_array<uint32_t>(n);
  auto* positions_out = device_array<uint32_t>(n);
  auto* wide = device_array<uint64_t>(n);
  auto* wide_out = device_array<uint64_t>(n);
  auto* packed = device_array<uint64_t>(n);
  auto* packed_out = device_array<uint64_t>(n);
  auto* perm = device_array<uint32_t>(n);
  auto* back = device_array<uint64_t>(n);
  fill_kernel<<<4 * prop.multiProcessorCount, 256>>>(codes, positions, wide, packed, perm, back, n);
  GSEARCH_CUDA_CHECK(cudaDeviceSynchronize());
  const cudaStream_t s = nullptr;

  json rows = json::array();
  std::printf("sort_probe: %s, n = %lld, CUB %d\n", prop.name, static_cast<long long>(n), CUB_VERSION);
  std::printf("%-58s %6s %10s %10s\n", "what", "passes", "ms", "GB/s");
  const auto row = [&](const char* what, int passes, int item_bytes, double ms) {
    const double gbps = double(n) * item_bytes * 2 * passes / (ms * 1e6);
    std::printf("%-58s %6d %10.4f %10.1f\n", what, passes, ms, gbps);
    std::fflush(stdout);
    rows.push_back({{"what", what}, {"passes", passes}, {"item_bytes", item_bytes}, {"ms", ms}, {"gbps", gbps}});
  };
  row("copy, 8 bytes an item (cudaMemcpy: read + write)", 1, 8, median_ms([&] {
        GSEARCH_CUDA_CHECK(cudaMemcpyAsync(packed_out, packed, size_t(n) * 8, cudaMemcpyDeviceToDevice, s));
      }));
  row("codes u32 + positions u32, bits 16-32 (the library's)", 2, 8, cub_ms([&](void* p, size_t& b) {
        return cub::DeviceRadixSort::SortPairs(p, b, codes, codes_out, positions, positions_out, n, 16, 32, s);
      }));
  row("code << 32 | position, u64 keys, bits 48-64", 2, 8, cub_ms([&](void* p, size_t& b) {
        return cub::DeviceRadixSort::SortKeys(p, b, packed, packed_out, n, 48, 64, s);
      }));
  row("codes u32 + positions u32, bits 24-32 (one pass)", 1, 8, cub_ms([&](void* p, size_t& b) {
        return cub::DeviceRadixSort::SortPairs(p, b, codes, codes_out, positions, positions_out, n, 24, 32, s);
      }));
  row("codes u64 + positions u32, bits 48-64 (int64 queries)", 2, 12, cub_ms([&](void* p, size_t& b) {
        return cub::DeviceRadixSort::SortPairs(p, b, wide, wide_out, positions, positions_out, n, 48, 64, s);
      }));
  row("positions u32 + answers u32, bits 13-27 (the way back)", 2, 8, cub_ms([&](void* p, size_t& b) {
        return cub::DeviceRadixSort::SortPairs(p, b, perm, codes_out, codes, positions_out, n, 13, 27, s);
      }));
  row("position << 32 | answer, u64 keys, bits 45-59", 2, 8, cub_ms([&](void* p, size_t& b) {
        return cub::DeviceRadixSort::SortKeys(p, b, back, packed_out, n, 45, 59, s);
      }));
  row("positions u32 + answers u32, bits 19-27 (one pass)", 1, 8, cub_ms([&](void* p, size_t& b) {
        return cub::DeviceRadixSort::SortPairs(p, b, perm, codes_out, codes, positions_out, n, 19, 27, s);
      }));
  if (!json_path.empty())
    gsearch::bench::write_json(json_path, json{{"schema", "gsearch-bench-sort-probe/1"},
                                              {"synthetic", false},
                                              {"device", prop.name},
                                              {"n", n},
                                              {"results", rows}});
  for (void* p : {(void*)codes, (void*)codes_out, (void*)positions, (void*)positions_out, (void*)wide, (void*)wide_out,
                  (void*)packed, (void*)packed_out, (void*)perm, (void*)back})
    GSEARCH_CUDA_CHECK(cudaFree(p));
  return 0;
}
