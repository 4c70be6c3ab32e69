// `gsearch conflicts`: the bank model's counts for PBS's worst case (the paper's), and the table.

#include "cli_fixture.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace cli_test {
namespace {

TEST_F(Cli, ConflictsPbsWorstCaseMatchesThePaper) {
  // K = 1024 4-byte keys, w = 32: the ten loop steps take w (log2 K - log2 w + 1) - 1 = 191
  // accesses per warp (1, 2, 4, 8, 16, then 32 five times), then the final comparison.
  for (const char* seed : {"1", "2", "3"}) {
    const run_result r =
        ok(std::string("conflicts --algo pbs --keys 1024 --key-bytes 4 --queries worst --side pred "
                       "--json --seed ") +
           seed);
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["steps"].size(), 11u);
    double sum = 0;
    for (int s = 0; s < 10; ++s) {
      EXPECT_EQ(j["steps"][s]["step"], s);
      sum += j["steps"][s]["accesses_per_warp"].get<double>();
    }
    EXPECT_EQ(sum, 191.0);
    EXPECT_EQ(j["algo"], "pbs");
    EXPECT_EQ(j["keys"], 1024);
    EXPECT_EQ(j["key_bytes"], 4);
    EXPECT_EQ(j["queries"], "worst");
    EXPECT_EQ(j["banks"], 32);
    EXPECT_EQ(j["bank_bytes"], 4);
    EXPECT_EQ(j["multicast"], true);
    EXPECT_EQ(j["warps"], 64);
    EXPECT_GE(j["max_accesses_per_warp"].get<double>(), j["accesses_per_warp"].get<double>());
    EXPECT_GT(j["conflicts_per_warp"].get<double>(), 100.0);
  }
  // PBS-CF on the same queries: no conflicts.
  const auto cf =
      nlohmann::json::parse(ok("conflicts --algo pbs-cf --keys 1024 --queries worst --json").out);
  EXPECT_EQ(cf["conflicts_per_warp"], 0.0);
  EXPECT_EQ(cf["steps"][0]["stage"], 1);
}

TEST_F(Cli, ConflictsTable) {
  const run_result r =
      ok("conflicts --algo pbs-cl --keys 5000 --key-bytes 8 --bank-bytes 8 --warps 4 "
         "--no-multicast --side left");
  EXPECT_NE(
      r.out.find(
          "conflicts: pbs-cl, 5000 int64 keys, random queries, side=left, 4 warps of 32 queries, "
          "32 banks of 8 bytes, multicast off"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("per warp: "), std::string::npos);
  EXPECT_NE(r.out.find("step"), std::string::npos);
}

}  // namespace
}  // namespace cli_test
