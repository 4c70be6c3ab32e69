#pragma once
/// \file
/// Top-k of short rows, one row by one thread (issue 41's short rows: 10^6 x 64, k = 8, torch.topk
/// of a mixture of experts' router): the row's keys offered one by one, in index order, to a list
/// of the L smallest seen so far, kept sorted in registers. Each offer is L compare-and-swaps
/// with no branch (a GPU warp runs 32 rows in step, and a branch taken by one lane costs all of
/// them), so a row of c keys costs c x L of them and no pass over the row is repeated; the list
/// ends as the row's L smallest keys, smallest first, equal keys in index order (an offer moves
/// an entry back only past a strictly larger key). Its first k entries are torch.topk's k outputs
/// in sorted order, so no sort follows.
///
/// Keys are radix keys (core::radix_bits ^ flip: the key order, largest first when flipped, every
/// NaN one key, -0.0 equal to 0.0). The CUDA backend runs it a thread a row
/// (src/selection/cuda/topk_short_kernel.cuh), the CPU backend a row at a time on each thread
/// (src/selection/cpu_rows.cpp); core_topk_list_test.cpp checks it against a sort.

#include <cstdint>
#include <type_traits>
#include <utility>

#include "gsearch/core/config.hpp"

namespace gsearch::core {

/// The L smallest (key, position) pairs offered, sorted by key, then position (fewer than L
/// offered: the first that many entries).
template <int L, class K>
struct smallest_list {
  K key[L];
  uint32_t at[L];

  /// Empty (every entry the largest key at the largest position; the first L offers are fill()'s,
  /// which take the empty entries whatever their key: the largest key is a real key too).
  GSEARCH_HD GSEARCH_FORCEINLINE void clear() {
    GSEARCH_UNROLL
    for (int j = 0; j < L; ++j) {
      key[j] = K(~K(0));
      at[j] = ~uint32_t(0);
    }
  }

  /// Offers key x at position p, the p-th offer (p < L): entries p and beyond are empty, so x
  /// goes before the first of them or before the first filled entry strictly larger.
  GSEARCH_HD GSEARCH_FORCEINLINE void fill(K x, uint32_t p) { insert<true>(x, p); }

  /// Offers key x at position p (p larger than every position offered before, and at least L):
  /// x takes the place of the first entry strictly larger, the entries from there move back one,
  /// the last drops out.
  GSEARCH_HD GSEARCH_FORCEINLINE void offer(K x, uint32_t p) { insert<false>(x, p); }

  /// A row's keys key(0 .. n), offered in index order.
  template <class Key>
  GSEARCH_HD GSEARCH_FORCEINLINE void offer_row(const Key& key, int n) {
    const int head = n < L ? n : L;
    for (int c = 0; c < head; ++c) fill(key(c), uint32_t(c));
    for (int c = head; c < n; ++c) offer(key(c), uint32_t(c));
  }

 private:
  template <bool Filling>
  GSEARCH_HD GSEARCH_FORCEINLINE void insert(K x, uint32_t p) {
    const uint32_t filled = p;  // (p moves back with the entries x passes)
    bool shifting = false;      // x went in: every entry after it moves back one, equal or not
    GSEARCH_UNROLL
    for (int j = 0; j < L; ++j) {
      const bool before = shifting || (Filling && uint32_t(j) >= filled) || x < key[j];
      shifting = before;
      const K k = key[j];
      const uint32_t a = at[j];
      key[j] = before ? x : k;
      at[j] = before ? p : a;
      x = before ? k : x;
      p = before ? a : p;
    }
  }
};

namespace detail {

/// Compare-and-swap of two words: a the least, b the other.
template <class W>
GSEARCH_HD GSEARCH_FORCEINLINE void order_pair(W& a, W& b) {
  const W lo = a < b ? a : b, hi = a < b ? b : a;
  a = lo;
  b = hi;
}

/// One stage of a bitonic network over v[0, L): each i with (i & Stride) == 0 against i + Stride,
/// ascending where (i & Size) == 0 (Size 0: every pair ascending, a merge's stages). The indices
/// are template arguments, so v stays in registers.
template <int Size, int Stride, int L, class W, int... I>
GSEARCH_HD GSEARCH_FORCEINLINE void bitonic_stage(W (&v)[L], std::integer_sequence<int, I...>) {
  (
      [&] {
        if constexpr ((I & Stride) == 0) {
          if constexpr ((I & Size) == 0)
            order_pair(v[I], v[I + Stride]);
          else
            order_pair(v[I + Stride], v[I]);
        }
      }(),
      ...);
}

/// The stages of strides Stride, Stride / 2, ..., 1.
template <int Size, int Stride, int L, class W>
GSEARCH_HD GSEARCH_FORCEINLINE void bitonic_stages(W (&v)[L]) {
  bitonic_stage<Size, Stride>(v, std::make_integer_sequence<int, L>{});
  if constexpr (Stride > 1) bitonic_stages<Size, Stride / 2>(v);
}

/// Bitonic sort, ascending, from sorted runs of Size / 2: the runs of Size, 2 Size, ..., L.
template <int Size, int L, class W>
GSEARCH_HD GSEARCH_FORCEINLINE void bitonic_sort_from(W (&v)[L]) {
  bitonic_stages<Size, Size / 2>(v);
  if constexpr (Size < L) bitonic_sort_from<Size * 2>(v);
}

}  // namespace detail

/// The L smallest (key, position) pairs of a row's keys key(0 .. n) of at most 32 bits, as their
/// positions at[0, min(L, n)), smallest first, equal keys in index order: what smallest_list
/// gives, by another way. Each key and its position are one 64-bit word (key above, position
/// below), so the words' order is the (key, position) order and a compare-and-swap is a min and
/// a max; the row is taken L keys at a time, each chunk sorted by a bitonic network, then merged
/// with the L smallest so far (the least of entry i and the chunk's entry L - 1 - i holds the L
/// smallest of both as a bitonic sequence, which a bitonic merge sorts). Per L keys: L/2 log2 L
/// (log2 L + 1)/2 + L + L/2 log2 L compare-and-swaps, some 5.5 a key for L = 8 against the list's
/// 8 (and 7 against 16, 9.5 against 32), each three instructions on a CPU where a list's step is
/// a compare and four selects. Chunks short of L are filled with the largest word (the largest
/// key at the largest position), which sorts after every real pair. L a power of two.
template <int L, class Key>
GSEARCH_HD GSEARCH_FORCEINLINE void smallest_by_chunks(const Key& key, int n, uint32_t (&at)[L]) {
  static_assert(L >= 2 && (L & (L - 1)) == 0, "L a power of two");
  using W = uint64_t;
  const auto load = [&](W(&chunk)[L], int first) {
    GSEARCH_UNROLL
    for (int j = 0; j < L; ++j) {
      const int c = first + j;
      chunk[j] = c < n ? (W(uint32_t(key(c))) << 32) | uint32_t(c) : ~W(0);
    }
  };
  W best[L];
  load(best, 0);
  detail::bitonic_sort_from<2>(best);
  for (int first = L; first < n; first += L) {
    W chunk[L];
    load(chunk, first);
    detail::bitonic_sort_from<2>(chunk);
    GSEARCH_UNROLL
    for (int i = 0; i < L; ++i) best[i] = best[i] < chunk[L - 1 - i] ? best[i] : chunk[L - 1 - i];
    detail::bitonic_stages<0, L / 2>(best);
  }
  GSEARCH_UNROLL
  for (int j = 0; j < L; ++j) at[j] = uint32_t(best[j]);
}

/// The list length for the top-k of rows of `cols` keys one thread a row, or 0 where the row is
/// for a block: k up to 32 in lists of 8, 16 or 32, while a row's cols x L compare-and-swaps
/// (some 5 instructions each) stay within short_row_work. A first choice from arithmetic (a
/// block a row runs four digit passes, each with block barriers and a scan, whatever the row's
/// length), measured at one point: 10^6 x 64, k = 8, 0.276 ms on one H200
/// (bench/results/h200/issue41/rows-ce37e82.json), and on the CPU 2.2-4.0x the path before it
/// (bench/results/cpu/issue41/topk_rows_cpu-cb00576.md).
inline constexpr int64_t short_row_max_cols = 128;
inline constexpr int64_t short_row_work = 2048;
GSEARCH_HD constexpr int short_row_list(int64_t cols, int64_t k) {
  if (cols > short_row_max_cols || k < 1 || k > cols) return 0;
  const int list = k <= 8 ? 8 : k <= 16 ? 16 : k <= 32 ? 32 : 0;
  return list && cols * list <= short_row_work ? list : 0;
}

/// f(std::integral_constant<int, L>{}) for short_row_list's list length L (8, 16 or 32): each
/// backend's one dispatch from the runtime length to its compiled lists.
template <class F>
void with_short_row_list(int list, F&& f) {
  if (list == 8)
    f(std::integral_constant<int, 8>{});
  else if (list == 16)
    f(std::integral_constant<int, 16>{});
  else
    f(std::integral_constant<int, 32>{});
}

}  // namespace gsearch::core
