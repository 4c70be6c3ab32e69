#pragma once
/// \file
/// The search server's request ring (seed 004 §3: the CPU and the GPU in a dialogue through
/// memory both can see), shared by the server's backends: the GPU's persistent kernel and the
/// CPU's worker thread serve it the same way (docs/design.md, "The search server").
///
/// N slots in memory the submitters and the server both see (mapped pinned host memory for the
/// GPU). Every word has one writer, and the server only loads and stores (never a
/// read-modify-write: those are not atomic on host memory over PCIe):
///  - a submitter takes ticket t from a counter only submitters touch (host memory, host
///    atomics), waits until slot t % N is free (released >= t: the submitter of ticket t - N is
///    done with it; `released` is a host word per slot, outside the ring, which only submitters
///    touch; this wait is the backpressure of a full ring), writes the request into the slot and
///    publishes it: slot.ready = t + 1 (release);
///  - the server serves tickets in order: it waits until slot(tail).ready == tail + 1 (acquire),
///    takes as many consecutive published requests of one kind as its batching rules allow, serves
///    them (the results go straight to each request's output, or the slot's staging) and answers
///    each: slot.done = t + N (release);
///  - the submitter waits until done >= t + N (acquire), copies any staged results out, then
///    frees the slot: released = t + N (so a slot is never reused before its answer was read).
/// A failure is sticky: the first request the server cannot serve (on the GPU a CUDA error, which
/// poisons the context) makes it store that ticket in the ring's `failed_from` word, and every
/// ticket from there on is failed (so no status needs to outlive its slot).
/// A ticket taken must be published (the server waits for it in order): nothing that can fail
/// sits between taking a ticket and publishing it.
/// The memory accesses go through an `Access` policy (load_acquire, store_release on uint64_t),
/// so that core stays free of CUDA headers: std::atomic_ref on the CPU, cuda::atomic_ref at
/// system scope in the kernel.

#include <cstddef>
#include <cstdint>

#include "gsearch/core/config.hpp"

namespace gsearch::core {

/// The operations the server's table dispatches on. search is the first; the index-interval
/// improve and the functional arrays of seed 004 §4 take the next codes.
enum class server_op : int32_t {
  search = 1,        ///< count queries searched on `side`; out: int64 positions
  replace_keys = 2,  ///< between batches: serve later requests from the key set at `queries`
  stop = 3,          ///< the last ticket: the server answers it and leaves its loop
};

/// One slot, two 64-byte lines: the request (its submitter writes line 0), then the answer (the
/// server writes line 1). The GPU server reads a request as 16-byte words, each loaded in one
/// piece over PCIe, and polls words 0 and 3 together: a request of one query from host memory
/// travels whole in them (`in_slot`: the query in word 3 beside its ticket tag, its answer in
/// line 1 beside `done`), so that the kernel sees it in one PCIe round trip and answers it with
/// one store; larger requests are read from words 1-2 after the acquire of `ready`.
struct alignas(64) server_slot {
  uint64_t ready = 0;    ///< word 0: submitter: ticket + 1 once published
  int32_t op = 0;        ///< server_op
  int16_t side = 0;      ///< gsearch::side of a search
  uint16_t in_slot = 0;  ///< 1: one query in `query`, its answer in `answer` (count is 1)
  int64_t count = 0;     ///< word 1: queries
  uint64_t queries = 0;  ///< their address (device-visible for the GPU server)
  uint64_t out = 0;      ///< word 2: the results' address
  uint64_t unused = 0;
  uint64_t query = 0;      ///< word 3: an in-slot query (its bytes, zero-padded) ...
  uint64_t query_tag = 0;  ///< ... and ticket + 1 once it is this ticket's
  alignas(64) uint64_t answer = 0;  ///< line 1: an in-slot request's result (int64) ...
  uint64_t done = 0;  ///< ... server: ticket + N once answered (initially the slot's index)
};
static_assert(sizeof(server_slot) == 128, "a slot is two 64-byte lines");
// The GPU server's 16-byte loads and stores assume this layout.
static_assert(offsetof(server_slot, op) == 8 && offsetof(server_slot, count) == 16 && offsetof(server_slot, queries) == 24 &&
                  offsetof(server_slot, out) == 32 && offsetof(server_slot, query) == 48 &&
                  offsetof(server_slot, query_tag) == 56 && offsetof(server_slot, answer) == 64 &&
                  offsetof(server_slot, done) == 72,
              "the slot's layout that the GPU server's vector loads and stores assume");

/// `failed_from`'s value while every request so far was served.
inline constexpr uint64_t ring_no_failure = ~uint64_t(0);

/// The slot of ticket t in a ring of n slots.
GSEARCH_HD inline int64_t ring_slot_of(uint64_t ticket, int64_t n) { return int64_t(ticket % uint64_t(n)); }

/// Whether ticket t may use its slot, from the slot's `released` word (its previous occupant,
/// t - N, was answered and read), and whether ticket t was answered, from the slot's `done`.
GSEARCH_HD inline bool ring_free(uint64_t released, uint64_t ticket) { return released >= ticket; }
GSEARCH_HD inline bool ring_answered(uint64_t done, uint64_t ticket, int64_t n) { return done >= ticket + uint64_t(n); }

/// The value of `ready` once ticket t is published.
GSEARCH_HD inline uint64_t ring_ready_value(uint64_t ticket) { return ticket + 1; }

/// Whether the server may serve ticket t now (its request published).
template <class Access>
GSEARCH_HD bool ring_published(const server_slot* slots, int64_t n, uint64_t ticket) {
  return Access::load_acquire(&slots[ring_slot_of(ticket, n)].ready) == ring_ready_value(ticket);
}

/// The server's answer to ticket t (release: its results are visible to the submitter once it
/// sees done). A failed ticket stores itself in *failed_from first, unless an earlier one did.
template <class Access>
GSEARCH_HD void ring_answer(server_slot* slots, int64_t n, uint64_t ticket, bool failed, uint64_t* failed_from) {
  if (failed && Access::load_acquire(failed_from) == ring_no_failure) Access::store_release(failed_from, ticket);
  Access::store_release(&slots[ring_slot_of(ticket, n)].done, ticket + uint64_t(n));
}

/// Whether an answered ticket t failed.
template <class Access>
GSEARCH_HD bool ring_failed(const uint64_t* failed_from, uint64_t ticket) {
  return Access::load_acquire(failed_from) <= ticket;
}

/// How many of the tickets from `tail` the server takes as one batch: consecutive, published,
/// of the same op as the first (a replace_keys or stop is a batch of its own, so no request
/// sees a mix of key sets), at most max_requests of them and, for searches, queries adding up to
/// at most max_queries (the first is always taken, whatever its size). 0 when tail is not
/// published yet.
template <class Access>
GSEARCH_HD int64_t ring_batch(const server_slot* slots, int64_t n, uint64_t tail, int64_t max_requests,
                              int64_t max_queries) {
  if (!ring_published<Access>(slots, n, tail)) return 0;
  const server_slot& first = slots[ring_slot_of(tail, n)];
  if (first.op != int32_t(server_op::search)) return 1;
  int64_t taken = 1, queries = first.count;
  while (taken < max_requests && taken < n) {
    const uint64_t t = tail + uint64_t(taken);
    if (!ring_published<Access>(slots, n, t)) break;
    const server_slot& s = slots[ring_slot_of(t, n)];
    if (s.op != int32_t(server_op::search) || queries + s.count > max_queries) break;
    queries += s.count;
    ++taken;
  }
  return taken;
}

}  // namespace gsearch::core
