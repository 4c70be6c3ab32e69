// The CUDA backend of the search by sorting the queries (algorithm::merge, issue 42): every key
// read about once, whatever K, where the staged searches restage K keys per window of queries
// (the partitioned search at K = 2^27: some 16 GB of key reads for 1 GB of queries,
// docs/perf-notes.md). Four steps:
//   1. encode_kernel          each query's code (core/query_buckets.hpp: its radix bits relative
//                             to the keys' range, shifted to the top) and its position;
//   2. CUB's radix sort       of (code, position) on the codes' top 8 or 16 bits alone: the
//                             queries in bucket order in one or two passes, whatever the key's
//                             width (a whole stable sort took four passes for int32, eight for
//                             int64: 5.0 of 7.9 ms at int32, K = 2^24, Q = 2^27, ncu at 9171f52);
//   3. bucket_search_kernel   a tile of 2,048 bucket-ordered queries stages the keys of its
//                             buckets in shared memory (their radix bits: integer compares) and
//                             searches each query among its bucket's keys; a tile whose buckets
//                             hold more keys than fit searches its buckets in global memory;
//   4. the answers' way back  (answers_back, below).
// bucket_start_kernel writes each bucket's first key first (2^bits + 1 partition points).
//
// The way back comes from one H200 profile (ncu, int32, K = 2^24, Q = 2^27, at 681d641;
// docs/perf-notes.md "Issue 42: algorithm::merge on the H200"): out[perm[i]] = answers[i] wrote
// 2^27 4-byte answers to random addresses in 8.4 ms (a partial 32-byte sector each, 16 G
// writes/s), and 7.6 ms still when a radix pass first grouped them by window of 2^19 positions
// (2 MB, held in L2: 5f117fe, ncu at 30fd27a): random 4-byte stores cost that much in L2 as well.
// So the windows are made to fit shared memory (32 KB of answers: 2^13 int32 or 2^12 int64, two
// radix passes on the positions' top bits at Q = 2^27, where one did), and a block puts each
// window together there and writes it out in whole lines. Positions are 4 bytes where the queries
// number less than 2^32 (CUB's passes move 8-byte pairs, not 12).

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "gsearch/core/query_buckets.hpp"
#include "cuda/launch.cuh"
#include "cuda/sort_support.cuh"  // with_cub_scratch, fill_positions
#include "cuda/stream_buffer.cuh"
#include "search/backend.hpp"  // merge_search, merge_temp_bytes
#include "search/cuda/gated.hpp"

namespace gsearch::cuda_backend {
namespace {

constexpr int merge_threads = 256;
// Positions per window of the answers' way back (see above): 32 KB of answers, one block's static
// shared memory.
template <class Out>
constexpr int window_bits = sizeof(Out) == 4 ? 13 : 12;

// out[p] = answers[i] where perm[i] = p, for the positions p of each window, [w W, (w + 1) W)
// within n (W = 2^window_bits), a block a window: grouped by window (or n within one), perm holds exactly
// those positions at the same indices. The answers go into shared memory at their offsets in the
// window, then the window to out in whole lines.
template <class P, class Out>
__global__ void __launch_bounds__(merge_threads)
    window_scatter_kernel(const Out* __restrict__ answers, const P* __restrict__ perm, int64_t n,
                          Out* __restrict__ out, launch_gate gate) {
  constexpr int64_t W = int64_t{1} << window_bits<Out>;
  __shared__ Out window[W];
  if (gate.closed()) return;
  for (int64_t first = int64_t(blockIdx.x) * W; first < n; first += int64_t(gridDim.x) * W) {
    const int64_t size = n - first < W ? n - first : W;
    for (int64_t j = threadIdx.x; j < size; j += blockDim.x) window[int64_t(perm[first + j]) - first] = answers[first + j];
    __syncthreads();
    for (int64_t j = threadIdx.x; j < size; j += blockDim.x) out[first + j] = window[j];
    __syncthreads();
  }
}

/// out[i] = value for i < n (no keys: every answer the same).
template <class Out>
__global__ void __launch_bounds__(256) fill_kernel(Out* __restrict__ out, int64_t n, Out value, launch_gate gate) {
  if (gate.closed()) return;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = value;
}

constexpr size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

/// CUB's radix sort of n (key, value) pairs on key bits [begin_bit, end_bit), apart (its
/// scratch, with the passes' double buffers, from gsearch's pool).
template <class K, class V>
void radix_pairs(cudaStream_t stream, const K* keys, K* keys_out, const V* values, V* values_out, int64_t n,
                 int begin_bit, int end_bit) {
  with_cub_scratch(stream, [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, keys, keys_out, values, values_out, n, begin_bit, end_bit,
                                           stream);
  });
}

// The bucket search's tile (step 3): 2,048 queries, the radix bits of up to 12,288 keys staged
// (48 KB for 4-byte keys, 96 KB for 8-byte ones, less where the device has less) from at most 256
// buckets, and a table of up to 512 finer buckets' starts beside them.
constexpr int bucket_threads = 256, bucket_items = 8, tile_buckets = 256, fine_buckets = 512;
constexpr int64_t bucket_tile = int64_t(bucket_threads) * bucket_items, stage_keys = 12288;

/// The bits the queries are sorted on, 8 (one radix pass) or 16 (two): 8 where a tile's staged
/// keys would fit in half the stage on average (a bucket's keys, k / 2^8, plus those a tile's
/// queries spread over, tile x k / n), else 16 (2,048 keys a bucket at k = 2^27; more buckets
/// would need a larger start table).
int sort_bits(int64_t stage, int64_t k, int64_t n) {
  const int64_t spread = (bucket_tile * k + n - 1) / n;
  return (k >> 8) + spread <= stage / 2 ? 8 : 16;
}

/// codes[i] = the code of queries[i] (core::query_buckets of the first and last key), positions[i] = i.
template <class T, class P>
__global__ void __launch_bounds__(256)
    encode_kernel(const T* __restrict__ keys, int64_t k, int bits, const T* __restrict__ queries, int64_t n,
                  core::radix_bits_t<T>* __restrict__ codes, P* __restrict__ positions) {
  const auto buckets = core::bucket_range_of<T>([keys](int64_t j) { return keys[j]; }, k, bits);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    codes[i] = buckets.encode(queries[i]);
    positions[i] = P(i);
  }
}

/// start[b] = the first key of bucket b, b in [0, 2^bits] (core::bucket_start).
template <class T>
__global__ void __launch_bounds__(256)
    bucket_start_kernel(const T* __restrict__ keys, int64_t k, int bits, int64_t* __restrict__ start) {
  const auto key = [keys](int64_t j) { return keys[j]; };
  const auto buckets = core::bucket_range_of<T>(key, k, bits);
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b <= buckets.buckets();
       b += int64_t(gridDim.x) * blockDim.x)
    start[b] = core::bucket_start(buckets, key, k, b);
}

/// answers[i] = the rank of the query of codes[i] (core::bucket_rank), less 1 for the
/// predecessor, tile by tile (grid-stride). The codes are in bucket order (their top bits), so a
/// tile's first and last code bound the buckets of all its queries, [b0, b1], and the keys they
/// can read, [start[b0], start[b1 + 1]). Where those fit the stage (`stage` keys of dynamic
/// shared memory) from at most tile_buckets buckets, their radix bits go to shared memory with
/// a table of finer buckets (the codes' next f bits: up to fine_buckets of them, each key's
/// one read off its bits, one pass over the stage), and each thread searches its 8 queries among
/// their fine bucket's keys in lockstep (core::rank_step: 8 independent loads in flight a step,
/// as many steps as its widest bucket needs: at K = 2^24 a fine bucket holds a key or two where
/// a bucket held 256). Else each query searches its bucket's keys in global memory. The next
/// tile's codes are loaded while this one is searched, and its bounds found after. (ncu at
/// 321345e, int32 K = 2^24: the search without the fine table issued 211 instructions a query,
/// 73% of the SMs' issue, 1.53 ms.)
template <bool Strict, bool Pred, class T, class P, class Out>
__global__ void __launch_bounds__(bucket_threads)
    bucket_search_kernel(const T* __restrict__ keys, int64_t k, int bits, const int64_t* __restrict__ start,
                         const core::radix_bits_t<T>* __restrict__ codes, const T* __restrict__ queries,
                         const P* __restrict__ perm, int64_t n, Out* __restrict__ answers, int64_t stage,
                         launch_gate gate) {
  using U = core::radix_bits_t<T>;
  constexpr int width = int(8 * sizeof(U));
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  U* staged = reinterpret_cast<U*>(dynamic_shared);
  __shared__ int fine_start[fine_buckets + 1];  // the tile's fine buckets' first staged keys
  if (gate.closed()) return;
  const auto buckets = core::bucket_range_of<T>([keys](int64_t j) { return keys[j]; }, k, bits);
  const auto global_bits = [keys](int64_t j) { return core::radix_bits(keys[j]); };
  const auto shared_bits = [staged](int j) { return staged[j]; };
  const auto query = [queries, perm](int64_t i) { return [=] { return queries[perm[i]]; }; };  // (outside the range)
  struct tile_keys {
    int64_t b0, spanned, base, size;  // the buckets [b0, b0 + spanned), keys [base, base + size)
  };
  const auto keys_of = [&](U first_code, U last_code) {
    const int64_t b0 = buckets.bucket(first_code), b1 = buckets.bucket(last_code);  // (any code's top bits)
    const int64_t base = start[b0];
    return tile_keys{b0, b1 - b0 + 1, base, start[b1 + 1] - base};
  };
  const auto load = [&](int64_t first, U (&code)[bucket_items], U& first_code, U& last_code) {
#pragma unroll
    for (int j = 0; j < bucket_items; ++j) {
      const int64_t i = first + j * bucket_threads + threadIdx.x;
      code[j] = codes[i < n ? i : n - 1];  // (past n: the tile's last code, searched, never written)
    }
    first_code = codes[first];
    last_code = codes[min(first + bucket_tile, n) - 1];
  };
  const int64_t stride = int64_t(gridDim.x) * bucket_tile;
  int64_t first = int64_t(blockIdx.x) * bucket_tile;
  if (first >= n) return;
  U code[bucket_items], first_code, last_code;
  load(first, code, first_code, last_code);
  tile_keys tile = keys_of(first_code, last_code);
  for (; first < n; first += stride) {
    U next[bucket_items];
    if (first + stride < n) load(first + stride, next, first_code, last_code);
    const bool in_shared = tile.spanned <= tile_buckets && tile.size <= stage;
    if (in_shared)
      for (int64_t j = threadIdx.x; j < tile.size; j += bucket_threads) staged[j] = core::radix_bits(keys[tile.base + j]);
    __syncthreads();  // the stage written
    if (in_shared) {
      // The fine buckets: the codes' top bits + f bits, f as many as keep them within fine_buckets.
      int f = 0;
      while (f < width - bits && (tile.spanned << (f + 1)) <= fine_buckets) ++f;
      const int fine_count = int(tile.spanned << f), fine_shift = width - bits - f, size = int(tile.size);
      const int64_t fine0 = tile.b0 << f;
      const auto fine_of_code = [&](U c) { return int(int64_t(c >> fine_shift) - fine0); };
      const auto fine_of_key = [&](int m) { return fine_of_code(U(U(staged[m] - buckets.lo) << buckets.shift)); };
      // fine_start[j] = the first staged key of fine bucket j or after: key m starts the fine
      // buckets after its predecessor's, through its own (the end, m = size, the rest).
      for (int m = threadIdx.x; m <= size; m += bucket_threads) {
        const int from = m == 0 ? 0 : fine_of_key(m - 1) + 1, to = m < size ? fine_of_key(m) : fine_count;
        for (int j = from; j <= to; ++j) fine_start[j] = m;
      }
      __syncthreads();  // the fine table written
      core::rank_cursor<int> c[bucket_items];
      U u[bucket_items];
      int widest = 0;
#pragma unroll
      for (int j = 0; j < bucket_items; ++j) {
        c[j] = {0, 0};
        u[j] = 0;
        if (buckets.place(code[j]) == core::bucket_place::inside) {
          const int jf = fine_of_code(code[j]);
          c[j] = {fine_start[jf], fine_start[jf + 1] - fine_start[jf]};
          u[j] = buckets.radix(code[j]);
          widest = max(widest, c[j].n);
        }
      }
      const int steps = 32 - core::leading_zeros(unsigned(widest));  // bit_width: halvings to 1
      for (int step = 0; step < steps; ++step) {
#pragma unroll
        for (int j = 0; j < bucket_items; ++j) core::rank_step<Strict>(shared_bits, c[j], u[j]);
      }
#pragma unroll
      for (int j = 0; j < bucket_items; ++j) {
        const int64_t i = first + j * bucket_threads + threadIdx.x;
        if (i >= n) continue;
        const int64_t rank = buckets.place(code[j]) == core::bucket_place::inside
                                 ? tile.base + core::rank_finish<Strict>(shared_bits, c[j], u[j])
                                 : core::bucket_rank<Strict>(buckets, global_bits, k, start, code[j], query(i));
        answers[i] = Out(rank - (Pred ? 1 : 0));
      }
    } else {
#pragma unroll
      for (int j = 0; j < bucket_items; ++j) {
        const int64_t i = first + j * bucket_threads + threadIdx.x;
        if (i < n)
          answers[i] = Out(core::bucket_rank<Strict>(buckets, global_bits, k, start, code[j], query(i)) - (Pred ? 1 : 0));
      }
    }
    if (first + stride < n) {
      tile = keys_of(first_code, last_code);
#pragma unroll
      for (int j = 0; j < bucket_items; ++j) code[j] = next[j];
    }
    __syncthreads();  // every thread done with the stage and the table before the next tile's
  }
}

/// The answers in bucket order (steps 1-3): the queries' codes sorted on their top bits with
/// their positions (perm), answers[i] the search of the query perm[i].
template <class T, class P, class Out>
void bucket_search(cudaStream_t stream, const device_limits& dev, side s, const T* keys, int64_t k, const T* queries,
                   int64_t n, core::radix_bits_t<T>* codes, core::radix_bits_t<T>* sorted, P* positions, P* perm,
                   int64_t* start, Out* answers, launch_gate gate) {
  using U = core::radix_bits_t<T>;
  const auto* kernel = reinterpret_cast<const void*>(bucket_search_kernel<true, false, T, P, Out>);
  const int64_t stage =
      std::min<int64_t>(stage_keys, (dev.max_shared_per_block - static_shared_bytes(kernel, dev)) / int64_t(sizeof(U)));
  const int bits = sort_bits(stage, k, n);
  launch_plain(encode_kernel<T, P>, n, 256, stream, dev, keys, k, bits, queries, n, codes, positions);
  launch_plain(bucket_start_kernel<T>, (int64_t(1) << bits) + 1, 256, stream, dev, keys, k, bits, start);
  constexpr int width = int(8 * sizeof(U));
  radix_pairs(stream, codes, sorted, positions, perm, n, width - bits, width);  // stable
  visit_side_exact(s, [&]<bool Strict, bool Pred>() {
    launch_filling(bucket_search_kernel<Strict, Pred, T, P, Out>, bucket_threads, stage * int64_t(sizeof(U)),
                   (n - 1) / bucket_tile + 1, stream, dev, keys, k, bits, start, sorted, queries, perm, n, answers,
                   stage, gate);
  });
}

/// out[perm[i]] = answers[i] for i < n, perm a permutation of 0 ... n - 1: grouped by windows of
/// 2^window_bits positions (radix passes on perm's bits above them) when n has more, then each
/// window put together in shared memory and written whole. grouped_perm and grouped_answers: n
/// each.
template <class P, class Out>
void answers_back(cudaStream_t stream, const device_limits& dev, const Out* answers, const P* perm, int64_t n, P* grouped_perm,
                  Out* grouped_answers, Out* out, launch_gate gate) {
  const int bits = int(std::bit_width(uint64_t(n - 1)));  // the positions' bits
  if (bits > window_bits<Out>) {
    radix_pairs(stream, perm, grouped_perm, answers, grouped_answers, n, window_bits<Out>, bits);
    perm = grouped_perm;
    answers = grouped_answers;
  }
  const int64_t windows = ((n - 1) >> window_bits<Out>) + 1;
  launch_filling(window_scatter_kernel<P, Out>, merge_threads, 0, windows, stream, dev, answers, perm, n, out, gate);
}

constexpr size_t start_bytes = round_up(((size_t(1) << 16) + 1) * sizeof(int64_t));  // sort_bits <= 16

template <class T, class P, class Out>
void merge_search_with(cudaStream_t stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                       launch_gate gate) {
  using U = core::radix_bits_t<T>;
  const size_t q = round_up(size_t(n) * sizeof(U)), p = round_up(size_t(n) * sizeof(P)),
               o = round_up(size_t(n) * sizeof(Out));
  const stream_buffer buffer(stream, 2 * q + 3 * p + 2 * o + start_bytes);
  char* base = static_cast<char*>(buffer.get());
  U* codes = reinterpret_cast<U*>(base);
  U* sorted = reinterpret_cast<U*>(base + q);
  P* positions = reinterpret_cast<P*>(base + 2 * q);
  P* perm = reinterpret_cast<P*>(base + 2 * q + p);
  P* grouped_perm = reinterpret_cast<P*>(base + 2 * q + 2 * p);
  Out* answers = reinterpret_cast<Out*>(base + 2 * q + 3 * p);
  Out* grouped_answers = reinterpret_cast<Out*>(base + 2 * q + 3 * p + o);
  int64_t* start = reinterpret_cast<int64_t*>(base + 2 * q + 3 * p + 2 * o);
  const device_limits& dev = current_device_limits();
  bucket_search(stream, dev, s, keys, k, queries, n, codes, sorted, positions, perm, start, answers, gate);
  answers_back(stream, dev, answers, perm, n, grouped_perm, grouped_answers, out, gate);
}

}  // namespace

int64_t merge_temp_bytes(int key_bytes, int64_t k, int64_t n) {
  if (n <= 0) return 0;
  // merge_search_with's buffer (the codes twice, three arrays of positions, two of answers: int64
  // at most; the start table) and a sort's scratch, bounded by another copy of the codes and
  // their positions (CUB's double buffers).
  (void)k;
  const size_t q = round_up(size_t(n) * size_t(key_bytes)), w = round_up(size_t(n) * 8);
  return int64_t(3 * q + 6 * w + start_bytes);
}

template <class T, class Out>
void merge_search(CUstream_st* stream, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                  launch_gate gate) {
  if (n <= 0) return;
  if (k == 0) {  // no keys: every rank 0 (the predecessor's -1)
    visit_side(s, [&]<bool>(int offset) {
      launch_plain(fill_kernel<Out>, n, 256, stream, current_device_limits(), out, n, Out(offset), gate);
    });
    return;
  }
  if (n <= int64_t(UINT32_MAX)) return merge_search_with<T, uint32_t>(stream, s, keys, k, queries, n, out, gate);
  merge_search_with<T, int64_t>(stream, s, keys, k, queries, n, out, gate);
}

#define GSEARCH_CUDA_MERGE_SEARCH_INSTANTIATE(T)                                                              \
  template void merge_search<T, int64_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int64_t*,  \
                                         launch_gate);                                                        \
  template void merge_search<T, int32_t>(CUstream_st*, side, const T*, int64_t, const T*, int64_t, int32_t*,  \
                                         launch_gate);
GSEARCH_KEY_TYPES(GSEARCH_CUDA_MERGE_SEARCH_INSTANTIATE)
#undef GSEARCH_CUDA_MERGE_SEARCH_INSTANTIATE

}  // namespace gsearch::cuda_backend
