#pragma once
// The GPU peers `selection_bench` (selection_bench.cu) measures beside gsearch's selection, and
// the device helpers it builds its inputs and checks with, behind a host-compilable interface:
//   selection_peers.cu      plain CUDA: the read and copy rooflines (16-byte accesses, a few
//                           launch shapes, the fastest counts), the input generator, the counts
//                           and the order-free hash the checks use;
//   cub_selection_peer.cu   the newer CCCL of scripts/fetch-cccl.sh (3.6): cub::DeviceTopK,
//                           cub::DeviceBatchedTopK and cub::DeviceRadixSort (sort, then pick).
// Device pointers throughout; every function enqueues on `stream` and returns at once unless it
// says it waits. T is float or int32_t (the benchmark types).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct CUstream_st;

namespace gsearch::bench::selection_peers {

// ---- selection_peers.cu: rooflines, inputs, checks -------------------------------------------

/// A launch shape of the rooflines: `unroll` 16-byte loads in flight per thread, blocks_per_sm
/// x SMs blocks of 256 threads, grid-stride.
struct roof_config {
  int unroll;
  int blocks_per_sm;
};
std::vector<roof_config> roof_configs();
/// Reads `bytes` (a multiple of 16, 16-byte aligned) and, when dst is not null, writes them to
/// dst (a copy); read-only folds the words into one per thread and writes *sink only when it
/// equals a constant (practically never).
void roofline(CUstream_st* stream, const void* src, void* dst, int64_t bytes, roof_config cfg, uint32_t* sink);

/// The input distributions (selection_bench.cu's header gives each formula).
enum class dist { uniform, normal, bits, constant, sorted, adversarial };
inline const char* const dist_names[] = {"uniform", "normal", "bits", "constant", "sorted", "adversarial"};
/// Writes the n elements of distribution d, seed `seed`, to data (on the device).
template <class T>
void generate(CUstream_st* stream, T* data, int64_t n, dist d, uint64_t seed);

/// Counts of data (n elements) against v: out[0] = #(x < v), out[1] = #(x <= v), out[2] =
/// #(x > v) (out: 3 int64 in device memory, zeroed here). Waits; returns them on the host.
template <class T>
std::vector<int64_t> count_around(CUstream_st* stream, const T* data, int64_t n, T v, int64_t* out);
/// The order-free hash of n elements: the sum mod 2^64 of mix64(bits of x) (two arrays that are
/// permutations of each other hash equally). Waits. `out`: one uint64 of device memory.
template <class T>
uint64_t multiset_hash(CUstream_st* stream, const T* data, int64_t n, uint64_t* out);
/// numpy.partition's property around position p of out (n elements): out[i] <= out[p] for i < p
/// and out[i] >= out[p] for i > p. Waits; true when it holds. `bad`: one int64 of device memory.
template <class T>
bool partitioned_at(CUstream_st* stream, const T* out, int64_t n, int64_t p, int64_t* bad);

// ---- cub_selection_peer.cu: CUB from the newer CCCL -------------------------------------------

// Without the newer CCCL (bench::new_cccl_available() false, cccl.hpp) these throw.

/// cub::DeviceTopK::{Max,Min}Keys (keys only: the select peer) and {Max,Min}Pairs with the
/// element index (int64, a counting iterator) as the value (the topk peer), with the only
/// requirements CCCL 3.6 implements: determinism::not_guaranteed, output_ordering::unsorted.
/// idx_out == nullptr: Keys; else Pairs.
template <class T>
size_t cub_topk_temp_bytes(int64_t n, int64_t k, bool largest, bool pairs);
template <class T>
void cub_topk(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, int64_t n, int64_t k, bool largest,
              T* values_out, int64_t* idx_out);

/// cub::DeviceBatchedTopK::MaxPairs over `rows` rows of `cols` (row-major), k per row, the
/// index within the row (int64) as the value; `sorted`: output_ordering::sorted (largest first),
/// else unsorted; determinism::not_guaranteed, tie_break::unspecified. The segment size carries
/// the compile-time bound 2^14 when cols <= 2^14, else 2^21 (CCCL 3.6's maximum); k the bound
/// 2^10. Throws for cols > 2^21 or k > 2^10. T = float only.
template <class T>
size_t cub_batched_topk_temp_bytes(int64_t rows, int64_t cols, int64_t k, bool sorted);
template <class T>
void cub_batched_topk(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, int64_t rows, int64_t cols,
                      int64_t k, bool sorted, T* values_out, int64_t* idx_out);

/// cub::DeviceRadixSort::SortKeys(temp, bytes, data, sorted, n, 0, 8 sizeof(T), stream), then
/// (when m > 0) out[j] = sorted[ranks[j]] for j < m (ranks: device, int64): sort, then pick.
template <class T>
size_t cub_sort_temp_bytes(int64_t n);
template <class T>
void cub_sort_pick(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, T* sorted, int64_t n,
                   const int64_t* ranks, int64_t m, T* out);
/// cub::DeviceRadixSort::SortPairsDescending of (data, iota) into (keys_out, idx_out): the
/// naive topk peer (the first k of the result are torch.topk's). `iota`: n int64 0..n-1.
template <class T>
size_t cub_sort_pairs_temp_bytes(int64_t n);
template <class T>
void cub_sort_pairs_desc(CUstream_st* stream, void* temp, size_t temp_bytes, const T* data, const int64_t* iota,
                         T* keys_out, int64_t* idx_out, int64_t n);

}  // namespace gsearch::bench::selection_peers
