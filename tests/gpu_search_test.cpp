// The batched search on the GPU (label `gpu`): the CPU test matrix again, through the CUDA
// backend, every result against std::lower_bound / std::upper_bound and equal to the CPU's
// per-lane run; many blocks; streams; the sortedness check; every algorithm under the shared
// memory of smaller GPUs (the testing override); the temporary-memory cap. Skips visibly without
// a GPU.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/launch.hpp"
#include "search/backend.hpp"
#include "gsearch/gsearch.hpp"
#include "rows_cases.hpp"
#include "search_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    GSEARCH_GPU_OR_SKIP();
  }
};

// Output buffers are poisoned first (0x5A bytes: no result has that value): a fresh allocation
// may hold the previous call's results, which a search that wrote nothing would pass with.
template <class Out>
void poison(const device_vector<Out>& d_out) {
  if (d_out.size() > 0) EXPECT_EQ(cudaMemset(d_out.data(), 0x5A, size_t(d_out.size()) * sizeof(Out)), cudaSuccess);
}

template <class T, class Out>
std::vector<int64_t> run_gpu_out(const cuda_t& exec, const std::vector<T>& keys, const std::vector<T>& queries,
                                 side s, algorithm a, bool check) {
  const auto d_keys = to_device(keys);
  const auto d_queries = to_device(queries);
  device_vector<Out> d_out(int64_t(queries.size()));
  poison(d_out);
  search(exec, s, span<const T>(d_keys), span<const T>(d_queries), span<Out>(d_out), {a, check});
  synchronize(exec);
  std::vector<Out> out(queries.size());
  d_out.copy_to(span<Out>(out));
  return {out.begin(), out.end()};
}

template <class T>
std::vector<int64_t> run_gpu(const std::vector<T>& keys, const std::vector<T>& queries, side s, algorithm a,
                             bool out32) {
  return out32 ? run_gpu_out<T, int32_t>(cuda, keys, queries, s, a, true)
               : run_gpu_out<T, int64_t>(cuda, keys, queries, s, a, true);
}

template <class T>
class GpuSearch : public Gpu {};
TYPED_TEST_SUITE(GpuSearch, KeyTypes);

TYPED_TEST(GpuSearch, MatchesStdAlgorithms) {
  using T = TypeParam;
  run_search_matrix<T>(run_gpu<T>, 2048,
                       {algorithm::auto_, algorithm::pbs, algorithm::pbs_cf, algorithm::pbs_cl, algorithm::binary,
                        algorithm::index, algorithm::partitioned, algorithm::pary, algorithm::merge},
                       test_seed());
}

// Many blocks, every SM busy, results equal to the CPU running the same per-lane code.
TYPED_TEST(GpuSearch, ManyBlocksEqualCpu) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const std::vector<int64_t> sizes = test_subset() ? std::vector<int64_t>{4096, 100000}
                                                   : std::vector<int64_t>{1000, 4096, 20000, 100000};
  const int64_t n = (int64_t(1) << (test_subset() ? 16 : 20)) + 17;
  for (int64_t k : sizes) {
    const auto keys = gen::sorted_keys<T>(k, seed + uint64_t(k));
    const auto queries = gen::random_queries_from_keys(keys.data(), k, n, seed);
    // (merge: the answers' way back by windows of positions, after one or two radix passes,
    // for int64 and int32 answers)
    for (algorithm a : {algorithm::pbs, algorithm::pbs_cf, algorithm::pbs_cl, algorithm::binary, algorithm::merge}) {
      for (side s : {side::left, side::pred}) {
        std::vector<int64_t> on_cpu(queries.size());
        search(cpu, s, span<const T>(keys), span<const T>(queries), span<int64_t>(on_cpu), {a, false});
        for (bool out32 : {false, true}) {
          if (out32 && a != algorithm::merge) continue;
          const auto on_gpu = run_gpu<T>(keys, queries, s, a, out32);
          ASSERT_EQ(on_gpu, on_cpu) << "k=" << k << " " << to_string(a) << " side=" << side_name(s) << " out32 " << out32;
        }
        ASSERT_EQ(on_cpu, reference_all(keys, queries, s)) << "k=" << k << " " << to_string(a);
      }
    }
  }
}

template <class T, class Out>
std::vector<int64_t> run_gpu_rows_out(const cuda_t& exec, int64_t rows, const std::vector<T>& keys,
                                      const std::vector<T>& queries, side s, algorithm a, bool check) {
  const auto d_keys = to_device(keys);
  const auto d_queries = to_device(queries);
  device_vector<Out> d_out(int64_t(queries.size()));
  poison(d_out);
  search_rows(exec, s, rows, span<const T>(d_keys), span<const T>(d_queries), span<Out>(d_out), {a, check});
  synchronize(exec);
  std::vector<Out> out(queries.size());
  d_out.copy_to(span<Out>(out));
  return {out.begin(), out.end()};
}

template <class T>
std::vector<int64_t> run_gpu_rows(int64_t rows, const std::vector<T>& keys, const std::vector<T>& queries, side s,
                                  algorithm a, bool out32) {
  return out32 ? run_gpu_rows_out<T, int32_t>(cuda, rows, keys, queries, s, a, true)
               : run_gpu_rows_out<T, int64_t>(cuda, rows, keys, queries, s, a, true);
}

TYPED_TEST(GpuSearch, RowsMatchStdAlgorithmsPerRow) {
  using T = TypeParam;
  run_rows_matrix<T>(run_gpu_rows<T>, test_seed());
}

// The typical shapes (short rows many to a tile, long rows over many tiles), on a stream, equal
// to the CPU backend.
TYPED_TEST(GpuSearch, RowsManyBlocksEqualCpu) {
  using T = TypeParam;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const std::vector<RowsShape> shapes = test_subset() ? std::vector<RowsShape>{{2000, 64, 128}, {3, 16384, 5000}}
                                                      : std::vector<RowsShape>{{20000, 64, 128}, {500, 1024, 2048},
                                                                               {40, 16384, 32768}, {64, 128, 32768}};
  for (const RowsShape& shape : shapes) {
    const auto [keys, queries] = rows_inputs<T>(shape, test_seed());
    for (algorithm a : {algorithm::auto_, algorithm::binary}) {
      std::vector<int64_t> on_cpu(queries.size());
      search_rows(cpu, side::right, shape.rows, span<const T>(keys), span<const T>(queries), span<int64_t>(on_cpu));
      const auto on_gpu = run_gpu_rows_out<T, int32_t>(cuda.on(stream), shape.rows, keys, queries, side::right, a, false);
      ASSERT_EQ(on_gpu, on_cpu) << "rows=" << shape.rows << " k=" << shape.k << " m=" << shape.m << " " << to_string(a);
    }
  }
  cudaStreamDestroy(stream);
}

TEST_F(Gpu, RowsCheckSortedPerRow) {
  const std::vector<float> keys{1, 2, 3, 0, 1, 2};
  const std::vector<float> queries{2, 2, 2, 2};
  const auto d_keys = to_device(keys);
  EXPECT_TRUE(is_sorted_rows(cuda, 2, span<const float>(d_keys)));
  EXPECT_FALSE(is_sorted_rows(cuda, 1, span<const float>(d_keys)));
  const auto run = [&](int64_t rows, const std::vector<float>& q) {
    return run_gpu_rows_out<float, int64_t>(cuda, rows, keys, q, side::left, algorithm::auto_, true);
  };
  EXPECT_EQ(run(2, queries), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_THROW(run(1, std::vector<float>{2, 2}), invalid_argument);
}

// The order check (one early-exit kernel for is_sorted, check_sorted and queries_order::detect):
// one pair out of order at either side of the kernel's tiles of 2,048 pairs, first, last, in
// the last partial tile; rows that are each sorted but start below the row before (the pairs
// between rows are not compared) and one pair out of order inside such a row.
TEST_F(Gpu, OrderCheckFindsEveryPairOutOfOrder) {
  const int64_t n = 3 * 2048 * 132 * 4 + 777;  // more tiles than the grid: blocks take several
  std::vector<int32_t> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[size_t(i)] = int32_t(i / 3);
  EXPECT_TRUE(is_sorted(cuda, span<const int32_t>(to_device(keys))));
  for (const int64_t at : std::vector<int64_t>{1, 2047, 2048, 2049, 4096, 2048 * 528 + 5, n - 700, n - 1}) {
    std::vector<int32_t> bad = keys;
    bad[size_t(at)] = bad[size_t(at - 1)] - 1;
    EXPECT_FALSE(is_sorted(cuda, span<const int32_t>(to_device(bad)))) << "pair at " << at;
  }
  const int64_t rows = 1000, k = 1237;  // rows straddle the tiles
  std::vector<int32_t> sawtooth(size_t(rows * k));
  for (int64_t i = 0; i < rows * k; ++i) sawtooth[size_t(i)] = int32_t(i % k);
  const auto d_saw = to_device(sawtooth);
  EXPECT_TRUE(is_sorted_rows(cuda, rows, span<const int32_t>(d_saw)));
  EXPECT_FALSE(is_sorted(cuda, span<const int32_t>(d_saw)));
  sawtooth[size_t(500 * k + 600)] = -1;
  EXPECT_FALSE(is_sorted_rows(cuda, rows, span<const int32_t>(to_device(sawtooth))));
}

TEST_F(Gpu, RunsOnAStream) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const auto keys = gen::sorted_keys<int32_t>(3000, 5);
  const auto queries = gen::worst_case_queries(keys.data(), 3000, 100000, 6);
  const auto got = run_gpu_out<int32_t, int32_t>(cuda.on(stream), keys, queries, side::right, algorithm::auto_, false);
  EXPECT_EQ(got, reference_all(keys, queries, side::right));
  cudaStreamDestroy(stream);
}

TEST_F(Gpu, CheckSortedThrowsAndWritesNothing) {
  const std::vector<double> keys{1.0, std::numeric_limits<double>::quiet_NaN(), 2.0};
  const std::vector<double> queries{1.5, 2.5};
  device_vector<double> d_keys{span<const double>(keys)}, d_queries{span<const double>(queries)};
  const std::vector<int64_t> poison{-7, -7};
  device_vector<int64_t> d_out{span<const int64_t>(poison)};
  EXPECT_FALSE(is_sorted(cuda, span<const double>(d_keys)));
  EXPECT_THROW(upper_bound(cuda, d_keys, d_queries, d_out, {algorithm::auto_, true}), invalid_argument);
  std::vector<int64_t> out(2);
  d_out.copy_to(span<int64_t>(out));
  EXPECT_EQ(out, poison);
  const std::vector<double> sorted{-0.0, 0.0, std::numeric_limits<double>::quiet_NaN()};
  device_vector<double> d_sorted{span<const double>(sorted)};
  EXPECT_TRUE(is_sorted(cuda, span<const double>(d_sorted)));
}

// Every algorithm, the row-batched search and auto under the shared memory of smaller GPUs (the
// testing override: an A100's 163 KB, an Ada card's 99 KB, any device's 48 KB), with key lists on
// both sides of each limit: what is staged in shared memory follows the limit, the results never
// change (a kernel asking for more than the limit throws, naming it).
TYPED_TEST(GpuSearch, ForcedSmallerSharedMemoryMatchesStd) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  for (int64_t limit : {int64_t(166912), int64_t(101376), int64_t(49152)}) {
    const int64_t before = cuda_backend::shared_limit_override();
    cuda_backend::set_shared_limit_override(limit);
    const int64_t at_limit = limit / int64_t(sizeof(T)) - 2 * warp_width;  // the most keys staged
    for (int64_t k : {at_limit / 2 - 1, at_limit, at_limit + 1, 2 * at_limit + 7}) {
      if (test_subset() && (k == at_limit / 2 - 1 || k == 2 * at_limit + 7)) continue;  // (compute-sanitizer)
      const auto keys = gen::sorted_keys<T>(k, seed + uint64_t(k));
      const auto queries = gen::random_queries_from_keys(keys.data(), k, test_subset() ? 3000 : 50000, seed);
      for (side s : {side::left, side::right, side::pred}) {
        if (test_subset() && s == side::pred) continue;
        const auto want = reference_all(keys, queries, s);
        for (algorithm a : {algorithm::auto_, algorithm::pbs, algorithm::pbs_cf, algorithm::pbs_cl, algorithm::binary,
                            algorithm::index, algorithm::partitioned, algorithm::pary, algorithm::merge}) {
          ASSERT_EQ((run_gpu_out<T, int64_t>(cuda, keys, queries, s, a, false)), want)
              << to_string(a) << " k=" << k << " at " << limit / 1024 << " KB, side " << side_name(s);
        }
      }
      // Rows of k keys (one per tile at most), 4 rows.
      const RowsShape shape{4, k, 700};
      const auto [rkeys, rqueries] = rows_inputs<T>(shape, seed);
      for (algorithm a : {algorithm::auto_, algorithm::pbs_cl}) {
        ASSERT_EQ((run_gpu_rows_out<T, int64_t>(cuda, shape.rows, rkeys, rqueries, side::right, a, false)),
                  rows_reference(shape, rkeys, rqueries, side::right))
            << "rows, " << to_string(a) << " k=" << k << " at " << limit / 1024 << " KB";
      }
    }
    cuda_backend::set_shared_limit_override(before);
  }
}

// The temporary-memory cap on the GPU's auto and explicit algorithms (gpu_partitioned_test.cu's
// GpuTempCap checks the pool itself): what auto takes, and the error of an explicit index.
TEST_F(Gpu, TempCapChangesAutoNotResults) {
  const int64_t k = int64_t(1) << 20, q = int64_t(1) << 19;  // auto: the index (Q >= K/2)
  ASSERT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, k, q), algorithm::index);
  const int64_t need = search_temp_bytes(cuda, algorithm::index, 4, k, q);
  EXPECT_GE(need, k * 4);
  EXPECT_EQ(search_temp_bytes(cuda, algorithm::auto_, 4, k, q), need);
  for (algorithm a : {algorithm::binary, algorithm::pbs, algorithm::pbs_cl, algorithm::pary})
    EXPECT_EQ(search_temp_bytes(cuda, a, 4, k, q), 0) << to_string(a);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, k, q, need), algorithm::index);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, k, q, need - 1), algorithm::binary);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, k, q, 0), algorithm::binary);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, 1024, q, 0), algorithm::pbs_cl);  // in shared memory
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, k, 5, 0), algorithm::pary);
  const uint64_t seed = test_seed();
  const auto keys = gen::sorted_keys<float>(k, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), k, test_subset() ? 1 << 14 : q, seed + 1);
  const auto want = reference_all(keys, queries, side::left);
  const auto d_keys = to_device(keys);
  const auto d_queries = to_device(queries);
  device_vector<int32_t> d_out(int64_t(queries.size()));
  for (int64_t cap : {unlimited_temp_bytes, need, need - 1, int64_t{0}}) {
    for (algorithm a : {algorithm::auto_, algorithm::pbs_cl, algorithm::binary}) {
      poison(d_out);
      search_options o{a};
      o.max_temp_bytes = cap;
      lower_bound(cuda, span<const float>(d_keys), span<const float>(d_queries), span<int32_t>(d_out), o);
      std::vector<int32_t> got(queries.size());
      d_out.copy_to(span<int32_t>(got));
      EXPECT_EQ(std::vector<int64_t>(got.begin(), got.end()), want) << to_string(a) << " cap " << cap;
    }
  }
  search_options o{algorithm::index};
  o.max_temp_bytes = need - 1;
  try {
    lower_bound(cuda, span<const float>(d_keys), span<const float>(d_queries), span<int32_t>(d_out), o);
    ADD_FAILURE() << "an index over the cap did not throw";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_temp_bytes = " + std::to_string(need - 1)), std::string::npos)
        << e.what();
  }
}

// queries_order::detect where the sorted search pays (keys beyond shared memory, 2^20 queries):
// the order is checked on the device and both searches are enqueued, each gated on the answer.
// Sorted queries, and unsorted ones whose only pair out of order is first, last or in the middle
// (the check must find it wherever it is), all equal, and shuffled, for every algorithm the
// gated search can run, every side, and equal_range; under a cap the sorted search does not fit
// (detect off) the results are the same.
TYPED_TEST(GpuSearch, DetectedQueryOrderMatchesStd) {
  using T = TypeParam;
  const int64_t k = int64_t(1) << 20, q = int64_t(1) << 20;
  ASSERT_TRUE(cuda_backend::sorted_search_pays(int(sizeof(T)), k, q));
  const uint64_t seed = test_seed();
  const auto keys = gen::sorted_keys<T>(k, seed);
  auto sorted = gen::random_queries_from_keys(keys.data(), k, q, seed + 1);
  std::sort(sorted.begin(), sorted.end(), [](T a, T b) { return key_less(a, b); });
  std::vector<std::pair<std::string, std::vector<T>>> inputs;
  inputs.emplace_back("sorted", sorted);
  for (int64_t at : {int64_t{0}, q / 2 + 7, q - 2}) {  // one pair out of order: at, at + 1
    auto v = sorted;
    v[size_t(at)] = keys.back();
    v[size_t(at + 1)] = keys.front();
    inputs.emplace_back("one pair out of order at " + std::to_string(at), v);
  }
  inputs.emplace_back("all equal", std::vector<T>(size_t(q), keys[size_t(k / 3)]));
  auto shuffled = sorted;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(seed + 2));
  inputs.emplace_back("shuffled", shuffled);
  const auto d_keys = to_device(keys);
  device_vector<int64_t> d_out(q), d_upper(q);
  const auto to_host = [](const device_vector<int64_t>& d) {
    std::vector<int64_t> h(size_t(d.size()));
    d.copy_to(span<int64_t>(h));
    return h;
  };
  const algorithm algos[] = {algorithm::auto_, algorithm::binary, algorithm::index, algorithm::partitioned,
                             algorithm::pbs_cl};
  for (const auto& [what, queries] : inputs) {
    const auto d_queries = to_device(queries);
    for (side s : {side::left, side::right, side::pred}) {
      const auto want = reference_all(keys, queries, s);
      for (algorithm a : algos) {
        for (int64_t cap : {unlimited_temp_bytes, int64_t{0}}) {
          if (cap == 0 && a != algorithm::auto_) continue;
          poison(d_out);
          search_options o{a};
          o.queries_sorted = queries_order::detect;
          o.max_temp_bytes = cap;
          search(cuda, s, span<const T>(d_keys), span<const T>(d_queries), span<int64_t>(d_out), o);
          const auto got = to_host(d_out);
          ASSERT_EQ(got, want) << what << " side=" << side_name(s) << " algo=" << to_string(a) << " cap=" << cap;
        }
      }
    }
    search_options o;
    o.queries_sorted = queries_order::detect;
    poison(d_out);
    poison(d_upper);
    equal_range(cuda, span<const T>(d_keys), span<const T>(d_queries), span<int64_t>(d_out), span<int64_t>(d_upper), o);
    ASSERT_EQ(to_host(d_out), reference_all(keys, queries, side::left)) << what << " equal_range lower";
    ASSERT_EQ(to_host(d_upper), reference_all(keys, queries, side::right)) << what << " equal_range upper";
  }
}

TEST_F(Gpu, AutoPicksSharedMemoryThenGlobal) {
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, 1024), algorithm::pbs_cl);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 24), algorithm::partitioned);  // q unknown: k
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 24, 1), algorithm::pary);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 24, 32), algorithm::pary);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, 4096, 1), algorithm::pbs_cl);  // shared memory first
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 24, 1000), algorithm::binary);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 20, 1 << 17), algorithm::binary);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 20, 1 << 19), algorithm::index);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 27, 1 << 22), algorithm::binary);
  // The partitioned search for many queries (tuning.hpp, partitioned_auto_rules).
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 27, 1 << 23), algorithm::partitioned);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 20, 1 << 23), algorithm::partitioned);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 8, int64_t(1) << 20, 1 << 23), algorithm::index);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 8, int64_t(1) << 24, 1 << 20), algorithm::partitioned);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 21, 1 << 21), algorithm::index);  // too few
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 26, 1 << 20), algorithm::binary);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::pbs, 4, int64_t(1) << 24), algorithm::pbs);
  // The search by sorting the queries for many queries in the largest key lists (merge_auto_rules),
  // integer keys only.
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 27, 1 << 24), algorithm::merge);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 27), algorithm::merge);  // q unknown: k
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 27, 1 << 24, unlimited_temp_bytes, true),
            algorithm::partitioned);  // float keys
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 26, 1 << 26), algorithm::merge);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 26, 1 << 25), algorithm::partitioned);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 8, int64_t(1) << 27, 1 << 26), algorithm::merge);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 8, int64_t(1) << 27, 1 << 24), algorithm::partitioned);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 8, int64_t(1) << 26, 1 << 27), algorithm::merge);
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 8, int64_t(1) << 24, 1 << 26), algorithm::partitioned);
  // over the temporary-memory cap: the next choice
  EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, int64_t(1) << 27, 1 << 24, int64_t(1) << 20),
            algorithm::binary);
}

}  // namespace
}  // namespace gsearch::test
