#pragma once
/// \file
/// The CUDA backend's part of the distributed operations (src/dist/): stream-ordered temporary
/// memory and the per-element steps around the exchanges: routing queries to their ranks (a
/// stable partition by owner), gathering and scattering by a permutation, shifting local indices
/// to global ones. Host-compilable declarations, defined in src/cuda/dist.cu.

#include <cstdint>
#include <vector>

struct CUstream_st;

namespace gsearch::cuda_backend {

/// Device memory from gsearch's stream-ordered pool (freed with dist_free on the same stream).
void* dist_alloc(CUstream_st* stream, int64_t bytes);
void dist_free(CUstream_st* stream, void* p) noexcept;
/// cudaMemcpyAsync of any direction on `stream`; with `wait`, then waits for the stream.
void dist_copy(CUstream_st* stream, void* dst, const void* src, int64_t bytes, bool wait);

/// x[i] = start + i.
void dist_iota(CUstream_st* stream, int64_t* x, int64_t n, int64_t start);
/// x[i] += delta where x[i] >= 0 (a -1, "no row", stays -1).
void dist_shift(CUstream_st* stream, int64_t* x, int64_t n, int64_t delta);
/// rows[i] = rows[i] < 0 ? -1 : ids[rows[i]] (in place).
void dist_map_rows(CUstream_st* stream, int64_t* rows, int64_t n, const int64_t* ids);
/// dst[i] = src[idx[i]] (gather) or dst[idx[i]] = src[i] (scatter), elements of 1, 4 or 8 bytes.
void dist_gather(CUstream_st* stream, const void* src, const int64_t* idx, int64_t n, void* dst,
                 int element_bytes);
void dist_scatter(CUstream_st* stream, const void* src, const int64_t* idx, int64_t n, void* dst,
                  int element_bytes);
/// The stable partition by owner (owner[i] in [0, ranks)): perm[j] = the index of the j-th
/// element in (owner, index) order. Returns the count per owner (waits for them).
std::vector<int64_t> dist_partition(CUstream_st* stream, const int32_t* owner, int64_t n, int ranks,
                                    int64_t* perm);
/// dst[c * n + i] = src[i] for c in [0, copies): a copy of src per rank (isin's test elements).
void dist_replicate(CUstream_st* stream, const void* src, int64_t bytes, int copies, void* dst);

}  // namespace gsearch::cuda_backend
