#pragma once
/// \file
/// The CPU backend of the static index (core/static_index.hpp's S+ tree with 64-byte nodes),
/// instantiated in src/static_index/cpu.cpp for every key and output type. Arguments are
/// validated by the public layer (src/static_index/api.cpp) before they get here.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/static_index.hpp"

namespace gsearch::cpu_backend {

/// Host memory for a layout: aligned to 64 bytes, so that every node is one cache line; from
/// 4 MB on, to 2 MB and advised into transparent huge pages (Linux), which spares the search a
/// TLB miss per level and the build most of its page faults (docs/perf-notes.md, "Static index").
struct aligned_free {
  void operator()(void* p) const noexcept { std::free(p); }
};
template <class T>
std::unique_ptr<T[], aligned_free> allocate_layout(int64_t slots) {
  constexpr size_t huge = size_t{2} << 20;
  const size_t bytes = size_t(slots) * sizeof(T);
  const size_t align = bytes >= 2 * huge ? huge : 64;
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (align == huge) madvise(p, (bytes + align - 1) / align * align, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  return std::unique_ptr<T[], aligned_free>(static_cast<T*>(p));
}

/// Fills the layout of the n sorted keys (core::static_index_shape<cpu_node_keys<T>>(n).size() slots)
/// on all cores: the leaves are a copy, the separators one read each.
template <class T>
void index_build(int threads, const T* keys, int64_t n, T* layout);

/// out[j] = the result of queries[j] on side s: each thread walks 8 queries in lockstep, the
/// node compares in the widest SIMD the CPU has (picked at run time).
template <class T, class Out>
void index_search(int threads, side s, const static_index_host_ref<T>& ref, const T* queries, int64_t q, Out* out);

/// The one-shot search of algorithm::index: builds a temporary index of the k keys, then
/// searches it.
template <class T, class Out>
void index_search_keys(int threads, side s, const T* keys, int64_t k, const T* queries, int64_t q, Out* out);

}  // namespace gsearch::cpu_backend
