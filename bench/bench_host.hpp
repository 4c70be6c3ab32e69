#pragma once
// Host-only helpers shared by the benchmarks (find_bench.cu, merge_bench.cu, merge_cpu_bench.cpp):
// the counter-based inputs, host threads over index ranges, bench/README.md's checksum and the
// JSON report's common pieces. No CUDA here, so that merge_cpu_bench.cpp (any build) includes it.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gsearch/gsearch.hpp"

namespace gsearch::bench::host {

using json = nlohmann::ordered_json;

// ---- inputs -------------------------------------------------------------------------------------

/// splitmix64 is counter-based: word(s, i) = mix64(s + (i + 1) * golden) is output i of
/// gsearch::gen::splitmix64{s}, so numpy (bench/python/inputs.py) can rebuild every array.
constexpr uint64_t golden = 0x9E3779B97F4A7C15ull;
inline uint64_t word(uint64_t seed, uint64_t i) { return core::mix64(seed + (i + 1) * golden); }

inline const char* const set_op_names[] = {"intersection", "union", "difference", "symmetric-difference"};

// ---- host threads -------------------------------------------------------------------------------

inline int host_threads() { return int(std::max(1u, std::thread::hardware_concurrency())); }

/// f(begin, end) over [0, n) in one contiguous chunk per hardware thread.
template <class F>
void parallel_for(int64_t n, F&& f) {
  const int threads = host_threads();
  const int64_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    const int64_t b = t * chunk, e = std::min(n, b + chunk);
    if (b >= e) break;
    pool.emplace_back([&f, b, e] { f(b, e); });
  }
  for (auto& th : pool) th.join();
}

/// True when pred(i) holds for every i in [0, n).
template <class P>
bool parallel_all(int64_t n, P&& pred) {
  std::atomic<bool> ok{true};
  parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e && ok.load(std::memory_order_relaxed); ++i)
      if (!pred(i)) ok = false;
  });
  return ok.load();
}

/// The number of i in [0, n) with pred(i).
template <class P>
int64_t parallel_count(int64_t n, P&& pred) {
  std::atomic<int64_t> total{0};
  parallel_for(n, [&](int64_t b, int64_t e) {
    int64_t c = 0;
    for (int64_t i = b; i < e; ++i) c += pred(i) ? 1 : 0;
    total += c;
  });
  return total.load();
}

/// The checksum of bench/README.md (and bench/python/inputs.py): the bytes read as little-endian
/// uint64 words, the last partial word zero-padded, summed modulo 2^64. Sums of consecutive
/// pieces add up when every piece but the last holds a multiple of 8 bytes.
inline uint64_t checksum(const void* p, size_t bytes) {
  const auto* b = static_cast<const unsigned char*>(p);
  const int64_t words = int64_t(bytes / 8);
  std::atomic<uint64_t> sum{0};
  parallel_for(words, [&](int64_t lo, int64_t hi) {
    uint64_t s = 0;
    for (int64_t w = lo; w < hi; ++w) {
      uint64_t x;
      std::memcpy(&x, b + w * 8, 8);
      s += x;
    }
    sum += s;
  });
  uint64_t tail = 0;
  std::memcpy(&tail, b + words * 8, bytes % 8);
  return sum.load() + tail;
}

/// value(i) for i in [0, n), generated on the host threads.
template <class T, class F>
std::vector<T> generate(int64_t n, F&& value) {
  std::vector<T> v(static_cast<size_t>(n));
  parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) v[size_t(i)] = value(i);
  });
  return v;
}

template <class T>
bool equal_parallel(const std::vector<T>& x, const std::vector<T>& y) {
  if (x.size() != y.size()) return false;
  return parallel_all(int64_t(x.size()), [&](int64_t i) { return x[size_t(i)] == y[size_t(i)]; });
}

// ---- the report ---------------------------------------------------------------------------------

/// argv joined by spaces (the report's "command").
inline std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i) s += ' ';
    s += argv[i];
  }
  return s;
}

/// The report's "device" object.
inline json device_json(const cuda_device_info& dev) {
  return {{"name", dev.name}, {"compute_capability", dev.compute_capability}, {"sms", dev.sms},
          {"l2_bytes", dev.l2_bytes}, {"global_bytes", dev.global_bytes},
          {"driver_version", dev.driver_version}, {"runtime_version", dev.runtime_version}};
}

/// The report's "source" object: the git commit the binary was built from, and whether the tree
/// had uncommitted changes then (gsearch::build_info()).
inline json source_json() {
  const auto b = gsearch::build_info();
  return {{"commit", b.commit}, {"dirty", b.dirty}};
}

/// Writes the report to path + ".tmp", then renames it to path: a reader never sees half a file.
/// The report gets its "source" (source_json()) here, so every result file names its code.
inline void write_json(const std::string& path, const json& report) {
  const std::string tmp = path + ".tmp";
  {
    json stamped = report;
    if (!stamped.contains("source")) stamped["source"] = source_json();
    std::ofstream f(tmp);
    f << stamped.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

/// The GPU benches' main after the header is printed: Runner(a) with the report, its run(), and
/// the report written to json_path. Exit status 0 ok, 1 the JSON could not be written, 3 a
/// configuration failed its check or threw (the JSON is still written).
template <class Runner, class Args>
int run_and_report(const char* name, const Args& a, const std::string& json_path, json report) {
  int problems = 0;
  try {
    Runner b(a);
    b.report = std::move(report);
    try {
      b.run();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name, e.what());
      b.report["fatal"] = e.what();
      ++b.problems;
    }
    problems = b.problems;
    report = std::move(b.report);
  } catch (const std::exception& e) {  // the bench's own device memory
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    report["fatal"] = e.what();
    ++problems;
  }
  if (problems > 0)
    std::fprintf(stderr, "%s: %d configuration(s) failed their check or threw (see \"failures\", \"errors\")\n", name,
                 problems);
  const int rc = problems > 0 ? 3 : 0;
  if (!json_path.empty()) {
    try {
      write_json(json_path, report);
      std::fprintf(stderr, "%s: %zu results -> %s\n", name, report["results"].size(), json_path.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name, e.what());
      return 1;
    }
  }
  return rc;
}

}  // namespace gsearch::bench::host
