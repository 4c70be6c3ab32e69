#pragma once
/// \file
/// A search server (seed 004 §3, issue 22): a key set kept resident and a loop that serves
/// search requests from many threads through a request ring (core/server_ring.hpp), instead of
/// a call (on the GPU: a kernel launch and a wait) per request. Requests that arrive together
/// are served together (a batch: consecutive searches, up to max_batch_requests and
/// max_batch_queries; with max_delay, the loop waits that long for preferred_batch_queries
/// queries before it serves a smaller batch, as Triton's dynamic batcher does).
///
///     gsearch::server<float> s(gsearch::cpu, keys);          // copies the keys (sorted: checked)
///     s.search(queries, gsearch::side::right, out);         // from any thread; blocks
///     auto r = s.submit(queries, gsearch::side::left, out); // or later: r.wait()
///     s.replace_keys(new_keys);                             // between batches: no request sees a mix
///     gsearch::server_stats st = s.stats();
///
/// Results equal gsearch::search's (numpy.searchsorted's: side::left / side::right; side::pred
/// too), int64. Backpressure: when the ring is full, submitters wait for a slot. shutdown() (and
/// the destructor) refuses new requests, answers every request submitted before it, then stops
/// the loop; it never waits for a caller. Bad requests (a count that does not match, an unknown
/// side) throw invalid_argument in the caller and never reach the loop.
///
/// Two backends serve the same ring (docs/design.md, "The search server"):
///  - gsearch::cpu: the loop is a thread of its own, each batch's searches run on `threads`
///    threads;
///  - gsearch::cuda: a persistent kernel (a cooperative grid of `blocks` blocks, its share of the
///    GPU) polls the ring in mapped pinned memory and searches a static index of the keys
///    (static_index.hpp) whose top levels it keeps in shared memory. Keys may be in device or
///    host memory (copied); queries and out in device memory, page-locked host memory (read and
///    written in place) or pageable host memory (copied through the slot's pinned staging, in
///    pieces of staging_queries; a request larger than that is served before submit returns).
///    The kernel reads device queries when it takes the request, ordered after no stream: the
///    caller makes sure they are written (synchronize the stream that wrote them; a cudaMemcpy
///    from pageable memory returns before its DMA has reached the device, so synchronize after
///    it too, or copy with cudaMemcpyAsync and synchronize that stream).
///    Idle for idle_release (2 ms by default; no sooner than 0.2 ms), the kernel leaves the
///    device, and the next request launches it again (some microseconds more for that one
///    request): an idle server holds no SM. While the kernel runs, calls that wait for the
///    whole device (cudaDeviceSynchronize, cudaFree, cudaFreeHost, torch.cuda.synchronize(),
///    torch.cuda.empty_cache()) wait until it has been idle for idle_release, and so does the
///    first launch of any kernel under CUDA's lazy module loading (the default; torch's and
///    cupy's kernels are loaded so): they wait for the requests to pause, not for ever. With
///    idle_release = 0 the kernel never leaves: they then wait for the server to stop (set
///    CUDA_MODULE_LOADING=EAGER before CUDA starts, launch what will run beside the server once
///    before it starts, synchronize streams, not the device). A CUDA error that poisons the
///    context fails every request in flight and every later one (error), and shutdown() still
///    returns.
///
/// A server belongs to the process that made it: its loop thread (its kernel) does not cross
/// fork(). In a fork child (Python's multiprocessing on Linux by default) every method, and a
/// request's wait, throws error naming the fork instead of waiting for ever, and the destructor
/// leaves the parent's server alone (the child's copy is leaked, not stopped); make servers in
/// the child. The check is a load and a compare per call (a pthread_atfork handler counts forks).

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>

#include "gsearch/core/algorithm.hpp"  // side
#include "gsearch/core/span.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

struct server_options {
  int64_t ring_slots = 256;                          ///< requests in flight at most (backpressure beyond)
  int64_t max_batch_requests = 256;                  ///< requests served together at most
  int64_t max_batch_queries = int64_t(1) << 22;      ///< their queries at most (a larger request alone)
  int64_t preferred_batch_queries = 0;               ///< with max_delay: wait for this many queries
  std::chrono::microseconds max_delay{0};            ///< ... at most this long after the first request
  int threads = 0;                                   ///< CPU: threads of each batch's searches (0: all)
  int blocks = 0;                                    ///< CUDA: the persistent grid's blocks, one an SM (0: half the SMs)
  int64_t staging_queries = 4096;                    ///< CUDA: per slot, pinned staging for pageable host queries
  std::chrono::nanoseconds idle_sleep{1000};         ///< CUDA: the idle loop's longest __nanosleep between polls
  /// CUDA: idle this long, the kernel leaves the device until the next request (0: never).
  std::chrono::nanoseconds idle_release{2'000'000};
};

/// Counts since the server started. Histograms by powers of two: entry i counts values in
/// [2^i, 2^(i+1)) (entry 0 also holds 0).
struct server_stats {
  int64_t requests = 0;  ///< answered search requests
  int64_t queries = 0;   ///< their queries
  int64_t batches = 0;   ///< batches served (a replace_keys is one)
  std::array<int64_t, 16> batch_requests{};  ///< batches by their request count
  std::array<int64_t, 32> latency_us{};      ///< search requests by round trip, microseconds
  /// Where the search requests' time went (sums, ns; a request in pieces counted once):
  int64_t host_submit_ns = 0;  ///< from the call to the request's publication (checks, staging)
  int64_t host_wait_ns = 0;    ///< from its publication to its answer seen
  int64_t host_finish_ns = 0;  ///< from the answer seen to the call's return (results copied out)
  /// CUDA: the kernel's part of the batches of one search request that block 0 served alone
  /// (sums, in cycles of its SM's clock; kernel_clock_khz, the device's clock rate, converts):
  int64_t kernel_timed_batches = 0;
  int64_t kernel_take_cycles = 0;   ///< from the poll that read the request to its search begun
  int64_t kernel_serve_cycles = 0;  ///< from the search begun to the answer stored
  int64_t kernel_clock_khz = 0;
  /// CUDA: the kernel's launches: 1, and one more each time a request found it gone from an
  /// idle device (server_options::idle_release).
  int64_t kernel_launches = 0;
  int64_t kernel_relaunch_ns = 0;  ///< CUDA: the host's time in those later launches (sum, ns)
};

template <class T>
class server {
 public:
  using key_type = T;

  /// Starts the loop with a copy of `keys` (sorted in gsearch's order, else invalid_argument).
  server(const cpu_t& exec, span<const T> keys, const server_options& options = {});
  /// Starts the persistent kernel on the current device with a static index of `keys` (device
  /// or host memory; sorted, else invalid_argument). exec's stream is not used by the server
  /// (it runs on a non-blocking stream of its own) but orders the build after the caller's work.
  server(const cuda_t& exec, span<const T> keys, const server_options& options = {});
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// A submitted request: wait() blocks until it is answered (and rethrows its error); the
  /// destructor waits too, since the loop writes into the caller's output.
  class request {
   public:
    request(request&& other) noexcept;
    request& operator=(request&&) = delete;
    ~request();
    bool ready() const;
    void wait();

   private:
    friend class server;
    request(server* owner, uint64_t ticket, int64_t queries);
    server* owner_;
    uint64_t ticket_;
    int64_t queries_;
    const int64_t* staged_ = nullptr;  // CUDA, pageable out: the results to copy back ...
    int64_t* out_ = nullptr;           // ... into the caller's array
    int64_t counted_ = 0;              // the queries the statistics count it for (-1: a piece, not counted)
    std::chrono::steady_clock::time_point start_, published_;  // the call, the (last piece's) publication
    bool waited_ = false;
  };

  /// out[i] = the search of queries[i] on side s in the current key set. Blocks.
  void search(span<const T> queries, side s, span<int64_t> out);
  /// The same, returned at once (the queries and out must stay alive until it is answered).
  request submit(span<const T> queries, side s, span<int64_t> out);
  /// Serves later requests from a copy of `keys` (sorted, else invalid_argument); returns once
  /// the loop has switched: every request submitted before saw the old keys, every one after
  /// sees the new ones.
  void replace_keys(span<const T> keys);

  server_stats stats() const;
  int64_t size() const;  ///< the current key set's length
  bool on_device() const;  ///< true for the CUDA server
  /// Refuses new requests, answers the ones submitted, stops the loop. Idempotent.
  void shutdown();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace gsearch
