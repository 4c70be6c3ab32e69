#pragma once
/// \file
/// Deterministic input generators shared by the tests, the CLI (`gsearch gen`) and the
/// benchmarks: sorted random keys, random queries drawn from the keys, and the paper's
/// worst-case queries. Host-only. The generator is splitmix64, so a seed gives the same data
/// on every platform and compiler.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"

namespace gsearch::gen {

/// splitmix64: tiny, fast, and the same everywhere.
struct splitmix64 {
  uint64_t state;
  uint64_t operator()() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n), n > 0 (multiply-shift; the bias is below 2^-32 for n < 2^32).
  uint64_t below(uint64_t n) { return uint64_t((unsigned __int128)(*this)() * n >> 64); }
};

/// A uniformly random value of T: integers over their whole range, floats in [-1e6, 1e6).
template <class T>
T random_value(splitmix64& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    return T(double(rng() >> 11) * 0x1.0p-53 * 2e6 - 1e6);
  } else {
    return T(rng());
  }
}

/// k uniformly random keys, sorted in the order of key_traits.hpp.
template <class T>
std::vector<T> sorted_keys(int64_t k, uint64_t seed) {
  splitmix64 rng{seed};
  std::vector<T> keys(static_cast<size_t>(k));
  for (auto& x : keys) x = random_value<T>(rng);
  std::sort(keys.begin(), keys.end(), [](T a, T b) { return key_less(a, b); });
  return keys;
}

/// q queries, each a key chosen uniformly at random (the paper's random query sets).
template <class T>
std::vector<T> random_queries_from_keys(const T* keys, int64_t k, int64_t q, uint64_t seed) {
  splitmix64 rng{seed};
  std::vector<T> out(static_cast<size_t>(q));
  for (auto& x : out) x = k ? keys[rng.below(uint64_t(k))] : random_value<T>(rng);
  return out;
}

/// The worst case for PBS (Corollary 4.1): in every warp, lane i queries keys[i * (k / w) + C],
/// with C drawn at random per warp in [0, k / w). With distinct keys, k a multiple of w^2 and
/// side right or pred, every step after the first log2(w) is a w-way bank conflict (with side
/// left a few warps see 31-way steps). Query j runs on lane j % w, as on the GPU.
/// For k < w the stride is 1 and lanes past k wrap around.
template <class T>
std::vector<T> worst_case_queries(const T* keys, int64_t k, int64_t q, uint64_t seed,
                                  int w = warp_width) {
  splitmix64 rng{seed};
  std::vector<T> out(static_cast<size_t>(q));
  if (k == 0) return sorted_keys<T>(q, seed);
  const int64_t stride = std::max<int64_t>(1, k / w);
  uint64_t c = 0;
  for (int64_t j = 0; j < q; ++j) {
    if (j % w == 0) c = rng.below(uint64_t(stride));
    out[size_t(j)] = keys[((j % w) * stride + int64_t(c)) % k];
  }
  return out;
}

}  // namespace gsearch::gen
