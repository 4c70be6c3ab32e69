#pragma once
/// \file
/// The k-ary search tree of one bucket staged in shared memory (the partitioned search's bucket
/// search with bucket_layout::kary, detail/cuda/partition_kernel.cuh): the implicit B-tree of n
/// sorted keys in nodes of B keys ("S-tree", algorithmica.org's "static B-trees" before their B+
/// variant), each key stored once. A query reads one node a level, B keys in one 16-byte load, and
/// counts the keys before it: log_{B+1}(n) dependent loads where a binary search takes log2(n)
/// (B = 4 4-byte keys: 7 levels for 48K keys, where PBS-CL takes 16 steps).
///
/// Why a B-tree and not static_index.hpp's S+ tree: the S+ tree keeps every key in its leaves and
/// repeats separators above them, 1/B more slots, which do not fit in shared memory beside a
/// 192 KB bucket; the B-tree takes ceil(n / B) B slots, no more than the keys padded for PBS-CL.
/// Its price is the rank: a key's slot is not its position, so the rank comes from arithmetic on
/// the path (below).
///
/// Layout. Nodes are numbered level by level: child c of node x is node x (B + 1) + 1 + c, so no
/// pointers. Levels 0 .. H-2 are full ((B + 1)^l nodes); the last level, H-1, holds the remaining
/// m nodes, left to right. Slot j of node x is element x B + j of the layout. The keys fill the
/// slots in in-order (child 0's subtree, key 0, child 1's subtree, key 1, ..., child B's subtree);
/// the slots past the n keys, the last in in-order, hold key_traits<T>::highest(), which is at or
/// after every key in the library's order, so the layout stays a search tree for every key type
/// (NaN, the integers' maximum) and the rank is clamped to n at the end (as pbs.hpp's clamp_rank).
///
/// Rank arithmetic. Complete the tree, virtually, to the perfect tree of H levels. There the
/// in-order position of slot j of the node at offset o of level l is
///     o (B+1)^(H-l) + (j + 1) (B+1)^(H-l-1) - 1,
/// and a descent that finds c_l keys before q in the node of each level l ends in the gap
///     g = sum_l c_l (B+1)^(H-1-l) = (the node number after the last step) - (first node of level H):
/// g virtual slots are before q. The virtual slots that do not exist are those of the last
/// level's missing nodes (offsets m, m + 1, ...): positions p >= m (B+1) with p mod (B+1) != B
/// (each missing node's B slots are followed by one slot of an ancestor, which exists). With
/// d = p - m (B+1) > 0, d - floor(d / (B+1)) of them lie before p, and the real position is p
/// minus that count. The descent treats a missing node as one whose B keys are all before q.

#include <cstdint>
#include <vector>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"

namespace gsearch::core {

/// One node: B keys, sorted. The GPU reads it with 16-byte vector loads (node bytes a multiple of 16).
template <class T, int B>
struct kary_node {
  T key[B];
};

/// The number of a node's keys before q (the keys are sorted and `before` is monotone: a prefix).
template <int B, class T, class Pred>
GSEARCH_HD GSEARCH_FORCEINLINE int count_before(const kary_node<T, B>& node, const Pred& before) {
  int c = 0;
  GSEARCH_UNROLL
  for (int j = 0; j < B; ++j) c += before(node.key[j]) ? 1 : 0;
  return c;
}

/// The shape of the tree over n keys with B keys a node (Index: int in shared memory, where n is
/// at most about 2^16; int64_t on the host). n = 0 has no levels and every rank 0.
template <int B, class Index = int>
struct kary_shape {
  static_assert(B >= 1, "a node needs a key");
  static constexpr Index fanout = B + 1;

  Index n = 0;           ///< keys
  Index nodes = 0;       ///< ceil(n / B): the layout has nodes x B slots
  int levels = 0;        ///< H: the smallest with ((B+1)^H - 1) / B >= nodes; steps of a search
  Index last_first = 0;  ///< the first node of the last level, ((B+1)^(H-1) - 1) / B
  Index last_nodes = 0;  ///< m: nodes of the last level (the others of a full level are missing)
  Index end_first = 0;   ///< the first node number past the tree's levels, ((B+1)^H - 1) / B
  Index top_below = 0;   ///< (B+1)^(H-1): a root slot's distance from the next, in virtual positions

  GSEARCH_HD constexpr explicit kary_shape(Index keys) : n(keys), nodes((keys + B - 1) / B) {
    Index first = 0, width = 1;  // level `levels`: its first node and its nodes when full
    while (first < nodes) {
      last_first = first;
      top_below = width;
      first += width;
      width *= fanout;
      ++levels;
    }
    end_first = first;
    last_nodes = nodes - last_first;
  }

  /// Elements of the layout (slots).
  GSEARCH_HD constexpr Index slots() const { return nodes * B; }
  /// First node of level l, and its nodes (the last level's are last_nodes).
  GSEARCH_HD constexpr Index level_first(int l) const {
    Index first = 0, width = 1;
    for (int i = 0; i < l; ++i, width *= fanout) first += width;
    return first;
  }
  GSEARCH_HD constexpr Index level_nodes(int l) const {
    if (l == levels - 1) return last_nodes;
    Index width = 1;
    for (int i = 0; i < l; ++i) width *= fanout;
    return width;
  }

  /// The real in-order position of virtual position p: p less the missing slots before it.
  GSEARCH_HD GSEARCH_FORCEINLINE constexpr Index real_position(Index p) const {
    const Index d = p - last_nodes * fanout;
    return d > 0 ? p - d + d / fanout : p;
  }

  /// The sorted index of the key in slot s of a level whose slots are `below` = (B+1)^(H-1-l)
  /// virtual positions under the next level's (s counts the level's slots from 0: s = o B + j for
  /// slot j of the level's node o). An index >= n is a padding slot. The virtual position
  /// o (B+1) below + (j + 1) below - 1 is below (s + s / B + 1) - 1, since o (B+1) + j = s + o.
  GSEARCH_HD GSEARCH_FORCEINLINE constexpr Index key_index(Index below, Index s) const {
    return real_position(below * (s + s / B + 1) - 1);
  }

  /// The rank of a query whose descent ended at node number `end` (past the last level).
  GSEARCH_HD GSEARCH_FORCEINLINE constexpr Index rank_at(Index end) const {
    const Index r = real_position(end - end_first);
    return r < n ? r : n;
  }
};

/// The ranks of N queries, searched in lockstep (N independent node loads in flight a step), in
/// the tree whose node x read_node(x) returns (a kary_node<T, B>). The same contract as pbs.hpp's
/// searches: rank = the number of keys before q (lower_bound for before<true>, upper_bound for
/// before<false>). shape.levels steps, one node read each; the last level's read is clamped into
/// the layout for queries whose node is missing, and its count ignored.
template <int B, int N, class NodeReader, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE void kary_ranks_n(const NodeReader& read_node, const kary_shape<B, Index>& shape,
                                                 const Pred (&before)[N], Index (&rank)[N]) {
  constexpr Index fanout = B + 1;
  Index x[N];  // each query's node, level by level
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) x[i] = 0;
  // The full levels: every child exists.
  for (int l = 0; l + 1 < shape.levels; ++l) {
    decltype(read_node(Index{0})) node[N];
    GSEARCH_UNROLL
    for (int i = 0; i < N; ++i) node[i] = read_node(x[i]);
    GSEARCH_UNROLL
    for (int i = 0; i < N; ++i) x[i] = x[i] * fanout + 1 + Index(count_before<B>(node[i], before[i]));
  }
  if (shape.levels > 0) {  // the last level: a missing node counts all its keys before q
    const Index last = shape.nodes - 1;
    decltype(read_node(Index{0})) node[N];
    GSEARCH_UNROLL
    for (int i = 0; i < N; ++i) node[i] = read_node(x[i] < last ? x[i] : last);
    GSEARCH_UNROLL
    for (int i = 0; i < N; ++i)
      x[i] = x[i] * fanout + 1 + (x[i] <= last ? Index(count_before<B>(node[i], before[i])) : Index{B});
  }
  GSEARCH_UNROLL
  for (int i = 0; i < N; ++i) rank[i] = shape.rank_at(x[i]);
}

/// One query's rank (kary_ranks_n with N = 1).
template <int B, class NodeReader, class Pred, class Index>
GSEARCH_HD GSEARCH_FORCEINLINE Index kary_rank(const NodeReader& read_node, const kary_shape<B, Index>& shape,
                                               Pred before) {
  const Pred one[1] = {before};
  Index rank[1];
  kary_ranks_n<B, 1>(read_node, shape, one, rank);
  return rank[0];
}

/// Reads node x of a layout in a flat array of slots (the host's; the GPU reads shared memory
/// with vector loads, partition_kernel.cuh).
template <class T, int B>
struct kary_array_nodes {
  const T* slots;
  template <class Index>
  GSEARCH_HD GSEARCH_FORCEINLINE kary_node<T, B> operator()(Index x) const {
    kary_node<T, B> node;
    GSEARCH_UNROLL
    for (int j = 0; j < B; ++j) node.key[j] = slots[x * B + j];
    return node;
  }
};

/// The layout of `shape.n` sorted keys on the host, level by level as the GPU stages it: slot s of
/// level l holds sorted[key_index(below_l, s)], or highest() past the keys.
template <int B, class T, class Index>
std::vector<T> kary_build(const T* sorted, const kary_shape<B, Index>& shape) {
  std::vector<T> layout(static_cast<size_t>(shape.slots()));
  Index below = shape.top_below;
  for (int l = 0; l < shape.levels; ++l, below /= shape.fanout) {
    T* level = layout.data() + shape.level_first(l) * B;
    for (Index s = 0; s < shape.level_nodes(l) * B; ++s) {
      const Index i = shape.key_index(below, s);
      level[s] = i < shape.n ? sorted[i] : key_traits<T>::highest();
    }
  }
  return layout;
}

}  // namespace gsearch::core
