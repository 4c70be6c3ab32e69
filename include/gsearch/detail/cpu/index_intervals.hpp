#pragma once
/// \file
/// The CPU backend of index intervals (src/cpu/index_intervals.cpp, instantiated for every key
/// type): the improve step on a piece of the array, the sort of unsettled pieces, and the small
/// reads the public layer needs. The same names and arguments as detail/cuda/index_intervals.hpp,
/// first argument the thread count; arguments are checked by src/index_intervals.cpp.

#include <cstdint>

#include "gsearch/core/index_intervals.hpp"

namespace gsearch::cpu_backend {

/// The thresholds of this file (kept here rather than in tuning.hpp while that file is being
/// edited for selection; move them there with the next measurement). PROVISIONAL: chosen, not
/// measured.
namespace intervals_tuning {
/// Elements per thread below which the three-way partition runs on one thread: a thread costs
/// microseconds to wake, a serial pass over 2^16 elements about 100 us.
inline constexpr int64_t min_partition_per_thread = int64_t{1} << 16;
/// Pieces at least this long are sorted by the parallel merge sort, one at a time; shorter ones
/// by std::sort, many pieces per thread.
inline constexpr int64_t parallel_sort_piece = int64_t{1} << 16;
}  // namespace intervals_tuning

/// One improve of the piece data[0, n) (n >= 1): splitter = *splitter, or, when it is null, the
/// median of three members (core::choose_splitter); a stable three-way partition in place (the
/// members before the splitter, then those equal to it, then those after it, each in their
/// order), through a scratch copy. Returns the splitter and the counts.
template <class T>
core::split_counts<T> intervals_improve(int threads, T* data, int64_t n, const T* splitter);

/// Sorts every unsettled one of the `count` pieces (all the pieces of data[0, n), in order) in
/// place by core::ordered_bits (the key order; equal keys as the GPU orders them); settled pieces
/// are sorted already and left alone.
template <class T>
void intervals_sort(int threads, T* data, int64_t n, const index_interval* pieces, int64_t count);

/// data[position].
template <class T>
T intervals_read(int threads, const T* data, int64_t position);

/// The first position in [lo, hi) of the sorted data whose element is not before v (hi if none).
template <class T>
int64_t intervals_lower_bound(int threads, const T* data, int64_t lo, int64_t hi, T v);

/// dst[0, n) = src[0, n), both in the backend's memory (the owned copy of the data).
template <class T>
void intervals_copy(int threads, T* dst, const T* src, int64_t n);

/// host[0, n) = data[0, n) (the invariant checker's copy; on the CPU the same as intervals_copy).
template <class T>
void intervals_to_host(int threads, T* host, const T* data, int64_t n);

}  // namespace gsearch::cpu_backend
