// server_bench, part "socket": the Unix socket front end's added cost. A socket_server
// (server_socket.hpp) in this process serves a server of the run's device over a socket in
// /tmp; 1 and 16 threads, each with its own socket_client (one connection), make one-query
// requests and time each round trip, as the latency part does: through the connection's
// shared-memory ring (impl "ring", socket_client's default) and over the socket alone (impl
// "socket", the client asking for no ring), one after the other in the same run. Then the same
// front ends answering with std::upper_bound in their worker (impls "transport-ring",
// "transport-socket"; one connection): the transport's own cost, no server<T> between. Beside each, the same requests
// in-process ("in-process": server<T>::search with the query in pageable host memory, where the
// socket front end's connection buffer puts it too), so that the difference is the socket's: two
// messages through the kernel and the front end's thread. Each --socket-spin-us value gets its
// own front end (socket_options::spin; the clients spin their default when it is not 0): the
// wake-ups that spinning saves. K: the smallest of --log-keys, the first key type. Rows and
// JSON: server_bench.cpp's; the socket rows (impl "socket") with two fields more, spin_us (the
// front end's spin) and client_spin_us (the clients').

#include <unistd.h>

#include "server_bench.hpp"

#if __has_include("gsearch/server_socket.hpp")
#include "gsearch/server_socket.hpp"
#define SERVER_BENCH_HAS_SOCKET 1
#endif

namespace gsearch::bench::server_bench {

#ifdef SERVER_BENCH_HAS_SOCKET

namespace {

// Round trips of one thread's socket_client: `warmup` untimed, `requests` timed, answers checked.
template <class T>
std::vector<double> socket_round_trips(const std::string& path, std::chrono::microseconds spin, bool ring,
                                       const inputs<T>& in, int t, int64_t warmup, int64_t requests,
                                       std::atomic<bool>& ok) {
  socket_client c(path, std::chrono::milliseconds(0), spin, ring);
  std::vector<double> ns;
  ns.reserve(static_cast<size_t>(requests));
  int64_t out = -1;
  for (int64_t r = 0; r < warmup + requests; ++r) {
    const size_t i = size_t((int64_t(t) * (warmup + requests) + r) % int64_t(in.pool.size()));
    const auto t0 = clock_type::now();
    c.search(span<const T>(&in.pool[i], 1), side::right, span<int64_t>(&out, 1));
    const auto t1 = clock_type::now();
    if (out != in.expected[i] || (c.ring_capacity() > 0) != ring) ok = false;
    if (r >= warmup) ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  return ns;
}

// The rows of one front end at `path` (spin `spin_us`): 1 and 16 connections through the ring
// and over the socket alone; `what` names what serves the requests.
template <class T>
void front_end_rows(runner& b, const std::string& path, int spin_us, const inputs<T>& in, mem m,
                    const std::string& impl_prefix, const std::string& what, std::vector<int> connections) {
  const args& a = b.a;
  const auto client_spin = spin_us > 0 ? default_client_spin : std::chrono::microseconds(0);
  for (const bool ring : {true, false})
    for (const int n : connections) {
      json r = b.row("socket", impl_prefix + (ring ? "ring" : "socket"),
                     std::string("socket_client::search of 1 query ") +
                         (ring ? "through the Unix socket's ring" : "over a Unix socket") + ", " + what,
                     type_name<T>(), in.k);
      r["memory"] = mem_name(m);
      r["threads"] = n;
      r["batch"] = 1;
      r["blocks"] = a.blocks;
      r["spin_us"] = spin_us;
      r["client_spin_us"] = client_spin.count();
      try {
        std::atomic<bool> ok{true};
        std::vector<std::vector<double>> ns(static_cast<size_t>(n));
        const double secs = run_threads(n, [&](int t) {
          ns[size_t(t)] = socket_round_trips(path, client_spin, ring, in, t, a.warmup_requests, a.requests, ok);
        });
        std::vector<double> all;
        for (const auto& v : ns) all.insert(all.end(), v.begin(), v.end());
        runner::set_latency(r, summarize_ns(std::move(all)));
        r["requests_per_s"] = double(n) * double(a.warmup_requests + a.requests) / secs;  // warm-up included
        r["queries_per_s"] = r["requests_per_s"];
        r["verified"] = ok.load();
        b.add(r);
      } catch (const std::exception& e) {
        b.error(r, e);
      }
    }
}

template <class T>
void socket_case(runner& b) {
  const args& a = b.a;
  const int64_t k = int64_t(1) << *std::min_element(a.log_keys.begin(), a.log_keys.end());
  const inputs<T> in = make_inputs<T>(k, int64_t(1) << 18, a.seed);
  std::optional<device_vector<T>> keys_dev;
  if (a.on_cuda()) keys_dev.emplace(span<const T>(in.keys));
  const mem m = a.on_cuda() ? mem::pageable : mem::host;
  buffer_set bufs;  // before the server
  bufs.emplace_back(m, thread_buffers(m, 16, 1, sizeof(T)));
  const auto s = b.start_server(in, keys_dev ? keys_dev->data() : nullptr, b.base_options());
  json base = b.row("socket", "in-process", "server<T>::search, pageable host memory", type_name<T>(), k);
  base["blocks"] = a.blocks;
  b.latency_part(*s, in, bufs, base, {1, 16}, {m});
  const std::string path = "/tmp/gsearch_server_bench_" + std::to_string(::getpid()) + ".sock";
  // A front end for each spin: both ends blocking at once, or spinning first.
  for (const int spin_us : a.socket_spin_us) {
    socket_options o;
    o.path = path;
    o.spin = std::chrono::microseconds(spin_us);
    socket_server front(*s, o);
    front_end_rows(b, path, spin_us, in, m, "", "the server<T>", {1, 16});
    front.stop();
  }
  // The transport alone: the front end's worker answers with std::upper_bound itself (no
  // server<T>, no device), one connection, so that the rows are what the ring and the socket cost.
  for (const int spin_us : a.socket_spin_us) {
    socket_options o;
    o.path = path;
    o.spin = std::chrono::microseconds(spin_us);
    socket_server front(
        dtype_of<T>(), k,
        [&](const void* q, int64_t n, side, int64_t* out) {
          const T* v = static_cast<const T*>(q);
          for (int64_t i = 0; i < n; ++i) out[i] = std::upper_bound(in.keys.begin(), in.keys.end(), v[i]) - in.keys.begin();
        },
        o);
    front_end_rows(b, path, spin_us, in, mem::host, "transport-", "std::upper_bound in the front end's worker", {1});
    front.stop();
  }
}

}  // namespace

void runner::socket_part() {
  if (a.key_types[0] == "float32")
    socket_case<float>(*this);
  else
    socket_case<int32_t>(*this);
}

#else

void runner::socket_part() {
  skip(row("socket", "socket", "Unix socket round trip", nullptr, 0),
       "this build has no socket front end (include/gsearch/server_socket.hpp)");
}

#endif

}  // namespace gsearch::bench::server_bench
