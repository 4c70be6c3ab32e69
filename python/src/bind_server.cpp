// gsearch._core's search server (gsearch/server.hpp): the class Server, a gsearch::server of any
// key type. The CPU form only, so far (issue 22: the GPU loop is its next part). search()
// releases the GIL for its whole wait, so that Python threads submit at once and the server's
// loop batches their requests; the arrays are the caller's memory (no copy) and stay alive for
// the call, which returns once its answer is written.

#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "gsearch/server.hpp"
#include "gsearch/server_socket.hpp"
// (keep this order: binding.hpp's enum_table names gsearch::to_string)
#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

template <class First, class... Rest>
using variant_of_rest = std::variant<Rest...>;
#define GSEARCH_PY_SERVER_OF(T) , std::unique_ptr<gsearch::server<T>>

// A 1-D, contiguous array in host memory; ValueError naming fn and what otherwise.
void check_host_vector(const std::string& fn, const char* what, const in_array& a) {
  if (a.device_type() != nb::device::cpu::value)
    value_error(fn + ": " + what + " must be in host memory (the server runs on the CPU so far)");
  if (a.ndim() != 1) value_error(fn + ": " + what + " must be 1-D (have " + std::to_string(a.ndim()) + " dimensions)");
  if (!is_c_contiguous(a)) value_error(fn + ": " + what + " must be contiguous");
}

class py_server {
 public:
  using any_server = variant_of_rest<void GSEARCH_KEY_TYPES(GSEARCH_PY_SERVER_OF)>;

  py_server(const in_array& keys, int64_t ring_slots, int64_t max_batch_requests, int64_t max_batch_queries,
            int64_t preferred_batch_queries, int64_t max_delay_us, int threads)
      : dtype_(keys.dtype()) {
    const std::string fn = "gsearch._core.Server";
    check_host_vector(fn, "keys", keys);
    gsearch::server_options o;
    o.ring_slots = ring_slots;
    o.max_batch_requests = max_batch_requests;
    o.max_batch_queries = max_batch_queries;
    o.preferred_batch_queries = preferred_batch_queries;
    o.max_delay = std::chrono::microseconds(max_delay_us);
    o.threads = threads;
    visit_key_type(fn, dtype_, [&]<class T>() {
      const gsearch::span<const T> k(static_cast<const T*>(keys.data()), int64_t(keys.size()));
      nb::gil_scoped_release unlocked;
      s_ = std::make_unique<gsearch::server<T>>(gsearch::cpu, k, o);
    });
  }

  /// out[i] = the search of queries[i] on side `side` (a _core.SIDES code).
  void search(const in_array& queries, int side, out_array out) {
    const std::string fn = "gsearch._core.Server.search";
    const gsearch::side s = side_of(fn, side);
    check_host_vector(fn, "queries", queries);
    if (queries.dtype() != dtype_)
      type_error(fn + ": queries are " + dtype_name(queries.dtype()) + ", the keys " + dtype_name(dtype_));
    if (out.device_type() != nb::device::cpu::value || out.ndim() != 1 || !is_c_contiguous(out) ||
        out.dtype() != nb::dtype<int64_t>() || out.size() != queries.size())
      value_error(fn + ": out must be a contiguous 1-D int64 host array of " + std::to_string(queries.size()) +
                  " elements");
    std::visit(
        [&](auto& server) {
          using T = typename std::remove_cvref_t<decltype(*server)>::key_type;
          const gsearch::span<const T> q(static_cast<const T*>(queries.data()), int64_t(queries.size()));
          const gsearch::span<int64_t> o(static_cast<int64_t*>(out.data()), int64_t(out.size()));
          nb::gil_scoped_release unlocked;
          server->search(q, s, o);
        },
        s_);
  }

  /// Later requests see a copy of `keys` (sorted, of the server's dtype); returns once switched.
  void replace_keys(const in_array& keys) {
    const std::string fn = "gsearch._core.Server.replace_keys";
    check_host_vector(fn, "keys", keys);
    if (keys.dtype() != dtype_)
      type_error(fn + ": keys are " + dtype_name(keys.dtype()) + ", the server's " + dtype_name(dtype_));
    std::visit(
        [&](auto& server) {
          using T = typename std::remove_cvref_t<decltype(*server)>::key_type;
          const gsearch::span<const T> k(static_cast<const T*>(keys.data()), int64_t(keys.size()));
          nb::gil_scoped_release unlocked;
          server->replace_keys(k);
        },
        s_);
  }

  nb::dict stats() const {
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
    return d;
  }

  int64_t size() const {
    return std::visit([](const auto& server) { return server->size(); }, s_);
  }

  /// Serves this server to other processes (gsearch.Client, `gsearch client`) on a Unix-domain
  /// socket `path` and / or 127.0.0.1:`port` (-1: none; 0: any free port); returns the port bound
  /// (-1 if none). One socket front end at a time.
  int listen(const std::string& path, int port, int64_t max_queries, int max_connections, int64_t request_timeout_ms,
             int64_t idle_timeout_ms) {
    if (sock_) value_error("gsearch._core.Server.listen: the server is listening already (stop_listening first)");
    gsearch::socket_options o;
    o.path = path;
    o.port = port;
    o.max_queries = max_queries;
    o.max_connections = max_connections;
    o.request_timeout = std::chrono::milliseconds(request_timeout_ms);
    o.idle_timeout = std::chrono::milliseconds(idle_timeout_ms);
    std::visit(
        [&](auto& server) {
          nb::gil_scoped_release unlocked;
          sock_ = std::make_unique<gsearch::socket_server>(*server, o);
        },
        s_);
    return sock_->port();
  }

  /// Stops the socket front end: answers the requests begun, closes the connections, removes the
  /// socket file (idempotent; the server keeps serving this process).
  void stop_listening() {
    nb::gil_scoped_release unlocked;
    if (sock_) sock_->stop();
    sock_.reset();
  }

  void shutdown() {
    stop_listening();  // the socket's connections call the server: they end first
    std::visit(
        [](auto& server) {
          nb::gil_scoped_release unlocked;
          server->shutdown();
        },
        s_);
  }

 private:
  nb::dlpack::dtype dtype_;
  any_server s_;
  std::unique_ptr<gsearch::socket_server> sock_;  // after s_: destroyed (stopped) before the server
};

}  // namespace

void bind_server(nb::module_& m) {
  nb::class_<py_server>(m, "Server",
                        "A gsearch::server on the CPU: a copy of sorted 1-D host keys, served to many threads "
                        "through a request ring (use gsearch.Server).")
      .def(nb::init<const in_array&, int64_t, int64_t, int64_t, int64_t, int64_t, int>(), "keys"_a,
           "ring_slots"_a, "max_batch_requests"_a, "max_batch_queries"_a, "preferred_batch_queries"_a,
           "max_delay_us"_a, "threads"_a)
      .def("search", &py_server::search, "queries"_a, "side"_a, "out"_a,
           "out[i] = the search of queries[i] (1-D, the keys' dtype) on side (a SIDES code); the GIL is "
           "released while it waits.")
      .def("replace_keys", &py_server::replace_keys, "keys"_a,
           "Serves later requests from a copy of keys (sorted, the server's dtype); returns once switched.")
      .def("stats", &py_server::stats, "Counts since the start: requests, queries, batches, histograms.")
      .def_prop_ro("size", &py_server::size, "The current key set's length.")
      .def("listen", &py_server::listen, "path"_a, "port"_a, "max_queries"_a, "max_connections"_a,
           "request_timeout_ms"_a, "idle_timeout_ms"_a,
           "Serves this server on a Unix-domain socket path ('' none) and / or 127.0.0.1:port (-1 none, 0 any "
           "free port); returns the port bound (-1 if none).")
      .def("stop_listening", &py_server::stop_listening,
           "Stops the socket front end (answers the requests begun, removes the socket file); idempotent.")
      .def("shutdown", &py_server::shutdown,
           "Refuses new requests, answers those submitted, stops the loop (idempotent).");
}

}  // namespace gsearch_python
