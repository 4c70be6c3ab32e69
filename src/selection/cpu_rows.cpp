// The CPU backend of torch.topk and torch.kthvalue over the last axis of a rows x cols array:
// one row gets every thread, several rows share them out; each row selects its threshold
// (cpu_select.hpp's select_values), then gathers the elements beyond it and the ties it needs.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "selection/backend.hpp"
#include "selection/cpu_select.hpp"

namespace gsearch::cpu_backend {
using namespace select_detail;
using namespace selection_tuning;
namespace {

// --- rows: topk, kthvalue ------------------------------------------------------------------

// body(row_threads, r) for every row: one row gets all the threads; several rows are shared out
// among the threads, one thread per row.
template <class Body>
void for_rows(int threads, int64_t rows, int64_t cols, Body body) {
  if (rows == 1) {
    body(threads, 0);
    return;
  }
  parallel_for(rows, thread_count(threads, rows * cols, min_elements_per_thread), 1, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) body(1, r);
  });
}

// torch.topk of one row: the threshold (the element of rank cols - k, or k - 1, from select),
// then the elements beyond it and as many equal to it as k needs, gathered per part at exact
// positions from the parts' counts; sorted by value (largest first, or smallest) when asked.
template <class T>
void topk_row(int threads, const T* row, int64_t cols, int64_t k, bool largest, bool sorted, T* values,
              int64_t* indices) {
  const T t = select_values(threads, row, cols, {largest ? cols - k : k - 1})[0];
  const auto beyond = [t, largest](T x) { return largest ? key_less(t, x) : key_less(x, t); };
  const int parts = parts_for(threads, cols);
  std::vector<int64_t> beyond_count(static_cast<size_t>(parts) + 1, 0), equal_count(static_cast<size_t>(parts) + 1, 0);
  for_parts(cols, parts, [&](int p, int64_t begin, int64_t end) {
    int64_t b = 0, e = 0;
    for (int64_t i = begin; i < end; ++i) {
      b += beyond(row[i]);
      e += key_equal(row[i], t);
    }
    beyond_count[size_t(p) + 1] = b;
    equal_count[size_t(p) + 1] = e;
  });
  std::partial_sum(beyond_count.begin(), beyond_count.end(), beyond_count.begin());
  std::partial_sum(equal_count.begin(), equal_count.end(), equal_count.begin());
  const int64_t strict = beyond_count.back();  // < k; the first k - strict equal ones complete it
  for_parts(cols, parts, [&](int p, int64_t begin, int64_t end) {
    int64_t b = beyond_count[size_t(p)], e = strict + equal_count[size_t(p)];
    for (int64_t i = begin; i < end; ++i) {
      if (beyond(row[i])) {
        values[b] = row[i];
        indices[b++] = i;
      } else if (e < k && key_equal(row[i], t)) {
        values[e] = row[i];
        indices[e++] = i;
      }
    }
  });
  if (!sorted) return;
  std::vector<std::pair<T, int64_t>> pairs(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) pairs[size_t(j)] = {values[j], indices[j]};
  std::sort(pairs.begin(), pairs.end(), [largest](const auto& a, const auto& b) {
    return largest ? key_less(b.first, a.first) : key_less(a.first, b.first);
  });
  for (int64_t j = 0; j < k; ++j) std::tie(values[j], indices[j]) = pairs[size_t(j)];
}

}  // namespace

template <class T>
void topk(int threads, const T* data, int64_t rows, int64_t cols, int64_t k, bool largest, bool sorted, T* values,
          int64_t* indices) {
  for_rows(threads, rows, cols, [&](int row_threads, int64_t r) {
    topk_row(row_threads, data + r * cols, cols, k, largest, sorted, values + r * k, indices + r * k);
  });
}

template <class T>
void kthvalue(int threads, const T* data, int64_t rows, int64_t cols, int64_t rank, T* values, int64_t* indices) {
  for_rows(threads, rows, cols, [&](int row_threads, int64_t r) {
    const T* row = data + r * cols;
    const T v = select_values(row_threads, row, cols, {rank})[0];
    values[r] = v;
    indices[r] = std::find_if(row, row + cols, [v](T x) { return key_equal(x, v); }) - row;
  });
}

// numpy.partition along the last axis: the rows shared out among the threads, each by the 1-D
// partition on one thread (cpu_select.cpp), or, with fewer rows than threads, one row after
// another on all of them.
template <class T>
void partition_rows(int threads, const T* data, int64_t rows, int64_t cols, const int64_t* kth, int64_t m, T* out,
                    int64_t* out_indices) {
  const auto row = [&](int row_threads, int64_t r) {
    partition(row_threads, data + r * cols, cols, kth, m, out ? out + r * cols : nullptr,
              out_indices ? out_indices + r * cols : nullptr);
  };
  if (rows < thread_count(threads, rows * cols, 1)) {
    for (int64_t r = 0; r < rows; ++r) row(threads, r);
    return;
  }
  for_rows(threads, rows, cols, row);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_ROWS_OPS)

}  // namespace gsearch::cpu_backend
