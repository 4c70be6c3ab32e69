#pragma once
/// \file
/// A select of a few ranks enqueued without waiting: the planned levels of core/select_plan.hpp
/// (src/selection/cuda/select.cu defines it). Its answers and status stay in device memory, so kernels
/// enqueued after it can read them (topk's gather reads its threshold there); finish() waits
/// once and says whether the plan got there. A plan that gave up leaves garbage answers: a
/// kernel that reads them must check the status first (plan_done below), and the caller then
/// runs the host-driven select.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "gsearch/core/select_plan.hpp"
#include "cuda/stream_buffer.cuh"

namespace gsearch::cuda_backend {

template <class T>
class planned_select {
 public:
  /// Enqueues the select of ranks[0, r) (ascending, distinct, in [0, n); r <= core::plan_max_ranks)
  /// of data[0, n) on `stream`. nullopt, with nothing enqueued, when the host's first plan already
  /// gives up (too many splitters, dense brackets) or n fits one sample (select_in_block's case).
  /// keep_first: the first level's candidates stay (values and their positions in data) for
  /// kernels enqueued after it (first_values ...); later levels use other buffers.
  static std::optional<planned_select> enqueue(cudaStream_t stream, const T* data, int64_t n,
                                               const std::vector<int64_t>& ranks, bool keep_first = false);

  /// Device addresses: the answers by rank (valid once the status is done), and the status.
  const T* values() const { return member<T>(offsetof(core::select_level<T>, value)); }
  const int32_t* status() const { return member<int32_t>(offsetof(core::select_level<T>, status)); }

  /// With keep_first, device addresses: the first level's candidates, their positions, their
  /// count (after the chain), and whether every rank fell among them (after the chain); and, known
  /// at once on the host, whether the first level copies every element above its highest
  /// splitter (all of a largest top-k beyond the threshold) / below its lowest (smallest).
  const T* first_values() const { return first_values_; }
  int64_t first_capacity() const { return first_capacity_; }  ///< the most first_values can hold
  const int64_t* first_indices() const { return first_indices_; }
  const int64_t* first_count() const { return member<int64_t>(offsetof(core::select_level<T>, first_count)); }
  const int32_t* first_even() const { return member<int32_t>(offsetof(core::select_level<T>, first_even)); }
  bool first_holds_top() const { return holds_top_; }
  bool first_holds_bottom() const { return holds_bottom_; }

  /// Waits for the stream; the answers when every rank was answered, else nullopt.
  std::optional<std::vector<T>> finish();

 private:
  planned_select(cudaStream_t stream, stream_buffer memory, core::select_level<T>* plan, int r)
      : stream_(stream), memory_(std::move(memory)), plan_(plan), r_(r) {}
  template <class X>  // a member's device address (the plan is never dereferenced on the host)
  const X* member(size_t offset) const {
    return reinterpret_cast<const X*>(reinterpret_cast<const unsigned char*>(plan_) + offset);
  }
  cudaStream_t stream_;
  stream_buffer memory_;  // freed in stream order: kernels enqueued before the free may still read it
  core::select_level<T>* plan_;
  int r_;
  const T* first_values_ = nullptr;
  const int64_t* first_indices_ = nullptr;
  int64_t first_capacity_ = 0;
  bool holds_top_ = false, holds_bottom_ = false;
};

/// True in a kernel that reads a planned select's answers when they are valid (status null: not
/// from a plan, always valid).
__device__ inline bool plan_done(const int32_t* status) {
  return status == nullptr || *status == int32_t(core::plan_status::done);
}

}  // namespace gsearch::cuda_backend
