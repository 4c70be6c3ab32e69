// The search server's socket protocol (server_protocol.hpp: bytes and header checks, no sockets)
// and its socket front end (server_socket.hpp) on a real Unix-domain socket in a temporary folder
// and on 127.0.0.1: malformed, wrong-version, wrong-dtype, oversized, truncated and stalled
// requests, clients that vanish mid-request, and after each a good request still answered; 16
// concurrent clients with every answer against std::lower_bound / std::upper_bound; stop() with
// requests in flight; stale socket files; a shut-down and a failed server.
// Bounded: fixed request counts, every socket read under a timeout, every server stopped.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "gsearch/server_protocol.hpp"
#include "gsearch/server_socket.hpp"
#include "server_cases.hpp"
#include "socket_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using protocol::status;

// ---- the protocol alone --------------------------------------------------------------------------

TEST(SocketProtocol, RequestHeaderBytes) {
  const auto b = protocol::encode(protocol::search_header(dtype::float64, side::right, 0x0102030405060708ull));
  const uint8_t want[20] = {'G', 'S', 'R', 'Q', 1, 0, 1, 0, 5, 1, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_EQ(std::memcmp(b.data(), want, 20), 0);
  const protocol::request_header h = protocol::decode_request(b.data());
  EXPECT_EQ(h.version, 1);
  EXPECT_EQ(h.op, 1);
  EXPECT_EQ(h.dtype, 5);
  EXPECT_EQ(h.side, 1);
  EXPECT_EQ(h.count, 0x0102030405060708ull);
  EXPECT_EQ(protocol::request_header_bytes, 20u);
}

TEST(SocketProtocol, ResponseBytes) {
  const auto ok = protocol::encode_ok_header(3);
  const uint8_t want[16] = {'G', 'S', 'R', 'S', 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(ok.data(), want, 16), 0);
  const std::string e = protocol::encode_error(status::wrong_dtype, "bad");
  EXPECT_EQ(e, std::string("GSRS\x02\0\0\0\x03\0\0\0bad", 15));
  const auto h = protocol::decode_response_head(reinterpret_cast<const uint8_t*>(e.data()));
  EXPECT_TRUE(h.magic_ok);
  EXPECT_EQ(h.code, status::wrong_dtype);
  // A long message is cut at max_message_bytes, never inside a UTF-8 character.
  std::string longer(protocol::max_message_bytes - 1, 'a');
  longer += "\xc3\xa9\xc3\xa9";  // é é: the first straddles the limit
  const std::string cut = protocol::encode_error(status::failed, longer);
  EXPECT_EQ(cut.size(), protocol::error_header_bytes + protocol::max_message_bytes - 1);
  EXPECT_EQ(protocol::to_string(status::too_large), "too large");
  EXPECT_EQ(protocol::to_string(status(9)), "status 9");
}

TEST(SocketProtocol, HeaderChecksInOrder) {
  const auto check = [](protocol::request_header h) { return protocol::check_request(h, dtype::int64, 1000); };
  protocol::request_header good = protocol::search_header(dtype::int64, side::pred, 10);
  protocol::verdict v = check(good);
  EXPECT_EQ(v.code, status::ok);
  EXPECT_EQ(v.body_bytes, 80u);
  EXPECT_EQ(v.side, side::pred);
  EXPECT_EQ(v.count, 10u);

  auto h = good;
  h.magic[0] = 'X';
  v = check(h);
  EXPECT_EQ(v.code, status::malformed);
  EXPECT_TRUE(v.close);
  EXPECT_NE(v.message.find("magic"), std::string::npos);
  h = good;
  h.version = 2;
  v = check(h);
  EXPECT_EQ(v.code, status::malformed);
  EXPECT_TRUE(v.close);
  EXPECT_NE(v.message.find("version 2"), std::string::npos);
  h = good;
  h.op = 3;  // stop is not a client's op
  EXPECT_TRUE(check(h).close);
  h = good;
  h.dtype = 6;
  v = check(h);
  EXPECT_EQ(v.code, status::malformed);
  EXPECT_TRUE(v.close);
  h = good;
  h.count = 1001;
  h.dtype = uint8_t(dtype::float32);  // too large is found before the dtype's mismatch
  v = check(h);
  EXPECT_EQ(v.code, status::too_large);
  EXPECT_TRUE(v.close);
  EXPECT_NE(v.message.find("at most 1000"), std::string::npos);
  h.count = ~uint64_t(0);  // no overflow of count * itemsize
  EXPECT_EQ(check(h).code, status::too_large);
  // Framing intact: the body is dropped and the connection kept.
  h = good;
  h.side = 3;
  v = check(h);
  EXPECT_EQ(v.code, status::malformed);
  EXPECT_FALSE(v.close);
  EXPECT_EQ(v.body_bytes, 80u);
  h = good;
  h.reserved = 1;
  EXPECT_FALSE(check(h).close);
  h = good;
  h.dtype = uint8_t(dtype::uint32);
  v = check(h);
  EXPECT_EQ(v.code, status::wrong_dtype);
  EXPECT_FALSE(v.close);
  EXPECT_EQ(v.body_bytes, 40u);
  EXPECT_NE(v.message.find("uint32"), std::string::npos);
  EXPECT_NE(v.message.find("int64"), std::string::npos);
}

// ---- a real socket (socket_cases.hpp: raw connections, the fixtures) -------------------------------

TEST_F(SocketServer, ManyRequestsOnOneConnection) {
  listen();
  raw_connection c(path());
  for (int64_t n : {0, 1, 7, 1000, 3}) expect_good(c, n);
  EXPECT_EQ(front_->stats().requests, 5);
  EXPECT_EQ(front_->key_dtype(), dtype::int64);
  EXPECT_EQ(front_->port(), -1);
}

TEST_F(SocketServer, RequestsSentTogetherAreAnsweredInOrder) {
  // A client may send its next requests before it reads the answers: the bytes the front end
  // reads with one request's header (up to 512) that belong to the next ones are kept for them,
  // a refused request's body among them.
  listen();
  raw_connection c(path());
  std::string all;
  std::vector<std::vector<int64_t>> qs;
  for (int64_t n : {1, 0, 3, 40, -1, 1, 200, 2, 64}) {
    if (n < 0) {  // float32 queries for int64 keys: answered, its body dropped, the connection kept
      all += bytes_of_header(dtype::float32, side::left, 3) + bytes_of(std::vector<float>{1, 2, 3});
      qs.emplace_back();
      continue;
    }
    std::vector<int64_t> q;
    for (int64_t i = 0; i < n; ++i) q.push_back((i * 53 + n) % 2100 - 50);
    all += bytes_of_header(dtype::int64, side::left, uint64_t(n)) + bytes_of(q);
    qs.push_back(q);
  }
  c.send(all);
  for (size_t i = 0; i < qs.size(); ++i) {
    const auto r = c.read_response();
    ASSERT_TRUE(r.complete) << i;
    if (i == 4) {
      EXPECT_EQ(r.code, status::wrong_dtype);
      continue;
    }
    ASSERT_EQ(r.code, status::ok) << i << ": " << r.message;
    EXPECT_EQ(r.results, reference_all(keys_, qs[i], side::left)) << i;
  }
  EXPECT_EQ(front_->stats().requests, int64_t(qs.size()) - 1);
}

TEST_F(SocketServer, TheClientReadsAnErrorWhateverSizeItsResultsAre) {
  // The client reads an answer's head and results in one go: an error's message lands where the
  // results would, whole, partly or not at all (0 queries), and is read out of there.
  listen();
  for (int64_t n : {0, 1, 3, 1000}) {
    socket_client client(path(), 5s);
    const std::vector<float> q(size_t(n), 1.5f);
    std::vector<int64_t> out(static_cast<size_t>(n));
    try {
      client.search(span<const float>(q), side::left, span<int64_t>(out));
      ADD_FAILURE() << n << ": no error";
    } catch (const socket_error& e) {
      EXPECT_EQ(e.status(), status::wrong_dtype) << n;
      EXPECT_NE(std::string(e.what()).find("queries of dtype float32 for keys of dtype int64"), std::string::npos)
          << n << ": " << e.what();
    }
    std::vector<int64_t> good(static_cast<size_t>(n), 7), results(static_cast<size_t>(n));
    client.search(span<const int64_t>(good), side::left, span<int64_t>(results));  // the client is still good
    EXPECT_EQ(results, reference_all(keys_, good, side::left)) << n;
  }
}

TEST_F(SocketServer, BadMagicVersionOpOrDtypeCodeIsAnsweredAndClosed) {
  listen();
  for (int what = 0; what < 4; ++what) {
    auto h = protocol::search_header(dtype::int64, side::left, 2);
    const char* expect = "";
    if (what == 0) h.magic = {'G', 'E', 'T', ' '}, expect = "magic";
    if (what == 1) h.version = 7, expect = "version 7";
    if (what == 2) h.op = 9, expect = "op 9";
    if (what == 3) h.dtype = 200, expect = "dtype code 200";
    raw_connection c(path());
    c.send(bytes_of_header(h) + std::string(16, '\0'));
    const auto r = c.read_response();
    ASSERT_TRUE(r.complete) << what;
    EXPECT_EQ(r.code, status::malformed) << what;
    EXPECT_NE(r.message.find(expect), std::string::npos) << r.message;
    EXPECT_TRUE(c.closed_by_server()) << what;
    expect_good();
  }
}

TEST_F(SocketServer, WrongDtypeOrSideIsAnsweredAndTheConnectionKept) {
  listen();
  raw_connection c(path());
  const std::vector<float> fq = {1.0f, 2.0f, 3.0f};
  c.send(bytes_of_header(dtype::float32, side::left, 3) + bytes_of(fq));
  auto r = c.read_response();
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.code, status::wrong_dtype);
  EXPECT_NE(r.message.find("queries of dtype float32 for keys of dtype int64"), std::string::npos) << r.message;
  expect_good(c);
  auto h = protocol::search_header(dtype::int64, side::left, 2);
  h.side = 5;
  c.send(bytes_of_header(h) + std::string(16, '\0'));
  r = c.read_response();
  EXPECT_EQ(r.code, status::malformed);
  EXPECT_NE(r.message.find("side code 5"), std::string::npos) << r.message;
  expect_good(c);
}

TEST_F(SocketServer, OversizedIsRefusedFromItsHeaderAlone) {
  listen();
  for (uint64_t count : {uint64_t(1001), uint64_t(1) << 62}) {
    raw_connection c(path());
    c.send(bytes_of_header(dtype::int64, side::left, count));  // no body: none is read
    const auto r = c.read_response();
    ASSERT_TRUE(r.complete);
    EXPECT_EQ(r.code, status::too_large);
    EXPECT_NE(r.message.find("at most 1000"), std::string::npos) << r.message;
    EXPECT_TRUE(c.closed_by_server());
  }
  // The client's own view: a socket_error naming the limit, while it was still sending.
  socket_client client(path(), 10s);
  std::vector<int64_t> q(5000, 3), out(5000);
  try {
    client.search(span<const int64_t>(q), side::left, span<int64_t>(out));
    ADD_FAILURE() << "no error";
  } catch (const socket_error& e) {
    EXPECT_EQ(e.status(), status::too_large);
    EXPECT_NE(std::string(e.what()).find("5000 queries in one request"), std::string::npos) << e.what();
  }
  expect_good();
}

TEST_F(SocketServer, TruncatedHeaderOrBodyIsAnsweredAndClosed) {
  listen();
  {
    raw_connection c(path());
    c.send(bytes_of_header(dtype::int64, side::left, 4).substr(0, 11));
    c.shut_writing();
    const auto r = c.read_response();
    ASSERT_TRUE(r.complete);
    EXPECT_EQ(r.code, status::malformed);
    EXPECT_NE(r.message.find("truncated request"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("11 of 20"), std::string::npos) << r.message;
  }
  {
    raw_connection c(path());
    c.send(bytes_of_header(dtype::int64, side::left, 100) + std::string(400, '\0'));
    c.shut_writing();
    const auto r = c.read_response();
    ASSERT_TRUE(r.complete);
    EXPECT_EQ(r.code, status::malformed);
    EXPECT_NE(r.message.find("400 of 800"), std::string::npos) << r.message;
    EXPECT_TRUE(c.closed_by_server());
  }
  expect_good();
}

TEST_F(SocketServer, ClientsThatVanishMidRequestDisturbNoOne) {
  listen();
  raw_connection steady(path());
  for (int i = 0; i < 20; ++i) {
    raw_connection c(path());
    const std::string req = bytes_of_header(dtype::int64, side::right, 500) + std::string(4000, '\0');
    c.send(req.substr(0, size_t(i % 2 ? 9 : 1000 + i)));  // mid-header, mid-body
    c.close();
    expect_good(steady);
  }
  // One that sends a whole request and leaves before its answer.
  {
    raw_connection c(path());
    c.send(bytes_of_header(dtype::int64, side::right, 1000) + std::string(8000, '\0'));
    c.close();
  }
  expect_good(steady);
  expect_good();
}

TEST_F(SocketServer, AStalledRequestTimesOutAndAnIdleConnectionCloses) {
  socket_options o;
  o.request_timeout = 200ms;
  o.idle_timeout = 300ms;
  listen(o);
  raw_connection stalled(path());
  stalled.send(bytes_of_header(dtype::int64, side::left, 10).substr(0, 5));
  const auto start = std::chrono::steady_clock::now();
  const auto r = stalled.read_response();
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.code, status::malformed);
  EXPECT_NE(r.message.find("did not arrive in time (5 of 20 bytes)"), std::string::npos) << r.message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_TRUE(stalled.closed_by_server());

  raw_connection idle(path());
  expect_good(idle);
  EXPECT_TRUE(idle.closed_by_server());  // after 300 ms
  // socket_client sends again once on a connection the server closed while it was idle.
  socket_client client(path(), 10s);
  std::vector<int64_t> q = {1, 2, 3}, out(3);
  client.search(span<const int64_t>(q), side::left, span<int64_t>(out));
  std::this_thread::sleep_for(500ms);
  client.search(span<const int64_t>(q), side::right, span<int64_t>(out));
  EXPECT_EQ(out, reference_all(keys_, q, side::right));
}

TEST_F(SocketServer, AShutDownServerAnswersStatus4) {
  listen();
  server_->shutdown();
  raw_connection c(path());
  c.send(bytes_of_header(dtype::int64, side::left, 1) + bytes_of(std::vector<int64_t>{5}));
  const auto r = c.read_response();
  EXPECT_EQ(r.code, status::shut_down);
  EXPECT_NE(r.message.find("shut down"), std::string::npos) << r.message;
  EXPECT_FALSE(front_->failed());
}

TEST_F(SocketServer, StaleSocketFilesAreReplacedLiveOnesAndOtherFilesRefused) {
  // A socket file left by a process that died: bound, never unlinked.
  {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path().c_str(), sizeof a.sun_path - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    close(fd);
  }
  ASSERT_TRUE(fs::is_socket(path()));
  listen();
  expect_good();
  socket_options o;
  o.path = path();
  EXPECT_THROW(socket_server(*server_, o), invalid_argument);  // a server answers there
  expect_good();
  std::ofstream(path("file")) << "precious";
  o.path = path("file");
  EXPECT_THROW(socket_server(*server_, o), invalid_argument);
  EXPECT_EQ(fs::file_size(path("file")), 8u);
  o.path = std::string(200, 'x');
  EXPECT_THROW(socket_server(*server_, o), invalid_argument);
  o.path.clear();
  EXPECT_THROW(socket_server(*server_, o), invalid_argument);  // neither a path nor a port
  front_->stop();
  EXPECT_FALSE(fs::exists(path()));
  front_->stop();  // idempotent
}

TEST_F(SocketDir, AFailedServerAnswersStatus5AndSaysSo) {
  std::atomic<int> calls{0};
  socket_options o;
  o.path = path();
  socket_server front(
      dtype::float32, 10,
      [&](const void*, int64_t, side, int64_t*) {
        calls.fetch_add(1);
        throw error("gsearch::server: the server's loop failed (a CUDA error)");
      },
      o);
  socket_client client(path(), 10s);
  std::vector<float> q = {1.0f};
  std::vector<int64_t> out(1);
  for (int i = 0; i < 2; ++i) {
    try {
      client.search(span<const float>(q), side::left, span<int64_t>(out));
      ADD_FAILURE() << "no error";
    } catch (const socket_error& e) {
      EXPECT_EQ(e.status(), status::failed);
      EXPECT_NE(std::string(e.what()).find("a CUDA error"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(calls.load(), 2);
  EXPECT_TRUE(front.failed());
  EXPECT_NE(front.failure().find("a CUDA error"), std::string::npos);
}

TEST_F(SocketDir, ClientErrorsNameTheServer) {
  socket_client nobody(path("none.sock"), 1s);
  std::vector<int32_t> q = {1};
  std::vector<int64_t> out(1);
  try {
    nobody.search(span<const int32_t>(q), side::left, span<int64_t>(out));
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect to the gsearch server at " + path("none.sock")),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(socket_client(0), invalid_argument);
  EXPECT_THROW(socket_client(std::string(300, 'p')), invalid_argument);
}

// ---- many clients ---------------------------------------------------------------------------------

template <class T>
class SocketClients : public SocketDir {};
TYPED_TEST_SUITE(SocketClients, KeyTypes);

constexpr auto& kSides = server_sides;

TYPED_TEST(SocketClients, SixteenClientsGetTheReferenceAnswers) {
  using T = TypeParam;
  const std::vector<T> keys = sorted_keys<T>(4000, 11, 3000);
  server<T> s(cpu, span<const T>(keys));
  socket_options o;
  o.path = this->path();
  o.port = 0;  // and 127.0.0.1, a free port
  socket_server front(s, o);
  ASSERT_GT(front.port(), 0);
  const int clients = 16, requests = test_subset() ? 40 : 200;
  std::atomic<int> wrong{0}, errors{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < clients; ++w)
    threads.emplace_back([&, w] {
      try {
        socket_client c = w % 4 == 3 ? socket_client(front.port(), 20s) : socket_client(this->path(), 20s);
        std::mt19937_64 rng(500 + uint64_t(w));
        for (int i = 0; i < requests; ++i) {
          const int64_t n = i % 9 == 0 ? 0 : 1 + int64_t(rng() % (i % 5 == 0 ? 2000 : 16));
          const std::vector<T> q = random_queries<T>(rng, n, 3200);
          const side sd = kSides[rng() % 3];
          std::vector<int64_t> out(static_cast<size_t>(n), -7);
          c.search(span<const T>(q), sd, span<int64_t>(out));
          if (out != reference_all(keys, q, sd)) wrong.fetch_add(1);
        }
      } catch (const std::exception& e) {
        errors.fetch_add(1);
        ADD_FAILURE() << e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(front.stats().requests, clients * requests);
  EXPECT_EQ(front.stats().connections, clients);
  EXPECT_EQ(front.stats().errors, 0);
  EXPECT_EQ(s.stats().requests, clients * requests);
  front.stop();
  EXPECT_FALSE(fs::exists(this->path()));
}

TEST_F(SocketDir, StopAnswersTheRequestsInFlight) {
  std::vector<int32_t> keys;
  for (int32_t i = 0; i < 5000; ++i) keys.push_back(i / 3);
  server_options so;
  so.preferred_batch_queries = int64_t(1) << 30;  // never reached: each batch waits max_delay
  so.max_delay = 400ms;
  server<int32_t> s(cpu, span<const int32_t>(keys), so);
  socket_options o;
  o.path = path();
  auto front = std::make_unique<socket_server>(s, o);
  constexpr int clients = 8;
  std::atomic<int> answered{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < clients; ++w)
    threads.emplace_back([&, w] {
      socket_client c(path(), 20s);
      std::vector<int32_t> q = {w, 100 + w, 2000 + w};
      std::vector<int64_t> out(3);
      try {
        c.search(span<const int32_t>(q), side::right, span<int64_t>(out));
        answered.fetch_add(1);
        if (out != reference_all(keys, q, side::right)) wrong.fetch_add(1);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  // Every request has reached the server (which holds it for max_delay) when stop() is called.
  for (int i = 0; i < 400 && front->stats().connections < clients; ++i) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(100ms);
  const auto start = std::chrono::steady_clock::now();
  front->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(answered.load(), clients);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_FALSE(fs::exists(path()));
  // Stopped: nobody answers there, and the server itself still runs.
  socket_client late(path(), 1s);
  std::vector<int32_t> q = {1};
  std::vector<int64_t> out(1);
  EXPECT_THROW(late.search(span<const int32_t>(q), side::left, span<int64_t>(out)), error);
  front.reset();
  s.search(span<const int32_t>(q), side::left, span<int64_t>(out));
}

TEST_F(SocketDir, StopWhileClientsKeepSending) {
  const std::vector<double> keys = sorted_keys<double>(3000, 3, 2000);
  server<double> s(cpu, span<const double>(keys));
  socket_options o;
  o.path = path();
  auto front = std::make_unique<socket_server>(s, o);
  std::atomic<int> answered{0}, wrong{0};
  std::atomic<bool> go{true};
  std::vector<std::thread> threads;
  for (int w = 0; w < 6; ++w)
    threads.emplace_back([&, w] {
      socket_client c(path(), 20s);
      std::mt19937_64 rng(w);
      // Until the server is stopped (an error), at most 100000 requests.
      for (int i = 0; i < 100000 && go.load(); ++i) {
        const std::vector<double> q = random_queries<double>(rng, 1 + int64_t(rng() % 64), 2100);
        std::vector<int64_t> out(q.size());
        try {
          c.search(span<const double>(q), side::left, span<int64_t>(out));
        } catch (const error&) {
          return;  // stopped: the connection closed or refused
        }
        answered.fetch_add(1);
        if (out != reference_all(keys, q, side::left)) wrong.fetch_add(1);
      }
    });
  for (int i = 0; i < 1000 && answered.load() < 300; ++i) std::this_thread::sleep_for(2ms);
  front->stop();
  go.store(false);
  for (std::thread& t : threads) t.join();
  EXPECT_GE(answered.load(), 1);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(front->stats().requests, answered.load());
  EXPECT_FALSE(fs::exists(path()));
}

}  // namespace
}  // namespace gsearch::test
