// The as-of join on the CUDA backend: asof_cases.hpp's cases and rules against the definition
// and the CPU backend, many groups over many blocks (the radix sort of the group codes, the
// starts of groups absent on the right), and the checks' errors from device memory with nothing
// written. Skips visibly without a GPU; GSEARCH_TEST_SUBSET=1 (compute-sanitizer) keeps one pool,
// two rules of each direction and a smaller grouped case.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "asof_cases.hpp"
#include "gsearch/gsearch.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T>
class GpuAsof : public ::testing::Test {
 protected:
  void SetUp() override { GSEARCH_GPU_OR_SKIP(); }
};
TYPED_TEST_SUITE(GpuAsof, KeyTypes);

template <class T>
std::vector<T> from_device(const device_vector<T>& d) {
  std::vector<T> h(static_cast<size_t>(d.size()));
  d.copy_to(span<T>(h));
  return h;
}

// The join on the GPU (the output poisoned first), copied back.
template <class T>
std::vector<int64_t> gpu_asof(const AsofCase<T>& c, const asof_options<T>& o) {
  const auto left = to_device(c.left), right = to_device(c.right);
  const std::vector<int64_t> poison(c.left.size(), -7);
  const auto out = to_device(poison);
  if (c.grouped) {
    const auto lb = to_device(c.left_by), rb = to_device(c.right_by);
    asof_join(cuda, span<const T>(left), span<const T>(right), span<const int64_t>(lb), span<const int64_t>(rb),
              c.groups, span<int64_t>(out), o);
  } else {
    asof_join(cuda, span<const T>(left), span<const T>(right), span<int64_t>(out), o);
  }
  return from_device(out);
}

template <class T>
std::vector<asof_options<T>> gpu_rules() {
  std::vector<asof_options<T>> all = asof_rules<T>();
  if (!test_subset()) return all;
  std::vector<asof_options<T>> some;  // per direction: exact without tolerance, strict with 3
  for (const auto& o : all)
    if ((o.allow_exact_matches && !o.tolerance) || (!o.allow_exact_matches && o.tolerance && *o.tolerance == T(3)))
      some.push_back(o);
  return some;
}

TYPED_TEST(GpuAsof, MatchesTheDefinitionAndTheCpu) {
  using T = TypeParam;
  for (const auto& c : asof_cases<T>(test_subset() ? 100 : 300, 11)) {
    if (test_subset() && c.what.rfind("pool 0", 0) != 0) continue;
    for (const auto& o : gpu_rules<T>()) {
      const auto want = reference_asof(c, o);
      ASSERT_EQ(gpu_asof(c, o), want) << c.what << ", " << describe(o);
      ASSERT_EQ(cpu_asof(c, o), want) << c.what << ", " << describe(o);
    }
  }
}

TYPED_TEST(GpuAsof, SortTakesAnyOrder) {
  using T = TypeParam;
  for (const auto& c : asof_cases<T>(test_subset() ? 100 : 300, 13)) {
    if (test_subset() && c.what.rfind("pool 0", 0) != 0) continue;
    for (auto o : gpu_rules<T>()) {
      o.sort = true;
      const auto [s, want] = shuffled(c, o, 17);
      ASSERT_EQ(gpu_asof(s, o), want) << c.what << ", " << describe(o);
    }
  }
}

// Many left rows over many blocks, many groups (some absent on the right), long runs: the GPU
// against the CPU (the definition's scans would take n x m). Two group counts: up to 6,144 each
// block keeps a hint per group and runs many tiles of rows (a block's first search of a group
// without one, the later ones galloping from it; the codes skewed, so that some groups recur
// within a tile and others come back hundreds of keys later), past it every row searches alone.
// Without groups, one hint a block.
TYPED_TEST(GpuAsof, ManyGroupsOverManyBlocksEqualTheCpu) {
  using T = TypeParam;
  std::mt19937_64 rng(9);
  const int64_t n = test_subset() ? 400000 : 1000003, m = test_subset() ? 3000 : 100003;
  std::vector<T> pool;
  for (int v = 0; v < 5000; ++v) pool.push_back(T(v * 3));
  for (const int64_t groups : {int64_t{1000}, int64_t{test_subset() ? 6200 : 10007}}) {
    AsofCase<T> c;
    c.left = sorted_draw(pool, n, rng);
    c.right = sorted_draw(pool, m, rng);
    c.grouped = true;
    c.groups = groups;
    for (int64_t i = 0; i < n; ++i) c.left_by.push_back(int64_t(rng() % uint64_t(rng() % 4 ? 5 : groups)));
    for (int64_t j = 0; j < m; ++j) c.right_by.push_back(int64_t(rng() % uint64_t(groups - 7)));  // 7 absent
    for (const auto& o : gpu_rules<T>()) {
      ASSERT_EQ(gpu_asof(c, o), cpu_asof(c, o)) << groups << " groups, " << describe(o);
      if (groups != 1000) continue;
      AsofCase<T> flat = c;  // and without groups
      flat.grouped = false;
      ASSERT_EQ(gpu_asof(flat, o), cpu_asof(flat, o)) << "ungrouped, " << describe(o);
    }
  }
}

TEST(GpuAsofErrors, ChecksOnDeviceMemoryWriteNothing) {
  GSEARCH_GPU_OR_SKIP();
  const std::vector<double> sorted = {1, 2, 3}, unsorted = {2, 1, 3}, nan = {std::nan(""), 1, 2};
  const auto d_sorted = to_device(sorted), d_unsorted = to_device(unsorted), d_nan = to_device(nan);
  const std::vector<int64_t> poison(3, -7), codes = {0, 1, 0}, bad = {0, 1, 5};
  const auto out = to_device(poison), d_codes = to_device(codes), d_bad = to_device(bad);
  const auto error = [&](auto&& f) -> std::string {
    try {
      f();
    } catch (const invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  const auto join = [&](const device_vector<double>& l, const device_vector<double>& r) {
    return error([&] { asof_join(cuda, span<const double>(l), span<const double>(r), span<int64_t>(out)); });
  };
  EXPECT_EQ(join(d_unsorted, d_sorted), "left keys must be sorted");
  EXPECT_EQ(join(d_sorted, d_unsorted), "right keys must be sorted");
  EXPECT_EQ(join(d_sorted, d_nan), "Merge keys contain null values on right side");
  EXPECT_NE(error([&] {
              asof_join(cuda, span<const double>(d_sorted), span<const double>(d_sorted), span<const int64_t>(d_codes),
                        span<const int64_t>(d_bad), 2, span<int64_t>(out));
            }).find("right_by[2] is outside [0, groups = 2)"),
            std::string::npos);
  EXPECT_EQ(from_device(out), poison);
}

}  // namespace
}  // namespace gsearch::test
