#pragma once
// The CPU's stable sort of integer keys (with or without int64 values): an LSD radix sort of
// 8-bit digits, the CPU's counterpart of the CUB radix sort the CUDA backend takes for integer
// keys (src/merge/cuda/sort.cu). Private to src/merge/cpu.cpp.
//
// Each pass moves every element once by one digit of its key's order bits (the sign bit flipped
// for signed keys, so that the unsigned order of the bits is the keys' order): a count of the
// digit in each thread's contiguous chunk, an exclusive scan of (digit, thread) for each thread's
// first position of each digit, then each thread writes its chunk in order. Threads in order and
// elements in order within a thread: stable, as every LSD pass must be. A digit that is the same
// in every key (the high bytes of int64 keys of a small range) is one count and no pass. The
// passes alternate between `out` and a scratch, arranged so that the last one writes `out` (in
// place, out == keys, an odd count of passes first copies the input to the scratch).

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "gsearch/core/radix_bits.hpp"
#include "cpu/parallel.hpp"

namespace gsearch::cpu_backend {

/// Digit d (8 bits, 0 the lowest) of x's order bits (core::ordered_bits: for integers the sign
/// bit flipped, as the GPU's radix sorts and the index intervals' sort take them).
template <class T>
GSEARCH_FORCEINLINE unsigned radix_digit(T x, int d) {
  return unsigned(core::ordered_bits(x) >> (8 * d)) & 0xffu;
}

/// out[0, n) = keys sorted stably by key order, out_values (when values) the values in the same
/// order. `min_per_thread`: elements per thread below which one thread does it.
template <class T>
void radix_sort(int threads, const T* keys, int64_t n, const int64_t* values, T* out, int64_t* out_values,
                int64_t min_per_thread) {
  constexpr int digits = int(sizeof(T));
  static_assert(std::is_integral_v<T>, "radix_sort: integer keys");
  if (n <= 0) return;
  if (!out_values) values = nullptr;  // (merge_sort's rule: keys alone)
  const int workers = thread_count(threads, n, min_per_thread);
  const int64_t chunk = (n + workers - 1) / workers;
  const auto begin = [&](int64_t w) { return std::min(n, w * chunk); };
  using counts = std::array<int64_t, 256>;

  // The digits that sort: one count of every digit of every key.
  std::vector<std::array<counts, digits>> hist(static_cast<size_t>(workers));
  parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      auto& h = hist[size_t(w)];
      for (auto& c : h) c.fill(0);
      for (int64_t i = begin(w); i < begin(w + 1); ++i)
        for (int d = 0; d < digits; ++d) ++h[size_t(d)][radix_digit(keys[i], d)];
    }
  });
  std::vector<int> passes;
  for (int d = 0; d < digits; ++d) {
    int64_t most = 0;
    for (int b = 0; b < 256; ++b) {
      int64_t c = 0;
      for (const auto& h : hist) c += h[size_t(d)][size_t(b)];
      most = std::max(most, c);
    }
    if (most < n) passes.push_back(d);
  }
  if (passes.empty()) {  // every key the same: already in order
    std::memcpy(out, keys, size_t(n) * sizeof(T));
    if (values) std::memcpy(out_values, values, size_t(n) * sizeof(int64_t));
    return;
  }

  // Ping-pong so that the last pass writes out: an odd count of passes starts in out.
  std::vector<T> scratch_keys(static_cast<size_t>(n));
  std::vector<int64_t> scratch_values(values ? static_cast<size_t>(n) : 0);
  const bool odd = passes.size() % 2 == 1;
  T* dst_k = odd ? out : scratch_keys.data();
  int64_t* dst_v = odd ? out_values : scratch_values.data();
  T* other_k = odd ? scratch_keys.data() : out;
  int64_t* other_v = odd ? scratch_values.data() : out_values;
  const T* src_k = keys;
  const int64_t* src_v = values;
  if (odd && (out == keys || (values && out_values == values))) {  // in place: pass 0 reads a copy
    std::memcpy(scratch_keys.data(), keys, size_t(n) * sizeof(T));
    if (values) std::memcpy(scratch_values.data(), values, size_t(n) * sizeof(int64_t));
    src_k = scratch_keys.data();
    src_v = values ? scratch_values.data() : nullptr;
  }
  std::vector<counts> start(static_cast<size_t>(workers));
  for (size_t p = 0; p < passes.size(); ++p) {
    const int d = passes[p];
    if (p > 0) {  // the chunks' counts of this digit in the order the last pass left
      parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
        for (int64_t w = w0; w < w1; ++w) {
          auto& c = hist[size_t(w)][size_t(d)];
          c.fill(0);
          for (int64_t i = begin(w); i < begin(w + 1); ++i) ++c[radix_digit(src_k[i], d)];
        }
      });
    }
    int64_t at = 0;
    for (int b = 0; b < 256; ++b)
      for (int w = 0; w < workers; ++w) {
        start[size_t(w)][size_t(b)] = at;
        at += hist[size_t(w)][size_t(d)][size_t(b)];
      }
    parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
      for (int64_t w = w0; w < w1; ++w) {
        counts next = start[size_t(w)];
        for (int64_t i = begin(w); i < begin(w + 1); ++i) {
          const int64_t to = next[radix_digit(src_k[i], d)]++;
          dst_k[to] = src_k[i];
          if (src_v) dst_v[to] = src_v[i];
        }
      }
    });
    src_k = dst_k;
    src_v = values ? dst_v : nullptr;
    std::swap(dst_k, other_k);
    std::swap(dst_v, other_v);
  }
}

}  // namespace gsearch::cpu_backend
