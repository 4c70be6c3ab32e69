#pragma once
/// \file
/// The CUDA backend of index intervals, as the public layer sees it: host-compilable
/// declarations, defined in src/cuda/index_intervals.cu (never called without CUDA:
/// src/backend.hpp). The same names and contracts as detail/cpu/index_intervals.hpp, with the
/// data in device memory and the first argument the stream; the calls that return host values
/// wait for the stream.

#include <cstdint>

#include "gsearch/core/index_intervals.hpp"

struct CUstream_st;

namespace gsearch::cuda_backend {

/// One improve of the piece data[0, n) (n >= 1; splitter: a host value, or null for the median
/// of three members), a stable three-way partition in place: in one block with the piece in
/// shared memory when n <= intervals_block_cells<T>() (the seed's Table 1 setting), else a
/// counting pass, a scan of the tiles' counts and a scatter pass into scratch memory, copied back.
/// Waits for the counts.
template <class T>
core::split_counts<T> intervals_improve(CUstream_st* stream, T* data, int64_t n, const T* splitter);

/// Sorts the pieces (all of data[0, n), in order, `count` of them) in place: one segmented radix
/// sort of core::ordered_bits over every piece (the settled ones come out as they were). Enqueued.
template <class T>
void intervals_sort(CUstream_st* stream, T* data, int64_t n, const index_interval* pieces, int64_t count);

/// data[position], read back (waits).
template <class T>
T intervals_read(CUstream_st* stream, const T* data, int64_t position);

/// The first position in [lo, hi) of the sorted data whose element is not before v (hi if none):
/// one thread's binary search, its answer read back (waits).
template <class T>
int64_t intervals_lower_bound(CUstream_st* stream, const T* data, int64_t lo, int64_t hi, T v);

/// dst[0, n) = src[0, n), device to device (enqueued).
template <class T>
void intervals_copy(CUstream_st* stream, T* dst, const T* src, int64_t n);

/// host[0, n) = data[0, n) (waits).
template <class T>
void intervals_to_host(CUstream_st* stream, T* host, const T* data, int64_t n);

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
