// The public as-of join: argument checks shared by both backends (pandas' messages where pandas
// raises for the same input), each function written once for either execution tag, then the
// backend calls (src/on_backend.hpp).

#include "gsearch/asof.hpp"

#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "asof/backend.hpp"
#include "on_backend.hpp"

namespace gsearch {
namespace {

template <class T>
void check_span(const char* what, span<T> s) {
  if (s.size() < 0) throw invalid_argument(std::string("gsearch::asof_join: ") + what + " has a negative size");
  if (s.size() > 0 && !s.data())
    throw invalid_argument(std::string("gsearch::asof_join: ") + what + " is a null pointer with a non-zero size");
}

void check_size(const char* what, int64_t size, const char* of, int64_t expected) {
  if (size != expected)
    throw invalid_argument(std::string("gsearch::asof_join: ") + what + " has " + std::to_string(size) +
                           " elements, " + of + " " + std::to_string(expected));
}

template <class T>
asof_rule<T> rule_of(const asof_options<T>& options) {
  const asof_direction d = options.direction;
  if (d != asof_direction::backward && d != asof_direction::forward && d != asof_direction::nearest)
    throw invalid_argument("gsearch::asof_join: unknown direction " + std::to_string(int(d)) +
                           " (backward, forward or nearest)");
  asof_rule<T> rule{d, options.allow_exact_matches, options.tolerance.has_value(), T{}};
  if (rule.has_tolerance) {
    const T tol = *options.tolerance;
    if constexpr (std::is_floating_point_v<T>)
      if (tol != tol) throw invalid_argument("tolerance must be a number, not NaN");
    if constexpr (std::is_signed_v<T>)
      if (tol < T(0)) throw invalid_argument("tolerance must be positive");  // pandas' words (0 is allowed)
    rule.tolerance = tol;
  }
  return rule;
}

// pandas' checks of an `on` column, in its order and words: a column that is not monotonic
// increasing is refused for its nulls if it has any, else for its order.
template <class Exec, class T>
void check_keys(const Exec& exec, span<const T> keys, const char* side) {
  const bool sorted = sorted_on(exec, keys);
  const bool nan = on_backend(exec, [&](auto h) { return backend::has_nan(h, keys.data(), keys.size(), sorted); });
  if (nan) throw invalid_argument(std::string("Merge keys contain null values on ") + side + " side");
  if (!sorted) throw invalid_argument(std::string(side) + " keys must be sorted");
}

template <class Exec>
void check_codes(const Exec& exec, span<const int64_t> codes, int64_t groups, const char* what) {
  const int64_t bad =
      on_backend(exec, [&](auto h) { return backend::first_code_outside(h, codes.data(), codes.size(), groups); });
  if (bad >= 0)
    throw invalid_argument(std::string("gsearch::asof_join: ") + what + "[" + std::to_string(bad) +
                           "] is outside [0, groups = " + std::to_string(groups) + ")");
}

template <class Exec, class T>
void asof_impl(const Exec& exec, span<const T> left, span<const T> right, const span<const int64_t>* left_by,
               const span<const int64_t>* right_by, int64_t groups, span<int64_t> out,
               const asof_options<T>& options) {
  check_span("left_on", left);
  check_span("right_on", right);
  check_span("right_index", out);
  check_size("right_index", out.size(), "left_on has", left.size());
  if (left_by) {
    check_span("left_by", *left_by);
    check_span("right_by", *right_by);
    check_size("left_by", left_by->size(), "left_on has", left.size());
    check_size("right_by", right_by->size(), "right_on has", right.size());
    if (groups < 0) throw invalid_argument("gsearch::asof_join: groups = " + std::to_string(groups) + " is negative");
  }
  const asof_rule<T> rule = rule_of(options);
  if (options.sort) {  // any order; NaN refused all the same (pandas' message)
    for (auto [keys, side] : {std::pair{left, "left"}, std::pair{right, "right"}})
      if (on_backend(exec, [&](auto h) { return backend::has_nan(h, keys.data(), keys.size(), false); }))
        throw invalid_argument(std::string("Merge keys contain null values on ") + side + " side");
  } else if (options.check_sorted) {
    check_keys(exec, left, "left");
    check_keys(exec, right, "right");
  }
  if (left_by) {
    check_codes(exec, *left_by, groups, "left_by");
    check_codes(exec, *right_by, groups, "right_by");
  }
  const int64_t n = left.size(), m = right.size();
  if (n == 0) return;
  on_backend(exec, [&](auto h) {
    // The join of sorted keys (with their codes when grouped) into dst.
    const auto join = [&](const T* lk, const int64_t* lc, const T* rk, const int64_t* rc, int64_t* dst) {
      backend::asof_join(h, lk, lc, n, rk, rc, m, left_by ? groups : 1, rule, dst);
    };
    const int64_t* lb = left_by ? left_by->data() : nullptr;
    const int64_t* rb = right_by ? right_by->data() : nullptr;
    if (!options.sort) {
      join(left.data(), lb, right.data(), rb, out.data());
      return;
    }
    // Both sides sorted stably, joined into the scratch, then the matches written for the left
    // rows in their original order, naming the right rows by theirs.
    using sorted_then = std::function<void(const T*, const int64_t*, const int64_t*, int64_t*)>;
    const sorted_then with_left = [&](const T* lk, const int64_t* lc, const int64_t* left_perm, int64_t* matched) {
      const sorted_then with_right = [&](const T* rk, const int64_t* rc, const int64_t* right_perm, int64_t*) {
        join(lk, lc, rk, rc, matched);
        backend::asof_unsort(h, matched, left_perm, right_perm, n, out.data());
      };
      backend::asof_sort(h, right.data(), rb, m, with_right);
    };
    backend::asof_sort(h, left.data(), lb, n, with_left);
  });
}

}  // namespace

// The exported overloads: one line each, per key type and execution tag.
#define GSEARCH_DEFINE_ASOF(EXEC, T)                                                                     \
  void asof_join(const EXEC& exec, span<const T> left_on, span<const T> right_on, span<int64_t> right_index, \
                 const asof_options<T>& options) {                                                      \
    asof_impl<EXEC, T>(exec, left_on, right_on, nullptr, nullptr, 0, right_index, options);              \
  }                                                                                                     \
  void asof_join(const EXEC& exec, span<const T> left_on, span<const T> right_on, span<const int64_t> left_by, \
                 span<const int64_t> right_by, int64_t groups, span<int64_t> right_index,                  \
                 const asof_options<T>& options) {                                                      \
    asof_impl<EXEC, T>(exec, left_on, right_on, &left_by, &right_by, groups, right_index, options);      \
  }
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_ASOF, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_ASOF, cuda_t)
#undef GSEARCH_DEFINE_ASOF

}  // namespace gsearch
