#pragma once
// Helpers shared by the tests: the reference searches (std::lower_bound / upper_bound in the
// key_traits order), special float values, and the typed-test type list.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/device.hpp"

namespace gsearch::test {

/// GSEARCH_REQUIRE_GPU=1 (the device scripts set it): a GPU test that finds no usable CUDA device
/// fails instead of skipping, so a run on the GPU machine cannot pass by skipping everything.
inline bool gpu_required() {
  const char* v = std::getenv("GSEARCH_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

/// Skips the calling test (or fixture SetUp) where there is no CUDA device, and fails it instead
/// under GSEARCH_REQUIRE_GPU=1. cuda_device_count() is 0 for no device, for a driver error and
/// for a build without the CUDA backend alike.
#define GSEARCH_GPU_OR_SKIP()                                                                    \
  do {                                                                                           \
    if (::gsearch::cuda_device_count() == 0) {                                                   \
      if (::gsearch::test::gpu_required())                                                       \
        FAIL() << "GSEARCH_REQUIRE_GPU is set but no CUDA device is usable (none found, a "      \
                  "driver error, or a build without the CUDA backend)";                          \
      GTEST_SKIP() << "no CUDA device: GPU tests skipped";                                       \
    }                                                                                            \
  } while (0)

using KeyTypes = ::testing::Types<int32_t, uint32_t, int64_t, uint64_t, float, double>;

/// The reference: std:: algorithms with the library's order.
template <class T>
int64_t reference(const std::vector<T>& keys, T q, side s) {
  auto less = [](T a, T b) { return key_less(a, b); };
  if (s == side::left) return std::lower_bound(keys.begin(), keys.end(), q, less) - keys.begin();
  const int64_t ub = std::upper_bound(keys.begin(), keys.end(), q, less) - keys.begin();
  return s == side::right ? ub : ub - 1;
}

template <class T>
std::vector<int64_t> reference_all(const std::vector<T>& keys, const std::vector<T>& queries, side s) {
  std::vector<int64_t> r(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) r[i] = reference(keys, queries[i], s);
  return r;
}

template <class T>
void sort_keys(std::vector<T>& v) {
  std::sort(v.begin(), v.end(), [](T a, T b) { return key_less(a, b); });
}

/// The values at the edges of T's order: lowest, highest, and for floats -inf, -0.0, 0.0,
/// +inf, NaN, denormals.
template <class T>
std::vector<T> edge_values() {
  std::vector<T> v{std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), T(0), T(1)};
  if constexpr (std::is_floating_point_v<T>) {
    v.insert(v.end(), {-std::numeric_limits<T>::infinity(), std::numeric_limits<T>::infinity(),
                       std::numeric_limits<T>::quiet_NaN(), T(-0.0), std::numeric_limits<T>::denorm_min(),
                       -std::numeric_limits<T>::denorm_min(), T(-1)});
  } else {
    v.push_back(std::numeric_limits<T>::max() - 1);
    v.push_back(T(std::numeric_limits<T>::min() + 1));
  }
  return v;
}

/// A fresh seed, printed so that a failure can be replayed (set GSEARCH_SEED to replay).
inline uint64_t test_seed() {
  if (const char* s = std::getenv("GSEARCH_SEED")) return std::strtoull(s, nullptr, 10);
  const uint64_t seed = std::random_device{}();
  std::printf("[ seed     ] GSEARCH_SEED=%llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

/// Values of T spread over a small range, so that random keys collide (duplicates).
template <class T>
T small_value(std::mt19937_64& rng, int range) {
  const int v = int(rng() % uint64_t(range));
  if constexpr (std::is_signed_v<T>) return T(v - range / 2);
  else return T(v);
}

/// GSEARCH_TEST_SUBSET=1 shrinks the matrices (for compute-sanitizer, which runs kernels ~100x
/// slower): every kernel and size is still covered, with fewer input combinations.
inline bool test_subset() {
  const char* s = std::getenv("GSEARCH_TEST_SUBSET");
  return s && *s && *s != '0';
}

/// Under GSEARCH_TEST_SUBSET, the heaviest typed CPU suites (the sanitizers' build runs them at
/// -O0: two thirds of CI's sanitizer stage) take three of the six key types: a 4-byte integer,
/// an 8-byte unsigned integer and an 8-byte float cover every element size and every kind of
/// comparison (NaN, -0.0, sign) their code has; the other types instantiate the same code.
template <class T>
class subset_typed_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test_subset() && !(std::is_same_v<T, int32_t> || std::is_same_v<T, uint64_t> || std::is_same_v<T, double>))
      GTEST_SKIP() << "GSEARCH_TEST_SUBSET: int32, uint64 and double stand for the key types";
  }
};

inline const char* side_name(side s) { return s == side::left ? "left" : s == side::right ? "right" : "pred"; }

}  // namespace gsearch::test
