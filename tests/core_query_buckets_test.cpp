// The buckets of algorithm::merge's sort of the queries (core/query_buckets.hpp), the steps of
// both backends' merge_search: every code says below / inside / above the keys as key_less does,
// gives back the query's radix bits, keeps the buckets in key order; bucket_start is the
// partition point of the keys by bucket; bucket_rank equals std::lower_bound / upper_bound, with
// the range the whole keys' and less their outer quarters (queries outside it searched among the
// outer keys).
// Key ranges: random keys (the wide range: shift 0 for most), narrow ones, one distinct key,
// the extremes, a range of exactly 2^(W-1) (the last shift 0) and one less (shift 1), and every
// edge value (NaN, -0.0, +-inf) as a key and as a query; 1, 8, 16 and 32 bucket bits.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gsearch/core/query_buckets.hpp"
#include "gsearch/core/radix_bits.hpp"
#include "test_util.hpp"
#include "tools/query_gen.hpp"

namespace gsearch::test {
namespace {

template <class T>
class CoreQueryBuckets : public ::testing::Test {};
TYPED_TEST_SUITE(CoreQueryBuckets, KeyTypes);

template <class T>
std::vector<std::pair<std::string, std::vector<T>>> key_lists(uint64_t seed) {
  using U = core::radix_bits_t<T>;
  constexpr int W = int(8 * sizeof(U));
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::string, std::vector<T>>> lists;
  lists.emplace_back("random", gen::sorted_keys<T>(3000, seed));
  std::vector<T> narrow(2000);
  for (auto& x : narrow) x = small_value<T>(rng, 500);
  sort_keys(narrow);
  lists.emplace_back("narrow", narrow);
  lists.emplace_back("one key", std::vector<T>{T(7)});
  lists.emplace_back("all equal", std::vector<T>(100, T(-2)));
  std::vector<T> edges = edge_values<T>();
  sort_keys(edges);
  lists.emplace_back("edge values", edges);
  // lo and hi whose radix bits differ by exactly 2^(W-1) (shift 0, no bit to spare) and by one
  // less (shift 1): keys at both ends and between.
  for (const U span : {U(U(1) << (W - 1)), U((U(1) << (W - 1)) - 1)}) {
    const U lo = core::radix_bits(std::numeric_limits<T>::lowest());  // (no NaN on the way for floats)
    std::vector<T> keys{core::from_radix_bits<T>(lo), core::from_radix_bits<T>(U(lo + span / 3)),
                        core::from_radix_bits<T>(U(lo + span))};
    sort_keys(keys);
    lists.emplace_back(span >> (W - 1) ? "span 2^(W-1)" : "span 2^(W-1)-1", keys);
  }
  return lists;
}

template <class T>
std::vector<T> queries_for(const std::vector<T>& keys, uint64_t seed) {
  std::vector<T> q = gen::random_queries_from_keys(keys.data(), int64_t(keys.size()), 2000, seed);
  gen::splitmix64 values{seed + 1};
  for (size_t i = 0; i < q.size(); i += 2) q[i] = gen::random_value<T>(values);
  for (T e : edge_values<T>()) q.push_back(e);
  for (T x : keys) {  // every key and its radix neighbours
    const auto u = core::radix_bits(x);
    q.push_back(x);
    q.push_back(core::from_radix_bits<T>(decltype(u)(u - 1)));
    q.push_back(core::from_radix_bits<T>(decltype(u)(u + 1)));
  }
  return q;
}

TYPED_TEST(CoreQueryBuckets, CodesPlaceAndGiveBackEveryQuery) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  for (const auto& [name, keys] : key_lists<T>(seed)) {
    const T first = keys.front(), last = keys.back();
    for (int bits : {1, 8, 16, 32}) {
      const auto b = core::query_buckets<T>::of(first, last, bits);
      for (T q : queries_for(keys, seed)) {
        const auto code = b.encode(q);
        const core::bucket_place want = key_less(q, first)  ? core::bucket_place::below
                                        : key_less(last, q) ? core::bucket_place::above
                                                            : core::bucket_place::inside;
        ASSERT_EQ(int(b.place(code)), int(want)) << name << " bits " << bits << " q=" << q << " shift " << b.shift;
        if (want == core::bucket_place::inside) {
          ASSERT_EQ(b.radix(code), core::radix_bits(q)) << name << " q=" << q;
          ASSERT_LT(b.bucket(code), b.buckets());
        }
      }
      // Buckets never decrease in key order (over the keys and the queries inside their range).
      std::vector<T> inside;
      for (T q : queries_for(keys, seed))
        if (!key_less(q, first) && !key_less(last, q)) inside.push_back(q);
      sort_keys(inside);
      for (size_t i = 1; i < inside.size(); ++i)
        ASSERT_LE(b.bucket(b.encode(inside[i - 1])), b.bucket(b.encode(inside[i]))) << name << " " << inside[i];
    }
  }
}

TYPED_TEST(CoreQueryBuckets, RanksEqualStdBounds) {
  using T = TypeParam;
  const uint64_t seed = test_seed();
  for (const auto& [name, keys] : key_lists<T>(seed)) {
    const int64_t k = int64_t(keys.size());
    const auto key = [&](int64_t j) { return keys[size_t(j)]; };
    const auto key_bits = [&](int64_t j) { return core::radix_bits(keys[size_t(j)]); };
    for (int bits : {1, 8, 16}) {
     for (int64_t trim : {int64_t(0), k / 4}) {  // the whole range, and one less its outer quarters
      const auto b = core::query_buckets<T>::of(keys[size_t(trim)], keys[size_t(k - 1 - trim)], bits);
      std::vector<int64_t> start(size_t(b.buckets() + 1));
      for (int64_t i = 0; i <= b.buckets(); ++i) start[size_t(i)] = core::bucket_start(b, key, k, i);
      ASSERT_EQ(start.front(), reference(keys, keys[size_t(trim)], side::left)) << name;  // the keys below
      ASSERT_EQ(start.back(), reference(keys, keys[size_t(k - 1 - trim)], side::right)) << name;
      for (int64_t j = 0; j < k; ++j) {  // key j lies in its bucket's range, or outside them all
        const int64_t kb = b.key_bucket(keys[size_t(j)]);
        if (kb < 0) ASSERT_LT(j, start.front()) << name << " key " << j;
        else if (kb == b.buckets()) ASSERT_GE(j, start.back()) << name << " key " << j;
        else ASSERT_TRUE(start[size_t(kb)] <= j && j < start[size_t(kb + 1)]) << name << " key " << j;
      }
      for (T q : queries_for(keys, seed)) {
        const auto code = b.encode(q);
        const auto query = [q] { return q; };
        ASSERT_EQ(core::bucket_rank<true>(b, key_bits, k, start.data(), code, query), reference(keys, q, side::left))
            << name << " bits " << bits << " trim " << trim << " q=" << q;
        ASSERT_EQ(core::bucket_rank<false>(b, key_bits, k, start.data(), code, query), reference(keys, q, side::right))
            << name << " bits " << bits << " trim " << trim << " q=" << q;
      }
     }
    }
  }
}

}  // namespace
}  // namespace gsearch::test
