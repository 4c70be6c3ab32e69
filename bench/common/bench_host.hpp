#pragma once
// Host-only helpers shared by the benchmarks: the counter-based inputs, host threads over index
// ranges, bench/README.md's checksum and the key types of the index and P-ary benchmarks (the
// report and the command line: report.hpp). No CUDA here, so that merge_cpu_bench.cpp (any
// build) includes it.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gsearch/gsearch.hpp"

namespace gsearch::bench::host {

// ---- the probes' command line ------------------------------------------------------------------

/// `NAME [--n N] [--json FILE]`, the probes' (radix_probe, sort_probe) whole command line: false
/// after printing the usage on anything else.
struct probe_args {
  int64_t n = 0;
  std::string json_path;
};
inline bool parse_probe_args(int argc, char** argv, const char* name, probe_args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--n" && i + 1 < argc) {
      a.n = std::atoll(argv[++i]);
    } else if (arg == "--json" && i + 1 < argc) {
      a.json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--n N] [--json FILE]\n", name);
      return false;
    }
  }
  return true;
}

// ---- inputs -------------------------------------------------------------------------------------

/// splitmix64 is counter-based: word(s, i) = mix64(s + (i + 1) * golden) is output i of
/// gsearch::gen::splitmix64{s}, so numpy (bench/common/inputs.py) can rebuild every array.
constexpr uint64_t golden = 0x9E3779B97F4A7C15ull;
inline uint64_t word(uint64_t seed, uint64_t i) { return core::mix64(seed + (i + 1) * golden); }

inline const char* const set_op_names[] = {"intersection", "union", "difference", "symmetric-difference"};

// ---- host threads -------------------------------------------------------------------------------

inline int host_threads() { return int(std::max(1u, std::thread::hardware_concurrency())); }

/// /proc/loadavg's first three fields (the machine may be shared: ratios within one run count).
inline std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

/// The CPU's model name from /proc/cpuinfo ("unknown" elsewhere).
inline std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto p = line.find(':');
      return p == std::string::npos ? line : line.substr(p + 2);
    }
  return "unknown";
}

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

/// The checksum of bench/README.md (and bench/common/inputs.py): the bytes read as little-endian
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

// ---- key types ----------------------------------------------------------------------------------

/// f.template operator()<T>(k) for each key type named in `types` and each K = 2^x of log_keys
/// (types outermost): "int32" (int32_t) and "int64" (int64_t), the key types the index and P-ary
/// benchmarks instantiate their kernels for; another name throws.
template <class F>
void for_each_keys(const std::vector<std::string>& types, const std::vector<int>& log_keys, F&& f) {
  for (const std::string& type : types) {
    if (type != "int32" && type != "int64") throw gsearch::invalid_argument("unknown key type " + type + " (int32, int64)");
    for (const int lk : log_keys) {
      const int64_t k = int64_t(1) << lk;
      if (type == "int32") f.template operator()<int32_t>(k);
      else f.template operator()<int64_t>(k);
    }
  }
}

}  // namespace gsearch::bench::host
