// The GPU's machine of functional arrays (src/functional_arrays/machine.hpp) in its launch
// form: the cells and the versions' opens in device memory, each operation a kernel on the
// machine's stream (core/functional_arrays.hpp's steps, one thread a cell and a version slot),
// the queries a fold into a word copied back. The default form is the persistent kernel
// (src/functional_arrays/cuda/persistent.cu); this one serves a machine whose persistent
// blocks would not fit beside the process's others, and options.persistent = false.
//
// An update does not report which of its two free cells it filled (that would be a copy back and
// a wait per update): the host counts both as used, and the sweep (collect) returns every free
// cell. items, collect and the checks bring the cells to the host (src/functional_arrays/host.hpp).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gsearch/core/key_traits.hpp"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "functional_arrays/cuda/copy.hpp"
#include "functional_arrays/cuda/batch.hpp"
#include "functional_arrays/cuda/functional_arrays_kernel.cuh"  // fa_order_key, fa_warp_fold
#include "gsearch/detail_placed_memory.hpp"
#include "gsearch/device.hpp"
#include "functional_arrays/host.hpp"
#include "functional_arrays/machine.hpp"

namespace gsearch::cuda_backend {
namespace {

using core::fa_span;
using gsearch::detail::placed_memory;

constexpr int fa_threads = 256;

/// What a query's fold leaves: lookup's found and value, size's count, next's least key.
template <class V>
struct fa_answer {
  unsigned long long found;
  unsigned long long count;
  unsigned long long least;  // next: the least index above i, as int64 ^ 2^63 (order-preserving)
  V value;
};

template <class V>
__global__ void fa_insert_kernel(int64_t* index, V* value, fa_span* spans, int64_t cells, int64_t* open,
                                 int64_t slots, int64_t parent, int64_t child, int32_t change, int64_t i, V v,
                                 int64_t remainder, int64_t fresh) {
  const int64_t p = open[parent];  // the parent's open: no thread changes it
  const int64_t n = cells > slots ? cells : slots;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += int64_t(gridDim.x) * blockDim.x) {
    // The two free cells are the carve's and the update's to fill, not to shift.
    if (t < cells && t != remainder && t != fresh) {
      fa_span s = spans[t];
      bool carved = false;
      const fa_span after = core::fa_insert_step(s, index[t], i, p, carved);
      spans[t] = s;
      if (carved && !core::fa_is_free(after)) {
        index[remainder] = i;
        value[remainder] = value[t];
        spans[remainder] = after;
      }
    }
    if (t == fresh && change == int32_t(core::fa_change::update)) {
      index[fresh] = i;
      value[fresh] = v;
      spans[fresh] = core::fa_child_span(p);
    }
    if (t < slots && t != parent) open[t] = t == child ? p + 1 : core::fa_shift_open(open[t], p);
  }
}

__global__ void fa_set_open_kernel(int64_t* open, int64_t slot, int64_t value) { open[slot] = value; }

template <class V>
__global__ void fa_query_kernel(const int64_t* index, const V* value, const fa_span* spans, int64_t cells,
                                const int64_t* open, int64_t slot, int64_t i, fa_answer<V>* out) {
  const int64_t at = open[slot];
  unsigned long long count = 0, least = ~0ull;
  bool above = false;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < cells; c += int64_t(gridDim.x) * blockDim.x) {
    const fa_span s = spans[c];
    if (core::fa_is_free(s) || !core::fa_holds(s, at)) continue;
    ++count;
    if (index[c] == i) {  // lookup: at most one piece of i holds the version
      out->value = value[c];
      atomicOr(&out->found, 1ull);  // bit 0; not a store: another warp may have set next's bit 1
    }
    if (index[c] > i) {
      above = true;
      least = least < fa_order_key(index[c]) ? least : fa_order_key(index[c]);
    }
  }
  fa_warp_fold(count, least, above);  // a warp's partial folds, then one atomic each (size: sum; next: min)
  if (threadIdx.x % 32 == 0) {
    if (count) atomicAdd(&out->count, count);
    if (above) {
      atomicMin(&out->least, least);
      atomicOr(&out->found, 2ull);  // bit 1: next found something
    }
  }
}

template <class V>
class cuda_machine final : public fa_gpu_machine<V> {
 public:
  cuda_machine(CUstream_st* stream, int64_t cells, int64_t slots)
      : stream_(stream), cells_(cells), slots_(slots), index_(stream, cells), value_(stream, cells),
        spans_(stream, cells), open_(stream, slots), answer_(stream, 1) {
    const std::vector<fa_span> free_cells(size_t(cells), core::fa_free_cell());
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(spans_.data(), free_cells.data(), size_t(cells) * sizeof(fa_span),
                                       cudaMemcpyHostToDevice, stream_));
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(open_.data(), 0, size_t(slots) * sizeof(int64_t), stream_));
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    // Every kernel this machine launches, loaded now: this form runs beside persistent machines,
    // and under CUDA's lazy loading a kernel's first launch beside one waits for it for ever.
    for (const void* k : {reinterpret_cast<const void*>(fa_insert_kernel<V>),
                          reinterpret_cast<const void*>(fa_set_open_kernel),
                          reinterpret_cast<const void*>(fa_query_kernel<V>)}) {
      cudaFuncAttributes a;
      GSEARCH_CUDA_CHECK(cudaFuncGetAttributes(&a, k));
    }
    const int64_t probe = 0;
    V value{};
    uint8_t found = 0;
    fa_batch_lookup(stream_, index_.data(), spans_.data(), value_.data(), cells_, open_.data(), &probe, 1, &value, &found);
  }

  int64_t cells() const override { return cells_; }
  int64_t version_slots() const override { return slots_; }

  void root(int64_t slot) override {
    launch(fa_set_open_kernel, 1, 1, 0, stream_, open_.data(), slot, core::fa_root_open(this->end_));
    this->end_ += 2;
  }

  int insert(int64_t parent, int64_t child, core::fa_change change, int64_t i, V v, int64_t remainder,
             int64_t fresh) override {
    launch(fa_insert_kernel<V>, blocks(std::max(cells_, slots_)), fa_threads, 0, stream_, index_.data(), value_.data(),
           spans_.data(), cells_, open_.data(), slots_, parent, child, int32_t(change), i, v, remainder,
           change == core::fa_change::update ? fresh : -1);
    this->end_ += 2;
    return change == core::fa_change::update ? 3 : 1;  // counted as used; the sweep returns the unused
  }

  std::optional<V> lookup(int64_t slot, int64_t i) override {
    const fa_answer<V> a = query(slot, i);
    return a.found & 1 ? std::optional<V>(a.value) : std::nullopt;
  }
  int64_t size(int64_t slot) override { return int64_t(query(slot, 0).count); }
  std::optional<int64_t> next(int64_t slot, int64_t i) override {
    const fa_answer<V> a = query(slot, i);
    return a.found & 2 ? std::optional<int64_t>(int64_t(a.least ^ (1ull << 63))) : std::nullopt;
  }

  bool lookup_many(int64_t slot, const int64_t* idx, int64_t n, V* values, uint8_t* found) override {
    fa_batch_lookup(stream_, index_.data(), spans_.data(), value_.data(), cells_, open_.data() + slot, idx, n, values,
                    found);
    return true;
  }


 private:

  static unsigned blocks(int64_t n) { return unsigned(std::min<int64_t>((n + fa_threads - 1) / fa_threads, 4096)); }

  fa_answer<V> query(int64_t slot, int64_t i) {
    fa_answer<V> init{};
    init.least = ~0ull;
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(answer_.data(), &init, sizeof init, cudaMemcpyHostToDevice, stream_));
    launch(fa_query_kernel<V>, blocks(cells_), fa_threads, 0, stream_, index_.data(), value_.data(), spans_.data(),
           cells_, open_.data(), slot, i, answer_.data());
    fa_answer<V> a{};
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&a, answer_.data(), sizeof a, cudaMemcpyDeviceToHost, stream_));
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return a;
  }

  detail::fa_host_copy<V> download() override {
    return fa_download(stream_, index_.data(), value_.data(), spans_.data(), open_.data(), cells_, slots_);
  }
  void upload_spans(const std::vector<fa_span>& spans) override {
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(spans_.data(), spans.data(), size_t(cells_) * sizeof(fa_span),
                                       cudaMemcpyHostToDevice, stream_));
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Device memory in stream order (the pool's, freed with cudaFreeAsync): cudaFree would wait for
  // every kernel of the device, a persistent machine's too, which never ends by itself.
  template <class T>
  struct array {
    array(cudaStream_t s, int64_t n)
        : memory(placed_memory::device_ordered(size_t(std::max<int64_t>(n, 1)) * sizeof(T), s)) {}
    T* data() const { return memory.data<T>(); }
    placed_memory memory;
  };

  cudaStream_t stream_;
  int64_t cells_, slots_;
  array<int64_t> index_;
  array<V> value_;
  array<fa_span> spans_;
  array<int64_t> open_;
  array<fa_answer<V>> answer_;
};

}  // namespace

template <class V>
std::unique_ptr<detail::functional_arrays_machine<V>> make_functional_arrays_machine(CUstream_st* stream, int64_t cells,
                                                                                  int64_t version_slots,
                                                                                  bool persistent, int blocks) {
  if (persistent)
    if (auto m = make_persistent_functional_arrays_machine<V>(stream, cells, version_slots, blocks)) return m;
  return std::make_unique<cuda_machine<V>>(stream, cells, version_slots);
}

#define GSEARCH_FA_CUDA_INSTANTIATE(V)                                                                  \
  template std::unique_ptr<detail::functional_arrays_machine<V>> make_functional_arrays_machine<V>( \
      CUstream_st*, int64_t, int64_t, bool, int);
GSEARCH_KEY_TYPES(GSEARCH_FA_CUDA_INSTANTIATE)
#undef GSEARCH_FA_CUDA_INSTANTIATE

}  // namespace gsearch::cuda_backend
