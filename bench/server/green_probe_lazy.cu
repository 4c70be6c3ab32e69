// green_probe's other module (a translation unit of its own: its own module, loaded at its first
// launch under CUDA_MODULE_LOADING=LAZY, as a library's kernels are).

#include <cuda_runtime.h>

namespace {

__global__ void lazy_kernel(unsigned* sink) {
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(sink, 0u);
}

}  // namespace

void launch_lazy_kernel(unsigned* sink, cudaStream_t stream) { lazy_kernel<<<1, 32, 0, stream>>>(sink); }
