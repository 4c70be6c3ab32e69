#pragma once
/// \file
/// The select of many ranks on the device (core/many_select.hpp; many_select.cu defines it): a pass
/// a digit, the planner on the host between passes (one wait a pass), no sort of the data.

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace gsearch::cuda_backend {

/// The answers by rank, and by rank the data's elements less than its answer (where the answer's
/// equal elements begin in the sorted data: partition's bucket bounds).
template <class T>
struct many_answers {
  std::vector<T> values;
  std::vector<int64_t> less;
};

/// The select of `ranks` (ascending, distinct, in [0, n)) of data[0, n) on `stream`, waited for;
/// nullopt where the plan gives up (its tables past their room: 8-byte keys with thousands of
/// ranks) or for more than many_select_max_ranks ranks: the caller sorts.
template <class T>
std::optional<many_answers<T>> many_select(cudaStream_t stream, const T* data, int64_t n,
                                           const std::vector<int64_t>& ranks);

}  // namespace gsearch::cuda_backend
