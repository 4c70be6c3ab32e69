#pragma once
/// \file
/// The padded key layout the GPU stages in shared memory: w copies of key_traits<T>::lowest(),
/// the k keys, w copies of key_traits<T>::highest(). Host-only helper for the CPU backend and
/// the bank model; the CUDA kernels build the same layout in shared memory.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"

namespace gsearch::core {

template <class T>
std::vector<T> pad_keys(const T* keys, int64_t k, int w = warp_width) {
  std::vector<T> p(static_cast<size_t>(k + 2 * w));
  std::fill(p.begin(), p.begin() + w, key_traits<T>::lowest());
  std::copy(keys, keys + k, p.begin() + w);
  std::fill(p.end() - w, p.end(), key_traits<T>::highest());
  return p;
}

}  // namespace gsearch::core
