// The radix select's per-rank steps (core/radix_select.hpp), driven on the host the way the CUDA
// select drives them (src/selection/cuda/radix_select.cu: a sorted sample's brackets, then passes
// over the data or the last pass's copy, one pick a pass), against a sorted copy of the data: every
// shape of selection_cases.hpp, an input whose top 16 bits are all equal, a sample that lies
// about the data (every rank missed), and copies too small to hold (every pass reads the data).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gsearch/core/radix_bits.hpp"
#include "gsearch/core/radix_select.hpp"
#include "gsearch/core/selection.hpp"
#include "selection/tuning.hpp"  // radix_select_margin
#include "selection_cases.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

using namespace gsearch::test::selection;

template <class T>
class CoreRadixSelect : public ::testing::Test {};
TYPED_TEST_SUITE(CoreRadixSelect, KeyTypes);

template <class T>
struct radix_run {
  std::vector<T> values;
  int passes = 0, data_reads = 0;
  bool answered = false;
  // The first pass's copy where it held its whole range (no miss, no overflow), and whether the
  // first range reached the largest / smallest bits: topk's gather reads that copy (keep_first).
  std::vector<T> first_copy;
  bool first_whole = false, first_open_top = false, first_open_bottom = false;
};

// The CUDA select's flow on the host: the first slots from the sorted sample of s elements (at
// its margin); each pass counts the source's elements of every open slot's range in its bins (and,
// in the first pass, those below it), copies the elements in any range out (at most `capacity`),
// and picks; the next pass reads the copy when every rank stayed inside its range and the copy
// held all.
template <class T>
radix_run<T> radix_select_host(const std::vector<T>& data, const std::vector<int64_t>& ranks, int64_t s,
                               int64_t capacity) {
  using U = core::radix_bits_t<T>;
  const auto n = int64_t(data.size());
  std::vector<U> sample;
  for (int64_t i = 0; i < s; ++i) sample.push_back(core::radix_bits(data[size_t(core::sample_position(i, s, n))]));
  std::sort(sample.begin(), sample.end());
  std::vector<core::radix_slot<U>> slots;
  for (const int64_t r : ranks)
    slots.push_back(core::radix_first_slot(sample.data(), s, r, n, cuda_backend::radix_select_margin));
  std::vector<T> source = data;
  bool from_data = true;
  radix_run<T> run;
  for (int pass = 0; pass < core::radix_max_passes<U>(); ++pass) {
    if (std::all_of(slots.begin(), slots.end(), [](const auto& sl) { return sl.done != 0; })) break;
    ++run.passes;
    run.data_reads += from_data;
    std::vector<std::vector<int64_t>> bins(slots.size(), std::vector<int64_t>(core::radix_bins, 0));
    std::vector<int64_t> below(slots.size(), 0);
    std::vector<U> least(slots.size(), U(~U(0))), most(slots.size(), U(0));
    std::vector<T> copy;
    int64_t copied = 0;
    // As the pass kernel tests: below and inside by ordered bits, the bin by radix bits.
    std::vector<core::radix_ordered<U>> tested;
    for (const auto& sl : slots) tested.push_back(core::radix_ordered_range<T>(sl.range.lo, sl.range.hi));
    for (const T x : source) {
      const U o = core::ordered_bits(x), u = core::radix_bits(x);
      bool in = false;
      for (size_t k = 0; k < slots.size(); ++k) {
        if (slots[k].done) continue;
        if (tested[k].inside(o)) {
          const int b = core::radix_bin(slots[k].range, u);
          EXPECT_GE(b, 0) << "inside by ordered bits, outside by radix bits: " << show(x);
          ++bins[k][size_t(b)];
          least[k] = std::min(least[k], u);
          most[k] = std::max(most[k], u);
          in = true;
        } else if (tested[k].below(o)) {
          ++below[k];
        }
      }
      if (in && copied++ < capacity) copy.push_back(x);
    }
    if (pass == 0) {
      run.first_open_top = slots[0].range.hi == U(~U(0));
      run.first_open_bottom = slots[0].range.lo == U(0);
    }
    bool inside = true;
    for (size_t k = 0; k < slots.size(); ++k)
      inside &= core::radix_pick(slots[k], bins[k].data(), pass == 0 ? below[k] : 0, least[k], most[k]);
    if (pass == 0 && inside && copied <= capacity) {
      run.first_copy = copy;
      run.first_whole = true;
    }
    if (inside && copied <= capacity) {
      source = std::move(copy);
      from_data = false;
    } else {
      // Only the first pass, over the data, can miss; later ranges are inside the copy's.
      EXPECT_TRUE(from_data) << "a pass over a copy missed or overflowed";
    }
  }
  run.answered = std::all_of(slots.begin(), slots.end(), [](const auto& sl) { return sl.done != 0; });
  for (const auto& sl : slots) run.values.push_back(core::from_radix_bits<T>(sl.range.lo));
  return run;
}

// The element of each rank, from a sort of the radix bits (equal keys, equal bits).
template <class T>
std::vector<T> by_sort(const std::vector<T>& data, const std::vector<int64_t>& ranks) {
  using U = core::radix_bits_t<T>;
  std::vector<U> bits;
  for (const T x : data) bits.push_back(core::radix_bits(x));
  std::sort(bits.begin(), bits.end());
  std::vector<T> out;
  for (const int64_t r : ranks) out.push_back(core::from_radix_bits<T>(bits[size_t(r)]));
  return out;
}

template <class T>
void expect_same(const std::vector<T>& want, const radix_run<T>& got, const std::string& what) {
  ASSERT_TRUE(got.answered) << what << ": not answered in " << got.passes << " passes";
  ASSERT_EQ(want.size(), got.values.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(core::radix_bits(want[i]), core::radix_bits(got.values[i]))
        << what << ", rank " << i << ": " << show(got.values[i]) << ", want " << show(want[i]);
}

TYPED_TEST(CoreRadixSelect, EveryShapeReadsTheDataOnceAndEqualsASort) {
  using T = TypeParam;
  const int64_t n = 50001, s = 1024;
  int open_copies = 0;
  for (const shape sh : kShapes) {
    const std::vector<T> data = make_input<T>(sh, n, 11);
    for (const std::vector<int64_t>& ranks :
         {std::vector<int64_t>{0}, {n - 1}, {n / 2}, {n / 2 - 1, n / 2}, {0, n / 4, 3 * n / 4, n - 1}, {n - 1024}}) {
      const radix_run<T> run = radix_select_host(data, ranks, s, n);
      expect_same(by_sort(data, ranks), run, std::string(name(sh)) + " ranks " + std::to_string(ranks[0]));
      EXPECT_LE(run.passes, core::radix_max_passes<core::radix_bits_t<T>>());
      // A representative sample brackets every rank: one read of the data, the rest in the copy
      // (the sample-aligned spikes are 1 in 256 of the data: a bracket may miss them only at the
      // top, where the spikes are).
      if (sh != shape::sample_aligned) {
        EXPECT_EQ(run.data_reads, 1) << name(sh) << " rank " << ranks[0];
      }
      // One value: the first pass's extent of the range closes it.
      if (sh == shape::all_equal) {
        EXPECT_EQ(run.passes, 1);
      }
      // Where the first range reached an end of the keys and the copy held it whole, the copy
      // holds every element from the answer to that end (topk gathers from it).
      if (ranks.size() == 1 && run.first_whole && (run.first_open_top || run.first_open_bottom)) {
        using U = core::radix_bits_t<T>;
        const U answer = core::radix_bits(run.values[0]);
        const auto beyond = [&](T x) {
          const U u = core::radix_bits(x);
          return run.first_open_top ? u >= answer : u <= answer;
        };
        EXPECT_EQ(std::count_if(data.begin(), data.end(), beyond),
                  std::count_if(run.first_copy.begin(), run.first_copy.end(), beyond))
            << name(sh) << " rank " << ranks[0];
        ++open_copies;
      }
    }
  }
  EXPECT_GT(open_copies, 10);  // ranks 0, n - 1 and n - 1024 of most shapes
}

TYPED_TEST(CoreRadixSelect, EqualTopBitsNarrowInTheFirstPass) {
  using T = TypeParam;
  using U = core::radix_bits_t<T>;
  // Every element's radix bits share their top 16 bits (selection_bench's radix-adversarial
  // input): the sample's bracket is a few thousand values wide, so one pass over the data and one
  // over the copy answer an inner rank; a rank near the top has a bracket open above (to the
  // largest bits), whose bins are wide: more passes, over the copy.
  std::mt19937_64 rng(5);
  const int64_t n = 100000;
  std::vector<T> data;
  const U top = U(U(0xA5C3) << (8 * sizeof(U) - 16));
  for (int64_t i = 0; i < n; ++i) data.push_back(core::from_radix_bits<T>(U(top | U(rng() & 0xffff))));
  for (const int64_t r : {n / 3, n - 1024}) {
    const radix_run<T> run = radix_select_host(data, {r}, 4096, n);
    expect_same(by_sort(data, {r}), run, "equal top bits, rank " + std::to_string(r));
    EXPECT_EQ(run.data_reads, 1);
    if (r == n / 3) {
      EXPECT_EQ(run.passes, 2);
    }
  }
}

TYPED_TEST(CoreRadixSelect, AMisleadingSampleMissesAndIsStillRight) {
  using T = TypeParam;
  // Small values everywhere but at the sample's positions, which hold the largest: every bracket
  // above the lowest lies above the data, so every rank of the data's small values misses below
  // and the next pass reads the data again (rank 0's bracket is open below: no miss).
  const int64_t n = 40000, s = 512;
  std::vector<T> data(size_t(n), T(1));
  std::mt19937_64 rng(9);
  for (auto& x : data) x = T(rng() % 50);
  for (int64_t i = 0; i < s; ++i) data[size_t(core::sample_position(i, s, n))] = std::numeric_limits<T>::max();
  for (const std::vector<int64_t>& ranks : {std::vector<int64_t>{0}, {n / 2}, {n / 3, n - s - 1, n - 1}}) {
    const radix_run<T> run = radix_select_host(data, ranks, s, n);
    expect_same(by_sort(data, ranks), run, "misleading sample, rank " + std::to_string(ranks[0]));
    EXPECT_EQ(run.data_reads, ranks[0] == 0 ? 1 : 2) << "rank " << ranks[0];
  }
}

TYPED_TEST(CoreRadixSelect, ACopyTooSmallReadsTheDataEveryPass) {
  using T = TypeParam;
  const std::vector<T> data = make_input<T>(shape::random, 30011, 3);
  const std::vector<int64_t> ranks = {7, 15005, 30000};
  for (const int64_t capacity : {int64_t(0), int64_t(1), int64_t(100)}) {
    const radix_run<T> run = radix_select_host(data, ranks, 256, capacity);
    expect_same(by_sort(data, ranks), run, "capacity " + std::to_string(capacity));
    // No copy: every pass reads the data; a small one serves the passes once the ranges fit it.
    if (capacity == 0) {
      EXPECT_EQ(run.data_reads, run.passes);
    }
    EXPECT_GE(run.data_reads, 2);
  }
}

// The pass's test by ordered bits against the definition by radix bits: for ranges whose ends are
// any key's bits, a bit pattern beside it, or an end of the bits (as far as the precondition
// allows: lo at most the NaN's radix bits, hi at least -inf's), every key (every NaN pattern,
// -0.0, the extremes) is below, inside or above alike; for floats also in their own compares.
TYPED_TEST(CoreRadixSelect, TheOrderedTestEqualsTheRadixRange) {
  using T = TypeParam;
  using U = core::radix_bits_t<T>;
  using lim = std::numeric_limits<T>;
  std::vector<T> keys = {lim::lowest(), T(lim::lowest() + T(1)), T(0), T(1), T(2), T(lim::max() - T(1)), lim::max()};
  if constexpr (std::is_floating_point_v<T>) {
    const U quiet = core::radix_bits(lim::quiet_NaN());
    std::vector<U> nans = {U(~U(0)), U(U(~U(0)) >> 1), U(U(~U(0)) >> 1) ^ U(1)};  // -NaN, +NaN payloads
    for (const U b : nans) {
      T x;
      std::memcpy(&x, &b, sizeof(T));
      keys.push_back(x);
    }
    for (const T x : {-lim::infinity(), lim::infinity(), lim::quiet_NaN(), -lim::quiet_NaN(), lim::signaling_NaN(),
                      T(-0.0), -lim::denorm_min(), lim::denorm_min(), T(-1), -lim::min(), lim::min()})
      keys.push_back(x);
    EXPECT_EQ(core::radix_bits(T(-lim::quiet_NaN())), quiet);
  } else if constexpr (std::is_signed_v<T>) {
    keys.push_back(T(-1));
    keys.push_back(T(-2));
  }
  std::vector<U> ends = {U(0), U(1), U(~U(0)), U(U(~U(0)) - 1)};
  for (const T x : keys)
    for (const U d : {U(0), U(1), U(~U(0))}) ends.push_back(U(core::radix_bits(x) + d));
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  U lo_most = U(~U(0)), hi_least = U(0);
  if constexpr (std::is_floating_point_v<T>) {
    lo_most = core::radix_bits(lim::quiet_NaN());
    hi_least = core::radix_bits(-lim::infinity());
  }
  int ranges = 0, native_ranges = 0;
  for (const U lo : ends)
    for (const U hi : ends) {
      if (lo > hi || lo > lo_most || hi < hi_least) continue;
      ++ranges;
      const core::radix_ordered<U> r = core::radix_ordered_range<T>(lo, hi);
      for (const T x : keys) {
        const U u = core::radix_bits(x), o = core::ordered_bits(x);
        ASSERT_EQ(r.below(o), u < lo) << show(x) << " in [" << lo << ", " << hi << "]";
        ASSERT_EQ(r.inside(o), lo <= u && u <= hi) << show(x) << " in [" << lo << ", " << hi << "]";
      }
      // Floats in their own compares (radix_native_range), wherever it says it is exact: every
      // range but those that begin among the NaNs.
      if constexpr (std::is_floating_point_v<T>) {
        const core::radix_native<T> f = core::radix_native_range<T>(lo, hi);
        ASSERT_EQ(f.exact, lo <= core::radix_bits(lim::infinity())) << "[" << lo << ", " << hi << "]";
        if (!f.exact) continue;
        ++native_ranges;
        for (const T x : keys) {
          const U u = core::radix_bits(x);
          ASSERT_EQ(f.below(x), u < lo) << show(x) << " in [" << lo << ", " << hi << "] natively";
          ASSERT_EQ(f.inside(x), lo <= u && u <= hi) << show(x) << " in [" << lo << ", " << hi << "] natively";
        }
      }
    }
  EXPECT_GT(ranges, 20);  // 28 for unsigned keys, hundreds for floats
  if constexpr (std::is_floating_point_v<T>) {
    EXPECT_GT(native_ranges, ranges / 2);
  }
}

TYPED_TEST(CoreRadixSelect, RangesNarrowByTheBinsAndKeepTheirEnds) {
  using T = TypeParam;
  using U = core::radix_bits_t<T>;
  const U max = U(~U(0));
  // The whole bit range: the widest shift; the last bin ends at the range's end.
  const core::radix_range<U> all = core::radix_range_of(U(0), max);
  EXPECT_EQ(core::radix_bin(all, U(0)), 1);
  EXPECT_LE(core::radix_bin(all, max), core::radix_bins - 2);
  core::radix_slot<U> slot{all, 5, 0};
  core::radix_narrow(slot, core::radix_bin(all, max), 0);
  EXPECT_EQ(slot.range.hi, max);
  // A range narrower than the bins: one value a bin, answered at once.
  const core::radix_range<U> small = core::radix_range_of(U(100), U(1000));
  EXPECT_EQ(small.shift, 0);
  EXPECT_EQ(core::radix_bin(small, U(99)), -1);
  EXPECT_EQ(core::radix_bin(small, U(1001)), -1);
  core::radix_slot<U> one{small, 3, 0};
  core::radix_narrow(one, core::radix_bin(small, U(117)), 2);
  EXPECT_TRUE(one.done);
  EXPECT_EQ(one.range.lo, U(117));
  EXPECT_EQ(one.rank, 1);
  // Binned over a part (a bracket open above, binned up to the sample's largest): the last bin
  // takes everything past the middle bins, up to the range's end, and closes at the data's largest.
  const core::radix_range<U> open = core::radix_range_of(U(100), max, U(100), U(5000));
  EXPECT_EQ(core::radix_bin(open, U(100)), 1);
  EXPECT_EQ(core::radix_bin(open, max), core::radix_bins - 1);
  core::radix_slot<U> top{open, 0, 0};
  core::radix_narrow(top, core::radix_bins - 1, 0, U(0), U(max - 7));
  EXPECT_EQ(top.range.hi, U(max - 7));
  EXPECT_GT(top.range.lo, U(5000 - 8));
  // Bin 0 of a range binned from above its start: [lo, base).
  const core::radix_range<U> low = core::radix_range_of(U(0), U(5000), U(4000), U(5000));
  EXPECT_EQ(core::radix_bin(low, U(3999)), 0);
  core::radix_slot<U> bottom{low, 0, 0};
  core::radix_narrow(bottom, 0, 0, U(10), max);
  EXPECT_EQ(bottom.range.lo, U(10));
  EXPECT_EQ(bottom.range.hi, U(3999));
  // A miss above the range: everything above it, the rank past the range's elements.
  core::radix_slot<U> above{small, 50, 0};
  core::radix_miss(above, 10, 30);
  EXPECT_EQ(above.range.lo, U(1001));
  EXPECT_EQ(above.range.hi, max);
  EXPECT_EQ(above.rank, 10);
}

}  // namespace
}  // namespace gsearch::test
