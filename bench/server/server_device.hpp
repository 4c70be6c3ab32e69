#pragma once
// server_bench's CUDA side behind a plain C++ interface, so that the benchmark's other files
// need no CUDA headers and the program also builds without CUDA (then --device cpu only):
// server_device.cu implements it, server_device_none.cpp (a build without CUDA) throws.
//
// What lives here: page-locked host memory, a non-blocking stream and an event pair (the
// interference part times other work beside the server with them), and the one-query peers of
// the latency part (a launch + sync of gsearch::search, the same with the copies, a CUDA graph
// of that, thrust::upper_bound, and the bare mapped-memory ping-pong floor).
//
// While a persistent server kernel runs, nothing here may wait for the whole device: no
// cudaDeviceSynchronize, no cudaFree, no cudaFreeHost (each would wait for the server to stop,
// which it never does by itself). The runner allocates before it starts a server and frees
// after it destroyed it; streams are synchronized one by one.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct CUstream_st;

namespace gsearch::bench::server_bench::dev {

/// cudaHostAlloc (page-locked, mapped: the server reads and writes it in place) / cudaFreeHost.
void* pinned_alloc(size_t bytes);
void pinned_free(void* p) noexcept;

/// Any-direction copy on `s` (cudaMemcpyAsync, cudaMemcpyDefault), not waited for.
void copy_async(CUstream_st* s, void* dst, const void* src, size_t bytes);

/// A stream that does not synchronize with the legacy default stream.
class stream {
 public:
  stream();
  ~stream();
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  CUstream_st* get() const { return s_; }
  void sync() const;  ///< cudaStreamSynchronize

 private:
  CUstream_st* s_ = nullptr;
};

/// Two CUDA events around work on a stream, polled rather than waited for: work beside a server
/// that holds every SM might never start, and the caller must be able to give up on it.
class timer {
 public:
  timer();
  ~timer();
  timer(const timer&) = delete;
  timer& operator=(const timer&) = delete;
  void start(CUstream_st* s);
  void stop(CUstream_st* s);
  bool done() const;  ///< the stop event has completed (cudaEventQuery)
  double ms() const;  ///< cudaEventElapsedTime, once done()

 private:
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

/// The one-query peers of the latency part (one thread, no server running).
enum class peer {
  launch,       ///< gsearch::search of one device-resident query into device memory + stream sync
  copy_launch,  ///< the query from pinned host memory: H2D copy, gsearch::search, D2H copy, sync
  graph,        ///< copy_launch captured once as a CUDA graph; cudaGraphLaunch + sync per request
  thrust,       ///< thrust::upper_bound(thrust::cuda::par.on(s)) of one device-resident query + sync
};
const char* peer_name(peer p);
/// What the row's "call" says the peer runs.
const char* peer_call(peer p);

/// The inputs of a peer: sorted keys in device memory, a pool of host queries and their answers
/// (side right, as the server is asked).
template <class T>
struct peer_inputs {
  const T* keys_dev;
  int64_t k;
  const T* pool;
  const int64_t* expected;
  int64_t pool_n;
};

/// `warmup` untimed and `requests` timed round trips of the peer, each timed on the host's steady
/// clock (nanoseconds, in order). `ok` is false when an answer differs from `expected`; `note`
/// gets what the row should say (gsearch's resolved algorithm). No round trips (an empty vector)
/// when the graph could not be captured; `note` then says why.
template <class T>
std::vector<double> one_query_peer(peer p, const peer_inputs<T>& in, int64_t requests, int64_t warmup, bool& ok,
                                   std::string& note);

/// The floor: a kernel of one thread polls a word of mapped pinned memory (cuda::atomic_ref at
/// system scope, acquire loads) and answers each new sequence number with a release store to
/// another word, which the host polls. Round trips in nanoseconds; ok false on a wrong echo.
std::vector<double> pingpong(int64_t requests, int64_t warmup, bool& ok);

/// The toolkit's thrust version ("3.0.1"), for the report.
std::string thrust_version();

}  // namespace gsearch::bench::server_bench::dev
