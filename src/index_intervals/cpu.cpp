// The CPU backend of index intervals: the improve step as a stable three-way partition through a
// scratch copy (a counting pass, a scatter pass, the copy back), on several threads for long
// pieces (per-chunk counts, their prefix sums, each chunk scattering its elements in order), and
// the sort of unsettled pieces (by core::ordered_bits, as on the GPU).

#include "index_intervals/backend.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "merge/backend.hpp"     // merge_sort
#include "cpu/parallel.hpp"

namespace gsearch::cpu_backend {
namespace {

using namespace intervals_tuning;

struct class_counts {
  int64_t less = 0, equal = 0;
};

template <class T>
class_counts count_classes(const T* data, int64_t begin, int64_t end, T s) {
  class_counts c;
  for (int64_t i = begin; i < end; ++i) {
    c.less += key_less(data[i], s);
    c.equal += !key_less(data[i], s) && !key_less(s, data[i]);
  }
  return c;
}

// Writes data[begin, end) to out at their places in the stable partition, `before` counting the
// members of [0, begin) before and equal to s, `total` those of the whole piece.
template <class T>
void scatter_classes(const T* data, int64_t begin, int64_t end, T s, class_counts before, class_counts total, T* out) {
  int64_t cursor[3] = {before.less, total.less + before.equal,
                       total.less + total.equal + (begin - before.less - before.equal)};
  for (int64_t i = begin; i < end; ++i) out[cursor[core::three_way_class(data[i], s)]++] = data[i];
}

template <class T>
class_counts partition_serial(T* data, int64_t n, T s, T* scratch) {
  const class_counts total = count_classes(data, 0, n, s);
  scatter_classes(data, 0, n, s, class_counts{}, total, scratch);
  std::memcpy(data, scratch, size_t(n) * sizeof(T));
  return total;
}

template <class T>
class_counts partition_parallel(T* data, int64_t n, T s, T* scratch, int threads) {
  const int64_t chunks = threads, chunk = (n + chunks - 1) / chunks;
  const auto bounds = [&](int64_t c) { return std::pair{c * chunk, std::min(n, (c + 1) * chunk)}; };
  std::vector<class_counts> before(size_t(chunks) + 1);
  parallel_for(chunks, threads, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      const auto [b, e] = bounds(c);
      before[size_t(c) + 1] = b < e ? count_classes(data, b, e, s) : class_counts{};
    }
  });
  for (size_t c = 1; c < before.size(); ++c) {  // exclusive prefix sums; the last is the total
    before[c].less += before[c - 1].less;
    before[c].equal += before[c - 1].equal;
  }
  const class_counts total = before.back();
  parallel_for(chunks, threads, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      const auto [b, e] = bounds(c);
      if (b < e) scatter_classes(data, b, e, s, before[size_t(c)], total, scratch);
    }
  });
  parallel_for(n, threads, 1, [&](int64_t b, int64_t e) { std::memcpy(data + b, scratch + b, size_t(e - b) * sizeof(T)); });
  return total;
}

template <class T>
bool key_less_fn(T a, T b) {
  return key_less(a, b);
}

// Sorts p[0, m) by core::ordered_bits (one to one, in the key order), as the GPU's radix sort
// does: the two backends then order equal keys (-0.0 and 0.0, NaNs) the same way, bit for bit.
template <class T>
void sort_by_ordered_bits(int threads, T* p, int64_t m, bool parallel) {
  using U = core::radix_bits_t<T>;
  std::vector<U> bits(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) bits[size_t(i)] = core::ordered_bits(p[i]);
  if (parallel)
    merge_sort(threads, bits.data(), m, static_cast<const int64_t*>(nullptr), bits.data(), static_cast<int64_t*>(nullptr));
  else
    std::sort(bits.begin(), bits.end());
  for (int64_t i = 0; i < m; ++i) p[i] = core::from_ordered_bits<T>(bits[size_t(i)]);
}

}  // namespace

template <class T>
core::split_counts<T> intervals_improve(int threads, T* data, int64_t n, const T* splitter) {
  const T s = splitter ? *splitter : core::choose_splitter([&](int64_t i) { return data[i]; }, n);
  const std::unique_ptr<T[]> scratch(new T[size_t(n)]);
  const int t = thread_count(threads, n, min_partition_per_thread);
  const class_counts c = t <= 1 ? partition_serial(data, n, s, scratch.get())
                                : partition_parallel(data, n, s, scratch.get(), t);
  return {s, c.less, c.equal};
}

template <class T>
void intervals_sort(int threads, T* data, int64_t, const index_interval* pieces, int64_t count) {
  std::vector<index_interval> small;
  for (int64_t i = 0; i < count; ++i) {
    const index_interval& p = pieces[i];
    if (p.settled) continue;
    if (p.size() >= parallel_sort_piece)
      sort_by_ordered_bits(threads, data + p.lo, p.size(), true);
    else
      small.push_back(p);
  }
  int64_t elements = 0;
  for (const index_interval& p : small) elements += p.size();
  const int t = thread_count(threads, elements, parallel_sort_piece);
  parallel_for(int64_t(small.size()), t, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sort_by_ordered_bits(1, data + small[size_t(i)].lo, small[size_t(i)].size(), false);
  });
}

template <class T>
T intervals_read(int, const T* data, int64_t position) {
  return data[position];
}

template <class T>
int64_t intervals_lower_bound(int, const T* data, int64_t lo, int64_t hi, T v) {
  return std::lower_bound(data + lo, data + hi, v, key_less_fn<T>) - data;
}

template <class T>
void intervals_copy(int threads, T* dst, const T* src, int64_t n) {
  const int t = thread_count(threads, n, min_partition_per_thread);
  parallel_for(n, t, 1, [&](int64_t b, int64_t e) { std::memcpy(dst + b, src + b, size_t(e - b) * sizeof(T)); });
}

template <class T>
void intervals_to_host(int threads, T* host, const T* data, int64_t n) {
  intervals_copy(threads, host, data, n);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_INDEX_INTERVALS_OPS)

}  // namespace gsearch::cpu_backend
