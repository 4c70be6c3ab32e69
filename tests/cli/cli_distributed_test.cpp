// `--distributed` (issue 25): search, find, sort, join and asof run by `mpirun -np 2, 3 and 4` of the
// built binary, every output byte for byte the single-process command's (uneven shards, duplicate
// keys across ranks, NaN and -0.0); --per-rank files; --json from rank 0 only; errors on one rank
// or all (unsorted keys, a missing file, a dtype mismatch, a refused option) stopping every rank
// with one message and no output. Skipped (visibly) where mpirun is not found; a CLI built
// without MPI must refuse --distributed instead.

#include "cli_fixture.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace cli_test {
namespace {

// mpirun on the PATH, or "".
std::string find_mpirun() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / "mpirun";
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// find_data sorted in the library's order (NaN last, -0.0 and 0.0 in their input order).
template <class T>
std::vector<T> sorted_data(size_t n, uint64_t seed) {
  std::vector<T> v = find_data<T>(n, seed);
  std::stable_sort(v.begin(), v.end(), [](T a, T b) { return gsearch::key_less(a, b); });
  return v;
}

class Distributed : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
#ifndef GSEARCH_CLI_MPI
    GTEST_SKIP() << "this gsearch is built without MPI (Cli.DistributedWithoutMpi checks its error)";
#endif
    mpirun_ = find_mpirun();
    if (mpirun_.empty()) GTEST_SKIP() << "mpirun not found on the PATH: --distributed runs skipped";
  }

  // Runs `gsearch <args>` on `np` ranks (oversubscribed: more ranks than cores; CI runs as root,
  // which OpenMPI refuses without the two variables). Under AddressSanitizer the ranks report no
  // leaks: OpenMPI's own allocations, never freed by MPI_Finalize, would fail every run (the
  // single-process runs of the same commands keep the leak check).
  // `env`: more assignments (GSEARCH_DIST_FAULT=...). A run is stopped after 120 s (exit 124).
  // The ranks run on the CPU unless `args` name a --device: the default, auto, takes the GPUs
  // where NCCL and a GPU are, one rank a GPU (more ranks than GPUs is NCCL's error), so that
  // these runs hold on every machine.
  run_result on_ranks(int np, const std::string& args, const std::string& env = "") {
    env_ =
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 " + env + " ";
    launcher_ = "timeout -k 5 120 '" + mpirun_ + "' --oversubscribe -np " + std::to_string(np) + " ";
    run_result r = gsearch(args.find("--device") == std::string::npos ? args + " --device cpu" : args);
    env_.clear();
    launcher_.clear();
    return r;
  }

  // Runs `gsearch <args>` alone and on `np` ranks with --distributed, each output option of
  // `outs` naming single<i>.npy and distributed<i>.npy, and expects both to succeed and each pair
  // of files to be equal, byte for byte. Returns the distributed run.
  run_result expect_same_outputs(int np, const std::string& args, const std::vector<std::string>& outs) {
    std::string single = args, distributed = args + " --distributed";
    for (size_t i = 0; i < outs.size(); ++i) {
      single += " " + outs[i] + " single" + std::to_string(i) + ".npy";
      distributed += " " + outs[i] + " distributed" + std::to_string(i) + ".npy";
    }
    ok(single);
    const run_result r = on_ranks(np, distributed);
    EXPECT_EQ(r.code, 0) << distributed << "\n" << r.err;
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string a = "single" + std::to_string(i) + ".npy",
                        b = "distributed" + std::to_string(i) + ".npy";
      EXPECT_TRUE(fs::exists(work(b))) << distributed;
      EXPECT_EQ(read_bytes(work(b)), read_bytes(work(a))) << distributed << ": " << outs[i];
    }
    return r;
  }

  // A distributed run that fails: a non-zero exit, `message` printed once and no other error
  // (every rank stops; one prints), and the work directory as it was, with the out.npy it had
  // (named by `out_option`).
  void fails_on_ranks(int np, const std::string& args, const std::string& message,
                      const std::string& out_option = "--out") {
    write_bytes(work("out.npy"), "precious");
    const auto before = snapshot();
    const run_result r = on_ranks(np, args + " " + out_option + " out.npy");
    EXPECT_NE(r.code, 0) << args << "\n" << r.err;
    EXPECT_EQ(count_of(r.err, "gsearch: error: "), 1u) << args << "\n" << r.err;
    EXPECT_EQ(count_of(r.err, message), 1u) << args << "\n" << r.err;
    EXPECT_EQ(snapshot(), before) << args << ": files were created or changed";
  }

  // Rank r fails at every agreement point of a command in turn (GSEARCH_DIST_FAULT: the CLI's
  // steps and the library's, counted together): every run stops on every rank in bounded time
  // (`timeout`), prints the injected error once, and leaves no output; the run one step further
  // goes through. Returns the number of points.
  int fail_at_every_step(int np, int faulty, const std::string& args,
                         const std::vector<std::string>& outputs) {
    int step = 0;
    for (;; ++step) {
      SCOPED_TRACE(testing::Message() << args << ": rank " << faulty << " fails at step " << step);
      for (const std::string& o : outputs) fs::remove(work(o));
      const auto before = snapshot();
      const run_result r =
          on_ranks(np, args, "GSEARCH_DIST_FAULT=" + std::to_string(faulty) + ":" + std::to_string(step));
      if (r.code == 0) break;
      EXPECT_NE(r.code, 124) << "timed out: some rank waits for ever\n" << r.err;
      EXPECT_EQ(count_of(r.err, "gsearch: error: "), 1u) << r.err;
      EXPECT_EQ(count_of(r.err, "fault injected on rank " + std::to_string(faulty)), 1u) << r.err;
      EXPECT_EQ(snapshot(), before) << "files were created or changed";
      if (step > 60 || ::testing::Test::HasFailure()) return step;
    }
    for (const std::string& o : outputs) EXPECT_TRUE(fs::exists(work(o))) << args << ": " << o;
    return step;
  }

  std::string mpirun_;
};

TEST_F(Distributed, SearchEqualsTheSingleProcessOutput) {
  // Keys with duplicates across the ranks' boundaries, NaN, -0.0 and infinities; 1001 queries
  // (shards of unequal sizes).
  save("k.npy", sorted_data<float>(1000, 1));
  save("q.npy", find_data<float>(1001, 2));
  for (const char* side : {"left", "right", "pred"})
    expect_same_outputs(2, std::string("search --device cpu --keys k.npy --queries q.npy --side ") + side,
                        {"--out"});
  const run_result r = expect_same_outputs(3, "search --device cpu --keys k.npy --queries q.npy", {"--out"});
  EXPECT_NE(r.err.find("search: 1001 queries, 1000 float32 keys, side=left, 3 ranks, device=cpu"),
            std::string::npos)
      << r.out;

  // 2-D queries keep their shape; --int32; --json: one object, from rank 0.
  std::vector<int64_t> keys = sorted_data<int64_t>(777, 3), queries = find_data<int64_t>(6 * 50, 4);
  save("k64.npy", keys);
  save("q2.npy", queries, {6, 50});
  const run_result j = expect_same_outputs(4, "search --keys k64.npy --queries q2.npy --int32 --json", {"--out"});
  const auto summary = nlohmann::json::parse(j.out);  // throws if rank 0 is not the only one
  EXPECT_EQ(summary["ranks"], 4);
  EXPECT_EQ(summary["keys"], 777);
  EXPECT_EQ(summary["queries"], 300);
  EXPECT_EQ(summary["out_shape"], nlohmann::json::array({6, 50}));
  EXPECT_EQ(summary["out_dtype"], "int32");
  for (const char* time : {"read_ms", "search_ms", "write_ms"}) EXPECT_TRUE(summary[time].is_number()) << time;
}

TEST_F(Distributed, FindEqualsTheSingleProcessOutput) {
  save("d.npy", find_data<double>(1001, 5));
  save("v.npy", std::vector<double>{3, 5, -0.0, 39, 1000});
  // first and count print their result on stdout, as without --distributed.
  for (const char* mode : {"first", "count"}) {
    const std::string args = std::string("find --data d.npy --value 7 --mode ") + mode;
    const run_result single = ok(args), distributed = on_ranks(4, args + " --distributed");
    EXPECT_EQ(distributed.code, 0) << distributed.err;
    EXPECT_EQ(distributed.out, single.out) << mode;
  }
  const run_result none = on_ranks(3, "find --distributed --data d.npy --value 1000 --mode first");
  EXPECT_EQ(none.out, "-1\n") << none.err;
  expect_same_outputs(3, "find --data d.npy --op in --value 3 --hi 9 --mode all", {"--out"});
  expect_same_outputs(2, "find --data d.npy --op gt --value 1000 --mode all", {"--out"});  // no match
  expect_same_outputs(4, "find --data d.npy --values v.npy --invert", {"--out"});
}

TEST_F(Distributed, SortEqualsTheSingleProcessOutput) {
  // Unsorted, with duplicates, NaN and -0.0 beside 0.0: the stable order, over the ranks.
  save("d.npy", find_data<float>(999, 6));
  expect_same_outputs(2, "sort --data d.npy", {"--out"});
  const run_result r = expect_same_outputs(4, "sort --data d.npy --json", {"--out"});
  EXPECT_EQ(nlohmann::json::parse(r.out)["result"], 999);
}

TEST_F(Distributed, JoinEqualsTheSingleProcessOutput) {
  save("l.npy", sorted_data<int32_t>(301, 7));
  save("r.npy", sorted_data<int32_t>(203, 8));
  const std::string tables = "join --left l.npy --right r.npy --how ";
  expect_same_outputs(4, tables + "inner", {"--out-left", "--out-right"});
  expect_same_outputs(2, tables + "left", {"--out-left", "--out-right"});
  expect_same_outputs(3, tables + "full", {"--out-left", "--out-right"});
  expect_same_outputs(4, tables + "anti", {"--out-left"});
}

// Issue 44: asof's gather map for each option, byte for byte the single-process one: keys with
// duplicates across the ranks' boundaries (-0.0, infinities), group values of two dtypes (uint64
// beyond int64 beside int32: compared as numbers) with a value on each side only, --sort of keys
// in any order; --json from rank 0.
TEST_F(Distributed, AsofEqualsTheSingleProcessOutput) {
  save("l.npy", sorted_data<int64_t>(501, 15));
  save("r.npy", sorted_data<int64_t>(303, 16));
  std::vector<int32_t> lb(501);
  std::vector<uint64_t> rb(303);
  for (size_t i = 0; i < lb.size(); ++i) lb[i] = int32_t(i * 7 % 5);      // 0 on the left only
  for (size_t i = 0; i < rb.size(); ++i) rb[i] = uint64_t(1 + i * 3 % 5);  // 5 on the right only
  rb[7] = (uint64_t(1) << 63) + 1;
  save("lb.npy", lb);
  save("rb.npy", rb);
  const auto no_nan = [](std::vector<double> v) {
    std::erase_if(v, [](double x) { return x != x; });
    return v;
  };
  save("lf.npy", no_nan(sorted_data<double>(401, 13)));
  save("rf.npy", no_nan(sorted_data<double>(257, 14)));
  const std::string lr = "asof --left l.npy --right r.npy";
  expect_same_outputs(2, lr, {"--out"});
  expect_same_outputs(3, lr + " --left-by lb.npy --right-by rb.npy --direction nearest --tolerance 3", {"--out"});
  expect_same_outputs(4, "asof --left lf.npy --right rf.npy --direction forward --no-exact-matches", {"--out"});
  save("lu.npy", find_data<int32_t>(333, 17));  // any order
  save("ru.npy", find_data<int32_t>(222, 18));
  save("lub.npy", std::vector<int64_t>(333, 4));
  save("rub.npy", std::vector<int64_t>(222, 4));
  const run_result r = expect_same_outputs(
      2, "asof --left lu.npy --right ru.npy --left-by lub.npy --right-by rub.npy --sort --json", {"--out"});
  const auto j = nlohmann::json::parse(r.out);  // throws if rank 0 is not the only one
  const auto single = nlohmann::json::parse(ok("asof --left lu.npy --right ru.npy --left-by lub.npy "
                                               "--right-by rub.npy --sort --json --out s.npy")
                                                .out);
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_EQ(j["right_groups"], 1);
  EXPECT_EQ(j["matched"], single["matched"]);
  EXPECT_EQ(j["result"], 333);
}

// Issue 44: asof's refusals across the ranks in the single-process words, with the file's global
// index: unsorted keys within a slice and at a boundary, a NaN key (also with --sort); no --out.
TEST_F(Distributed, AsofRefusalsAreTheSingleProcessOnes) {
  std::vector<int32_t> keys(1000);
  for (int i = 0; i < 1000; ++i) keys[size_t(i)] = 2 * i;
  std::vector<int32_t> inside = keys, boundary = keys;
  std::swap(inside[600], inside[601]);
  boundary[500] = boundary[499] - 1;  // ranks 0 and 1 of 2
  std::vector<float> nan(1000);
  for (int i = 0; i < 1000; ++i) nan[size_t(i)] = float(i);
  nan[700] = NAN;
  save("k.npy", keys);
  save("inside.npy", inside);
  save("boundary.npy", boundary);
  save("nan.npy", nan);
  save("f.npy", std::vector<float>(nan.begin(), nan.begin() + 600));
  const std::string inside_says =
      "left keys must be sorted (--left inside.npy goes down at index 601: left[600] = 1202 > left[601] = 1200); "
      "pass --sort";
  EXPECT_NE(gsearch("asof --left inside.npy --right k.npy --out o.npy").err.find(inside_says), std::string::npos);
  fails_on_ranks(2, "asof --distributed --left inside.npy --right k.npy", "rank 1 of 2: " + inside_says);
  fails_on_ranks(2, "asof --distributed --left k.npy --right boundary.npy",
                 "rank 1 of 2: right keys must be sorted (--right boundary.npy goes down at index 500: right[499] "
                 "= 998 > right[500] = 997)");
  fails_on_ranks(2, "asof --distributed --left f.npy --right nan.npy --sort",
                 "rank 1 of 2: Merge keys contain null values on right side (--right nan.npy holds NaN at index 700)");
  const run_result r = on_ranks(2, "asof --distributed --left k.npy --right k.npy");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(count_of(r.err, "--distributed needs --out IDX.npy"), 1u) << r.err;
}

TEST_F(Distributed, PerRankFilesConcatenateToTheGatheredOutput) {
  const std::vector<float> data = find_data<float>(1000, 9);
  save("d.npy", data);
  ok("sort --data d.npy --out single.npy");
  const run_result r = on_ranks(3, "sort --distributed --per-rank --data d.npy --out part.npy");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("part.<rank>.npy (3 files)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(work("part.npy")));
  std::vector<float> joined;
  for (int rank = 0; rank < 3; ++rank) {
    const auto part = npy::load<float>(work("part." + std::to_string(rank) + ".npy").string());
    EXPECT_GT(part.size(), 0u);
    joined.insert(joined.end(), part.begin(), part.end());
  }
  EXPECT_EQ(bytes_of(joined), bytes_of(npy::load<float>(work("single.npy").string())));
}

TEST_F(Distributed, AnErrorOnAnyRankStopsAllWithOneMessageAndNoOutput) {
  std::vector<int32_t> keys(1000);
  for (int i = 0; i < 1000; ++i) keys[size_t(i)] = 2 * i;
  save("q.npy", std::vector<int32_t>{1, 5, 900});
  save("q64.npy", std::vector<int64_t>{1, 5, 900});
  // Unsorted within rank 2's shard ([500, 750) of 4), and at the boundary of ranks 1 and 2.
  std::vector<int32_t> inside = keys, boundary = keys;
  std::swap(inside[600], inside[601]);
  boundary[500] = boundary[499] - 1;
  save("inside.npy", inside);
  save("boundary.npy", boundary);
  fails_on_ranks(4, "search --distributed --keys inside.npy --queries q.npy",
                 "rank 2 of 4: keys are not sorted at index 601 of inside.npy: keys[600] = 1202 > keys[601] = 1200");
  fails_on_ranks(4, "search --distributed --per-rank --keys boundary.npy --queries q.npy",
                 "rank 2 of 4: keys are not sorted at index 500 of boundary.npy: keys[499] = 998 > keys[500] = 997");
  fails_on_ranks(2, "join --distributed --how semi --left q.npy --right boundary.npy",
                 "rank 1 of 2: --right is not sorted at index 500 of boundary.npy", "--out-left");
  // What every rank sees is printed once, without a rank.
  fails_on_ranks(3, "search --distributed --keys missing.npy --queries q.npy", "gsearch: error: cannot open missing.npy");
  fails_on_ranks(2, "search --distributed --keys inside.npy --queries q64.npy",
                 "gsearch: error: keys are int32 but queries are int64: gsearch never casts");
  fails_on_ranks(2, "search --distributed --keys inside.npy --queries q.npy --verify",
                 "gsearch: error: --verify does not apply with --distributed");
  fails_on_ranks(2, "sort --distributed --data q.npy --argsort perm.npy", "--argsort does not apply");
  // Issue 45: every option the README and the --help list as refused, named (run by 2 ranks).
  save("v.npy", std::vector<int64_t>(301, 7));
  fails_on_ranks(2, "sort --distributed --data q.npy --values v.npy --out-values ov.npy",
                 "gsearch: error: --values does not apply with --distributed");
  for (const std::string refused : {"--algo binary", "--sorted-queries", "--repeat 2", "--max-temp-bytes 0",
                                    "--sorter v.npy"})
    fails_on_ranks(2, "search --distributed --keys inside.npy --queries q.npy " + refused,
                   "does not apply with --distributed");
}

TEST_F(Distributed, EveryRankStopsWhereverOneFails) {
  save("k.npy", sorted_data<int32_t>(300, 1));
  save("q.npy", find_data<int32_t>(301, 2));
  // Some 15 runs of mpirun each (half a second a run; the CLI tests' limit is 120 s): the shared
  // steps and the gather to rank 0 through search; the per-rank outputs through sort, where the
  // sanitizers do not run (GSEARCH_TEST_SUBSET). The library's points of every operation and
  // rank are dist_test's and DistMpi's.
  EXPECT_GT(fail_at_every_step(2, 1, "search --distributed --keys k.npy --queries q.npy --out o.npy", {"o.npy"}), 5);
  if (std::getenv("GSEARCH_TEST_SUBSET") != nullptr) return;
  EXPECT_GT(fail_at_every_step(2, 0, "sort --distributed --data q.npy --out o.npy --per-rank", {"o.0.npy", "o.1.npy"}), 5);
}

// Issue 44: asof's one collective between steps (the group values of every rank gathered to
// every rank: the counts, the buffer's step, then the broadcasts): rank 1 fails at the buffer's
// step, and every rank stops, with one message and no output. (All 19 points of this command,
// counted with the shared steps and the library's, were run by hand; the shared ones are the
// test above's.)
TEST_F(Distributed, AsofStopsEveryRankWhereOneFailsInItsGather) {
  save("k.npy", sorted_data<int32_t>(300, 1));
  save("g.npy", std::vector<int32_t>(300, 3));
  // The points: 0 begin, 1 the options, 2 the keys read, 3 and 4 their order, 5 the group values
  // read, 6 their distinct values, 7 the gathered buffer, 8 the codes, then the join's.
  const run_result r =
      on_ranks(2, "asof --distributed --left k.npy --right k.npy --left-by g.npy --right-by g.npy --out o.npy",
               "GSEARCH_DIST_FAULT=1:7");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.code, 124) << "timed out: some rank waits for ever\n" << r.err;
  EXPECT_EQ(count_of(r.err, "gsearch: error: "), 1u) << r.err;
  EXPECT_EQ(count_of(r.err, "fault injected on rank 1 at agreement point 7 "), 1u) << r.err;
  EXPECT_FALSE(fs::exists(work("o.npy")));
}

// Issue 45: --distributed runs search, find, sort, join and asof, and every other command refuses
// it with one message naming those five (exit 1, before any work), with or without MPI.
TEST_F(Cli, DistributedIsRefusedByTheCommandsThatDoNotRunIt) {
  save("a.npy", std::vector<int32_t>{1, 2, 3});
  const std::string named =
      " does not run --distributed; the commands that do are search, find, sort, join and asof";
  for (const std::string cmd :
       {"merge --a a.npy --b a.npy", "set --op union --a a.npy --b a.npy", "select --data a.npy --k 0",
        "quantile --data a.npy --q 0.5", "partition --data a.npy --kth 0",
        "topk --data a.npy --k 1 --out-values o.npy --out-indices i.npy",
        "gen --keys 4 --queries 4 --keys-out gk.npy --queries-out gq.npy"}) {
    fails(cmd + " --distributed", 1, "gsearch " + cmd.substr(0, cmd.find(' ')) + named);
    const run_result r = gsearch(cmd + " --distributed --json --out o2.npy");
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(nlohmann::json::parse(r.out)["exit_code"], 1) << r.out;
  }
  fails("esfa run --ops o.npy --distributed", 1, "gsearch esfa run" + named, false);
  fails("bench search --quick --distributed", 1, "gsearch bench search" + named, false);
  // The five declare it (their help says what applies, and what Open MPI needs on a small
  // machine or as root).
  for (const char* cmd : {"search", "find", "sort", "join", "asof"}) {
    const std::string help = ok(std::string(cmd) + " --help").out;
    EXPECT_NE(help.find("--distributed"), std::string::npos) << cmd;
    EXPECT_NE(help.find("--oversubscribe"), std::string::npos) << cmd;
    EXPECT_NE(help.find("--allow-run-as-root"), std::string::npos) << cmd;
  }
}

TEST_F(Cli, PerRankNeedsDistributed) {
  const run_result r = gsearch("sort --data d.npy --out s.npy --per-rank");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--per-rank requires --distributed"), std::string::npos) << r.err;
}

TEST_F(Cli, DistributedWithoutMpi) {
#ifdef GSEARCH_CLI_MPI
  GTEST_SKIP() << "this gsearch is built with MPI (the Distributed tests run it)";
#endif
  save("k.npy", std::vector<int32_t>{1, 2, 3});
  fails("search --distributed --keys k.npy --queries k.npy", 2, "built without MPI");
}

// --device cuda: NCCL between the ranks' GPUs (rank r on GPU r % GPUs), the outputs still the
// single-process ones; a CLI without NCCL says so. One rank a GPU (NCCL refuses two ranks on one
// GPU), two where the machine has them: on one GPU the run is one rank's, still through NCCL and
// the CLI's distributed steps.
TEST_F(Distributed, CudaEqualsTheSingleProcessOutput) {
  GSEARCH_GPU_OR_SKIP();
  const int np = std::min(2, gsearch::cuda_device_count());
  save("k.npy", sorted_data<double>(5000, 10));
  save("q.npy", find_data<double>(3001, 11));
  save("d.npy", find_data<double>(4001, 12));
#ifndef GSEARCH_CLI_NCCL
  fails_on_ranks(np, "search --distributed --device cuda --keys k.npy --queries q.npy", "built without NCCL");
#else
  expect_same_outputs(np, "search --device cuda --keys k.npy --queries q.npy --side right", {"--out"});
  expect_same_outputs(np, "sort --device cuda --data d.npy", {"--out"});
  expect_same_outputs(np, "find --device cuda --data d.npy --value 7 --mode all", {"--out"});
  expect_same_outputs(np, "join --device cuda --how inner --left k.npy --right k.npy", {"--out-left", "--out-right"});
  save("ak.npy", sorted_data<int64_t>(3001, 13));
  save("ag.npy", find_data<int32_t>(3001, 14));
  expect_same_outputs(np, "asof --device cuda --left ak.npy --right ak.npy --left-by ag.npy --right-by ag.npy "
                          "--direction nearest --no-exact-matches", {"--out"});
  // The last rank fails at every agreement point in turn, on the GPUs (where the node-rank hang
  // was: a rank that had not chosen its GPU before NCCL's set-up).
  EXPECT_GT(fail_at_every_step(np, np - 1, "search --distributed --device cuda --keys k.npy --queries q.npy --out o.npy",
                               {"o.npy"}),
            3);
#endif
}

}  // namespace
}  // namespace cli_test
