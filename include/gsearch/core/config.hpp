#pragma once
/// \file
/// Compiler glue shared by every layer: the host/device qualifier and the warp width.

#include <cstdint>

#if defined(__CUDACC__)
#define GSEARCH_HD __host__ __device__
#define GSEARCH_FORCEINLINE __forceinline__
#else
#define GSEARCH_HD
#define GSEARCH_FORCEINLINE inline __attribute__((always_inline))
#endif

// Full unrolling of the fixed-length stage-2 loops: in nvcc's device pass, and under plain g++
// (nvcc's host pass gets nothing: its front end rejects GCC's pragma).
#if defined(__CUDA_ARCH__)
#define GSEARCH_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define GSEARCH_UNROLL
#elif defined(__GNUC__) && !defined(__clang__)
#define GSEARCH_UNROLL _Pragma("GCC unroll 32")
#else
#define GSEARCH_UNROLL
#endif

namespace gsearch {

/// Threads per warp, and number of shared-memory banks the algorithms are designed for (w in
/// the paper). The per-lane algorithms take the lane number; the padding of the staged keys is
/// `warp_width` sentinels at each end.
inline constexpr int warp_width = 32;

/// Bytes in one row of shared-memory banks (32 banks of 4 bytes on every NVIDIA GPU since
/// Maxwell): keys whose indices differ by a multiple of bank_row_keys<T>() share a bank.
inline constexpr int bank_row_bytes = 128;
template <class T>
GSEARCH_HD constexpr int bank_row_keys() {
  return bank_row_bytes / int(sizeof(T));
}

/// ceil(log2(n)) for n >= 1; 0 for n <= 1.
GSEARCH_HD constexpr int ceil_log2(int64_t n) {
  int r = 0;
  while ((int64_t{1} << r) < n) ++r;
  return r;
}

}  // namespace gsearch
