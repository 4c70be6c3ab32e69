#pragma once
// The benchmarks' timing: warm-up runs, then timed runs, and the summary of their times (the
// median: the mean of the two middle times for an even count; the fastest; the slowest). Each
// benchmark times one run its own way (CUDA events around a call, gsearch::elapsed_ms; the host's
// steady clock, wall_ms) and hands time_runs the function that does. Host code only: the sweeps'
// CUDA-event timing (sweep_timing.cuh) summarizes with it too.

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace gsearch::bench {

/// The median, minimum and maximum of some values (0 for none).
struct summary {
  double median = 0, min = 0, max = 0;
};
inline summary summarize(std::vector<double> v) {
  summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  s.median = v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  s.min = v.front();
  s.max = v.back();
  return s;
}

/// The timed runs of one configuration (milliseconds), and their summary.
struct timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> runs_ms;
};

/// `warmup` untimed calls of timed_run, then `repeat` timed ones (each returns its time in ms).
template <class F>
timing time_runs(int warmup, int repeat, F&& timed_run) {
  for (int i = 0; i < warmup; ++i) timed_run();
  timing t;
  for (int i = 0; i < repeat; ++i) t.runs_ms.push_back(timed_run());
  const summary s = summarize(t.runs_ms);
  t.median_ms = s.median;
  t.min_ms = s.min;
  t.max_ms = s.max;
  return t;
}

/// Wall-clock milliseconds of f() (the host's steady clock).
template <class F>
double wall_ms(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  std::forward<F>(f)();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace gsearch::bench
