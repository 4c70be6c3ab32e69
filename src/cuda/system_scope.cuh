#pragma once
/// \file
/// What a persistent kernel (the search server's, the functional-arrays machine's) uses to talk
/// with the host through mapped page-locked memory: loads at system scope, the GPU's clock, and
/// the polling naps of a kernel waiting for the host's next request.

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>

namespace gsearch::cuda_backend {

/// A word in host memory, read at system scope (a relaxed atomic load: never an earlier value
/// from a cache; after the acquire of a request's `ready`, the value its submitter wrote).
template <class W>
__device__ __forceinline__ W load_sys(const W* p) {
  return cuda::atomic_ref<W, cuda::thread_scope_system>(*const_cast<W*>(p)).load(cuda::memory_order_relaxed);
}

/// 16 bytes of host memory (16-aligned) in one vector load, relaxed at system scope (load_sys's
/// semantics, which is what the memory model promises to see the submitter's words after the
/// acquire of `ready`), the two words together: loads issued together cost one PCIe round trip,
/// where scalar relaxed atomic loads took one each. (ld.volatile was as fast; the soak failures
/// first blamed on it were the test's: docs/perf-notes.md, "Search server".)
__device__ __forceinline__ ulonglong2 load_sys_16(const unsigned long long* p) {
  ulonglong2 v;
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(v.x), "=l"(v.y) : "l"(p) : "memory");
  return v;
}

/// 16 bytes to host memory (16-aligned) in one vector store, relaxed at system scope: {x, y}
/// land in one piece (one PCIe write), so a reader that sees y sees x. The search server's
/// answer to an in-slot request (core::server_slot: the result, then `done`).
__device__ __forceinline__ void store_sys_16(uint64_t* p, uint64_t x, uint64_t y) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(x), "l"(y) : "memory");
}

/// *to = *from (a struct in host memory: a replace_keys' payload), read at system scope in
/// 4-byte words, written straight to `to` (shared memory: no copy in local memory).
template <class S>
__device__ __forceinline__ void copy_sys_words(S* to, const S* from) {
  static_assert(sizeof(S) % 4 == 0 && alignof(S) >= 4, "whole 4-byte words");
  for (int i = 0; i < int(sizeof(S) / 4); ++i)
    reinterpret_cast<unsigned int*>(to)[i] = load_sys(reinterpret_cast<const unsigned int*>(from) + i);
}

/// The GPU's global timer, in ns.
__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Polling: naps of at most poll_hot_nap_ns while requests came in the last poll_hot_ns, then
/// growing to the kernel's idle cap (docs/design.md: the trade-off of latency and an idle
/// kernel's reads over PCIe).
inline constexpr int64_t poll_hot_nap_ns = 64;
inline constexpr int64_t poll_hot_ns = 200000;

/// Sleeps `ns` ns (if any) and returns the next nap: doubling from 32 ns up to `cap`.
__device__ __forceinline__ uint32_t poll_backoff(uint32_t ns, int64_t cap) {
  if (ns > 0) __nanosleep(ns);
  const uint64_t next = ns == 0 ? 32 : uint64_t(ns) * 2;
  return uint32_t(next < uint64_t(cap) ? next : uint64_t(cap));
}

}  // namespace gsearch::cuda_backend
