// The shared parts of the CLI tests (cli_fixture.hpp): files, the temporary directory and the
// runs of the gsearch binary.

#include "cli_fixture.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace cli_test {

std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

std::string raw_npy(const std::string& dict, const std::string& data, int major) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string h = dict;
  while ((prefix + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string f = std::string("\x93NUMPY", 6) + char(major) + char(0);
  for (size_t i = 0; i < prefix - 8; ++i) f += char((h.size() >> (8 * i)) & 0xff);
  return f + h + data;
}

void TempDir::SetUp() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "gsearch_cli_test_" + std::to_string(getpid()) + "_" +
                     info->test_suite_name() + "_" + info->name();
  std::replace(name.begin(), name.end(), '/', '_');  // typed tests: "Suite/0"
  dir_ = fs::temp_directory_path() / name;
  fs::remove_all(dir_);
  fs::create_directories(dir_ / "work");
}
void TempDir::TearDown() { fs::remove_all(dir_); }

std::map<std::string, std::string> TempDir::snapshot() const {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::directory_iterator(work()))
    m[e.path().filename().string()] = read_bytes(e.path());
  return m;
}

run_result Cli::gsearch(const std::string& args) const {
  const std::string cmd = "cd '" + work().string() + "' && " + env_ + launcher_ + "'" GSEARCH_CLI_PATH "' " + args +
                          " > '" + (dir_ / "stdout").string() + "' 2> '" +
                          (dir_ / "stderr").string() + "'";
  const int status = std::system(cmd.c_str());
  const run_result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_bytes(dir_ / "stdout"),
                     read_bytes(dir_ / "stderr")};
  if (::testing::Test::HasFailure())
    std::printf("$ gsearch %s\n%s%s", args.c_str(), r.out.c_str(), r.err.c_str());
  return r;
}

run_result Cli::ok(const std::string& args) const {
  run_result r = gsearch(args);
  EXPECT_EQ(r.code, 0) << "gsearch " << args << "\n" << r.err;
  return r;
}

void Cli::fails(const std::string& args, int code, const std::string& message, bool with_out) {
  write_bytes(work("out.npy"), "precious");
  const auto before = snapshot();
  const run_result r = gsearch(args + (with_out ? " --out out.npy" : ""));
  if (code > 0) {
    EXPECT_EQ(r.code, code) << args << "\n" << r.err;
  } else {
    EXPECT_NE(r.code, 0) << args << "\n" << r.err;
  }
  // The error line; only a --verify mismatch has the summary (stderr too) before it.
  const size_t at = r.err.find("gsearch: error: ");
  EXPECT_TRUE(at == 0 || (at != std::string::npos && r.err[at - 1] == '\n')) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(snapshot(), before) << args << ": files were created or changed";
}

std::string reference_name(side s) {
  return s == side::left ? "std::lower_bound" : "std::upper_bound";
}

}  // namespace cli_test
