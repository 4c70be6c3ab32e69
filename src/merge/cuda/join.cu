// The sort-merge joins on the GPU: join_kernel.cuh.

#include <cub/device/device_scan.cuh>

#include "cuda/launch.cuh"
#include "merge/cuda/join_kernel.cuh"
#include "merge/backend.hpp"
#include "cuda/stream_buffer.cuh"
#include "merge/tuning.hpp"

namespace gsearch::cuda_backend {
namespace {

constexpr int simple_threads = 256;
unsigned blocks_for(int64_t n) { return unsigned((n + simple_threads - 1) / simple_threads); }

// The matches and positions of every row (device memory, 24 bytes per row of each side): lo /
// hi the right rows equal to each left row, left_scan the exclusive scan of the left weights
// (nl + 1 entries); for right and full joins the same of the right rows (rl / rh, right_scan).
template <class T>
struct join_plan {
  stream_buffer memory;
  int64_t *lo = nullptr, *hi = nullptr, *left_scan = nullptr;
  int64_t *rl = nullptr, *rh = nullptr, *right_scan = nullptr;
  int64_t left_rows = 0, right_rows = 0;  // the outputs of the left rows, of the right rows

  join_plan(cudaStream_t stream, join_kind kind, const T* left, int64_t nl, const T* right,
            int64_t nr) {
    const bool right_side = kind == join_kind::right || kind == join_kind::full;
    size_t scan_bytes = 0, right_scan_bytes = 0;
    GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, lo, lo, nl + 1, stream));
    if (right_side)
      GSEARCH_CUDA_CHECK(
          cub::DeviceScan::ExclusiveSum(nullptr, right_scan_bytes, lo, lo, nr + 1, stream));
    const int64_t words = 3 * nl + 1 + (right_side ? 3 * nr + 1 : 0);
    const size_t temp_bytes = std::max(scan_bytes, right_scan_bytes);
    memory = stream_buffer(stream, size_t(words) * sizeof(int64_t) + temp_bytes);
    int64_t* p = static_cast<int64_t*>(memory.get());
    lo = p;
    hi = lo + nl;
    left_scan = hi + nl;
    void* temp = left_scan + nl + 1;
    if (right_side) {
      rl = left_scan + nl + 1;
      rh = rl + nr;
      right_scan = rh + nr;
      temp = right_scan + nr + 1;
    }
    sorted_search(stream, side::left, right, nr, left, nl, lo);
    sorted_search(stream, side::right, right, nr, left, nl, hi);
    launch(join_weights_kernel<true>, blocks_for(nl + 1), simple_threads, 0, stream, kind, lo, hi, nl, nr, left_scan);
    GSEARCH_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(temp, scan_bytes, left_scan, left_scan, nl + 1, stream));
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&left_rows, left_scan + nl, sizeof(int64_t),
                                       cudaMemcpyDeviceToHost, stream));
    if (right_side) {
      sorted_search(stream, side::left, left, nl, right, nr, rl);
      sorted_search(stream, side::right, left, nl, right, nr, rh);
      launch(join_weights_kernel<false>, blocks_for(nr + 1), simple_threads, 0, stream, kind, rl, rh, nr, nl,
             right_scan);
      GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, right_scan_bytes, right_scan,
                                                       right_scan, nr + 1, stream));
      GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&right_rows, right_scan + nr, sizeof(int64_t),
                                         cudaMemcpyDeviceToHost, stream));
    }
    GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
};

}  // namespace

template <class T>
int64_t join_size(CUstream_st* stream, join_kind kind, const T* left, int64_t nl, const T* right,
                  int64_t nr) {
  if (nl + nr == 0) return 0;
  const join_plan<T> plan(stream, kind, left, nl, right, nr);
  return plan.left_rows + plan.right_rows;
}

template <class T>
int64_t join(CUstream_st* stream, join_kind kind, const T* left, int64_t nl, const T* right,
             int64_t nr, const std::function<join_output(int64_t)>& allocate) {
  if (nl + nr == 0) {
    allocate(0);
    return 0;
  }
  const join_plan<T> plan(stream, kind, left, nl, right, nr);
  const int64_t rows = plan.left_rows + plan.right_rows;
  const join_output o = allocate(rows);
  if (rows == 0) return 0;

  if (plan.left_rows > 0) {
    with_policy(merge_policies{}, current_device_limits().arch, [&]<class P>() {
      constexpr launch_config c = P::template merge_config<8>;
      constexpr int64_t tile = int64_t(c.threads) * c.items;
      const int64_t tiles = (nl + plan.left_rows + tile - 1) / tile;
      stream_buffer splits(stream, size_t(tiles) * sizeof(int64_t));
      auto* row_splits = static_cast<int64_t*>(splits.get());
      launch(join_partition_kernel, blocks_for(tiles), simple_threads, 0, stream, plan.left_scan, nl, plan.left_rows,
             tile, tiles, row_splits);
      launch(join_expand_kernel<c.threads, c.items>, tiles, c.threads, 0, stream, plan.lo, plan.hi, plan.left_scan, nl,
             nr, plan.right_scan, plan.left_rows, row_splits, tiles, o.left, o.right);
    });
  }
  if (plan.right_rows > 0) {
    launch(join_right_rows_kernel, blocks_for(nr), simple_threads, 0, stream, plan.rl, plan.right_scan, nr,
           plan.left_scan, nl, o.left, o.right);
  }
  return rows;
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_JOIN_OPS)

}  // namespace gsearch::cuda_backend
