// The public batched-search API on the CPU backend: every key type, size and adversarial input
// against std::lower_bound / std::upper_bound, for the CPU fast path and for the GPU's per-lane
// algorithms run warp by warp; and the API's argument checks.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "search/cpu_partitioned.hpp"
#include "gsearch/gsearch.hpp"
#include "rows_cases.hpp"
#include "search_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T>
std::vector<int64_t> run_cpu(const std::vector<T>& keys, const std::vector<T>& queries, side s,
                             algorithm a, bool out32) {
  const search_options opt{a, /*check_sorted=*/true};
  if (out32) {
    std::vector<int32_t> out(queries.size(), -7);
    search(cpu, s, span<const T>(keys), span<const T>(queries), span<int32_t>(out), opt);
    return {out.begin(), out.end()};
  }
  std::vector<int64_t> out(queries.size(), -7);
  search(cpu, s, span<const T>(keys), span<const T>(queries), span<int64_t>(out), opt);
  return out;
}

template <class T>
class CpuSearch : public ::testing::Test {};
TYPED_TEST_SUITE(CpuSearch, KeyTypes);

TYPED_TEST(CpuSearch, MatchesStdAlgorithms) {
  using T = TypeParam;
  run_search_matrix<T>(run_cpu<T>, 300,
                       {algorithm::auto_, algorithm::binary, algorithm::index, algorithm::partitioned, algorithm::pary, algorithm::pbs,
                        algorithm::pbs_cf, algorithm::pbs_cl, algorithm::merge},
                       test_seed());
}

// The partitioned search with small buckets, where the library's (256 KB of keys each) would
// leave these key lists in one: one key per bucket, a few keys per bucket in windows of 97
// queries, and buckets grown past max_buckets = 7.
TYPED_TEST(CpuSearch, PartitionedSmallBucketsMatchStd) {
  using T = TypeParam;
  constexpr int64_t key = sizeof(T);
  for (const core::partition_config cfg : {core::partition_config{key, 1 << 20, 1 << 20, 0},
                                           core::partition_config{5 * key, 1 << 20, 97, 0},
                                           core::partition_config{3 * key, 7, 1000, 0}}) {
    const Runner<T> run = [&](const std::vector<T>& keys, const std::vector<T>& queries, side s, algorithm,
                              bool out32) {
      std::vector<int64_t> out(queries.size(), -7);
      const auto k = int64_t(keys.size()), n = int64_t(queries.size());
      if (out32) {
        std::vector<int32_t> o(queries.size(), -7);
        cpu_backend::partitioned_search(0, s, keys.data(), k, queries.data(), n, o.data(), cfg);
        out.assign(o.begin(), o.end());
      } else {
        cpu_backend::partitioned_search(0, s, keys.data(), k, queries.data(), n, out.data(), cfg);
      }
      return out;
    };
    run_search_matrix<T>(run, 300, {algorithm::partitioned}, test_seed());
  }
}

// Many queries over all threads, warps split across chunk boundaries.
TYPED_TEST(CpuSearch, ManyQueriesAllThreads) {
  using T = TypeParam;
  const auto keys = gen::sorted_keys<T>(5000, 1);
  const auto queries = gen::random_queries_from_keys(keys.data(), 5000, 100003, 2);
  for (algorithm a : {algorithm::auto_, algorithm::pbs_cl}) {
    for (int threads : {0, 1, 3}) {
      std::vector<int64_t> out(queries.size());
      lower_bound(cpu.with_threads(threads), span<const T>(keys), span<const T>(queries), span<int64_t>(out),
                  {a, false});
      EXPECT_EQ(out, reference_all(keys, queries, side::left)) << to_string(a) << " threads=" << threads;
    }
  }
}

template <class T>
std::vector<int64_t> run_cpu_rows(int64_t rows, const std::vector<T>& keys, const std::vector<T>& queries,
                                  side s, algorithm a, bool out32) {
  const search_options opt{a, /*check_sorted=*/true};
  if (out32) {
    std::vector<int32_t> out(queries.size(), -7);
    search_rows(cpu, s, rows, span<const T>(keys), span<const T>(queries), span<int32_t>(out), opt);
    return {out.begin(), out.end()};
  }
  std::vector<int64_t> out(queries.size(), -7);
  search_rows(cpu, s, rows, span<const T>(keys), span<const T>(queries), span<int64_t>(out), opt);
  return out;
}

TYPED_TEST(CpuSearch, RowsMatchStdAlgorithmsPerRow) {
  using T = TypeParam;
  run_rows_matrix<T>(run_cpu_rows<T>, test_seed());
}

// Rows split across the threads' chunks (chunks end mid-row), and one thread.
TYPED_TEST(CpuSearch, RowsAllThreads) {
  using T = TypeParam;
  const RowsShape shape{300, 64, 129};
  const auto [keys, queries] = rows_inputs<T>(shape, 7);
  const auto want = rows_reference(shape, keys, queries, side::right);
  for (algorithm a : {algorithm::auto_, algorithm::pbs_cl}) {
    for (int threads : {0, 1, 3}) {
      std::vector<int64_t> out(queries.size());
      search_rows(cpu.with_threads(threads), side::right, shape.rows, span<const T>(keys), span<const T>(queries),
                  span<int64_t>(out), {a, false});
      EXPECT_EQ(out, want) << to_string(a) << " threads=" << threads;
    }
  }
}

TEST(CpuSearchApi, RowsRejectBadShapesAndUnsortedRows) {
  const std::vector<int32_t> keys{1, 2, 3, 0, 1, 2};  // two sorted rows; unsorted as one list
  const std::vector<int32_t> queries{2, 2, 2, 2};
  std::vector<int64_t> out(4, -7);
  const search_options checked{algorithm::auto_, true};
  EXPECT_TRUE(is_sorted_rows(cpu, 2, span<const int32_t>(keys)));
  EXPECT_FALSE(is_sorted_rows(cpu, 1, span<const int32_t>(keys)));
  search_rows(cpu, side::left, 2, span<const int32_t>(keys), span<const int32_t>(queries), span<int64_t>(out), checked);
  EXPECT_EQ(out, (std::vector<int64_t>{1, 1, 2, 2}));
  std::fill(out.begin(), out.end(), -7);
  const auto rows = [&](int64_t r, int64_t nk, int64_t nq, int64_t no, const search_options& o = {}) {
    search_rows(cpu, side::left, r, span<const int32_t>(keys.data(), nk), span<const int32_t>(queries.data(), nq),
                span<int64_t>(out.data(), no), o);
  };
  EXPECT_THROW(rows(1, 6, 4, 4, checked), invalid_argument);  // one unsorted row
  EXPECT_THROW(rows(4, 6, 4, 4), invalid_argument);           // 6 keys do not split into 4 rows
  EXPECT_THROW(rows(3, 6, 4, 4), invalid_argument);           // 4 queries do not
  EXPECT_THROW(rows(2, 6, 4, 3), invalid_argument);           // output size
  EXPECT_THROW(rows(-1, 6, 4, 4), invalid_argument);
  EXPECT_THROW(rows(0, 6, 0, 0), invalid_argument);  // 0 rows with keys
  EXPECT_EQ(out, (std::vector<int64_t>{-7, -7, -7, -7}));  // nothing written by any of them
  rows(0, 0, 0, 0);                                         // 0 rows, nothing: fine
  EXPECT_THROW(search_rows(cpu, side::left, 1, span<const int32_t>(nullptr, 3), span<const int32_t>(queries),
                           span<int64_t>(out)),
               invalid_argument);
}

TEST(CpuSearchApi, NamedFunctionsAndContainers) {
  const std::vector<double> keys{-1.0, 0.0, 0.0, 2.5, std::numeric_limits<double>::quiet_NaN()};
  const std::vector<double> queries{-0.0, 2.5, std::numeric_limits<double>::quiet_NaN(), -5.0};
  std::vector<int64_t> out(queries.size());
  lower_bound(cpu, keys, queries, out);
  EXPECT_EQ(out, (std::vector<int64_t>{1, 3, 4, 0}));
  upper_bound(cpu, keys, queries, out);
  EXPECT_EQ(out, (std::vector<int64_t>{3, 4, 5, 0}));
  predecessor(cpu, keys, queries, out);
  EXPECT_EQ(out, (std::vector<int64_t>{2, 3, 4, -1}));
}

TEST(CpuSearchApi, ResolveAlgorithm) {
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::auto_, 4, 1000), algorithm::binary);
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::auto_, 4, int64_t(1) << 20), algorithm::index);  // q unknown: many
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::auto_, 4, int64_t(1) << 20, 1 << 18), algorithm::index);
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::auto_, 4, int64_t(1) << 20, 1000), algorithm::binary);
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::auto_, 8, int64_t(1) << 24, 1 << 18), algorithm::index);
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::pbs_cf, 8, 1000), algorithm::pbs_cf);
}

TEST(CpuSearchApi, EmptyInputs) {
  const std::vector<int32_t> none;
  const std::vector<int32_t> queries{1, 2, 3};
  std::vector<int64_t> out(3, 99);
  upper_bound(cpu, none, queries, out);
  EXPECT_EQ(out, (std::vector<int64_t>{0, 0, 0}));
  predecessor(cpu, none, queries, out);
  EXPECT_EQ(out, (std::vector<int64_t>{-1, -1, -1}));
  std::vector<int64_t> no_out;
  EXPECT_NO_THROW(upper_bound(cpu, queries, none, no_out));
}

TEST(CpuSearchApi, RejectsBadArguments) {
  const std::vector<int32_t> keys{1, 2, 3};
  const std::vector<int32_t> queries{1, 2};
  std::vector<int64_t> short_out(1);
  EXPECT_THROW(upper_bound(cpu, keys, queries, short_out), invalid_argument);
  std::vector<int64_t> out(2);
  EXPECT_THROW(upper_bound(cpu, span<const int32_t>(nullptr, 3), queries, out), invalid_argument);
  // int32 output with more keys than int32 can count: rejected before any key is read.
  std::vector<int32_t> out32(2);
  EXPECT_THROW(upper_bound(cpu, span<const int32_t>(keys.data(), int64_t{1} << 31), queries, out32),
               invalid_argument);
  try {
    upper_bound(cpu, keys, queries, short_out);
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("2 queries but 1 output"), std::string::npos) << e.what();
  }
}

TEST(CpuSearchApi, CheckSortedThrowsAndWritesNothing) {
  const std::vector<float> unsorted{1.f, 3.f, 2.f};
  const std::vector<float> queries{2.f, 5.f};
  std::vector<int64_t> out{-7, -7};
  EXPECT_THROW(upper_bound(cpu, unsorted, queries, out, {algorithm::auto_, true}), invalid_argument);
  EXPECT_EQ(out, (std::vector<int64_t>{-7, -7}));
  const std::vector<float> nan_first{std::numeric_limits<float>::quiet_NaN(), 1.f};
  EXPECT_FALSE(is_sorted(cpu, span<const float>(nan_first)));
  const std::vector<float> zeros{0.f, -0.f, 0.f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_TRUE(is_sorted(cpu, span<const float>(zeros)));
}

// --- search_options::max_temp_bytes ---------------------------------------------------------

// The largest single operator new while tracking is on: the CPU's temporary buffers (the
// partitioned search's window, the padded copies) are vectors; the index's layout is
// aligned_alloc'd and shows in resolve_algorithm instead.
std::atomic<bool> track_new{false};
std::atomic<size_t> largest_new{0};

struct TrackNew {
  TrackNew() {
    largest_new = 0;
    track_new = true;
  }
  ~TrackNew() { track_new = false; }
};

template <class T, class Out = int64_t>
std::vector<int64_t> search_capped(side s, const std::vector<T>& keys, const std::vector<T>& queries, algorithm a,
                                   int64_t cap, bool sorted_queries = false) {
  std::vector<Out> out(queries.size(), Out(-7));
  search_options o{a, false, sorted_queries};
  o.max_temp_bytes = cap;
  {
    const TrackNew track;  // the search only
    search(cpu, s, span<const T>(keys), span<const T>(queries), span<Out>(out), o);
  }
  return {out.begin(), out.end()};
}

// The cap changes what auto picks, and how pbs / pbs_cf / pbs_cl read the keys, never a result;
// 0 allocates nothing; an explicit index, partitioned or merge over the cap throws, writing nothing.
TEST(CpuSearchApi, TempCapChangesAutoNotResults) {
  const uint64_t seed = test_seed();
  const int64_t k = int64_t(1) << 17, q = k;  // auto: the index (from 2^16 keys with Q >= K/4)
  const auto keys = gen::sorted_keys<int32_t>(k, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), k, q, seed + 1);
  ASSERT_EQ(resolve_algorithm(cpu, algorithm::auto_, 4, k, q), algorithm::index);
  const int64_t index_bytes = search_temp_bytes(cpu, algorithm::index, 4, k, q);
  EXPECT_GE(index_bytes, k * 4);
  EXPECT_EQ(search_temp_bytes(cpu, algorithm::auto_, 4, k, q), index_bytes);
  EXPECT_EQ(search_temp_bytes(cpu, algorithm::binary, 4, k, q), 0);
  EXPECT_EQ(search_temp_bytes(cpu, algorithm::pary, 4, k, q), 0);
  EXPECT_EQ(search_temp_bytes(cpu, algorithm::pbs_cl, 4, k, q), (k + 64) * 4);
  EXPECT_GT(search_temp_bytes(cpu, algorithm::partitioned, 4, k, q), q * 16);  // a window: 16 bytes a query
  EXPECT_EQ(search_temp_bytes(cpu, algorithm::index, 4, k, 0), 0);             // no queries, no index
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::auto_, 4, k, q, index_bytes), algorithm::index);
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::auto_, 4, k, q, index_bytes - 1), algorithm::binary);
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::auto_, 4, k, q, 0), algorithm::binary);
  EXPECT_EQ(resolve_algorithm(cpu, algorithm::index, 4, k, q, 0), algorithm::index);  // explicit: kept (search throws)

  (void)search_capped(side::left, keys, queries, algorithm::pbs_cl, unlimited_temp_bytes);  // the pool started
  for (side s : {side::left, side::right, side::pred}) {
    const auto want = reference_all(keys, queries, s);
    for (int64_t cap : {unlimited_temp_bytes, index_bytes, index_bytes - 1, int64_t{0}}) {
      for (algorithm a : {algorithm::auto_, algorithm::binary, algorithm::pary, algorithm::pbs, algorithm::pbs_cf,
                          algorithm::pbs_cl}) {
        const std::vector<int64_t> got = search_capped(s, keys, queries, a, cap);
        EXPECT_EQ(got, want) << to_string(a) << " cap=" << cap << " side=" << side_name(s);
        if (cap == 0) {
          EXPECT_LT(largest_new.load(), size_t{4096}) << to_string(a) << ": allocated under a cap of 0";
        }
      }
      EXPECT_EQ((search_capped<int32_t, int32_t>(s, keys, queries, algorithm::auto_, cap)), want) << "int32 out";
    }
    for (algorithm a : {algorithm::index, algorithm::partitioned, algorithm::merge}) {
      const int64_t need = search_temp_bytes(cpu, a, 4, k, q);
      EXPECT_EQ(search_capped(s, keys, queries, a, need), want) << to_string(a) << " at its own size";
      std::vector<int64_t> out(queries.size(), -7);
      search_options o{a};
      o.max_temp_bytes = 0;
      try {
        search(cpu, s, span<const int32_t>(keys), span<const int32_t>(queries), span<int64_t>(out), o);
        ADD_FAILURE() << to_string(a) << " with max_temp_bytes 0 did not throw";
      } catch (const invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("max_temp_bytes = 0"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(std::to_string(need)), std::string::npos) << e.what();
      }
      EXPECT_EQ(out, std::vector<int64_t>(queries.size(), -7)) << to_string(a) << ": wrote under a failed cap";
      o.max_temp_bytes = need - 1;
      EXPECT_THROW(search(cpu, s, span<const int32_t>(keys), span<const int32_t>(queries), span<int64_t>(out), o),
                   invalid_argument);
    }
  }
  // Sorted queries (Merge Path, no temporary memory on the CPU), equal_range and search_rows.
  auto sorted_q = queries;
  sort_keys(sorted_q);
  EXPECT_EQ(search_capped(side::right, keys, sorted_q, algorithm::auto_, 0, true),
            reference_all(keys, sorted_q, side::right));
  std::vector<int64_t> lo(q), hi(q);
  search_options none;
  none.max_temp_bytes = 0;
  equal_range(cpu, span<const int32_t>(keys), span<const int32_t>(queries), span<int64_t>(lo), span<int64_t>(hi), none);
  EXPECT_EQ(lo, reference_all(keys, queries, side::left));
  EXPECT_EQ(hi, reference_all(keys, queries, side::right));
  const RowsShape shape{64, 2000, 300};
  const auto [rkeys, rqueries] = rows_inputs<int32_t>(shape, seed);
  for (algorithm a : {algorithm::auto_, algorithm::pbs_cl, algorithm::index}) {
    std::vector<int64_t> out(rqueries.size());
    search_options o{a};
    o.max_temp_bytes = 0;
    {
      const TrackNew track;
      search_rows(cpu, side::right, shape.rows, span<const int32_t>(rkeys), span<const int32_t>(rqueries),
                  span<int64_t>(out), o);
    }
    EXPECT_EQ(out, rows_reference(shape, rkeys, rqueries, side::right)) << to_string(a);
    EXPECT_LT(largest_new.load(), size_t{4096}) << to_string(a) << ": search_rows allocated under a cap of 0";
  }
  // A negative cap is an argument error, on every entry point.
  search_options bad;
  bad.max_temp_bytes = -1;
  std::vector<int64_t> out(queries.size());
  EXPECT_THROW(search(cpu, side::left, span<const int32_t>(keys), span<const int32_t>(queries), span<int64_t>(out), bad),
               invalid_argument);
  EXPECT_THROW(search_rows(cpu, side::left, 1, span<const int32_t>(keys), span<const int32_t>(queries),
                           span<int64_t>(out), bad),
               invalid_argument);
}

// 8-byte keys: the index's layout and the partitioned window follow the key size.
TEST(CpuSearchApi, TempBytesFollowKeySize) {
  const int64_t k = int64_t(1) << 20, q = int64_t(1) << 22;
  EXPECT_GT(search_temp_bytes(cpu, algorithm::index, 8, k, q), search_temp_bytes(cpu, algorithm::index, 4, k, q));
  // The partitioned window: 2^22 queries of 12 + key-size bytes, whatever the query count beyond.
  const int64_t p4 = search_temp_bytes(cpu, algorithm::partitioned, 4, k, q);
  const int64_t p8 = search_temp_bytes(cpu, algorithm::partitioned, 8, k, q);
  EXPECT_GE(p4, q * 16);
  EXPECT_GE(p8, q * 20);
  EXPECT_EQ(search_temp_bytes(cpu, algorithm::partitioned, 4, k, 4 * q), p4);
}

// queries_order: detect never takes the sorted search on the CPU (nothing to gain) and answers as
// any order does; sorted and any answer as std:: does, sorted queries or not (detect must not
// trust a look it did not take).
TEST(CpuSearchApi, QueriesOrderDetectAnswersAsPlain) {
  std::vector<int32_t> keys(5000), sorted_q(20000), shuffled_q(20000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = int32_t(i / 3 * 2);
  for (size_t i = 0; i < sorted_q.size(); ++i) sorted_q[i] = int32_t(i / 2) - 7;
  for (size_t i = 0; i < shuffled_q.size(); ++i) shuffled_q[i] = sorted_q[(i * 7919) % sorted_q.size()];
  for (const auto* q : {&sorted_q, &shuffled_q})
    for (side s : all_sides)
      for (queries_order order : {queries_order::any, queries_order::detect}) {
        search_options o;
        o.queries_sorted = order;
        std::vector<int64_t> out(q->size(), -9);
        search(cpu, s, span<const int32_t>(keys), span<const int32_t>(*q), span<int64_t>(out), o);
        for (size_t j = 0; j < q->size(); ++j) {
          const auto lo = std::lower_bound(keys.begin(), keys.end(), (*q)[j]) - keys.begin();
          const auto hi = std::upper_bound(keys.begin(), keys.end(), (*q)[j]) - keys.begin();
          const int64_t want = s == side::left ? lo : s == side::right ? hi : hi - 1;
          ASSERT_EQ(out[j], want) << "side " << to_string(s) << ", query " << j;
        }
      }
  search_options conversion;
  conversion.queries_sorted = true;  // the bool form still reads as before
  EXPECT_EQ(conversion.queries_sorted, queries_order::sorted);
}

// rank_outside: a query below / above every key, on each side (0 / k, the predecessor one less),
// as std::lower_bound / upper_bound give for a value beyond the keys.
TEST(CpuSearchApi, RankOutside) {
  const std::vector<int64_t> keys{1, 2, 2, 5};
  const int64_t k = int64_t(keys.size());
  EXPECT_EQ(rank_outside(side::left, k, false), std::lower_bound(keys.begin(), keys.end(), 0) - keys.begin());
  EXPECT_EQ(rank_outside(side::right, k, false), std::upper_bound(keys.begin(), keys.end(), 0) - keys.begin());
  EXPECT_EQ(rank_outside(side::pred, k, false), -1);
  EXPECT_EQ(rank_outside(side::left, k, true), std::lower_bound(keys.begin(), keys.end(), 9) - keys.begin());
  EXPECT_EQ(rank_outside(side::right, k, true), std::upper_bound(keys.begin(), keys.end(), 9) - keys.begin());
  EXPECT_EQ(rank_outside(side::pred, k, true), k - 1);
}

TEST(CpuSearchApi, CudaTagWithoutDeviceFailsClearly) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present; see the gpu tests";
  const std::vector<int32_t> keys{1, 2, 3};
  std::vector<int64_t> out(3);
  EXPECT_THROW(upper_bound(gsearch::cuda, keys, keys, out), error);
}

}  // namespace
}  // namespace gsearch::test

// The replaceable global allocation functions, counting the largest allocation while
// gsearch::test::track_new is on (TempCapChangesAutoNotResults). The array, nothrow and sized
// forms of libstdc++ call these two. (GCC's -Wmismatched-new-delete takes the free below for a
// mismatch wherever it inlines a std::allocator pair: both halves are replaced here.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (gsearch::test::track_new.load(std::memory_order_relaxed)) {
    size_t seen = gsearch::test::largest_new.load(std::memory_order_relaxed);
    while (n > seen && !gsearch::test::largest_new.compare_exchange_weak(seen, n)) {
    }
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// The nothrow form too: under AddressSanitizer, whose runtime replaces each form itself, a
// nothrow new left to it (std::stable_sort's temporary buffer) would be freed by the free below.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
