// The CPU's select of many ranks (select_detail::select_many): the radix passes of
// core/many_select.hpp, the planner the CUDA select runs (src/selection/cuda/many_select.cu), with
// a pass over contiguous parts of the source on all cores. Each part counts the bins in its own
// histogram (a run of equal bins one increment: a constant or sorted input does not serialise on
// one counter) and, in a copying pass, appends the elements it counts (with their slots) to its own
// copy; the histograms are summed and the copies joined for the planner. The last few thousand
// are sorted and read off. Where the sampled brackets of 100 ranks covered the data and recursed
// on nearly all of it (quantile of 100 q: 1.5-2.3x numpy at 2^24 on this 2-core EPYC).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/many_select.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/selection.hpp"  // sample_position
#include "selection/cpu_select.hpp"

namespace gsearch::cpu_backend::select_detail {

template <class T>
bool select_many(int threads, const T* data, int64_t n, const int64_t* ranks, int64_t m, T* values) {
  using U = core::radix_bits_t<T>;
  if (m == 0 || n <= 0 || m > selection_tuning::many_max_ranks) return false;
  // The first pass's bins from a sample's cells (core::many_plan: equi-depth in the sample).
  std::vector<uint32_t> counts;
  const core::many_cells<U> cells = core::many_sample_cells<U>(
      n, std::min<int64_t>(n, selection_tuning::many_sample),
      [&](int64_t i) { return core::radix_bits(data[i]); }, counts);
  core::many_plan<U> plan(n, std::vector<int64_t>(ranks, ranks + m), cells, counts,
                          std::max<int64_t>(n / selection_tuning::many_copy_fraction, 1),
                          selection_tuning::many_sort_max);
  std::vector<T> keys;          // the last copy
  std::vector<uint16_t> roots;  // its elements' slots
  std::vector<uint64_t> hist;
  while (!plan.done()) {
    if (plan.gave_up()) return false;
    const core::many_pass& p = plan.pass();
    const int16_t* tables = plan.tables().data();
    const core::many_range<U>* ranges = plan.ranges().data();
    const uint32_t* entries = plan.cell_entries().data();
    const bool from_copy = plan.reads_copy(), copying = plan.copies();
    const T* src = from_copy ? keys.data() : data;
    const int64_t len = plan.source_n();
    const int bits = p.bits[p.levels], parts = parts_for(threads, len);
    std::vector<std::vector<uint64_t>> part_hist(size_t(parts), std::vector<uint64_t>(size_t(p.bins), 0));
    std::vector<std::vector<T>> part_keys(copying ? size_t(parts) : 0);
    std::vector<std::vector<uint16_t>> part_roots(copying ? size_t(parts) : 0);
    for_parts(len, parts, [&](int part, int64_t begin, int64_t end) {
      uint64_t* h = part_hist[size_t(part)].data();
      int run_bin = -1;
      uint64_t run = 0;
      for (int64_t i = begin; i < end; ++i) {
        const int b = core::many_bin(p, tables, ranges, entries, core::radix_bits(src[i]),
                                     from_copy ? int(roots[size_t(i)]) : 0);
        if (b != run_bin) {
          if (run_bin >= 0) h[run_bin] += run;
          run_bin = b;
          run = 0;
        }
        ++run;
        if (copying && b >= 0) {
          part_keys[size_t(part)].push_back(src[i]);
          part_roots[size_t(part)].push_back(uint16_t(b >> bits));
        }
      }
      if (run_bin >= 0) h[run_bin] += run;
    });
    std::vector<T> next_keys;
    std::vector<uint16_t> next_roots;
    if (copying) {
      next_keys.reserve(size_t(plan.copied_count()));
      next_roots.reserve(size_t(plan.copied_count()));
      for (int part = 0; part < parts; ++part) {
        next_keys.insert(next_keys.end(), part_keys[size_t(part)].begin(), part_keys[size_t(part)].end());
        next_roots.insert(next_roots.end(), part_roots[size_t(part)].begin(), part_roots[size_t(part)].end());
      }
    }
    if (plan.sorts()) {  // the open slots' elements sorted, the ranks read off
      std::vector<U> bits_of(next_keys.size());
      for (size_t i = 0; i < next_keys.size(); ++i) bits_of[i] = core::radix_bits(next_keys[i]);
      std::sort(bits_of.begin(), bits_of.end());
      plan.finish_from(bits_of.data());
      break;
    }
    hist.assign(size_t(p.bins), 0);
    for (const std::vector<uint64_t>& h : part_hist)
      for (size_t b = 0; b < h.size(); ++b) hist[b] += h[b];
    plan.absorb(hist.data());
    if (copying) {
      keys = std::move(next_keys);
      roots = std::move(next_roots);
    }
  }
  for (int64_t k = 0; k < m; ++k) values[k] = core::from_radix_bits<T>(plan.answer(size_t(k)));
  return true;
}

#define GSEARCH_SELECT_MANY_INSTANTIATE(T) \
  template bool select_many<T>(int, const T*, int64_t, const int64_t*, int64_t, T*);
GSEARCH_KEY_TYPES(GSEARCH_SELECT_MANY_INSTANTIATE)
#undef GSEARCH_SELECT_MANY_INSTANTIATE

}  // namespace gsearch::cpu_backend::select_detail
