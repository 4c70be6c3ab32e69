// The CPU backend of the static index: the build on all cores, and the lockstep walk of
// core::static_index_ranks with its node compares compiled for AVX-512, AVX2 and plain x86-64, the
// CPU's best picked once at load time (GCC's target_clones: an ifunc resolver).

#include "static_index/backend.hpp"

#include "cpu/parallel.hpp"
#include "cpu/tuning.hpp"
#include "gsearch/detail_placed_memory.hpp"

namespace gsearch::cpu_backend {
using namespace index_tuning;  // min_slots_per_thread, min_queries_per_thread, walk_lockstep
namespace {

// The node compares are SIMD (16 4-byte keys in one AVX-512 compare, two AVX2 ones); the
// library is compiled for baseline x86-64, so the search loop is cloned per instruction set,
// and `flatten` inlines the whole walk into each clone (nothing it calls is compiled twice).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define GSEARCH_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#else
#define GSEARCH_SIMD_CLONES
#endif

// The layout as static_index_ref reads it, with the prefetch that core::static_index_descend
// gives each query's next node.
template <class T>
struct prefetching_layout {
  const T* layout;
  GSEARCH_FORCEINLINE T operator()(int64_t s) const { return layout[s]; }
  GSEARCH_FORCEINLINE void prefetch(int64_t s) const { __builtin_prefetch(layout + s); }
};

template <bool Strict, class T, class Out>
GSEARCH_SIMD_CLONES void search_range(const static_index_host_ref<T>& ref, const T* queries, int64_t begin,
                                      int64_t end, Out* out, int64_t offset) {
  const prefetching_layout<T> layout{ref.layout};
  int64_t j = begin;
  for (; j + walk_lockstep <= end; j += walk_lockstep) {
    T q[walk_lockstep];
    int64_t rank[walk_lockstep];
    for (int i = 0; i < walk_lockstep; ++i) q[i] = queries[j + i];
    core::static_index_ranks<Strict>(layout, ref.shape, q, rank);
    for (int i = 0; i < walk_lockstep; ++i) out[j + i] = Out(rank[i] + offset);
  }
  for (; j < end; ++j) out[j] = Out(core::static_index_rank<Strict>(ref, ref.shape, queries[j]) + offset);
}

}  // namespace

template <class T>
void index_build(int threads, const T* keys, int64_t n, T* layout) {
  const core::static_index_shape<node_keys<T>> shape(n);
  const auto sorted = [keys](int64_t i) { return keys[i]; };
  parallel_for(shape.size(), thread_count(threads, shape.size(), min_slots_per_thread), 64,
               [&](int64_t begin, int64_t end) { core::static_index_build(sorted, shape, layout, begin, end); });
}

template <class T, class Out>
void index_search(int threads, side s, const index_ref<T>& ref, const T* queries, int64_t q, Out* out) {
  visit_side(s, [&]<bool Strict>(int offset) {
    parallel_for(q, thread_count(threads, q, min_queries_per_thread), walk_lockstep, [&](int64_t begin, int64_t end) {
      search_range<Strict>(ref, queries, begin, end, out, offset);
    });
  });
}

template <class T, class Out>
void index_search_keys(int threads, side s, const T* keys, int64_t k, const T* queries, int64_t q, Out* out) {
  const core::static_index_shape<node_keys<T>> shape(k);
  const auto layout = detail::placed_memory::host(size_t(shape.size()) * sizeof(T));
  index_build(threads, keys, k, layout.data<T>());
  index_search(threads, s, index_ref<T>{layout.data<T>(), shape}, queries, q, out);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_INDEX_BUILD_OPS)
GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS(GSEARCH_INDEX_SEARCH_OPS)
GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS(GSEARCH_INDEX_KEYS_CPU_OPS)

}  // namespace gsearch::cpu_backend
