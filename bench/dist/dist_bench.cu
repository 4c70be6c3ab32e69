// dist_bench: the distributed operations (gsearch/dist.hpp) over NCCL on the GPUs of one machine,
// one rank per GPU (a thread each, ncclCommInitAll), at 1, 2, 4, ... GPUs: weak scaling (the same
// work per GPU) or strong (the same work in all), beside the roofline of the exchanges, NCCL's own
// all-to-all measured in the same run. Every configuration is verified (inputs whose answers are
// known in closed form). One JSON report (bench/README.md's schema, with the source commit).
//
//   dist_bench --ops all --scaling weak --json dist_weak.json
//
// Time of a run: the ranks start together (a barrier), each runs the operation and waits for its
// stream; the run's time is the slowest rank's. Median of --repeat runs after --warmup.

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "gsearch/dist/nccl.hpp"
#include "gsearch/gsearch.hpp"
#include "report.hpp"

namespace gsearch::bench {
namespace {

struct args : common_args {
  args() : common_args(10, 2) {}
  std::string ops = "all", scaling = "weak";
  int64_t keys = int64_t{1} << 27, queries = int64_t{1} << 27, data = int64_t{1} << 28;
  int64_t sort_total = int64_t{1} << 31, join_rows = int64_t{1} << 26, alltoall_bytes = int64_t{1} << 30;
  int max_gpus = 0;
};

#define CHECK_CUDA(x)                                                                            \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_ != cudaSuccess) throw std::runtime_error(std::string(#x) + ": " + cudaGetErrorName(e_)); \
  } while (0)

// ---- inputs with answers in closed form -------------------------------------------------------

__device__ __forceinline__ uint32_t mix(uint64_t x) {  // splitmix64's finalizer, 32 bits of it
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return uint32_t((x ^ (x >> 31)) >> 1);  // below 2^31: a non-negative int32
}

// keys[i] = 2 * (first + i): sorted, lower_bound(q) = (q + 1) / 2 for q in [0, 2 * total).
__global__ void even_keys(int32_t* k, int64_t n, int64_t first) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    k[i] = int32_t(2 * (first + i));
}
// k[i] = first + i.
__global__ void iota_keys(int32_t* k, int64_t n, int64_t first) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    k[i] = int32_t(first + i);
}
// x[i] = a hash of (seed, first + i) below `range`.
__global__ void hashed(int32_t* x, int64_t n, int64_t first, uint64_t seed, int64_t range) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = int32_t(mix(seed * 0x100000001b3ull + uint64_t(first + i)) % uint64_t(range));
}
// x[i] += add.
__global__ void add_to(int32_t* x, int64_t n, int32_t add) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] += add;
}
// Counts the wrong answers of a search of hashed queries against even_keys from index `base`
// (left side).
__global__ void check_search(const int32_t* q, const int64_t* out, int64_t n, int64_t base,
                             unsigned long long* wrong) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if (out[i] != (int64_t(q[i]) + 1) / 2 - base) atomicAdd(wrong, 1ull);
}
// Counts the wrong answers of isin against the tests {0, 2, 4, ..., 2 * (m - 1)}.
__global__ void check_isin(const int32_t* x, const bool* out, int64_t n, int64_t m, unsigned long long* wrong) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if (out[i] != (x[i] % 2 == 0 && x[i] < 2 * m)) atomicAdd(wrong, 1ull);
}

constexpr int grid = 1024, block = 256;

// ---- the ranks --------------------------------------------------------------------------------

/// One rank: its GPU, stream and communicator.
struct rank_state {
  int rank = 0, size = 1;
  cudaStream_t stream = nullptr;
  std::unique_ptr<dist::communicator> comm;
  cuda_t exec() const { return cuda.on(stream); }
};

template <class T>
struct buffer {  // device memory, freed with the rank
  T* p = nullptr;
  int64_t n = 0;
  explicit buffer(int64_t count) : n(count) { CHECK_CUDA(cudaMalloc(&p, size_t(std::max<int64_t>(n, 1)) * sizeof(T))); }
  buffer(const buffer&) = delete;
  ~buffer() { cudaFree(p); }
  span<T> view() const { return {p, n}; }
  span<const T> cview() const { return {p, n}; }
};

/// A configuration of one operation at one GPU count: prepare (untimed, per rank) returns the
/// timed body and its check (true: verified).
struct work {
  std::function<void()> run;
  std::function<bool()> verify;
};
using prepare_fn = std::function<work(rank_state&)>;

/// Runs `prepare` on `gpus` ranks and times the body: the median of the slowest rank's times,
/// and whether every rank verified.
std::pair<timing, bool> run_on(int gpus, const args& a, const prepare_fn& prepare) {
  std::vector<ncclComm_t> comms(static_cast<size_t>(gpus));
  std::vector<int> devices(static_cast<size_t>(gpus));
  for (int g = 0; g < gpus; ++g) devices[size_t(g)] = g;
  if (ncclCommInitAll(comms.data(), gpus, devices.data()) != ncclSuccess) throw std::runtime_error("ncclCommInitAll failed");
  const int runs = a.warmup + a.repeat;
  std::vector<double> slowest(size_t(runs), 0.0);
  std::vector<double> times(size_t(gpus) * size_t(runs));
  std::atomic<bool> ok{true};
  std::barrier sync(gpus);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(gpus));
  for (int g = 0; g < gpus; ++g)
    threads.emplace_back([&, g] {
      try {
        CHECK_CUDA(cudaSetDevice(g));
        rank_state r;
        r.rank = g;
        r.size = gpus;
        CHECK_CUDA(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
        r.comm = dist::make_nccl_communicator(comms[size_t(g)]);
        {
          work w = prepare(r);
          CHECK_CUDA(cudaDeviceSynchronize());
          for (int i = 0; i < runs; ++i) {
            sync.arrive_and_wait();
            const auto t0 = std::chrono::steady_clock::now();
            w.run();
            CHECK_CUDA(cudaStreamSynchronize(r.stream));
            times[size_t(i) * size_t(gpus) + size_t(g)] =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            if (i == 0 && !w.verify()) ok = false;
          }
        }
        r.comm.reset();
        cudaStreamDestroy(r.stream);
      } catch (...) {
        errors[size_t(g)] = std::current_exception();
        ok = false;
      }
    });
  for (auto& t : threads) t.join();
  for (auto c : comms) ncclCommDestroy(c);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<double> timed;
  for (int i = a.warmup; i < runs; ++i)
    timed.push_back(*std::max_element(times.begin() + int64_t(i) * gpus, times.begin() + int64_t(i + 1) * gpus));
  const auto s = summarize(timed);
  timing t;
  t.median_ms = s.median;
  t.min_ms = s.min;
  t.max_ms = s.max;
  t.runs_ms = timed;
  return {t, ok.load()};
}

unsigned long long count_wrong(const std::function<void(unsigned long long*)>& launch) {
  unsigned long long* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, 8));
  CHECK_CUDA(cudaMemset(d, 0, 8));
  launch(d);
  unsigned long long h = 0;
  CHECK_CUDA(cudaMemcpy(&h, d, 8, cudaMemcpyDeviceToHost));
  cudaFree(d);
  return h;
}

// ---- the operations ---------------------------------------------------------------------------

/// Batched search (lower_bound) of `q` hashed queries per GPU against keys {0, 2, 4, ...}:
/// replicated (every GPU all `k_total` keys) or sharded (each GPU its range of k_total / gpus).
/// `high`: one process, keys and queries K above (values [2K, 4K)): the local search of a rank
/// that owns the upper half, alone.
prepare_fn search_op(int64_t k_total, int64_t q, bool sharded, bool single_process = false, bool high = false) {
  return [=](rank_state& r) {
    const int64_t per = sharded ? k_total / r.size : k_total;
    const int64_t first = sharded ? per * r.rank : high ? k_total : 0;
    auto keys = std::make_shared<buffer<int32_t>>(per);
    auto queries = std::make_shared<buffer<int32_t>>(q);
    auto out = std::make_shared<buffer<int64_t>>(q);
    even_keys<<<grid, block, 0, r.stream>>>(keys->p, per, first);
    hashed<<<grid, block, 0, r.stream>>>(queries->p, q, q * r.rank, 7, 2 * k_total);
    if (high) add_to<<<grid, block, 0, r.stream>>>(queries->p, q, int32_t(2 * k_total));
    work w;
    w.run = [=, &r] {
      if (single_process) {
        lower_bound(r.exec(), keys->cview(), queries->cview(), out->view());
      } else {
        dist::search(r.exec(), *r.comm, side::left, keys->cview(), queries->cview(), out->view(),
                     sharded ? dist::layout::sharded : dist::layout::replicated);
      }
    };
    w.verify = [=, &r] {
      return count_wrong([&](unsigned long long* d) {
               check_search<<<grid, block, 0, r.stream>>>(queries->p, out->p, q, high ? k_total : 0, d);
               CHECK_CUDA(cudaStreamSynchronize(r.stream));
             }) == 0;
    };
    return w;
  };
}

/// count (a full scan) of a value planted once at the global end of `n` hashed values per GPU.
prepare_fn find_op(int64_t n) {
  return [=](rank_state& r) {
    auto data = std::make_shared<buffer<int32_t>>(n);
    hashed<<<grid, block, 0, r.stream>>>(data->p, n, n * r.rank, 11, int64_t{1} << 30);
    const int32_t needle = (1 << 30) + 5;
    if (r.rank == r.size - 1) CHECK_CUDA(cudaMemcpyAsync(data->p + n - 1, &needle, 4, cudaMemcpyHostToDevice, r.stream));
    CHECK_CUDA(cudaStreamSynchronize(r.stream));
    auto result = std::make_shared<std::pair<int64_t, int64_t>>(-2, -2);
    work w;
    w.run = [=, &r] {
      result->first = dist::find(r.exec(), *r.comm, find_mode::first, data->cview(), equal_to(needle));
      result->second = dist::find(r.exec(), *r.comm, find_mode::count, data->cview(), equal_to(needle));
    };
    w.verify = [=, &r] { return result->first == n * r.size - 1 && result->second == 1; };
    return w;
  };
}

/// isin of `n` hashed values per GPU against the m tests {0, 2, ..., 2(m - 1)}: replicated
/// (every GPU all of them) or sharded (each GPU its range).
prepare_fn isin_op(int64_t n, int64_t m, bool replicated) {
  return [=](rank_state& r) {
    auto data = std::make_shared<buffer<int32_t>>(n);
    const int64_t per = replicated ? m : m / r.size, all = replicated ? m : per * r.size;
    auto tests = std::make_shared<buffer<int32_t>>(per);
    auto out = std::make_shared<buffer<bool>>(n);
    hashed<<<grid, block, 0, r.stream>>>(data->p, n, n * r.rank, 13, 4 * m);
    even_keys<<<grid, block, 0, r.stream>>>(tests->p, per, replicated ? 0 : per * r.rank);
    work w;
    w.run = [=, &r] {
      dist::isin(r.exec(), *r.comm, data->cview(), tests->cview(), out->view(), {},
                 replicated ? dist::layout::replicated : dist::layout::sharded);
    };
    w.verify = [=, &r] {
      return count_wrong([&](unsigned long long* d) {
               check_isin<<<grid, block, 0, r.stream>>>(data->p, out->p, n, all, d);
               CHECK_CUDA(cudaStreamSynchronize(r.stream));
             }) == 0;
    };
    return w;
  };
}

/// Sample sort of `n` hashed int32 per GPU: every rank's part sorted, the parts in order, none lost.
prepare_fn sort_op(int64_t n) {
  return [=](rank_state& r) {
    auto data = std::make_shared<buffer<int32_t>>(n);
    hashed<<<grid, block, 0, r.stream>>>(data->p, n, n * r.rank, 17, int64_t{1} << 31);
    // The output, allocated once (a rank receives about n; more only if the splitters miss).
    auto out = std::make_shared<std::shared_ptr<buffer<int32_t>>>(std::make_shared<buffer<int32_t>>(n + n / 4 + 4096));
    auto got = std::make_shared<int64_t>(0);
    work w;
    w.run = [=, &r] {
      *got = dist::sort(r.exec(), *r.comm, data->cview(), [&](int64_t c) {
        if (c > (*out)->n) *out = std::make_shared<buffer<int32_t>>(c);
        return (*out)->p;
      });
    };
    w.verify = [=, &r] {
      const auto& o = **out;
      bool ok = is_sorted(r.exec(), span<const int32_t>(o.p, *got));
      int32_t ends[2] = {INT32_MAX, INT32_MIN};  // first, last (an empty part: no constraint)
      if (*got > 0) {
        CHECK_CUDA(cudaMemcpy(&ends[0], o.p, 4, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(&ends[1], o.p + *got - 1, 4, cudaMemcpyDeviceToHost));
      }
      std::vector<int32_t> all(size_t(2 * r.size));
      std::vector<int64_t> counts(size_t(r.size));
      r.comm->allgather_host(ends, 8, all.data(), r.stream);
      r.comm->allgather_host(got.get(), 8, counts.data(), r.stream);
      int64_t total = 0;
      int32_t last = INT32_MIN;
      for (int k = 0; k < r.size; ++k) {
        total += counts[size_t(k)];
        if (counts[size_t(k)] == 0) continue;
        ok = ok && all[size_t(2 * k)] >= last;
        last = all[size_t(2 * k + 1)];
      }
      return ok && total == n * r.size;
    };
    return w;
  };
}

/// Inner join of `n` rows per GPU each side: left keys hashed into [0, N) (N = n * gpus, with
/// duplicates), right keys 0 .. N - 1 once each, spread over the ranks: every left row matches
/// exactly one right row, so the join has N rows in all, and row i's right key is its left key.
prepare_fn join_op(int64_t n) {
  return [=](rank_state& r) {
    auto left = std::make_shared<buffer<int32_t>>(n), right = std::make_shared<buffer<int32_t>>(n);
    const int64_t total = n * r.size;
    hashed<<<grid, block, 0, r.stream>>>(left->p, n, n * r.rank, 19, total);
    iota_keys<<<grid, block, 0, r.stream>>>(right->p, n, n * r.rank);
    auto rows = std::make_shared<int64_t>(0);
    // The gather maps, allocated once (a rank's rows are about n: every left row matches once).
    auto maps = std::make_shared<std::shared_ptr<buffer<int64_t>>>(std::make_shared<buffer<int64_t>>(2 * (n + n / 4 + 4096)));
    work w;
    w.run = [=, &r] {
      *rows = dist::join(r.exec(), *r.comm, join_kind::inner, left->cview(), right->cview(), [&](int64_t c) {
        if (2 * c > (*maps)->n) *maps = std::make_shared<buffer<int64_t>>(2 * c);
        return gsearch::join_output{(*maps)->p, (*maps)->p + (*maps)->n / 2};
      });
    };
    w.verify = [=, &r] {
      std::vector<int64_t> all(size_t(r.size));
      r.comm->allgather_host(rows.get(), 8, all.data(), r.stream);
      int64_t sum = 0;
      for (int64_t x : all) sum += x;
      return sum == total;
    };
    return w;
  };
}

/// NCCL's all-to-all of `bytes` per GPU in equal parts, through the communicator: the roofline.
prepare_fn alltoall_op(int64_t bytes) {
  return [=](rank_state& r) {
    auto send = std::make_shared<buffer<char>>(bytes), recv = std::make_shared<buffer<char>>(bytes);
    auto counts = std::make_shared<std::vector<int64_t>>(size_t(r.size), bytes / r.size);
    work w;
    w.run = [=, &r] { r.comm->alltoallv(send->p, counts->data(), recv->p, counts->data(), r.stream); };
    w.verify = [] { return true; };
    return w;
  };
}

}  // namespace
}  // namespace gsearch::bench

int main(int argc, char** argv) {
  using namespace gsearch::bench;
  args a;
  CLI::App app{"dist_bench: the distributed operations over NCCL, 1 to all GPUs (one rank each)"};
  add_common_options(app, a, "Small sizes (a smoke test)", "Unused (the inputs are closed-form)");
  app.add_option("--ops", a.ops, "Comma-separated: alltoall, search_replicated, search_sharded, find, isin, sort, join, overhead, or all");
  app.add_option("--scaling", a.scaling, "weak (sizes per GPU) or strong (sizes in all)")->check(CLI::IsMember({"weak", "strong"}));
  app.add_option("--keys", a.keys, "Search keys (per GPU for weak; the replicated set is this many)");
  app.add_option("--queries", a.queries, "Search queries per GPU (weak) or in all (strong)");
  app.add_option("--data", a.data, "find / isin elements per GPU (weak) or in all (strong)");
  app.add_option("--sort-total", a.sort_total, "Sort: keys in all (strong) or per GPU (weak)");
  app.add_option("--join-rows", a.join_rows, "Join: rows per side per GPU (weak) or in all (strong)");
  app.add_option("--max-gpus", a.max_gpus, "At most this many GPUs (0: all)");
  if (auto rc = parse(app, argc, argv, a)) return *rc;
  if (auto rc = require_gpu("dist_bench", "dist")) return *rc;
  if (a.quick) {
    a.keys = a.queries = a.data = 1 << 20;
    a.sort_total = a.join_rows = 1 << 20;
    a.alltoall_bytes = 1 << 24;
  }
  const int devices = gsearch::cuda_device_count();
  const int most = a.max_gpus > 0 ? std::min(a.max_gpus, devices) : devices;
  std::vector<int> counts;
  for (int g = 1; g <= most; g *= 2) counts.push_back(g);
  if (counts.back() != most) counts.push_back(most);
  const bool weak = a.scaling == "weak";
  auto wants = [&](const char* op) { return a.ops == "all" || ("," + a.ops + ",").find(std::string(",") + op + ",") != std::string::npos; };

  json report = {{"schema", "gsearch-bench-dist-1"}, {"synthetic", false}, {"command", a.command_line},
                 {"source", source_json()}, {"device", device_json(gsearch::cuda_device_properties())},
                 {"gpus", devices}, {"scaling", a.scaling}, {"nccl_version", NCCL_VERSION_CODE},
                 {"results", json::array()}};
  int problems = 0;
  std::map<int, double> roof_gbps;  // per GPU count: the all-to-all's bytes per GPU per second
  auto record = [&](const std::string& op, int g, const prepare_fn& prep, double items, double exchanged_bytes,
                    const json& extra) {
    try {
      const auto [t, ok] = run_on(g, a, prep);
      json row = {{"op", op}, {"gpus", g}, {"ms", t.median_ms}, {"ms_min", t.min_ms}, {"ms_max", t.max_ms},
                  {"runs", t.runs_ms.size()}, {"items", items}, {"items_per_s", items / (t.median_ms * 1e-3)},
                  {"verified", ok}};
      if (exchanged_bytes > 0 && roof_gbps.count(g)) {
        const double roof_ms = exchanged_bytes / (roof_gbps[g] * 1e9) * 1e3;
        row["alltoall_roofline_ms"] = roof_ms;
        row["pct_alltoall_roofline"] = 100.0 * roof_ms / t.median_ms;
      }
      row.update(extra);
      std::printf("%-18s gpus %d  %9.3f ms  %8.3f G items/s  %s\n", op.c_str(), g, t.median_ms,
                  items / (t.median_ms * 1e-3) / 1e9, ok ? "verified" : "WRONG");
      std::fflush(stdout);
      if (!ok) ++problems;
      report["results"].push_back(row);
    } catch (const std::exception& e) {
      std::printf("%-18s gpus %d  failed: %s\n", op.c_str(), g, e.what());
      report["results"].push_back({{"op", op}, {"gpus", g}, {"error", e.what()}});
      ++problems;
    }
  };
  for (int g : counts) {
    if (g > 1 && (wants("alltoall") || wants("search_sharded") || wants("sort") || wants("join"))) {
      const auto [t, ok] = run_on(g, a, alltoall_op(a.alltoall_bytes));
      roof_gbps[g] = double(a.alltoall_bytes) / (t.median_ms * 1e-3) / 1e9;
      report["results"].push_back({{"op", "alltoall"}, {"gpus", g}, {"ms", t.median_ms}, {"bytes_per_gpu", a.alltoall_bytes},
                                   {"algbw_gbps", roof_gbps[g]},
                                   {"busbw_gbps", roof_gbps[g] * (g - 1) / g}});
      std::printf("alltoall           gpus %d  %9.3f ms  %8.1f GB/s per GPU (bus %0.1f)\n", g, t.median_ms, roof_gbps[g],
                  roof_gbps[g] * (g - 1) / g);
    }
    const double share = weak ? 1.0 : 1.0 / g;  // a GPU's part of a size
    const int64_t q = int64_t(double(a.queries) * share), d = int64_t(double(a.data) * share);
    if (wants("overhead") && g == 1) {
      record("search_single", 1, search_op(a.keys, q, false, true), double(q), 0, {{"keys", a.keys}});
      record("search_dist_1", 1, search_op(a.keys, q, false), double(q), 0, {{"keys", a.keys}});
      record("search_single_high", 1, search_op(a.keys, q, false, true, true), double(q), 0, {{"keys", a.keys}});
    }
    if (wants("search_replicated"))
      record("search_replicated", g, search_op(a.keys, q, false), double(q) * g, 0, {{"keys", a.keys}});
    if (wants("search_sharded")) {
      const int64_t k_total = weak ? a.keys * g : a.keys;
      // Each query goes out and its answer back unless it stays: 4 + 8 bytes, (g - 1) / g of them.
      record("search_sharded", g, search_op(k_total, q, true), double(q) * g, 12.0 * q * (g - 1) / g,
             {{"keys", k_total}});
    }
    if (wants("find")) record("find", g, find_op(d), double(d) * g, 0, json::object());
    if (wants("isin")) {
      record("isin_replicated", g, isin_op(d, int64_t{1} << 16, true), double(d) * g, 0, {{"tests", 1 << 16}});
      record("isin_sharded", g, isin_op(d, int64_t{1} << 16, false), double(d) * g, 0, {{"tests", 1 << 16}});
    }
    if (wants("sort")) {
      const int64_t per = weak ? a.sort_total : a.sort_total / g;
      record("sort", g, sort_op(per), double(per) * g, 4.0 * per * (g - 1) / g, {{"keys", per * g}});
    }
    if (wants("join")) {
      const int64_t per = weak ? a.join_rows : a.join_rows / g;
      record("join", g, join_op(per), double(per) * 2 * g, 24.0 * per * (g - 1) / g, {{"rows_per_side", per * g}});
    }
  }
  if (!a.json_path.empty()) write_json(a.json_path, report);
  return problems ? 3 : 0;
}
