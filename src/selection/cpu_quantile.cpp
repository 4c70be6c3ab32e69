// The CPU backend of numpy.quantile / median (and the nan forms): NaN handling, then every rank
// the answer needs in one select (cpu_select.hpp's select_values), combined in numpy's
// arithmetic by core/quantile.hpp.

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

}  // namespace gsearch::cpu_backend
