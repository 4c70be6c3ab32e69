// gsearch._core's search of sorted keys (gsearch/search.hpp): search (gsearch::search and
// search_rows), its fast paths for numpy arrays (search_fast) and torch tensors
// (search_pointers), equal_range, is_sorted, and keys_beyond_shared (the policy question of
// gsearch.searchsorted's sorted_queries=None).

#include <nanobind/stl/optional.h>

#include <initializer_list>
#include <optional>
#include <string>

#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

/// What search and equal_range checked: where they run, the library's options, int64 or int32
/// outputs.
struct search_call {
  placement at;
  gsearch::search_options options;
  bool out64;
};

/// The checks of search and equal_range, in the order of their messages: algo, the devices of
/// `where`, the dtypes, contiguity, sizes, options, the outputs' dtype, the key dtype.
search_call check_search(const std::string& fn, int algo, std::initializer_list<located> where,
                         const in_array& keys, const in_array& queries,
                         std::initializer_list<const out_array*> outs, bool check_sorted, int64_t rows,
                         int queries_order, std::optional<int64_t> max_temp_bytes) {
  if (algo < 0 || algo > int(gsearch::algorithm::merge)) value_error(fn + ": algo out of range");
  const placement at = place(fn, where);
  if (keys.dtype() != queries.dtype())
    type_error(fn + ": keys are " + dtype_name(keys.dtype()) + " but queries are " +
               dtype_name(queries.dtype()));
  bool contiguous = is_c_contiguous(keys) && is_c_contiguous(queries);
  for (const out_array* out : outs) contiguous = contiguous && is_c_contiguous(*out);
  if (!contiguous) value_error(fn + ": arrays must be C-contiguous");
  const int64_t n = int64_t(queries.size());
  for (const out_array* out : outs)
    if (int64_t(out->size()) != n)
      value_error(fn + ": " + std::to_string(n) + " queries but " + std::to_string(out->size()) +
                  " output elements");

  if (queries_order < 0 || queries_order > gsearch::queries_order::detect)
    value_error(fn + ": queries_sorted out of range (a value of QUERIES_ORDERS)");
  const auto order = gsearch::queries_order::value_t(queries_order);
  if (order == gsearch::queries_order::sorted && rows >= 0)
    value_error(fn + ": queries_sorted applies to one sorted key list (rows < 0)");
  gsearch::search_options options{gsearch::algorithm(algo), check_sorted};
  options.queries_sorted = rows < 0 ? order : gsearch::queries_order::any;
  if (max_temp_bytes) {
    if (*max_temp_bytes < 0)
      value_error("gsearch: max_temp_bytes must be None or >= 0, not " + std::to_string(*max_temp_bytes));
    options.max_temp_bytes = *max_temp_bytes;
  }
  const nb::dlpack::dtype od = (*outs.begin())->dtype();
  for (const out_array* out : outs) {
    if (out->dtype() != nb::dtype<int64_t>() && out->dtype() != nb::dtype<int32_t>())
      type_error(fn + ": out must be int64 or int32, not " + dtype_name(out->dtype()));
    if (out->dtype() != od)
      type_error(fn + ": the outputs are " + dtype_name(od) + " and " + dtype_name(out->dtype()) +
                 ": one dtype");
  }
  if (!key_dtype(keys.dtype()))
    type_error(fn + ": unsupported key dtype " + dtype_name(keys.dtype()) + " (" +
               std::string(gsearch::key_type_names) + ")");
  return {at, options, od == nb::dtype<int64_t>()};
}

/// The sorter of a search (numpy's sorter=), checked: on the keys' device, int64, C-contiguous,
/// 1-D keys (rows < 0); its size and its indices' range are the library's checks (numpy's words).
/// None: no sorter.
std::optional<gsearch::span<const int64_t>> sorter_span(const std::string& fn, const std::optional<in_array>& sorter,
                                                        const in_array& keys, int64_t rows) {
  if (!sorter) return std::nullopt;
  place(fn, {locate("keys", keys), locate("sorter", *sorter)});
  if (rows >= 0) value_error(fn + ": a sorter applies to one key list (rows < 0)");
  if (sorter->dtype() != nb::dtype<int64_t>())
    type_error(fn + ": sorter must be int64, not " + dtype_name(sorter->dtype()));
  if (!is_c_contiguous(*sorter)) value_error(fn + ": sorter must be C-contiguous");
  return in_span<int64_t>(*sorter);
}

/// Calls f.template operator()<T, Out>() with T the (checked) key type of `keys` and Out the
/// output type.
template <class F>
void visit_search_types(const std::string& fn, const in_array& keys, bool out64, F&& f) {
  visit_key_type(fn, keys.dtype(), [&]<class T>() {
    if (out64)
      f.template operator()<T, int64_t>();
    else
      f.template operator()<T, int32_t>();
  });
}

void search(const in_array& keys, const in_array& queries, out_array& out, int side_code, int algo,
            bool check_sorted, int64_t rows, uintptr_t stream, int queries_sorted,
            std::optional<int64_t> max_temp_bytes, const std::optional<in_array>& sorter) {
  const std::string fn = "gsearch._core.search";
  const gsearch::side s = side_of(fn, side_code);
  const search_call c =
      check_search(fn, algo, {locate("keys", keys), locate("queries", queries), locate("out", out)}, keys,
                   queries, {&out}, check_sorted, rows, queries_sorted, max_temp_bytes);
  const auto order = sorter_span(fn, sorter, keys, rows);
  const bool large = int64_t(queries.size()) >= small_search_queries || check_sorted ||
                     queries_sorted == gsearch::queries_order::sorted ||
                     (order && int64_t(keys.size()) >= small_scan_elements);  // (the gather: O(keys))
  visit_search_types(fn, keys, c.out64, [&]<class T, class Out>() {
    on_backend(c.at, stream, large, [&](const auto& exec) {
      if (order)
        gsearch::search(exec, s, in_span<T>(keys), *order, in_span<T>(queries), out_span<Out>(out), c.options);
      else if (rows < 0)
        gsearch::search(exec, s, in_span<T>(keys), in_span<T>(queries), out_span<Out>(out), c.options);
      else
        gsearch::search_rows(exec, s, rows, in_span<T>(keys), in_span<T>(queries), out_span<Out>(out),
                             c.options);
    });
  });
}

/// lower, upper = the searches of queries on the left and on the right (gsearch::equal_range;
/// of each row for rows >= 0), the checks (and the sortedness checks) once.
void py_equal_range(const in_array& keys, const in_array& queries, out_array& lower, out_array& upper,
                    int algo, bool check_sorted, int64_t rows, uintptr_t stream, int queries_sorted,
                    std::optional<int64_t> max_temp_bytes, const std::optional<in_array>& sorter) {
  const std::string fn = "gsearch._core.equal_range";
  const search_call c = check_search(
      fn, algo,
      {locate("keys", keys), locate("queries", queries), locate("lower", lower), locate("upper", upper)},
      keys, queries, {&lower, &upper}, check_sorted, rows, queries_sorted, max_temp_bytes);
  const auto order = sorter_span(fn, sorter, keys, rows);
  if (lower.size() > 0 && lower.data() == upper.data())
    value_error(fn + ": lower and upper are the same array");
  const bool large = int64_t(queries.size()) >= small_search_queries || check_sorted ||
                     queries_sorted == gsearch::queries_order::sorted ||
                     (order && int64_t(keys.size()) >= small_scan_elements);  // (the gather: O(keys))
  visit_search_types(fn, keys, c.out64, [&]<class T, class Out>() {
    on_backend(c.at, stream, large, [&](const auto& exec) {
      const auto k = in_span<T>(keys), q = in_span<T>(queries);
      const auto lo = out_span<Out>(lower), up = out_span<Out>(upper);
      if (order) {
        gsearch::equal_range(exec, k, *order, q, lo, up, c.options);
        return;
      }
      if (rows < 0) {
        gsearch::equal_range(exec, k, q, lo, up, c.options);
        return;
      }
      // Rows of keys: the library's equal_range searches one key list; its two searches, by row.
      gsearch::search_rows(exec, gsearch::side::left, rows, k, q, lo, c.options);
      gsearch::search_options again = c.options;
      again.check_sorted = false;  // checked by the first search
      gsearch::search_rows(exec, gsearch::side::right, rows, k, q, up, again);
    });
  });
}

/// The fast path of gsearch.searchsorted for numpy arrays of one supported dtype: returns false
/// (and does nothing) where the general path is needed (non-contiguous or non-CPU arrays,
/// different or unsupported dtypes); otherwise searches like search() with rows = -1.
bool search_fast(const in_array& keys, const in_array& queries, out_array& out, int side_code) {
  if (keys.device_type() != nb::device::cpu::value || queries.device_type() != nb::device::cpu::value ||
      out.device_type() != nb::device::cpu::value || keys.dtype() != queries.dtype() ||
      out.dtype() != nb::dtype<int64_t>() || out.size() != queries.size() || !is_c_contiguous(keys) ||
      !is_c_contiguous(queries) || !is_c_contiguous(out) || side_code < 0 ||
      side_code >= int(std::size(gsearch::all_sides)))
    return false;
  const std::optional<gsearch::dtype> t = key_dtype(keys.dtype());
  if (!t) return false;
  const int64_t n = int64_t(queries.size());
  with_gil_policy(false, n >= small_search_queries, [&] {
    gsearch::visit_key_type(*t, [&]<class T>() {
      gsearch::search(gsearch::cpu, gsearch::side(side_code), in_span<T>(keys), in_span<T>(queries),
                      out_span<int64_t>(out), gsearch::search_options{});
    });
  });
  return true;
}

/// The search of gsearch.searchsorted's fast path for torch tensors (_search.py): 1-D keys and
/// queries of one dtype (`key_type`, an index into KEY_DTYPES) and an int64 (out64) or int32
/// output of as many elements, all contiguous on one device (`device`: a CUDA ordinal, or -1 for
/// the CPU), which the caller checked, given as data pointers and element counts. It spares the
/// three DLPack imports of search(), most of the call's host time (docs/perf-notes.md, "The
/// Python path's per-call time"); the library still checks what it checks for every caller.
void search_pointers(uintptr_t keys, int64_t k, uintptr_t queries, int64_t n, uintptr_t out, bool out64,
                     int key_type, int device, int side_code, int algo, uintptr_t stream, int queries_sorted) {
  const std::string fn = "gsearch._core.search_pointers";
  const gsearch::side s = side_of(fn, side_code);
  if (algo < 0 || algo > int(gsearch::algorithm::merge)) value_error(fn + ": algo out of range");
  const placement at = pointer_placement(fn, key_type, device);
  if (queries_sorted < 0 || queries_sorted > gsearch::queries_order::detect)
    value_error(fn + ": queries_sorted out of range (a value of QUERIES_ORDERS)");
  if (k < 0 || n < 0) value_error(fn + ": negative sizes");
  gsearch::search_options options{gsearch::algorithm(algo), false};
  options.queries_sorted = gsearch::queries_order::value_t(queries_sorted);
  const bool large = n >= small_search_queries || options.queries_sorted == gsearch::queries_order::sorted;
  gsearch::visit_key_type(gsearch::all_dtypes[key_type], [&]<class T>() {
    const auto kv = at_address<const T>(keys, k), qv = at_address<const T>(queries, n);
    on_backend(at, stream, large, [&](const auto& exec) {
      if (out64)
        gsearch::search(exec, s, kv, qv, at_address<int64_t>(out, n), options);
      else
        gsearch::search(exec, s, kv, qv, at_address<int32_t>(out, n), options);
    });
  });
}

bool py_is_sorted(const in_array& a, uintptr_t stream) {
  const std::string fn = "gsearch._core.is_sorted";
  const placement at = place(fn, {locate("a", a)});
  if (!is_c_contiguous(a)) value_error(fn + ": a must be C-contiguous");
  bool sorted = true;
  visit_key_type(fn, a.dtype(), [&]<class T>() {
    on_backend(at, stream, int64_t(a.size()) >= small_scan_elements,
               [&](const auto& exec) { sorted = gsearch::is_sorted(exec, in_span<T>(a)); });
  });
  return sorted;
}

/// True when the keys of a search of k keys of key_bytes bytes are too large for shared memory
/// on the current CUDA device: auto_ picks none of the PBS variants (it picks PBS-CL while the
/// keys fit, beyond them the global-memory binary search or, for enough queries, the static
/// index); false on the CPU.
bool py_keys_beyond_shared(bool on_cuda, int key_bytes, int64_t k) {  // (the tests' probe)
  if (!on_cuda) return false;
  const auto a = gsearch::resolve_algorithm(gsearch::cuda, gsearch::algorithm::auto_, key_bytes, k);
  return a != gsearch::algorithm::pbs && a != gsearch::algorithm::pbs_cf && a != gsearch::algorithm::pbs_cl;
}

}  // namespace

void bind_search(nb::module_& m) {
  m.def("search", &search, "keys"_a, "queries"_a, "out"_a, "side"_a, "algo"_a = 0, "check_sorted"_a = false,
        "rows"_a = -1, "stream"_a = 0, "queries_sorted"_a = 0, "max_temp_bytes"_a = nb::none(),
        "sorter"_a = nb::none(),
        "Batched search: out[j] = the search of queries[j] in keys (side: a value of SIDES, 0 =\n"
        "left, 1 = right, 2 = predecessor). keys and queries: C-contiguous arrays of one dtype\n"
        "(a value of KEY_DTYPES); out: C-contiguous int64 or int32 with queries.size\n"
        "elements. All three on the CPU (the GIL is released for large calls) or on one CUDA\n"
        "device (the call runs on that device, enqueued on `stream`, a cudaStream_t as an int;\n"
        "0 = the legacy default stream). rows < 0: one sorted key list (gsearch::search);\n"
        "rows >= 0: `rows` rows of keys and queries, row r's queries searching row r's keys\n"
        "(gsearch::search_rows). algo: a value of ALGORITHMS. queries_sorted (a value of\n"
        "QUERIES_ORDERS; rows < 0 only): 'sorted': the queries are sorted too, searched by Merge\n"
        "Path in O(keys + queries), check_sorted then checking them as well; 'detect': the library\n"
        "checks them where that pays (search_options::queries_sorted). max_temp_bytes: None (no cap) or the most temporary memory\n"
        "the search may take (search_options::max_temp_bytes). sorter: None, or C-contiguous int64\n"
        "indices on the keys' device (rows < 0): the keys are searched in sorter's order\n"
        "(numpy's sorter=; gsearch::search's overload: a gathered copy, every index checked,\n"
        "which waits on CUDA). Raises ValueError (bad arguments, unsorted keys with check_sorted,\n"
        "a sorter of the wrong size or out of range), TypeError (dtypes), MemoryError,\n"
        "RuntimeError (CUDA errors, named).");
  m.def("search_pointers", &search_pointers, "keys"_a, "k"_a, "queries"_a, "n"_a, "out"_a, "out64"_a, "key_type"_a,
        "device"_a, "side"_a, "algo"_a, "stream"_a, "queries_sorted"_a,
        "search() of one sorted key list (rows < 0) given as data pointers and element counts, for\n"
        "callers that checked the arrays themselves (gsearch.searchsorted's torch fast path):\n"
        "key_type indexes KEY_DTYPES, out64 picks int64 over int32 results, device is a CUDA\n"
        "ordinal or -1 for the CPU. Skips the DLPack import of the arrays.");
  m.def("equal_range", &py_equal_range, "keys"_a, "queries"_a, "lower"_a, "upper"_a, "algo"_a = 0,
        "check_sorted"_a = false, "rows"_a = -1, "stream"_a = 0, "queries_sorted"_a = 0,
        "max_temp_bytes"_a = nb::none(), "sorter"_a = nb::none(),
        "lower[j], upper[j] = the searches of queries[j] on the left and on the right\n"
        "(gsearch::equal_range: keys[lower[j]:upper[j]] are the keys equal to it), in one call;\n"
        "rows >= 0: of each row (two gsearch::search_rows). Arguments as in search(), lower and\n"
        "upper two distinct arrays of one dtype, sorter as in search() (one gather for both); the\n"
        "checks of check_sorted run once.");
  m.def("rank_outside",
        [](int side_code, int64_t k, bool above) {
          return gsearch::rank_outside(side_of("gsearch._core.rank_outside", side_code), k, above);
        },
        "side"_a, "keys"_a, "above"_a,
        "The answer of a search on `side` (a gsearch side; see SIDES) of `keys` keys for a query\n"
        "below every key (above = False) or above every key: 0 or keys, minus 1 for the\n"
        "predecessor (gsearch::rank_outside).");
  m.def("search_fast", &search_fast, "keys"_a, "queries"_a, "out"_a, "side"_a,
        "search() for CPU arrays of one supported dtype and an int64 out, rows = -1, default\n"
        "options; returns False (doing nothing) where that does not apply (non-contiguous,\n"
        "non-CPU, mixed or unsupported dtypes), for the caller to take the general path.");
  m.def("is_sorted", &py_is_sorted, "a"_a, "stream"_a = 0,
        "True when the C-contiguous array a (taken flat) is sorted in gsearch's order (NaN\n"
        "last, -0.0 == 0.0). Waits on CUDA.");
  m.def("keys_beyond_shared", &py_keys_beyond_shared, "on_cuda"_a, "key_bytes"_a, "keys"_a,
        "True when `keys` keys of key_bytes bytes do not fit in shared memory on the current CUDA\n"
        "device (a search runs from global memory: the binary search or the static index, not\n"
        "a PBS variant); always False on the CPU.");
}

}  // namespace gsearch_python
