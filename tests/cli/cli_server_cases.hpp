#pragma once
// What the CLI's server tests share (cli_server_test.cpp: serve and client end to end;
// cli_serve_service_test.cpp: serve as a service, issue 39): a server started in the background,
// raw connections, listeners that are not gsearch servers, the fixture with its reference checks.

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


using namespace std::chrono_literals;
namespace protocol = gsearch::protocol;

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
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
inline std::string wait_for_file(const fs::path& path, const std::string& not_this = "") {
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

inline sockaddr_un unix_address(const fs::path& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  return a;
}

// A connection to the Unix-domain socket at `path` (-1 if refused), which sends nothing.
inline int raw_connect(const fs::path& path, bool nonblocking = false) {
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

}  // namespace cli_test
