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
/// An event loop (epoll) holds every connection: an idle connection costs a file descriptor and
/// a small record, no thread and no buffer. A request's bytes are read as they arrive (its header
/// is checked first: a request over max_queries is refused unread and its connection closed),
/// into a buffer that grows with them; once whole it goes to one of `workers` threads, which
/// calls server.search (requests of concurrent connections are batched by the server) and
/// writes the response. A worker keeps its connection for `spin` after answering (then for
/// `hold`, blocked), so that a client's next request costs no hand-over; else the connection goes
/// back to the loop, its buffers released. Memory is the server's to bound: every request body and response buffer
/// held counts against max_bytes_in_flight (a request that needs more than all of it is
/// refused, status 3; beyond it, connections wait for bytes to be freed). At max_connections (or
/// a Unix-socket peer's max_connections_per_peer) a new connection is answered "busy" (status 6)
/// and closed at once.
/// A malformed, truncated or wrong-dtype request gets an error response where the connection still
/// allows it and concerns its own connection only; a request must arrive whole within
/// request_timeout of its first byte (else its connection is closed), and an idle connection is
/// closed after idle_timeout. Writes never raise SIGPIPE (MSG_NOSIGNAL).
///
/// Who can connect: the Unix-domain socket is created with socket_mode (0600: this user only;
/// 0660 and a `group`: that group's members too); over TCP (127.0.0.1) every local user can. A
/// client can learn the whole key set by searching it. One server per path: a lock file beside
/// the socket ("PATH.lock", left in place) is held while it serves, so that a stale socket is
/// replaced only by the one server that holds it.
///
/// stop() (and the destructor) stops accepting, lets every connection finish the request it has
/// begun (its bytes must arrive within stop_grace; a response begun is written whole, within
/// request_timeout), closes the connections and removes the socket file. The server itself is
/// left running: shut it down afterwards.
/// A failure of the server's loop (server.search throws gsearch::error other than a refusal: on
/// the GPU a CUDA error, which poisons the context) is answered with status 5 and recorded
/// (failed(), failure()): the server fails every later request too, so the process should exit
/// and be restarted (`gsearch serve` exits non-zero). A request that finds no memory is answered
/// "busy" (status 6): the server is still healthy.

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
  /// a server answers (or whose lock another server holds), or that is not a socket, is refused
  /// (invalid_argument).
  std::string path;
  /// A TCP port on 127.0.0.1 only (-1: none; 0: any free port, see socket_server::port()). Every
  /// local user can connect to it.
  int port = -1;
  /// The Unix-domain socket's permission bits (0600: the server's user only). Set before it listens.
  unsigned socket_mode = 0600;
  /// The Unix-domain socket's group, by name ("": the process's); with socket_mode 0660 its
  /// members can connect.
  std::string group;
  /// Queries a request may hold (at most protocol::max_queries_limit); more: status 3, unread.
  int64_t max_queries = protocol::default_max_queries;
  /// Queries a request through a connection's shared-memory ring may hold (at most max_queries).
  /// A client of the Unix-domain socket may open one ring on its connection (socket_client does,
  /// on its first request): its requests of up to this many queries then go through memory that
  /// a worker watches, no system call on the round trip (larger ones over the socket). A ring
  /// takes (itemsize + 8) x ring_queries bytes (and a few hundred) while its connection is open,
  /// apart from max_bytes_in_flight (held for so long, it could leave requests waiting for ever).
  /// 0: no rings.
  int64_t ring_queries = int64_t(1) << 14;
  /// Rings open at once (256 KB each for int64 keys by default: 16 MB at most); beyond, a
  /// connection's opening is answered with no ring and its client goes on over the socket.
  int max_rings = 64;
  /// Bytes of request bodies and responses held at once, every connection together.
  int64_t max_bytes_in_flight = int64_t(1) << 30;
  int max_connections = 1024;  ///< open at once (idle ones included); beyond: "busy" and closed
  /// Per peer user (SO_PEERCRED, on the Unix-domain socket; TCP peers are not known); 0: half of
  /// max_connections, so that no one user can lock the others out.
  int max_connections_per_peer = 0;
  /// Threads that take whole requests to the server (each one request at a time): the most
  /// requests searched at once (0: 64).
  int workers = 0;
  std::chrono::milliseconds request_timeout{30000};  ///< a request's bytes, from its first one
  std::chrono::milliseconds idle_timeout{60000};     ///< between requests (0: never closed)
  std::chrono::milliseconds stop_grace{5000};        ///< stop(): for requests begun to arrive
  /// After answering, a worker polls its connection without sleeping this long (yielding its
  /// core to any thread that waits for one) for the client's next request before it hands the
  /// connection back to the event loop: a blocked thread's wake-up costs several us on each side
  /// of a round trip (docs/perf-notes.md, "Search server"). The event loop polls as long after
  /// its last event. 0: never.
  std::chrono::microseconds spin{50};
  /// After the spin, a worker waits this long more for its connection's next request, blocked in
  /// poll() (no core), while no more than half of the workers do so: with the spin 0 (or a client
  /// slower than it), a round trip then costs one wake-up, not two hand-overs through the event
  /// loop. An idle connection holds a worker at most this long. 0: never.
  std::chrono::milliseconds hold{10};
};

/// How long socket_client polls for an answer without sleeping before it blocks (the server's
/// socket_options::spin, on the client's side).
inline constexpr std::chrono::microseconds default_client_spin{100};

/// What a socket_server did since it started.
struct socket_stats {
  int64_t connections = 0;  ///< accepted
  int64_t requests = 0;     ///< answered ok
  int64_t errors = 0;       ///< error responses sent, and requests cut short (truncated, timed out)
  int64_t busy = 0;         ///< connections and requests answered "busy" (status 6)
  int64_t open = 0;         ///< connections open now
  int64_t bytes_in_flight = 0;       ///< request and response bytes held now
  int64_t peak_bytes_in_flight = 0;  ///< ... at most, since the start
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
/// the server had closed while it was idle, before any byte of an answer, is sent again once; a
/// request that timed out is not). Not thread-safe: one per thread.
///
/// On a Unix-domain socket the client asks, on the first request of each connection, for a
/// shared-memory ring of the first request's dtype (socket_options::ring_queries): requests of
/// that dtype and of up to the ring's capacity then go through it (a round trip with no system
/// call while the server's worker watches the ring; a doorbell over the socket when none does),
/// the others over the socket. Where the server offers none (TCP, its limit of rings), the
/// client goes on over the socket.
class socket_client {
 public:
  /// A Unix-domain socket path. `timeout`: one deadline for a whole request, from the connect to
  /// the last byte of the answer (0: none); `spin`: how long to poll for the answer before
  /// blocking (0: block at once); `use_ring`: whether to ask for the shared-memory ring (false: every
  /// request over the socket).
  explicit socket_client(std::string path, std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                         std::chrono::microseconds spin = default_client_spin, bool use_ring = true);
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
  /// Queries a request may hold to go through the connection's ring (0: no ring open).
  int64_t ring_capacity() const;

 private:
  struct ring;  // the connection's shared-memory ring (socket_client.cpp)
  using time_point = std::chrono::steady_clock::time_point;
  void connect(time_point deadline);
  bool open_ring(dtype t, time_point deadline);
  bool search_ring(const void* queries, int64_t n, side s, span<int64_t> out, time_point deadline, bool retry);
  std::string past_timeout(const char* what) const;  ///< "WHAT within the timeout (N ms)"
  error broken(const std::string& what);             ///< closes; the error naming the server
  socket_error refused(protocol::status s, const std::string& message);  ///< closes; the server's error answer
  std::string path_;
  int port_ = -1;
  std::chrono::milliseconds timeout_;
  std::chrono::microseconds spin_;
  bool want_ring_ = false;
  int fd_ = -1;
  std::unique_ptr<ring> ring_;
};

}  // namespace gsearch
