// server_bench, part "interference" (the GPU only): what other work keeps of its speed beside the
// server. A reference workload on a stream of its own (a gsearch::search of 2^26 queries over
// 2^14 keys, compute-bound; a 256 MiB device-to-device copy, bandwidth-bound) is timed alone, beside
// an idle server and beside a busy one (16 threads submitting one-query requests), for server
// shares of 1/8, 1/2 and all of the SMs (server_options::blocks). "kept" = alone / beside: 1 is
// no slowdown. A workload that does not finish within 50 times its time alone + 2 s beside the
// server (a server that holds every SM may leave it no room at all) is recorded as starved, and
// the server is stopped so that it can finish. "idle" is timed once the server has been idle for
// longer than its idle_release (its kernel has left the device: server_options::idle_release);
// then the "wake" row: one-query round trips, each after such a pause, which launches the
// kernel again (their p50 beside the latency part's, where the kernel stays). Rows and JSON:
// server_bench.cpp.

#include "server_bench.hpp"

namespace gsearch::bench::server_bench {

namespace {

// One-query requests from n threads until stop(): the busy server.
template <class T>
class background_load {
 public:
  background_load(server<T>& s, const inputs<T>& in, thread_buffers& b, int n) : start_(clock_type::now()) {
    for (int t = 0; t < n; ++t)
      pool_.emplace_back([&, t] {
        T* q = b.queries[size_t(t)].as<T>();
        int64_t* out = b.out[size_t(t)].as<int64_t>();
        int64_t i = t * 7919;
        for (; !stop_.load(std::memory_order_relaxed); ++i) {
          const size_t j = size_t(i % int64_t(in.pool.size()));
          *q = in.pool[j];
          s.search(span<const T>(q, 1), side::right, span<int64_t>(out, 1));
          if (*out != in.expected[j]) wrong_ = true;
          done_.fetch_add(1, std::memory_order_relaxed);
        }
      });
  }
  ~background_load() { stop(); }
  /// Stops the threads; returns their requests per second.
  double stop() {
    stop_ = true;
    for (auto& th : pool_)
      if (th.joinable()) th.join();
    return double(done_.load()) / std::chrono::duration<double>(clock_type::now() - start_).count();
  }
  bool wrong() const { return wrong_; }

 private:
  std::atomic<bool> stop_{false}, wrong_{false};
  std::atomic<int64_t> done_{0};
  clock_type::time_point start_;
  std::vector<std::thread> pool_;
};

// A reference workload: its work on a stream, and how long it took alone.
struct workload {
  std::string name, call;
  std::function<void(CUstream_st*)> enqueue;
  double alone_ms = 0;
};

}  // namespace

template <class T>
void runner::interference_part() {
  if (!a.on_cuda()) return;
  const int lk = a.interference_log_keys > 0 ? a.interference_log_keys : *std::min_element(a.log_keys.begin(), a.log_keys.end());
  const inputs<T> in = make_inputs<T>(int64_t(1) << lk, int64_t(1) << 16, a.seed);
  const device_vector<T> keys_dev(span<const T>(in.keys));
  // The workloads' data (allocated now: nothing is freed while a server runs).
  const int64_t wq = a.quick ? int64_t(1) << 22 : int64_t(1) << 26, copy_bytes = a.quick ? int64_t(1) << 24 : int64_t(1) << 28;
  const inputs<T> w = make_inputs<T>(int64_t(1) << 14, wq, a.seed + 2);
  const device_vector<T> w_keys(span<const T>(w.keys)), w_queries(span<const T>(w.pool));
  device_vector<int32_t> w_out(wq);
  device_vector<unsigned char> src(copy_bytes), dst(copy_bytes);
  std::vector<workload> loads;
  for (const std::string& name : a.workloads) {
    if (name == "search")
      loads.push_back({name, "gsearch::search(cuda.on(s)) of " + n_text(wq) + " queries, " + n_text(w.k) + " keys, max_temp_bytes 0",
                       [&](CUstream_st* s) {
                         search_options o;
                         o.max_temp_bytes = 0;  // no allocation beside the server
                         search(cuda.on(s), side::right, span<const T>(w_keys), span<const T>(w_queries),
                                span<int32_t>(w_out), o);
                       }});
    else
      loads.push_back({name, "cudaMemcpyAsync device to device, " + n_text(copy_bytes) + " bytes",
                       [&](CUstream_st* s) { dev::copy_async(s, dst.data(), src.data(), size_t(copy_bytes)); }});
  }
  const int busy_threads = 16;
  buffer_set bufs;
  bufs.emplace_back(mem::pinned, thread_buffers(mem::pinned, busy_threads, 1, sizeof(T)));
  dev::stream ws;
  dev::timer tm;
  // The median of --repeat runs after --warmup; nullopt when one run does not finish in time.
  auto time_runs = [&](const workload& l, double limit_ms) -> std::optional<summary> {
    std::vector<double> ms;
    for (int i = 0; i < a.warmup + a.repeat; ++i) {
      tm.start(ws.get());
      l.enqueue(ws.get());
      tm.stop(ws.get());
      const auto t0 = clock_type::now();
      while (!tm.done())
        if (std::chrono::duration<double, std::milli>(clock_type::now() - t0).count() > limit_ms) return std::nullopt;
      if (i >= a.warmup) ms.push_back(tm.ms());
    }
    return summarize(ms);
  };
  auto base = [&](const workload& l, const char* condition, int blocks) {
    json r = row("interference", "workload", l.call, type_name<T>(), in.k);
    r["workload"] = l.name;
    r["condition"] = condition;
    r["memory"] = "pinned";
    if (blocks > 0) r["blocks"] = blocks;
    return r;
  };
  for (workload& l : loads) {
    json r = base(l, "alone", 0);
    try {
      const auto s = time_runs(l, 60000);
      if (!s) throw std::runtime_error("the workload did not finish in 60 s alone");
      l.alone_ms = s->median;
      r["ms"] = s->median;
      r["runs"] = a.repeat;
      r["kept"] = 1.0;
      r["verified"] = true;
      add(r);
    } catch (const std::exception& e) {
      error(r, e);
    }
  }
  const server_options defaults = base_options();
  // Long enough for the kernel to leave (its polling turns cold after 0.2 ms, then idle_release).
  const auto past_release = std::chrono::duration_cast<clock_type::duration>(defaults.idle_release) * 3 +
                            std::chrono::milliseconds(2);
  for (const std::string& share : a.shares) {
    const int blocks = share == "all" ? sms : std::max(1, share == "1/2" ? sms / 2 : sms / 8);
    server_options o = defaults;
    o.blocks = blocks;
    std::unique_ptr<server<T>> s;
    try {
      s = start_server(in, keys_dev.data(), o);
    } catch (const std::exception& e) {
      json r = row("interference", "server", "server start", type_name<T>(), in.k);
      r["blocks"] = blocks;
      error(r, e);
      continue;
    }
    for (const workload& l : loads) {
      if (l.alone_ms <= 0) continue;
      for (const char* condition : {"idle", "busy"}) {
        json r = base(l, condition, blocks);
        try {
          std::optional<background_load<T>> load;
          if (std::string(condition) == "busy") load.emplace(*s, in, buffers_of(bufs, mem::pinned), busy_threads);
          else if (o.idle_release.count() > 0) std::this_thread::sleep_for(past_release);
          if (o.idle_release.count() > 0) r["idle_release_us"] = double(o.idle_release.count()) / 1e3;
          const auto t = time_runs(l, 50 * l.alone_ms + 2000);
          if (load) {
            r["requests_per_s"] = load->stop();
            r["threads"] = busy_threads;
            r["verified"] = !load->wrong();
          } else {
            r["verified"] = true;
          }
          if (!t) {
            r["note"] = "starved: not finished within 50x its time alone + 2 s beside the server; server stopped";
            r["kept"] = 0.0;
            load.reset();
            s.reset();  // frees the SMs, so that the workload can finish
            ws.sync();
            add(r);
            break;
          }
          r["ms"] = t->median;
          r["runs"] = a.repeat;
          r["kept"] = l.alone_ms / t->median;
          add(r);
        } catch (const std::exception& e) {
          error(r, e);
        }
      }
      if (!s) break;
    }
    if (s && o.idle_release.count() > 0) {  // one query after each pause: the kernel launched again
      json r = row("interference", "wake", "server<T>::search of 1 query after " +
                   std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(past_release).count()) +
                   " us idle", type_name<T>(), in.k);
      r["blocks"] = blocks;
      r["memory"] = "pinned";
      r["threads"] = 1;
      r["idle_release_us"] = double(o.idle_release.count()) / 1e3;
      try {
        thread_buffers& b = buffers_of(bufs, mem::pinned);
        T* q = b.queries[0].as<T>();
        int64_t* out = b.out[0].as<int64_t>();
        const server_stats before = s->stats();
        std::vector<double> ns;
        bool right = true;
        for (int i = 0; i < 50; ++i) {
          std::this_thread::sleep_for(past_release);
          const size_t j = size_t(i * 7919) % in.pool.size();
          *q = in.pool[j];
          const auto t0 = clock_type::now();
          s->search(span<const T>(q, 1), side::right, span<int64_t>(out, 1));
          ns.push_back(double(std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - t0).count()));
          right = right && *out == in.expected[j];
        }
        set_latency(r, summarize_ns(ns));
        const server_stats after = s->stats();
        r["launches"] = after.kernel_launches - before.kernel_launches;
        r["host_submit_us"] = 1e-3 * double(after.host_submit_ns - before.host_submit_ns) / double(ns.size());
        if (after.kernel_launches > before.kernel_launches)
          r["note"] = "the host's launch call " +
                      std::to_string(1e-3 * double(after.kernel_relaunch_ns - before.kernel_relaunch_ns) /
                                     double(after.kernel_launches - before.kernel_launches)) + " us (mean)";
        r["verified"] = right;
        add(r);
      } catch (const std::exception& e) {
        error(r, e);
      }
    }
    s.reset();
  }
}
template void runner::interference_part<float>();
template void runner::interference_part<int32_t>();

}  // namespace gsearch::bench::server_bench
