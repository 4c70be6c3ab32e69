// gsearch::server on the CPU (its loop a thread standing in for the GPU's persistent kernel) and
// the ring of core/server_ring.hpp: many submitting threads with every answer against
// std::lower_bound / std::upper_bound, a full ring (backpressure), the dynamic batcher, key
// replacement while serving (no request sees a mix), shutdown with requests in flight, bad input,
// a fork child's calls (refused, naming the fork; the parent's server unharmed).
// Bounded: every test submits a fixed number of requests and ends by itself.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gsearch/core/server_ring.hpp"
#include "gsearch/gsearch.hpp"
#include "server_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T>
class Server : public ::testing::Test {};
TYPED_TEST_SUITE(Server, KeyTypes);

constexpr auto& kSides = server_sides;

TYPED_TEST(Server, ManyThreadsGetTheReferenceAnswers) {
  using T = TypeParam;
  const std::vector<T> keys = sorted_keys<T>(5000, 1, 2000);
  server<T> s(cpu, span<const T>(keys), server_options{});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 8; ++w)
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(100 + uint64_t(w));
      for (int i = 0; i < 60; ++i) {
        const int64_t n = i % 7 == 0 ? 0 : 1 + int64_t(rng() % (i % 3 == 0 ? 3000 : 8));
        const std::vector<T> q = random_queries<T>(rng, n, 2200);
        const side sd = kSides[rng() % 3];
        std::vector<int64_t> out(static_cast<size_t>(n), -7);
        s.search(span<const T>(q), sd, span<int64_t>(out));
        if (out != reference_all(keys, q, sd)) wrong.fetch_add(1);
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  const server_stats st = s.stats();
  EXPECT_EQ(st.requests, 8 * 60);
  int64_t in_histogram = 0;
  for (int64_t c : st.latency_us) in_histogram += c;
  EXPECT_EQ(in_histogram, st.requests);
  EXPECT_GE(st.batches, 1);
  EXPECT_EQ(s.size(), 5000);
  // The timeline: every request waited for its answer (its three parts are sums of nonnegative
  // times, the wait the largest part of a loop's round trip); the CPU form has no kernel's part.
  EXPECT_GT(st.host_wait_ns, 0);
  EXPECT_GE(st.host_submit_ns, 0);
  EXPECT_GE(st.host_finish_ns, 0);
  EXPECT_GT(st.host_submit_ns + st.host_wait_ns + st.host_finish_ns, st.requests * 50);  // >= 50 ns a request
  EXPECT_EQ(st.kernel_timed_batches, 0);
  EXPECT_EQ(st.kernel_clock_khz, 0);
  EXPECT_EQ(st.kernel_launches, 0);
}

TYPED_TEST(Server, AFullRingMakesSubmittersWait) {
  using T = TypeParam;
  const std::vector<T> keys = sorted_keys<T>(300, 2, 500);
  server_options o;
  o.ring_slots = 2;
  o.max_batch_requests = 1;
  server<T> s(cpu, span<const T>(keys), o);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 6; ++w)
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(7 + uint64_t(w));
      for (int i = 0; i < 40; ++i) {
        const std::vector<T> q = random_queries<T>(rng, 1 + int64_t(rng() % 50), 520);
        std::vector<int64_t> out(q.size());
        s.search(span<const T>(q), side::right, span<int64_t>(out));
        if (out != reference_all(keys, q, side::right)) wrong.fetch_add(1);
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(s.stats().batch_requests[0], s.stats().batches);  // one request a batch, as asked
}

TYPED_TEST(Server, TheDynamicBatcherWaitsForThePreferredSize) {
  using T = TypeParam;
  const std::vector<T> keys = sorted_keys<T>(1000, 3, 900);
  server_options o;
  o.preferred_batch_queries = 32;
  o.max_delay = std::chrono::seconds(20);  // never reached: the 32 requests come at once
  server<T> s(cpu, span<const T>(keys), o);
  std::mt19937_64 rng(5);
  std::vector<std::vector<T>> qs;
  std::vector<std::vector<int64_t>> outs(32, std::vector<int64_t>(1));
  for (int i = 0; i < 32; ++i) qs.push_back(random_queries<T>(rng, 1, 950));
  std::vector<typename server<T>::request> pending;
  for (int i = 0; i < 32; ++i)
    pending.push_back(s.submit(span<const T>(qs[size_t(i)]), side::left, span<int64_t>(outs[size_t(i)])));
  for (auto& r : pending) r.wait();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(outs[size_t(i)], reference_all(keys, qs[size_t(i)], side::left));
  const server_stats st = s.stats();
  EXPECT_EQ(st.batches, 1);
  EXPECT_EQ(st.batch_requests[5], 1);  // one batch of 32 requests
}

TYPED_TEST(Server, ReplacedKeysAreNeverMixedWithinARequest) {
  using T = TypeParam;
  const std::vector<T> a = sorted_keys<T>(2000, 4, 300), b = sorted_keys<T>(700, 5, 300);
  server<T> s(cpu, span<const T>(a));
  std::atomic<bool> go{true};
  std::atomic<int> wrong{0}, seen_a{0}, seen_b{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w)
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(50 + uint64_t(w));
      for (int i = 0; i < 150; ++i) {
        const std::vector<T> q = random_queries<T>(rng, 64, 320);
        std::vector<int64_t> out(q.size());
        s.search(span<const T>(q), side::left, span<int64_t>(out));
        if (out == reference_all(a, q, side::left)) seen_a.fetch_add(1);
        else if (out == reference_all(b, q, side::left)) seen_b.fetch_add(1);
        else wrong.fetch_add(1);
      }
    });
  std::thread replacer([&] {
    for (int i = 0; i < 20; ++i) {
      const std::vector<T>& next = i % 2 == 0 ? b : a;
      s.replace_keys(span<const T>(next));
      EXPECT_EQ(s.size(), int64_t(next.size()));
    }
  });
  for (std::thread& t : threads) t.join();
  replacer.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(seen_a.load() + seen_b.load(), 4 * 150);
}

TYPED_TEST(Server, ShutdownAnswersWhatWasSubmittedAndRefusesTheRest) {
  using T = TypeParam;
  const std::vector<T> keys = sorted_keys<T>(4000, 6, 3000);
  std::mt19937_64 rng(8);
  std::vector<std::vector<T>> qs;
  std::vector<std::vector<int64_t>> outs;
  for (int i = 0; i < 40; ++i) {
    qs.push_back(random_queries<T>(rng, 2000, 3100));
    outs.emplace_back(2000, -1);
  }
  server<T> s(cpu, span<const T>(keys));
  std::vector<typename server<T>::request> pending;
  for (int i = 0; i < 40; ++i)
    pending.push_back(s.submit(span<const T>(qs[size_t(i)]), side::right, span<int64_t>(outs[size_t(i)])));
  s.shutdown();
  for (int i = 0; i < 40; ++i) {
    EXPECT_TRUE(pending[size_t(i)].ready());
    EXPECT_EQ(outs[size_t(i)], reference_all(keys, qs[size_t(i)], side::right)) << i;
  }
  std::vector<int64_t> out(1);
  EXPECT_THROW(s.search(span<const T>(qs[0].data(), 1), side::left, span<int64_t>(out)), invalid_argument);
  s.shutdown();  // idempotent
}

// Two threads shut a server down at once (a Python close() and a destructor, say): both return,
// once, and neither joins the loop while the other does.
TYPED_TEST(Server, ConcurrentShutdownsReturnOnceStopped) {
  using T = TypeParam;
  const std::vector<T> keys = sorted_keys<T>(100, 6, 3000);
  for (int round = 0; round < 30; ++round) {
    server<T> s(cpu, span<const T>(keys));
    std::atomic<int> ready{0}, done{0};
    std::vector<std::thread> t;
    for (int i = 0; i < 2; ++i)
      t.emplace_back([&] {
        ++ready;
        while (ready.load() < 2) {
        }
        s.shutdown();
        ++done;
      });
    for (auto& x : t) x.join();
    EXPECT_EQ(done.load(), 2);
    std::vector<int64_t> out(1);
    EXPECT_THROW(s.search(span<const T>(keys.data(), 1), side::left, span<int64_t>(out)), invalid_argument);
  }
}

TYPED_TEST(Server, BadInputIsRefusedInTheCaller) {
  using T = TypeParam;
  const std::vector<T> keys = sorted_keys<T>(100, 9, 50);
  std::vector<T> unsorted = keys;
  std::reverse(unsorted.begin(), unsorted.end());
  EXPECT_THROW({ server<T> refused(cpu, span<const T>(unsorted)); }, invalid_argument);
  server_options bad;
  bad.ring_slots = 0;
  EXPECT_THROW({ server<T> refused(cpu, span<const T>(keys), bad); }, invalid_argument);
  bad = {};
  bad.idle_release = std::chrono::nanoseconds(-1);
  EXPECT_THROW({ server<T> refused(cpu, span<const T>(keys), bad); }, invalid_argument);
  server<T> s(cpu, span<const T>(keys));
  std::vector<T> q(10, T(1));
  std::vector<int64_t> out(9);
  EXPECT_THROW(s.search(span<const T>(q), side::left, span<int64_t>(out)), invalid_argument);
  EXPECT_THROW(s.replace_keys(span<const T>(unsorted)), invalid_argument);
  std::vector<int64_t> ok(10);
  s.search(span<const T>(q), side::left, span<int64_t>(ok));  // still serving
  EXPECT_EQ(ok, reference_all(keys, q, side::left));
}

// A fork child of the process that made a server (its loop thread not in the child): every
// call throws error naming the fork instead of waiting for ever, destroying its copy returns,
// and the parent's server goes on serving (the child stopped nothing of it).
TYPED_TEST(Server, AForkChildIsRefusedAndTheParentGoesOn) {
  using T = TypeParam;
  const std::vector<T> keys = sorted_keys<T>(500, 10, 300);
  auto s = std::make_unique<server<T>>(cpu, span<const T>(keys));
  std::mt19937_64 rng(11);
  const std::vector<T> q = random_queries<T>(rng, 200, 320);
  std::vector<int64_t> out(q.size());
  s->search(span<const T>(q), side::right, span<int64_t>(out));  // the loop has run before the fork
  EXPECT_EQ(server_fork_child_refuses(s, keys), "");
  for (const side sd : kSides) {
    s->search(span<const T>(q), sd, span<int64_t>(out));
    EXPECT_EQ(out, reference_all(keys, q, sd));
  }
  EXPECT_EQ(s->size(), 500);
  s->shutdown();
}

// The ring's batching rule on hand-made slots.
struct plain_access {
  static uint64_t load_acquire(const uint64_t* p) { return *p; }
  static void store_release(uint64_t* p, uint64_t v) { *p = v; }
};

TEST(ServerRing, BatchesAreConsecutivePublishedRequestsOfOneKind) {
  using core::server_op;
  std::vector<core::server_slot> ring(8);
  for (int i = 0; i < 8; ++i) ring[size_t(i)].done = uint64_t(i);
  const auto publish = [&](uint64_t t, server_op op, int64_t count) {
    core::server_slot& s = ring[size_t(core::ring_slot_of(t, 8))];
    s.op = int32_t(op);
    s.count = count;
    s.ready = core::ring_ready_value(t);
  };
  EXPECT_EQ(core::ring_batch<plain_access>(ring.data(), 8, 0, 100, 100), 0);  // nothing published
  publish(0, server_op::search, 10);
  publish(1, server_op::search, 10);
  publish(3, server_op::search, 10);  // 2 is missing: the batch stops before it
  EXPECT_EQ(core::ring_batch<plain_access>(ring.data(), 8, 0, 100, 100), 2);
  EXPECT_EQ(core::ring_batch<plain_access>(ring.data(), 8, 0, 1, 100), 1);   // max_requests
  EXPECT_EQ(core::ring_batch<plain_access>(ring.data(), 8, 0, 100, 15), 1);  // max_queries
  publish(2, server_op::replace_keys, 0);
  EXPECT_EQ(core::ring_batch<plain_access>(ring.data(), 8, 0, 100, 100), 2);  // stops at the swap
  EXPECT_EQ(core::ring_batch<plain_access>(ring.data(), 8, 2, 100, 100), 1);  // the swap alone
  EXPECT_EQ(core::ring_batch<plain_access>(ring.data(), 8, 3, 100, 100), 1);
  publish(4, server_op::search, 1000);  // larger than max_queries: taken alone
  EXPECT_EQ(core::ring_batch<plain_access>(ring.data(), 8, 4, 100, 100), 1);
  // Answering ticket 0 frees its slot for ticket 8; done only grows, so ticket 0 still reads
  // as answered after ticket 8 is.
  uint64_t failed_from = core::ring_no_failure;
  EXPECT_FALSE(core::ring_free(ring[0].done, 8));
  core::ring_answer<plain_access>(ring.data(), 8, 0, false, &failed_from);
  EXPECT_TRUE(core::ring_free(ring[0].done, 8));
  EXPECT_TRUE(core::ring_answered(ring[0].done, 0, 8));
  core::ring_answer<plain_access>(ring.data(), 8, 8, false, &failed_from);
  EXPECT_TRUE(core::ring_answered(ring[0].done, 0, 8));
  EXPECT_FALSE(core::ring_failed<plain_access>(&failed_from, 8));
  // A failure is sticky from its ticket on.
  core::ring_answer<plain_access>(ring.data(), 8, 1, true, &failed_from);
  core::ring_answer<plain_access>(ring.data(), 8, 2, true, &failed_from);
  EXPECT_EQ(failed_from, 1u);
  EXPECT_FALSE(core::ring_failed<plain_access>(&failed_from, 0));
  EXPECT_TRUE(core::ring_failed<plain_access>(&failed_from, 2));
}

}  // namespace
}  // namespace gsearch::test
