// server_bench, parts "throughput" and "batcher": requests of 1 ... 2^20 queries from 1 and 16
// threads for fixed windows (requests/s, queries/s), the one-shot gsearch::search rate on the
// same data (the "90% of the one-shot rate" target's reference), and the dynamic batcher's
// knobs (max_delay, preferred_batch_queries) at a few settings. Rows and JSON: server_bench.cpp.

#include <cmath>

#include "server_bench.hpp"

namespace gsearch::bench::server_bench {

namespace {

// Thread t's batch of b queries: the pool from t * b on (wrapping), so that threads differ.
template <class T>
int64_t batch_start(int t, int64_t b, const inputs<T>& in) {
  return (int64_t(t) * b) % int64_t(in.pool.size());
}

template <class T>
std::vector<T> batch_queries(const inputs<T>& in, int64_t start, int64_t b, std::vector<int64_t>* expected = nullptr) {
  std::vector<T> q(static_cast<size_t>(b));
  if (expected) expected->resize(static_cast<size_t>(b));
  for (int64_t j = 0; j < b; ++j) {
    const size_t i = size_t((start + j) % int64_t(in.pool.size()));
    q[size_t(j)] = in.pool[i];
    if (expected) (*expected)[size_t(j)] = in.expected[i];
  }
  return q;
}

// Whether thread t's output (b results in `out`) is right for its batch.
template <class T>
bool batch_ok(const inputs<T>& in, const buffer& out, int t, int64_t b) {
  std::vector<int64_t> expected, got(static_cast<size_t>(b));
  (void)batch_queries(in, batch_start(t, b, in), b, &expected);
  out.download(got.data(), size_t(b) * sizeof(int64_t));
  return got == expected;
}

}  // namespace

// ---- the one-shot search ----------------------------------------------------------------------

template <class T>
void runner::oneshot_part(const inputs<T>& in, const T* keys_dev) {
  const mem m = a.on_cuda() ? mem::device : mem::host;
  for (const int64_t b : a.batches) {
    json r = row("throughput", "oneshot", a.on_cuda() ? "gsearch::search(cuda) back to back, CUDA events"
                                                      : "gsearch::search(cpu), steady clock",
                 type_name<T>(), in.k);
    r["memory"] = mem_name(m);
    r["threads"] = 1;
    r["batch"] = b;
    try {
      std::vector<int64_t> expected;
      const std::vector<T> hq = batch_queries(in, 0, b, &expected);
      buffer q(m, size_t(b) * sizeof(T)), out(m, size_t(b) * sizeof(int64_t));
      q.upload(hq.data(), hq.size() * sizeof(T));
      const span<const T> keys = a.on_cuda() ? span<const T>(keys_dev, in.k) : span<const T>(in.keys);
      const span<const T> qs(q.as<T>(), b);
      const span<int64_t> os(out.as<int64_t>(), b);
      auto call = [&] {
        if (a.on_cuda()) search(cuda, side::right, keys, qs, os);
        else search(cpu, side::right, keys, qs, os);
      };
      // Back-to-back calls filling about a window, so that launch gaps count as the server's do.
      auto timed = [&](int64_t calls) {
        auto many = [&] {
          for (int64_t c = 0; c < calls; ++c) call();
        };
        return a.on_cuda() ? elapsed_ms(cuda, many) : bench::wall_ms(many);
      };
      const double one = std::max(timed(1), 1e-4);
      const int64_t calls = std::clamp<int64_t>(int64_t(a.window_ms / one), 1, 1000000);
      std::vector<double> rates;
      for (int w = 0; w < a.warmup + a.repeat; ++w) {
        const double ms = timed(calls);
        if (w >= a.warmup) rates.push_back(double(calls) * double(b) / (ms * 1e-3));
      }
      const summary s = summarize(rates);
      r["queries_per_s"] = s.median;
      r["requests_per_s"] = s.median / double(b);
      r["rate_min"] = s.min;
      r["rate_max"] = s.max;
      r["runs"] = rates.size();
      r["requests"] = calls;
      r["note"] = "algo " + std::string(to_string(a.on_cuda() ? resolve_algorithm(cuda, algorithm::auto_, int(sizeof(T)), in.k, b)
                                                                : resolve_algorithm(cpu, algorithm::auto_, int(sizeof(T)), in.k, b)));
      std::vector<int64_t> got(static_cast<size_t>(b));
      out.download(got.data(), got.size() * sizeof(int64_t));
      r["verified"] = got == expected;
      add(r);
    } catch (const std::exception& e) {
      error(r, e);
    }
  }
}
template void runner::oneshot_part<float>(const inputs<float>&, const float*);
template void runner::oneshot_part<int32_t>(const inputs<int32_t>&, const int32_t*);

// ---- the server's throughput ------------------------------------------------------------------

template <class T>
void runner::throughput_part(server<T>& s, const inputs<T>& in, buffer_set& bufs, const json& base,
                             const std::vector<int64_t>& batches, const std::vector<int>& threads,
                             const std::vector<mem>& kinds) {
  for (const mem m : kinds)
    for (const int64_t b : batches)
      for (const int n : threads) {
        json r = base;
        r["memory"] = mem_name(m);
        r["threads"] = n;
        r["batch"] = b;
        try {
          thread_buffers& tb = buffers_of(bufs, m);
          if (tb.capacity < b) throw std::logic_error("server_bench: buffers too small");
          for (int t = 0; t < n; ++t) {
            const std::vector<T> q = batch_queries(in, batch_start(t, b, in), b);
            tb.queries[size_t(t)].upload(q.data(), q.size() * sizeof(T));
          }
          std::vector<double> rates;
          std::vector<int64_t> counts(static_cast<size_t>(n));
          const server_stats before = s.stats();
          int64_t total = 0;
          for (int w = 0; w < a.warmup + a.repeat; ++w) {
            std::atomic<bool> stop{false};
            std::fill(counts.begin(), counts.end(), 0);
            const double secs = run_threads(
                n,
                [&](int t) {
                  const span<const T> q(tb.queries[size_t(t)].as<T>(), b);
                  const span<int64_t> o(tb.out[size_t(t)].as<int64_t>(), b);
                  int64_t c = 0;
                  for (; !stop.load(std::memory_order_relaxed); ++c) s.search(q, side::right, o);
                  counts[size_t(t)] = c;
                },
                [&] {
                  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(a.window_ms));
                  stop = true;
                });
            int64_t done = 0;
            for (const int64_t c : counts) done += c;
            if (w >= a.warmup) rates.push_back(double(done) / secs), total += done;
          }
          const server_stats after = s.stats();
          const summary sr = summarize(rates);
          r["requests"] = total;
          r["requests_per_s"] = sr.median;
          r["queries_per_s"] = sr.median * double(b);
          r["rate_min"] = sr.min * double(b);
          r["rate_max"] = sr.max * double(b);
          r["runs"] = rates.size();
          const int64_t nb = after.batches - before.batches;
          if (nb > 0) r["mean_batch_requests"] = double(after.requests - before.requests) / double(nb);
          bool ok = true;
          for (int t = 0; t < n; ++t) ok = ok && batch_ok(in, tb.out[size_t(t)], t, b);
          r["verified"] = ok;
          add(r);
        } catch (const std::exception& e) {
          error(r, e);
        }
      }
}
template void runner::throughput_part<float>(server<float>&, const inputs<float>&, buffer_set&, const json&,
                                             const std::vector<int64_t>&, const std::vector<int>&,
                                             const std::vector<mem>&);
template void runner::throughput_part<int32_t>(server<int32_t>&, const inputs<int32_t>&, buffer_set&, const json&,
                                               const std::vector<int64_t>&, const std::vector<int>&,
                                               const std::vector<mem>&);

// ---- the dynamic batcher ----------------------------------------------------------------------

template <class T>
void runner::batcher_part(const inputs<T>& in, const T* keys_dev) {
  const mem m = a.on_cuda() ? mem::pinned : mem::host;
  const int busy = *std::max_element(a.throughput_threads.begin(), a.throughput_threads.end());
  const int64_t b = 64;
  buffer_set bufs;  // before the servers, freed after them
  bufs.emplace_back(m, thread_buffers(m, std::max(busy, 16), b, sizeof(T)));
  for (const std::string& setting : a.batcher) {
    const auto colon = setting.find(':');
    server_options o = base_options();
    o.max_delay = std::chrono::microseconds(std::stoll(setting.substr(0, colon)));
    o.preferred_batch_queries = std::stoll(setting.substr(colon + 1));
    json base = row("batcher", "server", "server<T>::search", type_name<T>(), in.k);
    base["blocks"] = a.blocks;
    base["max_delay_us"] = o.max_delay.count();
    base["preferred_batch_queries"] = o.preferred_batch_queries;
    try {
      const auto s = start_server(in, keys_dev, o);
      latency_part(*s, in, bufs, base, {1, 16}, {m});
      throughput_part(*s, in, bufs, base, {b}, {busy}, {m});
    } catch (const std::exception& e) {
      error(base, e);
    }
  }
}
template void runner::batcher_part<float>(const inputs<float>&, const float*);
template void runner::batcher_part<int32_t>(const inputs<int32_t>&, const int32_t*);

}  // namespace gsearch::bench::server_bench
