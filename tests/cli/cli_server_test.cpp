// `gsearch serve` and `gsearch client` end to end: a server started in the background (its ready
// line awaited), clients' results against std::lower_bound / std::upper_bound for every dtype,
// 1-D and 2-D queries and every side, over the Unix-domain socket and 127.0.0.1; SIGTERM and
// SIGINT end it with exit 0 and its socket file removed; the errors of both commands (a wrong
// dtype, a request too large, no server, a path in use, --device cuda without CUDA).
// As a service (issue 39): its options checked, the socket 0600 (0660 in --socket-group), the
// ready line in --ready-file and optional, running with stdout closed or its reader gone,
// stopped by SIGINT though started with SIGINT ignored, ~/ in socket paths; the client's
// --timeout one deadline for the whole request (against listeners in the test that answer
// nothing, trickle their answer or never accept), and busy (status 6) exit 2.
// Bounded: every wait has a deadline, and a server still running at the end is killed.

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_fixture.hpp"
#include "gsearch/device.hpp"
#include "gsearch/server_protocol.hpp"

namespace cli_test {
namespace {

using namespace std::chrono_literals;
namespace protocol = gsearch::protocol;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `gsearch serve <args>` running in `dir`: its stdout a pipe (the ready line), its stderr a file.
// `prefix`: shell commands run before it (`trap '' INT; `, `umask 000; `), in the same process.
class background_serve {
 public:
  background_serve(const fs::path& dir, const std::string& args, const std::string& prefix = "")
      : err_(dir / "serve.err") {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    const std::string cmd = prefix + "exec '" GSEARCH_CLI_PATH "' serve " + args;  // no allocation after fork
    pid_ = fork();
    if (pid_ == 0) {
      if (chdir(dir.c_str()) != 0) _exit(126);
      dup2(p[1], 1);
      const int e = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(e, 2);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    ::close(p[1]);
    out_ = p[0];
  }
  ~background_serve() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }
  // The first line on its stdout, within 60 s ("" if it exited or took longer).
  std::string ready_line() {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char c[256];
      const ssize_t r = read(out_, c, sizeof c);
      if (r <= 0) break;
      line.append(c, size_t(r));
    }
    return line;
  }
  // Closes our end of its stdout: its writes to it then fail (EPIPE).
  void close_stdout_reader() {
    ::close(out_);
    out_ = -1;
  }
  // Sends `sig` and waits for the exit (at most `limit`): the exit code, or -1 for a signal.
  int stop(int sig, std::chrono::seconds limit = 60s) {
    kill(pid_, sig);
    return wait_exit(limit);
  }
  int wait_exit(std::chrono::seconds limit = 60s) {
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "gsearch serve did not exit within " << limit.count() << " s";
    return -2;
  }
  bool running() {
    if (exited_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
    exited_ = true;
    return false;
  }
  pid_t pid() const { return pid_; }
  std::string err() const { return read_bytes(err_); }

 private:
  fs::path err_;
  pid_t pid_ = -1;
  int out_ = -1;
  bool exited_ = false;
};

// The contents of `path` once it exists and differs from `not_this` (within 60 s; "" if never).
std::string wait_for_file(const fs::path& path, const std::string& not_this = "") {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    if (fs::exists(path, ec)) {
      const std::string s = read_bytes(path);
      if (!s.empty() && s != not_this) return s;
    }
    std::this_thread::sleep_for(20ms);
  }
  ADD_FAILURE() << path << " did not appear within 60 s";
  return "";
}

sockaddr_un unix_address(const fs::path& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  return a;
}

// A connection to the Unix-domain socket at `path` (-1 if refused), which sends nothing.
int raw_connect(const fs::path& path, bool nonblocking = false) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  const sockaddr_un a = unix_address(path);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// A listener on a Unix-domain socket that speaks just enough of the protocol to misbehave, one
// connection at a time: it reads a request, then never answers (silent), answers one byte every
// 200 ms (trickle) or answers busy (status 6); or it never accepts (its backlog filled here, so
// that a client's connect() waits).
class fake_server {
 public:
  enum class mode { silent, trickle, busy, never_accept };
  fake_server(const fs::path& path, mode m) : path_(path), mode_(m) {
    if (pipe2(stop_, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un a = unix_address(path);
    if (bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || listen(fd_, m == mode::never_accept ? 0 : 16) != 0)
      throw std::runtime_error("bind / listen: " + std::string(std::strerror(errno)));
    if (m == mode::never_accept) {
      for (int i = 0; i < 64; ++i) {  // connections nobody accepts, until the backlog is full
        const int c = raw_connect(path, true);
        if (c < 0) {
          EXPECT_EQ(errno, EAGAIN) << std::strerror(errno);
          break;
        }
        held_.push_back(c);
      }
      EXPECT_FALSE(held_.empty());
    } else {
      thread_ = std::thread([this] { serve(); });
    }
  }
  ~fake_server() {
    if (write(stop_[1], "x", 1) != 1) { /* the thread then waits for its poll's end */ }
    if (thread_.joinable()) thread_.join();
    for (int c : held_) ::close(c);
    ::close(fd_);
    ::close(stop_[0]);
    ::close(stop_[1]);
    unlink(path_.c_str());
  }
  int accepted() const { return accepted_.load(); }

 private:
  // Waits until `fd` is readable (true) or the test ends (false).
  bool readable(int fd) {
    pollfd p[2] = {{fd, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    for (;;) {
      if (poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      if (p[1].revents) return false;
      if (p[0].revents) return true;
    }
  }
  bool read_n(int c, void* dst, size_t n) {
    size_t got = 0;
    while (got < n) {
      if (!readable(c)) return false;
      const ssize_t r = recv(c, static_cast<char*>(dst) + got, n - got, 0);
      if (r <= 0) return false;
      got += size_t(r);
    }
    return true;
  }
  void serve() {
    for (;;) {
      if (!readable(fd_)) return;
      const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++accepted_;
      answer(c);
      ::close(c);
    }
  }
  void answer(int c) {
    uint8_t h[protocol::request_header_bytes];
    if (!read_n(c, h, sizeof h)) return;
    const protocol::request_header rq = protocol::decode_request(h);
    const size_t itemsize = rq.dtype == 2 || rq.dtype == 3 || rq.dtype == 5 ? 8 : 4;
    std::vector<char> body(size_t(rq.count) * itemsize);
    if (!read_n(c, body.data(), body.size())) return;
    if (mode_ == mode::silent) {  // holds the connection until the client closes it
      char x;
      while (readable(c) && recv(c, &x, 1, 0) > 0) {
      }
    } else if (mode_ == mode::busy) {
      const std::string r = protocol::encode_error(protocol::status::busy, "test listener: at its connection limit");
      if (send(c, r.data(), r.size(), MSG_NOSIGNAL) != ssize_t(r.size())) ADD_FAILURE() << "send";
    } else {  // trickle: a well-formed answer, one byte every 200 ms
      const auto head = protocol::encode_ok_header(rq.count);
      std::string r(reinterpret_cast<const char*>(head.data()), head.size());
      r.append(size_t(rq.count) * 8, '\0');
      for (char b : r) {
        if (send(c, &b, 1, MSG_NOSIGNAL) != 1) return;  // the client gave up
        pollfd p{stop_[0], POLLIN, 0};
        if (poll(&p, 1, 200) != 0) return;
      }
    }
  }

  fs::path path_;
  mode mode_;
  int fd_ = -1, stop_[2] = {-1, -1};
  std::vector<int> held_;
  std::thread thread_;
  std::atomic<int> accepted_{0};
};

class CliServer : public Cli {
 protected:
  // A server of `keys` (saved as k.npy) on s.sock, its ready line checked.
  template <class T>
  std::unique_ptr<background_serve> serve(const std::vector<T>& keys, const std::string& more = "") {
    save("k.npy", keys);
    auto s = std::make_unique<background_serve>(work(), "--keys k.npy --socket s.sock " + more);
    const std::string line = s->ready_line();
    EXPECT_NE(line.find("gsearch serve: serving " + std::to_string(keys.size()) + " keys of "), std::string::npos)
        << line << s->err();
    EXPECT_TRUE(fs::is_socket(work("s.sock")));
    return s;
  }
  template <class T>
  std::vector<int64_t> results() const {
    return npy::load<int64_t>(work("o.npy").string());
  }

  struct timed_run {
    int code;  // -1: killed at the limit
    double seconds;
    std::string out, err;
  };
  // `gsearch <args>` in the work directory, killed if it runs past `limit`: its exit code and
  // how long it ran.
  timed_run run_within(const std::string& args, std::chrono::seconds limit) const {
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string(),
                      dir = work().string(), cmd = "exec '" GSEARCH_CLI_PATH "' " + args;
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
      if (chdir(dir.c_str()) != 0) _exit(126);
      const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(o, 1);
      dup2(e, 2);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    bool exited = false;
    while (!exited && seconds_since(t0) < double(limit.count())) {
      exited = waitpid(pid, &status, WNOHANG) == pid;
      if (!exited) std::this_thread::sleep_for(5ms);
    }
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    const double t = seconds_since(t0);
    return {exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1, t, read_bytes(out), read_bytes(err)};
  }
};

TEST_F(CliServer, EveryDtypeRoundTripsAndSigtermEndsIt) {
  const auto one = [&]<class T>() {
    std::vector<T> keys = find_data<T>(3000, 5);
    std::sort(keys.begin(), keys.end(), [](T a, T b) { return gsearch::key_less(a, b); });
    auto s = serve(keys);
    std::vector<T> q = find_data<T>(600, 9);
    save("q.npy", q);
    for (side sd : {side::left, side::right, side::pred}) {
      const run_result r = ok(std::string("client --socket s.sock --queries q.npy --side ") +
                              std::string(gsearch::to_string(sd)) + " --out o.npy");
      EXPECT_NE(r.out.find("answered by s.sock"), std::string::npos) << r.out;
      expect_results(keys, q, sd, results<T>(), std::string(gsearch::key_traits<T>::name));
    }
    // 2-D queries: results of their shape.
    save("q2.npy", std::vector<T>(q.begin(), q.begin() + 60), {6, 10});
    ok("client --socket s.sock --queries q2.npy --out o.npy");
    const npy::input o(work("o.npy").string());
    EXPECT_EQ(o.shape(), (std::vector<int64_t>{6, 10}));
    expect_results(keys, std::vector<T>(q.begin(), q.begin() + 60), side::left, results<T>(), "2-D");
    EXPECT_EQ(s->stop(SIGTERM), 0) << s->err();
    EXPECT_FALSE(fs::exists(work("s.sock")));
    EXPECT_NE(s->err().find("stopped by SIGTERM: 4 requests answered"), std::string::npos) << s->err();
  };
  for (dtype t : gsearch::all_dtypes) gsearch::visit_key_type(t, [&]<class T>() { one.template operator()<T>(); });
}

// The server-side ends of connections to the Unix socket `name` (a path relative to the
// server's folder, as it bound it): /proc/net/unix's connected (St 03) entries of that path.
int connections_to(const std::string& name) {
  std::ifstream f("/proc/net/unix");
  std::string line;
  int n = 0;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string num, refs, protocol_, flags, type, st, inode, path;
    if (in >> num >> refs >> protocol_ >> flags >> type >> st >> inode >> path && path == name && st == "03") ++n;
  }
  return n;
}

// SIGTERM while 8 clients' requests wait in the batcher (2 s for more queries): those begun are
// answered whole, the server exits 0 with its socket removed; a client that came too late fails
// cleanly (exit 2, no output file).
TEST_F(CliServer, SigtermWithRequestsInFlight) {
  std::vector<int64_t> keys;
  for (int64_t i = 0; i < 3000; ++i) keys.push_back(i * 2);
  save("k.npy", keys);
  const std::string sock = "inflight-" + std::to_string(getpid()) + ".sock";  // unique in /proc/net/unix
  background_serve s(work(), "--keys k.npy --socket " + sock +
                                 " --max-delay-us 2000000 --preferred-batch-queries 1000000000");
  ASSERT_NE(s.ready_line().find("serving 3000 keys"), std::string::npos) << s.err();
  std::vector<int64_t> q = find_data<int64_t>(20000, 4);
  save("q.npy", q);
  std::string clients = "cd '" + work().string() + "' && for i in 0 1 2 3 4 5 6 7; do ('" GSEARCH_CLI_PATH
                        "' client --socket " + sock +
                        " --queries q.npy --out o$i.npy > c$i.out 2> c$i.err; echo $? > c$i.rc) & done; wait";
  std::thread run([&] { EXPECT_EQ(std::system(clients.c_str()), 0); });
  // Every client connected (however slowly they start: sanitizers), then a moment for their
  // requests' bytes: the batcher holds them.
  const auto connected = std::chrono::steady_clock::now() + 60s;
  while (connections_to(sock) < 8 && std::chrono::steady_clock::now() < connected) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(connections_to(sock), 8);
  std::this_thread::sleep_for(300ms);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
  run.join();
  EXPECT_LT(seconds_since(t0), 20.0);
  EXPECT_FALSE(fs::exists(work(sock)));
  int answered = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(i);
    const std::string rc = read_bytes(work("c" + n + ".rc")), err = read_bytes(work("c" + n + ".err"));
    if (rc == "0\n") {
      ++answered;
      expect_results(keys, q, side::left, npy::load<int64_t>(work("o" + n + ".npy").string()), "client " + n);
    } else {
      EXPECT_EQ(rc, "2\n") << err;
      EXPECT_EQ(err.rfind("gsearch: error: ", 0), 0u) << err;
      EXPECT_FALSE(fs::exists(work("o" + n + ".npy")));
    }
  }
  EXPECT_GT(answered, 0) << s.err();
}

TEST_F(CliServer, PortJsonAndSigint) {
  std::vector<int64_t> keys;
  for (int64_t i = 0; i < 1000; ++i) keys.push_back(i * 3);
  save("k.npy", keys);
  background_serve s(work(), "--keys k.npy --port 0 --json --threads 1 --max-delay-us 100 "
                             "--preferred-batch-queries 64");
  const auto ready = nlohmann::json::parse(s.ready_line());
  EXPECT_EQ(ready["ready"], true);
  EXPECT_EQ(ready["dtype"], "int64");
  EXPECT_EQ(ready["keys"], 1000);
  EXPECT_TRUE(ready["socket"].is_null());
  const int port = ready["port"];
  ASSERT_GT(port, 0);
  const std::vector<int64_t> q = {-1, 0, 1, 2999, 3000, 5};
  save("q.npy", q);
  const run_result r = ok("client --port " + std::to_string(port) + " --queries q.npy --side right --out o.npy --json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "client");
  EXPECT_EQ(j["server"], "127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(j["side"], "right");
  expect_results(keys, q, side::right, results<int64_t>(), "port");
  // Many clients at once, each checked.
  std::vector<std::thread> threads;
  std::vector<run_result> runs(6);
  const char* const outs[] = {"o0.npy", "o1.npy", "o2.npy", "o3.npy", "o4.npy", "o5.npy"};
  const std::string client = "client --port " + std::to_string(port) + " --queries q.npy --out ";
  for (int i = 0; i < 6; ++i)
    threads.emplace_back([&, i] { runs[size_t(i)] = gsearch(client + outs[i]); });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(runs[size_t(i)].code, 0) << runs[size_t(i)].err;
    EXPECT_EQ(npy::load<int64_t>(work(outs[i]).string()), gsearch::test::reference_all(keys, q, side::left));
  }
  EXPECT_EQ(s.stop(SIGINT), 0) << s.err();
  EXPECT_NE(s.err().find("stopped by SIGINT: 7 requests answered"), std::string::npos) << s.err();
}

TEST_F(CliServer, ClientErrorsLeaveNoOutput) {
  const std::vector<int32_t> keys = {1, 3, 5, 7};
  auto s = serve(keys, "--max-queries 10");
  save("qf.npy", std::vector<float>{1.0f});
  fails("client --socket s.sock --queries qf.npy", 1, "answered wrong dtype: queries of dtype float32 for keys of "
                                                      "dtype int32");
  save("q11.npy", std::vector<int32_t>(11, 2));
  fails("client --socket s.sock --queries q11.npy", 1, "answered too large: 11 queries in one request; this server "
                                                       "takes at most 10");
  fails("client --socket none.sock --queries q11.npy", 2, "cannot connect to the gsearch server at none.sock");
  fails("client --queries q11.npy", 1, "give the server's --socket PATH or its --port N");
  save("q.npy", std::vector<int32_t>{0, 5, 9});
  ok("client --socket s.sock --queries q.npy --side pred --out o.npy");
  expect_results(keys, std::vector<int32_t>{0, 5, 9}, side::pred, results<int32_t>(), "after the errors");
  // A second server on the same path is refused while the first answers.
  fails("serve --keys k.npy --socket s.sock", 1, "a server already serves 's.sock'", false);
  EXPECT_EQ(s->stop(SIGTERM), 0);
  EXPECT_FALSE(fs::exists(work("s.sock")));
}

TEST_F(CliServer, ServeErrors) {
  save("k.npy", std::vector<int64_t>{1, 2, 3});
  save("unsorted.npy", std::vector<int64_t>{3, 2, 1});
  fails("serve --keys k.npy", 1, "give --socket PATH", false);
  fails("serve --keys unsorted.npy --socket s.sock", 1, "not sorted", false);
  write_bytes(work("file.sock"), "precious");
  fails("serve --keys k.npy --socket file.sock", 1, "exists and is not a socket", false);
  save("k2.npy", std::vector<int64_t>{1, 2, 3, 4}, {2, 2});
  fails("serve --keys k2.npy --socket s.sock", 1, "the server takes 1-D keys", false);
  hide_gpus();
  fails("serve --keys k.npy --socket s.sock --device cuda", 2,
        gsearch::built_with_cuda() ? "--device cuda: no CUDA device is available" : "built without CUDA", false);
  fails("serve --keys k.npy --socket s.sock --port 70000", 1, "--port must be at most 65535", false);
}

TEST_F(CliServer, AStaleSocketFileIsReplaced) {
  const std::vector<double> keys = {0.5, 1.5, 2.5};
  {
    auto s = serve(keys);
    // Killed: the socket file stays behind.
    EXPECT_EQ(s->stop(SIGKILL), -1);
    EXPECT_TRUE(fs::is_socket(work("s.sock")));
  }
  auto s = serve(keys);
  save("q.npy", std::vector<double>{0.0, 2.0, 3.0});
  ok("client --socket s.sock --queries q.npy --side right --out o.npy");
  expect_results(keys, std::vector<double>{0.0, 2.0, 3.0}, side::right, results<double>(), "replaced");
  EXPECT_EQ(s->stop(SIGTERM), 0);
}

// ---- as a service (issue 39) ------------------------------------------------------------------

// The name of a group other than our effective one that we may give a socket to (root: any; else
// one of our supplementary groups), or our own group's if there is none.
std::string some_group(gid_t& gid) {
  gid = getegid();
  if (geteuid() == 0) {
    setgrent();
    while (const group* g = getgrent()) {
      if (g->gr_gid != getegid()) {
        gid = g->gr_gid;
        break;
      }
    }
    endgrent();
  } else {
    std::vector<gid_t> mine(64);
    const int n = getgroups(int(mine.size()), mine.data());
    for (int i = 0; i < n; ++i)
      if (mine[size_t(i)] != getegid()) gid = mine[size_t(i)];
  }
  const group* g = getgrgid(gid);
  return g ? g->gr_name : "";
}

TEST_F(CliServer, ServiceOptionsAreChecked) {
  save("k.npy", std::vector<int64_t>{1, 2, 3});
  const std::string serve = "serve --keys k.npy --socket s.sock ";
  // --max-queries: at most the protocol's limit, 2^32.
  fails(serve + "--max-queries 4294967297", 1, "--max-queries must be at most 4294967296 (2^32", false);
  fails(serve + "--max-queries 1e12", 1, "--max-queries must be at most 4294967296", false);
  fails(serve + "--max-queries 0", 1, "--max-queries must be at least 1", false);
  // --socket-group: a group that exists, and a socket to give it to.
  fails(serve + "--socket-group no_such_group_gsearch_test", 1,
        "--socket-group 'no_such_group_gsearch_test': no such group", false);
  gid_t gid;
  const std::string group = some_group(gid);
  ASSERT_FALSE(group.empty());
  fails("serve --keys k.npy --port 0 --socket-group " + group, 1,
        "--socket-group '" + group + "' applies to the Unix-domain socket: give --socket PATH too", false);
  fails(serve + "--max-connections 0", 1, "--max-connections must be at least 1", false);
  fails(serve + "--max-connections 8 --max-connections-per-peer 9", 1,
        "--max-connections-per-peer must be at most 8 (--max-connections", false);
  fails(serve + "--max-connections-per-peer -1", 1, "--max-connections-per-peer must be at least 0", false);
  fails(serve + "--max-bytes-in-flight 0", 1, "--max-bytes-in-flight must be at least 1", false);
  fails(serve + "--max-bytes-in-flight 1GB", 1, "--max-bytes-in-flight '1GB' is not a whole number", false);
  fails(serve + "--workers -1", 1, "--workers must be at least 0", false);
  fails(serve + "--workers 5000", 1, "--workers must be at most 4096", false);
  fails(serve + "--idle-timeout -1", 1, "--idle-timeout must be at least 0", false);
  // --ready-file: an output, checked before any work.
  fails(serve + "--ready-file k.npy", 1, "--ready-file 'k.npy' is the same file as --keys 'k.npy'", false);
  fails(serve + "--ready-file s.sock", 1, "--ready-file 's.sock' is the same file as --socket 's.sock'", false);
  fails(serve + "--ready-file s.sock.lock", 1, "is the same file as --socket's lock file 's.sock.lock'", false);
  fails(serve + "--ready-file no/dir/r.txt", 2, "the directory no/dir does not exist", false);
  fails(serve + "--ready-file ''", 1, "--ready-file '' is an empty path", false);
  save("q.npy", std::vector<int64_t>{1});
  fails("client --socket s.sock --queries q.npy --timeout -1", 1, "--timeout must be at least 0");
}

// The help, its lines wrapped and its columns padded, with every run of white space one space.
std::string flat_help(const std::string& help) {
  std::string flat;
  for (char c : help) {
    const char x = c == '\n' || c == '\t' ? ' ' : c;
    if (!(x == ' ' && !flat.empty() && flat.back() == ' ')) flat += x;
  }
  return flat;
}

TEST_F(CliServer, HelpSaysWhoCanConnect) {
  const std::string serve = flat_help(ok("serve --help").out);
  for (const char* says :
       {"created 0600, so only this user can connect", "0660 in group G, and its members too",
        "over TCP (--port, 127.0.0.1) every local user can", "A client can learn the whole key set, by searching it",
        "6 busy", "--socket-group NAME", "--ready-file FILE", "--no-ready-line", "--max-connections-per-peer N=0",
        "SIGINT stops it always", "A closed stdout, or one whose reader has gone, does not stop it",
        // The defaults: 2^22 queries a request, 1024 connections, 60 s idle, 1 GiB in flight.
        "--max-queries N=4194304", "--max-connections N=1024", "--idle-timeout S=60",
        "--max-bytes-in-flight BYTES=1073741824", "--workers N=0"})
    EXPECT_NE(serve.find(says), std::string::npos) << says << "\n" << serve;
  const std::string client = flat_help(ok("client --help").out);
  for (const char* says : {"One deadline in seconds for the whole request, from the connect", "busy (status 6"})
    EXPECT_NE(client.find(says), std::string::npos) << says << "\n" << client;
}

TEST_F(CliServer, TheSocketIsPrivateByDefault) {
  const std::vector<int32_t> keys = {1, 2, 3};
  save("k.npy", keys);
  save("q.npy", std::vector<int32_t>{2});
  {
    // Under umask 000 too (the old server's socket was 0777 there).
    background_serve s(work(), "--keys k.npy --socket s.sock", "umask 000; ");
    ASSERT_NE(s.ready_line().find("gsearch serve: serving 3 keys"), std::string::npos) << s.err();
    struct stat st {};
    ASSERT_EQ(stat(work("s.sock").c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u) << std::oct << (st.st_mode & 07777);
    EXPECT_TRUE(fs::exists(work("s.sock.lock"))) << "the lock file beside the socket";
    ok("client --socket s.sock --queries q.npy --out o.npy");
    EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
    EXPECT_FALSE(fs::exists(work("s.sock")));
  }
  gid_t gid;
  const std::string group = some_group(gid);
  ASSERT_FALSE(group.empty());
  background_serve s(work(), "--keys k.npy --socket s.sock --socket-group " + group, "umask 077; ");
  ASSERT_NE(s.ready_line().find("gsearch serve: serving 3 keys"), std::string::npos) << s.err();
  struct stat st {};
  ASSERT_EQ(stat(work("s.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u) << std::oct << (st.st_mode & 07777);
  EXPECT_EQ(st.st_gid, gid) << group;
  ok("client --socket s.sock --queries q.npy --out o.npy");
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
}

TEST_F(CliServer, ReadyFileHoldsTheReadyLine) {
  const std::vector<uint32_t> keys = {10, 20, 30, 40};
  save("k.npy", keys);
  {
    background_serve s(work(), "--keys k.npy --socket s.sock --ready-file ready.txt");
    // Written before the line on stdout: there by now, and the same line.
    const std::string line = s.ready_line();
    EXPECT_EQ(line.rfind("gsearch serve: serving 4 keys of uint32 on s.sock", 0), 0u) << line << s.err();
    EXPECT_NE(line.find("pid " + std::to_string(s.pid())), std::string::npos) << line;
    EXPECT_EQ(read_bytes(work("ready.txt")), line);
    EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
    EXPECT_EQ(s.ready_line(), "") << "one ready line only";
    EXPECT_FALSE(fs::exists(work("ready.txt"))) << "removed when the server stops";
    EXPECT_FALSE(fs::exists(work("s.sock")));
  }
  // --json, and no ready line on stdout; a file a killed server left is replaced.
  write_bytes(work("ready.json"), "stale\n");
  background_serve j(work(), "--keys k.npy --socket s.sock --json --ready-file ready.json --no-ready-line");
  const auto ready = nlohmann::json::parse(wait_for_file(work("ready.json"), "stale\n"));
  EXPECT_EQ(ready["command"], "serve");
  EXPECT_EQ(ready["ready"], true);
  EXPECT_EQ(ready["keys"], 4);
  EXPECT_EQ(ready["dtype"], "uint32");
  EXPECT_EQ(ready["socket"], "s.sock");
  EXPECT_TRUE(ready["port"].is_null());
  EXPECT_EQ(ready["pid"], int64_t(j.pid()));
  EXPECT_TRUE(fs::is_socket(work("s.sock")));
  // Only this file: no temporary file left beside it.
  for (const auto& e : fs::directory_iterator(work()))
    EXPECT_EQ(e.path().filename().string().find(".ready.json.tmp"), std::string::npos) << e.path();
  save("q.npy", std::vector<uint32_t>{25});
  ok("client --socket s.sock --queries q.npy --out o.npy");
  expect_results(keys, std::vector<uint32_t>{25}, side::left, results<uint32_t>(), "--ready-file");
  EXPECT_EQ(j.stop(SIGTERM), 0) << j.err();
  EXPECT_EQ(j.ready_line(), "") << "--no-ready-line printed on stdout";
  EXPECT_FALSE(fs::exists(work("ready.json")));
}

TEST_F(CliServer, RunsWithStdoutClosed) {
  const std::vector<int64_t> keys = {5, 6, 7};
  save("k.npy", keys);
  background_serve s(work(), "--keys k.npy --socket s.sock --ready-file ready.txt <&- >&-");
  const std::string ready = wait_for_file(work("ready.txt"));
  EXPECT_EQ(ready.rfind("gsearch serve: serving 3 keys of int64 on s.sock", 0), 0u) << ready << s.err();
  save("q.npy", std::vector<int64_t>{6});
  ok("client --socket s.sock --queries q.npy --side right --out o.npy");
  expect_results(keys, std::vector<int64_t>{6}, side::right, results<int64_t>(), "stdout closed");
  EXPECT_TRUE(s.running()) << s.err();
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
  EXPECT_NE(s.err().find("stopped by SIGTERM: 1 request answered"), std::string::npos) << s.err();
  EXPECT_FALSE(fs::exists(work("s.sock")));
  EXPECT_FALSE(fs::exists(work("ready.txt")));
}

TEST_F(CliServer, RunsWhenTheReaderOfItsStdoutIsGone) {
  const std::vector<float> keys = {0.5f, 1.5f};
  save("k.npy", keys);
  background_serve s(work(), "--keys k.npy --socket s.sock --ready-file ready.txt");
  s.close_stdout_reader();  // the ready line meets EPIPE (SIGPIPE would kill it)
  wait_for_file(work("ready.txt"));
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (s.err().find("could not be written to standard output") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline && s.running())
    std::this_thread::sleep_for(20ms);
  EXPECT_NE(s.err().find("the ready line could not be written to standard output (Broken pipe); serving anyway"),
            std::string::npos)
      << s.err();
  save("q.npy", std::vector<float>{1.0f});
  ok("client --socket s.sock --queries q.npy --out o.npy");
  expect_results(keys, std::vector<float>{1.0f}, side::left, results<float>(), "reader gone");
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
}

TEST_F(CliServer, SigintStopsItThoughStartedWithSigintIgnored) {
  // What the prefix gives: SIGINT and SIGHUP ignored in the process that becomes gsearch serve (as
  // in a script's background job, or under nohup for SIGHUP).
  const std::string prefix = "trap '' INT HUP; ";
  ASSERT_EQ(std::system(("cd '" + work().string() + "' && " + prefix + "exec grep SigIgn /proc/self/status > ign")
                            .c_str()),
            0);
  const std::string ign = read_bytes(work("ign"));
  const unsigned long long mask = std::stoull(ign.substr(ign.find(':') + 1), nullptr, 16);
  ASSERT_TRUE(mask & (1ull << (SIGINT - 1))) << ign;
  ASSERT_TRUE(mask & (1ull << (SIGHUP - 1))) << ign;

  const std::vector<int32_t> keys = {3, 1 << 20};
  save("k.npy", keys);
  background_serve s(work(), "--keys k.npy --socket s.sock", prefix);
  ASSERT_NE(s.ready_line().find("gsearch serve: serving 2 keys"), std::string::npos) << s.err();
  // SIGHUP ignored stays ignored (nohup): still serving.
  kill(s.pid(), SIGHUP);
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(s.running()) << s.err();
  save("q.npy", std::vector<int32_t>{4});
  ok("client --socket s.sock --queries q.npy --out o.npy");
  // SIGINT stops it all the same.
  EXPECT_EQ(s.stop(SIGINT, 20s), 0) << s.err();
  EXPECT_NE(s.err().find("gsearch serve: stopped by SIGINT: 1 request answered"), std::string::npos) << s.err();
  EXPECT_FALSE(fs::exists(work("s.sock")));
}

TEST_F(CliServer, TildeInSocketPaths) {
  const std::vector<double> keys = {1.0, 2.0};
  save("k.npy", keys);
  const std::string home = "HOME='" + work().string() + "' ";
  // Quoted: no shell expands it (as in --socket=~/x.sock, or a path from a file).
  background_serve s(work(), "--keys k.npy '--socket=~/t.sock' --json", "export " + home + "; ");
  const auto ready = nlohmann::json::parse(s.ready_line());
  EXPECT_EQ(ready["socket"], (work() / "t.sock").string());
  EXPECT_TRUE(fs::is_socket(work("t.sock")));
  EXPECT_FALSE(fs::exists(work("~")));
  save("q.npy", std::vector<double>{1.5});
  env_ = home;
  const run_result r = ok("client --socket '~/t.sock' --queries q.npy --out o.npy");
  EXPECT_NE(r.out.find("answered by " + (work() / "t.sock").string()), std::string::npos) << r.out;
  expect_results(keys, std::vector<double>{1.5}, side::left, results<double>(), "~/");
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
  EXPECT_FALSE(fs::exists(work("t.sock")));
}

// The client's --timeout is one deadline for the whole request: exit 2 within it (and a margin
// for the process's start), whatever the server does.
class CliClientDeadline : public CliServer {
 protected:
  void expect_deadline(const std::string& what) {
    save("q.npy", std::vector<int64_t>{1, 2, 3, 4});
    const timed_run r = run_within("client --socket fake.sock --queries q.npy --out o.npy --timeout 2", 20s);
    EXPECT_EQ(r.code, 2) << what << " (-1: still running after 20 s)\n" << r.err;
    EXPECT_LT(r.seconds, 4.0) << what << "\n" << r.err;
    EXPECT_GE(r.seconds, 1.5) << what << ": gave up before the deadline\n" << r.err;
    EXPECT_EQ(r.err.rfind("gsearch: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("fake.sock"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(work("o.npy")));
  }
};

TEST_F(CliClientDeadline, AServerThatNeverAnswers) {
  fake_server f(work("fake.sock"), fake_server::mode::silent);
  expect_deadline("a server that reads the request and never answers");
  EXPECT_EQ(f.accepted(), 1);
}

TEST_F(CliClientDeadline, AServerThatTricklesItsAnswer) {
  // 48 bytes, one every 200 ms: each read waits less than the timeout, the whole answer 9.6 s.
  fake_server f(work("fake.sock"), fake_server::mode::trickle);
  expect_deadline("a server that answers a byte every 200 ms");
}

TEST_F(CliClientDeadline, AServerWhoseBacklogIsFull) {
  // connect() itself waits: the deadline includes it.
  fake_server f(work("fake.sock"), fake_server::mode::never_accept);
  expect_deadline("a server that never accepts (its backlog full)");
}

TEST_F(CliServer, BusyIsExit2WithTheServersMessage) {
  fake_server f(work("fake.sock"), fake_server::mode::busy);
  save("q.npy", std::vector<int32_t>{1});
  const timed_run r = run_within("client --socket fake.sock --queries q.npy --out o.npy --timeout 10", 20s);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("answered busy: test listener: at its connection limit"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(work("o.npy")));
}

TEST_F(CliServer, AFullServerAnswersBusyAtOnce) {
  const std::vector<int64_t> keys = {1, 2, 3};
  save("q.npy", std::vector<int64_t>{2});
  {
    // --max-connections: two idle connections fill it; a client is answered busy, not kept waiting.
    auto s = serve(keys, "--max-connections 2 --max-connections-per-peer 2");
    int held[2] = {raw_connect(work("s.sock")), raw_connect(work("s.sock"))};
    ASSERT_GE(held[0], 0);
    ASSERT_GE(held[1], 0);
    const timed_run r = run_within("client --socket s.sock --queries q.npy --out o.npy --timeout 10", 20s);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("answered busy"), std::string::npos) << r.err;
    EXPECT_LT(r.seconds, 5.0) << r.err;
    EXPECT_FALSE(fs::exists(work("o.npy")));
    // Once they are gone, it serves again.
    ::close(held[0]);
    ::close(held[1]);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    run_result ok_run{};
    do {
      ok_run = gsearch("client --socket s.sock --queries q.npy --out o.npy --timeout 10");
    } while (ok_run.code != 0 && std::chrono::steady_clock::now() < deadline);
    EXPECT_EQ(ok_run.code, 0) << ok_run.err;
    EXPECT_EQ(s->stop(SIGTERM), 0) << s->err();
    EXPECT_NE(s->err().find(" answered busy, "), std::string::npos) << s->err();
    EXPECT_EQ(s->err().find(" 0 answered busy, "), std::string::npos) << s->err();
  }
  // --max-connections-per-peer: one user (us) holds its one connection.
  auto s = serve(keys, "--max-connections 16 --max-connections-per-peer 1");
  const int held = raw_connect(work("s.sock"));
  ASSERT_GE(held, 0);
  const timed_run r = run_within("client --socket s.sock --queries q.npy --out o.npy --timeout 10", 20s);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("answered busy"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5.0) << r.err;
  ::close(held);
  EXPECT_EQ(s->stop(SIGTERM), 0) << s->err();
}

}  // namespace
}  // namespace cli_test
