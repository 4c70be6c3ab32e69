// gsearch::functional_arrays on the GPU (src/cuda/functional_arrays.cu): the header's example,
// a full machine, and the adversarial random mixes of functional_arrays_cases.hpp against the
// executable specification, every answer compared, for every value type at 16 to 8,192 cells
// (GSEARCH_FA_STEPS: steps per run; the 12.5 million operations are a run of these).

#include <gtest/gtest.h>

#include <cstdlib>

#include "functional_arrays_cases.hpp"
#include "gsearch/gsearch.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

TEST(GpuFunctionalArrays, HeaderExampleAndAFullMachine) {
  GSEARCH_GPU_OR_SKIP();
  functional_arrays<int64_t> fa(cuda, 64);
  fa_header_example(fa);
  // 4 cells: three pieces fit (no carves), a fourth update needs 2 free cells where 1 is.
  functional_arrays<double> small(cuda, 4);
  auto b = small.update(small.empty(), 1, 1.5);
  b = small.update(b, 2, 2.5);
  b = small.update(b, 3, 3.5);
  EXPECT_THROW(small.update(b, 4, 4.5), out_of_memory);
  EXPECT_EQ(small.lookup(b, 2), 2.5);
  EXPECT_EQ(small.lookup(b, 3), 3.5);
  EXPECT_EQ(small.size(b), 3);
  EXPECT_EQ(small.check(), "");
}

template <class V>
class GpuFunctionalArraysMix : public ::testing::Test {
 protected:
  void SetUp() override { GSEARCH_GPU_OR_SKIP(); }
};
TYPED_TEST_SUITE(GpuFunctionalArraysMix, KeyTypes);

TYPED_TEST(GpuFunctionalArraysMix, EqualsTheSpecification) {
  using V = TypeParam;
  const char* env = std::getenv("GSEARCH_FA_STEPS");
  const int64_t steps = env ? std::atoll(env) : test_subset() ? 300 : 2000;
  int64_t ops = 0;
  for (const int64_t cells : {int64_t(16), int64_t(64), int64_t(512), int64_t(8192)}) {
    for (const fa_mix& m : fa_mixes()) {
      functional_arrays<V> fa(cuda, cells);
      const std::string d = fa_replay(fa, m, steps, test_seed() + uint64_t(cells), &ops);
      ASSERT_EQ(d, "") << cells << " cells";
    }
  }
  std::printf("[ fa       ] %lld operations on the GPU equal to the specification\n", (long long)ops);
}

}  // namespace
}  // namespace gsearch::test
