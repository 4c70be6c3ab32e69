// selection_bench's plain-CUDA helpers (selection_peers.hpp): the read and copy rooflines, the
// input generator and the device-side checks (counts around a value, an order-free hash, the
// partition property). No CCCL here.

#include <cuda_runtime.h>

#include "bench_host.hpp"
#include "gsearch/core/error.hpp"
#include "cuda/check.cuh"
#include "selection_peers.hpp"

namespace gsearch::bench::selection_peers {
namespace {

constexpr int threads = 256;
constexpr uint32_t sink_magic = 0x9e3779b9u;

int sm_count() {
  int device = 0, sms = 0;
  GSEARCH_CUDA_CHECK(cudaGetDevice(&device));
  GSEARCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

/// A grid of `per_sm` blocks per SM, fewer when n is small.
int grid(int64_t n, int per_sm = 8) {
  const int64_t need = (n + threads - 1) / threads;
  return int(std::max<int64_t>(1, std::min<int64_t>(need, int64_t(per_sm) * sm_count())));
}

template <int Unroll>
__global__ void __launch_bounds__(threads) roof_kernel(const int4* src, int4* dst, int64_t words, uint32_t* sink) {
  const int64_t stride = int64_t(gridDim.x) * threads;
  uint32_t acc = 0;
  for (int64_t base = int64_t(blockIdx.x) * threads + threadIdx.x; base < words; base += Unroll * stride) {
    int4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      if (base + u * stride < words) v[u] = __ldcs(src + base + u * stride);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      if (base + u * stride >= words) continue;
      if (dst)
        __stcs(dst + base + u * stride, v[u]);
      else
        acc ^= uint32_t(v[u].x ^ v[u].y ^ v[u].z ^ v[u].w);
    }
  }
  if (acc == sink_magic) *sink = acc;
}

__device__ inline uint64_t word(uint64_t seed, int64_t i) { return core::mix64(seed + uint64_t(i + 1) * host::golden); }

/// One element of distribution d (selection_bench.cu's header has the formulas).
template <class T>
__device__ T value(dist d, uint64_t seed, int64_t i, int64_t n) {
  const uint64_t w = word(seed, i);
  constexpr bool is_float = std::is_same_v<T, float>;
  switch (d) {
    case dist::uniform:
      if constexpr (is_float) return float(w >> 40) * 0x1p-24f;
      else return T(w >> 40);
    case dist::normal: {
      const double u1 = (double(w >> 40) + 0.5) * 0x1p-24, u2 = double(w & 0xffffff) * 0x1p-24;
      const double z = sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
      if constexpr (is_float) return float(z);
      else return T(llrint(z * 1048576.0));
    }
    case dist::bits: {
      uint32_t b = uint32_t(w >> 32);
      if constexpr (is_float) {
        if (((b >> 23) & 0xff) == 0xff) b ^= 0x40000000u;  // no inf or NaN: exponent 255 -> 127
        return __uint_as_float(b);
      } else {
        return T(b);
      }
    }
    case dist::constant:
      if constexpr (is_float) return 0.5f;
      else return T(12345);
    case dist::sorted:
      if constexpr (is_float) return float(double(i) / double(n));
      else return T(i - n / 2);
    case dist::adversarial:
      if constexpr (is_float) return __uint_as_float(0x3f800000u | uint32_t(w >> 48));
      else return T(0x40000000u | uint32_t(w >> 48));
  }
  return T{};
}

template <class T>
__global__ void generate_kernel(T* data, int64_t n, dist d, uint64_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    data[i] = value<T>(d, seed, i, n);
}

__device__ inline unsigned long long warp_sum(unsigned long long x) {
  for (int o = 16; o > 0; o /= 2) x += __shfl_down_sync(0xffffffffu, x, o);
  return x;
}

template <class T>
__global__ void count_kernel(const T* data, int64_t n, T v, unsigned long long* out) {
  unsigned long long lt = 0, le = 0, gt = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const T x = data[i];
    lt += x < v;
    le += x <= v;
    gt += x > v;
  }
  lt = warp_sum(lt), le = warp_sum(le), gt = warp_sum(gt);
  if (threadIdx.x % 32 == 0) {
    atomicAdd(out, lt);
    atomicAdd(out + 1, le);
    atomicAdd(out + 2, gt);
  }
}

template <class T>
__global__ void hash_kernel(const T* data, int64_t n, unsigned long long* out) {
  unsigned long long h = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    T x = data[i];
    if constexpr (std::is_same_v<T, float>)
      if (x == 0.0f) x = 0.0f;  // -0.0 and 0.0 are one value
    uint32_t b;
    memcpy(&b, &x, 4);
    h += core::mix64(uint64_t(b) + 1);
  }
  h = warp_sum(h);
  if (threadIdx.x % 32 == 0) atomicAdd(out, h);
}

template <class T>
__global__ void partitioned_kernel(const T* out, int64_t n, int64_t p, unsigned long long* bad) {
  const T v = out[p];
  unsigned long long b = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    b += i < p ? !(out[i] <= v) : (i > p ? !(out[i] >= v) : 0);
  b = warp_sum(b);
  if (threadIdx.x % 32 == 0 && b) atomicAdd(bad, b);
}

}  // namespace

std::vector<roof_config> roof_configs() {
  std::vector<roof_config> c;
  for (int unroll : {2, 4, 8})
    for (int blocks : {4, 8, 16}) c.push_back({unroll, blocks});
  return c;
}

void roofline(CUstream_st* stream, const void* src, void* dst, int64_t bytes, roof_config cfg, uint32_t* sink) {
  if (bytes % 16 != 0) throw gsearch::invalid_argument("roofline: bytes must be a multiple of 16");
  const int64_t words = bytes / 16;
  const int blocks = cfg.blocks_per_sm * sm_count();
  auto s = static_cast<const int4*>(src);
  auto d = static_cast<int4*>(dst);
  switch (cfg.unroll) {
    case 2: roof_kernel<2><<<blocks, threads, 0, stream>>>(s, d, words, sink); break;
    case 4: roof_kernel<4><<<blocks, threads, 0, stream>>>(s, d, words, sink); break;
    case 8: roof_kernel<8><<<blocks, threads, 0, stream>>>(s, d, words, sink); break;
    default: throw gsearch::invalid_argument("roofline: unroll must be 2, 4 or 8");
  }
  GSEARCH_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void generate(CUstream_st* stream, T* data, int64_t n, dist d, uint64_t seed) {
  if (n == 0) return;
  generate_kernel<T><<<grid(n, 16), threads, 0, stream>>>(data, n, d, seed);
  GSEARCH_CUDA_CHECK(cudaGetLastError());
}

template <class T>
std::vector<int64_t> count_around(CUstream_st* stream, const T* data, int64_t n, T v, int64_t* out) {
  auto o = reinterpret_cast<unsigned long long*>(out);
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(o, 0, 3 * sizeof(int64_t), stream));
  if (n > 0) count_kernel<T><<<grid(n), threads, 0, stream>>>(data, n, v, o);
  GSEARCH_CUDA_CHECK(cudaGetLastError());
  std::vector<int64_t> h(3);
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h.data(), out, 3 * sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

template <class T>
uint64_t multiset_hash(CUstream_st* stream, const T* data, int64_t n, uint64_t* out) {
  auto o = reinterpret_cast<unsigned long long*>(out);
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(o, 0, sizeof(uint64_t), stream));
  if (n > 0) hash_kernel<T><<<grid(n), threads, 0, stream>>>(data, n, o);
  GSEARCH_CUDA_CHECK(cudaGetLastError());
  uint64_t h = 0;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&h, out, sizeof h, cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

template <class T>
bool partitioned_at(CUstream_st* stream, const T* out, int64_t n, int64_t p, int64_t* bad) {
  auto o = reinterpret_cast<unsigned long long*>(bad);
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(o, 0, sizeof(int64_t), stream));
  partitioned_kernel<T><<<grid(n), threads, 0, stream>>>(out, n, p, o);
  GSEARCH_CUDA_CHECK(cudaGetLastError());
  int64_t h = -1;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&h, bad, sizeof h, cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h == 0;
}

#define GSEARCH_INSTANTIATE(T)                                                                      \
  template void generate<T>(CUstream_st*, T*, int64_t, dist, uint64_t);                           \
  template std::vector<int64_t> count_around<T>(CUstream_st*, const T*, int64_t, T, int64_t*);    \
  template uint64_t multiset_hash<T>(CUstream_st*, const T*, int64_t, uint64_t*);                 \
  template bool partitioned_at<T>(CUstream_st*, const T*, int64_t, int64_t, int64_t*);
GSEARCH_INSTANTIATE(float)
GSEARCH_INSTANTIATE(int32_t)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch::bench::selection_peers
