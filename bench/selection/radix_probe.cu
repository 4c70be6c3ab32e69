// What each part of the radix select's first pass costs (src/selection/cuda/radix_select_kernel.cuh),
// measured by its absence: the pass at the library's shape and at other ring shapes (vectors a
// thread a tile x stages), with parts left out (radix_probe: no members; no end, the blocks'
// counts not added and no pick), and last the ring alone (ring_only_kernel: the tiles read and
// summed). (Its files at 20945d5 and f28b4fb have a row "end by warps": the end as it was before
// 969230d, each warp's atomics and a fence in every thread, since taken out of the kernel.)
// One rank of 2^26 uniform float32 in [0, 1) (k = 1,024 and k = n/2); each run is the window
// kernel (untimed, it resets the state) then the first pass alone between CUDA events, 2
// warm-ups, the median of 10. The grid and the copy's capacity as radix_select.cu makes them.
// Nothing is checked: the probes' passes are not selects (the library's tests check the real
// one). Then the window kernel alone (the sample's sort), and the select of 1 to 4 ranks end to
// end (enqueue to the host's answers) by the radix select and by the sampled brackets' planned
// levels (planned_select.cuh), the two routes radix_select_routed_ranks chooses between: one
// rank, a median's two (and the two with the first pass counting NaNs, quantile's NaN check now),
// with the NaN check as it was (n/2 - 1, n/2, n - 1), and three quartiles and the largest. (The
// ring's earlier probes, and the 4-slot pass at 969230d, ended in cudaErrorIllegalInstruction:
// CUDA 13.0's ptxas left their cp.async's L2 cache-policy register unwritten where it kept the
// ring stage's offset in a uniform register; tile_ring::stage_to avoids that form since f28b4fb.
// The ring alone still goes last, after the JSON of the rest is written.)
//
//   radix_probe [--n N] [--json FILE]

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_host.hpp"
#include "cuda/check.cuh"
#include "gsearch/core/radix_select.hpp"
#include "report.hpp"
#include "selection/cuda/planned_select.cuh"
#include "selection/cuda/radix_select.cuh"
#include "selection/cuda/radix_select_kernel.cuh"

namespace {

using namespace gsearch;
using namespace gsearch::cuda_backend;
using json = nlohmann::json;

__global__ void uniform_kernel(float* x, int64_t n, uint64_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = float(core::mix64(seed + uint64_t(i + 1) * bench::host::golden) >> 40) * 0x1p-24f;
}

// The ring alone (tile_ring, as the pass reads its tiles), each tile's radix bits summed and
// nothing else: what the pass would cost if its work were free. Measured last (see the header).
template <int Loads, int Stages>
__global__ void __launch_bounds__(512, radix_pass_blocks_per_sm)
    ring_only_kernel(const float* __restrict__ data, int64_t n, int64_t head, uint32_t* sink) {
  using view_t = tile_items<float, 512, Loads>;
  extern __shared__ __align__(16) unsigned char ring_memory[];
  const scan_layout<float, 512, Loads> layout{n, head};
  tile_ring<float, 512, Loads, Stages> ring(ring_memory, data, layout);
  const int64_t tiles = layout.tiles();
  for (int s = 0; s < Stages - 1; ++s) ring.fetch(blockIdx.x + s * int64_t(gridDim.x), s);
  int turn = 0;
  uint32_t sum = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, turn = turn + 1 == Stages ? 0 : turn + 1) {
    ring.fetch(t + (Stages - 1) * int64_t(gridDim.x), turn == 0 ? Stages - 1 : turn - 1);
    view_t view;
    ring.take(view, data, layout, t, turn);
    for (int j = 0; j < view_t::items; ++j)
      if (view.valid >> j & 1) sum += uint32_t(core::radix_bits(view.x[j]));
  }
  if (sum == 0x9e3779b9u) *sink = sum;  // never, in effect: the loads kept
}

struct setup {
  const float* data;
  int64_t n, rank, capacity;
  radix_select_state<float>* st;
  float* buffers;
  int sms;
};

// The median of 10 timed runs of launch() (after 2 warm-ups), each after before() (untimed), ms.
template <class Before, class Launch>
double median_ms(Before before, Launch launch) {
  cudaEvent_t a, b;
  GSEARCH_CUDA_CHECK(cudaEventCreate(&a));
  GSEARCH_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> times;
  for (int run = 0; run < 12; ++run) {
    before();
    GSEARCH_CUDA_CHECK(cudaEventRecord(a));
    launch();
    GSEARCH_CUDA_CHECK(cudaEventRecord(b));
    GSEARCH_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    GSEARCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    if (run >= 2) times.push_back(ms);
  }
  GSEARCH_CUDA_CHECK(cudaGetLastError());
  GSEARCH_CUDA_CHECK(cudaEventDestroy(a));
  GSEARCH_CUDA_CHECK(cudaEventDestroy(b));
  std::sort(times.begin(), times.end());
  return (times[4] + times[5]) / 2;
}

// The first pass of one shape and probe: its median time in ms. The window kernel runs before
// every pass, outside the events: it resets the state the pass changes.
template <int Loads, int Stages, int Probe>
double first_pass_ms(const setup& s) {
  constexpr int threads = 512;
  const scan_layout<float, threads, Loads> layout{s.n, unaligned_head(s.data, s.n)};
  const int64_t grid = std::min<int64_t>(layout.tiles(), int64_t(radix_pass_blocks_per_sm) * s.sms);
  const int64_t smem = radix_pass_shared_bytes<float, threads, Loads, Stages>(1, false);
  GSEARCH_CUDA_CHECK(cudaFuncSetAttribute(radix_pass_kernel<float, threads, Loads, true, 1, Stages, Probe>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  radix_ranks ranks{};
  ranks.r = 1;
  ranks.rank[0] = s.rank;
  return median_ms(
      [&] {
        radix_window_kernel<float, radix_window_threads>
            <<<1, radix_window_threads>>>(s.data, s.n, ranks, s.st, false, false);
      },
      [&] {
        radix_pass_kernel<float, threads, Loads, true, 1, Stages, Probe><<<unsigned(grid), threads, size_t(smem)>>>(
            s.data, s.n, layout.head, s.st, s.buffers, s.capacity, static_cast<int64_t*>(nullptr));
      });
}

// The window kernel alone (the sample read and sorted, the first ranges placed), ms.
double window_ms(const setup& s) {
  radix_ranks ranks{};
  ranks.r = 1;
  ranks.rank[0] = s.rank;
  return median_ms([] {},
                   [&] {
                     radix_window_kernel<float, radix_window_threads>
                         <<<1, radix_window_threads>>>(s.data, s.n, ranks, s.st, false, false);
                   });
}

// One select of `ranks` end to end (enqueued, then the answers on the host), ms: by the radix
// select itself, or by gsearch::select (whichever route it takes for that many ranks).
double radix_select_ms(const float* data, int64_t n, const std::vector<int64_t>& ranks,
                       bool count_nan = false) {
  return median_ms([] {},
                   [&] {
                     std::optional<radix_select<float>> r =
                         radix_select<float>::enqueue(nullptr, data, n, ranks, false, count_nan);
                     int64_t nans = 0;
                     if (!r || !r->finish(&nans) || nans != 0)
                       throw std::runtime_error("radix_probe: the radix select gave no answer");
                   });
}
// NaN where the planned levels give up on these ranks (the library then recurses from the host).
double planned_select_ms(const float* data, int64_t n, const std::vector<int64_t>& ranks) {
  bool answered = true;
  const double ms = median_ms([] {},
                              [&] {
                                std::optional<planned_select<float>> p =
                                    planned_select<float>::enqueue(nullptr, data, n, ranks);
                                answered = answered && p && p->finish();
                              });
  return answered ? ms : std::nan("");
}

// The ring alone, its median time in ms.
template <int Loads, int Stages>
double ring_only_ms(const setup& s) {
  constexpr int threads = 512;
  const scan_layout<float, threads, Loads> layout{s.n, unaligned_head(s.data, s.n)};
  const int64_t grid = std::min<int64_t>(layout.tiles(), int64_t(radix_pass_blocks_per_sm) * s.sms);
  const int64_t smem = tile_ring<float, threads, Loads, Stages>::bytes;
  GSEARCH_CUDA_CHECK(cudaFuncSetAttribute(ring_only_kernel<Loads, Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(smem)));
  return median_ms([] {}, [&] {
    ring_only_kernel<Loads, Stages><<<unsigned(grid), threads, size_t(smem)>>>(s.data, s.n, layout.head,
                                                                              reinterpret_cast<uint32_t*>(s.st));
  });
}

}  // namespace

int main(int argc, char** argv) {
  bench::host::probe_args args{int64_t(1) << 26, ""};
  if (!bench::host::parse_probe_args(argc, argv, "radix_probe", args)) return 2;
  const int64_t n = args.n;
  const std::string& json_path = args.json_path;
  if (gsearch::cuda_device_count() == 0 || n < radix_select_min_n) {
    std::fprintf(stderr, "radix_probe: %s\n", n < radix_select_min_n ? "n too small" : "no CUDA device");
    return 2;
  }
  cudaDeviceProp prop{};
  GSEARCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  float* data = nullptr;
  GSEARCH_CUDA_CHECK(cudaMalloc(&data, size_t(n) * sizeof(float)));
  uniform_kernel<<<4 * prop.multiProcessorCount, 256>>>(data, n, 1);
  // The copy as radix_select.cu sizes it (every rank below shares one allocation: the widest).
  const int64_t widest = n / 2;
  const int64_t capacity = radix_copy_capacity(n, &widest, 1);
  const size_t state_bytes = (sizeof(radix_select_state<float>) + 255) / 256 * 256;
  unsigned char* memory = nullptr;
  GSEARCH_CUDA_CHECK(cudaMalloc(&memory, state_bytes + 2 * size_t(capacity) * sizeof(float)));
  auto* st = reinterpret_cast<radix_select_state<float>*>(memory);
  float* buffers = reinterpret_cast<float*>(memory + state_bytes);

  json rows = json::array();
  const auto row_of = [&](int64_t rank, const char* what,
                          double ms) {  // "rank": the rank, or a count of ranks
    const double gbps = double(n) * sizeof(float) / (ms * 1e6);
    std::printf("%-12lld %-26s %10.4f %10.1f\n", static_cast<long long>(rank), what, ms, gbps);
    std::fflush(stdout);
    rows.push_back({{"rank", rank}, {"what", what}, {"ms", ms}, {"gbps", gbps}});
  };
  std::printf("radix_probe: %s, first pass of one rank, %lld uniform float32 (read roofline: plain 16-byte loads)\n",
              prop.name, static_cast<long long>(n));
  std::printf("%-12s %-26s %10s %10s\n", "rank", "shape / probe", "ms", "GB/s");
  for (const int64_t rank : {int64_t(1024), n / 2}) {
    const setup s{data, n, rank, capacity, st, buffers, prop.multiProcessorCount};
    const auto row = [&](const char* what, double ms) { row_of(rank, what, ms); };
    row("4x2 (the library's)", first_pass_ms<4, 2, 0>(s));
    row("4x2 no members", first_pass_ms<4, 2, radix_probe_no_members>(s));
    row("4x2 no end", first_pass_ms<4, 2, radix_probe_no_end>(s));
    row("4x2 no members, no end", first_pass_ms<4, 2, radix_probe_no_members | radix_probe_no_end>(s));
    row("2x3", first_pass_ms<2, 3, 0>(s));
    row("2x4", first_pass_ms<2, 4, 0>(s));
    row("4x3 (1 block a SM)", first_pass_ms<4, 3, 0>(s));
  }
  row_of(-1, "window kernel (sample sort)",
         window_ms(setup{data, n, n / 2, capacity, st, buffers, prop.multiProcessorCount}));
  // A few ranks end to end (the answers on the host): the radix select against the planned levels.
  const std::vector<std::pair<const char*, std::vector<int64_t>>> rank_sets = {
      {"1: n/2", {n / 2}},
      {"2: median", {n / 2 - 1, n / 2}},
      {"3: median + NaN check", {n / 2 - 1, n / 2, n - 1}},
      {"4: quartiles", {n / 4, n / 2, 3 * n / 4, n - 1}},
  };
  row_of(2, "radix select, 2: median, NaNs counted", radix_select_ms(data, n, {n / 2 - 1, n / 2}, true));
  for (const auto& [name, ranks] : rank_sets) {
    row_of(int64_t(ranks.size()), (std::string("radix select, ") + name).c_str(),
           radix_select_ms(data, n, ranks));
    row_of(int64_t(ranks.size()), (std::string("planned levels, ") + name).c_str(),
           planned_select_ms(data, n, ranks));
  }
  GSEARCH_CUDA_CHECK(cudaDeviceSynchronize());
  const auto write = [&] {
    if (json_path.empty()) return;
    bench::write_json(json_path, json{{"schema", "gsearch-bench-radix-probe/1"},
                                      {"synthetic", false},
                                      {"device", prop.name},
                                      {"n", n},
                                      {"results", rows}});
  };
  write();
  // The ring alone, last and written again after: a fault here (see the header) loses nothing else.
  const double ring_ms = ring_only_ms<4, 2>(setup{data, n, 0, capacity, st, buffers, prop.multiProcessorCount});
  const double ring_gbps = double(n) * sizeof(float) / (ring_ms * 1e6);
  std::printf("%-12s %-26s %10.4f %10.1f\n", "-", "4x2 ring only", ring_ms, ring_gbps);
  rows.push_back({{"rank", nullptr}, {"what", "4x2 ring only"}, {"ms", ring_ms}, {"gbps", ring_gbps}});
  write();
  cudaFree(memory);
  cudaFree(data);
  return 0;
}
