#pragma once
/// \file
/// Index intervals' backends: each operation once for the CPU (the handle: its thread count) and
/// CUDA (the stream), defined in cpu.cpp and cuda/index_intervals.cu (src/backend_ops.hpp):
/// the improve step on a piece of the array, the sort of unsettled pieces, and the small reads
/// the public layer needs. Arguments are checked by api.cpp. On CUDA the data is in device
/// memory; the reads wait for their answer, the rest is enqueued.
///
///   intervals_improve      one improve of the piece data[0, n) (n >= 1): splitter = *splitter,
///                          or, when it is null, the median of three members
///                          (core::choose_splitter); a stable three-way partition in place (the
///                          members before the splitter, then those equal to it, then those after
///                          it, each in their order), through a scratch copy. Returns the
///                          splitter and the counts
///   intervals_sort         sorts every unsettled one of the `count` pieces (all the pieces of
///                          data[0, n), in order) in place by core::ordered_bits (the key order;
///                          equal keys ordered alike on both backends); settled pieces are sorted
///                          already and left alone
///   intervals_read         data[position]
///   intervals_lower_bound  the first position in [lo, hi) of the sorted data whose element is
///                          not before v (hi if none)
///   intervals_copy         dst[0, n) = src[0, n), both in the backend's memory (the owned copy)
///   intervals_to_host      host[0, n) = data[0, n) (the invariant checker's copy)

#include <cstdint>

#include "backend_ops.hpp"
#include "gsearch/core/index_intervals.hpp"

#define GSEARCH_INDEX_INTERVALS_OPS(X, T)                                                              \
  X(T, core::split_counts<T>, intervals_improve, (T* data, int64_t n, const T* splitter))             \
  X(T, void, intervals_sort, (T* data, int64_t n, const index_interval* pieces, int64_t count))       \
  X(T, T, intervals_read, (const T* data, int64_t position))                                            \
  X(T, int64_t, intervals_lower_bound, (const T* data, int64_t lo, int64_t hi, T v))                    \
  X(T, void, intervals_copy, (T* dst, const T* src, int64_t n))                                        \
  X(T, void, intervals_to_host, (T* host, const T* data, int64_t n))

GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_INDEX_INTERVALS_OPS)

namespace gsearch::cpu_backend::intervals_tuning {
/// The CPU's thresholds. PROVISIONAL: chosen, not measured.
/// Elements per thread below which the three-way partition runs on one thread: a thread costs
/// microseconds to wake, a serial pass over 2^16 elements about 100 us.
inline constexpr int64_t min_partition_per_thread = int64_t{1} << 16;
/// Pieces at least this long are sorted by the parallel merge sort, one at a time; shorter ones
/// by std::sort, many pieces per thread.
inline constexpr int64_t parallel_sort_piece = int64_t{1} << 16;
}  // namespace gsearch::cpu_backend::intervals_tuning

namespace gsearch::cuda_backend {

// --- for the benchmark (bench/index_intervals) ------------------------------------------------

/// The most elements the one-block improve takes for T on the current device: its compiled tile
/// (threads x items), less when the device's shared memory per block holds fewer (two copies).
template <class T>
int64_t intervals_block_cells();

/// The clock of one in-kernel improve: SM cycles (clock64) and nanoseconds (%globaltimer) from
/// the piece being in shared memory to its partition being there (splitter, compare, the fold of
/// the counts, scatter), as thread 0 of the block saw them.
struct improve_clock {
  int64_t cycles = 0;
  int64_t ns = 0;
};

/// intervals_improve in one block (n <= intervals_block_cells<T>()), timed inside the kernel.
template <class T>
core::split_counts<T> intervals_improve_in_block_timed(CUstream_st* stream, T* data, int64_t n, const T* splitter,
                                                       improve_clock* clock);

}  // namespace gsearch::cuda_backend
