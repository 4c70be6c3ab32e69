#pragma once
/// \file
/// The persistent kernel of the GPU's functional-arrays machine (seed 004 §4.3-4.4; issue 23;
/// docs/design.md, "Functional arrays"): a cooperative grid that stays resident, each block
/// holding a share of the cells in its shared memory, and serves the operations the host posts
/// to a ring in mapped page-locked memory, one after another, in the order posted:
///
///   for each operation k:
///     its request (block 0 reads the ring, up to 32 published at once, and hands them to the
///       other blocks through a queue in device memory);
///     op k-1's carved remainder into its cell, in the block that holds that cell;
///     the pass: every block's threads run core/functional_arrays.hpp's step on its cells (and
///       the version opens it owns), a query folds its cells into the block's partial and one
///       atomic per block;
///     a grid-wide barrier;
///     block 0 answers k: a query's fold in the ring's reply, and at the end of a window the
///       tickets done (fa_progress, released at system scope).
///
/// What crosses blocks, and how: the parent's open position (each block holds its share of the
/// version slots' opens beside its cells and shifts only those; the next operation's parent is
/// in the window, so its owner adds its open to the grid barrier's word, which every block reads
/// anyway: no load of its own; the first operation of a window, not yet seen when the barrier
/// before it ran, reads it at L2 from the opens' home, which every block rewrote at the end of
/// the window before), the carve's remainder (the piece after the
/// new child's subtree, with its value, goes to a free cell the host chose, which another block
/// may hold: the carving thread writes it to a mailbox that the holder installs at the next
/// operation, before its pass, its load issued with the parent's open: one L2 round trip for
/// both) and a query's fold (atomics in device memory, reset by block 0 after answering). A
/// block's values live beside its cells (shared memory when there is room, else its share of
/// device memory), written only by that block. The host never waits for an update or a remove:
/// it counts both free cells as used, and a sweep (dump, the host's sweep, load) gives back the
/// unfilled ones.

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "gsearch/core/functional_arrays.hpp"
#include "gsearch/core/server_ring.hpp"
#include "cuda/system_scope.cuh"

namespace gsearch::cuda_backend {

/// What a request asks.
enum class fa_code : int32_t {
  root = 1,    ///< slot a becomes a root whose open is b
  update = 2,  ///< slot b: the child of slot a with a[i] = v (free cells remainder, fresh)
  remove = 3,  ///< slot b: the child of slot a without i (free cell remainder)
  lookup = 4,  ///< slot a's value at i
  size = 5,    ///< slot a's defined indices
  next = 6,    ///< slot a's least defined index above i
  dump = 7,    ///< every block writes its shared cells to the cells' home in device memory
  load = 8,    ///< every block reads its shared cells back from there (after the host's sweep)
  stop = 9,    ///< the kernel ends
};

/// Whether a request changes the machine (a new child) or asks a query: each reads its parent's
/// open, a change's reply says whether it carved, a query's is its fold.
__host__ __device__ inline bool fa_changes(int32_t code) {
  return code == int32_t(fa_code::update) || code == int32_t(fa_code::remove);
}
__host__ __device__ inline bool fa_asks(int32_t code) {
  return code == int32_t(fa_code::lookup) || code == int32_t(fa_code::size) || code == int32_t(fa_code::next);
}

/// A request: a 64-byte slot of the ring (mapped page-locked host memory), written by the host
/// before it releases `ready` = ticket + 1 (core::ring_ready_value).
struct alignas(64) fa_request {
  int32_t code = 0;  ///< fa_code
  int32_t unused = 0;
  int64_t a = 0;
  int64_t b = 0;
  int64_t i = 0;
  uint64_t v = 0;  ///< the value's bits (an update)
  int64_t remainder = -1;
  int64_t fresh = -1;
  uint64_t ready = 0;
};
static_assert(sizeof(fa_request) == 64, "a request is one 64-byte line");

/// The kernel's answer to the request in the same ring slot (its own line, which only the kernel
/// writes), valid once `completed` (fa_progress) has passed its ticket: a query's, or whether an
/// update or remove filled its remainder cell (the host gives back the cells it did not).
struct alignas(64) fa_reply {
  uint64_t found = 0;  ///< bit 0: lookup found a piece; bit 1: next found an index; bit 2: carved
  uint64_t count = 0;  ///< size
  uint64_t least = 0;  ///< next: the least index above i, as fa_order_key
  uint64_t value = 0;  ///< lookup: the value's bits
};

/// The kernel's progress, in host memory: tickets done so far, released at system scope at the
/// end of each window of requests (the last one the kernel had seen published), not after each
/// one: a host that waits for ticket t posted nothing after it in that window, so the window ends
/// at t; a host that posts many (a replayed stream) is told once per window, and the kernel pays
/// the system-scope fence once per window.
struct alignas(64) fa_progress {
  uint64_t completed = 0;
};

/// next's fold in one unsigned word: int64 order kept (the sign bit flipped).
__host__ __device__ inline unsigned long long fa_order_key(int64_t i) { return (unsigned long long)(i) ^ (1ull << 63); }

/// A query's fold in device memory, all blocks' atomics (16-aligned: block 0 copies it to its
/// shared memory with cp.async).
struct alignas(16) fa_fold {
  unsigned long long found;
  unsigned long long count;
  unsigned long long least;
  unsigned long long value;
};

/// The carve's remainder on its way to the block that holds its cell: the cell's whole content
/// (its value too: each block writes only its own cells' values), read in three 16-byte loads
/// issued together (one L2 round trip on the way into the next operation, where word by word
/// took three).
struct alignas(16) fa_carry {
  uint64_t stamp;  ///< ticket + 1 of the operation that carved
  int64_t cell, index;
  uint64_t value;  ///< the value's bits
  core::fa_span span;
};
static_assert(sizeof(fa_carry) == 48, "three 16-byte words");

/// The thread of block 0 that writes the host's words (replies, progress): not thread 0, whose
/// fence in the grid barrier would wait for those writes over PCIe.
inline constexpr int fa_answerer = 32;

/// 16 bytes of device memory (written by other blocks before the barrier) into shared memory,
/// at L2, without waiting: cp.async (the answer of op k is fetched after its barrier and
/// written during op k + 1, off the operations' critical path).
__device__ __forceinline__ void fa_fetch_16(void* shared_to, const void* from) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(unsigned(__cvta_generic_to_shared(shared_to))),
               "l"(from)
               : "memory");
}
__device__ __forceinline__ void fa_fetched() { asm volatile("cp.async.wait_all;" ::: "memory"); }

/// Requests the queue in device memory holds (block 0 writes at most 32 at a time, and only
/// after every block has read the ones before: docs/design.md).
inline constexpr int fa_queue_slots = 64;
inline constexpr int fa_window = 32;

/// The grid barrier after operation k is word k % fa_barrier_words: each block adds 1, and the
/// owner of the next operation's parent adds that parent's open << fa_barrier_shift (positions
/// stay below 2^47: 2^46 operations). Block 0 clears word k - 1's after barrier k (reused at
/// k + 3, which no block reaches before block 0 has arrived at k + 1).
inline constexpr int fa_barrier_words = 4;
inline constexpr int fa_barrier_shift = 16;  ///< the arrivals below: at most 65,535 blocks

/// The control block in device memory.
struct fa_control {
  unsigned long long posted;                     ///< tickets block 0 has put in the queue
  unsigned long long barrier[fa_barrier_words];  ///< the grid barriers' words (arrivals, the next parent's open)
  fa_fold fold[2];                               ///< operation k's in fold[k % 2]
  fa_carry carry[2];           ///< operation k's in carry[k % 2]
  unsigned long long windows;  ///< refills of block 0's window (GSEARCH_FA_TRACE: operations per window)
};

/// A cell's bytes in shared memory (its span and index); with its value, + sizeof(V).
inline constexpr int64_t fa_shared_cell_bytes = int64_t(sizeof(core::fa_span) + sizeof(int64_t));

template <class V>
struct fa_params {
  const fa_request* ring;  ///< mapped host memory (device address)
  fa_reply* replies;       ///< mapped host memory (device address)
  fa_progress* progress;   ///< mapped host memory (device address)
  int64_t ring_slots;
  fa_request* queue;  ///< device memory, fa_queue_slots
  fa_control* control;
  int64_t* index;          ///< the cells' home in device memory: where a block's cells live when
  core::fa_span* spans;    ///< they are not in its shared memory, and what dump / load copy
  V* values;               ///< (the values too: in shared memory when there is room for them)
  int64_t cells;
  int64_t cells_per_block;
  bool cells_in_shared;   ///< spans and indices
  bool opens_in_shared;   ///< and the block's share of the opens (only with the cells)
  bool values_in_shared;  ///< and the values (only with the cells)
  int64_t* open;  ///< the version slots' opens' home (block b owns a contiguous share)
  int64_t slots;
  int64_t slots_per_block;
  int64_t idle_sleep_ns;  ///< the longest nap between polls of an idle machine
};

/// A word of device memory written by another block, read at L2 (the barrier ordered it).
template <class W>
__device__ __forceinline__ W fa_load_l2(const W* p) {
  static_assert(sizeof(W) == 4 || sizeof(W) == 8 || sizeof(W) == 16, "a word of 4, 8 or 16 bytes");
  using bits_t = std::conditional_t<sizeof(W) == 16, ulonglong2,
                                    std::conditional_t<sizeof(W) == 8, unsigned long long, unsigned int>>;
  const bits_t b = __ldcg(reinterpret_cast<const bits_t*>(p));
  W w;
  memcpy(&w, &b, sizeof(W));
  return w;
}

/// A 16-aligned struct of device memory written by another block, at L2 in 16-byte loads issued
/// together (the barrier ordered it).
template <class S>
__device__ __forceinline__ S fa_load_l2_words(const S* p) {
  static_assert(sizeof(S) % 16 == 0 && alignof(S) >= 16, "whole 16-byte words");
  S s;
  for (int j = 0; j < int(sizeof(S) / 16); ++j)
    reinterpret_cast<ulonglong2*>(&s)[j] = __ldcg(reinterpret_cast<const ulonglong2*>(p) + j);
  return s;
}

/// Warp 0 fills the block's window with the requests from ticket k on (at least one: it waits),
/// and sets *end one past the last. Block 0 reads the ring (a lane a slot, the published prefix)
/// and hands the requests to the queue; the other blocks copy them from the queue.
template <class V>
__device__ void fa_refill(const fa_params<V>& p, uint64_t k, fa_request* window, unsigned long long* end,
                          uint64_t& last_seen_ns) {
  if (threadIdx.x >= 32) return;
  const int lane = int(threadIdx.x);
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> posted(p.control->posted);
  uint32_t nap = 0;
  int taken = 0;
  for (;;) {
    const bool hot = globaltimer_ns() - last_seen_ns < uint64_t(poll_hot_ns);
    if (blockIdx.x == 0) {
      // While requests keep coming a lane a slot (32 reads over PCIe in one round trip); an idle
      // machine polls with lane 0 alone.
      const uint64_t t = k + uint64_t(lane);
      const bool in_ring = lane < p.ring_slots && (hot || lane == 0);
      const fa_request* s = &p.ring[core::ring_slot_of(t, p.ring_slots)];
      bool published = false;
      if (in_ring)
        published = cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(*const_cast<uint64_t*>(&s->ready))
                        .load(cuda::memory_order_acquire) == core::ring_ready_value(t);
      const unsigned ballot = __ballot_sync(0xffffffffu, published);
      taken = ballot == 0xffffffffu ? 32 : __ffs(~ballot) - 1;  // the published prefix
      if (lane < taken) {
        // After the acquire of `ready`: the request's words, relaxed at system scope, in four
        // 16-byte loads issued together (one PCIe round trip, not one a word).
        fa_request r;
        for (int j = 0; j < 4; ++j)
          reinterpret_cast<ulonglong2*>(&r)[j] = load_sys_16(reinterpret_cast<const unsigned long long*>(s) + 2 * j);
        window[t % fa_window] = r;
        p.queue[t % fa_queue_slots] = r;
      }
      if (taken > 0) {
        __syncwarp();
        if (lane == 0) {
          posted.store(k + uint64_t(taken), cuda::memory_order_release);  // the queue's entries first
          ++p.control->windows;  // block 0's lane 0 alone writes it
        }
        break;
      }
    } else {
      uint64_t ready = 0;
      if (lane == 0) ready = posted.load(cuda::memory_order_acquire);
      ready = __shfl_sync(0xffffffffu, ready, 0);
      if (ready > k) {
        taken = int(ready - k < uint64_t(fa_window) ? ready - k : uint64_t(fa_window));
        if (lane < taken)  // at L2: block 0 rewrites the queue's entries
          for (int j = 0; j < 4; ++j)
            reinterpret_cast<ulonglong2*>(&window[(k + lane) % fa_window])[j] =
                __ldcg(reinterpret_cast<const ulonglong2*>(&p.queue[(k + lane) % fa_queue_slots]) + j);
        break;
      }
    }
    nap = poll_backoff(nap, hot ? poll_hot_nap_ns : p.idle_sleep_ns);  // nothing yet: short naps while hot
  }
  last_seen_ns = globaltimer_ns();
  if (lane == 0) *end = k + uint64_t(taken);
}

/// The grid-wide barrier after operation k; returns the next parent's open that the barrier
/// carried (its owner's `next_open`, read by thread 0 after the block's pass; null elsewhere).
/// One block needs only its own __syncthreads.
__device__ __forceinline__ int64_t fa_grid_barrier(fa_control* control, uint64_t k, const int64_t* next_open,
                                                   unsigned long long* shared_word) {
  __syncthreads();
  if (gridDim.x == 1) return 0;
  if (threadIdx.x == 0) {
    const unsigned long long add = 1ull + (next_open ? (unsigned long long)(*next_open) << fa_barrier_shift : 0ull);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(control->barrier[k % fa_barrier_words]);
    __threadfence();  // the block's writes (cells' home, opens, carry, fold) before it arrives
    unsigned long long w = word.fetch_add(add, cuda::memory_order_relaxed) + add;
    constexpr unsigned long long arrivals = (1ull << fa_barrier_shift) - 1;
    while ((w & arrivals) < gridDim.x) w = word.load(cuda::memory_order_relaxed);
    __threadfence();
    *shared_word = w;
    if (blockIdx.x == 0)  // nobody polls word k - 1 any more: every block has arrived here
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(control->barrier[(k + 3) % fa_barrier_words])
          .store(0, cuda::memory_order_relaxed);
  }
  __syncthreads();
  return int64_t(*shared_word >> fa_barrier_shift);
}

/// A warp's fold of size's count and next's least key (and whether it has one), into lane 0.
__device__ __forceinline__ void fa_warp_fold(unsigned long long& count, unsigned long long& least, bool& above) {
  for (int d = 16; d > 0; d /= 2) {
    count += __shfl_down_sync(0xffffffffu, count, d);
    const unsigned long long o = __shfl_down_sync(0xffffffffu, least, d);
    least = least < o ? least : o;
    above = __shfl_down_sync(0xffffffffu, int(above), d) || above;
  }
}

/// A query's fold within the block, then one atomic per word into `fold` (device memory).
template <int Threads>
__device__ void fa_block_fold(unsigned long long count, unsigned long long least, bool above, fa_fold* fold,
                              unsigned long long* shared_count, unsigned long long* shared_least, int* shared_above) {
  fa_warp_fold(count, least, above);
  if (threadIdx.x % 32 == 0) {
    if (count) atomicAdd(shared_count, count);
    if (above) {
      atomicMin(shared_least, least);
      atomicOr(shared_above, 1);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (*shared_count) atomicAdd(&fold->count, *shared_count);
    if (*shared_above) {
      atomicMin(&fold->least, *shared_least);
      atomicOr(&fold->found, 2ull);  // bit 1: next found something (bit 0 is lookup's)
    }
    *shared_count = 0;
    *shared_least = ~0ull;
    *shared_above = 0;
  }
}

template <class V, int Threads>
__global__ void __launch_bounds__(Threads, 1) fa_persistent_kernel(const fa_params<V> p) {
  extern __shared__ __align__(16) unsigned char fa_shared[];
  __shared__ fa_request window[fa_window];
  __shared__ unsigned long long window_end, shared_count, shared_least, barrier_word;
  __shared__ int shared_above;
  __shared__ __align__(16) fa_fold fetched;  // the answerer's copy of op k's fold (or carry stamp)
  // The answerer's op whose answer is fetched and not yet written (-1: none), and its code (in
  // shared memory: the answerer's alone, no registers of every thread).
  __shared__ long long unanswered;
  __shared__ int32_t unanswered_code;

  // The block's cells [c0, c0 + mine) and version slots [s0, s0 + owned).
  const int64_t c0 = int64_t(blockIdx.x) * p.cells_per_block;
  const int64_t mine = c0 >= p.cells ? 0 : (p.cells - c0 < p.cells_per_block ? p.cells - c0 : p.cells_per_block);
  const int64_t s0 = int64_t(blockIdx.x) * p.slots_per_block;
  const int64_t owned = s0 >= p.slots ? 0 : (p.slots - s0 < p.slots_per_block ? p.slots - s0 : p.slots_per_block);
  core::fa_span* const spans = p.cells_in_shared ? reinterpret_cast<core::fa_span*>(fa_shared) : p.spans + c0;
  int64_t* const index =
      p.cells_in_shared ? reinterpret_cast<int64_t*>(fa_shared + p.cells_per_block * sizeof(core::fa_span)) : p.index + c0;
  // Shared memory: spans, indices, then (when there is room) the opens, then the values.
  unsigned char* const after_cells = fa_shared + p.cells_per_block * fa_shared_cell_bytes;
  int64_t* const opens = p.opens_in_shared ? reinterpret_cast<int64_t*>(after_cells) : p.open + s0;
  V* const values =
      p.values_in_shared
          ? reinterpret_cast<V*>(after_cells + (p.opens_in_shared ? p.slots_per_block * int64_t(sizeof(int64_t)) : 0))
          : p.values + c0;
  // What lives in shared memory, to its home in device memory (dump; and the opens at a
  // window's end) or back (the start; load: the host's sweep changed the spans alone).
  const auto opens_home = [&] {
    if (p.opens_in_shared)
      for (int64_t s = threadIdx.x; s < owned; s += Threads) p.open[s0 + s] = opens[s];
  };
  const auto copy_cells = [&](bool to_home, bool all) {
    if (!p.cells_in_shared) return;
    for (int64_t c = threadIdx.x; c < mine; c += Threads) {
      if (to_home) {
        p.spans[c0 + c] = spans[c];
        p.index[c0 + c] = index[c];
        if (p.values_in_shared) p.values[c0 + c] = values[c];
      } else {
        spans[c] = fa_load_l2(&p.spans[c0 + c]);
        if (all) index[c] = fa_load_l2(&p.index[c0 + c]);
        if (all && p.values_in_shared) values[c] = fa_load_l2(&p.values[c0 + c]);
      }
    }
    if (to_home) opens_home();
    if (!to_home && all && p.opens_in_shared)
      for (int64_t s = threadIdx.x; s < owned; s += Threads) opens[s] = fa_load_l2(&p.open[s0 + s]);
  };
  copy_cells(false, true);
  if (threadIdx.x == 0) {
    unanswered = -1;
    window_end = 0;
    shared_count = 0;
    shared_least = ~0ull;
    shared_above = 0;
  }
  uint64_t last_seen_ns = globaltimer_ns();
  __syncthreads();

  unsigned long long end = 0;  // one past the window's last ticket
  int32_t previous = 0;        // op k-1's code and remainder cell
  int64_t previous_remainder = -1;
  bool at_carried = false;  // whether the barrier before op k carried its parent's open
  int64_t carried_at = 0;
  const bool answerer = blockIdx.x == 0 && threadIdx.x == fa_answerer;
  // Writes op t's reply from `fetched` (waiting for the copy), and resets a query's fold.
  const auto answer = [&](uint64_t t, int32_t c) {
    fa_fetched();
    fa_reply* r = &p.replies[core::ring_slot_of(t, p.ring_slots)];
    if (fa_changes(c)) {
      r->found = fetched.found == t + 1 ? 4ull : 0ull;  // the carry's stamp: op t carved
      return;
    }
    r->found = fetched.found;
    r->count = fetched.count;
    r->least = fetched.least;
    r->value = fetched.value;
    fa_fold* f = &p.control->fold[t % 2];
    f->found = 0;
    f->count = 0;
    f->least = ~0ull;
    f->value = 0;
  };
  const auto needs_open = [](int32_t c) { return fa_changes(c) || fa_asks(c); };
  for (uint64_t k = 0;; ++k) {
    if (k == end) {  // every thread's copy: warp 0 rewrites window_end while others may still look
      fa_refill(p, k, window, &window_end, last_seen_ns);
      __syncthreads();
      end = window_end;
    }
    const fa_request op = window[k % fa_window];
    const fa_code code = fa_code(op.code);
    const bool changes = fa_changes(op.code), asks = fa_asks(op.code);
    // The parent's open (no block changes it in this operation): one block owns every slot; the
    // barrier carried it; or, first in a window, from the opens' home at L2, that load issued
    // before the carry's (the two round trips overlap).
    const int64_t at = !needs_open(op.code) ? 0
                       : gridDim.x == 1     ? opens[op.a]
                       : at_carried         ? carried_at
                                            : fa_load_l2(&p.open[op.a]);

    // Op k-1's remainder, when this block holds its cell and the carve left one (the stamp).
    if (fa_changes(previous) && previous_remainder >= c0 &&
        previous_remainder < c0 + mine) {
      if (threadIdx.x == 0) {
        const fa_carry carry = fa_load_l2_words(&p.control->carry[(k - 1) % 2]);
        if (carry.stamp == k && carry.cell == previous_remainder) {
          const int64_t c = previous_remainder - c0;
          index[c] = carry.index;
          spans[c] = carry.span;
          memcpy(&values[c], &carry.value, sizeof(V));
        }
      }
      __syncthreads();
    }
    previous = op.code;
    previous_remainder = op.remainder;

    if (code == fa_code::stop) {
      if (answerer) {
        if (unanswered >= 0) answer(uint64_t(unanswered), unanswered_code);
        cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(p.progress->completed).store(k + 1, cuda::memory_order_release);
      }
      return;
    }

    fa_fold* const fold = &p.control->fold[k % 2];
    if (code == fa_code::root) {
      if (op.a >= s0 && op.a < s0 + owned && threadIdx.x == 0) opens[op.a - s0] = op.b;
    } else if (changes) {
      const int64_t fresh = code == fa_code::update ? op.fresh : -1;
      for (int64_t c = threadIdx.x; c < mine; c += Threads) {
        const int64_t cell = c0 + c;
        if (cell == op.remainder) continue;  // free cells the operation fills, not shifts
        if (cell == fresh) {
          index[c] = op.i;
          memcpy(&values[c], &op.v, sizeof(V));
          spans[c] = core::fa_child_span(at);
          continue;
        }
        core::fa_span s = spans[c];
        bool carved = false;
        const core::fa_span after = core::fa_insert_step(s, index[c], op.i, at, carved);
        spans[c] = s;
        if (carved && !core::fa_is_free(after)) {  // the holder of op.remainder installs it
          fa_carry carry{k + 1, op.remainder, op.i, 0, after};
          memcpy(&carry.value, &values[c], sizeof(V));
          p.control->carry[k % 2] = carry;
        }
      }
      for (int64_t s = threadIdx.x; s < owned; s += Threads) {
        const int64_t slot = s0 + s;
        if (slot == op.a) continue;
        opens[s] = slot == op.b ? at + 1 : core::fa_shift_open(opens[s], at);
      }
    } else if (asks) {
      unsigned long long count = 0, least = ~0ull;
      bool above = false;
      for (int64_t c = threadIdx.x; c < mine; c += Threads) {
        const core::fa_span s = spans[c];
        if (core::fa_is_free(s) || !core::fa_holds(s, at)) continue;
        const int64_t i = index[c];
        ++count;
        if (code == fa_code::lookup && i == op.i) {  // at most one piece of i holds the version
          unsigned long long bits = 0;
          memcpy(&bits, &values[c], sizeof(V));
          fold->value = bits;
          atomicOr(&fold->found, 1ull);
        }
        if (i > op.i) {
          above = true;
          least = least < fa_order_key(i) ? least : fa_order_key(i);
        }
      }
      if (code != fa_code::lookup) fa_block_fold<Threads>(count, least, above, fold, &shared_count, &shared_least, &shared_above);
    } else if (code == fa_code::dump) {
      copy_cells(true, true);
    } else if (code == fa_code::load) {
      cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);  // the host's copy
      copy_cells(false, false);
    }

    // The next operation's parent's open, from the block that owns it, with the barrier; at the
    // window's end (the next operation not seen yet) every block writes its opens home instead.
    const bool next_seen = k + 1 < end;
    const fa_request& next = window[(k + 1) % fa_window];
    const bool carry_at = gridDim.x > 1 && next_seen && needs_open(next.code);
    if (gridDim.x > 1 && !next_seen && code != fa_code::dump) opens_home();
    if (answerer && unanswered >= 0) {  // op k-1's answer, its copy long landed
      answer(uint64_t(unanswered), unanswered_code);
      unanswered = -1;
    }
    const int64_t carried = fa_grid_barrier(
        p.control, k, carry_at && next.a >= s0 && next.a < s0 + owned ? &opens[next.a - s0] : nullptr, &barrier_word);
    at_carried = carry_at;
    carried_at = carried;

    // Block 0's answerer fetches k's answer (a query's fold, reset before op k + 2; an update's
    // or remove's carry stamp, rewritten at op k + 2) and writes it during op k + 1; at the end
    // of the window at once, then the progress, released at system scope.
    if (answerer) {
      if (asks || changes) {
        const void* from = asks ? static_cast<const void*>(fold) : static_cast<const void*>(&p.control->carry[k % 2]);
        fa_fetch_16(&fetched, from);
        if (asks) fa_fetch_16(reinterpret_cast<unsigned char*>(&fetched) + 16, static_cast<const unsigned char*>(from) + 16);
        asm volatile("cp.async.commit_group;" ::: "memory");
        unanswered = int64_t(k);
        unanswered_code = op.code;
      }
      if (k + 1 == end) {
        if (unanswered >= 0) answer(k, op.code);
        unanswered = -1;
        cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(p.progress->completed).store(k + 1, cuda::memory_order_release);
      }
    }
  }
}

}  // namespace gsearch::cuda_backend
