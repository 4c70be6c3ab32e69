// Built instead of src/cuda/ when GSEARCH_CUDA=OFF: the CUDA side of such a build. The backend
// calls need nothing here (src/on_backend.hpp never instantiates them and throws the one "built
// without CUDA" error); what remains is the device API of device.hpp, which reports no device
// (its allocations and copies throw the same error), and the CUDA backend's testing hooks.

#include "on_backend.hpp"
#include "gsearch/detail_placed_memory.hpp"
#include "gsearch/device.hpp"

namespace gsearch::cuda_backend {
namespace {
int64_t shared_override = 0;  // kept, though nothing here reads it
}  // namespace
void set_shared_limit_override(int64_t bytes) {
  if (bytes < 0) throw invalid_argument("set_shared_limit_override: negative byte count");
  shared_override = bytes;
}
int64_t shared_limit_override() { return shared_override; }
int64_t host_wait_words() { return 0; }
}  // namespace gsearch::cuda_backend

namespace gsearch {
bool built_with_cuda() noexcept { return false; }
int cuda_device_count() noexcept { return 0; }
std::string cuda_device_name() { return {}; }
cuda_device_info cuda_device_properties() { return {}; }
int cuda_current_device() { return 0; }
void cuda_set_device(int) { throw_no_cuda(); }
void* device_malloc(size_t) { throw_no_cuda(); }
void device_free(void*) noexcept {}
void copy_to_device(void*, const void*, size_t) { throw_no_cuda(); }
void copy_to_host(void*, const void*, size_t) { throw_no_cuda(); }
void synchronize(const cuda_t&) { throw_no_cuda(); }
double elapsed_ms(const cuda_t&, const std::function<void()>&) { throw_no_cuda(); }
}  // namespace gsearch

namespace gsearch::detail {
void* placed_memory::ordered_malloc(size_t, CUstream_st*) { throw_no_cuda(); }
void placed_memory::ordered_free(void*, CUstream_st*) noexcept {}
}  // namespace gsearch::detail
