#pragma once
/// \file
/// The sort-merge joins on the GPU, in the arithmetic of core/join.hpp: two sorted searches per
/// side (merge path, sorted_search_kernel.cuh) give each row's matches, exclusive scans of the
/// row weights give the positions, and a load-balanced expansion writes the left rows' outputs:
/// the merge of the left rows' output ends SL[i + 1] with the output counter u = 0, 1, ... is cut
/// into equal tiles by Merge Path, so a left row that owns a million outputs is spread over many
/// blocks and a run of rows with none costs one step each (moderngpu's load-balancing search).

#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/join.hpp"
#include "gsearch/core/merge_path.hpp"
#include "merge/cuda/merge_kernel.cuh"

namespace gsearch::cuda_backend {

/// Row i's matches, rows [first, first + count) of the other side (of `other` rows), from its
/// two sorted searches lo and hi, kept within [0, other]. A no-op on sorted inputs; on unsorted
/// ones (check_sorted off) the searches' results are unspecified, down to a query left
/// unwritten, and every index the join derives from them must still be in bounds. The weights
/// are then never negative, so the scans the expansion merges stay sorted.
struct row_matches {
  int64_t first, count;
};
__device__ __forceinline__ row_matches matches_of(const int64_t* lo, const int64_t* hi, int64_t i,
                                                  int64_t other) {
  const int64_t first = min(max(lo[i], int64_t{0}), other);
  return {first, min(max(hi[i], first), other) - first};
}

/// weights[i] = the outputs of row i (left: join_left_weight; right: join_right_weight) from its
/// matches [lo, hi) among the `other` rows of the other side, weights[n] = 0: scanned in place
/// afterwards.
template <bool Left>
__global__ void join_weights_kernel(join_kind kind, const int64_t* lo, const int64_t* hi,
                                    int64_t n, int64_t other, int64_t* weights) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > n) return;
  if (i == n) {
    weights[n] = 0;
    return;
  }
  const int64_t matches = matches_of(lo, hi, i, other).count;
  weights[i] = Left ? core::join_left_weight(kind, matches) : core::join_right_weight(kind, matches);
}

/// The left rows' output ends, SL[i + 1], as a sorted list; and the output counter.
struct row_ends {
  const int64_t* scan;
  __device__ int64_t operator()(int64_t i) const { return scan[i + 1]; }
};
struct counter {
  __device__ int64_t operator()(int64_t u) const { return u; }
};

/// row_splits[t] = the left rows that end before tile t's first diagonal of the merge of the row
/// ends with the outputs 0 .. total - 1.
__global__ void join_partition_kernel(const int64_t* left_scan, int64_t nl, int64_t total,
                                             int64_t tile, int64_t tiles, int64_t* row_splits) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tiles) return;
  row_splits[t] = core::merge_path(row_ends{left_scan}, nl, counter{}, total, t * tile);
}

/// One tile of the expansion per block: each output u of a left row i goes to u + SR[lo_i]
/// (right_scan null: no right rows are written, so u itself), as (i, its right match or -1).
template <int Threads, int Items>
__global__ __launch_bounds__(Threads) void join_expand_kernel(
    const int64_t* lo, const int64_t* hi, const int64_t* left_scan, int64_t nl, int64_t nr,
    const int64_t* right_scan, int64_t total, const int64_t* row_splits, int64_t tiles,
    int64_t* left_out, int64_t* right_out) {
  constexpr int tile = Threads * Items;
  __shared__ int64_t ends[tile];
  const int64_t t = blockIdx.x;
  const int64_t d0 = t * tile, d1 = min(d0 + tile, nl + total);
  // The row ends are a scan of weights that are never negative, so the splits are in order;
  // made monotone all the same, as every merge-like tile is (core::monotone_range).
  const int64_t r_start = row_splits[t], r_end = t + 1 < tiles ? row_splits[t + 1] : nl;
  const auto range = core::monotone_range(r_start, d0 - r_start, r_end, d1 - r_end);
  const int64_t r0 = range.a0, u0 = range.b0;
  const int rows = int(range.a1 - r0), count = int(d1 - d0), outputs = count - rows;
  stage_two_slices<Threads, Items>(ends, left_scan + r0 + 1, rows, left_scan, rows);  // B empty
  __syncthreads();

  const auto es = [&](int i) { return ends[i]; };
  const auto us = [&](int j) { return u0 + j; };
  const int diag = min(int(threadIdx.x) * Items, count);
  const int p = core::merge_path(es, rows, us, outputs, diag);
  core::serial_merge_unrolled<Items>(es, rows, us, outputs, p, diag - p,
                                     [&](int k, bool row_end, int j, int64_t) {
    if (row_end || diag + k >= count) return;
    // Before this step diag + k elements were taken, j of them outputs: the rest are row ends.
    const int64_t row = r0 + (diag + k - j), u = u0 + j;
    const auto [first, matches] = matches_of(lo, hi, row, nr);  // as its weight counted them
    const int64_t at = u + (right_scan ? right_scan[first] : 0);
    left_out[at] = row;
    if (right_out) right_out[at] = core::join_right_index(first, matches, u - left_scan[row]);
  });
}

/// The right rows kept unmatched (right and full joins): (-1, j) at SR[j] + SL[rl_j] (rl_j kept
/// within [0, nl], as matches_of keeps it).
__global__ void join_right_rows_kernel(const int64_t* rl, const int64_t* right_scan,
                                              int64_t nr, const int64_t* left_scan, int64_t nl,
                                              int64_t* left_out, int64_t* right_out) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= nr || right_scan[j + 1] == right_scan[j]) return;
  const int64_t at = right_scan[j] + left_scan[min(max(rl[j], int64_t{0}), nl)];
  left_out[at] = -1;
  right_out[at] = j;
}

}  // namespace gsearch::cuda_backend
