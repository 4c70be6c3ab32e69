// The search server's socket front end (server_socket.hpp): one event loop (epoll) holds every
// connection, a pool of workers takes whole requests to the server. This file: the listening
// sockets, the loop, and the public calls; socket_requests.cpp: a connection's steps and the
// workers; socket_server_impl.hpp: the state they share. docs/design.md, "The socket front end".

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "socket_server_impl.hpp"

namespace gsearch {

// ---- listening (socket_listen.cpp) ---------------------------------------------------------

void socket_server::impl::listen_unix(const std::string& path) {
  unix_listener l = socket_detail::listen_unix(path, o.socket_mode, o.group);
  unix_fd = l.fd;
  lock_fd = l.lock_fd;
  unix_dev = l.dev;
  unix_ino = l.ino;
}

void socket_server::impl::close_listeners() {
  for (int* fd : {&unix_fd, &tcp_fd})
    if (*fd >= 0) {
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, *fd, nullptr);
      ::close(std::exchange(*fd, -1));
    }
  remove_socket_file();
}

// ---- the loop -------------------------------------------------------------------------------

void socket_server::impl::arm(connection& c, uint32_t events) {
  epoll_event e{};
  e.events = events | EPOLLONESHOT;
  e.data.fd = c.fd;
  c.armed = true;
  epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &e);
}

void socket_server::impl::close_connection(connection& c) {
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

void socket_server::impl::linger(connection& c) {
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

void socket_server::impl::advance(connection& c) {
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

void socket_server::impl::accept_from(int listener) {
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

void socket_server::impl::close_refused(std::unique_ptr<connection> c) {
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

void socket_server::impl::sweep() {
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

void socket_server::impl::expire(connection& c, bool stopping_now) {
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

void socket_server::impl::retry_parked() {
  budget_freed.store(false);
  std::deque<connection*> again;
  again.swap(parked);
  n_parked.store(0);
  for (connection* c : again) advance(*c);  // those that still find no memory park again, in order
}

void socket_server::impl::take_returned() {
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

void socket_server::impl::loop() {
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
