// The socket front end's shared-memory ring (server_protocol.hpp, op 16; src/server/socket_ring.hpp):
// socket_client's requests through it, with the server's worker watching the ring and without
// (the doorbell), the client spinning for the answer and asleep on its futex; requests beyond
// the ring's capacity over the socket on the same connection; where it is not offered (TCP,
// ring_queries 0, max_rings reached) the client goes on over the socket; and,
// by hand, requests no client would put there (too many queries, a bad side), a second opening,
// a doorbell with no ring, a client that tries to shrink the ring. Every answer against
// std::lower_bound / std::upper_bound.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "gsearch/server_protocol.hpp"
#include "gsearch/server_socket.hpp"
#include "server_cases.hpp"
#include "socket_cases.hpp"
#include "socket_ring.hpp"  // src/server: the ring's layout, to write requests by hand

namespace gsearch::test {
namespace {

using namespace std::chrono_literals;
using protocol::status;

TEST(SocketRingProtocol, TheRingsOpsHaveNoQueries) {
  for (const uint16_t op : {protocol::op_ring, protocol::op_doorbell}) {
    const protocol::verdict v = protocol::check_request(protocol::ring_header(op, dtype::int64), dtype::int64, 1000);
    EXPECT_EQ(v.code, status::ok) << v.message;
    EXPECT_EQ(v.op, op);
    EXPECT_EQ(v.body_bytes, 0u);
    protocol::request_header h = protocol::ring_header(op, dtype::int64);
    h.count = 1;
    EXPECT_EQ(protocol::check_request(h, dtype::int64, 1000).code, status::malformed);
    EXPECT_TRUE(protocol::check_request(h, dtype::int64, 1000).close);
    EXPECT_EQ(protocol::check_request(protocol::ring_header(op, dtype::int32), dtype::int64, 1000).code,
              status::wrong_dtype);
  }
}

// Every size through the ring and beyond it (over the socket), every side, for each way the two
// ends wait: the server's worker spinning on the ring or not (spin 0: a doorbell each request),
// the client spinning for the answer or asleep on it at once.
TEST_F(SocketServer, RequestsGoThroughTheRingWhicheverWayTheEndsWait) {
  for (const auto server_spin : {50us, 0us}) {
    for (const auto client_spin : {default_client_spin, 0us}) {
      SCOPED_TRACE(testing::Message() << "server spin " << server_spin.count() << " us, client spin "
                                      << client_spin.count() << " us");
      socket_options o;
      o.ring_queries = 64;
      o.spin = server_spin;
      listen(o);
      socket_client client(path(), 10s, client_spin);
      EXPECT_EQ(client.ring_capacity(), 0);  // opened with the first request
      int64_t requests = 0;
      for (const int64_t n : {1, 0, 63, 64, 65, 1000, 5, 64}) {
        for (const side sd : server_sides) {
          const std::vector<int64_t> q = queries_of(n, uint64_t(n) * 7 + uint64_t(sd));
          std::vector<int64_t> out(static_cast<size_t>(n), -7);
          client.search(span<const int64_t>(q), sd, span<int64_t>(out));
          EXPECT_EQ(out, reference_all(keys_, q, sd)) << n;
          EXPECT_EQ(client.ring_capacity(), 64) << n;
          ++requests;
        }
      }
      EXPECT_EQ(front_->stats().requests, requests);
      EXPECT_EQ(front_->stats().connections, 1);
      EXPECT_EQ(front_->stats().errors, 0);
      front_.reset();
    }
  }
}

TEST_F(SocketServer, WhereNoRingIsOfferedTheClientGoesOnOverTheSocket) {
  const std::vector<int64_t> q = queries_of(100, 3);
  std::vector<int64_t> out(q.size());
  socket_options o;
  o.ring_queries = 0;
  o.port = 0;
  listen(o);
  for (int way = 0; way < 3; ++way) {
    socket_client client = way == 0 ? socket_client(path(), 10s)                         // ring_queries 0
                           : way == 1 ? socket_client(front_->port(), 10s)                // TCP
                                      : socket_client(path(), 10s, default_client_spin, false);  // not asked
    for (int i = 0; i < 3; ++i) {
      client.search(span<const int64_t>(q), side::right, span<int64_t>(out));
      EXPECT_EQ(out, reference_all(keys_, q, side::right)) << way;
      EXPECT_EQ(client.ring_capacity(), 0) << way;
    }
  }
  EXPECT_EQ(front_->stats().errors, 0);  // "no ring" is not an error
  EXPECT_EQ(front_->stats().requests, 9);
  raw_connection c(path());  // what way 0 was answered: ok, capacity 0
  c.send(bytes_of_header(protocol::ring_header(protocol::op_ring, dtype::int64)));
  const auto r = c.read_response();
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.code, status::ok);
  EXPECT_TRUE(r.results.empty());
  expect_good(c, 10);
}

TEST_F(SocketServer, RingsBeyondMaxRingsAreBusyAndTheirClientsGoOnOverTheSocket) {
  socket_options o;
  o.ring_queries = 1000;
  o.max_rings = 1;
  listen(o);
  const std::vector<int64_t> q = queries_of(10, 5);
  std::vector<int64_t> out(q.size());
  auto first = std::make_unique<socket_client>(path(), 10s);
  first->search(span<const int64_t>(q), side::left, span<int64_t>(out));
  EXPECT_EQ(first->ring_capacity(), 1000);
  EXPECT_EQ(front_->stats().bytes_in_flight, 0);  // rings are not the requests' budget
  socket_client second(path(), 10s);  // no second ring: the socket
  second.search(span<const int64_t>(q), side::left, span<int64_t>(out));
  EXPECT_EQ(second.ring_capacity(), 0);
  EXPECT_EQ(out, reference_all(keys_, q, side::left));
  first.reset();  // its connection closed: its ring given back
  int64_t capacity = 0;  // (the loop sees the close soon after)
  for (int i = 0; i < 1000 && capacity == 0; ++i) {
    socket_client third(path(), 10s);
    third.search(span<const int64_t>(q), side::left, span<int64_t>(out));
    capacity = third.ring_capacity();
    if (capacity == 0) std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(capacity, 1000);
}

TEST_F(SocketServer, AShutDownServerAnswersStatus4ThroughTheRing) {
  listen();
  socket_client client(path(), 10s);
  const std::vector<int64_t> q = queries_of(3, 9);
  std::vector<int64_t> out(q.size());
  client.search(span<const int64_t>(q), side::left, span<int64_t>(out));
  ASSERT_GT(client.ring_capacity(), 0);
  server_->shutdown();
  try {
    client.search(span<const int64_t>(q), side::left, span<int64_t>(out));
    ADD_FAILURE() << "no error";
  } catch (const socket_error& e) {
    EXPECT_EQ(e.status(), status::shut_down);
    EXPECT_NE(std::string(e.what()).find("shut down"), std::string::npos) << e.what();
  }
  EXPECT_EQ(client.ring_capacity(), 0);  // closed, as after an error over the socket
  EXPECT_FALSE(front_->failed());
}

TEST_F(SocketServer, AConnectionClosedWhileIdleIsOpenedAgainWithItsRing) {
  socket_options o;
  o.idle_timeout = 300ms;
  listen(o);
  socket_client client(path(), 10s);
  const std::vector<int64_t> q = {1, 2, 3};
  std::vector<int64_t> out(3);
  client.search(span<const int64_t>(q), side::left, span<int64_t>(out));
  EXPECT_GT(client.ring_capacity(), 0);
  // The server closes it after 300 ms idle; the ring's request then rings a doorbell on a closed
  // connection, and is sent again on a new one.
  EXPECT_TRUE(eventually([&] { return front_->stats().open == 0; }));
  client.search(span<const int64_t>(q), side::right, span<int64_t>(out));
  EXPECT_EQ(out, reference_all(keys_, q, side::right));
  EXPECT_GT(client.ring_capacity(), 0);
  EXPECT_EQ(front_->stats().connections, 2);
}

TEST_F(SocketDir, ARequestThatTimedOutInTheRingIsNotSentAgain) {
  std::atomic<int> searches{0};
  socket_options o;
  o.path = path();
  socket_server front(
      dtype::int64, 3,
      [&](const void*, int64_t n, side, int64_t* out) {
        if (searches.fetch_add(1) == 1) std::this_thread::sleep_for(600ms);  // the second one is late
        std::fill(out, out + n, int64_t(2));
      },
      o);
  socket_client c(path(), 300ms);
  std::vector<int64_t> q = {4, 5}, out(2);
  c.search(span<const int64_t>(q), side::left, span<int64_t>(out));
  EXPECT_EQ(out, std::vector<int64_t>(2, 2));
  EXPECT_GT(c.ring_capacity(), 0);
  try {
    c.search(span<const int64_t>(q), side::left, span<int64_t>(out));
    ADD_FAILURE() << "no timeout";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("did not answer within the timeout (300 ms)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(c.ring_capacity(), 0);  // its ring closed with its connection
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(searches.load(), 2);  // not a third: a timeout is no closed connection
  c.search(span<const int64_t>(q), side::left, span<int64_t>(out));  // a new connection, a new ring
  EXPECT_GT(c.ring_capacity(), 0);
  front.stop();
}

// ---- by hand ------------------------------------------------------------------------------------

// A raw connection that opened a ring (the descriptor read with recvmsg), for requests no client
// would put there.
class raw_ring {
 public:
  explicit raw_ring(const std::string& path) : c_(path) {
    c_.send(bytes_of_header(protocol::ring_header(protocol::op_ring, dtype::int64)));
    uint8_t head[protocol::ok_header_bytes];
    size_t got = 0;
    while (got < sizeof head) {  // (the raw connection's reads are under a 10 s timeout)
      iovec iov{head + got, sizeof head - got};
      socket_detail::descriptor_space control;
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control.bytes;
      msg.msg_controllen = sizeof control.bytes;
      const ssize_t r = recvmsg(c_.fd(), &msg, MSG_CMSG_CLOEXEC);
      if (r <= 0) break;
      socket_detail::take_descriptors(msg, fd_);
      got += size_t(r);
    }
    EXPECT_EQ(got, sizeof head);
    EXPECT_EQ(protocol::decode_response_head(head).code, status::ok);
    EXPECT_GE(fd_, 0);
    if (fd_ >= 0) map_ = socket_detail::map_ring(fd_, dtype::int64);
    EXPECT_NE(map_, nullptr);
  }
  ~raw_ring() {
    if (fd_ >= 0) ::close(fd_);
  }
  raw_connection& connection() { return c_; }
  socket_detail::ring_mapping& map() { return *map_; }
  int descriptor() const { return fd_; }

  // Puts a request of `count` queries (the first q.size() of them q) on `side` in the ring, rings
  // the doorbell and waits (up to 10 s) for the answer: its status, and its results or message.
  struct answer {
    status code = status::malformed;
    std::vector<int64_t> results;
    std::string message;
  };
  answer request(uint64_t count, uint32_t side_code, const std::vector<int64_t>& q) {
    socket_detail::ring_control& k = map_->control();
    std::memcpy(map_->queries(), q.data(), q.size() * 8);
    k.count.store(count);
    k.side.store(side_code);
    k.request.store(++number_);
    c_.send(bytes_of_header(protocol::ring_header(protocol::op_doorbell, dtype::int64)));
    answer a;
    if (!eventually([&] { return k.answer.load() == number_; })) return a;
    a.code = status(k.status.load());
    const uint64_t n = k.answer_count.load();
    if (a.code == status::ok) a.results.assign(map_->results(), map_->results() + n);
    else a.message.assign(reinterpret_cast<const char*>(map_->results()), n);
    return a;
  }

 private:
  raw_connection c_;
  int fd_ = -1;
  std::unique_ptr<socket_detail::ring_mapping> map_;
  uint32_t number_ = 0;
};

TEST_F(SocketServer, RequestsNoClientWouldSendAreAnsweredInTheRing) {
  socket_options o;
  o.ring_queries = 100;
  listen(o);
  raw_ring r(path());
  ASSERT_EQ(r.map().capacity(), 100u);
  const std::vector<int64_t> q = queries_of(100, 11);
  auto a = r.request(101, 0, q);
  EXPECT_EQ(a.code, status::malformed);
  EXPECT_NE(a.message.find("101 queries in a ring request; its ring holds 100"), std::string::npos) << a.message;
  a = r.request(~uint64_t(0), 0, q);
  EXPECT_EQ(a.code, status::malformed);
  a = r.request(5, 3, q);
  EXPECT_EQ(a.code, status::malformed);
  EXPECT_NE(a.message.find("side code 3"), std::string::npos) << a.message;
  a = r.request(100, 1, q);  // and the ring still serves
  EXPECT_EQ(a.code, status::ok) << a.message;
  EXPECT_EQ(a.results, reference_all(keys_, q, side::right));
  // A second doorbell for a request answered already: nothing; a request over the socket of the
  // same connection is answered there.
  r.connection().send(bytes_of_header(protocol::ring_header(protocol::op_doorbell, dtype::int64)));
  expect_good(r.connection(), 30);
  // A second opening: no second ring (ok, capacity 0), the connection and its ring kept.
  r.connection().send(bytes_of_header(protocol::ring_header(protocol::op_ring, dtype::int64)));
  const auto again = r.connection().read_response();
  EXPECT_EQ(again.code, status::ok);
  EXPECT_TRUE(again.results.empty());
  a = r.request(3, 0, q);
  EXPECT_EQ(a.code, status::ok) << a.message;
  EXPECT_EQ(a.results, reference_all(keys_, std::vector<int64_t>(q.begin(), q.begin() + 3), side::left));
  EXPECT_EQ(front_->stats().errors, 3);
  // The ring cannot be shrunk (the server's accesses would fault) or grown.
  EXPECT_NE(ftruncate(r.descriptor(), 0), 0);
  EXPECT_NE(ftruncate(r.descriptor(), off_t(r.map().bytes()) * 2), 0);
}

TEST_F(SocketServer, ADoorbellWithoutARingIsIgnored) {
  listen();
  raw_connection c(path());
  c.send(bytes_of_header(protocol::ring_header(protocol::op_doorbell, dtype::int64)));
  expect_good(c, 20);  // the next answer is this request's
  EXPECT_EQ(front_->stats().errors, 0);
}

}  // namespace
}  // namespace gsearch::test
