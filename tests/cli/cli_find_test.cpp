// `gsearch find` (issue 7): parse_value (--value and --hi, exactly or not at all), every mode,
// op and type against a loop, --json, the study strategies, all and isin outputs, errors, and
// the CUDA runs against the CPU (skipped without a GPU).

#include "cli_fixture.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace cli_test {
namespace {

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
  for (dtype t : test_dtypes()) {
    const std::string dt(gsearch::cli::name(t));
    gsearch::visit_key_type(t, [&]<class T>() {
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
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::vector<T> data = find_data<T>(9000, 11);
      save("d.npy", data);
      for (const char* op : {"eq", "ge", "ne"}) {
        std::vector<int64_t> expected;
        for (size_t i = 0; i < data.size(); ++i)
          if (op_holds<T>(op, data[i], T(30), T(30))) expected.push_back(int64_t(i));
        const std::string args =
            std::string("find --data d.npy --value 30 --mode all --out idx.npy --op ") + op;
        const run_result r = ok(args);
        EXPECT_NE(r.err.find("find: all x "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(": " + std::to_string(expected.size()) + " matches -> idx.npy (int64)"),
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
    gsearch::visit_key_type(t, [&]<class T>() {
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
        EXPECT_NE(r.err.find("find: isin of 6000 "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(": " + std::to_string(members) + " true -> m.npy (bool)"),
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
    gsearch::visit_key_type(t, [&]<class T>() {
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

}  // namespace
}  // namespace cli_test
