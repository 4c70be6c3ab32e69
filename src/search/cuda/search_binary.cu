// Instantiates the binary search kernels for every key and output type (one algorithm per
// translation unit keeps nvcc's work parallel and incremental).
#include "search/cuda/search_kernel.cuh"
#include "search/cuda/search_rows_kernel.cuh"

namespace gsearch::cuda_backend {
GSEARCH_INSTANTIATE_LAUNCH_SEARCH(algorithm::binary)
GSEARCH_INSTANTIATE_LAUNCH_SEARCH_ROWS(algorithm::binary)
}  // namespace gsearch::cuda_backend
