// The CPU backend of torch.topk and torch.kthvalue over the last axis of a rows x cols array:
// one row gets every thread, several rows share them out; each row selects its threshold
// (cpu_select.hpp's select_values), then gathers the elements beyond it and the ties it needs.
// Short rows with a small k (core::short_row_list) offer their keys to a sorted list instead
// (core/topk_list.hpp, as the CUDA backend's thread a row): no select, no second pass, no sort.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/topk_list.hpp"
#include "selection/backend.hpp"
#include "selection/cpu_loops.hpp"
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

// --- partition of short rows: each row sorted, many rows at once -----------------------------

// Batcher's odd-even merge sort of 2^lg keys (2^lg <= short_row_cols) as compare-exchanges
// (a, b), a < b: 63 for 16 keys, 191 for 32, 543 for 64.
constexpr int short_row_lg = [] {
  int lg = 0;
  while ((int64_t(1) << lg) < short_row_cols) ++lg;
  return lg;
}();
const std::vector<std::pair<int, int>>& odd_even_network(int lg) {
  static const auto networks = [] {
    std::vector<std::vector<std::pair<int, int>>> all(size_t(short_row_lg) + 1);
    for (int g = 1; g <= short_row_lg; ++g) {
      const int n = 1 << g;
      for (int p = 1; p < n; p += p)
        for (int k = p; k >= 1; k /= 2)
          for (int j = k % p; j <= n - 1 - k; j += 2 * k)
            for (int i = 0; i <= std::min(k - 1, n - j - k - 1); ++i)
              if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) all[size_t(g)].push_back({i + j, i + j + k});
    }
    return all;
  }();
  return networks[size_t(lg)];
}

// A batch of short_row_batch rows held column by column (v[c][lane]: column c of row lane), so
// that a compare-exchange of two columns is a min and a max over the lanes, which the compiler
// makes vector instructions (AVX-512, AVX2 or SSE: the clones of cpu_loops.hpp).
constexpr int short_row_batch = 16;
// (A GCC vector of the 16 lanes: a loop over the lanes went a lane at a time, as the two columns
// might have been one.)
typedef uint32_t lanes_u32 __attribute__((vector_size(short_row_batch * 4)));
typedef uint64_t lanes_u64 __attribute__((vector_size(short_row_batch * 8)));
template <class U>
GSEARCH_SELECT_CLONES void sort_columns(U (*v)[short_row_batch], const std::pair<int, int>* net, int comparators) {
  using lanes = std::conditional_t<sizeof(U) == 4, lanes_u32, lanes_u64>;
  for (int i = 0; i < comparators; ++i) {
    U* a = v[net[i].first];
    U* b = v[net[i].second];
    lanes x, y;
    std::memcpy(&x, a, sizeof(lanes));
    std::memcpy(&y, b, sizeof(lanes));
    const lanes lo = x < y ? x : y, hi = x < y ? y : x;
    std::memcpy(a, &lo, sizeof(lanes));
    std::memcpy(b, &hi, sizeof(lanes));
  }
}

// The rows [first, last) through the network, each element's word made by key(row, column) and
// written back by put(row, column, word); padding ~W(0).
template <class W, class Key, class Put>
void sort_short_rows(int64_t first, int64_t last, int64_t cols, Key key, Put put) {
  int lg = 1;
  while ((int64_t(1) << lg) < cols) ++lg;
  const int p = 1 << lg;
  const auto& net = odd_even_network(lg);
  alignas(64) W v[1 << short_row_lg][short_row_batch];
  for (int64_t r0 = first; r0 < last; r0 += short_row_batch) {
    const int rows = int(std::min<int64_t>(short_row_batch, last - r0));
    for (int c = 0; c < p; ++c)
      for (int lane = 0; lane < short_row_batch; ++lane)
        v[c][lane] = c < cols && lane < rows ? key(r0 + lane, c) : W(~W(0));
    sort_columns(v, net.data(), int(net.size()));
    for (int lane = 0; lane < rows; ++lane)
      for (int c = 0; c < cols; ++c) put(r0 + lane, c, v[c][lane]);
  }
}

// numpy.partition / argpartition of rows of 2 .. short_row_cols elements: every row sorted (a
// sorted row is partitioned around every kth), short_row_batch rows at a time by the network of
// the next power of two, on the keys' one-to-one order bits (core::ordered_bits: NaN last, every
// payload and -0.0 kept), the padding the largest bits. With indices, 4-byte keys and their
// columns are one 64-bit word (the bits above, the column below, so that the padding, column
// 0xffff..., stays after every real key equal to it); 8-byte keys with indices go through std::sort of
// (key, column) pairs. Where the 1-D partition of each row took ~250 ns a row of 16 (nth_element
// and its set-up), numpy's ~35 (docs/perf-notes.md).
template <class T>
void partition_short_rows(const T* data, int64_t first, int64_t last, int64_t cols, T* out, int64_t* out_indices) {
  using U = core::radix_bits_t<T>;
  const auto bits = [&](int64_t r, int64_t c) { return core::ordered_bits(data[r * cols + c]); };
  if (!out_indices) {
    sort_short_rows<U>(first, last, cols, bits,
                       [&](int64_t r, int64_t c, U w) { out[r * cols + c] = core::from_ordered_bits<T>(w); });
  } else if constexpr (sizeof(T) == 4) {  // (8-byte keys with indices: short_rows_sorted is false)
    sort_short_rows<uint64_t>(
        first, last, cols, [&](int64_t r, int64_t c) { return uint64_t(bits(r, c)) << 32 | uint64_t(c); },
        [&](int64_t r, int64_t c, uint64_t w) {
          if (out) out[r * cols + c] = core::from_ordered_bits<T>(U(w >> 32));
          out_indices[r * cols + c] = int64_t(w & 0xffff);
        });
  }
}

}  // namespace

// torch.topk of one short row: its k outputs, sorted. Keys of up to 32 bits by sorted chunks
// (core::smallest_by_chunks: compare-and-swaps of 64-bit words, a compare and two conditional
// moves each here; 1.2-3.4x the list's speed, bench/results/cpu/issue41/topk_rows_cpu-chunks.md),
// wider ones by core::smallest_list.
template <int L, class T>
void topk_short_row(const T* row, int64_t cols, int64_t k, bool largest, T* values, int64_t* indices) {
  using K = core::radix_bits_t<T>;
  const K flip = largest ? ~K(0) : K(0);
  const auto key = [&](int c) { return K(core::radix_bits(row[c]) ^ flip); };
  uint32_t at[L];
  if constexpr (sizeof(K) <= 4) {
    core::smallest_by_chunks<L>(key, int(cols), at);
  } else {
    core::smallest_list<L, K> list;
    list.clear();
    list.offer_row(key, int(cols));
    for (int j = 0; j < L; ++j) at[j] = list.at[j];
  }
  for (int64_t j = 0; j < k; ++j) {
    values[j] = row[at[j]];
    indices[j] = int64_t(at[j]);
  }
}

template <class T>
void topk(int threads, const T* data, int64_t rows, int64_t cols, int64_t k, bool largest, bool sorted, T* values,
          int64_t* indices) {
  if (const int list = core::short_row_list(cols, k)) {  // sorted as found
    core::with_short_row_list(list, [&](auto length) {
      for_rows(threads, rows, cols, [&](int, int64_t r) {
        topk_short_row<length()>(data + r * cols, cols, k, largest, values + r * k, indices + r * k);
      });
    });
    return;
  }
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
  if (m > 0 && rows >= short_row_batch && short_rows_sorted(cols, sizeof(T), out_indices != nullptr)) {
    parallel_for(rows, thread_count(threads, rows * cols, min_elements_per_thread), short_row_batch,
                 [&](int64_t first, int64_t last) { partition_short_rows(data, first, last, cols, out, out_indices); });
    return;
  }
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
