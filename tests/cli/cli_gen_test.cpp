// `gsearch gen`: deterministic files, and two outputs that are one file.

#include "cli_fixture.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace cli_test {
namespace {

TEST_F(Cli, GenIsDeterministic) {
  ok("gen --keys 500 --queries 64 --dtype float64 --query-kind worst --seed 9 --keys-out k1.npy "
     "--queries-out q1.npy");
  const run_result r = ok(
      "gen --keys 500 --queries 64 --dtype float64 --query-kind worst --seed 9 --keys-out k2.npy "
      "--queries-out q2.npy");
  EXPECT_NE(r.err.find("gen: 500 sorted float64 keys -> k2.npy"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  ok("gen --keys 500 --queries 64 --dtype float64 --seed 10 --keys-out k3.npy --queries-out "
     "q3.npy");
  EXPECT_EQ(read_bytes(work("k1.npy")), read_bytes(work("k2.npy")));
  EXPECT_EQ(read_bytes(work("q1.npy")), read_bytes(work("q2.npy")));
  EXPECT_NE(read_bytes(work("k1.npy")), read_bytes(work("k3.npy")));
  const auto keys = npy::load<double>(work("k1.npy").string());
  EXPECT_EQ(keys.size(), 500u);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

TEST_F(Cli, GenRefusesTwoOutputsThatAreOneFile) {
  save("k.npy", std::vector<int32_t>{1, 2, 3, 4});  // an existing file, to be left alone
  fs::create_symlink("k.npy", work("link.npy"));
  fs::create_hard_link(work("k.npy"), work("hard.npy"));
  for (const std::string other : same_as_k) {
    fails("gen --keys 10 --queries 10 --keys-out k.npy --queries-out " + other, 1,
          "gsearch: error: --queries-out '" + other +
              "' is the same file as --keys-out 'k.npy': refusing to write two outputs to one "
              "file\n",
          false);
    fails("gen --keys 10 --queries 10 --queries-out k.npy --keys-out " + other, 1,
          "--queries-out 'k.npy' is the same file as --keys-out '" + other + "'", false);
  }
  // Neither file existing yet: the paths alone.
  fails("gen --keys 10 --queries 10 --keys-out new.npy --queries-out ../work/./new.npy", 1,
        "--queries-out '../work/./new.npy' is the same file as --keys-out 'new.npy'", false);
  EXPECT_FALSE(fs::exists(work("new.npy")));
}

}  // namespace
}  // namespace cli_test
