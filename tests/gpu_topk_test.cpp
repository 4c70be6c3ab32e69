// The CUDA backend of topk / kthvalue (label `gpu`), against a std:: reference (a stable sort of
// each row in the key order): every key type; the row kernel staged in shared memory (at its
// limit, under the device's shared memory and under the 48 KB testing override) and just above it
// (the global-memory row kernel); the 1-D path (select, then the gather pass) for one long row and
// row by row; rows of one element, k = 1 and k = cols, k at each block sort's capacity +- 1 and
// past the last (cub's device sorts); ties, few distinct values, all-equal rows, NaN / inf / -0.0;
// data off the 16-byte alignment and odd rows. Checked: the values (in order when sorted, as a
// multiset otherwise), indices in the row, distinct, and pointing at elements bit-equal to the
// values; kthvalue's index is the lowest of an equal element (what both paths return).
// GSEARCH_TEST_SUBSET=1 (compute-sanitizer) keeps every path with shorter long rows and fewer
// shapes. Skips visibly without a GPU.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/launch.hpp"
#include "gsearch/core/topk_list.hpp"
#include "gsearch/device.hpp"
#include "selection/backend.hpp"
#include "selection/tuning_topk.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using cuda_backend::topk_staged_max_cols;

template <class T>
bool same_key(T a, T b) {
  return !key_less(a, b) && !key_less(b, a);
}
template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// --- data ------------------------------------------------------------------------------------------

/// n values: `distinct` > 0 draws from that many small values (ties); else the type's wide range
/// (floats: normal, with NaN / +-inf / -0.0 / 0.0 sprinkled in when `specials`).
template <class T>
std::vector<T> make_data(int64_t n, uint64_t seed, int distinct, bool specials = false) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if (distinct > 0) {
      const int d = int(rng() % uint64_t(distinct));
      x = std::is_signed_v<T> ? T(d - distinct / 2) : T(d);
    } else if constexpr (std::is_floating_point_v<T>) {
      x = T(std::normal_distribution<double>(0, 1000)(rng));
    } else {
      x = T(rng());
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (specials) {
      const T pick[] = {std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::quiet_NaN(),
                        std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(), T(-0.0), T(0.0)};
      for (auto& x : v)
        if (rng() % 8 == 0) x = pick[rng() % 6];
    }
  }
  return v;
}

// --- the backend on device copies --------------------------------------------------------------------

template <class T>
struct Outputs {
  std::vector<T> values;
  std::vector<int64_t> indices;
};

/// Device copy of host data `offset` elements past a fresh allocation's start (offset 1: the rows
/// and the 16-byte loads lose their alignment).
template <class T>
struct OnDevice {
  device_vector<T> buf;
  const T* data = nullptr;
  OnDevice(const std::vector<T>& host, int64_t offset) : buf(int64_t(host.size()) + offset + 4) {
    data = buf.data() + offset;
    if (!host.empty()) copy_to_device(buf.data() + offset, host.data(), host.size() * sizeof(T));
  }
};

template <class T>
Outputs<T> gpu_topk(const std::vector<T>& host, int64_t offset, int64_t rows, int64_t cols, int64_t k,
                    bool largest, bool sorted) {
  const OnDevice<T> d(host, offset);
  device_vector<T> values(std::max<int64_t>(rows * k, 1));
  device_vector<int64_t> indices(std::max<int64_t>(rows * k, 1));
  cuda_backend::topk<T>(nullptr, d.data, rows, cols, k, largest, sorted, values.data(), indices.data());
  synchronize(cuda);
  Outputs<T> o{std::vector<T>(size_t(rows * k)), std::vector<int64_t>(size_t(rows * k))};
  if (rows * k > 0) {
    copy_to_host(o.values.data(), values.data(), o.values.size() * sizeof(T));
    copy_to_host(o.indices.data(), indices.data(), o.indices.size() * sizeof(int64_t));
  }
  return o;
}

template <class T>
Outputs<T> gpu_kthvalue(const std::vector<T>& host, int64_t offset, int64_t rows, int64_t cols, int64_t rank) {
  const OnDevice<T> d(host, offset);
  device_vector<T> values(rows);
  device_vector<int64_t> indices(rows);
  cuda_backend::kthvalue<T>(nullptr, d.data, rows, cols, rank, values.data(), indices.data());
  synchronize(cuda);
  Outputs<T> o{std::vector<T>(size_t(rows)), std::vector<int64_t>(size_t(rows))};
  copy_to_host(o.values.data(), values.data(), o.values.size() * sizeof(T));
  copy_to_host(o.indices.data(), indices.data(), o.indices.size() * sizeof(int64_t));
  return o;
}

// --- the reference and the checks --------------------------------------------------------------------

/// Row r sorted in the request's order (largest first when `largest`), stably.
template <class T>
std::vector<T> sorted_row(const std::vector<T>& data, int64_t r, int64_t cols, bool largest) {
  std::vector<T> row(data.begin() + r * cols, data.begin() + (r + 1) * cols);
  if (largest) std::stable_sort(row.begin(), row.end(), [](T a, T b) { return key_less(b, a); });
  else std::stable_sort(row.begin(), row.end(), [](T a, T b) { return key_less(a, b); });
  return row;
}

template <class T>
void expect_topk(const std::vector<T>& data, int64_t offset, int64_t rows, int64_t cols, int64_t k, bool largest,
                 bool sorted, const std::string& what) {
  SCOPED_TRACE(what + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) + " k=" + std::to_string(k) +
               (largest ? " largest" : " smallest") + (sorted ? " sorted" : " unsorted") +
               " offset=" + std::to_string(offset));
  const Outputs<T> got = gpu_topk(data, offset, rows, cols, k, largest, sorted);
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<T> ref = sorted_row(data, r, cols, largest);
    std::vector<T> values(got.values.begin() + r * k, got.values.begin() + (r + 1) * k);
    std::set<int64_t> seen;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t i = got.indices[size_t(r * k + j)];
      ASSERT_TRUE(i >= 0 && i < cols) << "row " << r << " slot " << j << ": index " << i;
      ASSERT_TRUE(seen.insert(i).second) << "row " << r << ": index " << i << " twice";
      ASSERT_TRUE(same_bits(data[size_t(r * cols + i)], values[size_t(j)]))
          << "row " << r << " slot " << j << ": value " << values[size_t(j)] << " is not element " << i << " ("
          << data[size_t(r * cols + i)] << ")";
    }
    if (!sorted) {
      if (largest) std::sort(values.begin(), values.end(), [](T a, T b) { return key_less(b, a); });
      else std::sort(values.begin(), values.end(), [](T a, T b) { return key_less(a, b); });
    }
    for (int64_t j = 0; j < k; ++j)
      ASSERT_TRUE(same_key(values[size_t(j)], ref[size_t(j)]))
          << "row " << r << " slot " << j << ": got " << values[size_t(j)] << ", want " << ref[size_t(j)];
  }
}

template <class T>
void expect_kthvalue(const std::vector<T>& data, int64_t offset, int64_t rows, int64_t cols, int64_t rank,
                     const std::string& what) {
  SCOPED_TRACE(what + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
               " rank=" + std::to_string(rank) + " offset=" + std::to_string(offset));
  const Outputs<T> got = gpu_kthvalue(data, offset, rows, cols, rank);
  for (int64_t r = 0; r < rows; ++r) {
    const T want = sorted_row(data, r, cols, false)[size_t(rank)];
    ASSERT_TRUE(same_key(got.values[size_t(r)], want)) << "row " << r << ": got " << got.values[size_t(r)] << ", want " << want;
    int64_t first = 0;
    while (!same_key(data[size_t(r * cols + first)], want)) ++first;
    EXPECT_EQ(got.indices[size_t(r)], first) << "row " << r << ": the lowest index of an equal element";
  }
}

/// Sets the testing limit of shared memory per block for one scope (0: the device's own).
class SharedLimit {
 public:
  explicit SharedLimit(int64_t bytes) : old_(cuda_backend::shared_limit_override()) {
    cuda_backend::set_shared_limit_override(bytes);
  }
  ~SharedLimit() { cuda_backend::set_shared_limit_override(old_); }

 private:
  int64_t old_;
};

/// Keeps every row whole (no split: tuning_topk.hpp's topk_row_split) for one scope.
class NoSplit {
 public:
  NoSplit() : old_(cuda_backend::topk_split_enabled()) { cuda_backend::set_topk_split_enabled(false); }
  ~NoSplit() { cuda_backend::set_topk_split_enabled(old_); }

 private:
  bool old_;
};

int64_t device_shared_limit() {
  int device = 0, bytes = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  return bytes;
}
int device_sms() {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

// --- the cases ---------------------------------------------------------------------------------------

template <class T>
class GpuTopk : public ::testing::Test {
 protected:
  void SetUp() override { GSEARCH_GPU_OR_SKIP(); }
};
TYPED_TEST_SUITE(GpuTopk, KeyTypes);

TYPED_TEST(GpuTopk, RowsOfOneElement) {
  using T = TypeParam;
  const auto data = make_data<T>(5, 1, 0);
  for (bool largest : {true, false}) expect_topk(data, 0, 5, 1, 1, largest, true, "cols 1");
  expect_kthvalue(data, 0, 5, 1, 0, "cols 1");
}

TYPED_TEST(GpuTopk, ZeroK) {
  using T = TypeParam;
  const auto data = make_data<T>(12, 2, 0);
  expect_topk(data, 0, 3, 4, 0, true, true, "k 0");
}

TYPED_TEST(GpuTopk, SmallRows) {
  using T = TypeParam;
  const std::vector<int64_t> shapes = test_subset() ? std::vector<int64_t>{3, 33, 257}
                                                    : std::vector<int64_t>{2, 3, 31, 32, 33, 255, 256, 257, 1000};
  for (int64_t cols : shapes) {
    const int64_t rows = 7;
    const auto data = make_data<T>(rows * cols, uint64_t(cols), 0);
    for (int64_t k : {int64_t(1), int64_t(2), cols / 2, cols - 1, cols}) {
      if (k < 1) continue;
      for (bool largest : {true, false})
        for (bool sorted : {true, false}) expect_topk(data, cols % 2, rows, cols, k, largest, sorted, "random");
    }
    for (int64_t rank : {int64_t(0), cols / 2, cols - 1}) expect_kthvalue(data, 1, rows, cols, rank, "random");
  }
}

// Short rows a thread each (core::short_row_list: topk_short_kernel.cuh): row counts across
// blocks of topk_short_threads (1, one past a block, several), every list length and k at its
// ends, columns odd and even (the staged stride), the data off its alignment; random keys, three
// distinct values (ties in index order), the specials, and rows of one extreme value (their radix
// keys the list's empty key: for the largest, the least value; for the smallest, the greatest).
TYPED_TEST(GpuTopk, ShortRows) {
  using T = TypeParam;
  const int64_t block = cuda_backend::topk_short_threads;
  const std::vector<int64_t> row_counts =
      test_subset() ? std::vector<int64_t>{block + 1} : std::vector<int64_t>{1, block + 1, 3 * block + 5};
  for (const int64_t rows : row_counts)
    for (const int64_t cols : {int64_t(1), int64_t(8), int64_t(33), int64_t(64), int64_t(65), int64_t(128)}) {
      if (test_subset() && cols != 65) continue;
      std::vector<std::pair<std::string, std::vector<T>>> inputs;
      inputs.emplace_back("random", make_data<T>(rows * cols, uint64_t(rows * cols), 0));
      inputs.emplace_back("ties", make_data<T>(rows * cols, uint64_t(cols) + 1, 3));
      if constexpr (std::is_floating_point_v<T>)
        inputs.emplace_back("specials", make_data<T>(rows * cols, uint64_t(cols) + 2, 0, true));
      inputs.emplace_back("least", std::vector<T>(size_t(rows * cols), std::numeric_limits<T>::lowest()));
      inputs.emplace_back("greatest",
                          std::vector<T>(size_t(rows * cols), std::is_floating_point_v<T>
                                                                  ? std::numeric_limits<T>::quiet_NaN()
                                                                  : std::numeric_limits<T>::max()));
      for (const auto& [what, data] : inputs)
        for (const int64_t k : {int64_t(1), int64_t(8), int64_t(9), int64_t(16), int64_t(17), int64_t(32)}) {
          if (k > cols || core::short_row_list(cols, k) == 0) continue;
          if (test_subset() && k != 9) continue;
          for (const bool largest : {true, false})
            for (const bool sorted : {true, false})
              expect_topk(data, cols % 2 ? 0 : 1, rows, cols, k, largest, sorted, "short rows, " + what);
        }
    }
}

TYPED_TEST(GpuTopk, TiesAndSpecialValues) {
  using T = TypeParam;
  const int64_t rows = 9, cols = 777;
  // Under test_subset() (compute-sanitizer: racecheck 22-44 s here, bd04340's logs): one distinct
  // value (every element a tie) and 40, with k of one, half the row and the whole row.
  for (int distinct : {1, 2, 5, 40}) {
    if (test_subset() && distinct != 1 && distinct != 40) continue;
    const auto data = make_data<T>(rows * cols, uint64_t(distinct), distinct);
    for (int64_t k : {1, 2, 100, 388, 776, 777})
      for (bool largest : {true, false})
        if (!test_subset() || k == 1 || k == 388 || k == 777) expect_topk(data, 1, rows, cols, k, largest, true, "distinct " + std::to_string(distinct));
    for (int64_t rank : {0, 1, 388, 776}) expect_kthvalue(data, 0, rows, cols, rank, "distinct " + std::to_string(distinct));
  }
  if constexpr (std::is_floating_point_v<T>) {
    const auto data = make_data<T>(rows * cols, 7, 0, true);  // NaN (both signs), +-inf, -0.0, 0.0
    for (int64_t k : {1, 50, 100, 400, 700, 777})
      for (bool largest : {true, false})
        for (bool sorted : {true, false}) expect_topk(data, 0, rows, cols, k, largest, sorted, "specials");
    for (int64_t rank : {0, 100, 388, 700, 776}) expect_kthvalue(data, 3, rows, cols, rank, "specials");
    // Zeros of both signs only: equal keys, every element a tie.
    std::vector<T> zeros(size_t(rows * cols));
    for (size_t i = 0; i < zeros.size(); ++i) zeros[i] = i % 3 ? T(0.0) : T(-0.0);
    expect_topk(zeros, 0, rows, cols, 10, true, true, "signed zeros");
    expect_kthvalue(zeros, 0, rows, cols, 5, "signed zeros");
  }
}

// Staged rows long enough for the filter (topk_kernel.cuh's filter_row: a bound from the least
// keys of groups of the row, then the select over the keys at or below it): random rows (the
// filter's candidates suffice), and rows where they overflow and the whole row is selected
// again: few distinct values (every key a tie), rows in order and in reverse, and the row's
// largest keys at the positions of one group (for the smallest, a bound that keeps most of the
// row; for the largest, a group that holds the best keys); k on both sides of the filter's
// capacities (2,048 positions up to rank 127, 4,096 up to rank 255 for 4-byte keys, none
// beyond), and kthvalue.
// Rows whole (SplitRows splits them).
TYPED_TEST(GpuTopk, FilteredRows) {
  using T = TypeParam;
  const NoSplit whole;
  for (const int64_t cols : {int64_t(16384), int64_t(9001)}) {
    const int64_t rows = 5;
    const int key_bytes = int(sizeof(T));
    const int wide =
        key_bytes == 4 ? cuda_backend::topk_filter_max_capacity : 0;  // (256 groups: 4-byte keys)
    ASSERT_EQ(cuda_backend::topk_filter_rows(cols, 127, key_bytes), cuda_backend::topk_filter_capacity)
        << cols;
    ASSERT_EQ(cuda_backend::topk_filter_rows(cols, 128, key_bytes), wide) << cols;
    ASSERT_EQ(cuda_backend::topk_filter_rows(cols, 255, key_bytes), wide) << cols;
    ASSERT_EQ(cuda_backend::topk_filter_rows(cols, 256, key_bytes), 0) << cols;
    std::vector<std::pair<std::string, std::vector<T>>> inputs;
    inputs.emplace_back("random", make_data<T>(rows * cols, uint64_t(cols), 0, true));
    inputs.emplace_back("ties", make_data<T>(rows * cols, uint64_t(cols) + 1, 5));
    if (!test_subset()) {
      std::vector<T> ordered = make_data<T>(rows * cols, uint64_t(cols) + 2, 0);
      for (int64_t r = 0; r < rows; ++r) {
        const auto first = ordered.begin() + r * cols, last = first + cols;
        if (r % 2)
          std::sort(first, last, [](T a, T b) { return key_less(a, b); });
        else
          std::sort(first, last, [](T a, T b) { return key_less(b, a); });
      }
      inputs.emplace_back("ordered rows", ordered);
      std::vector<T> aligned = make_data<T>(rows * cols, uint64_t(cols) + 3, 0);
      const int64_t groups = cuda_backend::topk_filter_groups(63);
      for (int64_t r = 0; r < rows; ++r) {  // the row's largest keys at the positions = 0 mod groups
        std::vector<T> v(aligned.begin() + r * cols, aligned.begin() + (r + 1) * cols);
        std::sort(v.begin(), v.end(), [](T a, T b) { return key_less(b, a); });
        int64_t next_large = 0, next_small = (cols + groups - 1) / groups;
        for (int64_t i = 0; i < cols; ++i)
          aligned[size_t(r * cols + i)] = i % groups == 0 ? v[size_t(next_large++)] : v[size_t(next_small++)];
      }
      inputs.emplace_back("group-aligned", aligned);
    }
    for (const auto& [what, data] : inputs) {
      for (const int64_t k :
           {int64_t(1), int64_t(64), int64_t(128), int64_t(129), int64_t(256), int64_t(257)})
        for (const bool largest : {true, false}) {
          if (test_subset() && ((k != 64 && k != 256) || !largest)) continue;
          expect_topk(data, 1, rows, cols, k, largest, true, what);
          if (!test_subset()) expect_topk(data, 0, rows, cols, k, largest, false, what + ", unsorted");
        }
      if (!test_subset())
        for (const int64_t rank : {int64_t(0), int64_t(100), cols - 1})
          expect_kthvalue(data, 0, rows, cols, rank, what);
    }
  }
}

/// The outputs name the row's first k by (key, position), the ties' positions included: sorted,
/// exactly the positions of a stable sort of the row; unsorted, the same set. (What the row
/// kernel and the split give; the 1-D path takes any ties.)
template <class T>
void expect_first_ties(const std::vector<T>& data, int64_t rows, int64_t cols, int64_t k, bool largest,
                       bool sorted, const std::string& what) {
  SCOPED_TRACE(what + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
               " k=" + std::to_string(k) + (largest ? " largest" : " smallest") +
               (sorted ? " sorted" : " unsorted") + ", first ties");
  const Outputs<T> got = gpu_topk(data, 0, rows, cols, k, largest, sorted);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(static_cast<size_t>(cols));
    std::iota(order.begin(), order.end(), int64_t(0));
    const T* row = data.data() + r * cols;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? key_less(row[b], row[a]) : key_less(row[a], row[b]);
    });
    std::vector<int64_t> want(order.begin(), order.begin() + k);
    std::vector<int64_t> have(got.indices.begin() + r * k, got.indices.begin() + (r + 1) * k);
    if (!sorted) {
      std::sort(want.begin(), want.end());
      std::sort(have.begin(), have.end());
    }
    ASSERT_EQ(have, want) << "row " << r;
  }
}

// Rows split in pieces (tuning_topk.hpp's topk_row_split), against the reference and the row's
// first ties: rows too long for shared memory (FlashInfer's shape, fewer rows; a ragged last
// piece), and too few rows to fill the device (a row fitting shared memory in pieces); random
// keys with the specials, few distinct values (ties across every piece: the first ties must be
// the row's), all equal, and rows in reverse order (every piece's outputs the row's); k of 1,
// 64, 256 (the 4,096-position filter) and 512 (none), and kthvalue (the first equal element).
TYPED_TEST(GpuTopk, SplitRows) {
  using T = TypeParam;
  const int sms = device_sms();
  const int64_t staged = topk_staged_max_cols(int(sizeof(T)), device_shared_limit());
  struct shape {
    int64_t rows, cols;
  };
  const std::vector<shape> shapes =
      test_subset()
          ? std::vector<shape>{{3, 3 * staged + 101}, {2, 16384}}
          : std::vector<shape>{{2, int64_t(1) << 19}, {3, 3 * staged + 101}, {5, 16384}, {1, 40000}};
  for (const auto& [rows, cols] : shapes) {
    std::vector<std::pair<std::string, std::vector<T>>> inputs;
    inputs.emplace_back("random", make_data<T>(rows * cols, uint64_t(cols), 0, true));
    inputs.emplace_back("ties", make_data<T>(rows * cols, uint64_t(cols) + 1, 5));
    if (!test_subset()) {
      inputs.emplace_back("all equal", std::vector<T>(size_t(rows * cols), T(2)));
      std::vector<T> reversed = make_data<T>(rows * cols, uint64_t(cols) + 2, 0);
      for (int64_t r = 0; r < rows; ++r)
        std::sort(reversed.begin() + r * cols, reversed.begin() + (r + 1) * cols,
                  [](T a, T b) { return key_less(b, a); });
      inputs.emplace_back("reversed", reversed);
    }
    for (const int64_t k : {int64_t(1), int64_t(64), int64_t(256), int64_t(512)}) {
      ASSERT_GT(cuda_backend::topk_row_split(rows, cols, k, int(sizeof(T)), staged, sms).parts, 1)
          << rows << " x " << cols << ", k " << k << ": not split";
      if (test_subset() && k != 256) continue;
      for (const auto& [what, data] : inputs)
        for (const bool largest : {true, false}) {
          if (test_subset() && !largest) continue;
          expect_topk(data, 0, rows, cols, k, largest, true, "split, " + what);
          expect_first_ties(data, rows, cols, k, largest, true, "split, " + what);
          if (!test_subset()) expect_first_ties(data, rows, cols, k, largest, false, "split, " + what);
        }
    }
    for (const auto& [what, data] : inputs)
      for (const int64_t rank : {int64_t(0), int64_t(300)}) {
        expect_kthvalue(data, 0, rows, cols, rank, "split, " + what);
        if (test_subset()) break;
      }
  }
}

// k at each block sort's capacity +- 1, and past the last (cub's segmented sort over rows).
TYPED_TEST(GpuTopk, SortCapacities) {
  using T = TypeParam;
  const int64_t rows = 3, cols = 9000;
  const auto data = make_data<T>(rows * cols, 11, 0);
  const auto dup = make_data<T>(rows * cols, 12, 3000);
  // Under test_subset() (compute-sanitizer: racecheck 35-64 s here): each tier full (k = its
  // tile) and one past it (the next tier's smallest k), largest on the distinct data, smallest on
  // the ties: every block sort runs, full and partial.
  for (const auto& tier : cuda_backend::topk_sort_tiers)
    for (int64_t k : {tier.tile() - 1, tier.tile(), tier.tile() + 1})
      for (bool largest : {true, false}) {
        if (test_subset() && k == tier.tile() - 1) continue;
        if (test_subset()) {
          expect_topk(largest ? data : dup, largest ? 0 : 1, rows, cols, k, largest, true,
                      largest ? "sort tier" : "sort tier, ties");
          continue;
        }
        expect_topk(data, 0, rows, cols, k, largest, true, "sort tier");
        expect_topk(dup, 1, rows, cols, k, largest, true, "sort tier, ties");
      }
  expect_topk(data, 0, rows, cols, cuda_backend::topk_block_sort_max_k + 1, true, false, "past the block sorts, unsorted");
}

// Rows at the staged limit and one past it (the global-memory row kernel), under the 48 KB
// testing limit and under the device's own; rows whole (SplitRows splits them).
TYPED_TEST(GpuTopk, StagedLimit) {
  using T = TypeParam;
  const NoSplit whole;
  for (int64_t limit : {cuda_backend::min_shared_limit_override, device_shared_limit()}) {
    const SharedLimit scope(limit == device_shared_limit() ? 0 : limit);
    const int64_t at = topk_staged_max_cols(int(sizeof(T)), limit);
    for (int64_t cols : {at, at + 1}) {
      const int64_t rows = 3;
      ASSERT_TRUE(cuda_backend::topk_rows_in_global(rows, at + 1, int(sizeof(T)), device_sms()))
          << "one past the limit should be the global-memory row kernel";
      const std::string what = "limit " + std::to_string(limit) + (cols > at ? " + 1" : "");
      const auto data = make_data<T>(rows * cols, uint64_t(cols), 0);
      const auto dup = make_data<T>(rows * cols, uint64_t(cols) + 1, 7);
      // Under test_subset() (compute-sanitizer: racecheck 50-95 s here): at each limit and
      // cols, the distinct data with k = 1 and k = cols (the whole row), the ties with
      // k = 64 (a block sort, sorted) and their kthvalue; the staged row kernel at `at`, the
      // global one at `at + 1`.
      for (int64_t k : {int64_t(1), int64_t(64), cols}) {
        if (!test_subset() || k != 64) expect_topk(data, cols % 2, rows, cols, k, true, true, what);
        if (!test_subset() || k == 64) expect_topk(dup, 0, rows, cols, k, false, k <= 64, what + ", ties");
      }
      if (!test_subset()) expect_kthvalue(data, 1, rows, cols, cols / 3, what);
      expect_kthvalue(dup, 0, rows, cols, cols - 1, what + ", ties");
    }
  }
}

// One long row: select, then the gather pass (k past the block sorts: cub's radix sort).
TYPED_TEST(GpuTopk, OneLongRow) {
  using T = TypeParam;
  const int64_t n = (int64_t(1) << (test_subset() ? 20 : 22)) + 3;
  ASSERT_FALSE(cuda_backend::topk_rows_in_global(1, n, int(sizeof(T)), device_sms()));
  const auto data = make_data<T>(n, 21, 0, true);
  const auto dup = make_data<T>(n, 22, 1000);
  for (int64_t k : {int64_t(1), int64_t(1000), cuda_backend::topk_block_sort_max_k + 1}) {
    expect_topk(data, 1, 1, n, k, true, true, "1-D");
    expect_topk(dup, 0, 1, n, k, false, true, "1-D, ties");
  }
  expect_topk(dup, 0, 1, n, 5000, true, false, "1-D, ties, unsorted");
  for (int64_t rank : {int64_t(0), n / 2, n - 1}) {
    expect_kthvalue(data, 0, 1, n, rank, "1-D");
    expect_kthvalue(dup, 3, 1, n, rank, "1-D, ties");
  }
  const std::vector<T> same(size_t(n), T(3));
  expect_topk(same, 0, 1, n, 100, true, true, "1-D, all equal");
  expect_kthvalue(same, 0, 1, n, n / 2, "1-D, all equal");
}

// A few long rows, one at a time through the 1-D path (odd cols: the second row is misaligned).
TYPED_TEST(GpuTopk, FewLongRows) {
  using T = TypeParam;
  const int64_t rows = 2, cols = (int64_t(1) << 20) + 1;
  ASSERT_FALSE(cuda_backend::topk_rows_in_global(rows, cols, int(sizeof(T)), device_sms()));
  const auto data = make_data<T>(rows * cols, 31, 0);
  const auto dup = make_data<T>(rows * cols, 32, 50);
  for (int64_t k : {int64_t(1), int64_t(100), cuda_backend::topk_block_sort_max_k + 1}) {
    expect_topk(data, 0, rows, cols, k, true, true, "rows, 1-D");
    expect_topk(dup, 1, rows, cols, k, false, true, "rows, 1-D, ties");
  }
  expect_kthvalue(data, 0, rows, cols, cols / 2, "rows, 1-D");
  expect_kthvalue(dup, 0, rows, cols, 7, "rows, 1-D, ties");
}

// The row-batched case of the benchmarks, smaller: many rows of 16,384 with k = 64.
TYPED_TEST(GpuTopk, ManyRows) {
  using T = TypeParam;
  const int64_t rows = test_subset() ? 20 : 300, cols = 16384;
  const auto data = make_data<T>(rows * cols, 41, 0);
  for (bool largest : {true, false}) expect_topk(data, 0, rows, cols, 64, largest, true, "many rows");
  const std::vector<T> same(size_t(rows * cols), T(1));
  expect_topk(same, 0, rows, cols, 64, true, true, "many rows, all equal");
  expect_kthvalue(data, 0, rows, cols, 8191, "many rows");
}

}  // namespace
}  // namespace gsearch::test
