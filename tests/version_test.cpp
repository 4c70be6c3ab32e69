// gsearch::build_info(): the version and the source commit every result names.

#include <gtest/gtest.h>

#include <cstring>
#include <regex>
#include <string>

#include "gsearch/gsearch.hpp"

TEST(BuildInfo, NamesItsCommitAndBackends) {
  const auto b = gsearch::build_info();
  EXPECT_STREQ(b.version, GSEARCH_TEST_PROJECT_VERSION);
  const std::string commit = b.commit;
  EXPECT_TRUE(std::regex_match(commit, std::regex("[0-9a-f]{7,40}")) || commit == "unknown") << commit;
  EXPECT_EQ(b.cuda, bool(GSEARCH_HAS_CUDA));
}
