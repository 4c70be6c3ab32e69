// Tests of the gsearch CLI's promise on outputs and errors (issue 19): bad input gets a clear
// error naming the problem, a non-zero exit, and nothing lost or half-written.
//  - item 5: results printed to a stdout that cannot take them (/dev/full, closed) are exit 2;
//  - item 6: --out through a symlink, onto a FIFO, a device, a directory, a read-only file, and
//    the mode of an existing file;
//  - item 7: SIGTERM / SIGINT while an output is written leave no temporary file;
//  - item 8: output paths are checked before any work;
//  - item 9: argument errors (ranges, sizes, seeds, empty paths, --json errors, no or a mistyped
//    command, conflicts --help);
//  - item 17: the progress line (a terminal only) and the time summary (stderr only).
// Each test runs the built binary (GSEARCH_CLI_PATH) through the shell in a fresh directory.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_fixture.hpp"
#include "npy.hpp"

namespace {

namespace fs = std::filesystem;
namespace npy = gsearch::cli::npy;

using cli_test::read_bytes;
using cli_test::write_bytes;
bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

struct run_result {
  int code;  // the exit status, or 128 + the signal
  std::string out, err;
  double seconds;
};

class CliOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("gsearch_cli_output_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "work");
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_ / "work", fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  fs::path work(const std::string& name = "") const {
    return name.empty() ? dir_ / "work" : dir_ / "work" / name;
  }

  // Runs `gsearch <args>` in the work directory (with `env` assignments before it), stdout to
  // `stdout_to` (a redirection: "> /dev/full", ">&-"; by default a file that is read back).
  run_result gsearch(const std::string& args, const std::string& stdout_to = "",
                     const std::string& env = "") const {
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    fs::remove(out);
    const std::string cmd = "cd '" + work().string() + "' && " + env + " timeout 60 '" +
                            GSEARCH_CLI_PATH + "' " + args + " " +
                            (stdout_to.empty() ? "> '" + out + "'" : stdout_to) + " 2> '" + err +
                            "'";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(cmd.c_str());
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const run_result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_bytes(out),
                       read_bytes(err), s};
    if (::testing::Test::HasFailure())
      std::printf("$ gsearch %s %s\n%s%s", args.c_str(), stdout_to.c_str(), r.out.c_str(),
                  r.err.c_str());
    return r;
  }
  run_result ok(const std::string& args) const {
    run_result r = gsearch(args);
    EXPECT_EQ(r.code, 0) << "gsearch " << args << "\n" << r.err;
    return r;
  }
  // Expects exit `code`, one "gsearch: error: " line containing `message` on stderr.
  run_result fails(const std::string& args, int code, const std::string& message,
                   const std::string& stdout_to = "") const {
    run_result r = gsearch(args, stdout_to);
    EXPECT_EQ(r.code, code) << "gsearch " << args << " " << stdout_to << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "gsearch: error: ")) << args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, message)) << args << "\nwanted: " << message << "\ngot: " << r.err;
    return r;
  }

  // The names in the work directory (and its subdirectories) with ".tmp-" in them.
  std::vector<std::string> temp_files() const {
    std::vector<std::string> v;
    for (const auto& e : fs::recursive_directory_iterator(work()))
      if (contains(e.path().filename().string(), ".tmp-")) v.push_back(e.path().string());
    return v;
  }
  // Every file in the work directory (not following links) and its bytes.
  std::map<std::string, std::string> snapshot() const {
    std::map<std::string, std::string> m;
    for (const auto& e : fs::recursive_directory_iterator(work())) {
      const std::string name = fs::relative(e.path(), work()).string();
      if (e.is_symlink()) m[name] = "-> " + fs::read_symlink(e.path()).string();
      else if (e.is_regular_file()) m[name] = read_bytes(e.path());
      else m[name] = "(not a file)";
    }
    return m;
  }

  template <class T>
  void save(const std::string& name, const std::vector<T>& v) const {
    npy::save(work(name).string(), gsearch::span<const T>(v));
  }
  // Small sorted inputs for every subcommand: k.npy, q.npy (int32), v.npy (int64 values).
  void small_inputs() const {
    save("k.npy", std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8});
    save("q.npy", std::vector<int32_t>{0, 3, 9, 5, 5, 1});
    save("v.npy", std::vector<int64_t>{10, 20, 30, 40, 50, 60, 70, 80});
  }

  fs::path dir_;
};

// Every subcommand that writes files, with OUT where its (first) output goes; inputs from
// small_inputs().
const std::vector<std::string> writers = {
    "search --keys k.npy --queries q.npy --out OUT",
    "find --data k.npy --value 3 --op ge --mode all --out OUT",
    "find --data k.npy --values q.npy --out OUT",
    "merge --a k.npy --b q.npy --out OUT --no-check",
    "sort --data q.npy --out OUT",
    "sort --data q.npy --argsort OUT",
    "sort --data k.npy --values v.npy --out-values OUT --out s.npy",
    "set --op union --a k.npy --b k.npy --out OUT",
    "join --how semi --left k.npy --right k.npy --out-left OUT",
    "join --how inner --left k.npy --right k.npy --out-left i.npy --out-right OUT",
    "gen --keys 10 --queries 10 --keys-out OUT --queries-out g.npy",
    "gen --keys 10 --queries 10 --keys-out g.npy --queries-out OUT",
    "bench search --device cpu --keys 32 --queries 1000 --repeat 1 --warmup 0 --json OUT",
};

std::string with_out(std::string cmd, const std::string& out) {
  return cmd.replace(cmd.find("OUT"), 3, out);
}

// ---- item 5: stdout is checked ----------------------------------------------------------------

// Every subcommand that prints results, each with stdout on /dev/full and closed: exit 2 and a
// message, never exit 0 with the results lost.
TEST_F(CliOutput, ResultsToAStdoutThatCannotTakeThemExit2) {
  std::vector<int32_t> many(200000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = int32_t(i % 1000);
  save("many.npy", many);
  small_inputs();
  const char* printers[] = {
      "search --keys k.npy --queries many.npy",  // 200,000 lines: fails part-way
      "search --keys k.npy --queries q.npy",
      "search --keys k.npy --queries q.npy --out o.npy --json",
      "find --data many.npy --value 5",
      "find --data many.npy --value 5 --mode count --json",
      "find --data k.npy --value 3 --mode all --out o.npy --json",
      "merge --a k.npy --b k.npy --out o.npy --json",
      "sort --data q.npy --out o.npy --json",
      "set --op intersection --a k.npy --b k.npy --out o.npy --json",
      "join --how semi --left k.npy --right k.npy --out-left o.npy --json",
      "select --data q.npy --k 2",
      "quantile --data q.npy --q 0.5",
      "conflicts --algo pbs --keys 1024 --warps 4",
      "conflicts --algo binary --keys 1024 --warps 4 --json",
      "bench search --device cpu --keys 32 --queries 1000 --repeat 1 --warmup 0",
  };
  for (const std::string args : printers) {
    fails(args, 2, "cannot write to standard output: No space left on device", "> /dev/full");
    fails(args, 2, "cannot write to standard output: it is closed", ">&-");
  }
  // A command that prints nothing to stdout does not care; its files are whole.
  EXPECT_EQ(gsearch("gen --keys 10 --queries 10 --keys-out a.npy --queries-out b.npy", ">&-").code,
            0);
  EXPECT_EQ(npy::load<int32_t>(work("b.npy").string()).size(), 10u);
  // A closed stdout is never handed to an output file (fd 1 reused): o.npy is a .npy file.
  EXPECT_EQ(gsearch("search --keys k.npy --queries q.npy --out o2.npy", ">&-").code, 0);
  EXPECT_EQ(npy::load<int64_t>(work("o2.npy").string()).size(), 6u);
}

// Issue 45: with --out (and no --json) stdout holds nothing: every summary goes to stderr, as
// gen's always did; the results are in the files. So a full or closed stdout does not matter.
TEST_F(CliOutput, WithOutTheSummaryGoesToStderrAndStdoutStaysEmpty) {
  small_inputs();
  save("d.npy", std::vector<int32_t>{5, 1, 4, 1, 3, 9, 2, 6});
  save("rows.npy", std::vector<int32_t>{5, 1, 4, 1, 3, 9, 2, 6});
  save("ks.npy", std::vector<int64_t>{0, 3});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"search --keys k.npy --queries q.npy --out o.npy", "search: "},
      {"find --data k.npy --value 3 --op ge --mode all --out o.npy", "find: all "},
      {"find --data k.npy --values q.npy --out o.npy", "find: isin "},
      {"merge --a k.npy --b k.npy --out o.npy", "merge"},
      {"sort --data q.npy --out o.npy", "sort"},
      {"set --op union --a k.npy --b k.npy --out o.npy", "set"},
      {"join --how semi --left k.npy --right k.npy --out-left o.npy", "join"},
      {"select --data d.npy --ks ks.npy --out o.npy", "select: 2 ranks"},
      {"quantile --data d.npy --q 0.5 --out o.npy", "quantile: "},
      {"topk --data d.npy --k 2 --out-values o.npy --out-indices i.npy", "topk: "},
      {"partition --data d.npy --kth 3 --out o.npy", "partition: "},
      {"gen --keys 10 --queries 10 --keys-out o.npy --queries-out g.npy", "gen: "},
  };
  for (const auto& [cmd, summary] : cases) {
    fs::remove(work("o.npy"));
    const run_result r = ok(cmd);
    EXPECT_EQ(r.out, "") << cmd << ": stdout holds results only";
    EXPECT_TRUE(contains(r.err, summary)) << cmd << "\n" << r.err;
    EXPECT_TRUE(fs::exists(work("o.npy"))) << cmd;
    EXPECT_EQ(gsearch(cmd, "> /dev/full").code, 0) << cmd;
    EXPECT_EQ(gsearch(cmd, ">&-").code, 0) << cmd;
  }
  // Without --out the results, and only they, are on stdout; --json is one object there.
  run_result r = ok("search --keys k.npy --queries q.npy");
  EXPECT_EQ(r.out, "0\n2\n8\n4\n4\n0\n");
  EXPECT_TRUE(contains(r.err, "search: ")) << r.err;
  r = ok("select --data d.npy --k 0");
  EXPECT_EQ(r.out, "1\n");
  r = ok("sort --data q.npy --out o.npy --json");
  EXPECT_EQ(nlohmann::json::parse(r.out)["command"], "sort");
  EXPECT_EQ(r.err, "");
}

// ---- item 6: what --out names -------------------------------------------------------------------

TEST_F(CliOutput, OutWritesThroughASymlinkToItsTarget) {
  small_inputs();
  fs::create_directories(work("real"));
  write_bytes(work("real/t.npy"), "old");
  fs::create_symlink("real/t.npy", work("link.npy"));
  for (const std::string& cmd : writers) {
    write_bytes(work("real/t.npy"), "old");
    ok(with_out(cmd, "link.npy"));
    EXPECT_TRUE(fs::is_symlink(work("link.npy"))) << cmd << ": the link was replaced";
    EXPECT_EQ(fs::read_symlink(work("link.npy")), "real/t.npy");
    EXPECT_NE(read_bytes(work("real/t.npy")), "old") << cmd << ": the target was not written";
    EXPECT_TRUE(temp_files().empty()) << cmd;
  }
  // A dangling link: its target is created.
  fs::create_symlink("real/new.npy", work("dangling.npy"));
  ok("search --keys k.npy --queries q.npy --out dangling.npy");
  EXPECT_TRUE(fs::is_symlink(work("dangling.npy")));
  EXPECT_EQ(npy::load<int64_t>(work("real/new.npy").string()), (std::vector<int64_t>{0, 2, 8, 4, 4, 0}));
  // A link to an input is still the input.
  fs::create_symlink("k.npy", work("klink.npy"));
  fails("search --keys k.npy --queries q.npy --out klink.npy", 1,
        "--out 'klink.npy' is the same file as --keys 'k.npy'");
}

TEST_F(CliOutput, OutRefusesFifosDevicesAndDirectories) {
  small_inputs();
  ASSERT_EQ(mkfifo(work("fifo.npy").c_str(), 0644), 0);
  fs::create_symlink("/dev/null", work("null.npy"));
  fs::create_directories(work("d"));
  const bool root = geteuid() == 0;
  if (root) {
    ASSERT_EQ(mknod(work("dev.npy").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);  // /dev/null
  }
  const auto before = snapshot();
  for (const std::string& cmd : writers) {
    fails(with_out(cmd, "fifo.npy"), 1,
          "'fifo.npy' is a FIFO (named pipe), not a regular file: gsearch writes its outputs to "
          "regular files only");
    fails(with_out(cmd, "null.npy"), 1, "'null.npy' is a character device (a symlink to '/dev/null')");
    if (root) fails(with_out(cmd, "dev.npy"), 1, "'dev.npy' is a character device, not a regular");
    fails(with_out(cmd, "d"), 1, "'d' names a directory: give a file name, such as d/out.npy");
    fails(with_out(cmd, "d/"), 1, "'d/' names a directory");
    fails(with_out(cmd, "."), 1, "'.' names a directory");
    EXPECT_EQ(snapshot(), before) << cmd;
  }
  EXPECT_TRUE(fs::is_fifo(work("fifo.npy")));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_symlink(work("null.npy")));
}

TEST_F(CliOutput, OutKeepsTheModeAndRefusesAReadOnlyFile) {
  small_inputs();
  for (const std::string& cmd : writers) {
    write_bytes(work("o.npy"), "old");
    fs::permissions(work("o.npy"), fs::perms(0600));
    ok(with_out(cmd, "o.npy"));
    EXPECT_EQ(fs::status(work("o.npy")).permissions(), fs::perms(0600)) << cmd;
    EXPECT_NE(read_bytes(work("o.npy")), "old") << cmd;

    fs::permissions(work("o.npy"), fs::perms(0640));
    ok(with_out(cmd, "o.npy"));
    EXPECT_EQ(fs::status(work("o.npy")).permissions(), fs::perms(0640)) << cmd;

    write_bytes(work("ro.npy"), "read-only");
    fs::permissions(work("ro.npy"), fs::perms(0444));
    fails(with_out(cmd, "ro.npy"), 1,
          "'ro.npy' is read-only: refusing to replace it (make it writable, e.g. chmod u+w, or "
          "choose another name)");
    EXPECT_EQ(read_bytes(work("ro.npy")), "read-only") << cmd;
    EXPECT_EQ(fs::status(work("ro.npy")).permissions(), fs::perms(0444)) << cmd;
    EXPECT_TRUE(temp_files().empty()) << cmd;
  }
  // A new file gets 0666 less the umask, as before.
  const mode_t mask = umask(0);
  umask(mask);
  ok("search --keys k.npy --queries q.npy --out fresh.npy");
  EXPECT_EQ(fs::status(work("fresh.npy")).permissions(), fs::perms(0666 & ~mask));
}

// ---- item 7: signals during a write ----------------------------------------------------------

// Whether the file system of `dir` gives unnamed files (open(dir, O_TMPFILE)): where it does,
// gsearch writes its outputs through them (output.hpp).
bool has_o_tmpfile(const fs::path& dir) {
  const int fd = open(dir.c_str(), O_TMPFILE | O_WRONLY, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// How gsearch was seen writing in signal_mid_write: a named temporary file of the output, or an
// unnamed one (O_TMPFILE: a descriptor of process `pid` on "<dir>/#<inode> (deleted)") with data
// in it already (not the empty one of the check before the work).
enum class seen_as { nothing, named, unnamed };
bool writes_unnamed_in(pid_t pid, const fs::path& dir) {
  const std::string prefix = fs::canonical(dir).string() + "/#";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const std::string to = fs::read_symlink(e.path(), ec).string();
    if (!ec && to.rfind(prefix, 0) == 0 && to.size() > 10 &&
        to.compare(to.size() - 10, 10, " (deleted)") == 0 && fs::file_size(e.path(), ec) > 0 && !ec)
      return true;
  }
  return false;
}

// Starts gsearch with `args` in the directory `work` (stdout and stderr to /dev/null; with
// `named`, GSEARCH_NO_O_TMPFILE=1: the named temporary files of the fallback), waits until it
// writes `out` (a file name) in `watch` (its temporary file appears there with data in it, or an
// unnamed file of that directory is open with data in it), and sends `sig`. Returns the wait status, or -1 if the command ended
// before the write was seen; `how` says what was seen.
int signal_mid_write(const fs::path& work, const std::vector<std::string>& args,
                     const fs::path& watch, const std::string& out, int sig,
                     bool named = false, seen_as* how = nullptr) {
  std::vector<char*> argv{const_cast<char*>(GSEARCH_CLI_PATH)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(work.c_str()) != 0) _exit(127);
    const int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    dup2(fd, 2);
    // The signal's default action, whatever we inherited (a background job ignores SIGINT, and
    // gsearch leaves an ignored signal ignored).
    signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (named) setenv("GSEARCH_NO_O_TMPFILE", "1", 1);
    else unsetenv("GSEARCH_NO_O_TMPFILE");
    execv(GSEARCH_CLI_PATH, argv.data());
    _exit(127);
  }
  const std::string prefix = "." + out + ".tmp-";
  for (int i = 0; i < 60000; ++i) {  // up to a minute
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return -1;
    // A named temporary file with data in it: the check before the work creates and removes an
    // empty one of the same name, and a SIGKILL sent after that removal would find nothing.
    bool seen = false;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(watch))
      seen = seen || (e.path().filename().string().rfind(prefix, 0) == 0 &&
                      fs::file_size(e.path(), ec) > 0 && !ec);
    if (how) *how = seen ? seen_as::named : seen_as::nothing;
    if (!seen && writes_unnamed_in(pid, watch)) {
      seen = true;
      if (how) *how = seen_as::unnamed;
    }
    if (seen) {
      kill(pid, sig);
      waitpid(pid, &status, 0);
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

// Both ways of writing (an unnamed file where O_TMPFILE works, the named fallback) clean up on
// SIGTERM and SIGINT.
TEST_F(CliOutput, SigtermDuringAWriteLeavesNoTemporaryFile) {
  for (const bool named : {false, true}) {
    SCOPED_TRACE(named ? "named temporary files (GSEARCH_NO_O_TMPFILE=1)" : "the default");
    write_bytes(work("q.npy"), "precious");
    int status = -1;
    seen_as how = seen_as::nothing;
    // 400 MB of int64 queries: the write takes a while; a bigger one if it was over too soon.
    for (int64_t n : {50000000, 100000000}) {
      status = signal_mid_write(work(), {"gen", "--keys", "1", "--queries", std::to_string(n),
                                         "--dtype", "int64", "--keys-out", "k.npy",
                                         "--queries-out", "q.npy"},
                                work(), "q.npy", SIGTERM, named, &how);
      if (status != -1) break;
      write_bytes(work("q.npy"), "precious");
    }
    ASSERT_NE(status, -1) << "gen ended before its temporary file was seen";
    if (named) {
      EXPECT_EQ(how, seen_as::named);
    }
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
    EXPECT_TRUE(temp_files().empty()) << temp_files().front();
    EXPECT_EQ(read_bytes(work("q.npy")), "precious");
    EXPECT_FALSE(fs::exists(work("k.npy"))) << "neither file is renamed unless both were written";
  }
}

TEST_F(CliOutput, SigintDuringASortWriteLeavesNoTemporaryFile) {
  ok("gen --keys 1 --queries 20000000 --dtype int64 --keys-out k.npy --queries-out d.npy");
  fs::create_directories(work("out"));
  for (const bool named : {false, true}) {
    SCOPED_TRACE(named ? "named temporary files (GSEARCH_NO_O_TMPFILE=1)" : "the default");
    int status = -1;
    for (int attempt = 0; attempt < 3 && status == -1; ++attempt)
      status = signal_mid_write(work(), {"sort", "--device", "cpu", "--data", "d.npy", "--out", "out/s.npy", "--argsort", "out/p.npy"},
                                work("out"), "s.npy", SIGINT, named);
    ASSERT_NE(status, -1) << "sort ended before its temporary file was seen";
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status;
    EXPECT_TRUE(temp_files().empty()) << temp_files().front();
    EXPECT_FALSE(fs::exists(work("out/s.npy")));
    EXPECT_FALSE(fs::exists(work("out/p.npy")));
  }
}

// Issue 45: SIGKILL (or the OOM killer) cannot be caught. Where the file system gives unnamed
// files (O_TMPFILE), the output being written has no name until it is complete, so a kill
// mid-write leaves nothing at all; the named fallback (GSEARCH_NO_O_TMPFILE=1, or a file system
// without O_TMPFILE) leaves its hidden temporary file, which is why the unnamed one is preferred.
TEST_F(CliOutput, SigkillDuringASortWriteLeavesNothingWhereOTmpfileWorks) {
  ok("gen --keys 1 --queries 20000000 --dtype int64 --keys-out k.npy --queries-out d.npy");
  fs::create_directories(work("out"));
  if (!has_o_tmpfile(work("out"))) GTEST_SKIP() << "this file system has no O_TMPFILE";
  const std::vector<std::string> sort = {"sort", "--device", "cpu", "--data", "d.npy",
                                         "--out", "out/s.npy", "--argsort", "out/p.npy"};
  int status = -1;
  seen_as how = seen_as::nothing;
  for (int attempt = 0; attempt < 3 && status == -1; ++attempt)
    status = signal_mid_write(work(), sort, work("out"), "s.npy", SIGKILL, false, &how);
  ASSERT_NE(status, -1) << "sort ended before its write was seen";
  EXPECT_EQ(how, seen_as::unnamed) << "the output was written to a named file";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  EXPECT_TRUE(fs::is_empty(work("out"))) << "a SIGKILL mid-write left " << fs::directory_iterator(work("out"))->path();

  // The fallback: the named temporary file is what a SIGKILL leaves (the handler cannot run).
  status = -1;
  for (int attempt = 0; attempt < 3 && status == -1; ++attempt)
    status = signal_mid_write(work(), sort, work("out"), "s.npy", SIGKILL, true, &how);
  ASSERT_NE(status, -1);
  EXPECT_EQ(how, seen_as::named);
  EXPECT_FALSE(temp_files().empty());
  EXPECT_FALSE(fs::exists(work("out/s.npy")));
}

// Both ways of writing give the same files, replacing an existing one or not, through a symlink
// or not, with the mode rules of OutKeepsTheModeAndRefusesAReadOnlyFile, and leave no temporary
// file; the named fallback still works where O_TMPFILE does not (forced here by the variable).
TEST_F(CliOutput, TheNamedFallbackWritesTheSameFiles) {
  small_inputs();
  fs::create_directories(work("real"));
  fs::create_symlink("real/t.npy", work("link.npy"));
  for (const std::string& cmd : writers) {
    std::map<std::string, std::string> made;
    for (const std::string env : {"", "GSEARCH_NO_O_TMPFILE=1"}) {
      for (const std::string out : {"fresh.npy", "old.npy", "link.npy"}) {
        fs::remove(work("fresh.npy"));
        write_bytes(work("old.npy"), "old");
        fs::permissions(work("old.npy"), fs::perms(0640));
        fs::remove(work("real/t.npy"));
        const run_result r = gsearch(with_out(cmd, out), "", env);
        ASSERT_EQ(r.code, 0) << env << " " << with_out(cmd, out) << "\n" << r.err;
        const fs::path file = out == "link.npy" ? work("real/t.npy") : work(out);
        const std::string bytes = read_bytes(file);
        EXPECT_NE(bytes, "old") << env << " " << cmd;
        if (cmd.rfind("bench", 0) != 0) {  // (bench's JSON has its times)
          if (made.count(out)) {
            EXPECT_EQ(bytes, made[out]) << env << " " << with_out(cmd, out);
          }
          made[out] = bytes;
        }
        if (out == "old.npy") {
          EXPECT_EQ(fs::status(file).permissions(), fs::perms(0640)) << env << " " << cmd;
        }
        EXPECT_TRUE(fs::is_symlink(work("link.npy")));
        EXPECT_TRUE(temp_files().empty()) << env << " " << cmd;
      }
    }
  }
}

// ---- item 8: output paths before the work ---------------------------------------------------

TEST_F(CliOutput, OutputPathsAreCheckedBeforeAnyInputIsRead) {
  small_inputs();
  // A FIFO as the input: opening it blocks until someone writes, so a command that read its
  // inputs before checking its outputs would hang (and be killed by timeout: exit 124).
  ASSERT_EQ(mkfifo(work("in.npy").c_str(), 0644), 0);
  const std::pair<std::string, std::string> commands[] = {
      {"search --keys in.npy --queries in.npy --out OUT", "--out"},
      {"find --data in.npy --value 1 --mode all --out OUT", "--out"},
      {"find --data in.npy --values in.npy --out OUT", "--out"},
      {"merge --a in.npy --b in.npy --out OUT", "--out"},
      {"merge --a in.npy --b in.npy --out m.npy --a-values v.npy --b-values v.npy --out-values OUT",
       "--out-values"},
      {"sort --data in.npy --out OUT", "--out"},
      {"sort --data in.npy --out s.npy --argsort OUT", "--argsort"},
      {"set --op union --a in.npy --b in.npy --out OUT", "--out"},
      {"join --how semi --left in.npy --right in.npy --out-left OUT", "--out-left"},
      {"join --how inner --left in.npy --right in.npy --out-left i.npy --out-right OUT", "--out-right"},
  };
  for (const auto& [cmd, option] : commands) {
    fails(with_out(cmd, "nodir/x.npy"), 2,
          "cannot write nodir/x.npy (" + option + "): the directory nodir does not exist");
    fails(with_out(cmd, "k.npy/x.npy"), 2,
          "cannot write k.npy/x.npy (" + option + "): k.npy is not a directory");
    fails(with_out(cmd, "."), 1, option + " '.' names a directory: give a file name, such as ./out.npy");
    fails(with_out(cmd, "nodir/"), 1,
          option + " 'nodir/' names a directory: give a file name, such as nodir/out.npy");
    EXPECT_FALSE(fs::exists(work("m.npy")));
    EXPECT_FALSE(fs::exists(work("s.npy")));
    EXPECT_FALSE(fs::exists(work("i.npy")));
  }
}

TEST_F(CliOutput, GenAndBenchCheckTheirOutputsBeforeTheWork) {
  // Work that takes seconds: 2^28 int64 queries (2 GiB) and a benchmark of 2^24 queries.
  const std::string gen = "gen --keys 1 --queries 268435456 --dtype int64 --keys-out k.npy";
  run_result r = fails(gen + " --queries-out nodir/q.npy", 2,
                       "cannot write nodir/q.npy (--queries-out): the directory nodir does not exist");
  EXPECT_LT(r.seconds, 2.0) << "the queries were generated first";
  r = fails(gen + " --queries-out ./", 1, "--queries-out './' names a directory");
  EXPECT_LT(r.seconds, 2.0);
  EXPECT_FALSE(fs::exists(work("k.npy")));
  const std::string bench = "bench search --device cpu --keys 1024,16384 --queries 16777216 --repeat 15";
  r = fails(bench + " --json nodir/r.json", 2,
            "cannot write nodir/r.json (--json): the directory nodir does not exist");
  EXPECT_LT(r.seconds, 2.0) << "the benchmark ran first";
  EXPECT_EQ(r.out, "") << "no row was measured";
  r = fails(bench + " --json .", 1, "--json '.' names a directory");
  EXPECT_LT(r.seconds, 2.0);
  EXPECT_EQ(r.out, "");
}

TEST_F(CliOutput, AnUnwritableDirectoryIsRefusedBeforeTheWork) {
  small_inputs();
  // A directory where nothing can be created, even by root.
  fails("search --keys k.npy --queries q.npy --out /proc/x.npy", 2,
        "cannot write /proc/x.npy (--out): the directory /proc is not writable (");
  if (geteuid() == 0) return;  // root writes in a 0555 directory
  fs::create_directories(work("locked"));
  fs::permissions(work("locked"), fs::perms(0555));
  fails("search --keys k.npy --queries q.npy --out locked/o.npy", 2,
        "cannot write locked/o.npy (--out): the directory locked is not writable (Permission "
        "denied)");
  fs::permissions(work("locked"), fs::perms(0755));
}

// ---- item 9: argument errors -------------------------------------------------------------------

TEST_F(CliOutput, NumbersOutOfRangeAreNamedReadably) {
  small_inputs();
  const std::pair<std::string, std::string> cases[] = {
      {"gen --keys -1 --queries 10 --keys-out a.npy --queries-out b.npy", "--keys must be at least 0 (got -1)"},
      {"gen --keys 10 --queries 1.5 --keys-out a.npy --queries-out b.npy", "--queries '1.5' is not a whole number"},
      {"conflicts --algo pbs --keys 0", "--keys must be at least 1 (got 0)"},
      {"conflicts --algo pbs --keys 100 --warps 0", "--warps must be at least 1 (got 0)"},
      {"conflicts --algo pbs --keys 100 --banks 0", "--banks must be at least 1 (got 0)"},
      {"conflicts --algo pbs --keys 100 --banks 5000", "--banks must be at most 1024"},
      {"search --keys k.npy --queries q.npy --repeat 0", "--repeat must be at least 1 (got 0)"},
      {"bench search --device cpu --repeat 0", "--repeat must be at least 1 (got 0)"},
      {"bench search --device cpu --warmup -1", "--warmup must be at least 0 (got -1)"},
      {"bench search --device cpu --queries 0", "--queries must be at least 1 (got 0)"},
      {"bench search --device cpu --keys -3", "--keys must be at least 1 (got -3)"},
      {"bench search --device cpu --keys 1024,0", "--keys must be at least 1 (got 0)"},
  };
  for (const auto& [args, message] : cases) {
    const run_result r = fails(args, 1, message);
    EXPECT_LT(r.err.size(), 400u) << "a readable message, not a 309-digit range";
    EXPECT_FALSE(contains(r.err, "1797693")) << r.err;
  }
}

TEST_F(CliOutput, SizesBeyondMemoryAreRefusedUpFront) {
  const std::pair<std::string, std::string> cases[] = {
      {"gen --keys 10 --queries 4611686018427387904 --keys-out a.npy --queries-out b.npy",
       "--queries must be at most "},
      {"gen --keys 18446744073709551616 --queries 10 --keys-out a.npy --queries-out b.npy",
       "--keys must be at most "},
      {"gen --keys 9223372036854775807 --queries 10 --dtype int64 --keys-out a.npy --queries-out b.npy",
       "--keys must be at most "},
      {"conflicts --algo pbs --keys 18446744073709551616", "--keys must be at most "},
      {"conflicts --algo pbs --keys 1024 --warps 4611686018427387904", "--warps must be at most "},
      {"bench search --device cpu --queries 4611686018427387904", "--queries must be at most "},
      {"bench search --device cpu --keys 4611686018427387904", "--keys must be at most "},
  };
  for (const auto& [args, message] : cases) {
    const run_result r = fails(args, 1, message);
    EXPECT_TRUE(contains(r.err, "what this machine's memory (")) << r.err;
    EXPECT_FALSE(contains(r.err, "max_size")) << r.err;
    EXPECT_LT(r.seconds, 5.0);
  }
  // Each fits, the two together do not: named too.
  const std::string n = std::to_string(int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE) / 8 * 6 / 10);
  fails("gen --keys " + n + " --queries " + n + " --dtype int64 --keys-out a.npy --queries-out b.npy",
        1, "together need");
  EXPECT_FALSE(fs::exists(work("a.npy")));
}

TEST_F(CliOutput, OneRuleForSeeds) {
  save("d.npy", std::vector<int32_t>{1, 2, 3});
  const char* commands[] = {
      "gen --keys 10 --queries 10 --keys-out a.npy --queries-out b.npy",
      "conflicts --algo pbs --keys 100",
      "bench search --device cpu --keys 32 --queries 100 --repeat 1 --warmup 0",
      "find --data d.npy --value 1 --mode random",
  };
  for (const std::string cmd : commands) {
    fails(cmd + " --seed -1", 1, "--seed '-1' is out of the range of uint64 [0, 18446744073709551615]");
    fails(cmd + " --seed 18446744073709551616", 1, "--seed '18446744073709551616' is out of the range of uint64");
    fails(cmd + " --seed 1.5", 1, "--seed '1.5' is not an uint64 value");
    ok(cmd + " --seed 18446744073709551615");
  }
}

TEST_F(CliOutput, EmptyPathsAreRefused) {
  small_inputs();
  for (const std::string& cmd : writers) {
    const run_result r = fails(with_out(cmd, "''"), 1, "'' is an empty path: give a file name");
    EXPECT_EQ(r.out, "") << cmd << ": nothing on stdout";
  }
  fails("search --keys '' --queries q.npy", 1, "--keys '' is an empty path");
}

TEST_F(CliOutput, JsonErrorsAreJsonOnStdout) {
  small_inputs();
  const std::pair<std::string, int> cases[] = {
      {"search --keys missing.npy --queries q.npy --out o.npy --json", 1},
      {"search --keys k.npy --queries q.npy --json", 1},  // --json needs --out
      {"find --data missing.npy --value 1 --json", 1},
      {"find --data k.npy --value 1.5 --json", 1},
      {"find --data k.npy --value 1 --mode nope --json", 105},  // a parse error
      {"merge --a k.npy --b missing.npy --out o.npy --json", 1},
      {"sort --data missing.npy --out o.npy --json", 1},
      {"set --op union --a k.npy --b missing.npy --out o.npy --json", 1},
      {"join --how semi --left k.npy --right missing.npy --out-left o.npy --json", 1},
      {"conflicts --algo pbs --keys 0 --json", 1},
      {"search --keys k.npy --queries q.npy --out nodir/o.npy --json", 2},
      {"sort --data k.npy --out '' --json", 1},
  };
  for (const auto& [args, code] : cases) {
    const run_result r = gsearch(args);
    EXPECT_EQ(r.code, code) << args << "\n" << r.err;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << args << "\nstdout: " << r.out;
    ASSERT_TRUE(j.contains("error")) << args << ": " << r.out;
    EXPECT_EQ(j["exit_code"], code) << args;
    // The same message as stderr's.
    EXPECT_TRUE(contains(r.err, j["error"].get<std::string>())) << args << "\n" << r.err;
  }
  // Without --json, stdout stays empty; with it and success, one object without "error".
  EXPECT_EQ(gsearch("find --data missing.npy --value 1").out, "");
  EXPECT_FALSE(nlohmann::json::parse(ok("find --data k.npy --value 3 --json").out).contains("error"));
  // An error after the JSON summary (search --verify): still exactly one object on stdout.
  std::vector<int32_t> down(100), qs(100);
  for (int i = 0; i < 100; ++i) down[size_t(i)] = 100 - i, qs[size_t(i)] = i;
  save("down.npy", down);
  save("qs.npy", qs);
  const run_result r = gsearch("search --keys down.npy --queries qs.npy --assume-sorted --verify --out o.npy --json");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(nlohmann::json::parse(r.out)["verified"], false) << r.out;
}

TEST_F(CliOutput, NoCommandPrintsTheUsageAndExits1) {
  const run_result r = gsearch("");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("gsearch: error: no command given", 0), 0u) << r.err;
  EXPECT_TRUE(contains(r.err, "Subcommands:")) << r.err;
  EXPECT_TRUE(contains(r.err, "search")) << r.err;
  EXPECT_EQ(gsearch("--help").code, 0);
}

TEST_F(CliOutput, AMistypedCommandGetsTheNearest) {
  const std::pair<std::string, std::string> cases[] = {
      {"serch --keys k.npy", "unknown command 'serch'; did you mean 'search'?"},
      {"fnid", "unknown command 'fnid'; did you mean 'find'?"},
      {"conflict --algo pbs", "did you mean 'conflicts'?"},
      {"srot", "did you mean 'sort'?"},
      {"bench serch --quick", "unknown command 'serch'; did you mean 'search'?"},
  };
  for (const auto& [args, message] : cases) {
    const run_result r = fails(args, 109, message);
    EXPECT_EQ(r.out, "");
  }
  const run_result r = fails("xyzzy", 109, "unknown command 'xyzzy' (the commands: search, find,");
  EXPECT_FALSE(contains(r.err, "did you mean")) << r.err;
}

TEST_F(CliOutput, ConflictsHelpListsOnlyTheModelledAlgorithms) {
  const std::string help = ok("conflicts --help").out;
  const size_t at = help.find("--algo ");
  ASSERT_NE(at, std::string::npos) << help;
  const std::string line = help.substr(at, help.find('\n', at) - at);
  EXPECT_TRUE(contains(line, "{pbs,pbs-cf,pbs-cl,binary}")) << line;
  for (const char* a : {"index", "partitioned", "pary", "auto"})
    EXPECT_FALSE(contains(line, a)) << a << " is listed: " << line;
  for (const char* a : {"pbs", "pbs-cf", "pbs-cl", "binary"})
    ok(std::string("conflicts --keys 1024 --warps 2 --algo ") + a);
  fails("conflicts --keys 1024 --algo index", 105, "index");
}

// ---- item 17: progress and the time summary ------------------------------------------------

TEST_F(CliOutput, TheTimeSummaryGoesToStderrAndNoProgressWithoutATerminal) {
  save("d.npy", std::vector<int32_t>{5, 1, 4, 1, 3});
  const std::string env = "GSEARCH_PROGRESS_AFTER_MS=0";
  run_result r = gsearch("find --data d.npy --value 1 --mode count --json", "", env);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["result"], 2) << "stdout is the JSON object alone";
  EXPECT_TRUE(contains(r.err, "gsearch find: ")) << r.err;
  EXPECT_TRUE(contains(r.err, " s in all (reading ")) << r.err;
  EXPECT_FALSE(contains(r.err, "\r")) << "no progress line: stderr is not a terminal";
  r = gsearch("sort --data d.npy --out s.npy", "", env);
  EXPECT_TRUE(contains(r.err, "gsearch sort: ") && contains(r.err, "sorting ")) << r.err;
  EXPECT_FALSE(contains(r.out, "in all")) << r.out;
  // Quick commands print no summary by default (2 seconds).
  EXPECT_FALSE(contains(gsearch("sort --data d.npy --out s.npy").err, "in all"));
}

TEST_F(CliOutput, ProgressOnATerminal) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string slave = ptsname(master);
  fcntl(master, F_SETFL, O_NONBLOCK);
  const std::string cmd = "cd '" + work().string() +
                          "' && GSEARCH_PROGRESS_AFTER_MS=0 '" GSEARCH_CLI_PATH
                          "' gen --keys 1 --queries 30000000 --dtype int64 --keys-out k.npy "
                          "--queries-out q.npy > out.txt 2> '" + slave + "'";
  // Read the terminal while the command runs, so that its buffer never fills.
  std::string tty;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    char buf[4096];
    while (!done) {
      const ssize_t n = read(master, buf, sizeof buf);
      if (n > 0) tty.append(buf, size_t(n));
      else std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;) tty.append(buf, size_t(n));
  });
  const int status = std::system(cmd.c_str());
  done = true;
  reader.join();
  close(master);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(contains(tty, "\r\033[Kgsearch gen: ")) << tty;
  EXPECT_TRUE(contains(tty, "gsearch gen: ") && contains(tty, " s in all (generating ")) << tty;
  EXPECT_EQ(read_bytes(work("out.txt")), "") << "nothing on stdout";
}

}  // namespace

namespace {

// search --max-temp-bytes (search_options::max_temp_bytes): auto stays within the cap, an
// explicit allocating algorithm over it is an error that writes nothing, a bad value fails first.
TEST_F(CliOutput, MaxTempBytesCapsTheSearch) {
  ok("gen --keys 1048576 --queries 262144 --keys-out k.npy --queries-out q.npy");
  const auto algo_of = [&](const std::string& cap) {
    const run_result r = ok("search --keys k.npy --queries q.npy --device cpu --verify --json --out o.npy " + cap);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["verified"].get<bool>()) << cap;
    return j["algo"].get<std::string>();
  };
  EXPECT_EQ(algo_of(""), "index");  // 2^20 keys, K/4 queries: auto builds the CPU index
  EXPECT_EQ(algo_of("--max-temp-bytes 0"), "binary");
  fails("search --keys k.npy --queries q.npy --device cpu --algo index --max-temp-bytes 0 --out x.npy", 1,
        "max_temp_bytes = 0");
  EXPECT_FALSE(fs::exists(work("x.npy")));
  fails("search --keys k.npy --queries q.npy --max-temp-bytes -1 --out x.npy", 1,
        "--max-temp-bytes must be at least 0 (got -1)");
}

TEST_F(CliOutput, VersionNamesTheSourceCommit) {
  const run_result r = ok("--version");
  EXPECT_TRUE(contains(r.out, "; source ")) << r.out;
}

}  // namespace
