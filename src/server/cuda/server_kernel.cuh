#pragma once
/// \file
/// The search server's persistent kernel (seed 004 §3; docs/design.md, "The search server"): a
/// cooperative grid that stays resident and serves the request ring of core/server_ring.hpp,
/// which sits in mapped pinned host memory, instead of a launch per request.
///
/// Block 0 leads. Its warp 0 polls the ring, 32 slots at once, a lane each: a load from host
/// memory crosses PCIe (~1 us), so the slots are read in parallel, never one after the other, and
/// a lane that finds its slot published reads the request (and the queries a slot may carry
/// itself) at once: one round trip to see a request, one to read it. While requests keep coming
/// the poll naps at most poll_hot_nap_ns between rounds; after poll_hot_ns without one, lane
/// 0 alone polls and the naps grow to idle_sleep_ns (an idle server costs a read every few us).
/// The batch is taken by core::ring_batch's rule. Then:
///  - a batch of at most Threads queries is served by block 0 alone (no grid-wide step): a warp
///    per query by P-ary search over the leaves (core/pary.hpp; its first two steps' keys staged
///    in shared memory: the response time of one query), when there are at most as many queries
///    as warps, else a thread per query down the static index;
///  - a larger batch is posted to every block through the control block in device memory (a
///    sequence number released at GPU scope, which the other blocks poll with a __nanosleep
///    backoff); each block searches tiles of Threads x Items queries as the static index's
///    kernel does (index_search_tile, the top levels staged in its shared memory) and counts
///    itself finished; block 0 waits for the count;
///  - replace_keys posts the new index to every block (each restages its shared levels);
///  - stop posts the end to every block and leaves;
///  - after server_params::release_ns without a request the kernel leaves the device (the
///    release, below), and the host launches it again for the next request.
/// Every result is written before a __threadfence_system(); then warp 0 answers each ticket
/// (core::ring_answer: a release store at system scope, lane-parallel); a batch of one-query
/// requests, one a warp, is answered by the warps that searched it (server_searchers_answer).
/// The kernel never does a read-modify-write on host memory (not atomic over PCIe); its atomics
/// are on device memory.
///
/// The release (docs/design.md, "The server leaves an idle device"): a kernel that never ends
/// keeps its SMs from other kernels' waves and makes a first, lazily loaded launch of any other
/// kernel of the process wait for ever (CUDA's lazy loading waits for the running kernels). So
/// the leader, idle for release_ns, writes server_leaving to the state word in host memory,
/// fences at system scope and reads the next slot once more: a request there keeps it
/// (server_running again); else every block leaves, the leader last, after it wrote where the
/// ring stands (server_control::tail) and server_left. A submitter writes its slot, fences and
/// reads the state word (src/server/cuda/server.cu, wake): of the two fenced store-then-load
/// pairs one sees the other's store (Dekker), so either the kernel sees the request or its
/// submitter sees the kernel leaving; it then waits for server_left and launches the kernel
/// again. Only the next ticket's submitter matters: later tickets are served after it.

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>

#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/server_ring.hpp"
#include "gsearch/core/static_index.hpp"
#include "search/cuda/pary_kernel.cuh"
#include "static_index/cuda/static_index_kernel.cuh"
#include "cuda/system_scope.cuh"

namespace gsearch::cuda_backend {

/// core/server_ring.hpp's Access policy in the kernel: the ring's words in mapped host memory,
/// at system scope.
struct server_device_access {
  __device__ static uint64_t load_acquire(const uint64_t* p) {
    return cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(*const_cast<uint64_t*>(p)).load(cuda::memory_order_acquire);
  }
  __device__ static void store_release(uint64_t* p, uint64_t v) {
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(*p).store(v, cuda::memory_order_release);
  }
};

/// A request of the batch being served, as the kernel searches it: device-usable addresses (the
/// host translated page-locked memory and staged pageable memory before publishing).
template <class T>
struct server_request {
  const T* queries = nullptr;
  int64_t* out = nullptr;
  int64_t count = 0;
  int64_t first_tile = 0;  ///< its first tile in the batch's list of tiles (grid path)
  int32_t side = 0;
  bool in_slot = false;       ///< core::server_slot::in_slot: the query is here (block 0's copy) ...
  uint64_t slot_query = 0;    ///< ... its bytes (`queries` points at the slot's copy, for the grid)
  uint64_t* slot_answer = nullptr;  ///< ... answered with `done` in one store (`out` points here too)
  __device__ __forceinline__ T query(int64_t j) const {
    if (in_slot) {
      T q;
      memcpy(&q, &slot_query, sizeof(T));
      return q;
    }
    return load_l2(queries + j);
  }
};

/// What a replace_keys request points at (page-locked host memory, written before publishing).
template <class T>
struct server_keys {
  static_index_device_ref<T> ref;
  int shared_level = 0;  ///< the first level staged in shared memory
};

/// The state word (server_params::state): written by the kernel while it runs, by the host
/// only when it reads server_left (before it launches the kernel again).
inline constexpr uint64_t server_running = 0;
inline constexpr uint64_t server_leaving = 1;  ///< the idle leader checks the ring once more
inline constexpr uint64_t server_left = 2;     ///< every block has left: launch it again to serve

/// server_control::op of the release (not a ring request: core::server_op's values are >= 1).
inline constexpr int32_t server_release_op = -1;

/// The control block in device memory: block 0 writes it, then releases `posted`; the other
/// blocks acquire `posted`, serve, and count themselves in `finished`.
template <class T>
struct server_control {
  uint32_t posted = 0;    ///< batches posted to the grid so far (0 again after a release)
  uint32_t finished = 0;  ///< blocks done with the current one (reset before each post)
  uint64_t tail = 0;      ///< the next ticket to serve: where a kernel launched again begins
  int32_t op = 0;         ///< core::server_op of the posted batch
  int32_t requests = 0;   ///< its requests (in server_params::requests)
  int64_t tiles = 0;      ///< its tiles of Threads x Items queries
  server_keys<T> keys;    ///< the key set being served
  /// Statistics (server_stats), written by block 0's thread 0 only, read by the host's copies.
  int64_t batches = 0;              ///< batches taken (a replace_keys or the stop is one)
  int64_t batch_requests[16] = {};  ///< by their request count: [2^i, 2^(i+1)), the last open
  /// Batches of one search request block 0 served alone, timed on its SM's clock (cycles):
  int64_t timed_batches = 0;
  int64_t take_cycles = 0;   ///< from the request seen (the poll that read it) to the search begun
  int64_t serve_cycles = 0;  ///< from the search begun to the answer stored
};

template <class T>
struct server_params {
  core::server_slot* slots;        ///< the ring (mapped host memory)
  int64_t ring_slots;
  server_control<T>* control;      ///< device memory
  server_request<T>* requests;     ///< device memory, max_batch_requests of them
  int64_t max_batch_requests;
  int64_t max_batch_queries;
  int64_t preferred_batch_queries; ///< the dynamic batcher: wait for this many queries ...
  int64_t max_delay_ns;            ///< ... at most this long (0: serve at once)
  int64_t idle_sleep_ns;           ///< the longest __nanosleep between polls
  uint64_t* state;                 ///< the state word (mapped host memory): server_running, ...
  int64_t release_ns;              ///< idle this long, the kernel leaves the device (0: never)
};

/// Requests of a batch block 0 keeps in shared memory (its own path serves at most this many).
inline constexpr int server_small_requests = 64;

/// The batch block 0 serves next, in shared memory.
template <class T>
struct server_batch {
  int32_t op;
  int32_t taken;     ///< tickets from tail
  int64_t queries;   ///< their queries (search)
  int64_t tiles;
};

/// Warp 0 of block 0: reads the published slots from `tail` (32 at a time, a lane each, every
/// published lane its request at once), takes a batch by core::ring_batch's rule, and writes its
/// requests to p.requests and `shared_requests` (the first shared_capacity of them). Returns the
/// number taken: 0 when slot `tail` is not published yet (the poll).
template <int Tile, class T>
__device__ int64_t server_collect(const server_params<T>& p, uint64_t tail, server_request<T>* shared_requests,
                                  int shared_capacity, int32_t& op, int64_t& queries, int64_t& tiles) {
  const int lane = threadIdx.x % 32;
  int64_t taken = 0;
  queries = 0;
  tiles = 0;
  op = 0;
  for (;;) {  // 32 slots a round, while the batch can grow
    const uint64_t t = tail + uint64_t(taken) + uint64_t(lane);
    const bool in_ring = taken + lane < p.ring_slots && taken + lane < p.max_batch_requests;
    const int64_t slot = core::ring_slot_of(t, p.ring_slots);
    const core::server_slot* s = &p.slots[slot];
    server_request<T> r;
    int32_t my_op = 0;
    bool published = false;
    if (in_ring) {
      // Words 0 and 3 in one round trip (two 16-byte loads issued together, each one piece over
      // PCIe): `ready` with the request's op and side, and an in-slot query with its ticket tag.
      // A one-query request is then whole; a larger one's words 1-2 are read after an acquire.
      const ulonglong2 w0 = load_sys_16(reinterpret_cast<const unsigned long long*>(s));
      const ulonglong2 w3 = load_sys_16(reinterpret_cast<const unsigned long long*>(s) + 6);
      const uint64_t ready = core::ring_ready_value(t);
      const bool in_slot = (w0.y >> 48) != 0;
      // An in-slot request whose query word was read before its submitter wrote it: next round.
      published = w0.x == ready && (!in_slot || w3.y == ready);
      if (published) {
        my_op = int32_t(uint32_t(w0.y));
        r.side = int32_t(int16_t(uint16_t(w0.y >> 32)));
        if (in_slot) {
          r.count = 1;
          r.in_slot = true;
          r.slot_query = w3.x;
          r.slot_answer = const_cast<uint64_t*>(&s->answer);
          r.queries = reinterpret_cast<const T*>(&s->query);
          r.out = reinterpret_cast<int64_t*>(r.slot_answer);
        } else {
          cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);  // words 1-2 after `ready`
          const ulonglong2 w1 = load_sys_16(reinterpret_cast<const unsigned long long*>(s) + 2);
          const ulonglong2 w2 = load_sys_16(reinterpret_cast<const unsigned long long*>(s) + 4);
          r.count = int64_t(w1.x);
          r.queries = reinterpret_cast<const T*>(w1.y);
          r.out = reinterpret_cast<int64_t*>(w2.x);
        }
      }
    }
    const unsigned published_mask = __ballot_sync(0xffffffffu, published);
    if (taken == 0 && !(published_mask & 1u)) return 0;
    const int prefix = __ffs(~published_mask) == 0 ? 32 : __ffs(~published_mask) - 1;  // consecutive published lanes
    const int64_t my_count = lane < prefix ? r.count : 0;
    // The rule of core::ring_batch, lane by lane: the first request of the batch always; then
    // searches only, while the queries fit max_batch_queries.
    if (taken == 0) op = __shfl_sync(0xffffffffu, my_op, 0);
    int64_t running = my_count;  // inclusive scan of the counts, lane order
    for (int d = 1; d < 32; d *= 2) {
      const int64_t x = __shfl_up_sync(0xffffffffu, running, d);
      if (lane >= d) running += x;
    }
    running += queries;
    const bool searches = op == int32_t(core::server_op::search);
    const bool first = taken == 0 && lane == 0;
    const bool fits = lane < prefix && (first || (searches && my_op == int32_t(core::server_op::search) &&
                                                  running <= p.max_batch_queries));
    const unsigned take_mask = __ballot_sync(0xffffffffu, fits);
    const int take = __ffs(~take_mask) == 0 ? 32 : __ffs(~take_mask) - 1;
    // Each taken request's first tile: an exclusive scan of the tiles, lane order (every lane
    // takes part in the shuffles).
    const int64_t my_tiles = lane < take && searches ? (my_count + Tile - 1) / Tile : 0;
    int64_t tiles_through = my_tiles;
    for (int d = 1; d < 32; d *= 2) {
      const int64_t x = __shfl_up_sync(0xffffffffu, tiles_through, d);
      if (lane >= d) tiles_through += x;
    }
    if (lane < take && searches) {
      r.first_tile = tiles + tiles_through - my_tiles;
      p.requests[taken + lane] = r;
      if (taken + lane < shared_capacity) shared_requests[taken + lane] = r;
      // (p.requests reach the grid through the fence before server_post: a batch block 0
      // serves alone, the one-query round trip, pays none)
    }
    const int64_t last_running = __shfl_sync(0xffffffffu, running, take > 0 ? take - 1 : 0);
    const int64_t all_tiles = __shfl_sync(0xffffffffu, tiles_through, 31);
    if (searches && take > 0) {
      queries = last_running;
      tiles += all_tiles;
    }
    taken += take;
    if (take < 32 || !searches) return taken;
  }
}

/// Searches the flat query j (0 <= j < total) of the batch: the request that holds it, found in
/// `requests` (a short scan: block 0's batches are small).
template <class T>
__device__ __forceinline__ int server_request_of(const server_request<T>* requests, int taken, int64_t& j) {
  int r = 0;
  while (r + 1 < taken && j >= requests[r].count) j -= requests[r++].count;
  return r;
}

/// The keys of a P-ary warp search's first two steps over keys[0, n) (core/pary.hpp), staged in
/// shared memory: step 1's 32 probes, then for each of its 33 outcomes the 32 probes of step 2.
/// A search then reads global memory from its third step on.
template <class T>
struct pary_top {
  static constexpr int slots = 32 + 33 * 32;
  T key[slots];

  /// Fills the table from the layout's leaves (the sorted keys), by the whole block.
  __device__ void stage(const T* keys, int64_t n) {
    for (int i = threadIdx.x; i < slots; i += blockDim.x) {
      int64_t a = 0, b = n;
      const int lane = i < 32 ? i : (i - 32) % 32;
      if (i >= 32) core::pary_narrow(a, b, (i - 32) / 32, 32);
      key[i] = a < b ? load_l2(keys + core::pary_probe(a, b, lane, 32)) : T{};
    }
  }

  /// Probes a lane reads in one step from global memory: wide_probes = 32 x this, issued together.
  static constexpr int wide_loads = 16;
  static constexpr int wide_probes = 32 * wide_loads;

  /// The rank of before.q among keys[0, n), by a whole warp: the first two steps of 32 probes
  /// from the table, then steps of wide_probes probes from global memory, 16 loads a lane issued
  /// before any is used, so that a step costs one memory latency, as a step of 32 would, and
  /// narrows the range 513 times: at K = 2^27 two dependent reads of global memory after the
  /// table, where steps of 32 took four.
  template <class Pred>
  __device__ int64_t rank(const T* keys, int64_t n, Pred before) const {
    const int lane = threadIdx.x % 32;
    int64_t a = 0, b = n;
    int first = 0;
    if (a < b) {  // the same a and b in every lane: the steps are uniform
      first = __popc(__ballot_sync(0xffffffffu, before(key[lane])));
      core::pary_narrow(a, b, first, 32);
    }
    if (a < b) core::pary_narrow(a, b, __popc(__ballot_sync(0xffffffffu, before(key[32 + first * 32 + lane]))), 32);
    while (a < b) {
      T k[wide_loads];
      // core::pary_probe's positions; in 32 bits where they fit (the product below 2^32: 64-bit
      // products and divisions took a few hundred cycles of the step's 16 probes a lane)
      const int64_t span = b - a;
      if (span < (int64_t(1) << 32) / (wide_probes + 1)) {
#pragma unroll
        for (int u = 0; u < wide_loads; ++u)
          k[u] = load_l2(keys + a + uint32_t(u * 32 + lane + 1) * uint32_t(span) / uint32_t(wide_probes + 1));
      } else {
#pragma unroll
        for (int u = 0; u < wide_loads; ++u) k[u] = load_l2(keys + core::pary_probe(a, b, u * 32 + lane, wide_probes));
      }
      int mine = 0;  // probe u * 32 + lane: the probes before q are a prefix in that order
#pragma unroll
      for (int u = 0; u < wide_loads; ++u) mine += int(before(k[u]));
      core::pary_narrow(a, b, int(__reduce_add_sync(0xffffffffu, unsigned(mine))), wide_probes);
    }
    return a;
  }
};

/// Whether block 0's warps answer the tickets of the batch they search themselves: every
/// request holds one query and there is a warp for each. The warp's release store of `done`
/// then orders its own result before the answer: no fence by the whole block, no barrier and
/// no answering loop of warp 0 between the search and the answer (the round trip of one query).
template <int Threads, class T>
__device__ __forceinline__ bool server_searchers_answer(int32_t op, int taken, const server_request<T>* requests) {
  if (op != int32_t(core::server_op::search) || taken > Threads / 32) return false;
  for (int i = 0; i < taken; ++i)  // not just queries == taken: a request of 0 queries beside one of 2
    if (requests[i].count != 1) return false;
  return true;
}

/// Block 0 alone serves a batch of at most Threads queries: a warp per query by P-ary search
/// when there are at most as many queries as warps, else a thread per query down the index.
/// With `answer` (server_searchers_answer), the warp of request w answers ticket tail + w.
template <int Threads, class T, int B, class Top, class Global>
__device__ void server_serve_small(const server_request<T>* requests, int taken, int64_t total, const server_keys<T>& keys,
                                   const pary_top<T>& pary, const Top& top, const Global& global,
                                   const server_params<T>& p, uint64_t tail, bool answer) {
  const core::static_index_shape<B>& shape = keys.ref.shape;
  constexpr int warps = Threads / 32;
  if (total <= warps) {
    const int w = int(threadIdx.x / 32);
    if (w >= total) return;
    int64_t j = w;
    const server_request<T>& r = requests[server_request_of(requests, taken, j)];
    const T q = r.query(j);
    visit_side(side(r.side), [&]<bool Strict>(int offset) {
      // Plain loads: the layout may be new since the launch (a replace_keys).
      const int64_t rank = pary.rank(keys.ref.layout, shape.n, before<Strict, T>{q});
      if (threadIdx.x % 32 == 0) {
        const uint64_t ticket = tail + uint64_t(w);  // request w (one query each)
        if (answer && r.in_slot)  // the result and `done` in one store: nothing to order, no fence
          store_sys_16(r.slot_answer, uint64_t(rank + offset), ticket + uint64_t(p.ring_slots));
        else {
          r.out[j] = rank + offset;
          if (answer) core::ring_answer<server_device_access>(p.slots, p.ring_slots, ticket, false, nullptr);
        }
      }
    });
    return;
  }
  if (threadIdx.x >= total) return;
  int64_t j = threadIdx.x;
  const server_request<T>& r = requests[server_request_of(requests, taken, j)];
  const T q = r.query(j);
  visit_side(side(r.side), [&]<bool Strict>(int offset) {
    const bool special = core::static_index_special<Strict>(q);
    ieee_before<Strict, T> b[1] = {{special ? key_traits<T>::lowest() : q}};
    int64_t node[1] = {0};
    core::static_index_descend(top, shape, shape.levels - 1, keys.shared_level - 1, b, node);
    core::static_index_descend(global, shape, keys.shared_level - 1, 0, b, node);
    const int64_t rank = special ? core::static_index_rank<Strict>(global, shape, q)
                                 : node[0] * B + core::static_index_node_rank<B>(global, node[0] * B, b[0]);
    r.out[j] = rank + offset;
  });
}

/// *to = *from read at L2 in 4-byte words (load_l2), written straight to `to`: for what block 0
/// rewrites while the other blocks run (the control block's key set; the batch's requests are
/// read field by field). A plain load could return an earlier batch's line from the SM's L1:
/// the acquire of `posted` does not refresh it (the H100 runs read stale tile counts and left
/// the last tiles unsearched).
template <class S>
__device__ __forceinline__ void copy_l2_words(S* to, const S* from) {
  static_assert(sizeof(S) % 4 == 0 && alignof(S) >= 4, "whole 4-byte words");
  for (int i = 0; i < int(sizeof(S) / 4); ++i)
    reinterpret_cast<unsigned int*>(to)[i] = __ldcg(reinterpret_cast<const unsigned int*>(from) + i);
}

/// Every block's share of a posted search: tiles blockIdx.x, + gridDim.x, ... of the batch's
/// list (each request's queries cut into tiles of Threads x Items). What a later batch rewrites
/// (the requests, the queries in buffers callers reuse, the key set) is read at L2 (load_l2),
/// never through L1 or the read-only path: the H100 runs got stale requests and queries of
/// earlier batches from those caches (tiles left unsearched, answers to old queries).
template <int Threads, int Items, class T, int B, class Top, class Global>
__device__ void server_serve_tiles(const server_request<T>* requests, int taken, int64_t tiles,
                                   const server_keys<T>& keys, const Top& top, const Global& global) {
  constexpr int64_t tile = int64_t(Threads) * Items;
  int r = 0;
  for (int64_t g = blockIdx.x; g < tiles; g += gridDim.x) {
    while (r + 1 < taken && load_l2(&requests[r + 1].first_tile) <= g) ++r;  // g only grows
    const server_request<T>* req = requests + r;  // its fields at L2 (block 0 rewrites them)
    const T* queries = load_l2(&req->queries);
    int64_t* out = load_l2(&req->out);
    const int64_t count = load_l2(&req->count), begin = (g - load_l2(&req->first_tile)) * tile;
    visit_side(side(load_l2(&req->side)), [&]<bool Strict>(int offset) {
      index_search_tile<Strict, Threads, Items, true>(top, global, keys.ref.shape, keys.shared_level, queries, count,
                                                      out, offset, begin);
    });
  }
}

/// Posts block 0's batch to the other blocks (thread 0 of block 0).
template <class T>
__device__ void server_post(server_control<T>* c, int32_t op, int32_t requests, int64_t tiles) {
  c->finished = 0;
  c->op = op;
  c->requests = requests;
  c->tiles = tiles;
  cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(c->posted).fetch_add(1, cuda::memory_order_release);
}

/// Thread 0 of block 0, idle since release_ns: true when the kernel may leave the device (the
/// state word then reads server_leaving), false when the next ticket was published after all
/// (server_running again). The header's release.
template <class T>
__device__ bool server_may_leave(const server_params<T>& p, uint64_t tail) {
  cuda::atomic_ref<uint64_t, cuda::thread_scope_system> state(*p.state);
  state.store(server_leaving, cuda::memory_order_relaxed);
  cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
  if (!core::ring_published<server_device_access>(p.slots, p.ring_slots, tail)) return true;
  state.store(server_running, cuda::memory_order_relaxed);
  return false;
}

/// Thread 0 of block 0: waits until the other blocks are done with the posted batch.
template <class T>
__device__ void server_wait_finished(server_control<T>* c, int64_t idle_sleep_ns) {
  const uint32_t others = gridDim.x - 1;
  uint32_t ns = 0;
  while (cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(c->finished).load(cuda::memory_order_acquire) < others)
    ns = poll_backoff(ns, idle_sleep_ns < 256 ? idle_sleep_ns : 256);  // a batch ends soon: short naps
}

/// The persistent kernel. Dynamic shared memory: the staged top levels of the index (the
/// largest the launch allowed; server_keys::shared_level fits it). At most 64 registers a thread
/// (two blocks' worth of an SM's registers at Threads = 512): the SMs the server holds keep room
/// for other kernels (the index build of a replace_keys among them).
template <class T, int Threads, int Items>
__global__ void __launch_bounds__(Threads, 65536 / (Threads * 64)) server_kernel(server_params<T> p) {
  constexpr int B = core::cuda_node_keys<T>;
  constexpr int64_t tile = int64_t(Threads) * Items;
  extern __shared__ __align__(16) unsigned char staged[];
  __shared__ server_request<T> small[server_small_requests];  // block 0: the batch's requests, when they fit
  __shared__ server_batch<T> batch;
  __shared__ server_keys<T> keys;
  __shared__ pary_top<T> pary;  // block 0: the P-ary search's first two steps
  server_control<T>* c = p.control;
  if (threadIdx.x == 0) copy_l2_words(&keys, &c->keys);
  __syncthreads();
  // Plain loads of the layout throughout (never the read-only path): a replace_keys brings a
  // layout written while the kernel runs, perhaps where an earlier one was.
  auto restage = [&] {
    if (blockIdx.x == 0) pary.stage(keys.ref.layout, keys.ref.shape.n);
    return stage_index_top<T, B, false>(keys.ref.layout, keys.ref.shape, keys.shared_level, staged);
  };
  auto top = restage();

  if (blockIdx.x != 0) {  // a worker: wait for posts, serve them, count itself finished
    uint32_t seen = 0;
    for (;;) {
      if (threadIdx.x == 0) {
        uint32_t ns = 0;
        while (cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(c->posted).load(cuda::memory_order_acquire) == seen)
          ns = poll_backoff(ns, p.idle_sleep_ns);
        batch.op = load_l2(&c->op);
        batch.taken = load_l2(&c->requests);
        batch.tiles = load_l2(&c->tiles);
        if (batch.op == int32_t(core::server_op::replace_keys)) copy_l2_words(&keys, &c->keys);
      }
      ++seen;
      __syncthreads();
      const int32_t op = batch.op;
      if (op == int32_t(core::server_op::stop)) return;
      if (op == server_release_op) {  // counted, so that the leader may reset `posted` for the next launch
        if (threadIdx.x == 0)
          cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(c->finished).fetch_add(1, cuda::memory_order_release);
        return;
      }
      if (op == int32_t(core::server_op::replace_keys)) {
        top = restage();
      } else {
        server_serve_tiles<Threads, Items, T, B>(p.requests, batch.taken, batch.tiles, keys, top,
                                                 l2_nodes<T>{keys.ref.layout});
        __threadfence_system();  // the results, before the count that lets block 0 answer
      }
      __syncthreads();
      if (threadIdx.x == 0)
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(c->finished).fetch_add(1, cuda::memory_order_release);
    }
  }

  // Block 0: the leader, from where the last launch left the ring.
  uint64_t tail = load_l2(&c->tail);
  uint64_t last_request = globaltimer_ns();
  for (;;) {
    if (threadIdx.x < 32) {
      int32_t op = 0;
      int64_t queries = 0, tiles = 0, taken = 0;
      uint32_t ns = 0;
      for (;;) {
        const bool hot = globaltimer_ns() - last_request < uint64_t(poll_hot_ns);
        int ready = 1;  // cold: lane 0 polls the next slot alone first (one PCIe read a poll)
        if (!hot) {
          if (threadIdx.x == 0) ready = core::ring_published<server_device_access>(p.slots, p.ring_slots, tail);
          ready = __shfl_sync(0xffffffffu, ready, 0);
        }
        if (ready) taken = server_collect<tile>(p, tail, small, server_small_requests, op, queries, tiles);
        if (taken > 0) break;
        if (!hot && p.release_ns > 0 && globaltimer_ns() - last_request >= uint64_t(p.release_ns)) {
          int leave = 0;
          if (threadIdx.x == 0) leave = server_may_leave(p, tail);
          if (__shfl_sync(0xffffffffu, leave, 0)) {
            op = server_release_op;
            break;
          }
          last_request = globaltimer_ns() - uint64_t(poll_hot_ns);  // (a request came: poll on, cold)
          continue;
        }
        ns = poll_backoff(ns, hot ? (p.idle_sleep_ns < poll_hot_nap_ns ? p.idle_sleep_ns : poll_hot_nap_ns)
                                    : p.idle_sleep_ns);
      }
      if (op == int32_t(core::server_op::search) && p.max_delay_ns > 0 && queries < p.preferred_batch_queries) {
        // The dynamic batcher: wait up to max_delay for the preferred number of queries.
        const uint64_t deadline = globaltimer_ns() + uint64_t(p.max_delay_ns);
        while (queries < p.preferred_batch_queries && globaltimer_ns() < deadline) {
          __nanosleep(256);
          taken = server_collect<tile>(p, tail, small, server_small_requests, op, queries, tiles);
        }
      }
      if (threadIdx.x == 0) {
        batch.op = op;
        batch.taken = int32_t(taken);
        batch.queries = queries;
        batch.tiles = tiles;
      }
    }
    const long long seen = clock64();  // (thread 0's, for the statistics)
    __syncthreads();
    const int32_t op = batch.op;
    const int taken = batch.taken;
    if (op == server_release_op) {  // every block leaves; the leader last, having said where the ring stands
      if (threadIdx.x == 0) {
        server_post(c, op, 0, 0);
        server_wait_finished(c, p.idle_sleep_ns);
        c->posted = 0;
        c->finished = 0;
        c->tail = tail;
        __threadfence();  // (the next launch reads them after this one ended: the launch orders them)
        cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(*p.state).store(server_left, cuda::memory_order_release);
      }
      return;
    }
    const bool answered = server_searchers_answer<Threads>(op, taken, small);
    const long long begun = clock64();
    long long served = begun;
    if (op == int32_t(core::server_op::search)) {
      if (batch.queries <= Threads && taken <= server_small_requests) {
        server_serve_small<Threads, T, B>(small, taken, batch.queries, keys, pary, top,
                                          l2_nodes<T>{keys.ref.layout}, p, tail, answered);
        served = clock64();
        if (!answered)
          __threadfence_system();  // each writer's results, before warp 0's answers (a barrier alone
                                   // does not wait for other warps' writes: the first H100 run)
      } else {
        if (threadIdx.x < 32) {
          __threadfence();  // the requests warp 0 wrote in p.requests, before the post releases them
          __syncwarp();
          if (threadIdx.x == 0) server_post(c, op, taken, batch.tiles);
        }
        __syncthreads();
        server_serve_tiles<Threads, Items, T, B>(p.requests, taken, batch.tiles, keys, top,
                                                 l2_nodes<T>{keys.ref.layout});
        __threadfence_system();
        if (threadIdx.x == 0) server_wait_finished(c, p.idle_sleep_ns);
      }
    } else if (op == int32_t(core::server_op::replace_keys)) {
      if (threadIdx.x == 0) {
        // The new index, from the request's page-locked payload (written before `ready`).
        const core::server_slot& s = p.slots[core::ring_slot_of(tail, p.ring_slots)];
        copy_sys_words(&keys, reinterpret_cast<const server_keys<T>*>(load_sys(&s.queries)));
        c->keys = keys;
        server_post(c, op, 0, 0);
      }
      __syncthreads();
      top = restage();
      if (threadIdx.x == 0) server_wait_finished(c, p.idle_sleep_ns);
    } else if (op == int32_t(core::server_op::stop)) {
      if (threadIdx.x == 0) server_post(c, op, 0, 0);
    }
    __syncthreads();
    // Answer the batch's tickets, a lane each (release at system scope: the results first),
    // unless the searchers did.
    if (threadIdx.x < 32 && !answered)
      for (int i = threadIdx.x; i < taken; i += 32)
        core::ring_answer<server_device_access>(p.slots, p.ring_slots, tail + uint64_t(i), false, nullptr);
    if (threadIdx.x == 0) {  // statistics, after the answers: no fence (the host's copy reads them at L2, soon)
      ++c->batches;
      ++c->batch_requests[taken > 1 ? min(15, 63 - __clzll(taken)) : 0];
      if (op == int32_t(core::server_op::search) && taken == 1 && served != begun) {
        ++c->timed_batches;
        c->take_cycles += begun - seen;
        c->serve_cycles += served - begun;
      }
    }
    if (op == int32_t(core::server_op::stop)) return;
    tail += uint64_t(taken);
    last_request = globaltimer_ns();
  }
}

}  // namespace gsearch::cuda_backend
