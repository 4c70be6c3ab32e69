// `gsearch select`, `topk`, `quantile` and `partition` (issue 21): every type against a sort in
// the key order (NaN last, -0.0 == 0.0), numpy's quantiles of every method (values computed with
// numpy 2.4), --json, the outputs, errors, and the CUDA runs against the CPU (skipped without a
// GPU).

#include "cli_fixture.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gsearch/core/key_traits.hpp"

namespace cli_test {
namespace {

using gsearch::cli::to_text;
using json = nlohmann::json;

// Equal in the key order: both NaN, or == (so -0.0 == 0.0).
template <class T>
bool key_equal(T a, T b) {
  return !gsearch::key_less(a, b) && !gsearch::key_less(b, a);
}

template <class T>
std::vector<T> key_sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end(), [](T a, T b) { return gsearch::key_less(a, b); });
  return v;
}

// A value of the JSON "result" as T ("nan", "inf", "-inf" for non-finite floats).
template <class T>
T json_value(const json& j) {
  if (j.is_string()) {
    const std::string s = j;
    if (s == "nan") return T(NAN);
    return s == "inf" ? T(INFINITY) : T(-INFINITY);
  }
  return j.get<T>();
}

// The text gsearch prints for a value ("nan" for every NaN).
template <class T>
std::string shown(T v) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(v)) return "nan";
  return to_text(v);
}

// ---- select -----------------------------------------------------------------------------------

TEST_F(Cli, SelectMatchesASortForEveryType) {
  for (dtype t : gsearch::cli::all_dtypes) {
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::vector<T> data = find_data<T>(5001, 3);  // NaN, inf, -0.0, duplicates
      const std::vector<T> s = key_sorted(data);
      const int64_t n = int64_t(data.size());
      save("d.npy", data);
      for (const int64_t k : {int64_t(0), int64_t(1), n / 2, n - 2, n - 1, int64_t(-1), -n}) {
        const std::string args = "select --data d.npy --device cpu --k " + std::to_string(k);
        const T want = s[size_t(k < 0 ? k + n : k)];
        const run_result r = ok(args);
        EXPECT_EQ(r.out, shown(want) + "\n") << args;
        EXPECT_NE(r.err.find("select: 1 rank of 5001 "), std::string::npos) << r.err;
        const json j = json::parse(ok(args + " --json").out);
        EXPECT_TRUE(key_equal(json_value<T>(j["result"]), want)) << args << ": " << j["result"];
        EXPECT_EQ(j["k"], k);
      }
      // Many ranks at once, into a file and as a JSON list.
      const std::vector<int64_t> ranks = {5000, 0, 17, -3, 2500, 17};
      save("ks.npy", ranks);
      ok("select --data d.npy --ks ks.npy --out v.npy");
      const std::vector<T> got = npy::load<T>(work("v.npy").string());
      ASSERT_EQ(got.size(), ranks.size());
      const json j = json::parse(ok("select --data d.npy --ks ks.npy --json").out);
      ASSERT_EQ(j["result"].size(), ranks.size());
      for (size_t i = 0; i < ranks.size(); ++i) {
        const T want = s[size_t(ranks[i] < 0 ? ranks[i] + n : ranks[i])];
        EXPECT_TRUE(key_equal(got[i], want)) << i;
        EXPECT_TRUE(key_equal(json_value<T>(j["result"][i]), want)) << i;
      }
      EXPECT_EQ(json::parse(ok("select --data d.npy --ks ks.npy --out v.npy --json").out)["result"], 6);
    });
  }
}

TEST_F(Cli, SelectTakesAnyShapeWhole) {
  save("d.npy", std::vector<int64_t>{9, -4, 7, 1, 0, 3}, {2, 3});
  EXPECT_EQ(ok("select --data d.npy --k 0").out, "-4\n");
  EXPECT_EQ(ok("select --data d.npy --k -1").out, "9\n");
  save("c.npy", std::vector<double>(1000, 2.5));  // constant data
  EXPECT_EQ(ok("select --data c.npy --k 500").out, "2.5\n");
  save("u.npy", std::vector<uint64_t>{UINT64_MAX, 0, UINT64_MAX - 1});  // beyond 2^53: exact
  EXPECT_EQ(json::parse(ok("select --data u.npy --k 1 --json").out)["result"].get<uint64_t>(),
            UINT64_MAX - 1);
}

// Issue 45: "any shape" means any: 0-d, 3-D and Fortran-order data are taken whole, as
// np.sort(d.ravel()) and np.quantile(d, q) (and Python's gsearch.select / quantile) take them;
// partition stays 1-D (its output has the data's positions) and other commands 1-D / 2-D.
TEST_F(Cli, SelectAndQuantileTakeEveryShape) {
  // 0-d: one element (np.quantile(np.float64(7.5), 0.3) == 7.5).
  write_bytes(work("s.npy"), raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                                     bytes_of(std::vector<double>{7.5})));
  EXPECT_EQ(ok("select --data s.npy --k 0").out, "7.5\n");
  EXPECT_EQ(ok("select --data s.npy --k -1").out, "7.5\n");
  EXPECT_EQ(ok("quantile --data s.npy --q 0.3").out, "7.5\n");
  EXPECT_EQ(json::parse(ok("select --data s.npy --k 0 --json").out)["shape"], json::array());
  // 3-D, (2, 3, 4): all 24 elements.
  std::vector<int32_t> cube(24);
  for (size_t i = 0; i < cube.size(); ++i) cube[i] = int32_t((i * 7) % 24) - 5;  // -5 .. 18
  save("c.npy", cube, {2, 3, 4});
  EXPECT_EQ(ok("select --data c.npy --k 0").out, "-5\n");
  EXPECT_EQ(ok("select --data c.npy --k 10").out, "5\n");
  EXPECT_EQ(ok("select --data c.npy --k -1").out, "18\n");
  EXPECT_EQ(ok("quantile --data c.npy --q 0,0.5,1").out, "-5\n6.5\n18\n");  // numpy: -5, 6.5, 18
  EXPECT_EQ(json::parse(ok("quantile --data c.npy --q 0.5 --json").out)["shape"], json::array({2, 3, 4}));
  save("ks.npy", std::vector<int64_t>{23, 0});
  ok("select --data c.npy --ks ks.npy --out v.npy");
  EXPECT_EQ(npy::load<int32_t>(work("v.npy").string()), (std::vector<int32_t>{18, -5}));
  // 4-D with a 1 in it, and Fortran order (the same multiset: its order does not matter).
  save("h.npy", cube, {2, 1, 3, 4});
  EXPECT_EQ(ok("select --data h.npy --k 10").out, "5\n");
  write_bytes(work("f.npy"), raw_npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
                                     bytes_of(std::vector<double>{6, 1, 5, 2, 4, 3})));
  EXPECT_EQ(ok("select --data f.npy --k 1").out, "2\n");
  EXPECT_EQ(ok("quantile --data f.npy --q 0.5").out, "3.5\n");
  // 3-D data for a command that keeps positions, or a 1-D / 2-D one: still refused, named.
  fails("partition --data c.npy --kth 0", 1, "has shape (2, 3, 4), but gsearch reads 1-D and 2-D arrays only");
  fails("topk --data c.npy --k 1 --out-values o.npy --out-indices i.npy", 1, "has shape (2, 3, 4)", false);
  fails("sort --data c.npy", 1, "has shape (2, 3, 4)");
}

TEST_F(Cli, SelectErrorsExit1AndWriteNothing) {
  save("d.npy", std::vector<int32_t>{5, 3, 7});
  save("e.npy", std::vector<int32_t>{});
  save("ks32.npy", std::vector<int32_t>{0});
  save("ks.npy", std::vector<int64_t>{0, 3});
  fails("select --data d.npy --k 3", 1,
        "--k must be at most 2, the last rank of the 3 elements of --data (negative ranks count "
        "from the end, down to -3) (got 3)");
  fails("select --data d.npy --k -4", 1, "--k must be at least -3 (got -4)");
  fails("select --data d.npy --k 1.5", 1, "--k '1.5' is not a whole number");
  fails("select --data e.npy --k 0", 1, "--data e.npy is empty: select needs at least one element");
  fails("select --data d.npy --ks ks32.npy", 1, "--ks ks32.npy is int32 of shape (1,), but ranks are a 1-D int64 array");
  fails("select --data d.npy --ks ks.npy", 1,
        "--ks ks.npy[1] = 3 is out of range for the 3 elements of --data (ranks run from -3 to 2)");
  fails("select --data d.npy", 1, "give --k K (one rank, from 0) or --ks KS.npy", false);
  fails("select --data d.npy --k 0 --ks ks.npy", -1, "excludes");
  fails("select --data missing.npy --k 0", 1, "cannot open missing.npy");
  fails("select --data d.npy --k 0 --out d.npy", 1, "refusing to overwrite an input", false);
}

// ---- topk -------------------------------------------------------------------------------------

// The rows x k result of topk against a sort of each row: the values in the key order (largest
// first, or smallest first), and indices that point at elements of those values.
template <class T>
void expect_topk(const std::vector<T>& data, int64_t rows, int64_t k, bool largest, bool sorted,
                 const std::vector<T>& values, const std::vector<int64_t>& indices,
                 const std::string& what) {
  const int64_t cols = rows ? int64_t(data.size()) / rows : 0;
  ASSERT_EQ(int64_t(values.size()), rows * k) << what;
  ASSERT_EQ(int64_t(indices.size()), rows * k) << what;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<T> row(data.begin() + r * cols, data.begin() + (r + 1) * cols);
    std::vector<T> want = key_sorted(row);
    if (largest) std::reverse(want.begin(), want.end());
    want.resize(size_t(k));
    std::vector<T> got(values.begin() + r * k, values.begin() + (r + 1) * k);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t j = indices[size_t(r * k + i)];
      ASSERT_TRUE(j >= 0 && j < cols) << what << ": index " << j;
      EXPECT_TRUE(key_equal(row[size_t(j)], got[size_t(i)])) << what << " row " << r << " #" << i;
    }
    if (!sorted) {
      got = key_sorted(got);
      want = key_sorted(want);
    }
    for (int64_t i = 0; i < k; ++i)
      EXPECT_TRUE(key_equal(got[size_t(i)], want[size_t(i)])) << what << " row " << r << " #" << i;
  }
}

TEST_F(Cli, TopkMatchesASortForEveryType) {
  for (dtype t : test_dtypes()) {
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::vector<T> data = find_data<T>(3 * 700, 5);
      for (const bool two_d : {false, true}) {
        const int64_t rows = two_d ? 3 : 1;
        if (two_d)
          save("d.npy", data, {3, 700});
        else
          save("d.npy", data);
        for (const int64_t k : {0, 1, 5, 64, 699, 700})
          for (const char* flags : {"", " --smallest", " --unsorted", " --smallest --unsorted"}) {
            const std::string args = "topk --data d.npy --out-values v.npy --out-indices i.npy --k " +
                                     std::to_string(k) + flags;
            const int64_t cols = two_d ? 700 : 2100;
            if (k > cols) continue;
            const run_result r = ok(args);
            EXPECT_NE(r.err.find("topk: the " + std::to_string(k)), std::string::npos) << r.err;
            npy::input v(work("v.npy").string()), i(work("i.npy").string());
            const std::vector<int64_t> shape =
                two_d ? std::vector<int64_t>{3, k} : std::vector<int64_t>{k};
            EXPECT_EQ(v.shape(), shape) << args;
            EXPECT_EQ(i.shape(), shape) << args;
            EXPECT_EQ(i.type(), dtype::int64);
            const bool largest = std::string(flags).find("smallest") == std::string::npos;
            const bool sorted = std::string(flags).find("unsorted") == std::string::npos;
            expect_topk(data, rows, k, largest, sorted, v.read<T>(), i.read<int64_t>(),
                        std::string(gsearch::key_traits<T>::name) + " " + args);
          }
      }
    });
  }
}

TEST_F(Cli, TopkJsonAndEdges) {
  save("d.npy", std::vector<float>{1.0f, 5.0f, NAN, 3.0f}, {2, 2});
  const json j = json::parse(
      ok("topk --data d.npy --k 1 --out-values v.npy --out-indices i.npy --json --device cpu").out);
  EXPECT_EQ(j["command"], "topk");
  EXPECT_EQ(j["rows"], 2);
  EXPECT_EQ(j["k"], 1);
  EXPECT_EQ(j["largest"], true);
  EXPECT_EQ(j["sorted"], true);
  EXPECT_EQ(j["result"], 2);
  EXPECT_EQ(j["shape"], json::array({2, 2}));
  const std::vector<float> v = npy::load<float>(work("v.npy").string());
  EXPECT_EQ(v[0], 5.0f);
  EXPECT_TRUE(std::isnan(v[1])) << "NaN is the largest, as in torch";
  EXPECT_EQ(npy::load<int64_t>(work("i.npy").string()), (std::vector<int64_t>{1, 0}));
  // No rows: empty outputs of shape (0, k).
  save("z.npy", std::vector<int32_t>{}, {0, 4});
  ok("topk --data z.npy --k 2 --out-values v.npy --out-indices i.npy");
  EXPECT_EQ(npy::input(work("v.npy").string()).shape(), (std::vector<int64_t>{0, 2}));
}

TEST_F(Cli, TopkErrorsWriteNeitherOutput) {
  save("d.npy", std::vector<int32_t>{5, 3, 7});
  fails("topk --data d.npy --k 4 --out-values out.npy --out-indices i.npy", 1,
        "--k must be at most 3, the length of the last axis of --data d.npy (got 4)", false);
  fails("topk --data d.npy --k -1 --out-values out.npy --out-indices i.npy", 1,
        "--k must be at least 0", false);
  fails("topk --data d.npy --k 1 --out-values out.npy --out-indices out.npy", 1,
        "is the same file as --out-values", false);
  fails("topk --data d.npy --k 1 --out-values out.npy --out-indices d.npy", 1,
        "refusing to overwrite an input", false);
  fails("topk --data d.npy --k 1 --out-values out.npy", -1, "--out-indices", false);
}

// ---- quantile ---------------------------------------------------------------------------------

TEST_F(Cli, QuantileEveryMethodEqualsNumpy) {
  // np.quantile(np.array([10, 7, 4, 3, 2, 1], np.int32), q, method=m) for q = 0, 0.3, 0.5, 0.99, 1
  // (numpy 2.4), as printed by repr(float(...)).
  const std::vector<std::pair<std::string, std::vector<std::string>>> numpy = {
      {"linear", {"1", "2.5", "3.5", "9.850000000000001", "10"}},
      {"lower", {"1", "2", "3", "7", "10"}},
      {"higher", {"1", "3", "4", "10", "10"}},
      {"nearest", {"1", "3", "3", "10", "10"}},
      {"midpoint", {"1", "2.5", "3.5", "8.5", "10"}},
      {"hazen", {"1", "2.3", "3.5", "10", "10"}},
      {"weibull", {"1", "2.0999999999999996", "3.5", "10", "10"}},
      {"inverted_cdf", {"1", "2", "3", "10", "10"}},
      {"closest_observation", {"1", "2", "3", "10", "10"}},
      {"averaged_inverted_cdf", {"1", "2", "3.5", "10", "10"}},
      {"interpolated_inverted_cdf", {"1", "1.7999999999999998", "3", "9.819999999999999", "10"}},
      {"median_unbiased", {"1", "2.2333333333333334", "3.5", "10", "10"}},
      {"normal_unbiased", {"1", "2.25", "3.5", "10", "10"}},
  };
  save("d.npy", std::vector<int32_t>{10, 7, 4, 3, 2, 1});
  for (const auto& [method, want] : numpy) {
    const std::string args = "quantile --data d.npy --q 0,0.3,0.5,0.99,1 --method " + method;
    std::string lines;
    for (const std::string& w : want) lines += w + "\n";
    EXPECT_EQ(ok(args).out, lines) << args;
    const json j = json::parse(ok(args + " --json").out);
    EXPECT_EQ(j["method"], method);
    ASSERT_EQ(j["result"].size(), 5u);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(to_text(j["result"][i].get<double>()), want[i]) << method;
  }
  EXPECT_EQ(ok("quantile --data d.npy --q 0.5").out, "3.5\n") << "linear by default";
}

TEST_F(Cli, QuantileFloatsNanAndOutput) {
  // np.quantile(np.float32([1, 2, 3]), 0.4) is np.float32(1.8): computed and shown in float32.
  save("f.npy", std::vector<float>{3.0f, 1.0f, 2.0f});
  EXPECT_EQ(ok("quantile --data f.npy --q 0.4").out, "1.8\n");
  // A NaN makes every quantile NaN; --skip-nan is nanquantile.
  save("n.npy", std::vector<double>{3.0, NAN, 1.0, 2.0});
  EXPECT_EQ(ok("quantile --data n.npy --q 0,0.5,1").out, "nan\nnan\nnan\n");
  EXPECT_EQ(ok("quantile --data n.npy --q 0,0.5,1 --skip-nan").out, "1\n2\n3\n");
  const json j = json::parse(ok("quantile --data n.npy --q 0.5,1 --json").out);
  EXPECT_EQ(j["result"], json::array({"nan", "nan"}));
  EXPECT_EQ(j["skip_nan"], false);
  save("a.npy", std::vector<double>{NAN, NAN});
  EXPECT_EQ(ok("quantile --data a.npy --q 0.5 --skip-nan").out, "nan\n") << "all NaN";
  // --out: float64, one per q.
  const run_result r = ok("quantile --data f.npy --q 0.4,1 --out q.npy");
  EXPECT_NE(r.err.find("-> q.npy (float64)"), std::string::npos) << r.err;
  npy::input q(work("q.npy").string());
  EXPECT_EQ(q.type(), dtype::float64);
  EXPECT_EQ(q.read<double>(), (std::vector<double>{double(1.8f), 3.0}));
}

TEST_F(Cli, QuantileErrorsExit1AndWriteNothing) {
  save("d.npy", std::vector<double>{1, 2, 3});
  save("e.npy", std::vector<double>{});
  fails("quantile --data d.npy --q 1.5", 1, "--q '1.5' is outside [0, 1]");
  fails("quantile --data d.npy --q -0.1", 1, "--q '-0.1' is outside [0, 1]");
  fails("quantile --data d.npy --q nan", 1, "--q 'nan' is outside [0, 1]");
  fails("quantile --data d.npy --q abc", 1, "--q 'abc' is not a number");
  fails("quantile --data d.npy --q 0.5,", 1, "--q '0.5,' is not a comma-separated list");
  fails("quantile --data e.npy --q 0.5", 1, "--data e.npy is empty: quantile needs at least one element");
  fails("quantile --data d.npy --q 0.5 --method guess", -1, "guess");
  fails("quantile --data d.npy", -1, "--q", false);
}

// ---- partition --------------------------------------------------------------------------------

TEST_F(Cli, PartitionMatchesNumpysContractForEveryType) {
  for (dtype t : gsearch::cli::all_dtypes) {
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::vector<T> data = find_data<T>(4099, 9);
      const std::vector<T> s = key_sorted(data);
      const int64_t n = int64_t(data.size());
      save("d.npy", data);
      for (const std::string kth : {"0", "4098", "2049", "10,-10,500,500", "-1,0"}) {
        std::vector<int64_t> ks;
        for (size_t p = 0, e; p <= kth.size(); p = e + 1) {
          e = std::min(kth.find(',', p), kth.size());
          const int64_t k = std::stoll(kth.substr(p, e - p));
          ks.push_back(k < 0 ? k + n : k);
        }
        const std::string what = std::string(gsearch::key_traits<T>::name) + " --kth " + kth;
        ok("partition --data d.npy --out p.npy --kth " + kth);
        const std::vector<T> p = npy::load<T>(work("p.npy").string());
        ASSERT_EQ(p.size(), data.size());
        const std::vector<T> sp = key_sorted(p);  // the same elements
        for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(key_equal(sp[size_t(i)], s[size_t(i)])) << what << " " << i;
        ok("partition --data d.npy --out i.npy --indices --kth " + kth);
        const std::vector<int64_t> idx = npy::load<int64_t>(work("i.npy").string());
        std::vector<T> gathered;
        for (int64_t i : idx) gathered.push_back(data[size_t(i)]);
        std::vector<int64_t> sorted_idx = idx;
        std::sort(sorted_idx.begin(), sorted_idx.end());
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(sorted_idx[size_t(i)], i) << what << ": a permutation";
        for (const std::vector<T>* out : {&p, static_cast<const std::vector<T>*>(&gathered)})
          for (const int64_t k : ks) {
            EXPECT_TRUE(key_equal((*out)[size_t(k)], s[size_t(k)])) << what << " at " << k;
            for (int64_t i = 0; i < k; i += 7)
              EXPECT_FALSE(gsearch::key_less((*out)[size_t(k)], (*out)[size_t(i)])) << what;
            for (int64_t i = k + 1; i < n; i += 7)
              EXPECT_FALSE(gsearch::key_less((*out)[size_t(i)], (*out)[size_t(k)])) << what;
          }
      }
    });
  }
}

TEST_F(Cli, PartitionJsonAndErrors) {
  save("d.npy", std::vector<int64_t>{3, 1, 2});
  const json j = json::parse(ok("partition --data d.npy --kth 0,1,2 --out p.npy --json").out);
  EXPECT_EQ(j["kth"], json::array({0, 1, 2}));
  EXPECT_EQ(j["out_dtype"], "int64");
  EXPECT_EQ(j["result"], 3);
  EXPECT_EQ(npy::load<int64_t>(work("p.npy").string()), (std::vector<int64_t>{1, 2, 3}));
  save("2d.npy", std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  save("e.npy", std::vector<int32_t>{});
  fails("partition --data d.npy --kth 3", 1, "--kth must be at most 2", true);
  fails("partition --data d.npy --kth 1,-4", 1, "--kth must be at least -3 (got -4)");
  fails("partition --data d.npy --kth 1.5", 1, "--kth '1.5' is not a whole number");
  fails("partition --data 2d.npy --kth 0", 1, "--data 2d.npy has shape (2, 2), but partition takes 1-D data");
  fails("partition --data e.npy --kth 0", 1, "--data e.npy is empty");
  fails("partition --data d.npy --kth 0", -1, "--out", false);
}

TEST_F(Cli, SelectionHelp) {
  for (const char* cmd : {"select", "topk", "quantile", "partition"}) {
    const run_result r = ok(std::string(cmd) + " --help");
    for (const char* s : {"--data", "--device", "--json", "Exit codes:"})
      EXPECT_NE(r.out.find(s), std::string::npos) << cmd << ": " << s;
    EXPECT_NE(ok("--help").out.find(std::string(cmd) + " "), std::string::npos) << cmd;
  }
  EXPECT_NE(ok("quantile --help").out.find("interpolated_inverted_cdf"), std::string::npos);
}

TEST_F(Cli, SelectionCudaWithoutDevice) {
  hide_gpus();
  save("d.npy", std::vector<int32_t>{4, 1, 3});
  fails("select --data d.npy --k 0 --device cuda", 2, "--device cuda: ");
  EXPECT_EQ(ok("select --data d.npy --k 0 --device auto").out, "1\n");
}

TEST_F(Cli, CudaSelectionMatchesTheCpu) {
  GSEARCH_GPU_OR_SKIP();
  for (dtype t : {dtype::int32, dtype::uint64, dtype::float32, dtype::float64}) {
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::vector<T> data = find_data<T>(300000, 21);
      save("d.npy", data);
      save("ks.npy", std::vector<int64_t>{0, 1, 150000, -1, 299998, 7});
      for (const char* args : {"select --data d.npy --ks ks.npy --json",
                               "quantile --data d.npy --q 0,0.01,0.5,0.99,1 --json",
                               "quantile --data d.npy --q 0,0.01,0.5,0.99,1 --skip-nan --json",
                               "quantile --data d.npy --q 0.3 --method nearest --json"}) {
        const json c = json::parse(ok(std::string(args) + " --device cuda").out);
        const json h = json::parse(ok(std::string(args) + " --device cpu").out);
        EXPECT_EQ(c["device"], "cuda");
        EXPECT_EQ(c["result"], h["result"]) << args;
      }
      save("r.npy", data, {300, 1000});
      for (const char* flags : {"", " --smallest"}) {
        ok(std::string("topk --data r.npy --k 64 --out-values cv.npy --out-indices ci.npy --device cuda") + flags);
        ok(std::string("topk --data r.npy --k 64 --out-values hv.npy --out-indices hi.npy --device cpu") + flags);
        const std::vector<T> cv = npy::load<T>(work("cv.npy").string());
        const std::vector<T> hv = npy::load<T>(work("hv.npy").string());
        ASSERT_EQ(cv.size(), hv.size());
        for (size_t i = 0; i < cv.size(); ++i) EXPECT_TRUE(key_equal(cv[i], hv[i])) << flags << " " << i;
        expect_topk(data, 300, 64, *flags == '\0', true, cv, npy::load<int64_t>(work("ci.npy").string()),
                    std::string("cuda topk") + flags);
      }
      ok("partition --data d.npy --kth 5,150000 --out p.npy --device cuda");
      const std::vector<T> p = npy::load<T>(work("p.npy").string());
      const std::vector<T> s = key_sorted(data);
      EXPECT_TRUE(key_equal(p[5], s[5]));
      EXPECT_TRUE(key_equal(p[150000], s[150000]));
    });
  }
}

}  // namespace
}  // namespace cli_test
