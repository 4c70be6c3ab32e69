// The CPU backend of the as-of join: pandas' sweep (core::asof_sweep) over a chunk of left rows a
// thread, every group's latest right row in an array indexed by its code. (A binary search a left
// row within its group, CUDA's way, measured 2-5x slower here: docs/perf-notes.md.)

#include "asof/backend.hpp"

#include <algorithm>
#include <atomic>
#include <type_traits>
#include <vector>

#include "cpu/parallel.hpp"
#include "merge/backend.hpp"  // sort

namespace gsearch::cpu_backend {
namespace {

// Left rows per thread below which a thread is not worth starting (a match is a binary search or
// two: some 20-100 ns).
constexpr int64_t min_rows_per_thread = 16384;

}  // namespace

template <class T>
void asof_join(int threads, const T* left, const int64_t* left_by, int64_t n, const T* right, const int64_t* right_by,
               int64_t m, int64_t groups, const asof_rule<T>& rule, int64_t* out) {
  // A chunk of left rows a thread, each sweeping the right rows from their start: a chunk beyond
  // the first costs m + groups more steps, so no more chunks than n / (m + groups) + 1 pay.
  const int64_t extra = m + groups;
  const int chunks = std::max(1, std::min<int>(thread_count(threads, n, min_rows_per_thread), int(n / extra + 1)));
  parallel_for(n, chunks, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> latest(static_cast<size_t>(groups));
    core::asof_sweep(left, left_by, begin, end, right, right_by, m, rule, latest.data(), groups, out);
  });
}

template <class T>
void asof_sort(int threads, const T* keys, const int64_t* codes, int64_t n,
               const std::function<void(const T*, const int64_t*, const int64_t*, int64_t*)>& then) {
  std::vector<int64_t> positions(static_cast<size_t>(n)), perm(static_cast<size_t>(n)), scratch(static_cast<size_t>(n));
  std::vector<T> sorted(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) positions[size_t(i)] = i;
  sort(threads, keys, n, positions.data(), sorted.data(), perm.data());
  std::vector<int64_t> sorted_codes(codes ? static_cast<size_t>(n) : 0);
  if (codes)
    parallel_for(n, thread_count(threads, n, min_rows_per_thread), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) sorted_codes[size_t(i)] = codes[perm[size_t(i)]];
    });
  then(sorted.data(), codes ? sorted_codes.data() : nullptr, perm.data(), scratch.data());
}

void asof_unsort(int threads, const int64_t* matched, const int64_t* left_perm, const int64_t* right_perm, int64_t n,
                 int64_t* out) {
  parallel_for(n, thread_count(threads, n, min_rows_per_thread), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[left_perm[i]] = matched[i] < 0 ? -1 : right_perm[matched[i]];
  });
}

template <class T>
bool has_nan(int threads, const T* keys, int64_t n, bool sorted) {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  } else {
    if (n == 0) return false;
    if (sorted) return keys[n - 1] != keys[n - 1];  // NaN sorts last
    std::atomic<bool> found{false};
    parallel_for(n, thread_count(threads, n, min_rows_per_thread), 1, [&](int64_t begin, int64_t end) {
      bool any = false;
      for (int64_t i = begin; i < end; ++i) any |= keys[i] != keys[i];
      if (any) found.store(true, std::memory_order_relaxed);
    });
    return found.load();
  }
}

int64_t first_code_outside(int threads, const int64_t* codes, int64_t n, int64_t groups) {
  std::atomic<int64_t> first{n};
  parallel_for(n, thread_count(threads, n, min_rows_per_thread), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (codes[i] < 0 || codes[i] >= groups) {
        int64_t seen = first.load();
        while (i < seen && !first.compare_exchange_weak(seen, i)) {
        }
        return;
      }
  });
  return first.load() < n ? first.load() : -1;
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_ASOF_OPS)

}  // namespace gsearch::cpu_backend
