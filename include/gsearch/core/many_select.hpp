#pragma once
/// \file
/// The select of many ranks at once (issue 41: 100 quantiles, `partition` with 100 kth): a radix
/// select whose passes narrow every rank together, with no sort of the data. The CUDA select runs
/// it (src/selection/cuda/many_select.cu, one kernel a pass and this planner on the host between
/// passes); core_many_select_test drives the same planner over host passes.
///
/// Between passes each rank lies in an open slot: a range [lo, hi] of the keys' radix bits
/// (radix_bits.hpp: equal keys equal bits, the key order the bits' order) and the rank's offset
/// among the elements in it. A pass counts, for every element in an open slot, its bin in the
/// slot (2^bits bins a slot, slots x 2^bits at most many_pass_bins): the middle bins 2^shift
/// bits wide from the slot's base, the first and the last whatever lies below and past them
/// (radix_select.hpp's bins, with the bins a parameter). The planner then finds each rank's bin;
/// the bins that hold a rank become the next open slots, and a bin of one value answers its
/// ranks. The first slot is every key, binned by a sample (2^13 bins): its extent is cut into at
/// most 1,024 cells and each cell given 2^k bins by its share of the sample, so the bins are
/// about equally full whatever the distribution (normal floats, whose bits crowd unevenly, left
/// 35% of the data open after a first pass uniform over the extent; these ~2%), and where the
/// keys' top bits crowd (floats in [0, 1), integers in [0, 2^24)) they still split the data
/// finely. An element finds its slot through one table
/// a level: level l's table maps (the element's slot at level l - 1, its bin there) to its slot
/// at level l, or -1 where no rank is: a range and a table entry in shared memory a level, where
/// the sampled buckets' binary search of 2m splitters took log2(2m) dependent loads and 100 ranks'
/// brackets, +-4 standard deviations of the sample each, covered the whole data
/// (docs/perf-notes.md, the fourteenth session).
///
/// Once the open slots hold few elements (at most the copy's capacity and a third of the pass's
/// source), the next pass also copies the elements it counts, each with its slot beside it,
/// and the passes after it read that copy, walking only the tables made after it. Once they hold
/// no more than one block sorts (`sort_max`), the next pass's copy is sorted instead and every
/// open rank read off it (finish_from). A constant input is answered by its first pass (its bin of
/// one value), uniform 4-byte keys in two reads of the data and a sort of a few thousand.

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "gsearch/core/config.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/selection.hpp"  // sample_position

namespace gsearch::core {

/// The first pass's bins (32 KB of 32-bit counters in shared memory), equi-depth in a sample
/// (many_cells): 100 quantiles' 199 ranks hold ~2% of normal, uniform, lognormal float32 or
/// uniform int32 after it (bench/results/cpu/issue41/many_first_bins_cells.py models it: 2^14
/// bins uniform over the sample's extent left 35% of normal float32 open, 3.2% of uniform; 2^14
/// bins by the cells would leave ~1%, at twice the shared memory: docs/perf-notes.md).
inline constexpr int many_first_bits = 13;
/// The most cells the sample's extent is cut into (each given 2^k of the first pass's bins by its
/// share of the sample; a 32-bit entry a cell in shared memory).
inline constexpr int many_max_cells = 1024;
/// The most bins a pass after the first counts (open slots x 2^bits; 64 KB of counters).
inline constexpr int64_t many_pass_bins = int64_t(1) << 14;
/// The fewest bins a slot has (2^3: 6 middle bins): many_select_max_ranks keeps it there.
inline constexpr int many_min_bits = 3;
/// The most levels a pass walks: 8-byte keys narrow 2.5 bits a level at 2,048 open slots.
inline constexpr int many_max_levels = 32;

/// A slot's bins: the middle ones 2^shift wide from base (a kernel reads these).
template <class U>
struct many_range {
  U base = 0;
  int32_t shift = 0;
};

/// The bin of bits u among 2^bits bins of r (u at or above the slot's lo: below base only in
/// the first slot, whose base is the sample's least).
template <class U>
GSEARCH_HD GSEARCH_FORCEINLINE int many_bin_in(const many_range<U>& r, U u, int bits) {
  if (u < r.base) return 0;
  const U q = U(U(u - r.base) >> r.shift);
  const int last = (1 << bits) - 1;
  return q < U(last - 1) ? int(q) + 1 : last;
}

/// A pass as its kernel reads it (a kernel parameter): `levels` levels walked through their
/// tables, then level `levels` counted into bins (slot << bits[levels]) + bin, `bins` of them.
/// Level l's slots' ranges begin at range_at[l], its table at table_at[l].
struct many_pass {
  int32_t levels = 0;
  int32_t bins = 0;
  int32_t table_entries = 0;     ///< the tables' 16-bit entries in all
  int32_t range_entries = 0;     ///< the ranges in all
  int32_t tables_in_shared = 0;  ///< tables and ranges staged in shared memory (else read from global)
  /// The pass reads the data: level 0 is the first pass's, its bins by the sample's cells
  /// (many_first_bin: cell_count entries, cell c covering the bits from cell_from + c << cell_shift,
  /// first_bins bins in all), not by a range.
  int32_t mapped = 0;
  int32_t cell_shift = 0, cell_count = 0, first_bins = 0;
  uint64_t cell_from = 0;
  int32_t bits[many_max_levels + 1] = {};
  int32_t table_at[many_max_levels] = {};
  int32_t range_at[many_max_levels + 1] = {};
};

/// The first pass's bin of bits u: 0 below the sample's least, first_bins - 1 past its cells,
/// else its cell's first bin plus its place among the cell's 2^k bins. entries[c]: the cell's
/// first bin (low 16 bits) and the width of each of its bins, log2 (high 16).
template <class U>
GSEARCH_HD GSEARCH_FORCEINLINE int many_first_bin(const many_pass& p, const uint32_t* entries, U u) {
  const U from = U(p.cell_from);
  if (u < from) return 0;
  const U d = U(u - from), c = U(d >> p.cell_shift);
  if (c >= U(p.cell_count)) return p.first_bins - 1;
  const uint32_t e = entries[c];
  return int(e & 0xffffu) + int(U(d - U(c << p.cell_shift)) >> (e >> 16));
}

/// The bin that bits u count in, or -1 when it is in no open slot. `root`: the element's slot at
/// level 0 (0 for the data; for a copy, the slot stored beside it). Levels >= 0: the pass's level
/// count at compile time (p.levels == Levels), so that a kernel unrolls the walk and reads each
/// level's bits and offsets once (a run-time level loop read them from the parameters every
/// element: 3 of the first pass's 57 instructions a warp of elements, and its branches 11 more).
/// `entries`: the first pass's cells (read where p.mapped).
template <int Levels = -1, class U>
GSEARCH_HD GSEARCH_FORCEINLINE int many_bin(const many_pass& p, const int16_t* tables,
                                            const many_range<U>* ranges, const uint32_t* entries, U u,
                                            int root = 0) {
  const int levels = Levels >= 0 ? Levels : p.levels;
  int slot = root;
  // Level l's bin of u in `slot` (level 0 by the cells where the pass reads the data).
  const auto bin_at = [&](int l, bool mapped) {
    return mapped ? many_first_bin(p, entries, u) : many_bin_in(ranges[p.range_at[l] + slot], u, p.bits[l]);
  };
  const auto step = [&](int l, bool mapped) {
    slot = tables[p.table_at[l] + (slot << p.bits[l]) + bin_at(l, mapped)];
    return slot >= 0;
  };
  if constexpr (Levels >= 0) {
    GSEARCH_UNROLL
    for (int l = 0; l < Levels; ++l)
      if (!step(l, l == 0 && p.mapped)) return -1;
  } else {  // (level 0 apart: the loop's levels are all ranges')
    int l = 0;
    if (levels > 0 && p.mapped) {
      if (!step(0, true)) return -1;
      l = 1;
    }
    for (; l < levels; ++l)
      if (!step(l, false)) return -1;
  }
  return (slot << p.bits[levels]) + bin_at(levels, levels == 0 && p.mapped);
}

/// The first pass's cells: the sample's extent [from, to] cut into at most many_max_cells cells
/// of 2^shift bits; `count` their number. many_sample_cells finds them and each cell's elements
/// of the sample, what the planner takes (the CUDA select counts them on the device the same way).
template <class U>
struct many_cells {
  U from = 0;
  int32_t shift = 0, count = 1;
  static GSEARCH_HD many_cells over(U from, U to) {
    many_cells c;
    c.from = from < to ? from : to;
    const U width = U((from < to ? to : from) - c.from);
    while (U(width >> c.shift) >= U(many_max_cells)) ++c.shift;
    c.count = int32_t(U(width >> c.shift)) + 1;
    return c;
  }
  /// Bits u's cell (u in [from, to]).
  GSEARCH_HD int of(U u) const { return int(U(U(u - from) >> shift)); }
};

/// The sample at core::sample_position (s of n elements, `read(i)` the radix bits of element i):
/// its cells and each cell's elements of it, the first pass's input to many_plan.
template <class U, class Read>
many_cells<U> many_sample_cells(int64_t n, int64_t s, Read read, std::vector<uint32_t>& counts) {
  U from = U(~U(0)), to = U(0);
  std::vector<U> sample(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) {
    const U u = read(sample_position(i, s, n));
    sample[size_t(i)] = u;
    from = u < from ? u : from;
    to = u > to ? u : to;
  }
  const many_cells<U> cells = many_cells<U>::over(from, to);
  counts.assign(size_t(cells.count), 0);
  for (const U u : sample) ++counts[size_t(cells.of(u))];
  return cells;
}

/// The planner (host): the open slots, each rank's slot and offset, the tables, the next pass.
/// `ranks`: ascending, distinct, in [0, n). `cells`, `counts`: the first pass's cells and each
/// one's elements of the sample (many_sample_cells): each cell gets 2^k of the first pass's bins,
/// 2^k about its share of the sample, so that the bins are about equally full whatever the
/// distribution; `capacity`: the elements a copy may hold; `sort_max`: the most the caller sorts
/// at once (0: never).
template <class U>
class many_plan {
 public:
  many_plan(int64_t n, std::vector<int64_t> ranks, many_cells<U> cells, const std::vector<uint32_t>& counts,
            int64_t capacity, int64_t sort_max = 0)
      : ranks_(std::move(ranks)),
        offset_(ranks_),
        less_(ranks_.size(), 0),
        slot_(ranks_.size(), 0),
        answers_(ranks_.size(), U(0)),
        cells_(cells),
        capacity_(capacity),
        sort_max_(sort_max),
        source_n_(n) {
    place_first_bins(counts);
    open_.push_back({U(0), U(~U(0)), cells_.from, cells_.from, n, 0});
    plan_next();
  }

  /// Every rank answered.
  bool done() const { return open_.empty(); }
  /// The tables would pass max_table_entries or the levels many_max_levels, or a pass's counts
  /// did not add up to its slots' (the caller selects another way).
  bool gave_up() const { return gave_up_; }
  /// The next pass, its tables and ranges (every level's, concatenated: what pass() indexes), and
  /// whether it copies the elements it counts (the open slots' elements: copied_count()).
  const many_pass& pass() const { return pass_; }
  const std::vector<int16_t>& tables() const { return tables_; }
  const std::vector<many_range<U>>& ranges() const { return ranges_; }
  /// The first pass's cells' entries (many_first_bin reads them; the same for every pass).
  const std::vector<uint32_t>& cell_entries() const { return entries_; }
  bool copies() const { return copies_; }
  int64_t copied_count() const { return open_total(); }
  /// The tables' entries that are new since the last pass (the caller uploads tables()[from, end)).
  int64_t new_tables_from() const { return table_at_.empty() ? 0 : table_at_.back(); }
  /// The most ranges a pass has (a walked level's slots, at most many_pass_bins / 2^many_min_bits).
  static constexpr int64_t max_ranges = int64_t(many_max_levels + 1) * (many_pass_bins >> many_min_bits);
  /// The next pass's copy (it copies) is to be sorted and passed to finish_from in place of the
  /// pass's counts.
  bool sorts() const { return sorts_; }
  /// The next pass's source: the data (false) or the last copy, of source_n() elements, each with
  /// its slot at level 0 stored beside it (bin >> the counted level's bits in the pass that
  /// copied it): a copy's passes walk only the levels made after it.
  bool reads_copy() const { return reads_copy_; }
  int64_t source_n() const { return source_n_; }

  /// The pass's counts (pass().bins of them): each open rank's bin and offset in it, the ranks
  /// answered (a bin of one value), the next open slots and the next pass.
  template <class Count>
  void absorb(const Count* hist) {
    const int bits = pass_.bits[pass_.levels];
    const int64_t per = int64_t(1) << bits;
    std::vector<slot_info> next;
    std::vector<int16_t> table(open_.size() << bits, int16_t(-1));
    int64_t bin = -1, used = 0;  // the last rank's bin, and its slot's counts before its offset
    for (size_t k = 0; k < ranks_.size(); ++k) {
      if (slot_[k] < 0) continue;                       // answered
      const int64_t first = int64_t(slot_[k]) << bits;  // the slot's bin 0
      if (bin < first) {  // the first open rank of its slot (ranks and slots both ascend)
        bin = first;
        used = 0;
      }
      int64_t offset = offset_[k] - used;
      while (offset >= int64_t(hist[bin])) {  // the slot holds the rank: this ends inside its bins
        if (bin + 1 == first + per) {         // counts that do not add up: never answer wrong
          gave_up_ = true;
          return;
        }
        offset -= int64_t(hist[bin]);
        used += int64_t(hist[bin]);
        ++bin;
      }
      const slot_info& parent = open_[size_t(bin >> bits)];
      U lo, hi;
      const int b = int(bin - first);
      if (pass_.mapped && pass_.levels == 0) {
        first_bin_keys(b, lo, hi);
      } else {
        const many_range<U> r = range_of(parent, bits);
        if (b == 0) {
          lo = parent.lo;
          hi = U(r.base - 1);  // the bin has an element, so base > lo
        } else {
          lo = U(r.base + (U(b - 1) << r.shift));   // at most an element of the bin: no overflow
          const U last = U((U(1) << r.shift) - 1);  // a middle bin's width less one
          hi = b == per - 1 || U(parent.hi - lo) < last ? parent.hi : U(lo + last);
        }
      }
      if (lo == hi) {  // one value: the rank's answer
        answers_[k] = lo;
        less_[k] = ranks_[k] - offset;
        slot_[k] = -1;
        continue;
      }
      if (next.empty() || next.back().bin != bin) {
        table[size_t(bin)] = int16_t(next.size());
        next.push_back({lo, hi, lo, hi, int64_t(hist[bin]), bin});
      }
      slot_[k] = int32_t(next.size() - 1);
      offset_[k] = offset;
    }
    if (copies_) {  // the copy's elements carry their slots: the levels begin again from them
      reads_copy_ = true;
      source_n_ = open_total();
      ranges_.erase(ranges_.begin(), ranges_.begin() + pass_.range_at[pass_.levels]);
      level_bits_.clear();
      table_at_.clear();
      range_at_.clear();
      tables_.clear();
    }
    level_bits_.push_back(bits);
    table_at_.push_back(int32_t(tables_.size()));
    range_at_.push_back(copies_ ? 0 : pass_.range_at[pass_.levels]);
    tables_.insert(tables_.end(), table.begin(), table.end());
    open_ = std::move(next);
    if (!done()) plan_next();
  }

  /// The bits of the open slots' elements, sorted (copied_count() of them, when sorts()): every
  /// open rank's answer and the elements under it read off. The open slots are disjoint ranges of
  /// the keys in order, so a rank's place among them is its slot's elements before it plus its
  /// offset.
  void finish_from(const U* sorted) {
    int64_t before = 0;  // the elements of the open slots before rank k's
    size_t slot = 0;
    for (size_t k = 0; k < ranks_.size(); ++k) {
      if (slot_[k] < 0) continue;
      for (; slot < size_t(slot_[k]); ++slot) before += open_[slot].count;
      const U* first = sorted + before;
      const U answer = first[offset_[k]];
      const int64_t under = std::lower_bound(first, first + offset_[k], answer) - first;
      answers_[k] = answer;
      less_[k] = ranks_[k] - offset_[k] + under;  // under the slot, and of it under the answer
      slot_[k] = -1;
    }
    open_.clear();
  }

  /// Once done: rank k's answer (its radix bits) and the elements under it.
  U answer(size_t k) const { return answers_[k]; }
  int64_t less(size_t k) const { return less_[k]; }
  size_t size() const { return ranks_.size(); }

  /// The tables' entries and the ranges that fit in shared memory beside the bins (64 KB of
  /// 16-bit entries); past them the plan copies (the tables begin again at the copy) where the
  /// copy may hold the open slots, and the kernel reads them from global memory where it may not;
  /// past max_table_entries it gives up.
  static constexpr int64_t shared_table_entries = int64_t(1) << 15;
  static constexpr int64_t max_table_entries = int64_t(1) << 22;
  static constexpr int key_bits = int(8 * sizeof(U));

 private:
  struct slot_info {
    U lo, hi;       // the keys in it
    U from, to;     // the extent its bins cover (lo, hi; the first slot's bins are the cells')
    int64_t count;  // its elements
    int64_t bin;    // the bin it was counted in (while it is built)
  };
  int64_t open_total() const {
    int64_t total = 0;
    for (const slot_info& s : open_) total += s.count;
    return total;
  }
  // Each cell's bins: 2^k, k = floor(log2(its share of the sample x the bins)) (at least one bin,
  // at most one a value), the largest k lowered until they fit; bin 0 below the cells, the last
  // past them.
  void place_first_bins(const std::vector<uint32_t>& counts) {
    const int cells = cells_.count, budget = (1 << many_first_bits) - 2;
    uint64_t sample = 0;
    for (int c = 0; c < cells; ++c) sample += c < int(counts.size()) ? counts[size_t(c)] : 0u;
    std::vector<int> k(size_t(cells), 0);
    int64_t used = 0;
    for (int c = 0; c < cells; ++c) {
      const double share =
          sample && c < int(counts.size()) ? double(counts[size_t(c)]) * budget / double(sample) : 0;
      while (k[size_t(c)] < cells_.shift && double(int64_t(2) << k[size_t(c)]) <= share) ++k[size_t(c)];
      used += int64_t(1) << k[size_t(c)];
    }
    while (used > budget) {  // (cells <= budget / 2: every k can reach 0)
      const auto top = std::max_element(k.begin(), k.end());
      used -= int64_t(1) << (*top - 1);
      --*top;
    }
    entries_.resize(size_t(cells));
    first_bin_.resize(size_t(cells) + 1);
    int at = 1;
    for (int c = 0; c < cells; ++c) {
      first_bin_[size_t(c)] = at;
      entries_[size_t(c)] = uint32_t(at) | uint32_t(cells_.shift - k[size_t(c)]) << 16;
      at += 1 << k[size_t(c)];
    }
    first_bin_[size_t(cells)] = at;
    first_bins_ = at + 1;
  }
  // The keys of the first pass's bin b: below the cells, a cell's bin, past the cells (a bin
  // that holds a rank holds an element, so its bounds do not wrap).
  void first_bin_keys(int b, U& lo, U& hi) const {
    if (b == 0) {
      lo = U(0);
      hi = U(cells_.from - 1);
      return;
    }
    const int c = int(std::upper_bound(first_bin_.begin(), first_bin_.end(), b) - first_bin_.begin()) - 1;
    if (c >= cells_.count) {
      lo = U(cells_.from + U(U(cells_.count - 1) << cells_.shift) + (U(1) << cells_.shift));
      hi = U(~U(0));
      return;
    }
    const int width = int(entries_[size_t(c)] >> 16);
    lo = U(cells_.from + U(U(c) << cells_.shift) + U(U(b - first_bin_[size_t(c)]) << width));
    hi = U(lo + U((U(1) << width) - 1));
  }
  // The slot's bins at `bits`: the middle ones as fine as fit [from, to].
  static many_range<U> range_of(const slot_info& s, int bits) {
    const U width = U(s.to - s.from);
    const U middle =
        U((U(1) << (bits < key_bits ? bits : key_bits - 1)) - 3);  // 2^bits - 2 middle bins, less one
    int shift = 0;
    while (U(width >> shift) > middle) ++shift;
    return {s.from, shift};
  }
  // The next pass: bins as fine as the budget allows, the open slots' ranges, whether it copies.
  void plan_next() {
    const bool first_pass = range_at_.empty() && !reads_copy_;
    int bits = first_pass ? many_first_bits : many_min_bits;
    while (!first_pass && int64_t(open_.size()) << (bits + 1) <= many_pass_bins) ++bits;
    pass_ = many_pass{};
    pass_.levels = int32_t(level_bits_.size());
    if (pass_.levels > many_max_levels - 1 || int64_t(tables_.size()) > max_table_entries ||
        int64_t(open_.size()) << bits > many_pass_bins) {
      gave_up_ = true;
      return;
    }
    // The counted level's ranges after the walked levels' (ranges_ holds exactly those).
    const auto counted_at = int32_t(ranges_.size());
    for (const slot_info& s : open_) ranges_.push_back(range_of(s, bits));
    for (int l = 0; l < pass_.levels; ++l) {
      pass_.bits[l] = level_bits_[size_t(l)];
      pass_.table_at[l] = table_at_[size_t(l)];
      pass_.range_at[l] = range_at_[size_t(l)];
    }
    pass_.bits[pass_.levels] = bits;
    pass_.range_at[pass_.levels] = counted_at;
    if (!reads_copy_) {  // level 0 is the first pass's (bins by the cells)
      pass_.mapped = 1;
      pass_.cell_from = uint64_t(cells_.from);
      pass_.cell_shift = cells_.shift;
      pass_.cell_count = cells_.count;
      pass_.first_bins = first_bins_;
    }
    pass_.bins = int32_t(int64_t(open_.size()) << bits);
    pass_.table_entries = int32_t(tables_.size());
    pass_.range_entries = int32_t(ranges_.size());
    const int64_t shared_entries =
        int64_t(tables_.size()) + int64_t(ranges_.size()) * int64_t(sizeof(many_range<U>)) / 2;
    pass_.tables_in_shared = shared_entries <= shared_table_entries;
    // Copy what this pass counts where that is few (or where the tables after it would pass their
    // room: the copy begins them again); sort it where it is fewer still.
    const int64_t total = open_total();
    const bool tables_full = shared_entries + (int64_t(open_.size()) << bits) > shared_table_entries;
    const bool first = pass_.levels == 0 && !reads_copy_;
    sorts_ = !first && total <= sort_max_ && total <= capacity_;
    copies_ = sorts_ || (!first && total <= capacity_ && (3 * total <= source_n_ || tables_full));
  }
  std::vector<int64_t> ranks_, offset_, less_;
  std::vector<int32_t> slot_;  // the rank's open slot, -1 once answered
  std::vector<U> answers_;
  std::vector<slot_info> open_;
  std::vector<int32_t> level_bits_, table_at_, range_at_;  // the walked levels
  std::vector<int16_t> tables_;
  std::vector<many_range<U>> ranges_;
  many_cells<U> cells_;
  std::vector<uint32_t> entries_;  // the cells' (many_first_bin)
  std::vector<int> first_bin_;     // each cell's first bin, then the past bin
  int first_bins_ = 0;
  many_pass pass_;
  int64_t capacity_, sort_max_;
  int64_t source_n_;
  bool copies_ = false, sorts_ = false, reads_copy_ = false, gave_up_ = false;
};

}  // namespace gsearch::core
