// P-ary search on the GPU (label `gpu`): cuda/pary_kernel.cuh's warp and block forms against
// std::lower_bound / std::upper_bound and the CPU form (core::pary_rank), for every key type's
// edge values, duplicates and sizes from 0 to 2^20. Skips visibly without a GPU.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "search/cuda/pary_kernel.cuh"
#include "gsearch/gsearch.hpp"
#include "search_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

// One query per warp (warps of a 128-thread block take queries blockIdx.x * 4 + warp) or one
// per block; lane 0 / thread 0 writes lower_bound and upper_bound.
template <class T>
__global__ void warp_kernel(const T* keys, int64_t k, const T* queries, int64_t n, int64_t* lower, int64_t* upper) {
  const int64_t j = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (j >= n) return;  // whole warps leave together
  const int64_t lo = cuda_backend::pary_warp_rank(keys, k, before<true, T>{queries[j]});
  const int64_t hi = cuda_backend::pary_warp_rank(keys, k, before<false, T>{queries[j]});
  if (threadIdx.x % 32 == 0) {
    lower[j] = lo;
    upper[j] = hi;
  }
}

template <class T>
__global__ void block_kernel(const T* keys, int64_t k, const T* queries, int64_t* lower, int64_t* upper) {
  const int64_t j = blockIdx.x;
  const int64_t lo = cuda_backend::pary_block_rank(keys, k, before<true, T>{queries[j]});
  const int64_t hi = cuda_backend::pary_block_rank(keys, k, before<false, T>{queries[j]});
  if (threadIdx.x == 0) {
    lower[j] = lo;
    upper[j] = hi;
  }
}

template <class T>
class GpuPAry : public ::testing::Test {
 protected:
  void SetUp() override {
    GSEARCH_GPU_OR_SKIP();
  }
};
TYPED_TEST_SUITE(GpuPAry, KeyTypes);

TYPED_TEST(GpuPAry, WarpAndBlockEqualStdBounds) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  for (int64_t k : {int64_t(0), int64_t(1), int64_t(32), int64_t(33), int64_t(1089), int64_t(100003), int64_t(1) << 20}) {
    for (const auto& [kname, keys] : key_sets<T>(k, seed + uint64_t(k))) {
      if (k > 5000 && kname != "random" && kname != "edge-values") continue;
      const auto queries = query_sets<T>(keys, 3000, seed).front().second;  // random, edge values mixed in
      const int64_t n = int64_t(queries.size());
      const auto d_keys = to_device(keys);
      const auto d_queries = to_device(queries);
      ASSERT_GT(n, 0);  // (a grid of 0 blocks is a failed launch)
      device_vector<int64_t> lower(n), upper(n);
      const auto want_lower = reference_all(keys, queries, side::left);
      const auto want_upper = reference_all(keys, queries, side::right);
      for (int form = 0; form < 3; ++form) {
        // The outputs serve every form: poisoned first (a value no rank in [0, k] has), so that a
        // form that writes nothing, or fails to launch, cannot pass on the previous form's results.
        ASSERT_EQ(cudaMemset(lower.data(), 0x5A, size_t(n) * sizeof(int64_t)), cudaSuccess);
        ASSERT_EQ(cudaMemset(upper.data(), 0x5A, size_t(n) * sizeof(int64_t)), cudaSuccess);
        if (form == 0) {
          warp_kernel<<<int((n + 3) / 4), 128>>>(d_keys.data(), k, d_queries.data(), n, lower.data(), upper.data());
        } else {
          const int lanes = form == 1 ? 256 : 1024;
          block_kernel<<<int(n), lanes>>>(d_keys.data(), k, d_queries.data(), lower.data(), upper.data());
        }
        ASSERT_EQ(cudaGetLastError(), cudaSuccess) << "launch of form " << form;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "form " << form;
        std::vector<int64_t> lo(queries.size()), hi(queries.size());
        lower.copy_to(span<int64_t>(lo));
        upper.copy_to(span<int64_t>(hi));
        ASSERT_EQ(lo, want_lower) << kname << " k=" << k << " form=" << form;
        ASSERT_EQ(hi, want_upper) << kname << " k=" << k << " form=" << form;
      }
    }
  }
}

}  // namespace
}  // namespace gsearch::test
