// core/topk_list.hpp's sorted list of the L smallest keys, against a stable sort of (key,
// position): random keys, few distinct (ties, kept in index order), ascending, descending, every
// key the largest (which the empty entries hold too), rows shorter than the list, both key
// widths; smallest_by_chunks (the same answer by sorted chunks, keys of 32 bits) the same way;
// and the rule short_row_list that picks the list for a row.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gsearch/core/topk_list.hpp"

namespace gsearch::test {
namespace {

template <int L, class K>
void expect_list(const std::vector<K>& keys, const std::string& what) {
  core::smallest_list<L, K> list;
  list.clear();
  list.offer_row([&](int c) { return keys[size_t(c)]; }, int(keys.size()));
  std::vector<uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  for (int j = 0; j < L; ++j) {
    SCOPED_TRACE(what + ", L = " + std::to_string(L) + ", n = " + std::to_string(keys.size()) + ", entry " +
                 std::to_string(j));
    if (size_t(j) >= keys.size()) break;  // fewer offered than L: the first that many entries
    ASSERT_EQ(list.at[j], order[size_t(j)]);
    ASSERT_EQ(list.key[j], keys[order[size_t(j)]]);
  }
}

/// core::smallest_by_chunks (keys of at most 32 bits) against the same stable sort.
template <int L, class K>
void expect_chunks(const std::vector<K>& keys, const std::string& what) {
  uint32_t at[L];
  core::smallest_by_chunks<L>([&](int c) { return keys[size_t(c)]; }, int(keys.size()), at);
  std::vector<uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  for (int j = 0; j < L && size_t(j) < keys.size(); ++j)
    ASSERT_EQ(at[j], order[size_t(j)])
        << what << ", chunks of " << L << ", n = " << keys.size() << ", entry " << j;
}

template <class K>
void expect_every_list(const std::vector<K>& keys, const std::string& what) {
  expect_list<8>(keys, what);
  expect_list<16>(keys, what);
  expect_list<32>(keys, what);
  if constexpr (sizeof(K) <= 4) {
    expect_chunks<8>(keys, what);
    expect_chunks<16>(keys, what);
    expect_chunks<32>(keys, what);
  }
}

template <class K>
void run_shapes() {
  std::mt19937_64 rng(5);
  for (const size_t n : {size_t(1), size_t(7), size_t(8), size_t(9), size_t(16), size_t(17), size_t(31),
                         size_t(33), size_t(64), size_t(65), size_t(129)}) {
    std::vector<K> random(n), few(n), up(n), down(n);
    for (size_t i = 0; i < n; ++i) {
      random[i] = K(rng());
      few[i] = K(rng() % 3);
      up[i] = K(i * 3);
      down[i] = K((n - i) * 3);
    }
    expect_every_list(random, "random");
    expect_every_list(few, "few distinct");
    expect_every_list(up, "ascending");
    expect_every_list(down, "descending");
    // The largest key is a real key too: offered, it goes before the unfilled entries.
    std::vector<K> top(n, K(~K(0)));
    expect_every_list(top, "all the largest key");
  }
}

TEST(CoreTopkList, SmallestOfEveryShape32) { run_shapes<uint32_t>(); }
TEST(CoreTopkList, SmallestOfEveryShape64) { run_shapes<uint64_t>(); }

TEST(CoreTopkList, ShortRowRule) {
  EXPECT_EQ(core::short_row_list(64, 8), 8);
  EXPECT_EQ(core::short_row_list(64, 1), 8);
  EXPECT_EQ(core::short_row_list(64, 9), 16);
  EXPECT_EQ(core::short_row_list(64, 32), 32);
  EXPECT_EQ(core::short_row_list(64, 33), 0);  // past the longest list
  EXPECT_EQ(core::short_row_list(128, 16), 16);
  EXPECT_EQ(core::short_row_list(128, 17), 0);  // 128 x 32 past short_row_work
  EXPECT_EQ(core::short_row_list(129, 1), 0);   // past short_row_max_cols
  EXPECT_EQ(core::short_row_list(5, 5), 8);
  EXPECT_EQ(core::short_row_list(5, 6), 0);  // k > cols
  EXPECT_EQ(core::short_row_list(5, 0), 0);
}

}  // namespace
}  // namespace gsearch::test
