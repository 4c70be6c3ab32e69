// The public batched-search API: argument checks shared by both backends, each function written
// once for either execution tag, then the backend call (src/on_backend.hpp).

#include "gsearch/search.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "on_backend.hpp"
#include "search/backend.hpp"
#include "cpu/tuning.hpp"  // cpu_sorter_in_place
#include "merge/backend.hpp"  // sorted_search: the search of sorted queries

namespace gsearch {
namespace {

template <class T, class Out>
void check_arguments(span<const T> keys, span<const T> queries, span<Out> out) {
  if (keys.size() < 0 || queries.size() < 0 || out.size() < 0)
    throw invalid_argument("gsearch::search: negative size");
  if (out.size() != queries.size())
    throw invalid_argument("gsearch::search: " + std::to_string(queries.size()) + " queries but " +
                           std::to_string(out.size()) + " output elements");
  if ((keys.size() > 0 && !keys.data()) || (queries.size() > 0 && !queries.data()) ||
      (out.size() > 0 && !out.data()))
    throw invalid_argument("gsearch::search: null data pointer with a non-zero size");
  if constexpr (sizeof(Out) < sizeof(int64_t)) {
    if (keys.size() > int64_t(std::numeric_limits<Out>::max()))
      throw invalid_argument("gsearch::search: " + std::to_string(keys.size()) +
                             " keys do not fit an int32 output; use int64");
  }
}

void check_options(const search_options& options) {
  if (options.max_temp_bytes < 0)
    throw invalid_argument("gsearch::search: search_options::max_temp_bytes must be >= 0, not " +
                           std::to_string(options.max_temp_bytes));
}

[[noreturn]] void throw_unsorted(const char* what = "gsearch::search: keys are not sorted") {
  throw invalid_argument(std::string(what) + " (NaN last, -0.0 == 0.0)");
}

// The row-batched search's shapes: rows x k keys, rows x m queries and outputs. Returns {k, m}.
template <class T, class Out>
std::pair<int64_t, int64_t> check_rows_arguments(int64_t rows, span<const T> keys,
                                                 span<const T> queries, span<Out> out) {
  if (rows < 0) throw invalid_argument("gsearch::search_rows: negative row count");
  if (keys.size() < 0 || queries.size() < 0 || out.size() < 0)
    throw invalid_argument("gsearch::search_rows: negative size");
  const auto sizes = [&] {
    return std::to_string(keys.size()) + " keys and " + std::to_string(queries.size()) +
           " queries";
  };
  if (rows == 0 && (keys.size() > 0 || queries.size() > 0))
    throw invalid_argument("gsearch::search_rows: 0 rows but " + sizes());
  if (rows > 0 && (keys.size() % rows != 0 || queries.size() % rows != 0))
    throw invalid_argument("gsearch::search_rows: " + sizes() + " do not split into " +
                           std::to_string(rows) + " equal rows");
  const int64_t k = rows > 0 ? keys.size() / rows : 0, m = rows > 0 ? queries.size() / rows : 0;
  check_arguments(span<const T>(keys.data(), k), queries, out);  // sizes, pointers, int32 range
  return {k, m};
}

// How a search of one key list runs (search_options::queries_sorted):
//   plain   the search of `algo`;
//   sorted  the search of sorted queries (Merge Path), queries_order::sorted: on the GPU only where
//           its tile splits fit max_temp_bytes (else plain, with auto_: `algo` was ignored); with
//           check_sorted the queries are checked either way;
//   detect  queries_order::detect where the backend says the sorted search pays (the GPU,
//           src/search/tuning.hpp's rule) and its temporary memory fits: the GPU checks the order and
//           runs one of the two searches, deciding on the device (search_detecting_order).
enum class route { plain, sorted, detect };

template <class Exec, class T>
route search_route(const Exec& exec, span<const T> keys, span<const T> queries, const search_options& options) {
  const queries_order order = options.queries_sorted;
  if (order == queries_order::any) return route::plain;
  const int key_bytes = int(sizeof(T));
  const auto [pays, fits] = on_backend(exec, [&](auto h) {
    if constexpr (on_cpu<decltype(h)>) {
      return std::pair{false, true};  // the CPU's sorted search allocates nothing
    } else {
      const int64_t need = backend::sorted_temp_bytes(key_bytes, keys.size(), queries.size()) +
                           (order == queries_order::detect ? backend::detect_word_bytes : 0);
      return std::pair{backend::sorted_search_pays(key_bytes, keys.size(), queries.size()),
                       need <= options.max_temp_bytes};
    }
  });
  if (order == queries_order::detect) return pays && fits ? route::detect : route::plain;
  if (options.check_sorted && !sorted_on(exec, queries))
    throw_unsorted("gsearch::search: queries_sorted, but the queries are not sorted");
  return fits ? route::sorted : route::plain;
}

template <class Exec, class T, class Out>
void search_impl(const Exec& exec, side s, span<const T> keys, span<const T> queries, span<Out> out,
                 const search_options& options) {
  check_arguments(keys, queries, out);
  check_options(options);
  if (options.check_sorted && !sorted_on(exec, keys)) throw_unsorted();
  const route r = search_route(exec, keys, queries, options);
  // Sorted queries that the cap keeps off the sorted search run auto_ (`algo` was ignored).
  const algorithm algo = options.queries_sorted == queries_order::sorted ? algorithm::auto_ : options.algo;
  on_backend(exec, [&](auto h) {
    if (r == route::sorted) return backend::sorted_search(h, s, keys.data(), keys.size(), queries.data(), queries.size(), out.data());
    if constexpr (!on_cpu<decltype(h)>) {
      if (r == route::detect)
        return backend::search_detecting_order(h, s, algo, keys.data(), keys.size(), queries.data(), queries.size(),
                                               out.data(), options.max_temp_bytes);
    }
    backend::search(h, s, algo, keys.data(), keys.size(), queries.data(), queries.size(), out.data(), options.max_temp_bytes);
  });
}

template <class T, class Out>
void check_equal_range_arguments(span<const T> keys, span<const T> queries, span<Out> lower, span<Out> upper) {
  check_arguments(keys, queries, lower);
  check_arguments(keys, queries, upper);
  if (lower.size() > 0 && lower.data() == upper.data())
    throw invalid_argument("gsearch::equal_range: lower and upper are the same array");
}

// equal_range: the two searches, after the checks of both outputs (nothing is written when
// either is wrong).
template <class Exec, class T, class Out>
void equal_range_impl(const Exec& exec, span<const T> keys, span<const T> queries, span<Out> lower,
                      span<Out> upper, const search_options& options) {
  check_equal_range_arguments(keys, queries, lower, upper);
  // (queries_order::detect: each search checks the order on the device; nothing waits.)
  const search_options& first = options;
  search_impl(exec, side::left, keys, queries, lower, first);
  search_options again = first;
  again.check_sorted = false;  // checked by the first search
  search_impl(exec, side::right, keys, queries, upper, again);
}

[[noreturn]] void throw_sorter_out_of_range(int64_t position, int64_t k) {
  throw invalid_argument("gsearch::search: Sorter index out of range: sorter[" + std::to_string(position) +
                         "] is not in [0, " + std::to_string(k) + ")");
}

// sorter= (numpy's): its size (numpy's words) and data.
void check_sorter(int64_t k, span<const int64_t> sorter) {
  if (sorter.size() != k)
    throw invalid_argument("gsearch::search: sorter.size must equal a.size (" + std::to_string(sorter.size()) +
                           " sorter indices for " + std::to_string(k) + " keys)");
  if (k > 0 && !sorter.data()) throw invalid_argument("gsearch::search: null data pointer with a non-zero size");
}

// sorter= (checked): the keys in sorter's order gathered by the backend (gather_keys: a copy in
// temporary memory, every index checked against [0, k)) and search(gathered keys, options) run on
// them, with what the copy leaves of max_temp_bytes. No queries: nothing gathered or checked but
// the size (numpy's answer), and search() runs on the keys as they are, unchecked (it reads none).
template <class Exec, class T, class F>
void with_sorted_keys(const Exec& exec, span<const T> keys, span<const int64_t> sorter, int64_t queries,
                      search_options options, F&& search) {
  const int64_t k = keys.size();
  if (queries == 0) {
    options.check_sorted = false;
    return search(keys, options);
  }
  const int64_t copy = k * int64_t(sizeof(T));
  if (copy > options.max_temp_bytes)
    throw invalid_argument("gsearch::search: a sorter gathers the keys into " + std::to_string(copy) +
                           " bytes of temporary memory, more than search_options::max_temp_bytes = " +
                           std::to_string(options.max_temp_bytes));
  options.max_temp_bytes -= copy;
  const std::function<void(const T*)> then = [&](const T* gathered) { search(span<const T>(gathered, k), options); };
  const int64_t bad = on_backend(exec, [&](auto h) { return backend::gather_keys(h, keys.data(), k, sorter.data(), then); });
  if (bad >= 0) throw_sorter_out_of_range(bad, k);
}

// sorter= with few queries in many keys on the CPU: searched through the sorter in place, as numpy
// does (src/cpu/tuning.hpp's cpu_sorter_in_place), unless the keys are to be checked (that reads
// them all) or another algorithm than the binary search is asked for. Only the sorter's positions
// the search reads are checked then, as numpy checks them. Its temporary memory is a copy of the
// results, written to `out` when no position was out of range. The GPU gathers: at its bandwidth
// the copy costs less than the searches' dependent reads.
bool sorter_in_place(int64_t k, int64_t q, int out_bytes, const search_options& o) {
  const bool binary = o.algo == algorithm::auto_ || o.algo == algorithm::binary;
  return q > 0 && q <= o.max_temp_bytes / out_bytes && !o.check_sorted && binary &&
         o.queries_sorted != queries_order::sorted && cpu_backend::cpu_sorter_in_place(k, q);
}

template <class Exec, class T, class Out>
void search_sorter_impl(const Exec& exec, side s, span<const T> keys, span<const int64_t> sorter,
                        span<const T> queries, span<Out> out, const search_options& options) {
  check_arguments(keys, queries, out);
  check_options(options);
  check_sorter(keys.size(), sorter);
  if constexpr (std::is_same_v<Exec, cpu_t>) {
    if (sorter_in_place(keys.size(), queries.size(), int(sizeof(Out)), options)) {
      const int64_t bad = cpu_backend::search_through_sorter(exec.threads, s, keys.data(), keys.size(), sorter.data(),
                                                             queries.data(), queries.size(), out.data());
      if (bad >= 0) throw_sorter_out_of_range(bad, keys.size());
      return;
    }
  }
  with_sorted_keys(exec, keys, sorter, queries.size(), options, [&](span<const T> sorted, const search_options& o) {
    if (o.check_sorted && !sorted_on(exec, sorted)) throw_unsorted("gsearch::search: keys[sorter] are not sorted");
    search_options rest = o;
    rest.check_sorted = false;  // (checked above, with the message that names the sorter)
    search_impl(exec, s, sorted, queries, out, rest);
  });
}

template <class Exec, class T, class Out>
void equal_range_sorter_impl(const Exec& exec, span<const T> keys, span<const int64_t> sorter,
                             span<const T> queries, span<Out> lower, span<Out> upper, const search_options& options) {
  check_equal_range_arguments(keys, queries, lower, upper);
  check_options(options);
  check_sorter(keys.size(), sorter);
  if constexpr (std::is_same_v<Exec, cpu_t>) {
    // (Two searches through the sorter, the first one's results kept until the second has found
    // no position out of range either: nothing is written on an error.)
    if (sorter_in_place(keys.size(), 2 * queries.size(), int(sizeof(Out)), options)) {
      std::vector<Out> first(static_cast<size_t>(queries.size()));
      for (const side s : {side::left, side::right}) {
        Out* to = s == side::left ? first.data() : upper.data();
        const int64_t bad = cpu_backend::search_through_sorter(exec.threads, s, keys.data(), keys.size(),
                                                               sorter.data(), queries.data(), queries.size(), to);
        if (bad >= 0) throw_sorter_out_of_range(bad, keys.size());
      }
      std::copy(first.begin(), first.end(), lower.data());
      return;
    }
  }
  with_sorted_keys(exec, keys, sorter, queries.size(), options, [&](span<const T> sorted, const search_options& o) {
    if (o.check_sorted && !sorted_on(exec, sorted)) throw_unsorted("gsearch::search: keys[sorter] are not sorted");
    search_options rest = o;
    rest.check_sorted = false;
    equal_range_impl(exec, sorted, queries, lower, upper, rest);
  });
}

template <class Exec, class T, class Out>
void search_rows_impl(const Exec& exec, side s, int64_t rows, span<const T> keys, span<const T> queries,
                      span<Out> out, const search_options& options) {
  const auto [k, m] = check_rows_arguments(rows, keys, queries, out);
  check_options(options);
  on_backend(exec, [&](auto h) {
    if (options.check_sorted && !backend::is_sorted_rows(h, keys.data(), rows, k))
      throw_unsorted("gsearch::search_rows: a row of keys is not sorted");
    backend::search_rows(h, s, options.algo, rows, keys.data(), k, queries.data(), m, out.data(),
                         options.max_temp_bytes);
  });
}

template <class Exec, class T>
bool is_sorted_rows_impl(const Exec& exec, int64_t rows, span<const T> keys) {
  if (rows <= 0) return true;
  return on_backend(exec, [&](auto h) { return backend::is_sorted_rows(h, keys.data(), rows, keys.size() / rows); });
}

}  // namespace

// (queries < 0: as many as the keys.)
#define GSEARCH_DEFINE_QUESTIONS(EXEC)                                                                        \
  algorithm resolve_algorithm(const EXEC& exec, algorithm requested, int key_bytes, int64_t k, int64_t queries, \
                              int64_t max_temp_bytes, bool float_keys) {                                      \
    return on_backend(exec, [&](auto h) {                                                                     \
      return backend::resolve(h, requested, key_bytes, k, queries < 0 ? k : queries, max_temp_bytes, float_keys); \
    });                                                                                                       \
  }                                                                                                           \
  int64_t search_temp_bytes(const EXEC& exec, algorithm algo, int key_bytes, int64_t k, int64_t queries) {    \
    return on_backend(exec, [&](auto h) { return backend::temp_bytes(h, algo, key_bytes, k, queries < 0 ? k : queries); }); \
  }
GSEARCH_DEFINE_QUESTIONS(cpu_t)
GSEARCH_DEFINE_QUESTIONS(cuda_t)
#undef GSEARCH_DEFINE_QUESTIONS

// The exported overloads: one line each, per key type, output type and execution tag.
#define GSEARCH_DEFINE(EXEC, T, OUT)                                                               \
  void search(const EXEC& exec, side s, span<const T> keys, span<const T> queries, span<OUT> out, \
              const search_options& options) {                                                     \
    search_impl(exec, s, keys, queries, out, options);                                             \
  }                                                                                                \
  void equal_range(const EXEC& exec, span<const T> keys, span<const T> queries, span<OUT> lower,  \
                   span<OUT> upper, const search_options& options) {                               \
    equal_range_impl(exec, keys, queries, lower, upper, options);                                  \
  }                                                                                                \
  void search(const EXEC& exec, side s, span<const T> keys, span<const int64_t> sorter,            \
              span<const T> queries, span<OUT> out, const search_options& options) {               \
    search_sorter_impl(exec, s, keys, sorter, queries, out, options);                              \
  }                                                                                                \
  void equal_range(const EXEC& exec, span<const T> keys, span<const int64_t> sorter,               \
                   span<const T> queries, span<OUT> lower, span<OUT> upper,                        \
                   const search_options& options) {                                                \
    equal_range_sorter_impl(exec, keys, sorter, queries, lower, upper, options);                   \
  }                                                                                                \
  void search_rows(const EXEC& exec, side s, int64_t rows, span<const T> keys,                     \
                   span<const T> queries, span<OUT> out, const search_options& options) {          \
    search_rows_impl(exec, s, rows, keys, queries, out, options);                                  \
  }
#define GSEARCH_DEFINE_T(EXEC, T)                                                                  \
  GSEARCH_DEFINE(EXEC, T, int64_t)                                                                 \
  GSEARCH_DEFINE(EXEC, T, int32_t)                                                                 \
  bool is_sorted(const EXEC& exec, span<const T> keys) { return sorted_on(exec, keys); }              \
  bool is_sorted_rows(const EXEC& exec, int64_t rows, span<const T> keys) {                        \
    return is_sorted_rows_impl(exec, rows, keys);                                                  \
  }
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_T, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DEFINE_T, cuda_t)
#undef GSEARCH_DEFINE
#undef GSEARCH_DEFINE_T

}  // namespace gsearch
