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
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
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

TEST(NpyHeader, Encodes2DAsNumpyDoes) {
  // np.save(f, np.zeros((3, 4), dtype='<i8')) with numpy 1.x and 2.x.
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                         "{'descr': '<i8', 'fortran_order': False, 'shape': (3, 4), }";
  expected.append(128 - 1 - expected.size(), ' ');
  expected += '\n';
  EXPECT_EQ(npy::encode_header(dtype::int64, std::vector<int64_t>{3, 4}), expected);
  // The 1-D form is unchanged, and both forms put the data at a multiple of 64 bytes.
  EXPECT_EQ(npy::encode_header(dtype::int32, std::vector<int64_t>{3}),
            npy::encode_header(dtype::int32, 3));
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {0, 0}, {0, 5}, {5, 0}, {1, 1}, {int64_t(1) << 20, int64_t(1) << 20}}) {
    const std::string h = npy::encode_header(dtype::float32, shape);
    EXPECT_EQ(h.size() % 64, 0u);
    const npy::header back = npy::parse_header(h.substr(10), "x.npy");
    EXPECT_EQ(back.shape, shape);
    EXPECT_EQ(back.size, shape[0] * shape[1]);
  }
}

TEST(NpyHeader, Parses2D) {
  struct variant {
    const char* dict;
    std::vector<int64_t> shape;
  };
  const variant variants[] = {
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (3, 4), }", {3, 4}},
      {"{'shape': (3,4,), 'fortran_order': False, 'descr': '<i8'}", {3, 4}},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (0, 4), }", {0, 4}},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (4, 0), }", {4, 0}},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (7,), }", {7}},
      {"{'descr': '<i8', 'fortran_order': True, 'shape': (7,), }", {7}},  // 1-D: one layout
  };
  for (const variant& v : variants) {
    const npy::header h = npy::parse_header(v.dict, "x.npy");
    EXPECT_EQ(h.type, dtype::int64) << v.dict;
    EXPECT_EQ(h.shape, v.shape) << v.dict;
    EXPECT_EQ(h.size, v.shape.size() == 1 ? v.shape[0] : v.shape[0] * v.shape[1]) << v.dict;
  }
}

TEST_F(NpyFile, TwoDimensionalRoundTrip) {
  const std::vector<int64_t> v{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const std::string path = work("a.npy").string();
  npy::save(path, gsearch::span<const int64_t>(v), {3, 4});
  EXPECT_EQ(read_bytes(path),
            npy::encode_header(dtype::int64, std::vector<int64_t>{3, 4}) + bytes_of(v));
  npy::input in(path);
  EXPECT_EQ(in.ndim(), 2);
  EXPECT_EQ(in.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(in.size(), 12);
  EXPECT_EQ(in.read<int64_t>(), v);
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{0, 4}, {4, 0}}) {
    npy::save(path, gsearch::span<const int64_t>(), shape);
    npy::input e(path);
    EXPECT_EQ(e.shape(), shape);
    EXPECT_EQ(e.size(), 0);
    EXPECT_TRUE(e.read<int64_t>().empty());
  }
}

// ---- outputs that name inputs: the shared check ----------------------------------------------

TEST_F(NpyFile, CheckDistinctPathsSeesThroughSpellingsAndLinks) {
  const std::vector<int32_t> v{1, 2, 3};
  const std::string k = work("k.npy").string(), q = work("q.npy").string();
  npy::save(k, gsearch::span<const int32_t>(v));
  npy::save(q, gsearch::span<const int32_t>(v));
  fs::create_directory(work("sub"));
  fs::create_symlink("k.npy", work("link.npy"));
  fs::create_hard_link(k, work("hard.npy"));
  const std::string w = work().string();
  const std::vector<npy::named_path> inputs{{"--keys", k}, {"--queries", q}};
  for (const std::string& out : {k, w + "/./k.npy", w + "/sub/../k.npy", w + "//k.npy",
                                 work("link.npy").string(), work("hard.npy").string()}) {
    const std::string msg = failure_of(
        [&] { npy::check_distinct_paths(inputs, {{"--out", out}}); }, gsearch::cli::exit_bad_input);
    EXPECT_EQ(msg, "--out '" + out + "' is the same file as --keys '" + k +
                       "': refusing to overwrite an input");
  }
  // Two outputs, one of which does not exist yet.
  const std::string msg = failure_of(
      [&] {
        npy::check_distinct_paths({}, {{"--a", work("new.npy").string()},
                                       {"--b", w + "/sub/../new.npy"}});
      },
      gsearch::cli::exit_bad_input);
  EXPECT_EQ(msg, "--b '" + w + "/sub/../new.npy' is the same file as --a '" +
                     work("new.npy").string() + "': refusing to write two outputs to one file");
  // Distinct files, inputs that name each other, and options not given are fine.
  npy::check_distinct_paths(inputs, {{"--out", work("o.npy").string()}, {"--json", ""}});
  npy::check_distinct_paths({{"--keys", k}, {"--queries", work("link.npy").string()}},
                            {{"--out", work("sub/k.npy").string()}});
  npy::check_distinct_paths({{"--keys", ""}}, {{"--out", ""}, {"--json", ""}});
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
      {"3d.npy",
       raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3, 4), }",
               data.substr(0, 96)),
       "has shape (2, 3, 4), but gsearch reads 1-D and 2-D arrays only"},
      {"2d_fortran.npy",
       raw_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", data.substr(0, 24)),
       "has shape (2, 3) in Fortran order (fortran_order: True), but gsearch reads 2-D arrays in C "
       "order only"},
      {"2d_trunc.npy",
       raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", data.substr(0, 40)),
       "2d_trunc.npy is truncated: header says 6 int64 values (48 bytes) but the file has 40"},
      {"2d_huge.npy",
       raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""),
       "too large"},
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
    const std::string cmd = "cd '" + work().string() + "' && " + env_ + "'" GSEARCH_CLI_PATH "' " + args +
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
  template <class T>
  void save(const std::string& name, const std::vector<T>& v,
            const std::vector<int64_t>& shape) const {
    npy::save(work(name).string(), gsearch::span<const T>(v), shape);
  }
  // Runs gsearch with no CUDA device visible (CUDA_VISIBLE_DEVICES empty), on every machine.
  void hide_gpus() { env_ = "CUDA_VISIBLE_DEVICES= "; }

  std::string env_;  // assignments put before the command
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
  const char* algos[] = {"auto", "pbs", "pbs-cf", "pbs-cl", "binary", "index", "partitioned", "pary"};
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
        const std::string algo = algos[i++ % 8];
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
  EXPECT_EQ(j["rows"], 1);
  EXPECT_EQ(j["keys"], 2000);
  EXPECT_EQ(j["queries"], 100);
  EXPECT_EQ(j["out_shape"], nlohmann::json::array({100}));
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

// auto picks the static index for many keys and as many queries (CPU rule, src/cpu/search.cpp),
// and says so; --algo index runs it on any size.
TEST_F(Cli, AutoPicksTheIndex) {
  ok("gen --keys 70000 --queries 70000 --dtype int32 --keys-out k.npy --queries-out q.npy");
  const auto j = nlohmann::json::parse(ok("search --keys k.npy --queries q.npy --out o.npy --json --verify --device cpu").out);
  EXPECT_EQ(j["algo"], "index");
  EXPECT_EQ(j["verified"], true);
  ok("gen --keys 5 --queries 9 --dtype float64 --keys-out k.npy --queries-out q.npy");
  const auto v = nlohmann::json::parse(ok("search --keys k.npy --queries q.npy --out o.npy --json --verify --algo index "
                                          "--side pred --device cpu").out);
  EXPECT_EQ(v["algo"], "index");
  EXPECT_EQ(v["verified"], true);
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
  run_result r = ok("--help");
  EXPECT_NE(r.out.find("Subcommands:"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos);
  r = ok("--version");
  EXPECT_EQ(r.out.rfind("gsearch ", 0), 0u) << r.out;
  r = ok("search --help");
  EXPECT_NE(r.out.find("--assume-sorted"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos);
  EXPECT_NE(r.out.find("same file as an input or as another output"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2-D keys (R, K)"), std::string::npos);
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

// ---- the gsearch binary: an output that names an input (issue 10) --------------------------

// Each spelling of "the same file as k.npy": itself, ./, dir/.., a symlink, a hard link.
const char* const same_as_k[] = {"k.npy", "./k.npy", "../work/k.npy", "link.npy", "hard.npy"};

TEST_F(Cli, SearchRefusesAnOutputThatIsAnInput) {
  save("k.npy", std::vector<int32_t>{1, 2, 3, 4});
  save("q.npy", std::vector<int32_t>{0, 3, 9});
  fs::create_symlink("k.npy", work("link.npy"));
  fs::create_hard_link(work("k.npy"), work("hard.npy"));
  const std::string k_bytes = read_bytes(work("k.npy")), q_bytes = read_bytes(work("q.npy"));
  for (const std::string out : same_as_k) {
    // fails() checks exit 1, the message, and that every file is byte for byte as it was.
    fails("search --keys k.npy --queries q.npy --out " + out, 1,
          "gsearch: error: --out '" + out +
              "' is the same file as --keys 'k.npy': refusing to overwrite an input\n",
          false);
    fails("search --keys q.npy --queries k.npy --out " + out + " --verify", 1,
          "--out '" + out + "' is the same file as --queries 'k.npy'", false);
    // Checked first: even with 2-D, --json or unsorted-key troubles still to come.
    fails("search --keys k.npy --queries q.npy --json --assume-sorted --out " + out, 1,
          "refusing to overwrite an input", false);
  }
  // A symlink as the input and the real file as the output.
  fails("search --keys link.npy --queries q.npy --out k.npy", 1,
        "--out 'k.npy' is the same file as --keys 'link.npy'", false);
  EXPECT_EQ(read_bytes(work("k.npy")), k_bytes);
  EXPECT_EQ(read_bytes(work("q.npy")), q_bytes);
  EXPECT_TRUE(fs::is_symlink(work("link.npy")));
  // Inputs may name one file; an output next to them is fine.
  ok("search --keys k.npy --queries ./k.npy --out o.npy --verify");
  EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>{0, 1, 2, 3}));
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

// ---- the gsearch binary: 2-D keys and queries (issue 6) -------------------------------------

// R rows of K sorted keys (values from a small range: duplicates) and R rows of M queries,
// row-major; for floats row 0 ends in NaN and one query is NaN.
template <class T>
struct rows_input {
  std::vector<T> keys, queries;
};
template <class T>
rows_input<T> make_rows(int64_t rows, int64_t k, int64_t m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  rows_input<T> in;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<T> row(static_cast<size_t>(k));
    for (T& x : row) x = gsearch::test::small_value<T>(rng, 40);
    if constexpr (std::is_floating_point_v<T>)
      if (r == 0 && k > 0) row.back() = std::numeric_limits<T>::quiet_NaN();
    gsearch::test::sort_keys(row);
    in.keys.insert(in.keys.end(), row.begin(), row.end());
    for (int64_t j = 0; j < m; ++j) in.queries.push_back(gsearch::test::small_value<T>(rng, 50));
  }
  if constexpr (std::is_floating_point_v<T>)
    if (!in.queries.empty()) in.queries[0] = std::numeric_limits<T>::quiet_NaN();
  return in;
}

// The per-row reference: row r's queries in row r's keys alone.
template <class T>
std::vector<int64_t> reference_rows(const rows_input<T>& in, int64_t rows, side s) {
  std::vector<int64_t> r;
  if (rows == 0) return r;
  const size_t k = in.keys.size() / size_t(rows), m = in.queries.size() / size_t(rows);
  for (size_t row = 0; row < size_t(rows); ++row) {
    const std::vector<T> keys(in.keys.begin() + long(row * k),
                              in.keys.begin() + long((row + 1) * k));
    for (size_t j = 0; j < m; ++j)
      r.push_back(gsearch::test::reference(keys, in.queries[row * m + j], s));
  }
  return r;
}

TEST_F(Cli, Search2DMatchesAPerRowReference) {
  const int64_t R = 37, K = 50, M = 23;
  int i = 0;
  for (dtype t : {dtype::int32, dtype::uint64, dtype::float64}) {
    gsearch::cli::visit(t, [&]<class T>() {
      const std::string dt(gsearch::key_traits<T>::name);
      const rows_input<T> in = make_rows<T>(R, K, M, 42 + uint64_t(i));
      save("k.npy", in.keys, {R, K});
      save("q.npy", in.queries, {R, M});
      for (side s : {side::left, side::right, side::pred}) {
        const std::string algo = i++ % 2 ? "pbs-cl" : "auto";
        const std::string side_name = gsearch::test::side_name(s);
        const run_result r = ok("search --keys k.npy --queries q.npy --out o.npy --device cpu "
                                "--verify --side " + side_name + " --algo " + algo);
        EXPECT_NE(r.out.find("search: 37 rows x 23 queries, 50 " + dt + " keys per row, side=" +
                             side_name),
                  std::string::npos)
            << r.out;
        EXPECT_NE(r.out.find("check: all 851 results match "), std::string::npos) << r.out;
        npy::input o(work("o.npy").string());
        EXPECT_EQ(o.shape(), (std::vector<int64_t>{R, M}));
        EXPECT_EQ(o.read<int64_t>(), reference_rows(in, R, s)) << dt << " " << side_name;
      }
      // int32 output, the JSON summary.
      const auto j = nlohmann::json::parse(
          ok("search --keys k.npy --queries q.npy --out o32.npy --int32 --json --verify --side "
             "right")
              .out);
      EXPECT_EQ(j["rows"], R);
      EXPECT_EQ(j["keys"], K);
      EXPECT_EQ(j["queries"], M);
      EXPECT_EQ(j["out_shape"], nlohmann::json::array({R, M}));
      EXPECT_EQ(j["verified"], true);
      EXPECT_EQ(j["dtype"], dt);
      const auto o32 = npy::load<int32_t>(work("o32.npy").string());
      EXPECT_EQ(std::vector<int64_t>(o32.begin(), o32.end()), reference_rows(in, R, side::right));
    });
  }
}

TEST_F(Cli, Search2DToStdoutOneRowPerLine) {
  save("k.npy", std::vector<int32_t>{1, 2, 3, 10, 20, 30}, {2, 3});
  save("q.npy", std::vector<int32_t>{0, 2, 9, 15, 20, 99, 5, 25}, {2, 4});
  const run_result r = ok("search --keys k.npy --queries q.npy --side right --verify");
  EXPECT_EQ(r.out, "0 2 3 3\n2 3 0 2\n");
  EXPECT_NE(r.err.find("search: 2 rows x 4 queries, 3 int32 keys per row"), std::string::npos)
      << r.err;
}

TEST_F(Cli, Search1DKeys2DQueriesKeepsTheQueriesShape) {
  const std::vector<double> keys{-1.0, 0.0, 0.5, 2.0, 2.0, 7.0};
  std::vector<double> queries{2.0, -5.0, 0.25, 8.0, NAN, 0.0};
  save("k.npy", keys);
  save("q.npy", queries, {2, 3});
  const run_result r = ok("search --keys k.npy --queries q.npy --out o.npy --side left --verify");
  EXPECT_NE(r.out.find("search: 6 queries of shape (2, 3), 6 float64 keys"), std::string::npos)
      << r.out;
  npy::input o(work("o.npy").string());
  EXPECT_EQ(o.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(o.read<int64_t>(), gsearch::test::reference_all(keys, queries, side::left));
  const auto j = nlohmann::json::parse(
      ok("search --keys k.npy --queries q.npy --out o.npy --json").out);
  EXPECT_EQ(j["rows"], 1);
  EXPECT_EQ(j["keys"], 6);
  EXPECT_EQ(j["queries"], 6);
  EXPECT_EQ(j["out_shape"], nlohmann::json::array({2, 3}));
}

TEST_F(Cli, Search2DShapeErrorsExit1AndWriteNothing) {
  const std::vector<int32_t> twelve{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  save("k34.npy", twelve, {3, 4});
  save("q26.npy", twelve, {2, 6});
  save("q34.npy", twelve, {3, 4});
  save("q1.npy", twelve);
  const std::string data = bytes_of(twelve);
  write_bytes(work("fortran.npy"),
              raw_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (3, 4), }", data));
  write_bytes(work("3d.npy"),
              raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (3, 2, 2), }", data));
  fails("search --keys k34.npy --queries q26.npy", 1,
        "keys k34.npy have shape (3, 4) but queries q26.npy have shape (2, 6): 2-D keys need as "
        "many rows of queries as of keys (3 and 2)");
  fails("search --keys k34.npy --queries q1.npy", 1,
        "keys k34.npy have shape (3, 4) but queries q1.npy have shape (12,): 2-D keys");
  fails("search --keys fortran.npy --queries q34.npy", 1,
        "fortran.npy has shape (3, 4) in Fortran order (fortran_order: True)");
  fails("search --keys k34.npy --queries fortran.npy", 1,
        "fortran.npy has shape (3, 4) in Fortran");
  fails("search --keys 3d.npy --queries q34.npy", 1,
        "3d.npy has shape (3, 2, 2), but gsearch reads 1-D and 2-D arrays only");
  fails("search --keys q1.npy --queries 3d.npy", 1, "3d.npy has shape (3, 2, 2)");
}

TEST_F(Cli, Search2DUnsortedRowIsNamed) {
  // Row 2 goes down at index 3.
  const std::vector<int64_t> keys{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 5, 5, 5, 5};
  save("k.npy", keys, {4, 4});
  save("q.npy", keys, {4, 4});
  fails("search --keys k.npy --queries q.npy", 1,
        "keys are not sorted in row 2 of k.npy at index 3: keys[2, 2] = 11 > keys[2, 3] = 0; "
        "sort each row");
  ok("search --keys k.npy --queries q.npy --out o.npy --assume-sorted");
  // Rows in descending order, searched as if sorted: --verify names the first row that differs.
  std::vector<int64_t> down, dq;
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t i = 0; i < 100; ++i) down.push_back(100 * r + 100 - i);
    for (int64_t j = 0; j < 50; ++j) dq.push_back(100 * r + (j * 37) % 100);
  }
  save("d.npy", down, {3, 100});
  save("dq.npy", dq, {3, 50});
  const run_result r = gsearch("search --keys d.npy --queries dq.npy --assume-sorted --verify");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find(" results differ (first at row "), std::string::npos) << r.err;
}

TEST_F(Cli, Search2DEmptyRowsAndEmptyKeys) {
  // R = 0: nothing to search, an empty (0, M) output.
  save("k0.npy", std::vector<int32_t>{}, {0, 5});
  save("q0.npy", std::vector<int32_t>{}, {0, 3});
  ok("search --keys k0.npy --queries q0.npy --out o.npy --verify");
  EXPECT_EQ(npy::input(work("o.npy").string()).shape(), (std::vector<int64_t>{0, 3}));
  const auto j = nlohmann::json::parse(
      ok("search --keys k0.npy --queries q0.npy --out o.npy --json --verify").out);
  EXPECT_EQ(j["rows"], 0);
  EXPECT_EQ(j["verified"], true);
  // K = 0: every query is before every key of its (empty) row.
  save("kk.npy", std::vector<int32_t>{}, {3, 0});
  save("qq.npy", std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {3, 2});
  for (side s : {side::left, side::right, side::pred}) {
    ok("search --keys kk.npy --queries qq.npy --out o.npy --verify --side " +
       std::string(gsearch::test::side_name(s)));
    npy::input o(work("o.npy").string());
    EXPECT_EQ(o.shape(), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(o.read<int64_t>(), std::vector<int64_t>(6, s == side::pred ? -1 : 0));
  }
  // M = 0: rows of keys, no queries.
  save("k2.npy", std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  save("q2.npy", std::vector<int32_t>{}, {2, 0});
  ok("search --keys k2.npy --queries q2.npy --out o.npy --verify");
  EXPECT_EQ(npy::input(work("o.npy").string()).shape(), (std::vector<int64_t>{2, 0}));
}

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

TEST_F(Cli, CudaSearchVerifies) {
  GSEARCH_GPU_OR_SKIP();
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

TEST_F(Cli, CudaSearch2DVerifies) {
  GSEARCH_GPU_OR_SKIP();
  const rows_input<float> in = make_rows<float>(300, 700, 900, 5);
  save("k.npy", in.keys, {300, 700});
  save("q.npy", in.queries, {300, 900});
  for (const char* algo : {"auto", "pbs", "pbs-cf", "pbs-cl", "binary"}) {
    const auto j = nlohmann::json::parse(ok(std::string("search --keys k.npy --queries q.npy "
                                                        "--out o.npy --device cuda --verify "
                                                        "--json --side right --algo ") +
                                            algo)
                                             .out);
    EXPECT_EQ(j["device"], "cuda");
    EXPECT_EQ(j["rows"], 300);
    EXPECT_EQ(j["verified"], true);
    EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), reference_rows(in, 300, side::right));
  }
}

// ---- gsearch find (issue 7) ----------------------------------------------------------------

using gsearch::cli::parse_value;

// The message of the failure parse_value<T>(text) throws (exit 1).
template <class T>
std::string value_error(const std::string& text) {
  return failure_of([&] { parse_value<T>(text, "--value"); }, gsearch::cli::exit_bad_input);
}

TEST(ParseValue, IntegersExactlyOrNotAtAll) {
  EXPECT_EQ(parse_value<int32_t>("42", "--value"), 42);
  EXPECT_EQ(parse_value<int32_t>("-7", "--value"), -7);
  EXPECT_EQ(parse_value<int32_t>("+7", "--value"), 7);
  EXPECT_EQ(parse_value<int32_t>("007", "--value"), 7);
  EXPECT_EQ(parse_value<int32_t>("1e3", "--value"), 1000);
  EXPECT_EQ(parse_value<int32_t>("2.50e1", "--value"), 25);
  EXPECT_EQ(parse_value<int32_t>("-0", "--value"), 0);
  EXPECT_EQ(parse_value<int32_t>("0.0e-7", "--value"), 0);
  EXPECT_EQ(parse_value<int32_t>("2147483647", "--value"), INT32_MAX);
  EXPECT_EQ(parse_value<int32_t>("-2147483648", "--value"), INT32_MIN);
  EXPECT_EQ(parse_value<uint32_t>("4294967295", "--value"), UINT32_MAX);
  EXPECT_EQ(parse_value<uint32_t>("-0", "--value"), 0u);
  EXPECT_EQ(parse_value<int64_t>("-9223372036854775808", "--value"), INT64_MIN);
  EXPECT_EQ(parse_value<int64_t>("9223372036854775807", "--value"), INT64_MAX);
  EXPECT_EQ(parse_value<uint64_t>("18446744073709551615", "--value"), UINT64_MAX);
  EXPECT_EQ(parse_value<uint64_t>("1.8446744073709551615e19", "--value"), UINT64_MAX);
  // 2^53 + 1: not rounded through a double.
  EXPECT_EQ(parse_value<int64_t>("9007199254740993", "--value"), int64_t(9007199254740993));
  EXPECT_EQ(parse_value<int64_t>("9.007199254740993e15", "--value"), int64_t(9007199254740993));

  EXPECT_NE(value_error<int32_t>("3e9").find("--value '3e9' is out of the range of int32 "
                                             "[-2147483648, 2147483647]"),
            std::string::npos);
  EXPECT_NE(value_error<int32_t>("2147483648").find("out of the range of int32"), std::string::npos);
  EXPECT_NE(value_error<int32_t>("-2147483649").find("out of the range of int32"), std::string::npos);
  EXPECT_NE(value_error<uint32_t>("-1").find("--value '-1' is out of the range of uint32 [0, "
                                             "4294967295]"),
            std::string::npos);
  EXPECT_NE(value_error<uint64_t>("18446744073709551616").find("out of the range of uint64"),
            std::string::npos);
  EXPECT_NE(value_error<int64_t>("-9223372036854775809").find("out of the range of int64"),
            std::string::npos);
  EXPECT_NE(value_error<int64_t>("1e400").find("out of the range of int64"), std::string::npos);
  EXPECT_NE(value_error<int32_t>("1.5").find("--value '1.5' is not an int32 value: it is not an "
                                             "integer"),
            std::string::npos);
  EXPECT_NE(value_error<int64_t>("1e-3").find("not an integer"), std::string::npos);
  for (const char* s : {"nan", "NaN", "-nan", "inf", "-inf", "+Infinity"})
    EXPECT_NE(value_error<uint32_t>(s).find("is not an uint32 value: integers have no nan or inf"),
              std::string::npos)
        << s;
  for (const char* s : {"", "abc", "0x10", "1e", "1e+", "--1", "+-1", " 1", "1 ", "1,000", "1_000",
                        "."})
    EXPECT_NE(value_error<int32_t>(s).find("is not a number"), std::string::npos) << "'" << s << "'";
}

TEST(ParseValue, FloatsRoundedAndSpecialValues) {
  EXPECT_EQ(parse_value<float>("0.1", "--value"), 0.1f);  // the nearest float, not via double
  EXPECT_EQ(parse_value<double>("0.1", "--value"), 0.1);
  EXPECT_EQ(parse_value<float>("+2.5e-3", "--value"), 2.5e-3f);
  EXPECT_EQ(parse_value<float>("3.4028235e38", "--value"), std::numeric_limits<float>::max());
  EXPECT_EQ(parse_value<float>("1e-45", "--value"), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(parse_value<double>("1e308", "--value"), 1e308);
  EXPECT_EQ(parse_value<float>("0e999", "--value"), 0.0f);
  const float neg_zero = parse_value<float>("-0.0", "--value");
  EXPECT_EQ(neg_zero, 0.0f);
  EXPECT_TRUE(std::signbit(neg_zero));
  EXPECT_TRUE(std::isnan(parse_value<float>("nan", "--value")));
  EXPECT_TRUE(std::isnan(parse_value<double>("NaN", "--value")));
  EXPECT_EQ(parse_value<double>("inf", "--value"), INFINITY);
  EXPECT_EQ(parse_value<double>("+inf", "--value"), INFINITY);
  EXPECT_EQ(parse_value<float>("-Infinity", "--value"), -INFINITY);

  EXPECT_NE(value_error<float>("1e39").find("--value '1e39' is out of the range of float32: it "
                                            "rounds to infinity"),
            std::string::npos);
  EXPECT_NE(value_error<float>("-3.4028236e38").find("rounds to infinity"), std::string::npos);
  EXPECT_NE(value_error<double>("1e309").find("out of the range of float64"), std::string::npos);
  EXPECT_NE(value_error<float>("1e-50").find("is too small for float32: it rounds to 0"),
            std::string::npos);
  EXPECT_NE(value_error<double>("-1e-400").find("too small for float64"), std::string::npos);
  for (const char* s : {"", "abc", "0x1p3", "1e", "infinit", "nanx", "1.5f", " 1", "--1", "+-1"})
    EXPECT_NE(value_error<double>(s).find("is not a number"), std::string::npos) << "'" << s << "'";
}

// The predicate of `gsearch find --op`, as a plain loop sees it (IEEE comparisons, like numpy).
template <class T>
bool op_holds(const std::string& op, T x, T v, T hi) {
  if (op == "eq") return x == v;
  if (op == "ne") return x != v;
  if (op == "lt") return x < v;
  if (op == "le") return x <= v;
  if (op == "gt") return x > v;
  if (op == "ge") return x >= v;
  return v <= x && x < hi;  // in
}

// n values from a small range (many duplicates), with NaN, -0.0 and infinities for floats.
template <class T>
std::vector<T> find_data(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (T& x : v) x = T(rng() % 40);
  if constexpr (std::is_floating_point_v<T>) {
    for (size_t i = 0; i < n; i += 97) v[i] = T(-0.5) * T(rng() % 8);  // -0.0 and negatives
    v[n / 3] = NAN;
    v[n / 2] = INFINITY;
    v[n - 2] = -INFINITY;
    v[n - 1] = NAN;
  } else if constexpr (std::is_signed_v<T>) {
    for (size_t i = 0; i < n; i += 89) v[i] = -T(rng() % 5);
    v[n - 1] = std::numeric_limits<T>::min();
  } else {
    v[n - 1] = std::numeric_limits<T>::max();
  }
  return v;
}

// The .npy bool array gsearch find --mode isin writes: checks its header byte for byte (what
// numpy writes for a 1-D '|b1' array) and returns its bytes, each 0 or 1.
std::vector<uint8_t> read_bool_npy(const fs::path& p, int64_t n) {
  const std::string file = read_bytes(p);
  const std::string header = npy::encode_header("|b1", {n});
  EXPECT_EQ(file.substr(0, header.size()), header);
  EXPECT_NE(header.find("{'descr': '|b1', 'fortran_order': False, 'shape': (" +
                        std::to_string(n) + ",), }"),
            std::string::npos);
  EXPECT_EQ(file.size(), header.size() + size_t(n));
  std::vector<uint8_t> mask(file.begin() + std::min(file.size(), header.size()), file.end());
  for (uint8_t b : mask) EXPECT_LE(b, 1) << "a bool byte is 0 or 1";
  return mask;
}

using gsearch::cli::to_text;

TEST_F(Cli, FindScalarModesMatchALoopForEveryOpAndType) {
  const char* ops[] = {"eq", "ne", "lt", "le", "gt", "ge", "in"};
  for (dtype t : gsearch::cli::all_dtypes) {
    const std::string dt(gsearch::cli::name(t));
    gsearch::cli::visit(t, [&]<class T>() {
      const std::vector<T> data = find_data<T>(5000, 7);  // more than one 4096-element block
      save("d.npy", data);
      std::vector<T> values = {T(17), T(1000)};  // present (many times), absent
      if constexpr (std::is_floating_point_v<T>) values.push_back(T(-0.0));
      for (const std::string op : ops)
        for (const T v : values) {
          const T hi = T(v + 5);
          std::string args = "find --data d.npy --device cpu --op " + op + " --value " + to_text(v);
          if (op == "in") args += " --hi " + to_text(hi);
          const std::string what = dt + " " + args;
          std::vector<int64_t> matches;
          for (size_t i = 0; i < data.size(); ++i)
            if (op_holds(op, data[i], v, hi)) matches.push_back(int64_t(i));
          const int64_t first = matches.empty() ? -1 : matches.front();

          // first: the result alone on stdout, the summary on stderr.
          run_result r = ok(args + " --mode first");
          EXPECT_EQ(r.out, std::to_string(first) + "\n") << what;
          EXPECT_NE(r.err.find("find: first "), std::string::npos) << r.err;
          EXPECT_NE(r.err.find(" in 5000 " + dt + " values"), std::string::npos) << r.err;
          // count, any, random: --json, one object on stdout.
          auto j = nlohmann::json::parse(ok(args + " --mode count --json").out);
          EXPECT_EQ(j["result"], int64_t(matches.size())) << what;
          const int64_t any = nlohmann::json::parse(ok(args + " --mode any --json").out)["result"];
          const int64_t random =
              nlohmann::json::parse(ok(args + " --mode random --seed 3 --json").out)["result"];
          for (const int64_t got : {any, random}) {
            if (matches.empty()) {
              EXPECT_EQ(got, -1) << what;
            } else {
              EXPECT_TRUE(std::binary_search(matches.begin(), matches.end(), got))
                  << what << ": " << got << " is not a match";
            }
          }
        }
    });
  }
}

TEST_F(Cli, FindJsonFields) {
  save("d.npy", std::vector<float>{3.5f, -0.0f, NAN, 7.0f, 0.0f, 7.0f});
  run_result r = ok("find --data d.npy --value 0 --mode count --json --device cpu");
  EXPECT_EQ(r.err, "");
  auto j = nlohmann::json::parse(r.out);  // all of stdout is the one object
  EXPECT_EQ(j["command"], "find");
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_FALSE(j["device_name"].get<std::string>().empty());
  EXPECT_EQ(j["mode"], "count");
  EXPECT_EQ(j["op"], "eq");
  EXPECT_EQ(j["value"], "0");
  EXPECT_TRUE(j["hi"].is_null());
  EXPECT_EQ(j["dtype"], "float32");
  EXPECT_EQ(j["n"], 6);
  EXPECT_EQ(j["strategy"], "auto");
  EXPECT_TRUE(j["per_thread"].is_null());
  EXPECT_TRUE(j["seed"].is_null());
  EXPECT_TRUE(j["out"].is_null());
  EXPECT_EQ(j["result"], 2);  // -0.0 == 0.0
  EXPECT_GE(j["time_ms"].get<double>(), 0.0);

  j = nlohmann::json::parse(
      ok("find --data d.npy --value=-inf --op in --hi 5 --mode first --json").out);
  EXPECT_EQ(j["op"], "in");
  EXPECT_EQ(j["value"], "-inf");
  EXPECT_EQ(j["hi"], "5");
  EXPECT_EQ(j["mode"], "first");
  EXPECT_EQ(j["result"], 0);
  j = nlohmann::json::parse(ok("find --data d.npy --value 7 --mode random --seed 99 --json").out);
  EXPECT_EQ(j["seed"], 99);
  EXPECT_TRUE(j["result"] == 3 || j["result"] == 5) << j["result"];
  j = nlohmann::json::parse(ok("find --data d.npy --value nan --op ne --mode count --json").out);
  EXPECT_EQ(j["value"], "nan");
  EXPECT_EQ(j["result"], 6);  // NaN != NaN, as in numpy
  j = nlohmann::json::parse(
      ok("find --data d.npy --value 7 --mode count --strategy unrolled --per-thread 3 --json").out);
  EXPECT_EQ(j["strategy"], "unrolled");
  EXPECT_EQ(j["per_thread"], 3);
  EXPECT_EQ(j["result"], 2);
}

TEST_F(Cli, FindRandomIsSeededAndReachesEveryMatch) {
  std::vector<int64_t> data(300, 0);
  for (int i = 0; i < 300; i += 37) data[size_t(i)] = 5;  // 9 matches
  save("d.npy", data);
  std::set<int64_t> seen;
  for (int seed = 0; seed < 60; ++seed) {
    const std::string args =
        "find --data d.npy --value 5 --mode random --seed " + std::to_string(seed);
    const run_result a = ok(args), b = ok(args);
    EXPECT_EQ(a.out, b.out) << "the same seed, the same index";
    const int64_t i = std::stoll(a.out);
    ASSERT_TRUE(i >= 0 && i < 300 && i % 37 == 0) << i;
    seen.insert(i);
  }
  EXPECT_EQ(seen.size(), 9u) << "60 seeds reach all 9 matches";
}

TEST_F(Cli, FindStudyStrategiesAgreeWithTheTunedScan) {
  const std::vector<int32_t> data = find_data<int32_t>(10007, 3);
  save("d.npy", data);
  for (const char* v : {"17", "-3", "99"}) {
    const std::string base = std::string("find --data d.npy --device cpu --value ") + v;
    for (const char* mode : {"first", "any", "count"}) {
      const std::string tuned = ok(base + " --mode " + mode).out;
      for (const char* strategy : {"strided", "coalesced", "unrolled", "one-per-thread"})
        for (const char* k : {"", " --per-thread 1", " --per-thread 5", " --per-thread 64"}) {
          if (std::string(strategy) == "one-per-thread" && *k) continue;
          const std::string args = base + " --mode " + mode + " --strategy " + strategy + k;
          const run_result r = ok(args);
          if (std::string(mode) == "any") {
            const int64_t got = std::stoll(r.out);
            EXPECT_EQ(got == -1, std::stoll(tuned) == -1) << args;
            if (got >= 0) {
              EXPECT_EQ(data[size_t(got)], std::stoi(v)) << args;
            }
          } else {
            EXPECT_EQ(r.out, tuned) << args;
          }
          EXPECT_NE(r.err.find(std::string("strategy=") + strategy), std::string::npos) << r.err;
        }
    }
  }
}

TEST_F(Cli, FindHugePerThreadIsCappedAtTheDataSize) {
  save("d.npy", std::vector<int32_t>{4, 1, 3, 1});
  for (const char* strategy : {"strided", "coalesced", "unrolled"}) {
    const std::string args = std::string("find --data d.npy --value 1 --strategy ") + strategy +
                             " --per-thread 9223372036854775807";
    EXPECT_EQ(ok(args).out, "1\n") << args;
    EXPECT_EQ(ok(args + " --mode count").out, "2\n") << args;
    EXPECT_EQ(nlohmann::json::parse(ok(args + " --json").out)["per_thread"], INT64_MAX);
  }
}

TEST_F(Cli, FindAllWritesTheIndices) {
  for (dtype t : gsearch::cli::all_dtypes) {
    gsearch::cli::visit(t, [&]<class T>() {
      const std::vector<T> data = find_data<T>(9000, 11);
      save("d.npy", data);
      for (const char* op : {"eq", "ge", "ne"}) {
        std::vector<int64_t> expected;
        for (size_t i = 0; i < data.size(); ++i)
          if (op_holds<T>(op, data[i], T(30), T(30))) expected.push_back(int64_t(i));
        const std::string args =
            std::string("find --data d.npy --value 30 --mode all --out idx.npy --op ") + op;
        const run_result r = ok(args);
        EXPECT_NE(r.out.find("find: all x "), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(": " + std::to_string(expected.size()) + " matches -> idx.npy (int64)"),
                  std::string::npos)
            << r.out;
        npy::input in(work("idx.npy").string());
        EXPECT_EQ(in.type(), dtype::int64);
        EXPECT_EQ(in.shape(), (std::vector<int64_t>{int64_t(expected.size())}));
        EXPECT_EQ(in.read<int64_t>(), expected) << args;
        const auto j = nlohmann::json::parse(ok(args + " --json --device cpu").out);
        EXPECT_EQ(j["mode"], "all");
        EXPECT_EQ(j["result"], int64_t(expected.size()));
        EXPECT_EQ(j["out"], "idx.npy");
        EXPECT_EQ(j["out_dtype"], "int64");
        EXPECT_EQ(j["out_shape"], nlohmann::json::array({int64_t(expected.size())}));
        EXPECT_EQ(npy::load<int64_t>(work("idx.npy").string()), expected);
      }
    });
  }
  // No match: an empty array.
  save("d.npy", std::vector<int32_t>{1, 2, 3});
  ok("find --data d.npy --value 9 --mode all --out idx.npy");
  EXPECT_TRUE(npy::load<int64_t>(work("idx.npy").string()).empty());
}

TEST_F(Cli, FindIsinWritesABoolMask) {
  for (dtype t : gsearch::cli::all_dtypes) {
    gsearch::cli::visit(t, [&]<class T>() {
      const std::vector<T> data = find_data<T>(6000, 5);
      std::vector<T> tests = {T(3), T(17), T(3), T(1000), T(39)};
      if constexpr (std::is_floating_point_v<T>) {
        tests.push_back(T(NAN));   // never a member
        tests.push_back(T(-0.0));  // the same element as 0.0
      } else if constexpr (std::is_signed_v<T>) {
        tests.push_back(std::numeric_limits<T>::min());
      } else {
        tests.push_back(std::numeric_limits<T>::max());
      }
      save("d.npy", data);
      save("t.npy", tests);
      std::vector<uint8_t> expected(data.size());
      int64_t members = 0;
      for (size_t i = 0; i < data.size(); ++i) {
        expected[i] = std::any_of(tests.begin(), tests.end(), [&](T x) { return x == data[i]; });
        members += expected[i];
      }
      for (const char* method : {"", " --method auto", " --method sorted", " --method hash"}) {
        // The default mode with --values is isin.
        const std::string args = std::string("find --data d.npy --values t.npy --out m.npy") + method;
        const run_result r = ok(args);
        EXPECT_NE(r.out.find("find: isin of 6000 "), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(": " + std::to_string(members) + " true -> m.npy (bool)"),
                  std::string::npos)
            << r.out;
        EXPECT_EQ(read_bool_npy(work("m.npy"), 6000), expected) << args;
        const auto j = nlohmann::json::parse(ok(args + " --mode isin --invert --json").out);
        EXPECT_EQ(j["mode"], "isin");
        EXPECT_EQ(j["invert"], true);
        EXPECT_EQ(j["values"], int64_t(tests.size()));
        EXPECT_EQ(j["result"], 6000 - members);
        EXPECT_EQ(j["out_dtype"], "bool");
        EXPECT_EQ(j["out_shape"], nlohmann::json::array({6000}));
        std::vector<uint8_t> inverted = expected;
        for (uint8_t& b : inverted) b = !b;
        EXPECT_EQ(read_bool_npy(work("m.npy"), 6000), inverted) << args << " --invert";
      }
    });
  }
  // Empty data, and empty test elements (2-D test elements are a set too).
  save("e.npy", std::vector<double>{});
  save("d.npy", std::vector<double>{1, 2, 3});
  save("t.npy", std::vector<double>{3, 4, 1, 0}, {2, 2});
  ok("find --data e.npy --values t.npy --out m.npy");
  EXPECT_TRUE(read_bool_npy(work("m.npy"), 0).empty());
  ok("find --data d.npy --values t.npy --out m.npy");
  EXPECT_EQ(read_bool_npy(work("m.npy"), 3), (std::vector<uint8_t>{1, 0, 1}));
  ok("find --data d.npy --values e.npy --out m.npy --invert");
  EXPECT_EQ(read_bool_npy(work("m.npy"), 3), (std::vector<uint8_t>{1, 1, 1}));
}

TEST_F(Cli, FindEmptyData) {
  save("e.npy", std::vector<uint64_t>{});
  EXPECT_EQ(ok("find --data e.npy --value 1").out, "-1\n");
  EXPECT_EQ(ok("find --data e.npy --value 1 --mode any").out, "-1\n");
  EXPECT_EQ(ok("find --data e.npy --value 1 --mode random").out, "-1\n");
  EXPECT_EQ(ok("find --data e.npy --value 1 --mode count").out, "0\n");
  EXPECT_EQ(ok("find --data e.npy --value 1 --mode count --strategy strided").out, "0\n");
  ok("find --data e.npy --value 1 --mode all --out idx.npy");
  EXPECT_TRUE(npy::load<int64_t>(work("idx.npy").string()).empty());
}

TEST_F(Cli, FindErrorsExit1AndWriteNothing) {
  save("i.npy", std::vector<int32_t>{5, 3, 7});
  save("u.npy", std::vector<uint32_t>{5, 3, 7});
  save("f.npy", std::vector<float>{0.5f, 1.0f});
  save("d.npy", std::vector<double>{0.5, 1.0});
  save("2d.npy", std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  write_bytes(work("magic.npy"), "hello, world");
  // fails() adds --out out.npy (a file that must survive) unless told not to; the modes that
  // write (all, isin) get it, the others would refuse it anyway.
  const std::string all = "find --mode all --data ";
  // Values the dtype cannot hold.
  fails(all + "i.npy --value 3e9", 1, "--value '3e9' is out of the range of int32");
  fails(all + "i.npy --value 1.5", 1, "--value '1.5' is not an int32 value");
  fails(all + "i.npy --value nan", 1, "--value 'nan' is not an int32 value");
  fails(all + "i.npy --value inf", 1, "--value 'inf' is not an int32 value");
  fails(all + "u.npy --value -1", 1, "--value '-1' is out of the range of uint32");
  fails(all + "i.npy --value abc", 1, "--value 'abc' is not a number");
  fails(all + "f.npy --value 1e39", 1, "--value '1e39' is out of the range of float32");
  fails(all + "d.npy --value 1e999", 1, "out of the range of float64");
  fails(all + "i.npy --value 1 --op in --hi 2.5", 1, "--hi '2.5' is not an int32 value");
  fails("find --data i.npy --value 3e9", 1, "out of the range of int32", false);
  // Shapes, files, dtypes.
  fails(all + "2d.npy --value 1", 1, "--data 2d.npy has shape (2, 2), but find searches 1-D data");
  fails(all + "missing.npy --value 1", 1, "cannot open missing.npy");
  fails(all + "magic.npy --value 1", 1, "magic.npy is not a .npy file");
  fails("find --data i.npy --values missing.npy", 1, "cannot open missing.npy");
  fails("find --data i.npy --values f.npy", 1,
        "--data i.npy is int32 but --values f.npy is float32: gsearch never casts");
  fails("find --data f.npy --values d.npy --mode isin", 1, "is float32 but --values d.npy is float64");
  fails("find --data 2d.npy --values i.npy", 1, "find searches 1-D data");
  // Options that do not go together.
  fails("find --data i.npy", 1, "give --value V", false);
  fails("find --data i.npy --mode all --value 1", 1, "--mode all needs --out OUT.npy", false);
  fails("find --data i.npy --mode isin --values i.npy", 1, "--mode isin needs --out", false);
  fails("find --data i.npy --value 1", 1, "--out is for --mode all and isin");
  fails("find --data i.npy --value 1 --mode count --json", 1, "--out is for --mode all and isin");
  fails(all + "i.npy --value 1 --strategy strided", 1,
        "--strategy strided is a study of --mode first, any and count, not of --mode all");
  fails("find --data i.npy --value 1 --mode random --strategy coalesced", 1,
        "--strategy coalesced is a study of --mode first, any and count, not of --mode random",
        false);
  fails("find --data i.npy --values i.npy --strategy unrolled", 1,
        "--strategy does not apply to --mode isin");
  fails("find --data i.npy --value 1 --strategy strided --per-thread -1", 1,
        "--per-thread -1 is negative", false);
  fails("find --data i.npy --value 1 --per-thread 4", 1,
        "--per-thread is the k of --strategy strided, coalesced and unrolled", false);
  fails("find --data i.npy --value 1 --seed 3", 1,
        "--seed is the seed of --mode random, not of --mode first", false);
  fails(all + "i.npy --value 1 --seed 3", 1, "--seed is the seed of --mode random");
  fails("find --data i.npy --value 1 --mode random --seed -1", 1,
        "--seed '-1' is out of the range of uint64", false);
  fails("find --data i.npy --value 1 --mode random --seed 1.5", 1, "--seed '1.5' is not an uint64",
        false);
  fails("find --data i.npy --values i.npy --seed 3", 1, "--seed does not apply to --mode isin");
  fails("find --data i.npy --values i.npy --op lt", 1, "--op does not apply to --mode isin");
  fails("find --data i.npy --value 1 --mode isin", 1, "--mode isin needs --values N.npy");
  fails(all + "i.npy --values i.npy", 1, "--values is for --mode isin");
  fails(all + "i.npy --value 1 --invert", 1, "--invert is an option of --mode isin");
  fails(all + "i.npy --value 1 --method hash", 1, "--method is an option of --mode isin");
  fails(all + "i.npy --value 1 --op in", 1, "--op in needs --hi H");
  fails(all + "i.npy --value 1 --hi 4", 1, "--hi is the upper end of --op in, not of --op eq");
  // Command-line parse errors keep CLI11's codes.
  fails("find --data i.npy --value 1 --values i.npy", -1, "excludes");
  fails("find --data i.npy --value 1 --mode last", -1, "last", false);
  fails("find --data i.npy --value 1 --op approx", -1, "approx", false);
  fails("find --data i.npy --value 1 --strategy magic", -1, "magic", false);
  fails("find --data i.npy --values i.npy --method guess", -1, "guess");
  fails("find --value 1", -1, "--data", false);
}

TEST_F(Cli, FindRefusesAnOutputThatIsAnInput) {
  save("k.npy", std::vector<int32_t>{1, 2, 3, 4});
  save("t.npy", std::vector<int32_t>{2});
  fs::create_symlink("k.npy", work("link.npy"));
  fs::create_hard_link(work("k.npy"), work("hard.npy"));
  for (const std::string out : same_as_k) {
    fails("find --data k.npy --value 2 --mode all --out " + out, 1,
          "gsearch: error: --out '" + out +
              "' is the same file as --data 'k.npy': refusing to overwrite an input\n",
          false);
    fails("find --data t.npy --values k.npy --out " + out, 1,
          "--out '" + out + "' is the same file as --values 'k.npy'", false);
    // Checked first, before the other errors.
    fails("find --data k.npy --value 1.5 --out " + out, 1, "refusing to overwrite an input", false);
  }
  ok("find --data k.npy --values ./k.npy --out m.npy --strategy auto");  // auto: what isin runs
  EXPECT_EQ(read_bool_npy(work("m.npy"), 4), (std::vector<uint8_t>{1, 1, 1, 1}));
}

TEST_F(Cli, FindHelp) {
  const run_result r = ok("find --help");
  for (const char* s : {"--data", "--value", "--values", "--mode", "--op", "--hi", "--strategy",
                        "--per-thread", "--seed", "--invert", "--method", "--out", "--device",
                        "--json", "one-per-thread", "Exit codes:", "1e39"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  EXPECT_NE(ok("--help").out.find("find "), std::string::npos) << "listed among the subcommands";
}

TEST_F(Cli, FindCudaWithoutDevice) {
  hide_gpus();  // runs everywhere: no device is visible to the gsearch it starts
  save("d.npy", std::vector<int32_t>{1, 2, 3, 4});
  fails("find --data d.npy --value 3 --mode all --device cuda", 2, "--device cuda: ");
  // auto falls back to the CPU.
  const run_result r = ok("find --data d.npy --value 3 --device auto");
  EXPECT_EQ(r.out, "2\n");
  EXPECT_NE(r.err.find("device=cpu"), std::string::npos) << r.err;
}

TEST_F(Cli, CudaFindMatchesTheCpu) {
  GSEARCH_GPU_OR_SKIP();
  for (dtype t : {dtype::int32, dtype::uint64, dtype::float32, dtype::float64}) {
    gsearch::cli::visit(t, [&]<class T>() {
      const std::vector<T> data = find_data<T>(300000, 13);
      save("d.npy", data);
      save("t.npy", std::vector<T>{T(1), T(17), T(39), T(500)});
      for (const std::string mode : {"first", "count", "random", "any"})
        for (const std::string op : {"eq", "ne", "lt", "ge"}) {
          const std::string args =
              "find --data d.npy --value 17 --json --op " + op + " --mode " + mode;
          const auto c = nlohmann::json::parse(ok(args + " --device cuda").out);
          EXPECT_EQ(c["device"], "cuda");
          const int64_t got = c["result"];
          if (mode == "any") {
            if (got >= 0) {
              EXPECT_TRUE(op_holds<T>(op, data[size_t(got)], T(17), T(17))) << args;
            } else {
              EXPECT_EQ(nlohmann::json::parse(ok(args + " --device cpu").out)["result"], -1);
            }
          } else {
            EXPECT_EQ(got, nlohmann::json::parse(ok(args + " --device cpu").out)["result"])
                << args;
          }
        }
      for (const char* strategy : {"strided", "coalesced", "unrolled", "one-per-thread"})
        EXPECT_EQ(ok(std::string("find --data d.npy --value 17 --device cuda --strategy ") +
                     strategy)
                      .out,
                  ok("find --data d.npy --value 17 --device cpu").out)
            << strategy;
      ok("find --data d.npy --value 17 --op le --mode all --out c.npy --device cuda");
      ok("find --data d.npy --value 17 --op le --mode all --out h.npy --device cpu");
      EXPECT_EQ(read_bytes(work("c.npy")), read_bytes(work("h.npy")));
      for (const char* method : {"auto", "sorted", "hash"}) {
        ok(std::string("find --data d.npy --values t.npy --out c.npy --device cuda --method ") +
           method);
        ok("find --data d.npy --values t.npy --out h.npy --device cpu");
        EXPECT_EQ(read_bytes(work("c.npy")), read_bytes(work("h.npy"))) << method;
      }
    });
  }
}

// ---- gsearch merge / sort / set / join, search --sorted-queries (issue 8) -------------------

// find_data sorted in the library's order (NaN last, -0.0 and 0.0 in their input order).
template <class T>
std::vector<T> sorted_data(size_t n, uint64_t seed) {
  std::vector<T> v = find_data<T>(n, seed);
  std::stable_sort(v.begin(), v.end(), [](T a, T b) { return gsearch::key_less(a, b); });
  return v;
}
template <class T>
bool key_eq(T a, T b) {
  return !gsearch::key_less(a, b) && !gsearch::key_less(b, a);
}
std::vector<int64_t> iota_from(size_t n, int64_t first) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = first + int64_t(i);
  return v;
}

// The reference of a set operation: std::set_* in the library's order.
template <class T>
std::vector<T> reference_set(const std::string& op, const std::vector<T>& a, const std::vector<T>& b) {
  const auto less = [](T x, T y) { return gsearch::key_less(x, y); };
  std::vector<T> out;
  auto o = std::back_inserter(out);
  if (op == "intersection") std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), o, less);
  if (op == "union") std::set_union(a.begin(), a.end(), b.begin(), b.end(), o, less);
  if (op == "difference") std::set_difference(a.begin(), a.end(), b.begin(), b.end(), o, less);
  if (op == "symmetric-difference")
    std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), o, less);
  return out;
}

// The reference of a join: a nested loop over every pair, plus the unmatched rows the kind
// keeps, in the documented order (key, then left index, then right index; -1 for none).
template <class T>
std::pair<std::vector<int64_t>, std::vector<int64_t>> reference_join(const std::string& how,
                                                                     const std::vector<T>& l,
                                                                     const std::vector<T>& r) {
  struct row {
    T key;
    int64_t i, j;
  };
  std::vector<row> rows;
  std::vector<bool> l_hit(l.size()), r_hit(r.size());
  for (size_t i = 0; i < l.size(); ++i)
    for (size_t j = 0; j < r.size(); ++j)
      if (key_eq(l[i], r[j])) {
        l_hit[i] = r_hit[j] = true;
        if (how != "semi" && how != "anti") rows.push_back({l[i], int64_t(i), int64_t(j)});
      }
  for (size_t i = 0; i < l.size(); ++i) {
    if (how == "semi" && l_hit[i]) rows.push_back({l[i], int64_t(i), -1});
    if ((how == "anti" || how == "left" || how == "full") && !l_hit[i])
      rows.push_back({l[i], int64_t(i), -1});
  }
  for (size_t j = 0; j < r.size(); ++j)
    if ((how == "right" || how == "full") && !r_hit[j]) rows.push_back({r[j], -1, int64_t(j)});
  std::sort(rows.begin(), rows.end(), [](const row& x, const row& y) {
    if (gsearch::key_less(x.key, y.key)) return true;
    if (gsearch::key_less(y.key, x.key)) return false;
    return std::pair(x.i, x.j) < std::pair(y.i, y.j);
  });
  std::vector<int64_t> li, ri;
  for (const row& x : rows) {
    li.push_back(x.i);
    ri.push_back(x.j);
  }
  if (how == "semi" || how == "anti") ri.clear();
  return {li, ri};
}

TEST_F(Cli, MergeMatchesStdMergeForEveryType) {
  uint64_t seed = 1;
  for (dtype t : gsearch::cli::all_dtypes) {
    gsearch::cli::visit(t, [&]<class T>() {
      const std::string dt(gsearch::cli::name(t));
      for (const auto& [na, nb] : {std::pair<size_t, size_t>{3000, 2001}, {5, 7000}, {4100, 3}}) {
        const std::vector<T> a = sorted_data<T>(na, seed++), b = sorted_data<T>(nb, seed++);
        const std::vector<int64_t> av = iota_from(na, 0), bv = iota_from(nb, 1000000);
        save("a.npy", a);
        save("b.npy", b);
        save("av.npy", av);
        save("bv.npy", bv);
        // std::merge of (key, value) pairs by key: stable, ties take a's first.
        std::vector<std::pair<T, int64_t>> pa, pb, pm;
        for (size_t i = 0; i < na; ++i) pa.emplace_back(a[i], av[i]);
        for (size_t i = 0; i < nb; ++i) pb.emplace_back(b[i], bv[i]);
        std::merge(pa.begin(), pa.end(), pb.begin(), pb.end(), std::back_inserter(pm),
                   [](const auto& x, const auto& y) { return gsearch::key_less(x.first, y.first); });
        std::vector<T> keys;
        std::vector<int64_t> values;
        for (const auto& [k, v] : pm) {
          keys.push_back(k);
          values.push_back(v);
        }
        const run_result r = ok("merge --a a.npy --b b.npy --out m.npy --device cpu");
        EXPECT_NE(r.out.find("merge: " + std::to_string(na) + " + " + std::to_string(nb) + " " +
                             dt + " keys, device=cpu ("),
                  std::string::npos)
            << r.out;
        EXPECT_NE(r.out.find(std::to_string(na + nb) + " keys -> m.npy"), std::string::npos) << r.out;
        EXPECT_EQ(bytes_of(npy::load<T>(work("m.npy").string())), bytes_of(keys)) << dt;  // bit for bit
        const auto j = nlohmann::json::parse(
            ok("merge --a a.npy --b b.npy --out m2.npy --a-values av.npy --b-values bv.npy "
               "--out-values mv.npy --json")
                .out);
        EXPECT_EQ(j["command"], "merge");
        EXPECT_EQ(j["dtype"], dt);
        EXPECT_EQ(j["a"], int64_t(na));
        EXPECT_EQ(j["b"], int64_t(nb));
        EXPECT_EQ(j["values"], true);
        EXPECT_EQ(j["result"], int64_t(na + nb));
        EXPECT_GE(j["time_ms"].get<double>(), 0.0);
        EXPECT_EQ(bytes_of(npy::load<T>(work("m2.npy").string())), bytes_of(keys)) << dt;
        EXPECT_EQ(npy::load<int64_t>(work("mv.npy").string()), values) << dt << " (stability)";
      }
    });
  }
}

TEST_F(Cli, SortIsStableForEveryType) {
  uint64_t seed = 100;
  for (dtype t : gsearch::cli::all_dtypes) {
    gsearch::cli::visit(t, [&]<class T>() {
      const std::string dt(gsearch::cli::name(t));
      for (size_t n : {size_t(3), size_t(1000), size_t(20000)}) {
        const std::vector<T> data = find_data<T>(n, seed++);
        std::vector<int64_t> values(n);
        for (size_t i = 0; i < n; ++i) values[i] = int64_t(i * 7919 % 100003) - 50000;
        save("d.npy", data);
        save("v.npy", values);
        std::vector<int64_t> perm = iota_from(n, 0);
        std::stable_sort(perm.begin(), perm.end(),
                         [&](int64_t x, int64_t y) { return gsearch::key_less(data[size_t(x)], data[size_t(y)]); });
        std::vector<T> sorted;
        std::vector<int64_t> carried;
        for (int64_t i : perm) {
          sorted.push_back(data[size_t(i)]);
          carried.push_back(values[size_t(i)]);
        }
        const run_result r = ok("sort --data d.npy --out s.npy");
        EXPECT_NE(r.out.find("sort: " + std::to_string(n) + " " + dt + " keys (stable)"),
                  std::string::npos)
            << r.out;
        EXPECT_EQ(bytes_of(npy::load<T>(work("s.npy").string())), bytes_of(sorted)) << dt;
        fs::remove(work("i.npy"));
        auto files = snapshot();
        ok("sort --data d.npy --argsort i.npy");
        files.erase("i.npy");
        auto after = snapshot();
        after.erase("i.npy");
        EXPECT_EQ(after, files) << "--argsort alone writes only the permutation";
        EXPECT_EQ(npy::load<int64_t>(work("i.npy").string()), perm) << dt;
        ok("sort --data d.npy --out s2.npy --values v.npy --out-values sv.npy");
        EXPECT_EQ(bytes_of(npy::load<T>(work("s2.npy").string())), bytes_of(sorted)) << dt;
        EXPECT_EQ(npy::load<int64_t>(work("sv.npy").string()), carried) << dt;
        const auto j = nlohmann::json::parse(
            ok("sort --data d.npy --out s3.npy --values v.npy --out-values sv3.npy --argsort "
               "i3.npy --json")
                .out);
        EXPECT_EQ(j["command"], "sort");
        EXPECT_EQ(j["n"], int64_t(n));
        EXPECT_EQ(j["argsort"], "i3.npy");
        EXPECT_EQ(j["result"], int64_t(n));
        EXPECT_EQ(bytes_of(npy::load<T>(work("s3.npy").string())), bytes_of(sorted)) << dt;
        EXPECT_EQ(npy::load<int64_t>(work("sv3.npy").string()), carried) << dt;
        EXPECT_EQ(npy::load<int64_t>(work("i3.npy").string()), perm) << dt;
      }
    });
  }
}

TEST_F(Cli, SetOperationsMatchStdSetForEveryType) {
  uint64_t seed = 200;
  for (dtype t : gsearch::cli::all_dtypes) {
    gsearch::cli::visit(t, [&]<class T>() {
      const std::string dt(gsearch::cli::name(t));
      for (const auto& [na, nb] : {std::pair<size_t, size_t>{3000, 2001}, {40, 9000}, {3, 3}}) {
        const std::vector<T> a = sorted_data<T>(na, seed++), b = sorted_data<T>(nb, seed++);
        save("a.npy", a);
        save("b.npy", b);
        for (const std::string op : {"intersection", "union", "difference", "symmetric-difference"}) {
          const std::vector<T> expected = reference_set(op, a, b);
          const run_result r = ok("set --op " + op + " --a a.npy --b b.npy --out s.npy");
          EXPECT_NE(r.out.find("set: " + op + " of " + std::to_string(na) + " and " +
                               std::to_string(nb) + " " + dt + " keys, device="),
                    std::string::npos)
              << r.out;
          EXPECT_NE(r.out.find(": " + std::to_string(expected.size()) + " keys -> s.npy"),
                    std::string::npos)
              << r.out;
          EXPECT_EQ(bytes_of(npy::load<T>(work("s.npy").string())), bytes_of(expected))
              << dt << " " << op;  // bit for bit: whose -0.0 / 0.0 is kept
          const auto j = nlohmann::json::parse(
              ok("set --op " + op + " --a b.npy --b a.npy --out s.npy --json --device cpu").out);
          EXPECT_EQ(j["command"], "set");
          EXPECT_EQ(j["op"], op);
          EXPECT_EQ(j["checked"], true);
          const std::vector<T> swapped = reference_set(op, b, a);
          EXPECT_EQ(j["result"], int64_t(swapped.size()));
          EXPECT_EQ(bytes_of(npy::load<T>(work("s.npy").string())), bytes_of(swapped))
              << dt << " " << op << " (b, a)";
        }
      }
    });
  }
}

TEST_F(Cli, JoinMatchesANestedLoopJoinForEveryKindAndType) {
  uint64_t seed = 300;
  for (dtype t : gsearch::cli::all_dtypes) {
    gsearch::cli::visit(t, [&]<class T>() {
      const std::string dt(gsearch::cli::name(t));
      for (const auto& [nl, nr] : {std::pair<size_t, size_t>{300, 200}, {3, 500}, {41, 3}}) {
        std::vector<T> l = sorted_data<T>(nl, seed++), r = sorted_data<T>(nr, seed++);
        // Keys on one side only: shift part of the right side out of the left's range.
        for (size_t j = nr - nr / 4; j < nr - 1; ++j)
          if constexpr (!std::is_floating_point_v<T>) r[j] = std::max(r[j], T(100 + j % 3));
        std::stable_sort(r.begin(), r.end(), [](T x, T y) { return gsearch::key_less(x, y); });
        save("l.npy", l);
        save("r.npy", r);
        for (const std::string how : {"inner", "left", "right", "full", "semi", "anti"}) {
          const auto [li, ri] = reference_join(how, l, r);
          const bool left_only = how == "semi" || how == "anti";
          const std::string args = "join --how " + how + " --left l.npy --right r.npy --out-left i.npy" +
                                   (left_only ? "" : " --out-right j.npy");
          fs::remove(work("j.npy"));
          const run_result res = ok(args);
          EXPECT_NE(res.out.find("join: " + how + " join of " + std::to_string(nl) + " and " +
                                 std::to_string(nr) + " " + dt + " keys"),
                    std::string::npos)
              << res.out;
          EXPECT_NE(res.out.find(": " + std::to_string(li.size()) + " rows -> i.npy"),
                    std::string::npos)
              << res.out;
          EXPECT_EQ(npy::load<int64_t>(work("i.npy").string()), li) << dt << " " << how;
          if (left_only) {
            EXPECT_FALSE(fs::exists(work("j.npy"))) << how;
          } else {
            EXPECT_EQ(npy::load<int64_t>(work("j.npy").string()), ri) << dt << " " << how;
          }
          const auto j = nlohmann::json::parse(ok(args + " --json").out);
          EXPECT_EQ(j["command"], "join");
          EXPECT_EQ(j["how"], how);
          EXPECT_EQ(j["left"], int64_t(nl));
          EXPECT_EQ(j["right"], int64_t(nr));
          EXPECT_EQ(j["result"], int64_t(li.size()));
          EXPECT_EQ(j["out_right"].is_null(), left_only);
        }
      }
    });
  }
}

TEST_F(Cli, MergeFamilyEmptyInputs) {
  save("e.npy", std::vector<double>{});
  save("e2.npy", std::vector<double>{});
  save("a.npy", std::vector<double>{-0.0, 1.0, NAN});
  save("ev.npy", std::vector<int64_t>{});
  save("av.npy", std::vector<int64_t>{7, 8, 9});
  ok("merge --a e.npy --b e2.npy --out m.npy");
  EXPECT_TRUE(npy::load<double>(work("m.npy").string()).empty());
  ok("merge --a e.npy --b a.npy --out m.npy --a-values ev.npy --b-values av.npy --out-values mv.npy");
  EXPECT_EQ(bytes_of(npy::load<double>(work("m.npy").string())),
            bytes_of(std::vector<double>{-0.0, 1.0, NAN}));
  EXPECT_EQ(npy::load<int64_t>(work("mv.npy").string()), (std::vector<int64_t>{7, 8, 9}));
  ok("sort --data e.npy --out s.npy --argsort i.npy");
  EXPECT_TRUE(npy::load<double>(work("s.npy").string()).empty());
  EXPECT_TRUE(npy::load<int64_t>(work("i.npy").string()).empty());
  ok("set --op intersection --a a.npy --b e.npy --out s.npy");
  EXPECT_TRUE(npy::load<double>(work("s.npy").string()).empty());
  ok("set --op union --a e.npy --b a.npy --out s.npy");
  EXPECT_EQ(bytes_of(npy::load<double>(work("s.npy").string())), bytes_of(std::vector<double>{-0.0, 1.0, NAN}));
  ok("join --how full --left e.npy --right a.npy --out-left i.npy --out-right j.npy");
  EXPECT_EQ(npy::load<int64_t>(work("i.npy").string()), (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ(npy::load<int64_t>(work("j.npy").string()), (std::vector<int64_t>{0, 1, 2}));
  ok("join --how anti --left a.npy --right e.npy --out-left i.npy");
  EXPECT_EQ(npy::load<int64_t>(work("i.npy").string()), (std::vector<int64_t>{0, 1, 2}));
}

TEST_F(Cli, MergeFamilyErrorsExit1AndWriteNothing) {
  save("a.npy", std::vector<int32_t>{1, 3, 3, 5});
  save("b.npy", std::vector<int32_t>{2, 3, 4});
  save("u.npy", std::vector<int32_t>{1, 2, 5, 3, 4});
  save("f.npy", std::vector<float>{0.5f, NAN, 1.0f});
  save("g.npy", std::vector<float>{0.5f});
  save("2d.npy", std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  save("av.npy", std::vector<int64_t>{0, 1, 2, 3});
  save("bv.npy", std::vector<int64_t>{0, 1, 2});
  save("v32.npy", std::vector<int32_t>{0, 1, 2, 3});
  // Unsorted inputs, named with the index where they go down.
  fails("merge --a a.npy --b u.npy", 1,
        "--b is not sorted at index 3 of u.npy: b[2] = 5 > b[3] = 3; sort it (gsearch sort), or "
        "pass --no-check");
  fails("merge --a u.npy --b a.npy", 1, "--a is not sorted at index 3 of u.npy");
  fails("set --op union --a a.npy --b u.npy", 1, "--b is not sorted at index 3");
  fails("set --op union --a f.npy --b g.npy", 1,
        "--a is not sorted at index 2 of f.npy: a[1] = nan > a[2] = 1 (gsearch orders NaN last");
  fails("join --how inner --left u.npy --right a.npy --out-left out.npy --out-right o2.npy", 1,
        "--left is not sorted at index 3", false);
  fails("join --how semi --left a.npy --right u.npy --out-left out.npy", 1,
        "--right is not sorted at index 3", false);
  // dtypes, shapes, files.
  fails("merge --a a.npy --b f.npy", 1,
        "--a a.npy is int32 but --b f.npy is float32: gsearch never casts");
  fails("set --op intersection --a f.npy --b a.npy", 1, "--a f.npy is float32 but --b a.npy is int32");
  fails("join --how inner --left a.npy --right g.npy --out-left out.npy --out-right o2.npy", 1,
        "--left a.npy is int32 but --right g.npy is float32", false);
  fails("merge --a 2d.npy --b a.npy", 1, "--a 2d.npy has shape (2, 2), but merge takes 1-D arrays");
  fails("sort --data 2d.npy", 1, "--data 2d.npy has shape (2, 2), but sort takes 1-D arrays");
  fails("set --op union --a a.npy --b 2d.npy", 1, "but set takes 1-D arrays");
  fails("join --how left --left a.npy --right 2d.npy --out-left out.npy --out-right o2.npy", 1,
        "but join takes 1-D arrays", false);
  fails("merge --a missing.npy --b a.npy", 1, "cannot open missing.npy");
  // Values.
  fails("merge --a a.npy --b b.npy --a-values av.npy --out-values mv.npy", 1,
        "needs all three of --a-values, --b-values and --out-values");
  fails("merge --a a.npy --b b.npy --a-values v32.npy --b-values bv.npy --out-values mv.npy", 1,
        "--a-values v32.npy is int32, but values are int64");
  fails("merge --a a.npy --b b.npy --a-values bv.npy --b-values bv.npy --out-values mv.npy", 1,
        "--a-values bv.npy has 3 values but --a a.npy has 4 keys");
  fails("sort --data a.npy --values av.npy", 1, "--values needs --out-values");
  fails("sort --data a.npy --out-values sv.npy", 1, "--out-values needs --values");
  fails("sort --data a.npy", 1, "give --out S.npy (the sorted keys), --argsort I.npy", false);
  fails("sort --data a.npy --values b.npy --out-values sv.npy", 1,
        "--values b.npy is int32, but values are int64");
  // Join outputs.
  fails("join --how inner --left a.npy --right b.npy --out-left out.npy", 1,
        "--how inner needs --out-right J.npy", false);
  fails("join --how full --left a.npy --right b.npy --out-left out.npy", 1,
        "--how full needs --out-right", false);
  fails("join --how semi --left a.npy --right b.npy --out-left out.npy --out-right o2.npy", 1,
        "--how semi writes only --out-left", false);
  fails("join --how anti --left a.npy --right b.npy --out-left out.npy --out-right o2.npy", 1,
        "--how anti writes only --out-left", false);
  // Outputs that are inputs, or one another.
  fails("merge --a a.npy --b b.npy --out ./a.npy", 1,
        "--out './a.npy' is the same file as --a 'a.npy': refusing to overwrite an input", false);
  fails("merge --a a.npy --b b.npy --a-values av.npy --b-values bv.npy --out-values bv.npy", 1,
        "--out-values 'bv.npy' is the same file as --b-values 'bv.npy'");
  fails("merge --a a.npy --b b.npy --a-values av.npy --b-values bv.npy --out-values out.npy", 1,
        "--out-values 'out.npy' is the same file as --out 'out.npy': refusing to write two outputs");
  fails("sort --data a.npy --out a.npy", 1, "--out 'a.npy' is the same file as --data 'a.npy'", false);
  fails("sort --data a.npy --argsort out.npy", 1,
        "--argsort 'out.npy' is the same file as --out 'out.npy'");
  fails("set --op union --a a.npy --b b.npy --out ../work/b.npy", 1,
        "--out '../work/b.npy' is the same file as --b 'b.npy'", false);
  fails("join --how inner --left a.npy --right b.npy --out-left out.npy --out-right b.npy", 1,
        "--out-right 'b.npy' is the same file as --right 'b.npy'", false);
  fails("join --how inner --left a.npy --right b.npy --out-left out.npy --out-right ./out.npy", 1,
        "--out-right './out.npy' is the same file as --out-left 'out.npy'", false);
  // Command-line parse errors keep CLI11's codes.
  fails("set --op xor --a a.npy --b b.npy", -1, "xor");
  fails("set --a a.npy --b b.npy", -1, "--op");
  fails("join --how outer --left a.npy --right b.npy --out-left out.npy", -1, "outer", false);
  fails("merge --a a.npy --out m.npy", -1, "--b", false);
  fails("sort --data a.npy --no-check", -1, "--no-check");
  // --no-check: unsorted inputs run (unspecified result, in range).
  const run_result r = ok("merge --a u.npy --b a.npy --out m.npy --no-check --json");
  EXPECT_EQ(nlohmann::json::parse(r.out)["checked"], false);
  EXPECT_EQ(npy::load<int32_t>(work("m.npy").string()).size(), 9u);
  ok("set --op union --a u.npy --b u.npy --out s.npy --no-check");
  ok("join --how inner --left u.npy --right u.npy --out-left i.npy --out-right j.npy --no-check");
  for (int64_t x : npy::load<int64_t>(work("i.npy").string())) EXPECT_TRUE(x >= -1 && x < 5);
}

TEST_F(Cli, SearchSortedQueries) {
  int i = 0;
  for (dtype t : gsearch::cli::all_dtypes) {
    const std::string dt(gsearch::cli::name(t));
    ok("gen --keys 3000 --queries 5001 --dtype " + dt + " --seed " + std::to_string(i++) +
       " --keys-out k.npy --queries-out q.npy");
    gsearch::cli::visit(t, [&]<class T>() {
      const auto keys = npy::load<T>(work("k.npy").string());
      auto queries = npy::load<T>(work("q.npy").string());
      if constexpr (std::is_floating_point_v<T>) queries.back() = NAN;
      gsearch::test::sort_keys(queries);
      save("qs.npy", queries);
      for (side s : {side::left, side::right, side::pred}) {
        const std::string side_name = gsearch::test::side_name(s);
        const run_result r = ok("search --keys k.npy --queries qs.npy --out o.npy --sorted-queries "
                                "--verify --device cpu --side " + side_name);
        EXPECT_NE(r.out.find("side=" + side_name + ", algo=merge-path, device=cpu"), std::string::npos)
            << r.out;
        expect_results(keys, queries, s, npy::load<int64_t>(work("o.npy").string()), dt + " " + side_name);
        ok("search --keys k.npy --queries qs.npy --out o32.npy --sorted-queries --int32 --side " + side_name);
        const auto o32 = npy::load<int32_t>(work("o32.npy").string());
        expect_results(keys, queries, s, std::vector<int64_t>(o32.begin(), o32.end()), dt + " int32");
      }
    });
  }
  const auto j = nlohmann::json::parse(
      ok("search --keys k.npy --queries qs.npy --out o.npy --sorted-queries --json").out);
  EXPECT_EQ(j["algo"], "merge-path");
  EXPECT_EQ(j["sorted_queries"], true);
  EXPECT_EQ(nlohmann::json::parse(ok("search --keys k.npy --queries qs.npy --out o.npy --json").out)
                ["sorted_queries"],
            false);
  // Sorted 2-D queries (flat order) with 1-D keys keep their shape.
  save("k1.npy", std::vector<int32_t>{1, 3, 3, 7});
  save("q2.npy", std::vector<int32_t>{0, 1, 3, 4, 7, 9}, {2, 3});
  ok("search --keys k1.npy --queries q2.npy --out o.npy --sorted-queries --side right");
  EXPECT_EQ(npy::input(work("o.npy").string()).shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>{0, 1, 3, 3, 4, 4}));
  // Unsorted queries: checked by default, named; --assume-sorted skips the check.
  save("qu.npy", std::vector<int32_t>{0, 5, 2, 9});
  fails("search --keys k1.npy --queries qu.npy --sorted-queries", 1,
        "--sorted-queries: queries are not sorted at (flat) index 2 of qu.npy: queries[1] = 5 > "
        "queries[2] = 2; sort them, drop --sorted-queries, or pass --assume-sorted");
  const run_result r = ok("search --keys k1.npy --queries qu.npy --sorted-queries --assume-sorted");
  std::istringstream lines(r.out);
  for (int64_t x; lines >> x;) EXPECT_TRUE(x >= 0 && x <= 4) << "in range";
  ok("search --keys k1.npy --queries qu.npy --out o.npy");  // without the flag: not checked
  // Options that do not go together.
  fails("search --keys k1.npy --queries q2.npy --sorted-queries --algo pbs", 1,
        "--algo pbs does not apply with --sorted-queries");
  save("k2.npy", std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  fails("search --keys k2.npy --queries q2.npy --sorted-queries", 1,
        "--sorted-queries applies to 1-D keys");
}

TEST_F(Cli, MergeFamilyHelp) {
  const run_result top = ok("--help");
  for (const char* s : {"merge ", "sort ", "set ", "join "}) EXPECT_NE(top.out.find(s), std::string::npos) << s;
  const std::pair<const char*, std::vector<const char*>> helps[] = {
      {"merge", {"--a", "--b", "--out", "--a-values", "--b-values", "--out-values", "--no-check",
                 "--device", "--json", "Exit codes:", "ties"}},
      {"sort", {"--data", "--out", "--values", "--out-values", "--argsort", "kind='stable'",
                "Exit codes:"}},
      {"set", {"--op", "symmetric-difference", "min(m, n)", "--no-check", "Exit codes:"}},
      {"join", {"--how", "--left", "--right", "--out-left", "--out-right", "semi", "anti",
                "cross product", "Exit codes:"}},
      {"search", {"--sorted-queries", "Merge Path"}}};
  for (const auto& [cmd, words] : helps) {
    const run_result r = ok(std::string(cmd) + " --help");
    for (const char* w : words) EXPECT_NE(r.out.find(w), std::string::npos) << cmd << ": " << w;
  }
}

TEST_F(Cli, MergeFamilyCudaWithoutDevice) {
  hide_gpus();  // runs everywhere: no device is visible to the gsearch it starts
  save("a.npy", std::vector<int32_t>{1, 2, 3});
  fails("merge --a a.npy --b a.npy --device cuda", 2, "--device cuda: ");
  fails("sort --data a.npy --device cuda", 2, "--device cuda: ");
  fails("set --op union --a a.npy --b a.npy --device cuda", 2, "--device cuda: ");
  fails("join --how semi --left a.npy --right a.npy --out-left out.npy --device cuda", 2,
        "--device cuda: ", false);
  EXPECT_NE(ok("merge --a a.npy --b a.npy --out m.npy --device auto").out.find("device=cpu"),
            std::string::npos);
}

TEST_F(Cli, CudaMergeFamilyMatchesTheCpu) {
  GSEARCH_GPU_OR_SKIP();
  uint64_t seed = 400;
  for (dtype t : {dtype::int32, dtype::uint64, dtype::float32, dtype::float64}) {
    gsearch::cli::visit(t, [&]<class T>() {
      const std::vector<T> a = sorted_data<T>(300000, seed++), b = sorted_data<T>(200001, seed++);
      save("a.npy", a);
      save("b.npy", b);
      save("av.npy", iota_from(a.size(), 0));
      save("bv.npy", iota_from(b.size(), 1 << 20));
      save("d.npy", find_data<T>(250000, seed++));
      save("dv.npy", iota_from(250000, 0));
      const std::string values = " --a-values av.npy --b-values bv.npy";
      const std::pair<std::string, std::vector<std::string>> runs[] = {
          {"merge --a a.npy --b b.npy" + values, {"--out", "--out-values"}},
          {"sort --data d.npy --values dv.npy", {"--out", "--out-values", "--argsort"}},
          {"sort --data a.npy --values av.npy", {"--out", "--out-values", "--argsort"}},
          {"set --op intersection --a a.npy --b b.npy", {"--out"}},
          {"set --op union --a a.npy --b b.npy", {"--out"}},
          {"set --op difference --a a.npy --b b.npy", {"--out"}},
          {"set --op symmetric-difference --a a.npy --b b.npy", {"--out"}},
          {"join --how semi --left a.npy --right b.npy", {"--out-left"}},
          {"join --how anti --left a.npy --right b.npy", {"--out-left"}}};
      for (const auto& [args, outs] : runs) {
        std::string c = args, h = args;
        const auto file = [](char prefix, size_t i) {  // c0.npy, h0.npy, ...
          std::string f(1, prefix);
          f += std::to_string(i);
          f += ".npy";
          return f;
        };
        for (size_t i = 0; i < outs.size(); ++i) {
          c += " " + outs[i] + " " + file('c', i);
          h += " " + outs[i] + " " + file('h', i);
        }
        EXPECT_EQ(nlohmann::json::parse(ok(c + " --device cuda --json").out)["device"], "cuda");
        ok(h + " --device cpu");
        for (size_t i = 0; i < outs.size(); ++i)
          EXPECT_EQ(read_bytes(work(file('c', i))), read_bytes(work(file('h', i))))
              << args << " " << outs[i];
      }
      // Joins with heavy duplicates (their output is the cross product): smaller inputs.
      save("l.npy", sorted_data<T>(3000, seed++));
      save("r.npy", sorted_data<T>(2000, seed++));
      for (const std::string how : {"inner", "left", "right", "full"}) {
        ok("join --how " + how + " --left l.npy --right r.npy --out-left ci.npy --out-right cj.npy --device cuda");
        ok("join --how " + how + " --left l.npy --right r.npy --out-left hi.npy --out-right hj.npy --device cpu");
        EXPECT_EQ(read_bytes(work("ci.npy")), read_bytes(work("hi.npy"))) << how;
        EXPECT_EQ(read_bytes(work("cj.npy")), read_bytes(work("hj.npy"))) << how;
      }
      // search --sorted-queries on the GPU.
      ok("search --keys a.npy --queries b.npy --out o.npy --sorted-queries --verify --device cuda");
    });
  }
}

}  // namespace
