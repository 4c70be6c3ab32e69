// The search server's socket front end (server_socket.hpp): an accept loop and a thread per
// connection over a Unix-domain socket and / or 127.0.0.1, speaking server_protocol.hpp; and the
// client. Every socket is non-blocking on the server side and every wait is a poll() with a
// deadline, so that no client can hold a thread longer than its timeouts; a pipe that becomes
// readable at stop() wakes every waiting poll at once. docs/design.md, "The socket protocol".

#include "gsearch/server_socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <list>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "gsearch/detail/fork.hpp"

namespace gsearch {

static_assert(std::endian::native == std::endian::little,
              "the socket protocol's elements and results are copied as they are: a little-endian host");

namespace {

using clock_type = std::chrono::steady_clock;
using time_point = clock_type::time_point;
constexpr time_point never = time_point::max();

std::string errno_text(int err) { return std::strerror(err); }

[[noreturn]] void fail_sys(const std::string& what, int err = errno) { throw error(what + ": " + errno_text(err)); }

// The deadline `d` from now (0: none).
time_point after(std::chrono::milliseconds d) { return d.count() > 0 ? clock_type::now() + d : never; }

// Milliseconds until `deadline` for poll() (-1: none; rounded up, so that a wait never ends early).
int poll_ms(time_point deadline) {
  if (deadline == never) return -1;
  const auto left = deadline - clock_type::now();
  if (left <= clock_type::duration::zero()) return 0;
  return int(std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(left).count(), 1 << 30));
}

// Polls fd for bytes without sleeping for up to `spin`: whether it has some (or EOF, or an
// error: recv() tells). A round trip's waits would otherwise each cost a thread's wake-up.
bool spin_readable(int fd, std::chrono::microseconds spin) {
  if (spin.count() <= 0) return false;
  const time_point end = clock_type::now() + spin;
  do {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) return true;
    std::this_thread::yield();  // a core that others wait for (the server's own threads) is given up
  } while (clock_type::now() < end);
  return false;
}

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(a.sun_path))
    throw invalid_argument("gsearch socket: the socket path '" + path + "' must have 1 to " +
                           std::to_string(sizeof(a.sun_path) - 1) + " bytes (a Unix-domain socket's limit)");
  std::memcpy(a.sun_path, path.data(), path.size());
  return a;
}

sockaddr_in loopback_address(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

void set_nodelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Whether a server answers at the Unix-domain socket `path` (a connect succeeds, or would wait).
bool unix_socket_answers(const std::string& path) {
  const sockaddr_un a = unix_address(path);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) fail_sys("gsearch socket: socket()");
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  const int err = errno;
  ::close(fd);
  return rc == 0 || err == EAGAIN || err == EINPROGRESS;
}

}  // namespace

// ---- the server ---------------------------------------------------------------------------------

struct socket_server::impl {
  detail::made_in_process made;  // a fork child's copy must not stop the parent's (the stop pipe is shared)
  dtype keys;
  int64_t key_count;
  search_fn search;
  socket_options o;
  int unix_fd = -1, tcp_fd = -1, port = -1;
  dev_t unix_dev = 0;
  ino_t unix_ino = 0;
  int stop_pipe[2] = {-1, -1};  // readable from stop() on
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> stop_deadline{0};  // clock ticks: when requests begun stop waiting for bytes
  std::thread acceptor;

  struct connection {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::mutex m;  // guards conns, active, failure
  std::condition_variable cv;
  std::list<std::unique_ptr<connection>> conns;
  int active = 0;
  std::string failure;
  std::atomic<bool> failed{false};
  std::atomic<int64_t> n_connections{0}, n_requests{0}, n_errors{0};
  std::mutex stop_mutex;
  bool stopped = false;

  ~impl() {
    for (int fd : {unix_fd, tcp_fd, stop_pipe[0], stop_pipe[1]})
      if (fd >= 0) ::close(fd);
  }

  void listen_unix(const std::string& path) {
    const sockaddr_un a = unix_address(path);
    struct stat st{};
    if (lstat(path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode))
        throw invalid_argument("gsearch socket: '" + path + "' exists and is not a socket: refusing to replace it");
      if (unix_socket_answers(path))
        throw invalid_argument("gsearch socket: a server already answers at '" + path + "'");
      if (unlink(path.c_str()) != 0 && errno != ENOENT)
        fail_sys("gsearch socket: cannot remove the stale socket '" + path + "'");
    }
    unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (unix_fd < 0) fail_sys("gsearch socket: socket()");
    if (bind(unix_fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
      fail_sys("gsearch socket: cannot bind '" + path + "'");
    if (lstat(path.c_str(), &st) == 0) {
      unix_dev = st.st_dev;
      unix_ino = st.st_ino;
    }
    if (::listen(unix_fd, SOMAXCONN) != 0) {
      const int err = errno;
      unlink(path.c_str());
      fail_sys("gsearch socket: cannot listen on '" + path + "'", err);
    }
  }

  void listen_tcp(int want) {
    tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (tcp_fd < 0) fail_sys("gsearch socket: socket()");
    const int one = 1;
    setsockopt(tcp_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in a = loopback_address(want);
    if (bind(tcp_fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
      fail_sys("gsearch socket: cannot bind 127.0.0.1:" + std::to_string(want));
    if (::listen(tcp_fd, SOMAXCONN) != 0) fail_sys("gsearch socket: cannot listen on 127.0.0.1");
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    getsockname(tcp_fd, reinterpret_cast<sockaddr*>(&bound), &len);
    port = ntohs(bound.sin_port);
  }

  // The socket file, if it is still the one bound (not replaced by another server since).
  void remove_socket_file() {
    struct stat st{};
    if (!o.path.empty() && lstat(o.path.c_str(), &st) == 0 && st.st_dev == unix_dev && st.st_ino == unix_ino)
      unlink(o.path.c_str());
  }

  time_point stop_time() const { return time_point(clock_type::duration(stop_deadline.load())); }

  enum class io { ok, eof, timeout, error, stopped };

  // Waits until fd has bytes (ok), the deadline passes or, with watch_stop, stop() is called.
  io wait_readable(int fd, time_point deadline, bool watch_stop) {
    if (spin_readable(fd, o.spin)) return io::ok;
    for (;;) {
      pollfd p[2] = {{fd, POLLIN, 0}, {stop_pipe[0], POLLIN, 0}};
      const int rc = poll(p, watch_stop ? 2 : 1, poll_ms(deadline));
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) return io::error;
      if (p[0].revents != 0) return io::ok;  // data, EOF or an error: recv() tells
      if (rc > 0) return io::stopped;
      return io::timeout;
    }
  }

  // Reads n bytes by `deadline` (once stop() is called, by its grace time at the latest).
  // `got` counts the bytes read, whatever the result.
  io read_full(int fd, void* dst, size_t n, time_point deadline, size_t& got) {
    got = 0;
    char* p = static_cast<char*>(dst);
    while (got < n) {
      const ssize_t r = recv(fd, p + got, n - got, MSG_DONTWAIT);
      if (r > 0) {
        got += size_t(r);
        continue;
      }
      if (r == 0) return io::eof;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return io::error;
      const bool s = stopping.load();
      const io w = wait_readable(fd, s ? std::min(deadline, stop_time()) : deadline, !s);
      if (w == io::timeout || w == io::error) return w;
    }
    return io::ok;
  }

  // Reads and drops n bytes (the body of a request refused with its connection kept).
  io skip(int fd, uint64_t n, time_point deadline) {
    char buf[1 << 14];
    while (n > 0) {
      size_t got = 0;
      const io r = read_full(fd, buf, size_t(std::min<uint64_t>(n, sizeof buf)), deadline, got);
      if (r != io::ok) return r;
      n -= got;
    }
    return io::ok;
  }

  // Writes every byte by the deadline (never SIGPIPE).
  bool write_full(int fd, const void* src, size_t n, time_point deadline) {
    const char* p = static_cast<const char*>(src);
    while (n > 0) {
      const ssize_t r = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (r > 0) {
        p += r;
        n -= size_t(r);
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
      // A client that does not read its answer: until the deadline (stop()'s grace time at most).
      const bool s = stopping.load();
      pollfd w[2] = {{fd, POLLOUT, 0}, {stop_pipe[0], POLLIN, 0}};
      const int rc = poll(w, s ? 1 : 2, poll_ms(s ? std::min(deadline, stop_time()) : deadline));
      if (rc == 0) return false;
      if (rc < 0 && errno != EINTR) return false;
    }
    return true;
  }

  void send_error(int fd, protocol::status s, const std::string& message) {
    n_errors.fetch_add(1, std::memory_order_relaxed);
    const std::string b = protocol::encode_error(s, message);
    write_full(fd, b.data(), b.size(), after(o.request_timeout));
  }

  // A closing that lets the client read the answer: no more writes, then what the client still
  // sends is read and dropped for a moment (a TCP close with unread bytes would reset the
  // connection, and the client could lose the answer), then close.
  void linger_close(int fd) {
    shutdown(fd, SHUT_WR);
    const time_point until = clock_type::now() + std::chrono::milliseconds(250);
    char buf[1 << 14];
    while (wait_readable(fd, until, false) == io::ok) {
      const ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) break;
    }
  }

  // One connection: requests one at a time until the client closes, an error closes it, it is
  // idle past idle_timeout, or stop() (a request whose bytes had arrived is answered first).
  void serve(int fd) {
    std::unique_ptr<uint64_t[]> in, out;  // the request's elements; the response (header, results)
    size_t in_words = 0, out_words = 0;
    bool last = false;
    for (;;) {
      if (stopping.load()) {
        pollfd p{fd, POLLIN, 0};
        if (last || poll(&p, 1, 0) != 1) return;
        last = true;
      } else {
        const io w = wait_readable(fd, after(o.idle_timeout), true);
        if (w == io::stopped) continue;  // the check above: a request that has arrived is answered
        if (w != io::ok) return;         // idle too long, or an error
      }
      uint8_t h[protocol::request_header_bytes];
      size_t got = 0;
      const time_point deadline = after(o.request_timeout);
      io r = read_full(fd, h, sizeof h, deadline, got);
      if (r == io::eof && got == 0) return;  // the client closed between requests
      if (r == io::error && got == 0) return;
      if (r != io::ok) return cut_short(fd, r, "header", got, sizeof h);
      const protocol::verdict v = protocol::check_request(protocol::decode_request(h), keys, o.max_queries);
      if (v.code != protocol::status::ok && v.close) {
        send_error(fd, v.code, v.message);
        return linger_close(fd);
      }
      if (v.code != protocol::status::ok) {
        r = skip(fd, v.body_bytes, deadline);
        if (r != io::ok) return cut_short(fd, r, "body", 0, v.body_bytes);
        send_error(fd, v.code, v.message);
        continue;
      }
      const int64_t n = int64_t(v.count);
      try {
        if (in_words < (v.body_bytes + 7) / 8 || in_words > 8 * ((v.body_bytes + 7) / 8) + (1 << 16)) {
          in_words = (v.body_bytes + 7) / 8;
          in.reset(new uint64_t[std::max<size_t>(in_words, 1)]);
        }
        if (out_words < 2 + size_t(n) || out_words > 8 * (2 + size_t(n)) + (1 << 16)) {
          out_words = 2 + size_t(n);
          out.reset(new uint64_t[out_words]);
        }
      } catch (const std::bad_alloc&) {
        send_error(fd, protocol::status::failed, "out of host memory for " + std::to_string(n) + " queries");
        in.reset(), out.reset(), in_words = out_words = 0;
        return linger_close(fd);
      }
      r = read_full(fd, in.get(), v.body_bytes, deadline, got);
      if (r != io::ok) return cut_short(fd, r, "body", got, v.body_bytes);
      protocol::status st = protocol::status::ok;
      std::string message;
      try {
        search(in.get(), n, v.side, reinterpret_cast<int64_t*>(out.get() + 2));
      } catch (const invalid_argument& e) {  // refused: the server is shut down
        st = protocol::status::shut_down;
        message = e.what();
      } catch (const std::bad_alloc&) {
        st = protocol::status::failed;
        message = "out of host memory";
      } catch (const std::exception& e) {  // the server's loop failed: so will every later request
        st = protocol::status::failed;
        message = e.what();
        std::lock_guard<std::mutex> lock(m);
        if (!failed.exchange(true)) failure = message;
      }
      if (st != protocol::status::ok) {
        send_error(fd, st, message);
        continue;
      }
      const auto head = protocol::encode_ok_header(uint64_t(n));
      std::memcpy(out.get(), head.data(), head.size());
      n_requests.fetch_add(1, std::memory_order_relaxed);  // before the client can see the answer
      if (!write_full(fd, out.get(), protocol::ok_header_bytes + size_t(n) * 8, after(o.request_timeout))) return;
    }
  }

  // A request that ended before its bytes did: answered where the connection allows it, closed.
  void cut_short(int fd, io r, const char* part, size_t got, uint64_t want) {
    if (r == io::timeout || r == io::stopped) {
      send_error(fd, protocol::status::malformed,
                 std::string("the request's ") + part + " did not arrive in time (" + std::to_string(got) + " of " +
                     std::to_string(want) + " bytes" + (stopping.load() ? ", the server is stopping)" : ")"));
    } else if (r == io::eof) {  // the client may have only shut its writing side
      send_error(fd, protocol::status::malformed,
                 std::string("truncated request: the connection ended in its ") + part + " (" +
                     (got ? std::to_string(got) + " of " + std::to_string(want) : std::string("before its")) +
                     " bytes)");
    } else {
      n_errors.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void accept_loop() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] {
          reap();
          return stopping.load() || active < o.max_connections;
        });
        if (stopping.load()) return;
      }
      pollfd p[3] = {{stop_pipe[0], POLLIN, 0}, {unix_fd, POLLIN, 0}, {tcp_fd, POLLIN, 0}};
      const int rc = poll(p, 3, -1);  // negative fds are ignored by poll
      if (rc < 0) {
        if (errno != EINTR) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (p[0].revents != 0) return;
      for (int i = 1; i < 3; ++i) {
        if (p[i].revents == 0) continue;
        const int c = accept4(p[i].fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0) {
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a moment for fds to be freed
          continue;
        }
        if (p[i].fd == tcp_fd) set_nodelay(c);
        n_connections.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard<std::mutex> lock(m);
        auto conn = std::make_unique<connection>();
        connection* cp = conn.get();
        try {
          cp->thread = std::thread([this, cp, c] {
            serve(c);
            ::close(c);
            std::lock_guard<std::mutex> l(m);
            cp->done.store(true);
            cv.notify_all();
          });
        } catch (const std::system_error&) {  // no thread: this connection is refused
          ::close(c);
          continue;
        }
        conns.push_back(std::move(conn));
        ++active;
      }
    }
  }

  // Joins the finished connections' threads (m held).
  void reap() {
    for (auto it = conns.begin(); it != conns.end();) {
      if ((*it)->done.load()) {
        (*it)->thread.join();
        it = conns.erase(it);
        --active;
      } else {
        ++it;
      }
    }
  }
};

socket_server::socket_server(dtype keys, int64_t key_count, search_fn search, const socket_options& options)
    : impl_(std::make_unique<impl>()) {
  impl& s = *impl_;
  if (options.path.empty() && options.port < 0)
    throw invalid_argument("gsearch::socket_server: give a socket path or a port (0: any free port)");
  if (options.port > 65535) throw invalid_argument("gsearch::socket_server: the port must be at most 65535");
  if (options.max_queries < 0 || options.max_connections < 1 || options.request_timeout.count() < 0 ||
      options.idle_timeout.count() < 0 || options.stop_grace.count() < 0 || options.spin.count() < 0)
    throw invalid_argument(
        "gsearch::socket_server: max_queries, the timeouts and spin must be >= 0, max_connections >= 1");
  s.keys = keys;
  s.key_count = key_count;
  s.search = std::move(search);
  s.o = options;
  if (pipe2(s.stop_pipe, O_CLOEXEC) != 0) fail_sys("gsearch socket: pipe()");
  if (!options.path.empty()) s.listen_unix(options.path);
  try {
    if (options.port >= 0) s.listen_tcp(options.port);
    s.acceptor = std::thread([&s] { s.accept_loop(); });
  } catch (...) {
    s.remove_socket_file();
    throw;
  }
}

socket_server::~socket_server() {
  if (impl_->made.forked()) {
    // A fork child's copy: the stop pipe and the socket file are the parent's server's, the
    // threads are not in the child. Leave it as it is.
    (void)impl_.release();
    return;
  }
  stop();
}

void socket_server::stop() {
  impl& s = *impl_;
  s.made.check("gsearch::socket_server::stop", "socket server");
  std::lock_guard<std::mutex> once(s.stop_mutex);
  if (s.stopped) return;
  s.stopped = true;
  s.stop_deadline.store((clock_type::now() + s.o.stop_grace).time_since_epoch().count());
  s.stopping.store(true);
  const char byte = 1;
  while (write(s.stop_pipe[1], &byte, 1) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard<std::mutex> lock(s.m);
    s.cv.notify_all();
  }
  if (s.acceptor.joinable()) s.acceptor.join();
  // No new connection from here on (those in the backlog are refused), then the ones served end
  // after the request they have begun.
  for (int* fd : {&s.unix_fd, &s.tcp_fd})
    if (*fd >= 0) ::close(std::exchange(*fd, -1));
  s.remove_socket_file();
  std::unique_lock<std::mutex> lock(s.m);
  s.cv.wait(lock, [&] {
    s.reap();
    return s.active == 0;
  });
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
  return {impl_->n_connections.load(), impl_->n_requests.load(), impl_->n_errors.load()};
}

// ---- the client ---------------------------------------------------------------------------------

socket_client::socket_client(std::string path, std::chrono::milliseconds timeout, std::chrono::microseconds spin)
    : path_(std::move(path)), timeout_(timeout), spin_(spin) {
  unix_address(path_);  // checks its length
}
socket_client::socket_client(int port, std::chrono::milliseconds timeout, std::chrono::microseconds spin)
    : port_(port), timeout_(timeout), spin_(spin) {
  if (port < 1 || port > 65535) throw invalid_argument("gsearch::socket_client: the port must be 1 to 65535");
}
socket_client::~socket_client() { close(); }
socket_client::socket_client(socket_client&& other) noexcept
    : path_(std::move(other.path_)), port_(other.port_), timeout_(other.timeout_), spin_(other.spin_),
      fd_(std::exchange(other.fd_, -1)) {}

void socket_client::close() {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

std::string socket_client::address() const { return port_ > 0 ? "127.0.0.1:" + std::to_string(port_) : path_; }

void socket_client::connect() {
  const bool tcp = port_ > 0;
  fd_ = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail_sys("gsearch client: socket()");
  int rc;
  if (tcp) {
    const sockaddr_in a = loopback_address(port_);
    rc = ::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  } else {
    const sockaddr_un a = unix_address(path_);
    rc = ::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  }
  if (rc != 0) {
    const int err = errno;
    close();
    throw error("cannot connect to the gsearch server at " + address() + ": " + errno_text(err) +
                " (is `gsearch serve` running there?)");
  }
  if (tcp) set_nodelay(fd_);
  if (timeout_.count() > 0) {
    timeval tv{};
    tv.tv_sec = time_t(timeout_.count() / 1000);
    tv.tv_usec = suseconds_t(timeout_.count() % 1000 * 1000);
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
}

namespace {

// Reads n bytes (blocking, with the socket's timeout): the bytes read, and errno's value when
// it stopped early (0: end of stream).
size_t recv_full(int fd, void* dst, size_t n, int& err) {
  size_t got = 0;
  err = 0;
  while (got < n) {
    const ssize_t r = recv(fd, static_cast<char*>(dst) + got, n - got, 0);
    if (r > 0) {
      got += size_t(r);
    } else if (r == 0) {
      return got;
    } else if (errno != EINTR) {
      err = errno;
      return got;
    }
  }
  return got;
}

// Sends the header and the body (one sendmsg while it takes them); errno's value on failure, else 0.
int send_request(int fd, const uint8_t* head, size_t head_bytes, const void* body, size_t body_bytes) {
  iovec iov[2] = {{const_cast<uint8_t*>(head), head_bytes}, {const_cast<void*>(body), body_bytes}};
  int first = 0;
  while (first < 2) {
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = size_t(2 - first);
    const ssize_t r = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    size_t left = size_t(r);
    while (first < 2 && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (first < 2) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return 0;
}

}  // namespace

void socket_client::search(dtype t, const void* queries, int64_t n, side s, span<int64_t> out) {
  if (n < 0 || out.size() != n)
    throw invalid_argument("gsearch::socket_client::search: out has " + std::to_string(out.size()) + " elements for " +
                           std::to_string(n) + " queries");
  const auto head = protocol::encode(protocol::search_header(t, s, uint64_t(n)));
  const std::string where = "the gsearch server at " + address();
  for (int attempt = 0;; ++attempt) {
    const bool fresh = fd_ < 0;
    if (fresh) connect();
    const int send_err = send_request(fd_, head.data(), head.size(), queries, size_t(n) * size_t(itemsize(t)));
    // A send that failed may still have an answer waiting (a request refused from its header).
    uint8_t rh[protocol::response_head_bytes];
    int err = 0;
    if (send_err == 0) spin_readable(fd_, spin_);  // then block, if the answer is slower
    const size_t got = recv_full(fd_, rh, sizeof rh, err);
    if (got == 0 && !fresh && attempt == 0) {  // the server had closed this idle connection: again
      close();
      continue;
    }
    const auto broken = [&](const std::string& what) {
      close();
      return error(where + " " + what);
    };
    if (got < sizeof rh) {
      if (err == EAGAIN || err == EWOULDBLOCK) throw broken("did not answer in time");
      if (send_err != 0) throw broken("closed the connection: " + errno_text(send_err));
      throw broken(err ? "closed the connection: " + errno_text(err) : std::string("closed the connection"));
    }
    const protocol::response_head h = protocol::decode_response_head(rh);
    if (!h.magic_ok) throw broken("answered something that is not the gsearch protocol");
    if (h.code == protocol::status::ok) {
      uint8_t c[8];
      if (recv_full(fd_, c, 8, err) != 8) throw broken("closed the connection mid-answer");
      const uint64_t count = protocol::get_le<uint64_t>(c);
      if (count != uint64_t(n))
        throw broken("answered " + std::to_string(count) + " results for " + std::to_string(n) + " queries");
      if (recv_full(fd_, out.data(), size_t(n) * 8, err) != size_t(n) * 8)
        throw broken("closed the connection mid-answer");
      return;
    }
    uint8_t l[4];
    if (recv_full(fd_, l, 4, err) != 4) throw broken("closed the connection mid-answer");
    const uint32_t len = std::min(protocol::get_le<uint32_t>(l), uint32_t(1) << 20);
    std::string message(len, '\0');
    message.resize(recv_full(fd_, message.data(), len, err));
    close();  // reconnect for the next request, whatever the server does with this connection
    throw socket_error(h.code, where + " answered " + protocol::to_string(h.code) + ": " + message);
  }
}

}  // namespace gsearch
