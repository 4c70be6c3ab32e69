#pragma once
/// \file
/// Execution tags: where a gsearch call runs and whose memory it reads.
///
///   gsearch::cpu                 host memory, all cores
///   gsearch::cuda                device memory, the current device, the default stream
///   gsearch::cuda.on(stream)     the same on a given stream
///
/// CUDA calls are stream-ordered: they return once the work is enqueued (see each function for
/// the options that must synchronize, such as check_sorted).

struct CUstream_st;  // the type behind cudaStream_t; declared so this header needs no CUDA

namespace gsearch {

/// The CPU backend.
struct cpu_t {
  /// Worker threads; 0 = the CPUs this process may use (its affinity and cgroup CPU quota; the
  /// pool of src/cpu/parallel.hpp: cpu_threads()). More than that splits the work as asked on the pool's threads.
  int threads = 0;
  constexpr cpu_t with_threads(int n) const { return cpu_t{n}; }
};
inline constexpr cpu_t cpu{};

/// The threads gsearch::cpu runs on when it is given none: the CPUs this process may use (its
/// affinity and cgroup CPU quota), counted once.
int cpu_threads();

/// The CUDA backend on a stream (nullptr = the legacy default stream).
struct cuda_t {
  CUstream_st* stream = nullptr;
  constexpr cuda_t on(CUstream_st* s) const { return cuda_t{s}; }
};
inline constexpr cuda_t cuda{};

}  // namespace gsearch
