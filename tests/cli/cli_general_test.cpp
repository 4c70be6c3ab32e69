// What every subcommand shares: --help and --version, the exit codes of bad input files, bad
// flags, unwritable outputs and --verify mismatches, and --device cuda where no device is
// visible.

#include "cli_fixture.hpp"

#include <string>
#include <vector>

namespace cli_test {
namespace {

TEST_F(Cli, HelpAndVersion) {
  run_result r = ok("--help");
  EXPECT_NE(r.out.find("Subcommands:"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos);
  r = ok("--version");
  EXPECT_EQ(r.out.rfind("gsearch ", 0), 0u) << r.out;
  r = ok("search --help");
  EXPECT_NE(r.out.find("--assume-sorted"), std::string::npos);
  EXPECT_NE(r.out.find("2-D keys (R, K)"), std::string::npos);
}

// Issue 45: the exit codes' table once, in gsearch --help and gsearch help exit-codes; every
// command's --help ends with one line pointing there, not the table again.
TEST_F(Cli, TheExitCodesTableIsPrintedOnce) {
  const std::string table_entry = "same file as an input or as another output";
  const std::string pointer =
      "Exit codes: 0 ok, 1 bad input, 2 device or I/O, 3 --verify mismatch (gsearch help exit-codes)";
  run_result r = ok("--help");
  EXPECT_NE(r.out.find(table_entry), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("128+N"), std::string::npos);
  EXPECT_NE(r.out.find("help "), std::string::npos) << "the help command is listed";
  r = ok("help exit-codes");
  EXPECT_EQ(r.out.rfind("Exit codes:\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(table_entry), std::string::npos);
  EXPECT_NE(r.out.find("100+"), std::string::npos);
  EXPECT_EQ(r.out.find("Subcommands:"), std::string::npos) << "the table alone";
  for (const std::string cmd :
       {"search", "find", "merge", "sort", "set", "join", "select", "topk", "quantile", "partition", "gen",
        "conflicts", "serve", "client", "functional-arrays", "functional-arrays run", "esfa gen", "bench",
        "bench search", "help"}) {
    r = ok(cmd + " --help");
    EXPECT_EQ(r.out.find(table_entry), std::string::npos) << cmd << ": the table again";
    EXPECT_EQ(r.out.find("128+N"), std::string::npos) << cmd;
    EXPECT_NE(r.out.find(pointer), std::string::npos) << cmd << "\n" << r.out;
    // gsearch help COMMAND is the command's --help.
    EXPECT_EQ(ok("help " + cmd).out, r.out) << cmd;
  }
  fails("help exit-code", 1, "gsearch help: unknown topic 'exit-code'", false);
}

// ---- the gsearch binary: errors ------------------------------------------------------------

TEST_F(Cli, BadInputFilesExit1AndWriteNothing) {
  save("k.npy", std::vector<int32_t>{1, 2, 3, 4});
  save("q.npy", std::vector<int32_t>{0, 3, 9});
  save("f.npy", std::vector<double>{0.5});
  save("unsorted.npy", std::vector<int32_t>{1, 2, 5, 3, 4});
  std::string trunc = read_bytes(work("k.npy"));
  write_bytes(work("trunc.npy"), trunc.substr(0, trunc.size() - 2));
  write_bytes(work("magic.npy"), "hello, world");
  write_bytes(work("2d.npy"), raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }",
                                      trunc.substr(128)));
  write_bytes(work("big.npy"), raw_npy("{'descr': '>i4', 'fortran_order': False, 'shape': (4,), }",
                                       trunc.substr(128)));
  write_bytes(work("i2.npy"),
              raw_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", "abcd"));

  fails("search --keys missing.npy --queries q.npy", 1, "cannot open missing.npy");
  fails("search --keys k.npy --queries trunc.npy", 1,
        "trunc.npy is truncated: header says 4 int32 values (16 bytes)");
  fails("search --keys magic.npy --queries q.npy", 1, "magic.npy is not a .npy file");
  fails("search --keys 2d.npy --queries q.npy", 1,
        "keys 2d.npy have shape (2, 2) but queries q.npy have shape (3,): 2-D keys");
  fails("search --keys k.npy --queries big.npy", 1, "big-endian");
  fails("search --keys i2.npy --queries q.npy", 1, "does not support");
  fails("search --keys k.npy --queries f.npy", 1,
        "keys are int32 but queries are float64: gsearch never casts");
  fails("search --keys unsorted.npy --queries q.npy", 1, "keys are not sorted at index 3");
  fails("search --keys k.npy --queries q.npy --json", 1, "--json needs --out", false);
  fails("gen --keys 10 --queries 10 --keys-out same.npy --queries-out ./same.npy", 1,
        "--queries-out './same.npy' is the same file as --keys-out 'same.npy'", false);
}

TEST_F(Cli, BadFlagsExitNonZero) {
  save("k.npy", std::vector<int32_t>{1, 2, 3, 4});
  save("q.npy", std::vector<int32_t>{0, 3, 9});
  fails("search --keys k.npy --queries q.npy --side middle", -1, "middle");
  fails("search --keys k.npy --queries q.npy --algo fast", -1, "fast");
  fails("search --keys k.npy --queries q.npy --device tpu", -1, "tpu");
  fails("search --keys k.npy --queries q.npy --repeat 0", -1, "repeat");
  fails("search --keys k.npy --queries q.npy --frobnicate", -1, "frobnicate");
  fails("search --queries q.npy", -1, "--keys");
  fails("frobnicate", -1, "frobnicate", false);
  fails("gen --keys 10 --queries 10 --dtype int16 --keys-out a.npy --queries-out b.npy", -1,
        "int16", false);
  fails("gen --keys -1 --queries 10 --keys-out a.npy --queries-out b.npy", -1, "--keys", false);
  fails("conflicts --algo pbs --keys 100 --bank-bytes 3", -1, "bank-bytes", false);
  fails("conflicts --algo auto --keys 100", -1, "auto", false);
  fails("conflicts --algo pbs --keys 0", -1, "--keys", false);
}

TEST_F(Cli, UnwritableOutputExits2) {
  save("k.npy", std::vector<int32_t>{1, 2, 3, 4});
  save("q.npy", std::vector<int32_t>{0, 3, 9});
  fails("search --keys k.npy --queries q.npy --out no/such/dir/o.npy", 2,
        "cannot write no/such/dir/o.npy", false);
  // gen writes both files or neither.
  fails("gen --keys 10 --queries 10 --keys-out a.npy --queries-out no/such/dir/b.npy", 2,
        "cannot write", false);
}

TEST_F(Cli, VerifyMismatchExits3AndWritesNothing) {
  // Keys in descending order, searched as if sorted: the library's answers are unspecified
  // and differ from std::lower_bound's.
  std::vector<int32_t> keys(1000), queries(1000);
  for (int i = 0; i < 1000; ++i) keys[size_t(i)] = 1000 - i, queries[size_t(i)] = (i * 7919) % 1000;
  save("k.npy", keys);
  save("q.npy", queries);
  fails("search --keys k.npy --queries q.npy --assume-sorted --verify", 3,
        "results differ from std::lower_bound");
  const run_result r = gsearch("search --keys k.npy --queries q.npy --assume-sorted --verify");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "") << "no indices printed";
  EXPECT_NE(r.err.find("check: "), std::string::npos);
  EXPECT_NE(r.err.find(" of 1000 results differ (first at index "), std::string::npos) << r.err;
}

// ---- the gsearch binary: devices -----------------------------------------------------------

TEST_F(Cli, CudaWithoutDevice) {
  hide_gpus();  // runs everywhere: no device is visible to the gsearch it starts
  save("k.npy", std::vector<int32_t>{1, 2, 3, 4});
  save("q.npy", std::vector<int32_t>{0, 3, 9});
  write_bytes(work("out.npy"), "precious");
  const run_result r = gsearch("search --keys k.npy --queries q.npy --device cuda --out out.npy");
  EXPECT_TRUE(r.code == 1 || r.code == 2) << r.code;
  EXPECT_EQ(r.err.rfind("gsearch: error: --device cuda: ", 0), 0u) << r.err;
  EXPECT_EQ(read_bytes(work("out.npy")), "precious");
  // auto falls back to the CPU.
  EXPECT_NE(ok("search --keys k.npy --queries q.npy --device auto").err.find("device=cpu"),
            std::string::npos);
}

}  // namespace
}  // namespace cli_test
