#pragma once
// Random operation streams for gsearch::functional_arrays, replayed on a machine and on the
// executable specification (functional_arrays_spec.hpp) side by side, every answer compared:
// the CPU tests run them, and the GPU tests will. The mixes are adversarial on purpose: updates
// of old versions, long chains, wide fans from one parent, few indices (many carves of one
// index) or sparse huge ones (INT64_MIN and INT64_MAX among them), releases and re-use, and a
// full machine (out_of_memory, after which every live array must read as before).

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gsearch/functional_arrays.hpp"
#include "gsearch/functional_arrays_spec.hpp"

namespace gsearch::test {

/// The example of functional_arrays.hpp's header on a fresh machine of at least 8 cells (either
/// backend): values, absences, size, next, release.
inline void fa_header_example(functional_arrays<int64_t>& fa) {
  const auto a0 = fa.empty();
  const auto a1 = fa.update(a0, 7, 70);
  const auto a2 = fa.update(a1, 1000000, 5);
  EXPECT_EQ(fa.lookup(a2, 7), 70);
  EXPECT_EQ(fa.lookup(a0, 7), std::nullopt);
  const auto a3 = fa.remove(a2, 7);
  EXPECT_EQ(fa.size(a2), 2);
  EXPECT_EQ(fa.size(a3), 1);
  EXPECT_EQ(fa.next(a2, 7), 1000000);
  EXPECT_EQ(fa.next(a2, std::numeric_limits<int64_t>::min()), 7);
  EXPECT_EQ(fa.next(a2, 1000000), std::nullopt);
  EXPECT_EQ(fa.lookup(a3, 7), std::nullopt);
  EXPECT_EQ(fa.lookup(a3, 1000000), 5);
  fa.release(a0);
  EXPECT_FALSE(fa.live(a0));
  EXPECT_THROW(fa.lookup(a0, 7), invalid_argument);
  EXPECT_EQ(fa.check(), "");
}

/// How a stream picks its arrays and indices.
struct fa_mix {
  const char* name;
  int index_range;      ///< indices from [0, range) (sparse: spread over int64)
  bool sparse;
  int chain_percent;    ///< the newest array as the argument
  int fan_percent;      ///< one fixed early array as the argument
  int release_percent;  ///< of steps that release an array
};

inline const std::vector<fa_mix>& fa_mixes() {
  static const std::vector<fa_mix> m{
      {"few-indices", 8, false, 40, 10, 5},  {"chains", 1000, false, 85, 0, 3},
      {"fans", 64, false, 5, 70, 4},         {"sparse-huge", 1 << 20, true, 40, 10, 5},
      {"churn", 200, false, 30, 5, 25},
  };
  return m;
}

template <class V>
V fa_value(std::mt19937_64& r) {
  if constexpr (std::is_floating_point_v<V>) return V(int64_t(r() % 2000000) - 1000000) / V(8);
  else return V(r());
}

inline int64_t fa_index(std::mt19937_64& r, const fa_mix& m) {
  if (!m.sparse) return int64_t(r() % uint64_t(m.index_range));
  switch (r() % 8) {
    case 0: return std::numeric_limits<int64_t>::min();
    case 1: return std::numeric_limits<int64_t>::max();
    case 2: return int64_t(r());  // anywhere
    default: return (int64_t(r() % uint64_t(m.index_range)) - m.index_range / 2) * int64_t(1000003);
  }
}

/// Replays `steps` random operations of mix m on a machine of `cells` cells and on the spec;
/// returns the first difference ("" when none) and counts the operations in *ops.
template <class V>
std::string fa_replay(functional_arrays<V>& fa, const fa_mix& m, int64_t steps, uint64_t seed, int64_t* ops,
                      int check_every = 64) {
  using array = typename functional_arrays<V>::array;
  functional_arrays_spec<V> spec;
  std::mt19937_64 r(seed);
  struct held {
    array a;
    int64_t v;  // the spec's version
  };
  std::vector<held> pool;
  const auto fresh_root = [&]() -> std::string {
    pool.push_back({fa.empty(), spec.empty()});
    return "";
  };
  fresh_root();
  const size_t fan_root = 0;
  const auto differs = [&](const char* what, const held& h, const std::string& got, const std::string& want) {
    return std::string(what) + " of spec version " + std::to_string(h.v) + ": got " + got + ", want " + want + " (mix " +
           m.name + ", seed " + std::to_string(seed) + ", step " + std::to_string(*ops) + ")";
  };
  const auto str = [](const auto& o) -> std::string {
    if (!o) return "absent";
    return std::to_string(*o);
  };
  for (int64_t step = 0; step < steps; ++step, ++*ops) {
    const int pick = int(r() % 100);
    size_t at = pick < m.chain_percent                     ? pool.size() - 1
                : pick < m.chain_percent + m.fan_percent ? std::min(fan_root, pool.size() - 1)
                                                           : size_t(r() % pool.size());
    held h = pool[at];
    const int op = int(r() % 100);
    try {
      if (op < 40) {
        const int64_t i = fa_index(r, m);
        const V v = fa_value<V>(r);
        const array a = fa.update(h.a, i, v);
        pool.push_back({a, spec.update(h.v, i, v)});
      } else if (op < 50) {
        const int64_t i = r() % 2 ? fa_index(r, m) : (spec.size(h.v) > 0 ? spec.map(h.v).begin()->first : 0);
        const array a = fa.remove(h.a, i);
        pool.push_back({a, spec.remove(h.v, i)});
      } else if (op < 80) {
        const int64_t i = r() % 2 ? fa_index(r, m) : (spec.size(h.v) > 0 ? spec.map(h.v).rbegin()->first : 0);
        const auto got = fa.lookup(h.a, i), want = spec.lookup(h.v, i);
        if (got != want) return differs(("lookup(" + std::to_string(i) + ")").c_str(), h, str(got), str(want));
      } else if (op < 88) {
        const int64_t i = r() % 4 == 0 ? std::numeric_limits<int64_t>::min() : fa_index(r, m);
        const auto got = fa.next(h.a, i), want = spec.next(h.v, i);
        if (got != want) return differs(("next(" + std::to_string(i) + ")").c_str(), h, str(got), str(want));
      } else if (op < 94) {
        const int64_t got = fa.size(h.a), want = spec.size(h.v);
        if (got != want) return differs("size", h, std::to_string(got), std::to_string(want));
      } else if (op < 94 + m.release_percent / 4 + 1 && pool.size() > 1 && at != fan_root) {
        fa.release(h.a);
        spec.release(h.v);
        pool.erase(pool.begin() + std::ptrdiff_t(at));
      } else if (op < 97) {
        fresh_root();
      }
    } catch (const out_of_memory&) {
      // A full machine: nothing changed. Every live array still reads as the spec's, then
      // release the older half (never the fan root) and go on.
      for (const held& k : pool) {
        std::vector<int64_t> idx;
        std::vector<V> vals;
        fa.items(k.a, idx, vals);
        const auto& want = spec.map(k.v);
        if (idx.size() != want.size()) return differs("items after a full machine", k, std::to_string(idx.size()), std::to_string(want.size()));
        size_t j = 0;
        for (const auto& [wi, wv] : want)
          if (idx[j] != wi || vals[j++] != wv) return differs("items after a full machine", k, "other", "the spec's");
      }
      for (size_t k = pool.size() / 2; k-- > 1;) {
        fa.release(pool[k].a);
        spec.release(pool[k].v);
        pool.erase(pool.begin() + std::ptrdiff_t(k));
      }
    }
    if (check_every > 0 && step % check_every == 0) {
      const std::string c = fa.check();
      if (!c.empty()) return "invariant broken at step " + std::to_string(step) + " (mix " + m.name + "): " + c;
      const held& k = pool[size_t(r() % pool.size())];
      std::vector<int64_t> idx;
      std::vector<V> vals;
      fa.items(k.a, idx, vals);
      if (idx.size() != spec.map(k.v).size())
        return differs("items", k, std::to_string(idx.size()) + " indices", std::to_string(spec.map(k.v).size()));
      std::vector<int64_t> want_i;
      for (const auto& kv : spec.map(k.v)) want_i.push_back(kv.first);
      std::vector<V> got_v(want_i.size());
      std::vector<uint8_t> found(want_i.size());
      fa.lookup(k.a, span<const int64_t>(want_i.data(), int64_t(want_i.size())), span<V>(got_v.data(), int64_t(got_v.size())),
                span<uint8_t>(found.data(), int64_t(found.size())));
      size_t j = 0;
      for (const auto& [wi, wv] : spec.map(k.v)) {
        if (idx[j] != wi || vals[j] != wv || !found[j] || got_v[j] != wv) return differs("items / batch lookup", k, "other", "the spec's");
        ++j;
      }
    }
  }
  return "";
}

}  // namespace gsearch::test
