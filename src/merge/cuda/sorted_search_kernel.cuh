#pragma once
/// \file
/// The search of sorted queries by Merge Path (seeds/002's "vectorized sorted search"): the
/// keys and the queries are merged, never written: tile t of the merge covers diagonals
/// [t * tile, (t + 1) * tile), a partition kernel finds where each starts
/// (core::sorted_search_split, one thread per tile), and one block per tile stages its slices of
/// keys and queries in shared memory, each thread finds its own split there and walks its part
/// of the merge (core::serial_merge_staged, Items steps), and the block writes its queries' ranks back
/// through shared memory, coalesced. Keys and queries are read once: O(K + Q) in all.

#include <cuda_runtime.h>

#include <cstdint>
#include <cub/block/block_scan.cuh>
#include <cuda/functional>

#include "gsearch/core/merge_path.hpp"
#include "gsearch/core/sorted_search.hpp"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/launch_gate.hpp"
#include "merge/cuda/merge_kernel.cuh"
#include "cuda/stream_buffer.cuh"

namespace gsearch::cuda_backend {

/// key_splits[t] = the keys before tile t's first diagonal, t < tiles.
template <bool Strict, class T>
__global__ void sorted_search_partition_kernel(const T* keys, int64_t k, const T* queries,
                                               int64_t q, int64_t tile, int64_t tiles,
                                               int64_t* key_splits, launch_gate gate) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tiles || gate.closed()) return;
  key_splits[t] = core::sorted_search_split<Strict>(global_reader<T>{keys}, k,
                                                    global_reader<T>{queries}, q, t * tile)
                      .k;
}

/// One tile per block. out[j] = the keys before queries[j] (minus 1 for the predecessor).
template <int Threads, int Items, bool Strict, bool Pred, class T, class Out>
__global__ __launch_bounds__(Threads) void sorted_search_kernel(const T* keys, int64_t k,
                                                                const T* queries, int64_t q,
                                                                const int64_t* key_splits,
                                                                int64_t tiles, Out* out,
                                                                launch_gate gate) {
  static_assert(Threads % 32 == 0, "whole warps: the ownership below shuffles within a warp");
  if (gate.closed()) return;
  constexpr int tile = Threads * Items;
  __shared__ T staged[tile + 1];  // the tile's keys, its queries, a spare slot (serial_merge_staged)
  __shared__ int ranks[tile];  // ranks within the tile (k0 added at the store): 4 bytes for any Out
  using block_scan = cub::BlockScan<int, Threads>;
  __shared__ typename block_scan::TempStorage scan_temp;
  const int64_t t = blockIdx.x;
  const int64_t d0 = t * tile, d1 = min(d0 + tile, k + q);
  // The tile's slices, made monotone (core::monotone_range; a no-op on sorted inputs): on
  // unsorted ones, with the check off, the next tile's split may lie before this one's, or more
  // than a tile after it, and a slice would be negative. Tiles may then overlap in the queries
  // (the results are unspecified, but in bounds), and the queries the clamp cut off are written
  // at the end, by a search of their own.
  const int64_t k_start = key_splits[t], k_end = t + 1 < tiles ? key_splits[t + 1] : k;
  const auto range = core::monotone_range(k_start, d0 - k_start, k_end, d1 - k_end);
  const int64_t k0 = range.a0, q0 = range.b0;
  const int nk = int(range.a1 - k0), count = int(d1 - d0), nq = count - nk;

  stage_two_slices<Threads, Items>(staged, keys + k0, nk, queries + q0, count);
  __syncthreads();

  const auto ks = [&](int i) { return staged[i]; };
  const auto qs = [&](int j) { return staged[nk + j]; };
  const int diag = min(int(threadIdx.x) * Items, count);
  const auto split = core::sorted_search_split<Strict>(ks, nk, qs, nq, diag);
  // One writer per query: thread i owns the queries [first[i], first[i + 1]), first being the
  // running maximum of the threads' splits (and nq after the last thread). On sorted inputs the splits are in
  // order and each thread's walk covers exactly the queries it owns, so nothing changes. On
  // unsorted ones, with the check off, two walks may reach the same query; each writes only what
  // it owns (else the two stores to one slot are a data race, which compute-sanitizer's racecheck
  // reported), and a thread fills the owned queries its walk did not reach, so that every slot is
  // written once.
  int first;
  block_scan(scan_temp).InclusiveScan(int(split.q), first, ::cuda::maximum<>{});
  // The next thread's first is max(first, its split): its split comes from the next lane, or for
  // a warp's last lane from a search of its own (no shared array and no barrier: at the largest
  // tiles of merge_sweep, a shared array would pass the 48 KB of static shared memory).
  const int lane = int(threadIdx.x) % 32;
  const int next_split = __shfl_down_sync(0xffffffffu, int(split.q), 1);
  int own_end = nq;
  if (int(threadIdx.x) + 1 < Threads) {
    own_end = max(first, lane < 31 ? next_split
                                   : int(core::sorted_search_split<Strict>(
                                             ks, nk, qs, nq, min(diag + Items, count)).q));
  }
  int unwritten = first;  // the walk visits queries in order, from split.q <= first
  // This thread's Items steps of the merge (core::serial_merge_staged: the keys are staged[0, nk)
  // and the queries staged[nk, count), ties as the split put them): the query staged[nk + j],
  // taken at step s, has diag + s - j keys of the tile before it.
  const auto rank = [&](int s, int j) {
    if (j >= first && j < own_end) {
      ranks[j] = diag + s - j;
      unwritten = j + 1;
    }
  };
  if constexpr (Strict) {  // queries first on ties: they are the merge's A
    core::serial_merge_staged<Items>(ks, nk + split.q, count, split.k, nk,
                                     [&](int s, bool is_query, int i, T) {
                                       if (is_query && diag + s < count) rank(s, i - nk);
                                     });
  } else {  // keys first on ties
    core::serial_merge_staged<Items>(ks, split.k, nk, nk + split.q, count,
                                     [&](int s, bool is_key, int i, T) {
                                       if (!is_key && diag + s < count) rank(s, i - nk);
                                     });
  }
  for (int j = unwritten; j < own_end; ++j) ranks[j] = 0;  // unsorted inputs only: any rank will do
  __syncthreads();
  // Each rank is kept within the tile's keys (the walks count keys of the tile: only a guard).
  for (int i = 0; i < Items; ++i) {
    const int idx = int(threadIdx.x) + i * Threads;
    if (idx < nq) out[q0 + idx] = Out(k0 + min(max(ranks[idx], 0), nk) - (Pred ? 1 : 0));
  }
  // The queries of this tile's own range, [d0 - k_start, d1 - k_end), that the clamp left out of
  // the staged slice (none on sorted inputs: both loops are empty). Those ranges of all tiles
  // cover every query, so every output is written, with its rank by a binary search over the
  // keys (in range; right for the query, though the keys are not sorted).
  const int64_t own0 = max(d0 - k_start, int64_t{0}), own1 = min(d1 - k_end, q);
  const auto write_alone = [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0 + threadIdx.x; j < j1; j += Threads) {
      const global_reader<T> kr{keys};
      const int64_t r = Strict ? core::lower_bound_in(kr, int64_t{0}, k, queries[j])
                               : core::upper_bound_in(kr, int64_t{0}, k, queries[j]);
      out[j] = Out(r - (Pred ? 1 : 0));
    }
  };
  write_alone(own0, min(own1, q0));
  write_alone(max(own0, q0 + nq), own1);
}

/// Enqueues the search of q sorted queries on `stream` in tiles of Threads * Items (8 bytes of
/// temporary memory per tile, stream-ordered); the kernels do their work when `gate` is open.
template <int Threads, int Items, bool Strict, bool Pred, class T, class Out>
void launch_sorted_search(cudaStream_t stream, const T* keys, int64_t k, const T* queries,
                          int64_t q, Out* out, launch_gate gate = {}) {
  constexpr int64_t tile = int64_t(Threads) * Items;
  const int64_t tiles = (k + q + tile - 1) / tile;
  stream_buffer splits(stream, size_t(tiles) * sizeof(int64_t));
  auto* key_splits = static_cast<int64_t*>(splits.get());
  constexpr int partition_threads = 256;
  launch(sorted_search_partition_kernel<Strict, T>, (tiles + partition_threads - 1) / partition_threads,
         partition_threads, 0, stream, keys, k, queries, q, tile, tiles, key_splits, gate);
  launch(sorted_search_kernel<Threads, Items, Strict, Pred, T, Out>, tiles, Threads, 0, stream, keys, k, queries, q,
         key_splits, tiles, out, gate);
}

}  // namespace gsearch::cuda_backend
