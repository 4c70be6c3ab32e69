// gsearch::server, the CPU backend: the request ring of core/server_ring.hpp in host memory,
// served by a thread of its own that stands in for the GPU's persistent kernel (the same ring,
// the same batching rules, the same one-writer-per-word protocol), each batch's searches run by
// gsearch::search on the CPU. docs/design.md, "The search server".

#include "gsearch/server.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gsearch/core/error.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/server_ring.hpp"
#include "gsearch/search.hpp"

namespace gsearch {
namespace {

using core::server_op;
using core::server_slot;

// The ring's loads and stores on the CPU (core/server_ring.hpp's Access policy).
struct host_access {
  static uint64_t load_acquire(const uint64_t* p) {
    return std::atomic_ref<const uint64_t>(*p).load(std::memory_order_acquire);
  }
  static void store_release(uint64_t* p, uint64_t v) { std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_release); }
};

// Waits until pred() holds: spins, then yields, then sleeps a little longer each round (an idle
// server or a submitter behind a long batch costs little).
template <class Pred>
void wait_until(Pred pred) {
  for (int i = 0; !pred(); ++i) {
    if (i < 64) continue;
    if (i < 256) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(std::min(i - 255, 50)));
  }
}

int log2_bucket(uint64_t v, int buckets) {
  int b = 0;
  while (v > 1 && b < buckets - 1) {
    v >>= 1;
    ++b;
  }
  return b;
}

template <class T>
void check_keys(span<const T> keys, const char* what) {
  for (int64_t i = 1; i < keys.size(); ++i)
    if (key_less(keys[i], keys[i - 1]))
      throw invalid_argument(std::string(what) + ": the keys are not sorted (keys[" + std::to_string(i) +
                             "] is before keys[" + std::to_string(i - 1) + "] in gsearch's order)");
}

}  // namespace

template <class T>
struct server<T>::state {
  server_options options;
  cpu_t exec;
  std::vector<server_slot> slots;
  uint64_t failed_from = core::ring_no_failure;  // the loop's: the first ticket it could not serve
  std::atomic<uint64_t> tickets{0};
  std::atomic<int64_t> publishing{0};  // submitters between taking a ticket and publishing it
  std::atomic<bool> closing{false};
  std::atomic<bool> stopped{false};
  std::vector<T>* keys = nullptr;     // the loop's key set (owned; replaced by replace_keys)
  std::atomic<int64_t> key_count{0};  // its length, for size()
  std::thread loop;
  // Statistics: the loop writes the batch counts, submitters the request counts.
  std::atomic<int64_t> requests{0}, queries{0}, batches{0};
  std::array<std::atomic<int64_t>, 16> batch_requests{};
  std::array<std::atomic<int64_t>, 32> latency_us{};

  int64_t n() const { return int64_t(slots.size()); }
  server_slot& slot(uint64_t t) { return slots[size_t(core::ring_slot_of(t, n()))]; }

  // Takes a ticket, waits for its slot, writes the request and publishes it. Throws only before
  // the ticket is taken (a refused submission).
  uint64_t publish(server_op op, int32_t s, int64_t count, uint64_t queries, uint64_t out, bool internal = false) {
    publishing.fetch_add(1, std::memory_order_seq_cst);
    if (!internal && closing.load(std::memory_order_seq_cst)) {
      publishing.fetch_sub(1, std::memory_order_seq_cst);
      throw invalid_argument("gsearch::server: the server is shut down");
    }
    const uint64_t t = tickets.fetch_add(1, std::memory_order_relaxed);
    server_slot& sl = slot(t);
    wait_until([&] { return core::ring_free(host_access::load_acquire(&sl.done), t); });
    sl.op = int32_t(op);
    sl.side = s;
    sl.count = count;
    sl.queries = queries;
    sl.out = out;
    host_access::store_release(&sl.ready, core::ring_ready_value(t));
    publishing.fetch_sub(1, std::memory_order_seq_cst);
    return t;
  }
  bool answered(uint64_t t) { return core::ring_answered(host_access::load_acquire(&slot(t).done), t, n()); }
  // Waits for ticket t's answer; true when it was served (false: the server had failed).
  bool wait(uint64_t t) {
    wait_until([&] { return answered(t); });
    return !core::ring_failed<host_access>(&failed_from, t);
  }

  // The loop: batches in ticket order until the stop request.
  void run() {
    uint64_t tail = 0;
    for (;;) {
      int64_t taken = 0;
      wait_until([&] {
        taken = core::ring_batch<host_access>(slots.data(), n(), tail, options.max_batch_requests,
                                              options.max_batch_queries);
        return taken > 0;
      });
      const server_slot& first = slot(tail);
      if (first.op == int32_t(server_op::search) && options.max_delay.count() > 0 && options.preferred_batch_queries > 0) {
        // The dynamic batcher: wait up to max_delay for the preferred number of queries.
        const auto deadline = std::chrono::steady_clock::now() + options.max_delay;
        const auto batch_queries = [&] {
          int64_t q = 0;
          for (int64_t i = 0; i < taken; ++i) q += slot(tail + uint64_t(i)).count;
          return q;
        };
        while (batch_queries() < options.preferred_batch_queries && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
          taken = core::ring_batch<host_access>(slots.data(), n(), tail, options.max_batch_requests,
                                                options.max_batch_queries);
        }
      }
      const server_op op = server_op(first.op);
      batches.fetch_add(1, std::memory_order_relaxed);
      batch_requests[size_t(log2_bucket(uint64_t(taken), 16))].fetch_add(1, std::memory_order_relaxed);
      for (int64_t i = 0; i < taken; ++i) {
        const uint64_t t = tail + uint64_t(i);
        const server_slot& s = slot(t);
        bool failed = failed_from != core::ring_no_failure;  // sticky, as a poisoned GPU context is
        if (op == server_op::search && !failed) {
          try {
            gsearch::search(exec, side(s.side), span<const T>(keys->data(), int64_t(keys->size())),
                            span<const T>(reinterpret_cast<const T*>(s.queries), s.count),
                            span<int64_t>(reinterpret_cast<int64_t*>(s.out), s.count));
          } catch (...) {
            failed = true;
          }
        } else if (op == server_op::replace_keys) {
          // Every request before the swap is answered and none after it can see the old set.
          delete keys;
          keys = reinterpret_cast<std::vector<T>*>(s.queries);
          key_count.store(int64_t(keys->size()), std::memory_order_relaxed);
        }
        core::ring_answer<host_access>(slots.data(), n(), t, failed && op == server_op::search, &failed_from);
        if (op == server_op::stop) return;
      }
      tail += uint64_t(taken);
    }
  }
};

template <class T>
server<T>::server(const cpu_t& exec, span<const T> keys, const server_options& options)
    : state_(std::make_unique<state>()) {
  if (options.ring_slots < 1 || options.max_batch_requests < 1 || options.max_batch_queries < 1 ||
      options.preferred_batch_queries < 0 || options.max_delay.count() < 0)
    throw invalid_argument("gsearch::server: ring_slots, max_batch_requests and max_batch_queries must be >= 1, "
                           "preferred_batch_queries and max_delay >= 0");
  check_keys(keys, "gsearch::server");
  state& st = *state_;
  st.options = options;
  st.exec = options.threads > 0 ? exec.with_threads(options.threads) : exec;
  st.slots.resize(size_t(options.ring_slots));
  for (int64_t i = 0; i < options.ring_slots; ++i) st.slots[size_t(i)].done = uint64_t(i);  // ticket i may start
  st.keys = new std::vector<T>(keys.data(), keys.data() + keys.size());
  st.key_count.store(keys.size());
  st.loop = std::thread([&st] { st.run(); });
}

template <class T>
server<T>::~server() {
  shutdown();
  delete state_->keys;
}

template <class T>
void server<T>::shutdown() {
  state& st = *state_;
  if (st.closing.exchange(true)) {
    if (st.loop.joinable()) st.loop.join();
    return;
  }
  // No submitter is between its ticket and its publication once `publishing` reads 0 after
  // `closing` is set (both seq_cst): the stop ticket is then the last.
  wait_until([&] { return st.publishing.load(std::memory_order_seq_cst) == 0; });
  const uint64_t t = st.publish(server_op::stop, 0, 0, 0, 0, true);
  st.wait(t);
  st.loop.join();
}

template <class T>
typename server<T>::request server<T>::submit(span<const T> queries, side s, span<int64_t> out) {
  if (out.size() != queries.size())
    throw invalid_argument("gsearch::server::search: out has " + std::to_string(out.size()) + " elements for " +
                           std::to_string(queries.size()) + " queries");
  if (s != side::left && s != side::right && s != side::pred)
    throw invalid_argument("gsearch::server::search: unknown side");
  const auto start = std::chrono::steady_clock::now();
  const uint64_t t = state_->publish(server_op::search, int32_t(s), queries.size(),
                                     reinterpret_cast<uint64_t>(queries.data()), reinterpret_cast<uint64_t>(out.data()));
  request r(this, t, queries.size());
  r.start_ = start;
  return r;
}

template <class T>
void server<T>::search(span<const T> queries, side s, span<int64_t> out) {
  submit(queries, s, out).wait();
}

template <class T>
void server<T>::replace_keys(span<const T> keys) {
  check_keys(keys, "gsearch::server::replace_keys");
  auto fresh = std::make_unique<std::vector<T>>(keys.data(), keys.data() + keys.size());
  const uint64_t t = state_->publish(server_op::replace_keys, 0, 0, reinterpret_cast<uint64_t>(fresh.get()), 0);
  fresh.release();  // the loop owns it from its publication (and frees the set it replaces)
  state_->wait(t);
}

template <class T>
server_stats server<T>::stats() const {
  server_stats s;
  s.requests = state_->requests.load();
  s.queries = state_->queries.load();
  s.batches = state_->batches.load();
  for (size_t i = 0; i < s.batch_requests.size(); ++i) s.batch_requests[i] = state_->batch_requests[i].load();
  for (size_t i = 0; i < s.latency_us.size(); ++i) s.latency_us[i] = state_->latency_us[i].load();
  return s;
}

template <class T>
int64_t server<T>::size() const {
  return state_->key_count.load(std::memory_order_relaxed);
}

template <class T>
server<T>::request::request(server* owner, uint64_t ticket, int64_t queries)
    : owner_(owner), ticket_(ticket), queries_(queries) {}

template <class T>
server<T>::request::request(request&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), ticket_(other.ticket_), queries_(other.queries_),
      start_(other.start_), waited_(other.waited_) {}

template <class T>
server<T>::request::~request() {
  if (owner_ && !waited_) owner_->state_->wait(ticket_);  // the loop writes into the caller's output
}

template <class T>
bool server<T>::request::ready() const {
  return !owner_ || waited_ || owner_->state_->answered(ticket_);
}

template <class T>
void server<T>::request::wait() {
  if (!owner_ || waited_) return;
  typename server<T>::state& st = *owner_->state_;
  const bool served = st.wait(ticket_);
  waited_ = true;
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_).count();
  st.requests.fetch_add(1, std::memory_order_relaxed);
  st.queries.fetch_add(queries_, std::memory_order_relaxed);
  st.latency_us[size_t(log2_bucket(uint64_t(us), 32))].fetch_add(1, std::memory_order_relaxed);
  if (!served) throw error("gsearch::server: the server's loop failed (this and every later request fail; shut it down)");
}

#define GSEARCH_INSTANTIATE_SERVER(T) template class server<T>;
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE_SERVER)
#undef GSEARCH_INSTANTIATE_SERVER

}  // namespace gsearch
