#pragma once
/// \file
/// A minimal fork-join loop for the CPU backend: [0, n) split into contiguous chunks, one per
/// thread, the calling thread taking the first. Exceptions from workers are rethrown.

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace gsearch::cpu_backend {

/// std::thread::hardware_concurrency(), asked once: glibc reads /sys on every call (some
/// microseconds, more than a 10-query search takes).
inline int hardware_threads() {
  static const int n = int(std::max(1u, std::thread::hardware_concurrency()));
  return n;
}

/// Threads to use for `work` units of work: 1 below min_work_per_thread, never more than asked.
inline int thread_count(int requested, int64_t work, int64_t min_work_per_thread) {
  int hw = requested > 0 ? requested : hardware_threads();
  return int(std::clamp<int64_t>(work / std::max<int64_t>(1, min_work_per_thread), 1, hw));
}

/// Calls body(begin, end) on `threads` contiguous chunks of [0, n), each chunk a multiple of
/// `align` long (except the last), so chunk boundaries can fall on warp boundaries.
template <class Body>
void parallel_for(int64_t n, int threads, int64_t align, Body body) {
  if (n <= 0) return;
  if (threads <= 1) {
    body(int64_t{0}, n);
    return;
  }
  int64_t chunk = (n + threads - 1) / threads;
  chunk = (chunk + align - 1) / align * align;
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  for (int t = 1; t < threads && t * chunk < n; ++t) {
    pool.emplace_back([&, t] {
      try {
        body(t * chunk, std::min(n, (t + 1) * chunk));
      } catch (...) {
        errors[size_t(t)] = std::current_exception();
      }
    });
  }
  try {
    body(int64_t{0}, std::min(n, chunk));
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace gsearch::cpu_backend
