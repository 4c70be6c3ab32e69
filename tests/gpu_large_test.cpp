// More than 2^31 queries on the GPU (label `large`: run on the GPU machine only): the grid-stride
// loop's 64-bit indexing and the int32 output path at full size.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gsearch/gsearch.hpp"

namespace gsearch {
namespace {

TEST(GpuLarge, MoreThan2To31Queries) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  const int64_t k = 4096, n = (int64_t(1) << 31) + 4099;
  std::vector<int32_t> keys(k);
  for (int64_t i = 0; i < k; ++i) keys[i] = int32_t(2 * i);  // even keys
  std::vector<int32_t> queries(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) queries[j] = int32_t(j % (2 * k + 3)) - 1;  // -1 .. 2k+1
  device_vector<int32_t> d_keys{span<const int32_t>(keys)}, d_queries{span<const int32_t>(queries)};
  device_vector<int32_t> d_out(n);
  for (algorithm a : {algorithm::auto_, algorithm::binary}) {
    upper_bound(cuda, d_keys, d_queries, d_out, {a, false});
    std::vector<int32_t> out(static_cast<size_t>(n));
    d_out.copy_to(span<int32_t>(out));
    int64_t bad = 0, first_bad = -1;
    for (int64_t j = 0; j < n; ++j) {
      const int32_t q = queries[j];
      const int32_t want = q < 0 ? 0 : (q >= 2 * int32_t(k) ? int32_t(k) : q / 2 + 1);
      if (out[j] != want && bad++ == 0) first_bad = j;
    }
    EXPECT_EQ(bad, 0) << to_string(a) << ": first wrong result at query " << first_bad;
  }
}

}  // namespace
}  // namespace gsearch
