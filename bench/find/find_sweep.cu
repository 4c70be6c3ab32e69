// The tuned scan of find / count (find_kernel.cuh) at several launch configurations and both
// ways of learning of other blocks' hits (hit_check), beside a read-only roofline kernel, on
// 2^28 int32 (1 GiB): count and find_first with no match, find_first with the only match at 0
// and at N/100. Chooses tuning.hpp's find_scan_config and the hit check.
//
//   find_sweep [--quick] > find-sweep.json
//
// Times: CUDA events around one launch (plus the 8-byte result memset the library also does),
// 2 warm-ups, the median of 10; before each run (outside the events) a 128 MB read evicts the
// data from L2, so a match near the start is not served from L2. Every result is checked.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "find/cuda/find_kernel.cuh"
#include "search/cuda/search_kernel.cuh"
#include "gsearch/gsearch.hpp"
#include "sweep_timing.cuh"

namespace {

using namespace gsearch;
using namespace gsearch::cuda_backend;

// Runs before each timed launch: set by main to a 128 MB read (evicts the data from L2).
void (*flush_l2)() = nullptr;

// The shared timing with the flush before each run.
template <class F>
double time_ms(F&& launch) {
  return bench::time_ms(launch, 2, 10, flush_l2);
}

// Reads every 16-byte vector once and writes one word per block: the read roofline.
template <int Threads, int Loads>
__global__ void __launch_bounds__(Threads) read_roofline(const uint4* __restrict__ in, int64_t vecs, unsigned* out) {
  unsigned acc = 0;
  constexpr int64_t tile = int64_t(Threads) * Loads;
  for (int64_t b = int64_t(blockIdx.x) * tile; b < vecs; b += int64_t(gridDim.x) * tile) {
    uint4 v[Loads];
    GSEARCH_UNROLL
    for (int u = 0; u < Loads; ++u) {
      const int64_t i = b + u * Threads + threadIdx.x;
      v[u] = i < vecs ? __ldcs(in + i) : make_uint4(0, 0, 0, 0);
    }
    GSEARCH_UNROLL
    for (int u = 0; u < Loads; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x12345678u) out[blockIdx.x] = acc;  // never true for this data: keeps the loads
}

struct row {
  std::string what;
  int threads, loads;
  double ms;
};

// The value searched: -7, never in the data; placed at `position` (-1: nowhere) for the run.
template <find_mode Mode, int Threads, int Loads, hit_check Check>
row run_scan(int32_t* d, int64_t n, int64_t position, u64* res, const device_limits& dev, bool& ok) {
  scan_layout<int32_t, Threads, Loads> layout{n, unaligned_head(d, n)};
  const core::match<int32_t> m = core::make_match(equal_to<int32_t>(-7));
  auto kernel = scan_kernel<Mode, int32_t, Threads, Loads, Check>;
  const int grid = grid_size(kernel, Threads, 0, layout.tiles(), dev);
  const auto launch = [&] {
    cudaMemsetAsync(res, Mode == find_mode::count ? 0 : 0xFF, 8);
    kernel<<<grid, Threads>>>(d, layout, m, res);
  };
  int32_t saved = 0;
  const int32_t planted = -7;
  if (position >= 0) {
    cudaMemcpy(&saved, d + position, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(d + position, &planted, 4, cudaMemcpyHostToDevice);
  }
  const double ms = time_ms(launch);
  int64_t host = 0;
  cudaMemcpy(&host, res, 8, cudaMemcpyDeviceToHost);
  if (position >= 0) cudaMemcpy(d + position, &saved, 4, cudaMemcpyHostToDevice);
  ok &= host == (Mode == find_mode::count ? 0 : position);
  std::string what = Mode == find_mode::count ? "count" : "first";
  if (Mode != find_mode::count) what += Check == hit_check::barrier ? "-barrier" : "-lagged";
  what += position < 0 ? "@none" : position == 0 ? "@0" : "@N/100";
  return {what, Threads, Loads, ms};
}

template <int Threads, int Loads, hit_check Check>
void run_first(std::vector<row>& rows, int32_t* d, int64_t n, u64* res, const device_limits& dev, bool& ok) {
  for (int64_t p : {int64_t(-1), int64_t(0), n / 100})
    rows.push_back(run_scan<find_mode::first, Threads, Loads, Check>(d, n, p, res, dev, ok));
}

template <int Threads, int Loads>
void run_config(std::vector<row>& rows, int32_t* d, int64_t n, u64* res, unsigned* sink,
                const device_limits& dev, bool& ok) {
  run_first<Threads, Loads, hit_check::barrier>(rows, d, n, res, dev, ok);
  run_first<Threads, Loads, hit_check::lagged>(rows, d, n, res, dev, ok);
  rows.push_back(run_scan<find_mode::count, Threads, Loads, hit_check::barrier>(d, n, -1, res, dev, ok));
  auto kernel = read_roofline<Threads, Loads>;
  const int grid = grid_size(kernel, Threads, 0, (n / 4 + Threads * Loads - 1) / (Threads * Loads), dev);
  rows.push_back({"roofline", Threads, Loads, time_ms([&] {
                    kernel<<<grid, Threads>>>(reinterpret_cast<const uint4*>(d), n / 4, sink);
                  })});
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "find_sweep: no CUDA device\n");
    return 2;
  }
  const int64_t n = quick ? int64_t{1} << 20 : int64_t{1} << 28;
  std::vector<int32_t> h(static_cast<size_t>(n));
  std::mt19937 gen(1);
  for (auto& x : h) x = int32_t(gen() & 0x3fffffff);  // non-negative: -7 never occurs
  device_vector<int32_t> d(n);
  copy_to_device(d.data(), h.data(), size_t(n) * 4);
  u64* res = nullptr;
  unsigned* sink = nullptr;
  cudaMalloc(&res, 8);
  cudaMalloc(&sink, 1 << 20);
  const device_limits dev = current_device_limits();
  static device_vector<uint4> flush_buffer(int64_t{128} << 16);  // 128 MB, over twice the L2
  static unsigned* flush_sink = sink;
  flush_l2 = [] {
    read_roofline<256, 4><<<1056, 256>>>(flush_buffer.data(), flush_buffer.size(), flush_sink);
  };
  std::vector<row> rows;
  bool ok = true;
  run_config<256, 4>(rows, d.data(), n, res, sink, dev, ok);
  run_config<256, 8>(rows, d.data(), n, res, sink, dev, ok);
  run_config<512, 4>(rows, d.data(), n, res, sink, dev, ok);
  run_config<1024, 4>(rows, d.data(), n, res, sink, dev, ok);
  run_config<1024, 2>(rows, d.data(), n, res, sink, dev, ok);
  const double bytes = double(n) * 4;
  std::printf("{\"device\": \"%s\", \"n\": %lld, \"dtype\": \"int32\", \"correct\": %s, "
              "\"source\": {\"commit\": \"%s\", \"dirty\": %s}, \"rows\": [\n",
              cuda_device_name().c_str(), (long long)n, ok ? "true" : "false", build_info().commit,
              build_info().dirty ? "true" : "false");
  for (size_t i = 0; i < rows.size(); ++i)
    std::printf("  {\"what\": \"%s\", \"threads\": %d, \"loads\": %d, \"ms\": %.5f, \"GBps\": %.1f}%s\n",
                rows[i].what.c_str(), rows[i].threads, rows[i].loads, rows[i].ms, bytes / rows[i].ms / 1e6,
                i + 1 < rows.size() ? "," : "");
  std::printf("]}\n");
  cudaFree(res);
  cudaFree(sink);
  return ok ? 0 : 3;
}
