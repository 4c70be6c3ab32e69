// The CPU backend of the unsorted search: blocked scans on all cores over core/find.hpp's match,
// the study strategies as a simulated grid, and isin over a sorted copy or a hash set.

#include "find/backend.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "gsearch/core/pbs.hpp"
#include "cpu/parallel.hpp"
#include "cpu/tuning.hpp"

namespace gsearch::cpu_backend {
// block_elements, min_elements_per_thread, default_per_thread, group; lockstep: tuning.hpp
using namespace find_tuning;
namespace {

// core::match with its three flags as template arguments: the loops below are instantiated per
// combination, so g++ sees two plain comparisons per element and vectorizes them. (With the
// flags as data it kept selects in the loop: find_first ran at a third of count's speed.)
template <class T, bool LoOpen, bool HiOpen, bool Invert>
struct static_match {
  T lo, hi;
  bool operator()(T x) const {
    const bool above = LoOpen ? x > lo : x >= lo;
    const bool below = HiOpen ? x < hi : x <= hi;
    return (above & below) != Invert;
  }
};

// Calls f(static_match<...>{m.lo, m.hi}) for m's flags.
template <class T, class F>
decltype(auto) with_static_match(const core::match<T>& m, F&& f) {
  const int flags = int(m.lo_open) | int(m.hi_open) << 1 | int(m.invert) << 2;
  switch (flags) {
    case 0: return f(static_match<T, false, false, false>{m.lo, m.hi});
    case 1: return f(static_match<T, true, false, false>{m.lo, m.hi});
    case 2: return f(static_match<T, false, true, false>{m.lo, m.hi});
    case 3: return f(static_match<T, true, true, false>{m.lo, m.hi});
    case 4: return f(static_match<T, false, false, true>{m.lo, m.hi});
    case 5: return f(static_match<T, true, false, true>{m.lo, m.hi});
    case 6: return f(static_match<T, false, true, true>{m.lo, m.hi});
    default: return f(static_match<T, true, true, true>{m.lo, m.hi});
  }
}

// Matches in the group at g (g + group <= end), counted without branches.
template <class M, class T>
unsigned group_count(const M& m, const T* data, int64_t g) {
  unsigned c = 0;
  for (int64_t j = 0; j < group; ++j) c += m(data[g + j]);
  return c;
}

// The number of matches in data[begin, end): 32-bit sums per 2^16 elements (4 lanes per SSE
// register rather than the 2 of an int64 sum).
template <class M, class T>
int64_t count_range(const M& m, const T* data, int64_t begin, int64_t end) {
  int64_t total = 0;
  for (int64_t b = begin; b < end; b += int64_t{1} << 16) {
    const int64_t e = std::min(end, b + (int64_t{1} << 16));
    uint32_t c = 0;
    for (int64_t i = b; i < e; ++i) c += m(data[i]);
    total += c;
  }
  return total;
}

// The first match in data[begin, end), or end: the vectorized count of the whole range first
// (a loop with an exit every 16 or 256 elements ran at a third of count's speed), then the
// scalar search of a range that has one.
template <class M, class T>
int64_t first_in_range(const M& m, const T* data, int64_t begin, int64_t end) {
  if (count_range(m, data, begin, end) == 0) return end;
  for (int64_t i = begin;; ++i)
    if (m(data[i])) return i;
}

// Writes the matches of data[begin, end) in order to out; returns how many. In slices of 4,096:
// a byte flag per element first (a loop g++ vectorizes) and their sum; then a sparse slice reads
// the flags 8 at a time and walks the set bytes of the words that have one, a dense slice (more
// than 1 in 16) compacts without branches (each index written, kept when its flag is set).
// (Testing and writing in one loop, with a branch or a mask per 16 elements, ran at numpy's
// speed with 1% matches; walking the words alone was 3.6x slower than numpy at 50%.)
template <class M, class T>
int64_t write_range(const M& m, const T* data, int64_t begin, int64_t end, int64_t* out) {
  constexpr int64_t slice = 4096;
  alignas(64) uint8_t flags[slice];
  int64_t o = 0;
  for (int64_t b = begin; b < end; b += slice) {
    const int64_t len = std::min(slice, end - b);
    unsigned c = 0;
    for (int64_t i = 0; i < len; ++i) {
      flags[i] = m(data[b + i]);
      c += flags[i];
    }
    if (c == 0) continue;
    if (int64_t(c) * 16 > len) {
      int64_t k = 0;
      for (int64_t i = 0; i < len; ++i) {
        out[o + std::min<int64_t>(k, c - 1)] = b + i;  // never past the slice's c matches
        k += flags[i];
      }
      // The last write above may have overwritten match c - 1 with a later non-match: redo it.
      for (int64_t i = len - 1;; --i)
        if (flags[i]) {
          out[o + c - 1] = b + i;
          break;
        }
      o += c;
      continue;
    }
    for (int64_t i = len; i % 8 != 0; ++i) flags[i] = 0;
    for (int64_t w = 0; w < len; w += 8) {
      uint64_t word;
      std::memcpy(&word, flags + w, 8);
      for (; word; word &= word - 1) out[o++] = b + w + __builtin_ctzll(word) / 8;
    }
  }
  return o;
}

// The matches of data[begin, end) as bits, and their count: bit j of mask[w] is element
// begin + 64 w + j (the last word padded with zeros). Byte flags 64 at a time (the loop g++
// vectorizes, as write_range's), each 8 packed into a byte by one multiply (byte i's low bit to
// bit i).
template <class M, class T>
int64_t mask_range(const M& m, const T* data, int64_t begin, int64_t end, uint64_t* mask) {
  alignas(64) uint8_t flags[64];
  unsigned c = 0;
  for (int64_t b = begin, w = 0; b < end; b += 64, ++w) {
    if (end - b >= 64) {
      for (int i = 0; i < 64; ++i) flags[i] = m(data[b + i]);
    } else {
      for (int64_t i = 0; i < 64; ++i) flags[i] = b + i < end && m(data[b + i]);
    }
    uint64_t bits = 0;
    for (int k = 0; k < 8; ++k) {
      uint64_t x;
      std::memcpy(&x, flags + 8 * k, 8);
      bits |= ((x * 0x0102040810204080ull) >> 56) << (8 * k);
    }
    for (int i = 0; i < 64; ++i) c += flags[i];
    mask[w] = bits;
  }
  return int64_t(c);
}

// The index of the r-th match (0-based) in data[begin, end), which holds more than r matches.
template <class M, class T>
int64_t nth_in_range(const M& m, const T* data, int64_t begin, int64_t end, int64_t r) {
  for (int64_t i = begin; i < end; ++i)
    if (m(data[i]) && r-- == 0) return i;
  return end;  // unreachable when the precondition holds
}

int64_t blocks_of(int64_t n) { return (n + block_elements - 1) / block_elements; }

// first / any: each thread scans its own contiguous part in steps of 2^16 elements and stops at
// its first hit, or once a hit before its position (first) or any hit (any) is known. (Blocks
// handed out one at a time from a shared counter, interleaving the threads' reads, ran at half
// the speed of count: the hardware prefetcher lost the streams.)
template <class M, class T>
int64_t scan_first(int threads, const M& m, const T* data, int64_t n, bool any) {
  constexpr int64_t step = int64_t{1} << 16;
  std::atomic<int64_t> best{n};
  parallel_for(n, thread_count(threads, n, min_elements_per_thread), step, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; b += step) {
      const int64_t known = best.load(std::memory_order_relaxed);
      if (any ? known < n : known < b) return;
      const int64_t e = std::min(end, b + step);
      const int64_t hit = first_in_range(m, data, b, e);
      if (hit < e) {
        int64_t cur = best.load(std::memory_order_relaxed);
        while (hit < cur && !best.compare_exchange_weak(cur, hit, std::memory_order_relaxed)) {
        }
        return;
      }
    }
  });
  const int64_t b = best.load();
  return b < n ? b : -1;
}

// Matches per block, on all cores.
template <class M, class T>
std::vector<int64_t> block_counts(int threads, const M& m, const T* data, int64_t n) {
  std::vector<int64_t> counts(size_t(blocks_of(n)));
  parallel_for(int64_t(counts.size()), thread_count(threads, n, min_elements_per_thread), 1,
               [&](int64_t b0, int64_t b1) {
                 for (int64_t b = b0; b < b1; ++b)
                   counts[size_t(b)] = count_range(m, data, b * block_elements,
                                                   std::min(n, (b + 1) * block_elements));
               });
  return counts;
}

template <class M, class T>
int64_t scan_count(int threads, const M& m, const T* data, int64_t n) {
  const int workers = thread_count(threads, n, min_elements_per_thread);
  int64_t total = 0;
  std::vector<int64_t> per(size_t(workers), 0);
  const int64_t chunk = (n + workers - 1) / workers;
  parallel_for(workers, workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w)
      per[size_t(w)] = count_range(m, data, std::min(n, w * chunk), std::min(n, (w + 1) * chunk));
  });
  for (int64_t c : per) total += c;
  return total;
}

// find_random: the r-th match for r drawn from the seed, r uniform in [0, count).
template <class M, class T>
int64_t scan_random(int threads, const M& m, const T* data, int64_t n, uint64_t seed) {
  const std::vector<int64_t> counts = block_counts(threads, m, data, n);
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  if (total == 0) return -1;
  int64_t r = core::random_below(seed, total);
  for (size_t b = 0;; ++b) {
    if (r < counts[b]) {
      const int64_t begin = int64_t(b) * block_elements;
      return nth_in_range(m, data, begin, std::min(n, begin + block_elements), r);
    }
    r -= counts[b];
  }
}

// A study strategy as a simulated grid: thread t's steps e = 0..k-1 read
// core::strategy_element(s, t, e, k, threads); every element is read (the seed's kernels have no
// early exit). first / any keep the lowest hit, count counts.
template <class T>
int64_t simulate_strategy(int threads, find_mode mode, const core::match<T>& m, const T* data,
                          int64_t n, find_strategy s, int64_t k) {
  if (s == find_strategy::one_per_thread) k = 1;
  const int64_t grid = core::strategy_threads(n, k);
  std::atomic<int64_t> best{n}, total{0};
  parallel_for(grid, thread_count(threads, n, min_elements_per_thread), 1,
               [&](int64_t t0, int64_t t1) {
                 int64_t lo = n, c = 0;
                 for (int64_t t = t0; t < t1; ++t)
                   for (int64_t e = 0; e < k; ++e) {
                     const int64_t i = core::strategy_element(s, t, e, k, grid);
                     if (i < n && m(data[i])) {
                       lo = std::min(lo, i);
                       ++c;
                     }
                   }
                 total += c;
                 int64_t cur = best.load();
                 while (lo < cur && !best.compare_exchange_weak(cur, lo)) {
                 }
               });
  if (mode == find_mode::count) return total.load();
  return best.load() < n ? best.load() : -1;
}

// isin over sorted test elements: the branch-free search, 8 elements in lockstep (their key
// reads overlap), IEEE comparisons (core::sorted_members).
template <class T>
void isin_sorted(int threads, const T* elements, int64_t n, std::vector<T> tests, bool* out,
                 bool invert) {
  for (T& t : tests) t = core::canonical(t);
  std::sort(tests.begin(), tests.end(), [](T a, T b) { return key_less(a, b); });
  tests.erase(std::unique(tests.begin(), tests.end(), [](T a, T b) { return a == b; }),
              tests.end());
  // NaN test elements sort last, and unique keeps them (NaN != NaN): drop them, they match nothing.
  if constexpr (std::is_floating_point_v<T>)
    while (!tests.empty() && std::isnan(tests.back())) tests.pop_back();
  const int64_t k = int64_t(tests.size());
  if (k == 0) {
    std::fill(out, out + n, invert);
    return;
  }
  const core::padded_accessor<T> acc{tests.data()};  // binary reads only [0, k)
  parallel_for(n, thread_count(threads, n, min_elements_per_thread / 4), lockstep,
               [&](int64_t begin, int64_t end) {
                 int64_t i = begin;
                 for (; i + lockstep <= end; i += lockstep) {
                   T x[lockstep];
                   bool member[lockstep];
                   for (int j = 0; j < lockstep; ++j) x[j] = elements[i + j];
                   core::sorted_members<algorithm::binary>(acc, k, x, 0, member);
                   for (int j = 0; j < lockstep; ++j) out[i + j] = member[j] != invert;
                 }
                 for (; i < end; ++i) {
                   const T x[1] = {elements[i]};
                   bool member[1];
                   core::sorted_members<algorithm::binary>(acc, k, x, 0, member);
                   out[i] = member[0] != invert;
                 }
               });
}

// isin through core::hash_set_view, built here as the GPU builds it (one key at a time).
template <class T>
void isin_hash(int threads, const T* elements, int64_t n, const T* tests, int64_t m, bool* out,
               bool invert) {
  using set = core::hash_set_view<T>;
  std::vector<T> slots(size_t(core::hash_set_capacity(m)), set::empty_key());
  set view{slots.data(), uint64_t(slots.size()) - 1, false};
  for (int64_t j = 0; j < m; ++j) {
    const T x = core::canonical(tests[j]);
    if (view.answer_without_probe(x) >= 0) {  // a NaN (never a member) or the empty bits
      if constexpr (!std::is_floating_point_v<T>) view.holds_empty_key = true;
      continue;
    }
    for (uint64_t s = view.home(x);; s = (s + 1) & view.mask) {
      if (set::is_empty(slots[s])) {
        slots[s] = x;
        break;
      }
      if (slots[s] == x) break;
    }
  }
  const auto load = [](const T* p) { return *p; };
  parallel_for(n, thread_count(threads, n, min_elements_per_thread / 4), 1,
               [&](int64_t begin, int64_t end) {
                 for (int64_t i = begin; i < end; ++i)
                   out[i] = view.contains(elements[i], load) != invert;
               });
}

}  // namespace

template <class T>
void find(int threads, find_mode mode, const T* data, int64_t n, const predicate<T>& pred,
          find_strategy strategy, int64_t per_thread, uint64_t seed, int64_t* result) {
  const core::match<T> m = core::make_match(pred);
  if (strategy != find_strategy::auto_) {
    *result = n == 0 ? (mode == find_mode::count ? 0 : -1)
                     : simulate_strategy(threads, mode, m, data, n, strategy,
                                         per_thread > 0 ? per_thread : default_per_thread);
    return;
  }
  *result = with_static_match(m, [&](const auto& sm) -> int64_t {
    switch (mode) {
      case find_mode::first: return scan_first(threads, sm, data, n, false);
      case find_mode::any: return scan_first(threads, sm, data, n, true);
      case find_mode::random: return scan_random(threads, sm, data, n, seed);
      case find_mode::count: break;
    }
    return scan_count(threads, sm, data, n);
  });
}

// find_all in two passes. The first counts each block's matches and keeps them as bits (n / 8
// bytes); the second writes each block's indices at its offset, from the bits where the block is
// sparse (no second read of the data from memory: with 1% matching every block has some, and the
// data was read twice), from the data again where it is dense (more than 1 in 16: write_range's
// branch-free compaction beats walking the bits). Making the bits costs more than counting
// (2^26 int32 on 2 cores, no match: 19 ms against the count's 13), so a block after one without
// matches is counted first and its bits made only if it has some (from cache), and a block after
// one with matches gets its bits at once (counting first and then making them cost 37 ms at 1%
// matching, against 20).
template <class T>
int64_t find_all(int threads, const T* data, int64_t n, const predicate<T>& pred,
                 const std::function<int64_t*(int64_t)>& allocate) {
  return with_static_match(core::make_match(pred), [&](const auto& m) -> int64_t {
    constexpr int64_t words_per_block = block_elements / 64;
    static_assert(block_elements % 64 == 0, "whole mask words a block");
    const int64_t blocks = blocks_of(n);
    const std::unique_ptr<uint64_t[]> mask(new uint64_t[size_t(std::max<int64_t>(blocks, 1) * words_per_block)]);
    std::vector<int64_t> offsets(static_cast<size_t>(blocks), 0);
    const int workers = thread_count(threads, n, min_elements_per_thread);
    parallel_for(blocks, workers, 1, [&](int64_t b0, int64_t b1) {
      bool matched = false;  // the block before had matches
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t begin = b * block_elements, end = std::min(n, begin + block_elements);
        uint64_t* const words = mask.get() + b * words_per_block;
        int64_t c = matched ? mask_range(m, data, begin, end, words) : count_range(m, data, begin, end);
        if (!matched && c > 0 && c * 16 <= end - begin) mask_range(m, data, begin, end, words);
        offsets[size_t(b)] = c;
        matched = c > 0;
      }
    });
    int64_t total = 0;
    for (int64_t& c : offsets) total += std::exchange(c, total);  // exclusive prefix sum
    int64_t* out = allocate(total);
    if (total == 0) return 0;
    parallel_for(blocks, workers, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t o = offsets[size_t(b)], c = (b + 1 < blocks ? offsets[size_t(b + 1)] : total) - o;
        if (c == 0) continue;
        const int64_t begin = b * block_elements, end = std::min(n, begin + block_elements);
        if (c * 16 > end - begin) {
          write_range(m, data, begin, end, out + o);
          continue;
        }
        int64_t* to = out + o;
        const uint64_t* words = mask.get() + b * words_per_block;
        for (int64_t w = 0; w * 64 < end - begin; ++w)
          for (uint64_t bits = words[w]; bits; bits &= bits - 1) *to++ = begin + 64 * w + __builtin_ctzll(bits);
      }
    });
    return total;
  });
}

template <class T>
void isin(int threads, const T* elements, int64_t n, const T* tests, int64_t m, bool* out,
          bool invert, int method) {
  if (n == 0) return;
  if (isin_method(method) == isin_method::hash)
    return isin_hash(threads, elements, n, tests, m, out, invert);
  isin_sorted(threads, elements, n, std::vector<T>(tests, tests + m), out, invert);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_FIND_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_ISIN_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_FIND_CPU_OPS)

}  // namespace gsearch::cpu_backend
