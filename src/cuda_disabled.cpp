// Built instead of src/cuda/ when GSEARCH_CUDA=OFF: the CUDA entry points exist, and say why
// they cannot run.

#include "gsearch/core/error.hpp"
#include "gsearch/detail/cuda/find.hpp"
#include "gsearch/detail/cuda/merge.hpp"
#include "gsearch/detail/cuda/search.hpp"
#include "gsearch/detail/cuda/static_index.hpp"
#include "gsearch/device.hpp"

namespace gsearch::cuda_backend {
namespace {
[[noreturn]] void no_cuda() {
  throw invalid_argument("gsearch was built without CUDA (GSEARCH_CUDA=OFF): use the CPU backend");
}
}  // namespace

template <class T, class Out>
void search(CUstream_st*, side, algorithm, const T*, int64_t, const T*, int64_t, Out*, int64_t) { no_cuda(); }
int64_t temp_bytes(algorithm, int, int64_t, int64_t) { no_cuda(); }
int64_t sorted_temp_bytes(int, int64_t, int64_t) { no_cuda(); }
namespace {
int64_t shared_override = 0;  // kept, though nothing here reads it
}  // namespace
void set_shared_limit_override(int64_t bytes) {
  if (bytes < 0) throw invalid_argument("set_shared_limit_override: negative byte count");
  shared_override = bytes;
}
int64_t shared_limit_override() { return shared_override; }
int64_t host_wait_words() { return 0; }
template <class T, class Out>
void partitioned_search(CUstream_st*, side, const T*, int64_t, const T*, int64_t, Out*) { no_cuda(); }
template <class T, class Out>
void pary_search(CUstream_st*, side, const T*, int64_t, const T*, int64_t, Out*) { no_cuda(); }
template <class T>
bool is_sorted(CUstream_st*, const T*, int64_t) { no_cuda(); }
algorithm resolve(algorithm, int, int64_t, int64_t, int64_t) { no_cuda(); }
template <class T, class Out>
void search_rows(CUstream_st*, side, algorithm, int64_t, const T*, int64_t, const T*, int64_t, Out*) {
  no_cuda();
}
template <class T>
bool is_sorted_rows(CUstream_st*, const T*, int64_t, int64_t) { no_cuda(); }

template <class T>
void find(CUstream_st*, find_mode, const T*, int64_t, const predicate<T>&, find_strategy, int64_t,
          uint64_t, int64_t*) {
  no_cuda();
}
template <class T>
int64_t find_value(CUstream_st*, find_mode, const T*, int64_t, const predicate<T>&, find_strategy,
                   int64_t, uint64_t) {
  no_cuda();
}
template <class T>
int64_t find_all(CUstream_st*, const T*, int64_t, const predicate<T>&,
                 const std::function<int64_t*(int64_t)>&, int64_t*) {
  no_cuda();
}
template <class T>
void isin(CUstream_st*, const T*, int64_t, const T*, int64_t, bool*, bool, int) { no_cuda(); }

template <class T>
void merge(CUstream_st*, const T*, int64_t, const T*, int64_t, T*, const int64_t*, const int64_t*,
           int64_t*) {
  no_cuda();
}
template <class T>
void merge_sort(CUstream_st*, const T*, int64_t, const int64_t*, T*, int64_t*) { no_cuda(); }
template <class T, class Out>
void sorted_search(CUstream_st*, side, const T*, int64_t, const T*, int64_t, Out*) { no_cuda(); }
template <class T>
int64_t set_operation_size(CUstream_st*, set_op, const T*, int64_t, const T*, int64_t) { no_cuda(); }
template <class T>
int64_t set_operation(CUstream_st*, set_op, const T*, int64_t, const T*, int64_t, T*) { no_cuda(); }
template <class T>
int64_t join_size(CUstream_st*, join_kind, const T*, int64_t, const T*, int64_t) { no_cuda(); }
template <class T>
int64_t join(CUstream_st*, join_kind, const T*, int64_t, const T*, int64_t,
             const std::function<join_output(int64_t)>&) {
  no_cuda();
}

template <class T>
void index_build(CUstream_st*, const T*, int64_t, T*) { no_cuda(); }
template <class T, class Out>
void index_search(CUstream_st*, side, const index_ref<T>&, const T*, int64_t, Out*) { no_cuda(); }
template <class T, class Out>
void index_search_keys(CUstream_st*, side, const T*, int64_t, const T*, int64_t, Out*) { no_cuda(); }

GSEARCH_KEY_TYPES(GSEARCH_CUDA_BACKEND_INSTANTIATE)
GSEARCH_KEY_TYPES(GSEARCH_CUDA_PARTITIONED_INSTANTIATE)
GSEARCH_KEY_TYPES(GSEARCH_CUDA_PARY_INSTANTIATE)
GSEARCH_KEY_TYPES(GSEARCH_CUDA_INDEX_INSTANTIATE)
GSEARCH_KEY_TYPES(GSEARCH_CUDA_MERGE_INSTANTIATE)
GSEARCH_KEY_TYPES(GSEARCH_CUDA_MERGE_SORT_INSTANTIATE)
GSEARCH_KEY_TYPES(GSEARCH_CUDA_SORTED_SEARCH_INSTANTIATE)
GSEARCH_KEY_TYPES(GSEARCH_CUDA_SET_OPS_INSTANTIATE)
GSEARCH_KEY_TYPES(GSEARCH_CUDA_JOIN_INSTANTIATE)
GSEARCH_KEY_TYPES(GSEARCH_CUDA_FIND_INSTANTIATE)

}  // namespace gsearch::cuda_backend

namespace gsearch {
namespace {
[[noreturn]] void no_cuda() {
  throw invalid_argument("gsearch was built without CUDA (GSEARCH_CUDA=OFF): use the CPU backend");
}
}  // namespace
bool built_with_cuda() noexcept { return false; }
int cuda_device_count() noexcept { return 0; }
std::string cuda_device_name() { return {}; }
cuda_device_info cuda_device_properties() { return {}; }
int cuda_current_device() { return 0; }
void cuda_set_device(int) { no_cuda(); }
void* device_malloc(size_t) { no_cuda(); }
void device_free(void*) noexcept {}
void copy_to_device(void*, const void*, size_t) { no_cuda(); }
void copy_to_host(void*, const void*, size_t) { no_cuda(); }
void synchronize(const cuda_t&) { no_cuda(); }
double elapsed_ms(const cuda_t&, const std::function<void()>&) { no_cuda(); }
}  // namespace gsearch
