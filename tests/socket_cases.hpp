#pragma once
// What the socket front end's tests share (server_socket_test.cpp: the protocol's failures;
// server_service_test.cpp: the service under load and abuse; server_ring_test.cpp: the
// connection's ring): requests as bytes, queries, a wait with a deadline, a raw connection for
// requests no client would send, a temporary folder for sockets, a server of int64 keys.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "gsearch/server_protocol.hpp"
#include "gsearch/server_socket.hpp"
#include "server_cases.hpp"

namespace gsearch::test {

namespace fs = std::filesystem;
using protocol::status;

inline std::string bytes_of_header(dtype t, side s, uint64_t count) {
  const auto b = protocol::encode(protocol::search_header(t, s, count));
  return std::string(b.begin(), b.end());
}
inline std::string bytes_of_header(const protocol::request_header& h) {
  const auto b = protocol::encode(h);
  return std::string(b.begin(), b.end());
}
template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// n int64 queries around SocketServer's keys (0, 2, ..., 1998), some below and above them.
inline std::vector<int64_t> queries_of(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> q(static_cast<size_t>(n));
  for (auto& x : q) x = int64_t(rng() % 2200) - 100;
  return q;
}

// Waits up to 10 s for `done`.
inline bool eventually(const std::function<bool()>& done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A raw connection (blocking, every read under a 10 s timeout), for requests no client would send.
class raw_connection {
 public:
  explicit raw_connection(const std::string& path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
    timeval tv{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~raw_connection() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void send(const std::string& b) { ASSERT_EQ(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL), ssize_t(b.size())); }
  void shut_writing() { shutdown(fd_, SHUT_WR); }
  int fd() const { return fd_; }
  // n bytes, or fewer at the end of the stream.
  std::string recv(size_t n) {
    std::string s(n, '\0');
    size_t got = 0;
    while (got < n) {
      const ssize_t r = ::recv(fd_, s.data() + got, n - got, 0);
      if (r <= 0) break;
      got += size_t(r);
    }
    s.resize(got);
    return s;
  }
  struct response {
    status code = status::ok;
    std::vector<int64_t> results;
    std::string message;
    bool complete = false;
  };
  response read_response() {
    response r;
    const std::string head = recv(8);
    if (head.size() < 8 || head.compare(0, 4, "GSRS") != 0) return r;
    r.code = status(protocol::get_le<uint32_t>(reinterpret_cast<const uint8_t*>(head.data()) + 4));
    if (r.code == status::ok) {
      const std::string c = recv(8);
      if (c.size() < 8) return r;
      const uint64_t n = protocol::get_le<uint64_t>(reinterpret_cast<const uint8_t*>(c.data()));
      const std::string data = recv(n * 8);
      if (data.size() < n * 8) return r;
      r.results.resize(n);
      if (n > 0) std::memcpy(r.results.data(), data.data(), data.size());
    } else {
      const std::string l = recv(4);
      if (l.size() < 4) return r;
      r.message = recv(protocol::get_le<uint32_t>(reinterpret_cast<const uint8_t*>(l.data())));
    }
    r.complete = true;
    return r;
  }
  // Whether the server closed the connection (a read gets the end of the stream).
  bool closed_by_server() { return recv(1).empty(); }

 private:
  int fd_ = -1;
};

class SocketDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gsearch-sock-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name = "s.sock") const { return (dir_ / name).string(); }
  fs::path dir_;
};

// A server of int64 keys 0, 2, 4, ... behind a socket, for the protocol's failures.
class SocketServer : public SocketDir {
 protected:
  void SetUp() override {
    SocketDir::SetUp();
    for (int64_t i = 0; i < 1000; ++i) keys_.push_back(2 * i);
    server_ = std::make_unique<server<int64_t>>(cpu, span<const int64_t>(keys_));
  }
  void TearDown() override {
    front_.reset();
    server_.reset();
    SocketDir::TearDown();
  }
  // Listens at path() with `o` (max_queries 1000 where `o` leaves the default, for the limit's
  // tests; listen_as_is keeps every option).
  void listen(socket_options o = {}) {
    if (o.max_queries == protocol::default_max_queries) o.max_queries = 1000;
    listen_as_is(o);
  }
  void listen_as_is(socket_options o) {
    o.path = path();
    front_ = std::make_unique<socket_server>(*server_, o);
  }
  // A good request, answered and checked, on `c`.
  void expect_good(raw_connection& c, int64_t n = 50) {
    std::vector<int64_t> q;
    for (int64_t i = 0; i < n; ++i) q.push_back(i * 37 % 2100 - 50);
    c.send(bytes_of_header(dtype::int64, side::left, uint64_t(n)) + bytes_of(q));
    const auto r = c.read_response();
    ASSERT_TRUE(r.complete);
    ASSERT_EQ(r.code, status::ok) << r.message;
    EXPECT_EQ(r.results, reference_all(keys_, q, side::left));
  }
  void expect_good() {
    raw_connection c(path());
    expect_good(c);
  }
  std::vector<int64_t> keys_;
  std::unique_ptr<server<int64_t>> server_;
  std::unique_ptr<socket_server> front_;
};

}  // namespace gsearch::test
