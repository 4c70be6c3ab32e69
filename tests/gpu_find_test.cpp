// The unsorted search on the GPU (label `gpu`): every mode, predicate and key type through the CUDA
// backend, each result equal to the CPU backend's (which find_test.cpp checks against a plain
// loop) and checked against a plain loop here where that is cheap: find_first, count, find_random
// for the same seed, find_all, isin for every method, every study strategy; find_any returns a
// match. Sizes up to many blocks ((1 << 24) + 3), data pointers off the 16-byte alignment of the
// vector loads (data + 1, data + 3), the stream-ordered find into a device result; isin under the
// shared memory of smaller GPUs; find from many short-lived threads (no device word leaked per
// thread). Skips visibly without a GPU.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda/launch.hpp"
#include "gsearch/gsearch.hpp"
#include "find_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

constexpr find_op kOps[] = {find_op::eq, find_op::ne, find_op::lt, find_op::le,
                            find_op::gt, find_op::ge, find_op::in_range};
constexpr find_strategy kStudyStrategies[] = {find_strategy::strided, find_strategy::coalesced,
                                              find_strategy::unrolled, find_strategy::one_per_thread};
constexpr isin_method kIsinMethods[] = {isin_method::auto_, isin_method::sorted, isin_method::hash};

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    GSEARCH_GPU_OR_SKIP();
  }
};

// --- the plain loop ------------------------------------------------------------------------------

template <class T>
std::string describe(const predicate<T>& p) {
  std::ostringstream s;
  s << to_string(p.op) << "(" << p.value;
  if (p.op == find_op::in_range) s << ", " << p.hi;
  s << ")";
  return s.str();
}

// --- device copies, `offset` elements past the allocation's (256-byte aligned) start -----------

template <class T>
struct DeviceArray {
  device_vector<T> buf;
  int64_t offset = 0, n = 0;
  T* data() const { return n == 0 && !buf.data() ? nullptr : buf.data() + offset; }
  span<const T> view() const { return {data(), n}; }
  span<T> mutable_view() const { return {data(), n}; }
};

template <class T>
DeviceArray<T> device_copy(const T* host, int64_t n, int64_t offset) {
  DeviceArray<T> d;
  d.offset = offset;
  d.n = n;
  if (n == 0 && offset == 0) return d;  // a null pointer with size 0
  d.buf = device_vector<T>(n + offset + 4);
  if (n > 0) copy_to_device(d.buf.data() + offset, host, size_t(n) * sizeof(T));
  return d;
}
template <class T>
DeviceArray<T> device_copy(const std::vector<T>& host, int64_t offset) {
  return device_copy(host.data(), int64_t(host.size()), offset);
}

template <class T>
std::vector<T> to_host(const T* device, int64_t n) {
  std::vector<T> h(static_cast<size_t>(n));
  if (n > 0) copy_to_host(h.data(), device, size_t(n) * sizeof(T));
  return h;
}

/// A host bool buffer (std::vector<bool> has no data()).
struct Mask {
  explicit Mask(int64_t n) : n(n), p(new bool[size_t(std::max<int64_t>(n, 1))]()) {}
  span<bool> view() const { return {p.get(), n}; }
  bool operator[](int64_t i) const { return p[size_t(i)]; }
  int64_t n;
  std::unique_ptr<bool[]> p;
};

// --- every mode on the GPU against the CPU ----------------------------------------------------

template <class T>
int64_t gpu_find_all(const cuda_t& exec, span<const T> d, const predicate<T>& p, std::vector<int64_t>& out) {
  device_vector<int64_t> d_out;
  int calls = 0;
  int64_t asked = -1;
  const int64_t c = find_all(exec, d, p, [&](int64_t k) {
    ++calls;
    asked = k;
    d_out = device_vector<int64_t>(k);
    return d_out.data();
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(asked, c);
  out = to_host(d_out.data(), c);
  return c;
}

/// The CPU's results for (data, p), checked here against the plain loop's first and count.
struct CpuResults {
  int64_t first, count;
  std::vector<int64_t> all;
};

template <class T>
CpuResults cpu_results(const std::vector<T>& data, const predicate<T>& p) {
  const span<const T> h(data);
  CpuResults r;
  r.first = find_first(cpu, h, p);
  r.count = gsearch::count(cpu, h, p);
  find_all(cpu, h, p, [&](int64_t k) {
    r.all.assign(size_t(k), -7);
    return r.all.data();
  });
  int64_t first = -1, count = 0;
  for (size_t i = 0; i < data.size(); ++i)
    if (plain_match(p, data[i])) {
      if (first < 0) first = int64_t(i);
      ++count;
    }
  EXPECT_EQ(r.first, first) << "the CPU backend differs from the plain loop";
  EXPECT_EQ(r.count, count) << "the CPU backend differs from the plain loop";
  return r;
}

constexpr uint64_t kSeeds[] = {0, 77, 0xfedcba9876543210ull};

template <class T>
void check_gpu_modes(const cuda_t& exec, const std::vector<T>& data, const predicate<T>& p, int64_t offset,
                     const std::string& what) {
  const int64_t n = int64_t(data.size());
  const auto ctx = [&] {
    return what + " n=" + std::to_string(n) + " offset=" + std::to_string(offset) + " pred=" + describe(p);
  };
  const CpuResults want = cpu_results(data, p);
  ASSERT_FALSE(::testing::Test::HasFailure()) << ctx();
  const DeviceArray<T> dev = device_copy(data, offset);
  const span<const T> d = dev.view();

  ASSERT_EQ(find_first(exec, d, p), want.first) << ctx();
  ASSERT_EQ(gsearch::count(exec, d, p), want.count) << ctx();
  const int64_t any = find_any(exec, d, p);
  if (want.count == 0) {
    ASSERT_EQ(any, -1) << ctx();
  } else {
    ASSERT_TRUE(any >= 0 && any < n) << ctx() << " any=" << any;
    ASSERT_TRUE(plain_match(p, data[size_t(any)])) << ctx() << " any=" << any << " is no match";
  }
  for (uint64_t seed : kSeeds) {
    if (test_subset() && seed != 77) continue;  // compute-sanitizer: one seed
    const int64_t expect = want.count ? want.all[size_t(core::random_below(seed, want.count))] : -1;
    ASSERT_EQ(find_random(cpu, span<const T>(data), p, seed), expect) << ctx() << " (CPU) seed=" << seed;
    ASSERT_EQ(find_random(exec, d, p, seed), expect) << ctx() << " seed=" << seed;
  }
  std::vector<int64_t> all;
  ASSERT_EQ(gpu_find_all(exec, d, p, all), want.count) << ctx();
  ASSERT_EQ(all, want.all) << ctx();
  // The stream-ordered form: the result in device memory, read after a synchronize.
  device_vector<int64_t> r(1);
  for (find_mode mode : {find_mode::first, find_mode::any, find_mode::random, find_mode::count}) {
    if (test_subset() && (mode == find_mode::any || mode == find_mode::random)) continue;
    const std::vector<int64_t> poison{-7};
    copy_to_device(r.data(), poison.data(), sizeof(int64_t));
    find_options opt;
    opt.seed = 77;
    find(exec, mode, d, p, r.view(), opt);
    synchronize(exec);
    const int64_t got = to_host(r.data(), 1)[0];
    switch (mode) {
      case find_mode::first: ASSERT_EQ(got, want.first) << ctx() << " device result"; break;
      case find_mode::count: ASSERT_EQ(got, want.count) << ctx() << " device result"; break;
      case find_mode::random:
        ASSERT_EQ(got, want.count ? want.all[size_t(core::random_below(77, want.count))] : -1) << ctx();
        break;
      case find_mode::any:
        if (want.count == 0) ASSERT_EQ(got, -1) << ctx();
        else ASSERT_TRUE(got >= 0 && got < n && plain_match(p, data[size_t(got)])) << ctx() << " any=" << got;
        break;
    }
  }
}

// --- inputs: find_cases.hpp ---


template <class T>
class GpuFind : public Gpu {};
TYPED_TEST_SUITE(GpuFind, KeyTypes);

// Every op and pattern on the small sizes (each at offsets 0, 1 and 3 in turn); a few patterns,
// each with another op, on many blocks.
TYPED_TEST(GpuFind, AllModesEqualCpu) {
  using T = TypeParam;
  const std::vector<int64_t> small = test_subset()
      ? std::vector<int64_t>{0, 33, 4097}
      : std::vector<int64_t>{0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 8193};
  int rotate = 0;
  for (int64_t n : small)
    for (Pattern pat : kPatterns)
      for (find_op op : kOps) {
        // The subset (compute-sanitizer): one op per pattern, every other pattern.
        if (test_subset() && (op != kOps[rotate % 7] || int(pat) % 2)) continue;
        const OpCase<T> c = op_case<T>(op);
        const int64_t offset = std::vector<int64_t>{0, 1, 3}[size_t(rotate++ % 3)];
        ASSERT_NO_FATAL_FAILURE(check_gpu_modes(cuda, make_data(c, hits(pat, n, uint64_t(n) + 1)), c.pred, offset,
                                                std::string("pattern=") + name(pat)));
      }
  const std::vector<int64_t> big = test_subset()
      ? std::vector<int64_t>{(int64_t(1) << 20) + 1}
      : std::vector<int64_t>{3 * 4096 + 5, 65535, 65537, (int64_t(1) << 20) + 1, (int64_t(1) << 24) + 3};
  for (int64_t n : big)
    for (Pattern pat : {Pattern::none, Pattern::first, Pattern::last, Pattern::middle, Pattern::late,
                        Pattern::random_10, Pattern::block_ends}) {
      const OpCase<T> c = op_case<T>(kOps[rotate % 7]);
      const int64_t offset = std::vector<int64_t>{0, 1, 3}[size_t(rotate++ % 3)];
      ASSERT_NO_FATAL_FAILURE(check_gpu_modes(cuda, make_data(c, hits(pat, n, uint64_t(n) + 2)), c.pred, offset,
                                              std::string("pattern=") + name(pat)));
    }
}

// Random data with duplicates and edge values (NaN, +-inf, -0.0, the integer extremes), predicates
// with values from the data and the edges.
TYPED_TEST(GpuFind, RandomDataEqualCpu) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const auto edges = edge_values<T>();
  for (int64_t n : {int64_t(1), int64_t(33), int64_t(4097), int64_t(100003), (int64_t(1) << 20) + 7}) {
    if (test_subset() && (n == 33 || n == 100003)) continue;
    std::vector<T> data(static_cast<size_t>(n));
    for (auto& x : data) x = rng() % 4 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, 50);
    const auto pick = [&]() -> T {
      switch (rng() % 3) {
        case 0: return data[rng() % data.size()];
        case 1: return edges[rng() % edges.size()];
        default: return small_value<T>(rng, 60);
      }
    };
    for (int q = 0; q < (test_subset() ? 7 : 21); ++q) {
      const T v = pick(), hi = pick();
      ASSERT_NO_FATAL_FAILURE(check_gpu_modes(cuda, data, predicate<T>{kOps[q % 7], v, hi}, int64_t(q % 4),
                                              "random"));
    }
  }
}

TYPED_TEST(GpuFind, SpecialValuesEqualCpu) {
  using T = TypeParam;
  std::vector<T> specials = edge_values<T>();
  if constexpr (std::is_floating_point_v<T>) specials.push_back(-std::numeric_limits<T>::quiet_NaN());
  std::mt19937_64 rng(4321);
  for (int64_t n : {int64_t(5), int64_t(4097), (int64_t(1) << 16) + 3}) {
    if (test_subset() && n == 4097) continue;
    std::vector<T> data(static_cast<size_t>(n));
    for (auto& x : data) x = specials[rng() % specials.size()];
    std::vector<T> all_nan_or_max(static_cast<size_t>(n), specials[specials.size() > 6 ? 6 : 1]);  // NaN / max
    for (find_op op : kOps)
      for (T v : specials) {
        if (test_subset() && rng() % 6) continue;
        const T hi = specials[rng() % specials.size()];
        ASSERT_NO_FATAL_FAILURE(check_gpu_modes(cuda, data, predicate<T>{op, v, hi}, 1, "specials"));
        ASSERT_NO_FATAL_FAILURE(check_gpu_modes(cuda, all_nan_or_max, predicate<T>{op, v, hi}, 3, "uniform"));
      }
  }
}

// Each find on another stream: results equal to the default stream's.
TYPED_TEST(GpuFind, OnAStream) {
  using T = TypeParam;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const int64_t n = (int64_t(1) << 20) + 3;
  for (Pattern pat : {Pattern::none, Pattern::late, Pattern::random_10}) {
    const OpCase<T> c = op_case<T>(find_op::eq);
    ASSERT_NO_FATAL_FAILURE(check_gpu_modes(cuda.on(stream), make_data(c, hits(pat, n, 3)), c.pred, 1,
                                            std::string("stream pattern=") + name(pat)));
  }
  cudaStreamDestroy(stream);
}

// find_random over many seeds, one multi-block input: every draw equal to the CPU's.
TYPED_TEST(GpuFind, RandomEqualsCpuOverSeeds) {
  using T = TypeParam;
  const int64_t n = 5 * 4096 + 77;
  const OpCase<T> c = op_case<T>(find_op::ge);
  const auto data = make_data(c, hits(Pattern::random_10, n, 8));
  const auto dev = device_copy(data, 0);
  for (uint64_t seed = 0; seed < (test_subset() ? 20u : 300u); ++seed)
    ASSERT_EQ(find_random(cuda, dev.view(), c.pred, seed * 1000003),
              find_random(cpu, span<const T>(data), c.pred, seed * 1000003))
        << "seed=" << seed * 1000003;
}

// --- the study strategies -------------------------------------------------------------------------

TYPED_TEST(GpuFind, StudyStrategiesEqualCpu) {
  using T = TypeParam;
  int rotate = 0;
  const std::vector<int64_t> sizes = test_subset()
      ? std::vector<int64_t>{1, 4097, 500000}
      : std::vector<int64_t>{1, 2, 13, 4097, 3 * 4096 + 5, 500000, (int64_t(1) << 22) + 3};
  for (int64_t n : sizes)
    for (Pattern pat : {Pattern::none, Pattern::first, Pattern::last, Pattern::middle, Pattern::every_7th}) {
      const OpCase<T> c = op_case<T>(kOps[rotate++ % 7]);
      const auto data = make_data(c, hits(pat, n, uint64_t(n)));
      const int64_t offset = rotate % 3;
      const auto dev = device_copy(data, offset);
      const CpuResults want = cpu_results(data, c.pred);
      for (find_strategy s : kStudyStrategies)
        for (int64_t k : {0, 1, 3, 12, 64}) {
          if (s == find_strategy::one_per_thread && k != 0) continue;
          if (test_subset() && (k == 1 || k == 12)) continue;
          const find_options opt{s, k, 0};
          const auto ctx = [&] {
            return std::string(to_string(s)) + " k=" + std::to_string(k) + " n=" + std::to_string(n) +
                   " pattern=" + name(pat) + " pred=" + describe(c.pred);
          };
          ASSERT_EQ(find_first(cuda, dev.view(), c.pred, opt), want.first) << ctx();
          ASSERT_EQ(gsearch::count(cuda, dev.view(), c.pred, opt), want.count) << ctx();
          const int64_t any = find_any(cuda, dev.view(), c.pred, opt);
          if (want.count == 0) ASSERT_EQ(any, -1) << ctx();
          else ASSERT_TRUE(std::binary_search(want.all.begin(), want.all.end(), any)) << ctx() << " any=" << any;
        }
    }
}

// --- find_all and the argument checks ------------------------------------------------------------

TEST_F(Gpu, FindAllIntoDeviceSpan) {
  const int64_t n = 3 * 4096 + 5;
  std::vector<float> data(static_cast<size_t>(n), 1.0f);
  for (int64_t i = 3; i < n; i += 5) data[size_t(i)] = -0.0f;
  const auto dev = device_copy(data, 1);
  const int64_t c = (n - 3 + 4) / 5;
  std::vector<int64_t> want;
  for (int64_t i = 3; i < n; i += 5) want.push_back(i);
  for (int64_t size : {int64_t(0), int64_t(1), c - 1}) {  // too small: throws, writes nothing
    const std::vector<int64_t> poison(size_t(size) + 2, -7);
    device_vector<int64_t> out{span<const int64_t>(poison)};
    EXPECT_THROW(find_all(cuda, dev.view(), equal_to(0.0f), span<int64_t>(out.data(), size)), invalid_argument);
    EXPECT_EQ(to_host(out.data(), size + 2), poison) << "written though too small: " << size;
  }
  const std::vector<int64_t> poison(size_t(c) + 3, -7);
  device_vector<int64_t> out{span<const int64_t>(poison)};
  EXPECT_EQ(find_all(cuda, dev.view(), equal_to(0.0f), span<int64_t>(out.data(), c + 3)), c);
  const auto got = to_host(out.data(), c + 3);
  EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin()));
  EXPECT_EQ(std::count(got.begin() + c, got.end(), -7), 3);
  // No match: once, with 0.
  int calls = 0;
  EXPECT_EQ(find_all(cuda, dev.view(), equal_to(2.0f), [&](int64_t k) -> int64_t* {
              ++calls;
              EXPECT_EQ(k, 0);
              return nullptr;
            }),
            0);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(find_all(cuda, dev.view(), equal_to(2.0f), span<int64_t>()), 0);
}

TEST_F(Gpu, ArgumentErrors) {
  const std::vector<int32_t> data{1, 2, 3};
  const auto dev = device_copy(data, 0);
  const span<const int32_t> null5(nullptr, 5);
  EXPECT_THROW(find_first(cuda, null5, equal_to(1)), invalid_argument);
  EXPECT_THROW(gsearch::count(cuda, null5, equal_to(1)), invalid_argument);
  EXPECT_THROW(find_all(cuda, null5, equal_to(1), span<int64_t>()), invalid_argument);
  EXPECT_EQ(find_first(cuda, span<const int32_t>(), equal_to(1)), -1);
  EXPECT_EQ(gsearch::count(cuda, span<const int32_t>(), equal_to(1)), 0);
  EXPECT_EQ(find_random(cuda, span<const int32_t>(), equal_to(1), 4), -1);
  device_vector<int64_t> r(2);
  EXPECT_THROW(find(cuda, find_mode::first, dev.view(), equal_to(2), r.view()), invalid_argument);
  EXPECT_THROW(find(cuda, find_mode::first, dev.view(), equal_to(2), span<int64_t>(r.data(), 0)), invalid_argument);
  EXPECT_THROW(find(cuda, find_mode::random, dev.view(), equal_to(2), find_options{find_strategy::coalesced, 3, 0}),
               invalid_argument);
  EXPECT_THROW(find(cuda, find_mode::first, dev.view(), equal_to(2), find_options{find_strategy::auto_, -1, 0}),
               invalid_argument);
  device_vector<bool> out(2);
  EXPECT_THROW(isin(cuda, dev.view(), dev.view(), out.view()), invalid_argument);
  EXPECT_THROW(isin(cuda, span<const int32_t>(nullptr, 2), dev.view(), out.view()), invalid_argument);
  EXPECT_NO_THROW(isin(cuda, span<const int32_t>(), dev.view(), span<bool>()));
}

// --- isin -------------------------------------------------------------------------------------------

template <class T>
void check_gpu_isin(const cuda_t& exec, const std::vector<T>& elements, const std::vector<T>& tests, int64_t offset,
                    const std::string& what) {
  const int64_t n = int64_t(elements.size()), m = int64_t(tests.size());
  const auto d_elements = device_copy(elements, offset);
  const auto d_tests = device_copy(tests, (offset + 1) % 4);
  device_vector<bool> d_out(n + offset + 1);
  for (bool invert : {false, true}) {
    Mask want(n);
    isin(cpu, span<const T>(elements), span<const T>(tests), want.view(), {invert, isin_method::sorted});
    for (isin_method method : kIsinMethods) {
      // Poison the output with the opposite of the expected mask: every element must be written.
      Mask poison(n);
      for (int64_t i = 0; i < n; ++i) poison.p[size_t(i)] = !want[i];
      if (n > 0) copy_to_device(d_out.data() + offset, poison.p.get(), size_t(n));
      isin(exec, d_elements.view(), d_tests.view(), span<bool>(n ? d_out.data() + offset : nullptr, n), {invert, method});
      synchronize(exec);
      Mask got(n);
      if (n > 0) copy_to_host(got.p.get(), d_out.data() + offset, size_t(n));
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(got[i], want[i]) << what << " method=" << to_string(method) << (invert ? " invert" : "")
                                   << " n=" << n << " m=" << m << " offset=" << offset << " at " << i
                                   << " element=" << elements[size_t(i)];
    }
  }
}

TYPED_TEST(GpuFind, IsinEqualsCpu) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  auto edges = edge_values<T>();
  if constexpr (std::is_signed_v<T> && !std::is_floating_point_v<T>) edges.push_back(T(-1));  // all ones
  const std::vector<int64_t> ms = test_subset()
      ? std::vector<int64_t>{0, 17, 1 << 16}
      : std::vector<int64_t>{0, 1, 2, 17, 255, 1000, 4096, 4097, 20000, 1 << 16, 1 << 18};
  const std::vector<int64_t> ns = test_subset() ? std::vector<int64_t>{4097, 100003}
                                                : std::vector<int64_t>{0, 1, 33, 4097, 100003, (1 << 20) + 5};
  int rotate = 0;
  for (int64_t m : ms)
    for (int64_t n : ns) {
      const int range = int(std::min<int64_t>(3 * m + 10, 1 << 22));
      std::vector<T> tests(static_cast<size_t>(m));
      for (auto& t : tests) t = rng() % 8 == 0 ? edges[rng() % edges.size()] : small_value<T>(rng, range);
      std::vector<T> elements(static_cast<size_t>(n));
      for (auto& x : elements) {
        const uint64_t r = rng() % 8;
        x = r < 4 && m > 0 ? tests[rng() % tests.size()] : r == 4 ? edges[rng() % edges.size()] : small_value<T>(rng, range);
      }
      ASSERT_NO_FATAL_FAILURE(check_gpu_isin(cuda, elements, tests, int64_t(rotate++ % 4), "random"));
    }
}

TYPED_TEST(GpuFind, IsinSpecialValuesEqualCpu) {
  using T = TypeParam;
  auto edges = edge_values<T>();
  if constexpr (std::is_signed_v<T> && !std::is_floating_point_v<T>) edges.push_back(T(-1));
  if constexpr (std::is_floating_point_v<T>) edges.push_back(-std::numeric_limits<T>::quiet_NaN());
  std::vector<T> elements;
  for (int rep = 0; rep < 400; ++rep) elements.insert(elements.end(), edges.begin(), edges.end());
  for (size_t a = 0; a < edges.size(); ++a)
    for (size_t len : {size_t(1), size_t(2), edges.size()}) {
      if (test_subset() && (a > 1 || len == 2)) continue;
      std::vector<T> tests;
      for (size_t j = 0; j < len; ++j) tests.push_back(edges[(a + j) % edges.size()]);
      ASSERT_NO_FATAL_FAILURE(check_gpu_isin(cuda, elements, tests, int64_t(a % 4), "edges"));
    }
  // Explicitly: NaN never a member, -0.0 and 0.0 members of each other, the max / all-ones keys.
  for (isin_method method : kIsinMethods) {
    const T mx = std::numeric_limits<T>::max();
    const std::vector<T> els{T(0), mx, T(5), mx, T(7)};
    const auto d_els = device_copy(els, 0);
    const auto d_tests = device_copy(std::vector<T>{T(5), mx}, 0);
    device_vector<bool> d_out(5);
    isin(cuda, d_els.view(), d_tests.view(), d_out.view(), {false, method});
    Mask got(5);
    copy_to_host(got.p.get(), d_out.data(), 5);
    EXPECT_TRUE(!got[0] && got[1] && got[2] && got[3] && !got[4]) << to_string(method);
    if constexpr (std::is_floating_point_v<T>) {
      const T nan = std::numeric_limits<T>::quiet_NaN();
      const std::vector<T> fl{nan, T(-0.0), T(0), T(1), nan};
      const auto d_fl = device_copy(fl, 0);
      const auto d_ft = device_copy(std::vector<T>{nan, T(-0.0)}, 0);
      isin(cuda, d_fl.view(), d_ft.view(), d_out.view(), {false, method});
      copy_to_host(got.p.get(), d_out.data(), 5);
      EXPECT_TRUE(!got[0] && got[1] && got[2] && !got[3] && !got[4]) << to_string(method) << " NaN / -0.0";
    }
  }
}

// isin's staged tests under the shared memory of smaller GPUs (the testing override): 30,000
// int32 tests (120 KB, two copies 240 KB) are staged in one copy at 163 KB and not at 99 or 48 KB;
// every method gives the CPU's mask.
TEST_F(Gpu, IsinUnderSmallerSharedMemory) {
  std::mt19937_64 rng(11);
  std::vector<int32_t> tests(30000), elements((1 << 18) + 3);
  for (auto& t : tests) t = int32_t(rng() % 100000);
  for (auto& x : elements) x = int32_t(rng() % 200000);
  for (int64_t limit : {int64_t(166912), int64_t(101376), int64_t(49152)}) {
    const int64_t before = cuda_backend::shared_limit_override();
    cuda_backend::set_shared_limit_override(limit);
    EXPECT_NO_FATAL_FAILURE(check_gpu_isin(cuda, elements, tests, 0, std::to_string(limit / 1024) + " KB"));
    cuda_backend::set_shared_limit_override(before);
  }
}

// find's value forms wait for their answer through a device word (src/find/cuda/find.cu). It was one
// word per host thread, cudaMalloc'd and never freed: a leak per thread that ever called find.
// Now the words are reused from a free list: many short-lived threads, a few at a time, make no
// more words than ran at once, and the device's free memory does not shrink.
TEST_F(Gpu, FindFromManyShortLivedThreadsDoesNotLeak) {
  std::vector<int32_t> data(4096, 0);
  data[1234] = 7;
  const auto d = device_copy(data, 0);
  ASSERT_EQ(find_first(cuda, d.view(), equal_to(7)), 1234);  // the context and a first word
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  const int64_t words_before = cuda_backend::host_wait_words();
  constexpr int at_once = 16;
  const int rounds = test_subset() ? 16 : 1024;  // 16,384 threads (the word count is the exact check)
  std::atomic<int> wrong{0};
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::thread> threads;
    for (int t = 0; t < at_once; ++t)
      threads.emplace_back([&] {
        try {
          if (find_first(cuda, d.view(), equal_to(7)) != 1234 || gsearch::count(cuda, d.view(), equal_to(7)) != 1) ++wrong;
        } catch (...) {
          ++wrong;
        }
      });
    for (auto& th : threads) th.join();
  }
  EXPECT_EQ(wrong.load(), 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_LE(cuda_backend::host_wait_words() - words_before, at_once) << "words made for " << rounds * at_once << " threads";
  // The device's free memory, too, except in the sanitizers' runs (GSEARCH_TEST_SUBSET): there
  // compute-sanitizer's own memory per host thread counts (767 MB for 256 threads under memcheck
  // on an H200, bench/results/h200/issue40/logs_01b2711.tar.xz), and the word count is the check.
  const int64_t lost = int64_t(free_before) - int64_t(free_after);
  if (!test_subset())
    EXPECT_LT(lost, int64_t(4) << 20) << "device memory lost to " << rounds * at_once << " threads: " << lost << " bytes";
}

TEST_F(Gpu, IsinOnAStream) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  std::mt19937_64 rng(9);
  std::vector<int64_t> tests(3000), elements((1 << 20) + 3);
  for (auto& t : tests) t = int64_t(rng() % 10000);
  for (auto& x : elements) x = int64_t(rng() % 20000);
  ASSERT_NO_FATAL_FAILURE(check_gpu_isin(cuda.on(stream), elements, tests, 1, "stream"));
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace gsearch::test
