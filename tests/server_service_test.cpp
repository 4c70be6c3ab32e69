// The socket front end as a service (issue 39), on this machine only (Unix-domain sockets in a
// temporary folder, 127.0.0.1): idle connections that cost no thread and lock no one out, busy at
// the limits, memory bounded by the server, a private socket, one server per path, one deadline
// for a client's whole request, no resend after a timeout, a response begun written whole after
// stop(); then load and abuse (200 clients at once; idle, trickling, header-only, garbage and
// vanishing clients beside a steady one). Bounded: fixed counts, every wait under a timeout,
// every server stopped.

#include <fcntl.h>
#include <malloc.h>  // mallopt (glibc)
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <future>
#include <random>
#include <thread>

#include "socket_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

int thread_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// The process's virtual size in bytes (what allocations take, touched or not).
int64_t virtual_bytes() {
  std::ifstream f("/proc/self/statm");
  int64_t pages = 0;
  f >> pages;
  return pages * sysconf(_SC_PAGESIZE);
}

// One search through a fresh socket_client: the status (ok, or the server's error's).
status client_search(const std::string& path, std::chrono::milliseconds timeout, const std::vector<int64_t>& q,
                     std::vector<int64_t>& out, std::string* message = nullptr) {
  socket_client c(path, timeout);
  out.assign(q.size(), -7);
  try {
    c.search(span<const int64_t>(q), side::left, span<int64_t>(out));
    return status::ok;
  } catch (const socket_error& e) {
    if (message) *message = e.what();
    return e.status();
  }
}

// A listening Unix-domain socket that is not a gsearch server: it accepts and lets `serve` do
// what it likes with each connection (read slowly, answer once, never answer).
class fake_server {
 public:
  fake_server(const std::string& path, int backlog, std::function<void(int fd, std::atomic<bool>& stop)> serve)
      : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
    EXPECT_EQ(::listen(fd_, backlog), 0);
    if (serve)
      thread_ = std::thread([this, serve] {
        pollfd p{fd_, POLLIN, 0};
        while (!stop_.load()) {
          if (poll(&p, 1, 20) <= 0) continue;
          const int c = accept(fd_, nullptr, nullptr);
          if (c < 0) continue;
          serve(c, stop_);
          ::close(c);
        }
      });
  }
  ~fake_server() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
    unlink(path_.c_str());
  }
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Reads n bytes from a blocking fd within `limit` (false: not all came, or `stop`).
bool read_exactly(int fd, void* dst, size_t n, std::atomic<bool>& stop) {
  size_t got = 0;
  while (got < n && !stop.load()) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    const ssize_t r = recv(fd, static_cast<char*>(dst) + got, n - got, 0);
    if (r <= 0) return false;
    got += size_t(r);
  }
  return got == n;
}

// Runs `f` in a child process as the user nobody (root only: false where this is not root);
// the child's exit status is f's.
bool run_as_nobody(const std::function<int()>& f, int& code) {
  if (geteuid() != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {  // nothing may leave this block: the child must not go on with the tests
    alarm(20);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(99);
    int r = 3;
    try {
      r = f();
    } catch (...) {
    }
    _exit(r);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return true;
}

// ---- idle connections and the limits ------------------------------------------------------------

TEST_F(SocketServer, IdleConnectionsCostNoThreadAndLockNoOneOut) {
  listen_as_is({});  // the defaults
  const int threads = thread_count();
  std::vector<std::unique_ptr<raw_connection>> idle;
  for (int i = 0; i < 300; ++i) idle.push_back(std::make_unique<raw_connection>(path()));
  ASSERT_TRUE(eventually([&] { return front_->stats().open == 300; })) << front_->stats().open;
  EXPECT_EQ(thread_count(), threads);
  const auto start = clock_type::now();
  std::vector<int64_t> out;
  const std::vector<int64_t> q = queries_of(100, 1);
  EXPECT_EQ(client_search(path(), 5s, q, out), status::ok);
  EXPECT_EQ(out, reference_all(keys_, q, side::left));
  EXPECT_LT(clock_type::now() - start, 2s);
  EXPECT_GT(socket_options{}.idle_timeout.count(), 0);  // and they are closed in time by default
}

TEST_F(SocketServer, HalfTheWorkersAtMostHoldAnIdleConnectionAndStopEndsTheHold) {
  // A worker waits (socket_options::hold) for its connection's next request while no more than
  // half of the workers do so: two clients answered once and then idle keep one worker of two,
  // and a third is answered at once by the other; stop() does not wait for a hold to end.
  socket_options o;
  o.workers = 2;
  o.spin = 0us;
  o.hold = 60s;
  listen(o);
  const std::vector<int64_t> q = queries_of(5, 3);
  std::vector<int64_t> out(q.size());
  socket_client a(path(), 5s), b(path(), 5s);
  a.search(span<const int64_t>(q), side::left, span<int64_t>(out));
  b.search(span<const int64_t>(q), side::left, span<int64_t>(out));
  const auto start = clock_type::now();
  EXPECT_NO_THROW(EXPECT_EQ(client_search(path(), 5s, q, out), status::ok));
  EXPECT_EQ(out, reference_all(keys_, q, side::left));
  EXPECT_LT(clock_type::now() - start, 2s);
  const auto stopping = clock_type::now();
  front_->stop();
  EXPECT_LT(clock_type::now() - stopping, 2s);
}

TEST_F(SocketServer, AFullServerAnswersBusyAtOnce) {
  socket_options o;
  o.max_connections = 4;
  o.max_connections_per_peer = 4;
  listen(o);
  std::vector<std::unique_ptr<raw_connection>> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(std::make_unique<raw_connection>(path()));
  ASSERT_TRUE(eventually([&] { return front_->stats().open == 4; }));
  const auto start = clock_type::now();
  std::vector<int64_t> out;
  std::string message;
  EXPECT_EQ(client_search(path(), 5s, queries_of(10, 2), out, &message), status::busy);
  EXPECT_NE(message.find("4 connections open"), std::string::npos) << message;
  EXPECT_LT(clock_type::now() - start, 1s);
  idle.pop_back();  // a connection closed: room for one
  ASSERT_TRUE(eventually([&] { return client_search(path(), 5s, queries_of(10, 2), out) == status::ok; }));
  EXPECT_GE(front_->stats().busy, 1);
}

TEST_F(SocketServer, OneUserCannotTakeEveryConnection) {
  socket_options o;
  o.max_connections = 8;  // half of it for one user, by default
  o.port = 0;             // over TCP the peer is not known: only max_connections holds
  o.socket_mode = 0666;   // for the other user below (and the folder too)
  fs::permissions(dir_, fs::perms(0755));
  listen(o);
  std::vector<std::unique_ptr<raw_connection>> mine;
  for (int i = 0; i < 4; ++i) mine.push_back(std::make_unique<raw_connection>(path()));
  ASSERT_TRUE(eventually([&] { return front_->stats().open == 4; }));
  std::vector<int64_t> out;
  std::string message;
  EXPECT_EQ(client_search(path(), 5s, queries_of(10, 3), out, &message), status::busy);
  EXPECT_NE(message.find("this user has 4 connections open"), std::string::npos) << message;
  socket_client tcp(front_->port(), 5s);
  out.assign(10, 0);
  const std::vector<int64_t> q = queries_of(10, 3);
  tcp.search(span<const int64_t>(q), side::left, span<int64_t>(out));
  EXPECT_EQ(out, reference_all(keys_, q, side::left));
  // Another user still gets in (where the test runs as root and can be another user).
  int code = -1;
  if (run_as_nobody(
          [&] {
            std::vector<int64_t> r;
            return client_search(path(), 5s, q, r) == status::ok && r == reference_all(keys_, q, side::left) ? 0 : 1;
          },
          code)) {
    EXPECT_EQ(code, 0);
  }
}

// ---- memory -------------------------------------------------------------------------------------

TEST_F(SocketServer, HeadersWithoutBodiesHoldNoMemory) {
#if defined(__GLIBC__)
  // The process's virtual size counts the buffers this test looks for, and also each malloc
  // arena glibc makes for a thread that allocates under contention: 64 MB of address space
  // each, which failed the test under load (67,108,864 bytes, one arena). One arena from here on.
  mallopt(M_ARENA_MAX, 1);
#endif
  listen_as_is({});  // the defaults: 2^22 int64 queries a request, 32 MB a side
  const int64_t before = virtual_bytes();
  std::vector<std::unique_ptr<raw_connection>> c;
  for (int i = 0; i < 8; ++i) {
    c.push_back(std::make_unique<raw_connection>(path()));
    c.back()->send(bytes_of_header(dtype::int64, side::left, uint64_t(protocol::default_max_queries)));
  }
  ASSERT_TRUE(eventually([&] { return front_->stats().open == 8; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(front_->stats().bytes_in_flight, 0);
  EXPECT_LT(virtual_bytes() - before, int64_t(64) << 20);  // not 8 x 64 MB of buffers, nor a thread each
  // Part of each body: the request's bytes are reserved in the budget, at most about twice the
  // part allocated.
  for (auto& x : c) x->send(std::string(1 << 20, '\0'));
  const int64_t need = protocol::default_max_queries * 16 + 16;
  ASSERT_TRUE(eventually([&] { return front_->stats().bytes_in_flight == 8 * need; }))
      << front_->stats().bytes_in_flight;
  std::this_thread::sleep_for(50ms);
  EXPECT_LT(virtual_bytes() - before, int64_t(64) << 20);
  c.clear();
  EXPECT_TRUE(eventually([&] { return front_->stats().bytes_in_flight == 0 && front_->stats().open == 0; }));
}

TEST_F(SocketServer, TheBudgetBoundsWhatIsHeldAndRequestsWaitForIt) {
  socket_options o;
  o.max_queries = 1 << 20;
  o.max_bytes_in_flight = 1 << 20;
  listen(o);
  // More than the whole budget: refused from its header.
  std::vector<int64_t> out;
  std::string message;
  EXPECT_EQ(client_search(path(), 5s, queries_of(70000, 4), out, &message), status::too_large);
  EXPECT_NE(message.find("holds at most 1048576 bytes"), std::string::npos) << message;
  // 8 clients of 288 KB requests each: at most 3 fit at once; every one is answered.
  std::vector<std::thread> clients;
  std::atomic<int> right{0};
  for (int t = 0; t < 8; ++t)
    clients.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        const std::vector<int64_t> q = queries_of(18000, uint64_t(100 * t + i));
        std::vector<int64_t> r;
        if (client_search(path(), 20s, q, r) == status::ok && r == reference_all(keys_, q, side::left)) ++right;
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(right.load(), 40);
  EXPECT_LE(front_->stats().peak_bytes_in_flight, o.max_bytes_in_flight);
  EXPECT_TRUE(eventually([&] { return front_->stats().bytes_in_flight == 0; }));
}

TEST_F(SocketServer, LargeBuffersAreReleasedWhenTheRequestEnds) {
  socket_options o;
  o.max_queries = 1 << 20;
  listen(o);
  raw_connection c(path());
  expect_good(c, 1 << 20);  // 8 MB each way
  EXPECT_TRUE(eventually([&] { return front_->stats().bytes_in_flight == 0; })) << front_->stats().bytes_in_flight;
  EXPECT_GE(front_->stats().peak_bytes_in_flight, int64_t(16) << 20);
  expect_good(c, 3);  // the connection is still served
}

TEST(SocketLimits, CountTimesItemsizeCannotOverflow) {
  auto h = protocol::search_header(dtype::int64, side::left, (uint64_t(1) << 61) + 1);
  const protocol::verdict v = protocol::check_request(h, dtype::int64, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(v.code, status::too_large);
  EXPECT_TRUE(v.close);
  server<int64_t> s(cpu, span<const int64_t>(std::vector<int64_t>{1, 2}));
  socket_options o;
  o.port = 0;
  o.max_queries = protocol::max_queries_limit + 1;
  EXPECT_THROW(socket_server(s, o), invalid_argument);
  EXPECT_EQ(socket_options{}.max_queries, int64_t(1) << 22);
}

TEST_F(SocketServer, NoMemoryForARequestIsBusyNotAFailedServer) {
  socket_server front(
      dtype::int64, 3,
      [](const void*, int64_t n, side, int64_t* out) {
        if (n == 13) throw std::bad_alloc();
        std::fill(out, out + n, int64_t(1));
      },
      [&] {
        socket_options o;
        o.path = path("b.sock");
        return o;
      }());
  std::vector<int64_t> out;
  std::string message;
  EXPECT_EQ(client_search(path("b.sock"), 5s, queries_of(13, 5), out, &message), status::busy);
  EXPECT_NE(message.find("out of host memory"), std::string::npos) << message;
  EXPECT_FALSE(front.failed());
  EXPECT_EQ(client_search(path("b.sock"), 5s, queries_of(4, 5), out), status::ok);
}

// ---- privacy, one server per path ---------------------------------------------------------------

TEST_F(SocketServer, TheSocketIsPrivateByDefault) {
  fs::permissions(dir_, fs::perms(0755));  // the socket's own mode keeps the other user out
  const mode_t old = umask(0);              // and it must not come from the umask
  listen();
  umask(old);
  struct stat st{};
  ASSERT_EQ(lstat(path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  int code = -1;
  if (run_as_nobody(
          [&] {
            std::vector<int64_t> r;
            try {
              client_search(path(), 5s, queries_of(3, 6), r);
            } catch (const error& e) {
              return std::string(e.what()).find("permissions do not let this user connect") != std::string::npos ? 0 : 2;
            }
            return 1;  // it got in
          },
          code)) {
    EXPECT_EQ(code, 0);
  }
}

TEST_F(SocketDir, AGroupCanBeLetIn) {
  server<int64_t> s(cpu, span<const int64_t>(std::vector<int64_t>{1, 2}));
  socket_options o;
  o.path = path();
  o.group = "no-such-group-gsearch";
  try {
    socket_server front(s, o);
    ADD_FAILURE() << "no error";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no group named 'no-such-group-gsearch'"), std::string::npos) << e.what();
  }
  const group* mine = getgrgid(getegid());
  ASSERT_NE(mine, nullptr);
  o.group = mine->gr_name;
  o.socket_mode = 0660;
  socket_server front(s, o);
  struct stat st{};
  ASSERT_EQ(lstat(path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, getegid());
}

TEST_F(SocketDir, OneServerPerPathWhenManyStartAtOnce) {
  server<int64_t> s(cpu, span<const int64_t>(std::vector<int64_t>{1, 2}));
  for (int round = 0; round < 10; ++round) {
    // A stale socket file: bound by a process that died, never unlinked.
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path().c_str(), sizeof a.sun_path - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);  // the file stays
    std::vector<std::unique_ptr<socket_server>> fronts(8);
    std::atomic<int> refused{0};
    std::vector<std::thread> t;
    for (size_t i = 0; i < fronts.size(); ++i)
      t.emplace_back([&, i] {
        socket_options o;
        o.path = path();
        try {
          fronts[i] = std::make_unique<socket_server>(s, o);
        } catch (const invalid_argument&) {
          ++refused;
        }
      });
    for (auto& x : t) x.join();
    EXPECT_EQ(refused.load(), 7) << "round " << round;
    std::vector<int64_t> out;
    EXPECT_EQ(client_search(path(), 5s, {0, 5}, out), status::ok);
    fronts.clear();
    EXPECT_FALSE(fs::exists(path()));
  }
}

// ---- the client's deadline ----------------------------------------------------------------------

TEST_F(SocketDir, TheClientsTimeoutIsOneDeadlineForTheWholeRequest) {
  // A server that takes the request slowly (64 KB every 100 ms): every send makes progress.
  fake_server slow(path(), 8, [](int fd, std::atomic<bool>& stop) {
    std::vector<char> b(1 << 16);
    while (!stop.load()) {
      if (recv(fd, b.data(), b.size(), MSG_DONTWAIT) == 0) return;
      std::this_thread::sleep_for(100ms);
    }
  });
  const std::vector<int64_t> q(1 << 20, 5);  // 8 MB: some 13 s at that pace
  std::vector<int64_t> out(q.size());
  socket_client c(path(), 300ms);
  const auto start = clock_type::now();
  try {
    c.search(span<const int64_t>(q), side::left, span<int64_t>(out));
    ADD_FAILURE() << "no error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("within the timeout (300 ms)"), std::string::npos) << e.what();
  }
  EXPECT_LT(clock_type::now() - start, 2s);
}

TEST_F(SocketDir, TheClientsTimeoutHoldsAgainstAFullBacklog) {
  fake_server full(path(), 0, nullptr);  // never accepts
  std::vector<int> pending;  // fill its backlog
  for (int i = 0; i < 64; ++i) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path().c_str(), sizeof a.sun_path - 1);
    const int rc = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    pending.push_back(fd);
    if (rc != 0 && errno == EAGAIN) break;
  }
  auto done = std::async(std::launch::async, [&] {
    std::vector<int64_t> out;
    try {
      client_search(path(), 300ms, {1, 2, 3}, out);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("answered");
  });
  const bool in_time = done.wait_for(3s) == std::future_status::ready;
  EXPECT_TRUE(in_time) << "the connect waits past the deadline";
  if (!in_time) shutdown(full.fd(), SHUT_RDWR);  // lets a blocked connect end
  const std::string what = done.get();
  EXPECT_NE(what.find("cannot connect"), std::string::npos) << what;
  for (int fd : pending) ::close(fd);
}

TEST_F(SocketDir, ARequestThatTimedOutIsNotSentAgain) {
  // Answers the first request of each connection, then reads the next ones and never answers.
  std::atomic<int> requests{0};
  fake_server once(path(), 8, [&](int fd, std::atomic<bool>& stop) {
    for (bool answered = false; !stop.load();) {
      uint8_t h[protocol::request_header_bytes];
      if (!read_exactly(fd, h, sizeof h, stop)) return;
      const uint64_t n = protocol::decode_request(h).count;
      std::vector<int64_t> body(n);
      if (!read_exactly(fd, body.data(), n * 8, stop)) return;
      ++requests;
      if (answered) continue;
      answered = true;
      const auto head = protocol::encode_ok_header(n);
      (void)!send(fd, head.data(), head.size(), MSG_NOSIGNAL);
      (void)!send(fd, body.data(), n * 8, MSG_NOSIGNAL);
    }
  });
  socket_client c(path(), 300ms, default_client_spin, false);  // (the fake knows no ring: server_ring_test.cpp)
  std::vector<int64_t> q = {4, 5}, out(2);
  c.search(span<const int64_t>(q), side::left, span<int64_t>(out));
  EXPECT_EQ(out, q);
  EXPECT_THROW(c.search(span<const int64_t>(q), side::left, span<int64_t>(out)), error);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(requests.load(), 2);  // not a third: a timeout is no closed connection
}

// A server older than the ring answers its opening (op 16) "malformed" and closes the connection:
// the client connects again, goes on over the socket, and asks no more.
TEST_F(SocketDir, AServerThatKnowsNoRingIsServedOverTheSocket) {
  std::atomic<int> connections{0}, openings{0};
  fake_server old(path(), 8, [&](int fd, std::atomic<bool>& stop) {
    ++connections;
    for (;;) {
      uint8_t h[protocol::request_header_bytes];
      if (!read_exactly(fd, h, sizeof h, stop)) return;
      const protocol::request_header r = protocol::decode_request(h);
      if (r.op != protocol::op_search) {
        ++openings;
        const std::string e = protocol::encode_error(status::malformed, "op 16 is not served (1: search)");
        (void)!send(fd, e.data(), e.size(), MSG_NOSIGNAL);
        return;
      }
      std::vector<int64_t> body(r.count);
      if (!read_exactly(fd, body.data(), r.count * 8, stop)) return;
      const auto head = protocol::encode_ok_header(r.count);
      (void)!send(fd, head.data(), head.size(), MSG_NOSIGNAL);
      (void)!send(fd, body.data(), r.count * 8, MSG_NOSIGNAL);
    }
  });
  socket_client c(path(), 10s);
  std::vector<int64_t> q = {4, 5}, out(2);
  for (int i = 0; i < 3; ++i) {
    c.search(span<const int64_t>(q), side::left, span<int64_t>(out));
    EXPECT_EQ(out, q);
    EXPECT_EQ(c.ring_capacity(), 0);
  }
  c.close();
  c.search(span<const int64_t>(q), side::left, span<int64_t>(out));  // a new connection: no opening
  EXPECT_EQ(out, q);
  c.close();
  EXPECT_TRUE(eventually([&] { return connections.load() == 3; })) << connections.load();
  EXPECT_EQ(openings.load(), 1);
}

// ---- stop ---------------------------------------------------------------------------------------

TEST_F(SocketServer, StopWritesAResponseBegunWhole) {
  socket_options o;
  o.stop_grace = 50ms;
  listen_as_is(o);
  raw_connection c(path());
  const std::vector<int64_t> q = queries_of(1 << 21, 7);  // 16 MB of results: more than the socket holds
  c.send(bytes_of_header(dtype::int64, side::left, q.size()) + bytes_of(q));
  const std::string head = c.recv(16);  // the response has begun
  ASSERT_EQ(head.substr(0, 8), std::string("GSRS\0\0\0\0", 8)) << head.substr(16);
  std::thread stopper([&] { front_->stop(); });
  std::this_thread::sleep_for(300ms);  // well past the grace time
  const std::string results = c.recv(q.size() * 8);
  stopper.join();
  ASSERT_EQ(results.size(), q.size() * 8);
  std::vector<int64_t> r(q.size());
  std::memcpy(r.data(), results.data(), results.size());
  EXPECT_EQ(r, reference_all(keys_, q, side::left));
}

TEST_F(SocketServer, StopAnswersARequestSentJustBefore) {
  for (int round = 0; round < 20; ++round) {
    listen();
    raw_connection c(path());
    ASSERT_TRUE(eventually([&] { return front_->stats().open == 1; }));  // accepted, idle
    const std::vector<int64_t> q = queries_of(100, uint64_t(round));
    c.send(bytes_of_header(dtype::int64, side::left, q.size()) + bytes_of(q));
    front_->stop();  // the bytes may not have been read yet
    const auto r = c.read_response();
    ASSERT_TRUE(r.complete) << "round " << round;
    EXPECT_EQ(r.results, reference_all(keys_, q, side::left));
    front_.reset();
  }
}

// ---- load and abuse -----------------------------------------------------------------------------

TEST_F(SocketServer, TwoHundredClientsAtOnce) {
  socket_options o;
  o.port = 0;
  listen(o);
  std::atomic<int> right{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 200; ++t)
    clients.emplace_back([&, t] {
      std::mt19937_64 rng{uint64_t(t)};
      auto c = t % 2 ? socket_client(path(), 20s) : socket_client(front_->port(), 20s);
      for (int i = 0; i < 10; ++i) {
        const std::vector<int64_t> q = queries_of(int64_t(rng() % 1000), rng());
        const side s = side(rng() % 3);
        std::vector<int64_t> out(q.size());
        try {
          c.search(span<const int64_t>(q), s, span<int64_t>(out));
          if (out == reference_all(keys_, q, s)) ++right;
        } catch (const std::exception& e) {
          ADD_FAILURE() << e.what();
        }
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(right.load(), 2000);
}

TEST_F(SocketServer, AbuseBesideASteadyClient) {
  socket_options o;
  o.max_queries = 1 << 18;
  o.request_timeout = 500ms;
  listen(o);
  std::atomic<bool> stop{false};
  std::vector<std::thread> abusers;
  std::vector<std::unique_ptr<raw_connection>> idle;
  for (int i = 0; i < 20; ++i) idle.push_back(std::make_unique<raw_connection>(path()));
  for (int i = 0; i < 5; ++i)  // trickle a byte every 100 ms: cut off by the request timeout
    abusers.emplace_back([&] {
      while (!stop.load()) {
        raw_connection c(path());
        const std::string req = bytes_of_header(dtype::int64, side::left, 4) + std::string(32, '\0');
        for (size_t b = 0; b < req.size() && !stop.load(); ++b) {
          if (send(c.fd(), req.data() + b, 1, MSG_NOSIGNAL) != 1) break;
          std::this_thread::sleep_for(100ms);
        }
      }
    });
  for (int i = 0; i < 5; ++i)  // headers of large requests, no body
    abusers.emplace_back([&] {
      while (!stop.load()) {
        raw_connection c(path());
        c.send(bytes_of_header(dtype::int64, side::left, 1 << 18));
        std::this_thread::sleep_for(200ms);
      }
    });
  for (int i = 0; i < 5; ++i)  // garbage
    abusers.emplace_back([&, i] {
      std::mt19937_64 rng{uint64_t(i)};
      while (!stop.load()) {
        raw_connection c(path());
        std::string g(size_t(rng() % 200 + 1), '\0');
        for (auto& ch : g) ch = char(rng());
        c.send(g);
        std::this_thread::sleep_for(10ms);
      }
    });
  for (int i = 0; i < 5; ++i)  // leave mid-response (512 KB of results: more than a socket holds)
    abusers.emplace_back([&] {
      const std::vector<int64_t> q = queries_of(1 << 16, 9);
      while (!stop.load()) {
        raw_connection c(path());
        c.send(bytes_of_header(dtype::int64, side::left, q.size()) + bytes_of(q));
        c.recv(100);
        c.close();
        std::this_thread::sleep_for(20ms);
      }
    });
  raw_connection steady(path());
  for (int i = 0; i < 100; ++i) {
    const auto start = clock_type::now();
    expect_good(steady, 1 + i * 10);
    EXPECT_LT(clock_type::now() - start, 2s) << i;
  }
  stop.store(true);
  for (auto& t : abusers) t.join();
  idle.clear();
  steady.close();
  EXPECT_TRUE(eventually([&] { return front_->stats().open == 0 && front_->stats().bytes_in_flight == 0; }))
      << front_->stats().open << " open, " << front_->stats().bytes_in_flight << " bytes";
  EXPECT_GE(front_->stats().requests, 100);
  EXPECT_GT(front_->stats().errors, 0);
}

}  // namespace
}  // namespace gsearch::test
