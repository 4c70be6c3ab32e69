// `gsearch search` end to end: every side, algorithm and type against the tests' reference,
// float order, int32 output, stdout and --json, 1-D and 2-D keys and queries (issue 6), outputs
// that name inputs (issue 10), --sorted-queries (issue 8), --sorter (issue 40), and the CUDA runs
// (skipped without a GPU).

#include "cli_fixture.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace cli_test {
namespace {

TEST_F(Cli, SearchVerifiesEverySideAlgorithmAndType) {
  const char* algos[] = {"auto", "pbs", "pbs-cf", "pbs-cl", "binary", "index", "partitioned", "pary", "merge"};
  int i = 0;
  for (dtype t : gsearch::cli::all_dtypes) {
    const std::string dt(gsearch::cli::name(t));
    ok("gen --keys 3000 --queries 2001 --dtype " + dt + " --query-kind " +
       (i % 2 ? "worst" : "random") + " --seed " + std::to_string(i) +
       " --keys-out k.npy --queries-out q.npy");
    gsearch::visit_key_type(t, [&]<class T>() {
      const auto keys = npy::load<T>(work("k.npy").string());
      const auto queries = npy::load<T>(work("q.npy").string());
      for (side s : {side::left, side::right, side::pred}) {
        // Every algorithm for every side, spread over the types (the library tests do the rest).
        const std::string algo = algos[i++ % 8];
        const std::string side_name = gsearch::test::side_name(s);
        const run_result r =
            ok("search --keys k.npy --queries q.npy --out o.npy --device cpu --verify --side " +
               side_name + " --algo " + algo);
        EXPECT_NE(r.err.find("search: 2001 queries, 3000 " + dt + " keys, side=" + side_name),
                  std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find("check: all 2001 results match " + reference_name(s)),
                  std::string::npos)
            << r.err;
        EXPECT_EQ(r.out, "") << "with --out, stdout holds nothing";
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

// auto picks the static index for many keys and as many queries (CPU rule, src/search/cpu.cpp),
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

// ---- the gsearch binary: an output that names an input (issue 10) --------------------------

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
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::string dt(gsearch::key_traits<T>::name);
      const rows_input<T> in = make_rows<T>(R, K, M, 42 + uint64_t(i));
      save("k.npy", in.keys, {R, K});
      save("q.npy", in.queries, {R, M});
      for (side s : {side::left, side::right, side::pred}) {
        const std::string algo = i++ % 2 ? "pbs-cl" : "auto";
        const std::string side_name = gsearch::test::side_name(s);
        const run_result r = ok("search --keys k.npy --queries q.npy --out o.npy --device cpu "
                                "--verify --side " + side_name + " --algo " + algo);
        EXPECT_NE(r.err.find("search: 37 rows x 23 queries, 50 " + dt + " keys per row, side=" +
                             side_name),
                  std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find("check: all 851 results match "), std::string::npos) << r.err;
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
  EXPECT_NE(r.err.find("search: 6 queries of shape (2, 3), 6 float64 keys"), std::string::npos)
      << r.err;
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

// ---- the gsearch binary: on a GPU ----------------------------------------------------------

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

// ---- the gsearch binary: --sorted-queries (issue 8) ----------------------------------------

TEST_F(Cli, SearchSortedQueries) {
  int i = 0;
  for (dtype t : gsearch::cli::all_dtypes) {
    const std::string dt(gsearch::cli::name(t));
    ok("gen --keys 3000 --queries 5001 --dtype " + dt + " --seed " + std::to_string(i++) +
       " --keys-out k.npy --queries-out q.npy");
    gsearch::visit_key_type(t, [&]<class T>() {
      const auto keys = npy::load<T>(work("k.npy").string());
      auto queries = npy::load<T>(work("q.npy").string());
      if constexpr (std::is_floating_point_v<T>) queries.back() = NAN;
      gsearch::test::sort_keys(queries);
      save("qs.npy", queries);
      for (side s : {side::left, side::right, side::pred}) {
        const std::string side_name = gsearch::test::side_name(s);
        const run_result r = ok("search --keys k.npy --queries qs.npy --out o.npy --sorted-queries "
                                "--verify --device cpu --side " + side_name);
        EXPECT_NE(r.err.find("side=" + side_name + ", algo=merge-path, device=cpu"), std::string::npos)
            << r.err;
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

// ---- the gsearch binary: --sorter (numpy's sorter=, issue 40) --------------------------------

// The indices that sort v in gsearch's order (stable): numpy.argsort(v, kind='stable').
template <class T>
std::vector<int64_t> argsort(const std::vector<T>& v) {
  std::vector<int64_t> idx(v.size());
  for (size_t i = 0; i < v.size(); ++i) idx[i] = int64_t(i);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return gsearch::key_less(v[size_t(a)], v[size_t(b)]); });
  return idx;
}

TEST_F(Cli, SearchSorter) {
  // Unsorted keys and the indices that sort them (int64, int32 and uint32 files): the results
  // are positions in the sorted order, as numpy.searchsorted(k, q, sorter=s) gives.
  const std::vector<double> keys{30.0, NAN, 10.0, -0.0, 20.0, 0.0, 10.0};
  const std::vector<int64_t> order = argsort(keys);
  const std::vector<double> queries{10.0, NAN, 0.0, -1.0, 25.0, 99.0};
  std::vector<double> sorted;
  for (int64_t i : order) sorted.push_back(keys[size_t(i)]);
  save("k.npy", keys);
  save("q.npy", queries);
  save("s.npy", order);
  save("s32.npy", std::vector<int32_t>(order.begin(), order.end()));
  save("su.npy", std::vector<uint32_t>(order.begin(), order.end()));
  for (const char* s : {"s.npy", "s32.npy", "su.npy"})
    for (side sd : {side::left, side::right, side::pred}) {
      const std::string name = gsearch::test::side_name(sd);
      const run_result r = ok("search --keys k.npy --queries q.npy --out o.npy --verify --sorter " + std::string(s) +
                              " --side " + name);
      EXPECT_NE(r.err.find("check: all 6 results match"), std::string::npos) << r.err;
      expect_results(sorted, queries, sd, npy::load<int64_t>(work("o.npy").string()), name + " " + s);
    }
  const auto j = nlohmann::json::parse(
      ok("search --keys k.npy --queries q.npy --out o.npy --json --int32 --sorter s.npy --max-temp-bytes 56").out);
  EXPECT_EQ(j["sorter"], "s.npy");
  EXPECT_EQ(npy::load<int32_t>(work("o.npy").string()), (std::vector<int32_t>{2, 6, 0, 0, 5, 6}));
  // To stdout.
  EXPECT_EQ(ok("search --keys k.npy --queries q.npy --sorter s.npy --side right").out, "4\n7\n2\n0\n5\n6\n");
  EXPECT_NE(ok("search --help").out.find("--sorter"), std::string::npos);
}

TEST_F(Cli, SearchSorterErrors) {
  save("k.npy", std::vector<int32_t>{30, 10, 20});
  save("q.npy", std::vector<int32_t>{15, 25});
  save("short.npy", std::vector<int64_t>{1, 2});
  save("neg.npy", std::vector<int64_t>{1, -1, 0});
  save("big.npy", std::vector<int64_t>{1, 2, 3});
  save("huge.npy", std::vector<uint64_t>{1, 2, uint64_t{1} << 63});
  save("unsorting.npy", std::vector<int64_t>{0, 1, 2});
  save("float.npy", std::vector<double>{1, 2, 0});
  save("s2d.npy", std::vector<int64_t>{1, 2, 0, 1, 2, 0}, {2, 3});
  save("k2d.npy", std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  save("q2d.npy", std::vector<int32_t>{1, 2}, {2, 1});
  // fails(): exit 1, the message, no output file created or clobbered.
  fails("search --keys k.npy --queries q.npy --sorter short.npy", 1, "sorter.size must equal a.size");
  fails("search --keys k.npy --queries q.npy --sorter neg.npy", 1, "Sorter index out of range: sorter[1]");
  fails("search --keys k.npy --queries q.npy --sorter big.npy --device cpu", 1, "Sorter index out of range: sorter[2]");
  fails("search --keys k.npy --queries q.npy --sorter huge.npy", 1, "Sorter index out of range: sorter[2]");
  fails("search --keys k.npy --queries q.npy --sorter unsorting.npy", 1, "keys[sorter] are not sorted");
  fails("search --keys k.npy --queries q.npy --sorter float.npy", 1, "must hold integer indices");
  fails("search --keys k.npy --queries q.npy --sorter s2d.npy", 1, "it must be 1-D");
  fails("search --keys k2d.npy --queries q2d.npy --sorter short.npy", 1, "--sorter applies to 1-D keys");
  fails("search --keys k.npy --queries q.npy --sorter missing.npy", 1, "missing.npy");
  fails("search --keys k.npy --queries q.npy --sorter big.npy --max-temp-bytes 11", 1, "max_temp_bytes = 11");
  // --assume-sorted skips the sorted check (unspecified but in-range results), not the range.
  ok("search --keys k.npy --queries q.npy --out o.npy --sorter unsorting.npy --assume-sorted");
}

TEST_F(Cli, CudaSearchSorter) {
  GSEARCH_GPU_OR_SKIP();
  std::vector<float> keys(100000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = float((i * 7919) % 100003);
  const std::vector<int64_t> order = argsort(keys);
  save("k.npy", keys);
  save("s.npy", order);
  save("bad.npy", std::vector<int64_t>(keys.size(), int64_t(keys.size())));
  ok("gen --keys 1000 --queries 50000 --dtype float32 --keys-out unused.npy --queries-out q.npy");
  const auto j = nlohmann::json::parse(
      ok("search --keys k.npy --queries q.npy --out o.npy --device cuda --verify --json --sorter s.npy").out);
  EXPECT_EQ(j["device"], "cuda");
  EXPECT_EQ(j["verified"], true);
  fails("search --keys k.npy --queries q.npy --device cuda --sorter bad.npy", 1, "Sorter index out of range: sorter[0]");
}

}  // namespace
}  // namespace cli_test
