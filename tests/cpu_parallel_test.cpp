// The CPU backend's worker pool (cpu/parallel.hpp): every chunk runs once, exceptions reach the
// caller, nested and concurrent calls work, and the pool does not grow with the calls.

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/parallel.hpp"
#include "gsearch/gsearch.hpp"

namespace {

using namespace gsearch::cpu_backend;

int process_threads() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

TEST(CpuParallel, CgroupQuotaText) {
  EXPECT_EQ(cgroup_v2_cpu_limit("200000 100000\n"), 2);
  EXPECT_EQ(cgroup_v2_cpu_limit("150000 100000"), 2);  // 1.5 CPUs: 2 threads
  EXPECT_EQ(cgroup_v2_cpu_limit("50000 100000"), 1);
  EXPECT_EQ(cgroup_v2_cpu_limit("max 100000"), std::nullopt);
  EXPECT_EQ(cgroup_v2_cpu_limit(""), std::nullopt);
  EXPECT_EQ(cgroup_v2_cpu_limit("garbage"), std::nullopt);
}

TEST(CpuParallel, ThreadsAreTheCpusThisProcessMayUse) {
  const int n = hardware_threads();
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_GE(n, 1);
  EXPECT_LE(n, CPU_COUNT(&set));  // never more than the affinity mask allows
}

TEST(CpuParallel, EveryElementOnceForAnyThreadCount) {
  for (int threads : {1, 2, 3, 7, 64}) {
    for (int64_t n : {int64_t{1}, int64_t{5}, int64_t{1000}, int64_t{100003}}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for(n, threads, 32, [&](int64_t b, int64_t e) {
        EXPECT_EQ(b % 32, 0);
        for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
      });
      for (auto& h : hits) ASSERT_EQ(h.load(), 1) << threads << " threads, n " << n;
    }
  }
}

TEST(CpuParallel, ExceptionsReachTheCaller) {
  EXPECT_THROW(parallel_for(1000, 4, 1,
                            [](int64_t b, int64_t) {
                              if (b > 0) throw std::runtime_error("chunk");
                            }),
               std::runtime_error);
  // The pool still works after a throw.
  std::atomic<int64_t> sum{0};
  parallel_for(1000, 4, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 1000);
}

TEST(CpuParallel, NestedCallsRunInTheCallingThread) {
  std::atomic<int64_t> sum{0};
  parallel_for(8, 4, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      parallel_for(100, 4, 1, [&](int64_t b2, int64_t e2) { sum += e2 - b2; });
  });
  EXPECT_EQ(sum.load(), 800);
}

TEST(CpuParallel, ConcurrentCallersAllFinish) {
  std::vector<std::thread> callers;
  std::atomic<int64_t> sum{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r) parallel_for(1000, 3, 1, [&](int64_t b, int64_t e) { sum += e - b; });
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(sum.load(), 4 * 50 * 1000);
}

// The pool is started once: repeated calls run on the same threads (kernel thread ids, which a
// new thread does not reuse soon), where the old fork-join started threads on every call.
TEST(CpuParallel, CallsReuseThePoolsThreads) {
  std::mutex m;
  std::set<long> tids;
  for (int r = 0; r < 20; ++r)
    parallel_for(64, 2, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // let both threads take one
      std::lock_guard lk(m);
      tids.insert(long(syscall(SYS_gettid)));
    });
  EXPECT_LE(int(tids.size()), hardware_threads());
}

TEST(CpuParallel, CallsDoNotGrowTheProcess) {
  parallel_for(1000, 4, 1, [](int64_t, int64_t) {});
  const int before = process_threads();
  EXPECT_LE(pool_threads(), hardware_threads() - 1);
  std::vector<int32_t> keys(1 << 16), queries(1 << 16);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = int32_t(2 * i), queries[i] = int32_t(i);
  std::vector<int64_t> out(queries.size());
  for (int r = 0; r < 20; ++r)
    gsearch::upper_bound(gsearch::cpu, gsearch::span<const int32_t>(keys), gsearch::span<const int32_t>(queries),
                         gsearch::span<int64_t>(out));
  EXPECT_EQ(process_threads(), before);
  EXPECT_EQ(out[5], 3);
}

}  // namespace
