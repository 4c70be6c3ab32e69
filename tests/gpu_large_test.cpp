// More than 2^31 queries on the GPU (label `large`: run on the GPU machine only): the grid-stride
// loop's 64-bit indexing and the int32 output path at full size. And more than 2^31 elements of
// unsorted search: find / count / find_all with matches past 2^31 (64-bit indices, int64
// counts), a study strategy, and isin spot checks. And select / median / topk of more than 2^31
// elements (the bucket pass's 64-bit counts and candidate offsets). And the partitioned search
// over 1 GiB of keys (its larger windows).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "search/tuning_partitioned.hpp"
#include "gsearch/gsearch.hpp"
#include "test_util.hpp"

namespace gsearch {
namespace {

TEST(GpuLarge, MoreThan2To31Queries) {
  GSEARCH_GPU_OR_SKIP();
  const int64_t k = 4096, n = (int64_t(1) << 31) + 4099;
  std::vector<int32_t> keys(k);
  for (int64_t i = 0; i < k; ++i) keys[i] = int32_t(2 * i);  // even keys
  std::vector<int32_t> queries(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) queries[j] = int32_t(j % (2 * k + 3)) - 1;  // -1 .. 2k+1
  device_vector<int32_t> d_keys{span<const int32_t>(keys)}, d_queries{span<const int32_t>(queries)};
  device_vector<int32_t> d_out(n);
  for (algorithm a : {algorithm::auto_, algorithm::binary}) {
    upper_bound(cuda, d_keys, d_queries, d_out, {a, false});
    std::vector<int32_t> out(static_cast<size_t>(n));
    d_out.copy_to(span<int32_t>(out));
    int64_t bad = 0, first_bad = -1;
    for (int64_t j = 0; j < n; ++j) {
      const int32_t q = queries[j];
      const int32_t want = q < 0 ? 0 : (q >= 2 * int32_t(k) ? int32_t(k) : q / 2 + 1);
      if (out[j] != want && bad++ == 0) first_bad = j;
    }
    EXPECT_EQ(bad, 0) << to_string(a) << ": first wrong result at query " << first_bad;
  }
}

// The static index past 2^30 int32 keys and past 2^31 int64 keys (16 GB of keys, 20 GB of
// layout): keys[i] = 2i, so upper_bound(q) has a closed form; queries across the whole range and
// past both ends, through the owning index and through search() with algorithm::index.
template <class T>
void check_large_index(int64_t k) {
  std::vector<T> keys(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) keys[size_t(i)] = T(2 * i);
  device_vector<T> d_keys{span<const T>(keys)};
  std::vector<T>().swap(keys);
  const int64_t n = 1 << 20;
  std::vector<T> queries(static_cast<size_t>(n));
  uint64_t x = 12345;
  for (int64_t j = 0; j < n; ++j) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    queries[size_t(j)] = T(int64_t(x >> 20) % (2 * k + 8)) - T(3);  // -3 .. 2k + 4
  }
  queries[0] = T(2 * k - 2);  // the last key
  queries[1] = T(2 * (k - 1) - 1);
  device_vector<T> d_queries{span<const T>(queries)};
  device_vector<int64_t> d_out(n);
  std::vector<int64_t> out(static_cast<size_t>(n));
  const auto check = [&](const char* what) {
    d_out.copy_to(span<int64_t>(out));
    int64_t bad = 0, first_bad = -1;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t q = int64_t(queries[size_t(j)]);
      const int64_t want = q < 0 ? 0 : (q >= 2 * (k - 1) ? k : q / 2 + 1);
      if (out[size_t(j)] != want && bad++ == 0) first_bad = j;
    }
    EXPECT_EQ(bad, 0) << what << " k=" << k << ": first wrong result at query " << first_bad;
  };
  {
    const static_index<T> index(cuda, span<const T>(d_keys));
    index.upper_bound(cuda, span<const T>(d_queries), span<int64_t>(d_out));
    check("static_index");
  }
  upper_bound(cuda, span<const T>(d_keys), span<const T>(d_queries), span<int64_t>(d_out), {algorithm::index, false});
  check("algorithm::index");
}

TEST(GpuLarge, StaticIndexBeyond2To30Keys) {
  GSEARCH_GPU_OR_SKIP();
  check_large_index<int32_t>((int64_t(1) << 30) + 5);
  check_large_index<int64_t>((int64_t(1) << 31) + 3);
}

// The partitioned search where its keys take 1 GiB or more (2^27 + 5 int64 keys), so it runs
// windows of 2^24 queries (tuning_partitioned.hpp's partitioned_config_for): 2^25 + 77 queries,
// two full windows and a short one; keys[i] = 2i, so both bounds have a closed form.
TEST(GpuLarge, PartitionedSearchWithLargeWindows) {
  GSEARCH_GPU_OR_SKIP();
  using T = int64_t;
  const int64_t k = (int64_t(1) << 27) + 5, n = (int64_t(1) << 25) + 77;
  ASSERT_EQ(cuda_backend::partitioned_config_for<8>(k).window, cuda_backend::partitioned_large_window);
  std::vector<T> keys(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) keys[size_t(i)] = T(2 * i);
  device_vector<T> d_keys{span<const T>(keys)};
  std::vector<T>().swap(keys);
  std::vector<T> queries(static_cast<size_t>(n));
  uint64_t x = 777;
  for (int64_t j = 0; j < n; ++j) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    queries[size_t(j)] = T(int64_t(x >> 20) % (2 * k + 8)) - T(3);  // -3 .. 2k + 4
  }
  device_vector<T> d_queries{span<const T>(queries)};
  device_vector<int64_t> d_out(n);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (const side s : {side::left, side::right}) {
    search(cuda, s, span<const T>(d_keys), span<const T>(d_queries), span<int64_t>(d_out), {algorithm::partitioned, false});
    d_out.copy_to(span<int64_t>(out));
    int64_t bad = 0, first_bad = -1;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t q = queries[size_t(j)];
      // lower bound: the first i with 2i >= q; upper bound: the first i with 2i > q.
      const int64_t want = s == side::left ? std::clamp((q + 1) / 2, int64_t{0}, k)
                                           : std::clamp(q < 0 ? int64_t{0} : q / 2 + 1, int64_t{0}, k);
      if (out[size_t(j)] != want && bad++ == 0) first_bad = j;
    }
    EXPECT_EQ(bad, 0) << test::side_name(s) << ": first wrong result at query " << first_bad;
  }
}

TEST(GpuLarge, FindMoreThan2To31Elements) {
  GSEARCH_GPU_OR_SKIP();
  const int64_t n = (int64_t(1) << 31) + 5;                  // 8.6 GB of int32
  const int64_t p1 = (int64_t(1) << 31) + 1, p2 = n - 2;     // the 7s, both past 2^31
  std::vector<int32_t> host(static_cast<size_t>(n), 0);
  host[100] = 9;
  host[size_t(p1)] = 7;
  host[size_t(p2)] = 7;
  host[size_t(n - 1)] = -1;
  device_vector<int32_t> d{span<const int32_t>(host)};
  const span<const int32_t> data = d;
  std::vector<int32_t>().swap(host);  // free the host copy

  EXPECT_EQ(find_first(cuda, data, equal_to(7)), p1);
  EXPECT_EQ(find_first(cuda, data, less(0)), n - 1);
  EXPECT_EQ(find_first(cuda, data, greater(8)), 100);
  EXPECT_EQ(find_first(cuda, data, equal_to(5)), -1);
  const int64_t any = find_any(cuda, data, equal_to(7));
  EXPECT_TRUE(any == p1 || any == p2) << any;
  EXPECT_EQ(count(cuda, data, equal_to(7)), 2);
  EXPECT_EQ(count(cuda, data, not_equal_to(0)), 4);
  EXPECT_EQ(count(cuda, data, equal_to(0)), n - 4);  // more than 2^31: an int64 count
  EXPECT_EQ(count(cuda, data, greater_equal(0)), n - 1);
  EXPECT_EQ(count(cuda, data, in_range(1, 10)), 3);
  for (uint64_t seed : {uint64_t(0), uint64_t(1), uint64_t(2), uint64_t(3)})
    EXPECT_EQ(find_random(cuda, data, equal_to(7), seed), core::random_below(seed, 2) == 0 ? p1 : p2) << seed;
  EXPECT_EQ(find_random(cuda, data, less(0), 5), n - 1);
  {
    device_vector<int64_t> out;
    const int64_t c = find_all(cuda, data, greater(5), [&](int64_t k) {
      out = device_vector<int64_t>(k);
      return out.data();
    });
    ASSERT_EQ(c, 3);
    std::vector<int64_t> got(3);
    out.copy_to(span<int64_t>(got));
    EXPECT_EQ(got, (std::vector<int64_t>{100, p1, p2}));
  }
  // The stream-ordered form into a device result.
  {
    device_vector<int64_t> r(1);
    find(cuda, find_mode::first, data, equal_to(-1), r.view());
    synchronize(cuda);
    int64_t got = 0;
    r.copy_to(span<int64_t>(&got, 1));
    EXPECT_EQ(got, n - 1);
  }
  // A study strategy over more than 2^31 elements (k * threads past 2^31).
  for (find_strategy s : {find_strategy::coalesced, find_strategy::strided}) {
    const find_options opt{s, 12, 0};
    EXPECT_EQ(count(cuda, data, equal_to(7), opt), 2) << to_string(s);
    EXPECT_EQ(find_first(cuda, data, equal_to(7), opt), p1) << to_string(s);
  }
  // isin: the 7s and the -1 (all-ones bits: the hash set's empty marker) among 2^31 + 5 elements.
  const std::vector<int32_t> tests{7, -1, 12345};
  device_vector<int32_t> d_tests{span<const int32_t>(tests)};
  device_vector<bool> d_out(n);
  std::unique_ptr<bool[]> out(new bool[size_t(n)]);
  for (isin_method method : {isin_method::sorted, isin_method::hash}) {
    isin(cuda, data, d_tests, d_out, {false, method});
    synchronize(cuda);
    d_out.copy_to(span<bool>(out.get(), n));
    int64_t members = 0;
    for (int64_t i = 0; i < n; ++i) members += out[size_t(i)];
    EXPECT_EQ(members, 3) << to_string(method);
    EXPECT_TRUE(out[size_t(p1)] && out[size_t(p2)] && out[size_t(n - 1)] && !out[100] && !out[0]) << to_string(method);
  }
}


// select, median and topk of 2^31 + 5 int32: element i is (i * A) mod M, so each value's count is
// known (every full period of M holds each value once; the partial last period, the first r of
// the sequence) and the sorted order is the prefix sums of the counts.
TEST(GpuLarge, SelectMoreThan2To31Elements) {
  GSEARCH_GPU_OR_SKIP();
  const int64_t n = (int64_t(1) << 31) + 5, M = 1000003, A = 7919;  // M prime: i -> i A a bijection
  std::vector<int32_t> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[size_t(i)] = int32_t((i % M) * A % M);
  device_vector<int32_t> d{span<const int32_t>(host)};
  std::vector<int32_t>().swap(host);
  std::vector<int64_t> counts(size_t(M), n / M);
  for (int64_t j = 0; j < n % M; ++j) ++counts[size_t(j * A % M)];
  std::vector<int64_t> before(size_t(M) + 1, 0);  // before[v] = the elements < v
  for (int64_t v = 0; v < M; ++v) before[size_t(v + 1)] = before[size_t(v)] + counts[size_t(v)];
  const auto value_at = [&](int64_t r) {  // sort(data)[r]
    return int32_t(std::upper_bound(before.begin(), before.end(), r) - before.begin() - 1);
  };

  const std::vector<int64_t> ranks = {0, 1, n / 2, (int64_t(1) << 31) + 1, n - 2, n - 1, 123456789};
  device_vector<int32_t> values(int64_t(ranks.size()));
  select(cuda, span<const int32_t>(d), span<const int64_t>(ranks), values.view());
  std::vector<int32_t> got(ranks.size());
  values.copy_to(span<int32_t>(got));
  for (size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(got[i], value_at(ranks[i])) << "rank " << ranks[i];

  device_vector<double> med(1);  // n is odd: the middle element
  median(cuda, span<const int32_t>(d), false, med.view());
  double middle = 0;
  med.copy_to(span<double>(&middle, 1));
  EXPECT_EQ(middle, double(value_at(n / 2)));

  device_vector<int32_t> top(4);
  device_vector<int64_t> top_index(4);
  topk(cuda, span<const int32_t>(d), 1, 4, topk_options{}, top.view(), top_index.view());
  std::vector<int32_t> t(4);
  top.copy_to(span<int32_t>(t));
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(t[size_t(j)], value_at(n - 1 - j)) << "topk " << j;
}
}  // namespace
}  // namespace gsearch
