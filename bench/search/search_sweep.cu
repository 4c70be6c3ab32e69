// gsearch's shared-memory search kernels at launch configurations other than the tuned one, for
// the tuning sweep (search_bench --sweep, search_peers.hpp). The winners go into the CUDA tuning
// header (src/search/tuning.hpp).

#include <cuda_runtime.h>

#include "search/cuda/search_kernel.cuh"
#include "search_peers.hpp"

namespace gsearch::bench::search_peers {
namespace {

using cuda_backend::device_limits;

// The swept configurations, as a type list so each becomes a kernel instantiation.
template <algorithm A, int Threads, int Items, int Copies = 1>
struct cfg {};
#define GSEARCH_SWEEP_FOR(A)                                                                      \
  cfg<A, 256, 1>, cfg<A, 256, 2>, cfg<A, 256, 4>, cfg<A, 256, 8>, cfg<A, 512, 1>, cfg<A, 512, 2>, \
      cfg<A, 512, 4>, cfg<A, 512, 8>, cfg<A, 1024, 1>, cfg<A, 1024, 2>, cfg<A, 1024, 4>

template <class... C>
struct cfg_list {};
using sweep_list = cfg_list<GSEARCH_SWEEP_FOR(algorithm::pbs), GSEARCH_SWEEP_FOR(algorithm::pbs_cf),
                            GSEARCH_SWEEP_FOR(algorithm::pbs_cl), GSEARCH_SWEEP_FOR(algorithm::binary),
                            cfg<algorithm::pbs_cl, 1024, 4, 2>, cfg<algorithm::pbs_cl, 1024, 4, 4>,
                            cfg<algorithm::pbs_cl, 512, 8, 2>, cfg<algorithm::pbs_cl, 512, 8, 4>>;

template <algorithm A, int Threads, int Items, int Copies>
kernel_config info(cfg<A, Threads, Items, Copies>) {
  return {A, Threads, Items, Copies};
}

template <class T, algorithm A, int Threads, int Items, int Copies>
bool run_if(cfg<A, Threads, Items, Copies>, kernel_config want, CUstream_st* stream, const T* keys, int64_t k,
            const T* queries, int64_t n, int32_t* out, const device_limits& dev) {
  if (want.algo != A || want.threads != Threads || want.items != Items || want.copies != Copies) return false;
  cuda_backend::launch_search_with<A, Threads, Items, Copies>(stream, false, 0, keys, k, queries, n, out, dev);
  return true;
}

template <class T, class... C>
void dispatch(cfg_list<C...>, kernel_config want, CUstream_st* stream, const T* keys, int64_t k,
              const T* queries, int64_t n, int32_t* out) {
  const device_limits dev = cuda_backend::current_device_limits();
  if (!(run_if<T>(C{}, want, stream, keys, k, queries, n, out, dev) || ...))
    throw gsearch::invalid_argument("no such kernel configuration in the sweep");
}

template <class... C>
std::vector<kernel_config> list(cfg_list<C...>) {
  return {info(C{})...};
}

}  // namespace

std::vector<kernel_config> sweep_configs() { return list(sweep_list{}); }

template <class T>
void gsearch_upper_bound_with(CUstream_st* stream, kernel_config cfg, const T* keys, int64_t k,
                              const T* queries, int64_t n, int32_t* out) {
  dispatch<T>(sweep_list{}, cfg, stream, keys, k, queries, n, out);
}

template void gsearch_upper_bound_with<int32_t>(CUstream_st*, kernel_config, const int32_t*, int64_t,
                                                const int32_t*, int64_t, int32_t*);
template void gsearch_upper_bound_with<int64_t>(CUstream_st*, kernel_config, const int64_t*, int64_t,
                                                const int64_t*, int64_t, int32_t*);

}  // namespace gsearch::bench::search_peers
