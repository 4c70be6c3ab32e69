// The host time of one small search call below Python (issue 24: the per-call time), in parts
// that differ by one layer each, so that their differences place the time without a profiler
// (the GPU machine has no perf): beside py_call_overhead.py's Python rows, the same shapes
// (K = 1,024 sorted int32 keys; Q = 1, 100, 10,000 queries, and 100,000; int32 out) from C++.
//
//   call_overhead --json OUT.json [--calls 20000] [--repeat 7]
//
// Rows ("impl"), each timed two ways, the minimum of --repeat runs:
//   us_per_call   --calls calls back to back on one stream, synchronized once after them: the
//                 wall time over --calls. Past the launch queue's depth the host waits for the
//                 GPU, so this is the larger of the host's time per call and the kernel's.
//   enqueue_us    200 calls after a synchronization, timed without waiting for them: the host's
//                 time per call alone (the queue does not fill).
//   launch:empty      an empty kernel with the search kernel's argument count, <<<1, 32>>>
//   launch:grid       the same kernel on the search's grid (Q / 1,024 blocks of 256)
//   cuda_get_device   cudaGetDevice (what the device guard and the device limits ask)
//   launch:search_kernel  the search's own kernel (PBS-CL, keys in shared memory, as auto picks)
//                     launched directly on the grid the library picks
//   launch:global_kernel  the binary search's kernel over the keys in global memory (what runs
//                     when they do not fit shared memory: no staging), launched directly
//   backend:launch_search  cuda_backend::launch_search<pbs_cl> (the occupancy and shared-memory
//                     lookups, then that launch)
//   backend:search    cuda_backend::search with algorithm::auto_ (the device limits, the choice)
//   cpp:search        gsearch::search(cuda.on(stream), side::left, keys, queries, out)
//   cpp:search_any    the same with queries_order::any (the default detect, decided on the host
//                     for these sizes, never launches the order check here)
// The searches' results are checked against std::lower_bound once. Exit status 0 done, 1 bad
// usage, 2 no CUDA device (nothing measured), 3 a result differed.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "search/backend.hpp"
#include "search/cuda/search_kernel.cuh"
#include "gsearch/gsearch.hpp"
#include "report.hpp"

namespace {

using namespace gsearch;
using bench::json;

// The search kernel's arguments, by kind: three pointers, sizes, the side's offset.
__global__ void empty_kernel(const int32_t*, int64_t, const int32_t*, int64_t, int32_t*, int, int) {}

// The host's time per call while the launch queue has room: calls after a synchronization, not
// waited for.
template <class F>
double enqueue_us(F&& call, int repeat, cudaStream_t stream) {
  constexpr int calls = 200;
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    cudaStreamSynchronize(stream);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / calls);
  }
  cudaStreamSynchronize(stream);
  return best;
}

template <class F>
double per_call_us(F&& call, int calls, int repeat, cudaStream_t stream) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    cudaStreamSynchronize(stream);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    cudaStreamSynchronize(stream);
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / calls);
  }
  return best;
}

struct args : bench::common_args {
  int calls = 20000;
  args() : common_args(7, 1) {}
};

}  // namespace

int main(int argc, char** argv) {
  args a;
  CLI::App app{"call_overhead: the host time per call of a small gsearch::search from C++ and of a bare launch "
               "(issue 24's per-call time, below Python; bench/search/py_call_overhead.py has the Python rows)."};
  bench::add_common_options(app, a, "Fewer calls (2,000) and runs (3)", "Seed of the keys and queries");
  app.add_option("--calls", a.calls, "Calls per timed run")->check(CLI::PositiveNumber)->capture_default_str();
  if (const auto rc = bench::parse(app, argc, argv, a)) return *rc;
  if (const auto rc = bench::require_gpu("call_overhead", "search")) return *rc;
  if (a.quick) a.calls = 2000, a.repeat = 3;

  json report = bench::gpu_report("gsearch.call_overhead/1", a, cuda_device_properties(), json::object());
  bench::print_banner("call_overhead", report);
  report["calls"] = a.calls;
  report["repeat"] = a.repeat;
  json& rows = report["results"] = json::array();
  int problems = 0;

  const int64_t k = 1024;
  std::vector<int32_t> keys(k);
  std::mt19937_64 rng(a.seed);
  for (auto& x : keys) x = int32_t(rng() % 100000);
  std::sort(keys.begin(), keys.end());
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int32_t *d_keys = nullptr, *d_queries = nullptr, *d_out = nullptr;
  const int64_t most = 100000;
  cudaMalloc(&d_keys, k * sizeof(int32_t));
  cudaMalloc(&d_queries, most * sizeof(int32_t));
  cudaMalloc(&d_out, most * sizeof(int32_t));
  cudaMemcpy(d_keys, keys.data(), k * sizeof(int32_t), cudaMemcpyHostToDevice);

  for (const int64_t q : {int64_t{1}, int64_t{100}, int64_t{10000}, int64_t{100000}}) {
    std::vector<int32_t> queries(static_cast<size_t>(q));
    for (auto& x : queries) x = int32_t(rng() % 100000);
    cudaMemcpy(d_queries, queries.data(), q * sizeof(int32_t), cudaMemcpyHostToDevice);
    const span<const int32_t> kv(d_keys, k), qv(d_queries, q);
    const span<int32_t> ov(d_out, q);
    const auto exec = cuda.on(stream);
    search_options any_order;
    any_order.queries_sorted = queries_order::any;

    // The check, once: the C++ call's result against std::lower_bound.
    search(exec, side::left, kv, qv, ov);
    std::vector<int32_t> got(static_cast<size_t>(q));
    cudaMemcpyAsync(got.data(), d_out, q * sizeof(int32_t), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    bool ok = true;
    for (int64_t j = 0; j < q; ++j)
      ok = ok && got[size_t(j)] == int32_t(std::lower_bound(keys.begin(), keys.end(), queries[size_t(j)]) - keys.begin());
    if (!ok) ++problems;

    const unsigned grid = unsigned((q + 1023) / 1024);
    // The search's own launch, as launch_search_with makes it for these keys (copies: replicas).
    namespace cb = cuda_backend;
    const cb::device_limits dev = cb::current_device_limits();
    constexpr cb::launch_config cfg = cb::shared_config<algorithm::pbs_cl, 4>;
    const bool two = cb::pbs_cl_copies<int32_t>(k, dev.max_shared_per_block) == 2;
    const auto kernel = two ? cb::search_shared_kernel<algorithm::pbs_cl, false, int32_t, int32_t, cfg.threads, cfg.items, 2>
                            : cb::search_shared_kernel<algorithm::pbs_cl, false, int32_t, int32_t, cfg.threads, cfg.items, 1>;
    const int64_t smem = cb::staged_bytes<int32_t>(k, two ? 2 : 1);
    constexpr cb::launch_config gcfg = cb::global_config;
    const auto global_kernel = cb::search_global_kernel<algorithm::binary, false, int32_t, int32_t, gcfg.threads, gcfg.items>;
    const int global_grid = cb::grid_size(global_kernel, gcfg.threads, 0, (q + gcfg.threads * gcfg.items - 1) / (gcfg.threads * gcfg.items), dev);
    const int search_grid = cb::grid_size(kernel, cfg.threads, smem, (q + cfg.threads * cfg.items - 1) / (cfg.threads * cfg.items), dev);
    const std::vector<std::pair<const char*, std::function<void()>>> parts = {
        {"launch:empty", [&] { empty_kernel<<<1, 32, 0, stream>>>(d_keys, k, d_queries, q, d_out, 0, 0); }},
        {"launch:grid", [&] { empty_kernel<<<grid, 256, 0, stream>>>(d_keys, k, d_queries, q, d_out, 0, 0); }},
        {"cuda_get_device", [&] { int d; cudaGetDevice(&d); }},
        {"launch:search_kernel",
         [&] { kernel<<<search_grid, cfg.threads, size_t(smem), stream>>>(d_keys, int(k), d_queries, q, d_out, 0, {}); }},
        {"launch:global_kernel",
         [&] { global_kernel<<<global_grid, gcfg.threads, 0, stream>>>(d_keys, k, d_queries, q, d_out, 0, {}); }},
        {"backend:launch_search",
         [&] { cb::launch_search<algorithm::pbs_cl>(stream, false, 0, d_keys, k, d_queries, q, d_out, dev); }},
        {"backend:search",
         [&] { cb::search(stream, side::left, algorithm::auto_, d_keys, k, d_queries, q, d_out, int64_t{1} << 62); }},
        {"cpp:search", [&] { search(exec, side::left, kv, qv, ov); }},
        {"cpp:search_any", [&] { search(exec, side::left, kv, qv, ov, any_order); }},
    };
    for (const auto& [name, call] : parts) {
      call();  // warm: first-call lookups
      const double us = per_call_us(call, a.calls, a.repeat, stream);
      const double host = enqueue_us(call, a.repeat, stream);
      rows.push_back({{"impl", name}, {"k", k}, {"q", q}, {"dtype", "int32"}, {"us_per_call", us}, {"enqueue_us", host},
                      {"verified", ok}});
      std::printf("K=%lld Q=%-6lld %-22s %7.3f us back to back, %7.3f us to enqueue\n", (long long)k, (long long)q,
                  name, us, host);
    }
  }
  cudaFree(d_keys);
  cudaFree(d_queries);
  cudaFree(d_out);
  cudaStreamDestroy(stream);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    std::fprintf(stderr, "call_overhead: %s\n", cudaGetErrorString(e));
    ++problems;
  }
  if (!a.json_path.empty()) bench::write_json(a.json_path, report);
  if (problems) std::fprintf(stderr, "call_overhead: a result differed from std::lower_bound\n");
  return problems ? 3 : 0;
}
