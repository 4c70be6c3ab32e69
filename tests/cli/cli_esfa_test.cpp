// `gsearch esfa gen` and `gsearch esfa run`: a generated stream replays equal to the
// specification (--verify), its results file holds what the stream asks, and bad streams, a
// machine too small and a wrong device fail naming the problem, with nothing written.

#include "cli_fixture.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cli_test {
namespace {

TEST_F(Cli, EsfaGenThenRunEqualsTheSpecification) {
  for (const std::string mix : {"paper", "chains", "fans", "sparse"}) {
    ok("esfa gen --out s.npy --ops 3000 --cells 64 --seed 4 --mix " + mix);
    const run_result r = ok("esfa run --ops s.npy --cells 64 --verify --json --out r.npy");
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["operations"], 3000) << mix;
    EXPECT_EQ(j["verified"], true) << mix;
    EXPECT_EQ(j["differences"], 0) << mix;
    EXPECT_GT(j["collections"].get<int64_t>(), 0) << mix;  // 64 cells, 3,000 operations: it swept
    EXPECT_GE(j["collection_ms"].get<double>(), 0.0) << mix;
    EXPECT_EQ(npy::load<int64_t>(work("r.npy").string()).size(), 6000u);
  }
  ok("esfa gen --out a.npy --ops 500 --cells 32 --seed 8");
  ok("esfa gen --out b.npy --ops 500 --cells 32 --seed 8");
  EXPECT_EQ(read_bytes(work("a.npy")), read_bytes(work("b.npy")));
}

TEST_F(Cli, EsfaRunAnswersTheStream) {
  // empty; update(0, 5, 50); update(1, 9, 90); lookup(2, 5); next(2, 5); remove(2, 5); size(5);
  // lookup(5, 5); lookup(1, 9); release(0)
  const std::vector<int64_t> ops{0, -1, 0, 0, 1, 0, 5, 50, 1, 1, 9, 90, 3, 2, 5, 0, 5, 2, 5, 0,
                                 2, 2, 5, 0, 4, 5, 0, 0, 3, 5, 5, 0, 3, 1, 9, 0, 6, 0, 0, 0};
  save("ops.npy", ops, {10, 4});
  ok("esfa run --ops ops.npy --cells 8 --out r.npy --verify");
  const std::vector<int64_t> r = npy::load<int64_t>(work("r.npy").string());
  const std::vector<int64_t> want{1, 0, 1, 0, 1, 0, 1, 50, 1, 9, 1, 0, 1, 1, 0, 0, 0, 0, 1, 0};
  EXPECT_EQ(r, want);
}

TEST_F(Cli, EsfaBadStreamsFailWithNothingWritten) {
  save("shape.npy", std::vector<int64_t>{0, -1, 0}, {1, 3});
  fails("esfa run --ops shape.npy", 1, "shape (n, 4)");
  save("op.npy", std::vector<int64_t>{9, -1, 0, 0}, {1, 4});
  fails("esfa run --ops op.npy", 1, "row 0: unknown op 9");
  save("later.npy", std::vector<int64_t>{0, -1, 0, 0, 3, 2, 0, 0}, {2, 4});
  fails("esfa run --ops later.npy", 1, "row 1: argument row 2 is not an earlier row");
  save("released.npy", std::vector<int64_t>{0, -1, 0, 0, 6, 0, 0, 0, 3, 0, 1, 0}, {3, 4});
  fails("esfa run --ops released.npy", 1, "row 2: argument row 0 was released");
  save("notarray.npy", std::vector<int64_t>{0, -1, 0, 0, 4, 0, 0, 0, 3, 1, 1, 0}, {3, 4});
  fails("esfa run --ops notarray.npy", 1, "row 2: argument row 1 makes no array");
  ok("esfa gen --out s.npy --ops 2000 --cells 64 --seed 2");
  fails("esfa run --ops s.npy --cells 4", 1, "the machine is full");
}

// Issue 45: the command is named for what it holds, functional-arrays; esfa, its older name, is
// an alias (the same command, the same files); the help says what they are in a user's words.
TEST_F(Cli, FunctionalArraysIsTheNameAndEsfaItsAlias) {
  ok("functional-arrays gen --out a.npy --ops 500 --cells 32 --seed 3");
  ok("esfa gen --out b.npy --ops 500 --cells 32 --seed 3");
  EXPECT_EQ(read_bytes(work("a.npy")), read_bytes(work("b.npy")));
  const run_result r = ok("functional-arrays run --ops a.npy --cells 32 --verify --out r.npy");
  EXPECT_NE(r.err.find("functional-arrays run: 500 operations"), std::string::npos) << r.err;
  ok("esfa run --ops b.npy --cells 32 --verify --out r2.npy");
  EXPECT_EQ(read_bytes(work("r.npy")), read_bytes(work("r2.npy")));
  const std::string top = ok("--help").out;
  EXPECT_NE(top.find("functional-arrays, esfa"), std::string::npos) << top;
  EXPECT_NE(top.find("persistent, versioned sparse arrays"), std::string::npos) << top;
  for (const char* cmd : {"functional-arrays --help", "esfa --help"}) {
    std::string help = ok(cmd).out;
    std::replace(help.begin(), help.end(), '\n', ' ');  // (the footer is wrapped)
    EXPECT_EQ(help.find("seed 004"), std::string::npos) << cmd;
    EXPECT_EQ(help.find("ESF"), std::string::npos) << cmd;
    EXPECT_NE(help.find("never changed in place"), std::string::npos) << cmd << "\n" << help;
    EXPECT_NE(help.find("gsearch esfa ... is the same command"), std::string::npos) << cmd;
  }
  // A mistyped name still gets the nearest.
  fails("functional-array gen --out c.npy", 109, "did you mean 'functional-arrays'?", false);
}

TEST_F(Cli, EsfaCudaWithoutDevice) {
  hide_gpus();
  ok("esfa gen --out s.npy --ops 200 --cells 64 --seed 2");
  fails("esfa run --ops s.npy --cells 64 --device cuda", 2, "--device cuda: ");  // out.npy untouched
  const auto j = nlohmann::json::parse(ok("esfa run --ops s.npy --cells 64 --json").out);  // auto: the CPU
  EXPECT_EQ(j["device"], "cpu");
}

TEST_F(Cli, EsfaCudaEqualsTheSpecification) {
  GSEARCH_GPU_OR_SKIP();
  for (const std::string mix : {"paper", "fans", "sparse"}) {
    ok("esfa gen --out s.npy --ops 4000 --cells 256 --seed 5 --mix " + mix);
    const auto j = nlohmann::json::parse(ok("esfa run --ops s.npy --cells 256 --device cuda --verify --json").out);
    EXPECT_EQ(j["device"], "cuda") << mix;
    EXPECT_GT(j["persistent_blocks"], 0) << mix;
    EXPECT_EQ(j["verified"], true) << mix;
    EXPECT_EQ(j["pipelined"], true) << mix;
  }
  const auto j = nlohmann::json::parse(ok("esfa run --ops s.npy --cells 256 --device cuda --latency --verify --json").out);
  EXPECT_EQ(j["pipelined"], false);
  EXPECT_EQ(j["verified"], true);
  EXPECT_GT(j["us_per_op"]["p99"].get<double>(), 0);
}

}  // namespace
}  // namespace cli_test
