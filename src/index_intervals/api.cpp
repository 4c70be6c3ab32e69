// The public index intervals: argument checks shared by both backends, the owned copy, the
// host's record of the pieces (core::interval_set) and the backend calls (src/on_backend.hpp).

#include "gsearch/index_intervals.hpp"

#include <string>
#include <utility>
#include <vector>

#include "on_backend.hpp"
#include "index_intervals/backend.hpp"

namespace gsearch {
namespace {

template <class T>
void check_data(span<const T> data) {
  if (data.size() < 0) throw invalid_argument("gsearch::index_intervals: negative size");
  if (data.size() > 0 && !data.data())
    throw invalid_argument("gsearch::index_intervals: null data with a non-zero size");
}

void check_position(const char* what, int64_t p, int64_t n) {
  if (p < 0 || p >= n)
    throw invalid_argument(std::string("gsearch::index_intervals::") + what + ": " + std::to_string(p) +
                           " is outside [0, " + std::to_string(n) + ")");
}

}  // namespace

template <class T>
index_intervals<T>::index_intervals(const cpu_t& exec, span<const T> data) : threads_(exec.threads) {
  check_data(data);
  data_ = detail::placed_memory::host(size_t(data.size()) * sizeof(T));
  if (data.size() > 0)
    on_backend(exec, [&](auto h) { backend::intervals_copy(h, data_.data<T>(), data.data(), data.size()); });
  set_ = core::interval_set<T>(data.size());
}

template <class T>
index_intervals<T>::index_intervals(const cuda_t& exec, span<const T> data) : stream_(exec.stream) {
  check_data(data);
  on_backend(exec, [&](auto h) {
    auto copy = detail::placed_memory::device(size_t(data.size()) * sizeof(T));
    if (data.size() > 0) backend::intervals_copy(h, copy.data<T>(), data.data(), data.size());
    data_ = std::move(copy);
  });
  set_ = core::interval_set<T>(data.size());
}

template <class T>
index_intervals<T>::index_intervals(index_intervals&& other) noexcept
    : data_(std::move(other.data_)),
      threads_(other.threads_),
      stream_(other.stream_),
      set_(std::exchange(other.set_, core::interval_set<T>())),
      improves_(std::exchange(other.improves_, 0)) {}

template <class T>
index_intervals<T>& index_intervals<T>::operator=(index_intervals&& other) noexcept {
  data_ = std::move(other.data_);  // swaps
  std::swap(threads_, other.threads_);
  std::swap(stream_, other.stream_);
  std::swap(set_, other.set_);
  std::swap(improves_, other.improves_);
  return *this;
}

template <class T>
index_intervals<T>::~index_intervals() = default;

// call(h) on the backend the object was built with: its thread count, or its stream on the
// device it was built on.
template <class T>
template <class F>
decltype(auto) index_intervals<T>::on_own_backend(F&& call) const {
  if (data_.on_device()) {
    data_.check_device_current("gsearch::index_intervals", "the data");
    return on_backend(cuda_t{stream_}, call);
  }
  return on_backend(cpu_t{threads_}, call);
}

template <class T>
void index_intervals<T>::improve_piece(const index_interval& piece, const T* splitter) {
  const core::split_counts<T> c = on_own_backend(
      [&](auto h) { return backend::intervals_improve(h, data_.data<T>() + piece.lo, piece.size(), splitter); });
  set_.split(piece.lo, c.splitter, c.less, c.equal);
  ++improves_;
}

template <class T>
index_interval index_intervals<T>::interval(int64_t position) const {
  check_position("interval", position, size());
  return set_.at(position);
}

template <class T>
index_interval index_intervals<T>::improve(int64_t position) {
  check_position("improve", position, size());
  const index_interval piece = set_.at(position);
  if (!piece.settled) improve_piece(piece, nullptr);
  return set_.at(position);
}

template <class T>
T index_intervals<T>::select(int64_t k) {
  if (size() == 0) throw invalid_argument("gsearch::index_intervals::select: no elements");
  check_position("select", k, size());
  // Each improve settles at least the splitter's equal part, so the piece holding k shrinks.
  for (index_interval piece = set_.at(k); !piece.settled; piece = set_.at(k)) improve_piece(piece, nullptr);
  return on_own_backend([&](auto h) { return backend::intervals_read(h, data_.data<const T>(), k); });
}

template <class T>
void index_intervals<T>::sort() {
  if (set_.unplaced() == 0) return;
  const std::vector<index_interval> pieces = set_.list();
  on_own_backend(
      [&](auto h) { backend::intervals_sort(h, data_.data<T>(), size(), pieces.data(), int64_t(pieces.size())); });
  set_.settle_all();
}

// #(x < v): from the facts when they know it; by a binary search of a settled piece; or after
// one improve of the piece that straddles v with v as the splitter, which leaves the fact that
// answers (or settles the piece, when its parts merge).
template <class T>
int64_t index_intervals<T>::lower_position(T v) {
  for (;;) {
    const core::position_bracket b = set_.lower_bracket(v);
    if (b.exact >= 0) return b.exact;
    if (b.piece.settled)
      return on_own_backend([&](auto h) {
        return backend::intervals_lower_bound(h, data_.data<const T>(), b.piece.lo, b.piece.hi, v);
      });
    improve_piece(b.piece, &v);
  }
}

template <class T>
position_range index_intervals<T>::range(T lo, T hi) {
  if (!key_less(lo, hi)) return {};
  const int64_t b = lower_position(lo);
  return {b, lower_position(hi)};
}

template <class T>
std::string index_intervals<T>::check() const {
  std::vector<T> host(static_cast<size_t>(size()));
  if (size() > 0)
    on_own_backend([&](auto h) { backend::intervals_to_host(h, host.data(), data_.data<const T>(), size()); });
  return core::check_intervals(set_, host.data(), size());
}

#define GSEARCH_INSTANTIATE(T) template class index_intervals<T>;
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch
