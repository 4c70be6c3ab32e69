#pragma once
/// \file
/// Multiset set operations on the GPU by Balanced Path (seeds/002), in one pass: a partition
/// kernel finds where each tile's first diagonal crosses A and B (core::balanced_path, one thread
/// per tile); one block per tile stages its slices in shared memory, each thread finds its own
/// Balanced Path split there, runs its set operation into registers
/// (core::serial_set_op_unrolled) and counts its outputs, and the block scans the
/// counts; the tile's offset in the output comes from the tiles before it by decoupled look-back
/// (CUB's ScanTileState, as in cub::DeviceSelect), so the inputs are read once and the result
/// written once. The threads then put their outputs in shared memory at their offsets, and the
/// block writes its part of the result coalesced. Without an output (the size query) a
/// block adds its count to one total instead.

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/std/functional>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gsearch/core/merge_path.hpp"
#include "gsearch/core/set_ops.hpp"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "merge/cuda/merge_kernel.cuh"
#include "cuda/stream_buffer.cuh"

namespace gsearch::cuda_backend {

using set_tile_state = cub::ScanTileState<int64_t>;

/// a_splits[t], b_splits[t] = the elements of A and B before tile t, t < tiles; and the tile
/// states' initialisation (tile_state may be empty: the size query needs none).
template <class T>
__global__ void set_partition_kernel(const T* a, int64_t na, const T* b, int64_t nb,
                                     int64_t tile, int64_t tiles, int64_t* a_splits,
                                     int64_t* b_splits, set_tile_state tile_state,
                                     bool init_tile_state) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (init_tile_state) tile_state.InitializeStatus(int(tiles));
  if (t >= tiles) return;
  const int64_t d = t * tile;
  const auto split = core::balanced_path(global_reader<T>{a}, na, global_reader<T>{b}, nb, d);
  a_splits[t] = split.a_index;
  b_splits[t] = d - split.a_index + int64_t(split.star);
}

/// One tile per block; Write: the result into out and the total into *total (by the last
/// tile); else only the total, summed with an atomic add.
template <int Threads, int Items, set_op Op, bool Write, int MinBlocks, class T>
__global__ __launch_bounds__(Threads, MinBlocks) void set_op_kernel(const T* a, int64_t na, const T* b,
                                                         int64_t nb, const int64_t* a_splits,
                                                         const int64_t* b_splits, int64_t tiles,
                                                         set_tile_state tile_state, T* out,
                                                         int64_t* total) {
  constexpr int tile = Threads * Items + 1;  // a starred split may add one element of B
  using block_scan = cub::BlockScan<int, Threads>;
  using block_reduce = cub::BlockReduce<int, Threads>;
  using prefix_op = cub::TilePrefixCallbackOp<int64_t, ::cuda::std::plus<>, set_tile_state>;
  // The staged inputs (and a spare slot: the padded serial loop reads one past B); once every
  // thread holds its outputs in registers, the same memory takes the tile's result.
  __shared__ T staged[tile + 1];
  T* const result = staged;
  __shared__ int thread_a[Threads + 1], thread_b[Threads + 1];
  __shared__ union {
    typename block_scan::TempStorage scan;
    typename block_reduce::TempStorage reduce;
  } temp;
  __shared__ typename prefix_op::TempStorage prefix_temp;
  __shared__ int64_t tile_offset;

  const int64_t t = blockIdx.x;
  // The tile's slices, made monotone (core::monotone_range; a no-op on sorted inputs): on
  // unsorted ones, with the check off, the next tile's split may lie before this one's, and the
  // slices would be negative. Clamped, the tile holds (d1 + star1) - (d0 + star0) <= tile
  // elements, so the staged array holds them.
  const auto range = core::monotone_range(a_splits[t], b_splits[t],
                                          t + 1 < tiles ? a_splits[t + 1] : na,
                                          t + 1 < tiles ? b_splits[t + 1] : nb);
  const int64_t a0 = range.a0, b0 = range.b0;
  const int ta = int(range.a1 - a0), tb = int(range.b1 - b0), count = ta + tb;
  stage_two_slices<Threads, Items + 1>(staged, a + a0, ta, b + b0, count);
  __syncthreads();

  // This thread's slice of the tile: Balanced Path at its diagonal, the end from the next one.
  const auto as = [&](int i) { return staged[i]; };
  const auto bs = [&](int j) { return staged[ta + j]; };
  const int diag = min(int(threadIdx.x) * Items, count);
  const auto split = core::balanced_path(as, ta, bs, tb, diag);
  thread_a[threadIdx.x] = split.a_index;
  thread_b[threadIdx.x] = diag - split.a_index + int(split.star);
  if (threadIdx.x == 0) {
    thread_a[Threads] = ta;
    thread_b[Threads] = tb;
  }
  __syncthreads();
  // Made monotone as the tile's (the same rule): then the threads' slices tile the tile, so their
  // outputs fit the staged array they go back through.
  const auto slice = core::monotone_range(thread_a[threadIdx.x], thread_b[threadIdx.x],
                                          thread_a[threadIdx.x + 1], thread_b[threadIdx.x + 1]);
  // A thread's slice holds at most Items + 1 elements (a starred split at its end): its outputs
  // stay in registers, by step, until the block knows where they go.
  constexpr int steps = Items + 1;
  T r[steps];
  unsigned taken = 0;
  core::serial_set_op_unrolled<steps, Op, true>(as, slice.a0, slice.a1, bs, slice.b0, slice.b1,
                                                [&](int k, T key) {
                                                  r[k] = key;
                                                  taken |= 1u << k;
                                                });
  const int n = __popc(taken);

  if constexpr (!Write) {
    const int tile_count = block_reduce(temp.reduce).Sum(n);
    if (threadIdx.x == 0)
      atomicAdd(reinterpret_cast<unsigned long long*>(total), (unsigned long long)tile_count);
  } else {
    int offset, tile_count;
    // The block aggregate needs every thread's count, so the scan's own barrier comes after every
    // thread's serial loop: the staged inputs are all read, and `result` may take their place
    // without another barrier.
    block_scan(temp.scan).ExclusiveSum(n, offset, tile_count);
    if (t == 0) {
      if (threadIdx.x == 0) {
        if (tiles > 1) tile_state.SetInclusive(0, tile_count);
        tile_offset = 0;
      }
    } else if (threadIdx.x < 32) {
      // The look-back: the first warp waits for the tiles before this one, while the other warps
      // put their outputs in place below.
      prefix_op prefix(tile_state, prefix_temp, ::cuda::std::plus<>{}, int(t));
      const int64_t before = prefix(int64_t(tile_count));
      if (threadIdx.x == 0) tile_offset = before;
    }
    // The outputs into shared memory at the thread's offset in the tile.
    for (int k = 0; k < steps; ++k)
      if (taken >> k & 1) result[offset++] = r[k];
    __syncthreads();
    const int64_t base = tile_offset;
    if (threadIdx.x == 0 && t + 1 == tiles) *total = base + tile_count;
    // The result stops at the operation's bound, which sorted inputs never pass. Unsorted ones
    // can: the tiles' slices add up to na + nb elements, but on their own the A slices may add up
    // to more than na (and the B slices to more than nb), so an intersection or a difference
    // could count more than it may write. (run_set_op cuts the total the same way.)
    const int64_t room = min(int64_t(tile_count), core::set_op_bound(Op, na, nb) - base);
    for (int idx = threadIdx.x; idx < room; idx += Threads) out[base + idx] = result[idx];
  }
}

/// The set operation in tiles of Threads * Items diagonals into out, or its size only (out null);
/// returns the size (waits for it). Temporary memory: 32 bytes per tile, stream-ordered.
/// MinBlocks: the tile kernel's __launch_bounds__ minimum of resident blocks per SM (0: none).
template <int Threads, int Items, int MinBlocks = 0, class T>
int64_t run_set_op(cudaStream_t stream, set_op op, const T* a, int64_t na, const T* b, int64_t nb,
                   T* out) {
  if (na + nb == 0) return 0;
  constexpr int64_t tile = int64_t(Threads) * Items;
  constexpr int partition_threads = 256;
  const int64_t tiles = (na + nb + tile - 1) / tile;
  const bool write = out != nullptr;
  size_t state_bytes = 0;
  if (write) GSEARCH_CUDA_CHECK(set_tile_state::AllocationSize(int(tiles), state_bytes));
  // One allocation: the total, A's and B's splits, the tile states.
  const size_t split_bytes = size_t(tiles) * sizeof(int64_t);
  stream_buffer temp(stream, 256 + 2 * split_bytes + state_bytes);
  auto* base = static_cast<char*>(temp.get());
  auto* total = reinterpret_cast<int64_t*>(base);
  auto* a_splits = reinterpret_cast<int64_t*>(base + 256);
  auto* b_splits = reinterpret_cast<int64_t*>(base + 256 + split_bytes);
  set_tile_state state;
  if (write) GSEARCH_CUDA_CHECK(state.Init(int(tiles), base + 256 + 2 * split_bytes, state_bytes));
  if (!write) GSEARCH_CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(int64_t), stream));

  launch(set_partition_kernel<T>, (tiles + partition_threads - 1) / partition_threads, partition_threads, 0, stream,
         a, na, b, nb, tile, tiles, a_splits, b_splits, state, write);
  core::visit_set_op(op, [&]<set_op Op>() {
    auto kernel = write ? set_op_kernel<Threads, Items, Op, true, MinBlocks, T>
                        : set_op_kernel<Threads, Items, Op, false, MinBlocks, T>;
    launch(kernel, tiles, Threads, 0, stream, a, na, b, nb, a_splits, b_splits, tiles, state, out, total);
  });
  int64_t size = 0;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&size, total, sizeof(size), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return std::min(size, core::set_op_bound(op, na, nb));  // as the kernel cuts what it writes
}

}  // namespace gsearch::cuda_backend
