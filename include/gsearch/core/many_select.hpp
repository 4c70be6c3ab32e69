#pragma once
/// \file
/// The select of many ranks at once (issue 41: 100 quantiles, `partition` with 100 kth): a radix
/// select whose passes narrow every rank together, with no sort of the data. The CUDA select runs
/// it (src/selection/cuda/many_select.cu, one kernel a pass and this planner on the host between
/// passes); core_many_select_test drives the same planner over host passes.
///
/// The keys' radix bits (radix_bits.hpp: equal keys equal bits, the key order the bits' order) are
/// read from the top, one digit a pass. Between passes each rank lies in an open slot: a prefix of
/// the bits (the digits read so far) held by the rank's element, and the rank's offset among the
/// elements with that prefix. A pass counts, for every element whose prefix is an open slot's, the
/// next digit in that slot's bins (slots x 2^bits bins, at most many_pass_bins); the planner then
/// finds each rank's bin, and the bins that hold a rank become the next open slots. An element
/// finds its slot through one table a level: level l's table maps (the element's slot at level
/// l - 1, its digit l) to its slot at level l, or -1 where no rank is: one shared-memory load a
/// level, where the sampled buckets' binary search of 2m splitters took log2(2m) dependent ones and
/// 100 ranks' brackets, +-4 standard deviations of the sample each, covered the whole data
/// (docs/perf-notes.md, the fourteenth session). A copy stores each element's slot beside it, so
/// the passes over a copy walk only the tables made after it (the tables stay within shared
/// memory however many digits the keys have).
///
/// The first digit is 11 bits; a later one as wide as the bins allow for the open slots (one slot
/// a distinct bin holding ranks: 100 ranks leave 7 bits or more), so 4-byte keys close in 3-5
/// passes. Once the open slots hold few elements (at most the copy's capacity and a quarter of the
/// pass's source), the next pass also copies the elements it counts, and the passes after it read
/// that copy: uniform int32 reads the data twice, uniform float32 (whose top bits crowd: an eighth
/// of [0, 1) in one bin of 11 bits) three times, a constant input once a digit.

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "gsearch/core/config.hpp"
#include "gsearch/core/radix_bits.hpp"

namespace gsearch::core {

/// The first pass's digit, in bits (2,048 bins: every rank's top bits in one read).
inline constexpr int many_first_bits = 11;
/// The most bins a pass counts (open slots x 2^bits): 64 KB of 32-bit counters in shared memory.
inline constexpr int64_t many_pass_bins = int64_t(1) << 14;
/// The most levels a pass walks through tables: 8-byte keys with 4,096 open slots read 2 bits a
/// level, 11 + 2 x 27 (past it the planner gives up, and the caller sorts).
inline constexpr int many_max_levels = 40;

/// A digit: bits [shift, shift + bits) of the radix bits.
struct many_digit {
  int32_t shift = 0, bits = 0;
};

/// A pass as its kernel reads it (a kernel parameter): `levels` tables walked, then digit[levels]
/// counted into bins (slot << digit[levels].bits) + digit, `bins` of them.
struct many_pass {
  int32_t levels = 0;
  int32_t bins = 0;
  int32_t table_entries = 0;     ///< the tables' entries in all (16-bit slots)
  int32_t tables_in_shared = 0;  ///< at most many_plan::shared_table_entries: staged in shared memory
  many_digit digit[many_max_levels + 1] = {};
  int32_t table_at[many_max_levels] = {};  ///< table l's first entry among them
};

template <class U>
GSEARCH_HD GSEARCH_FORCEINLINE int many_digit_of(many_digit d, U u) {
  using W = std::conditional_t<(sizeof(U) <= 4), uint32_t, uint64_t>;  // 32-bit arithmetic where it fits
  return int((W(u) >> d.shift) & ((W(1) << d.bits) - 1));
}

/// The bin that bits u count in, or -1 when its prefix is no open slot's. `root`: the element's
/// slot where the tables begin (0, every key, for the data; the slot a copy stored beside it).
template <class U>
GSEARCH_HD GSEARCH_FORCEINLINE int many_bin(const many_pass& p, const int16_t* tables, U u, int root = 0) {
  int slot = root;
  for (int l = 0; l < p.levels; ++l) {
    slot = tables[p.table_at[l] + (slot << p.digit[l].bits) + many_digit_of(p.digit[l], u)];
    if (slot < 0) return -1;
  }
  return (slot << p.digit[p.levels].bits) + many_digit_of(p.digit[p.levels], u);
}

/// The planner (host): the open slots, each rank's slot and offset, the tables, and the next pass.
/// `ranks`: ascending, distinct, in [0, n). `capacity`: the elements a copy may hold; `sort_max`:
/// the most the caller sorts at once (0: never).
template <class U>
class many_plan {
 public:
  many_plan(int64_t n, std::vector<int64_t> ranks, int64_t capacity, int64_t sort_max = 0)
      : ranks_(std::move(ranks)),
        offset_(ranks_),
        slot_(ranks_.size(), 0),
        capacity_(capacity),
        sort_max_(sort_max),
        source_n_(n) {
    open_.push_back({U(0), n});
    plan_next();
  }

  /// Every rank answered (its slot's prefix is a whole key).
  bool done() const { return consumed_ == key_bits; }
  /// The tables would not fit `max_table_entries`, or a pass's counts did not add up to its slots'
  /// (the caller selects another way).
  bool gave_up() const { return gave_up_; }
  /// The next pass, its tables (every level's, concatenated: what pass() indexes), and whether it
  /// copies the elements it counts (sum of the open slots' counts: copied_count()).
  const many_pass& pass() const { return pass_; }
  const std::vector<int16_t>& tables() const { return tables_; }
  bool copies() const { return copies_; }
  /// The next pass's copy (it copies) is to be sorted and passed to finish_from in place of the
  /// pass's counts.
  bool sorts() const { return sorts_; }
  int64_t copied_count() const { return open_total(); }
  /// The tables' entries that are new since the last pass (the caller uploads tables()[from, end)).
  int64_t new_tables_from() const { return table_at_.empty() ? 0 : table_at_.back(); }
  /// The next pass's source: the data (false) or the last copy, of source_n() elements, each with
  /// the slot it was counted in (bin >> the counted digit's bits) stored beside it: the tables
  /// begin at that slot (many_bin's root), so a copy's passes walk only the levels after it.
  bool reads_copy() const { return reads_copy_; }
  int64_t source_n() const { return source_n_; }

  /// The pass's counts (pass().bins of them): each rank's bin and offset in it, the next open
  /// slots and the next pass. Counts of any unsigned or signed integer type.
  template <class Count>
  void absorb(const Count* hist) {
    const int bits = pass_.digit[pass_.levels].bits;
    std::vector<slot_info> next;
    std::vector<int16_t> table(open_.size() << bits, int16_t(-1));
    int64_t bin = -1, used = 0;  // the last rank's bin, and the counts of its bin before its offset
    for (size_t k = 0; k < ranks_.size(); ++k) {
      const int64_t first = int64_t(slot_[k]) << bits;  // the slot's bin 0
      if (bin < first) {  // the first rank of its slot (ranks and slots both ascend)
        bin = first;
        used = 0;
      }
      int64_t offset = offset_[k] - used;
      while (offset >= int64_t(hist[bin])) {            // the slot holds the rank: this ends inside its bins
        if (bin + 1 == first + (int64_t(1) << bits)) {  // counts that do not add up: never answer wrong
          gave_up_ = true;
          return;
        }
        offset -= int64_t(hist[bin]);
        used += int64_t(hist[bin]);
        ++bin;
      }
      if (next.empty() || next.back().bin != bin) {
        const int64_t parent = bin >> bits;
        table[size_t(bin)] = int16_t(next.size());
        next.push_back({U(U(open_[size_t(parent)].prefix << bits) | U(bin - (parent << bits))),
                        int64_t(hist[bin]), bin});
      }
      slot_[k] = int32_t(next.size() - 1);
      offset_[k] = offset;
    }
    if (copies_) {  // the copy's elements carry their slots: the tables begin again from them
      reads_copy_ = true;
      source_n_ = open_total();
      levels_.clear();
      table_at_.clear();
      tables_.clear();
    }
    levels_.push_back(pass_.digit[pass_.levels]);
    table_at_.push_back(int32_t(tables_.size()));
    tables_.insert(tables_.end(), table.begin(), table.end());
    open_ = std::move(next);
    consumed_ += bits;
    if (!done()) plan_next();
  }

  /// The radix bits of the open slots' elements, sorted (copied_count() of them, when sorts()):
  /// every rank's answer and the elements under it, read off. The open slots are disjoint ranges of
  /// the keys in order, so a rank's place among them is its slot's elements before it plus its
  /// offset.
  void finish_from(const U* sorted) {
    int64_t before = 0;  // the elements of the open slots before rank k's
    size_t slot = 0;
    for (size_t k = 0; k < ranks_.size(); ++k) {
      for (; slot < size_t(slot_[k]); ++slot) before += open_[slot].count;
      const U* first = sorted + before;
      const U answer = first[offset_[k]];
      const int64_t under = std::lower_bound(first, first + offset_[k], answer) - first;
      answers_.push_back(answer);
      offset_[k] -= under;  // less(k): the elements under the slot and those of it under the answer
    }
    consumed_ = key_bits;
  }

  /// Once done: rank k's answer (its radix bits) and the elements under it.
  U answer(size_t k) const { return answers_.empty() ? open_[size_t(slot_[k])].prefix : answers_[k]; }
  int64_t less(size_t k) const { return ranks_[k] - offset_[k]; }
  size_t size() const { return ranks_.size(); }
  int passes() const { return int(levels_.size()); }

  static constexpr int key_bits = int(8 * sizeof(U));
  /// The tables' entries that fit in shared memory beside the bins (16-bit each: 64 KB); past it
  /// the plan copies (the tables begin again at the copy) where the copy may hold the open slots,
  /// and the kernel reads the tables from global memory where it may not; past max_table_entries
  /// it gives up.
  static constexpr int64_t shared_table_entries = int64_t(1) << 15;
  static constexpr int64_t max_table_entries = int64_t(1) << 22;

 private:
  struct slot_info {
    U prefix;       // the digits read so far
    int64_t count;  // the elements with that prefix
    int64_t bin;    // the bin it was counted in (while it is built)
  };
  int64_t open_total() const {
    int64_t total = 0;
    for (const slot_info& s : open_) total += s.count;
    return total;
  }
  // The next pass: a digit as wide as the bins allow, and whether it copies.
  void plan_next() {
    int bits = consumed_ == 0 ? many_first_bits : 1;
    if (consumed_ > 0)
      while (int64_t(open_.size()) << (bits + 1) <= many_pass_bins) ++bits;
    bits = std::min(bits, key_bits - consumed_);
    pass_ = many_pass{};
    pass_.levels = int32_t(levels_.size());
    if (pass_.levels > many_max_levels || int64_t(tables_.size()) > max_table_entries ||
        int64_t(open_.size()) << bits > many_pass_bins) {
      gave_up_ = true;
      return;
    }
    for (int l = 0; l < pass_.levels; ++l) {
      pass_.digit[l] = levels_[size_t(l)];
      pass_.table_at[l] = table_at_[size_t(l)];
    }
    pass_.digit[pass_.levels] = {key_bits - consumed_ - bits, bits};
    pass_.bins = int32_t(int64_t(open_.size()) << bits);
    pass_.table_entries = int32_t(tables_.size());
    pass_.tables_in_shared = int64_t(tables_.size()) <= shared_table_entries;
    // Copy what this pass counts where that is few, unless this pass is the last.
    const int64_t total = open_total();
    // Or where the tables after this pass would pass their room: the copy begins them again.
    const bool tables_full = int64_t(tables_.size()) + (int64_t(open_.size()) << bits) > shared_table_entries;
    sorts_ = consumed_ > 0 && total <= sort_max_ && total <= capacity_;
    copies_ = sorts_ || (consumed_ > 0 && consumed_ + bits < key_bits && total <= capacity_ &&
                         (4 * total <= source_n_ || tables_full));
  }

  std::vector<int64_t> ranks_, offset_;
  std::vector<int32_t> slot_;
  std::vector<slot_info> open_;
  std::vector<many_digit> levels_;
  std::vector<int32_t> table_at_;
  std::vector<int16_t> tables_;
  std::vector<U> answers_;  // finish_from's
  many_pass pass_;
  int consumed_ = 0;
  int64_t capacity_, sort_max_;
  int64_t source_n_;
  bool copies_ = false, sorts_ = false, reads_copy_ = false, gave_up_ = false;
};

}  // namespace gsearch::core
