#pragma once
/// \file
/// Division by a divisor fixed at launch time with a multiply and a shift (Granlund and
/// Montgomery's round-up method, as CUTLASS's FastDivmod uses): the row-batched search divides
/// every query's index by the row length to find its row, and a hardware-less 32-bit division
/// costs some twenty instructions on the GPU, more than a short row's whole search step.

#include <cstdint>

#include "gsearch/core/config.hpp"

namespace gsearch::core {

/// n / d for 0 <= n < 2^31 and 1 <= d < 2^31, exactly.
struct fast_divider {
  uint32_t divisor = 1, magic = 1, shift = 0;

  constexpr fast_divider() = default;
  GSEARCH_HD constexpr explicit fast_divider(uint32_t d) : divisor(d) {
    while ((uint32_t{1} << shift) < d) ++shift;  // ceil(log2 d)
    magic = uint32_t(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  /// The quotient: the high half of n * magic, plus n, shifted. n < 2^31 keeps the sum in 32
  /// bits (the high half is below n).
  GSEARCH_HD GSEARCH_FORCEINLINE constexpr uint32_t divide(uint32_t n) const {
    const uint32_t high = uint32_t((uint64_t(n) * magic) >> 32);
    return (high + n) >> shift;
  }
};

}  // namespace gsearch::core
