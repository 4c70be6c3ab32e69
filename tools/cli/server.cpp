// `gsearch serve` and `gsearch client`: the search server (gsearch/server.hpp) behind a socket
// (gsearch/server_socket.hpp, the protocol of gsearch/server_protocol.hpp), and one request to it
// from a .npy file. docs/design.md, "The socket protocol".

#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common.hpp"
#include "gsearch/server.hpp"
#include "gsearch/server_socket.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "subcommand.hpp"
#include "timing.hpp"

namespace gsearch::cli {
namespace {

using json = nlohmann::ordered_json;
using std::chrono::milliseconds;

[[noreturn]] void bad(const std::string& what) { throw failure(exit_bad_input, what); }

// ---- gsearch serve ----------------------------------------------------------------------------

struct serve_args {
  std::string keys, socket, port, device = "auto", socket_group, ready_file;
  std::string max_queries = std::to_string(protocol::default_max_queries), max_connections = "1024";
  std::string max_connections_per_peer = "0", max_bytes_in_flight = std::to_string(int64_t(1) << 30);
  std::string workers = "0", request_timeout_ms = "30000", idle_timeout_s = "60", spin_us = "50", hold_ms = "10";
  std::string client_ring_queries = std::to_string(socket_options{}.ring_queries),
              max_client_rings = std::to_string(socket_options{}.max_rings);
  std::string ring_slots = "256", max_batch_requests = "256", max_batch_queries = std::to_string(1 << 22);
  std::string preferred_batch_queries = "0", max_delay_us = "0", threads = "0", blocks = "0";
  std::string idle_release_us = std::to_string(server_options{}.idle_release.count() / 1000);
  bool json = false, no_ready_line = false;
};

// A socket path's leading "~/" that no shell expanded (`--socket=~/k.sock`, a quoted '~/k.sock',
// a path from a config file): the home directory ($HOME, else the user's entry).
std::string expand_home(const std::string& path, const std::string& option) {
  if (path.rfind("~/", 0) != 0) return path;
  std::string home;
  if (const char* h = std::getenv("HOME"); h && *h) home = h;
  if (home.empty()) {
    std::vector<char> buf(16384);
    passwd pw{}, *found = nullptr;
    if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_dir)
      home = found->pw_dir;
  }
  if (home.empty()) bad(option + " '" + path + "': no home directory for ~ (HOME is not set)");
  return home + path.substr(1);
}

// --socket-group NAME: a group that exists and, unless we are root, one of ours (else the socket
// could not be given to it).
std::string check_group(const std::string& name) {
  std::vector<char> buf(1 << 16);
  group g{}, *found = nullptr;
  const int err = getgrnam_r(name.c_str(), &g, buf.data(), buf.size(), &found);
  if (err != 0 || !found)
    bad("--socket-group '" + name + "': no such group" + (err ? " (" + std::string(std::strerror(err)) + ")" : ""));
  if (geteuid() == 0 || g.gr_gid == getegid()) return name;
  std::vector<gid_t> mine(size_t(std::max(getgroups(0, nullptr), 0)) + 1);
  const int n = getgroups(int(mine.size()), mine.data());
  for (int i = 0; i < n; ++i)
    if (mine[size_t(i)] == g.gr_gid) return name;
  bad("--socket-group '" + name + "': you are not a member of it, so the socket cannot be given to it "
      "(`id` lists your groups)");
}

// The signals that stop the server: SIGTERM; SIGINT always, even when whoever started us ignores
// it (a shell's background job, `trap '' INT`: its disposition is reset); SIGHUP unless it is
// ignored (nohup: it should outlive the terminal). Blocked in every thread (so blocked before
// the first one starts) and taken by sigtimedwait: no work in a signal handler.
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  struct sigaction old {};
  if (sigaction(SIGHUP, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) sigaddset(&set, SIGHUP);
  return set;
}

// Blocks the stop signals in this thread (and so in every thread it starts) and undoes an
// inherited ignore of SIGINT: a blocked signal stays pending for sigtimedwait, but one whose
// disposition is SIG_IGN may be dropped. The ready line goes to a stdout that may be closed or
// whose reader may have gone: SIGPIPE is ignored, so that such a write fails (EPIPE) instead of
// killing the server (its sockets write with MSG_NOSIGNAL).
void take_signals(const sigset_t& set) {
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  struct sigaction old {};
  if (sigaction(SIGINT, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, nullptr);
  }
  signal(SIGPIPE, SIG_IGN);
}

// Waits for a stop signal (its number) or for the server to fail (0).
int wait_for_stop(const sigset_t& set, const socket_server& front) {
  const timespec tick{0, 100 * 1000 * 1000};
  for (;;) {
    const int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig > 0) return sig;
    if (front.failed()) return 0;
  }
}

// Every connection is a file descriptor: raises the soft limit (ulimit -n) towards what
// --max-connections needs, up to the hard limit, and says so when that is not enough.
void allow_connections(int max_connections) {
  const rlim_t need = rlim_t(max_connections) + 64;  // the listening sockets, the loop's own, CUDA's
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= need) return;
  const rlim_t want = r.rlim_max == RLIM_INFINITY ? need : std::min(need, r.rlim_max);
  if (want > r.rlim_cur) {
    rlimit raised = r;
    raised.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
  }
  if (r.rlim_cur < need)
    note("gsearch serve: --max-connections " + std::to_string(max_connections) + " needs about " +
         std::to_string(need) + " file descriptors, but this process may open " + std::to_string(r.rlim_cur) +
         " (ulimit -n; its hard limit): connections beyond that cannot be accepted");
}

// Writes the ready line to file descriptor 1 itself, not through stdio: unlike the other
// commands' results it is not checked (a closed stdout is /dev/null by now; a reader that went
// away is EPIPE), because a server that runs as a daemon must not stop over it. errno, or 0.
int write_ready_line(const std::string& line) {
  int err = 0;
  progress::without_line([&] {
    std::fflush(stdout);
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t w = ::write(1, line.data() + done, line.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        err = w < 0 ? errno : EIO;
        return;
      }
      done += size_t(w);
    }
  });
  return err;
}

// --ready-file: written whole (a temporary file beside it, renamed over it) once the server
// listens, and removed when it stops, if it is still the file written then. A file there before
// is left alone until then: it may be a running server's (a second server on its path is refused
// and must change nothing); one left by a killed server is replaced, and its pid is not ours.
class ready_file {
 public:
  explicit ready_file(std::string path) : path_(std::move(path)), target_(write_target(path_)) {}
  ready_file(const ready_file&) = delete;
  ready_file& operator=(const ready_file&) = delete;
  ~ready_file() { remove(); }
  void write(const std::string& text) {
    if (path_.empty()) return;
    staged_output out(path_);
    out.write(text.data(), text.size());
    out.commit();
    struct stat st {};
    if (stat(target_.c_str(), &st) == 0) dev_ = st.st_dev, ino_ = st.st_ino, written_ = true;
  }
  void remove() {
    if (!written_) return;
    written_ = false;
    struct stat st {};
    if (stat(target_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) unlink(target_.c_str());
  }

 private:
  std::string path_, target_;  // through a symlink: its target is written (staged_output), and removed
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool written_ = false;
};

template <class T>
exit_code serve_typed(const serve_args& a, const target& dev, npy::input& keys_file, const sigset_t& signals,
                      const server_options& so, socket_options o, const std::string& ready_path) {
  ready_file ready(ready_path);
  std::unique_ptr<server<T>> srv;
  {
    const std::vector<T> keys = keys_file.read<T>();
    progress::phase(dev.cuda ? "building the index" : "copying the keys");
    if (dev.cuda) {
      srv = std::make_unique<server<T>>(gsearch::cuda, span<const T>(keys), so);
    } else {
      srv = std::make_unique<server<T>>(gsearch::cpu, span<const T>(keys), so);
    }
  }
  socket_server front(*srv, o);
  const std::string where = (o.path.empty() ? std::string() : o.path) +
                            (front.port() >= 0 ? (o.path.empty() ? "" : " and ") + std::string("127.0.0.1:") +
                                                     std::to_string(front.port())
                                               : std::string());
  const std::string type(key_traits<T>::name);
  std::string line;
  if (a.json) {
    line = json({{"command", "serve"},
                 {"ready", true},
                 {"keys", srv->size()},
                 {"dtype", type},
                 {"socket", o.path.empty() ? json(nullptr) : json(o.path)},
                 {"port", front.port() >= 0 ? json(front.port()) : json(nullptr)},
                 {"device", dev.cuda ? "cuda" : "cpu"},
                 {"device_name", dev.name},
                 {"pid", int64_t(getpid())}})
               .dump() +
           "\n";
  } else {
    line = "gsearch serve: serving " + std::to_string(srv->size()) + " keys of " + type + " on " + where +
           " (device=" + (dev.cuda ? "cuda" : "cpu") + ", " + dev.name + ", pid " + std::to_string(getpid()) +
           "); SIGINT or SIGTERM stops it\n";
  }
  // The ready line, which scripts wait for: the file first (whole once it exists), then stdout.
  ready.write(line);
  progress::phase("serving");
  if (!a.no_ready_line) {
    if (const int err = write_ready_line(line))
      note("gsearch serve: the ready line could not be written to standard output (" +
           std::string(std::strerror(err)) + "); serving anyway");
  }

  const int sig = wait_for_stop(signals, front);
  progress::phase("stopping");
  ready.remove();   // no longer ready
  front.stop();     // no new request; those begun are answered; the socket file is removed
  srv->shutdown();  // answers what is left in the ring
  const socket_stats st = front.stats();
  const std::string counts = std::to_string(st.requests) + " request" + (st.requests == 1 ? "" : "s") + " answered, " +
                             std::to_string(st.errors) + " refused or cut short, " + std::to_string(st.busy) +
                             " answered busy, " + std::to_string(st.connections) + " connection" +
                             (st.connections == 1 ? "" : "s") + ", at most " +
                             bytes_text(double(st.peak_bytes_in_flight)) + " in flight";
  if (sig == 0)
    throw failure(exit_device_or_io,
                  "the server failed: " + front.failure() +
                      "; it answers no request any more (a CUDA error poisons the context), so gsearch serve "
                      "exits: restart it (a supervisor should). " + counts);
  const char* name = sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM";
  note("gsearch serve: stopped by " + std::string(name) + ": " + counts);
  return exit_ok;
}

exit_code run_serve(const serve_args& a) {
  // Before any thread starts (the server's loop, its workers, CUDA's): every thread inherits it.
  const sigset_t signals = stop_signals();
  take_signals(signals);
  const std::string socket = expand_home(a.socket, "--socket");
  const std::string ready_path = expand_home(a.ready_file, "--ready-file");
  check_paths({{"--keys", a.keys}, {"--socket", socket}, {"--socket's lock file", socket.empty() ? "" : socket + ".lock"}},
              {{"--ready-file", ready_path}});
  if (socket.empty() && a.port.empty())
    bad("give --socket PATH (a Unix-domain socket), --port N (127.0.0.1), or both");
  socket_options o;
  o.path = socket;
  if (!a.port.empty()) o.port = int(parse_count(a.port, "--port", 0, 65535, " (0: any free port, printed)"));
  if (!a.socket_group.empty()) {
    if (socket.empty())
      bad("--socket-group '" + a.socket_group + "' applies to the Unix-domain socket: give --socket PATH too "
          "(over --port every local user can connect)");
    o.group = check_group(a.socket_group);
    o.socket_mode = 0660;
  } else {
    o.socket_mode = 0600;
  }
  o.max_queries = parse_count(a.max_queries, "--max-queries", 1, protocol::max_queries_limit,
                              " (2^32, the protocol's limit, so that a request's bytes cannot overflow)");
  o.max_connections = int(parse_count(a.max_connections, "--max-connections", 1, 1 << 20));
  o.max_connections_per_peer =
      int(parse_count(a.max_connections_per_peer, "--max-connections-per-peer", 0, o.max_connections,
                      " (--max-connections; 0: half of it)"));
  o.max_bytes_in_flight = parse_count(a.max_bytes_in_flight, "--max-bytes-in-flight", 1);
  o.workers = int(parse_count(a.workers, "--workers", 0, 1 << 12, " (0: 64)"));
  o.request_timeout = milliseconds(parse_count(a.request_timeout_ms, "--request-timeout-ms", 0, int64_t(1) << 40));
  o.idle_timeout = milliseconds(1000 * parse_count(a.idle_timeout_s, "--idle-timeout", 0, int64_t(1) << 30));
  o.spin = std::chrono::microseconds(parse_count(a.spin_us, "--spin-us", 0, 1000000));
  o.hold = milliseconds(parse_count(a.hold_ms, "--hold-ms", 0, 60000));
  o.ring_queries = parse_count(a.client_ring_queries, "--client-ring-queries", 0, protocol::max_queries_limit);
  o.max_rings = int(parse_count(a.max_client_rings, "--max-client-rings", 0, 1 << 16));
  server_options so;
  so.ring_slots = parse_count(a.ring_slots, "--ring-slots", 1, 1 << 20);
  so.max_batch_requests = parse_count(a.max_batch_requests, "--max-batch-requests", 1);
  so.max_batch_queries = parse_count(a.max_batch_queries, "--max-batch-queries", 1);
  so.preferred_batch_queries = parse_count(a.preferred_batch_queries, "--preferred-batch-queries", 0);
  so.max_delay = std::chrono::microseconds(parse_count(a.max_delay_us, "--max-delay-us", 0, int64_t(1) << 40));
  so.threads = int(parse_count(a.threads, "--threads", 0, 1 << 16));
  so.blocks = int(parse_count(a.blocks, "--blocks", 0, 1 << 20));
  so.idle_release = std::chrono::microseconds(parse_count(a.idle_release_us, "--idle-release-us", 0, int64_t(1) << 32));
  const target dev = resolve_device(a.device);
  npy::input keys(a.keys);
  if (keys.ndim() != 1)
    bad("--keys " + keys.path() + " has shape " + npy::shape_text(keys.shape()) + ": the server takes 1-D keys");
  allow_connections(o.max_connections);
  return visit_key_type(keys.type(),
                        [&]<class T>() { return serve_typed<T>(a, dev, keys, signals, so, o, ready_path); });
}

void add_serve_options(CLI::App& sub, serve_args& a) {
  sub.add_option("--keys", a.keys,
                 "Sorted keys (.npy, 1-D; numpy's order: NaN last): the server keeps a copy. Every client can "
                 "learn all of them, by searching")
      ->required()
      ->type_name("K.npy");
  sub.add_option("--socket", a.socket,
                 "Serve on this Unix-domain socket, created 0600: only this user can connect (see "
                 "--socket-group). A leading ~/ is the home directory. A stale socket file is replaced; a path "
                 "where a server answers, or a file that is not a socket, is refused; PATH.lock beside it (left "
                 "in place) keeps two servers off one path")
      ->type_name("PATH");
  sub.add_option("--socket-group", a.socket_group,
                 "Create the socket 0660 in this group (yours): its members can connect too")
      ->type_name("NAME");
  sub.add_option("--port", a.port,
                 "Serve on 127.0.0.1:N too, or only (0: any free port, printed). Every local user can connect "
                 "to it")
      ->type_name("N");
  add_device_option(sub, a.device);
  sub.add_option("--ready-file", a.ready_file,
                 "Also write the ready line (with --json, the object; both name the pid) to this file once "
                 "listening: whole (a temporary file renamed over it, replacing one a killed server left), and "
                 "remove it when the server stops")
      ->type_name("FILE");
  sub.add_flag("--no-ready-line", a.no_ready_line,
               "Print no ready line on stdout (wait for --ready-file instead)");
  sub.add_option("--max-queries", a.max_queries,
                 "The most queries a request may hold (at most 2^32 = 4294967296): a larger one is refused from "
                 "its header, unread (status 3)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--max-connections", a.max_connections,
                 "Connections open at once, idle ones included (each a file descriptor, no thread); beyond it a "
                 "new connection is answered busy (status 6) and closed")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--max-connections-per-peer", a.max_connections_per_peer,
                 "... of one user on the Unix-domain socket (TCP peers are not known), so that no user can lock "
                 "the others out (0: half of --max-connections)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--max-bytes-in-flight", a.max_bytes_in_flight,
                 "The memory budget: bytes of requests and responses held at once, every connection together "
                 "(beyond it requests wait; one that needs more than all of it is refused, status 3)")
      ->type_name("BYTES")
      ->capture_default_str();
  sub.add_option("--workers", a.workers,
                 "Threads that take whole requests to the server, one at a time each: the most requests searched "
                 "at once (0: 64)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--request-timeout-ms", a.request_timeout_ms,
                 "A request's bytes must arrive within this time of its first (else its connection is closed; 0: "
                 "no limit)")
      ->type_name("MS")
      ->capture_default_str();
  sub.add_option("--idle-timeout", a.idle_timeout_s,
                 "Close a connection idle this many seconds between requests (0: never)")
      ->type_name("S")
      ->capture_default_str();
  sub.add_option("--spin-us", a.spin_us,
                 "After answering, a worker polls its connection this long for the next request before it hands "
                 "it back to the event loop (a wake-up costs several us of a round trip; 0: at once)")
      ->type_name("US")
      ->capture_default_str();
  sub.add_option("--hold-ms", a.hold_ms,
                 "Then the worker waits this long more, blocked, for the next request, while no more than half of "
                 "the workers do so (one wake-up a round trip, not two hand-overs; 0: never)")
      ->type_name("MS")
      ->capture_default_str();
  sub.add_option("--client-ring-queries", a.client_ring_queries,
                 "A client on the Unix-domain socket may open a shared-memory ring on its connection (C++'s "
                 "gsearch::socket_client does): requests of up to this many queries then go through memory a "
                 "worker watches, no system call on the round trip (at most --max-queries; 0: no rings)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--max-client-rings", a.max_client_rings,
                 "Rings open at once ((itemsize + 8) x --client-ring-queries bytes each, apart from "
                 "--max-bytes-in-flight); beyond, a client goes on over the socket")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--ring-slots", a.ring_slots, "Requests in flight in the server at most (more wait: backpressure)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--max-batch-requests", a.max_batch_requests, "Requests served together at most")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--max-batch-queries", a.max_batch_queries,
                 "Their queries at most (a larger request is served alone)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--preferred-batch-queries", a.preferred_batch_queries,
                 "The dynamic batcher (Triton's): wait up to --max-delay-us for this many queries (0: serve at once)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--max-delay-us", a.max_delay_us, "... at most this many microseconds after a batch's first request")
      ->type_name("US")
      ->capture_default_str();
  sub.add_option("--threads", a.threads, "CPU: threads of each batch's searches (0: all)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--blocks", a.blocks, "CUDA: the persistent kernel's blocks, one an SM: its share of the GPU (0: half the SMs)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--idle-release-us", a.idle_release_us,
                 "CUDA: idle this many microseconds, the kernel leaves the GPU (other work of the GPU gets it "
                 "whole); the next request launches it again, some tens of microseconds more for that one (0: "
                 "never leaves)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_flag("--json", a.json,
               "Print the ready line as one JSON object (command, ready, keys, dtype, socket, port, device, "
               "device_name, pid)");
}

std::string serve_footer() {
  return "Who can connect, and what they learn: the Unix-domain socket is created 0600, so only this user can "
         "connect to it (with --socket-group G: 0660 in group G, and its members too); over TCP (--port, "
         "127.0.0.1) every local user can. A client can learn the whole key set, by searching it: serve only "
         "keys that everyone who can connect may read.\n"
         "Runs until SIGINT, SIGTERM or SIGHUP, then answers the requests in flight, removes its socket file "
         "(and --ready-file) and exits 0. SIGINT stops it always, also when it was started in the background "
         "of a script or under trap '' INT (an inherited ignore is reset); SIGHUP does unless it is ignored "
         "(nohup). Once listening it prints one line to stdout (\"gsearch serve: serving N keys of DTYPE on "
         "PATH ...\"; with --json an object), which scripts can wait for, and writes it to --ready-file if given; "
         "the summary at the end goes to stderr. A closed stdout, or one whose reader has gone, does not stop "
         "it: as a daemon, gsearch serve --keys k.npy --socket ~/k.sock --ready-file ~/k.ready --no-ready-line "
         "</dev/null >&- 2>>serve.log &. "
         "If the server fails (on a GPU, a CUDA error poisons the context: it fails that request and every "
         "later one, status 5), gsearch serve stops and exits 2: a supervisor should restart it.\n"
         "Connections cost no thread while idle (an event loop holds them, from --hold-ms after an answer) and "
         "are closed after --idle-timeout; "
         "a request's bytes are held as they arrive, within --max-bytes-in-flight for all connections together; "
         "--workers threads take whole requests to the server, which batches them.\n"
         "The protocol (docs/design.md, \"The socket protocol\"; gsearch client and Python's gsearch.Client "
         "speak it): little-endian; per connection, requests and their responses in order (a request may be "
         "sent before the answer to the last one is read). "
         "Request: \"GSRQ\", version u16 = 1, op u16 = 1 (search; 16 and 17: the ring's, below), dtype u8 (0 int32, 1 uint32, 2 int64, 3 "
         "uint64, 4 float32, 5 float64: the keys' dtype), side u8 (0 left, 1 right, 2 pred), reserved u16 = 0, "
         "count u64, then count elements. Response: \"GSRS\", status u32, then for status 0 count u64 and count "
         "int64 results, else a length u32 and a UTF-8 message. Statuses: 0 ok, 1 malformed, 2 wrong dtype, 3 "
         "too large (over --max-queries, or more than --max-bytes-in-flight), 4 shut down, 5 failed, 6 busy "
         "(at --max-connections or a user's --max-connections-per-peer, or no memory for the request: the "
         "server is healthy, try again later). A bad magic, version, op or dtype code or a request too large "
         "is answered and its connection closed; a wrong dtype or side keeps the connection; a connection "
         "answered busy is closed. On the Unix-domain socket a client may ask for a shared-memory ring (op 16, "
         "count 0; C++'s gsearch::socket_client does, gsearch client, one request, does not): the answer's count "
         "is its capacity (2^14 queries) and a memfd comes with it; its requests then go through the ring, a "
         "doorbell (op 17) over the socket when the server is not watching it (docs/design.md, \"The "
         "connection's ring\"). Keys: a little-endian .npy file of " +
         dtype_list(" or ") + ".";
}

const subcommand_spec<serve_args> serve_spec{
    "serve", "Serve searches of sorted keys to other processes over a Unix-domain socket or 127.0.0.1",
    serve_footer(), add_serve_options, run_serve};

// ---- gsearch client ---------------------------------------------------------------------------

struct client_args {
  std::string socket, port, queries, out, side = "left", timeout = "60";
  bool json = false;
};

exit_code run_client(const client_args& a) {
  check_paths({{"--queries", a.queries}}, {{"--out", a.out}});
  if (a.socket.empty() == a.port.empty()) bad("give the server's --socket PATH or its --port N (one of them)");
  const milliseconds timeout(1000 * parse_count(a.timeout, "--timeout", 0, int64_t(1) << 30));
  const side sd = side_from_string(a.side);
  npy::input queries(a.queries);
  // The timeout is one deadline for the whole request, from the connect to the answer's last byte.
  // No ring: for one request its opening would be a round trip (and a memfd) more.
  auto client = a.socket.empty()
                    ? socket_client(int(parse_count(a.port, "--port", 1, 65535)), timeout)
                    : socket_client(expand_home(a.socket, "--socket"), timeout, default_client_spin, false);
  return visit_key_type(queries.type(), [&]<class T>() {
    const std::vector<T> q = queries.read<T>();
    std::vector<int64_t> out(q.size());
    progress::phase("waiting for the server");
    double ms = 0;
    try {
      ms = wall_ms([&] { client.search(span<const T>(q), sd, span<int64_t>(out)); });
    } catch (const socket_error& e) {
      // The request's fault (exit 1), or the server's state (exit 2): shut down, failed, busy
      // (too many connections, no memory now: the server is healthy, try again later).
      const protocol::status s = e.status();
      const bool ours = s == protocol::status::malformed || s == protocol::status::wrong_dtype ||
                        s == protocol::status::too_large;
      throw failure(ours ? exit_bad_input : exit_device_or_io, e.what());
    }
    npy::save(a.out, span<const int64_t>(out), queries.shape());
    const std::string type(key_traits<T>::name);
    if (a.json) {
      print(json({{"command", "client"},
                  {"server", client.address()},
                  {"dtype", type},
                  {"shape", queries.shape()},
                  {"side", a.side},
                  {"out", a.out},
                  {"time_ms", ms}})
                .dump() +
            "\n");
    } else {
      note(format("client: %lld %s queries (side=%s) answered by %s in %.3f ms -> %s", (long long)q.size(),
                   type.c_str(), a.side.c_str(), client.address().c_str(), ms, a.out.c_str()));
    }
    return exit_ok;
  });
}

void add_client_options(CLI::App& sub, client_args& a) {
  auto* socket = sub.add_option("--socket", a.socket, "The server's Unix-domain socket (a leading ~/ is the home "
                                                      "directory)")
                     ->type_name("PATH");
  sub.add_option("--port", a.port, "The server's port on 127.0.0.1")->type_name("N")->excludes(socket);
  sub.add_option("--queries", a.queries, "Queries (.npy, 1-D or 2-D, the server's keys' dtype)")
      ->required()
      ->type_name("Q.npy");
  sub.add_option("--out", a.out,
                 "The results (.npy, int64, the queries' shape), through a temporary file renamed at the end")
      ->required()
      ->type_name("OUT.npy");
  sub.add_option("--side", a.side,
                 "left: the first i with keys[i] >= q (numpy side='left'); right: the first i with keys[i] > q; "
                 "pred: the largest i with keys[i] <= q, or -1")
      ->check(CLI::IsMember(side_names))
      ->capture_default_str();
  sub.add_option("--timeout", a.timeout,
                 "One deadline in seconds for the whole request, from the connect (a server whose backlog is "
                 "full) to the answer's last byte (a slow one): then exit 2 (0: no limit)")
      ->type_name("S")
      ->capture_default_str();
  sub.add_flag("--json", a.json,
               "Print one JSON object to stdout (command, server, dtype, shape, side, out, time_ms) instead of the "
               "summary");
}

const subcommand_spec<client_args> client_spec{
    "client", "Send one search to a running gsearch serve and write its results",
    "The queries go in one request (gsearch serve --help describes the protocol) and the results are "
    "numpy.searchsorted's on the server's keys. The queries must have the server's dtype (gsearch never casts): "
    "a request the server refuses is exit 1 with its message (wrong dtype, too large), a server that cannot be "
    "reached, does not answer within --timeout, closes the connection, is shut down or failed is exit 2, and so "
    "is one that answers busy (status 6: at its connection limit or out of memory for now; the server is healthy, "
    "try again later). The Unix-domain socket is the server's user's only unless it was created for a group "
    "(gsearch serve --socket-group): \"Permission denied\" means that. No output file is left by an error.",
    add_client_options, run_client};

}  // namespace

command add_serve_command(CLI::App& app) { return add_command(app, serve_spec); }
command add_client_command(CLI::App& app) { return add_command(app, client_spec); }

}  // namespace gsearch::cli
