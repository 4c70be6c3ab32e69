#pragma once
/// \file
/// The radix select's kernels (core/radix_select.hpp describes the algorithm; radix_select.cu
/// enqueues them): the window kernel (one block: a sorted sample, each rank's first range), and
/// the pass kernel (a full grid over the data or the last pass's copy: each open rank's bins, the
/// elements in any range copied out, and, in the block that finishes last, the pick that narrows
/// every range and chooses the next pass's source). The state lives in device memory, so the
/// passes follow one another without the host; a pass that finds the select done returns at once.

#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/radix_select.hpp"
#include "gsearch/core/select_plan.hpp"  // plan_status
#include "gsearch/core/selection.hpp"
#include "cuda/scan.cuh"
#include "selection/cuda/selection_kernel.cuh"  // tile_items
#include "selection/tuning.hpp"

namespace gsearch::cuda_backend {

/// The select's state between kernels. `status` is core::plan_status's: running, done (every
/// slot answered), or running still after the last pass enqueued (the caller selects otherwise).
template <class T>
struct radix_select_state {
  using U = core::radix_bits_t<T>;
  core::radix_slot<U> slot[radix_select_max_ranks];
  T value[radix_select_max_ranks];  ///< the answers, once status is done (for kernels enqueued after)
  int64_t asked[radix_select_max_ranks];  ///< the ranks asked for
  int64_t less[radix_select_max_ranks];   ///< the data's elements under each answer, once status is done
  int32_t r = 0;
  int32_t status = 0;
  int32_t source = 0;    ///< what the next pass reads: 0 the data, b > 0 copy buffer b - 1
  int32_t out = 1;       ///< the copy buffer (1, 2 or 3, never the source) it writes
  int32_t keep_first = 0;  ///< the first pass's copy (buffer 1) stays, with its positions: later passes use 2 and 3
  int32_t first_open_top = 0, first_open_bottom = 0;  ///< the first range reached the largest / smallest bits
  /// Set by the first pass's pick where keep_first: the copy holds every element of the first
  /// range (no miss, no overflow), and so every element at or beyond the rank on an open side
  /// (topk's gather reads it in place of the data: first_count elements, their positions beside).
  int32_t first_holds_top = 0, first_holds_bottom = 0;
  int64_t first_count = 0;
  int32_t count_nan = 0;  ///< the first pass counts the NaNs (floating-point keys): nan_count
  u64 nan_count = 0;
  int64_t source_n = 0;  ///< the elements of a buffer source
  u64 written = 0;       ///< elements the running pass found in a range (the first `capacity` copied)
  uint32_t blocks_done = 0;
  u64 below[radix_select_max_ranks];  ///< first pass: the data's elements under each range
  u64 least[radix_select_max_ranks];  ///< the least and the largest bits of the pass's elements
  u64 most[radix_select_max_ranks];   ///< in each range (core::radix_narrow closes the bin to them)
  u64 hist[radix_select_max_ranks][core::radix_bins];
};

/// The elements each copy buffer holds for the select of `ranks` of n: the first ranges'
/// elements, the brackets' share of the sample (bracket_of, as the window kernel takes them),
/// with select_capacity_factor's margin for the count's spread; at most half the data (a wider
/// copy costs more to write and read than a second read); a multiple of 64 (each buffer 256-byte
/// aligned).
inline int64_t radix_copy_capacity(int64_t n, const int64_t* ranks, int r) {
  const int64_t sample = 2 * int64_t(radix_window_threads);
  double share = 0;
  for (int k = 0; k < r; ++k) {
    const core::sample_bracket b = core::bracket_of(ranks[k], n, sample, radix_select_margin);
    share += double(b.hi - b.lo) / double(sample);
  }
  const int64_t capacity =
      std::min<int64_t>(n / 2, int64_t(std::ceil(select_capacity_factor * share * double(n))) + select_capacity_slack);
  return (capacity + 63) / 64 * 64;
}

/// The ranks of one select (ascending, distinct), a kernel parameter.
struct radix_ranks {
  int64_t rank[radix_select_max_ranks];
  int32_t r;
};

/// One block: the sample of 2 x Threads elements at core::sample_position, sorted (a bitonic sort
/// in shared memory, one compare-exchange a thread a step: 66 steps for 2,048 keys; the first
/// version sorted 4,096 with half the threads idle a step and took 54 us of one SM on the H200),
/// each rank's first slot, the state zeroed. A step whose pairs lie 32 places apart or less keeps
/// each warp inside its own 64 keys (thread t's pair starts at 2t - (t mod j)), so only the 15 of
/// 66 steps that cross warps, and the step before each, wait for the block; the others wait for
/// the warp (every step a block barrier took 14.5 us, ncu at 9932cb8, of a select's ~130).
template <class T, int Threads>
__global__ void __launch_bounds__(Threads, 1)
    radix_window_kernel(const T* __restrict__ data, int64_t n, radix_ranks ranks,
                        radix_select_state<T>* __restrict__ st, bool keep_first, bool count_nan) {
  using U = core::radix_bits_t<T>;
  constexpr int S = 2 * Threads;
  static_assert((S & (S - 1)) == 0, "the bitonic sort takes a power of two");
  __shared__ U sample[S];
  const int t = threadIdx.x;
  const U first = core::radix_bits(data[core::sample_position(t, S, n)]);
  const U second = core::radix_bits(data[core::sample_position(t + Threads, S, n)]);
  sample[t] = first;
  sample[t + Threads] = second;
  __syncthreads();
  for (int k = 2; k <= S; k *= 2)
    for (int j = k / 2; j > 0; j /= 2) {
      const int i = 2 * t - (t & (j - 1)), p = i + j;  // the t-th pair (i, i + j), bit j of i clear
      const U a = sample[i], b = sample[p];
      if ((a > b) == ((i & k) == 0)) {
        sample[i] = b;
        sample[p] = a;
      }
      // This step wrote across warps (j >= 64), or the next one reads across them (the next
      // stage's first step, j = k, after this stage's last, j = 1).
      if (j >= 64 || (j == 1 && k >= 64))
        __syncthreads();
      else
        __syncwarp();
    }
  if (int(threadIdx.x) < ranks.r) {
    st->slot[threadIdx.x] =
        core::radix_first_slot(sample, S, ranks.rank[threadIdx.x], n, radix_select_margin);
    st->asked[threadIdx.x] = ranks.rank[threadIdx.x];
  }
  for (int i = threadIdx.x; i < ranks.r * core::radix_bins; i += Threads) (&st->hist[0][0])[i] = 0;
  if (threadIdx.x < radix_select_max_ranks) {
    st->below[threadIdx.x] = 0;
    st->least[threadIdx.x] = ~u64(0);
    st->most[threadIdx.x] = 0;
  }
  if (threadIdx.x == 0) {
    st->r = ranks.r;
    st->status = int32_t(core::plan_status::running);
    st->source = 0;
    st->out = 1;
    st->keep_first = keep_first;
    st->first_open_top = st->slot[0].range.hi == U(~U(0));  // thread 0 wrote slot 0 above
    st->first_open_bottom = st->slot[0].range.lo == U(0);
    st->first_holds_top = st->first_holds_bottom = 0;
    st->first_count = 0;
    st->count_nan = count_nan;
    st->nan_count = 0;
    st->source_n = 0;
    st->written = 0;
    st->blocks_done = 0;
  }
}

/// The pick, in the block that finished a pass last: each open slot's bin from the counts (a
/// block scan over the bins), narrowed (or, first pass only, missed), the counts zeroed for the
/// next pass, and the next source: this pass's copy when every rank stayed inside its range and
/// the copy held all of the ranges' elements, else the data.
template <class T, int Threads>
__device__ void radix_pick_block(radix_select_state<T>* st, int64_t capacity, bool first) {
  using U = core::radix_bits_t<T>;
  constexpr int per = core::radix_bins / Threads;
  static_assert(per * Threads == core::radix_bins, "each thread scans as many bins");
  using scan_t = cub::BlockScan<u64, Threads, cub::BLOCK_SCAN_WARP_SCANS>;  // small: the pass's ring needs the room
  __shared__ typename scan_t::TempStorage scan_temp;
  __shared__ int inside;
  if (threadIdx.x == 0) inside = 1;
  const int r = st->r;
  for (int k = 0; k < r; ++k) {
    core::radix_slot<U> slot = st->slot[k];
    if (slot.done) continue;  // uniform
    const int64_t below = first ? int64_t(__ldcg(&st->below[k])) : 0;
    u64 c[per], sum = 0;
    GSEARCH_UNROLL
    for (int i = 0; i < per; ++i) sum += c[i] = __ldcg(&st->hist[k][threadIdx.x * per + i]);
    u64 before = 0, total = 0;
    scan_t(scan_temp).ExclusiveSum(sum, before, total);
    const int64_t want = slot.rank - below;
    if (slot.rank >= below && want < int64_t(total)) {
      if (int64_t(before) <= want && want < int64_t(before + sum)) {  // one thread: the rank's bins
        int b = -1;
        u64 at = before;
        GSEARCH_UNROLL
        for (int i = 0; i < per; ++i) {
          const bool here = b < 0 && int64_t(at + c[i]) > want;
          b = here ? int(threadIdx.x) * per + i : b;
          at += b < 0 ? c[i] : 0;
        }
        core::radix_narrow(slot, b, below + int64_t(at), U(__ldcg(&st->least[k])), U(__ldcg(&st->most[k])));
        st->slot[k] = slot;
      }
    } else if (threadIdx.x == 0) {
      core::radix_miss(slot, below, int64_t(total));
      st->slot[k] = slot;
      inside = 0;
    }
    __syncthreads();  // the counts are read (and scan_temp free) before they are zeroed
    GSEARCH_UNROLL
    for (int i = 0; i < per; ++i) st->hist[k][threadIdx.x * per + i] = 0;
    if (threadIdx.x == 0) {
      st->below[k] = 0;
      st->least[k] = ~u64(0);
      st->most[k] = 0;
    }
  }
  __syncthreads();  // every slot written (global writes of this block are seen after the barrier)
  if (threadIdx.x == 0) {
    bool done = true;
    for (int k = 0; k < r; ++k) done = done && st->slot[k].done;
    const u64 written = st->written;
    if (first && st->keep_first) {
      const bool whole = inside && int64_t(written) <= capacity;
      st->first_holds_top = whole && st->first_open_top;
      st->first_holds_bottom = whole && st->first_open_bottom;
      st->first_count = int64_t(written);
    }
    if (inside && int64_t(written) <= capacity) {
      st->source = st->out;
      st->source_n = int64_t(written);
    } else {
      st->source = 0;  // a miss, or a copy that overflowed: the data holds every range's elements
    }
    // Neither the source nor, where kept, the first pass's copy.
    st->out = st->keep_first ? (st->source == 2 ? 3 : 2) : (st->source == 1 ? 2 : 1);
    st->written = 0;
    st->blocks_done = 0;
    if (done)  // a slot's rank is its rank among its range's elements: here, those equal to the answer
      for (int k = 0; k < r; ++k) {
        st->value[k] = core::from_radix_bits<T>(st->slot[k].range.lo);
        st->less[k] = st->asked[k] - st->slot[k].rank;
      }
    st->status = int32_t(done ? core::plan_status::done : core::plan_status::running);
  }
}

/// The pass kernel's dynamic shared memory for r slots: their counts, each warp's stage (and,
/// where the pass copies positions, their 32-bit positions), the tile ring.
template <class T, int Threads, int Loads, int Stages>
constexpr int64_t radix_pass_shared_bytes(int r, bool positions) {
  return int64_t(r) * core::radix_bins * 4 +
         (Threads / 32) * radix_stage * int64_t(sizeof(T) + (positions ? sizeof(uint32_t) : 0)) +
         tile_ring<T, Threads, Loads, Stages>::bytes;
}

/// Parts of the pass left out, for bench/selection/radix_probe.cu alone (the library's passes
/// have none): what each part of the first pass costs, measured by its absence.
/// (No probe of the ring alone: with the loop's body a `continue` after the take, the pass ended
/// in cudaErrorIllegalInstruction on the H200, at a cp.async; radix_probe.cu's header.)
enum radix_probe : int {
  radix_probe_no_members = 2,  ///< no tile has members (the compares and the counts below stay)
  radix_probe_no_end = 4,      ///< no block adds its counts to the pass's, and no pick
};

/// One pass, for up to R slots: the source (the data, or the copy `buffers + (source - 1) * capacity`, source_n
/// elements) read in tiles, Stages - 1 of them ahead (tile_ring); per element its radix bits, each open slot's bin (shared counts, added
/// to st->hist at the end), in the first pass the elements under each range, and the elements in
/// any range copied to buffer `out` (one global atomic a tile for the tile's place). The block
/// that finishes last picks (radix_pick_block). `head`: the data's unaligned head (scan_layout).
/// `positions` (the first pass only, n < 2^32; else null): each copied element's position in the
/// data, beside it in the copy (topk gathers from the copy: radix_select_state::keep_first).
template <class T, int Threads, int Loads, bool First, int R, int Stages = radix_pass_stages(R, sizeof(T)),
          int Probe = 0>
__global__ void __launch_bounds__(Threads, radix_pass_blocks_per_sm)  // 8-byte keys took 85 registers
    radix_pass_kernel(const T* __restrict__ data, int64_t n, int64_t head,
                      radix_select_state<T>* __restrict__ st, T* __restrict__ buffers,
                      int64_t capacity, int64_t* __restrict__ positions) {
  using U = core::radix_bits_t<T>;
  using view_t = tile_items<T, Threads, Loads>;
  static_assert(R <= radix_select_max_ranks, "R: the most slots the launch has (1, 2 or 4: registers)");
  static_assert(32 * view_t::items / 4 <= radix_stage, "a sparse tile's members fit an empty stage");
  if (st->status != int32_t(core::plan_status::running)) return;  // uniform: the select is done
  extern __shared__ __align__(16) uint32_t radix_bins_shared[];  // radix_pass_shared_bytes
  __shared__ int last;
  __shared__ u64 block_below[R], block_least[R], block_most[R];  // the warps' counts and extents
  __shared__ u64 block_nans;
  const int r = st->r, source = st->source, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const T* src = source == 0 ? data : buffers + int64_t(source - 1) * capacity;
  T* out = buffers + int64_t(st->out - 1) * capacity;
  const scan_layout<T, Threads, Loads> layout{source == 0 ? n : st->source_n, source == 0 ? head : 0};
  core::radix_range<U> range[R];
  core::radix_ordered<U> tested[R];  // the ranges as each element is tested (closed: nothing inside)
  bool open[R];
  GSEARCH_UNROLL
  for (int k = 0; k < R; ++k) {
    open[k] = k < r && !st->slot[k].done;
    range[k] = open[k] ? st->slot[k].range : core::radix_range<U>{};
    tested[k] = open[k] ? core::radix_ordered_range<T>(range[k].lo, range[k].hi)
                        : core::radix_ordered<U>{U(~U(0)), U(~U(0) - 1)};
  }
  // One rank of floating-point keys: each key tested in its own compares where the range allows
  // (core::radix_native: 1, lo <= x <= hi; 2, x >= lo, NaN too), else by its ordered bits (0).
  constexpr bool can_native = R == 1 && std::is_floating_point_v<T>;
  T native_lo{}, native_hi{};
  int native = 0;
  if constexpr (can_native) {
    if (open[0]) {
      const core::radix_native<T> f = core::radix_native_range<T>(range[0].lo, range[0].hi);
      native_lo = f.lo;
      native_hi = f.hi;
      native = f.exact ? (f.open_top ? 2 : 1) : 0;
    }
  }
  for (int i = threadIdx.x; i < r * core::radix_bins; i += Threads) radix_bins_shared[i] = 0;
  if (threadIdx.x == 0) block_nans = 0;
  if (threadIdx.x < R) {
    block_below[threadIdx.x] = 0;
    block_least[threadIdx.x] = ~u64(0);
    block_most[threadIdx.x] = 0;
  }
  __syncthreads();
  // Per slot in registers (every index below a compile-time one: an array indexed at run time
  // goes to local memory, which made the first version's pass 589 us for a 62 us read).
  uint32_t below[R] = {};
  // The first pass's NaNs, where the caller asked (a quantile's NaN check, without a rank n - 1).
  constexpr bool can_count_nan = First && std::is_floating_point_v<T>;
  const bool count_nan = can_count_nan && st->count_nan;  // uniform
  uint32_t nans = 0;
  U least[R], most[R];
  GSEARCH_UNROLL
  for (int k = 0; k < R; ++k) {
    least[k] = U(~U(0));
    most[k] = U(0);
  }

  // Tile 0's head (fewer than one vector of the data), by one thread: plain atomics.
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (int64_t i = 0; i < layout.head; ++i) {
      const U u = core::radix_bits(src[i]);
      bool in = false;
      GSEARCH_UNROLL
      for (int k = 0; k < R; ++k) {
        const int b = k < r && open[k] ? core::radix_bin(range[k], u) : -1;
        if (b >= 0) {
          atomicAdd(radix_bins_shared + k * core::radix_bins + b, 1u);
          least[k] = u < least[k] ? u : least[k];
          most[k] = u > most[k] ? u : most[k];
        }
        if (First && k < r && open[k] && u < range[k].lo) ++below[k];
        in = in || b >= 0;
      }
      if constexpr (can_count_nan) nans += count_nan && src[i] != src[i];
      if (in) {
        const u64 at = atomicAdd(&st->written, 1ull);
        if (int64_t(at) < capacity) out[at] = src[i];
        if (First && positions && int64_t(at) < capacity) positions[at] = i;
      }
    }
  }
  // Per tile, two steps. First every item's membership, the one thing most elements need (its
  // ordered bits and two compares a range, core::radix_ordered: 8 instructions a float in the
  // SASS, where its radix bits and the count under each range took 17): a mask of the thread's
  // items in some range, and in the first pass a mask of those under each range, counted once a
  // tile. Then the members: the warp stages them in shared memory at places a warp scan gives,
  // and a full stage is counted into the bins, a lane a member, and goes to the copy at a place
  // one global atomic takes. ncu on the H200 (docs/perf-notes.md): a vote and a warp-wide bin
  // check for every element cost 78 instructions a warp of elements where the read leaves time
  // for about 20 (345 us for a 62 us read); the bins counted per item by each thread, 250 us (a
  // warp runs an item's code when any of its lanes has a member there: most of the time, at a
  // few per cent of members); counted from the stage as each tile's members arrived, a few lanes
  // busy, 36 instructions a warp of elements in all (f8530b3). A dense tile (more members than a
  // quarter of it: constant or few distinct values, or a later pass) is counted per item, a
  // thread's equal bins in a row by one atomic, and goes to the copy straight, item by item
  // across the warp.
  constexpr int warps = Threads / 32;
  const bool with_positions = First && positions != nullptr;  // uniform
  T* const stages = reinterpret_cast<T*>(radix_bins_shared + r * core::radix_bins);  // then the positions, the ring
  T* const stage = stages + warp * radix_stage;
  uint32_t* const stage_at = reinterpret_cast<uint32_t*>(stages + warps * radix_stage) + warp * radix_stage;
  int staged = 0;        // uniform in the warp
  bool copying = true;   // the copy has not overflowed, as far as this warp saw: stop counting
  const auto take = [&](int count) {  // a place in the copy for `count` elements, from lane 0
    u64 at = 0;
    if (lane == 0) at = atomicAdd(&st->written, u64(count));
    at = __shfl_sync(0xffffffffu, at, 0);
    copying = int64_t(at) + count <= capacity;  // past it, the copy is of no use: the pick sees why
    return int64_t(at);
  };
  const auto count_bin = [&](int k, int b, U u, int c) {
    atomicAdd(radix_bins_shared + k * core::radix_bins + b, uint32_t(c));
    least[k] = u < least[k] ? u : least[k];
    most[k] = u > most[k] ? u : most[k];
  };
  const auto flush = [&] {  // the stage's members counted and copied out
    __syncwarp();
    const int64_t at = copying ? take(staged) : 0;
    for (int i = lane; i < staged; i += 32) {
      const T x = stage[i];
      const U u = core::radix_bits(x);
      GSEARCH_UNROLL
      for (int k = 0; k < R; ++k) {
        if (k >= r) break;
        const int b = open[k] ? core::radix_bin(range[k], u) : -1;
        if (b >= 0) count_bin(k, b, u, 1);
      }
      if (copying && at + i < capacity) {
        out[at + i] = x;
        if (with_positions) positions[at + i] = stage_at[i];
      }
    }
    __syncwarp();
    staged = 0;
  };
  // The tiles come through a ring in shared memory, after the warps' stages (tile_ring).
  tile_ring<T, Threads, Loads, Stages> ring(
      reinterpret_cast<char*>(stages + warps * radix_stage) + (with_positions ? warps * radix_stage * 4 : 0), src, layout);
  const int64_t tiles = layout.tiles();
  GSEARCH_UNROLL
  for (int s = 0; s < Stages - 1; ++s) ring.fetch(blockIdx.x + s * int64_t(gridDim.x), s);
  int turn = 0;  // the stage of tile t
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, turn = turn + 1 == Stages ? 0 : turn + 1) {
    ring.fetch(t + (Stages - 1) * int64_t(gridDim.x), turn == 0 ? Stages - 1 : turn - 1);
    view_t view;
    ring.take(view, src, layout, t, turn);
    uint32_t members = 0, under[R] = {};  // bit j: item j is in some open range; under range k
    const auto classify = [&](auto inside, auto below) {
      GSEARCH_UNROLL
      for (int j = 0; j < view_t::items; ++j) {
        bool in = false;
        GSEARCH_UNROLL
        for (int k = 0; k < R; ++k) {
          if (k >= r) break;  // uniform
          in = in || inside(k, view.x[j]);
          if (First) under[k] |= uint32_t(below(k, view.x[j])) << j;
        }
        members |= uint32_t(in) << j;
      }
    };
    if (can_native && native == 1)  // uniform
      classify([&](int, T x) { return !(x < native_lo) && x <= native_hi; }, [&](int, T x) { return x < native_lo; });
    else if (can_native && native == 2)
      classify([&](int, T x) { return !(x < native_lo); }, [&](int, T x) { return x < native_lo; });
    else
      classify([&](int k, T x) { return tested[k].inside(core::ordered_bits(x)); },
               [&](int k, T x) { return tested[k].below(core::ordered_bits(x)); });
    members &= view.valid;
    if constexpr ((Probe & radix_probe_no_members) != 0) members = 0;
    GSEARCH_UNROLL
    for (int k = 0; k < R; ++k)
      if (First && k < r) below[k] += __popc(under[k] & view.valid);
    if constexpr (can_count_nan)
      if (count_nan) {  // uniform: the selects that do not ask pay no instruction a key
        uint32_t nan_items = 0;
        GSEARCH_UNROLL
        for (int j = 0; j < view_t::items; ++j) nan_items |= uint32_t(view.x[j] != view.x[j]) << j;
        nans += __popc(nan_items & view.valid);
      }
    const int mine = __popc(members);
    const int inclusive = warp_inclusive_sum(mine);
    const int total = __shfl_sync(0xffffffffu, inclusive, 31);
    if (total == 0) continue;  // uniform
    if (total > 32 * view_t::items / 4) {  // dense: bins per item, the copy straight
      // The thread's members all one value (a constant input, a run of equal keys; == takes -0.0
      // as 0.0 as the radix bits do): one bin a range and one count, where the loop below costs
      // some 18 instructions a member (the constant input took 1.42x the uniform's time, 9513bff).
      bool one_value = true, seen = false;
      T value = view.x[0];
      GSEARCH_UNROLL
      for (int j = 0; j < view_t::items; ++j)
        if (members >> j & 1) {
          one_value = one_value && (!seen || view.x[j] == value);
          value = seen ? value : view.x[j];
          seen = true;
        }
      if (members && one_value) {
        const U u = core::radix_bits(value);
        GSEARCH_UNROLL
        for (int k = 0; k < R; ++k) {
          if (k >= r) break;
          const int b = open[k] ? core::radix_bin(range[k], u) : -1;
          if (b >= 0) count_bin(k, b, u, __popc(members));
        }
      } else if (members) {
        int run_bin[R], run[R];
        U run_u[R];
        GSEARCH_UNROLL
        for (int k = 0; k < R; ++k) run_bin[k] = -1, run[k] = 0, run_u[k] = U(0);
        GSEARCH_UNROLL
        for (int j = 0; j < view_t::items; ++j) {
          if (!(members >> j & 1)) continue;
          const U u = core::radix_bits(view.x[j]);
          GSEARCH_UNROLL
          for (int k = 0; k < R; ++k) {
            if (k >= r) break;
            const int b = open[k] ? core::radix_bin(range[k], u) : -1;
            if (b < 0) continue;
            if (b != run_bin[k]) {
              if (run[k]) count_bin(k, run_bin[k], run_u[k], run[k]);
              run_bin[k] = b;
              run[k] = 0;
            }
            ++run[k];
            least[k] = u < least[k] ? u : least[k];
            most[k] = u > most[k] ? u : most[k];
            run_u[k] = u;
          }
        }
        GSEARCH_UNROLL
        for (int k = 0; k < R; ++k)
          if (k < r && run[k]) count_bin(k, run_bin[k], run_u[k], run[k]);
      }
      if (staged) flush();
      if (copying) {
        // Item by item across the warp, so that a store's lanes write consecutive places (a
        // thread's own run, item after item, put a warp's 32 stores in 32 sectors: the constant
        // input's first pass wrote 5.7 M sectors for 2^26 elements, ncu at b84d2f6).
        int64_t at = take(total);
        const unsigned before_me = (1u << lane) - 1;
        GSEARCH_UNROLL
        for (int j = 0; j < view_t::items; ++j) {
          const unsigned here = __ballot_sync(0xffffffffu, members >> j & 1);
          const int64_t to = at + __popc(here & before_me);
          if ((members >> j & 1) && to < capacity) {
            out[to] = view.x[j];
            if (with_positions) positions[to] = view_t::index(layout.head + t * layout.tile, j);
          }
          at += __popc(here);
        }
      }
      continue;
    }
    // Sparse: staged; counted and copied out when the stage is full.
    if (staged + total > radix_stage) flush();
    int at = staged + inclusive - mine;
    if (t < ring.full_tiles) {
      // From the ring, a member at a time (most threads have none or one: an item at a time
      // from the registers took 5.5 instructions an item, f8530b3's SASS).
      for (uint32_t m = members; m; m &= m - 1) {
        const int j = __ffs(m) - 1;
        if (with_positions) stage_at[at] = uint32_t(view_t::index(layout.head + t * layout.tile, j));
        stage[at++] = ring.item(turn, j);
      }
    } else {
      GSEARCH_UNROLL
      for (int j = 0; j < view_t::items; ++j)
        if (members >> j & 1) {
          if (with_positions) stage_at[at] = uint32_t(view_t::index(layout.head + t * layout.tile, j));
          stage[at++] = view.x[j];
        }
    }
    staged += total;
  }
  if (staged) flush();
  if constexpr ((Probe & radix_probe_no_end) != 0) {
    if (below[0] == 0x9e3779b9u) st->written = below[0];  // never, in effect: the counts kept
    return;
  }
  // The block's counts into the pass's (the launch gives no block 2^31 elements: 32-bit counts),
  // and its warps' counts under each range and extents of it, gathered in shared memory first:
  // a global atomic a block on each of those three words, where a warp's each put 16 times as
  // many on one address at the pass's end.
  GSEARCH_UNROLL
  for (int k = 0; k < R; ++k) {
    if (k >= r) break;  // uniform
    uint32_t c = below[k];
    U lo = least[k], hi = most[k];
    GSEARCH_UNROLL
    for (int o = 16; o > 0; o /= 2) {
      if (First) c += __shfl_xor_sync(0xffffffffu, c, o);
      const U other_lo = __shfl_xor_sync(0xffffffffu, lo, o), other_hi = __shfl_xor_sync(0xffffffffu, hi, o);
      lo = other_lo < lo ? other_lo : lo;
      hi = other_hi > hi ? other_hi : hi;
    }
    if (lane == 0) {
      if (First && c) atomicAdd(&block_below[k], u64(c));
      if (lo <= hi) {  // the warp saw an element of the range
        atomicMin(&block_least[k], u64(lo));
        atomicMax(&block_most[k], u64(hi));
      }
    }
  }
  if constexpr (can_count_nan) {
    if (count_nan) {
      const uint32_t warp_nans = warp_inclusive_sum(nans);
      if (lane == 31 && warp_nans) atomicAdd(&block_nans, u64(warp_nans));
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < r * core::radix_bins; i += Threads)
    if (radix_bins_shared[i]) atomicAdd(&st->hist[0][0] + i, u64(radix_bins_shared[i]));
  if (can_count_nan && threadIdx.x == 0 && block_nans) atomicAdd(&st->nan_count, block_nans);
  if (threadIdx.x < r) {
    const int k = threadIdx.x;
    if (First && block_below[k]) atomicAdd(&st->below[k], block_below[k]);
    if (block_least[k] <= block_most[k]) {  // the block saw an element of the range
      atomicMin(&st->least[k], block_least[k]);
      atomicMax(&st->most[k], block_most[k]);
    }
  }
  // The last block to finish picks: every block's counts are in st. The barrier orders the
  // block's atomics before thread 0's fence, which orders them before its count (one fence a
  // block, as cooperative groups' grid sync does; each warp's global atomics and a fence in every
  // thread, measured against this as radix_probe's "end by warps" at 20945d5 and f28b4fb, took
  // the first pass 1-5% longer).
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(&st->blocks_done, 1u) == gridDim.x - 1;
    if (last) __threadfence();  // the other blocks' counts seen before the pick reads them
  }
  __syncthreads();
  if (!last) return;
  radix_pick_block<T, Threads>(st, capacity, First);
}

}  // namespace gsearch::cuda_backend
