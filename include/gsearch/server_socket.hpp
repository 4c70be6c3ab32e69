#pragma once
/// \file
/// The search server over a socket (issue 22): socket_server serves a gsearch::server<T> (either
/// backend) to other processes on a Unix-domain socket and / or on 127.0.0.1, in the protocol of
/// server_protocol.hpp; socket_client is the other end. `gsearch serve` / `gsearch client` and
/// Python's gsearch.Client are built on them (docs/design.md, "The socket protocol").
///
///     gsearch::server<float> s(gsearch::cpu, keys);
///     gsearch::socket_options o;
///     o.path = "/tmp/keys.sock";
///     gsearch::socket_server front(s, o);      // listening once constructed
///     ...                                      // other processes: socket_client("/tmp/keys.sock")
///     front.stop();                            // before s is shut down or destroyed
///
/// An accept loop and a thread per connection (at most max_connections: beyond, new connections
/// wait in the listen backlog). Each connection reads one request at a time: the header is checked
/// before the body is read (a request over max_queries is refused unread, and its connection
/// closed), the body is read into the connection's buffer, server.search runs on it (blocking:
/// requests of concurrent connections are batched by the server), and the response is written.
/// A malformed, truncated or wrong-dtype request gets an error response where the connection still
/// allows it and concerns its own connection only; a request must arrive whole within
/// request_timeout of its first byte (else its connection is closed), and an idle connection is
/// closed after idle_timeout. Writes never raise SIGPIPE (MSG_NOSIGNAL).
///
/// stop() (and the destructor) stops accepting, lets every connection finish the request it has
/// begun (it is answered: within stop_grace for its bytes to arrive), closes the connections and
/// removes the socket file. The server itself is left running: shut it down afterwards.
/// A failure of the server's loop (server.search throws gsearch::error other than a refusal: on
/// the GPU a CUDA error, which poisons the context) is answered with status 5 and recorded
/// (failed(), failure()): the server fails every later request too, so the process should exit
/// and be restarted (`gsearch serve` exits non-zero).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/dtype.hpp"
#include "gsearch/core/error.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/server.hpp"
#include "gsearch/server_protocol.hpp"

namespace gsearch {

struct socket_options {
  /// A Unix-domain socket path (empty: none). A stale socket file there is replaced; a path where
  /// a server answers, or that is not a socket, is refused (invalid_argument).
  std::string path;
  /// A TCP port on 127.0.0.1 only (-1: none; 0: any free port, see socket_server::port()).
  int port = -1;
  int64_t max_queries = protocol::default_max_queries;  ///< per request; more: status 3, unread
  int max_connections = 128;                            ///< connections served at once
  std::chrono::milliseconds request_timeout{30000};     ///< a request's bytes, from its first one
  std::chrono::milliseconds idle_timeout{0};            ///< between requests (0: never closed)
  std::chrono::milliseconds stop_grace{5000};           ///< stop(): for requests begun to arrive
  /// A connection's thread polls its socket without sleeping this long (yielding its core to
  /// any thread that waits for one) before it blocks for the next request's bytes: a blocked
  /// thread's wake-up costs several us on each side of a round trip (docs/perf-notes.md,
  /// "Search server"). 0: block at once.
  std::chrono::microseconds spin{50};
};

/// How long socket_client polls for an answer without sleeping before it blocks (the server's
/// socket_options::spin, on the client's side).
inline constexpr std::chrono::microseconds default_client_spin{100};

/// What a socket_server did since it started.
struct socket_stats {
  int64_t connections = 0;  ///< accepted
  int64_t requests = 0;     ///< answered ok
  int64_t errors = 0;       ///< error responses sent, and requests cut short (truncated, timed out)
};

class socket_server {
 public:
  /// Listens (bound and listening when it returns; throws invalid_argument for bad options or a
  /// path in use, error when a socket call fails) and serves `s`, which must outlive stop().
  template <class T>
  socket_server(server<T>& s, const socket_options& options)
      : socket_server(dtype_of<T>(), s.size(),
                      [&s](const void* queries, int64_t n, side sd, int64_t* out) {
                        s.search(span<const T>(static_cast<const T*>(queries), n), sd, span<int64_t>(out, n));
                      },
                      options) {}
  /// The type-erased form: `search(queries, n, side, out)` searches n queries of type `keys`.
  using search_fn = std::function<void(const void* queries, int64_t n, side s, int64_t* out)>;
  socket_server(dtype keys, int64_t key_count, search_fn search, const socket_options& options);
  ~socket_server();
  socket_server(const socket_server&) = delete;
  socket_server& operator=(const socket_server&) = delete;

  /// Stops accepting, answers the requests begun, closes every connection, removes the socket
  /// file (if it is still the one bound). Idempotent. In a fork child of the process that made
  /// it, throws error (its threads are the parent's) and the destructor leaves the parent's
  /// front end (its stop pipe, its socket file) alone.
  void stop();

  const std::string& path() const;  ///< the Unix-domain socket's path ("" if none)
  int port() const;                 ///< the TCP port bound (-1 if none)
  dtype key_dtype() const;
  bool failed() const;          ///< whether the server's loop failed (status 5 was answered)
  std::string failure() const;  ///< its message ("" if none)
  socket_stats stats() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// An error response of a gsearch server (socket_client::search): its status and message.
class socket_error : public error {
 public:
  socket_error(protocol::status s, const std::string& what) : error(what), status_(s) {}
  protocol::status status() const noexcept { return status_; }

 private:
  protocol::status status_;
};

/// One connection to a gsearch server, opened on the first request and again after an error
/// response or a closed connection (a search is idempotent, so a request that met a connection
/// the server had closed while it was idle is sent again once). Not thread-safe: one per thread.
class socket_client {
 public:
  /// A Unix-domain socket path. `timeout`: for an answer (0: none); `spin`: how long to poll for
  /// the answer before blocking (0: block at once).
  explicit socket_client(std::string path, std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                         std::chrono::microseconds spin = default_client_spin);
  /// 127.0.0.1:port.
  explicit socket_client(int port, std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                         std::chrono::microseconds spin = default_client_spin);
  ~socket_client();
  socket_client(socket_client&& other) noexcept;
  socket_client& operator=(socket_client&&) = delete;
  socket_client(const socket_client&) = delete;

  /// out[i] = the server's search of queries[i] on side s. Throws socket_error for an error
  /// response (naming the server's message) and error when the server cannot be reached, closes
  /// the connection or answers something that is not the protocol.
  template <class T>
  void search(span<const T> queries, side s, span<int64_t> out) {
    search(dtype_of<T>(), queries.data(), queries.size(), s, out);
  }
  void search(dtype t, const void* queries, int64_t n, side s, span<int64_t> out);
  void close();
  std::string address() const;  ///< the path, or "127.0.0.1:port"

 private:
  void connect();
  std::string path_;
  int port_ = -1;
  std::chrono::milliseconds timeout_;
  std::chrono::microseconds spin_;
  int fd_ = -1;
};

}  // namespace gsearch
