// The CPU backend of the as-of join: core/asof.hpp's match per left row on all cores, the right
// rows grouped by a stable counting sort.

#include "asof/backend.hpp"

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
void asof_match(int threads, const T* left, const int64_t* left_by, int64_t n, const T* keys, int64_t m,
                const int64_t* group_start, const int64_t* order, const asof_rule<T>& rule, int64_t* out) {
  parallel_for(n, thread_count(threads, n, min_rows_per_thread), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = core::asof_row(left, left_by, i, keys, m, group_start, order, rule);
  });
}

template <class T>
void asof_group(int, const T* right, const int64_t* right_by, int64_t m, int64_t groups,
                const std::function<void(const T*, const int64_t*, const int64_t*)>& then) {
  // A counting sort: each group's size, their starts, then every row placed in order.
  std::vector<int64_t> start(size_t(groups) + 1, 0);
  for (int64_t j = 0; j < m; ++j) ++start[size_t(right_by[j]) + 1];
  for (int64_t g = 0; g < groups; ++g) start[size_t(g) + 1] += start[size_t(g)];
  std::vector<int64_t> next(start.begin(), start.end() - 1), order(static_cast<size_t>(m));
  std::vector<T> keys(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) {
    const int64_t p = next[size_t(right_by[j])]++;
    order[size_t(p)] = j;
    keys[size_t(p)] = right[j];
  }
  then(keys.data(), start.data(), order.data());
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
