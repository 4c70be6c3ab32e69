// The row-batched search (gsearch::search_rows) at several launch configurations and algorithms,
// on the shapes of the Python issue's benchmark (float32 keys and queries, side right, int32
// output), beside the read/write roofline of the same bytes. Chooses tuning.hpp's rows_config.
//
//   rows_sweep [--quick] > sweep.json
//
// Every configuration's output is compared, in full, with the CPU backend's. Times: CUDA events
// around one launch, 2 warm-up runs, the median of 10. The roofline is (key + query + output
// bytes) / the device-to-device copy bandwidth measured in the same process (2 x bytes / time).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "search/cuda/search_rows_kernel.cuh"
#include "gsearch/gsearch.hpp"
#include "sweep_timing.cuh"

namespace {

using namespace gsearch;
using cuda_backend::device_limits;

struct shape {
  int64_t rows, k, m;
};

template <algorithm A, int Threads, int Items>
struct cfg {};
template <class... C>
struct cfg_list {};
#define GSEARCH_ROWS_SWEEP_FOR(A)                                                                    \
  cfg<A, 128, 8>, cfg<A, 256, 4>, cfg<A, 256, 8>, cfg<A, 384, 8>, cfg<A, 512, 4>, cfg<A, 512, 8>,   \
      cfg<A, 1024, 4>, cfg<A, 1024, 8>
using sweep_list = cfg_list<GSEARCH_ROWS_SWEEP_FOR(algorithm::pbs_cl), GSEARCH_ROWS_SWEEP_FOR(algorithm::binary),
                            cfg<algorithm::pbs_cf, 256, 4>, cfg<algorithm::pbs, 256, 4>>;

using bench::time_ms;

// Device-to-device copy bandwidth, bytes read + written per second.
double copy_bandwidth() {
  const size_t bytes = size_t(1) << 30;
  void *src = device_malloc(bytes), *dst = device_malloc(bytes);
  cudaMemset(src, 1, bytes);
  const double ms = time_ms([&] { cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice); });
  device_free(src);
  device_free(dst);
  return 2.0 * double(bytes) / (ms * 1e-3);
}

template <algorithm A, int Threads, int Items>
void run_one(cfg<A, Threads, Items>, const shape& s, const float* keys, const float* queries, int32_t* out,
             const std::vector<int32_t>& want, double roofline_ms, bool& first) {
  const device_limits dev = cuda_backend::current_device_limits();
  const auto launch = [&] {
    cuda_backend::launch_search_rows_with<A, Threads, Items>(nullptr, false, 0, s.rows, keys, s.k, queries, s.m,
                                                             out, dev);
  };
  cudaMemset(out, 0xff, size_t(s.rows * s.m) * 4);
  launch();
  std::vector<int32_t> got(want.size());
  copy_to_host(got.data(), out, got.size() * 4);
  const bool ok = got == want;
  const double ms = time_ms(launch);
  const double q = double(s.rows * s.m);
  std::printf("%s\n    {\"rows\": %lld, \"k\": %lld, \"m\": %lld, \"algo\": \"%s\", \"threads\": %d, \"items\": %d, "
              "\"ms\": %.5f, \"g_queries_per_s\": %.2f, \"roofline_fraction\": %.4f, \"verified\": %s}",
              first ? "" : ",", (long long)s.rows, (long long)s.k, (long long)s.m, std::string(to_string(A)).c_str(),
              Threads, Items, ms, q / (ms * 1e-3) * 1e-9, roofline_ms / ms, ok ? "true" : "false");
  std::fflush(stdout);
  first = false;
  if (!ok) std::fprintf(stderr, "rows_sweep: %s %dx%d differs from the CPU backend\n", std::string(to_string(A)).c_str(), Threads, Items);
}

template <class... C>
void run_all(cfg_list<C...>, const shape& s, const float* keys, const float* queries, int32_t* out,
             const std::vector<int32_t>& want, double roofline_ms, bool& first) {
  (run_one(C{}, s, keys, queries, out, want, roofline_ms, first), ...);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "rows_sweep: no CUDA device\n");
    return 2;
  }
  std::vector<shape> shapes = {{1 << 20, 64, 128}, {1 << 16, 1024, 2048}, {4096, 16384, 32768}, {4096, 128, 32768}};
  if (quick) shapes = {{1 << 12, 64, 128}, {64, 1024, 2048}};
  const double bw = copy_bandwidth();
  std::printf("{\"schema\": \"gsearch-rows-sweep/1\", \"device\": \"%s\", \"dtype\": \"float32\", \"side\": \"right\", "
              "\"out_dtype\": \"int32\", \"copy_bandwidth_gb_per_s\": %.1f, \"source\": {\"commit\": \"%s\", \"dirty\": %s}, \"runs\": [",
              cuda_device_name().c_str(), bw * 1e-9, build_info().commit, build_info().dirty ? "true" : "false");
  bool first = true;
  for (const shape& s : shapes) {
    const int64_t nk = s.rows * s.k, nq = s.rows * s.m;
    std::vector<float> keys(static_cast<size_t>(nk)), queries(static_cast<size_t>(nq));
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (auto& x : keys) x = u(rng);
    for (int64_t r = 0; r < s.rows; ++r) std::sort(keys.begin() + r * s.k, keys.begin() + (r + 1) * s.k);
    for (auto& x : queries) x = u(rng);
    std::vector<int32_t> want(static_cast<size_t>(nq));
    search_rows(cpu, side::right, s.rows, span<const float>(keys), span<const float>(queries), span<int32_t>(want));
    const auto d_keys = to_device(keys);
    const auto d_queries = to_device(queries);
    device_vector<int32_t> d_out(nq);
    const double bytes = double(nk) * 4 + double(nq) * 4 + double(nq) * 4;
    const double roofline_ms = bytes / bw * 1e3;
    run_all(sweep_list{}, s, d_keys.data(), d_queries.data(), d_out.data(), want, roofline_ms, first);
  }
  std::printf("\n]}\n");
  return 0;
}
