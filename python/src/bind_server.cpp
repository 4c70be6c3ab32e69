// gsearch._core's search server (gsearch/server.hpp): the class Server, a gsearch::server of any
// key type, on the CPU (a loop thread) or on a CUDA device (a persistent kernel). search()
// releases the GIL for its whole wait, so that Python threads submit at once and the server's
// loop batches their requests; the arrays are the caller's memory (no copy: on the GPU, device
// and page-locked arrays are read and written in place, pageable ones through the server's
// staging) and stay alive for the call, which returns once its answer is written. The server
// kernel is not ordered with any stream: the Python layer synchronizes the stream that produced
// CUDA arrays before it passes them here.
//
// The socket front end (listen, stop_listening, shutdown, socket_stats) is guarded by a mutex,
// taken after the GIL is released (never the other way round, so that no thread holds the mutex
// while it waits for the GIL): two threads' close() or stop_listening(), or a listen() beside
// them, take turns, and one stop waits for the other's to finish.

#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "fork.hpp"
#include "gsearch/server.hpp"
#include "gsearch/server_socket.hpp"
// (keep this order: binding.hpp's enum_table names gsearch::to_string)
#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

template <class T>
using server_ptr = std::unique_ptr<gsearch::server<T>>;  // the holder of a server of T

// A 1-D, contiguous array in host memory, or (when cuda_device >= 0) in that CUDA device's
// memory; ValueError naming fn and what otherwise.
template <class Array>
void check_vector(const std::string& fn, const char* what, const Array& a, int cuda_device) {
  const bool host = a.device_type() == nb::device::cpu::value || a.device_type() == nb::device::cuda_host::value;
  if (!host) {
    if (cuda_device < 0)
      value_error(fn + ": " + what + " must be in host memory for a CPU server (have " +
                  device_name(a.device_type(), a.device_id()) + "; device='cuda' serves CUDA arrays)");
    if (a.device_type() != nb::device::cuda::value || a.device_id() != cuda_device)
      value_error(fn + ": " + what + " on " + device_name(a.device_type(), a.device_id()) + ", the server on " +
                  device_name(nb::device::cuda::value, cuda_device) + " (host memory or that device's)");
  }
  if (a.ndim() != 1) value_error(fn + ": " + what + " must be 1-D (have " + std::to_string(a.ndim()) + " dimensions)");
  if (!is_c_contiguous(a)) value_error(fn + ": " + what + " must be contiguous");
}

// The CUDA device a server of `device` ("cpu": -1, "cuda", "cuda:N") on `keys` runs on.
int server_device(const std::string& fn, const std::string& device, const in_array& keys) {
  if (device == "cpu") return -1;
  int id = -1;
  if (device.rfind("cuda:", 0) == 0 && device.size() > 5 && device.size() <= 9 &&
      device.find_first_not_of("0123456789", 5) == std::string::npos)
    id = std::atoi(device.c_str() + 5);
  else if (device != "cuda")
    value_error(fn + ": device must be 'cpu' or 'cuda' (or 'cuda:N'), not '" + device + "'");
  if (!gsearch::built_with_cuda())
    value_error(fn + ": device='" + device + "': gsearch was built without CUDA (GSEARCH_CUDA=OFF)");
  if (keys.device_type() == nb::device::cuda::value) {
    if (id >= 0 && id != keys.device_id())
      value_error(fn + ": device='" + device + "' but the keys on " + device_name(keys.device_type(), keys.device_id()));
    return keys.device_id();
  }
  return id >= 0 ? id : gsearch::cuda_current_device();
}

class py_server {
 public:
  using any_server = key_variant<server_ptr>;

  py_server(const in_array& keys, const std::string& device, int64_t ring_slots, int64_t max_batch_requests,
            int64_t max_batch_queries, int64_t preferred_batch_queries, int64_t max_delay_us, int threads, int blocks,
            int64_t staging_queries, int64_t idle_sleep_ns, int64_t idle_release_ns)
      : dtype_(keys.dtype()) {
    const std::string fn = "gsearch._core.Server";
    device_ = server_device(fn, device, keys);
    check_vector(fn, "keys", keys, device_);
    gsearch::server_options o;
    o.ring_slots = ring_slots;
    o.max_batch_requests = max_batch_requests;
    o.max_batch_queries = max_batch_queries;
    o.preferred_batch_queries = preferred_batch_queries;
    o.max_delay = std::chrono::microseconds(max_delay_us);
    o.threads = threads;
    o.blocks = blocks;
    o.staging_queries = staging_queries;
    o.idle_sleep = std::chrono::nanoseconds(idle_sleep_ns);
    o.idle_release = std::chrono::nanoseconds(idle_release_ns);
    visit_key_type(fn, dtype_, [&]<class T>() {
      const gsearch::span<const T> k(static_cast<const T*>(keys.data()), int64_t(keys.size()));
      nb::gil_scoped_release unlocked;
      if (device_ < 0) {
        s_ = std::make_unique<gsearch::server<T>>(gsearch::cpu, k, o);
      } else {
        device_guard guard(device_);  // the kernel starts on the current device
        s_ = std::make_unique<gsearch::server<T>>(gsearch::cuda, k, o);
      }
    });
  }

  ~py_server() {
    // A fork child's copy: the C++ destructors leave the parent's server and socket alone, and
    // no CUDA call (a fork child cannot use the parent's context).
    if (made_.forked()) return;
    // The socket's connections call the server: they end first. A CUDA server frees its memory
    // with its device current.
    try {
      sock_.reset();
      if (device_ >= 0) {
        device_guard guard(device_);
        std::visit([](auto& server) { server.reset(); }, s_);
      }
    } catch (...) {
    }
  }

  /// out[i] = the search of queries[i] on side `side` (a _core.SIDES code).
  void search(const in_array& queries, int side, out_array out) {
    made_.check("gsearch.Server.search", "server");
    const std::string fn = "gsearch._core.Server.search";
    const gsearch::side s = side_of(fn, side);
    check_vector(fn, "queries", queries, device_);
    if (queries.dtype() != dtype_)
      type_error(fn + ": queries are " + dtype_name(queries.dtype()) + ", the keys " + dtype_name(dtype_));
    check_vector(fn, "out", out, device_);
    if (out.dtype() != nb::dtype<int64_t>() || out.size() != queries.size())
      value_error(fn + ": out must be a contiguous 1-D int64 array of " + std::to_string(queries.size()) +
                  " elements (have " + dtype_name(out.dtype()) + ", " + std::to_string(out.size()) + ")");
    std::visit(
        [&](auto& server) {
          using T = typename std::remove_cvref_t<decltype(*server)>::key_type;
          const gsearch::span<const T> q(static_cast<const T*>(queries.data()), int64_t(queries.size()));
          const gsearch::span<int64_t> o(static_cast<int64_t*>(out.data()), int64_t(out.size()));
          nb::gil_scoped_release unlocked;
          if (device_ < 0) {
            server->search(q, s, o);
          } else {
            device_guard guard(device_);
            server->search(q, s, o);
          }
        },
        s_);
  }

  /// Later requests see a copy of `keys` (sorted, of the server's dtype); returns once switched.
  void replace_keys(const in_array& keys) {
    made_.check("gsearch.Server.replace_keys", "server");
    const std::string fn = "gsearch._core.Server.replace_keys";
    check_vector(fn, "keys", keys, device_);
    if (keys.dtype() != dtype_)
      type_error(fn + ": keys are " + dtype_name(keys.dtype()) + ", the server's " + dtype_name(dtype_));
    std::visit(
        [&](auto& server) {
          using T = typename std::remove_cvref_t<decltype(*server)>::key_type;
          const gsearch::span<const T> k(static_cast<const T*>(keys.data()), int64_t(keys.size()));
          nb::gil_scoped_release unlocked;
          if (device_ < 0) {
            server->replace_keys(k);
          } else {
            device_guard guard(device_);  // the new index is built on the current device
            server->replace_keys(k);
          }
        },
        s_);
  }

  nb::dict stats() const {
    made_.check("gsearch.Server.stats", "server");
    const gsearch::server_stats st = std::visit([](const auto& server) { return server->stats(); }, s_);
    nb::dict d;
    d["requests"] = st.requests;
    d["queries"] = st.queries;
    d["batches"] = st.batches;
    nb::list batch, latency;
    for (const int64_t c : st.batch_requests) batch.append(c);
    for (const int64_t c : st.latency_us) latency.append(c);
    d["batch_requests_log2"] = batch;
    d["latency_us_log2"] = latency;
    d["host_submit_ns"] = st.host_submit_ns;
    d["host_wait_ns"] = st.host_wait_ns;
    d["host_finish_ns"] = st.host_finish_ns;
    d["kernel_timed_batches"] = st.kernel_timed_batches;
    d["kernel_take_cycles"] = st.kernel_take_cycles;
    d["kernel_serve_cycles"] = st.kernel_serve_cycles;
    d["kernel_clock_khz"] = st.kernel_clock_khz;
    d["kernel_launches"] = st.kernel_launches;
    d["kernel_relaunch_ns"] = st.kernel_relaunch_ns;
    return d;
  }

  int64_t size() const {
    made_.check("gsearch.Server.size", "server");
    return std::visit([](const auto& server) { return server->size(); }, s_);
  }

  bool on_device() const {
    made_.check("gsearch.Server.on_device", "server");
    return std::visit([](const auto& server) { return server->on_device(); }, s_);
  }

  /// "cpu" or "cuda:N".
  std::string device() const {
    made_.check("gsearch.Server.device", "server");
    return device_name(device_ < 0 ? nb::device::cpu::value : nb::device::cuda::value, device_);
  }

  /// Serves this server to other processes (gsearch.Client, `gsearch client`) on a Unix-domain
  /// socket `path` and / or 127.0.0.1:`port` (-1: none; 0: any free port); returns the port bound
  /// (-1 if none). One socket front end at a time; ValueError after shutdown.
  int listen(const std::string& path, int port, unsigned socket_mode, const std::string& group, int64_t max_queries,
             int64_t max_bytes_in_flight, int max_connections, int max_connections_per_peer, int workers,
             int64_t request_timeout_ms, int64_t idle_timeout_ms) {
    made_.check("gsearch.Server.listen", "server");
    gsearch::socket_options o;
    o.path = path;
    o.port = port;
    o.socket_mode = socket_mode;
    o.group = group;
    o.max_queries = max_queries;
    o.max_bytes_in_flight = max_bytes_in_flight;
    o.max_connections = max_connections;
    o.max_connections_per_peer = max_connections_per_peer;
    o.workers = workers;
    o.request_timeout = std::chrono::milliseconds(request_timeout_ms);
    o.idle_timeout = std::chrono::milliseconds(idle_timeout_ms);
    int bound = -1;
    std::visit(
        [&](auto& server) {
          nb::gil_scoped_release unlocked;
          const std::lock_guard<std::mutex> lock(front_mutex_);
          if (closed_) value_error("gsearch.Server.listen: the server is closed (listen before close())");
          if (sock_) value_error("gsearch.Server.listen: the server is listening already (stop_listening first)");
          sock_ = std::make_unique<gsearch::socket_server>(*server, o);
          bound = sock_->port();
        },
        s_);
    return bound;
  }

  /// Stops the socket front end: answers the requests begun, closes the connections, removes the
  /// socket file (idempotent; the server keeps serving this process). A second caller waits for
  /// the first one's stop.
  void stop_listening() {
    made_.check("gsearch.Server.stop_listening", "server");
    nb::gil_scoped_release unlocked;
    const std::lock_guard<std::mutex> lock(front_mutex_);
    stop_socket();
  }

  void shutdown() {
    made_.check("gsearch.Server.close", "server");
    std::visit(
        [&](auto& server) {
          nb::gil_scoped_release unlocked;
          const std::lock_guard<std::mutex> lock(front_mutex_);
          closed_ = true;
          stop_socket();  // the socket's connections call the server: they end first
          if (device_ < 0) {
            server->shutdown();
          } else {
            device_guard guard(device_);
            server->shutdown();
          }
        },
        s_);
  }

  /// The socket front end's counts (gsearch::socket_stats) while it listens, else None.
  nb::object socket_stats() {
    made_.check("gsearch.Server.stats", "server");
    gsearch::socket_stats st;
    bool listening = false;
    {
      nb::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> lock(front_mutex_);
      if (sock_) {
        listening = true;
        st = sock_->stats();
      }
    }
    if (!listening) return nb::none();
    nb::dict d;
    d["connections"] = st.connections;
    d["requests"] = st.requests;
    d["errors"] = st.errors;
    d["busy"] = st.busy;
    d["open"] = st.open;
    d["bytes_in_flight"] = st.bytes_in_flight;
    d["peak_bytes_in_flight"] = st.peak_bytes_in_flight;
    return d;
  }

 private:
  // Every method of a fork child's copy raises RuntimeError naming the fork (before any CUDA call
  // or lock: the library's own check comes after the device guard).
  gsearch::detail::made_in_process made_;
  nb::dlpack::dtype dtype_;
  int device_ = -1;  // the CUDA device of a CUDA server, -1 on the CPU
  any_server s_;
  // The socket front end and whether shutdown() ran: read and written under front_mutex_ only
  // (taken with the GIL released), and by the destructor.
  std::mutex front_mutex_;
  bool closed_ = false;
  std::unique_ptr<gsearch::socket_server> sock_;  // after s_: destroyed (stopped) before the server

  // Under front_mutex_: stops and drops the front end (also when stop() throws: the destructor
  // of the moved-out pointer stops it then).
  void stop_socket() {
    std::unique_ptr<gsearch::socket_server> s = std::move(sock_);
    if (s) s->stop();
  }
};

}  // namespace

void bind_server(nb::module_& m) {
  nb::class_<py_server>(m, "Server",
                        "A gsearch::server: a copy of sorted 1-D keys, served to many threads through a request "
                        "ring, on the CPU (device 'cpu': host keys, queries and out) or by a persistent kernel on a "
                        "CUDA device (device 'cuda' or 'cuda:N': keys, queries and out in host memory or on the "
                        "server's device; CUDA arrays are read as they are, unordered with any stream). Use "
                        "gsearch.Server.")
      .def(nb::init<const in_array&, const std::string&, int64_t, int64_t, int64_t, int64_t, int64_t, int, int, int64_t,
                    int64_t, int64_t>(),
           "keys"_a, "device"_a, "ring_slots"_a, "max_batch_requests"_a, "max_batch_queries"_a,
           "preferred_batch_queries"_a, "max_delay_us"_a, "threads"_a, "blocks"_a, "staging_queries"_a,
           "idle_sleep_ns"_a, "idle_release_ns"_a)
      .def("search", &py_server::search, "queries"_a, "side"_a, "out"_a,
           "out[i] = the search of queries[i] (1-D, the keys' dtype) on side (a SIDES code); out: int64, as many; "
           "both in host memory or (a CUDA server) on its device. The GIL is released while it waits.")
      .def("replace_keys", &py_server::replace_keys, "keys"_a,
           "Serves later requests from a copy of keys (sorted, the server's dtype); returns once switched.")
      .def("stats", &py_server::stats, "Counts since the start: requests, queries, batches, histograms.")
      .def_prop_ro("size", &py_server::size, "The current key set's length.")
      .def_prop_ro("on_device", &py_server::on_device, "True for the CUDA server (a persistent kernel).")
      .def_prop_ro("device", &py_server::device, "Where the server runs: 'cpu' or 'cuda:N'.")
      .def("listen", &py_server::listen, "path"_a, "port"_a, "socket_mode"_a, "group"_a, "max_queries"_a,
           "max_bytes_in_flight"_a, "max_connections"_a, "max_connections_per_peer"_a, "workers"_a,
           "request_timeout_ms"_a, "idle_timeout_ms"_a,
           "Serves this server on a Unix-domain socket path ('' none) and / or 127.0.0.1:port (-1 none, 0 any "
           "free port) with gsearch::socket_options' other fields; returns the port bound (-1 if none). "
           "ValueError when listening already or after shutdown.")
      .def("stop_listening", &py_server::stop_listening,
           "Stops the socket front end (answers the requests begun, removes the socket file); idempotent; "
           "concurrent calls take turns.")
      .def("socket_stats", &py_server::socket_stats,
           "The socket front end's counts (connections, requests, errors, busy, open, bytes_in_flight, "
           "peak_bytes_in_flight) while listening, else None.")
      .def("shutdown", &py_server::shutdown,
           "Stops the socket front end, refuses new requests, answers those submitted, stops the loop "
           "(idempotent; concurrent calls take turns).");

  // gsearch::socket_options' defaults, for the Python layer's test that its own are the same.
  const gsearch::socket_options d;
  nb::dict defaults;
  defaults["socket_mode"] = d.socket_mode;
  defaults["group"] = d.group;
  defaults["max_queries"] = d.max_queries;
  defaults["max_bytes_in_flight"] = d.max_bytes_in_flight;
  defaults["max_connections"] = d.max_connections;
  defaults["max_connections_per_peer"] = d.max_connections_per_peer;
  defaults["workers"] = d.workers;
  defaults["request_timeout_ms"] = int64_t(d.request_timeout.count());
  defaults["idle_timeout_ms"] = int64_t(d.idle_timeout.count());
  defaults["max_queries_limit"] = gsearch::protocol::max_queries_limit;
  m.attr("SOCKET_DEFAULTS") = defaults;
}

}  // namespace gsearch_python
