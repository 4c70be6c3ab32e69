#pragma once
/// \file
/// The static index's kernels (core/static_index.hpp's S+ tree, 16-byte nodes on the GPU):
/// the build, one thread per slot, and the search, one thread per query, Items queries walked
/// in lockstep. Each search block stages the top levels of the tree in shared memory once (the
/// levels every query reads, a few KB to tens of KB), then takes tiles of queries; the levels
/// below are read from global memory, one vector load per level, through the read-only path.
/// Instantiated in src/static_index/cuda/static_index.cu; bench/ instantiates other node sizes and shapes.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/static_index.hpp"
#include "cuda/check.cuh"
#include "cuda/launch_gate.hpp"
#include "search/cuda/search_kernel.cuh"
#include "search/tuning.hpp"

namespace gsearch::cuda_backend {

/// The accessor of the walk: slot s is base[s], a node read as 16-byte vectors (one for the
/// library's 16-byte nodes). `base` is the layout in global memory (ReadOnly: through the
/// read-only path) or the staged tail in shared memory, offset so that slot numbers stay those
/// of the layout (the address space is the pointer's).
template <class T, bool ReadOnly>
struct vector_nodes {
  const T* base;  // slot s is base[s]
  __device__ __forceinline__ T operator()(int64_t s) const { return ReadOnly ? __ldg(base + s) : base[s]; }
  template <int B>
  __device__ __forceinline__ void load_node(int64_t s, T (&keys)[B]) const {
    static_assert(B * sizeof(T) % 16 == 0, "a node is whole 16-byte vectors");
    const uint4* p = reinterpret_cast<const uint4*>(base + s);
    GSEARCH_UNROLL
    for (int v = 0; v < int(B * sizeof(T) / 16); ++v) {
      const uint4 x = ReadOnly ? __ldg(p + v) : p[v];
      memcpy(keys + v * (16 / sizeof(T)), &x, 16);
    }
  }
};

/// A load at L2 (ld.global.cg), past the SM's L1 and read-only caches: for data another SM or the
/// host rewrites while the kernel runs (the search server's requests, queries and key sets),
/// which a cached line of an earlier value must not answer.
template <class T>
__device__ __forceinline__ T load_l2(const T* p) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte values");
  using word = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
  const word w = __ldcg(reinterpret_cast<const word*>(p));
  T v;
  memcpy(&v, &w, sizeof v);
  return v;
}

/// vector_nodes' interface over a layout in global memory read at L2 (load_l2): the search
/// server's, whose key set a replace_keys rewrites while it runs.
template <class T>
struct l2_nodes {
  const T* base;
  __device__ __forceinline__ T operator()(int64_t s) const { return load_l2(base + s); }
  template <int B>
  __device__ __forceinline__ void load_node(int64_t s, T (&keys)[B]) const {
    static_assert(B * sizeof(T) % 16 == 0, "a node is whole 16-byte vectors");
    const uint4* p = reinterpret_cast<const uint4*>(base + s);
    GSEARCH_UNROLL
    for (int v = 0; v < int(B * sizeof(T) / 16); ++v) {
      const uint4 x = __ldcg(p + v);
      memcpy(keys + v * (16 / sizeof(T)), &x, 16);
    }
  }
};

/// The build: layout[s] = core::static_index_slot(keys, shape, s), a grid-stride loop over the slots.
template <class T, int B>
__global__ void index_build_kernel(const T* __restrict__ keys, core::static_index_shape<B> shape, T* __restrict__ layout,
                                   launch_gate gate) {
  if (gate.closed()) return;
  const auto sorted = [keys](int64_t i) { return keys[i]; };
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < shape.size(); s += stride)
    core::static_index_build(sorted, shape, layout, s, s + 1);
}

/// The levels a block stages: those from `shared_level` up (the root last in the layout, so they
/// are the layout's tail), as many as fit in `shared_budget` bytes. At least the leaves stay in
/// global memory (they are a copy of the keys: a tree that small is PBS's case).
template <int B, class T>
constexpr int index_shared_level(const core::static_index_shape<B>& shape, int64_t shared_budget) {
  int h = shape.levels;
  while (h - 1 >= 1 && (shape.size() - shape.offset[h - 1]) * int64_t(sizeof(T)) <= shared_budget) --h;
  return h;
}

/// One tile of the search: the queries [begin, begin + Threads x Items) of queries[0, n) (those
/// past n are not written), out[j] = rank of queries[j] + offset. Each thread takes Items queries
/// (thread t: t, t + Threads, ...: coalesced loads and stores), walks the levels from
/// shared_level up in `top` (shared memory) and the rest in `global`, in lockstep; the queries
/// core::static_index_special names are answered by their own walk. Called by a whole block
/// (index_search_kernel, whose __restrict__ parameters let nvcc read the queries through the
/// read-only path, and the search server's kernel, whose queries change between batches: no
/// __restrict__ here).
template <bool Strict, int Threads, int Items, bool QueriesAtL2 = false, class T, class Out, int B, class Top, class Global>
__device__ __forceinline__ void index_search_tile(const Top& top, const Global& global, const core::static_index_shape<B>& shape,
                                                  int shared_level, const T* queries, int64_t n, Out* out,
                                                  int offset, int64_t begin) {
  const int64_t j0 = begin + threadIdx.x;
  T q[Items];
  ieee_before<Strict, T> before[Items];
  bool special[Items];
  int64_t node[Items];
  GSEARCH_UNROLL
  for (int i = 0; i < Items; ++i) {
    const int64_t j = j0 + int64_t(i) * Threads;
    const int64_t at = j < n ? j : n - 1;  // past n: repeat the last query, not written
    q[i] = QueriesAtL2 ? load_l2(queries + at) : queries[at];
    special[i] = core::static_index_special<Strict>(q[i]);
    before[i].q = special[i] ? key_traits<T>::lowest() : q[i];
    node[i] = 0;
  }
  core::static_index_descend(top, shape, shape.levels - 1, shared_level - 1, before, node);
  core::static_index_descend(global, shape, shared_level - 1, 0, before, node);
  GSEARCH_UNROLL
  for (int i = 0; i < Items; ++i) {
    const int64_t j = j0 + int64_t(i) * Threads;
    if (j >= n) continue;
    const int64_t rank = special[i] ? core::static_index_rank<Strict>(global, shape, q[i])
                                    : node[i] * B + core::static_index_node_rank<B>(global, node[i] * B, before[i]);
    out[j] = Out(rank + offset);
  }
}

/// Stages the layout's slots [shape.offset[shared_level], size) (the top levels: every level is
/// whole nodes of 16 bytes or more) into `shared` as 16-byte vectors, by the whole block, and
/// returns their accessor (slot numbers stay those of the layout). Ends with __syncthreads().
/// ReadOnly: through the read-only path; else at L2 (load_l2: a layout written while the kernel
/// runs).
template <class T, int B, bool ReadOnly = true>
__device__ __forceinline__ vector_nodes<T, false> stage_index_top(const T* __restrict__ layout, const core::static_index_shape<B>& shape,
                                                                  int shared_level, unsigned char* shared) {
  const int64_t first = shape.offset[shared_level];
  const int vectors = int((shape.size() - first) * int64_t(sizeof(T)) / 16);
  const uint4* from = reinterpret_cast<const uint4*>(layout + first);
  uint4* to = reinterpret_cast<uint4*>(shared);
  for (int v = threadIdx.x; v < vectors; v += blockDim.x) to[v] = ReadOnly ? __ldg(from + v) : __ldcg(from + v);
  __syncthreads();
  return vector_nodes<T, false>{reinterpret_cast<const T*>(shared) - first};
}

/// The search: out[j] = rank of queries[j] + offset. Each block stages the top levels once, then
/// takes tiles of Threads x Items queries (index_search_tile).
template <bool Strict, class T, class Out, int B, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    index_search_kernel(const T* __restrict__ layout, core::static_index_shape<B> shape, int shared_level,
                        const T* __restrict__ queries, int64_t n, Out* __restrict__ out, int offset,
                        launch_gate gate) {
  if (gate.closed()) return;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const vector_nodes<T, false> top = stage_index_top(layout, shape, shared_level, shared_bytes);
  const vector_nodes<T, true> global{layout};
  constexpr int64_t tile = int64_t(Threads) * Items;
  for (int64_t begin = int64_t(blockIdx.x) * tile; begin < n; begin += int64_t(gridDim.x) * tile)
    index_search_tile<Strict, Threads, Items>(top, global, shape, shared_level, queries, n, out, offset, begin);
}

/// Enqueues the build of the layout of the n sorted keys on `stream` (done when `gate` is open).
template <class T, int B>
void launch_index_build(CUstream_st* stream, const T* keys, const core::static_index_shape<B>& shape, T* layout,
                        const device_limits& dev, launch_gate gate = {}) {
  constexpr int threads = 256;
  const int64_t blocks = (shape.size() + threads - 1) / threads;
  const int grid = int(blocks < 16LL * dev.sms ? blocks : 16LL * dev.sms);
  launch(index_build_kernel<T, B>, grid, threads, 0, stream, keys, shape, layout, gate);
}

/// Enqueues the search of n queries on side s: the kernel for Threads x Items, the levels that
/// fit in shared_budget bytes staged per block, or in what the device's shared memory per block
/// (dev.max_shared_per_block, which the testing override may lower) leaves, if less: 8-byte keys'
/// 160 KB budget is more than an Ada card's 99 KB. The search is done when `gate` is open.
template <int Threads, int Items, class T, class Out, int B>
void launch_index_search(CUstream_st* stream, side s, const T* layout, const core::static_index_shape<B>& shape,
                         int64_t shared_budget, const T* queries, int64_t n, Out* out,
                         const device_limits& dev, launch_gate gate = {}) {
  if (n <= 0) return;
  const auto run = [&](auto kernel, int offset) {
    const int64_t room = dev.max_shared_per_block - static_shared_bytes(reinterpret_cast<const void*>(kernel), dev);
    const int shared_level = index_shared_level<B, T>(shape, shared_budget < room ? shared_budget : room);
    const int64_t smem = (shape.size() - shape.offset[shared_level]) * int64_t(sizeof(T));
    launch_filling(kernel, Threads, smem, (n + Threads * Items - 1) / (Threads * Items), stream, dev, layout, shape,
                   shared_level, queries, n, out, offset, gate);
  };
  visit_side(s, [&]<bool Strict>(int offset) { run(index_search_kernel<Strict, T, Out, B, Threads, Items>, offset); });
}

}  // namespace gsearch::cuda_backend
