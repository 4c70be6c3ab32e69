// server_bench, per key type and K: the case itself (inputs, buffers, the order of the parts:
// everything that may allocate, free or wait for the device runs before the server starts), the
// latency part (one-query round trips from 1, 4 and 16 threads) and the one-query peers.
// Rows and JSON: server_bench.cpp.

#include <cmath>

#include "server_bench.hpp"

namespace gsearch::bench::server_bench {

namespace {

// Where request r of thread t (of `threads`, each making `per_thread` requests) takes its query
// from the pool: every thread its own stretch, so that no two threads ask the same thing.
int64_t pool_index(int t, int64_t r, int64_t per_thread, int64_t pool_n) { return (int64_t(t) * per_thread + r) % pool_n; }

// One thread's round trips: `warmup` untimed, then `requests` timed one-query searches, each
// query written into the thread's buffer first (as a caller with a fresh value would) and each
// answer checked. Appends the timed round trips (ns) and the first and last timed instants.
template <class T>
struct one_query_thread {
  server<T>& s;
  const inputs<T>& in;
  thread_buffers& b;
  int64_t warmup, requests;
  std::atomic<bool>& ok;

  void operator()(int t, std::vector<double>& ns, clock_type::time_point& first, clock_type::time_point& last) const {
    T* q = b.queries[size_t(t)].as<T>();
    int64_t* out = b.out[size_t(t)].as<int64_t>();
    ns.reserve(static_cast<size_t>(requests));
    bool good = true;
    for (int64_t r = 0; r < warmup + requests; ++r) {
      const int64_t i = pool_index(t, r, warmup + requests, int64_t(in.pool.size()));
      *q = in.pool[size_t(i)];
      const auto t0 = clock_type::now();
      s.search(span<const T>(q, 1), side::right, span<int64_t>(out, 1));
      const auto t1 = clock_type::now();
      good = good && *out == in.expected[size_t(i)];
      if (r < warmup) continue;
      if (r == warmup) first = t0;
      last = t1;
      ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
    if (!good) ok = false;
  }
};

// Round trips of a one-query call on the host (the CPU server's peers), timed like the server's.
template <class F>
std::vector<double> host_round_trips(int64_t warmup, int64_t requests, F&& call) {
  std::vector<double> ns;
  ns.reserve(static_cast<size_t>(requests));
  for (int64_t r = 0; r < warmup + requests; ++r) {
    const auto t0 = clock_type::now();
    call(r);
    const auto t1 = clock_type::now();
    if (r >= warmup) ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  return ns;
}

}  // namespace

// A round trip's timeline (issue 43), means of the requests between two statistics: the host's
// parts (the call to the publication, the wait, the copy out) and, on the GPU, the kernel's part
// of batches of one request (the poll that read it to the search begun; to the answer stored).
static void set_timeline(json& r, const server_stats& before, const server_stats& after) {
  const double requests = double(after.requests - before.requests);
  if (requests > 0) {
    r["host_submit_us"] = double(after.host_submit_ns - before.host_submit_ns) * 1e-3 / requests;
    r["host_wait_us"] = double(after.host_wait_ns - before.host_wait_ns) * 1e-3 / requests;
    r["host_finish_us"] = double(after.host_finish_ns - before.host_finish_ns) * 1e-3 / requests;
  }
  const double timed = double(after.kernel_timed_batches - before.kernel_timed_batches);
  if (timed > 0 && after.kernel_clock_khz > 0) {
    const double us_per_cycle = 1e3 / double(after.kernel_clock_khz);
    r["kernel_take_us"] = double(after.kernel_take_cycles - before.kernel_take_cycles) * us_per_cycle / timed;
    r["kernel_serve_us"] = double(after.kernel_serve_cycles - before.kernel_serve_cycles) * us_per_cycle / timed;
  }
}

// ---- the case ---------------------------------------------------------------------------------

template <class T>
void runner::keys_case(int64_t k) {
  const auto t0 = clock_type::now();
  const inputs<T> in = make_inputs<T>(k, std::max<int64_t>(a.pool, 1), a.seed);
  report["inputs"].push_back({{"dtype", type_name<T>()}, {"keys", k}, {"pool", in.pool.size()},
                              {"keys_checksum", std::to_string(host::checksum(in.keys.data(), in.keys.size() * sizeof(T)))},
                              {"pool_checksum", std::to_string(host::checksum(in.pool.data(), in.pool.size() * sizeof(T)))}});
  std::printf("-- %s keys, K = %s (inputs: %.1f s)\n", type_name<T>(), n_text(k).c_str(),
              std::chrono::duration<double>(clock_type::now() - t0).count());
  std::fflush(stdout);
  std::optional<device_vector<T>> keys_dev;
  if (a.on_cuda()) keys_dev.emplace(span<const T>(in.keys));
  const T* kd = keys_dev ? keys_dev->data() : nullptr;
  // No server yet: the peers and the one-shot search may allocate and wait for the device.
  if (a.has("peers")) peers_part(in, kd);
  if (a.has("throughput")) oneshot_part(in, kd);
  if (a.has("latency") || a.has("throughput")) {
    // The buffers first, the server after: it is destroyed first (see buffer).
    const int most = std::max(*std::max_element(a.threads.begin(), a.threads.end()),
                              *std::max_element(a.throughput_threads.begin(), a.throughput_threads.end()));
    const int64_t biggest = *std::max_element(a.batches.begin(), a.batches.end());
    buffer_set bufs;
    for (const mem m : latency_memory()) bufs.emplace_back(m, thread_buffers(m, most, 1, sizeof(T)));
    if (a.has("throughput"))
      for (const mem m : throughput_memory()) {
        auto it = std::find_if(bufs.begin(), bufs.end(), [&](const auto& x) { return x.first == m; });
        if (it != bufs.end()) bufs.erase(it);
        bufs.emplace_back(m, thread_buffers(m, most, biggest, sizeof(T)));
      }
    const auto s = start_server(in, kd, base_options());
    json base = row("latency", "server", "server<T>::search", type_name<T>(), k);
    base["blocks"] = a.blocks;
    if (a.has("latency")) latency_part(*s, in, bufs, base, a.threads, latency_memory());
    base["part"] = "throughput";
    if (a.has("throughput")) throughput_part(*s, in, bufs, base, a.batches, a.throughput_threads, throughput_memory());
  }
  if (a.has("batcher") && k == (int64_t(1) << *std::min_element(a.log_keys.begin(), a.log_keys.end())))
    batcher_part(in, kd);
}
template void runner::keys_case<float>(int64_t);
template void runner::keys_case<int32_t>(int64_t);

// ---- latency ----------------------------------------------------------------------------------

template <class T>
void runner::latency_part(server<T>& s, const inputs<T>& in, buffer_set& bufs, const json& base,
                          const std::vector<int>& threads, const std::vector<mem>& kinds) {
  for (const mem m : kinds)
    for (const int n : threads) {
      json r = base;
      r["memory"] = mem_name(m);
      r["threads"] = n;
      r["batch"] = 1;
      try {
        std::atomic<bool> ok{true};
        std::vector<std::vector<double>> ns(static_cast<size_t>(n));
        std::vector<clock_type::time_point> first(static_cast<size_t>(n)), last(static_cast<size_t>(n));
        const one_query_thread<T> work{s, in, buffers_of(bufs, m), a.warmup_requests, a.requests, ok};
        const server_stats before = s.stats();
        run_threads(n, [&](int t) { work(t, ns[size_t(t)], first[size_t(t)], last[size_t(t)]); });
        const server_stats after = s.stats();
        std::vector<double> all;
        for (const auto& v : ns) all.insert(all.end(), v.begin(), v.end());
        const double secs =
            std::chrono::duration<double>(*std::max_element(last.begin(), last.end()) -
                                          *std::min_element(first.begin(), first.end())).count();
        set_latency(r, summarize_ns(std::move(all)));
        r["requests_per_s"] = double(r["requests"].get<int64_t>()) / secs;
        r["queries_per_s"] = r["requests_per_s"];
        const int64_t batches = after.batches - before.batches;
        if (batches > 0) r["mean_batch_requests"] = double(after.requests - before.requests) / double(batches);
        set_timeline(r, before, after);
        r["verified"] = ok.load();
        add(r);
      } catch (const std::exception& e) {
        error(r, e);
      }
    }
}
template void runner::latency_part<float>(server<float>&, const inputs<float>&, buffer_set&, const json&,
                                          const std::vector<int>&, const std::vector<mem>&);
template void runner::latency_part<int32_t>(server<int32_t>&, const inputs<int32_t>&, buffer_set&, const json&,
                                            const std::vector<int>&, const std::vector<mem>&);

// ---- the peers --------------------------------------------------------------------------------

template <class T>
void runner::peers_part(const inputs<T>& in, const T* keys_dev) {
  const int64_t warm = a.warmup_requests, n = a.requests;
  auto record = [&](json r, const std::function<std::vector<double>(bool&, std::string&)>& measure) {
    try {
      bool ok = true;
      std::string note;
      std::vector<double> ns = measure(ok, note);
      if (ns.empty()) return skip(r, note);
      set_latency(r, summarize_ns(std::move(ns)));
      if (!note.empty()) r["note"] = note;
      r["verified"] = ok;
      add(r);
    } catch (const std::exception& e) {
      error(r, e);
    }
  };
  const char* t = type_name<T>();
  if (!a.on_cuda()) {
    // The CPU server's peers: the search itself on the calling thread, no server in between.
    json r = row("peers", "std::upper_bound", "std::upper_bound of 1 query on the calling thread", t, in.k);
    r["memory"] = "host";
    record(r, [&](bool& ok, std::string&) {
      const auto ns = host_round_trips(warm, n, [&](int64_t i) {
        const size_t j = size_t(i % int64_t(in.pool.size()));
        const auto pos = std::upper_bound(in.keys.begin(), in.keys.end(), in.pool[j],
                                          [](T x, T y) { return key_less(x, y); });
        ok = ok && pos - in.keys.begin() == in.expected[j];
      });
      return ns;
    });
    r = row("peers", "gsearch::search", "gsearch::search(cpu) of 1 query", t, in.k);
    r["memory"] = "host";
    record(r, [&](bool& ok, std::string&) {
      int64_t out = -1;
      return host_round_trips(warm, n, [&](int64_t i) {
        const size_t j = size_t(i % int64_t(in.pool.size()));
        search(cpu, side::right, span<const T>(in.keys), span<const T>(&in.pool[j], 1), span<int64_t>(&out, 1));
        ok = ok && out == in.expected[j];
      });
    });
    return;
  }
  const dev::peer_inputs<T> pin{keys_dev, in.k, in.pool.data(), in.expected.data(), int64_t(in.pool.size())};
  for (const dev::peer p : {dev::peer::launch, dev::peer::copy_launch, dev::peer::graph, dev::peer::thrust}) {
    json r = row("peers", dev::peer_name(p), dev::peer_call(p), t, in.k);
    r["memory"] = p == dev::peer::copy_launch || p == dev::peer::graph ? "pinned" : "device";
    record(r, [&](bool& ok, std::string& note) { return dev::one_query_peer<T>(p, pin, n, warm, ok, note); });
  }
  // The floor does not depend on the keys: once per run.
  bool floor_done = false;
  for (const json& x : report["results"]) floor_done = floor_done || x["impl"] == "pingpong";
  if (!floor_done) {
    json r = row("peers", "pingpong", "mapped pinned memory, 1 polling thread, cuda::atomic_ref system scope", nullptr, 0);
    r["memory"] = "pinned";
    record(r, [&](bool& ok, std::string&) { return dev::pingpong(n, warm, ok); });
  }
}
template void runner::peers_part<float>(const inputs<float>&, const float*);
template void runner::peers_part<int32_t>(const inputs<int32_t>&, const int32_t*);

}  // namespace gsearch::bench::server_bench
