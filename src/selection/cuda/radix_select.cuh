#pragma once
/// \file
/// A select of up to radix_select_max_ranks ranks enqueued without waiting: the radix select of
/// core/radix_select.hpp (src/selection/cuda/radix_select.cu defines it; its kernels are in
/// radix_select_kernel.cuh). One block sorts a sample and places each rank's first range, then
/// a fixed chain of passes (one per 11 bits of the key, one more for a sample that missed) narrows
/// the ranges on the device; finish() waits once. The passes after the answer return at once.
///
/// The chain answers every input: only the first pass can miss (later ranges lie inside the one
/// the rank was found in), and each pass after it leaves a range at most 2^-11 of its width (the
/// bins of radix_range_of), so 32-bit keys close in 1 + 3 passes and 64-bit ones in 1 + 6, which
/// is radix_max_passes (core_radix_select_test's host driver checks it on every shape, a sample
/// that misses every rank and copies too small to hold). A caller that leaves the answer on the
/// device (select of one rank, the 1-D topk) therefore enqueues and returns without waiting;
/// finish() is for the host's copy of the answers.

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "cuda/stream_buffer.cuh"

namespace gsearch::cuda_backend {

template <class T>
class radix_select {
 public:
  /// Enqueues the select of ranks (ascending, distinct, in [0, n)) of data[0, n) on `stream`;
  /// nullopt, with nothing enqueued, for more than radix_select_max_ranks ranks or fewer than
  /// radix_select_min_n elements. `keep_first` (one rank, n < 2^32; ignored otherwise): the first
  /// pass's copy stays, each element's position beside it, for the caller to read in place of
  /// the data where it holds what the caller needs (first_holds). `count_nan` (floating-point
  /// keys): the first pass counts the data's NaNs too (finish), for quantile's NaN check.
  static std::optional<radix_select> enqueue(cudaStream_t stream, const T* data, int64_t n,
                                             const std::vector<int64_t>& ranks, bool keep_first = false,
                                             bool count_nan = false);

  /// Device addresses, for kernels enqueued after the select (topk's gather): the answers by
  /// rank, valid once the status (core::plan_status) is done; check it (plan_done) first.
  const T* values() const;
  const int32_t* status() const;
  /// By rank, the data's elements less than its answer (valid once done, as values()): where the
  /// answer's equal elements begin in the sorted data (partition's bucket bounds).
  const int64_t* less() const;

  /// The first pass's copy, where keep_first was granted (first_positions() not null): its
  /// elements (first_capacity() at most; their count in device memory) and their positions, and
  /// a flag in device memory, nonzero once the first pass has run if the copy holds every element
  /// at or above (top) or at or below the rank (the first range reached that end of the keys and
  /// neither missed nor overflowed).
  const T* first_values() const;
  const int64_t* first_positions() const;
  const int64_t* first_count() const;
  const int32_t* first_holds(bool top) const;
  int64_t first_capacity() const { return capacity_; }

  /// Waits for the stream; the answers by rank, or nullopt when the chain did not finish (it
  /// always does unless the chain is shortened: the caller then selects another way). With
  /// `nan_count`, the data's NaNs (enqueued with count_nan; else 0).
  std::optional<std::vector<T>> finish(int64_t* nan_count = nullptr);

 private:
  radix_select(cudaStream_t stream, stream_buffer memory, void* state, int r, int64_t capacity, bool kept)
      : stream_(stream), memory_(std::move(memory)), state_(state), r_(r), capacity_(capacity), kept_(kept) {}
  cudaStream_t stream_;
  stream_buffer memory_;
  void* state_;  // radix_select_state<T> in device memory, then the copy buffers, then the positions
  int r_;
  int64_t capacity_;
  bool kept_;
};

}  // namespace gsearch::cuda_backend
