// gsearch::server: the submitters' side of the request ring (core/server_ring.hpp), and its two
// servers: on the CPU a thread of its own, which stands in for the GPU's persistent kernel (the
// same ring, the same batching rules, the same one-writer-per-word protocol) and runs each
// batch's searches with gsearch::search; on the GPU the persistent kernel of
// src/server/cuda/server.cu, which serves the ring in mapped pinned memory. docs/design.md, "The search
// server".

#include "gsearch/server.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gsearch/core/error.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/server_ring.hpp"
#include "server/cuda.hpp"
#include "fork.hpp"
#include "gsearch/search.hpp"
#include "on_backend.hpp"

namespace gsearch {

// ---- src/fork.hpp ----------------------------------------------------------------------------

namespace {

// How many forks deep this process is below the one that first made a made_in_process: a fork
// child's handler adds one (an atomic add: async-signal-safe, as a child handler must be).
std::atomic<uint64_t> fork_depth{0};

void count_fork() { fork_depth.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

detail::made_in_process::made_in_process() {
  static const int registered = pthread_atfork(nullptr, nullptr, count_fork);
  if (registered != 0) throw error("gsearch: pthread_atfork failed");
  forks_ = fork_depth.load(std::memory_order_relaxed);
  pid_ = long(getpid());
}

bool detail::made_in_process::forked() const noexcept {
  return fork_depth.load(std::memory_order_relaxed) != forks_;
}

void detail::made_in_process::refuse(const char* what, const char* object) const {
  throw error(std::string(what) + ": called in a fork child (pid " + std::to_string(long(getpid())) +
              ") of the process that made the " + object + " (pid " + std::to_string(pid_) + "); its threads (a "
              "CUDA server's kernel and memory) stay in that process and would never answer. Make it in the "
              "child, or start children with multiprocessing's 'spawn' or 'forkserver' method");
}

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

// A spinning thread's pause: the core's hint that this is a wait loop (x86 `pause`, Arm `yield`).
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// How long a CUDA request's submitter spins on its answer before it yields the core: the answer
// comes from the GPU, not from a thread of this process, so spinning costs no other thread
// anything it is waiting for, and a yield or a sleep each delays the answer's detection by
// its system call or more (wait_until's yields after 64 polls cost some 0.3-0.5 us of a 7-8 us
// round trip; its sleeps tens of us).
constexpr auto answer_spin = std::chrono::microseconds(50);
// How often a long wait checks that the kernel still runs (a CUDA error ends it).
constexpr auto kernel_check = std::chrono::milliseconds(1);

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
  detail::made_in_process made;  // a fork child's copy refuses every call (src/fork.hpp)
  server_options options;
  cpu_t exec;
  std::vector<server_slot> cpu_slots;                       // CPU: the ring
  std::unique_ptr<cuda_backend::device_server<T>> device;  // CUDA: the ring and the kernel
  server_slot* slots = nullptr;                             // the ring, wherever it is
  int64_t ring = 0;                                         // its slots
  // Per slot, the first ticket that may take it: its owner's ticket + N once that owner is done
  // with it (answered, and any staged results copied out). Host memory, host atomics.
  std::unique_ptr<std::atomic<uint64_t>[]> released;
  uint64_t failed_from = core::ring_no_failure;  // CPU: the first ticket the loop could not serve
  std::atomic<bool> dead{false};                 // CUDA: the kernel ended without a stop (an error)
  std::mutex replacing;                          // replace_keys, one at a time
  // A request served in pieces (pageable memory beyond the staging) holds this shared from its
  // first piece's ticket to its last's; replace_keys takes it exclusively to publish: no request
  // sees a mix of key sets, in pieces either.
  std::shared_mutex pieces;
  std::atomic<uint64_t> tickets{0};
  std::atomic<int64_t> publishing{0};  // submitters between taking a ticket and publishing it
  std::atomic<bool> closing{false};
  std::mutex shutting;  // shutdown()'s callers, one at a time
  std::atomic<bool> stopped{false};
  std::vector<T>* keys = nullptr;     // the loop's key set (owned; replaced by replace_keys)
  std::atomic<int64_t> key_count{0};  // its length, for size()
  std::thread loop;
  // Statistics: the loop writes the batch counts, submitters the request counts.
  std::atomic<int64_t> requests{0}, queries{0}, batches{0};
  std::array<std::atomic<int64_t>, 16> batch_requests{};
  std::array<std::atomic<int64_t>, 32> latency_us{};
  std::atomic<int64_t> submit_ns{0}, wait_ns{0}, finish_ns{0};  // server_stats::host_*_ns

  int64_t n() const { return ring; }
  server_slot& slot(uint64_t t) { return slots[size_t(core::ring_slot_of(t, n()))]; }

  // Sets up the ring of `slots` slots at `memory` (ticket i may start in slot i).
  void init_ring(server_slot* memory, int64_t count) {
    slots = memory;
    ring = count;
    released = std::make_unique<std::atomic<uint64_t>[]>(size_t(count));
    for (int64_t i = 0; i < count; ++i) released[size_t(i)].store(uint64_t(i));
  }

  // Takes a ticket, waits for its slot, calls fill(slot index, queries, out) (the staging of a
  // CUDA request; true when it wrote the slot's one in-slot query), writes the request and
  // publishes it. Throws only before the ticket is taken (a refused submission); fill must not
  // throw.
  template <class Fill>
  uint64_t publish(server_op op, int32_t s, int64_t count, uint64_t queries, uint64_t out, bool internal, Fill&& fill) {
    publishing.fetch_add(1, std::memory_order_seq_cst);
    if (!internal && closing.load(std::memory_order_seq_cst)) {
      publishing.fetch_sub(1, std::memory_order_seq_cst);
      throw invalid_argument("gsearch::server: the server is shut down");
    }
    const uint64_t t = tickets.fetch_add(1, std::memory_order_relaxed);
    server_slot& sl = slot(t);
    std::atomic<uint64_t>& free_from = released[size_t(core::ring_slot_of(t, n()))];
    wait_until([&] { return core::ring_free(free_from.load(std::memory_order_acquire), t); });
    const bool in_slot = fill(core::ring_slot_of(t, n()), queries, out);
    if (in_slot) host_access::store_release(&sl.query_tag, core::ring_ready_value(t));  // after sl.query
    sl.in_slot = uint16_t(in_slot);
    sl.op = int32_t(op);
    sl.side = int16_t(s);
    sl.count = count;
    sl.queries = queries;
    sl.out = out;
    host_access::store_release(&sl.ready, core::ring_ready_value(t));
    if (device) {  // a kernel that left the device while idle: launched again (server_kernel.cuh's release)
      std::atomic_thread_fence(std::memory_order_seq_cst);  // the slot written, before the state word read
      device->wake();
    }
    publishing.fetch_sub(1, std::memory_order_seq_cst);
    return t;
  }
  uint64_t publish(server_op op, int32_t s, int64_t count, uint64_t queries, uint64_t out, bool internal = false) {
    return publish(op, s, count, queries, out, internal, [](int64_t, uint64_t&, uint64_t&) { return false; });
  }
  bool answered(uint64_t t) { return core::ring_answered(host_access::load_acquire(&slot(t).done), t, n()); }
  // Waits for ticket t's answer; true when it was served (false: the server had failed). On
  // the GPU, a wait that lasts checks now and then that the kernel still runs: a CUDA error
  // ends it, and then nothing will answer.
  bool wait(uint64_t t) {
    if (!device) {
      wait_until([&] { return answered(t); });
    } else {  // spin for answer_spin, then yield, then nap; the kernel checked now and then
      const auto start = std::chrono::steady_clock::now();
      auto check = start + kernel_check;
      for (uint32_t i = 1; !answered(t); ++i) {
        spin_pause();
        if (i % 64 != 0) continue;  // the clock every 64 polls
        const auto now = std::chrono::steady_clock::now();
        if (now >= check) {
          if (!device->running()) dead.store(true);
          check = now + kernel_check;
        }
        if (dead.load()) break;
        if (now - start < answer_spin) continue;
        if (now - start < 4 * answer_spin)
          std::this_thread::yield();
        else
          std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
    if (dead.load() && !answered(t)) return false;
    return !core::ring_failed<host_access>(&failed_from, t);
  }
  // Ticket t's owner is done with its slot: the next ticket there may take it.
  void release(uint64_t t) {
    released[size_t(core::ring_slot_of(t, n()))].store(t + uint64_t(n()), std::memory_order_release);
  }
  std::string failure() {
    std::string why = device ? device->error() : std::string();
    return "gsearch::server: the server failed" + (why.empty() ? std::string() : ": " + why) +
           " (this and every later request fail; shut it down)";
  }

  // The loop: batches in ticket order until the stop request.
  void run() {
    uint64_t tail = 0;
    for (;;) {
      int64_t taken = 0;
      wait_until([&] {
        taken = core::ring_batch<host_access>(slots, n(), tail, options.max_batch_requests,
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
          taken = core::ring_batch<host_access>(slots, n(), tail, options.max_batch_requests,
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
        core::ring_answer<host_access>(slots, n(), t, failed && op == server_op::search, &failed_from);
        if (op == server_op::stop) return;
      }
      tail += uint64_t(taken);
    }
  }
};

namespace {

void check_options(const server_options& options) {
  if (options.ring_slots < 1 || options.max_batch_requests < 1 || options.max_batch_queries < 1 ||
      options.preferred_batch_queries < 0 || options.max_delay.count() < 0)
    throw invalid_argument("gsearch::server: ring_slots, max_batch_requests and max_batch_queries must be >= 1, "
                           "preferred_batch_queries and max_delay >= 0");
  if (options.blocks < 0 || options.staging_queries < 1 || options.idle_sleep.count() < 0 ||
      options.idle_release.count() < 0)
    throw invalid_argument("gsearch::server: blocks must be >= 0, staging_queries >= 1, idle_sleep and "
                           "idle_release >= 0");
}

}  // namespace

template <class T>
server<T>::server(const cpu_t& exec, span<const T> keys, const server_options& options)
    : state_(std::make_unique<state>()) {
  check_options(options);
  check_keys(keys, "gsearch::server");
  state& st = *state_;
  st.options = options;
  st.exec = options.threads > 0 ? exec.with_threads(options.threads) : exec;
  st.cpu_slots.resize(size_t(options.ring_slots));
  for (int64_t i = 0; i < options.ring_slots; ++i) st.cpu_slots[size_t(i)].done = uint64_t(i);  // ticket i may start
  st.init_ring(st.cpu_slots.data(), options.ring_slots);
  st.keys = new std::vector<T>(keys.data(), keys.data() + keys.size());
  st.key_count.store(keys.size());
  st.loop = std::thread([&st] { st.run(); });
}

template <class T>
server<T>::server(const cuda_t& exec, span<const T> keys, const server_options& options)
    : state_(std::make_unique<state>()) {
  check_options(options);
  state& st = *state_;
  st.options = options;
  on_backend(exec, [&](CUstream_st* stream) {
    cuda_backend::device_server_config c;
    c.ring_slots = options.ring_slots;
    c.max_batch_requests = options.max_batch_requests;
    c.max_batch_queries = options.max_batch_queries;
    c.preferred_batch_queries = options.preferred_batch_queries;
    c.max_delay_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options.max_delay).count();
    c.idle_sleep_ns = options.idle_sleep.count();
    c.staging_queries = options.staging_queries;
    c.blocks = options.blocks;
    c.release_ns = options.idle_release.count();
    st.device = cuda_backend::start_device_server<T>(stream, keys.data(), keys.size(), c);
  });
  st.init_ring(st.device->slots(), options.ring_slots);
  st.key_count.store(keys.size());
}

template <class T>
server<T>::~server() {
  if (state_->made.forked()) {
    // A fork child's copy: its loop (kernel) is the parent's, which a stop request here would
    // never reach (the CPU ring is a copy) or would reach in memory CUDA does not share with a
    // child; its thread object names a thread the child does not have. Leave it all as it is.
    (void)state_.release();
    return;
  }
  shutdown();
  delete state_->keys;
}

template <class T>
void server<T>::shutdown() {
  state& st = *state_;
  st.made.check("gsearch::server::shutdown", "server");
  // Callers one at a time: two threads must not join the loop at once. A later caller (the
  // destructor after a shutdown that threw) joins what is left.
  std::lock_guard<std::mutex> once(st.shutting);
  if (st.closing.exchange(true)) {
    if (st.loop.joinable()) st.loop.join();
    return;
  }
  // No submitter is between its ticket and its publication once `publishing` reads 0 after
  // `closing` is set (both seq_cst): the stop ticket is then the last.
  wait_until([&] { return st.publishing.load(std::memory_order_seq_cst) == 0; });
  const uint64_t t = st.publish(server_op::stop, 0, 0, 0, 0, true);
  st.wait(t);
  st.release(t);
  if (st.loop.joinable()) st.loop.join();
  if (st.device) st.device->join();
}

template <class T>
typename server<T>::request server<T>::submit(span<const T> queries, side s, span<int64_t> out) {
  state_->made.check("gsearch::server::search", "server");
  if (out.size() != queries.size())
    throw invalid_argument("gsearch::server::search: out has " + std::to_string(out.size()) + " elements for " +
                           std::to_string(queries.size()) + " queries");
  if (s != side::left && s != side::right && s != side::pred)
    throw invalid_argument("gsearch::server::search: unknown side");
  if (queries.size() > 0 && (queries.data() == nullptr || out.data() == nullptr))
    throw invalid_argument("gsearch::server::search: null data with a non-zero size");
  state& st = *state_;
  const auto start = std::chrono::steady_clock::now();
  uint64_t q = reinterpret_cast<uint64_t>(queries.data()), o = reinterpret_cast<uint64_t>(out.data());
  if (!st.device) {
    request r(this, st.publish(server_op::search, int32_t(s), queries.size(), q, o), queries.size());
    r.start_ = start;
    r.published_ = std::chrono::steady_clock::now();
    return r;
  }
  // CUDA: queries and out where the kernel reaches them, in place or through the slot's staging.
  cuda_backend::device_server<T>& dev = *st.device;
  const void* dq = nullptr;
  const void* dout = nullptr;
  const cuda_backend::server_memory q_memory = dev.where(queries.data(), &dq);
  const bool stage_q = q_memory == cuda_backend::server_memory::pageable;
  const cuda_backend::server_memory out_memory = dev.where(out.data(), &dout);
  const bool stage_out = out_memory == cuda_backend::server_memory::pageable;
  const int64_t piece = stage_q || stage_out ? dev.staging_queries() : std::max<int64_t>(queries.size(), 1);
  // One query from host memory, answered into host memory, travels in its slot and is answered
  // there (server_slot::in_slot): the kernel sees it in one PCIe round trip and answers it with
  // one store; the answer is copied out here.
  const bool in_slot = queries.size() == 1 && q_memory != cuda_backend::server_memory::device &&
                       out_memory != cuda_backend::server_memory::device;
  std::shared_lock<std::shared_mutex> whole(st.pieces, std::defer_lock);
  if (queries.size() > piece) whole.lock();
  for (int64_t begin = 0;;) {  // one request, or the pieces of a staged one larger than the staging
    const int64_t count = std::min(piece, queries.size() - begin);
    const bool last = begin + count >= queries.size();
    int64_t slot = 0;
    const uint64_t t = st.publish(server_op::search, int32_t(s), count, 0, 0, false,
                                  [&](int64_t sl, uint64_t& qa, uint64_t& oa) {
                                    slot = sl;
                                    if (in_slot) {
                                      server_slot& target = st.slots[sl];
                                      target.query = 0;
                                      std::memcpy(&target.query, queries.data(), sizeof(T));
                                      qa = dev.slot_device_address(sl) + offsetof(server_slot, query);
                                      oa = dev.slot_device_address(sl) + offsetof(server_slot, answer);
                                      return true;
                                    }
                                    if (stage_q) {
                                      std::memcpy(dev.staged_queries(sl), queries.data() + begin, size_t(count) * sizeof(T));
                                      qa = dev.staged_queries_device(sl);
                                    } else {
                                      qa = reinterpret_cast<uint64_t>(static_cast<const T*>(dq) + begin);
                                    }
                                    oa = stage_out ? dev.staged_out_device(sl)
                                                   : reinterpret_cast<uint64_t>(static_cast<const int64_t*>(dout) + begin);
                                    return false;
                                  });
    request r(this, t, count);
    r.start_ = start;
    r.published_ = std::chrono::steady_clock::now();
    r.counted_ = last ? queries.size() : -1;
    if (in_slot) {
      r.staged_ = reinterpret_cast<const int64_t*>(&st.slots[slot].answer);
      r.out_ = out.data();
    } else if (stage_out) {
      r.staged_ = dev.staged_out(slot);
      r.out_ = out.data() + begin;
    }
    if (last) return r;
    r.wait();
    begin += count;
  }
}

template <class T>
void server<T>::search(span<const T> queries, side s, span<int64_t> out) {
  submit(queries, s, out).wait();
}

template <class T>
void server<T>::replace_keys(span<const T> keys) {
  state& st = *state_;
  st.made.check("gsearch::server::replace_keys", "server");
  if (st.closing.load()) throw invalid_argument("gsearch::server: the server is shut down");
  if (st.device) {
    const std::lock_guard<std::mutex> lock(st.replacing);
    const uint64_t payload = st.device->prepare_keys(keys.data(), keys.size());  // checks the order
    uint64_t t;
    {
      const std::unique_lock<std::shared_mutex> between(st.pieces);  // not amid a request's pieces
      t = st.publish(server_op::replace_keys, 0, 0, payload, 0);
    }
    const bool served = st.wait(t);
    st.release(t);
    if (!served) throw error(st.failure());
    st.device->keys_replaced();
    st.key_count.store(keys.size());
    return;
  }
  check_keys(keys, "gsearch::server::replace_keys");
  auto fresh = std::make_unique<std::vector<T>>(keys.data(), keys.data() + keys.size());
  const uint64_t t = st.publish(server_op::replace_keys, 0, 0, reinterpret_cast<uint64_t>(fresh.get()), 0);
  fresh.release();  // the loop owns it from its publication (and frees the set it replaces)
  st.wait(t);
  st.release(t);
}

template <class T>
server_stats server<T>::stats() const {
  state_->made.check("gsearch::server::stats", "server");
  server_stats s;
  s.requests = state_->requests.load();
  s.queries = state_->queries.load();
  s.batches = state_->batches.load();
  for (size_t i = 0; i < s.batch_requests.size(); ++i) s.batch_requests[i] = state_->batch_requests[i].load();
  if (state_->device)  // the kernel counts its own batches
    (void)state_->device->kernel_counts(s);
  for (size_t i = 0; i < s.latency_us.size(); ++i) s.latency_us[i] = state_->latency_us[i].load();
  s.host_submit_ns = state_->submit_ns.load();
  s.host_wait_ns = state_->wait_ns.load();
  s.host_finish_ns = state_->finish_ns.load();
  return s;
}

template <class T>
int64_t server<T>::size() const {
  state_->made.check("gsearch::server::size", "server");
  return state_->key_count.load(std::memory_order_relaxed);
}

template <class T>
bool server<T>::on_device() const {
  state_->made.check("gsearch::server::on_device", "server");
  return state_->device != nullptr;
}

template <class T>
server<T>::request::request(server* owner, uint64_t ticket, int64_t queries)
    : owner_(owner), ticket_(ticket), queries_(queries), counted_(queries) {}

template <class T>
server<T>::request::request(request&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), ticket_(other.ticket_), queries_(other.queries_),
      staged_(other.staged_), out_(other.out_), counted_(other.counted_), start_(other.start_),
      published_(other.published_), waited_(other.waited_) {}

template <class T>
server<T>::request::~request() {
  if (!owner_ || waited_ || owner_->state_->made.forked()) return;  // a fork child's copy: nothing will answer
  try {  // the server writes into the caller's output: wait for it
    wait();
  } catch (...) {
  }
}

template <class T>
bool server<T>::request::ready() const {
  if (owner_) owner_->state_->made.check("gsearch::server::request::ready", "server");
  return !owner_ || waited_ || owner_->state_->answered(ticket_);
}

template <class T>
void server<T>::request::wait() {
  if (!owner_ || waited_) return;
  typename server<T>::state& st = *owner_->state_;
  st.made.check("gsearch::server::request::wait", "server");
  const bool served = st.wait(ticket_);
  const auto seen = std::chrono::steady_clock::now();
  if (served && staged_) std::memcpy(out_, staged_, size_t(queries_) * sizeof(int64_t));
  st.release(ticket_);
  waited_ = true;
  const auto end = std::chrono::steady_clock::now();
  if (counted_ >= 0) {  // a caller's request (its pieces are counted once, with the last)
    const auto ns = [](auto d) { return int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()); };
    st.requests.fetch_add(1, std::memory_order_relaxed);
    st.queries.fetch_add(counted_, std::memory_order_relaxed);
    st.latency_us[size_t(log2_bucket(uint64_t(ns(end - start_) / 1000), 32))].fetch_add(1, std::memory_order_relaxed);
    st.submit_ns.fetch_add(ns(published_ - start_), std::memory_order_relaxed);
    st.wait_ns.fetch_add(ns(seen - published_), std::memory_order_relaxed);
    st.finish_ns.fetch_add(ns(end - seen), std::memory_order_relaxed);
  }
  if (!served) throw error(st.failure());
}

#define GSEARCH_INSTANTIATE_SERVER(T) template class server<T>;
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE_SERVER)
#undef GSEARCH_INSTANTIATE_SERVER

}  // namespace gsearch
