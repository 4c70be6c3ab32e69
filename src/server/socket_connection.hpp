#pragma once
// A connection of the socket front end (socket_server_impl.hpp): its record (the phase it is in, the
// request being read, the response being written, the budget's bytes it holds) and the steps
// that need nothing of the server: the staged bytes and the reads through them, the buffers.

#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "gsearch/server_protocol.hpp"
#include "socket_common.hpp"
#include "socket_ring.hpp"

namespace gsearch::socket_detail {

// Whether bytes (or the end of the stream) wait on fd.
inline bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

constexpr size_t staged_bytes = 512;  // a header is read with what follows it, up to this (connection::in)
constexpr size_t first_body_bytes = size_t(1) << 16;  // a body buffer starts here and doubles as bytes arrive
constexpr uint64_t small_request_bytes = uint64_t(1) << 16;  // reserved from its header alone (no peek)
constexpr size_t kept_buffer_bytes = size_t(1) << 20;  // a worker keeps buffers up to this between requests
constexpr auto linger_time = std::chrono::milliseconds(250);
constexpr auto sweep_period = std::chrono::milliseconds(10);  // the loop's timeout checks
constexpr size_t max_lingering = 256;  // connections closing politely at once (more: closed at once)

enum class phase {
  idle,       // between requests (no byte of the next one yet)
  header,     // reading a request's header
  body,       // reading its body (buffer grown as it arrives)
  skip,       // reading and dropping the body of a request refused with its connection kept
  parked,     // waiting for bytes of the memory budget (not polled)
  search,     // whole: queued for a worker, or searched by one
  write,      // writing the response
  lingering,  // answered and closing: its writing side shut, what it sends is dropped
  closed,     // to be closed by the loop
};

struct connection {
  int fd = -1;
  bool with_worker = false;  // the loop's flag: a worker holds it (the loop reads nothing else of it)
  bool armed = false;        // the loop's flag: it waits for an event of it (one: EPOLLONESHOT)
  bool peer_known = false;
  bool local = false;  // on the Unix-domain socket (a ring may be opened)
  uid_t peer = 0;
  phase ph = phase::idle;
  time_point deadline = never;
  // Bytes read and not yet taken: a header is read with up to staged_bytes more, so that a small
  // request (its header and body, sent at once) costs one recv; what follows it stays here for the
  // next request.
  uint8_t in[staged_bytes];
  size_t in_at = 0, in_end = 0;
  // The request being read.
  uint8_t head[protocol::request_header_bytes];
  size_t head_got = 0;
  protocol::verdict v;
  uint8_t* body = nullptr;  // malloc'ed (realloc grows it without a copy where it can)
  size_t body_cap = 0, body_got = 0;
  uint64_t skip_left = 0;
  // The response: results (header first) or an error message.
  uint64_t* out = nullptr;
  size_t out_cap = 0;  // in words
  std::string error_response;
  const uint8_t* sending = nullptr;
  size_t send_left = 0;
  bool close_after = false;
  int64_t reserved = 0;  // the budget's bytes its request holds (its body and its response)
  // Its shared-memory ring (socket_ring.hpp), once opened: the last request answered there, and
  // whether the request to search is the ring's.
  std::unique_ptr<ring_mapping> ring;
  uint32_t ring_served = 0;
  bool from_ring = false;

  ~connection() {
    std::free(body);
    std::free(out);
  }
};

// Drops the connection's buffers (all of them, or those over kept_buffer_bytes: a worker keeps
// small ones for its connection's next request).
inline void release_buffers(connection& c, bool all) {
  if (c.body && (all || c.body_cap > kept_buffer_bytes)) std::free(std::exchange(c.body, nullptr)), c.body_cap = 0;
  if (c.out && (all || c.out_cap * 8 > kept_buffer_bytes)) std::free(std::exchange(c.out, nullptr)), c.out_cap = 0;
}

// Grows a buffer to `bytes`, its contents kept (realloc grows a large one without a copy).
template <class U>
bool grow(U*& buffer, size_t& cap_bytes, size_t bytes) {
  if (cap_bytes >= bytes) return true;
  void* p = std::realloc(buffer, bytes);
  if (p == nullptr) return false;
  buffer = static_cast<U*>(p);
  cap_bytes = bytes;
  return true;
}

inline size_t staged(const connection& c) { return c.in_end - c.in_at; }

// Whether a byte of a request waits (or the end of the stream).
inline bool has_bytes(const connection& c) { return staged(c) > 0 || readable(c.fd); }

// Takes up to n bytes of the stream into dst: the staged ones first, else what one recv gives
// (`stage`: through `in`, up to staged_bytes, where the request's length is not known yet; else
// no more than n, so that no byte of the next request is read). recv's result when it gives none.
inline ssize_t take(connection& c, void* dst, size_t n, bool stage) {
  if (staged(c) == 0) {
    if (!stage || n >= sizeof c.in) return recv(c.fd, dst, n, MSG_DONTWAIT);
    const ssize_t r = recv(c.fd, c.in, sizeof c.in, MSG_DONTWAIT);
    if (r <= 0) return r;
    c.in_at = 0;
    c.in_end = size_t(r);
  }
  const size_t k = std::min(n, staged(c));
  std::memcpy(dst, c.in + c.in_at, k);
  c.in_at += k;
  return ssize_t(k);
}

// Writes what the socket takes of the response: true once all of it is sent.
inline bool write_some(connection& c) {
  while (c.send_left > 0) {
    const ssize_t r = send(c.fd, c.sending, c.send_left, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r > 0) {
      c.sending += r;
      c.send_left -= size_t(r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    c.ph = phase::closed;  // the client went away
    return false;
  }
  return true;
}

// The budget's bytes a request takes: its body, and its response (header and results).
inline uint64_t need_of(const protocol::verdict& v) {
  return v.body_bytes + protocol::ok_header_bytes + 8 * v.count;
}

}  // namespace gsearch::socket_detail
