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
#include "gsearch/core/pbs.hpp"

namespace gsearch::core {

template <class T>
std::vector<T> pad_keys(const T* keys, int64_t k, int w = warp_width) {
  std::vector<T> p(static_cast<size_t>(k + 2 * w));
  std::fill(p.begin(), p.begin() + w, key_traits<T>::lowest());
  std::copy(keys, keys + k, p.begin() + w);
  std::fill(p.end() - w, p.end(), key_traits<T>::highest());
  return p;
}

/// `copies` copies of the padded layout, replica_stride<T>(k, copies) elements apart (the gaps
/// hold the back sentinel): what PBS-CL with replicated keys reads. Index w of the result is key 0
/// of copy 0.
template <class T>
std::vector<T> pad_keys_replicated(const T* keys, int64_t k, int copies);

}  // namespace gsearch::core

template <class T>
std::vector<T> gsearch::core::pad_keys_replicated(const T* keys, int64_t k, int copies) {
  const std::vector<T> one = pad_keys(keys, k);
  if (copies <= 1) return one;
  const int64_t stride = replica_stride<T>(k, copies);
  std::vector<T> all(static_cast<size_t>(replicated_size<T>(k, copies)), key_traits<T>::highest());
  for (int c = 0; c < copies; ++c) std::copy(one.begin(), one.end(), all.begin() + c * stride);
  return all;
}
