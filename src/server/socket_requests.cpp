// The search server's socket front end (server_socket.hpp), a connection's side: its
// non-blocking steps (read_some, the header's checks, the ring's opening and doorbell), the
// memory budget, and the workers that search whole requests and answer them (socket_server.cpp
// has the loop; socket_server_impl.hpp the state). docs/design.md, "The socket front end".

#include <sys/socket.h>
#include <unistd.h>

#include "socket_server_impl.hpp"

namespace gsearch {

// ---- the memory budget ----------------------------------------------------------------------

bool socket_server::impl::reserve(connection& c, int64_t bytes) {
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

// ---- a connection's steps (the loop's and the workers') -------------------------------------

void socket_server::impl::answer_error(connection& c, protocol::status s, const std::string& message,
                                       bool close) {
  (s == protocol::status::busy ? n_busy : n_errors).fetch_add(1, std::memory_order_relaxed);
  c.error_response = protocol::encode_error(s, message);
  c.sending = reinterpret_cast<const uint8_t*>(c.error_response.data());
  c.send_left = c.error_response.size();
  c.close_after = close;
  c.ph = phase::write;
  c.deadline = after(o.request_timeout);
}

auto socket_server::impl::read_some(connection& c) -> step {
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

auto socket_server::impl::checked_header(connection& c) -> step {
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

auto socket_server::impl::open_ring(connection& c) -> step {
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

bool socket_server::impl::take_ring_request(connection& c) {
  if (!c.ring || c.ph != phase::idle || c.ring->control().request.load(std::memory_order_acquire) == c.ring_served)
    return false;
  c.ph = phase::search;
  c.from_ring = true;
  return true;
}

auto socket_server::impl::whole(connection& c) -> step {
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

auto socket_server::impl::ended(connection& c, ssize_t r, const char* part, size_t got, size_t want) -> step {
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

void socket_server::impl::next_request(connection& c) {
  unreserve(c);
  c.head_got = c.body_got = 0;
  c.skip_left = 0;
  c.error_response.clear();
  c.sending = nullptr;
  c.ph = phase::idle;
  c.deadline = after(o.idle_timeout);
}

// ---- the workers ----------------------------------------------------------------------------

protocol::status socket_server::impl::run_search(const void* queries, int64_t n, side sd, int64_t* out,
                                                 std::string& message) {
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

void socket_server::impl::search_request(connection& c) {
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

void socket_server::impl::search_ring(connection& c) {
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

void socket_server::impl::serve(connection& c) {
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

auto socket_server::impl::await_request(connection& c) -> step {
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

bool socket_server::impl::hold(connection& c) {
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

void socket_server::impl::worker() {
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

}  // namespace gsearch
