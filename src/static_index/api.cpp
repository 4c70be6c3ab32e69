// The public static index: argument checks shared by both backends, the owned layout, and the
// backend calls (src/on_backend.hpp).

#include "gsearch/static_index.hpp"

#include <limits>
#include <string>
#include <utility>

#include "on_backend.hpp"
#include "static_index/cpu.hpp"
#include "static_index/cuda.hpp"

namespace gsearch {
namespace {

template <class T>
void check_keys(span<const T> keys) {
  if (keys.size() < 0) throw invalid_argument("gsearch::static_index: negative key count");
  if (keys.size() > 0 && !keys.data())
    throw invalid_argument("gsearch::static_index: null keys with a non-zero size");
}

[[noreturn]] void throw_unsorted() {
  throw invalid_argument("gsearch::static_index: keys are not sorted (NaN last, -0.0 == 0.0)");
}

template <class T, class Out>
void check_search(int64_t n, const detail::placed_memory& layout, bool cuda, span<const T> queries, span<Out> out) {
  layout.check_backend(cuda, "gsearch::static_index", "the index");
  if (queries.size() < 0 || out.size() < 0) throw invalid_argument("gsearch::static_index: negative size");
  if (out.size() != queries.size())
    throw invalid_argument("gsearch::static_index: " + std::to_string(queries.size()) + " queries but " +
                           std::to_string(out.size()) + " output elements");
  if ((queries.size() > 0 && !queries.data()) || (out.size() > 0 && !out.data()))
    throw invalid_argument("gsearch::static_index: null data pointer with a non-zero size");
  if constexpr (sizeof(Out) < sizeof(int64_t)) {
    if (n > int64_t(std::numeric_limits<Out>::max()))
      throw invalid_argument("gsearch::static_index: " + std::to_string(n) +
                             " keys do not fit an int32 output; use int64");
  }
}

}  // namespace

template <class T>
static_index<T>::static_index() {
  // One leaf of padding, in host memory: every search answers 0.
  const core::static_index_shape<core::cpu_node_keys<T>> shape(0);
  layout_ = detail::placed_memory::host(size_t(shape.size()) * sizeof(T));
  cpu_backend::index_build<T>(1, nullptr, 0, layout_.data<T>());
}

template <class T>
static_index<T>::static_index(const cpu_t& exec, span<const T> keys, const index_options& options) {
  check_keys(keys);
  if (options.check_sorted && !sorted_on(exec, keys)) throw_unsorted();
  const core::static_index_shape<core::cpu_node_keys<T>> shape(keys.size());
  layout_ = detail::placed_memory::host(size_t(shape.size()) * sizeof(T));
  cpu_backend::index_build(exec.threads, keys.data(), keys.size(), layout_.data<T>());
  n_ = keys.size();
}

template <class T>
static_index<T>::static_index(const cuda_t& exec, span<const T> keys, const index_options& options) {
  check_keys(keys);
  if (options.check_sorted && !sorted_on(exec, keys)) throw_unsorted();
  const core::static_index_shape<core::cuda_node_keys<T>> shape(keys.size());
  auto layout = detail::placed_memory::device(size_t(shape.size()) * sizeof(T));
  T* slots = layout.data<T>();
  on_backend(exec, [&](auto h) { backend::index_build(h, keys.data(), keys.size(), slots); });
  layout_ = std::move(layout);
  n_ = keys.size();
}

template <class T>
static_index<T>::static_index(static_index&& other) noexcept
    : layout_(std::move(other.layout_)), n_(std::exchange(other.n_, 0)) {}

template <class T>
static_index<T>& static_index<T>::operator=(static_index&& other) noexcept {
  layout_ = std::move(other.layout_);  // swaps
  std::swap(n_, other.n_);
  return *this;
}

template <class T>
static_index<T>::~static_index() = default;

template <class T>
int static_index<T>::node_keys() const {
  return on_device() ? core::cuda_node_keys<T> : core::cpu_node_keys<T>;
}

template <class T>
int static_index<T>::levels() const {
  return on_device() ? core::static_index_shape<core::cuda_node_keys<T>>(n_).levels
                     : core::static_index_shape<core::cpu_node_keys<T>>(n_).levels;
}

template <class T>
static_index_host_ref<T> static_index<T>::host_ref() const {
  if (!layout_) throw invalid_argument("gsearch::static_index::host_ref: the index was moved from");
  if (on_device()) throw invalid_argument("gsearch::static_index::host_ref: the index is in device memory; use device_ref");
  return {layout_.data<T>(), core::static_index_shape<core::cpu_node_keys<T>>(n_)};
}

template <class T>
static_index_device_ref<T> static_index<T>::device_ref() const {
  if (!layout_) throw invalid_argument("gsearch::static_index::device_ref: the index was moved from");
  if (!on_device()) throw invalid_argument("gsearch::static_index::device_ref: the index is in host memory; use host_ref");
  return {layout_.data<T>(), core::static_index_shape<core::cuda_node_keys<T>>(n_)};
}

#define GSEARCH_DEFINE_INDEX_SEARCH(OUT)                                                                 \
  template <class T>                                                                                     \
  void static_index<T>::search(const cpu_t& exec, side s, span<const T> queries, span<OUT> out) const {  \
    check_search(n_, layout_, false, queries, out);                                                      \
    on_backend(exec, [&](int threads) {                                                                  \
      cpu_backend::index_search(threads, s, host_ref(), queries.data(), queries.size(), out.data());     \
    });                                                                                                  \
  }                                                                                                      \
  template <class T>                                                                                     \
  void static_index<T>::search(const cuda_t& exec, side s, span<const T> queries, span<OUT> out) const { \
    check_search(n_, layout_, true, queries, out);                                                       \
    layout_.check_device_current("gsearch::static_index", "the index");                                  \
    on_backend(exec, [&](auto stream) {                                                                  \
      cuda_backend::index_search(stream, s, device_ref(), queries.data(), queries.size(), out.data());   \
    });                                                                                                  \
  }
GSEARCH_DEFINE_INDEX_SEARCH(int64_t)
GSEARCH_DEFINE_INDEX_SEARCH(int32_t)
#undef GSEARCH_DEFINE_INDEX_SEARCH

#define GSEARCH_INSTANTIATE(T) template class static_index<T>;
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch
