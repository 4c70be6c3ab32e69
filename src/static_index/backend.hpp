#pragma once
/// \file
/// The static index's backends: each operation once for the CPU (the handle: its thread count)
/// and CUDA (the stream), in lists that both instantiate (src/backend_ops.hpp): the CPU's in
/// cpu.cpp, CUDA's in cuda/static_index.cu. Arguments are validated by the public layer (api.cpp)
/// before they get here. A backend's layout is core/static_index.hpp's S+ tree with its own nodes
/// (node_keys: 64-byte nodes on the CPU, 16-byte ones on CUDA), and its handle on an index is its
/// own (index_ref: static_index_host_ref, static_index_device_ref). On CUDA the arrays are in
/// device memory and every call is enqueued on the stream.
///
///   index_build        fills the layout of the n sorted keys
///                      (core::static_index_shape<node_keys<T>>(n).size() slots): the leaves a copy,
///                      the separators one read each
///   index_search       out[j] = the search of queries[j] on side s in the index `ref`
///   index_search_keys  the one-shot search of algorithm::index, which the search family's
///                      backends run: a temporary index of the k keys, built, then searched (on
///                      CUDA from the stream-ordered pool, done when `gate` is open: launch_gate.hpp)

#include <cstdint>

#include "backend_ops.hpp"
#include "cuda/launch_gate.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/static_index.hpp"

namespace gsearch::cpu_backend {
template <class T>
inline constexpr int node_keys = core::cpu_node_keys<T>;
template <class T>
using index_ref = static_index_host_ref<T>;
}  // namespace gsearch::cpu_backend
namespace gsearch::cuda_backend {
template <class T>
inline constexpr int node_keys = core::cuda_node_keys<T>;
template <class T>
using index_ref = static_index_device_ref<T>;
}  // namespace gsearch::cuda_backend

#define GSEARCH_INDEX_BUILD_OPS(X, T) X(T, void, index_build, (const T* keys, int64_t n, T* layout))

#define GSEARCH_INDEX_SEARCH_OPS(X, T, Out)                                                            \
  X(T, Out, void, index_search, (side s, const index_ref<T>& ref, const T* queries, int64_t q, Out* out))

#define GSEARCH_INDEX_KEYS_CPU_OPS(X, T, Out)                                                          \
  X(T, Out, void, index_search_keys, (side s, const T* keys, int64_t k, const T* queries, int64_t q, Out* out))

#define GSEARCH_INDEX_KEYS_CUDA_OPS(X, T, Out)                                                         \
  X(T, Out, void, index_search_keys,                                                                    \
    (side s, const T* keys, int64_t k, const T* queries, int64_t q, Out* out, launch_gate gate))

GSEARCH_DECLARE_BACKEND_OPS(GSEARCH_INDEX_BUILD_OPS)
GSEARCH_DECLARE_BACKEND_RESULT_OPS(GSEARCH_INDEX_SEARCH_OPS)
GSEARCH_DECLARE_CPU_RESULT_OPS(GSEARCH_INDEX_KEYS_CPU_OPS)
GSEARCH_DECLARE_CUDA_RESULT_OPS(GSEARCH_INDEX_KEYS_CUDA_OPS)
