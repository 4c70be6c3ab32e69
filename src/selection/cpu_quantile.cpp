// The CPU backend of numpy.quantile / median (and the nan forms): NaN handling, then every rank
// the answer needs in one select (cpu_select.hpp's select_values), combined in numpy's
// arithmetic by core/quantile.hpp. The rows forms (numpy's axis) run the same per row: short rows
// shared out among the threads (one thread a row), long rows one after another on every thread,
// as partition_rows does.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "gsearch/core/quantile.hpp"
#include "selection/backend.hpp"
#include "selection/cpu_select.hpp"

namespace gsearch::cpu_backend {
using namespace select_detail;

// numpy.quantile: NaN data answers NaN (unless skip_nan); else every q's ranks among the non-NaN
// elements (they sort first) in one select, combined by core/quantile.hpp.
template <class T>
void quantile(int threads, const T* data, int64_t n, const double* q, int64_t m, quantile_method method,
              const quantile_dtypes& dtypes, bool skip_nan, double* out) {
  const int64_t nans = count_nan(threads, data, n), valid = n - nans;
  if (valid == 0 || (nans > 0 && !skip_nan)) {
    std::fill(out, out + m, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  std::vector<core::quantile_point> points(static_cast<size_t>(m));
  std::vector<int64_t> ranks;
  for (int64_t i = 0; i < m; ++i) {
    points[size_t(i)] = core::quantile_point_of(method, q[i], valid, dtypes);
    ranks.push_back(points[size_t(i)].lo);
    ranks.push_back(points[size_t(i)].hi);
  }
  ranks = sorted_distinct(std::move(ranks));
  const std::vector<T> v = select_values(threads, data, n, ranks);
  for (int64_t i = 0; i < m; ++i) {
    const core::quantile_point& p = points[size_t(i)];
    out[i] = core::quantile_combine(p, value_of(ranks, v, p.lo), value_of(ranks, v, p.hi), dtypes);
  }
}

template <class T>
void median(int threads, const T* data, int64_t n, bool skip_nan, double* out) {
  const int64_t nans = count_nan(threads, data, n), valid = n - nans;
  if (valid == 0 || (nans > 0 && !skip_nan)) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return;
  }
  const core::median_ranks r = core::median_ranks_of(valid);
  const std::vector<int64_t> ranks = sorted_distinct({r.lo, r.hi});
  const std::vector<T> v = select_values(threads, data, n, ranks);
  *out = core::median_combine(v.front(), v.back(), valid);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_QUANTILE_OPS)

namespace {

// body(row_threads, r) for every row of rows x cols: with fewer rows than threads, one row after
// another on every thread; else the rows shared out, one thread a row.
template <class Body>
void each_row(int threads, int64_t rows, int64_t cols, Body body) {
  const int t = thread_count(threads, rows * cols, selection_tuning::min_elements_per_thread);
  if (rows < t) {
    for (int64_t r = 0; r < rows; ++r) body(threads, r);
    return;
  }
  parallel_for(rows, t, 1, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) body(1, r);
  });
}

}  // namespace

template <class T>
void quantile_rows(int threads, const T* data, int64_t rows, int64_t cols, const double* q, int64_t m,
                   quantile_method method, const quantile_dtypes& dtypes, bool skip_nan, double* out) {
  each_row(threads, rows, cols, [&](int row_threads, int64_t r) {
    std::vector<double> row_out(static_cast<size_t>(m));
    quantile(row_threads, data + r * cols, cols, q, m, method, dtypes, skip_nan, row_out.data());
    for (int64_t i = 0; i < m; ++i) out[i * rows + r] = row_out[size_t(i)];
  });
}

template <class T>
void median_rows(int threads, const T* data, int64_t rows, int64_t cols, bool skip_nan, double* out) {
  each_row(threads, rows, cols, [&](int row_threads, int64_t r) { median(row_threads, data + r * cols, cols, skip_nan, out + r); });
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_QUANTILE_ROWS_OPS)

}  // namespace gsearch::cpu_backend
