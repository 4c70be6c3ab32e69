// The search server's client (server_socket.hpp): one connection, non-blocking, every wait a
// poll() against one deadline for the whole request, from the connect to the last byte of the
// answer. docs/design.md, "The socket protocol".

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <utility>

#include "gsearch/server_socket.hpp"
#include "socket_common.hpp"
#include "socket_ring.hpp"

namespace gsearch {

using namespace socket_detail;

namespace {

// Why a connect failed, and what to do about it.
std::string connect_hint(int err) {
  if (err == EACCES || err == EPERM)
    return " (the socket's permissions do not let this user connect: its server's user can widen them to a "
           "group, `gsearch serve --socket-group`)";
  if (err == ENOENT || err == ECONNREFUSED) return " (is `gsearch serve` running there?)";
  if (err == ETIMEDOUT) return " (the server's backlog stayed full: it is overloaded)";
  return "";
}

// Waits for fd's `events` until the deadline: false when it passed.
bool wait_for(int fd, short events, time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int rc = poll(&p, 1, poll_ms(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return true;  // the next call reports the error
  }
}

// What a transfer ended with: done, the deadline, the peer's close (EOF), or errno's value.
struct transfer {
  bool done = false, timed_out = false;
  int err = 0;  // 0 with !done && !timed_out: end of stream
  size_t bytes = 0;
};

// Moves past `bytes` transferred of two buffers, one after the other: iov[first] is the one the
// next transfer starts in (2: both done).
void consume(iovec (&iov)[2], int& first, size_t bytes) {
  while (first < 2 && bytes >= iov[first].iov_len) bytes -= iov[first++].iov_len;
  if (first < 2) {
    iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + bytes;
    iov[first].iov_len -= bytes;
  }
}

// Reads into two buffers, one after the other, by the deadline, until they are full or
// `enough(bytes read)` says so; for `spin` first without sleeping (recvmsg again and again: the
// answer is usually this close, and a poll() before each read would be one system call more).
// With `passed`, a descriptor passed with the bytes is kept there (take_descriptors).
template <class Enough>
transfer recv_into(int fd, iovec (&iov)[2], time_point deadline, std::chrono::microseconds spin, Enough enough,
                   int* passed = nullptr) {
  transfer t;
  const size_t n = iov[0].iov_len + iov[1].iov_len;
  const time_point spin_end = clock_type::now() + spin;
  int first = 0;
  while (t.bytes < n && !enough(t.bytes)) {
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = size_t(2 - first);
    descriptor_space control;
    if (passed) {
      msg.msg_control = control.bytes;
      msg.msg_controllen = sizeof control.bytes;
    }
    const ssize_t r = recvmsg(fd, &msg, MSG_DONTWAIT | (passed ? MSG_CMSG_CLOEXEC : 0));
    if (r > 0 && passed) take_descriptors(msg, *passed);
    if (r > 0) {
      t.bytes += size_t(r);
      consume(iov, first, size_t(r));
      continue;
    }
    if (r == 0) return t;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      t.err = errno;
      return t;
    }
    if (clock_type::now() < spin_end) {
      std::this_thread::yield();  // a core that others wait for (the server's own threads) is given up
      continue;
    }
    if (!wait_for(fd, POLLIN, deadline)) {
      t.timed_out = true;
      return t;
    }
  }
  t.done = true;
  return t;
}

// Reads n bytes by the deadline (with `passed`: and a descriptor passed with them).
transfer recv_full(int fd, void* dst, size_t n, time_point deadline, int* passed = nullptr) {
  iovec iov[2] = {{dst, n}, {nullptr, 0}};
  return recv_into(fd, iov, deadline, std::chrono::microseconds(0), [](size_t) { return false; }, passed);
}

// Sends the header and the body by the deadline (one sendmsg while the socket takes them).
transfer send_request(int fd, const uint8_t* head, size_t head_bytes, const void* body, size_t body_bytes,
                      time_point deadline) {
  iovec iov[2] = {{const_cast<uint8_t*>(head), head_bytes}, {const_cast<void*>(body), body_bytes}};
  transfer t;
  int first = 0;
  while (first < 2) {
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = size_t(2 - first);
    const ssize_t r = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        t.err = errno;
        return t;
      }
      if (!wait_for(fd, POLLOUT, deadline)) {
        t.timed_out = true;
        return t;
      }
      continue;
    }
    t.bytes += size_t(r);
    consume(iov, first, size_t(r));
  }
  t.done = true;
  return t;
}

}  // namespace

struct socket_client::ring {
  std::unique_ptr<ring_mapping> map;
  dtype type;
  uint32_t number;  // the last request's
};

socket_client::socket_client(std::string path, std::chrono::milliseconds timeout, std::chrono::microseconds spin,
                             bool use_ring)
    : path_(std::move(path)), timeout_(timeout), spin_(spin), want_ring_(use_ring) {
  unix_address(path_);  // checks its length
}
socket_client::socket_client(int port, std::chrono::milliseconds timeout, std::chrono::microseconds spin)
    : port_(port), timeout_(timeout), spin_(spin) {
  if (port < 1 || port > 65535) throw invalid_argument("gsearch::socket_client: the port must be 1 to 65535");
}
socket_client::~socket_client() { close(); }
socket_client::socket_client(socket_client&& other) noexcept
    : path_(std::move(other.path_)), port_(other.port_), timeout_(other.timeout_), spin_(other.spin_),
      want_ring_(other.want_ring_), fd_(std::exchange(other.fd_, -1)), ring_(std::move(other.ring_)) {}

void socket_client::close() {
  ring_.reset();
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

int64_t socket_client::ring_capacity() const { return ring_ ? int64_t(ring_->map->capacity()) : 0; }

std::string socket_client::address() const { return port_ > 0 ? "127.0.0.1:" + std::to_string(port_) : path_; }

// Connects by the deadline: a non-blocking connect, waited for with poll (a Unix-domain socket
// whose backlog is full answers EAGAIN at once: tried again every millisecond).
void socket_client::connect(time_point deadline) {
  const bool tcp = port_ > 0;
  fd_ = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) fail_sys("gsearch client: socket()");
  const auto fail = [&](int err) {
    close();
    throw error("cannot connect to the gsearch server at " + address() + ": " + errno_text(err) + connect_hint(err));
  };
  for (;;) {
    int rc;
    if (tcp) {
      const sockaddr_in a = loopback_address(port_);
      rc = ::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    } else {
      const sockaddr_un a = unix_address(path_);
      rc = ::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    }
    if (rc == 0) break;
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN && !tcp) {  // the listen backlog is full
      if (clock_type::now() >= deadline) fail(ETIMEDOUT);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (err != EINPROGRESS) fail(err);
    if (!wait_for(fd_, POLLOUT, deadline)) fail(ETIMEDOUT);
    int so_error = 0;
    socklen_t len = sizeof so_error;
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &so_error, &len);
    if (so_error != 0) fail(so_error);
    break;
  }
  if (tcp) set_nodelay(fd_);
}

void socket_client::search(dtype t, const void* queries, int64_t n, side s, span<int64_t> out) {
  if (n < 0 || out.size() != n)
    throw invalid_argument("gsearch::socket_client::search: out has " + std::to_string(out.size()) + " elements for " +
                           std::to_string(n) + " queries");
  const auto head = protocol::encode(protocol::search_header(t, s, uint64_t(n)));
  const time_point deadline = after(timeout_);
  for (int attempt = 0;; ++attempt) {
    const bool fresh = fd_ < 0;
    if (fresh) {
      connect(deadline);
      // A server that does not know the ring's op answers "malformed" and closes: again, without.
      if (want_ring_ && port_ < 0 && !open_ring(t, deadline)) connect(deadline);
    }
    if (ring_ && ring_->type == t && uint64_t(n) <= ring_->map->capacity()) {
      if (search_ring(queries, n, s, out, deadline, !fresh && attempt == 0)) return;
      continue;  // a connection the server had closed while it was idle: once more, on a new one
    }
    const transfer sent = send_request(fd_, head.data(), head.size(), queries, size_t(n) * size_t(itemsize(t)), deadline);
    if (sent.timed_out) throw broken(past_timeout("did not take the request"));
    // A send that failed may still have an answer waiting (a request refused from its header).
    // An answer's head, count and results in one read where they have arrived together; the
    // reading stops early where the head says that no results follow.
    uint8_t rh[protocol::ok_header_bytes];
    iovec iov[2] = {{rh, sizeof rh}, {out.data(), size_t(n) * 8}};
    const auto no_results = [&](size_t bytes) {
      if (bytes < protocol::response_head_bytes) return false;
      const protocol::response_head h = protocol::decode_response_head(rh);
      return !h.magic_ok || h.code != protocol::status::ok ||
             (bytes >= sizeof rh && protocol::get_le<uint64_t>(rh + protocol::response_head_bytes) != uint64_t(n));
    };
    const transfer got = recv_into(fd_, iov, deadline, sent.done ? spin_ : std::chrono::microseconds(0), no_results);
    // A connection the server closed while it was idle: no byte of an answer, so the request
    // was not served. Sent again once, on a new connection (a search is idempotent); never after a
    // timeout, which would double the load of a server that is slow.
    const bool closed = got.bytes == 0 && !got.timed_out && (got.err == 0 || got.err == ECONNRESET) &&
                        (sent.done || sent.err == EPIPE || sent.err == ECONNRESET);
    if (closed && !fresh && attempt == 0) {
      close();
      continue;
    }
    if (got.bytes < protocol::response_head_bytes) {
      if (got.timed_out) throw broken(past_timeout("did not answer"));
      if (sent.err != 0) throw broken("closed the connection: " + errno_text(sent.err));
      throw broken(got.err ? "closed the connection: " + errno_text(got.err) : std::string("closed the connection"));
    }
    const protocol::response_head h = protocol::decode_response_head(rh);
    if (!h.magic_ok) throw broken("answered something that is not the gsearch protocol");
    if (h.code == protocol::status::ok) {
      if (got.bytes >= sizeof rh) {
        const uint64_t count = protocol::get_le<uint64_t>(rh + protocol::response_head_bytes);
        if (count != uint64_t(n))
          throw broken("answered " + std::to_string(count) + " results for " + std::to_string(n) + " queries");
      }
      if (got.timed_out) throw broken(past_timeout("did not answer"));
      if (!got.done) throw broken("closed the connection mid-answer");
      return;
    }
    // An error: its length and message follow the head, some of them read already (in rh, then
    // in out's bytes).
    std::string rest(reinterpret_cast<const char*>(rh) + protocol::response_head_bytes,
                     std::min(got.bytes, sizeof rh) - protocol::response_head_bytes);
    if (got.bytes > sizeof rh) rest.append(reinterpret_cast<const char*>(out.data()), got.bytes - sizeof rh);
    const auto read_more = [&](size_t bytes) {
      const size_t had = rest.size();
      rest.resize(had + bytes);
      rest.resize(had + recv_full(fd_, rest.data() + had, bytes, deadline).bytes);
    };
    if (rest.size() < 4) read_more(4 - rest.size());
    if (rest.size() < 4) throw broken("closed the connection mid-answer");
    const uint32_t len =
        std::min(protocol::get_le<uint32_t>(reinterpret_cast<const uint8_t*>(rest.data())), uint32_t(1) << 20);
    if (rest.size() < 4 + size_t(len)) read_more(4 + size_t(len) - rest.size());
    throw refused(h.code, rest.substr(4, len));
  }
}

std::string socket_client::past_timeout(const char* what) const {
  return std::string(what) + " within the timeout (" + std::to_string(timeout_.count()) + " ms)";
}

error socket_client::broken(const std::string& what) {
  close();
  return error("the gsearch server at " + address() + " " + what);
}

socket_error socket_client::refused(protocol::status s, const std::string& message) {
  close();  // reconnect for the next request, whatever the server does with this connection
  return socket_error(s, "the gsearch server at " + address() + " answered " + protocol::to_string(s) + ": " + message);
}

// Asks for the connection's ring (protocol op 16) and maps the one passed with the answer. A
// server that offers none answers ok with no ring (capacity 0): the connection's requests go over
// the socket. An error answer (the server is busy, the dtype is not its keys') is thrown as a
// search's would be, but for "malformed" (a server older than the ring, which closes the
// connection): false, and the client asks no more.
bool socket_client::open_ring(dtype t, time_point deadline) {
  const auto head = protocol::encode(protocol::ring_header(protocol::op_ring, t));
  const transfer sent = send_request(fd_, head.data(), head.size(), nullptr, 0, deadline);
  if (sent.timed_out) throw broken(past_timeout("did not take the request"));
  int passed = -1;
  struct closer {
    int& fd;
    ~closer() {
      if (fd >= 0) ::close(fd);
    }
  } close_passed{passed};
  // A send that failed may still have an answer waiting (a connection refused as it was accepted).
  const auto read = [&](void* dst, size_t n) {
    const transfer got = recv_full(fd_, dst, n, deadline, &passed);
    if (got.done) return;
    if (got.timed_out) throw broken(past_timeout("did not answer"));
    throw broken(sent.err ? "closed the connection: " + errno_text(sent.err) : std::string("closed the connection"));
  };
  uint8_t rh[protocol::ok_header_bytes];
  read(rh, protocol::response_head_bytes);
  const protocol::response_head h = protocol::decode_response_head(rh);
  if (!h.magic_ok) throw broken("answered something that is not the gsearch protocol");
  if (h.code != protocol::status::ok) {
    uint8_t lb[4];
    read(lb, sizeof lb);
    std::string message(std::min<uint32_t>(protocol::get_le<uint32_t>(lb), protocol::max_message_bytes), '\0');
    read(message.data(), message.size());
    if (h.code != protocol::status::malformed) throw refused(h.code, message);
    close();
    return want_ring_ = false;
  }
  read(rh + protocol::response_head_bytes, 8);
  const uint64_t capacity = protocol::get_le<uint64_t>(rh + protocol::response_head_bytes);
  if (capacity == 0 || passed < 0) return true;  // no ring offered: the socket
  std::unique_ptr<ring_mapping> m = map_ring(passed, t);
  if (!m || m->capacity() != capacity) return true;  // not a ring: the socket
  const uint32_t number = m->control().request.load(std::memory_order_relaxed);
  ring_ = std::make_unique<ring>(ring{std::move(m), t, number});
  return true;
}

// One request through the ring: the queries and the request published, the doorbell rung where
// no worker watches, the answer spun for and then slept for (a futex) in slices, each ending with
// a look at the socket: nothing comes there between requests, so a byte or the end means that
// the server closed the connection. true once answered; false where the server had closed the
// connection before serving the request and `retry` allows it to be sent again.
bool socket_client::search_ring(const void* queries, int64_t n, side s, span<int64_t> out, time_point deadline,
                                 bool retry) {
  ring_mapping& m = *ring_->map;
  ring_control& k = m.control();
  if (n > 0) std::memcpy(m.queries(), queries, size_t(n) * size_t(itemsize(ring_->type)));
  k.side.store(uint32_t(s), std::memory_order_relaxed);
  k.count.store(uint64_t(n), std::memory_order_relaxed);
  const uint32_t number = ++ring_->number;
  k.request.store(number, std::memory_order_seq_cst);
  if (k.watching.load(std::memory_order_seq_cst) == 0) {
    const auto bell = protocol::encode(protocol::ring_header(protocol::op_doorbell, ring_->type));
    const transfer sent = send_request(fd_, bell.data(), bell.size(), nullptr, 0, deadline);
    if (sent.timed_out) throw broken(past_timeout("did not take the request"));
    if (!sent.done) {
      if (retry) return close(), false;
      throw broken("closed the connection: " + errno_text(sent.err));
    }
  }
  const time_point spin_end = clock_type::now() + spin_;
  for (unsigned i = 1; k.answer.load(std::memory_order_acquire) != number; ++i) {
    if (clock_type::now() < spin_end) {
      if (i % 16 == 0) std::this_thread::yield();  // a core that the server's threads may need
      else cpu_relax();
      continue;
    }
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) == 1) {
      if (k.answer.load(std::memory_order_acquire) == number) break;
      if (retry) return close(), false;
      throw broken("closed the connection");
    }
    const int ms = std::min(10, poll_ms(deadline) < 0 ? 10 : poll_ms(deadline));
    if (ms == 0) throw broken(past_timeout("did not answer"));
    k.sleeping.store(1, std::memory_order_seq_cst);
    const uint32_t seen = k.answer.load(std::memory_order_seq_cst);
    if (seen != number) futex_wait(k.answer, seen, ms);
    k.sleeping.store(0, std::memory_order_relaxed);
  }
  const auto st = protocol::status(k.status.load(std::memory_order_relaxed));
  const uint64_t count = k.answer_count.load(std::memory_order_relaxed);
  if (st == protocol::status::ok) {
    if (count != uint64_t(n))
      throw broken("answered " + std::to_string(count) + " results for " + std::to_string(n) + " queries");
    if (n > 0) std::memcpy(out.data(), m.results(), size_t(n) * 8);
    return true;
  }
  throw refused(st, std::string(reinterpret_cast<const char*>(m.results()),
                                size_t(std::min<uint64_t>(count, m.capacity() * 8))));
}

}  // namespace gsearch
