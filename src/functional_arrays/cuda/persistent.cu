// The GPU's machine of functional arrays in the issue's form: the persistent kernel of
// src/functional_arrays/cuda/functional_arrays_kernel.cuh, the cells in the shared memory of its blocks, the
// host posting each operation to a ring in mapped page-locked memory (seed 004's CPU/GPU
// dialogue) and waiting only for the answers it needs (a query's; an update returns at once).
// docs/design.md, "Functional arrays".
//
// A machine holds its blocks' SMs for its life (a block of 1,024 threads takes an SM's
// registers). The machines of a process share the device by a count of the SMs they hold: one
// that would not fit beside the others (or in fa_spare_sms less than the device) is made in the
// launch-per-operation form instead (src/functional_arrays/cuda/functional_arrays.cu), which always runs.

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gsearch/core/error.hpp"
#include "gsearch/core/key_traits.hpp"
#include "cuda/check.cuh"
#include "functional_arrays/cuda/copy.hpp"
#include "functional_arrays/cuda/batch.hpp"
#include "functional_arrays/cuda/functional_arrays_kernel.cuh"
#include "cuda/pinned_pool.hpp"
#include "cuda/launch.cuh"
#include "functional_arrays/host.hpp"
#include "functional_arrays/machine.hpp"
#include "gsearch/detail_placed_memory.hpp"

namespace gsearch::cuda_backend {
namespace {

using core::fa_span;
using gsearch::detail::placed_memory;

constexpr int fa_threads = 1024;
/// Cells a block takes when the machine chooses its blocks: one a thread, so that a pass is one
/// step of each thread and the grid barrier joins as few blocks as the cells allow. The block
/// sweeps at 8,192 cells (bench/results/h100/logs/issue23/8b-c2-6bd75b5 and 8a-c3-fc94a95,
/// `sweep.log`, before 61b6337's kernel): 1 block 5.69 us per operation, 2 4.27, 4 3.52-3.62,
/// 8 3.67-3.85, 16 3.62-3.96; 4 to 16 within the runs' noise, so one cell a thread stands.
constexpr int64_t fa_cells_per_block = 1024;
/// SMs a machine leaves to the rest of the device's work, whatever its size.
constexpr int fa_spare_sms = 2;
constexpr int64_t fa_ring_slots = 1024;
constexpr int64_t fa_idle_sleep_ns = 4000;

/// The SMs the process's persistent machines hold, by device.
std::mutex held_mutex;
std::map<int, int>& held_sms() {
  static auto* held = new std::map<int, int>;
  return *held;
}

/// What of a block's share lives in its shared memory, by priority: the cells (every operation
/// passes over them), the opens (every update shifts them), the values (a lookup's match reads
/// one); what does not fit stays in device memory, run by the same kernel.
struct fa_shared_plan {
  int64_t bytes = 0;
  bool cells = false, opens = false, values = false;
};

template <class V>
fa_shared_plan plan_shared(int64_t cells_per_block, int64_t slots_per_block, int64_t room) {
  fa_shared_plan plan;
  if (cells_per_block * fa_shared_cell_bytes > room) return plan;
  plan.cells = true;
  plan.bytes = cells_per_block * fa_shared_cell_bytes;
  if (plan.bytes + slots_per_block * int64_t(sizeof(int64_t)) <= room) {
    plan.opens = true;
    plan.bytes += slots_per_block * int64_t(sizeof(int64_t));
  }
  if (plan.bytes + cells_per_block * int64_t(sizeof(V)) <= room) {
    plan.values = true;
    plan.bytes += cells_per_block * int64_t(sizeof(V));
  }
  return plan;
}

template <class V>
class persistent_machine final : public fa_gpu_machine<V> {
 public:
  static constexpr auto kernel = fa_persistent_kernel<V, fa_threads>;

  persistent_machine(CUstream_st* order, int64_t cells, int64_t slots, int blocks, int device, fa_shared_plan plan)
      : cells_(cells), slots_(slots), blocks_(blocks), device_(device) {
    try {
      start(order, plan);
    } catch (...) {
      release();
      throw;
    }
  }
  ~persistent_machine() override {
    if (running_) {
      try {
        post(fa_code::stop, 0, 0, 0, 0, -1, -1);
      } catch (...) {  // a failed kernel: nothing to stop
      }
      cudaStreamSynchronize(kernel_stream_);  // the kernel has left (or failed)
      (void)cudaGetLastError();
      if (std::getenv("GSEARCH_FA_TRACE")) trace_windows();
    }
    release();
  }

  int64_t cells() const override { return cells_; }
  int64_t version_slots() const override { return slots_; }
  int persistent_blocks() const override { return blocks_; }

  void root(int64_t slot) override {
    post(fa_code::root, slot, core::fa_root_open(this->end_), 0, 0, -1, -1);
    this->end_ += 2;
  }

  int insert(int64_t parent, int64_t child, core::fa_change change, int64_t i, V v, int64_t remainder,
             int64_t fresh) override {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(V));
    const bool update = change == core::fa_change::update;
    const uint64_t t = post(update ? fa_code::update : fa_code::remove, parent, child, i, bits, remainder, update ? fresh : -1);
    this->end_ += 2;
    remainders_.push_back({t, remainder});
    return update ? 3 : 1;  // counted as used; the reply says later whether the remainder was filled
  }

  std::vector<int64_t> unfilled(bool wait) override {
    if (wait) sync();
    const uint64_t done = cuda::atomic_ref<uint64_t>(progress()->completed).load(cuda::memory_order_acquire);
    while (!remainders_.empty() && remainders_.front().ticket < done) learn_remainder();
    return std::exchange(unfilled_, {});
  }

  std::vector<int64_t> collect(span<const int64_t> live) override {
    std::vector<int64_t> free_cells = fa_gpu_machine<V>::collect(live);  // after every operation: its dump waited
    remainders_.clear();  // the sweep found the unfilled ones free
    unfilled_.clear();
    return free_cells;
  }

  std::optional<V> lookup(int64_t slot, int64_t i) override {
    const core::fa_result<V> r = ask(core::fa_query::lookup, slot, i);
    return r.found ? std::optional<V>(r.value) : std::nullopt;
  }
  int64_t size(int64_t slot) override { return ask(core::fa_query::size, slot, 0).number; }
  std::optional<int64_t> next(int64_t slot, int64_t i) override {
    const core::fa_result<V> r = ask(core::fa_query::next, slot, i);
    return r.found ? std::optional<int64_t>(r.number) : std::nullopt;
  }

  bool lookup_many(int64_t slot, const int64_t* idx, int64_t n, V* values, uint8_t* found) override {
    wait_done(post(fa_code::dump, 0, 0, 0, 0, -1, -1));  // the cells home, the opens current
    fa_batch_lookup(side_, index_, spans_, values_, cells_, open_ + slot, idx, n, values, found);
    return true;
  }


 private:

  fa_request* ring() const { return static_cast<fa_request*>(ring_block_.p); }
  fa_reply* replies() const { return reinterpret_cast<fa_reply*>(ring() + fa_ring_slots); }
  fa_progress* progress() const { return reinterpret_cast<fa_progress*>(replies() + fa_ring_slots); }

  // n T of device memory, owned by device_memory_, freed in release().
  template <class T>
  void allocate(T*& p, int64_t n) {
    device_memory_.push_back(placed_memory::device_ordered(size_t(std::max<int64_t>(n, 1)) * sizeof(T), side_));
    p = device_memory_.back().data<T>();
  }

  void start(CUstream_st* order, const fa_shared_plan& plan) {
    const device_limits dev = current_device_limits();
    GSEARCH_CUDA_CHECK(cudaStreamCreateWithFlags(&kernel_stream_, cudaStreamNonBlocking));
    GSEARCH_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    {  // after the caller's work on `order`
      cudaEvent_t e;
      GSEARCH_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      const cudaError_t r1 = cudaEventRecord(e, order);
      const cudaError_t r2 = r1 == cudaSuccess ? cudaStreamWaitEvent(side_, e, 0) : r1;
      cudaEventDestroy(e);
      GSEARCH_CUDA_CHECK(r2);
    }
    const int64_t cells_per_block = (cells_ + blocks_ - 1) / blocks_;
    const int64_t slots_per_block = (slots_ + blocks_ - 1) / blocks_;
    // Device memory from the stream-ordered pool, freed with cudaFreeAsync: cudaFree would wait
    // for every kernel of the device, another machine's or server's too.
    allocate(index_, cells_);
    allocate(spans_, cells_);
    allocate(values_, cells_);
    allocate(open_, slots_);
    allocate(queue_, fa_queue_slots);
    allocate(control_, 1);
    const std::vector<fa_span> free_cells(size_t(cells_), core::fa_free_cell());
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(spans_, free_cells.data(), size_t(cells_) * sizeof(fa_span), cudaMemcpyHostToDevice, side_));
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(index_, 0, size_t(cells_) * sizeof(int64_t), side_));
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(values_, 0, size_t(cells_) * sizeof(V), side_));
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(open_, 0, size_t(slots_) * sizeof(int64_t), side_));
    fa_control control{};
    for (fa_fold& f : control.fold) f.least = ~0ull;
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(control_, &control, sizeof control, cudaMemcpyHostToDevice, side_));
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(side_));

    ring_block_ = pinned_acquire(size_t(fa_ring_slots) * (sizeof(fa_request) + sizeof(fa_reply)) + sizeof(fa_progress));
    for (int64_t s = 0; s < fa_ring_slots; ++s) {  // a kept block holds an earlier machine's words
      ring()[s] = fa_request{};
      replies()[s] = fa_reply{};
    }
    *progress() = fa_progress{};
    void* ring_device = nullptr;
    GSEARCH_CUDA_CHECK(cudaHostGetDevicePointer(&ring_device, ring_block_.p, 0));

    fa_params<V> p{};
    p.ring = static_cast<const fa_request*>(ring_device);
    p.replies = reinterpret_cast<fa_reply*>(static_cast<fa_request*>(ring_device) + fa_ring_slots);
    p.progress = reinterpret_cast<fa_progress*>(p.replies + fa_ring_slots);
    p.ring_slots = fa_ring_slots;
    p.queue = queue_;
    p.control = control_;
    p.index = index_;
    p.spans = spans_;
    p.values = values_;
    p.cells = cells_;
    p.cells_per_block = cells_per_block;
    p.cells_in_shared = plan.cells;
    p.opens_in_shared = plan.opens;
    p.values_in_shared = plan.values;
    p.open = open_;
    p.slots = slots_;
    p.slots_per_block = slots_per_block;
    p.idle_sleep_ns = fa_idle_sleep_ns;
    allow_dynamic_shared(reinterpret_cast<const void*>(kernel), plan.bytes, dev);
    // The batch lookup's kernels (cub's sort of these many cells among them) loaded now: under
    // CUDA's lazy loading a kernel's first launch beside the running persistent kernel waited for
    // it for ever (the H100's first runs of the batch lookups).
    {
      const int64_t probe = 0;
      const auto d_probe = placed_memory::device_ordered(sizeof probe, side_);  // freed at the block's end
      GSEARCH_CUDA_CHECK(cudaMemcpyAsync(d_probe.get(), &probe, sizeof probe, cudaMemcpyHostToDevice, side_));
      V value{};
      uint8_t found = 0;
      fa_batch_lookup(side_, index_, spans_, values_, cells_, open_, d_probe.data<const int64_t>(), 1, &value, &found);
    }
    void* args[] = {&p};
    trace("launching the kernel");
    GSEARCH_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(unsigned(blocks_)),
                                                   dim3(fa_threads), args, size_t(plan.bytes), kernel_stream_));
    running_ = true;
    trace("the kernel launched");
  }

  void trace(const char* what) const {
    if (std::getenv("GSEARCH_FA_TRACE")) std::fprintf(stderr, "fa trace: %s (%d blocks)\n", what, blocks_);
  }

  void release() noexcept {
    if (side_) {
      device_memory_.clear();  // freed in stream order, on side_
      cudaStreamSynchronize(side_);
      cudaStreamDestroy(side_);
      side_ = nullptr;
    }
    if (kernel_stream_) {
      cudaStreamDestroy(kernel_stream_);
      kernel_stream_ = nullptr;
    }
    pinned_release(ring_block_);
    (void)cudaGetLastError();
    const std::lock_guard<std::mutex> lock(held_mutex);
    held_sms()[device_] -= blocks_;
    blocks_ = 0;
  }

  // GSEARCH_FA_TRACE: how many requests block 0 read per window (few: the kernel waited for the
  // host; fa_window: the host kept ahead of it).
  void trace_windows() {
    fa_control c{};
    if (cudaMemcpyAsync(&c, control_, sizeof c, cudaMemcpyDeviceToHost, side_) != cudaSuccess ||
        cudaStreamSynchronize(side_) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    std::fprintf(stderr, "fa trace: %llu requests in %llu windows (%.2f a window), %d blocks\n",
                 (unsigned long long)next_ticket_, c.windows, c.windows ? double(next_ticket_) / double(c.windows) : 0.0,
                 blocks_);
  }

  // Spins until the kernel has done ticket t (its progress passed it); a wait of more than a
  // second asks the kernel's stream now and then whether the kernel failed. Not under a CUDA
  // tool (compute-sanitizer sets CUDA_INJECTION64_PATH): there cudaStreamQuery waited for the
  // persistent kernel to end, which waited for the host (the H100's sanitizer runs hung there).
  void wait_done(uint64_t t) {
    cuda::atomic_ref<uint64_t> completed(progress()->completed);
    const auto t0 = std::chrono::steady_clock::now();
    auto told = t0;
    for (uint64_t spins = 0; completed.load(cuda::memory_order_acquire) <= t; ++spins) {
      if (spins % 4096 == 4095) {
        // GSEARCH_FA_TRACE: every 2 s of waiting (progress or a hang), where the kernel is.
        if (std::getenv("GSEARCH_FA_TRACE") && std::chrono::steady_clock::now() - told > std::chrono::seconds(2)) {
          told = std::chrono::steady_clock::now();
          std::fprintf(stderr, "fa trace: waiting for ticket %llu, completed %llu, posted %llu, blocks %d\n",
                       (unsigned long long)t, (unsigned long long)completed.load(), (unsigned long long)next_ticket_, blocks_);
        }
        if (under_tool_ || std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1)) continue;
        if (!queried_) trace("asking the kernel's stream whether it still runs (the first time)");
        queried_ = true;
        const cudaError_t e = cudaStreamQuery(kernel_stream_);
        if (e != cudaErrorNotReady) {
          running_ = false;
          (void)cudaGetLastError();
          throw error(std::string("gsearch::functional_arrays: the GPU machine's kernel ended (") +
                      (e == cudaSuccess ? "no error" : cudaGetErrorName(e)) + ")");
        }
      }
    }
  }

  // Posts one request; returns its ticket. Waits only for its ring slot's previous occupant
  // (ticket t - N done), keeping that one's answer first if it is a query nobody took yet.
  uint64_t post(fa_code code, int64_t a, int64_t b, int64_t i, uint64_t v, int64_t remainder, int64_t fresh) {
    if (!running_) throw error("gsearch::functional_arrays: the GPU machine's kernel is not running");
    const uint64_t t = next_ticket_;
    const int64_t s = core::ring_slot_of(t, fa_ring_slots);
    if (t >= uint64_t(fa_ring_slots)) {
      const uint64_t before = t - uint64_t(fa_ring_slots);
      wait_done(before);
      if (const auto it = pending_.find(before); it != pending_.end()) {
        taken_.emplace(before, result_of(it->second, replies()[s]));
        pending_.erase(it);
      }
      while (!remainders_.empty() && remainders_.front().ticket <= before) learn_remainder();
    }
    fa_request& r = ring()[s];
    r.code = int32_t(code);
    r.a = a;
    r.b = b;
    r.i = i;
    r.v = v;
    r.remainder = remainder;
    r.fresh = fresh;
    cuda::atomic_ref<uint64_t>(r.ready).store(core::ring_ready_value(t), cuda::memory_order_release);
    ++next_ticket_;
    return t;
  }

  static core::fa_result<V> result_of(core::fa_query q, const fa_reply& r) {
    core::fa_result<V> out;
    if (q == core::fa_query::lookup) {
      out.found = r.found & 1;
      if (out.found) std::memcpy(&out.value, &r.value, sizeof(V));
    } else if (q == core::fa_query::size) {
      out.found = true;
      out.number = int64_t(r.count);
    } else {
      out.found = r.found & 2;
      out.number = out.found ? int64_t(r.least ^ (1ull << 63)) : 0;
    }
    return out;
  }

 public:
  uint64_t post_query(core::fa_query q, int64_t slot, int64_t i) override {
    const fa_code code = q == core::fa_query::lookup ? fa_code::lookup : q == core::fa_query::size ? fa_code::size : fa_code::next;
    const uint64_t t = post(code, slot, 0, i, 0, -1, -1);
    pending_.emplace(t, q);
    return t;
  }
  core::fa_result<V> take(uint64_t t) override {
    if (const auto it = taken_.find(t); it != taken_.end()) {
      const core::fa_result<V> r = it->second;
      taken_.erase(it);
      return r;
    }
    const auto it = pending_.find(t);
    if (it == pending_.end()) throw invalid_argument("gsearch::functional_arrays::take: not a pending query's ticket");
    wait_done(t);
    const core::fa_result<V> r = result_of(it->second, replies()[core::ring_slot_of(t, fa_ring_slots)]);
    pending_.erase(it);
    return r;
  }
  void sync() override {
    if (next_ticket_ > 0) wait_done(next_ticket_ - 1);
  }

 private:
  // The oldest update's or remove's reply (done, its slot not reused yet): its remainder cell
  // back to the host's free list when the pass did not fill it.
  void learn_remainder() {
    const remainder_cell r = remainders_.front();
    remainders_.pop_front();
    if (!(replies()[core::ring_slot_of(r.ticket, fa_ring_slots)].found & 4)) unfilled_.push_back(r.cell);
  }

  // Posts a query and waits for its answer.
  core::fa_result<V> ask(core::fa_query q, int64_t slot, int64_t i) { return take(post_query(q, slot, i)); }

  // The cells (after a dump: the kernel wrote its shared cells home) and the opens.
  detail::fa_host_copy<V> download() override {
    wait_done(post(fa_code::dump, 0, 0, 0, 0, -1, -1));
    return fa_download(side_, index_, values_, spans_, open_, cells_, slots_);
  }
  void upload_spans(const std::vector<fa_span>& spans) override {
    GSEARCH_CUDA_CHECK(
        cudaMemcpyAsync(spans_, spans.data(), size_t(cells_) * sizeof(fa_span), cudaMemcpyHostToDevice, side_));
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(side_));
    post(fa_code::load, 0, 0, 0, 0, -1, -1);  // the blocks reread their cells; later operations come after it
  }

  int64_t cells_, slots_;
  int blocks_, device_;
  cudaStream_t kernel_stream_ = nullptr, side_ = nullptr;
  std::vector<placed_memory> device_memory_;  // the arrays below (allocate)
  int64_t* index_ = nullptr;
  fa_span* spans_ = nullptr;
  V* values_ = nullptr;
  int64_t* open_ = nullptr;
  fa_request* queue_ = nullptr;
  fa_control* control_ = nullptr;
  pinned_block ring_block_;
  bool running_ = false;
  bool queried_ = false;  // GSEARCH_FA_TRACE: said once
  const bool under_tool_ = std::getenv("CUDA_INJECTION64_PATH") != nullptr;
  uint64_t next_ticket_ = 0;
  std::unordered_map<uint64_t, core::fa_query> pending_;   // queries posted, not taken
  std::unordered_map<uint64_t, core::fa_result<V>> taken_;  // their answers, kept before their slot's reuse
  struct remainder_cell {
    uint64_t ticket;
    int64_t cell;
  };
  std::deque<remainder_cell> remainders_;  // updates' and removes' remainders, filled or not: not yet known
  std::vector<int64_t> unfilled_;          // known not filled, not yet given back
};

}  // namespace

/// The persistent machine, or null when its blocks would not fit beside the process's other
/// machines (the caller then makes the launch form). `blocks` 0: by the cells.
template <class V>
std::unique_ptr<detail::functional_arrays_machine<V>> make_persistent_functional_arrays_machine(
    CUstream_st* order, int64_t cells, int64_t slots, int blocks) {
  using machine = persistent_machine<V>;
  const device_limits dev = current_device_limits();
  const int usable = std::max(1, dev.sms - fa_spare_sms);
  if (blocks < 0) throw invalid_argument("gsearch::functional_arrays: blocks must be >= 0");
  if (blocks > usable)
    throw invalid_argument("gsearch::functional_arrays: blocks = " + std::to_string(blocks) + " (at most " +
                           std::to_string(usable) + " on this device: its SMs less " + std::to_string(fa_spare_sms) + ")");
  const int g = blocks > 0 ? blocks
                           : int(std::clamp<int64_t>((cells + fa_cells_per_block - 1) / fa_cells_per_block, 1, usable));
  // 8,192 cells over 8 blocks: everything in shared memory (48 KB a block with int64 values);
  // 2^20 cells over 130 blocks: the cells alone (193 KB of the 227 KB).
  const int64_t room = dev.max_shared_per_block - static_shared_bytes(reinterpret_cast<const void*>(machine::kernel), dev);
  const fa_shared_plan plan = plan_shared<V>((cells + g - 1) / g, (slots + g - 1) / g, room);
  if (blocks_per_sm(reinterpret_cast<const void*>(machine::kernel), fa_threads, plan.bytes, dev) < 1)
    throw error("gsearch::functional_arrays: the persistent kernel cannot run on this device");
  {
    const std::lock_guard<std::mutex> lock(held_mutex);
    int& held = held_sms()[dev.device];
    if (held + g > usable) return nullptr;
    held += g;
  }
  return std::make_unique<machine>(order, cells, slots, g, dev.device, plan);
}

#define GSEARCH_FA_PERSISTENT_INSTANTIATE(V)                                                                  \
  template std::unique_ptr<detail::functional_arrays_machine<V>> make_persistent_functional_arrays_machine<V>( \
      CUstream_st*, int64_t, int64_t, int);
GSEARCH_KEY_TYPES(GSEARCH_FA_PERSISTENT_INSTANTIATE)
#undef GSEARCH_FA_PERSISTENT_INSTANTIATE

}  // namespace gsearch::cuda_backend
