// merge_bench's peers built against the newer CCCL headers given by GSEARCH_BENCH_CCCL_INCLUDE
// (scripts/fetch-cccl.sh puts PyPI's cuda-cccl, CCCL 3.6, there; the CUDA 13.0 toolkit's CCCL
// 3.0.1 has no cub::DeviceFind): cub::DeviceMerge, cub::DeviceMergeSort, cub::DeviceRadixSort,
// cub::DeviceFind::{Lower,Upper}BoundSortedValues, thrust::set_* and the CUB-built sort-merge
// join. Without those headers the functions throw. See merge_peers.hpp.
//
// The CCCL 3.6 signatures called here (the two-phase forms: temp, temp_bytes, ..., stream):
//   DeviceMerge::MergeKeys(temp, bytes, keys1, int64 n1, keys2, int64 n2, out, comp, stream)
//   DeviceMerge::MergePairs(temp, bytes, k1, v1, n1, k2, v2, n2, kout, vout, comp, stream)
//   DeviceMergeSort::SortKeysCopy(temp, bytes, in, out, n, comp, stream)
//   DeviceMergeSort::SortPairsCopy(temp, bytes, kin, vin, kout, vout, n, comp, stream)
//   DeviceRadixSort::SortKeys(temp, bytes, const K* in, K* out, n, begin_bit, end_bit, stream)
//   DeviceRadixSort::SortPairs(temp, bytes, kin, kout, vin, vout, n, begin_bit, end_bit, stream)
//   DeviceFind::UpperBoundSortedValues(temp, bytes, range, range_n, values, values_n, out,
//                                      comp, stream) (LowerBoundSortedValues alike)
//   DeviceScan::ExclusiveSum(temp, bytes, in, out, n, stream)

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "gsearch/core/error.hpp"
#include "cuda/check.cuh"
#include "merge_peers.hpp"

#if GSEARCH_BENCH_HAS_NEW_CCCL
#include "new_cccl.cuh"
#include <cub/device/device_find.cuh>
#include <cub/device/device_merge.cuh>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>
#include <thrust/execution_policy.h>

#include "thrust_set_op.cuh"
#include "../common/thrust_cache.cuh"
#endif

namespace gsearch::bench::merge_peers {

#if GSEARCH_BENCH_HAS_NEW_CCCL
namespace {

using less = cuda::std::less<>;

size_t align256(size_t x) { return (x + 255) / 256 * 256; }

/// out[i] = the kind's output count of a row with hi[i] - lo[i] matches (i < n); out[n] = 0.
/// Left-driven weights (`right_side` false): inner / right: m; left / full: max(m, 1); semi:
/// m > 0; anti: m == 0. Right side of a full join (`right_side`): m == 0.
__global__ void weights_kernel(const int64_t* lo, const int64_t* hi, int64_t n, int kind, bool right_side,
                               int64_t* out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= n; i += int64_t(gridDim.x) * blockDim.x) {
    if (i == n) {
      out[i] = 0;
      continue;
    }
    const int64_t m = hi[i] - lo[i];
    int64_t w = 0;
    if (right_side) {
      w = m == 0;
    } else {
      switch (kind) {
        case 0: w = m; break;
        case 1:
        case 3: w = m > 0 ? m : 1; break;
        case 4: w = m > 0; break;
        case 5: w = m == 0; break;
      }
    }
    out[i] = w;
  }
}

/// Output u < total of the left-driven rows: left row i = upper_bound(off[0, n], u) - 1 (the last
/// row whose outputs start at or before u), t = u - off[i]; right index lo[i] + t when row i has
/// matches, else -1.
__global__ void expand_kernel(const int64_t* off, int64_t n, const int64_t* lo, const int64_t* hi, int64_t total,
                              bool write_right, int64_t* left_index, int64_t* right_index) {
  for (int64_t u = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; u < total; u += int64_t(gridDim.x) * blockDim.x) {
    int64_t first = 0, count = n + 1;  // upper_bound in off[0, n]
    while (count > 0) {
      const int64_t step = count / 2, mid = first + step;
      if (off[mid] <= u) {
        first = mid + 1;
        count -= step + 1;
      } else {
        count = step;
      }
    }
    const int64_t i = first - 1;
    left_index[u] = i;
    if (write_right) right_index[u] = hi[i] > lo[i] ? lo[i] + (u - off[i]) : -1;
  }
}

/// The unmatched right rows of a full join: (-1, j) at base + roff[j].
__global__ void scatter_right_kernel(const int64_t* rlo, const int64_t* rhi, const int64_t* roff, int64_t nr,
                                     int64_t base, int64_t* left_index, int64_t* right_index) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < nr; j += int64_t(gridDim.x) * blockDim.x) {
    if (rhi[j] == rlo[j]) {
      left_index[base + roff[j]] = -1;
      right_index[base + roff[j]] = j;
    }
  }
}

int grid_for(int64_t n) {
  return int(std::clamp<int64_t>((n + 255) / 256, 1, 132 * 16));
}

/// The join's workspace, carved from one buffer (nullptr base: only sizes).
template <class T>
struct join_layout {
  int64_t *lo, *hi, *w, *off, *rlo, *rhi, *roff;
  void* cub_temp;
  size_t cub_bytes, total;

  join_layout(char* base, int kind, const T* left, int64_t nl, const T* right, int64_t nr) {
    const bool full = kind == 3;
    const int64_t nmax = std::max(nl, nr);
    size_t s = 0, o = 0;
    // CUB's temporary storage: the most any of the searches and scans needs.
    size_t b = 0;
    GSEARCH_CUDA_CHECK(cub::DeviceFind::LowerBoundSortedValues(nullptr, b, right, nr, left, nl,
                                                              static_cast<int64_t*>(nullptr), less{}));
    s = std::max(s, b);
    b = 0;
    GSEARCH_CUDA_CHECK(cub::DeviceFind::UpperBoundSortedValues(nullptr, b, right, nr, left, nl,
                                                              static_cast<int64_t*>(nullptr), less{}));
    s = std::max(s, b);
    b = 0;
    GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, b, static_cast<int64_t*>(nullptr),
                                                     static_cast<int64_t*>(nullptr), nmax + 1));
    s = std::max(s, b);
    if (full) {
      b = 0;
      GSEARCH_CUDA_CHECK(cub::DeviceFind::LowerBoundSortedValues(nullptr, b, left, nl, right, nr,
                                                                static_cast<int64_t*>(nullptr), less{}));
      s = std::max(s, b);
      b = 0;
      GSEARCH_CUDA_CHECK(cub::DeviceFind::UpperBoundSortedValues(nullptr, b, left, nl, right, nr,
                                                                static_cast<int64_t*>(nullptr), less{}));
      s = std::max(s, b);
    }
    cub_bytes = s;
    auto take = [&](size_t bytes) -> char* {
      char* p = base ? base + o : nullptr;
      o += align256(bytes);
      return p;
    };
    cub_temp = take(std::max<size_t>(s, 1));
    lo = reinterpret_cast<int64_t*>(take(size_t(nl) * 8));
    hi = reinterpret_cast<int64_t*>(take(size_t(nl) * 8));
    w = reinterpret_cast<int64_t*>(take(size_t(nmax + 1) * 8));
    off = reinterpret_cast<int64_t*>(take(size_t(nl + 1) * 8));
    rlo = rhi = roff = nullptr;
    if (full) {
      rlo = reinterpret_cast<int64_t*>(take(size_t(nr) * 8));
      rhi = reinterpret_cast<int64_t*>(take(size_t(nr) * 8));
      roff = reinterpret_cast<int64_t*>(take(size_t(nr + 1) * 8));
    }
    total = o;
  }
};

}  // namespace

template <class T>
size_t cub_merge_keys(CUstream_st* stream, void* temp, size_t temp_bytes, const T* a, int64_t na, const T* b,
                      int64_t nb, T* out) {
  GSEARCH_CUDA_CHECK(cub::DeviceMerge::MergeKeys(temp, temp_bytes, a, na, b, nb, out, less{}, stream));
  return temp_bytes;
}

template <class T>
size_t cub_merge_pairs(CUstream_st* stream, void* temp, size_t temp_bytes, const T* a, const int64_t* av,
                       int64_t na, const T* b, const int64_t* bv, int64_t nb, T* out, int64_t* out_values) {
  GSEARCH_CUDA_CHECK(
      cub::DeviceMerge::MergePairs(temp, temp_bytes, a, av, na, b, bv, nb, out, out_values, less{}, stream));
  return temp_bytes;
}

template <class T>
size_t cub_upper_bound_sorted(CUstream_st* stream, void* temp, size_t temp_bytes, const T* keys, int64_t k,
                              const T* queries, int64_t q, int32_t* out) {
  GSEARCH_CUDA_CHECK(
      cub::DeviceFind::UpperBoundSortedValues(temp, temp_bytes, keys, k, queries, q, out, less{}, stream));
  return temp_bytes;
}

template <class T>
size_t cub_merge_sort_keys(CUstream_st* stream, void* temp, size_t temp_bytes, const T* in, T* out, int64_t n) {
  GSEARCH_CUDA_CHECK(cub::DeviceMergeSort::SortKeysCopy(temp, temp_bytes, in, out, n, less{}, stream));
  return temp_bytes;
}

template <class T>
size_t cub_merge_sort_pairs(CUstream_st* stream, void* temp, size_t temp_bytes, const T* in, const int64_t* vin,
                            T* out, int64_t* vout, int64_t n) {
  GSEARCH_CUDA_CHECK(cub::DeviceMergeSort::SortPairsCopy(temp, temp_bytes, in, vin, out, vout, n, less{}, stream));
  return temp_bytes;
}

template <class T>
size_t cub_radix_sort_keys(CUstream_st* stream, void* temp, size_t temp_bytes, const T* in, T* out, int64_t n) {
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, n, 0, int(sizeof(T) * 8), stream));
  return temp_bytes;
}

template <class T>
size_t cub_radix_sort_pairs(CUstream_st* stream, void* temp, size_t temp_bytes, const T* in, const int64_t* vin,
                            T* out, int64_t* vout, int64_t n) {
  GSEARCH_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(temp, temp_bytes, in, out, vin, vout, n, 0, int(sizeof(T) * 8), stream));
  return temp_bytes;
}

template <class T>
int64_t thrust36_set_op(CUstream_st* stream, int op, const T* a, int64_t na, const T* b, int64_t nb, T* out) {
  return set_op_with(thrust::cuda::par(thrust_cache()).on(stream), "thrust36_set_op", op, a, na, b, nb, out);
}

template <class T>
size_t cub_join_temp_bytes(int kind, const T* left, int64_t nl, const T* right, int64_t nr) {
  return join_layout<T>(nullptr, kind, left, nl, right, nr).total;
}

template <class T>
int64_t cub_join(CUstream_st* stream, void* temp, size_t temp_bytes, int kind, const T* left, int64_t nl,
                 const T* right, int64_t nr, int64_t* left_index, int64_t* right_index, int64_t capacity) {
  if (kind == 2 || kind < 0 || kind > 5)
    throw gsearch::invalid_argument("cub_join: kinds inner, left, full, semi and anti only");
  join_layout<T> L(static_cast<char*>(temp), kind, left, nl, right, nr);
  if (temp_bytes < L.total) throw gsearch::invalid_argument("cub_join: temporary storage too small");
  const bool full = kind == 3, write_right = kind <= 3;
  size_t b = L.cub_bytes;
  GSEARCH_CUDA_CHECK(
      cub::DeviceFind::LowerBoundSortedValues(L.cub_temp, b, right, nr, left, nl, L.lo, less{}, stream));
  b = L.cub_bytes;
  GSEARCH_CUDA_CHECK(
      cub::DeviceFind::UpperBoundSortedValues(L.cub_temp, b, right, nr, left, nl, L.hi, less{}, stream));
  weights_kernel<<<grid_for(nl + 1), 256, 0, stream>>>(L.lo, L.hi, nl, kind, false, L.w);
  GSEARCH_CUDA_CHECK_LAUNCH();
  b = L.cub_bytes;
  GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(L.cub_temp, b, L.w, L.off, nl + 1, stream));
  int64_t totals[2] = {0, 0};
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&totals[0], L.off + nl, 8, cudaMemcpyDeviceToHost, stream));
  if (full) {
    b = L.cub_bytes;
    GSEARCH_CUDA_CHECK(
        cub::DeviceFind::LowerBoundSortedValues(L.cub_temp, b, left, nl, right, nr, L.rlo, less{}, stream));
    b = L.cub_bytes;
    GSEARCH_CUDA_CHECK(
        cub::DeviceFind::UpperBoundSortedValues(L.cub_temp, b, left, nl, right, nr, L.rhi, less{}, stream));
    weights_kernel<<<grid_for(nr + 1), 256, 0, stream>>>(L.rlo, L.rhi, nr, kind, true, L.w);
    GSEARCH_CUDA_CHECK_LAUNCH();
    b = L.cub_bytes;
    GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(L.cub_temp, b, L.w, L.roff, nr + 1, stream));
    GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&totals[1], L.roff + nr, 8, cudaMemcpyDeviceToHost, stream));
  }
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  const int64_t rows = totals[0] + totals[1];
  if (rows > capacity)
    throw gsearch::invalid_argument("cub_join: " + std::to_string(rows) + " rows, room for " + std::to_string(capacity));
  if (totals[0] > 0) {
    expand_kernel<<<grid_for(totals[0]), 256, 0, stream>>>(L.off, nl, L.lo, L.hi, totals[0], write_right, left_index,
                                                           right_index);
    GSEARCH_CUDA_CHECK_LAUNCH();
  }
  if (full && totals[1] > 0) {
    scatter_right_kernel<<<grid_for(nr), 256, 0, stream>>>(L.rlo, L.rhi, L.roff, nr, totals[0], left_index,
                                                           right_index);
    GSEARCH_CUDA_CHECK_LAUNCH();
  }
  return rows;
}

#else  // no newer CCCL in this build

namespace {
[[noreturn]] void missing() {
  throw gsearch::invalid_argument(
      "merge_bench was built without the newer CCCL (run scripts/fetch-cccl.sh and reconfigure): no CUB 3.6 peers");
}
}  // namespace
template <class T>
size_t cub_merge_keys(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, T*) { missing(); }
template <class T>
size_t cub_merge_pairs(CUstream_st*, void*, size_t, const T*, const int64_t*, int64_t, const T*, const int64_t*,
                       int64_t, T*, int64_t*) { missing(); }
template <class T>
size_t cub_upper_bound_sorted(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, int32_t*) {
  missing();
}
template <class T>
size_t cub_merge_sort_keys(CUstream_st*, void*, size_t, const T*, T*, int64_t) { missing(); }
template <class T>
size_t cub_merge_sort_pairs(CUstream_st*, void*, size_t, const T*, const int64_t*, T*, int64_t*, int64_t) {
  missing();
}
template <class T>
size_t cub_radix_sort_keys(CUstream_st*, void*, size_t, const T*, T*, int64_t) { missing(); }
template <class T>
size_t cub_radix_sort_pairs(CUstream_st*, void*, size_t, const T*, const int64_t*, T*, int64_t*, int64_t) {
  missing();
}
template <class T>
int64_t thrust36_set_op(CUstream_st*, int, const T*, int64_t, const T*, int64_t, T*) { missing(); }
template <class T>
size_t cub_join_temp_bytes(int, const T*, int64_t, const T*, int64_t) { missing(); }
template <class T>
int64_t cub_join(CUstream_st*, void*, size_t, int, const T*, int64_t, const T*, int64_t, int64_t*, int64_t*,
                 int64_t) { missing(); }

#endif

#define GSEARCH_INSTANTIATE(T)                                                                                  \
  template size_t cub_merge_keys<T>(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, T*);      \
  template size_t cub_merge_pairs<T>(CUstream_st*, void*, size_t, const T*, const int64_t*, int64_t, const T*,   \
                                     const int64_t*, int64_t, T*, int64_t*);                                     \
  template size_t cub_upper_bound_sorted<T>(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t,   \
                                            int32_t*);                                                           \
  template size_t cub_merge_sort_keys<T>(CUstream_st*, void*, size_t, const T*, T*, int64_t);                    \
  template size_t cub_merge_sort_pairs<T>(CUstream_st*, void*, size_t, const T*, const int64_t*, T*, int64_t*,   \
                                          int64_t);                                                              \
  template size_t cub_radix_sort_keys<T>(CUstream_st*, void*, size_t, const T*, T*, int64_t);                    \
  template size_t cub_radix_sort_pairs<T>(CUstream_st*, void*, size_t, const T*, const int64_t*, T*, int64_t*,   \
                                          int64_t);                                                              \
  template int64_t thrust36_set_op<T>(CUstream_st*, int, const T*, int64_t, const T*, int64_t, T*);              \
  template size_t cub_join_temp_bytes<T>(int, const T*, int64_t, const T*, int64_t);                             \
  template int64_t cub_join<T>(CUstream_st*, void*, size_t, int, const T*, int64_t, const T*, int64_t, int64_t*, \
                               int64_t*, int64_t);
GSEARCH_INSTANTIATE(int32_t)
#undef GSEARCH_INSTANTIATE
template size_t cub_merge_keys<int64_t>(CUstream_st*, void*, size_t, const int64_t*, int64_t, const int64_t*,
                                        int64_t, int64_t*);

}  // namespace gsearch::bench::merge_peers
