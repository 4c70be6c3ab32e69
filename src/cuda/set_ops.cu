// The multiset set operations on the GPU: set_ops_kernel.cuh (Balanced Path tiles, one pass with
// decoupled look-back).

#include "gsearch/cuda/merge.hpp"
#include "gsearch/cuda/set_ops_kernel.cuh"
#include "gsearch/cuda/tuning.hpp"

namespace gsearch::cuda_backend {
namespace {

constexpr int partition_threads = 256;

// out == nullptr: the size only. Returns the size (waits for it).
template <class T>
int64_t run(cudaStream_t stream, set_op op, const T* a, int64_t na, const T* b, int64_t nb,
            T* out) {
  if (na + nb == 0) return 0;
  constexpr launch_config c = merge_config<sizeof(T)>;
  constexpr int64_t tile = int64_t(c.threads) * c.items;
  const int64_t tiles = (na + nb + tile - 1) / tile;
  const bool write = out != nullptr;
  size_t state_bytes = 0;
  if (write) GSEARCH_CUDA_CHECK(set_tile_state::AllocationSize(int(tiles), state_bytes));
  // One allocation: the total, A's and B's splits, the tile states.
  const size_t split_bytes = size_t(tiles) * sizeof(int64_t);
  stream_buffer temp(stream, 256 + 2 * split_bytes + state_bytes);
  auto* base = static_cast<char*>(temp.get());
  auto* total = reinterpret_cast<int64_t*>(base);
  auto* a_splits = reinterpret_cast<int64_t*>(base + 256);
  auto* b_splits = reinterpret_cast<int64_t*>(base + 256 + split_bytes);
  set_tile_state state;
  if (write) GSEARCH_CUDA_CHECK(state.Init(int(tiles), base + 256 + 2 * split_bytes, state_bytes));
  if (!write) GSEARCH_CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(int64_t), stream));

  set_partition_kernel<<<unsigned((tiles + partition_threads - 1) / partition_threads),
                         partition_threads, 0, stream>>>(a, na, b, nb, tile, tiles, a_splits,
                                                         b_splits, state, write);
  GSEARCH_CUDA_CHECK_LAUNCH();
  core::visit_set_op(op, [&]<set_op Op>() {
    if (write) {
      set_op_kernel<c.threads, c.items, Op, true><<<unsigned(tiles), c.threads, 0, stream>>>(
          a, na, b, nb, a_splits, b_splits, tiles, state, out, total);
    } else {
      set_op_kernel<c.threads, c.items, Op, false><<<unsigned(tiles), c.threads, 0, stream>>>(
          a, na, b, nb, a_splits, b_splits, tiles, state, out, total);
    }
  });
  GSEARCH_CUDA_CHECK_LAUNCH();
  int64_t size = 0;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&size, total, sizeof(size), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return size;
}

}  // namespace

template <class T>
int64_t set_operation_size(CUstream_st* stream, set_op op, const T* a, int64_t na, const T* b,
                           int64_t nb) {
  return run<T>(stream, op, a, na, b, nb, nullptr);
}

template <class T>
int64_t set_operation(CUstream_st* stream, set_op op, const T* a, int64_t na, const T* b,
                      int64_t nb, T* out) {
  if (core::set_op_bound(op, na, nb) == 0) return 0;
  return run<T>(stream, op, a, na, b, nb, out);
}

GSEARCH_KEY_TYPES(GSEARCH_CUDA_SET_OPS_INSTANTIATE)

}  // namespace gsearch::cuda_backend
