#pragma once
// Timing shared by `gsearch search` and `gsearch bench`: warm-up runs, then timed runs; the
// median, min and max of their times (milliseconds), and all of them.

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace gsearch::cli {

struct timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> runs_ms;
};

/// `warmup` untimed calls of timed_run, then `repeat` timed ones (each returns its time in ms).
inline timing time_runs(int warmup, int repeat, const std::function<double()>& timed_run) {
  for (int i = 0; i < warmup; ++i) timed_run();
  timing t;
  for (int i = 0; i < repeat; ++i) t.runs_ms.push_back(timed_run());
  std::vector<double> s = t.runs_ms;
  std::sort(s.begin(), s.end());
  if (s.empty()) return t;
  const size_t m = s.size() / 2;
  t.median_ms = s.size() % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  t.min_ms = s.front();
  t.max_ms = s.back();
  return t;
}

/// Wall-clock milliseconds of f().
template <class F>
double wall_ms(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace gsearch::cli
