#pragma once
/// \file
/// A static search index: the S+ tree (the "static B+ tree" of Khuong and Morin, "Array layouts
/// for comparison-based searching", and algorithmica.org's "S+ tree"), laid out in one flat
/// array. A search reads one node of B keys per level, so log_{B+1}(n) cache lines (CPU, B = 16
/// 4-byte keys = 64 bytes) or 16-byte vector loads (GPU, B = 4), where a binary search reads
/// log2(n) keys, each from its own line once n outgrows the cache.
///
/// Level 0, the leaves, is the sorted keys themselves, padded to a multiple of B with
/// key_traits<T>::highest(), so the rank of a query is its leaf position. Each level above has
/// one node per B + 1 nodes of the level below (rounded up), and a node holds B separators for
/// its B + 1 children: separator j is the smallest key of child j + 1's subtree (its first
/// leaf key), or highest() where that child does not exist. The levels follow each other, leaves
/// first and the root (one node) last; with L leaf nodes, N1 = ceil(L / (B + 1)), ...:
///
///     slot  0          L*B          (L+N1)*B                 size - B       size
///           | leaves   | level 1    | level 2 | ...          | root         |
///             n sorted keys, then highest() up to L*B
///
/// Node k of level h covers the leaves [k (B+1)^h, (k+1) (B+1)^h): child i of node k is node
/// k (B+1) + i of level h - 1. So the tree needs no pointers, only the level offsets
/// (static_index_shape), and every slot's value is a function of the sorted keys (static_index_slot), for a
/// GPU thread or a CPU loop to fill any slot independently.
///
/// Order: the library's total order (key_less: NaN last, -0.0 == 0.0). Alignment: node k of
/// level h starts at slot offset(h) + k B, a multiple of B; a layout array aligned to B keys
/// puts every node in one 64-byte line (B = 16, 4-byte keys) or one 16-byte vector (B = 4).

#include <cstdint>
#include <limits>
#include <type_traits>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"

namespace gsearch::core {

/// The node sizes of the backends' indexes, in keys: a 64-byte cache line on the CPU (16 4-byte
/// or 8 8-byte keys: one line read per level, compared in one or two SIMD instructions), 16
/// bytes on the GPU (4 or 2 keys: one vector load per level). On the H100 a thread's scattered
/// load costs about the same whatever its width up to 16 bytes, so the node that resolves the
/// most per load is one load wide: 16-byte nodes beat 32-byte ones by 1.5-1.8x and 64-byte ones
/// by 3-4x (docs/perf-notes.md, "Static index", index-sweep-1/-2).
template <class T>
inline constexpr int cpu_node_keys = 64 / int(sizeof(T));
template <class T>
inline constexpr int cuda_node_keys = 16 / int(sizeof(T));

/// The shape of the S+ tree over n keys with B keys per node: the number of levels and each
/// level's first slot in the flat layout. At least one leaf node even for n = 0 (all padding),
/// so every search reads the same kind of path. Precondition: 0 <= n <= 2^62.
template <int B>
struct static_index_shape {
  static_assert(B >= 2, "a node needs at least two keys");

  /// Levels of the tree over 2^62 keys: the most any shape has.
  static constexpr int max_levels = [] {
    int levels = 1;
    for (int64_t nodes = ((int64_t{1} << 62) + B - 1) / B; nodes > 1; nodes = (nodes + B) / (B + 1)) ++levels;
    return levels;
  }();

  int64_t n = 0;                        ///< the keys
  int levels = 0;                       ///< levels, leaves included: 1 for n <= B
  int64_t offset[max_levels + 1] = {};  ///< level h's first slot; offset[levels] = size()

  GSEARCH_HD constexpr explicit static_index_shape(int64_t keys) : n(keys) {
    int64_t nodes = keys > B ? (keys + B - 1) / B : 1;  // leaf nodes
    for (;;) {
      offset[levels + 1] = offset[levels] + nodes * B;
      ++levels;
      if (nodes == 1) break;
      nodes = (nodes + B) / (B + 1);  // ceil(nodes / (B + 1)): the parents
    }
  }
  /// Slots in the layout (keys, padding and separators).
  GSEARCH_HD constexpr int64_t size() const { return offset[levels]; }
  /// Nodes of level h.
  GSEARCH_HD constexpr int64_t nodes(int h) const { return (offset[h + 1] - offset[h]) / B; }
};

/// The value of slot s of the layout, 0 <= s < shape.size(), from the sorted keys
/// (sorted(i), 0 <= i < shape.n, sorted in key_less order). Reads at most one key.
template <int B, class Acc>
GSEARCH_HD auto static_index_slot(const Acc& sorted, const static_index_shape<B>& shape, int64_t s) {
  using T = std::remove_cvref_t<decltype(sorted(s))>;
  int h = 0;
  while (s >= shape.offset[h + 1]) ++h;
  int64_t first = s;  // the key the slot copies: itself on a leaf
  if (h > 0) {
    const int64_t i = s - shape.offset[h];
    const int64_t leaves = shape.nodes(0);
    // Separator j of node k: the first leaf of child j + 1 (node k (B+1) + j + 1 of level h - 1),
    // found by going down its leftmost edge, (B+1) times per level; past the leaves, padding.
    int64_t leaf = (i / B) * (B + 1) + i % B + 1;
    for (int l = 1; l < h && leaf < leaves; ++l) leaf *= B + 1;
    first = leaf < leaves ? leaf * B : shape.n;
  }
  return first < shape.n ? T(sorted(first)) : key_traits<T>::highest();
}

/// Fills slots [begin, end) of the layout: out[s] = static_index_slot(sorted, shape, s). One CPU
/// thread per chunk; a GPU kernel calls static_index_slot once per thread.
template <int B, class Acc, class T>
GSEARCH_HD void static_index_build(const Acc& sorted, const static_index_shape<B>& shape, T* out, int64_t begin,
                            int64_t end) {
  const int64_t leaf_end = end < shape.offset[1] ? end : shape.offset[1];
  int64_t s = begin;
  for (; s < leaf_end; ++s) out[s] = s < shape.n ? T(sorted(s)) : key_traits<T>::highest();  // a copy
  for (; s < end; ++s) out[s] = static_index_slot(sorted, shape, s);
}

// The node loop: unrolled on the GPU. Under g++ it stays a loop for the loop vectorizer, which
// makes it one or two SIMD compares and a horizontal add; unrolled early (as g++ 12 does with a
// short inner loop), it stays B scalar compares, setge and adds.
#if defined(__CUDA_ARCH__)
#define GSEARCH_STREE_NODE_LOOP _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define GSEARCH_STREE_NODE_LOOP _Pragma("GCC unroll 1")
#else
#define GSEARCH_STREE_NODE_LOOP
#endif

/// The keys of node [base, base + B) before q: B independent comparisons summed, no branch
/// (SIMD compares under g++ -O3, for every key type with AVX-512, 4-byte keys with AVX2). An
/// accessor with a `load_node<B>(base, keys)` member reads the node in one go (the GPU's 16-byte
/// vector loads); any other is read key by key.
template <int B, class Acc, class Pred>
GSEARCH_HD GSEARCH_FORCEINLINE int static_index_node_rank(const Acc& layout, int64_t base, Pred before) {
  int r = 0;
  if constexpr (requires(decltype(before.q) (&keys)[B]) { layout.template load_node<B>(base, keys); }) {
    decltype(before.q) keys[B];
    layout.template load_node<B>(base, keys);
    GSEARCH_STREE_NODE_LOOP
    for (int j = 0; j < B; ++j) r += int(before(keys[j]));
  } else {
    GSEARCH_STREE_NODE_LOOP
    for (int j = 0; j < B; ++j) r += int(before(layout(base + j)));
  }
  return r;
}

/// The queries the comparisons of the walk cannot answer: NaN for lower_bound (IEEE says no
/// key is before it; key_less says every key but the NaNs is) and, for upper_bound, the last
/// value of the order (max, or NaN), which the padding equals: counting the padding would walk
/// past the layout. static_index_rank answers them apart.
template <bool Strict, class T>
GSEARCH_HD GSEARCH_FORCEINLINE bool static_index_special(T q) {
  if constexpr (Strict) {
    if constexpr (std::is_floating_point_v<T>) return q != q;
    return false;
  } else {
    return !key_less(q, key_traits<T>::highest());
  }
}

/// The walk from level `from` down to level `to` (from >= to) for N queries in lockstep:
/// node[i] enters as a node of level `from` and leaves as the node of level `to` on query i's
/// path. Level h's node k is read at slot offset(h) + k B, through `layout`, so a caller can
/// read the top levels from one place (a GPU block's shared memory) and the rest from another.
/// The N chains of dependent reads overlap (memory-level parallelism).
///
/// An accessor with a `prefetch(slot)` member (the CPU's) is given each query's next node (of
/// level h - 1, read by the next step or, at level 0, by the caller) as soon as it is known: a
/// prefetch retires without waiting for its line, so the reads of a level are all in flight
/// while the step walks the other queries, where plain loads stall at the reorder buffer's head
/// once it holds some 16 queries' steps (issue 42: 32 queries walked so, 1.5-1.9x the walk of 8).
template <int N, int B, class Acc, class Pred>
GSEARCH_HD GSEARCH_FORCEINLINE void static_index_descend(const Acc& layout, const static_index_shape<B>& shape, int from,
                                                  int to, const Pred (&before)[N], int64_t (&node)[N]) {
  for (int h = from; h > to; --h) {
    const int64_t level = shape.offset[h];
    GSEARCH_UNROLL
    for (int i = 0; i < N; ++i) {
      node[i] = node[i] * (B + 1) + static_index_node_rank<B>(layout, level + node[i] * B, before[i]);
      if constexpr (requires { layout.prefetch(level); }) layout.prefetch(shape.offset[h - 1] + node[i] * B);
    }
  }
}

/// The rank of q among the n keys of the layout (layout(s), 0 <= s < shape.size(), built by
/// static_index_slot): the number of keys before q in key_less order, key < q for Strict (lower_bound,
/// numpy side='left'), key <= q otherwise (upper_bound, side='right'). Reads one node per level,
/// shape.levels x B keys, root to leaf; the rank is at most n (padding never counts).
///
/// Why it is right: separator j of a node is the first key of child j + 1. When it is before q,
/// so is every key of children 0..j (none is after it); when it is not, the first key not before
/// q is at the latest child j + 1's first key, the position a search of child j returns when all
/// of child j is before q. So the number of separators before q is the child to go down to.
///
/// The comparisons are IEEE `<` / `<=` (ieee_before), which vectorize. That is key_less's order
/// for every q but NaN, answered first. After that test the padding (highest()) is never before
/// q, so neither are the separators of missing children: no search leaves the layout.
template <bool Strict, int B, class Acc, class T>
GSEARCH_HD int64_t static_index_rank(const Acc& layout, const static_index_shape<B>& shape, T q) {
  if (static_index_special<Strict>(q)) {
    // NaN for lower_bound: every key but the NaN ones, the keys <= +inf in IEEE. The last value
    // of the order for upper_bound: every key.
    if constexpr (Strict && std::is_floating_point_v<T>)
      return static_index_rank<false>(layout, shape, std::numeric_limits<T>::infinity());
    return shape.n;
  }
  const ieee_before<Strict, T> before[1] = {{q}};
  int64_t node[1] = {0};
  static_index_descend(layout, shape, shape.levels - 1, 0, before, node);
  return node[0] * B + static_index_node_rank<B>(layout, node[0] * B, before[0]);
}

/// static_index_rank for N queries in lockstep, their walks interleaved level by level: what a CPU
/// thread runs on 8 queries, and a GPU thread on its Items. rank[i] = static_index_rank<Strict>(q[i]).
/// The special queries (static_index_special) walk with a harmless stand-in and are answered after,
/// NaN lower_bounds by a walk of their own.
template <bool Strict, int N, int B, class Acc, class T>
GSEARCH_HD GSEARCH_FORCEINLINE void static_index_ranks(const Acc& layout, const static_index_shape<B>& shape,
                                                const T (&q)[N], int64_t (&rank)[N]) {
  ieee_before<Strict, T> before[N];
  bool special[N];
  int64_t node[N];
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) {
    special[i] = static_index_special<Strict>(q[i]);
    before[i].q = special[i] ? key_traits<T>::lowest() : q[i];
    node[i] = 0;
  }
  static_index_descend(layout, shape, shape.levels - 1, 0, before, node);
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) {
    rank[i] = special[i] ? static_index_rank<Strict>(layout, shape, q[i])
                         : node[i] * B + static_index_node_rank<B>(layout, node[i] * B, before[i]);
  }
}

/// A trivially copyable view of a built S+ tree: the layout's address and its shape. Pass it by
/// value to a kernel (in the manner of cuCollections' `*_ref`) and search one
/// query per thread; the layout lives where it was built (host or device memory).
template <class T, int B>
struct static_index_ref {
  static constexpr int node_keys = B;
  const T* layout = nullptr;
  static_index_shape<B> shape{0};

  /// Slot s of the layout.
  GSEARCH_HD GSEARCH_FORCEINLINE T operator()(int64_t s) const { return layout[s]; }
  /// The keys indexed.
  GSEARCH_HD int64_t size() const { return shape.n; }
  /// numpy side='left': the number of keys < q.
  GSEARCH_HD int64_t lower_bound(T q) const { return static_index_rank<true>(*this, shape, q); }
  /// numpy side='right': the number of keys <= q.
  GSEARCH_HD int64_t upper_bound(T q) const { return static_index_rank<false>(*this, shape, q); }
  /// The largest i with keys[i] <= q, or -1.
  GSEARCH_HD int64_t predecessor(T q) const { return upper_bound(q) - 1; }
};

}  // namespace gsearch::core

namespace gsearch {
/// The handles of a static index, by where it lives: core::static_index_ref, a view (layout
/// pointer, shape) with lower_bound / upper_bound / predecessor for one query, callable from host
/// code (static_index::host_ref) or device code (static_index::device_ref). Valid while the index
/// lives. The backends search through the same handles.
template <class T>
using static_index_host_ref = core::static_index_ref<T, core::cpu_node_keys<T>>;
template <class T>
using static_index_device_ref = core::static_index_ref<T, core::cuda_node_keys<T>>;
}  // namespace gsearch
