// The public static index: argument checks shared by both backends, the owned layout, and the
// backend calls (src/on_backend.hpp).

#include "gsearch/static_index.hpp"

#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "on_backend.hpp"
#include "static_index/backend.hpp"

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

// The layout of `keys` built on exec's backend, in its memory (host, or the current device's).
template <class T, class Exec>
detail::placed_memory build_layout(const Exec& exec, span<const T> keys) {
  return on_backend(exec, [&](auto h) {
    constexpr bool cpu = on_cpu<decltype(h)>;
    constexpr int node_keys = cpu ? core::cpu_node_keys<T> : core::cuda_node_keys<T>;  // the backend's nodes
    const size_t bytes = size_t(core::static_index_shape<node_keys>(keys.size()).size()) * sizeof(T);
    auto layout = cpu ? detail::placed_memory::host(bytes) : detail::placed_memory::device(bytes);
    backend::index_build(h, keys.data(), keys.size(), layout.template data<T>());
    return layout;
  });
}

// A search of `index` (its layout and key count) on exec's backend, after the checks.
template <class T, class Exec, class Out>
void search_index(const Exec& exec, const static_index<T>& index, const detail::placed_memory& layout, int64_t n,
                  side s, span<const T> queries, span<Out> out) {
  constexpr bool cuda = std::is_same_v<Exec, cuda_t>;
  check_search(n, layout, cuda, queries, out);
  if constexpr (cuda) layout.check_device_current("gsearch::static_index", "the index");
  on_backend(exec, [&](auto h) {
    if constexpr (on_cpu<decltype(h)>) {
      backend::index_search(h, s, index.host_ref(), queries.data(), queries.size(), out.data());
    } else {
      backend::index_search(h, s, index.device_ref(), queries.data(), queries.size(), out.data());
    }
  });
}

}  // namespace

template <class T>
static_index<T>::static_index() {
  // One leaf of padding, in host memory: every search answers 0.
  const core::static_index_shape<core::cpu_node_keys<T>> shape(0);
  layout_ = detail::placed_memory::host(size_t(shape.size()) * sizeof(T));
  cpu_backend::index_build<T>(1, nullptr, 0, layout_.data<T>());  // (the host, whatever is built)
}

#define GSEARCH_DEFINE_INDEX_BUILD(EXEC)                                                                 \
  template <class T>                                                                                     \
  static_index<T>::static_index(const EXEC& exec, span<const T> keys, const index_options& options) {    \
    check_keys(keys);                                                                                    \
    if (options.check_sorted && !sorted_on(exec, keys)) throw_unsorted();                                \
    layout_ = build_layout(exec, keys);                                                                  \
    n_ = keys.size();                                                                                    \
  }
GSEARCH_DEFINE_INDEX_BUILD(cpu_t)
GSEARCH_DEFINE_INDEX_BUILD(cuda_t)
#undef GSEARCH_DEFINE_INDEX_BUILD

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

#define GSEARCH_DEFINE_INDEX_SEARCH(EXEC, OUT)                                                          \
  template <class T>                                                                                    \
  void static_index<T>::search(const EXEC& exec, side s, span<const T> queries, span<OUT> out) const {  \
    search_index(exec, *this, layout_, n_, s, queries, out);                                            \
  }
GSEARCH_DEFINE_INDEX_SEARCH(cpu_t, int64_t)
GSEARCH_DEFINE_INDEX_SEARCH(cpu_t, int32_t)
GSEARCH_DEFINE_INDEX_SEARCH(cuda_t, int64_t)
GSEARCH_DEFINE_INDEX_SEARCH(cuda_t, int32_t)
#undef GSEARCH_DEFINE_INDEX_SEARCH

#define GSEARCH_INSTANTIATE(T) template class static_index<T>;
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch
