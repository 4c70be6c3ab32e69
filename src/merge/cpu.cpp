// The CPU backend of the merge-like operations: the partitions of core/merge_path.hpp on all
// cores. The output diagonal range [0, na + nb) is cut into tiles of `tile` diagonals and each
// thread takes contiguous tiles; a thread finds its first split with Merge Path (Balanced Path
// for the set operations) and runs the core's serial loop to its last. The splits are the GPU's
// tile boundaries, so both backends write the same elements in the same places.

#include "merge/backend.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "gsearch/core/merge_path.hpp"
#include "gsearch/core/set_ops.hpp"
#include "gsearch/core/sorted_search.hpp"
#include "cpu/parallel.hpp"
#include "cpu/tuning.hpp"
#include "merge/cpu_radix_sort.hpp"

namespace gsearch::cpu_backend {
using namespace merge_tuning;  // tile, min_sort_per_thread, min_rows_per_thread: tuning.hpp
namespace {

// Element i of an array: the accessor the core functions read through.
template <class T>
struct reader {
  const T* p;
  GSEARCH_FORCEINLINE T operator()(int64_t i) const { return p[i]; }
};

// The diagonal range [0, total) in tiles, contiguous tiles per worker: worker w's diagonals are
// [begin(w), begin(w + 1)) (possibly empty when there are fewer tiles than workers' shares).
struct tile_plan {
  int64_t total;
  int workers;
  int64_t tiles_per_worker;
  tile_plan(int threads, int64_t n) : total(n) {
    const int64_t tiles = (n + tile - 1) / tile;
    workers = thread_count(threads, n, tile);
    tiles_per_worker = (tiles + workers - 1) / workers;
  }
  int64_t begin(int64_t w) const { return std::min(total, w * tiles_per_worker * tile); }
};

// Calls body(w, d0, d1) for every worker w of the plan (d0 <= d1), one thread each.
template <class Body>
void run_workers(const tile_plan& p, Body body) {
  parallel_for(p.workers, p.workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) body(w, p.begin(w), p.begin(w + 1));
  });
}

// [0, n) split into `workers` contiguous ranges: range w is [range_begin(n, workers, w), ...(w + 1)).
int64_t range_begin(int64_t n, int workers, int64_t w) {
  const int64_t per = (n + workers - 1) / workers;
  return std::min(n, w * per);
}

// --- merge -----------------------------------------------------------------------------------

// Diagonals [d0, d1) of the stable merge of A and B: the Merge Path split at d0, then the core's
// serial merge; write(k, from_a, index) stores output d0 + k.
template <class AccA, class AccB, class Write>
void merge_range(const AccA& a, int64_t na, const AccB& b, int64_t nb, int64_t d0, int64_t d1,
                 Write write) {
  if (d0 >= d1) return;
  const int64_t i = core::merge_path(a, na, b, nb, d0);
  core::serial_merge(a, na, b, nb, i, d0 - i, d1 - d0, write);
}

// --- sorted search ---------------------------------------------------------------------------

// The ranks of sorted queries among sorted keys by Merge Path, on all cores: out(j, rank) for
// every query j, rank the number of keys before it (Strict: key < q, else key <= q). Each worker
// takes the diagonals of its tiles of the merge of keys and queries.
template <bool Strict, class T, class Out>
void sorted_ranks(int threads, const T* keys, int64_t k, const T* queries, int64_t n, Out out) {
  if (n == 0) return;
  const reader<T> rk{keys}, rq{queries};
  const tile_plan plan(threads, k + n);
  run_workers(plan, [&](int64_t, int64_t d0, int64_t d1) {
    if (d0 >= d1) return;
    const auto s0 = core::sorted_search_split<Strict>(rk, k, rq, n, d0);
    const auto s1 = d1 >= k + n ? core::search_split<int64_t>{k, n}
                                : core::sorted_search_split<Strict>(rk, k, rq, n, d1);
    core::serial_sorted_search<Strict>(rk, s0.k, s1.k, rq, s0.q, s1.q, out);
  });
}

// --- set operations --------------------------------------------------------------------------

// Where each worker's part of a set operation starts: workers + 1 (A, B) positions, the
// Balanced Path split at each worker's first diagonal (core::set_tile_ranges), the last (na, nb).
// Made monotone, each from the one before (core::monotone_range, the GPU tiles' rule), which
// changes nothing for sorted inputs and keeps unsorted ones (check_sorted off) in bounds: the
// parts then tile A and B, so the whole writes at most set_op_bound(op, na, nb) elements, and the
// counting pass and the writing pass see the same parts.
struct set_part {
  int64_t a, b;
};
template <class T>
std::vector<set_part> set_parts(const tile_plan& plan, const T* a, int64_t na, const T* b,
                                int64_t nb) {
  const reader<T> ra{a}, rb{b};
  std::vector<set_part> parts(size_t(plan.workers) + 1, set_part{na, nb});
  parts[0] = {0, 0};
  for (int w = 1; w < plan.workers; ++w) {
    const int64_t d = plan.begin(w);
    if (d >= na + nb) break;
    const auto r = core::set_tile_ranges(ra, na, rb, nb, d, na + nb);
    const set_part before = parts[size_t(w) - 1];
    const auto part = core::monotone_range(before.a, before.b, r.a0, r.b0);
    parts[size_t(w)] = {part.a1, part.b1};
  }
  return parts;
}

template <set_op Op, class T>
int64_t set_count(int threads, const T* a, int64_t na, const T* b, int64_t nb) {
  const reader<T> ra{a}, rb{b};
  const tile_plan plan(threads, na + nb);
  const std::vector<set_part> parts = set_parts(plan, a, na, b, nb);
  std::vector<int64_t> counts(size_t(plan.workers), 0);
  run_workers(plan, [&](int64_t w, int64_t, int64_t) {
    const set_part p0 = parts[size_t(w)], p1 = parts[size_t(w) + 1];
    int64_t c = 0;
    core::serial_set_op<Op>(ra, p0.a, p1.a, rb, p0.b, p1.b, [&](bool, int64_t) { ++c; });
    counts[size_t(w)] = c;
  });
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  return total;
}

// Each worker runs the set operation of its tiles: the first straight into out (it starts at 0),
// the others into a buffer of their part's bound, copied into place once the counts are known.
// (One pass over the inputs, where counting first would run the set operation twice; out needs
// room for the result only.)
template <set_op Op, class T>
int64_t set_write(int threads, const T* a, int64_t na, const T* b, int64_t nb, T* out) {
  const reader<T> ra{a}, rb{b};
  const tile_plan plan(threads, na + nb);
  const std::vector<set_part> parts = set_parts(plan, a, na, b, nb);
  std::vector<int64_t> counts(size_t(plan.workers) + 1, 0);
  std::vector<std::unique_ptr<T[]>> buffers(size_t(plan.workers));
  run_workers(plan, [&](int64_t w, int64_t, int64_t) {
    const set_part p0 = parts[size_t(w)], p1 = parts[size_t(w) + 1];
    T* o = out;
    if (w > 0) {
      const int64_t bound = core::set_op_bound(Op, p1.a - p0.a, p1.b - p0.b);
      if (bound == 0) return;
      buffers[size_t(w)].reset(new T[size_t(bound)]);
      o = buffers[size_t(w)].get();
    }
    int64_t c = 0;
    core::serial_set_op<Op>(ra, p0.a, p1.a, rb, p0.b, p1.b,
                            [&](bool from_a, int64_t x) { o[c++] = from_a ? a[x] : b[x]; });
    counts[size_t(w) + 1] = c;
  });
  for (size_t w = 1; w < counts.size(); ++w) counts[w] += counts[w - 1];  // the parts' ends
  parallel_for(plan.workers, plan.workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = std::max<int64_t>(w0, 1); w < w1; ++w) {
      const int64_t begin = counts[size_t(w)], size = counts[size_t(w) + 1] - begin;
      if (size > 0) std::memcpy(out + begin, buffers[size_t(w)].get(), size_t(size) * sizeof(T));
    }
  });
  return counts.back();
}

// --- merge sort ------------------------------------------------------------------------------

template <class T>
struct key_value {
  T key;
  int64_t value;
};
template <class T>
struct kv_key_reader {
  const key_value<T>* p;
  GSEARCH_FORCEINLINE T operator()(int64_t i) const { return p[i].key; }
};

// One pass of the bottom-up merge sort over n elements in sorted runs of `run` (the last
// shorter): runs 2r and 2r + 1 merge into outputs [2r run, min(n, (2r + 2) run)). The output range
// is split evenly between the workers; piece(o0, o1, p0, mid, p1) writes outputs [o0, o1) of the
// merge of runs [p0, mid) and [mid, p1) (p0 <= o0 < o1 <= p1), from the Merge Path split at o0.
template <class Piece>
void merge_pass(int workers, int64_t n, int64_t run, Piece piece) {
  parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t end = range_begin(n, workers, w + 1);
      for (int64_t o = range_begin(n, workers, w); o < end;) {
        const int64_t p0 = o / (2 * run) * (2 * run);
        const int64_t mid = std::min(n, p0 + run), p1 = std::min(n, p0 + 2 * run);
        const int64_t e = std::min(end, p1);
        piece(o, e, p0, mid, p1);
        o = e;
      }
    }
  });
}

template <class T>
void sort_keys(int threads, const T* keys, int64_t n, T* out) {
  const int workers = thread_count(threads, n, min_sort_per_thread);
  const int passes = ceil_log2(workers);
  std::unique_ptr<T[]> temp(passes > 0 ? new T[size_t(n)] : nullptr);
  // The runs are sorted where the ping-pong of the passes makes the last one land in out.
  T* src = passes % 2 ? temp.get() : out;
  T* dst = passes % 2 ? out : temp.get();
  parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t b = range_begin(n, workers, w), e = range_begin(n, workers, w + 1);
      if (src != keys) std::copy(keys + b, keys + e, src + b);  // in place: already there
      std::stable_sort(src + b, src + e, [](T x, T y) { return key_less(x, y); });
    }
  });
  const int64_t width = (n + workers - 1) / workers;  // run w is [w width, (w + 1) width)
  for (int p = 0; p < passes; ++p) {
    merge_pass(workers, n, width << p, [&](int64_t o0, int64_t o1, int64_t p0, int64_t mid, int64_t p1) {
      const reader<T> ra{src + p0}, rb{src + mid};
      T* to = dst + o0;
      merge_range(ra, mid - p0, rb, p1 - mid, o0 - p0, o1 - p0,
                  [&](int64_t k, bool from_a, int64_t x) { to[k] = from_a ? ra.p[x] : rb.p[x]; });
    });
    std::swap(src, dst);
  }
}

// Key-value: pairs sorted by key (std::stable_sort keeps equal keys' values in order), merged
// pair to pair, the last pass writing keys and values apart. The input is copied into the pairs
// first, so out and out_values may be keys and values.
template <class T>
void sort_pairs(int threads, const T* keys, const int64_t* values, int64_t n, T* out,
                int64_t* out_values) {
  using kv = key_value<T>;
  const int workers = thread_count(threads, n, min_sort_per_thread);
  const int passes = ceil_log2(workers);
  std::unique_ptr<kv[]> first(new kv[size_t(n)]);
  std::unique_ptr<kv[]> second(passes > 1 ? new kv[size_t(n)] : nullptr);
  kv* src = first.get();
  kv* dst = second.get();
  parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t b = range_begin(n, workers, w), e = range_begin(n, workers, w + 1);
      for (int64_t i = b; i < e; ++i) src[i] = kv{keys[i], values[i]};
      std::stable_sort(src + b, src + e, [](const kv& x, const kv& y) { return key_less(x.key, y.key); });
    }
  });
  if (passes == 0) {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = src[i].key;
      out_values[i] = src[i].value;
    }
    return;
  }
  const int64_t width = (n + workers - 1) / workers;
  for (int p = 0; p < passes; ++p) {
    const bool last = p == passes - 1;
    merge_pass(workers, n, width << p, [&](int64_t o0, int64_t o1, int64_t p0, int64_t mid, int64_t p1) {
      const kv* a = src + p0;
      const kv* b = src + mid;
      const kv_key_reader<T> ra{a}, rb{b};
      if (last) {
        T* ko = out + o0;
        int64_t* vo = out_values + o0;
        merge_range(ra, mid - p0, rb, p1 - mid, o0 - p0, o1 - p0,
                    [&](int64_t k, bool from_a, int64_t x) {
                      const kv& e = from_a ? a[x] : b[x];
                      ko[k] = e.key;
                      vo[k] = e.value;
                    });
      } else {
        kv* to = dst + o0;
        merge_range(ra, mid - p0, rb, p1 - mid, o0 - p0, o1 - p0,
                    [&](int64_t k, bool from_a, int64_t x) { to[k] = from_a ? a[x] : b[x]; });
      }
    });
    std::swap(src, dst);
  }
}

// --- joins -----------------------------------------------------------------------------------

// out[0, n] = the exclusive scan of weight(i), i < n (out[n] = the total), on all cores; returns
// the total.
template <class Weight>
int64_t exclusive_scan(int threads, int64_t n, int64_t* out, Weight weight) {
  const int workers = thread_count(threads, n, min_rows_per_thread);
  std::vector<int64_t> sums(size_t(workers) + 1, 0);
  parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      int64_t s = 0;
      for (int64_t i = range_begin(n, workers, w), e = range_begin(n, workers, w + 1); i < e; ++i)
        s += weight(i);
      sums[size_t(w) + 1] = s;
    }
  });
  for (size_t w = 1; w < sums.size(); ++w) sums[w] += sums[w - 1];
  parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      int64_t s = sums[size_t(w)];
      for (int64_t i = range_begin(n, workers, w), e = range_begin(n, workers, w + 1); i < e; ++i) {
        out[i] = s;
        s += weight(i);
      }
    }
  });
  out[n] = sums.back();
  return sums.back();
}

// The sorted searches a join needs (core/join.hpp): for each left row lo (its lower bound in
// right) and its match count; for each right row, when right rows can be kept unmatched (right
// and full joins), rl (its lower bound in left) and whether it has a match.
template <class T>
struct join_searches {
  std::vector<int64_t> lo, matches;  // per left row
  std::vector<int64_t> rl;           // per right row (right and full joins)
  std::vector<char> right_matched;   // per right row (right and full joins)
};

template <class T>
join_searches<T> search_join(int threads, join_kind kind, const T* left, int64_t nl,
                             const T* right, int64_t nr) {
  join_searches<T> s;
  s.lo.resize(size_t(nl));
  s.matches.resize(size_t(nl));
  int64_t* lo = s.lo.data();
  int64_t* m = s.matches.data();
  sorted_ranks<true>(threads, right, nr, left, nl, [lo](int64_t i, int64_t r) { lo[i] = r; });
  if (core::join_left_only(kind)) {
    // Only whether a row has a match matters: right[lo] equal to it.
    parallel_for(nl, thread_count(threads, nl, min_rows_per_thread), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) m[i] = lo[i] < nr && !key_less(left[i], right[lo[i]]);
    });
  } else {
    sorted_ranks<false>(threads, right, nr, left, nl,
                        [lo, m](int64_t i, int64_t r) { m[i] = std::max<int64_t>(0, r - lo[i]); });  // >= 0 even unsorted
  }
  if (kind == join_kind::right || kind == join_kind::full) {
    s.rl.resize(size_t(nr));
    s.right_matched.resize(size_t(nr));
    int64_t* rl = s.rl.data();
    char* matched = s.right_matched.data();
    sorted_ranks<true>(threads, left, nl, right, nr, [=](int64_t j, int64_t r) {
      rl[j] = r;
      matched[j] = r < nl && !key_less(right[j], left[r]);
    });
  }
  return s;
}

}  // namespace

template <class T>
void merge(int threads, const T* a, int64_t na, const T* b, int64_t nb, T* out,
           const int64_t* a_values, const int64_t* b_values, int64_t* out_values) {
  const reader<T> ra{a}, rb{b};
  const tile_plan plan(threads, na + nb);
  const bool with_values = out_values != nullptr;  // a_values is null when A is empty, b_values when B is
  run_workers(plan, [&](int64_t, int64_t d0, int64_t d1) {
    T* o = out + d0;
    if (with_values) {
      int64_t* v = out_values + d0;
      merge_range(ra, na, rb, nb, d0, d1, [&](int64_t k, bool from_a, int64_t x) {
        o[k] = from_a ? a[x] : b[x];
        v[k] = from_a ? a_values[x] : b_values[x];
      });
    } else {
      merge_range(ra, na, rb, nb, d0, d1,
                  [&](int64_t k, bool from_a, int64_t x) { o[k] = from_a ? a[x] : b[x]; });
    }
  });
}

template <class T>
void merge_sort(int threads, const T* keys, int64_t n, const int64_t* values, T* out,
                int64_t* out_values) {
  if (n == 0) return;
  if (values && out_values) {
    sort_pairs(threads, keys, values, n, out, out_values);
  } else {
    sort_keys(threads, keys, n, out);
  }
}

template <class T, class Out>
void sorted_search(int threads, side s, const T* keys, int64_t k, const T* queries, int64_t n,
                   Out* out) {
  visit_side(s, [&]<bool Strict>(int offset) {
    sorted_ranks<Strict>(threads, keys, k, queries, n, [out, offset](int64_t j, int64_t r) { out[j] = Out(r + offset); });
  });
}

template <class T>
int64_t set_operation_size(int threads, set_op op, const T* a, int64_t na, const T* b,
                           int64_t nb) {
  if (na + nb == 0) return 0;
  return core::visit_set_op(op, [&]<set_op Op>() { return set_count<Op>(threads, a, na, b, nb); });
}

template <class T>
int64_t set_operation(int threads, set_op op, const T* a, int64_t na, const T* b, int64_t nb,
                      T* out) {
  if (na + nb == 0) return 0;
  return core::visit_set_op(op, [&]<set_op Op>() { return set_write<Op>(threads, a, na, b, nb, out); });
}

template <class T>
int64_t join_size(int threads, join_kind kind, const T* left, int64_t nl, const T* right,
                  int64_t nr) {
  const join_searches<T> s = search_join(threads, kind, left, nl, right, nr);
  int64_t rows = 0;
  for (int64_t i = 0; i < nl; ++i) rows += core::join_left_weight(kind, s.matches[size_t(i)]);
  for (size_t j = 0; j < s.right_matched.size(); ++j)
    rows += core::join_right_weight(kind, s.right_matched[j]);
  return rows;
}

template <class T>
int64_t join(int threads, join_kind kind, const T* left, int64_t nl, const T* right, int64_t nr,
             const std::function<join_output(int64_t)>& allocate) {
  const join_searches<T> s = search_join(threads, kind, left, nl, right, nr);
  const int64_t* lo = s.lo.data();
  const int64_t* m = s.matches.data();
  // SL and SR, the exclusive scans of the left and right weights (SR all 0 when no right row is
  // kept unmatched).
  std::vector<int64_t> sl(size_t(nl) + 1), sr;
  const int64_t left_rows =
      exclusive_scan(threads, nl, sl.data(), [&](int64_t i) { return core::join_left_weight(kind, m[i]); });
  int64_t right_rows = 0;
  const bool keeps_right = !s.rl.empty();
  if (keeps_right) {
    sr.resize(size_t(nr) + 1);
    const char* matched = s.right_matched.data();
    right_rows = exclusive_scan(threads, nr, sr.data(),
                                [&](int64_t j) { return core::join_right_weight(kind, matched[j]); });
  }
  const int64_t rows = left_rows + right_rows;
  const join_output o = allocate(rows);
  if (rows == 0) return 0;
  const int64_t* SL = sl.data();
  const int64_t* SR = sr.data();
  const bool left_only = core::join_left_only(kind);

  // The left rows' outputs in left-only order u = SL[i] + t, u in [0, left_rows), split evenly
  // between the workers (one row may own most of them); output u sits at u + SR[lo_i].
  const int workers = thread_count(threads, left_rows, min_rows_per_thread);
  parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      int64_t u = range_begin(left_rows, workers, w);
      const int64_t u_end = range_begin(left_rows, workers, w + 1);
      if (u >= u_end) continue;
      int64_t i = std::upper_bound(SL, SL + nl + 1, u) - SL - 1;  // SL[i] <= u < SL[i + 1]
      for (; u < u_end; ++i) {
        const int64_t start = SL[i], t0 = u - start, t1 = std::min(SL[i + 1], u_end) - start;
        if (t1 <= t0) continue;
        const int64_t at = start + (keeps_right ? SR[lo[i]] : 0);
        int64_t* li = o.left + at;
        for (int64_t t = t0; t < t1; ++t) li[t] = i;
        if (!left_only) {
          int64_t* ri = o.right + at;
          if (m[i] > 0) {
            for (int64_t t = t0; t < t1; ++t) ri[t] = lo[i] + t;
          } else {
            for (int64_t t = t0; t < t1; ++t) ri[t] = -1;
          }
        }
        u = start + t1;
      }
    }
  });
  // The unmatched right rows: right row j at SR[j] + SL[rl_j].
  if (right_rows > 0) {
    const int64_t* rl = s.rl.data();
    parallel_for(nr, thread_count(threads, nr, min_rows_per_thread), 1, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        if (SR[j + 1] == SR[j]) continue;
        const int64_t at = SR[j] + SL[rl[j]];
        o.left[at] = -1;
        o.right[at] = j;
      }
    });
  }
  return rows;
}

// sort(): integer keys by the LSD radix sort (cpu_radix_sort.hpp) from radix_sort_from
// elements, as the CUDA backend takes CUB's radix sort for them; floats, and fewer keys, by the
// merge sort.
template <class T>
void sort(int threads, const T* keys, int64_t n, const int64_t* values, T* out, int64_t* out_values) {
  if constexpr (std::is_integral_v<T>) {
    if (n >= radix_sort_from) return radix_sort(threads, keys, n, values, out, out_values, min_sort_per_thread);
  }
  merge_sort(threads, keys, n, values, out, out_values);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_MERGE_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_MERGE_SORT_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_SORT_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_SET_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_JOIN_OPS)
#define GSEARCH_INSTANTIATE_SORTED_SEARCH(T)                                                     \
  template void sorted_search<T, int64_t>(int, side, const T*, int64_t, const T*, int64_t, int64_t*); \
  template void sorted_search<T, int32_t>(int, side, const T*, int64_t, const T*, int64_t, int32_t*);
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE_SORTED_SEARCH)
#undef GSEARCH_INSTANTIATE_SORTED_SEARCH

}  // namespace gsearch::cpu_backend
