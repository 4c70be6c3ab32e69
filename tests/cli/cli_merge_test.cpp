// `gsearch merge`, `sort`, `set` and `join` (issue 8): each against std::merge, std::stable_sort,
// std::set_* and a nested-loop join for every type, empty inputs, errors, --help, and the CUDA
// runs against the CPU (skipped without a GPU).

#include "cli_fixture.hpp"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace cli_test {
namespace {

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
    gsearch::visit_key_type(t, [&]<class T>() {
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
        EXPECT_NE(r.err.find("merge: " + std::to_string(na) + " + " + std::to_string(nb) + " " +
                             dt + " keys, device=cpu ("),
                  std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find(std::to_string(na + nb) + " keys -> m.npy"), std::string::npos) << r.err;
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
    gsearch::visit_key_type(t, [&]<class T>() {
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
        EXPECT_NE(r.err.find("sort: " + std::to_string(n) + " " + dt + " keys (stable)"),
                  std::string::npos)
            << r.err;
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
  for (dtype t : test_dtypes()) {
    gsearch::visit_key_type(t, [&]<class T>() {
      const std::string dt(gsearch::cli::name(t));
      for (const auto& [na, nb] : {std::pair<size_t, size_t>{3000, 2001}, {40, 9000}, {3, 3}}) {
        const std::vector<T> a = sorted_data<T>(na, seed++), b = sorted_data<T>(nb, seed++);
        save("a.npy", a);
        save("b.npy", b);
        for (const std::string op : {"intersection", "union", "difference", "symmetric-difference"}) {
          const std::vector<T> expected = reference_set(op, a, b);
          const run_result r = ok("set --op " + op + " --a a.npy --b b.npy --out s.npy");
          EXPECT_NE(r.err.find("set: " + op + " of " + std::to_string(na) + " and " +
                               std::to_string(nb) + " " + dt + " keys, device="),
                    std::string::npos)
              << r.err;
          EXPECT_NE(r.err.find(": " + std::to_string(expected.size()) + " keys -> s.npy"),
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
  for (dtype t : test_dtypes()) {
    gsearch::visit_key_type(t, [&]<class T>() {
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
          EXPECT_NE(res.err.find("join: " + how + " join of " + std::to_string(nl) + " and " +
                                 std::to_string(nr) + " " + dt + " keys"),
                    std::string::npos)
              << res.err;
          EXPECT_NE(res.err.find(": " + std::to_string(li.size()) + " rows -> i.npy"),
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
        "pass --assume-sorted");
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

// Issue 45: one name for skipping the sorted check, --assume-sorted, on search, merge, set and
// join alike; --no-check, merge / set / join's older name, is the same flag everywhere (search
// too), so existing scripts keep working. sort has neither (its input need not be sorted).
TEST_F(Cli, AssumeSortedIsOneFlagEverywhereWithNoCheckAsItsAlias) {
  save("a.npy", std::vector<int32_t>{1, 2, 2, 4});
  save("u.npy", std::vector<int32_t>{1, 2, 5, 3, 4});
  const std::vector<std::string> commands = {
      "search --keys u.npy --queries a.npy --out o.npy",
      "merge --a u.npy --b a.npy --out o.npy",
      "set --op union --a u.npy --b a.npy --out o.npy",
      "join --how inner --left u.npy --right a.npy --out-left o.npy --out-right o2.npy",
  };
  for (const std::string& cmd : commands) {
    // Checked by default, and the message names the one flag.
    fails(cmd, 1, "or pass --assume-sorted", false);
    // Either name skips the check, with the same outputs.
    ok(cmd + " --assume-sorted");
    const std::string with_new = read_bytes(work("o.npy"));
    fs::remove(work("o.npy"));
    ok(cmd + " --no-check");
    EXPECT_EQ(read_bytes(work("o.npy")), with_new) << cmd;
    const run_result help = ok(cmd.substr(0, cmd.find(' ')) + " --help");
    EXPECT_NE(help.out.find("--assume-sorted,--no-check"), std::string::npos) << cmd << "\n" << help.out;
  }
  const auto j = nlohmann::json::parse(ok("merge --a u.npy --b a.npy --out m.npy --assume-sorted --json").out);
  EXPECT_EQ(j["checked"], false);
  fails("sort --data a.npy --assume-sorted", -1, "--assume-sorted");
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
  EXPECT_NE(ok("merge --a a.npy --b a.npy --out m.npy --device auto").err.find("device=cpu"),
            std::string::npos);
}

TEST_F(Cli, CudaMergeFamilyMatchesTheCpu) {
  GSEARCH_GPU_OR_SKIP();
  uint64_t seed = 400;
  for (dtype t : {dtype::int32, dtype::uint64, dtype::float32, dtype::float64}) {
    gsearch::visit_key_type(t, [&]<class T>() {
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
}  // namespace cli_test
