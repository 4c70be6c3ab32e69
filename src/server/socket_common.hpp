#pragma once
// What the socket front end (socket_server_impl.hpp) and the client (socket_client.cpp) share: the
// clock and deadlines, addresses, and the short spin that saves a round trip's wake-ups.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "gsearch/core/error.hpp"

namespace gsearch::socket_detail {

static_assert(std::endian::native == std::endian::little,
              "the socket protocol's elements and results are copied as they are: a little-endian host");

using clock_type = std::chrono::steady_clock;
using time_point = clock_type::time_point;
inline constexpr time_point never = time_point::max();

inline std::string errno_text(int err) { return std::strerror(err); }

[[noreturn]] inline void fail_sys(const std::string& what, int err = errno) {
  throw error(what + ": " + errno_text(err));
}

/// The deadline `d` from now (0: none).
inline time_point after(std::chrono::milliseconds d) { return d.count() > 0 ? clock_type::now() + d : never; }

/// Milliseconds until `deadline` for poll() and epoll_wait() (-1: none; rounded up, so that a wait
/// never ends early).
inline int poll_ms(time_point deadline) {
  if (deadline == never) return -1;
  const auto left = deadline - clock_type::now();
  if (left <= clock_type::duration::zero()) return 0;
  return int(std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(left).count(), 1 << 30));
}

inline sockaddr_un unix_address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(a.sun_path))
    throw invalid_argument("gsearch socket: the socket path '" + path + "' must have 1 to " +
                           std::to_string(sizeof(a.sun_path) - 1) + " bytes (a Unix-domain socket's limit)");
  std::memcpy(a.sun_path, path.data(), path.size());
  return a;
}

inline sockaddr_in loopback_address(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

inline void set_nodelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace gsearch::socket_detail
