#pragma once
/// \file
/// The socket front end's state (src/server/socket_server.cpp: the event loop, the listening
/// sockets and the public calls; src/server/socket_requests.cpp: a connection's steps, the
/// memory budget, the ring and the workers). docs/design.md, "The socket front end".
///
/// A connection is a record and a state (phase) and belongs to one thread at a time: the loop, or
/// the worker it was handed to (then it is not armed in epoll, and the loop does not touch it).
/// Both advance it with the same non-blocking steps (read_some, write_some). Only the loop
/// accepts, arms, parks and closes, so that no fd is closed under a worker. Workers hand
/// connections back through a queue and an eventfd. Private to those two files.

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fork.hpp"
#include "gsearch/server_socket.hpp"
#include "socket_common.hpp"
#include "socket_connection.hpp"
#include "socket_listen.hpp"

namespace gsearch {

using namespace socket_detail;  // (a private header: the two files of socket_server::impl only)

struct socket_server::impl {
  detail::made_in_process made;  // a fork child's copy must not stop the parent's
  dtype keys;
  int64_t key_count;
  search_fn search;
  socket_options o;
  int unix_fd = -1, tcp_fd = -1, port = -1, lock_fd = -1, epoll_fd = -1, wake_fd = -1, spare_fd = -1;
  int stop_fd = -1;  // readable once stop() is called: for the workers that hold a connection
  dev_t unix_dev = 0;
  ino_t unix_ino = 0;
  std::thread loop_thread;
  std::vector<std::thread> workers;

  // Between the loop and the workers.
  std::mutex m;
  std::condition_variable work_cv;
  std::deque<connection*> work;       // whole requests, for the workers
  std::vector<connection*> returned;  // connections the workers hand back
  bool quit = false;                  // the workers end (after the loop has)
  int n_workers = 0;
  std::atomic<int> holding{0};        // workers waiting for their connection's next request (hold)
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> stop_deadline{0};  // clock ticks: when requests begun stop waiting for bytes
  std::atomic<int64_t> held{0}, peak{0};  // the memory budget's bytes in use
  std::atomic<bool> budget_freed{false};  // the loop retries the parked connections
  std::atomic<int64_t> n_parked{0};       // how many: bytes freed wake the loop only when some wait
  std::string failure;                    // m
  std::atomic<bool> failed{false};
  std::atomic<int64_t> n_rings{0};        // open (max_rings)
  std::atomic<int64_t> n_connections{0}, n_requests{0}, n_errors{0}, n_busy{0}, n_open{0};
  std::mutex stop_mutex;
  bool stopped = false;

  // The loop's own.
  std::unordered_map<int, std::unique_ptr<connection>> conns;  // every open connection, by fd
  std::map<uid_t, int> per_peer;
  std::deque<connection*> parked;
  size_t lingering = 0;

  ~impl() {
    for (int fd : {unix_fd, tcp_fd, lock_fd, epoll_fd, wake_fd, spare_fd, stop_fd})
      if (fd >= 0) ::close(fd);
  }

  int max_per_peer() const {
    return o.max_connections_per_peer > 0 ? o.max_connections_per_peer : std::max(1, o.max_connections / 2);
  }

  // ---- listening (socket_listen.cpp) ---------------------------------------------------------

  void listen_unix(const std::string& path);

  void remove_socket_file() { socket_detail::remove_socket_file(o.path, unix_dev, unix_ino); }

  void close_listeners();

  // ---- the memory budget ----------------------------------------------------------------------

  // A request's bytes (its body and its response) are reserved whole when its body's first byte
  // arrives, or not at all: requests that each hold part of what they need could wait for each
  // other for ever. The buffers are then allocated as the bytes arrive, within the reservation.
  bool reserve(connection& c, int64_t bytes);

  void unreserve(connection& c) {
    if (c.reserved == 0) return;
    held.fetch_sub(std::exchange(c.reserved, 0));
    if (n_parked.load() > 0 && !budget_freed.exchange(true)) wake();  // the loop retries the parked requests
  }

  void no_memory(connection& c) {
    answer_error(c, protocol::status::busy,
                 "out of host memory for " + std::to_string(c.v.count) + " queries: try again later", true);
  }

  // ---- a connection's steps (the loop's and the workers') -------------------------------------

  void answer_error(connection& c, protocol::status s, const std::string& message, bool close);

  enum class step { more, whole, respond, closed, parked };

  // Reads what has arrived of the request: its header (checked at once), then its body (or drops
  // the body of a request refused with its connection kept). Never blocks.
  step read_some(connection& c);

  step checked_header(connection& c);

  // ---- the ring (socket_ring.hpp) --------------------------------------------------------------

  // The ring's opening (op 16): a ring for this connection, its memfd passed with the answer (ok,
  // its capacity); or none (ok, capacity 0: the client goes on over the socket). Rings are
  // counted apart from the requests' budget (max_rings): a ring is held while its connection is
  // open, and rings that took the budget could leave a request waiting for it for ever.
  step open_ring(connection& c);

  // A doorbell (op 17): the ring holds a request that no worker watched for (or held one that a
  // worker answered since).
  step doorbell(connection& c) {
    c.head_got = 0;
    c.ph = phase::idle;
    c.deadline = after(o.idle_timeout);
    return take_ring_request(c) ? step::whole : step::more;
  }

  // Whether the ring holds a request not answered yet (then it is the one to search), between
  // requests on the socket.
  bool take_ring_request(connection& c);

  void drop_ring(connection& c) {
    if (c.ring) n_rings.fetch_sub(1);
    c.ring.reset();
  }

  // The body is whole: the response's buffer, then the search (by a worker).
  step whole(connection& c);

  // A recv that returned r <= 0 in the middle of `part`.
  step ended(connection& c, ssize_t r, const char* part, size_t got, size_t want);

  // Ready for the next request on the connection (a response was sent whole).
  void next_request(connection& c);

  time_point stop_time() const { return time_point(clock_type::duration(stop_deadline.load())); }

  // ---- the workers ----------------------------------------------------------------------------

  // The server's search of n queries: ok, or the status and message of its failure.
  protocol::status run_search(const void* queries, int64_t n, side sd, int64_t* out, std::string& message);

  // Searches a whole request and prepares its response.
  void search_request(connection& c);

  // Searches the ring's request and answers it there (ring_mapping::request, answer).
  void search_ring(connection& c);

  // A worker serves its connection while it has whole requests: searched, answered, and for
  // `spin` after each answer the next one read, if it comes. Anything that would wait longer
  // goes back to the loop.
  void serve(connection& c);

  // The client's next request (or the rest of one begun): read if it comes within the spin
  // (recv without sleeping: no poll before it), else, after a hold, within the spin after it.
  // A connection with a ring: the ring is looked at between reads of the socket (16 looks to a
  // read), and says meanwhile that a worker watches it (no doorbell needed); it stops saying so
  // before the worker stops looking, and is looked at once more after.
  step await_request(connection& c);

  // Waits in poll() (no core) for `hold` for bytes of c, while no more than half of the workers
  // do so: a client in a loop of round trips then costs one wake-up a request, not a hand-over to
  // the loop and from it (2x the round trip with both ends blocking, docs/perf-notes.md), and an
  // idle connection holds a worker no longer than that. Whether bytes came.
  bool hold(connection& c);

  void worker();

  void wake() {
    const uint64_t one = 1;
    while (write(wake_fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }

  // ---- the loop -------------------------------------------------------------------------------

  // Waits for one event of c. An event of a connection not armed (a hang-up epoll reports
  // unasked, of one parked or with a worker) is dropped: each connection is advanced from one
  // place at a time.
  void arm(connection& c, uint32_t events);

  // Registers a new connection, not armed.
  void add(connection& c) {
    epoll_event e{};
    e.events = EPOLLONESHOT;
    e.data.fd = c.fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c.fd, &e);
  }

  void close_connection(connection& c);

  // Shuts the writing side and drops what the client still sends for a moment, then closes: a
  // close with unread bytes would reset the connection, and the client could lose the answer.
  void linger(connection& c);

  // Waits for bytes of the budget: retried (in order) whenever some are freed. Counted before the
  // budget is looked at again, so that no release between the two goes unseen.
  void park(connection& c) {
    parked.push_back(&c);
    n_parked.store(int64_t(parked.size()));
    if (held.load() + int64_t(need_of(c.v)) <= o.max_bytes_in_flight) budget_freed.store(true);
  }

  // Advances a connection the loop holds until it must wait for the socket, a worker or memory.
  void advance(connection& c);

  void accept_from(int listener);

  int peer_connections(uid_t uid) const {
    const auto it = per_peer.find(uid);
    return it == per_peer.end() ? 0 : it->second;
  }

  void refuse_busy(int fd, const std::string& why) {
    n_busy.fetch_add(1, std::memory_order_relaxed);
    const std::string b = protocol::encode_error(protocol::status::busy, why + ": try again later");
    (void)!send(fd, b.data(), b.size(), MSG_NOSIGNAL | MSG_DONTWAIT);  // small: the socket takes it
  }

  // A refused connection lingers (so that its client reads "busy"), unless too many do.
  void close_refused(std::unique_ptr<connection> c);

  // Deadlines of the connections the loop holds (the workers' are theirs).
  void sweep();

  void expire(connection& c, bool stopping_now);

  void retry_parked();

  void take_returned();

  bool workers_busy() {
    std::lock_guard<std::mutex> lock(m);
    return !work.empty() || !returned.empty();
  }

  void loop();

  void add_to_epoll(int fd) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &e) != 0) fail_sys("gsearch socket: epoll_ctl");
  }
};

}  // namespace gsearch
