// bench/cpu/cpu_pool_bench.cpp: the per-call cost of a 2-chunk fork-join: the pool (cpu_backend::parallel_for) vs a thread spawned
// Usage: cpu_pool_bench [N] (elements summed per call, split in 2 chunks). docs/perf-notes.md has a run.
// and joined per call (the old parallel_for), interleaved in one run.
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
#include <algorithm>
#include <cstdlib>
#include "cpu/parallel.hpp"
int main(int argc, char** argv) {
  using clk = std::chrono::steady_clock;
  long sink = 0; const int64_t N = argc > 1 ? atol(argv[1]) : 64;
  auto body = [&](int64_t b, int64_t e) { long s = 0; for (int64_t i = b; i < e; ++i) s += i; sink = sink + s; };
  std::vector<double> pool, spawn;
  for (int round = 0; round < 20; ++round) {
    auto t0 = clk::now();
    for (int i = 0; i < 2000; ++i) gsearch::cpu_backend::parallel_for(N, 2, 1, body);
    auto t1 = clk::now();
    for (int i = 0; i < 2000; ++i) { std::thread t([&] { body(N / 2, N); }); body(0, N / 2); t.join(); }
    auto t2 = clk::now();
    pool.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 2000);
    spawn.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count() / 2000);
  }
  std::sort(pool.begin(), pool.end()); std::sort(spawn.begin(), spawn.end());
  std::printf("(sink %ld) ", long(sink));
  std::printf("median us per call: pool %.2f, spawn+join %.2f, ratio %.1fx\n", pool[10], spawn[10], spawn[10] / pool[10]);
}
