// `gsearch asof` (issue 44): pandas' docstring example by hand for every type, a brute-force
// reference (pandas.merge_asof's rules written as loops over every right row) on random inputs
// with duplicates, groups of any integer dtype (factorized by the CLI), the tolerance, --sort on
// shuffled inputs, stdout without --out, every error path (exit code, message, nothing written),
// --help, and the CUDA run against the CPU (skipped without a GPU).

#include "cli_fixture.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace cli_test {
namespace {

// What a reference join is asked.
template <class T>
struct asof_case {
  std::string direction = "backward";
  bool exact = true;
  std::optional<T> tolerance;
};

// |later - earlier| <= tolerance, later >= earlier, as pandas compares: integers exactly, floats
// by the type's subtraction (refused only when the distance is > the tolerance).
template <class T>
bool within(T later, T earlier, T tol) {
  if constexpr (std::is_integral_v<T>)
    return __int128(later) - __int128(earlier) <= __int128(tol);
  else
    return !(later - earlier > tol);
}
template <class T>
bool backward_wins(T x, T back, T fore) {
  if constexpr (std::is_integral_v<T>)
    return __int128(x) - __int128(back) <= __int128(fore) - __int128(x);
  else
    return x - back <= fore - x;
}

// pandas.merge_asof's match of every left row, by brute force: over the right rows of the same
// group value (in their order), the last key <= x (< x without exact matches) and the first >= x
// (> x), each within the tolerance; nearest takes the closer, backward on a tie.
template <class T, class G = int64_t>
std::vector<int64_t> reference_asof(const std::vector<T>& l, const std::vector<T>& r, const asof_case<T>& c,
                                    const std::vector<G>* lb = nullptr, const std::vector<G>* rb = nullptr) {
  std::vector<int64_t> out(l.size(), -1);
  for (size_t i = 0; i < l.size(); ++i) {
    const T x = l[i];
    int64_t back = -1, fore = -1;
    for (size_t j = 0; j < r.size(); ++j) {
      if (lb && __int128((*lb)[i]) != __int128((*rb)[j])) continue;
      const bool before = c.exact ? !gsearch::key_less(x, r[j]) : gsearch::key_less(r[j], x);
      const bool after = c.exact ? !gsearch::key_less(r[j], x) : gsearch::key_less(x, r[j]);
      if (before) back = int64_t(j);
      if (after && fore < 0) fore = int64_t(j);
    }
    if (c.direction == "forward") back = -1;
    if (c.direction == "backward") fore = -1;
    if (c.tolerance && back >= 0 && !within(x, r[size_t(back)], *c.tolerance)) back = -1;
    if (c.tolerance && fore >= 0 && !within(r[size_t(fore)], x, *c.tolerance)) fore = -1;
    if (back >= 0 && fore >= 0)
      out[i] = backward_wins(x, r[size_t(back)], r[size_t(fore)]) ? back : fore;
    else
      out[i] = back >= 0 ? back : fore;
  }
  return out;
}

// n keys from a small range (runs of duplicates), sorted in the library's order; floats get
// -0.0 and halves.
template <class T>
std::vector<T> sorted_keys(size_t n, uint64_t seed, int range = 60) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (T& x : v) {
    x = T(rng() % uint64_t(range));
    if constexpr (std::is_signed_v<T>) x = T(x - T(range / 3));
    if constexpr (std::is_floating_point_v<T>) {
      if (rng() % 4 == 0) x = T(x + T(0.5));
      if (rng() % 50 == 0) x = T(-0.0);
    }
  }
  std::stable_sort(v.begin(), v.end(), [](T a, T b) { return gsearch::key_less(a, b); });
  return v;
}

std::vector<int64_t> group_values(size_t n, uint64_t seed, int groups) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> v(n);
  for (int64_t& g : v) g = int64_t(rng() % uint64_t(groups)) * 1000003 - 7;  // not codes: any ints
  return v;
}

// The options of a case on the command line.
template <class T>
std::string flags(const asof_case<T>& c) {
  std::string s = " --direction " + c.direction;
  if (!c.exact) s += " --no-exact-matches";
  if (c.tolerance) s += " --tolerance " + gsearch::cli::to_text(*c.tolerance);
  return s;
}

std::vector<int64_t> lines_of(const std::string& text) {
  std::vector<int64_t> v;
  std::istringstream in(text);
  for (int64_t x; in >> x;) v.push_back(x);
  return v;
}

TEST_F(Cli, AsofPandasDocstringExampleForEveryType) {
  for (dtype t : test_dtypes()) {
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::string dt(gsearch::cli::name(t));
      save("l.npy", std::vector<T>{1, 5, 10});
      save("r.npy", std::vector<T>{1, 2, 3, 6, 7});
      const std::pair<std::string, std::vector<int64_t>> cases[] = {
          {"", {0, 2, 4}},
          {" --direction backward", {0, 2, 4}},
          {" --direction forward", {0, 3, -1}},
          {" --direction nearest", {0, 3, 4}},
          {" --no-exact-matches", {-1, 2, 4}},
          {" --direction forward --no-exact-matches", {1, 3, -1}},
          {" --direction nearest --no-exact-matches", {1, 3, 4}},
          {" --tolerance 1", {0, -1, -1}},
          {" --tolerance 2", {0, 2, -1}},
          {" --tolerance 3", {0, 2, 4}},
          {" --direction nearest --tolerance 1", {0, 3, -1}},
          {" --direction forward --tolerance 0", {0, -1, -1}}};
      for (const auto& [opts, expected] : cases) {
        const run_result r = ok("asof --left l.npy --right r.npy --out o.npy --device cpu" + opts);
        EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), expected) << dt << opts;
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_NE(r.err.find("asof: "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("3 left and 5 right " + dt + " keys"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("-> o.npy (int64)"), std::string::npos) << r.err;
        // Without --out: the same indices on stdout, one per line.
        EXPECT_EQ(lines_of(ok("asof --left l.npy --right r.npy --device cpu" + opts).out), expected) << dt << opts;
      }
      const auto j = nlohmann::json::parse(
          ok("asof --left l.npy --right r.npy --out o.npy --direction forward --tolerance 3 --json --device cpu").out);
      EXPECT_EQ(j["command"], "asof");
      EXPECT_EQ(j["device"], "cpu");
      EXPECT_EQ(j["dtype"], dt);
      EXPECT_EQ(j["left"], 3);
      EXPECT_EQ(j["right"], 5);
      EXPECT_TRUE(j["groups"].is_null());
      EXPECT_EQ(j["direction"], "forward");
      EXPECT_EQ(j["allow_exact_matches"], true);
      EXPECT_EQ(j["tolerance"], "3");
      EXPECT_EQ(j["sort"], false);
      EXPECT_EQ(j["checked"], true);
      EXPECT_EQ(j["out"], "o.npy");
      EXPECT_EQ(j["result"], 3);
      EXPECT_EQ(j["matched"], 2);
      EXPECT_GE(j["time_ms"].get<double>(), 0.0);
      EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>{0, 3, -1}));
    });
  }
}

TEST_F(Cli, AsofFloatKeysTakeAFloatTolerance) {
  save("l.npy", std::vector<double>{-0.0, 0.5, 1.25, 3.0});
  save("r.npy", std::vector<double>{-1.0, 0.0, 1.0, 2.0});
  // -0.0 == 0.0: the exact match of -0.0 is right row 1.
  EXPECT_EQ(lines_of(ok("asof --left l.npy --right r.npy --device cpu").out), (std::vector<int64_t>{1, 1, 2, 3}));
  EXPECT_EQ(lines_of(ok("asof --left l.npy --right r.npy --tolerance 0.25 --device cpu").out),
            (std::vector<int64_t>{1, -1, 2, -1}));
  EXPECT_EQ(lines_of(ok("asof --left l.npy --right r.npy --tolerance inf --direction forward --device cpu").out),
            (std::vector<int64_t>{1, 2, 3, -1}));
  const auto j = nlohmann::json::parse(
      ok("asof --left l.npy --right r.npy --tolerance 0.25 --out o.npy --json --device cpu").out);
  EXPECT_EQ(j["tolerance"], "0.25");
  EXPECT_EQ(j["matched"], 2);
}

TEST_F(Cli, AsofMatchesTheReferenceForEveryType) {
  uint64_t seed = 1;
  for (dtype t : test_dtypes()) {
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::string dt(gsearch::cli::name(t));
      const std::vector<T> l = sorted_keys<T>(300, seed++), r = sorted_keys<T>(200, seed++);
      const std::vector<int64_t> lb = group_values(l.size(), seed++, 5), rb = group_values(r.size(), seed++, 6);
      save("l.npy", l);
      save("r.npy", r);
      save("lb.npy", lb);
      save("rb.npy", rb);
      for (const std::string direction : {"backward", "forward", "nearest"})
        for (const bool exact : {true, false})
          for (const std::optional<T> tol : {std::optional<T>(), std::optional<T>(T(3))}) {
            const asof_case<T> c{direction, exact, tol};
            ok("asof --left l.npy --right r.npy --out o.npy --device cpu" + flags(c));
            EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), reference_asof(l, r, c)) << dt << flags(c);
            ok("asof --left l.npy --right r.npy --left-by lb.npy --right-by rb.npy --out g.npy --device cpu" +
               flags(c));
            EXPECT_EQ(npy::load<int64_t>(work("g.npy").string()), reference_asof(l, r, c, &lb, &rb))
                << dt << " by" << flags(c);
          }
    });
  }
}

TEST_F(Cli, AsofGroupsOfAnyIntegerDtype) {
  // Hand-checked: group 7's right rows are 1 (key 1) and 3 (key 3), group 8's 0 (key 0) and 2
  // (key 2); group 9 has no right row.
  save("l.npy", std::vector<int64_t>{1, 2, 3, 4});
  save("r.npy", std::vector<int64_t>{0, 1, 2, 3});
  save("lb.npy", std::vector<int64_t>{7, 8, 7, 9});
  save("rb.npy", std::vector<int64_t>{8, 7, 8, 7});
  const std::string base = "asof --left l.npy --right r.npy --left-by lb.npy --right-by rb.npy --out o.npy --device cpu";
  const run_result r = ok(base);
  EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>{1, 2, 3, -1}));
  EXPECT_NE(r.err.find("in 3 groups"), std::string::npos) << r.err;
  ok(base + " --direction forward --no-exact-matches");
  EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>{3, -1, -1, -1}));
  const auto j = nlohmann::json::parse(ok(base + " --json").out);
  EXPECT_EQ(j["groups"], 3);
  EXPECT_EQ(j["matched"], 3);
  EXPECT_GE(j["factorize_ms"].get<double>(), 0.0);

  // The same groups in other dtypes, the two sides' dtypes different: values compare as numbers.
  save("lb32.npy", std::vector<int32_t>{7, 8, 7, 9});
  save("rbu64.npy", std::vector<uint64_t>{8, 7, 8, 7});
  save("rbu32.npy", std::vector<uint32_t>{8, 7, 8, 7});
  for (const auto& [lbf, rbf] : {std::pair<std::string, std::string>{"lb32.npy", "rbu64.npy"},
                                 {"lb32.npy", "rbu32.npy"}, {"lb.npy", "rbu64.npy"}, {"lb.npy", "rbu32.npy"}}) {
    ok("asof --left l.npy --right r.npy --left-by " + lbf + " --right-by " + rbf + " --out o.npy --device cpu");
    EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>{1, 2, 3, -1})) << lbf << " " << rbf;
  }
  // Values at the types' limits: -1 (int64) is not 2^64 - 1 (uint64), 2^63 (uint64) is no int64.
  save("lbx.npy", std::vector<int64_t>{-1, INT64_MIN, 5, INT64_MAX});
  save("rbx.npy", std::vector<uint64_t>{UINT64_MAX, 5, uint64_t(1) << 63, uint64_t(INT64_MAX)});
  ok("asof --left l.npy --right r.npy --left-by lbx.npy --right-by rbx.npy --out o.npy --device cpu");
  EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>{-1, -1, 1, 3}));
  // A left-only or right-only group, empty sides.
  save("e.npy", std::vector<int64_t>{});
  ok("asof --left e.npy --right r.npy --left-by e.npy --right-by rb.npy --out o.npy --device cpu");
  EXPECT_TRUE(npy::load<int64_t>(work("o.npy").string()).empty());
  ok("asof --left l.npy --right e.npy --left-by lb.npy --right-by e.npy --out o.npy --device cpu");
  EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>(4, -1)));
  ok("asof --left l.npy --right e.npy --out o.npy --device cpu");
  EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), (std::vector<int64_t>(4, -1)));
}

TEST_F(Cli, AsofSortJoinsShuffledInputs) {
  // Needs gsearch::asof_options::sort (issue 44's C++ side): the join of the stably sorted
  // inputs, in the left's original order, naming the right's original rows.
  uint64_t seed = 50;
  for (dtype t : test_dtypes()) {
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::string dt(gsearch::cli::name(t));
      std::vector<T> l = sorted_keys<T>(250, seed++), r = sorted_keys<T>(180, seed++);
      std::vector<int64_t> lb = group_values(l.size(), seed++, 4), rb = group_values(r.size(), seed++, 4);
      std::mt19937_64 rng(seed++);
      std::vector<size_t> pl(l.size()), pr(r.size());
      std::iota(pl.begin(), pl.end(), 0);
      std::iota(pr.begin(), pr.end(), 0);
      std::shuffle(pl.begin(), pl.end(), rng);
      std::shuffle(pr.begin(), pr.end(), rng);
      std::vector<T> ls(l.size()), rs(r.size());
      std::vector<int64_t> lbs(l.size()), rbs(r.size());
      for (size_t i = 0; i < l.size(); ++i) ls[i] = l[pl[i]], lbs[i] = lb[pl[i]];
      for (size_t i = 0; i < r.size(); ++i) rs[i] = r[pr[i]], rbs[i] = rb[pr[i]];
      save("l.npy", ls);
      save("r.npy", rs);
      save("lb.npy", lbs);
      save("rb.npy", rbs);
      // The expected result: the reference on the stably sorted shuffled inputs, mapped back.
      const auto stable_order = [](const std::vector<T>& k) {
        std::vector<size_t> p(k.size());
        std::iota(p.begin(), p.end(), 0);
        std::stable_sort(p.begin(), p.end(), [&](size_t a, size_t b) { return gsearch::key_less(k[a], k[b]); });
        return p;
      };
      const std::vector<size_t> ol = stable_order(ls), orr = stable_order(rs);
      std::vector<T> l2(l.size()), r2(r.size());
      std::vector<int64_t> lb2(l.size()), rb2(r.size());
      for (size_t i = 0; i < l.size(); ++i) l2[i] = ls[ol[i]], lb2[i] = lbs[ol[i]];
      for (size_t i = 0; i < r.size(); ++i) r2[i] = rs[orr[i]], rb2[i] = rbs[orr[i]];
      for (const std::string direction : {"backward", "forward", "nearest"})
        for (const bool by : {false, true}) {
          const asof_case<T> c{direction, direction != "nearest", std::optional<T>(T(4))};
          const std::vector<int64_t> sorted_ref = by ? reference_asof(l2, r2, c, &lb2, &rb2) : reference_asof(l2, r2, c);
          std::vector<int64_t> expected(l.size());
          for (size_t i = 0; i < l.size(); ++i)
            expected[ol[i]] = sorted_ref[i] < 0 ? -1 : int64_t(orr[size_t(sorted_ref[i])]);
          const std::string cmd = "asof --left l.npy --right r.npy --sort --out o.npy --device cpu" + flags(c) +
                                  (by ? " --left-by lb.npy --right-by rb.npy" : "");
          const run_result res = ok(cmd);
          EXPECT_NE(res.err.find("sorted first (--sort)"), std::string::npos) << res.err;
          EXPECT_EQ(npy::load<int64_t>(work("o.npy").string()), expected) << dt << " " << cmd;
        }
    });
  }
}

TEST_F(Cli, AsofErrors) {
  save("l.npy", std::vector<int64_t>{1, 5, 10});
  save("r.npy", std::vector<int64_t>{1, 2, 3, 6, 7});
  save("lu.npy", std::vector<int64_t>{1, 10, 5});
  save("ru.npy", std::vector<int64_t>{1, 2, 3, 7, 6});
  save("lf.npy", std::vector<double>{1, 5, 10});
  save("lnan.npy", std::vector<double>{1, 5, NAN});
  save("rnan.npy", std::vector<double>{1, NAN, 3});
  save("l32.npy", std::vector<int32_t>{1, 5, 10});
  save("lb.npy", std::vector<int64_t>{0, 1, 0});
  save("rb.npy", std::vector<int64_t>{0, 1, 0, 1, 0});
  save("rb4.npy", std::vector<int64_t>{0, 1, 0, 1});
  save("rbf.npy", std::vector<double>{0, 1, 0, 1, 0});
  save("l2d.npy", std::vector<int64_t>{1, 2, 3, 4}, {2, 2});
  const std::string lr = "asof --left l.npy --right r.npy --device cpu";
  // Unsorted keys: pandas' message, where, and the hint.
  fails("asof --left lu.npy --right r.npy --device cpu", 1, "left keys must be sorted");
  fails("asof --left lu.npy --right r.npy --device cpu", 1, "--left lu.npy goes down at index 2: left[1] = 10 > left[2] = 5");
  fails("asof --left lu.npy --right r.npy --device cpu", 1, "pass --sort");
  fails("asof --left l.npy --right ru.npy --device cpu", 1, "right keys must be sorted");
  fails("asof --left l.npy --right ru.npy --device cpu", 1, "--right ru.npy goes down at index 4");
  // NaN keys: pandas' message, even with --sort.
  save("rf.npy", std::vector<double>{1, 2, 3});
  fails("asof --left lnan.npy --right rf.npy --device cpu", 1, "Merge keys contain null values on left side");
  fails("asof --left lnan.npy --right rf.npy --device cpu", 1, "--left lnan.npy holds NaN at index 2");
  fails("asof --left lf.npy --right rnan.npy --device cpu", 1, "Merge keys contain null values on right side");
  fails("asof --left lf.npy --right rnan.npy --sort --device cpu", 1, "null values on right side");
  // Keys of two dtypes, 2-D keys.
  fails("asof --left lf.npy --right r.npy --device cpu", 1, "--left lf.npy is float64 but --right r.npy is int64");
  fails("asof --left l32.npy --right r.npy --device cpu", 1, "is int32 but --right r.npy is int64");
  fails("asof --left l2d.npy --right r.npy --device cpu", 1, "has shape (2, 2), but asof takes 1-D keys");
  // Groups: one side only, lengths, dtype.
  fails(lr + " --left-by lb.npy", 1, "--left-by without --right-by");
  fails(lr + " --right-by rb.npy", 1, "--right-by without --left-by");
  fails(lr + " --left-by lb.npy --right-by rb4.npy", 1, "--right-by rb4.npy has 4 values but --right r.npy has 5 keys");
  fails(lr + " --left-by rb.npy --right-by rb.npy", 1, "--left-by rb.npy has 5 values but --left l.npy has 3 keys");
  fails(lr + " --left-by lb.npy --right-by rbf.npy", 1, "--right-by rbf.npy is float64, but group values are integers");
  fails(lr + " --left-by l2d.npy --right-by rb.npy", 1, "has shape (2, 2), but asof takes 1-D group values");
  // Direction, tolerance.
  fails(lr + " --direction sideways", 105, "--direction");
  fails(lr + " --tolerance 1.5", 1, "--tolerance '1.5' is not an int64 value");
  fails(lr + " --tolerance -1", 1, "tolerance must be positive");
  fails(lr + " --tolerance nan", 1, "integers have no nan");
  fails(lr + " --tolerance abc", 1, "--tolerance 'abc' is not a number");
  fails("asof --left lf.npy --right rf.npy --device cpu --tolerance nan", 1, "tolerance must be a number, not NaN");
  fails("asof --left lf.npy --right rf.npy --device cpu --tolerance -0.5", 1, "tolerance must be positive");
  save("lu64.npy", std::vector<uint64_t>{1, 5, 10});
  fails("asof --left lu64.npy --right lu64.npy --device cpu --tolerance -1", 1, "tolerance must be positive");
  // Options that do not go together; outputs.
  fails(lr + " --sort --assume-sorted", 1, "--sort and --assume-sorted do not go together");
  fails(lr + " --json", 1, "--json needs --out", false);
  fails(lr + " --out l.npy", 1, "the same file as", false);
  fails("asof --left missing.npy --right r.npy --device cpu", 1, "missing.npy");
  // --json: the error as JSON on stdout too.
  const run_result j = gsearch("asof --left lu.npy --right r.npy --out o.npy --json --device cpu");
  EXPECT_EQ(j.code, 1);
  EXPECT_EQ(nlohmann::json::parse(j.out)["exit_code"], 1);
  EXPECT_FALSE(fs::exists(work("o.npy")));
  // --assume-sorted: no check (the result is unspecified, but there is one).
  const auto u = nlohmann::json::parse(ok("asof --left lu.npy --right r.npy --assume-sorted --out o.npy --json --device cpu").out);
  EXPECT_EQ(u["checked"], false);
}

TEST_F(Cli, AsofHelpAndDistributed) {
  EXPECT_NE(ok("--help").out.find("asof "), std::string::npos);
  const run_result h = ok("asof --help");
  for (const char* w : {"--left", "--right", "--left-by", "--right-by", "--direction", "--tolerance",
                        "--no-exact-matches", "--sort", "--assume-sorted", "--out", "--device", "--json",
                        "pandas.merge_asof", "left keys must be sorted", "-1", "Exit codes:"})
    EXPECT_NE(h.out.find(w), std::string::npos) << w;
  // --distributed (cli_distributed_test.cpp runs it): in the help, and among the commands that
  // the others' refusal names.
  EXPECT_NE(h.out.find("--distributed "), std::string::npos);
  EXPECT_NE(h.out.find("mpirun -np N gsearch asof --distributed"), std::string::npos);
  save("a.npy", std::vector<int32_t>{1, 2, 3});
  fails("merge --a a.npy --b a.npy --distributed", 1, "the commands that do are search, find, sort, join and asof");
}

TEST_F(Cli, AsofCudaWithoutDevice) {
  hide_gpus();
  save("l.npy", std::vector<int32_t>{1, 2, 3});
  fails("asof --left l.npy --right l.npy --device cuda", 2, "--device cuda: ");
  EXPECT_NE(ok("asof --left l.npy --right l.npy --out o.npy --device auto").err.find("device=cpu"), std::string::npos);
}

TEST_F(Cli, CudaAsofMatchesTheCpu) {
  GSEARCH_GPU_OR_SKIP();
  uint64_t seed = 900;
  for (dtype t : {dtype::int32, dtype::uint64, dtype::float32, dtype::float64}) {
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::string dt(gsearch::cli::name(t));
      const std::vector<T> l = sorted_keys<T>(200000, seed++, 100000), r = sorted_keys<T>(50001, seed++, 100000);
      save("l.npy", l);
      save("r.npy", r);
      save("lb.npy", group_values(l.size(), seed++, 100));
      save("rb.npy", group_values(r.size(), seed++, 120));
      std::vector<T> shuffled = l;
      std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(seed++));
      save("ls.npy", shuffled);
      for (const std::string direction : {"backward", "forward", "nearest"})
        for (const std::string extra : {"", " --no-exact-matches --tolerance 7", " --left-by lb.npy --right-by rb.npy",
                                        " --left-by lb.npy --right-by rb.npy --tolerance 50"}) {
          const std::string cmd = "asof --left l.npy --right r.npy --direction " + direction + extra;
          EXPECT_EQ(nlohmann::json::parse(ok(cmd + " --out c.npy --device cuda --json").out)["device"], "cuda");
          ok(cmd + " --out h.npy --device cpu");
          EXPECT_EQ(read_bytes(work("c.npy")), read_bytes(work("h.npy"))) << dt << " " << cmd;
        }
      const std::string sorted = "asof --left ls.npy --right r.npy --sort --left-by lb.npy --right-by rb.npy";
      ok(sorted + " --out c.npy --device cuda");
      ok(sorted + " --out h.npy --device cpu");
      EXPECT_EQ(read_bytes(work("c.npy")), read_bytes(work("h.npy"))) << dt << " --sort";
      save("lu.npy", shuffled);
      fails("asof --left lu.npy --right r.npy --device cuda", 1, "left keys must be sorted");
    });
  }
}

}  // namespace
}  // namespace cli_test
