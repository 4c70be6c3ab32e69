#pragma once
// server_bench's runner, shared by its translation units (server_bench.cpp: the rows, the table,
// the targets, main(); server_latency.cpp: the inputs, the latency part and the peers;
// server_throughput.cpp: the throughput part, the one-shot rates and the batcher;
// server_interference.cpp: other work beside the server; server_socket.cpp: the Unix socket).
// What it measures and writes: server_bench.cpp's header comment and bench/README.md. Host code
// only (the CUDA side is behind server_device.hpp), so that a build without CUDA has it too.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_host.hpp"
#include "gsearch/gsearch.hpp"
#include "gsearch/server.hpp"
#include "report.hpp"
#include "server_device.hpp"

namespace gsearch::bench::server_bench {

using bench::json;
using clock_type = std::chrono::steady_clock;

template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "float32" : "int32";
}

/// "2^27" for powers of two from 1024, else the decimal number.
inline std::string n_text(int64_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) return "2^" + std::to_string(63 - __builtin_clzll(uint64_t(n)));
  return std::to_string(n);
}

// ---- memory -----------------------------------------------------------------------------------

/// Where a request's queries and results sit: pageable host memory ("pageable"; on the CPU
/// server, where nothing else exists, "host"), page-locked host memory, or device memory.
enum class mem { pageable, host, pinned, device };
const char* mem_name(mem m);
mem mem_from(const std::string& s);

/// `bytes` of memory of one kind, freed by the destructor (which, for pinned and device memory,
/// must not run while a CUDA server runs: cudaFree and cudaFreeHost wait for the whole device).
class buffer {
 public:
  buffer(mem m, size_t bytes);
  ~buffer();
  buffer(buffer&& o) noexcept;
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  buffer& operator=(buffer&&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  mem kind() const { return m_; }
  /// Host data in (out): a copy for device memory, memcpy otherwise.
  void upload(const void* src, size_t bytes);
  void download(void* dst, size_t bytes) const;

 private:
  mem m_;
  void* p_ = nullptr;
};

// ---- arguments --------------------------------------------------------------------------------

struct args : bench::common_args {
  args() : common_args(5, 1) {}
  std::string device = "cuda";
  std::vector<std::string> parts{"latency", "peers", "throughput", "batcher", "interference", "socket"};
  std::vector<std::string> key_types{"float32"};
  std::vector<int> log_keys{20, 27};
  std::vector<int> threads{1, 4, 16};               // latency: submitting threads
  int64_t requests = 0;                             // latency: timed round trips per thread (0: 20000; quick 2000)
  int64_t warmup_requests = 0;                      // ... untimed ones first (0: 1000; quick 200)
  std::vector<std::string> memory;                  // latency: pinned,pageable (cuda); host (cpu)
  std::vector<std::string> throughput_memory;       // throughput: pinned,device (cuda); host (cpu)
  std::vector<int64_t> batches;                     // queries per request (0: 1,64,4096,32768,2^20)
  std::vector<int> throughput_threads{1, 16};
  double window_ms = 0;                             // one throughput window (0: 300; quick 60)
  int blocks = 0;                                   // the server's blocks (0: its default)
  double idle_release_us = -1;                      // server_options::idle_release (< 0: its default)
  std::vector<std::string> batcher{"0:0", "20:4096", "200:65536"};  // max_delay_us:preferred_batch_queries
  std::vector<std::string> shares{"1/8", "1/2", "all"};              // interference: the server's SMs
  std::vector<std::string> workloads{"search", "copy"};              // interference: the other work
  int interference_log_keys = 0;                    // 0: the smallest of --log-keys
  std::vector<int> socket_spin_us{0, 50};           // socket: each front end's socket_options::spin
  int64_t pool = 0;                                 // distinct queries per case (0: 2^22; quick 2^18)

  bool has(const char* part) const { return std::find(parts.begin(), parts.end(), part) != parts.end(); }
  bool on_cuda() const { return device == "cuda"; }
};

// ---- inputs -----------------------------------------------------------------------------------

/// One key set and a pool of queries with their answers (side right): keys are
/// gsearch::gen::sorted_keys<T>(k, seed) (bench/README.md, "Same inputs everywhere"), the pool
/// gen::random_queries_from_keys(keys, k, pool, seed + 1).
template <class T>
struct inputs {
  int64_t k = 0;
  std::vector<T> keys;
  std::vector<T> pool;
  std::vector<int64_t> expected;
};
template <class T>
inputs<T> make_inputs(int64_t k, int64_t pool_n, uint64_t seed);

// ---- latency statistics -----------------------------------------------------------------------

/// Round-trip times of many requests (nanoseconds), summarized in microseconds.
struct percentiles {
  int64_t n = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};
percentiles summarize_ns(std::vector<double> ns);

/// n threads run body(t) together: each waits at a latch until all are started, so that none
/// gets a head start; `meanwhile` (if any) runs on the calling thread once they are released
/// (the throughput windows sleep there, then raise their stop flag). Returns the seconds from
/// the release to the last join. An exception of a body is rethrown after the join.
double run_threads(int n, const std::function<void(int)>& body, const std::function<void()>& meanwhile = {});

/// Per submitting thread, a query buffer and an output buffer of `capacity` elements in one
/// kind of memory. Allocated before a server starts and freed after it stopped (see buffer).
struct thread_buffers {
  int64_t capacity = 0;
  std::vector<buffer> queries, out;
  thread_buffers(mem m, int threads, int64_t capacity_, size_t key_bytes) : capacity(capacity_) {
    for (int t = 0; t < threads; ++t) {
      queries.emplace_back(m, size_t(capacity) * key_bytes);
      out.emplace_back(m, size_t(capacity) * sizeof(int64_t));
    }
  }
};
using buffer_set = std::vector<std::pair<mem, thread_buffers>>;
/// The buffers of `kind` in `set` (throws when there are none).
thread_buffers& buffers_of(buffer_set& set, mem kind);

// ---- the benchmark ----------------------------------------------------------------------------

struct runner {
  args a;
  json report;
  int problems = 0;
  int sms = 0;  // the device's SMs (cuda)

  explicit runner(args a_);

  // Rows and the table (server_bench.cpp).
  /// A row with every field, those that do not apply null.
  json row(const char* part, const std::string& impl, const std::string& call, const char* dtype, int64_t k) const;
  void print(const json& r) const;
  /// Records a row (and a failure when it is not verified).
  void add(json r);
  /// Records an exception thrown by one configuration (it counts as a failure).
  void error(const json& r, const std::exception& e);
  /// A configuration that could not run here, and why (not a failure).
  void skip(const json& r, const std::string& why);
  static void set_latency(json& r, const percentiles& p);

  /// The server of this run's device over `keys` (host) / `keys_dev` (device, cuda), with
  /// --blocks and options o.
  template <class T>
  std::unique_ptr<server<T>> start_server(const inputs<T>& in, const T* keys_dev, server_options o) const;
  server_options base_options() const;

  // The parts, per key type and K (server_latency.cpp, server_throughput.cpp).
  template <class T>
  void keys_case(int64_t k);
  template <class T>
  void peers_part(const inputs<T>& in, const T* keys_dev);
  /// One-query round trips from each of `threads` counts, in each kind of memory.
  template <class T>
  void latency_part(server<T>& s, const inputs<T>& in, buffer_set& bufs, const json& base,
                    const std::vector<int>& threads, const std::vector<mem>& kinds);
  template <class T>
  void oneshot_part(const inputs<T>& in, const T* keys_dev);
  /// Requests of each batch size from each of `threads` counts, in each kind of memory, for
  /// --warmup + --repeat windows of --window-ms.
  template <class T>
  void throughput_part(server<T>& s, const inputs<T>& in, buffer_set& bufs, const json& base,
                       const std::vector<int64_t>& batches, const std::vector<int>& threads,
                       const std::vector<mem>& kinds);
  template <class T>
  void batcher_part(const inputs<T>& in, const T* keys_dev);
  template <class T>
  void interference_part();  // server_interference.cpp
  void socket_part();        // server_socket.cpp

  std::vector<mem> latency_memory() const;
  std::vector<mem> throughput_memory() const;

  // Targets (server_bench.cpp).
  std::vector<const json*> find(const json& want) const;
  void targets();
  void run();
};

}  // namespace gsearch::bench::server_bench
