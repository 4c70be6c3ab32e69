#pragma once
/// \file
/// gsearch::span: a pointer and an int64 count, like std::span but with the signed 64-bit sizes
/// used throughout gsearch. Host or device memory, depending on the execution tag it goes with.

#include <cstdint>
#include <iterator>
#include <ranges>
#include <type_traits>

#include "gsearch/core/config.hpp"

namespace gsearch {

template <class T>
class span {
 public:
  using element_type = T;
  constexpr span() = default;
  GSEARCH_HD constexpr span(T* data, int64_t size) : data_(data), size_(size) {}
  /// From any contiguous range whose elements convert to T without a type change (a
  /// std::vector<int>& gives a span<const int>, never a span<const float>).
  template <class R>
    requires(std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
             std::is_convertible_v<std::remove_reference_t<std::ranges::range_reference_t<R>> (*)[],
                                   T (*)[]>)
  constexpr span(R&& r)  // NOLINT(google-explicit-constructor): a view, like std::span
      : data_(std::ranges::data(r)), size_(static_cast<int64_t>(std::ranges::size(r))) {}
  /// span<T> converts to span<const T>.
  template <class U>
    requires(std::is_convertible_v<U (*)[], T (*)[]> && !std::is_same_v<U, T>)
  GSEARCH_HD constexpr span(span<U> s) : data_(s.data()), size_(s.size()) {}

  GSEARCH_HD constexpr T* data() const { return data_; }
  GSEARCH_HD constexpr int64_t size() const { return size_; }
  GSEARCH_HD constexpr bool empty() const { return size_ == 0; }
  GSEARCH_HD constexpr T& operator[](int64_t i) const { return data_[i]; }
  GSEARCH_HD constexpr T* begin() const { return data_; }
  GSEARCH_HD constexpr T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace gsearch
