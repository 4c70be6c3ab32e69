// Every core header compiles with a plain C++ compiler (no nvcc, no CUDA headers).
#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/bank_model.hpp"
#include "gsearch/core/config.hpp"
#include "gsearch/core/error.hpp"
#include "gsearch/core/fast_divide.hpp"
#include "gsearch/core/find.hpp"
#include "gsearch/core/join.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/merge_path.hpp"
#include "gsearch/core/padding.hpp"
#include "gsearch/core/pary.hpp"
#include "gsearch/core/pbs.hpp"
#include "gsearch/core/query_gen.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/core/static_index.hpp"

#include <gtest/gtest.h>

#if defined(__CUDACC__) || defined(__CUDA_RUNTIME_H__)
#error "core headers must not need CUDA"
#endif

TEST(CoreHeaders, CompileWithoutCuda) {
  static_assert(gsearch::warp_width == 32);
  EXPECT_EQ(gsearch::to_string(gsearch::algorithm::pbs_cl), "pbs-cl");
  EXPECT_EQ(gsearch::algorithm_from_string("pbs-cf"), gsearch::algorithm::pbs_cf);
  EXPECT_FALSE(gsearch::algorithm_from_string("nope").has_value());
}

TEST(CoreHeaders, CeilLog2) {
  EXPECT_EQ(gsearch::ceil_log2(0), 0);
  EXPECT_EQ(gsearch::ceil_log2(1), 0);
  EXPECT_EQ(gsearch::ceil_log2(2), 1);
  EXPECT_EQ(gsearch::ceil_log2(3), 2);
  EXPECT_EQ(gsearch::ceil_log2(1024), 10);
  EXPECT_EQ(gsearch::ceil_log2(1025), 11);
}
