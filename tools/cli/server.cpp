// `gsearch serve` and `gsearch client`: the search server (gsearch/server.hpp) behind a socket
// (gsearch/server_socket.hpp, the protocol of gsearch/server_protocol.hpp), and one request to it
// from a .npy file. docs/design.md, "The socket protocol".

#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
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
  std::string keys, socket, port, device = "auto";
  std::string max_queries = std::to_string(protocol::default_max_queries), max_connections = "128";
  std::string request_timeout_ms = "30000", idle_timeout_s = "0", spin_us = "50";
  std::string ring_slots = "256", max_batch_requests = "256", max_batch_queries = std::to_string(1 << 22);
  std::string preferred_batch_queries = "0", max_delay_us = "0", threads = "0", blocks = "0";
  bool json = false;
};

// The signals that stop the server: SIGTERM, and SIGINT and SIGHUP unless whoever started us
// ignores them (a shell's background job ignores SIGINT). Blocked in every thread (so blocked
// before the first one starts) and taken by sigtimedwait: no work in a signal handler.
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  for (int sig : {SIGINT, SIGHUP}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) sigaddset(&set, sig);
  }
  return set;
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

template <class T>
exit_code serve_typed(const serve_args& a, const target& dev, npy::input& keys_file, const sigset_t& signals,
                      const server_options& so, socket_options o) {
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
  progress::phase("serving");
  const std::string where = (o.path.empty() ? std::string() : o.path) +
                            (front.port() >= 0 ? (o.path.empty() ? "" : " and ") + std::string("127.0.0.1:") +
                                                     std::to_string(front.port())
                                               : std::string());
  const std::string type(key_traits<T>::name);
  if (a.json) {
    print(json({{"command", "serve"},
                {"ready", true},
                {"keys", srv->size()},
                {"dtype", type},
                {"socket", o.path.empty() ? json(nullptr) : json(o.path)},
                {"port", front.port() >= 0 ? json(front.port()) : json(nullptr)},
                {"device", dev.cuda ? "cuda" : "cpu"},
                {"device_name", dev.name},
                {"pid", int64_t(getpid())}})
              .dump() +
          "\n");
  } else {
    print("gsearch serve: serving " + std::to_string(srv->size()) + " keys of " + type + " on " + where +
          " (device=" + (dev.cuda ? "cuda" : "cpu") + ", " + dev.name + ", pid " + std::to_string(getpid()) +
          "); SIGINT or SIGTERM stops it\n");
  }
  flush_stdout();  // the ready line: scripts wait for it

  const int sig = wait_for_stop(signals, front);
  progress::phase("stopping");
  front.stop();     // no new request; those begun are answered; the socket file is removed
  srv->shutdown();  // answers what is left in the ring
  const socket_stats st = front.stats();
  const std::string counts = std::to_string(st.requests) + " request" + (st.requests == 1 ? "" : "s") + " answered, " +
                             std::to_string(st.errors) + " refused or cut short, " +
                             std::to_string(st.connections) + " connection" + (st.connections == 1 ? "" : "s");
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
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  check_paths({{"--keys", a.keys}}, {});
  if (a.socket.empty() && a.port.empty())
    bad("give --socket PATH (a Unix-domain socket), --port N (127.0.0.1), or both");
  socket_options o;
  o.path = a.socket;
  if (!a.port.empty()) o.port = int(parse_count(a.port, "--port", 0, 65535, " (0: any free port, printed)"));
  o.max_queries = parse_count(a.max_queries, "--max-queries", 1);
  o.max_connections = int(parse_count(a.max_connections, "--max-connections", 1, 1 << 16));
  o.request_timeout = milliseconds(parse_count(a.request_timeout_ms, "--request-timeout-ms", 0, int64_t(1) << 40));
  o.idle_timeout = milliseconds(1000 * parse_count(a.idle_timeout_s, "--idle-timeout", 0, int64_t(1) << 30));
  o.spin = std::chrono::microseconds(parse_count(a.spin_us, "--spin-us", 0, 1000000));
  server_options so;
  so.ring_slots = parse_count(a.ring_slots, "--ring-slots", 1, 1 << 20);
  so.max_batch_requests = parse_count(a.max_batch_requests, "--max-batch-requests", 1);
  so.max_batch_queries = parse_count(a.max_batch_queries, "--max-batch-queries", 1);
  so.preferred_batch_queries = parse_count(a.preferred_batch_queries, "--preferred-batch-queries", 0);
  so.max_delay = std::chrono::microseconds(parse_count(a.max_delay_us, "--max-delay-us", 0, int64_t(1) << 40));
  so.threads = int(parse_count(a.threads, "--threads", 0, 1 << 16));
  so.blocks = int(parse_count(a.blocks, "--blocks", 0, 1 << 20));
  const target dev = resolve_device(a.device);
  npy::input keys(a.keys);
  if (keys.ndim() != 1)
    bad("--keys " + keys.path() + " has shape " + npy::shape_text(keys.shape()) + ": the server takes 1-D keys");
  return visit_key_type(keys.type(), [&]<class T>() { return serve_typed<T>(a, dev, keys, signals, so, o); });
}

void add_serve_options(CLI::App& sub, serve_args& a) {
  sub.add_option("--keys", a.keys, "Sorted keys (.npy, 1-D; numpy's order: NaN last): the server keeps a copy")
      ->required()
      ->type_name("K.npy");
  sub.add_option("--socket", a.socket,
                 "Serve on this Unix-domain socket (a stale socket file is replaced; a path where a server "
                 "answers, or a file that is not a socket, is refused)")
      ->type_name("PATH");
  sub.add_option("--port", a.port, "Serve on 127.0.0.1:N too, or only (0: any free port, printed)")
      ->type_name("N");
  add_device_option(sub, a.device);
  sub.add_option("--max-queries", a.max_queries,
                 "The most queries a request may hold: a larger one is refused from its header, unread (status 3)")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--max-connections", a.max_connections,
                 "Connections served at once (a thread each); more wait to be accepted")
      ->type_name("N")
      ->capture_default_str();
  sub.add_option("--request-timeout-ms", a.request_timeout_ms,
                 "A request's bytes must arrive within this time of its first (else its connection is closed; 0: "
                 "no limit)")
      ->type_name("MS")
      ->capture_default_str();
  sub.add_option("--idle-timeout", a.idle_timeout_s, "Close a connection idle this many seconds (0: never)")
      ->type_name("S")
      ->capture_default_str();
  sub.add_option("--spin-us", a.spin_us,
                 "After answering, a connection's thread polls for the next request this long before it sleeps "
                 "(a wake-up costs several us of a round trip; 0: sleep at once)")
      ->type_name("US")
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
  sub.add_flag("--json", a.json,
               "Print the ready line as one JSON object (command, ready, keys, dtype, socket, port, device, "
               "device_name, pid)");
}

std::string serve_footer() {
  return "Runs until SIGINT or SIGTERM (or SIGHUP), then answers the requests in flight, removes its socket file "
         "and exits 0. Once listening it prints one line to stdout (\"gsearch serve: serving N keys of DTYPE on "
         "PATH ...\"; with --json an object), which scripts can wait for; the summary at the end goes to stderr. "
         "If the server fails (on a GPU, a CUDA error poisons the context: it fails that request and every "
         "later one, status 5), gsearch serve stops and exits 2: a supervisor should restart it.\n"
         "The protocol (docs/design.md, \"The socket protocol\"; gsearch client and Python's gsearch.Client "
         "speak it): little-endian; per connection, one request then its response, as often as wanted. "
         "Request: \"GSRQ\", version u16 = 1, op u16 = 1 (search), dtype u8 (0 int32, 1 uint32, 2 int64, 3 "
         "uint64, 4 float32, 5 float64: the keys' dtype), side u8 (0 left, 1 right, 2 pred), reserved u16 = 0, "
         "count u64, then count elements. Response: \"GSRS\", status u32, then for status 0 count u64 and count "
         "int64 results, else a length u32 and a UTF-8 message. Statuses: 0 ok, 1 malformed, 2 wrong dtype, 3 "
         "too large (over --max-queries), 4 shut down, 5 failed. A bad magic, version, op or dtype code or a "
         "request too large is answered and its connection closed; a wrong dtype or side keeps the "
         "connection. Keys: a little-endian .npy file of " +
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
  auto client = a.socket.empty()
                    ? socket_client(int(parse_count(a.port, "--port", 1, 65535)), timeout)
                    : socket_client(a.socket, timeout);
  return visit_key_type(queries.type(), [&]<class T>() {
    const std::vector<T> q = queries.read<T>();
    std::vector<int64_t> out(q.size());
    progress::phase("waiting for the server");
    double ms = 0;
    try {
      ms = wall_ms([&] { client.search(span<const T>(q), sd, span<int64_t>(out)); });
    } catch (const socket_error& e) {
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
      print(format("client: %lld %s queries (side=%s) answered by %s in %.3f ms -> %s\n", (long long)q.size(),
                   type.c_str(), a.side.c_str(), client.address().c_str(), ms, a.out.c_str()));
    }
    return exit_ok;
  });
}

void add_client_options(CLI::App& sub, client_args& a) {
  auto* socket = sub.add_option("--socket", a.socket, "The server's Unix-domain socket")->type_name("PATH");
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
  sub.add_option("--timeout", a.timeout, "Seconds to wait for the server's answer (0: no limit)")
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
    "reached, closes the connection, is shut down or failed is exit 2. No output file is left by an error.",
    add_client_options, run_client};

}  // namespace

command add_serve_command(CLI::App& app) { return add_command(app, serve_spec); }
command add_client_command(CLI::App& app) { return add_command(app, client_spec); }

}  // namespace gsearch::cli
