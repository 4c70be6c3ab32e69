#pragma once
// The socket front end's listening sockets (socket_listen.cpp): the Unix-domain socket, private
// by default and one server a path (a lock file beside it), and 127.0.0.1. docs/design.md, "The
// front end as a service".

#include <sys/types.h>

#include <string>

namespace gsearch::socket_detail {

/// A listening Unix-domain socket and the lock that makes it this server's.
struct unix_listener {
  int fd = -1;
  int lock_fd = -1;  // held (flock) while the server serves; the file PATH.lock stays
  dev_t dev = 0;     // the socket file bound: removed at the end only if it is still this one
  ino_t ino = 0;
};

/// Listens at `path` with permission bits `mode` (and the group named `group`, "" for the
/// process's), set before it listens. Takes PATH.lock first, so that a stale socket there is
/// replaced by one server only; refuses (invalid_argument) a path that is not a socket, a lock
/// another server holds, a socket where a server answers, an unknown group; error when a socket
/// call fails. Nothing is left open, nor a new file, when it throws.
unix_listener listen_unix(const std::string& path, unsigned mode, const std::string& group);

/// Listens on 127.0.0.1:want (0: a free port); `bound` gets the port.
int listen_tcp(int want, int& bound);

/// Removes the socket file at `path` if it is still the one bound (dev, ino): not one that
/// replaced it since.
void remove_socket_file(const std::string& path, dev_t dev, ino_t ino);

}  // namespace gsearch::socket_detail
