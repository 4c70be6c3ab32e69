#pragma once
// Random operation streams for gsearch::functional_arrays, replayed on a machine and on the
// executable specification (functional_arrays_spec.hpp) side by side, every answer compared:
// the CPU tests run them, and the GPU tests will. The mixes are adversarial on purpose: updates
// of old versions, long chains, wide fans from one parent, few indices (many carves of one
// index) or sparse huge ones (INT64_MIN and INT64_MAX among them), releases and re-use, and a
// full machine (out_of_memory, after which every live array must read as before). And the
// handles' checks (another machine's, another value type's, a released slot reused) and a
// backend pass that fails (no version slot kept), on either backend.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "functional_arrays/machine.hpp"
#include "gsearch/functional_arrays.hpp"
#include "gsearch/functional_arrays_spec.hpp"

namespace gsearch::detail {
// A machine's backend, for the tests alone (functional_arrays.hpp declares it a friend).
template <class V>
struct functional_arrays_backend {
  static std::unique_ptr<functional_arrays_machine<V>>& of(functional_arrays<V>& fa) { return fa.machine_; }
};
}  // namespace gsearch::detail

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

/// The message of what `op` throws (invalid_argument expected), "" when it throws nothing.
template <class Op>
std::string fa_refusal(Op&& op) {
  try {
    op();
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return "";
}

/// Handles are tied to their machine: two fresh machines a and b (int64) and c (double), of at
/// least 8 cells on one backend, given the same operations make handles of the same slots and
/// generations, and each machine refuses the others' (every operation, release included, and
/// nothing changes); a released slot's handle is refused once the slot holds a newer array.
inline void fa_handles_are_tied_to_their_machine(functional_arrays<int64_t>& a, functional_arrays<int64_t>& b,
                                                 functional_arrays<double>& c) {
  using array = functional_arrays<int64_t>::array;
  const array x = a.update(a.empty(), 1, 10);
  const array y = b.update(b.empty(), 1, 20);
  const auto z = c.update(c.empty(), 1, 2.5);
  ASSERT_EQ(x.slot, y.slot);
  ASSERT_EQ(x.generation, y.generation);
  EXPECT_NE(x.machine, y.machine);
  EXPECT_NE(x, y);
  EXPECT_NE(a.id(), b.id());
  EXPECT_NE(a.id(), c.id());
  EXPECT_FALSE(b.live(x));
  const int64_t b_arrays = b.live_arrays(), b_cells = b.free_cells();
  const std::string foreign = fa_refusal([&] { b.lookup(x, 1); });
  EXPECT_NE(foreign.find("lookup: the array is another machine's"), std::string::npos) << foreign;
  EXPECT_THROW(b.update(x, 1, 30), invalid_argument);
  EXPECT_THROW(b.remove(x, 1), invalid_argument);
  EXPECT_THROW(b.size(x), invalid_argument);
  EXPECT_THROW(b.next(x, 0), invalid_argument);
  EXPECT_THROW(b.post_lookup(x, 1), invalid_argument);
  std::vector<int64_t> idx;
  std::vector<int64_t> vals;
  EXPECT_THROW(b.items(x, idx, vals), invalid_argument);
  const std::string released = fa_refusal([&] { b.release(x); });
  EXPECT_NE(released.find("release: the array is another machine's"), std::string::npos) << released;
  EXPECT_EQ(b.live_arrays(), b_arrays);  // nothing made, nothing released
  EXPECT_EQ(b.free_cells(), b_cells);
  EXPECT_EQ(b.lookup(y, 1), 20);  // b's own array is still there
  EXPECT_EQ(a.lookup(x, 1), 10);
  // Another value type's machine: a handle of the same fields, as Python passes them.
  const functional_arrays<double>::array x_on_c{x.slot, x.generation, x.machine};
  ASSERT_EQ(x_on_c.slot, z.slot);
  EXPECT_THROW(c.lookup(x_on_c, 1), invalid_argument);
  EXPECT_THROW(c.release(x_on_c), invalid_argument);
  EXPECT_EQ(c.lookup(z, 1), 2.5);
  EXPECT_EQ(c.live_arrays(), 2);
  // A released array's slot, reused: the old handle is refused, the new one reads its own.
  const array old = a.update(x, 2, 5);
  a.release(old);
  const array reused = a.update(x, 2, 6);
  ASSERT_EQ(reused.slot, old.slot);
  EXPECT_NE(reused.generation, old.generation);
  const std::string stale = fa_refusal([&] { a.lookup(old, 2); });
  EXPECT_NE(stale.find("lookup: the array was released"), std::string::npos) << stale;
  EXPECT_THROW(a.release(old), invalid_argument);
  EXPECT_THROW(a.update(old, 3, 1), invalid_argument);
  EXPECT_EQ(a.lookup(reused, 2), 6);
  EXPECT_THROW(a.lookup(array{}, 1), invalid_argument);  // no machine's
  EXPECT_EQ(a.check(), "");
  EXPECT_EQ(b.check(), "");
}

/// A backend whose root and insert passes throw on demand (a CUDA error's stand-in), around the
/// machine's own.
template <class V>
class fa_failing_machine final : public detail::functional_arrays_machine<V> {
 public:
  explicit fa_failing_machine(std::unique_ptr<detail::functional_arrays_machine<V>> inner) : inner_(std::move(inner)) {}
  int inserts_before_failing = -1;  ///< inserts that succeed before they throw (-1: never throw)
  bool fail_root = false;

  int64_t cells() const override { return inner_->cells(); }
  int64_t version_slots() const override { return inner_->version_slots(); }
  int persistent_blocks() const override { return inner_->persistent_blocks(); }
  void root(int64_t slot) override {
    if (fail_root) throw error("fa_failing_machine: root failed");
    inner_->root(slot);
  }
  int insert(int64_t parent, int64_t child, core::fa_change change, int64_t i, V v, int64_t remainder,
             int64_t fresh) override {
    if (inserts_before_failing == 0) throw error("fa_failing_machine: insert failed");
    if (inserts_before_failing > 0) --inserts_before_failing;
    return inner_->insert(parent, child, change, i, v, remainder, fresh);
  }
  std::optional<V> lookup(int64_t slot, int64_t i) override { return inner_->lookup(slot, i); }
  int64_t size(int64_t slot) override { return inner_->size(slot); }
  std::optional<int64_t> next(int64_t slot, int64_t i) override { return inner_->next(slot, i); }
  uint64_t post_query(core::fa_query q, int64_t slot, int64_t i) override { return inner_->post_query(q, slot, i); }
  core::fa_result<V> take(uint64_t ticket) override { return inner_->take(ticket); }
  void sync() override { inner_->sync(); }
  bool lookup_many(int64_t slot, const int64_t* idx, int64_t n, V* values, uint8_t* found) override {
    return inner_->lookup_many(slot, idx, n, values, found);
  }
  void items(int64_t slot, std::vector<int64_t>& idx, std::vector<V>& values) override { inner_->items(slot, idx, values); }
  std::vector<int64_t> collect(span<const int64_t> live) override { return inner_->collect(live); }
  std::vector<int64_t> unfilled(bool wait) override { return inner_->unfilled(wait); }
  std::string check(span<const int64_t> live) override { return inner_->check(live); }
  std::string check_index(int64_t i) override { return inner_->check_index(i); }

 private:
  std::unique_ptr<detail::functional_arrays_machine<V>> inner_;
};

/// A backend pass that throws keeps no version slot: fa (a fresh machine of at least 16 cells
/// and exactly 4 version slots, either backend) fails empty, update, remove and a batch update
/// in its middle many more times than it has slots, and then every slot is still there to take;
/// the arrays made before read as before.
inline void fa_failed_pass_keeps_no_slot(functional_arrays<int64_t>& fa) {
  auto& backend = detail::functional_arrays_backend<int64_t>::of(fa);
  auto* failing = new fa_failing_machine<int64_t>(std::move(backend));
  backend.reset(failing);
  ASSERT_EQ(fa.version_slots(), 4);
  const auto a = fa.update(fa.empty(), 1, 10);
  const int64_t arrays = fa.live_arrays();
  ASSERT_EQ(arrays, 2);
  const std::vector<int64_t> idx{5, 6, 7};
  const std::vector<int64_t> vals{50, 60, 70};
  for (int k = 0; k < 8; ++k) {
    failing->inserts_before_failing = 0;
    EXPECT_THROW(fa.update(a, 2, 20), error);
    EXPECT_THROW(fa.remove(a, 1), error);
    failing->inserts_before_failing = 2;  // the batch's third update fails
    EXPECT_THROW(fa.update(a, span<const int64_t>(idx.data(), 3), span<const int64_t>(vals.data(), 3)), error);
    failing->inserts_before_failing = -1;
    failing->fail_root = true;
    EXPECT_THROW(fa.empty(), error);
    failing->fail_root = false;
    EXPECT_EQ(fa.live_arrays(), arrays) << "round " << k;
  }
  EXPECT_EQ(fa.lookup(a, 1), 10);
  EXPECT_EQ(fa.size(a), 1);
  // The two free slots are free: two arrays fit, a third is out of slots.
  const auto b = fa.update(a, 2, 20);
  const auto c = fa.remove(b, 1);
  EXPECT_EQ(fa.live_arrays(), 4);
  EXPECT_THROW(fa.empty(), out_of_memory);
  EXPECT_EQ(fa.lookup(b, 2), 20);
  EXPECT_EQ(fa.lookup(c, 1), std::nullopt);
  EXPECT_EQ(fa.lookup(c, 2), 20);
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
