// The CPU backend's worker pool (cpu/parallel.hpp): started on first use with one thread fewer
// than the CPUs this process may use (the caller is the last one), kept for the life of the
// process. Before it, every parallel call started and joined its own std::threads: some 20-50 us
// a call on a 2-core machine, more than a 10^4-query search takes.

#include "cpu/parallel.hpp"
#include "gsearch/execution.hpp"  // cpu_threads

#include <sched.h>

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

namespace gsearch::cpu_backend {
namespace {

std::string read_small_file(const char* path) {
  std::ifstream f(path);
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

int64_t parse_int(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) s.remove_prefix(1);
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() ? v : -1;
}

// cgroup v1: cpu.cfs_quota_us is -1 without a limit.
std::optional<int> cgroup_v1_cpu_limit() {
  const int64_t quota = parse_int(read_small_file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"));
  const int64_t period = parse_int(read_small_file("/sys/fs/cgroup/cpu/cpu.cfs_period_us"));
  if (quota <= 0 || period <= 0) return std::nullopt;
  return int(std::max<int64_t>(1, (quota + period - 1) / period));
}

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

int available_cpus() {
  int n = affinity_cpus();
  if (auto v2 = cgroup_v2_cpu_limit(read_small_file("/sys/fs/cgroup/cpu.max"))) n = std::min(n, *v2);
  else if (auto v1 = cgroup_v1_cpu_limit()) n = std::min(n, *v1);
  return std::max(1, n);
}

// Set while a thread runs a task: a parallel call made from inside one runs serially (the pool's
// threads are busy with the outer call).
thread_local bool in_task = false;

struct task_scope {
  bool outer = in_task;
  task_scope() { in_task = true; }
  ~task_scope() { in_task = outer; }
};

// The tasks of one call, taken in turn by the caller and the pool's threads.
struct job_state {
  void (*task)(void*, int) noexcept = nullptr;
  void* ctx = nullptr;
  int tasks = 0;
  std::atomic<int> next{0};
  std::atomic<int> done{0};
};

void take_tasks(job_state& j) {
  task_scope scope;
  for (int t; (t = j.next.fetch_add(1, std::memory_order_relaxed)) < j.tasks;) {
    j.task(j.ctx, t);
    j.done.fetch_add(1, std::memory_order_acq_rel);
  }
}

class worker_pool {
 public:
  explicit worker_pool(int threads) {
    workers_.reserve(size_t(threads));
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~worker_pool() {
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int threads() const { return int(workers_.size()); }

  // Runs the tasks with the pool, or returns false at once when another thread is using it.
  bool try_run(int tasks, void (*task)(void*, int) noexcept, void* ctx) {
    std::unique_lock use(in_use_, std::try_to_lock);
    if (!use.owns_lock()) return false;
    {
      std::lock_guard lk(m_);
      job_.task = task;
      job_.ctx = ctx;
      job_.tasks = tasks;
      job_.next.store(0, std::memory_order_relaxed);
      job_.done.store(0, std::memory_order_relaxed);
      ++generation_;
    }
    wake_.notify_all();
    take_tasks(job_);
    // Every task has run, and no worker still holds this job (a worker that woke for it may be
    // about to look for a task that is not there: the next job must wait until it has looked).
    std::unique_lock lk(m_);
    finished_.wait(lk, [&] { return job_.done.load(std::memory_order_acquire) == tasks && active_ == 0; });
    return true;
  }

 private:
  void work() {
    uint64_t seen = 0;
    std::unique_lock lk(m_);
    for (;;) {
      wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++active_;
      lk.unlock();
      take_tasks(job_);
      lk.lock();
      if (--active_ == 0) finished_.notify_all();
    }
  }

  std::mutex in_use_;  // held by the caller whose tasks the pool runs
  std::mutex m_;       // guards generation_, active_, stop_ and the job's fields
  std::condition_variable wake_, finished_;
  job_state job_;
  uint64_t generation_ = 0;
  int active_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

std::atomic<int> started_threads{0};

worker_pool& pool() {
  // Never destroyed: a pool torn down at exit would join threads while other static destructors
  // (or a still-running caller thread) may use it.
  static worker_pool* p = [] {
    auto* w = new worker_pool(hardware_threads() - 1);
    started_threads.store(w->threads());
    return w;
  }();
  return *p;
}

// The path taken when the pool is busy with another caller's tasks: threads of this call's own.
void run_on_own_threads(int tasks, void (*task)(void*, int) noexcept, void* ctx) {
  job_state j;
  j.task = task;
  j.ctx = ctx;
  j.tasks = tasks;
  const int helpers = std::min(tasks, hardware_threads()) - 1;
  std::vector<std::thread> threads;
  threads.reserve(size_t(std::max(0, helpers)));
  for (int i = 0; i < helpers; ++i) threads.emplace_back([&j] { take_tasks(j); });
  take_tasks(j);
  for (auto& t : threads) t.join();
}

}  // namespace

std::optional<int> cgroup_v2_cpu_limit(std::string_view cpu_max) {
  const size_t space = cpu_max.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const int64_t quota = parse_int(cpu_max.substr(0, space));  // "max": -1, no limit
  const int64_t period = parse_int(cpu_max.substr(space + 1));
  if (quota <= 0 || period <= 0) return std::nullopt;
  return int(std::max<int64_t>(1, (quota + period - 1) / period));
}

int hardware_threads() {
  static const int n = available_cpus();
  return n;
}

int pool_threads() { return started_threads.load(); }

void run_tasks(int tasks, void (*task)(void* ctx, int t) noexcept, void* ctx) {
  if (tasks <= 0) return;
  if (tasks == 1 || in_task || hardware_threads() == 1) {
    task_scope scope;
    for (int t = 0; t < tasks; ++t) task(ctx, t);
    return;
  }
  if (!pool().try_run(tasks, task, ctx)) run_on_own_threads(tasks, task, ctx);
}

}  // namespace gsearch::cpu_backend

namespace gsearch {
int cpu_threads() { return cpu_backend::hardware_threads(); }
}  // namespace gsearch
