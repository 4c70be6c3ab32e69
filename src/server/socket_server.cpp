// The search server's socket front end (server_socket.hpp): one event loop (epoll) holds every
// connection, a pool of workers takes whole requests to the server. docs/design.md, "The socket
// front end".
//
// A connection is a record and a state (phase) and belongs to one thread at a time: the loop, or
// the worker it was handed to (then it is not armed in epoll, and the loop does not touch it).
// Both advance it with the same non-blocking steps (read_some, write_some). Only the loop
// accepts, arms, parks and closes, so that no fd is closed under a worker. Workers hand
// connections back through a queue and an eventfd.

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
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

using namespace socket_detail;

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

  void listen_unix(const std::string& path) {
    unix_listener l = socket_detail::listen_unix(path, o.socket_mode, o.group);
    unix_fd = l.fd;
    lock_fd = l.lock_fd;
    unix_dev = l.dev;
    unix_ino = l.ino;
  }

  void remove_socket_file() { socket_detail::remove_socket_file(o.path, unix_dev, unix_ino); }

  void close_listeners() {
    for (int* fd : {&unix_fd, &tcp_fd})
      if (*fd >= 0) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, *fd, nullptr);
        ::close(std::exchange(*fd, -1));
      }
    remove_socket_file();
  }

  // ---- the memory budget ----------------------------------------------------------------------

  // A request's bytes (its body and its response) are reserved whole when its body's first byte
  // arrives, or not at all: requests that each hold part of what they need could wait for each
  // other for ever. The buffers are then allocated as the bytes arrive, within the reservation.
  bool reserve(connection& c, int64_t bytes) {
    int64_t now = held.load();
    do {
      if (now + bytes > o.max_bytes_in_flight) return false;
    } while (!held.compare_exchange_weak(now, now + bytes));
    c.reserved = bytes;
    int64_t p = peak.load();
    while (now + bytes > p && !peak.compare_exchange_weak(p, now + bytes)) {
    }
    return true;
  }

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

  void answer_error(connection& c, protocol::status s, const std::string& message, bool close) {
    (s == protocol::status::busy ? n_busy : n_errors).fetch_add(1, std::memory_order_relaxed);
    c.error_response = protocol::encode_error(s, message);
    c.sending = reinterpret_cast<const uint8_t*>(c.error_response.data());
    c.send_left = c.error_response.size();
    c.close_after = close;
    c.ph = phase::write;
    c.deadline = after(o.request_timeout);
  }

  enum class step { more, whole, respond, closed, parked };

  // Reads what has arrived of the request: its header (checked at once), then its body (or drops
  // the body of a request refused with its connection kept). Never blocks.
  step read_some(connection& c) {
    for (;;) {
      if (c.ph == phase::idle || c.ph == phase::header) {
        const ssize_t r = take(c, c.head + c.head_got, sizeof c.head - c.head_got, true);
        if (r <= 0) return ended(c, r, "header", c.head_got, sizeof c.head);
        if (c.ph == phase::idle) {
          c.ph = phase::header;
          c.deadline = after(o.request_timeout);  // a request must arrive whole within this time
          if (stopping.load()) c.deadline = std::min(c.deadline, stop_time());
        }
        c.head_got += size_t(r);
        if (c.head_got < sizeof c.head) continue;
        if (const step s = checked_header(c); s != step::more) return s;
      } else if (c.ph == phase::body || c.ph == phase::parked) {
        const size_t want = size_t(c.v.body_bytes);
        if (c.body_got == want) return whole(c);
        // The buffer grows only when bytes wait for it (a header alone takes no memory), doubling:
        // a body sent in part holds at most about twice the part. A small request (the one-query
        // round trip) skips the look: its bytes are reserved and allocated from its header.
        if (c.reserved == 0 || c.body_got == c.body_cap) {
          c.ph = phase::body;  // (from parked: waiting for bytes again, if none is there)
          if (need_of(c.v) > small_request_bytes && staged(c) == 0) {
            uint8_t probe;
            const ssize_t p = recv(c.fd, &probe, 1, MSG_DONTWAIT | MSG_PEEK);
            if (p <= 0) return ended(c, p, "body", c.body_got, want);
          }
          if (c.reserved == 0 && !reserve(c, int64_t(need_of(c.v)))) {
            c.ph = phase::parked;
            return step::parked;
          }
          if (c.body_got == c.body_cap &&
              !grow(c.body, c.body_cap, std::min(want, std::max(first_body_bytes, 2 * c.body_cap)))) {
            no_memory(c);
            return step::respond;
          }
        }
        // Not past this request's body: a kept buffer may be larger, and the next request may follow.
        const ssize_t r = take(c, c.body + c.body_got, std::min(want, c.body_cap) - c.body_got, false);
        if (r <= 0) return ended(c, r, "body", c.body_got, want);
        c.body_got += size_t(r);
      } else if (c.ph == phase::skip) {
        if (c.skip_left == 0) {
          answer_error(c, c.v.code, c.v.message, false);
          return step::respond;
        }
        thread_local char drop[1 << 14];
        const ssize_t r = take(c, drop, size_t(std::min<uint64_t>(c.skip_left, sizeof drop)), false);
        if (r <= 0) return ended(c, r, "body", size_t(c.v.body_bytes - c.skip_left), size_t(c.v.body_bytes));
        c.skip_left -= uint64_t(r);
      } else {
        return step::more;
      }
    }
  }

  step checked_header(connection& c) {
    c.v = protocol::check_request(protocol::decode_request(c.head), keys, o.max_queries);
    if (c.v.code != protocol::status::ok && c.v.close) {
      answer_error(c, c.v.code, c.v.message, true);
      return step::respond;
    }
    if (c.v.code != protocol::status::ok) {
      c.ph = phase::skip;
      c.skip_left = c.v.body_bytes;
      return step::more;
    }
    if (c.v.op == protocol::op_ring) return open_ring(c);
    if (c.v.op == protocol::op_doorbell) return doorbell(c);
    const uint64_t need = need_of(c.v);
    if (need > uint64_t(o.max_bytes_in_flight)) {
      answer_error(c, protocol::status::too_large,
                   std::to_string(c.v.count) + " queries take " + std::to_string(need) +
                       " bytes with their results; this server holds at most " + std::to_string(o.max_bytes_in_flight) +
                       " bytes of requests at once (split the request)",
                   true);
      return step::respond;
    }
    c.ph = phase::body;
    c.body_got = 0;
    return step::more;
  }

  // ---- the ring (socket_ring.hpp) --------------------------------------------------------------

  // The ring's opening (op 16): a ring for this connection, its memfd passed with the answer (ok,
  // its capacity); or none (ok, capacity 0: the client goes on over the socket). Rings are
  // counted apart from the requests' budget (max_rings): a ring is held while its connection is
  // open, and rings that took the budget could leave a request waiting for it for ever.
  step open_ring(connection& c) {
    const uint64_t capacity = uint64_t(std::min(o.ring_queries, o.max_queries));
    c.head_got = 0;
    c.ph = phase::idle;
    c.deadline = after(o.idle_timeout);
    std::unique_ptr<ring_mapping> r;
    int fd = -1;
    // None on TCP, with ring_queries 0, a second time, beyond max_rings, or without a memfd.
    if (c.local && capacity > 0 && !c.ring) {
      if (n_rings.fetch_add(1) < o.max_rings) fd = create_ring(keys, capacity, r);
      if (fd < 0) n_rings.fetch_sub(1);
    }
    const auto head = protocol::encode_ok_header(fd >= 0 ? capacity : 0);
    const bool sent = fd >= 0 ? send_with_descriptor(c.fd, head.data(), head.size(), fd)
                              : send(c.fd, head.data(), head.size(), MSG_NOSIGNAL | MSG_DONTWAIT) == ssize_t(head.size());
    if (fd >= 0) ::close(fd);
    if (!sent) {  // (small: the socket takes it) a client that does not read its answers, or is gone
      if (fd >= 0) n_rings.fetch_sub(1);
      c.ph = phase::closed;
      return step::closed;
    }
    if (fd >= 0) {
      c.ring = std::move(r);
      c.ring_served = 0;
    }
    return step::more;
  }

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
  bool take_ring_request(connection& c) {
    if (!c.ring || c.ph != phase::idle || c.ring->control().request.load(std::memory_order_acquire) == c.ring_served)
      return false;
    c.ph = phase::search;
    c.from_ring = true;
    return true;
  }

  void drop_ring(connection& c) {
    if (c.ring) n_rings.fetch_sub(1);
    c.ring.reset();
  }

  // The body is whole: the response's buffer, then the search (by a worker).
  step whole(connection& c) {
    if (c.reserved == 0 && !reserve(c, int64_t(need_of(c.v)))) {  // an empty body
      c.ph = phase::parked;
      return step::parked;
    }
    size_t cap = c.out_cap * 8;
    if (!grow(c.out, cap, (2 + size_t(c.v.count)) * 8)) {
      no_memory(c);
      return step::respond;
    }
    c.out_cap = cap / 8;
    c.ph = phase::search;
    return step::whole;
  }

  // A recv that returned r <= 0 in the middle of `part`.
  step ended(connection& c, ssize_t r, const char* part, size_t got, size_t want) {
    if (r < 0 && errno == EINTR) return step::more;  // the caller tries again on the next event
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return step::more;
    if (r < 0 || (c.ph == phase::idle && c.head_got == 0)) {  // an error, or closed between requests
      c.ph = phase::closed;
      return step::closed;
    }
    // The client may have shut only its writing side: it can still read why.
    answer_error(c, protocol::status::malformed,
                 std::string("truncated request: the connection ended in its ") + part + " (" +
                     (got ? std::to_string(got) + " of " + std::to_string(want) : std::string("before its")) +
                     " bytes)",
                 true);
    return step::respond;
  }

  // Ready for the next request on the connection (a response was sent whole).
  void next_request(connection& c) {
    unreserve(c);
    c.head_got = c.body_got = 0;
    c.skip_left = 0;
    c.error_response.clear();
    c.sending = nullptr;
    c.ph = phase::idle;
    c.deadline = after(o.idle_timeout);
  }

  time_point stop_time() const { return time_point(clock_type::duration(stop_deadline.load())); }

  // ---- the workers ----------------------------------------------------------------------------

  // The server's search of n queries: ok, or the status and message of its failure.
  protocol::status run_search(const void* queries, int64_t n, side sd, int64_t* out, std::string& message) {
    try {
      search(queries, n, sd, out);
      return protocol::status::ok;
    } catch (const invalid_argument& e) {  // refused: the server is shut down
      message = e.what();
      return protocol::status::shut_down;
    } catch (const std::bad_alloc&) {  // this request's, not the server's: it is still healthy
      message = "out of host memory for " + std::to_string(n) + " queries: try again later";
      return protocol::status::busy;
    } catch (const std::exception& e) {  // the server's loop failed: so will every later request
      message = e.what();
      std::lock_guard<std::mutex> lock(m);
      if (!failed.exchange(true)) failure = message;
      return protocol::status::failed;
    }
  }

  // Searches a whole request and prepares its response.
  void search_request(connection& c) {
    if (c.from_ring) return search_ring(c);
    const int64_t n = int64_t(c.v.count);
    std::string message;
    const protocol::status st = run_search(c.body, n, c.v.side, reinterpret_cast<int64_t*>(c.out + 2), message);
    if (st != protocol::status::ok) return answer_error(c, st, message, false);
    const auto head = protocol::encode_ok_header(uint64_t(n));
    std::memcpy(c.out, head.data(), head.size());
    n_requests.fetch_add(1, std::memory_order_relaxed);  // before the client can see the answer
    c.sending = reinterpret_cast<const uint8_t*>(c.out);
    c.send_left = protocol::ok_header_bytes + size_t(n) * 8;
    c.close_after = false;
    c.ph = phase::write;
    c.deadline = after(o.request_timeout);
  }

  // Searches the ring's request and answers it there (ring_mapping::request, answer).
  void search_ring(connection& c) {
    c.from_ring = false;
    const ring_mapping::request_read r = c.ring->request();
    std::string message = r.refusal;
    const protocol::status st = r.refusal.empty()
                                    ? run_search(c.ring->queries(), r.count, r.side, c.ring->results(), message)
                                    : protocol::status::malformed;
    if (st == protocol::status::ok) n_requests.fetch_add(1, std::memory_order_relaxed);  // before the answer
    else (st == protocol::status::busy ? n_busy : n_errors).fetch_add(1, std::memory_order_relaxed);
    c.ring->answer(r.number, st, r.count, message);
    c.ring_served = r.number;
    c.ph = phase::idle;
    c.deadline = after(o.idle_timeout);
  }

  // A worker serves its connection while it has whole requests: searched, answered, and for
  // `spin` after each answer the next one read, if it comes. Anything that would wait longer
  // goes back to the loop.
  void serve(connection& c) {
    for (;;) {
      if (c.ph == phase::search) search_request(c);
      if (c.ph == phase::write) {
        if (!write_some(c) || c.close_after) return;  // the loop waits for the socket, or closes
        next_request(c);
        release_buffers(c, false);
      }
      const step s = await_request(c);
      if (s == step::whole || s == step::respond) continue;
      if (c.ph == phase::idle) release_buffers(c, true);  // an idle connection holds no memory
      return;
    }
  }

  // The client's next request (or the rest of one begun): read if it comes within the spin
  // (recv without sleeping: no poll before it), else, after a hold, within the spin after it.
  // A connection with a ring: the ring is looked at between reads of the socket (16 looks to a
  // read), and says meanwhile that a worker watches it (no doorbell needed); it stops saying so
  // before the worker stops looking, and is looked at once more after.
  step await_request(connection& c) {
    step s = read_some(c);
    if (s == step::more && take_ring_request(c)) return step::whole;
    for (bool held = false; s == step::more && !stopping.load(); held = true) {
      const time_point end = clock_type::now() + o.spin;
      if (c.ring) c.ring->control().watching.store(1, std::memory_order_seq_cst);
      for (unsigned i = 1; s == step::more && !stopping.load() && clock_type::now() < end; ++i) {
        if (take_ring_request(c)) return step::whole;  // still watching: the worker is back after answering
        if (c.ring && i % 16 != 0) {
          cpu_relax();
          continue;
        }
        std::this_thread::yield();  // a core that others wait for (the server's own threads) is given up
        s = read_some(c);
      }
      if (c.ring) {
        c.ring->control().watching.store(0, std::memory_order_seq_cst);
        if (s == step::more && take_ring_request(c)) return step::whole;  // published before: no doorbell comes
      }
      if (s != step::more || held || !hold(c)) break;
      s = read_some(c);
    }
    return s;
  }

  // Waits in poll() (no core) for `hold` for bytes of c, while no more than half of the workers
  // do so: a client in a loop of round trips then costs one wake-up a request, not a hand-over to
  // the loop and from it (2x the round trip with both ends blocking, docs/perf-notes.md), and an
  // idle connection holds a worker no longer than that. Whether bytes came.
  bool hold(connection& c) {
    if (o.hold.count() == 0) return false;
    if (holding.fetch_add(1) >= n_workers / 2) {
      holding.fetch_sub(1);
      return false;
    }
    const time_point until = std::min(clock_type::now() + o.hold, c.deadline);
    pollfd p[2] = {{c.fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    int rc;
    while ((rc = poll(p, 2, poll_ms(until))) < 0 && errno == EINTR) {
    }
    holding.fetch_sub(1);
    return rc > 0 && p[0].revents != 0;
  }

  void worker() {
    for (;;) {
      connection* c = nullptr;
      {
        std::unique_lock<std::mutex> lock(m);
        work_cv.wait(lock, [&] { return quit || !work.empty(); });
        if (work.empty()) return;  // quit
        c = work.front();
        work.pop_front();
      }
      serve(*c);
      {
        std::lock_guard<std::mutex> lock(m);
        returned.push_back(c);
      }
      wake();
    }
  }

  void wake() {
    const uint64_t one = 1;
    while (write(wake_fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }

  // ---- the loop -------------------------------------------------------------------------------

  // Waits for one event of c. An event of a connection not armed (a hang-up epoll reports
  // unasked, of one parked or with a worker) is dropped: each connection is advanced from one
  // place at a time.
  void arm(connection& c, uint32_t events) {
    epoll_event e{};
    e.events = events | EPOLLONESHOT;
    e.data.fd = c.fd;
    c.armed = true;
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &e);
  }

  // Registers a new connection, not armed.
  void add(connection& c) {
    epoll_event e{};
    e.events = EPOLLONESHOT;
    e.data.fd = c.fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c.fd, &e);
  }

  void close_connection(connection& c) {
    release_buffers(c, true);
    unreserve(c);
    drop_ring(c);
    if (c.ph == phase::lingering) --lingering;
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
    if (c.peer_known && --per_peer[c.peer] == 0) per_peer.erase(c.peer);
    n_open.fetch_sub(1, std::memory_order_relaxed);
    conns.erase(c.fd);  // last: c is gone
  }

  // Shuts the writing side and drops what the client still sends for a moment, then closes: a
  // close with unread bytes would reset the connection, and the client could lose the answer.
  void linger(connection& c) {
    release_buffers(c, true);
    unreserve(c);
    drop_ring(c);
    if (lingering >= max_lingering) return close_connection(c);
    shutdown(c.fd, SHUT_WR);
    c.ph = phase::lingering;
    c.deadline = clock_type::now() + linger_time;
    ++lingering;
    arm(c, EPOLLIN);
  }

  // Waits for bytes of the budget: retried (in order) whenever some are freed. Counted before the
  // budget is looked at again, so that no release between the two goes unseen.
  void park(connection& c) {
    parked.push_back(&c);
    n_parked.store(int64_t(parked.size()));
    if (held.load() + int64_t(need_of(c.v)) <= o.max_bytes_in_flight) budget_freed.store(true);
  }

  // Advances a connection the loop holds until it must wait for the socket, a worker or memory.
  void advance(connection& c) {
    for (;;) {
      switch (c.ph) {
        case phase::closed: return close_connection(c);
        case phase::lingering: {
          char drop[1 << 12];
          ssize_t r;
          while ((r = recv(c.fd, drop, sizeof drop, MSG_DONTWAIT)) > 0) {
          }
          if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return arm(c, EPOLLIN);
          return close_connection(c);
        }
        case phase::write:
          if (!write_some(c)) {
            if (c.ph == phase::closed) continue;
            return arm(c, EPOLLOUT);
          }
          if (c.close_after) return linger(c);
          next_request(c);
          release_buffers(c, true);
          if (stopping.load() && !has_bytes(c)) return close_connection(c);  // one sent is still answered
          continue;
        case phase::search: {
          c.with_worker = true;
          {
            std::lock_guard<std::mutex> lock(m);
            work.push_back(&c);
          }
          work_cv.notify_one();
          return;
        }
        case phase::parked:
          if (read_some(c) == step::parked) return park(c);
          if (c.ph == phase::body) return arm(c, EPOLLIN);  // reserved, or no byte waits: the next ones
          continue;
        default:
          switch (read_some(c)) {
            case step::more:
              if (c.ph == phase::closed) continue;
              return arm(c, EPOLLIN);
            case step::parked: return park(c);
            default: continue;  // whole, respond, closed: the next case
          }
      }
    }
  }

  void accept_from(int listener) {
    for (int i = 0; i < 64; ++i) {
      int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0 && (errno == EMFILE || errno == ENFILE) && spare_fd >= 0) {
        // Out of descriptors: the spare one makes room to answer "busy" (else the pending
        // connection would stay in the backlog, and wake the loop for ever).
        ::close(std::exchange(spare_fd, -1));
        fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) {
          refuse_busy(fd, "the server is out of file descriptors");
          ::close(fd);
        }
        spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        continue;
      }
      if (fd < 0) return;  // EAGAIN: none left (or a transient error: the next event retries)
      n_connections.fetch_add(1, std::memory_order_relaxed);
      std::unique_ptr<connection> c(new (std::nothrow) connection);
      if (!c) {  // no memory for its record: refused (the loop goes on)
        ::close(fd);
        continue;
      }
      c->fd = fd;
      if (listener == tcp_fd) set_nodelay(fd);
      ucred cred{};
      socklen_t len = sizeof cred;
      c->local = listener == unix_fd;
      if (c->local && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
        c->peer_known = true;
        c->peer = cred.uid;
      }
      if (int64_t(conns.size() - lingering) >= o.max_connections) {
        refuse_busy(fd, "the server has " + std::to_string(o.max_connections) + " connections open (its limit)");
        c->peer_known = false;  // not counted
        close_refused(std::move(c));
        continue;
      }
      if (c->peer_known && peer_connections(c->peer) >= max_per_peer()) {
        refuse_busy(fd, "this user has " + std::to_string(max_per_peer()) + " connections open (the limit of one user)");
        c->peer_known = false;  // not counted
        close_refused(std::move(c));
        continue;
      }
      if (c->peer_known) ++per_peer[c->peer];
      n_open.fetch_add(1, std::memory_order_relaxed);
      c->deadline = after(o.idle_timeout);
      connection& ref = *c;
      conns.emplace(fd, std::move(c));
      add(ref);
      advance(ref);  // a request sent with the connect is read at once
    }
  }

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
  void close_refused(std::unique_ptr<connection> c) {
    if (lingering >= max_lingering) {
      ::close(c->fd);
      return;
    }
    const int fd = c->fd;
    connection& ref = *c;
    conns.emplace(fd, std::move(c));
    n_open.fetch_add(1, std::memory_order_relaxed);
    add(ref);
    linger(ref);
  }

  // Deadlines of the connections the loop holds (the workers' are theirs).
  void sweep() {
    const time_point now = clock_type::now();
    const bool s = stopping.load();
    std::vector<connection*> due;
    for (auto& [fd, c] : conns) {
      if (c->with_worker) continue;
      const bool idle = c->ph == phase::idle;
      if ((idle && s) || now >= c->deadline) due.push_back(c.get());
    }
    for (connection* c : due) expire(*c, s);
  }

  void expire(connection& c, bool stopping_now) {
    switch (c.ph) {
      case phase::idle:  // idle too long, or the server stops: a request already sent is still answered
        if (stopping_now && has_bytes(c)) return advance(c);
        return close_connection(c);
      case phase::write:  // a client that does not read its answer
      case phase::lingering:
        return close_connection(c);
      case phase::parked:
        std::erase(parked, &c);
        n_parked.store(int64_t(parked.size()));
        answer_error(c, protocol::status::busy,
                     "the server's memory for requests stayed full until the request's time ran out: try again later",
                     true);
        return advance(c);
      default: {
        const size_t got = c.ph == phase::header ? c.head_got : c.ph == phase::body ? c.body_got : 0;
        const uint64_t want = c.ph == phase::header ? sizeof c.head : c.v.body_bytes;
        const char* part = c.ph == phase::header ? "header" : "body";
        answer_error(c, protocol::status::malformed,
                     std::string("the request's ") + part + " did not arrive in time (" + std::to_string(got) + " of " +
                         std::to_string(want) + " bytes" + (stopping_now ? ", the server is stopping)" : ")"),
                     true);
        return advance(c);
      }
    }
  }

  void retry_parked() {
    budget_freed.store(false);
    std::deque<connection*> again;
    again.swap(parked);
    n_parked.store(0);
    for (connection* c : again) advance(*c);  // those that still find no memory park again, in order
  }

  void take_returned() {
    std::vector<connection*> back;
    {
      std::lock_guard<std::mutex> lock(m);
      back.swap(returned);
    }
    for (connection* c : back) {
      c->with_worker = false;
      if (stopping.load() && c->ph == phase::idle && !has_bytes(*c)) {
        close_connection(*c);
        continue;
      }
      advance(*c);
    }
  }

  bool workers_busy() {
    std::lock_guard<std::mutex> lock(m);
    return !work.empty() || !returned.empty();
  }

  void loop() {
    std::vector<epoll_event> events(256);
    time_point last_event = clock_type::now(), next_sweep = last_event + sweep_period;
    bool listeners_closed = false;
    for (;;) {
      if (stopping.load()) {
        if (!listeners_closed) {
          close_listeners();
          listeners_closed = true;
          sweep();  // idle connections close now; the others get the grace time
          for (auto& [fd, c] : conns)
            if (!c->with_worker && c->ph != phase::write && c->ph != phase::lingering)
              c->deadline = std::min(c->deadline, stop_time());
        }
        if (conns.empty() && !workers_busy()) return;
      }
      // Spinning for a while after an event saves a wake-up; then sleeping until the next check.
      const time_point now = clock_type::now();
      int timeout = 0;
      if (now - last_event >= o.spin) timeout = conns.empty() && !stopping.load() ? -1 : poll_ms(next_sweep);
      const int n = epoll_wait(epoll_fd, events.data(), int(events.size()), timeout);
      if (n > 0) last_event = clock_type::now();
      if (n == 0 && timeout == 0) std::this_thread::yield();
      for (int i = 0; i < n; ++i) {
        const int fd = events[size_t(i)].data.fd;
        if (fd == wake_fd) {
          uint64_t count;
          (void)!read(wake_fd, &count, sizeof count);
          take_returned();
          if (budget_freed.load()) retry_parked();
        } else if (fd == unix_fd || fd == tcp_fd) {
          if (!stopping.load()) accept_from(fd);
        } else if (const auto it = conns.find(fd); it != conns.end() && it->second->armed) {
          it->second->armed = false;
          advance(*it->second);
        }
      }
      if (clock_type::now() >= next_sweep) {
        sweep();
        if (budget_freed.load()) retry_parked();
        next_sweep = clock_type::now() + sweep_period;
      }
    }
  }

  void add_to_epoll(int fd) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &e) != 0) fail_sys("gsearch socket: epoll_ctl");
  }
};

socket_server::socket_server(dtype keys, int64_t key_count, search_fn search, const socket_options& options)
    : impl_(std::make_unique<impl>()) {
  impl& s = *impl_;
  const auto bad = [](const std::string& what) { throw invalid_argument("gsearch::socket_server: " + what); };
  if (options.path.empty() && options.port < 0) bad("give a socket path or a port (0: any free port)");
  if (options.port > 65535) bad("the port must be at most 65535");
  if (options.max_queries < 0 || options.max_queries > protocol::max_queries_limit)
    bad("max_queries must be 0 to " + std::to_string(protocol::max_queries_limit));
  if (options.ring_queries < 0 || options.ring_queries > protocol::max_queries_limit || options.max_rings < 0)
    bad("ring_queries must be 0 to " + std::to_string(protocol::max_queries_limit) + ", max_rings >= 0");
  if (options.max_bytes_in_flight < 1) bad("max_bytes_in_flight must be >= 1");
  if (options.max_connections < 1 || options.max_connections_per_peer < 0 || options.workers < 0)
    bad("max_connections must be >= 1, max_connections_per_peer and workers >= 0");
  if (options.socket_mode > 0777) bad("socket_mode must be permission bits (0 to 0777)");
  if (options.request_timeout.count() < 0 || options.idle_timeout.count() < 0 || options.stop_grace.count() < 0 ||
      options.spin.count() < 0 || options.hold.count() < 0)
    bad("the timeouts, spin and hold must be >= 0");
  s.keys = keys;
  s.key_count = key_count;
  s.search = std::move(search);
  s.o = options;
  s.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (s.epoll_fd < 0) fail_sys("gsearch socket: epoll_create1");
  s.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  s.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s.wake_fd < 0 || s.stop_fd < 0) fail_sys("gsearch socket: eventfd");
  s.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (!options.path.empty()) s.listen_unix(options.path);
  try {
    if (options.port >= 0) s.tcp_fd = listen_tcp(options.port, s.port);
    for (int fd : {s.wake_fd, s.unix_fd, s.tcp_fd})
      if (fd >= 0) s.add_to_epoll(fd);
    s.n_workers = options.workers > 0 ? options.workers : 64;
    s.loop_thread = std::thread([&s] { s.loop(); });
    for (int i = 0; i < s.n_workers; ++i) s.workers.emplace_back([&s] { s.worker(); });
  } catch (...) {
    s.remove_socket_file();
    if (s.loop_thread.joinable()) {
      s.stopping.store(true);
      s.wake();
      s.loop_thread.join();
    }
    {
      std::lock_guard<std::mutex> lock(s.m);
      s.quit = true;
    }
    s.work_cv.notify_all();
    for (auto& t : s.workers) t.join();
    throw;
  }
}

socket_server::~socket_server() {
  if (impl_->made.forked()) {
    // A fork child's copy: the socket file and the threads are the parent's. Leave it as it is.
    (void)impl_.release();
    return;
  }
  stop();
}

void socket_server::stop() {
  impl& s = *impl_;
  s.made.check("gsearch::socket_server::stop", "socket server");
  std::lock_guard<std::mutex> once(s.stop_mutex);  // a second caller returns once it has stopped
  if (s.stopped) return;
  s.stopped = true;
  s.stop_deadline.store((clock_type::now() + s.o.stop_grace).time_since_epoch().count());
  s.stopping.store(true);
  s.wake();
  const uint64_t one = 1;
  (void)!write(s.stop_fd, &one, sizeof one);  // never read: readable from now on
  // The loop closes the listeners, then every connection once it has answered the request it
  // had begun; then the workers, idle by then, end.
  if (s.loop_thread.joinable()) s.loop_thread.join();
  {
    std::lock_guard<std::mutex> lock(s.m);
    s.quit = true;
  }
  s.work_cv.notify_all();
  for (auto& t : s.workers) t.join();
  s.workers.clear();
  if (s.lock_fd >= 0) ::close(std::exchange(s.lock_fd, -1));  // the lock file stays (socket_listen.cpp)
}

const std::string& socket_server::path() const { return impl_->o.path; }
int socket_server::port() const { return impl_->port; }
dtype socket_server::key_dtype() const { return impl_->keys; }
bool socket_server::failed() const { return impl_->failed.load(); }
std::string socket_server::failure() const {
  std::lock_guard<std::mutex> lock(impl_->m);
  return impl_->failure;
}
socket_stats socket_server::stats() const {
  const impl& s = *impl_;
  socket_stats st;
  st.connections = s.n_connections.load();
  st.requests = s.n_requests.load();
  st.errors = s.n_errors.load();
  st.busy = s.n_busy.load();
  st.open = s.n_open.load();
  st.bytes_in_flight = s.held.load();
  st.peak_bytes_in_flight = s.peak.load();
  return st;
}

}  // namespace gsearch
