#pragma once
/// \file
/// A static search index: built once from sorted keys, searched many times.
///
///   gsearch::static_index<float> index(gsearch::cuda, device_keys);   // or gsearch::cpu, host keys
///   index.upper_bound(gsearch::cuda.on(stream), device_queries, device_out);
///   auto ref = index.device_ref();   // trivially copyable: ref.upper_bound(q) in your kernel
///                                    // (compile it with nvcc --expt-relaxed-constexpr, as gsearch's are)
///
/// The layout is an S+ tree (core/static_index.hpp): the sorted keys padded to whole nodes, and
/// above them levels of separators, B per node, each node with B + 1 children. A search reads one
/// node per level, log_{B+1}(n) nodes, where a binary search reads log2(n) keys scattered over as
/// many cache lines / sectors. Nodes are one 64-byte cache line on the CPU (cpu_node_keys) and 16
/// bytes on the GPU, one vector load (cuda_node_keys). Memory: the keys plus about 1/B of them, rounded up
/// to whole nodes (memory_bytes()); the sorted keys are copied, so the caller's array can go.
///
/// Semantics are those of search.hpp: lower_bound(q) = the number of keys < q, upper_bound(q) =
/// the number <= q, predecessor(q) = upper_bound(q) - 1, in the order of core/key_traits.hpp (NaN
/// after +inf, -0.0 == 0.0); the same six key types; int64 or int32 output.
///
/// Where it lives: an index built with gsearch::cpu is in host memory and is searched with
/// gsearch::cpu (all cores, the node compares in SIMD: AVX-512 or AVX2 when the CPU has them,
/// chosen at run time); one built with gsearch::cuda is in the current device's memory, built by
/// a kernel on exec's stream, and searched with gsearch::cuda (stream-ordered) while the same
/// device is current. Searching with the other backend, or on another device, throws
/// invalid_argument. Building waits for nothing on CUDA except with check_sorted (the check
/// synchronizes): the keys must stay valid until the build has run, and a search on another
/// stream must be ordered after it (an event, or synchronize(exec)).
///
/// Errors: invalid_argument (null data with a non-zero size, unsorted keys when checked, the
/// wrong backend, output size != query count, an int32 output too small for the key count),
/// cuda_error, out_of_memory (std::bad_alloc on the host).

#include <cstdint>

#include "gsearch/core/error.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/core/static_index.hpp"
#include "gsearch/detail_placed_memory.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

// The handles of an index, static_index_host_ref and static_index_device_ref, are in
// core/static_index.hpp (the backends take them too).

/// Options of the build.
struct index_options {
  /// Check that the keys are sorted first (O(keys)); throw invalid_argument if not.
  bool check_sorted = false;
};

template <class T>
class static_index {
  static_assert(key_type<T>, "gsearch::static_index: keys must be one of the six key types");

 public:
  /// An empty index in host memory (every search answers 0, or -1 for predecessor).
  static_index();
  /// Builds the index of `sorted_keys` (host memory) on all cores.
  static_index(const cpu_t& exec, span<const T> sorted_keys, const index_options& options = {});
  /// Builds the index of `sorted_keys` (device memory) on the current device, on exec's stream.
  static_index(const cuda_t& exec, span<const T> sorted_keys, const index_options& options = {});
  static_index(static_index&& other) noexcept;
  static_index& operator=(static_index&& other) noexcept;
  static_index(const static_index&) = delete;
  static_index& operator=(const static_index&) = delete;
  ~static_index();

  /// The keys indexed.
  int64_t size() const { return n_; }
  /// True when the layout is in device memory (built with gsearch::cuda).
  bool on_device() const { return layout_.on_device(); }
  /// The CUDA device the layout is on (-1 for a host index).
  int device() const { return layout_.device(); }
  /// Keys per node (B): cpu_node_keys<T> or cuda_node_keys<T>.
  int node_keys() const;
  /// Levels of the tree, the leaves included.
  int levels() const;
  /// Bytes of the layout: keys, padding and separators (the index's whole memory, but for this
  /// object).
  int64_t memory_bytes() const { return int64_t(layout_.bytes()); }

  /// Batched search, out[j] = the result of queries[j] on side s (queries and out in the memory
  /// the index lives in).
  void search(const cpu_t& exec, side s, span<const T> queries, span<int64_t> out) const;
  void search(const cpu_t& exec, side s, span<const T> queries, span<int32_t> out) const;
  void search(const cuda_t& exec, side s, span<const T> queries, span<int64_t> out) const;
  void search(const cuda_t& exec, side s, span<const T> queries, span<int32_t> out) const;

#define GSEARCH_INDEX_SIDES(EXEC, OUT)                                                    \
  /** numpy side='left': the number of keys < q. */                                       \
  void lower_bound(const EXEC& exec, span<const T> queries, span<OUT> out) const {         \
    search(exec, side::left, queries, out);                                                \
  }                                                                                        \
  /** numpy side='right': the number of keys <= q. */                                     \
  void upper_bound(const EXEC& exec, span<const T> queries, span<OUT> out) const {         \
    search(exec, side::right, queries, out);                                               \
  }                                                                                        \
  /** The largest i with keys[i] <= q, or -1. */                                          \
  void predecessor(const EXEC& exec, span<const T> queries, span<OUT> out) const {         \
    search(exec, side::pred, queries, out);                                                \
  }
  GSEARCH_INDEX_SIDES(cpu_t, int64_t)
  GSEARCH_INDEX_SIDES(cpu_t, int32_t)
  GSEARCH_INDEX_SIDES(cuda_t, int64_t)
  GSEARCH_INDEX_SIDES(cuda_t, int32_t)
#undef GSEARCH_INDEX_SIDES

  /// The handle of a host-memory index; invalid_argument for a device one.
  static_index_host_ref<T> host_ref() const;
  /// The handle of a device-memory index, for kernels; invalid_argument for a host one.
  static_index_device_ref<T> device_ref() const;

 private:
  detail::placed_memory layout_;  // the layout's slots: host (64-byte aligned) or device memory
  int64_t n_ = 0;                 // keys
};

#define GSEARCH_EXTERN_STATIC_INDEX(T) extern template class static_index<T>;
GSEARCH_KEY_TYPES(GSEARCH_EXTERN_STATIC_INDEX)
#undef GSEARCH_EXTERN_STATIC_INDEX

}  // namespace gsearch
