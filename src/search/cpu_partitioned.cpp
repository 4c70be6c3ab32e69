// The CPU backend of the partitioned search (algorithm::partitioned, core/partition.hpp): the
// queries of a window are grouped by bucket of keys (each thread counts its part's buckets, a
// prefix over (bucket, part) places every part's queries, each thread scatters its part: stable),
// then each thread searches a contiguous run of the grouped queries bucket by bucket, so that a
// bucket's keys, a few hundred KB, stay in its cache while all its queries are answered.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gsearch/core/error.hpp"
#include "gsearch/core/partition.hpp"
#include "gsearch/core/pbs.hpp"
#include "cpu/parallel.hpp"
#include "search/cpu_partitioned.hpp"
#include "cpu/tuning.hpp"

namespace gsearch::cpu_backend {
using namespace partitioned_tuning;  // min_queries_per_part; lockstep: tuning.hpp
namespace {

template <bool Strict, class T, class Out>
void partitioned(int threads, const T* keys, int64_t k, const T* queries, int64_t n, Out* out, int64_t offset,
                 const core::partition_config& cfg) {
  const core::partition_shape shape(k, cfg.chunk_bytes / int64_t(sizeof(T)), cfg.max_buckets);
  const int64_t m = shape.splitters(), buckets = shape.buckets;
  std::vector<T> splitters(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) splitters[size_t(j)] = keys[shape.splitter_key(j)];
  const core::padded_accessor<T> split{splitters.data()};

  const int64_t window = std::min(n, cfg.window);
  const int parts = thread_count(threads, window, min_queries_per_part);
  std::vector<uint32_t> bucket_of(static_cast<size_t>(window));
  std::vector<T> grouped(static_cast<size_t>(window));
  std::vector<int64_t> position(static_cast<size_t>(window));
  // place[p * buckets + b]: part p's next slot in bucket b; ends[b]: bucket b's end.
  std::vector<int64_t> place(size_t(parts) * size_t(buckets)), ends(static_cast<size_t>(buckets));

  for (int64_t w0 = 0; w0 < n; w0 += window) {
    const int64_t wn = std::min(window, n - w0);
    const T* q = queries + w0;
    const int64_t part = (wn + parts - 1) / parts;
    auto each_part = [&](auto body) {
      parallel_for(parts, parts, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) body(p, std::min(wn, p * part), std::min(wn, (p + 1) * part));
      });
    };
    // 1. Each part's buckets, and how many queries of each.
    each_part([&](int64_t p, int64_t begin, int64_t end) {
      int64_t* count = place.data() + p * buckets;
      std::fill(count, count + buckets, 0);
      int64_t j = begin;
      for (; j + lockstep <= end; j += lockstep) {
        before<Strict, T> preds[lockstep];
        int64_t b[lockstep];
        for (int i = 0; i < lockstep; ++i) preds[i].q = q[j + i];
        core::bucket_n(split, m, preds, b);
        for (int i = 0; i < lockstep; ++i) {
          bucket_of[size_t(j + i)] = uint32_t(b[i]);
          ++count[b[i]];
        }
      }
      for (; j < end; ++j) {
        const before<Strict, T> pred[1] = {{q[j]}};
        int64_t b[1];
        core::bucket_n(split, m, pred, b);
        bucket_of[size_t(j)] = uint32_t(b[0]);
        ++count[b[0]];
      }
    });
    // 2. Where each part's queries of each bucket go: bucket-major, then part.
    int64_t slot = 0;
    for (int64_t b = 0; b < buckets; ++b) {
      for (int64_t p = 0; p < parts; ++p) {
        const int64_t c = place[size_t(p * buckets + b)];
        place[size_t(p * buckets + b)] = slot;
        slot += c;
      }
      ends[size_t(b)] = slot;
    }
    // 3. The scatter, in query order within each part (so the grouping is stable).
    each_part([&](int64_t p, int64_t begin, int64_t end) {
      int64_t* next = place.data() + p * buckets;
      for (int64_t j = begin; j < end; ++j) {
        const int64_t s = next[bucket_of[size_t(j)]]++;
        grouped[size_t(s)] = q[j];
        position[size_t(s)] = j;
      }
    });
    // 4. Each part searches its slots of the grouped queries, bucket by bucket.
    Out* o = out + w0;
    each_part([&](int64_t, int64_t begin, int64_t end) {
      int64_t b = std::upper_bound(ends.begin(), ends.end(), begin) - ends.begin();
      for (int64_t s = begin; s < end; ++b) {
        const int64_t hi = std::min(end, ends[size_t(b)]);
        const core::padded_accessor<T> acc{keys + shape.begin(b)};  // binary reads [0, size) only
        const int64_t size = shape.size(b), first = shape.begin(b) + offset;
        for (; s + lockstep <= hi; s += lockstep) {
          before<Strict, T> preds[lockstep];
          int64_t rank[lockstep];
          for (int i = 0; i < lockstep; ++i) preds[i].q = grouped[size_t(s + i)];
          core::search_ranks<algorithm::binary, lockstep>(acc, size, preds, 0, rank);
          for (int i = 0; i < lockstep; ++i) o[position[size_t(s + i)]] = Out(first + rank[i]);
        }
        for (; s < hi; ++s)
          o[position[size_t(s)]] =
              Out(first + core::search_rank<algorithm::binary>(acc, size, before<Strict, T>{grouped[size_t(s)]}, 0));
      }
    });
  }
}

}  // namespace

int64_t partitioned_temp_bytes(int threads, int key_bytes, int64_t k, int64_t n, const core::partition_config& cfg) {
  if (n <= 0 || cfg.window < 1 || cfg.max_buckets < 1) return 0;
  // What partitioned() allocates: splitters; bucket_of, grouped and position per query of a
  // window; place per part and bucket, ends per bucket.
  const core::partition_shape shape(k, cfg.chunk_bytes / key_bytes, cfg.max_buckets);
  const int64_t window = std::min(n, cfg.window);
  const int parts = thread_count(threads, window, min_queries_per_part);
  return shape.splitters() * key_bytes + window * (int64_t(sizeof(uint32_t)) + key_bytes + int64_t(sizeof(int64_t))) +
         (int64_t(parts) + 1) * shape.buckets * int64_t(sizeof(int64_t));
}

template <class T, class Out>
void partitioned_search(int threads, side s, const T* keys, int64_t k, const T* queries, int64_t n, Out* out,
                        const core::partition_config& cfg) {
  if (n <= 0) return;
  if (cfg.window < 1 || cfg.max_buckets < 1 || cfg.max_buckets > (int64_t{1} << 32))
    throw invalid_argument("partition_config: window and max_buckets must be positive (max_buckets at most 2^32)");
  visit_side(s, [&]<bool Strict>(int offset) { partitioned<Strict>(threads, keys, k, queries, n, out, offset, cfg); });
}

#define GSEARCH_INSTANTIATE(T)                                                                           \
  template void partitioned_search<T, int64_t>(int, side, const T*, int64_t, const T*, int64_t, int64_t*, \
                                               const core::partition_config&); \
  template void partitioned_search<T, int32_t>(int, side, const T*, int64_t, const T*, int64_t, int32_t*, \
                                               const core::partition_config&);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE)
#undef GSEARCH_INSTANTIATE

}  // namespace gsearch::cpu_backend
