// server_bench's host machinery: the kinds of memory and their buffers, the inputs, the
// percentiles, the threads that submit together, and the server of the run's device.

#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>

#include "server_bench.hpp"

namespace gsearch::bench::server_bench {

// ---- memory -----------------------------------------------------------------------------------

const char* mem_name(mem m) {
  switch (m) {
    case mem::pageable: return "pageable";
    case mem::host: return "host";
    case mem::pinned: return "pinned";
    case mem::device: return "device";
  }
  return "?";
}

mem mem_from(const std::string& s) {
  for (const mem m : {mem::pageable, mem::host, mem::pinned, mem::device})
    if (s == mem_name(m)) return m;
  throw std::invalid_argument("unknown memory kind " + s);
}

buffer::buffer(mem m, size_t bytes) : m_(m) {
  bytes = std::max<size_t>(bytes, 64);
  switch (m) {
    case mem::pageable:
    case mem::host:
      // Cache-line aligned and touched, so that the first request does not pay its page faults.
      p_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
      if (!p_) throw std::bad_alloc();
      std::memset(p_, 0, bytes);
      break;
    case mem::pinned:
      p_ = dev::pinned_alloc(bytes);
      std::memset(p_, 0, bytes);
      break;
    case mem::device: p_ = device_malloc(bytes); break;
  }
}

buffer::buffer(buffer&& o) noexcept : m_(o.m_), p_(std::exchange(o.p_, nullptr)) {}

buffer::~buffer() {
  if (!p_) return;
  switch (m_) {
    case mem::pageable:
    case mem::host: std::free(p_); break;
    case mem::pinned: dev::pinned_free(p_); break;
    case mem::device: device_free(p_); break;
  }
}

void buffer::upload(const void* src, size_t bytes) {
  if (m_ == mem::device) copy_to_device(p_, src, bytes);
  else std::memcpy(p_, src, bytes);
}

void buffer::download(void* dst, size_t bytes) const {
  if (m_ == mem::device) copy_to_host(dst, p_, bytes);
  else std::memcpy(dst, p_, bytes);
}

thread_buffers& buffers_of(buffer_set& set, mem kind) {
  for (auto& [m, b] : set)
    if (m == kind) return b;
  throw std::logic_error(std::string("server_bench: no buffers in ") + mem_name(kind) + " memory");
}

// ---- inputs -----------------------------------------------------------------------------------

template <class T>
inputs<T> make_inputs(int64_t k, int64_t pool_n, uint64_t seed) {
  using host::word;
  inputs<T> in;
  in.k = k;
  // gen::random_value of splitmix64{seed}'s outputs, computed in parallel, then sorted on all
  // cores: gen::sorted_keys<T>(k, seed) without its one-thread std::sort (minutes at 2^27).
  in.keys = host::generate<T>(k, [&](int64_t i) {
    const uint64_t z = word(seed, uint64_t(i));
    if constexpr (std::is_floating_point_v<T>) return T(double(z >> 11) * 0x1.0p-53 * 2e6 - 1e6);
    else return T(z);
  });
  merge_sort(cpu, span<const T>(in.keys), span<T>(in.keys));
  in.pool = host::generate<T>(pool_n, [&](int64_t i) {
    const uint64_t z = word(seed + 1, uint64_t(i));
    return in.keys[size_t(uint64_t((unsigned __int128)z * uint64_t(k) >> 64))];
  });
  in.expected.resize(static_cast<size_t>(pool_n));
  search(cpu, side::right, span<const T>(in.keys), span<const T>(in.pool), span<int64_t>(in.expected));
  return in;
}
template inputs<float> make_inputs<float>(int64_t, int64_t, uint64_t);
template inputs<int32_t> make_inputs<int32_t>(int64_t, int64_t, uint64_t);

// ---- percentiles ------------------------------------------------------------------------------

percentiles summarize_ns(std::vector<double> ns) {
  percentiles p;
  p.n = int64_t(ns.size());
  if (ns.empty()) return p;
  std::sort(ns.begin(), ns.end());
  // Nearest rank: the smallest value with at least a fraction q of the samples at or below it.
  auto at = [&](double q) {
    const auto rank = int64_t(std::ceil(q * double(ns.size())));
    return ns[size_t(std::clamp<int64_t>(rank - 1, 0, p.n - 1))] * 1e-3;
  };
  p.p50 = at(0.5);
  p.p90 = at(0.9);
  p.p99 = at(0.99);
  p.p999 = at(0.999);
  p.max = ns.back() * 1e-3;
  double sum = 0;
  for (const double x : ns) sum += x;
  p.mean = sum / double(ns.size()) * 1e-3;
  return p;
}

// ---- threads ----------------------------------------------------------------------------------

double run_threads(int n, const std::function<void(int)>& body, const std::function<void()>& meanwhile) {
  std::latch ready(n + 1);
  std::exception_ptr failure;
  std::mutex failure_lock;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t)
    pool.emplace_back([&, t] {
      ready.arrive_and_wait();
      try {
        body(t);
      } catch (...) {
        std::lock_guard<std::mutex> g(failure_lock);
        if (!failure) failure = std::current_exception();
      }
    });
  ready.arrive_and_wait();
  const auto start = clock_type::now();
  if (meanwhile) meanwhile();
  for (auto& th : pool) th.join();
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  if (failure) std::rethrow_exception(failure);
  return seconds;
}

// ---- the server -------------------------------------------------------------------------------

server_options runner::base_options() const {
  server_options o;
  o.blocks = a.blocks;
  if (a.idle_release_us >= 0) o.idle_release = std::chrono::nanoseconds(int64_t(a.idle_release_us * 1e3));
  return o;
}

template <class T>
std::unique_ptr<server<T>> runner::start_server(const inputs<T>& in, const T* keys_dev, server_options o) const {
  if (!a.on_cuda()) return std::make_unique<server<T>>(cpu, span<const T>(in.keys), o);
#if GSEARCH_HAS_CUDA
  return std::make_unique<server<T>>(cuda, span<const T>(keys_dev, in.k), o);
#else
  (void)keys_dev;
  throw std::runtime_error("server_bench: built without CUDA (--device cpu only)");
#endif
}
template std::unique_ptr<server<float>> runner::start_server<float>(const inputs<float>&, const float*,
                                                                    server_options) const;
template std::unique_ptr<server<int32_t>> runner::start_server<int32_t>(const inputs<int32_t>&, const int32_t*,
                                                                        server_options) const;

std::vector<mem> runner::latency_memory() const {
  std::vector<mem> out;
  for (const std::string& s : a.memory) out.push_back(mem_from(s));
  return out;
}

std::vector<mem> runner::throughput_memory() const {
  std::vector<mem> out;
  for (const std::string& s : a.throughput_memory) out.push_back(mem_from(s));
  return out;
}

}  // namespace gsearch::bench::server_bench
