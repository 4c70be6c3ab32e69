// What the merge search's radix passes cost by their layout (src/search/cuda/merge_search.cu,
// issue 42): CUB's onesweep moved 8-byte (code, position) pairs at 1.6 TB/s on the H200 (1.23 ms
// a pass at 2^27, ncu at 255eb9a), four passes two thirds of the call. The same passes as the
// library runs them (SortPairs of two arrays) beside the pair packed into one 64-bit key
// (SortKeys: one load and one store an item), and the way back's grouping in two passes or one.
// Random 32-bit codes and 27-bit positions, n = 2^27 by default; each row the median of 10 runs
// between CUDA events after 2 warm-ups (bench::time_runs, gsearch::elapsed_ms), the scratch
// allocated once; GB/s counts each pass's read and write of every item. Nothing is checked
// (CUB's own tests are).
//
//   sort_probe [--n N] [--json FILE]

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "bench_host.hpp"
#include "report.hpp"
#include "cuda/check.cuh"
#include "gsearch/core/find.hpp"  // mix64
#include "gsearch/device.hpp"
#include "timing.hpp"

namespace {

using namespace gsearch;
using json = nlohmann::json;

// codes[i] random 32 bits, positions[i] = i, wide[i] = a random 64-bit code, packed[i] = code << 32 | i,
// perm[i] random 27 bits (a stand-in for the positions in bucket order), back[i] = perm << 32 | answer.
__global__ void fill_kernel(uint32_t* codes, uint32_t* positions, uint64_t* wide, uint64_t* packed, uint32_t* perm,
                            uint64_t* back, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t r = core::mix64(1 + uint64_t(i + 1) * bench::host::golden);  // (bench::host::word, on the device)
    codes[i] = uint32_t(r >> 32);
    positions[i] = uint32_t(i);
    wide[i] = core::mix64(r);
    packed[i] = (r >> 32 << 32) | uint64_t(i);
    perm[i] = uint32_t(r) & ((1u << 27) - 1);
    back[i] = uint64_t(perm[i]) << 32 | uint32_t(r >> 32);
  }
}

// A CUB call's median time (bench::time_runs: 2 warm-ups, 10 runs between CUDA events), its
// scratch asked for and allocated once.
template <class Call>
double cub_ms(Call call) {
  size_t bytes = 0;
  GSEARCH_CUDA_CHECK(call(nullptr, bytes));
  device_vector<unsigned char> scratch(int64_t(std::max<size_t>(1, bytes)));
  return bench::time_runs(2, 10, [&] {
           return elapsed_ms(gsearch::cuda, [&] { GSEARCH_CUDA_CHECK(call(scratch.data(), bytes)); });
         }).median_ms;
}

// CUB's radix sort of n (key, value) pairs, or of n keys, on key bits [begin, end): its median time.
template <class K, class V>
double pairs_ms(const K* keys, K* keys_out, const V* values, V* values_out, int64_t n, int begin, int end) {
  return cub_ms([&](void* p, size_t& b) {
    return cub::DeviceRadixSort::SortPairs(p, b, keys, keys_out, values, values_out, n, begin, end, gsearch::cuda.stream);
  });
}
template <class K>
double keys_ms(const K* keys, K* keys_out, int64_t n, int begin, int end) {
  return cub_ms([&](void* p, size_t& b) {
    return cub::DeviceRadixSort::SortKeys(p, b, keys, keys_out, n, begin, end, gsearch::cuda.stream);
  });
}

}  // namespace

int main(int argc, char** argv) {
  bench::host::probe_args args{int64_t(1) << 27, ""};
  if (!bench::host::parse_probe_args(argc, argv, "sort_probe", args)) return 2;
  const int64_t n = args.n;
  if (cuda_device_count() == 0 || n <= 0 || n > (int64_t(1) << 31)) {
    std::fprintf(stderr, "sort_probe: %s\n", n <= 0 || n > (int64_t(1) << 31) ? "n out of (0, 2^31]" : "no CUDA device");
    return 2;
  }
  cudaDeviceProp prop{};
  GSEARCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  device_vector<uint32_t> codes(n), codes_out(n), positions(n), positions_out(n), perm(n);
  device_vector<uint64_t> wide(n), wide_out(n), packed(n), packed_out(n), back(n);
  fill_kernel<<<4 * prop.multiProcessorCount, 256>>>(codes.data(), positions.data(), wide.data(), packed.data(),
                                                      perm.data(), back.data(), n);
  GSEARCH_CUDA_CHECK(cudaDeviceSynchronize());

  json rows = json::array();
  std::printf("sort_probe: %s, n = %lld, CUB %d\n", prop.name, static_cast<long long>(n), CUB_VERSION);
  std::printf("%-58s %6s %10s %10s\n", "what", "passes", "ms", "GB/s");
  const auto row = [&](const char* what, int passes, int item_bytes, double ms) {
    const double gbps = double(n) * item_bytes * 2 * passes / (ms * 1e6);
    std::printf("%-58s %6d %10.4f %10.1f\n", what, passes, ms, gbps);
    std::fflush(stdout);
    rows.push_back({{"what", what}, {"passes", passes}, {"item_bytes", item_bytes}, {"ms", ms}, {"gbps", gbps}});
  };
  row("copy, 8 bytes an item (cudaMemcpy: read + write)", 1, 8,
      bench::time_runs(2, 10, [&] {
        return elapsed_ms(gsearch::cuda, [&] {
          GSEARCH_CUDA_CHECK(cudaMemcpyAsync(packed_out.data(), packed.data(), size_t(n) * 8, cudaMemcpyDeviceToDevice,
                                             gsearch::cuda.stream));
        });
      }).median_ms);
  row("codes u32 + positions u32, bits 16-32 (the library's)", 2, 8,
      pairs_ms(codes.data(), codes_out.data(), positions.data(), positions_out.data(), n, 16, 32));
  row("code << 32 | position, u64 keys, bits 48-64", 2, 8, keys_ms(packed.data(), packed_out.data(), n, 48, 64));
  row("codes u32 + positions u32, bits 24-32 (one pass)", 1, 8,
      pairs_ms(codes.data(), codes_out.data(), positions.data(), positions_out.data(), n, 24, 32));
  row("codes u64 + positions u32, bits 48-64 (int64 queries)", 2, 12,
      pairs_ms(wide.data(), wide_out.data(), positions.data(), positions_out.data(), n, 48, 64));
  row("positions u32 + answers u32, bits 13-27 (the way back)", 2, 8,
      pairs_ms(perm.data(), codes_out.data(), codes.data(), positions_out.data(), n, 13, 27));
  row("position << 32 | answer, u64 keys, bits 45-59", 2, 8, keys_ms(back.data(), packed_out.data(), n, 45, 59));
  row("positions u32 + answers u32, bits 19-27 (one pass)", 1, 8,
      pairs_ms(perm.data(), codes_out.data(), codes.data(), positions_out.data(), n, 19, 27));
  if (!args.json_path.empty())
    bench::write_json(args.json_path, json{{"schema", "gsearch-bench-sort-probe/1"},
                                           {"synthetic", false},
                                           {"device", prop.name},
                                           {"n", n},
                                           {"results", rows}});
  return 0;
}
