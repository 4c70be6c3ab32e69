// The CPU backend: loops over the per-lane algorithms of core/pbs.hpp on all cores.

#include "search/backend.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gsearch/core/error.hpp"
#include "gsearch/core/padding.hpp"
#include "gsearch/core/pary.hpp"
#include "gsearch/core/pbs.hpp"
#include "gsearch/core/query_buckets.hpp"
#include "cpu/parallel.hpp"
#include "search/cpu_partitioned.hpp"
#include "static_index/backend.hpp"
#include "cpu/tuning.hpp"

namespace gsearch::cpu_backend {
using namespace search_tuning;  // min_queries_per_thread; lockstep, cpu_index_rules: tuning.hpp
namespace {

// The padded accessor reaches at most ceil(log2 k) + 1 keys past either end (PBS), so the 32
// sentinels cover k < 2^31; larger key lists use the bounded accessor, which needs no copy.
constexpr int64_t max_padded_keys = int64_t{1} << 30;

template <algorithm A, bool Strict, class T, class Out, class Accessor>
void run(int threads, const Accessor& acc, int64_t k, const T* queries, int64_t n, Out* out,
         int64_t offset, bool may_hold_nan = true) {
  // The rank of a NaN query: the keys before NaN in the library's order (all but the NaN keys for
  // side left, all of them for right). (Not asked where no query is NaN: the search through a
  // sorter reads only the positions its queries' searches read, as numpy's does.)
  [[maybe_unused]] int64_t nan_rank = k;
  if constexpr (std::is_floating_point_v<T>)
    if (Strict && may_hold_nan)
      nan_rank = core::search_rank<A>(acc, k, before<Strict, T>{std::numeric_limits<T>::quiet_NaN()}, 0);
  parallel_for(n, thread_count(threads, n, min_queries_per_thread), warp_width,
               [&](int64_t begin, int64_t end) {
                 int64_t j = begin;
                 if constexpr (A == algorithm::binary) {
                   using pred = std::conditional_t<std::is_floating_point_v<T>, ieee_before<Strict, T>,
                                                   before<Strict, T>>;
                   for (; j + lockstep <= end; j += lockstep) {
                     pred preds[lockstep];
                     int64_t rank[lockstep];
                     for (int i = 0; i < lockstep; ++i) preds[i].q = queries[j + i];
                     core::search_ranks<A, lockstep>(acc, k, preds, 0, rank);
                     for (int i = 0; i < lockstep; ++i) {
                       if constexpr (std::is_floating_point_v<T>)
                         if (preds[i].q != preds[i].q) rank[i] = nan_rank;
                       out[j + i] = Out(rank[i] + offset);
                     }
                   }
                 }
                 for (; j < end; ++j) {
                   const int lane = int(j % warp_width);
                   const int64_t r = core::search_rank<A>(acc, k, before<Strict, T>{queries[j]}, lane);
                   out[j] = Out(r + offset);
                 }
               });
}

// The padded copy pbs / pbs_cf / pbs_cl search (0: none, the keys read in place).
int64_t padded_bytes(int key_bytes, int64_t k) {
  return k <= max_padded_keys ? (k + 2 * warp_width) * int64_t(key_bytes) : 0;
}

template <algorithm A, bool Strict, class T, class Out>
void run_algorithm(int threads, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                   int64_t offset, bool may_copy) {
  if constexpr (A == algorithm::binary) {
    // Reads only [0, k): no padding needed.
    run<A, Strict>(threads, core::padded_accessor<T>{keys}, k, queries, n, out, offset);
  } else if (k <= max_padded_keys && may_copy) {
    const std::vector<T> padded = core::pad_keys(keys, k);  // as the GPU stages them
    run<A, Strict>(threads, core::padded_accessor<T>{padded.data() + warp_width}, k, queries, n,
                   out, offset);
  } else {
    run<A, Strict>(threads, core::bounded_accessor<T, key_traits<T>>{keys, k}, k, queries, n, out,
                   offset);
  }
}

// P-ary search on the CPU: core::pary_rank with a warp's 32 simulated lanes, the GPU's
// arithmetic (a lane's probe and the narrowing from the vote), one query per step of the loop.
// For the API's symmetry and as the GPU's reference: it reads 32 keys a step where the binary
// search reads one, so it is never the CPU's fast path.
template <bool Strict, class T, class Out>
void pary_run(int threads, const T* keys, int64_t k, const T* queries, int64_t n, Out* out, int64_t offset) {
  const core::padded_accessor<T> acc{keys};  // pary_rank reads [0, k) only
  parallel_for(n, thread_count(threads, n, min_queries_per_thread / 32), 1, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j)
      out[j] = Out(core::pary_rank(acc, k, before<Strict, T>{queries[j]}, warp_width) + offset);
  });
}

template <bool Strict, class T, class Out>
void dispatch(int threads, algorithm algo, const T* keys, int64_t k, const T* queries, int64_t n,
              Out* out, int64_t offset, bool may_copy) {
  visit_algorithm(algo, [&]<algorithm A>() {
    run_algorithm<A, Strict>(threads, keys, k, queries, n, out, offset, may_copy);
  });
}

// Queries [begin, end) of the row-batched search, row by row: the binary search reads the row in
// place; the GPU's algorithms read a padded copy of it, made once per row a chunk touches.
// (may_copy false: the row read in place through the bounded accessor, which supplies the
// padding's sentinels.)
template <algorithm A, bool Strict, class T, class Out>
void search_rows_chunk(const T* keys, int64_t k, const T* queries, int64_t m, Out* out,
                       int64_t offset, int64_t begin, int64_t end, bool may_copy) {
  std::vector<T> padded;
  for (int64_t j = begin; j < end;) {
    const int64_t row = j / m, row_end = std::min(end, (row + 1) * m);
    const T* row_keys = keys + row * k;
    const auto search_row = [&](const auto& acc) {
      for (; j < row_end; ++j) {
        const int lane = int(j % warp_width);
        out[j] = Out(core::search_rank<A>(acc, k, before<Strict, T>{queries[j]}, lane) + offset);
      }
    };
    if constexpr (A != algorithm::binary) {
      if (!may_copy) {
        search_row(core::bounded_accessor<T, key_traits<T>>{row_keys, k});
        continue;
      }
      padded = core::pad_keys(row_keys, k);
      row_keys = padded.data() + warp_width;
    }
    search_row(core::padded_accessor<T>{row_keys});
  }
}

template <bool Strict, class T, class Out>
void search_rows_dispatch(int threads, algorithm algo, int64_t rows, const T* keys, int64_t k,
                          const T* queries, int64_t m, Out* out, int64_t offset, int64_t max_temp_bytes) {
  const int64_t n = rows * m;
  const int workers = thread_count(threads, n, min_queries_per_thread);
  // pbs / pbs_cf / pbs_cl: a padded copy of a row per worker, unless that is over the cap.
  const bool may_copy = padded_bytes(int(sizeof(T)), k) <= max_temp_bytes / workers;
  parallel_for(n, workers, warp_width,
               [&](int64_t begin, int64_t end) {
                 visit_algorithm(algo, [&]<algorithm A>() {
                   search_rows_chunk<A, Strict>(keys, k, queries, m, out, offset, begin, end, may_copy);
                 });
               });
}

// The index's layout: core::static_index_shape's slots, allocated as detail::placed_memory::host
// allocates (rounded to 64 bytes, or to 2 MB from 4 MB on).
template <class T>
int64_t index_layout_bytes(int64_t k) {
  const int64_t bytes = core::static_index_shape<core::cpu_node_keys<T>>(k).size() * int64_t(sizeof(T));
  const int64_t align = bytes >= (int64_t{4} << 20) ? (int64_t{2} << 20) : 64;
  return (bytes + align - 1) / align * align;
}

// algorithm::merge on the CPU, as on the GPU (merge_search.cu): each query's code
// (core/query_buckets.hpp) and bucket, the queries put in bucket order by a stable counting sort
// (queries outside the buckets' range answered at once among the outer keys), each searched among its bucket's keys
// (core::bucket_rank) and its answer written at its position. 2^12 buckets: a thread's counts
// (32 KB) stay in its L1, and a bucket of 2^24 keys is 4,096 keys (not tuned by a measurement).
constexpr int cpu_merge_bucket_bits = 12;

int64_t index_temp_bytes(int key_bytes, int64_t k) {
  return key_bytes <= 4 ? index_layout_bytes<uint32_t>(k) : index_layout_bytes<uint64_t>(k);
}

}  // namespace

// auto_ on the CPU: tuning.hpp's cpu_index_rules.
algorithm resolve(int, algorithm requested, int key_bytes, int64_t k, int64_t q, int64_t max_temp_bytes, bool) {
  if (requested != algorithm::auto_) return requested;
  for (const cpu_index_rule& r : cpu_index_rules)
    if (k >= r.min_keys)
      return q >= k / r.keys_per_query && index_temp_bytes(key_bytes, k) <= max_temp_bytes ? algorithm::index
                                                                                          : algorithm::binary;
  return algorithm::binary;
}

int64_t temp_bytes(int threads, algorithm algo, int key_bytes, int64_t k, int64_t q) {
  if (q <= 0) return 0;
  switch (resolve(threads, algo, key_bytes, k, q, std::numeric_limits<int64_t>::max(), false)) {
    case algorithm::index: return index_temp_bytes(key_bytes, k);
    case algorithm::partitioned: return partitioned_temp_bytes(threads, key_bytes, k, q);
    // merge_search's codes twice, the positions, the counts of 64 chunks at most and the starts.
    case algorithm::merge: return q * (2 * int64_t(key_bytes) + 8) + (int64_t(65) << cpu_merge_bucket_bits) * 8;
    case algorithm::pbs:
    case algorithm::pbs_cf:
    case algorithm::pbs_cl: return padded_bytes(key_bytes, k);
    default: return 0;
  }
}

// algorithm::merge on the CPU (cpu_merge_bucket_bits above).
template <class T, class Out>
void merge_search(int threads, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out) {
  using U = core::radix_bits_t<T>;
  visit_side(s, [&]<bool Strict>(int offset) {
    if (k == 0) return std::fill(out, out + n, Out(offset));
    const auto key = [keys](int64_t j) { return keys[j]; };
    const auto buckets = core::bucket_range_of<T>(key, k, cpu_merge_bucket_bits);
    const int64_t m = buckets.buckets();
    std::vector<int64_t> start(size_t(m + 1));
    parallel_for(m + 1, thread_count(threads, m + 1, 1024), 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) start[size_t(b)] = core::bucket_start(buckets, key, k, b);
    });
    const auto key_bits = [keys](int64_t j) { return core::radix_bits(keys[j]); };
    // The counting sort: chunk c of the queries counts its buckets (counts[c m + b]), then each
    // (bucket, chunk) learns where its queries go, bucket-major, then the chunks put them there.
    const int chunks = std::min(64, thread_count(threads, n, min_queries_per_thread));
    const int64_t chunk = (n + chunks - 1) / chunks;
    std::vector<int64_t> counts(size_t(chunks) * size_t(m));
    std::vector<U> codes(static_cast<size_t>(n));
    parallel_for(chunks, chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
          const U code = codes[size_t(i)] = buckets.encode(queries[i]);
          if (buckets.place(code) == core::bucket_place::inside) ++counts[size_t(c * m + buckets.bucket(code))];
          else  // (outside the range: searched among the outer keys at once)
            out[i] = Out(core::bucket_rank<Strict>(buckets, key_bits, k, start.data(), code, [&] { return queries[i]; }) +
                         offset);
        }
    });
    int64_t inside = 0;
    for (int64_t b = 0; b < m; ++b)
      for (int64_t c = 0; c < chunks; ++c) inside += std::exchange(counts[size_t(c * m + b)], inside);
    std::vector<U> sorted(static_cast<size_t>(inside));
    std::vector<int64_t> perm(static_cast<size_t>(inside));
    parallel_for(chunks, chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
          const U code = codes[size_t(i)];
          if (buckets.place(code) != core::bucket_place::inside) continue;
          const int64_t j = counts[size_t(c * m + buckets.bucket(code))]++;
          sorted[size_t(j)] = code;
          perm[size_t(j)] = i;
        }
    });
    parallel_for(inside, thread_count(threads, inside, min_queries_per_thread), 1, [&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j)
        out[perm[size_t(j)]] =
            Out(core::bucket_rank<Strict>(buckets, key_bits, k, start.data(), sorted[size_t(j)],
                                          [&] { return queries[perm[size_t(j)]]; }) +
                offset);
    });
  });
}

template <class T, class Out>
void search(int threads, side s, algorithm algo, const T* keys, int64_t k, const T* queries,
            int64_t n, Out* out, int64_t max_temp_bytes) {
  if (n <= 0) return;
  const algorithm requested = algo;
  algo = resolve(threads, algo, int(sizeof(T)), k, n, max_temp_bytes, std::is_floating_point_v<T>);
  if (requested != algorithm::auto_ &&
      (algo == algorithm::index || algo == algorithm::partitioned || algo == algorithm::merge)) {
    const int64_t need = temp_bytes(threads, algo, int(sizeof(T)), k, n);
    if (need > max_temp_bytes)
      throw invalid_argument("gsearch::search: algorithm::" + std::string(to_string(algo)) + " needs " +
                             std::to_string(need) + " bytes of temporary memory for " + std::to_string(k) +
                             " keys and " + std::to_string(n) +
                             " queries, more than search_options::max_temp_bytes = " +
                             std::to_string(max_temp_bytes));
  }
  if (algo == algorithm::index) return index_search_keys(threads, s, keys, k, queries, n, out);
  if (algo == algorithm::partitioned) return partitioned_search(threads, s, keys, k, queries, n, out);
  if (algo == algorithm::merge) return merge_search(threads, s, keys, k, queries, n, out);
  const bool may_copy = padded_bytes(int(sizeof(T)), k) <= max_temp_bytes;
  visit_side(s, [&]<bool Strict>(int offset) {
    if (algo == algorithm::pary) return pary_run<Strict>(threads, keys, k, queries, n, out, offset);
    dispatch<Strict>(threads, algo, keys, k, queries, n, out, offset, may_copy);
  });
}

template <class T, class Out>
void search_rows(int threads, side s, algorithm algo, int64_t rows, const T* keys, int64_t k,
                 const T* queries, int64_t m, Out* out, int64_t max_temp_bytes) {
  if (rows == 0 || m == 0) return;
  algo = resolve(threads, algo, int(sizeof(T)), k, m, max_temp_bytes, std::is_floating_point_v<T>);
  algo = rows_algorithm(algo);
  visit_side(s, [&]<bool Strict>(int offset) {
    search_rows_dispatch<Strict>(threads, algo, rows, keys, k, queries, m, out, offset, max_temp_bytes);
  });
}

// (Serial: one read, stopped at the first pair out of order; the public layer's checks are a
// small part of a search.)
template <class T>
bool is_sorted(int, const T* keys, int64_t k) {
  return std::is_sorted(keys, keys + k, [](T a, T b) { return key_less(a, b); });
}

template <class T>
bool is_sorted_rows(int threads, const T* keys, int64_t rows, int64_t k) {
  for (int64_t r = 0; r < rows; ++r)
    if (!is_sorted(threads, keys + r * k, k)) return false;
  return true;
}

namespace {
// least = min(least, i), from any thread: the least position of a sorter found out of range.
void lower_to(std::atomic<int64_t>& least, int64_t i) {
  for (int64_t seen = least.load(std::memory_order_relaxed); i < seen;)
    if (least.compare_exchange_weak(seen, i, std::memory_order_relaxed)) break;
}

// Reads the keys in the order of numpy's sorter, in place: element i is keys[sorter[i]]. An index
// out of [0, k) reads as keys[0] and is recorded (the least position read so), for the caller to
// raise on; the binary search reads only positions in [0, k).
template <class T>
struct through_sorter {
  const T* keys;
  const int64_t* sorter;
  int64_t k;
  std::atomic<int64_t>* first_bad;
  T operator()(int64_t i) const {
    const int64_t j = sorter[i];
    if (j >= 0 && j < k) [[likely]] return keys[j];
    lower_to(*first_bad, i);
    return keys[0];
  }
};
}  // namespace

// sorter= with few queries (the public layer's rule, cpu_sorter_in_place): the binary search
// through the sorter, about 2 ceil(log2(k + 1)) reads a query where the gather reads and writes all
// k keys. The results go to a copy (n is small) and to `out` only when no index was out of range.
template <class T, class Out>
int64_t search_through_sorter(int threads, side s, const T* keys, int64_t k, const int64_t* sorter, const T* queries,
                              int64_t n, Out* out) {
  std::atomic<int64_t> first_bad{k};
  std::vector<Out> results(static_cast<size_t>(n));
  const bool nan = std::any_of(queries, queries + n, [](T q) { return q != q; });
  visit_side(s, [&]<bool Strict>(int offset) {
    run<algorithm::binary, Strict>(threads, through_sorter<T>{keys, sorter, k, &first_bad}, k, queries, n,
                                   results.data(), offset, nan);
  });
  if (first_bad.load() < k) return first_bad.load();
  std::copy(results.begin(), results.end(), out);
  return -1;
}

// sorter=: the keys in sorter's order, gathered on all cores into a vector that lives while `then`
// runs; each chunk keeps the least position out of range it met (so the least of all is named).
template <class T>
int64_t gather_keys(int threads, const T* keys, int64_t k, const int64_t* sorter,
                    const std::function<void(const T*)>& then) {
  if (k == 0) {
    then(keys);
    return -1;
  }
  std::vector<T> gathered(static_cast<size_t>(k));
  std::atomic<int64_t> bad{k};
  parallel_for(k, thread_count(threads, k, min_queries_per_thread), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t j = sorter[i];
      if (j < 0 || j >= k) {
        lower_to(bad, i);
        return;
      }
      gathered[size_t(i)] = keys[j];
    }
  });
  if (bad.load() < k) return bad.load();
  then(gathered.data());
  return -1;
}

GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS(GSEARCH_SEARCH_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_ORDER_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_GATHER_OPS)
GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS(GSEARCH_SORTER_CPU_OPS)

}  // namespace gsearch::cpu_backend
