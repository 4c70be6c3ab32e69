// The partitioned search on the GPU (label `gpu`): partition_kernel.cuh's pipeline with small
// buckets, windows and pieces, where the library's configuration (192 KB of keys a bucket) would
// leave the matrix's key lists in one bucket: one key per bucket; a few keys per bucket in
// windows of 97 queries, pieces of 50; buckets grown past max_buckets into global memory.
// search_cases.hpp's matrix, each result against std::lower_bound / std::upper_bound, and the
// CPU's partitioned search. Skips visibly without a GPU.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gsearch/cpu/search.hpp"
#include "gsearch/cuda/partition_kernel.cuh"
#include "gsearch/gsearch.hpp"
#include "search_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T>
class GpuPartitioned : public ::testing::Test {
 protected:
  void SetUp() override {
    GSEARCH_GPU_OR_SKIP();
  }
};
TYPED_TEST_SUITE(GpuPartitioned, KeyTypes);

template <class T, class Out>
std::vector<int64_t> run_partitioned(const std::vector<T>& keys, const std::vector<T>& queries, side s,
                                     const core::partition_config& cfg) {
  const auto d_keys = to_device(keys);
  const auto d_queries = to_device(queries);
  device_vector<Out> out(int64_t(queries.size()));
  const auto dev = cuda_backend::current_device_limits();
  const int offset = s == side::pred ? -1 : 0;
  const auto k = int64_t(keys.size()), n = int64_t(queries.size());
  if (s == side::left) {
    cuda_backend::launch_partitioned<true>(nullptr, offset, d_keys.data(), k, d_queries.data(), n, out.data(), dev, cfg);
  } else {
    cuda_backend::launch_partitioned<false>(nullptr, offset, d_keys.data(), k, d_queries.data(), n, out.data(), dev,
                                            cfg);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<Out> host(queries.size());
  out.copy_to(span<Out>(host));
  return {host.begin(), host.end()};
}

TYPED_TEST(GpuPartitioned, SmallBucketsMatchStdAndCpu) {
  using T = TypeParam;
  constexpr int64_t key = sizeof(T);
  for (const core::partition_config cfg : {core::partition_config{key, 1 << 14, 1 << 20, 4096},
                                           core::partition_config{5 * key, 1 << 14, 97, 50},
                                           core::partition_config{3 * key, 7, 1000, 333}}) {
    const Runner<T> run = [&](const std::vector<T>& keys, const std::vector<T>& queries, side s, algorithm,
                              bool out32) {
      auto got = out32 ? run_partitioned<T, int32_t>(keys, queries, s, cfg) : run_partitioned<T, int64_t>(keys, queries, s, cfg);
      std::vector<int64_t> on_cpu(queries.size());
      cpu_backend::partitioned_search(0, s, keys.data(), int64_t(keys.size()), queries.data(), int64_t(queries.size()),
                                      on_cpu.data(), cfg);
      EXPECT_EQ(got, on_cpu) << "GPU and CPU partitioned search differ, k=" << keys.size();
      return got;
    };
    run_search_matrix<T>(run, 2048, {algorithm::partitioned}, test_seed());
  }
}

// One small pipeline, all sides: 10,007 keys in buckets of 64 (157 buckets, every one staged),
// windows of 5,000 queries, pieces of 700; few enough launches for compute-sanitizer's racecheck
// (gpu_checks.sh runs it with GTEST_FILTER=*OneSmallPipeline*).
TYPED_TEST(GpuPartitioned, OneSmallPipelineMatchesStd) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const auto keys = gen::sorted_keys<T>(10007, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), int64_t(keys.size()), 12345, seed + 1);
  const core::partition_config cfg{64 * int64_t(sizeof(T)), 1 << 14, 5000, 700};
  for (side s : {side::left, side::right, side::pred}) {
    ASSERT_EQ((run_partitioned<T, int32_t>(keys, queries, s, cfg)), reference_all(keys, queries, s)) << "side " << int(s);
  }
}

// Buckets too large for shared memory (max_buckets 3 over 2^20 keys: 349,526 keys a bucket),
// searched in global memory; many blocks, every SM busy.
TYPED_TEST(GpuPartitioned, GlobalBucketsManyQueries) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const int64_t k = int64_t(1) << 20, n = (int64_t(1) << (test_subset() ? 16 : 21)) + 17;
  const auto keys = gen::sorted_keys<T>(k, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), k, n, seed + 1);
  for (side s : {side::left, side::right, side::pred}) {
    const auto got = run_partitioned<T, int64_t>(keys, queries, s, core::partition_config{1024, 3, 1 << 20, 32768});
    ASSERT_EQ(got, reference_all(keys, queries, s)) << "side " << int(s);
  }
}

}  // namespace
}  // namespace gsearch::test
