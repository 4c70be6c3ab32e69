// Unit tests of the CLI's .npy reader / writer (tools/cli/npy.hpp): round trips of every key
// type, the header byte for byte, 2-D arrays, the check that outputs do not name inputs, bad
// files, and atomic writes.

#include "cli_fixture.hpp"

#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

namespace cli_test {
namespace {

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

// input::map: a regular file whose data is aligned for its type is mapped (and outlives the
// input it came from); data at an unaligned offset, and an empty array, are read instead.
TEST_F(NpyFile, MapsAlignedDataAndReadsTheRest) {
  const std::vector<int64_t> v = gsearch::gen::sorted_keys<int64_t>(5000, 3);
  const std::string aligned = work("aligned.npy").string();
  npy::save(aligned, gsearch::span<const int64_t>(v));
  std::optional<npy::mapped<int64_t>> m;
  {
    npy::input in(aligned);
    m.emplace(in.map<int64_t>());
  }  // the file closed; the mapping stays
  EXPECT_TRUE(m->is_mapped());
  EXPECT_EQ(std::vector<int64_t>(m->view().begin(), m->view().end()), v);

  // The header padded so that the data starts 4 bytes past a multiple of 8.
  std::string dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (5000,), }";
  while ((10 + dict.size() + 1) % 8 != 4) dict += ' ';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += char((dict.size() + 1) & 0xff);
  file += char((dict.size() + 1) >> 8);
  file += dict + "\n" + bytes_of(v);
  const fs::path unaligned = work("unaligned.npy");
  write_bytes(unaligned, file);
  npy::input in(unaligned.string());
  const npy::mapped<int64_t> copy = in.map<int64_t>();
  EXPECT_FALSE(copy.is_mapped());
  EXPECT_EQ(std::vector<int64_t>(copy.view().begin(), copy.view().end()), v);

  const std::string empty = work("empty.npy").string();
  npy::save(empty, gsearch::span<const int64_t>());
  npy::input e(empty);
  const npy::mapped<int64_t> none = e.map<int64_t>();
  EXPECT_FALSE(none.is_mapped());
  EXPECT_EQ(none.view().size(), 0);
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

}  // namespace
}  // namespace cli_test
