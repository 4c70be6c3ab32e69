// search() and equal_range() with a sorter (numpy's sorter=) on the GPU (label `gpu`): the cases
// of sorter_cases.hpp through the CUDA backend (the gather kernel, its range check read on the
// host, then the search on the copy), sizes around the shared-memory boundary, a stream of its
// own, and a sorter larger than one grid. Skips visibly without a GPU.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "sorter_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T, class Out>
std::vector<int64_t> run_gpu_out(const cuda_t& exec, const std::vector<T>& keys, const std::vector<int64_t>& sorter,
                                 const std::vector<T>& queries, side s, bool equal, const search_options& options) {
  const device_vector<T> d_keys{span<const T>(keys)}, d_queries{span<const T>(queries)};
  const device_vector<int64_t> d_sorter{span<const int64_t>(sorter)};
  const device_vector<Out> d_out(int64_t(queries.size())), d_upper(int64_t(queries.size()));
  // Poisoned (0x5A bytes: no result has that value), so that a call that wrote nothing fails.
  for (const auto* d : {&d_out, &d_upper}) {
    if (d->size() > 0) {
      EXPECT_EQ(cudaMemset(d->data(), 0x5A, size_t(d->size()) * sizeof(Out)), cudaSuccess);
    }
  }
  const span<const T> k(d_keys), q(d_queries);
  if (equal)
    equal_range(exec, k, span<const int64_t>(d_sorter), q, span<Out>(d_out), span<Out>(d_upper), options);
  else
    search(exec, s, k, span<const int64_t>(d_sorter), q, span<Out>(d_out), options);
  synchronize(exec);
  std::vector<Out> out(queries.size()), upper(queries.size());
  d_out.copy_to(span<Out>(out));
  d_upper.copy_to(span<Out>(upper));
  std::vector<int64_t> r(out.begin(), out.end());
  if (equal) r.insert(r.end(), upper.begin(), upper.end());
  return r;
}

template <class T>
std::vector<int64_t> run_gpu(const std::vector<T>& keys, const std::vector<int64_t>& sorter,
                             const std::vector<T>& queries, side s, bool out32, bool equal,
                             const search_options& options) {
  return out32 ? run_gpu_out<T, int32_t>(cuda, keys, sorter, queries, s, equal, options)
               : run_gpu_out<T, int64_t>(cuda, keys, sorter, queries, s, equal, options);
}

template <class T>
class GpuSorter : public ::testing::Test {
 protected:
  void SetUp() override { GSEARCH_GPU_OR_SKIP(); }
};
TYPED_TEST_SUITE(GpuSorter, KeyTypes);

TYPED_TEST(GpuSorter, MatchesStdOnGatheredKeys) {
  using T = TypeParam;
  run_sorter_matrix<T>(run_gpu<T>, 300,
                       {algorithm::auto_, algorithm::pbs_cl, algorithm::binary, algorithm::index,
                        algorithm::partitioned, algorithm::pary, algorithm::merge},
                       test_seed());
}

TYPED_TEST(GpuSorter, ErrorsAndEdges) { run_sorter_errors<TypeParam>(run_gpu<TypeParam>); }

// A sorter of more indices than one grid's threads (plain_grid: grid-stride), on a stream of its
// own, an index out of range far into it: the least position is named, the output not written.
TYPED_TEST(GpuSorter, LargeOnStream) {
  using T = TypeParam;
  const int64_t k = test_subset() ? (int64_t{1} << 20) : (int64_t{1} << 23);
  std::vector<T> keys = gen::sorted_keys<T>(k, 11);
  std::vector<int64_t> sorter(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) sorter[size_t(i)] = k - 1 - i;
  std::reverse(keys.begin(), keys.end());
  const std::vector<T> queries = gen::random_queries_from_keys(keys.data(), k, 100000, 5);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const cuda_t exec = cuda.on(stream);
  EXPECT_EQ((run_gpu_out<T, int64_t>(exec, keys, sorter, queries, side::right, false, {})),
            reference_all(gathered(keys, sorter), queries, side::right));
  sorter[size_t(k - 3)] = -1;
  sorter[size_t(k - 2)] = k;
  try {
    run_gpu_out<T, int32_t>(exec, keys, sorter, queries, side::left, false, {});
    ADD_FAILURE() << "no error";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sorter[" + std::to_string(k - 3) + "]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace gsearch::test
