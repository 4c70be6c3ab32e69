// The CPU backend of select and partition: core/selection.hpp's sampled-bracket select on all
// cores (which cpu_rows.cpp's topk / kthvalue and cpu_quantile.cpp's quantile / median use too).
//
// select (many ranks in one pass): a sorted sample of the data brackets every rank; one parallel
// pass counts the data per bucket of the brackets' splitters (per part of the data, so the
// counts' prefix sums give each part its exact write positions); each rank's bucket follows from
// the counts: a bucket of elements equal to a splitter answers at once, the others are copied out
// (only the buckets that hold a rank: a few per cent of the data) by a second pass and selected in
// recursively; small inputs go to a copy's nth_element (cpu_quickselect.hpp: a vectorized
// quickselect for one rank of 4-byte keys). When the ranks fall in one bracket
// (one rank, a median, a quantile's two neighbours) the split paths take over: the bracket's two
// splitters split the data three ways in one vectorized pass (AVX-512 compressing stores where
// the CPU has them), select copying only the middle, partition writing the sides straight into
// its output; see "one bracket" below. The CPU counts before it copies,
// where the GPU copies the brackets' range in the counting pass: a core's second read costs less
// than a guessed copy, and a sample that missed costs nothing more (the rank's bucket, whatever
// its size, is the one copied). The recursion ends in nth_element after a few levels whatever
// the data, so an adversarial sample costs time, never a wrong answer.

#include "selection/backend.hpp"
#include "selection/cpu_loops.hpp"
#include "selection/cpu_select.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <numeric>
#include <type_traits>
#include <tuple>
#include <utility>
#include <vector>

#include "gsearch/core/quantile.hpp"
#ifdef __linux__
#include <sys/mman.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif
#include "cpu/parallel.hpp"
#include "cpu/tuning.hpp"
#include "cpu_quickselect.hpp"  // small_nth_element (and select_split.hpp)
#include "select_split.hpp"

namespace gsearch::cpu_backend {
using namespace select_detail;  // cpu_select.hpp
// small_select, few_splitters, sample_size, max_depth, block, min_elements_per_thread, ...
using namespace selection_tuning;
namespace {

struct key_order {
  template <class T>
  bool operator()(T a, T b) const {
    return key_less(a, b);
  }
};



// --- small inputs: nth_element ----------------------------------------------------------------

// Puts the elements of ranks[0, m) (sorted, distinct, in [lo, hi)) of buf[lo, hi) at their sorted
// positions (divide and conquer on the middle rank: O(n log m)); sorts when the ranks are dense.
template <class T, class Less>
void multiselect(T* buf, int64_t lo, int64_t hi, const int64_t* ranks, int64_t m, Less less) {
  while (m > 0 && hi - lo > 1) {
    if (m * dense_ranks > hi - lo) {
      std::sort(buf + lo, buf + hi, less);
      return;
    }
    const int64_t mid = m / 2, r = ranks[mid];
    std::nth_element(buf + lo, buf + r, buf + hi, less);
    multiselect(buf, lo, r, ranks, mid, less);
    lo = r + 1;
    ranks += mid + 1;
    m -= mid + 1;
  }
}

// data[0, n) into buf with the NaNs last (in no order); returns the count of the others, which
// then compare by operator< in the key order (-0.0 == 0.0): nth_element with it takes 4096
// float32 in about 15% less time than with key_less, whose NaN tests are in every comparison.
template <class T>
int64_t copy_nan_last(const T* data, int64_t n, T* buf) {
  if constexpr (!std::is_floating_point_v<T>) {
    std::copy(data, data + n, buf);
    return n;
  } else {
    // Most inputs hold no NaN: a count first (a branch-free loop the compiler vectorizes), then a
    // plain copy; only inputs with NaNs take the element-by-element split.
    int64_t nans = 0;
    for (int64_t i = 0; i < n; ++i) nans += data[i] != data[i];
    if (nans == 0) {
      std::copy(data, data + n, buf);
      return n;
    }
    int64_t lo = 0, hi = n;
    for (int64_t i = 0; i < n; ++i) {
      const T v = data[i];
      if (v == v) buf[lo++] = v;
      else buf[--hi] = v;
    }
    return lo;
  }
}

// --- the splitters and their buckets ----------------------------------------------------------

// Sorted, distinct splitters (key order; a NaN only last) and the bucket of an element among
// them (core::select_bucket's numbering).
template <class T>
struct splitters {
  std::vector<T> s;
  bool nan_last = false;

  explicit splitters(std::vector<T> values) : s(std::move(values)) {
    std::sort(s.begin(), s.end(), key_order{});
    s.erase(std::unique(s.begin(), s.end(), key_equal<T>), s.end());
    if constexpr (std::is_floating_point_v<T>) nan_last = !s.empty() && s.back() != s.back();
  }
  int count() const { return int(s.size()); }
  int buckets() const { return 2 * count() + 1; }
  bool few() const { return count() <= few_splitters; }

  // The buckets of x[0, len) into b. Few splitters: the bucket is the number of splitters <= x
  // plus the number < x (2u or 2u - 1, select_bucket's numbers), summed splitter by splitter over
  // the block in IEEE comparisons, which g++ vectorizes: !(x < s) is s <= x and !(x <= s) is
  // s < x in the key order for every x when s is not NaN (NaN x compares false); a NaN splitter
  // is <= only NaN. Many splitters: select_bucket's binary search.
  template <class B>
  void bucket_block(const T* x, int64_t len, B* b) const {
    if (few()) {
      std::fill(b, b + len, B(0));
      const int regular = count() - int(nan_last);
      for (int j = 0; j < regular; ++j) add_splitter_steps(x, len, s[size_t(j)], b);
      if (nan_last) add_nan_steps(x, len, b);
      return;
    }
    for (int64_t i = 0; i < len; ++i) b[i] = B(bucket_of(x[i]));
  }

  // core::select_bucket's number, by a binary search of fixed trip count (log2 of the splitters,
  // rounded up): its loop exit never mispredicts, where select_bucket's halving exits after a
  // data-dependent number of steps (20 ns an element with 12 splitters).
  int bucket_of(T x) const {
    const T* sp = s.data();
    const int m = count();
    int u = 0;  // the splitters <= x
    for (int step = std::bit_floor(unsigned(m)); step > 0; step /= 2)
      u = u + step <= m && key_less_equal(sp[u + step - 1], x) ? u + step : u;
    return u > 0 && !key_less(sp[u - 1], x) ? 2 * u - 1 : 2 * u;
  }

  // counts[b] += the elements of x[0, len) in bucket b. Few splitters: per splitter the sums of
  // s <= x and s < x (the bucket counts are their differences), no per-element histogram.
  void count_block(const T* x, int64_t len, int64_t* counts) const {
    if (!few()) {
      uint32_t b[block];
      for (int64_t i0 = 0; i0 < len; i0 += block) {
        const int64_t l = std::min<int64_t>(block, len - i0);
        bucket_block(x + i0, l, b);
        for (int64_t i = 0; i < l; ++i) ++counts[b[i]];
      }
      return;
    }
    const int m = count(), regular = m - int(nan_last);
    int64_t ge[few_splitters + 1], gt[few_splitters + 1];  // splitters <= x, < x, per splitter
    for (int j = 0; j < regular; ++j) count_from(x, len, s[size_t(j)], &ge[j], &gt[j]);
    if (nan_last) {
      ge[m - 1] = count_nan_in(x, len);
      gt[m - 1] = 0;
    }
    // Bucket 2j: after splitter j - 1, before splitter j; bucket 2j + 1: equal to splitter j.
    for (int j = 0; j <= m; ++j) {
      const int64_t after_previous = j == 0 ? len : gt[j - 1], from_this = j == m ? 0 : ge[j];
      counts[2 * j] += after_previous - from_this;
      if (j < m) counts[2 * j + 1] += ge[j] - gt[j];
    }
  }
};

// Per-part bucket counts of data[0, n) (parts x buckets, row-major), in parallel.
template <class T>
std::vector<int64_t> count_buckets(const splitters<T>& sp, const T* data, int64_t n, int parts) {
  const int nb = sp.buckets();
  std::vector<int64_t> counts(static_cast<size_t>(parts) * size_t(nb), 0);
  for_parts(n, parts, [&](int p, int64_t begin, int64_t end) {
    int64_t* c = counts.data() + size_t(p) * size_t(nb);
    for (int64_t i = begin; i < end; i += count_chunk) sp.count_block(data + i, std::min(count_chunk, end - i), c);
  });
  return counts;
}

// Each part's first write position per bucket for a bucket-ordered output whose bucket b starts
// at start[b] (start[b] = -1: not written): start[b] plus the earlier parts' counts of b.
std::vector<int64_t> part_offsets(const std::vector<int64_t>& counts, int parts, int nb,
                                  const std::vector<int64_t>& start) {
  std::vector<int64_t> offsets(counts.size(), -1);
  for (int b = 0; b < nb; ++b) {
    if (start[size_t(b)] < 0) continue;
    int64_t at = start[size_t(b)];
    for (int p = 0; p < parts; ++p) {
      offsets[size_t(p) * nb + b] = at;
      at += counts[size_t(p) * nb + b];
    }
  }
  return offsets;
}

// f(B{}) with B the narrowest type of sp's bucket numbers: uint8_t for few splitters (a quarter of
// the vector lanes of uint32_t), uint32_t for many.
template <class T, class F>
void with_bucket_type(const splitters<T>& sp, F&& f) {
  if (sp.few()) f(uint8_t{});
  else f(uint32_t{});
}

// Writes each element of data[0, n) whose bucket has an offset (>= 0) to out at its part's next
// offset of that bucket (element or index, as `write` does): a stable bucket scatter.
template <class T, class Write>
void scatter_buckets(const splitters<T>& sp, const T* data, int64_t n, int parts, std::vector<int64_t> offsets,
                     Write write) {
  const int nb = sp.buckets();
  with_bucket_type(sp, [&](auto bucket_type) {
    using B = decltype(bucket_type);
    for_parts(n, parts, [&](int p, int64_t begin, int64_t end) {
      int64_t* at = offsets.data() + size_t(p) * size_t(nb);
      B b[block];
      for (int64_t i0 = begin; i0 < end; i0 += block) {
        const int64_t l = std::min<int64_t>(block, end - i0);
        sp.bucket_block(data + i0, l, b);
        for (int64_t i = 0; i < l; ++i) {
          const int64_t o = at[b[i]];
          if (o >= 0) {
            write(o, i0 + i);
            at[b[i]] = o + 1;
          }
        }
      }
    });
  });
}

// The elements of data[0, n) in the buckets `wanted` into out at the offsets, stable: per block,
// one branch-free compaction per wanted bucket (the block stays in L1), which beats the scatter's
// per-element branch for the few buckets select copies (the ranks of a call fall in a few).
template <class T>
void copy_buckets(const splitters<T>& sp, const T* data, int64_t n, int parts, const std::vector<int64_t>& offsets,
                  const std::vector<int>& wanted, T* out) {
  const size_t nb = size_t(sp.buckets());
  with_bucket_type(sp, [&](auto bucket_type) {
    using B = decltype(bucket_type);
    for_parts(n, parts, [&](int p, int64_t begin, int64_t end) {
      std::vector<T*> to(wanted.size());
      for (size_t w = 0; w < wanted.size(); ++w) to[w] = out + offsets[size_t(p) * nb + size_t(wanted[w])];
      B b[block];
      T spill[block];
      for (int64_t i0 = begin; i0 < end; i0 += block) {
        const int64_t l = std::min<int64_t>(block, end - i0);
        sp.bucket_block(data + i0, l, b);
        for (size_t w = 0; w < wanted.size(); ++w) {
          const int64_t c = compact_bucket(data + i0, b, l, B(wanted[w]), spill);
          to[w] = std::copy(spill, spill + c, to[w]);
        }
      }
    });
  });
}

// --- select -------------------------------------------------------------------------------------


// The brackets of the sorted ranks[0, m) in a sample of s of n elements, those of nearby ranks
// merged: a bracket that starts within two sample elements of the previous one's start (ranks a
// few apart, as a quantile's two neighbours are) extends it, so such ranks share one bucket and
// two splitters instead of four (fewer splitters keep the vectorized count); farther ranks keep
// their own brackets, however much they overlap, so that many quantiles still get narrow buckets.
std::vector<core::sample_bracket> merged_brackets(const int64_t* ranks, int64_t m, int64_t n, int64_t s) {
  std::vector<core::sample_bracket> brackets;
  for (int64_t i = 0; i < m; ++i) {
    const core::sample_bracket b = core::bracket_of(ranks[i], n, s);
    if (!brackets.empty() && b.lo <= brackets.back().lo + 2) brackets.back().hi = std::max(brackets.back().hi, b.hi);
    else brackets.push_back(b);
  }
  return brackets;
}

// --- one bracket: a three-way split by two splitters (select_split.hpp) -------------------------

using namespace split;

// An uninitialized scratch array of n T. Large ones (the middle of a split, up to n elements, of
// which a few per cent are written) are aligned to 2 MB and advised as transparent huge pages,
// as numpy does for its arrays: a fresh 4 KB page costs a fault (about 1.5 us here), and the
// pages written are few huge ones instead of a thousand small (2^24 int32, the middle's copy:
// 11.7 ms fresh, 9.9 advised, 9.6 reused).
template <class T>
struct scratch {
  struct release {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, release> p;
  explicit scratch(int64_t n) {
    constexpr size_t huge = size_t(1) << 21;
    const size_t bytes = std::max<size_t>(size_t(n) * sizeof(T), sizeof(T));
    if (bytes >= 2 * huge) {
      p.reset(static_cast<T*>(std::aligned_alloc(huge, (bytes + huge - 1) / huge * huge)));
#ifdef __linux__
      if (p) madvise(p.get(), (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
#endif
    } else {
      p.reset(static_cast<T*>(std::malloc(bytes)));
    }
    if (!p) throw std::bad_alloc();
  }
  T* get() const { return p.get(); }
};

// Standard deviations of a split's bracket on each side (core::bracket_of's margin): 3 misses
// with probability about 1e-3 a side (a miss costs the general path), and its middle is a
// quarter smaller than with 4. Measured (C++ driver, one rank of random data): 10^4 float32
// select 16 -> 7.8 us, partition 18.7 -> 9.8; 2.5 gained another 5-10% (not taken: 6e-3 a side).
constexpr double split_margin = 3.0;
// Elements per thread of the split passes: one thread up to 2^20 elements. At 10^6 a second
// thread gained nothing (select 184 us on one, 231 on two; partition 363 and 395: the pass is
// short and the pool's start costs); at 2^24 it halves select's pass.
constexpr int64_t split_per_thread = int64_t{1} << 19;
// Inputs above this size take the split paths (select_split, partition_one); at or below it
// nth_element on a copy. Measured: 4096 float32 select 7.0 us by nth_element, 4.6 split; 1024
// and 2048 the same within noise from 1000 to 4096 elements.
constexpr int64_t split_min = 2048;

// Elements a block of the split passes (16 KB: it and its middle's copy stay in L1).
template <class T>
constexpr int64_t claim_block = 16384 / int64_t(sizeof(T));

// The sample's two elements of ranks lo and hi (lo < hi; -1 / s for none) as split keys, by two
// nth_elements (O(s), where sorting the sample is O(s log s)); nullopt when lo's is NaN.
template <class T>
std::optional<split_keys<T>> bracket_keys(std::vector<T>& sample, core::sample_bracket br) {
  split_keys<T> k;
  auto first = sample.begin();
  if (br.lo >= 0) {
    std::nth_element(first, sample.begin() + br.lo, sample.end(), key_order{});
    k.a = sample[size_t(br.lo)];
    if (k.a != k.a) return std::nullopt;
    k.has_a = true;
    first = sample.begin() + br.lo + 1;
  }
  if (br.hi < int64_t(sample.size())) {
    std::nth_element(first, sample.begin() + br.hi, sample.end(), key_order{});
    k.b = sample[size_t(br.hi)];
    k.has_b = k.b == k.b;
  }
  return k;
}

// The sample of data[0, n) (sample_size's, at sample_position's) and the single bracket of the
// sorted distinct ranks[0, m) in it, as split keys; nullopt when the ranks need several brackets
// (or lo's key is NaN). *room: twice the middle the bracket expects plus 2^15 elements, at most n
// (the middle's buffer; a middle that outgrows it takes the general path).
template <class T>
std::optional<split_keys<T>> one_bracket(const T* data, int64_t n, const int64_t* ranks, int64_t m, int64_t* room) {
  const int64_t s = sample_size(n);
  // The ranks' brackets, those that overlap merged (merged_brackets' rule, with split_margin).
  core::sample_bracket b = core::bracket_of(ranks[0], n, s, split_margin);
  for (int64_t i = 1; i < m; ++i) {
    const core::sample_bracket c = core::bracket_of(ranks[i], n, s, split_margin);
    if (c.lo > b.lo + 2) return std::nullopt;
    b.hi = std::max(b.hi, c.hi);
  }
  std::vector<T> sample(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) sample[size_t(i)] = data[core::sample_position(i, s, n)];
  *room = std::min(n, 2 * ((b.hi - b.lo + 1) * n / s) + (int64_t{1} << 15));
  return bracket_keys(sample, b);
}

template <class T>
void select_sorted(int threads, const T* data, int64_t n, const int64_t* ranks, int64_t m, T* values, int depth);

// select_sorted when the ranks fall in one bracket of the sample: one pass, in blocks that stay in
// L1, counts the left and right sides and copies the middle to a stack block, which then claims
// its room in the middle's buffer (an atomic cursor: the middle's order is free); the middle is
// selected in again. False (nothing done) when the ranks need several brackets, the sample
// missed them or the middle outgrew its buffer.
template <class T>
bool select_split(int threads, const T* data, int64_t n, const int64_t* ranks, int64_t m, T* values, int depth) {
  int64_t room = 0;
  const std::optional<split_keys<T>> k = one_bracket(data, n, ranks, m, &room);
  if (!k) return false;
  const int parts = thread_count(threads, n, split_per_thread);
  scratch<T> mid(room);
  std::vector<int64_t> left(size_t(parts), 0), right(size_t(parts), 0);
  std::atomic<int64_t> md{0};
  std::atomic<bool> overflow{false};
  for_parts(n, parts, [&](int p, int64_t begin, int64_t end) {
    T block_mid[claim_block<T>];
    for (int64_t i = begin; i < end; i += claim_block<T>) {
      const int64_t len = std::min(claim_block<T>, end - i);
      const int64_t c = split_count_copy(*k, data + i, len, &left[size_t(p)], &right[size_t(p)], block_mid);
      const int64_t at = md.fetch_add(c, std::memory_order_relaxed);
      if (at + c > room) overflow.store(true, std::memory_order_relaxed);
      else std::memcpy(mid.get() + at, block_mid, size_t(c) * sizeof(T));
    }
  });
  int64_t l = 0;
  for (int p = 0; p < parts; ++p) l += left[size_t(p)];
  const int64_t size = md.load();
  if (overflow.load() || size == n || ranks[0] < l || ranks[m - 1] >= l + size) return false;
  std::vector<int64_t> local(ranks, ranks + m);
  for (int64_t& r : local) r -= l;
  select_sorted(threads, mid.get(), size, local.data(), m, values, depth + 1);
  return true;
}

// values[i] = the element of rank ranks[i] of data[0, n), ranks sorted and distinct.
template <class T>
void select_sorted(int threads, const T* data, int64_t n, const int64_t* ranks, int64_t m, T* values, int depth) {
  if (m == 0) return;
  if (n > split_min && depth < max_depth && m * dense_ranks <= n &&
      select_split(threads, data, n, ranks, m, values, depth))
    return;
  // Many ranks: the radix passes (their brackets would cover the sample, and the buckets copied
  // out most of the data).
  if (depth == 0 && m >= many_min_ranks && n > small_select && m * dense_ranks <= n &&
      select_many(threads, data, n, ranks, m, values))
    return;
  if (n <= small_select || depth >= max_depth || m * dense_ranks > n) {
    std::vector<T> buf(static_cast<size_t>(m == 1 && sizeof(T) == 4 ? 2 * n : n));  // small_nth_element's tmp
    const int64_t c = copy_nan_last(data, n, buf.data());
    if (m == 1 && ranks[0] < c) small_nth_element(buf.data(), c, ranks[0], buf.data() + n);
    else multiselect(buf.data(), 0, c, ranks, std::lower_bound(ranks, ranks + m, c) - ranks, std::less<T>{});
    for (int64_t i = 0; i < m; ++i) values[i] = buf[size_t(ranks[i])];
    return;
  }
  // 1-2: the sorted sample and each rank's bracket in it; their ends are the splitters.
  const int64_t s = sample_size(n);
  std::vector<T> sample(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) sample[size_t(i)] = data[core::sample_position(i, s, n)];
  std::sort(sample.begin(), sample.end(), key_order{});
  std::vector<T> ends;
  for (const core::sample_bracket& b : merged_brackets(ranks, m, n, s)) {
    if (b.lo >= 0) ends.push_back(sample[size_t(b.lo)]);
    if (b.hi < s) ends.push_back(sample[size_t(b.hi)]);
  }
  const splitters<T> sp(std::move(ends));
  // 3: the counts; each rank's bucket from their prefix sums.
  const int parts = parts_for(threads, n), nb = sp.buckets();
  const std::vector<int64_t> counts = count_buckets(sp, data, n, parts);
  std::vector<int64_t> first(static_cast<size_t>(nb) + 1, 0);  // first rank of each bucket
  for (int b = 0; b < nb; ++b) {
    int64_t c = 0;
    for (int p = 0; p < parts; ++p) c += counts[size_t(p) * nb + b];
    first[size_t(b) + 1] = first[size_t(b)] + c;
  }
  // 4: a rank in an odd bucket is its splitter; the even buckets that hold ranks are copied out.
  std::vector<int64_t> start(static_cast<size_t>(nb), -1);  // where a copied bucket starts in `copied`
  struct wanted {
    int bucket;
    int64_t first_rank, last_rank;  // ranks[first_rank, last_rank) fall in it
  };
  std::vector<wanted> buckets;
  int64_t copied_size = 0;
  for (int64_t i = 0, b = 0; i < m; ++i) {
    while (first[size_t(b) + 1] <= ranks[i]) ++b;
    if (b % 2 == 1) {
      values[i] = sp.s[size_t(b / 2)];
    } else if (!buckets.empty() && buckets.back().bucket == b) {
      buckets.back().last_rank = i + 1;
    } else {
      buckets.push_back({int(b), i, i + 1});
      start[size_t(b)] = copied_size;
      copied_size += first[size_t(b) + 1] - first[size_t(b)];
    }
  }
  if (buckets.empty()) return;
  if (copied_size == n) {  // no progress (one bucket holds everything): select directly
    select_sorted(threads, data, n, ranks, m, values, max_depth);
    return;
  }
  std::vector<T> copied(static_cast<size_t>(copied_size));
  const std::vector<int64_t> offsets = part_offsets(counts, parts, nb, start);
  if (int(buckets.size()) <= few_wanted) {
    std::vector<int> wanted;
    for (const auto& w : buckets) wanted.push_back(w.bucket);
    copy_buckets(sp, data, n, parts, offsets, wanted, copied.data());
  } else {
    scatter_buckets(sp, data, n, parts, offsets, [&](int64_t o, int64_t i) { copied[size_t(o)] = data[i]; });
  }
  // 5: select in each copied bucket, its ranks counted from its start.
  std::vector<int64_t> local;
  for (const wanted& w : buckets) {
    local.assign(ranks + w.first_rank, ranks + w.last_rank);
    for (int64_t& r : local) r -= first[size_t(w.bucket)];
    const int64_t size = first[size_t(w.bucket) + 1] - first[size_t(w.bucket)];
    select_sorted(threads, copied.data() + start[size_t(w.bucket)], size, local.data(), int64_t(local.size()),
                  values + w.first_rank, depth + 1);
  }
}




// --- NaN --------------------------------------------------------------------------------------


// --- partition ----------------------------------------------------------------------------------

// numpy.partition of a small input on one thread: nth_element on a copy (or on the indices).
template <class T>
void partition_small(const T* data, int64_t n, const int64_t* kth, int64_t m, T* out, int64_t* out_indices) {
  if (out) {
    std::copy(data, data + n, out);
    multiselect(out, 0, n, kth, m, key_order{});
  }
  if (out_indices) {
    std::iota(out_indices, out_indices + n, int64_t{0});
    multiselect(out_indices, 0, n, kth, m, [data](int64_t a, int64_t b) { return key_less(data[a], data[b]); });
  }
}

}  // namespace

namespace select_detail {

// The elements of `ranks` (any order, repeats allowed) in one select.
template <class T>
std::vector<T> select_values(int threads, const T* data, int64_t n, std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<T> values(ranks.size());
  select_sorted(threads, data, n, ranks.data(), int64_t(ranks.size()), values.data(), 0);
  return values;
}

// NaN elements of data[0, n) (0 for integer keys), counted on all cores.
template <class T>
int64_t count_nan(int threads, const T* data, int64_t n) {
  if constexpr (!std::is_floating_point_v<T>) {
    return 0;
  } else {
    const int parts = parts_for(threads, n);
    std::vector<int64_t> c(static_cast<size_t>(parts), 0);
    for_parts(n, parts, [&](int p, int64_t begin, int64_t end) {
      int64_t total = 0;
      for (int64_t i0 = begin; i0 < end; i0 += count_chunk) total += count_nan_in(data + i0, std::min(count_chunk, end - i0));
      c[size_t(p)] = total;
    });
    return std::accumulate(c.begin(), c.end(), int64_t{0});
  }
}

#define GSEARCH_SELECT_DETAIL_INSTANTIATE(T)                                                        \
  template std::vector<T> select_values<T>(int, const T*, int64_t, std::vector<int64_t>);          \
  template int64_t count_nan<T>(int, const T*, int64_t);
GSEARCH_KEY_TYPES(GSEARCH_SELECT_DETAIL_INSTANTIATE)
#undef GSEARCH_SELECT_DETAIL_INSTANTIATE

}  // namespace select_detail

template <class T>
void select(int threads, const T* data, int64_t n, const int64_t* ranks, int64_t m, T* values) {
  const std::vector<int64_t> wanted(ranks, ranks + m);
  const std::vector<int64_t> sorted = sorted_distinct(wanted);
  const std::vector<T> v = select_values(threads, data, n, sorted);
  for (int64_t i = 0; i < m; ++i) values[i] = value_of(sorted, v, ranks[i]);
}

// The kth values, then one bucket scatter around them: every element before, equal to or after
// each value lands in its bucket, and the elements equal to a kth value fill exactly its rank's
// range, so out[kth[i]] holds the value.
template <class T>
void partition_general(int threads, const T* data, int64_t n, const int64_t* kth, int64_t m, T* out,
                       int64_t* out_indices) {
  const std::vector<int64_t> ks(kth, kth + m);
  const splitters<T> sp(select_values(threads, data, n, ks));
  const int parts = parts_for(threads, n), nb = sp.buckets();
  const std::vector<int64_t> counts = count_buckets(sp, data, n, parts);
  std::vector<int64_t> start(static_cast<size_t>(nb), 0);
  for (int b = 0, at = 0; b < nb; ++b) {
    start[size_t(b)] = at;
    for (int p = 0; p < parts; ++p) at += counts[size_t(p) * nb + b];
  }
  const std::vector<int64_t> offsets = part_offsets(counts, parts, nb, start);
  if (out) scatter_buckets(sp, data, n, parts, offsets, [&](int64_t o, int64_t i) { out[o] = data[i]; });
  if (out_indices) scatter_buckets(sp, data, n, parts, offsets, [&](int64_t o, int64_t i) { out_indices[o] = i; });
}

#ifdef GSEARCH_SPLIT_AVX512
// Measured (C++ driver, 2^24 int32, one rank, two threads): partition 9.1 ms with plain stores,
// 6.8 streamed; 3 * 10^6 the same either way.
constexpr bool stream_sides = true;
// partition_one's pass on several threads with the sides' writes streamed: each thread gathers
// its left and right elements in L1 (a page's worth a side) and writes every full page to a
// 64-byte-aligned page of out claimed from that side's cursor by non-temporal stores (with
// plain stores each line of out is read before it is written: a third of the pass's traffic);
// the few left over (under a page a side and thread) then fill the holes at the sides' ends.
// *l: the left side's size, *size the middle's (in mid). False when the middle outgrew room.
template <class T>
bool partition_pass_streamed(const split_keys<T>& keys, const T* data, int64_t n, int parts, T* out, T* mid,
                             int64_t room, int64_t* l_out, int64_t* size_out) {
  constexpr int64_t page = 4096 / int64_t(sizeof(T));
  const auto align = [](const T* p) { return int64_t((64 - uintptr_t(p) % 64) % 64 / sizeof(T)); };
  const int64_t p0 = align(out), q0 = n - int64_t(uintptr_t(out + n) % 64 / sizeof(T));  // aligned ends
  std::atomic<int64_t> lo_pages{0}, hi_pages{0}, md{0}, left_total{0}, right_total{0};
  std::atomic<bool> overflow{false};
  std::vector<std::vector<T>> rest_lo(static_cast<size_t>(parts)), rest_hi(static_cast<size_t>(parts));
  for_parts(n, parts, [&](int p, int64_t begin, int64_t end) {
    alignas(64) T st_lo[2 * page], st_hi[2 * page], st_mid[2 * page];
    int64_t sl = 0, sh = 0, sm = 0, lt = 0, rt = 0;
    const auto flush_mid = [&] {
      const int64_t at = md.fetch_add(sm, std::memory_order_relaxed);
      if (at + sm > room) overflow.store(true, std::memory_order_relaxed);
      else std::memcpy(mid + at, st_mid, size_t(sm) * sizeof(T));
      sm = 0;
    };
    for (int64_t i = begin; i < end; i += page) {
      const int64_t len = std::min(page, end - i);
      T *pl = st_lo + sl, *pm = st_mid + sm, *ph = st_hi + 2 * page - sh;
      split_scatter(keys, data + i, len, pl, pm, ph);
      lt += (pl - st_lo) - sl;
      rt += (st_hi + 2 * page - ph) - sh;
      sl = pl - st_lo;
      sm = pm - st_mid;
      sh = st_hi + 2 * page - ph;
      if (sl >= page) {
        const int64_t j = lo_pages.fetch_add(1, std::memory_order_relaxed);
        stream_copy(out + p0 + j * page, st_lo, 4096);
        std::memmove(st_lo, st_lo + page, size_t(sl - page) * sizeof(T));
        sl -= page;
      }
      if (sh >= page) {
        const int64_t j = hi_pages.fetch_add(1, std::memory_order_relaxed);
        stream_copy(out + q0 - (j + 1) * page, st_hi + page, 4096);
        std::memmove(st_hi + 2 * page - (sh - page), st_hi + 2 * page - sh, size_t(sh - page) * sizeof(T));
        sh -= page;
      }
      if (sm >= page) flush_mid();
    }
    flush_mid();
    stream_fence();
    rest_lo[size_t(p)].assign(st_lo, st_lo + sl);
    rest_hi[size_t(p)].assign(st_hi + 2 * page - sh, st_hi + 2 * page);
    left_total.fetch_add(lt, std::memory_order_relaxed);
    right_total.fetch_add(rt, std::memory_order_relaxed);
  });
  const int64_t l = left_total.load(), r = right_total.load(), cl = lo_pages.load(), cr = hi_pages.load();
  // A middle under 64 elements: the pages that ran past the sides' ends may have met.
  if (overflow.load() || n - l - r < 64) return false;
  // Left: the pages fill [a, e); the rest, and what of the pages ran past l, fill [0, a) and [e, l).
  {
    const int64_t a = cl > 0 ? p0 : 0, e = a + cl * page;
    std::vector<T> fill;
    for (const auto& v : rest_lo) fill.insert(fill.end(), v.begin(), v.end());
    if (e > l) fill.insert(fill.end(), out + l, out + e);
    size_t f = 0;
    for (int64_t i = 0; i < a; ++i) out[i] = fill[f++];
    for (int64_t i = e; i < l; ++i) out[i] = fill[f++];
  }
  // Right, mirrored: the pages fill [b, q); the rest fill [q, n) and [n - r, b).
  {
    const int64_t q = cr > 0 ? q0 : n, b = q - cr * page;
    std::vector<T> fill;
    for (const auto& v : rest_hi) fill.insert(fill.end(), v.begin(), v.end());
    if (b < n - r) fill.insert(fill.end(), out + b, out + (n - r));
    size_t f = 0;
    for (int64_t i = q; i < n; ++i) out[i] = fill[f++];
    for (int64_t i = n - r; i < b; ++i) out[i] = fill[f++];
  }
  *l_out = l;
  *size_out = md.load();
  return true;
}
#endif

// numpy.partition with one kth into out (not data): the sample's bracket of k, then one pass in
// blocks that stay in L1: each block's left and right counts, a claim of that much room at the
// front and at the back of out (atomic cursors: the sides' order is free), the block written
// there and its middle to a buffer; then the middle partitioned into its place, recursively.
// One read and one write of the data, where counting first (exact offsets per part) read it
// twice.
template <class T>
void partition_one(int threads, const T* data, int64_t n, int64_t k, T* out, int depth) {
  if (n <= split_min || depth >= max_depth) {
    const int64_t c = copy_nan_last(data, n, out);
    if (k >= c) return;
    if (c <= split_min) {
      T tmp[split_min];
      small_nth_element(out, c, k, tmp);
    } else {
      std::nth_element(out, out + k, out + c, std::less<T>{});
    }
    return;
  }
  int64_t room = 0;
  const std::optional<split_keys<T>> keys = one_bracket(data, n, &k, 1, &room);
  if (!keys) {
    partition_general(threads, data, n, &k, 1, out, static_cast<int64_t*>(nullptr));
    return;
  }
  const int parts = thread_count(threads, n, split_per_thread);
  scratch<T> mid(room);
  if (parts == 1) {  // one thread: no counts, the sides written from out's two ends
    T *to_lo = out, *to_mid = mid.get(), *to_hi = out + n;
    for (int64_t i = 0; i < n; i += claim_block<T>) {
      const int64_t len = std::min(claim_block<T>, n - i);
      if ((to_mid - mid.get()) + len > room) {
        partition_general(threads, data, n, &k, 1, out, static_cast<int64_t*>(nullptr));
        return;
      }
      split_scatter(*keys, data + i, len, to_lo, to_mid, to_hi);
    }
    const int64_t l = to_lo - out, size = to_mid - mid.get();
    if (size == n || k < l || k >= l + size) {
      partition_general(threads, data, n, &k, 1, out, static_cast<int64_t*>(nullptr));
      return;
    }
    partition_one(threads, mid.get(), size, k - l, out + l, depth + 1);
    return;
  }
#ifdef GSEARCH_SPLIT_AVX512
  if (stream_sides && has_avx512()) {
    int64_t l = 0, size = 0;
    if (!partition_pass_streamed(*keys, data, n, parts, out, mid.get(), room, &l, &size) || size == n || k < l ||
        k >= l + size) {
      partition_general(threads, data, n, &k, 1, out, static_cast<int64_t*>(nullptr));
      return;
    }
    partition_one(threads, mid.get(), size, k - l, out + l, depth + 1);
    return;
  }
#endif
  std::atomic<int64_t> lo{0}, hi{n}, md{0};
  std::atomic<bool> overflow{false};
  for_parts(n, parts, [&](int, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i += claim_block<T>) {
      const int64_t len = std::min(claim_block<T>, end - i);
      int64_t l = 0, r = 0;
      const int64_t m = split_count_copy(*keys, data + i, len, &l, &r, static_cast<T*>(nullptr));
      T* to_lo = out + lo.fetch_add(l, std::memory_order_relaxed);
      T* to_hi = out + hi.fetch_sub(r, std::memory_order_relaxed);  // written down from here
      const int64_t at = md.fetch_add(m, std::memory_order_relaxed);
      if (at + m > room) {
        overflow.store(true, std::memory_order_relaxed);
        continue;
      }
      T* to_mid = mid.get() + at;
      split_scatter(*keys, data + i, len, to_lo, to_mid, to_hi);
    }
  });
  const int64_t l = lo.load(), size = md.load();
  if (overflow.load() || size == n || k < l || k >= l + size) {  // out is rewritten whole
    partition_general(threads, data, n, &k, 1, out, static_cast<int64_t*>(nullptr));
    return;
  }
  partition_one(threads, mid.get(), size, k - l, out + l, depth + 1);
}

template <class T>
void partition(int threads, const T* data, int64_t n, const int64_t* kth, int64_t m, T* out, int64_t* out_indices) {
  if (m > 0 && out && !out_indices && std::all_of(kth, kth + m, [&](int64_t k) { return k == kth[0]; })) {
    partition_one(threads, data, n, kth[0], out, 0);
    return;
  }
  if (n <= small_select || m * dense_ranks > n) {
    partition_small(data, n, kth, m, out, out_indices);
    return;
  }
  partition_general(threads, data, n, kth, m, out, out_indices);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_SELECT_OPS)

}  // namespace gsearch::cpu_backend
