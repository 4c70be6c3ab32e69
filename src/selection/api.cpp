// The public selection API: argument checks shared by both backends, the normalization of ranks
// and kth (negative from the end; kth sorted and distinct), each function written once for either
// execution tag, then the backend call (src/on_backend.hpp). Every check runs before anything is
// written.

#include "gsearch/selection.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "on_backend.hpp"
#include "selection/backend.hpp"

namespace gsearch {
namespace {

// A span argument: a size >= 0 and a pointer wherever there are elements.
void check_span(const char* fn, const char* what, const void* p, int64_t size) {
  if (size < 0) throw invalid_argument(std::string(fn) + ": " + what + " has a negative size");
  if (size > 0 && !p)
    throw invalid_argument(std::string(fn) + ": null " + what + " pointer with a non-zero size");
}

void check_size(const char* fn, const char* what, int64_t size, int64_t want) {
  if (size != want)
    throw invalid_argument(std::string(fn) + ": " + what + " has " + std::to_string(size) +
                           " elements, must have " + std::to_string(want));
}

// A rank of n elements, numpy's way: [-n, n), negative ones counted from the end.
int64_t normalized_rank(const char* fn, const char* what, int64_t r, int64_t n) {
  if (n == 0) throw invalid_argument(std::string(fn) + ": empty data has no element of " + what + " " + std::to_string(r));
  if (r < -n || r >= n)
    throw invalid_argument(std::string(fn) + ": " + what + " " + std::to_string(r) + " is out of [-" +
                           std::to_string(n) + ", " + std::to_string(n) + ")");
  return r < 0 ? r + n : r;
}

std::vector<int64_t> normalized_ranks(const char* fn, const char* what, span<const int64_t> ranks, int64_t n) {
  check_span(fn, what, ranks.data(), ranks.size());
  std::vector<int64_t> r(size_t(ranks.size()));
  for (int64_t i = 0; i < ranks.size(); ++i) r[size_t(i)] = normalized_rank(fn, what, ranks[i], n);
  return r;
}

// kth as the backends take it: normalized, sorted, distinct (numpy allows any order and repeats).
std::vector<int64_t> normalized_kth(const char* fn, span<const int64_t> kth, int64_t n) {
  std::vector<int64_t> k = normalized_ranks(fn, "kth", kth, n);
  std::sort(k.begin(), k.end());
  k.erase(std::unique(k.begin(), k.end()), k.end());
  return k;
}

// rows x cols of n elements: rows >= 1 dividing n.
int64_t columns(const char* fn, int64_t n, int64_t rows) {
  if (rows < 1 || n % rows != 0)
    throw invalid_argument(std::string(fn) + ": rows = " + std::to_string(rows) + " must be >= 1 and divide the " +
                           std::to_string(n) + " elements");
  return n / rows;
}

void check_quantile_args(const char* fn, int64_t n, span<const double> q, quantile_method method,
                         const quantile_dtypes& dtypes) {
  if (n == 0) throw invalid_argument(std::string(fn) + ": the quantile of empty data is undefined");
  if (int(method) < 0 || method > quantile_method::nearest)
    throw invalid_argument(std::string(fn) + ": unknown method " + std::to_string(int(method)));
  for (float_format f : {dtypes.index, dtypes.lerp})
    if (int(f) < 0 || f > float_format::binary64)
      throw invalid_argument(std::string(fn) + ": unknown float format " + std::to_string(int(f)));
  // numpy's float16 index arithmetic rounds n to inf from here on (its answers: NaN, IndexError).
  if (dtypes.index == float_format::binary16 && n >= 65520)
    throw invalid_argument(std::string(fn) + ": float16 q cannot index " + std::to_string(n) +
                           " elements (numpy's float16 index arithmetic overflows from 65520); "
                           "give q as float32 or float64");
  for (int64_t i = 0; i < q.size(); ++i)
    if (!(q[i] >= 0.0 && q[i] <= 1.0))  // NaN fails both
      throw invalid_argument(std::string(fn) + ": q[" + std::to_string(i) + "] = " + std::to_string(q[i]) +
                             " is not in [0, 1]");
}

template <class Exec, class T>
void select_impl(const Exec& exec, span<const T> data, span<const int64_t> ranks, span<T> values) {
  constexpr const char* fn = "gsearch::select";
  check_span(fn, "data", data.data(), data.size());
  check_span(fn, "values", values.data(), values.size());
  check_size(fn, "values", values.size(), ranks.size());
  const std::vector<int64_t> r = normalized_ranks(fn, "rank", ranks, data.size());
  if (r.empty()) return;
  on_backend(exec, [&](auto h) {
    backend::select(h, data.data(), data.size(), r.data(), int64_t(r.size()), values.data());
  });
}

// partition (out_values) or argpartition (out_indices) of each of `rows` rows: the same checks
// and backend call. An empty kth reaches the backend as m = 0: numpy's copy (or iota) in the
// data's order.
template <class Exec, class T>
void partition_impl(const Exec& exec, const char* fn, span<const T> data, int64_t rows, span<const int64_t> kth,
                    T* out_values, int64_t* out_indices, int64_t out_size) {
  check_span(fn, "data", data.data(), data.size());
  check_span(fn, "out", out_values ? static_cast<const void*>(out_values) : out_indices, out_size);
  check_size(fn, "out", out_size, data.size());
  const int64_t cols = columns(fn, data.size(), rows);
  const std::vector<int64_t> k = normalized_kth(fn, kth, cols);
  if (data.size() == 0) return;
  on_backend(exec, [&](auto h) {
    if (rows == 1)
      return backend::partition(h, data.data(), cols, k.data(), int64_t(k.size()), out_values, out_indices);
    backend::partition_rows(h, data.data(), rows, cols, k.data(), int64_t(k.size()), out_values, out_indices);
  });
}

template <class Exec, class T>
void topk_impl(const Exec& exec, span<const T> data, int64_t rows, int64_t k, const topk_options& options,
               span<T> values, span<int64_t> indices) {
  constexpr const char* fn = "gsearch::topk";
  check_span(fn, "data", data.data(), data.size());
  check_span(fn, "values", values.data(), values.size());
  check_span(fn, "indices", indices.data(), indices.size());
  const int64_t cols = columns(fn, data.size(), rows);
  if (k < 0 || k > cols)
    throw invalid_argument(std::string(fn) + ": k = " + std::to_string(k) + " is out of [0, " +
                           std::to_string(cols) + "] (the row length)");
  check_size(fn, "values", values.size(), rows * k);
  check_size(fn, "indices", indices.size(), rows * k);
  if (k == 0) return;
  on_backend(exec, [&](auto h) {
    backend::topk(h, data.data(), rows, cols, k, options.largest, options.sorted, values.data(), indices.data());
  });
}

template <class Exec, class T>
void kthvalue_impl(const Exec& exec, span<const T> data, int64_t rows, int64_t rank, span<T> values,
                   span<int64_t> indices) {
  constexpr const char* fn = "gsearch::kthvalue";
  check_span(fn, "data", data.data(), data.size());
  check_span(fn, "values", values.data(), values.size());
  check_span(fn, "indices", indices.data(), indices.size());
  const int64_t cols = columns(fn, data.size(), rows);
  const int64_t r = normalized_rank(fn, "rank", rank, cols);
  check_size(fn, "values", values.size(), rows);
  check_size(fn, "indices", indices.size(), rows);
  on_backend(exec, [&](auto h) {
    backend::kthvalue(h, data.data(), rows, cols, r, values.data(), indices.data());
  });
}

// quantile of each of `rows` rows (1: the whole data), q-major into out.
template <class Exec, class T>
void quantile_impl(const Exec& exec, span<const T> data, int64_t rows, span<const double> q, quantile_method method,
                   const quantile_dtypes& dtypes, bool skip_nan, span<double> out) {
  constexpr const char* fn = "gsearch::quantile";
  check_span(fn, "data", data.data(), data.size());
  check_span(fn, "q", q.data(), q.size());
  check_span(fn, "out", out.data(), out.size());
  const int64_t cols = data.size() == 0 && rows == 1 ? 0 : columns(fn, data.size(), rows);
  check_size(fn, "out", out.size(), q.size() * rows);
  check_quantile_args(fn, cols, q, method, dtypes);
  if (q.size() == 0) return;
  on_backend(exec, [&](auto h) {
    if (rows == 1)
      backend::quantile(h, data.data(), cols, q.data(), q.size(), method, dtypes, skip_nan, out.data());
    else
      backend::quantile_rows(h, data.data(), rows, cols, q.data(), q.size(), method, dtypes, skip_nan, out.data());
  });
}

template <class Exec, class T>
void median_impl(const Exec& exec, span<const T> data, int64_t rows, bool skip_nan, span<double> out) {
  constexpr const char* fn = "gsearch::median";
  check_span(fn, "data", data.data(), data.size());
  check_span(fn, "out", out.data(), out.size());
  const int64_t cols = data.size() == 0 && rows == 1 ? 0 : columns(fn, data.size(), rows);
  check_size(fn, "out", out.size(), rows);
  if (cols == 0) throw invalid_argument(std::string(fn) + ": the median of empty data is undefined");
  on_backend(exec, [&](auto h) {
    if (rows == 1)
      backend::median(h, data.data(), cols, skip_nan, out.data());
    else
      backend::median_rows(h, data.data(), rows, cols, skip_nan, out.data());
  });
}

}  // namespace

// The exported overloads: one line each, per key type and execution tag.
#define GSEARCH_DEFINE_SELECTION(EXEC, T)                                                          \
  void select(const EXEC& exec, span<const T> data, span<const int64_t> ranks, span<T> values) {   \
    select_impl(exec, data, ranks, values);                                                        \
  }                                                                                                \
  void partition(const EXEC& exec, span<const T> data, span<const int64_t> kth, span<T> out) {     \
    partition_impl<EXEC, T>(exec, "gsearch::partition", data, 1, kth, out.data(), nullptr, out.size()); \
  }                                                                                                \
  void argpartition(const EXEC& exec, span<const T> data, span<const int64_t> kth, span<int64_t> out) { \
    partition_impl<EXEC, T>(exec, "gsearch::argpartition", data, 1, kth, nullptr, out.data(), out.size()); \
  }                                                                                                \
  void partition(const EXEC& exec, span<const T> data, int64_t rows, span<const int64_t> kth, span<T> out) { \
    partition_impl<EXEC, T>(exec, "gsearch::partition", data, rows, kth, out.data(), nullptr, out.size()); \
  }                                                                                                \
  void argpartition(const EXEC& exec, span<const T> data, int64_t rows, span<const int64_t> kth,   \
                    span<int64_t> out) {                                                           \
    partition_impl<EXEC, T>(exec, "gsearch::argpartition", data, rows, kth, nullptr, out.data(), out.size()); \
  }                                                                                                \
  void topk(const EXEC& exec, span<const T> data, int64_t rows, int64_t k, const topk_options& options, \
            span<T> values, span<int64_t> indices) {                                               \
    topk_impl(exec, data, rows, k, options, values, indices);                                      \
  }                                                                                                \
  void kthvalue(const EXEC& exec, span<const T> data, int64_t rows, int64_t rank, span<T> values,  \
                span<int64_t> indices) {                                                           \
    kthvalue_impl(exec, data, rows, rank, values, indices);                                        \
  }                                                                                                \
  void quantile(const EXEC& exec, span<const T> data, span<const double> q, quantile_method method, \
                bool skip_nan, span<double> out) {                                                 \
    quantile_impl(exec, data, 1, q, method, scalar_q_dtypes<T>(), skip_nan, out);                  \
  }                                                                                                \
  void quantile(const EXEC& exec, span<const T> data, span<const double> q, quantile_method method, \
                const quantile_dtypes& dtypes, bool skip_nan, span<double> out) {                  \
    quantile_impl(exec, data, 1, q, method, dtypes, skip_nan, out);                                \
  }                                                                                                \
  void median(const EXEC& exec, span<const T> data, bool skip_nan, span<double> out) {             \
    median_impl(exec, data, 1, skip_nan, out);                                                     \
  }                                                                                                \
  void quantile(const EXEC& exec, span<const T> data, int64_t rows, span<const double> q,          \
                quantile_method method, const quantile_dtypes& dtypes, bool skip_nan, span<double> out) { \
    quantile_impl(exec, data, rows, q, method, dtypes, skip_nan, out);                             \
  }                                                                                                \
  void median(const EXEC& exec, span<const T> data, int64_t rows, bool skip_nan, span<double> out) { \
    median_impl(exec, data, rows, skip_nan, out);                                                  \
  }
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_SELECTION, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_SELECTION, cuda_t)
#undef GSEARCH_DEFINE_SELECTION

}  // namespace gsearch
