// The socket front end's listening sockets (socket_listen.hpp).

#include "socket_listen.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "socket_common.hpp"

namespace gsearch::socket_detail {

namespace {

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

void refuse_not_a_socket(const std::string& path) {
  struct stat st{};
  if (lstat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode))
    throw invalid_argument("gsearch socket: '" + path + "' exists and is not a socket: refusing to replace it");
}

// The lock beside the socket, held while this server serves: two servers starting on one path
// cannot both find its socket stale and replace each other's. Sets `created` when this call made
// the lock file.
int lock_path(const std::string& path, bool& created) {
  const std::string lock = path + ".lock";
  created = true;
  int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    created = false;
    fd = open(lock.c_str(), O_RDWR | O_CLOEXEC);
  }
  if (fd < 0) fail_sys("gsearch socket: cannot open the lock file '" + lock + "'");
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      throw invalid_argument("gsearch socket: a server already serves '" + path + "' (it holds '" + lock + "')");
    fail_sys("gsearch socket: cannot lock '" + lock + "'", err);
  }
  return fd;
}

}  // namespace

unix_listener listen_unix(const std::string& path, unsigned mode, const std::string& group_name) {
  const sockaddr_un a = unix_address(path);
  gid_t gid = gid_t(-1);
  if (!group_name.empty()) {
    const group* g = getgrnam(group_name.c_str());  // before any thread of the server starts
    if (g == nullptr) throw invalid_argument("gsearch socket: no group named '" + group_name + "'");
    gid = g->gr_gid;
  }
  refuse_not_a_socket(path);  // before the lock file: a refused start leaves no file
  unix_listener l;
  bool created = false;
  l.lock_fd = lock_path(path, created);
  try {
    struct stat st{};
    if (lstat(path.c_str(), &st) == 0) {
      refuse_not_a_socket(path);
      if (unix_socket_answers(path)) {  // a server that takes no lock (an older gsearch)
        if (created) unlink((path + ".lock").c_str());
        throw invalid_argument("gsearch socket: a server already answers at '" + path + "'");
      }
      if (unlink(path.c_str()) != 0 && errno != ENOENT)
        fail_sys("gsearch socket: cannot remove the stale socket '" + path + "'");
    }
    l.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (l.fd < 0) fail_sys("gsearch socket: socket()");
    if (bind(l.fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
      fail_sys("gsearch socket: cannot bind '" + path + "'");
    if (lstat(path.c_str(), &st) == 0) {
      l.dev = st.st_dev;
      l.ino = st.st_ino;
    }
    // Its permissions before it listens: until then a connect is refused, whatever the umask gave.
    const auto undo = [&](const std::string& what) {
      const int err = errno;
      unlink(path.c_str());
      fail_sys("gsearch socket: " + what, err);
    };
    if (gid != gid_t(-1) && chown(path.c_str(), uid_t(-1), gid) != 0)
      undo("cannot give '" + path + "' to the group '" + group_name + "'");
    if (chmod(path.c_str(), mode_t(mode)) != 0) undo("cannot set the mode of '" + path + "'");
    if (::listen(l.fd, SOMAXCONN) != 0) undo("cannot listen on '" + path + "'");
  } catch (...) {
    if (l.fd >= 0) ::close(l.fd);
    ::close(l.lock_fd);
    throw;
  }
  return l;
}

int listen_tcp(int want, int& bound_port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) fail_sys("gsearch socket: socket()");
  const auto fail = [&](const std::string& what) {
    const int err = errno;
    ::close(fd);
    fail_sys("gsearch socket: " + what, err);
  };
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in a = loopback_address(want);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
    fail("cannot bind 127.0.0.1:" + std::to_string(want));
  if (::listen(fd, SOMAXCONN) != 0) fail("cannot listen on 127.0.0.1");
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  bound_port = ntohs(bound.sin_port);
  return fd;
}

void remove_socket_file(const std::string& path, dev_t dev, ino_t ino) {
  struct stat st{};
  if (!path.empty() && lstat(path.c_str(), &st) == 0 && st.st_dev == dev && st.st_ino == ino) unlink(path.c_str());
}

}  // namespace gsearch::socket_detail
