#pragma once
// The shared-memory ring of a Unix-socket connection (server_protocol.hpp, op 16; docs/design.md,
// "The socket protocol"): one request at a time, written by the client into memory that the
// server's worker polls, answered in the same memory. A round trip over the socket costs four
// system calls and two cores noticing them (~3.6 us of the H200 host's 10.9); through the ring
// it costs two cache lines crossing between the cores, while a worker watches the ring. When none
// does, the client rings a doorbell over the socket (a 20-byte request, op 17), and the event
// loop hands the connection to a worker as it would a request.
//
// The server makes the ring (a memfd sealed against shrinking and growing: a client cannot make
// the server's accesses fault) and passes its descriptor with the answer to the opening. Both
// sides map it whole. Every field both sides touch is an atomic (lock-free, so address-free:
// it works between processes); the server reads a request's fields once and checks them, as it
// checks a request from the socket.
//
//   request   the client: queries, side, count, then request = its sequence number (release)
//   answer    the server: results (or an error's message), status, count, then answer = request
//             (release); a client asleep (sleeping = 1) is woken by a futex on `answer`
//   watching  the server: 1 while a worker polls `request`; 0 before it stops, then `request` looked
//             at once more. The client looks at `watching` after publishing: 0, and it rings the
//             doorbell (both sides store, fence, load: one of them sees the other's store)

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <string>

#include "gsearch/core/algorithm.hpp"  // side
#include "gsearch/core/dtype.hpp"
#include "gsearch/server_protocol.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace gsearch::socket_detail {

static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free,
              "the ring's atomics are shared between processes: they must be lock-free");

inline constexpr uint64_t ring_magic = 0x474e4952'53524753;  // its bytes: "SGRSRING"
inline constexpr size_t ring_line = 64;

struct ring_control {
  // Written by the server before it passes the ring, read-only after.
  uint64_t magic = ring_magic;
  uint32_t dtype = 0;
  uint32_t itemsize = 0;
  uint64_t capacity = 0;    // queries a request may hold
  uint64_t queries_at = 0;  // byte offsets in the ring
  uint64_t results_at = 0;
  uint64_t bytes = 0;       // the ring's size
  // The client's request.
  alignas(ring_line) std::atomic<uint32_t> request{0};
  std::atomic<uint32_t> side{0};
  std::atomic<uint64_t> count{0};
  // The server's answer: count results, or (status not 0) count bytes of a message in the results' place.
  alignas(ring_line) std::atomic<uint32_t> answer{0};
  std::atomic<uint32_t> status{0};
  std::atomic<uint64_t> answer_count{0};
  alignas(ring_line) std::atomic<uint32_t> watching{0};
  alignas(ring_line) std::atomic<uint32_t> sleeping{0};
};

// Futexes on the shared mapping: not FUTEX_PRIVATE (the two sides are two processes).
inline void futex_wake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}
// Sleeps while word == seen, for at most `ms` (a wake-up, a signal or the time: the caller looks again).
inline void futex_wait(std::atomic<uint32_t>& word, uint32_t seen, int ms) {
  const timespec ts{ms / 1000, long(ms % 1000) * 1000000L};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

// The ring's size for `capacity` queries of `itemsize` bytes: the control lines, the queries, the
// results, each part on its own lines.
inline size_t ring_bytes(size_t itemsize, uint64_t capacity) {
  const auto up = [](size_t b) { return (b + ring_line - 1) / ring_line * ring_line; };
  return up(sizeof(ring_control)) + up(size_t(capacity) * itemsize) + up(size_t(capacity) * 8);
}

// One side's mapping of a ring.
class ring_mapping {
 public:
  ring_mapping(void* base, size_t bytes) : base_(static_cast<uint8_t*>(base)), bytes_(bytes) {}
  ~ring_mapping() { munmap(base_, bytes_); }
  ring_mapping(const ring_mapping&) = delete;
  ring_mapping& operator=(const ring_mapping&) = delete;

  ring_control& control() const { return *reinterpret_cast<ring_control*>(base_); }
  uint8_t* queries() const { return base_ + control().queries_at; }
  int64_t* results() const { return reinterpret_cast<int64_t*>(base_ + control().results_at); }
  uint64_t capacity() const { return control().capacity; }
  size_t bytes() const { return bytes_; }

  /// The server's side: the request the ring holds, its fields read once (the client may write
  /// them at any time), and why it cannot be searched ("" when it can).
  struct request_read {
    uint32_t number = 0;
    int64_t count = 0;
    gsearch::side side = gsearch::side::left;
    std::string refusal;
  };
  request_read request() const {
    const ring_control& k = control();
    request_read r;
    r.number = k.request.load(std::memory_order_acquire);
    const uint64_t n = k.count.load(std::memory_order_relaxed);
    const uint32_t sd = k.side.load(std::memory_order_relaxed);
    if (n > capacity())
      r.refusal = std::to_string(n) + " queries in a ring request; its ring holds " + std::to_string(capacity());
    else if (sd > uint32_t(gsearch::side::pred))
      r.refusal = "side code " + std::to_string(sd) + " is not a side (0 left, 1 right, 2 pred)";
    r.count = r.refusal.empty() ? int64_t(n) : 0;
    r.side = r.refusal.empty() ? gsearch::side(sd) : gsearch::side::left;
    return r;
  }

  /// The server's side: request `number` answered, ok with its `count` results in results(), or
  /// an error whose message goes where the results go (cut as encode_error cuts it, and to the
  /// results' room); the answer's number stored last, and a client asleep on it woken.
  void answer(uint32_t number, protocol::status st, int64_t count, const std::string& message = "") {
    ring_control& k = control();
    if (st == protocol::status::ok) {
      k.answer_count.store(uint64_t(count), std::memory_order_relaxed);
    } else {
      const std::string e = protocol::encode_error(st, message);
      const size_t len = std::min(e.size() - protocol::error_header_bytes, size_t(capacity()) * 8);
      std::memcpy(results(), e.data() + protocol::error_header_bytes, len);
      k.answer_count.store(len, std::memory_order_relaxed);
    }
    k.status.store(uint32_t(st), std::memory_order_relaxed);
    k.answer.store(number, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // against the client's sleeping = 1, then its look
    if (k.sleeping.load(std::memory_order_relaxed) != 0) futex_wake(k.answer);
  }

 private:
  uint8_t* base_;
  size_t bytes_;
};

// The server's side: a new ring of `capacity` queries of type t, mapped into `out`; returns its
// memfd (to be passed to the client, then closed), or -1 with errno set.
inline int create_ring(dtype t, uint64_t capacity, std::unique_ptr<ring_mapping>& out) {
  const size_t bytes = ring_bytes(size_t(itemsize(t)), capacity);
  const int fd = memfd_create("gsearch-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  const auto fail = [&] {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  };
  if (ftruncate(fd, off_t(bytes)) != 0) return fail();
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) return fail();
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return fail();
  ring_control* k = new (p) ring_control;
  k->dtype = uint32_t(t);
  k->itemsize = uint32_t(itemsize(t));
  k->capacity = capacity;
  k->queries_at = (sizeof(ring_control) + ring_line - 1) / ring_line * ring_line;
  k->results_at = k->queries_at + (size_t(capacity) * k->itemsize + ring_line - 1) / ring_line * ring_line;
  k->bytes = bytes;
  out = std::make_unique<ring_mapping>(p, bytes);
  return fd;
}

// The client's side: the ring behind a descriptor the server passed, for queries of type t, or
// nullptr where it is not one (its size, magic, type or layout not what they must be).
inline std::unique_ptr<ring_mapping> map_ring(int fd, dtype t) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < off_t(sizeof(ring_control))) return nullptr;
  const size_t bytes = size_t(st.st_size);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  auto m = std::make_unique<ring_mapping>(p, bytes);
  const ring_control& k = m->control();
  const size_t item = size_t(itemsize(t));
  if (k.magic != ring_magic || k.dtype != uint32_t(t) || k.itemsize != item || k.bytes != bytes ||
      k.capacity == 0 || k.capacity > (uint64_t(1) << 32) || k.queries_at < sizeof(ring_control) ||
      k.queries_at + k.capacity * item > k.results_at || k.results_at + k.capacity * 8 > bytes)
    return nullptr;
  return m;
}

// Sends n bytes (a small answer: the socket takes it at once or the client is not reading) with
// the descriptor `passed` attached (SCM_RIGHTS). Whether all of it was sent.
inline bool send_with_descriptor(int fd, const void* bytes, size_t n, int passed) {
  iovec iov{const_cast<void*>(bytes), n};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &passed, sizeof(int));
  ssize_t r;
  while ((r = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 && errno == EINTR) {
  }
  return r == ssize_t(n);
}

// The descriptors passed with a message recvmsg read (SCM_RIGHTS, in msg's control buffer):
// the first kept in `passed` where that is still -1, any other closed.
inline void take_descriptors(msghdr& msg, int& passed) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; ++i) {
      int d;
      std::memcpy(&d, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (passed < 0) passed = d;
      else ::close(d);
    }
  }
}

// A control buffer for recvmsg that holds a few passed descriptors.
struct descriptor_space {
  alignas(cmsghdr) char bytes[CMSG_SPACE(4 * sizeof(int))];
};

// A pause in a spin on the ring (no system call; the core's other thread gets the pipeline).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

}  // namespace gsearch::socket_detail
