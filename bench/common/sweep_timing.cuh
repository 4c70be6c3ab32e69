#pragma once
// The timing of the launch-configuration sweeps (rows_sweep, find_sweep, merge_sweep): CUDA
// events around one launch on the default stream, warm-up runs first, the median of the timed
// runs (timing.hpp's summarize).

#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

#include "timing.hpp"

namespace gsearch::bench {

/// The median time of `launch` in ms; `before_each` (if set) runs before each timed launch,
/// outside the events (find_sweep evicts the data from L2 there).
template <class F>
double time_ms(F&& launch, int warmup = 2, int repeat = 10, void (*before_each)() = nullptr) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    if (before_each) before_each();
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  if (cudaGetLastError() != cudaSuccess) throw std::runtime_error("CUDA error while timing");
  return summarize(t).median;
}

}  // namespace gsearch::bench
