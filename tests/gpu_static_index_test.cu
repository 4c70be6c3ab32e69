// gsearch::static_index on the GPU (label `gpu`): the CPU test matrix again, built and searched on
// the device, every result against std::lower_bound / std::upper_bound and equal to the CPU
// index's; a stream; the device handle called from a kernel of this file (a user's kernel);
// algorithm::index through search(); the backend checks; the staged levels under the shared memory
// of smaller GPUs (the testing override). Skips visibly without a GPU.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuda/launch.hpp"
#include "gsearch/gsearch.hpp"
#include "static_index_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    GSEARCH_GPU_OR_SKIP();
  }
};

template <class T, class Out>
std::vector<int64_t> search_gpu_index(const static_index<T>& index, const cuda_t& exec, side s,
                                      const std::vector<T>& queries) {
  const auto d_queries = to_device(queries);
  device_vector<Out> d_out(int64_t(queries.size()));
  index.search(exec, s, span<const T>(d_queries), span<Out>(d_out));
  synchronize(exec);
  std::vector<Out> out(queries.size());
  d_out.copy_to(span<Out>(out));
  return {out.begin(), out.end()};
}

template <class T>
std::vector<int64_t> run_gpu_index(const std::vector<T>& keys, const std::vector<T>& queries, side s, bool out32) {
  const auto d_keys = to_device(keys);
  const static_index<T> index(cuda, span<const T>(d_keys), {/*check_sorted=*/true});
  EXPECT_TRUE(index.on_device());
  EXPECT_EQ(index.size(), int64_t(keys.size()));
  return out32 ? search_gpu_index<T, int32_t>(index, cuda, s, queries)
               : search_gpu_index<T, int64_t>(index, cuda, s, queries);
}

template <class T>
class GpuIndex : public Gpu {};
TYPED_TEST_SUITE(GpuIndex, KeyTypes);

TYPED_TEST(GpuIndex, MatchesStdAlgorithms) {
  run_index_matrix<TypeParam>(run_gpu_index<TypeParam>, 2048, test_seed());
}

// Many blocks over a tree with levels in shared memory and in global memory, on a stream: equal
// to the CPU index and to search() with algorithm::index.
TYPED_TEST(GpuIndex, ManyBlocksEqualCpu) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  for (int64_t k : {int64_t(5000), int64_t(1) << 20, (int64_t(1) << 21) + 3}) {
    const auto keys = gen::sorted_keys<T>(k, seed + uint64_t(k));
    const auto queries = gen::random_queries_from_keys(keys.data(), k, 1 << 20, seed);
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    const auto d_keys = to_device(keys);
    const static_index<T> index(cuda.on(stream), span<const T>(d_keys));
    const static_index<T> host_index(cpu, span<const T>(keys));
    for (side s : {side::left, side::right}) {
      const auto got = search_gpu_index<T, int64_t>(index, cuda.on(stream), s, queries);
      std::vector<int64_t> cpu_out(queries.size());
      host_index.search(cpu, s, span<const T>(queries), span<int64_t>(cpu_out));
      ASSERT_EQ(got, cpu_out) << "k=" << k << " side=" << side_name(s);
      ASSERT_EQ(got, reference_all(keys, queries, s)) << "k=" << k;
      const auto d_queries = to_device(queries);
      device_vector<int64_t> d_out(int64_t(queries.size()));
      search(cuda.on(stream), s, span<const T>(d_keys), span<const T>(d_queries), span<int64_t>(d_out),
             {algorithm::index, false});
      synchronize(cuda.on(stream));
      std::vector<int64_t> one_shot(queries.size());
      d_out.copy_to(span<int64_t>(one_shot));
      ASSERT_EQ(one_shot, cpu_out) << "algorithm::index, k=" << k;
    }
    ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  }
}

// A user's kernel: one query per thread through the handle.
template <class T>
__global__ void handle_kernel(static_index_device_ref<T> ref, const T* queries, int64_t n, int64_t* lower,
                              int64_t* upper, int64_t* pred) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  lower[j] = ref.lower_bound(queries[j]);
  upper[j] = ref.upper_bound(queries[j]);
  pred[j] = ref.predecessor(queries[j]);
}

TYPED_TEST(GpuIndex, DeviceHandleInUserKernel) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  for (int64_t k : {int64_t(0), int64_t(9), int64_t(100000)}) {
    for (const auto& [kname, keys] : key_sets<T>(k, seed)) {
      const auto queries = query_sets<T>(keys, 5000, seed).front().second;  // random, edges mixed in
      const auto d_keys = to_device(keys);
      const static_index<T> index(cuda, span<const T>(d_keys));
      EXPECT_THROW(index.host_ref(), invalid_argument);
      const auto d_queries = to_device(queries);
      const int64_t n = int64_t(queries.size());
      ASSERT_GT(n, 0);  // (a grid of 0 blocks is a failed launch)
      device_vector<int64_t> lower(n), upper(n), pred(n);
      // Poisoned (a value no result in [-1, k] has): the allocator may hand back the previous
      // case's buffers with its results in them, which a launch that failed would leave.
      for (int64_t* p : {lower.data(), upper.data(), pred.data()})
        ASSERT_EQ(cudaMemset(p, 0x5A, size_t(n) * sizeof(int64_t)), cudaSuccess);
      handle_kernel<<<int((n + 255) / 256), 256>>>(index.device_ref(), d_queries.data(), n, lower.data(),
                                                   upper.data(), pred.data());
      ASSERT_EQ(cudaGetLastError(), cudaSuccess) << kname << " k=" << k;
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << kname << " k=" << k;
      std::vector<int64_t> l(queries.size()), u(queries.size()), p(queries.size());
      lower.copy_to(span<int64_t>(l));
      upper.copy_to(span<int64_t>(u));
      pred.copy_to(span<int64_t>(p));
      ASSERT_EQ(l, reference_all(keys, queries, side::left)) << kname << " k=" << k;
      ASSERT_EQ(u, reference_all(keys, queries, side::right)) << kname << " k=" << k;
      ASSERT_EQ(p, reference_all(keys, queries, side::pred)) << kname << " k=" << k;
    }
  }
}

// The index's staged levels under the shared memory of smaller GPUs (the testing override): the
// 8-byte keys' budget of 160 KB is more than 99 or 48 KB, so the levels staged follow the
// device's limit. Before, a search of 8-byte keys asked for 160 KB wherever the device had less.
TYPED_TEST(GpuIndex, ForcedSmallerSharedMemoryMatchesStd) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const int64_t k = (int64_t(1) << (test_subset() ? 18 : 22)) + 5;
  const auto keys = gen::sorted_keys<T>(k, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), k, 1 << 16, seed + 1);
  const auto d_keys = to_device(keys);
  const auto d_queries = to_device(queries);
  const static_index<T> index(cuda, span<const T>(d_keys));
  device_vector<int64_t> d_out(int64_t(queries.size()));
  for (int64_t limit : {int64_t(166912), int64_t(101376), int64_t(49152)}) {
    const int64_t before = cuda_backend::shared_limit_override();
    cuda_backend::set_shared_limit_override(limit);
    for (side s : {side::left, side::pred}) {
      const auto want = reference_all(keys, queries, s);
      for (int form = 0; form < 2; ++form) {  // the kept index, then algorithm::index through search()
        ASSERT_EQ(cudaMemset(d_out.data(), 0x5A, queries.size() * sizeof(int64_t)), cudaSuccess);
        if (form == 0) {
          index.search(cuda, s, span<const T>(d_queries), span<int64_t>(d_out));
        } else {
          search(cuda, s, span<const T>(d_keys), span<const T>(d_queries), span<int64_t>(d_out), {algorithm::index});
        }
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        std::vector<int64_t> got(queries.size());
        d_out.copy_to(span<int64_t>(got));
        EXPECT_EQ(got, want) << limit / 1024 << " KB, form " << form << ", side " << side_name(s);
      }
    }
    cuda_backend::set_shared_limit_override(before);
  }
}

TEST_F(Gpu, IndexArgumentChecks) {
  const std::vector<float> keys{1, 2, 3}, unsorted{3, 2, 1}, q{1.5f, 2.5f};
  const auto d_keys = to_device(keys);
  const auto d_unsorted = to_device(unsorted);
  const auto d_q = to_device(q);
  EXPECT_THROW(static_index<float>(cuda, span<const float>(d_unsorted), {true}), invalid_argument);
  const static_index<float> index(cuda, span<const float>(d_keys));
  device_vector<int64_t> out(2);
  EXPECT_THROW(index.upper_bound(cpu, span<const float>(q), span<int64_t>(out)), invalid_argument);
  device_vector<int64_t> short_out(1);
  EXPECT_THROW(index.upper_bound(cuda, span<const float>(d_q), span<int64_t>(short_out)), invalid_argument);
  index.upper_bound(cuda, span<const float>(d_q), span<int64_t>(out));
  std::vector<int64_t> host(2);
  out.copy_to(span<int64_t>(host));
  EXPECT_EQ(host, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(index.node_keys(), core::cuda_node_keys<float>);
}

}  // namespace
}  // namespace gsearch::test
