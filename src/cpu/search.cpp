// The CPU backend: loops over the per-lane algorithms of core/pbs.hpp on all cores.

#include "gsearch/cpu/search.hpp"

#include <algorithm>
#include <vector>

#include "gsearch/core/padding.hpp"
#include "gsearch/core/pbs.hpp"
#include "gsearch/cpu/parallel.hpp"

namespace gsearch::cpu_backend {
namespace {

// Queries per thread below which spawning threads costs more than it saves.
constexpr int64_t min_queries_per_thread = 1 << 14;

// The padded accessor reaches at most ceil(log2 k) + 1 keys past either end (PBS), so the 32
// sentinels cover k < 2^31; larger key lists use the bounded accessor, which needs no copy.
constexpr int64_t max_padded_keys = int64_t{1} << 30;

template <algorithm A, bool Strict, class T, class Out, class Accessor>
void run(int threads, const Accessor& acc, int64_t k, const T* queries, int64_t n, Out* out,
         int64_t offset) {
  parallel_for(n, thread_count(threads, n, min_queries_per_thread), warp_width,
               [&](int64_t begin, int64_t end) {
                 for (int64_t j = begin; j < end; ++j) {
                   const int lane = int(j % warp_width);
                   const int64_t r = core::search_rank<A>(acc, k, before<Strict, T>{queries[j]}, lane);
                   out[j] = Out(r + offset);
                 }
               });
}

template <algorithm A, bool Strict, class T, class Out>
void run_algorithm(int threads, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                   int64_t offset) {
  if constexpr (A == algorithm::binary) {
    // Reads only [0, k): no padding needed.
    run<A, Strict>(threads, core::padded_accessor<T>{keys}, k, queries, n, out, offset);
  } else if (k <= max_padded_keys) {
    const std::vector<T> padded = core::pad_keys(keys, k);  // as the GPU stages them
    run<A, Strict>(threads, core::padded_accessor<T>{padded.data() + warp_width}, k, queries, n,
                   out, offset);
  } else {
    run<A, Strict>(threads, core::bounded_accessor<T, key_traits<T>>{keys, k}, k, queries, n, out,
                   offset);
  }
}

template <bool Strict, class T, class Out>
void dispatch(int threads, algorithm algo, const T* keys, int64_t k, const T* queries, int64_t n,
              Out* out, int64_t offset) {
  switch (algo) {
    case algorithm::pbs:
      return run_algorithm<algorithm::pbs, Strict>(threads, keys, k, queries, n, out, offset);
    case algorithm::pbs_cf:
      return run_algorithm<algorithm::pbs_cf, Strict>(threads, keys, k, queries, n, out, offset);
    case algorithm::pbs_cl:
      return run_algorithm<algorithm::pbs_cl, Strict>(threads, keys, k, queries, n, out, offset);
    case algorithm::binary:
    case algorithm::auto_:  // resolved by the caller
      return run_algorithm<algorithm::binary, Strict>(threads, keys, k, queries, n, out, offset);
  }
}

}  // namespace

algorithm resolve(algorithm requested, int /*key_bytes*/, int64_t /*k*/) {
  return requested == algorithm::auto_ ? algorithm::binary : requested;
}

template <class T, class Out>
void search(int threads, side s, algorithm algo, const T* keys, int64_t k, const T* queries,
            int64_t n, Out* out) {
  const int64_t offset = s == side::pred ? -1 : 0;
  algo = resolve(algo, int(sizeof(T)), k);
  if (s == side::left) {
    dispatch<true>(threads, algo, keys, k, queries, n, out, offset);
  } else {
    dispatch<false>(threads, algo, keys, k, queries, n, out, offset);
  }
}

template <class T>
bool is_sorted(const T* keys, int64_t k) {
  return std::is_sorted(keys, keys + k, [](T a, T b) { return key_less(a, b); });
}

#define GSEARCH_INSTANTIATE(T)                                                                 \
  template void search<T, int64_t>(int, side, algorithm, const T*, int64_t, const T*, int64_t, \
                                   int64_t*);                                                  \
  template void search<T, int32_t>(int, side, algorithm, const T*, int64_t, const T*, int64_t, \
                                   int32_t*);                                                  \
  template bool is_sorted<T>(const T*, int64_t);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch::cpu_backend
