// Tests of the gsearch command-line tool: unit tests of its .npy reader / writer, and end-to-end
// runs of the `gsearch` binary (GSEARCH_CLI_PATH) through the shell, each test in a fresh
// temporary directory. Results are checked against the tests' own reference (std:: algorithms).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gsearch/core/query_gen.hpp"
#include "gsearch/device.hpp"
#include "npy.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
namespace npy = gsearch::cli::npy;
using gsearch::side;
using gsearch::cli::dtype;
using gsearch::cli::exit_code;
using gsearch::cli::failure;

std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// A .npy file made by hand: `dict` padded as numpy pads it, any version, then `data`.
std::string raw_npy(const std::string& dict, const std::string& data, int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string h = dict;
  while ((prefix + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string f = std::string("\x93NUMPY", 6) + char(major) + char(0);
  for (size_t i = 0; i < prefix - 8; ++i) f += char((h.size() >> (8 * i)) & 0xff);
  return f + h + data;
}
template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// The message of the cli::failure `f` throws, after checking its exit code.
template <class F>
std::string failure_of(F&& f, exit_code code) {
  try {
    f();
  } catch (const failure& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no gsearch::cli::failure thrown";
  return {};
}

// A fresh directory for each test, removed afterwards.
class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "gsearch_cli_test_" + std::to_string(getpid()) + "_" +
                       info->test_suite_name() + "_" + info->name();
    std::replace(name.begin(), name.end(), '/', '_');  // typed tests: "Suite/0"
    dir_ = fs::temp_directory_path() / name;
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "work");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path work(const std::string& name = "") const {
    return name.empty() ? dir_ / "work" : dir_ / "work" / name;
  }

  // The files in the work directory and their contents.
  std::map<std::string, std::string> snapshot() const {
    std::map<std::string, std::string> m;
    for (const auto& e : fs::directory_iterator(work()))
      m[e.path().filename().string()] = read_bytes(e.path());
    return m;
  }

  fs::path dir_;
};

// Tests that write .npy files.
class NpyFile : public TempDir {};

// ---- .npy: round trips ---------------------------------------------------------------------

template <class T>
class NpyRoundTrip : public NpyFile {};
TYPED_TEST_SUITE(NpyRoundTrip, gsearch::test::KeyTypes);

TYPED_TEST(NpyRoundTrip, EveryValueAndBitSurvives) {
  using T = TypeParam;
  std::vector<T> v = gsearch::test::edge_values<T>();
  const auto more = gsearch::gen::sorted_keys<T>(1000, 7);
  v.insert(v.end(), more.begin(), more.end());
  const std::string path = this->work("a.npy").string();
  npy::save(path, gsearch::span<const T>(v));

  npy::input in(path);
  EXPECT_EQ(in.type(), gsearch::cli::dtype_of<T>());
  EXPECT_EQ(in.size(), int64_t(v.size()));
  const std::vector<T> back = in.read<T>();
  EXPECT_EQ(bytes_of(back), bytes_of(v));  // bit for bit: NaN, -0.0
  const std::string file = read_bytes(path);
  EXPECT_EQ(file.size(), 128 + v.size() * sizeof(T));
  EXPECT_NE(file.find(std::string("'descr': '") + gsearch::key_traits<T>::npy_descr + "'"),
            std::string::npos);
}

TYPED_TEST(NpyRoundTrip, EmptyArray) {
  using T = TypeParam;
  const std::string path = this->work("empty.npy").string();
  npy::save(path, gsearch::span<const T>());
  EXPECT_EQ(read_bytes(path).size(), 128u);
  EXPECT_NE(read_bytes(path).find("'shape': (0,)"), std::string::npos);
  EXPECT_TRUE(npy::load<T>(path).empty());
}

// ---- .npy: the header, byte for byte -------------------------------------------------------

TEST(NpyHeader, IsWhatNumpyWrites) {
  // np.save(f, np.arange(3, dtype='<i4')) with numpy 1.x and 2.x.
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                         "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  expected.append(128 - 1 - expected.size(), ' ');
  expected += '\n';
  EXPECT_EQ(npy::encode_header(dtype::int32, 3), expected);
}

TEST(NpyHeader, DataStartsAtA64ByteBoundary) {
  for (dtype t : gsearch::cli::all_dtypes)
    for (int64_t n :
         {int64_t(0), int64_t(1), int64_t(12345), int64_t(1) << 40, int64_t(999999999999999)}) {
      const std::string h = npy::encode_header(t, n);
      EXPECT_EQ(h.size() % 64, 0u) << n;
      EXPECT_EQ(h.back(), '\n');
      EXPECT_EQ(npy::parse_header(h.substr(10), "x.npy").size, n);
    }
}

TEST(NpyHeader, ParsesWhatNumpyMightWrite) {
  struct variant {
    const char* dict;
    dtype type;
    int64_t size;
  };
  const variant variants[] = {
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }", dtype::float64, 10},
      {"{'shape': (10, ), 'fortran_order': False, 'descr': '<u8'}", dtype::uint64, 10},
      {"{\"descr\": \"<i8\", \"fortran_order\": True, \"shape\": (7,)}", dtype::int64, 7},
      {"{'descr':'<u4','fortran_order':False,'shape':(5L,),}", dtype::uint32, 5},
      {"{'descr': '=f4', 'fortran_order': False, 'shape': (0,), }", dtype::float32, 0},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'extra': 'ignored'}", dtype::int32,
       3},
  };
  for (const variant& v : variants) {
    const npy::header h = npy::parse_header(v.dict, "x.npy");
    EXPECT_EQ(h.type, v.type) << v.dict;
    EXPECT_EQ(h.size, v.size) << v.dict;
  }
}

TEST_F(NpyFile, ReadsVersion2And3) {
  const std::vector<int64_t> v{-5, 0, 5};
  for (int major : {2, 3}) {
    const fs::path p = work(std::to_string(major) + ".npy");
    write_bytes(p, raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", bytes_of(v),
                           major));
    EXPECT_EQ(npy::load<int64_t>(p.string()), v);
  }
}

// ---- .npy: bad files -----------------------------------------------------------------------

TEST_F(NpyFile, RejectsBadFiles) {
  const std::string data(4000, '\0');
  struct bad_file {
    const char* name;
    std::string bytes;
    const char* message;
  };
  const bad_file cases[] = {
      {"trunc.npy",
       raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (1000,), }",
               data.substr(0, 1234)),
       "trunc.npy is truncated: header says 1000 int32 values (4000 bytes) but the file has 1234 "
       "bytes of data"},
      {"empty.npy", "", "is not a .npy file"},
      {"short_header.npy",
       raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", "").substr(0, 40),
       "is not a .npy file (truncated header)"},
      {"magic.npy", "PK\x03\x04 this is a zip file, not an array", "is not a .npy file"},
      {"v9.npy",
       raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", data.substr(0, 4), 9),
       "version 9.0"},
      {"2d.npy",
       raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", data.substr(0, 24)),
       "has shape (2, 3), but gsearch reads 1-D arrays only"},
      {"2d_fortran.npy",
       raw_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", data.substr(0, 24)),
       "1-D arrays only"},
      {"scalar.npy",
       raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (), }", data.substr(0, 4)),
       "scalar"},
      {"big.npy",
       raw_npy("{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }", data.substr(0, 4)),
       "big-endian"},
      {"i2.npy",
       raw_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }", data.substr(0, 2)),
       "dtype '<i2', which gsearch does not support"},
      {"bool.npy",
       raw_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", data.substr(0, 1)),
       "does not support"},
      {"struct.npy",
       raw_npy("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }",
               data.substr(0, 4)),
       "structured"},
      {"garbage.npy", raw_npy("this is not a dict", ""), "cannot parse"},
      {"negative.npy", raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (-1,), }", ""),
       "cannot parse"},
      {"nokey.npy", raw_npy("{'descr': '<i4', 'shape': (1,), }", data.substr(0, 4)),
       "without 'fortran_order'"},
      {"unterminated.npy", raw_npy("{'descr': '<i4", ""), "cannot parse"},
  };
  for (const bad_file& c : cases) {
    write_bytes(work(c.name), c.bytes);
    const std::string msg =
        failure_of([&] { npy::input in(work(c.name).string()); }, gsearch::cli::exit_bad_input);
    EXPECT_NE(msg.find(c.message), std::string::npos) << c.name << ": " << msg;
    EXPECT_NE(msg.find(c.name), std::string::npos) << "the message names the file: " << msg;
  }
  EXPECT_NE(
      failure_of([&] { npy::input in(work("missing.npy").string()); }, gsearch::cli::exit_bad_input)
          .find("cannot open"),
      std::string::npos);
  EXPECT_NE(failure_of([&] { npy::input in(work().string()); }, gsearch::cli::exit_bad_input)
                .find("directory"),
            std::string::npos);
}

// ---- .npy: writing is atomic ---------------------------------------------------------------

TEST_F(NpyFile, SaveReplacesAtomicallyAndLeavesNoTemporaryFile) {
  const std::vector<float> v{1.5f, 2.5f};
  write_bytes(work("a.npy"), "old");
  npy::save(work("a.npy").string(), gsearch::span<const float>(v));
  EXPECT_EQ(npy::load<float>(work("a.npy").string()), v);
  EXPECT_EQ(snapshot().size(), 1u);

  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(fs::status(work("a.npy")).permissions(), fs::perms(0666 & ~mask));

  { npy::staged_file uncommitted(work("b.npy").string(), dtype::float32, v.data(), 2); }
  EXPECT_EQ(snapshot().size(), 1u) << "an uncommitted file leaves nothing behind";

  const std::string msg = failure_of(
      [&] { npy::save(work("no/such/dir/c.npy").string(), gsearch::span<const float>(v)); },
      gsearch::cli::exit_device_or_io);
  EXPECT_NE(msg.find("cannot write"), std::string::npos) << msg;
  EXPECT_EQ(snapshot().size(), 1u);
}

// ---- the gsearch binary --------------------------------------------------------------------

struct run_result {
  int code;
  std::string out, err;
};

class Cli : public TempDir {
 protected:
  // Runs `gsearch <args>` in the work directory.
  run_result gsearch(const std::string& args) const {
    const std::string cmd = "cd '" + work().string() + "' && '" GSEARCH_CLI_PATH "' " + args +
                            " > '" + (dir_ / "stdout").string() + "' 2> '" +
                            (dir_ / "stderr").string() + "'";
    const int status = std::system(cmd.c_str());
    const run_result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_bytes(dir_ / "stdout"),
                       read_bytes(dir_ / "stderr")};
    if (::testing::Test::HasFailure())
      std::printf("$ gsearch %s\n%s%s", args.c_str(), r.out.c_str(), r.err.c_str());
    return r;
  }
  // Runs it and expects success.
  run_result ok(const std::string& args) const {
    run_result r = gsearch(args);
    EXPECT_EQ(r.code, 0) << "gsearch " << args << "\n" << r.err;
    return r;
  }
  // Runs it (adding --out out.npy if with_out) while out.npy exists, and expects exit `code`
  // (any non-zero one if code < 0), stderr starting with "gsearch: error: " and containing
  // `message`, and the work directory exactly as it was: nothing created, nothing clobbered.
  void fails(const std::string& args, int code, const std::string& message, bool with_out = true) {
    write_bytes(work("out.npy"), "precious");
    const auto before = snapshot();
    const run_result r = gsearch(args + (with_out ? " --out out.npy" : ""));
    if (code > 0) {
      EXPECT_EQ(r.code, code) << args << "\n" << r.err;
    } else {
      EXPECT_NE(r.code, 0) << args << "\n" << r.err;
    }
    EXPECT_EQ(r.err.rfind("gsearch: error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(snapshot(), before) << args << ": files were created or changed";
  }
  template <class T>
  void save(const std::string& name, const std::vector<T>& v) const {
    npy::save(work(name).string(), gsearch::span<const T>(v));
  }
};

std::string reference_name(side s) {
  return s == side::left ? "std::lower_bound" : "std::upper_bound";
}

template <class T>
void expect_results(const std::vector<T>& keys, const std::vector<T>& queries, side s,
                    const std::vector<int64_t>& got, const std::string& what) {
  ASSERT_EQ(got.size(), queries.size()) << what;
  EXPECT_EQ(got, gsearch::test::reference_all(keys, queries, s)) << what;
}

TEST_F(Cli, SearchVerifiesEverySideAlgorithmAndType) {
  const char* algos[] = {"auto", "pbs", "pbs-cf", "pbs-cl", "binary"};
  int i = 0;
  for (dtype t : gsearch::cli::all_dtypes) {
    const std::string dt(gsearch::cli::name(t));
    ok("gen --keys 3000 --queries 2001 --dtype " + dt + " --query-kind " +
       (i % 2 ? "worst" : "random") + " --seed " + std::to_string(i) +
       " --keys-out k.npy --queries-out q.npy");
    gsearch::cli::visit(t, [&]<class T>() {
      const auto keys = npy::load<T>(work("k.npy").string());
      const auto queries = npy::load<T>(work("q.npy").string());
      for (side s : {side::left, side::right, side::pred}) {
        // Every algorithm for every side, spread over the types (the library tests do the rest).
        const std::string algo = algos[i++ % 5];
        const std::string side_name = gsearch::test::side_name(s);
        const run_result r =
            ok("search --keys k.npy --queries q.npy --out o.npy --device cpu --verify --side " +
               side_name + " --algo " + algo);
        EXPECT_NE(r.out.find("search: 2001 queries, 3000 " + dt + " keys, side=" + side_name),
                  std::string::npos)
            << r.out;
        EXPECT_NE(r.out.find("check: all 2001 results match " + reference_name(s)),
                  std::string::npos)
            << r.out;
        EXPECT_EQ(r.err, "");
        expect_results(keys, queries, s, npy::load<int64_t>(work("o.npy").string()),
                       dt + " " + side_name + " " + algo);
      }
    });
  }
}

TEST_F(Cli, FloatOrderNaNLastAndSignedZero) {
  const double inf = INFINITY, nan = NAN;
  std::vector<double> keys{-inf, -1.0, -0.0, 0.0, 0.0, 1.0, inf, nan, nan};
  std::vector<double> queries{nan, -0.0, 0.0, inf, -inf, 0.5, -2.0, 3.0};
  save("k.npy", keys);
  save("q.npy", queries);
  for (side s : {side::left, side::right, side::pred}) {
    ok("search --keys k.npy --queries q.npy --out o.npy --verify --side " +
       std::string(gsearch::test::side_name(s)));
    expect_results(keys, queries, s, npy::load<int64_t>(work("o.npy").string()), "float64");
  }
}

TEST_F(Cli, Int32Output) {
  ok("gen --keys 1000 --queries 500 --dtype uint64 --keys-out k.npy --queries-out q.npy");
  ok("search --keys k.npy --queries q.npy --out o64.npy --side pred");
  ok("search --keys k.npy --queries q.npy --out o32.npy --side pred --int32");
  EXPECT_EQ(npy::input(work("o32.npy").string()).type(), dtype::int32);
  const auto o64 = npy::load<int64_t>(work("o64.npy").string());
  const auto o32 = npy::load<int32_t>(work("o32.npy").string());
  EXPECT_EQ(std::vector<int64_t>(o32.begin(), o32.end()), o64);
}

TEST_F(Cli, IndicesToStdoutSummaryToStderr) {
  ok("gen --keys 100 --queries 50 --dtype float32 --keys-out k.npy --queries-out q.npy");
  const run_result r = ok("search --keys k.npy --queries q.npy --side right --verify --device cpu");
  std::vector<int64_t> got;
  std::istringstream lines(r.out);
  for (int64_t x; lines >> x;) got.push_back(x);
  expect_results(npy::load<float>(work("k.npy").string()), npy::load<float>(work("q.npy").string()),
                 side::right, got, "stdout");
  EXPECT_NE(
      r.err.find("search: 50 queries, 100 float32 keys, side=right, algo=binary, device=cpu ("),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("check: all 50 results match std::upper_bound"), std::string::npos) << r.err;
}

TEST_F(Cli, JsonSummary) {
  ok("gen --keys 2000 --queries 100 --dtype int64 --keys-out k.npy --queries-out q.npy");
  run_result r =
      ok("search --keys k.npy --queries q.npy --out o.npy --json --repeat 3 --device cpu");
  const auto j = nlohmann::json::parse(r.out);  // all of stdout is the one object
  EXPECT_EQ(j["command"], "search");
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_FALSE(j["device_name"].get<std::string>().empty());
  EXPECT_EQ(j["algo"], "binary");  // auto on the CPU
  EXPECT_EQ(j["side"], "left");
  EXPECT_EQ(j["dtype"], "int64");
  EXPECT_EQ(j["out_dtype"], "int64");
  EXPECT_EQ(j["keys"], 2000);
  EXPECT_EQ(j["queries"], 100);
  EXPECT_EQ(j["repeat"], 3);
  EXPECT_EQ(j["search_ms_runs"].size(), 3u);
  EXPECT_GE(j["search_ms"].get<double>(), 0.0);
  EXPECT_GE(j["queries_per_s"].get<double>(), 0.0);
  EXPECT_TRUE(j["verified"].is_null());
  EXPECT_EQ(r.err, "");

  r =
      ok("search --keys k.npy --queries q.npy --out o.npy --json --verify --algo pbs-cf --side "
         "pred --int32");
  const auto v = nlohmann::json::parse(r.out);
  EXPECT_EQ(v["verified"], true);
  EXPECT_EQ(v["algo"], "pbs-cf");
  EXPECT_EQ(v["side"], "pred");
  EXPECT_EQ(v["out_dtype"], "int32");
}

TEST_F(Cli, EmptyKeysAndQueries) {
  save("k.npy", std::vector<int32_t>{});
  save("q.npy", std::vector<int32_t>{1, 2, 3});
  ok("search --keys k.npy --queries q.npy --out o.npy --side pred --verify");
  EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>{-1, -1, -1}));
  ok("search --keys q.npy --queries k.npy --out o.npy --verify");
  EXPECT_TRUE(npy::load<int64_t>(work("o.npy").string()).empty());
}

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

TEST_F(Cli, HelpAndVersion) {
  run_result r = ok("");
  EXPECT_NE(r.out.find("Subcommands:"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos);
  r = ok("--version");
  EXPECT_EQ(r.out.rfind("gsearch ", 0), 0u) << r.out;
  r = ok("search --help");
  EXPECT_NE(r.out.find("--assume-sorted"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos);
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
  fails("search --keys 2d.npy --queries q.npy", 1, "1-D");
  fails("search --keys k.npy --queries big.npy", 1, "big-endian");
  fails("search --keys i2.npy --queries q.npy", 1, "does not support");
  fails("search --keys k.npy --queries f.npy", 1,
        "keys are int32 but queries are float64: gsearch never casts");
  fails("search --keys unsorted.npy --queries q.npy", 1, "keys are not sorted at index 3");
  fails("search --keys k.npy --queries q.npy --json", 1, "--json needs --out", false);
  fails("gen --keys 10 --queries 10 --keys-out same.npy --queries-out ./same.npy", 1, "same file",
        false);
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

TEST_F(Cli, CudaWithoutDevice) {
  if (gsearch::cuda_device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
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

TEST_F(Cli, CudaSearchVerifies) {
  if (gsearch::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  ok("gen --keys 100000 --queries 100000 --dtype float32 --keys-out k.npy --queries-out q.npy");
  for (const char* algo : {"auto", "pbs", "pbs-cf", "pbs-cl", "binary"}) {
    const auto j =
        nlohmann::json::parse(ok(std::string("search --keys k.npy --queries q.npy --out o.npy "
                                             "--device cuda --verify --json --algo ") +
                                 algo)
                                  .out);
    EXPECT_EQ(j["device"], "cuda");
    EXPECT_EQ(j["verified"], true);
    EXPECT_NE(j["algo"], "auto");
  }
}

}  // namespace
