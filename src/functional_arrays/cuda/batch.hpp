#pragma once
/// \file
/// A batch of lookups on one version of a GPU functional-arrays machine (either form), served on
/// the device (src/functional_arrays/cuda/batch.cu): the version's pieces are found in one pass
/// over the cells (core::fa_holds), sorted by index (cub's radix sort of the cells' keys, the
/// pieces the version does not see keyed last), and each lookup is a binary search of them, a
/// thread a lookup. The indices and the results may be in host or device memory (device memory:
/// no copy). What the persistent kernel's SMs leave runs it.

#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/functional_arrays.hpp"

namespace gsearch::cuda_backend {

/// found[k] = whether idx[k] is defined in the version whose open is *open (device memory),
/// values[k] its value (V{} when not); the cells' home in device memory; on `stream`, waited for.
template <class V>
void fa_batch_lookup(cudaStream_t stream, const int64_t* index, const core::fa_span* spans, const V* cell_values,
                     int64_t cells, const int64_t* open, const int64_t* idx, int64_t n, V* values, uint8_t* found);

}  // namespace gsearch::cuda_backend
