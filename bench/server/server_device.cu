// server_bench's CUDA side (server_device.hpp): pinned memory, a stream and an event pair, the
// one-query peers of the latency part and the bare mapped-memory ping-pong floor. Every peer runs
// with no server beside it (the runner sees to that): thrust and the graph's instantiation may
// allocate and free, and the floor wants the GPU to itself.

#include <cuda_runtime.h>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <thrust/version.h>

#include <atomic>
#include <chrono>
#include <cuda/atomic>
#include <stdexcept>
#include <string>

#include "cuda/check.cuh"
#include "gsearch/gsearch.hpp"
#include "server_device.hpp"

namespace gsearch::bench::server_bench::dev {

using clock_type = std::chrono::steady_clock;

// ---- memory, streams, events ------------------------------------------------------------------

void* pinned_alloc(size_t bytes) {
  void* p = nullptr;
  GSEARCH_CUDA_CHECK(cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocMapped | cudaHostAllocPortable));
  return p;
}
void pinned_free(void* p) noexcept {
  if (p) (void)cudaFreeHost(p);
}

void copy_async(CUstream_st* s, void* dst, const void* src, size_t bytes) {
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
}

stream::stream() { GSEARCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
stream::~stream() {
  if (s_) (void)cudaStreamDestroy(s_);
}
void stream::sync() const { GSEARCH_CUDA_CHECK(cudaStreamSynchronize(s_)); }

timer::timer() {
  cudaEvent_t a, b;
  GSEARCH_CUDA_CHECK(cudaEventCreate(&a));
  GSEARCH_CUDA_CHECK(cudaEventCreate(&b));
  start_ = a;
  stop_ = b;
}
timer::~timer() {
  (void)cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  (void)cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}
void timer::start(CUstream_st* s) { GSEARCH_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(start_), s)); }
void timer::stop(CUstream_st* s) { GSEARCH_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(stop_), s)); }
bool timer::done() const {
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(stop_));
  if (e == cudaErrorNotReady) return false;
  GSEARCH_CUDA_CHECK(e);
  return true;
}
double timer::ms() const {
  float ms = 0;
  GSEARCH_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)));
  return ms;
}

std::string thrust_version() {
  return std::to_string(THRUST_MAJOR_VERSION) + "." + std::to_string(THRUST_MINOR_VERSION) + "." +
         std::to_string(THRUST_SUBMINOR_VERSION);
}

// ---- the one-query peers ----------------------------------------------------------------------

const char* peer_name(peer p) {
  switch (p) {
    case peer::launch: return "launch";
    case peer::copy_launch: return "copy+launch";
    case peer::graph: return "graph";
    case peer::thrust: return "thrust";
  }
  return "?";
}

const char* peer_call(peer p) {
  switch (p) {
    case peer::launch: return "gsearch::search(cuda.on(s)) of 1 device query + cudaStreamSynchronize";
    case peer::copy_launch: return "H2D copy + gsearch::search + D2H copy + cudaStreamSynchronize";
    case peer::graph: return "cudaGraphLaunch(H2D copy + gsearch::search + D2H copy) + cudaStreamSynchronize";
    case peer::thrust: return "thrust::upper_bound(par.on(s)) of 1 device query + cudaStreamSynchronize";
  }
  return "?";
}

namespace {

// A peer's buffers: the first `n` pool queries on the device (launch and thrust read query i
// there, so that no copy sits in their round trip) with an output slot each, and one pinned
// query and answer (the copy forms write the query there, as a caller with a host value would).
template <class T>
struct peer_buffers {
  int64_t n;
  device_vector<T> queries;
  device_vector<int64_t> out;
  T* host_query;
  int64_t* host_out;
  stream s;

  peer_buffers(const peer_inputs<T>& in, int64_t n_)
      : n(n_), queries(span<const T>(in.pool, n_)), out(n_),
        host_query(static_cast<T*>(pinned_alloc(sizeof(T)))),
        host_out(static_cast<int64_t*>(pinned_alloc(sizeof(int64_t)))) {}
  ~peer_buffers() {
    pinned_free(host_query);
    pinned_free(host_out);
  }
};

// One search of the query at d_query into d_out on s (stream-ordered).
template <class T>
void search_one(const peer_inputs<T>& in, CUstream_st* s, const T* d_query, int64_t* d_out) {
  gsearch::search(gsearch::cuda.on(s), side::right, span<const T>(in.keys_dev, in.k), span<const T>(d_query, 1),
                  span<int64_t>(d_out, 1));
}

// The copy forms' work for one request: the pinned query to the device, the search, the answer
// back to pinned memory.
template <class T>
void copy_search_copy(const peer_inputs<T>& in, peer_buffers<T>& b) {
  copy_async(b.s.get(), b.queries.data(), b.host_query, sizeof(T));
  search_one(in, b.s.get(), b.queries.data(), b.out.data());
  copy_async(b.s.get(), b.host_out, b.out.data(), sizeof(int64_t));
}

// A CUDA graph of copy_search_copy, captured once, launched per request.
struct graph_exec {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~graph_exec() {
    if (exec) (void)cudaGraphExecDestroy(exec);
    if (graph) (void)cudaGraphDestroy(graph);
  }
};

template <class T>
void capture(const peer_inputs<T>& in, peer_buffers<T>& b, graph_exec& g) {
  GSEARCH_CUDA_CHECK(cudaStreamBeginCapture(b.s.get(), cudaStreamCaptureModeThreadLocal));
  try {
    copy_search_copy(in, b);
  } catch (...) {
    (void)cudaStreamEndCapture(b.s.get(), &g.graph);
    (void)cudaGetLastError();
    throw;
  }
  GSEARCH_CUDA_CHECK(cudaStreamEndCapture(b.s.get(), &g.graph));
  GSEARCH_CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
}

}  // namespace

template <class T>
std::vector<double> one_query_peer(peer p, const peer_inputs<T>& in, int64_t requests, int64_t warmup, bool& ok,
                                   std::string& note) {
  const int64_t n = std::min(in.pool_n, std::max<int64_t>(requests + warmup, 1));
  peer_buffers<T> b(in, n);
  graph_exec g;
  if (p == peer::graph) {
    try {
      capture(in, b, g);
    } catch (const std::exception& e) {  // a search that cannot be captured: no row, and why
      note = std::string("not captured: ") + e.what();
      return {};
    }
  }
  note = p == peer::thrust ? "thrust " + thrust_version()
                           : "gsearch algo " + std::string(to_string(resolve_algorithm(gsearch::cuda, algorithm::auto_,
                                                                                      int(sizeof(T)), in.k, 1)));
  ok = true;
  std::vector<double> ns;
  ns.reserve(static_cast<size_t>(requests));
  for (int64_t r = 0; r < warmup + requests; ++r) {
    const int64_t i = r % n;
    const auto t0 = clock_type::now();
    switch (p) {
      case peer::launch: search_one(in, b.s.get(), b.queries.data() + i, b.out.data() + i); break;
      case peer::thrust:
        thrust::upper_bound(thrust::cuda::par.on(b.s.get()), in.keys_dev, in.keys_dev + in.k, b.queries.data() + i,
                            b.queries.data() + i + 1, b.out.data() + i);
        break;
      case peer::copy_launch: *b.host_query = in.pool[i]; copy_search_copy(in, b); break;
      case peer::graph: *b.host_query = in.pool[i]; GSEARCH_CUDA_CHECK(cudaGraphLaunch(g.exec, b.s.get())); break;
    }
    b.s.sync();
    const auto t1 = clock_type::now();
    if (r >= warmup) ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    if ((p == peer::copy_launch || p == peer::graph) && *b.host_out != in.expected[i]) ok = false;
  }
  if (p == peer::launch || p == peer::thrust) {  // every slot written at least once: check them all
    std::vector<int64_t> got(static_cast<size_t>(n));
    b.out.copy_to(span<int64_t>(got));
    for (int64_t i = 0; i < n; ++i) ok = ok && got[size_t(i)] == in.expected[i];
  }
  return ns;
}

template std::vector<double> one_query_peer<float>(peer, const peer_inputs<float>&, int64_t, int64_t, bool&,
                                                   std::string&);
template std::vector<double> one_query_peer<int32_t>(peer, const peer_inputs<int32_t>&, int64_t, int64_t, bool&,
                                                     std::string&);

// ---- the ping-pong floor ----------------------------------------------------------------------

namespace {

constexpr uint64_t pingpong_stop = ~uint64_t(0);

// One thread spins on *ping and echoes every new value to *pong, until it reads pingpong_stop.
// No __nanosleep: the floor is the fastest a poller can answer.
__global__ void pingpong_kernel(uint64_t* ping, uint64_t* pong) {
  cuda::atomic_ref<uint64_t, cuda::thread_scope_system> in(*ping), out(*pong);
  uint64_t seen = 0;
  for (;;) {
    const uint64_t v = in.load(cuda::memory_order_acquire);
    if (v == seen) continue;
    out.store(v, cuda::memory_order_release);
    if (v == pingpong_stop) return;
    seen = v;
  }
}

// Sends v and waits for its echo; false after `limit` without one (the kernel is not running).
bool ping(uint64_t* ping_word, uint64_t* pong_word, uint64_t v, std::chrono::milliseconds limit) {
  std::atomic_ref<uint64_t>(*ping_word).store(v, std::memory_order_release);
  const std::atomic_ref<uint64_t> pong(*pong_word);
  const auto start = clock_type::now();
  for (int spins = 0; pong.load(std::memory_order_acquire) != v; ++spins)
    if ((spins & 1023) == 0 && clock_type::now() - start > limit) return false;
  return true;
}

}  // namespace

std::vector<double> pingpong(int64_t requests, int64_t warmup, bool& ok) {
  auto* words = static_cast<uint64_t*>(pinned_alloc(128));  // ping and pong on cache lines of their own
  uint64_t* ping_word = words;
  uint64_t* pong_word = words + 8;
  *ping_word = *pong_word = 0;
  uint64_t *d_ping = nullptr, *d_pong = nullptr;
  stream s;
  GSEARCH_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d_ping), ping_word, 0));
  GSEARCH_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d_pong), pong_word, 0));
  pingpong_kernel<<<1, 1, 0, s.get()>>>(d_ping, d_pong);
  GSEARCH_CUDA_CHECK(cudaGetLastError());
  std::vector<double> ns;
  ns.reserve(static_cast<size_t>(requests));
  ok = ping(ping_word, pong_word, 1, std::chrono::milliseconds(10000));  // the launch itself
  for (int64_t r = 0; ok && r < warmup + requests; ++r) {
    const auto t0 = clock_type::now();
    ok = ping(ping_word, pong_word, uint64_t(r) + 2, std::chrono::milliseconds(1000));
    const auto t1 = clock_type::now();
    if (r >= warmup) ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  std::atomic_ref<uint64_t>(*ping_word).store(pingpong_stop, std::memory_order_release);
  s.sync();
  pinned_free(words);
  if (!ok) throw std::runtime_error("pingpong: the polling kernel did not answer");
  return ns;
}

}  // namespace gsearch::bench::server_bench::dev
