// The CUDA backend of the search server (src/server/cuda.hpp): what the
// persistent kernel of server_kernel.cuh reads, and its launch. docs/design.md, "The search
// server".

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <string>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/static_index.hpp"
#include "cuda/check.cuh"
#include "cuda/pinned_pool.hpp"
#include "gsearch/detail_placed_memory.hpp"
#include "search/backend.hpp"
#include "server/cuda.hpp"
#include "server/cuda/server_kernel.cuh"
#include "static_index/backend.hpp"
#include "cuda/stream_buffer.cuh"
#include "search/tuning.hpp"

namespace gsearch::cuda_backend {
namespace {

using gsearch::detail::placed_memory;  // the owner of the server's device memory

// The grid's blocks search as the static index's kernel does (index_search_tile), 4 queries a
// thread in lockstep (index_config.items), in blocks of 512 threads rather than the one-shot
// kernel's 1,024: a persistent block of 1,024 threads at 64 registers holds a whole SM's
// registers, and then no other kernel (not even the index build of a replace_keys) could run
// on the SMs the server holds. Block 0's own path serves up to 512 queries.
constexpr int server_threads = 512;
constexpr int server_items = index_config.items;
// The index levels each block stages: 32 KB, where the one-shot search takes 96-160 KB. A
// persistent block keeps its shared memory for good; with 32 KB (and 512 threads, 32K
// registers) an SM the server holds still has room for most other kernels' blocks. The search
// of a large batch reads one level more from L2.
constexpr int64_t server_shared_bytes = 32 * 1024;

template <class T>
class cuda_server final : public device_server<T> {
 public:
  static constexpr int B = core::cuda_node_keys<T>;

  cuda_server(CUstream_st* order, const T* keys, int64_t n, const device_server_config& config) : config_(config) {
    try {
      start(order, keys, n);
    } catch (...) {
      release();
      throw;
    }
  }
  ~cuda_server() override { release(); }

  core::server_slot* slots() override { return slots_; }
  uint64_t slot_device_address(int64_t slot) override { return slots_device_ + uint64_t(slot) * sizeof(core::server_slot); }

  server_memory where(const void* p, const void** device_address) override {
    cudaPointerAttributes a{};
    if (p == nullptr || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      (void)cudaGetLastError();  // an unknown pointer is ordinary host memory
      return server_memory::pageable;
    }
    if (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) {
      *device_address = a.devicePointer ? a.devicePointer : p;
      return server_memory::device;
    }
    if (a.type == cudaMemoryTypeHost && a.devicePointer) {
      *device_address = a.devicePointer;
      return server_memory::pinned;
    }
    return server_memory::pageable;
  }

  int64_t staging_queries() const override { return config_.staging_queries; }
  T* staged_queries(int64_t slot) override { return staging_queries_ + slot * config_.staging_queries; }
  int64_t* staged_out(int64_t slot) override { return staging_out_ + slot * config_.staging_queries; }
  uint64_t staged_queries_device(int64_t slot) override { return device_address(staged_queries(slot)); }
  uint64_t staged_out_device(int64_t slot) override { return device_address(staged_out(slot)); }

  uint64_t prepare_keys(const T* keys, int64_t n) override {
    next_ = build(keys, n, "gsearch::server::replace_keys");
    *payload_ = next_.keys;
    return device_address(payload_);
  }

  void keys_replaced() override {
    current_ = std::move(next_);
    next_ = {};  // the old layout (a move assignment swaps), freed in stream order
  }

  // The next ticket's submitter, after it published and fenced (src/server/server.cpp): the
  // kernel runs, or sees the ticket, or is leaving or has left, when this thread launches it
  // again (server_kernel.cuh's release). Under mutex_: one launch, and running() never sees the
  // state word's server_running before the launch it announces.
  void wake() override {
    if (state_word().load(std::memory_order_seq_cst) == server_running) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return;
    const uint64_t s = settled_state();
    if (s == server_leaving) {  // the kernel ended without leaving (a poisoned context)
      ended_ = true;
      error_ = "the kernel ended while leaving the device: " + error_text(cudaStreamQuery(stream_));
      return;
    }
    if (s != server_left) return;
    state_word().store(server_running, std::memory_order_relaxed);
    const auto t0 = std::chrono::steady_clock::now();
    const cudaError_t e = launch();
    relaunch_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count(),
                           std::memory_order_relaxed);
    launches_.fetch_add(1, std::memory_order_relaxed);
    if (e != cudaSuccess) {  // nothing will answer: running() says so, with why
      (void)cudaGetLastError();
      ended_ = true;
      error_ = "launching the kernel again: " + error_text(e);
    }
  }

  bool running() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return false;
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaErrorNotReady) return true;
    // Ended: released while idle (wake launches it again), else stopped or failed.
    if (e == cudaSuccess && settled_state() == server_left) return true;
    ended_ = true;
    if (e != cudaSuccess) error_ = error_text(e);
    return false;
  }

  std::string error() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return error_;
  }

  void join() override {
    const cudaError_t e = cudaStreamSynchronize(stream_);
    const std::lock_guard<std::mutex> lock(mutex_);
    ended_ = true;
    if (e != cudaSuccess && error_.empty()) error_ = error_text(e);
  }

  int64_t size() const override { return current_.keys.ref.shape.n; }

  bool kernel_counts(gsearch::server_stats& s) override {
    // A copy on the side stream, which never waits for the kernel (valid after it ended too,
    // until release()); false when the copy fails (a poisoned context).
    constexpr size_t first = offsetof(server_control<T>, batches);
    static_assert(offsetof(server_control<T>, batch_requests) == first + sizeof(int64_t) &&
                      offsetof(server_control<T>, timed_batches) == first + 17 * sizeof(int64_t) &&
                      offsetof(server_control<T>, serve_cycles) == first + 19 * sizeof(int64_t),
                  "the counts in a row");
    int64_t counts[20] = {};
    if (!control_ ||
        cudaMemcpyAsync(counts, control_.data<const char>() + first, sizeof counts, cudaMemcpyDeviceToHost,
                        side_) != cudaSuccess ||
        cudaStreamSynchronize(side_) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    s.batches = counts[0];
    std::memcpy(s.batch_requests.data(), counts + 1, 16 * sizeof(int64_t));
    s.kernel_timed_batches = counts[17];
    s.kernel_take_cycles = counts[18];
    s.kernel_serve_cycles = counts[19];
    s.kernel_clock_khz = clock_khz_;
    s.kernel_launches = launches_.load(std::memory_order_relaxed);
    s.kernel_relaunch_ns = relaunch_ns_.load(std::memory_order_relaxed);
    return true;
  }
  int blocks() const override { return blocks_; }

 private:
  struct index {  // a layout (the stream-ordered pool's, on side_) and what the kernel is told of it
    placed_memory layout;
    server_keys<T> keys{};
  };

  static constexpr auto kernel = server_kernel<T, server_threads, server_items>;

  // The kernel's state word (server_kernel.cuh), after the ring in its pinned block.
  std::atomic_ref<uint64_t> state_word() { return std::atomic_ref<uint64_t>(*state_); }

  // The state word once it is not server_leaving, or server_leaving when the kernel has ended
  // and it still says so (under mutex_). The leader decides within a read of the ring over
  // PCIe; the word is read again after the stream says the kernel ended, since its last store
  // (server_left) may be seen after that.
  uint64_t settled_state() {
    for (uint32_t i = 1;; ++i) {
      const uint64_t s = state_word().load(std::memory_order_acquire);
      if (s != server_leaving || (i % 1024 == 0 && cudaStreamQuery(stream_) != cudaErrorNotReady &&
                                  state_word().load(std::memory_order_acquire) == server_leaving))
        return state_word().load(std::memory_order_acquire);
    }
  }

  // What error() says of a CUDA error: its name and its text.
  static std::string error_text(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
  }

  cudaError_t launch() {
    void* args[] = {&params_};
    return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(unsigned(blocks_)),
                                       dim3(server_threads), args, size_t(shared_bytes_), stream_);
  }

  uint64_t device_address(void* host) {
    void* d = nullptr;
    GSEARCH_CUDA_CHECK(cudaHostGetDevicePointer(&d, host, 0));
    return reinterpret_cast<uint64_t>(d);
  }

  // Throws invalid_argument unless the n keys (device or host memory) are sorted.
  void check_sorted(const T* keys, int64_t n, const char* what) {
    const void* device = nullptr;
    bool sorted = true;
    if (where(keys, &device) == server_memory::device) {
      sorted = is_sorted(side_, keys, n);
    } else {
      for (int64_t i = 1; i < n && sorted; ++i) sorted = !key_less(keys[i], keys[i - 1]);
    }
    if (!sorted) throw invalid_argument(std::string(what) + ": the keys are not sorted (in gsearch's order)");
  }

  // The index of the n sorted keys, built on the side stream (which it waits for).
  index build(const T* keys, int64_t n, const char* what) {
    if (n < 0 || (n > 0 && keys == nullptr)) throw invalid_argument(std::string(what) + ": null keys with a non-zero size");
    check_sorted(keys, n, what);
    const core::static_index_shape<B> shape(n);
    index ix;
    ix.layout = placed_memory::device_ordered(size_t(shape.size()) * sizeof(T), side_);
    T* layout = ix.layout.template data<T>();
    const void* device = nullptr;
    if (n > 0 && where(keys, &device) == server_memory::device) {
      index_build(side_, keys, n, layout);
    } else if (n > 0) {  // host keys: through a device copy
      const stream_buffer copy(side_, size_t(n) * sizeof(T));
      GSEARCH_CUDA_CHECK(cudaMemcpyAsync(copy.get(), keys, size_t(n) * sizeof(T), cudaMemcpyHostToDevice, side_));
      index_build(side_, static_cast<const T*>(copy.get()), n, layout);
    } else {
      index_build(side_, keys, 0, layout);
    }
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(side_));
    ix.keys.ref = static_index_device_ref<T>{layout, shape};
    ix.keys.shared_level = index_shared_level<B, T>(shape, shared_bytes_);
    return ix;
  }

  void start(CUstream_st* order, const T* keys, int64_t n) {
    const device_limits dev = current_device_limits();
    GSEARCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    GSEARCH_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    {  // the build after the caller's work on `order`
      cudaEvent_t e;
      GSEARCH_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      const cudaError_t r1 = cudaEventRecord(e, order);
      const cudaError_t r2 = r1 == cudaSuccess ? cudaStreamWaitEvent(side_, e, 0) : r1;
      cudaEventDestroy(e);
      GSEARCH_CUDA_CHECK(r2);
    }
    // Shared memory: the staged levels, as much as the static index's search takes (or what the
    // device leaves beside the kernel's own), fixed for the server's life: a later key set
    // stages the levels that fit it.
    const int64_t room = dev.max_shared_per_block - static_shared_bytes(reinterpret_cast<const void*>(kernel), dev);
    shared_bytes_ = server_shared_bytes < room ? server_shared_bytes : room;
    allow_dynamic_shared(reinterpret_cast<const void*>(kernel), shared_bytes_, dev);
    int per_sm = 0;
    GSEARCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, server_threads, size_t(shared_bytes_)));
    blocks_ = config_.blocks > 0 ? config_.blocks : (dev.sms + 1) / 2;
    GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz_, cudaDevAttrClockRate, dev.device));  // server_stats
    if (blocks_ > per_sm * dev.sms)
      throw invalid_argument("gsearch::server: blocks = " + std::to_string(blocks_) + " cannot all be resident (at most " +
                             std::to_string(per_sm * dev.sms) + " on this device)");

    current_ = build(keys, n, "gsearch::server");
    // What a replace_keys launches beside the running kernel, launched once now: under CUDA's
    // lazy module loading, the first launch of a kernel waits for every running kernel to end
    // (docs/design.md, "The search server"), and this one never ends by itself.
    (void)is_sorted(side_, current_.layout.template data<const T>(), core::static_index_shape<B>(n).size());
    const int64_t slots = config_.ring_slots;
    ring_block_ = pinned_acquire(size_t(slots + 1) * sizeof(core::server_slot));  // the slots, the state word
    slots_ = static_cast<core::server_slot*>(ring_block_.p);
    std::memset(static_cast<void*>(slots_), 0, size_t(slots + 1) * sizeof(core::server_slot));
    state_ = reinterpret_cast<uint64_t*>(slots_ + slots);  // server_running
    for (int64_t i = 0; i < slots; ++i) slots_[i].done = uint64_t(i);  // ticket i may start
    const size_t staged = size_t(slots) * size_t(config_.staging_queries);
    staging_block_ = pinned_acquire(staged * (sizeof(T) + sizeof(int64_t)) + sizeof(server_keys<T>));
    staging_out_ = static_cast<int64_t*>(staging_block_.p);  // 8-byte aligned first, then the queries
    staging_queries_ = reinterpret_cast<T*>(staging_out_ + staged);
    payload_ = reinterpret_cast<server_keys<T>*>(staging_queries_ + staged);
    // Device memory from the stream-ordered pool, freed with cudaFreeAsync: cudaFree would wait
    // for every kernel of the device, another server's included.
    control_ = placed_memory::device_ordered(sizeof(server_control<T>), side_);
    requests_ =
        placed_memory::device_ordered(size_t(config_.max_batch_requests) * sizeof(server_request<T>), side_);
    server_control<T> c{};
    c.keys = current_.keys;
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(control_.get(), &c, sizeof c, cudaMemcpyHostToDevice, side_));
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(side_));

    server_params<T>& p = params_;
    slots_device_ = device_address(slots_);
    p.slots = reinterpret_cast<core::server_slot*>(slots_device_);
    p.ring_slots = slots;
    p.control = control_.data<server_control<T>>();
    p.requests = requests_.data<server_request<T>>();
    p.max_batch_requests = config_.max_batch_requests;
    p.max_batch_queries = config_.max_batch_queries;
    p.preferred_batch_queries = config_.preferred_batch_queries;
    p.max_delay_ns = config_.max_delay_ns;
    p.idle_sleep_ns = config_.idle_sleep_ns;
    p.state = reinterpret_cast<uint64_t*>(device_address(state_));
    p.release_ns = config_.release_ns;
    GSEARCH_CUDA_CHECK(launch());
    launches_ = 1;
    launched_ = true;
  }

  // Frees everything once the kernel has ended (or was never launched). With a kernel still
  // running (its owner could not stop it) the memory it reads is left alone.
  void release() noexcept {
    placed_memory* device_memory[] = {&current_.layout, &next_.layout, &control_, &requests_};
    if (launched_ && running()) {
      for (placed_memory* m : device_memory) m->abandon();
      return;
    }
    for (placed_memory* m : device_memory) m->reset();  // in stream order, on side_
    current_.keys = next_.keys = {};
    if (side_) cudaStreamSynchronize(side_);
    pinned_release(ring_block_);
    pinned_release(staging_block_);
    if (stream_) cudaStreamDestroy(stream_);
    if (side_) cudaStreamDestroy(side_);
    slots_ = nullptr;
    state_ = nullptr;
    staging_queries_ = nullptr;
    staging_out_ = nullptr;
    payload_ = nullptr;
    stream_ = side_ = nullptr;
  }

  device_server_config config_;
  cudaStream_t stream_ = nullptr;  // the kernel's
  cudaStream_t side_ = nullptr;    // builds and frees
  int blocks_ = 0;
  int clock_khz_ = 0;  ///< the device's clock rate (the kernel's times are in its cycles)
  int64_t shared_bytes_ = 0;
  bool launched_ = false;
  pinned_block ring_block_, staging_block_;  // the ring; the staging and the payload
  core::server_slot* slots_ = nullptr;
  uint64_t* state_ = nullptr;  // the kernel's state word (server_running, server_leaving, server_left)
  uint64_t slots_device_ = 0;  // the ring's device address
  server_params<T> params_{};  // the kernel's, for every launch
  std::atomic<int64_t> launches_{0};     // server_stats::kernel_launches
  std::atomic<int64_t> relaunch_ns_{0};  // server_stats::kernel_relaunch_ns
  T* staging_queries_ = nullptr;
  int64_t* staging_out_ = nullptr;
  server_keys<T>* payload_ = nullptr;
  placed_memory control_;   // server_control<T>, from the stream-ordered pool on side_
  placed_memory requests_;  // max_batch_requests server_request<T>, the same
  index current_, next_;
  std::mutex mutex_;
  bool ended_ = false;
  std::string error_;
};

}  // namespace

template <class T>
std::unique_ptr<device_server<T>> start_device_server(CUstream_st* order, const T* keys, int64_t n,
                                                      const device_server_config& config) {
  return std::make_unique<cuda_server<T>>(order, keys, n, config);
}

#define GSEARCH_CUDA_SERVER_INSTANTIATE(T) \
  template std::unique_ptr<device_server<T>> start_device_server<T>(CUstream_st*, const T*, int64_t, const device_server_config&);
GSEARCH_KEY_TYPES(GSEARCH_CUDA_SERVER_INSTANTIATE)
#undef GSEARCH_CUDA_SERVER_INSTANTIATE

}  // namespace gsearch::cuda_backend
