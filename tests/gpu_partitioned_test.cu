// The partitioned search on the GPU (label `gpu`): partition_kernel.cuh's pipeline with small
// buckets, windows and pieces, where the library's configuration (192 KB of keys a bucket) would
// leave the matrix's key lists in one bucket: one key per bucket; a few keys per bucket in
// windows of 97 queries, pieces of 50; buckets grown past max_buckets into global memory.
// search_cases.hpp's matrix, each result against std::lower_bound / std::upper_bound, and the
// CPU's partitioned search. Under the shared memory of smaller GPUs (163, 99 and 48 KB forced by
// the testing override): the library's configuration through search() with partitioned and auto,
// and many small buckets. The temporary-memory cap (search_options::max_temp_bytes) against the
// pool's high-water mark. Skips visibly without a GPU (PartitionFit's arithmetic runs anyway).

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "search/cpu_partitioned.hpp"
#include "search/cuda/partition_kernel.cuh"
#include "cuda/launch.hpp"
#include "cuda/stream_buffer.cuh"
#include "gsearch/gsearch.hpp"
#include "search_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

template <class T>
class GpuPartitioned : public ::testing::Test {
 protected:
  void SetUp() override {
    GSEARCH_GPU_OR_SKIP();
  }
};
TYPED_TEST_SUITE(GpuPartitioned, KeyTypes);

template <class T, class Out>
std::vector<int64_t> run_partitioned(const std::vector<T>& keys, const std::vector<T>& queries, side s,
                                     const core::partition_config& cfg) {
  const auto d_keys = to_device(keys);
  const auto d_queries = to_device(queries);
  device_vector<Out> out(int64_t(queries.size()));
  // Poisoned (0x5A bytes: no rank has that value): the allocator may hand back the previous run's
  // buffer with its results, which a pipeline that wrote nothing would leave in place.
  if (!queries.empty()) EXPECT_EQ(cudaMemset(out.data(), 0x5A, queries.size() * sizeof(Out)), cudaSuccess);
  const auto dev = cuda_backend::current_device_limits();
  const int offset = s == side::pred ? -1 : 0;
  const auto k = int64_t(keys.size()), n = int64_t(queries.size());
  if (s == side::left) {
    cuda_backend::launch_partitioned<true>(nullptr, offset, d_keys.data(), k, d_queries.data(), n, out.data(), dev, cfg);
  } else {
    cuda_backend::launch_partitioned<false>(nullptr, offset, d_keys.data(), k, d_queries.data(), n, out.data(), dev,
                                            cfg);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<Out> host(queries.size());
  out.copy_to(span<Out>(host));
  return {host.begin(), host.end()};
}

// The key counts of SmallBucketsMatchStdAndCpu's matrix: the whole sweep, or under test_subset()
// (compute-sanitizer: 360 pipelines took 331 s of memcheck for int32 in bd04340's logs) the counts
// that reach each configuration's path: one key per bucket (chunk = one key, 16,384 buckets at
// most): no keys, one key (one bucket), 4,097 buckets staged, and the shared-memory maximum + 1
// (over 58,000 buckets: grown past max_buckets, chunks of several keys); five keys a bucket in
// windows of 97 queries and pieces of 50: 1,024 keys (205 buckets, 22 windows, pieces cut inside
// windows); three keys a bucket, at most 7 buckets: 4,097 keys (chunks grown from 3 keys to 586).
// Each with both key sets and query sets run_search_matrix keeps under the subset.
template <class T>
std::vector<int64_t> subset_key_counts(const core::partition_config& cfg) {
  const auto all = key_count_sweep<T>();
  if (!test_subset()) return all;
  if (cfg.max_buckets == 7) return {4097};
  if (cfg.chunk_bytes == 5 * int64_t(sizeof(T))) return {1024};
  return {0, 1, 4097, all.back()};
}

TYPED_TEST(GpuPartitioned, SmallBucketsMatchStdAndCpu) {
  using T = TypeParam;
  constexpr int64_t key = sizeof(T);
  for (const core::partition_config cfg : {core::partition_config{key, 1 << 14, 1 << 20, 4096},
                                           core::partition_config{5 * key, 1 << 14, 97, 50},
                                           core::partition_config{3 * key, 7, 1000, 333}}) {
    const Runner<T> run = [&](const std::vector<T>& keys, const std::vector<T>& queries, side s, algorithm,
                              bool out32) {
      auto got = out32 ? run_partitioned<T, int32_t>(keys, queries, s, cfg) : run_partitioned<T, int64_t>(keys, queries, s, cfg);
      std::vector<int64_t> on_cpu(queries.size());
      cpu_backend::partitioned_search(0, s, keys.data(), int64_t(keys.size()), queries.data(), int64_t(queries.size()),
                                      on_cpu.data(), cfg);
      EXPECT_EQ(got, on_cpu) << "GPU and CPU partitioned search differ, k=" << keys.size();
      return got;
    };
    run_search_matrix<T>(run, 2048, {algorithm::partitioned}, test_seed(), subset_key_counts<T>(cfg));
  }
}

// One small pipeline, all sides: 10,007 keys in buckets of 64 (157 buckets, every one staged),
// windows of 5,000 queries, pieces of 700; few enough launches for compute-sanitizer's racecheck
// (gpu_checks.sh runs it with GTEST_FILTER=*OneSmallPipeline*).
TYPED_TEST(GpuPartitioned, OneSmallPipelineMatchesStd) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const auto keys = gen::sorted_keys<T>(10007, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), int64_t(keys.size()), 12345, seed + 1);
  const core::partition_config cfg{64 * int64_t(sizeof(T)), 1 << 14, 5000, 700};
  for (side s : {side::left, side::right, side::pred}) {
    ASSERT_EQ((run_partitioned<T, int32_t>(keys, queries, s, cfg)), reference_all(keys, queries, s)) << "side " << int(s);
  }
}

// Buckets too large for shared memory (max_buckets 3 over 2^20 keys: 349,526 keys a bucket),
// searched in global memory; many blocks, every SM busy.
TYPED_TEST(GpuPartitioned, GlobalBucketsManyQueries) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const int64_t k = int64_t(1) << 20, n = (int64_t(1) << (test_subset() ? 16 : 21)) + 17;
  const auto keys = gen::sorted_keys<T>(k, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), k, n, seed + 1);
  for (side s : {side::left, side::right, side::pred}) {
    const auto got = run_partitioned<T, int64_t>(keys, queries, s, core::partition_config{1024, 3, 1 << 20, 32768});
    ASSERT_EQ(got, reference_all(keys, queries, s)) << "side " << int(s);
  }
}

// --- smaller GPUs: the shared memory per block forced down (cuda/search.hpp's testing override) ---

// The shared memory per block of an A100 (163 KB), of Ada and consumer Ampere cards (99 KB), and
// the least any CUDA device has (48 KB): the opt-in maxima sharedMemPerBlockOptin reports.
constexpr int64_t kSmallerLimits[] = {166912, 101376, 49152};

// Sets the override for its scope (and puts back whatever was set before).
class ForcedSharedLimit {
 public:
  explicit ForcedSharedLimit(int64_t bytes) : before_(cuda_backend::shared_limit_override()) {
    cuda_backend::set_shared_limit_override(bytes);
  }
  ~ForcedSharedLimit() { cuda_backend::set_shared_limit_override(before_); }

 private:
  int64_t before_;
};

std::string limit_name(int64_t bytes) { return std::to_string(bytes / 1024) + " KB"; }

// fit_partition, the arithmetic (no GPU needed): the H100's limit keeps the tuned shape (192 KB
// buckets, up to 16,384 of them); smaller limits stage smaller buckets; 48 KB leaves 8-byte keys'
// tuned scatter tile (72 KB) no room, so the small tile runs; a limit under any device's cannot
// hold two buckets' counters.
TEST(PartitionFit, FollowsTheSharedMemoryLimit) {
  using cuda_backend::fit_partition;
  using cuda_backend::partition_small_tile;
  const int64_t small = int64_t(partition_small_tile.threads) * partition_small_tile.items;
  const auto fit = [&](int kb, int64_t k, int64_t limit) {
    const auto& cfg = kb == 4 ? cuda_backend::partitioned_config<4> : cuda_backend::partitioned_config<8>;
    const auto tile = kb == 4 ? cuda_backend::partition_tile<4> : cuda_backend::partition_tile<8>;
    return fit_partition(kb, k, limit, cfg, int64_t(tile.threads) * tile.items, small, 0, 4096, 0, 1024);
  };
  for (int kb : {4, 8}) {
    const auto h100 = fit(kb, int64_t(1) << 27, 232448);
    EXPECT_TRUE(h100.ok && h100.staged && !h100.small_tile);
    EXPECT_EQ(h100.shape.chunk, 192 * 1024 / kb);  // the configuration as measured
    EXPECT_EQ(fit(kb, int64_t(1) << 33, 232448).shape.buckets, cuda_backend::partition_max_buckets);
    for (int64_t limit : kSmallerLimits) {
      // Past buckets x chunk keys the chunks grow out of shared memory, but the pipeline runs.
      const auto huge = fit(kb, int64_t(1) << 31, limit);
      EXPECT_TRUE(huge.ok && !huge.staged) << kb << "-byte keys, " << limit_name(limit);
      const int64_t k = int64_t(1) << 22;
      const auto f = fit(kb, k, limit);
      EXPECT_TRUE(f.ok) << kb << " " << limit;
      EXPECT_LE((f.shape.chunk + 64) * kb, limit) << "buckets staged, " << kb << "-byte keys, " << limit_name(limit);
      EXPECT_TRUE(f.staged);
      const int64_t tile = f.small_tile ? small : 4096;  // both key sizes' tuned tiles
      EXPECT_LE(cuda_backend::partition_scatter_smem(kb, tile, f.shape.buckets) + (f.small_tile ? 1024 : 4096), limit);
      EXPECT_LE(cuda_backend::partition_count_smem(kb, f.shape.buckets - 1), limit);
      EXPECT_EQ(f.small_tile, kb == 8 && limit == 49152) << kb << "-byte keys, " << limit_name(limit);
    }
    EXPECT_TRUE(fit(kb, int64_t(1) << 27, 12 * 1024).ok == (kb == 4));  // the small tile, grown chunks
    EXPECT_FALSE(fit(kb, int64_t(1) << 27, 8 * 1024).ok);  // no tile fits: the pipeline cannot run
    EXPECT_TRUE(fit(kb, 500, 8 * 1024).ok);                 // one bucket: the plain search
  }
}

// The library's configuration through the public API under each smaller limit: explicit
// partitioned and auto (which takes partitioned, index or binary by the device), every side,
// against std::upper_bound / lower_bound. Keys beyond shared memory at every limit, in buckets
// sized for it. Before the limit was respected, 8-byte keys at 48 KB failed to launch the scatter
// kernel (72 KB of tile), and many buckets (the next test) asked up to 205 KB.
TYPED_TEST(GpuPartitioned, ForcedSmallerSharedMemoryMatchesStd) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const int64_t k = (int64_t(1) << (test_subset() ? 18 : 20)) + 3, n = (int64_t(1) << (test_subset() ? 14 : 17)) + 5;
  const auto keys = gen::sorted_keys<T>(k, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), k, n, seed + 1);
  const auto d_keys = to_device(keys);
  const auto d_queries = to_device(queries);
  device_vector<int64_t> d_out(n);
  for (int64_t limit : kSmallerLimits) {
    const ForcedSharedLimit forced(limit);
    const auto dev = cuda_backend::current_device_limits();
    ASSERT_LE(dev.max_shared_per_block, limit);
    const auto plan = cuda_backend::plan_partitioned<false, 0, 0, T>(k, n, dev, cuda_backend::partitioned_config<int(sizeof(T))>);
    EXPECT_GT(plan.shape.buckets, 1) << limit_name(limit);
    EXPECT_TRUE(cuda_backend::fits_shared<T>(plan.shape.chunk, dev)) << "buckets staged at " << limit_name(limit);
    EXPECT_EQ(plan.small_tile, sizeof(T) == 8 && limit == 49152) << limit_name(limit);
    // What the kernels were planned with, for a failed launch's report.
    const auto attrs = [](const void* kernel) {
      cudaFuncAttributes a{};
      cudaFuncGetAttributes(&a, kernel);
      return "static " + std::to_string(a.sharedSizeBytes) + ", max dynamic " + std::to_string(a.maxDynamicSharedSizeBytes) +
             ", max threads " + std::to_string(a.maxThreadsPerBlock) + ", registers " + std::to_string(a.numRegs);
    };
    constexpr auto tuned = cuda_backend::partition_tile<int(sizeof(T))>;
    constexpr auto small = cuda_backend::partition_small_tile;
    SCOPED_TRACE(limit_name(limit) + ": buckets " + std::to_string(plan.shape.buckets) + ", chunk " +
                 std::to_string(plan.shape.chunk) + ", grid " + std::to_string(plan.grid) + ", count smem " +
                 std::to_string(plan.count_smem) + ", scatter smem " + std::to_string(plan.scatter_smem) +
                 "; scatter (tuned tile) " +
                 attrs(reinterpret_cast<const void*>(cuda_backend::partition_scatter_kernel<T, tuned.threads, tuned.items>)) +
                 "; scatter (small tile) " +
                 attrs(reinterpret_cast<const void*>(cuda_backend::partition_scatter_kernel<T, small.threads, small.items>)));
    for (side s : {side::left, side::right, side::pred}) {
      const auto want = reference_all(keys, queries, s);
      for (algorithm a : {algorithm::partitioned, algorithm::auto_}) {
        ASSERT_EQ(cudaMemset(d_out.data(), 0x5A, size_t(n) * sizeof(int64_t)), cudaSuccess);
        try {  // (a failure inside reports the trace above)
          search(cuda, s, span<const T>(d_keys), span<const T>(d_queries), span<int64_t>(d_out), {a});
        } catch (const std::exception& e) {
          FAIL() << to_string(a) << ", side " << side_name(s) << ": " << e.what();
        }
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        std::vector<int64_t> got(size_t(n), 0);
        d_out.copy_to(span<int64_t>(got));
        ASSERT_EQ(got, want) << to_string(a) << " at " << limit_name(limit) << ", side " << side_name(s);
      }
    }
  }
  EXPECT_EQ(cuda_backend::shared_limit_override(), 0);
}

// What auto takes under each limit for the partitioned rules' shapes: the partitioned search
// while its tuned pipeline keeps the buckets in shared memory, else the index or binary rules.
TEST(GpuPartitionedAuto, FollowsTheSharedMemoryLimit) {
  GSEARCH_GPU_OR_SKIP();
  const int64_t k4 = int64_t(1) << 20, q4 = int64_t(1) << 23, k8 = int64_t(1) << 22, q8 = int64_t(1) << 20;
  for (int64_t limit : kSmallerLimits) {
    const ForcedSharedLimit forced(limit);
    EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, k4, q4), algorithm::partitioned) << limit_name(limit);
    // 8-byte keys at 48 KB: the tuned scatter tile does not fit, the small one is not auto's.
    EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 8, k8, q8),
              limit == 49152 ? algorithm::index : algorithm::partitioned)
        << limit_name(limit);
    EXPECT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, 20000, 1 << 20),
              limit >= 101376 ? algorithm::pbs_cl : algorithm::index)  // 80 KB of keys
        << limit_name(limit);
  }
}

// Many small buckets (64 keys each, 16,384 of them): the counters alone take 128 KB (count) and
// 168 KB (scatter, 4-byte keys) at the H100's limit; under smaller limits the plan keeps fewer
// buckets (grown chunks, still staged) or the small tile, within the limit, and the results stay
// exact. Before: the kernels asked for more shared memory than the limit (a failed launch).
TYPED_TEST(GpuPartitioned, ManyBucketsUnderSmallerLimits) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  const core::partition_config cfg{64 * int64_t(sizeof(T)), cuda_backend::partition_max_buckets, 1 << 20, 32768};
  const int64_t k = 64 * cuda_backend::partition_max_buckets, n = (int64_t(1) << (test_subset() ? 14 : 18)) + 9;
  const auto keys = gen::sorted_keys<T>(k, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), k, n, seed + 1);
  for (int64_t limit : kSmallerLimits) {
    const ForcedSharedLimit forced(limit);
    const auto dev = cuda_backend::current_device_limits();
    const auto plan = cuda_backend::plan_partitioned<true, 0, 0, T>(k, n, dev, cfg);
    EXPECT_GT(plan.shape.buckets, 1);
    EXPECT_LE(plan.count_smem, dev.max_shared_per_block);
    EXPECT_LE(plan.scatter_smem, dev.max_shared_per_block);
    for (side s : {side::left, side::right}) {
      // Under test_subset() (compute-sanitizer: 29 s of memcheck for the six): each side's
      // pipeline once among the larger limits (163 KB: left, 99 KB: right; grown chunks, staged),
      // both at 48 KB (8-byte keys' small scatter tile).
      if (test_subset() && limit != 49152 && (s == side::left) != (limit == 166912)) continue;
      ASSERT_EQ((run_partitioned<T, int64_t>(keys, queries, s, cfg)), reference_all(keys, queries, s))
          << limit_name(limit) << ", " << plan.shape.buckets << " buckets of " << plan.shape.chunk
          << (plan.small_tile ? " keys, small tile" : " keys");
    }
  }
}

// search_options::max_temp_bytes on the GPU: the partitioned search's temporary memory (the
// pool's high-water mark while it runs) is what search_temp_bytes says; a cap of 0 makes auto
// take an in-place method, allocating nothing from the pool; an explicit partitioned or index
// over the cap throws, writing nothing; the results never change.
TEST(GpuTempCap, PoolUseFollowsTheCap) {
  GSEARCH_GPU_OR_SKIP();
  const uint64_t seed = test_seed();
  const int64_t k = int64_t(1) << 22, n = int64_t(1) << (test_subset() ? 20 : 21);  // auto: partitioned
  const auto keys = gen::sorted_keys<int32_t>(k, seed);
  const auto queries = gen::random_queries_from_keys(keys.data(), k, n, seed + 1);
  const auto want = reference_all(keys, queries, side::right);
  const auto d_keys = to_device(keys);
  const auto d_queries = to_device(queries);
  device_vector<int64_t> d_out(n);
  cudaMemPool_t pool = cuda_backend::temporary_pool();
  const auto run = [&](algorithm a, int64_t cap) {
    ASSERT_EQ(cudaMemset(d_out.data(), 0x5A, size_t(n) * sizeof(int64_t)), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    uint64_t zero = 0;
    ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
    search_options o{a};
    o.max_temp_bytes = cap;
    upper_bound(cuda, span<const int32_t>(d_keys), span<const int32_t>(d_queries), span<int64_t>(d_out), o);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  };
  const auto high = [&] {
    uint64_t used = 0;
    EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used), cudaSuccess);
    return int64_t(used);
  };
  const auto result = [&] {
    std::vector<int64_t> got(static_cast<size_t>(n), 0);
    d_out.copy_to(span<int64_t>(got));
    return got;
  };
  ASSERT_EQ(resolve_algorithm(cuda, algorithm::auto_, 4, k, n), algorithm::partitioned);
  const int64_t need = search_temp_bytes(cuda, algorithm::partitioned, 4, k, n);
  EXPECT_GT(need, std::min(n, int64_t(1) << 22) * 10);
  run(algorithm::auto_, unlimited_temp_bytes);
  EXPECT_EQ(result(), want);
  EXPECT_GT(high(), 0);
  EXPECT_LE(high(), need + (int64_t(2) << 20));  // (the pool may count whole pages)
  run(algorithm::partitioned, need);  // exactly its own size: runs
  EXPECT_EQ(result(), want);
  for (int64_t cap : {int64_t{0}, need - 1}) {
    EXPECT_NE(resolve_algorithm(cuda, algorithm::auto_, 4, k, n, cap), algorithm::partitioned);
    run(algorithm::auto_, cap);
    EXPECT_EQ(result(), want) << "cap " << cap;
    // Under the cap: at 0 nothing (binary, in place); just under the partitioned search's need,
    // auto may take the index (1.25x the keys: 20,971,600 bytes here), which fits.
    EXPECT_LE(high(), cap) << "auto allocated over a cap of " << cap;
  }
  for (algorithm a : {algorithm::partitioned, algorithm::index}) {
    ASSERT_EQ(cudaMemset(d_out.data(), 0x5A, size_t(n) * sizeof(int64_t)), cudaSuccess);
    search_options o{a};
    o.max_temp_bytes = 0;
    try {
      upper_bound(cuda, span<const int32_t>(d_keys), span<const int32_t>(d_queries), span<int64_t>(d_out), o);
      ADD_FAILURE() << to_string(a) << " with max_temp_bytes 0 did not throw";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("max_temp_bytes = 0"), std::string::npos) << e.what();
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(result(), std::vector<int64_t>(size_t(n), 0x5A5A5A5A5A5A5A5A)) << to_string(a) << " wrote";
  }
  // check_sorted and sorted queries under a cap of 0: no pool memory (the check reads its answer
  // through a reused word; the sorted search runs as the plain one), the same results.
  auto sorted_q = queries;
  sort_keys(sorted_q);
  const auto d_sorted = to_device(sorted_q);
  for (bool sorted : {false, true}) {
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    uint64_t zero = 0;
    ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
    search_options o{algorithm::auto_, /*check_sorted=*/true, sorted};
    o.max_temp_bytes = 0;
    upper_bound(cuda, span<const int32_t>(d_keys), span<const int32_t>(sorted ? d_sorted : d_queries),
                span<int64_t>(d_out), o);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(high(), 0) << (sorted ? "sorted queries" : "check_sorted");
    EXPECT_EQ(result(), sorted ? reference_all(keys, sorted_q, side::right) : want);
  }
  search_options bad;
  bad.max_temp_bytes = -1;
  EXPECT_THROW(upper_bound(cuda, span<const int32_t>(d_keys), span<const int32_t>(d_queries), span<int64_t>(d_out), bad),
               invalid_argument);
}

}  // namespace
}  // namespace gsearch::test
