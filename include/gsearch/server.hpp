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
/// This first form is the CPU backend: the loop is a thread of its own, and each batch's
/// searches run on `threads` threads. The GPU's persistent kernel serves the same ring
/// (docs/design.md, "The search server").

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
};

/// Counts since the server started. Histograms by powers of two: entry i counts values in
/// [2^i, 2^(i+1)) (entry 0 also holds 0).
struct server_stats {
  int64_t requests = 0;  ///< answered search requests
  int64_t queries = 0;   ///< their queries
  int64_t batches = 0;   ///< batches served (a replace_keys is one)
  std::array<int64_t, 16> batch_requests{};  ///< batches by their request count
  std::array<int64_t, 32> latency_us{};      ///< search requests by round trip, microseconds
};

template <class T>
class server {
 public:
  using key_type = T;

  /// Starts the loop with a copy of `keys` (sorted in gsearch's order, else invalid_argument).
  server(const cpu_t& exec, span<const T> keys, const server_options& options = {});
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
    std::chrono::steady_clock::time_point start_;
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
  /// Refuses new requests, answers the ones submitted, stops the loop. Idempotent.
  void shutdown();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace gsearch
