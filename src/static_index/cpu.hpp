#pragma once
/// \file
/// The CPU backend of the static index (core/static_index.hpp's S+ tree with 64-byte nodes),
/// instantiated in src/static_index/cpu.cpp for every key and output type. Arguments are
/// validated by the public layer (src/static_index/api.cpp) before they get here.

#include <cstdint>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/static_index.hpp"

// A layout's host memory is a detail::placed_memory::host (gsearch/detail_placed_memory.hpp):
// 64-byte aligned, every node one cache line; from 4 MB on 2 MB-aligned, in huge pages.

namespace gsearch::cpu_backend {

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
