// bench/peers where they were not built (no CUDA, or no -DGSEARCH_BUILD_BENCH=ON): the GPU peers
// exist and say why they cannot run (GSEARCH_PEERS_NOT_BUILT, set by bench/CMakeLists.txt).
#include "gsearch/core/error.hpp"
#include "peers.hpp"

namespace gsearch::bench {
namespace {
[[noreturn]] void no_cuda() { throw gsearch::invalid_argument(GSEARCH_PEERS_NOT_BUILT); }
}  // namespace
template <class T>
void roofline_copy(CUstream_st*, const T*, int64_t, int32_t*) { no_cuda(); }
template <class T>
void thrust_upper_bound(CUstream_st*, const T*, int64_t, const T*, int64_t, int32_t*) { no_cuda(); }
std::string thrust_version() { return {}; }
bool cub_available() { return false; }
std::string cub_version() { return {}; }
template <class T>
size_t cub_temp_bytes(const T*, int64_t, const T*, int64_t, int32_t*) { no_cuda(); }
template <class T>
void cub_upper_bound(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, int32_t*) { no_cuda(); }
std::vector<kernel_config> sweep_configs() { return {}; }
template <class T>
void gsearch_upper_bound_with(CUstream_st*, kernel_config, const T*, int64_t, const T*, int64_t, int32_t*) {
  no_cuda();
}
#define GSEARCH_INSTANTIATE(T)                                                                         \
  template void roofline_copy<T>(CUstream_st*, const T*, int64_t, int32_t*);                           \
  template void thrust_upper_bound<T>(CUstream_st*, const T*, int64_t, const T*, int64_t, int32_t*);   \
  template size_t cub_temp_bytes<T>(const T*, int64_t, const T*, int64_t, int32_t*);                   \
  template void cub_upper_bound<T>(CUstream_st*, void*, size_t, const T*, int64_t, const T*, int64_t, \
                                   int32_t*);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE)
#undef GSEARCH_INSTANTIATE
template void gsearch_upper_bound_with<int32_t>(CUstream_st*, kernel_config, const int32_t*, int64_t,
                                                const int32_t*, int64_t, int32_t*);
template void gsearch_upper_bound_with<int64_t>(CUstream_st*, kernel_config, const int64_t*, int64_t,
                                                const int64_t*, int64_t, int32_t*);
}  // namespace gsearch::bench
