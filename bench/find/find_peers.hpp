#pragma once
// The GPU peers `find_bench` (find_bench.cu) measures beside gsearch's unsorted search,
// behind a host-compilable interface:
//   find_peers.cu      (the CUDA toolkit's CCCL, 3.0.1 with CUDA 13.0): the read-only roofline
//                      kernel, thrust::find, thrust::count, thrust::copy_if over a counting
//                      iterator (find_all), thrust::sort + thrust::binary_search (isin);
//   cub_find_peer.cu   (the newer CCCL of scripts/fetch-cccl.sh, 3.6): cub::DeviceFind::FindIf
//                      and cub::DeviceSelect::If over a counting iterator (find_all).
// Device pointers throughout; every function runs on `stream`. The thrust calls that return a
// value (find, count, copy_if's end) wait for it, as thrust must; the others only enqueue.
// Only int32_t is instantiated (the benchmark: 2^28 int32).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct CUstream_st;

namespace gsearch::bench::find_peers {

// ---- find_peers.cu: the roofline and thrust (CUDA toolkit CCCL) ------------------------------

/// A launch configuration of the read roofline: `unroll` 16-byte loads in flight per thread,
/// `blocks_per_sm` x SMs blocks of `threads` threads, grid-stride; loads through the read-only
/// path (ld.global.nc) or streaming (ld.global.cs, evict-first).
struct read_config {
  int unroll;
  int blocks_per_sm;
  int threads;
  bool streaming;
};
/// The configurations compiled in (the bench times them all; the fastest is the roofline).
std::vector<read_config> read_configs();
/// Reads `bytes` bytes (a multiple of 16, 16-byte aligned) with 16-byte loads and folds them into
/// one word per thread; writes *sink only if a thread's word equals a constant (practically
/// never), so nothing is optimized away and almost nothing is written.
void roofline_read(CUstream_st* stream, const void* data, int64_t bytes, read_config cfg, uint32_t* sink);

/// thrust::find(par_nosync.on(stream), data, data + n, value) - data, or -1 for none (waits).
template <class T>
int64_t thrust_find(CUstream_st* stream, const T* data, int64_t n, T value);
/// thrust::count(..., value) (waits).
template <class T>
int64_t thrust_count(CUstream_st* stream, const T* data, int64_t n, T value);
/// thrust::copy_if(counting_iterator(0), counting_iterator(n), data (stencil), out, == value):
/// every matching index, ascending, into out (room for n); returns how many (waits).
template <class T>
int64_t thrust_find_all(CUstream_st* stream, const T* data, int64_t n, T value, int64_t* out);
/// isin the way torch.isin does it for many test elements: copy the m test elements into
/// `scratch` (m elements), thrust::sort them, then thrust::binary_search every element:
/// out[i] = elements[i] is among tests. Enqueues only.
template <class T>
void thrust_isin(CUstream_st* stream, const T* elements, int64_t n, const T* tests, int64_t m, T* scratch,
                 bool* out);

// ---- cub_find_peer.cu: CUB from the newer CCCL ------------------------------------------------

// Without the newer CCCL (bench::new_cccl_available() false, cccl.hpp) these throw.

/// cub::DeviceFind::FindIf(temp, temp_bytes, data, out, x == value, n, stream): *out (device)
/// gets the first matching index, or n when none matches. Enqueues only.
template <class T>
size_t cub_find_if_temp_bytes(const T* data, int64_t n, int64_t* out);
template <class T>
void cub_find_if(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, int64_t n, T value,
                 int64_t* out);

/// cub::DeviceSelect::If(temp, temp_bytes, counting_iterator(0), out, count, n, data[i] == value,
/// stream): every matching index, ascending, into out (room for n), and their number into
/// *count (device). Enqueues only.
template <class T>
size_t cub_select_temp_bytes(const T* data, int64_t n, int64_t* out, int64_t* count);
template <class T>
void cub_select_indices(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, int64_t n, T value,
                        int64_t* out, int64_t* count);

}  // namespace gsearch::bench::find_peers
