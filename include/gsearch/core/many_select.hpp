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
/// ranks. The first slot is every key, binned over the extent of a sample (2^14 bins from its
/// least to its largest bits): where the keys' top bits crowd (floats in [0, 1), integers in
/// [0, 2^24)) the bins still split the data finely. An element finds its slot through one table
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

namespace gsearch::core {

/// The first pass's bins (64 KB of 32-bit counters in shared memory): fine enough that 100 ranks
/// of uniform float32 (half of it in one binary exponent) hold a few per cent of the data.
inline constexpr int many_first_bits = 14;
/// The most bins a pass counts (open slots x 2^bits).
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
  int32_t bits[many_max_levels + 1] = {};
  int32_t table_at[many_max_levels] = {};
  int32_t range_at[many_max_levels + 1] = {};
};

/// The bin that bits u count in, or -1 when it is in no open slot. `root`: the element's slot at
/// level 0 (0 for the data; for a copy, the slot stored beside it). Levels >= 0: the pass's level
/// count at compile time (p.levels == Levels), so that a kernel unrolls the walk and reads each
/// level's bits and offsets once (a run-time level loop read them from the parameters every
/// element: 3 of the first pass's 57 instructions a warp of elements, and its branches 11 more).
template <int Levels = -1, class U>
GSEARCH_HD GSEARCH_FORCEINLINE int many_bin(const many_pass& p, const int16_t* tables,
                                            const many_range<U>* ranges, U u, int root = 0) {
  const int levels = Levels >= 0 ? Levels : p.levels;
  int slot = root;
  const auto step = [&](int l) {
    slot =
        tables[p.table_at[l] + (slot << p.bits[l]) + many_bin_in(ranges[p.range_at[l] + slot], u, p.bits[l])];
    return slot >= 0;
  };
  if constexpr (Levels >= 0) {
    GSEARCH_UNROLL
    for (int l = 0; l < Levels; ++l)
      if (!step(l)) return -1;
  } else {
    for (int l = 0; l < levels; ++l)
      if (!step(l)) return -1;
  }
  return (slot << p.bits[levels]) + many_bin_in(ranges[p.range_at[levels] + slot], u, p.bits[levels]);
}

/// The planner (host): the open slots, each rank's slot and offset, the tables, the next pass.
/// `ranks`: ascending, distinct, in [0, n). [from, to]: the sample's least and largest bits (the
/// first slot's bins); `capacity`: the elements a copy may hold; `sort_max`: the most the caller
/// sorts at once (0: never).
template <class U>
class many_plan {
 public:
  many_plan(int64_t n, std::vector<int64_t> ranks, U from, U to, int64_t capacity, int64_t sort_max = 0)
      : ranks_(std::move(ranks)),
        offset_(ranks_),
        less_(ranks_.size(), 0),
        slot_(ranks_.size(), 0),
        answers_(ranks_.size(), U(0)),
        capacity_(capacity),
        sort_max_(sort_max),
        source_n_(n) {
    open_.push_back({U(0), U(~U(0)), std::min(from, to), std::max(from, to), n, 0});
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
      const many_range<U> r = range_of(parent, bits);
      U lo, hi;
      const int b = int(bin - first);
      if (b == 0) {
        lo = parent.lo;
        hi = U(r.base - 1);  // the bin has an element, so base > lo
      } else {
        lo = U(r.base + (U(b - 1) << r.shift));   // at most an element of the bin: no overflow
        const U last = U((U(1) << r.shift) - 1);  // a middle bin's width less one
        hi = b == per - 1 || U(parent.hi - lo) < last ? parent.hi : U(lo + last);
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
    U from, to;     // the extent its bins cover (lo, hi but in the first slot: the sample's)
    int64_t count;  // its elements
    int64_t bin;    // the bin it was counted in (while it is built)
  };
  int64_t open_total() const {
    int64_t total = 0;
    for (const slot_info& s : open_) total += s.count;
    return total;
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
    int bits = range_at_.empty() && !reads_copy_ ? many_first_bits : many_min_bits;
    while (int64_t(open_.size()) << (bits + 1) <= many_pass_bins && bits < many_first_bits) ++bits;
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
  many_pass pass_;
  int64_t capacity_, sort_max_;
  int64_t source_n_;
  bool copies_ = false, sorts_ = false, reads_copy_ = false, gave_up_ = false;
};

}  // namespace gsearch::core
