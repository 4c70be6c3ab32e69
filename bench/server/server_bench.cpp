// server_bench: the benchmark of gsearch's search server (issue 22, "Benchmarks"): round trips
// of one-query requests, throughput by batch size, the dynamic batcher, what other work keeps of
// its speed beside the server, and the Unix socket's added cost, with the one-query peers (a
// kernel launch + sync, thrust, a CUDA graph, the bare mapped-memory ping-pong) in the same run.
// Writes a table to stdout and, with --json, one JSON file.
//
//   server_bench [--json FILE] [--quick] [--device cuda|cpu]
//                [--parts latency,peers,throughput,batcher,interference,socket]
//                [--key-types float32,int32] [--log-keys 20,27] [--threads 1,4,16]
//                [--requests 20000] [--warmup-requests 1000] [--memory pinned,pageable]
//                [--batches 1,64,4096,32768,1048576] [--throughput-threads 1,16]
//                [--throughput-memory pinned,device] [--window-ms 300] [--blocks 0] [--idle-release-us N]
//                [--batcher 0:0,20:4096,200:65536] [--shares 1/8,1/2,all]
//                [--workloads search,copy] [--interference-log-keys 20] [--socket-spin-us 0,50]
//                [--pool 2^22]
//                [--repeat 5] [--warmup 1] [--seed 1]
//
// Parts, for each key type and K = 2^x of --log-keys (interference and socket: once):
//   latency      one-query requests (server<T>::search, side right) from each of --threads
//                threads at once, each thread timing each round trip on the steady clock:
//                --warmup-requests untimed, then --requests timed per thread; p50, p90, p99,
//                p99.9, max, mean (us) over all threads' round trips; queries and output in
//                --memory (cuda: pinned = page-locked host memory, read and written in place by
//                the kernel, the realistic one-query case; pageable: through the server's
//                staging; cpu: host).
//   peers        the same round trips, one thread, no server: cuda: gsearch::search of one
//                device-resident query + stream sync ("launch"), the pinned query copied in and
//                the answer out around it ("copy+launch") and that captured as a CUDA graph
//                ("graph"), thrust::upper_bound of one device query + sync ("thrust"), and the
//                bare ping-pong through mapped pinned memory with a polling kernel ("pingpong",
//                once: it has no keys); cpu: std::upper_bound and gsearch::search(cpu) of one
//                query on the calling thread. torch.searchsorted: server_python.py.
//   throughput   requests of --batches queries each from each of --throughput-threads threads,
//                queries and output in --throughput-memory (cuda: pinned, device; cpu: host),
//                for --warmup + --repeat windows of --window-ms (median, min, max over the timed
//                windows); and the one-shot rate ("oneshot": gsearch::search of a batch, back to
//                back on one stream for about a window, CUDA events; cpu: steady clock).
//   batcher      a server per --batcher setting max_delay_us:preferred_batch_queries (the
//                dynamic batcher, Triton's knobs) at the smallest K: latency from 1 and 16
//                threads and the throughput of 64-query requests from 16 threads.
//   interference (cuda) a reference workload on a stream of its own alone, beside an idle and a
//                busy server (16 threads of one-query requests), the server's blocks at each of
//                --shares of the SMs, and one-query round trips that wake a kernel gone from
//                the idle GPU (--idle-release-us): server_interference.cpp's header.
//   socket       the Unix socket front end's round trip, blocking and spinning (--socket-spin-us),
//                through the connection's shared-memory ring and over the socket alone
//                (server_socket.cpp's header).
//
// Inputs (bench/README.md, "Same inputs everywhere"): keys = gen::sorted_keys<T>(K, S), the
// query pool = gen::random_queries_from_keys(keys, K, --pool, S + 1) (uniform random keys);
// thread t's request r asks pool[(t * R + r) mod pool] (R: its requests), thread t's batch of b
// the b from pool[t * b] on. Every answer of the latency part and of the peers is checked against
// the pool's expected answers (std::upper_bound), and each thread's last batch of a throughput
// window. Exit status: 0 ok, 1 bad usage, 2 no CUDA device with --device cuda (nothing
// measured), 3 a check failed or a call threw (the JSON is still written).
//
// While a CUDA server runs nothing here waits for the whole device: the buffers are allocated
// before a server starts and freed after it is destroyed; the peers and the one-shot search run
// before it starts.
//
// JSON ("schema": "gsearch-bench-server/1"): schema, synthetic (false), command, source, device
//   {...} (cpu: backend, threads), versions {gsearch, thrust}, config {...}, inputs [{dtype, keys,
//   pool, keys_checksum, pool_checksum}], results [row...], targets [{name, value, target, unit,
//   higher, met}], skipped [...], failures [...], errors [...], and "fatal" when the run stopped.
// A row (fields that do not apply are null):
//   part        latency | peers | throughput | batcher | interference | socket
//   impl        server | oneshot | launch | copy+launch | graph | thrust | pingpong |
//               std::upper_bound | gsearch::search | workload | socket | ring |
//               transport-socket | transport-ring
//   call        what ran
//   dtype, keys the key type and K (the ping-pong: null)
//   memory      pageable | host | pinned | device: where the queries and results sit
//   threads     submitting threads (interference: the busy server's)
//   batch       queries per request
//   blocks      the server's blocks (0: its default, one per SM)
//   max_delay_us, preferred_batch_queries   the batcher's settings (batcher rows)
//   requests    round trips timed (latency), requests served in the timed windows (throughput)
//   p50_us, p90_us, p99_us, p999_us, max_us, mean_us   round-trip percentiles (nearest rank)
//   requests_per_s, queries_per_s   the median window's rates (latency rows: requests over
//               the wall time of the timed round trips)
//   rate_min, rate_max   the slowest and fastest window, queries/s
//   runs        timed windows (throughput) or runs (interference)
//   mean_batch_requests  requests per batch the server formed (server_stats)
//   host_submit_us, host_wait_us, host_finish_us   latency rows: a round trip's host parts, means
//               (the call to the publication, to the answer seen, to the return: server_stats)
//   kernel_take_us, kernel_serve_us   latency rows on the GPU: the kernel's part of one-request
//               batches, means (the poll that read the request to its search begun, to the answer
//               stored; SM cycles at the device's clock rate)
//   workload, condition  interference: search | copy; alone | idle | busy
//   ms          interference: the workload's median time
//   kept        interference: its time alone / here (1: no slowdown)
//   idle_release_us  interference: the server's server_options::idle_release ("idle" is timed
//               after it; the "wake" row's requests each after a pause longer than it)
//   launches    interference, "wake": the kernel's launches during those requests
//   note        the algorithm gsearch resolved, thrust's version, why a workload starved
//   verified    every answer checked was right
//
// Files: server_bench.hpp (arguments, buffers, inputs, the runner), this file (rows, table,
// targets, main()), server_host.cpp (memory, inputs, percentiles, threads), one per part:
// server_latency.cpp (the case, latency, peers), server_throughput.cpp (throughput, one-shot,
// batcher), server_interference.cpp, server_socket.cpp; server_device.{hpp,cu} the CUDA side
// (server_device_none.cpp without CUDA).

#include <CLI/CLI.hpp>
#include <cmath>

#include "gsearch/server_socket.hpp"  // socket_options: the default spin the target is read at
#include "server_bench.hpp"

namespace gsearch::bench::server_bench {

runner::runner(args a_) : a(std::move(a_)) {
  if (a.on_cuda()) sms = cuda_device_properties().sms;
}

// ---- the rows and the table -------------------------------------------------------------------

json runner::row(const char* part, const std::string& impl, const std::string& call, const char* dtype,
                 int64_t k) const {
  json r;
  for (const char* f : {"part", "impl", "call", "dtype", "keys", "memory", "threads", "batch", "blocks",
                        "max_delay_us", "preferred_batch_queries", "requests", "p50_us", "p90_us", "p99_us",
                        "p999_us", "max_us", "mean_us", "requests_per_s", "queries_per_s", "rate_min", "rate_max",
                        "runs", "mean_batch_requests", "host_submit_us", "host_wait_us", "host_finish_us",
                        "kernel_take_us", "kernel_serve_us", "workload", "condition", "ms", "kept", "idle_release_us", "launches",
                        "note", "verified"})
    r[f] = nullptr;
  r["part"] = part;
  r["impl"] = impl;
  r["call"] = call;
  if (dtype) r["dtype"] = dtype;
  if (k > 0) r["keys"] = k;
  return r;
}

void runner::set_latency(json& r, const percentiles& p) {
  r["requests"] = p.n;
  r["p50_us"] = p.p50;
  r["p90_us"] = p.p90;
  r["p99_us"] = p.p99;
  r["p999_us"] = p.p999;
  r["max_us"] = p.max;
  r["mean_us"] = p.mean;
}

namespace {
std::string cell(const json& v, const char* fmt = "%.3g") {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  char b[48];
  std::snprintf(b, sizeof b, fmt, v.get<double>());
  return b;
}
}  // namespace

void runner::print(const json& r) const {
  std::string what = r["keys"].is_null() ? "" : n_text(r["keys"].get<int64_t>());
  std::string shape = r["threads"].is_null() ? "" : "t" + cell(r["threads"], "%.0f");
  if (!r["batch"].is_null()) shape += " b" + n_text(r["batch"].get<int64_t>());
  if (!r["max_delay_us"].is_null())
    shape += " d" + cell(r["max_delay_us"], "%.0f") + "/" + cell(r["preferred_batch_queries"], "%.0f");
  if (!r["blocks"].is_null()) shape += " blk" + cell(r["blocks"], "%.0f");
  std::string numbers;
  if (!r["p50_us"].is_null())
    numbers = "p50 " + cell(r["p50_us"]) + " p99 " + cell(r["p99_us"]) + " p99.9 " + cell(r["p999_us"]) + " max " +
              cell(r["max_us"]) + " us";
  if (!r["queries_per_s"].is_null())
    numbers += (numbers.empty() ? "" : ", ") + cell(r["requests_per_s"]) + " req/s " + cell(r["queries_per_s"]) + " q/s";
  if (!r["mean_batch_requests"].is_null()) numbers += " (" + cell(r["mean_batch_requests"]) + " req/batch)";
  if (!r["host_wait_us"].is_null())
    numbers += " [host " + cell(r["host_submit_us"], "%.2f") + " + wait " + cell(r["host_wait_us"], "%.2f") + " + " +
               cell(r["host_finish_us"], "%.2f") +
               (r["kernel_take_us"].is_null() ? std::string()
                                              : "; kernel take " + cell(r["kernel_take_us"], "%.2f") + " serve " +
                                                    cell(r["kernel_serve_us"], "%.2f")) +
               " us]";
  if (!r["ms"].is_null()) numbers += " " + r["workload"].get<std::string>() + " " + r["condition"].get<std::string>() +
                                     " " + cell(r["ms"], "%.4g") + " ms kept " + cell(r["kept"], "%.3f");
  std::printf("%-12s %-16s %-7s %-5s %-8s %-24s %s %s\n", r["part"].get<std::string>().c_str(),
              r["impl"].get<std::string>().c_str(), cell(r["dtype"]).c_str(), what.c_str(),
              cell(r["memory"]).c_str(), shape.c_str(), numbers.c_str(),
              r["verified"].is_null() ? "" : (r["verified"].get<bool>() ? "ok" : "WRONG"));
  std::fflush(stdout);
}

void runner::add(json r) {
  print(r);
  if (r["verified"] == false) {
    ++problems;
    report["failures"].push_back(r);
  }
  report["results"].push_back(std::move(r));
}

void runner::error(const json& r, const std::exception& e) {
  ++problems;
  std::printf("%-12s %-16s %-7s ERROR: %s\n", r["part"].get<std::string>().c_str(),
              r["impl"].get<std::string>().c_str(), cell(r["dtype"]).c_str(), e.what());
  std::fflush(stdout);
  json x = r;
  x["error"] = e.what();
  report["errors"].push_back(x);
}

void runner::skip(const json& r, const std::string& why) {
  std::printf("%-12s %-16s skipped: %s\n", r["part"].get<std::string>().c_str(), r["impl"].get<std::string>().c_str(),
              why.c_str());
  std::fflush(stdout);
  json x = r;
  x["why"] = why;
  report["skipped"].push_back(x);
}

// ---- targets (issue 22, then issue 43's for the one-query round trip) ---------------------------

std::vector<const json*> runner::find(const json& want) const {
  return verified_rows(report, want);
}

void runner::targets() {
  json& out = report["targets"];
  const char* host_mem = a.on_cuda() ? "pinned" : "host";
  const int64_t big = int64_t(1) << *std::max_element(a.log_keys.begin(), a.log_keys.end());
  for (const std::string& t : a.key_types) {
    const std::string at = t + " K = " + n_text(big);
    const auto one = find({{"part", "latency"}, {"impl", "server"}, {"dtype", t}, {"keys", big}, {"threads", 1},
                           {"memory", host_mem}});
    if (!one.empty()) {
      const json& r = *one[0];
      bench::add_target(out, "one query, " + at + ", 1 thread: p50", r["p50_us"].get<double>(), 4, "us", false);
      bench::add_target(out, "one query, " + at + ", 1 thread: p99", r["p99_us"].get<double>(), 6, "us", false);
      bench::add_target(out, "one query, " + at + ", 1 thread: p99.9", r["p999_us"].get<double>(), 10, "us", false);
    }
    // One request in flight: the throughput part's one-query requests from one thread, else (that
    // part not run) the latency part's one thread of round trips, which is the same thing.
    auto inflight = find({{"part", "throughput"}, {"impl", "server"}, {"dtype", t}, {"keys", big},
                          {"threads", 1}, {"batch", 1}, {"memory", host_mem}});
    if (inflight.empty()) inflight = one;
    if (!inflight.empty() && !(*inflight[0])["requests_per_s"].is_null())
      bench::add_target(out, "one request in flight, " + at + ": requests/s",
                        (*inflight[0])["requests_per_s"].get<double>(), 200000, "/s", true);
    for (const int lk : a.log_keys) {
      const int64_t k = int64_t(1) << lk;
      const std::string atk = t + " K = " + n_text(k);
      const json w = {{"part", "throughput"}, {"dtype", t}, {"keys", k}, {"batch", 32768}};
      json host = w, dev = w, one = w;
      host.update({{"impl", "server"}, {"threads", 16}, {"memory", host_mem}});
      dev.update({{"impl", "server"}, {"threads", 16}, {"memory", "device"}});
      one.update({{"impl", "oneshot"}, {"memory", "device"}});
      const auto h = find(host), d = find(dev), o = find(one);
      if (!h.empty())
        bench::add_target(out, "32K-query batches in host memory, 16 threads, " + atk + ": G queries/s",
                          (*h[0])["queries_per_s"].get<double>() * 1e-9, 2, "G", true);
      if (!d.empty() && !o.empty())
        bench::add_target(out, "32K-query batches in device memory, 16 threads, " + atk + ": / one-shot rate",
                          (*d[0])["queries_per_s"].get<double>() / (*o[0])["queries_per_s"].get<double>(), 0.9, "x",
                          true);
    }
  }
  // A full-GPU search beside an idle server (every share measured; the least kept).
  std::optional<double> least;
  for (const json* r : find({{"part", "interference"}, {"workload", "search"}, {"condition", "idle"}}))
    if (!(*r)["kept"].is_null()) least = std::min(least.value_or(1e9), (*r)["kept"].get<double>());
  if (least) bench::add_target(out, "a full-GPU search beside an idle server: kept (alone / beside)", *least, 0.9, "x", true);
  // The socket client's round trip as a client makes it by default: through its ring.
  auto sock = find({{"part", "socket"}, {"impl", "ring"}, {"threads", 1}, {"spin_us", socket_options{}.spin.count()}});
  if (sock.empty()) sock = find({{"part", "socket"}, {"impl", "ring"}, {"threads", 1}});
  if (!sock.empty())
    bench::add_target(out, "Unix socket round trip (through the ring), 1 connection: p50", (*sock[0])["p50_us"].get<double>(),
                      10, "us", false);
  bench::print_targets(out, a.on_cuda() ? "targets (issues 22 and 43; torch's peer: server_python.py):"
                                        : "targets (issues 22 and 43, meant for the H200; here the CPU server):");
}

// ---- all of it --------------------------------------------------------------------------------

void runner::run() {
  for (const std::string& t : a.key_types)
    for (const int lk : a.log_keys) {
      if (t == "float32") keys_case<float>(int64_t(1) << lk);
      else keys_case<int32_t>(int64_t(1) << lk);
    }
  if (a.has("interference") && a.on_cuda()) {
    if (a.key_types[0] == "float32") interference_part<float>();
    else interference_part<int32_t>();
  }
  if (a.has("socket")) socket_part();
  targets();
}

}  // namespace gsearch::bench::server_bench

namespace {

using namespace gsearch::bench::server_bench;
namespace bench = gsearch::bench;
using gsearch::cuda_device_properties;

// --quick's sizes, and the defaults that depend on the device.
void defaults(args& a) {
  auto dflt = [&](int64_t& v, int64_t full, int64_t quick) {
    if (v == 0) v = a.quick ? quick : full;
  };
  dflt(a.requests, 20000, 2000);
  dflt(a.warmup_requests, 1000, 200);
  dflt(a.pool, int64_t(1) << 22, int64_t(1) << 18);
  if (a.window_ms <= 0) a.window_ms = a.quick ? 60 : 300;
  if (a.batches.empty())
    a.batches = a.quick ? std::vector<int64_t>{1, 64, 4096, 32768} : std::vector<int64_t>{1, 64, 4096, 32768, 1 << 20};
  if (a.memory.empty()) a.memory = a.on_cuda() ? std::vector<std::string>{"pinned", "pageable"} : std::vector<std::string>{"host"};
  if (a.throughput_memory.empty())
    a.throughput_memory = a.on_cuda() ? std::vector<std::string>{"pinned", "device"} : std::vector<std::string>{"host"};
  if (a.quick) {
    a.repeat = std::min(a.repeat, 3);
    a.warmup = std::min(a.warmup, 1);
  }
}

// A bad combination of flags (exit status 1), or an empty string.
std::string check(const args& a) {
  for (const auto* list : {&a.memory, &a.throughput_memory})
    for (const std::string& m : *list)
      if (a.on_cuda() ? m == "host" : m != "host") return "--device " + a.device + " has no " + m + " memory";
  for (const std::string& m : a.memory)
    if (m == "device") return "--memory: one-query requests from device memory are not measured (pinned, pageable)";
  for (const std::string& s : a.batcher)
    if (s.find(':') == std::string::npos || s.find_first_not_of("0123456789:") != std::string::npos)
      return "--batcher " + s + ": max_delay_us:preferred_batch_queries, please";
  for (const std::string& s : a.shares)
    if (s != "1/8" && s != "1/2" && s != "all") return "--shares " + s + ": 1/8, 1/2 or all";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  CLI::App app{"server_bench: gsearch's search server (issue 22): one-query round trips from 1, 4 and 16 threads, "
               "throughput by batch size, the dynamic batcher, other work beside the server, the Unix socket; the "
               "one-query peers (launch + sync, thrust, a CUDA graph, the mapped-memory ping-pong) in the same run."};
  app.footer("Round trips on the host's steady clock; throughput over --repeat windows (median). Every answer is "
             "checked. Exit status 0 ok, 1 bad usage, 2 no CUDA device with --device cuda (nothing measured), 3 a "
             "check failed or a call threw. The format: the header of bench/server/server_bench.cpp.");
  bench::add_common_options(app, a, "A smoke test of seconds (2,000 round trips per thread, 60 ms windows, batches "
                                    "to 32K, 2^22 interference queries)",
                            "Seed of the keys (the query pool: seed + 1)");
  app.add_option("--device", a.device, "The server's backend")->check(CLI::IsMember({"cuda", "cpu"}))->capture_default_str();
  app.add_option("--parts", a.parts, "What to measure")->delimiter(',')
      ->check(CLI::IsMember({"latency", "peers", "throughput", "batcher", "interference", "socket"}))->capture_default_str();
  app.add_option("--key-types", a.key_types, "Key types")->delimiter(',')->check(CLI::IsMember({"float32", "int32"}))
      ->capture_default_str();
  app.add_option("--log-keys", a.log_keys, "K = 2^x keys")->delimiter(',')->check(CLI::Range(1, 31))->capture_default_str();
  app.add_option("--threads", a.threads, "Latency: submitting threads")->delimiter(',')->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--requests", a.requests, "Latency: timed round trips per thread (default 20000; --quick 2000)")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup-requests", a.warmup_requests, "Latency: untimed round trips per thread first (default 1000)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--memory", a.memory, "Latency: where the query and answer sit (cuda: pinned,pageable; cpu: host)")
      ->delimiter(',')->check(CLI::IsMember({"pinned", "pageable", "host"}));
  app.add_option("--batches", a.batches, "Throughput: queries per request (default 1,64,4096,32768,1048576)")
      ->delimiter(',')->check(CLI::Range(int64_t(1), int64_t(1) << 26));
  app.add_option("--throughput-threads", a.throughput_threads, "Throughput: submitting threads")->delimiter(',')
      ->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--throughput-memory", a.throughput_memory, "Throughput: cuda: pinned,device,pageable; cpu: host")
      ->delimiter(',')->check(CLI::IsMember({"pinned", "pageable", "device", "host"}));
  app.add_option("--window-ms", a.window_ms, "Throughput: one window (default 300; --quick 60)")->check(CLI::PositiveNumber);
  app.add_option("--blocks", a.blocks, "The server's blocks (0: its default)")->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--idle-release-us", a.idle_release_us,
                 "CUDA: idle this long, the server's kernel leaves the GPU (server_options::idle_release; 0: never; "
                 "default: the library's)");
  app.add_option("--batcher", a.batcher, "Batcher settings max_delay_us:preferred_batch_queries")->delimiter(',')
      ->capture_default_str();
  app.add_option("--shares", a.shares, "Interference: the server's share of the SMs (1/8, 1/2, all)")->delimiter(',')
      ->capture_default_str();
  app.add_option("--workloads", a.workloads, "Interference: the other work")->delimiter(',')
      ->check(CLI::IsMember({"search", "copy"}))->capture_default_str();
  app.add_option("--interference-log-keys", a.interference_log_keys, "Interference: the server's K = 2^x (default: "
                                                                       "the smallest of --log-keys)")
      ->check(CLI::Range(1, 31));
  app.add_option("--socket-spin-us", a.socket_spin_us,
                 "Socket: socket_options::spin of each case (0: both ends block at once; else the client "
                 "spins its default too)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--pool", a.pool, "Distinct queries per case (default 2^22; --quick 2^18)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 28));
  if (auto rc = bench::parse(app, argc, argv, a)) return *rc;
  defaults(a);
  if (const std::string why = check(a); !why.empty()) {
    std::fprintf(stderr, "server_bench: %s\n", why.c_str());
    return 1;
  }
  if (auto rc = bench::check_repeat("server_bench", a, 5)) return *rc;
  json report;
  if (a.on_cuda()) {
    if (auto rc = bench::require_gpu("server_bench", "server")) return *rc;
    report = bench::gpu_report("gsearch-bench-server/1", a, cuda_device_properties(),
                               {{"thrust", dev::thrust_version()}});
  } else {
    report = {{"schema", "gsearch-bench-server/1"}, {"synthetic", false}, {"command", a.command_line},
              {"source", bench::source_json()},
              {"device", {{"backend", "cpu"}, {"threads", gsearch::bench::host::host_threads()}}},
              {"versions", {{"gsearch", GSEARCH_VERSION}}}};
  }
  report["config"] = {{"device", a.device}, {"parts", a.parts}, {"key_types", a.key_types}, {"log_keys", a.log_keys},
                      {"threads", a.threads}, {"requests", a.requests}, {"warmup_requests", a.warmup_requests},
                      {"memory", a.memory}, {"batches", a.batches}, {"throughput_threads", a.throughput_threads},
                      {"throughput_memory", a.throughput_memory}, {"window_ms", a.window_ms}, {"blocks", a.blocks},
                      {"idle_release_us", a.idle_release_us},
                      {"batcher", a.batcher}, {"shares", a.shares}, {"workloads", a.workloads},
                      {"interference_log_keys", a.interference_log_keys}, {"pool", a.pool}, {"repeat", a.repeat},
                      {"warmup", a.warmup}, {"seed", a.seed}, {"quick", a.quick}};
  for (const char* k : {"inputs", "results", "targets", "skipped", "failures", "errors"}) report[k] = json::array();
  if (a.on_cuda()) bench::print_banner("server_bench", report);
  else std::printf("server_bench: the CPU server, %d threads; gsearch %s\n", gsearch::bench::host::host_threads(), GSEARCH_VERSION);
  return bench::run_and_report<runner>("server_bench", a, std::move(report));
}
