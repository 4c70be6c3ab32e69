// pary_bench: the H100 latency benchmark of P-ary search (issue 9): the response time of ONE
// query against K sorted keys in global memory, for one thread and for a warp or block that
// cooperates on the query. A table on stdout and, with --json, one JSON file.
//
//   pary_bench [--json FILE] [--log-keys 10,12,...,30] [--key-types int32,int64] [--repeat 200]
//              [--warmup 5] [--methods binary,warp,block256,block1024,index] [--caches warm,cold]
//              [--seed 1] [--quick]
//
// The claim it checks (seeds/003, Kaldewey et al., "Parallel search on video cards"): a P-ary
// search takes log_{P+1}(K) steps of one key read per lane, so its response time stays nearly
// flat as the data grows (a warp: 6 steps for 2^30 keys, a block of 1024 lanes 3), where a
// one-thread binary search takes log2(K) dependent reads (31 for 2^30) and grows with log2 K.
//
// Methods, each searching one query (upper_bound, the rank as int64) with a launch of its own:
//   binary       one thread: the branch-free binary search core::search_rank<algorithm::binary>
//                (binary_n<1>) over core::bounded_accessor straight on the keys; <<<1, 1>>>.
//   pary-warp    one warp: cuda_backend::pary_warp_rank (P = 32, the vote a ballot); <<<1, 32>>>.
//   pary-block-256, pary-block-1024
//                one block: cuda_backend::pary_block_rank (P = blockDim.x, the vote
//                __syncthreads_count); <<<1, 256>>> and <<<1, 1024>>>.
//   index        one thread: the static index's walk, static_index<T>::device_ref().upper_bound(q)
//                (the S+ tree of core/static_index.hpp, 16-byte nodes, built once per K, its
//                build not timed); <<<1, 1>>>.
//
// Inputs, generated on the device as index_bench's (bench/common/device_inputs.cuh): keys =
// sort(T(word(S, i))) (thrust::sort; word(s, i) = mix64(s + (i + 1) * 0x9E3779B97F4A7C15),
// bench_host.hpp; int32 keys take the
// word's top 32 bits). Repetition j (0 <= j < --repeat) searches q_j = keys[word(S + 1, j) mod K],
// the same queries for every method; the --warmup untimed runs before them search j = R, R + 1,
// .... The host picks q_j from its copy of the keys and passes the value as a kernel argument,
// so no query load precedes the search in the kernel.
//
// Two timings of every run (one launch gives both):
//   kernel       clock64 (the SM's %clock64) read by lane / thread 0 before and after the search,
//                after a __syncwarp / __syncthreads for the cooperative forms; the rank is stored
//                before the second read (an asm volatile with a memory clobber), so the read
//                waits for the last key load. Median, min and max cycles over the repetitions,
//                converted to microseconds with the peak SM clock of
//                cudaDeviceGetAttribute(cudaDevAttrClockRate) (config.sm_clock_khz; a calibration
//                kernel's %clock64 against %globaltimer is recorded beside it,
//                config.measured_sm_clock_khz: an idle GPU may run below the peak).
//   end-to-end   host wall time (std::chrono::steady_clock) of the launch, cudaStreamSynchronize,
//                the copy of the one rank back to pinned host memory (cudaMemcpyAsync) and
//                cudaStreamSynchronize: what a user calling one lookup sees. One non-blocking
//                stream, nothing else running.
// Caches: "warm" runs follow each other (the previous run, a different query, has left the top
// of the search in L2); in "cold" runs a flush kernel first writes max(100 MB, 2 x L2) of another
// buffer, untimed, so the keys are read from HBM (L1 does not outlive a kernel).
//
// Checks: every run's rank (warm-ups included) against std::upper_bound on a host copy of the
// keys; a row's "verified" is false when any run of its (method, K, cache) disagreed, and the run
// then exits 3 (report.hpp's run_and_report), the rows listed under "failures".
//
// JSON ("schema": "gsearch-bench-pary/1"): command, device, versions, config, results
// [{method, key_type, k, timing: "kernel" | "end-to-end", cache: "warm" | "cold", median_cycles
// (kernel only), median_us, min_us, max_us, verified, min_cycles, max_cycles (kernel only), lanes,
// steps (key reads per lane, at most), repeat, mismatches, index_bytes (index only)}], failures.
// Memory: K = 2^30 int32 is 4 GB of keys, the index 1.25x that and the host copy 4 GB; each K's
// buffers are freed before the next.

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_host.hpp"
#include "cccl.hpp"
#include "device_inputs.cuh"
#include "gsearch/core/pary.hpp"
#include "gsearch/core/pbs.hpp"
#include "cuda/check.cuh"
#include "search/cuda/pary_kernel.cuh"
#include "gsearch/gsearch.hpp"
#include "gsearch/static_index.hpp"
#include "report.hpp"
#include "timing.hpp"

namespace {

using namespace gsearch;
using bench::json;
using bench::time_runs;
using bench::timing;
using bench::wall_ms;

struct bench_args : bench::common_args {
  bench_args() : common_args(200, 5) {}
  std::vector<int> log_keys{10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  std::vector<std::string> key_types{"int32"};
  std::vector<std::string> methods{"binary", "warp", "block256", "block1024", "index"};
  std::vector<std::string> caches{"warm", "cold"};
};

// ---- device code --------------------------------------------------------------------------------

/// Writes the whole buffer (a value that changes every call): the L2's lines then hold it, not
/// the keys.
__global__ void flush_kernel(uint4* buffer, int64_t n, uint32_t value) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    buffer[i] = make_uint4(value, uint32_t(i), value, uint32_t(i >> 32));
}

/// %clock64, as clock64(); the memory clobber keeps the stores before it (the rank's) before it.
__device__ __forceinline__ long long read_clock() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) : : "memory");
  return t;
}

/// The SM clock against %globaltimer (ns) over about `ns` nanoseconds: out = {cycles, ns}.
__global__ void clock_calibration_kernel(long long ns, long long* out) {
  long long g0, g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0) : : "memory");
  const long long c0 = read_clock();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1) : : "memory");
  } while (g1 - g0 < ns);
  const long long c1 = read_clock();
  out[0] = c1 - c0;
  out[1] = g1 - g0;
}

// The one-query kernels: out[0] = the rank (upper_bound of q), out[1] = the cycles of the search
// as lane / thread 0 saw them.

template <class T>
__global__ void __launch_bounds__(1) binary_one_kernel(const T* __restrict__ keys, int64_t k, T q, int64_t* out) {
  const core::bounded_accessor<T, key_traits<T>> acc{keys, k};
  const long long t0 = read_clock();
  const int64_t rank = core::search_rank<algorithm::binary>(acc, k, before<false, T>{q}, 0);
  out[0] = rank;
  const long long t1 = read_clock();
  out[1] = t1 - t0;
}

template <class T>
__global__ void __launch_bounds__(32) warp_one_kernel(const T* __restrict__ keys, int64_t k, T q, int64_t* out) {
  __syncwarp();
  const long long t0 = read_clock();
  const int64_t rank = cuda_backend::pary_warp_rank(keys, k, before<false, T>{q});
  if (threadIdx.x == 0) {
    out[0] = rank;
    const long long t1 = read_clock();
    out[1] = t1 - t0;
  }
}

template <int Threads, class T>
__global__ void __launch_bounds__(Threads) block_one_kernel(const T* __restrict__ keys, int64_t k, T q, int64_t* out) {
  __syncthreads();
  const long long t0 = read_clock();
  const int64_t rank = cuda_backend::pary_block_rank(keys, k, before<false, T>{q});
  if (threadIdx.x == 0) {
    out[0] = rank;
    const long long t1 = read_clock();
    out[1] = t1 - t0;
  }
}

template <class T>
__global__ void __launch_bounds__(1) index_one_kernel(static_index_device_ref<T> ref, T q, int64_t* out) {
  const long long t0 = read_clock();
  const int64_t rank = ref.upper_bound(q);
  out[0] = rank;
  const long long t1 = read_clock();
  out[1] = t1 - t0;
}

// ---- host ---------------------------------------------------------------------------------------

struct method_info {
  const char* option;  // --methods
  const char* name;    // the JSON's "method"
  int lanes;
};
constexpr method_info method_table[] = {
    {"binary", "binary", 1},
    {"warp", "pary-warp", 32},
    {"block256", "pary-block-256", 256},
    {"block1024", "pary-block-1024", 1024},
    {"index", "index", 1},
};

const method_info& find_method(const std::string& option) {
  for (const method_info& m : method_table)
    if (option == m.option) return m;
  throw invalid_argument("unknown method " + option + " (binary, warp, block256, block1024, index)");
}

/// A non-blocking stream, the pinned result and its device slot, the flush buffer.
struct resources {
  cudaStream_t stream = nullptr;
  int64_t* host_out = nullptr;  // pinned: {rank, cycles}
  device_vector<int64_t> out{2};
  device_vector<uint4> flush;
  explicit resources(int64_t flush_bytes) : flush(flush_bytes / int64_t(sizeof(uint4))) {
    GSEARCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    GSEARCH_CUDA_CHECK(cudaMallocHost(&host_out, 2 * sizeof(int64_t)));
  }
  resources(const resources&) = delete;
  resources& operator=(const resources&) = delete;
  ~resources() {
    cudaFreeHost(host_out);
    cudaStreamDestroy(stream);
  }
};

// One (key type, K): the sorted keys on the device, their host copy, the index over them.
template <class T>
struct inputs {
  int64_t k;
  device_vector<T> keys;
  std::vector<T> host_keys;
  static_index<T> index;

  inputs(int64_t k_, uint64_t seed) : k(k_), keys(k_) {
    bench::random_keys_kernel<<<1024, 256>>>(keys.data(), k, seed);
    GSEARCH_CUDA_CHECK_LAUNCH();
    thrust::sort(thrust::device, keys.data(), keys.data() + k);
    host_keys.resize(size_t(k));
    keys.copy_to(span<T>(host_keys));
    index = static_index<T>(gsearch::cuda, span<const T>(keys));
    GSEARCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  T query(uint64_t seed, int64_t j) const { return host_keys[size_t(bench::host::word(seed + 1, uint64_t(j)) % uint64_t(k))]; }
  int64_t expected(T q) const { return std::upper_bound(host_keys.begin(), host_keys.end(), q) - host_keys.begin(); }
};

struct runner {
  bench_args a;
  json report;
  int problems = 0;
  cuda_device_info dev = cuda_device_properties();
  int clock_khz = 0;

  explicit runner(const bench_args& args) : a(args) {
    int device = 0;
    GSEARCH_CUDA_CHECK(cudaGetDevice(&device));
    GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  }

  double cycles_to_us(double cycles) const { return cycles * 1e3 / double(clock_khz); }

  template <class T>
  void launch(const method_info& m, const inputs<T>& in, T q, int64_t* out, cudaStream_t s) const {
    const std::string name = m.option;
    if (name == "binary") binary_one_kernel<T><<<1, 1, 0, s>>>(in.keys.data(), in.k, q, out);
    else if (name == "warp") warp_one_kernel<T><<<1, 32, 0, s>>>(in.keys.data(), in.k, q, out);
    else if (name == "block256") block_one_kernel<256, T><<<1, 256, 0, s>>>(in.keys.data(), in.k, q, out);
    else if (name == "block1024") block_one_kernel<1024, T><<<1, 1024, 0, s>>>(in.keys.data(), in.k, q, out);
    else index_one_kernel<T><<<1, 1, 0, s>>>(in.index.device_ref(), q, out);
  }

  template <class T>
  int steps(const method_info& m, const inputs<T>& in) const {
    if (std::string(m.option) == "binary") return ceil_log2(in.k + 1);
    if (std::string(m.option) == "index") return in.index.levels();
    return core::pary_max_steps(in.k, m.lanes);
  }

  void record(json r) {
    if (r["verified"] == false) {
      ++problems;
      report["failures"].push_back(r);
    }
    report["results"].push_back(std::move(r));
  }

  // --warmup + --repeat one-query runs of method m; two rows (kernel, end-to-end).
  template <class T>
  void measure(const method_info& m, const inputs<T>& in, resources& res, bool cold) {
    std::vector<double> cycles;
    int64_t mismatches = 0;
    int call = 0;
    const timing t = time_runs(a.warmup, a.repeat, [&] {
      const bool timed = call >= a.warmup;
      const int64_t j = timed ? call - a.warmup : a.repeat + call;
      ++call;
      const T q = in.query(a.seed, j);
      if (cold) {
        flush_kernel<<<2 * dev.sms, 1024, 0, res.stream>>>(res.flush.data(), res.flush.size(), uint32_t(call));
        GSEARCH_CUDA_CHECK_LAUNCH();
        GSEARCH_CUDA_CHECK(cudaStreamSynchronize(res.stream));
      }
      cudaError_t e1 = cudaSuccess, e2 = cudaSuccess, e3 = cudaSuccess;
      const double ms = wall_ms([&] {
        launch(m, in, q, res.out.data(), res.stream);
        e1 = cudaStreamSynchronize(res.stream);
        e2 = cudaMemcpyAsync(res.host_out, res.out.data(), sizeof(int64_t), cudaMemcpyDeviceToHost, res.stream);
        e3 = cudaStreamSynchronize(res.stream);
      });
      GSEARCH_CUDA_CHECK_LAUNCH();
      GSEARCH_CUDA_CHECK(e1);
      GSEARCH_CUDA_CHECK(e2);
      GSEARCH_CUDA_CHECK(e3);
      GSEARCH_CUDA_CHECK(cudaMemcpy(res.host_out + 1, res.out.data() + 1, sizeof(int64_t), cudaMemcpyDeviceToHost));
      if (res.host_out[0] != in.expected(q)) ++mismatches;
      if (timed) cycles.push_back(double(res.host_out[1]));
      return ms;
    });
    const bench::summary c = bench::summarize(cycles);
    const bool ok = mismatches == 0;
    const char* cache = cold ? "cold" : "warm";
    const int n_steps = steps(m, in);
    const auto tail = [&](json& r) {
      r["lanes"] = m.lanes;
      r["steps"] = n_steps;
      r["repeat"] = a.repeat;
      r["mismatches"] = mismatches;
      if (std::string(m.option) == "index") r["index_bytes"] = in.index.memory_bytes();
    };
    json rk = {{"method", m.name}, {"key_type", key_traits<T>::name}, {"k", in.k}, {"timing", "kernel"}, {"cache", cache},
               {"median_cycles", c.median}, {"median_us", cycles_to_us(c.median)}, {"min_us", cycles_to_us(c.min)},
               {"max_us", cycles_to_us(c.max)}, {"verified", ok}, {"min_cycles", c.min}, {"max_cycles", c.max}};
    tail(rk);
    json re = {{"method", m.name}, {"key_type", key_traits<T>::name}, {"k", in.k}, {"timing", "end-to-end"},
               {"cache", cache}, {"median_us", t.median_ms * 1e3}, {"min_us", t.min_ms * 1e3},
               {"max_us", t.max_ms * 1e3}, {"verified", ok}};
    tail(re);
    std::printf("%-6s 2^%-3d %-16s %-5s %5d %10.0f %10.3f %10.3f %10.3f %10.3f  %s\n", key_traits<T>::name,
                int(std::lround(std::log2(double(in.k)))), m.name, cache, n_steps, c.median, cycles_to_us(c.median),
                cycles_to_us(c.max), t.median_ms * 1e3, t.max_ms * 1e3, ok ? "ok" : "WRONG");
    std::fflush(stdout);
    record(std::move(rk));
    record(std::move(re));
  }

  // %clock64 against %globaltimer over 20 ms: the SM clock the kernels ran at, about.
  double measured_clock_khz(resources& res) const {
    device_vector<long long> out(2);
    clock_calibration_kernel<<<1, 1, 0, res.stream>>>(20'000'000, out.data());
    GSEARCH_CUDA_CHECK_LAUNCH();
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(res.stream));
    long long host[2] = {0, 0};
    GSEARCH_CUDA_CHECK(cudaMemcpy(host, out.data(), sizeof(host), cudaMemcpyDeviceToHost));
    return host[1] > 0 ? double(host[0]) / double(host[1]) * 1e6 : 0.0;
  }

  void run() {
    report["results"] = json::array();
    report["failures"] = json::array();
    std::vector<const method_info*> methods;
    for (const std::string& m : a.methods) methods.push_back(&find_method(m));
    for (const std::string& c : a.caches)
      if (c != "warm" && c != "cold") throw invalid_argument("unknown cache " + c + " (warm, cold)");
    const int64_t flush_bytes = std::max<int64_t>(int64_t(100) << 20, 2 * dev.l2_bytes);
    resources res(flush_bytes);
    report["config"]["sm_clock_khz"] = clock_khz;
    report["config"]["measured_sm_clock_khz"] = measured_clock_khz(res);
    report["config"]["flush_bytes"] = flush_bytes;
    std::printf("SM clock %.0f MHz (cudaDevAttrClockRate; measured %.0f MHz), flush %lld MB\n", clock_khz / 1e3,
                report["config"]["measured_sm_clock_khz"].get<double>() / 1e3, (long long)(flush_bytes >> 20));
    std::printf("%-6s %-5s %-16s %-5s %5s %10s %10s %10s %10s %10s\n", "keys", "K", "method", "cache", "steps",
                "cycles", "kernel us", "max us", "e2e us", "e2e max");
    bench::host::for_each_keys(a.key_types, a.log_keys, [&]<class T>(int64_t k) {
      const inputs<T> in(k, a.seed);
      for (const method_info* m : methods)
        for (const std::string& c : a.caches) measure<T>(*m, in, res, c == "cold");
    });
  }
};

}  // namespace

int main(int argc, char** argv) {
  bench_args a;
  CLI::App app{"pary_bench: the response time of one query, P-ary search against one thread (issue 9)"};
  bench::add_common_options(app, a, "K = 2^10, 2^20, 20 runs", "Seed of the inputs");
  app.add_option("--log-keys", a.log_keys, "K = 2^x sorted keys")->delimiter(',')->check(CLI::Range(0, 31));
  app.add_option("--key-types", a.key_types, "int32, int64")->delimiter(',');
  app.add_option("--methods", a.methods, "binary, warp, block256, block1024, index")->delimiter(',');
  app.add_option("--caches", a.caches, "warm, cold (cold: L2 flushed before each run)")->delimiter(',');
  if (auto rc = bench::parse(app, argc, argv, a)) return *rc;
  if (a.quick) {
    a.log_keys = {10, 20};
    a.repeat = 20;
  }
  if (auto rc = bench::require_gpu("pary_bench", "pary")) return *rc;
  json report = bench::gpu_report("gsearch-bench-pary/1", a, cuda_device_properties(), bench::cccl_versions(nullptr));
  report["config"] = {{"log_keys", a.log_keys}, {"key_types", a.key_types}, {"methods", a.methods},
                      {"caches", a.caches}, {"repeat", a.repeat}, {"warmup", a.warmup}, {"seed", a.seed}};
  bench::print_banner("pary_bench", report);
  return bench::run_and_report<runner>("pary_bench", a, std::move(report));
}
