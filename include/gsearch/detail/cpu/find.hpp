#pragma once
/// \file
/// The CPU backend of the unsorted search (src/cpu/find.cpp, instantiated for every key type).
/// Arguments are validated by the public API (src/find.cpp) before they get here.

#include <cstdint>
#include <functional>

#include "gsearch/core/find.hpp"

namespace gsearch::cpu_backend {

/// *result = the answer of `mode` over data[0, n). The default strategy scans blocks of 4,096
/// elements on all cores (first / any: blocks taken in order, stopping past the best hit); a
/// study strategy runs as a simulated grid of core::strategy_threads(n, k) threads.
template <class T>
void find(int threads, find_mode mode, const T* data, int64_t n, const predicate<T>& pred,
          find_strategy strategy, int64_t per_thread, uint64_t seed, int64_t* result);

/// Every matching index, ascending, into allocate(count). Returns the count.
template <class T>
int64_t find_all(int threads, const T* data, int64_t n, const predicate<T>& pred,
                 const std::function<int64_t*(int64_t)>& allocate);

/// out[i] = (elements[i] is among tests[0, m)) != invert. `method` is an isin_method: auto_ and
/// sorted sort a copy of the test elements and run the branch-free search, 8 elements in
/// lockstep; hash builds core::hash_set_view, the GPU's hash set, on the CPU.
template <class T>
void isin(int threads, const T* elements, int64_t n, const T* tests, int64_t m, bool* out,
          bool invert, int method);

}  // namespace gsearch::cpu_backend
