#pragma once
/// \file
/// The CPU backend's fork-join loop: [0, n) split into contiguous chunks, run on a persistent
/// pool of worker threads (started once, sized to the CPUs this process may use), the calling
/// thread taking a share. Exceptions from the chunks are rethrown in the caller.

#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>
#include <string_view>
#include <vector>

namespace gsearch::cpu_backend {

/// The CPUs this process may use: its affinity mask (sched_getaffinity) capped by the cgroup's
/// CPU quota (cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), rounded up; at least
/// 1. Asked once. Not std::thread::hardware_concurrency(), which counts every core of the host:
/// a 2-CPU container on a 128-core host would start 128 threads.
int hardware_threads();

/// The CPU quota a cgroup v2 `cpu.max` text grants ("200000 100000" -> 2, "150000 100000" -> 2,
/// "max 100000" -> none), rounded up; nullopt for no limit or text it cannot read.
std::optional<int> cgroup_v2_cpu_limit(std::string_view cpu_max);

/// Threads to use for `work` units of work: 1 below min_work_per_thread, never more than asked.
inline int thread_count(int requested, int64_t work, int64_t min_work_per_thread) {
  int hw = requested > 0 ? requested : hardware_threads();
  return int(std::clamp<int64_t>(work / std::max<int64_t>(1, min_work_per_thread), 1, hw));
}

/// Runs task(ctx, t) for every t in [0, tasks) and returns when all have run: on the persistent
/// pool's threads and the caller's, tasks taken in turn (so more tasks than threads is fine; no
/// task may wait for another). A call made from inside a task runs its tasks in the calling
/// thread; a call made while another thread uses the pool runs on threads of its own (the
/// results are the same either way). `task` must not throw.
void run_tasks(int tasks, void (*task)(void* ctx, int t) noexcept, void* ctx);

/// How many threads the pool has started (0 before its first use); for tests.
int pool_threads();

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
  const int chunks = int((n + chunk - 1) / chunk);
  struct job {
    Body& body;
    int64_t n, chunk;
    std::vector<std::exception_ptr> errors;
  } j{body, n, chunk, std::vector<std::exception_ptr>(size_t(chunks))};
  run_tasks(
      chunks,
      [](void* ctx, int t) noexcept {
        auto& jb = *static_cast<job*>(ctx);
        try {
          jb.body(t * jb.chunk, std::min(jb.n, (t + 1) * jb.chunk));
        } catch (...) {
          jb.errors[size_t(t)] = std::current_exception();
        }
      },
      &j);
  for (auto& e : j.errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace gsearch::cpu_backend
