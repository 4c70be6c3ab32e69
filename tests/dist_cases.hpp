#pragma once
// The distributed operations' cases (gsearch/dist.hpp), shared by every transport and backend:
// the MPI test (mpirun -np 1, 2, 4), the in-process ranks of dist_threads.hpp (CPU and one GPU)
// and NCCL over the GPUs of a machine. Every rank makes the same global inputs from one seed,
// takes its shard, runs the operation, and checks its part of the result against the
// single-process reference (std:: with the library's order, plain loops) on the global inputs.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "test_util.hpp"

namespace gsearch::test::dist_cases {

using gsearch::dist::communicator;
using gsearch::dist::layout;

/// Host memory: the data as it is.
struct host_memory {
  cpu_t exec{};
  CUstream_st* exec_stream() const { return nullptr; }
  template <class T>
  std::vector<T> put(const std::vector<T>& h) const {
    return h;
  }
  template <class T>
  std::vector<T> get(span<const T> x) const {
    return std::vector<T>(x.begin(), x.end());
  }
  template <class T>
  T* alloc(int64_t n) {
    owned.push_back(std::shared_ptr<void>(new T[size_t(std::max<int64_t>(n, 1))], [](void* p) { delete[] static_cast<T*>(p); }));
    return static_cast<T*>(owned.back().get());
  }
  std::vector<std::shared_ptr<void>> owned;
};

/// Device memory on the current device, on exec's stream.
struct device_memory {
  cuda_t exec{};
  CUstream_st* exec_stream() const { return exec.stream; }
  template <class T>
  device_vector<T> put(const std::vector<T>& h) const {
    auto d = to_device(h);
    synchronize(cuda);  // the copy's DMA done before exec's stream (maybe non-blocking) reads it
    return d;
  }
  template <class T>
  std::vector<T> get(span<const T> x) const {
    synchronize(exec);
    std::unique_ptr<T[]> h(new T[size_t(x.size()) + 1]);  // (std::vector<bool> has no data())
    if (x.size() > 0) copy_to_host(h.get(), x.data(), size_t(x.size()) * sizeof(T));
    return std::vector<T>(h.get(), h.get() + x.size());
  }
  template <class T>
  T* alloc(int64_t n) {
    owned.push_back(std::shared_ptr<void>(device_malloc(size_t(std::max<int64_t>(n, 1)) * sizeof(T)), device_free));
    return static_cast<T*>(owned.back().get());
  }
  std::vector<std::shared_ptr<void>> owned;
};

/// The shards: a pattern of sizes (some empty, some large) over n elements.
inline std::vector<int64_t> shard_bounds(int64_t n, int ranks, int pattern) {
  std::vector<double> w(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    w[size_t(r)] = pattern == 0 ? 1.0 : pattern == 1 ? double(r % 3) : double((r * 7 + 3) % 5) + (r == 0 ? 4 : 0);
  double total = 0;
  for (double x : w) total += x;
  if (total == 0) w[0] = total = 1;
  std::vector<int64_t> b(size_t(ranks) + 1, 0);
  double acc = 0;
  for (int r = 0; r < ranks; ++r) {
    acc += w[size_t(r)];
    b[size_t(r) + 1] = r + 1 == ranks ? n : int64_t(double(n) * acc / total);
  }
  return b;
}

template <class T>
std::vector<T> slice(const std::vector<T>& v, const std::vector<int64_t>& b, int r) {
  return std::vector<T>(v.begin() + b[size_t(r)], v.begin() + b[size_t(r) + 1]);
}

/// Random values of T: `range` distinct values (heavy duplicates when small), with the edge
/// values of the type mixed in (NaN, -0.0, inf, the limits).
template <class T>
std::vector<T> values(std::mt19937_64& rng, int64_t n, int range, bool edges) {
  std::vector<T> v(static_cast<size_t>(n));
  const auto e = edge_values<T>();
  for (auto& x : v) x = edges && rng() % 16 == 0 ? e[rng() % e.size()] : small_value<T>(rng, range);
  return v;
}

/// Every rank's part of a result, gathered on every rank (host memory).
template <class T>
std::vector<T> gather_all(communicator& comm, const std::vector<T>& mine, CUstream_st* stream) {
  const int p = comm.size();
  const int64_t n = int64_t(mine.size());
  std::vector<int64_t> counts(static_cast<size_t>(p));
  comm.allgather_host(&n, 8, counts.data(), stream);
  int64_t most = *std::max_element(counts.begin(), counts.end());
  std::vector<T> padded(size_t(std::max<int64_t>(most, 1))), all(size_t(std::max<int64_t>(most, 1)) * size_t(p));
  std::copy(mine.begin(), mine.end(), padded.begin());
  comm.allgather_host(padded.data(), int64_t(padded.size() * sizeof(T)), all.data(), stream);
  std::vector<T> out;
  for (int r = 0; r < p; ++r)
    out.insert(out.end(), all.begin() + int64_t(r) * int64_t(padded.size()),
               all.begin() + int64_t(r) * int64_t(padded.size()) + counts[size_t(r)]);
  return out;
}

template <class T>
bool same_key(T a, T b) {
  return !key_less(a, b) && !key_less(b, a);
}

template <class T>
bool bits_equal_vectors(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_key(a[i], b[i])) return false;
  return true;
}

template <class T, class Mem>
void search_cases(Mem& mem, communicator& comm, uint64_t seed) {
  const int p = comm.size(), me = comm.rank();
  for (int pattern = 0; pattern < 3; ++pattern)
    for (int range : {4, 1000, 1 << 20}) {
      SCOPED_TRACE(testing::Message() << "search pattern " << pattern << " range " << range << " ranks " << p);
      std::mt19937_64 rng(seed + uint64_t(pattern * 31 + range));
      auto keys = values<T>(rng, 3000 + int64_t(rng() % 500), range, range > 4);
      sort_keys(keys);
      auto queries = values<T>(rng, 2000, range + 2, true);
      const auto kb = shard_bounds(int64_t(keys.size()), p, pattern);
      const auto qb = shard_bounds(int64_t(queries.size()), p, (pattern + 1) % 3);
      auto my_keys = mem.put(slice(keys, kb, me));
      auto all_keys = mem.put(keys);
      const auto my_q_host = slice(queries, qb, me);
      auto my_q = mem.put(my_q_host);
      for (side s : {side::left, side::right, side::pred})
        for (layout l : {layout::sharded, layout::replicated}) {
          int64_t* out = mem.template alloc<int64_t>(int64_t(my_q_host.size()));
          span<const T> k = l == layout::sharded ? span<const T>(my_keys) : span<const T>(all_keys);
          dist::search(mem.exec, comm, s, k, span<const T>(my_q), span<int64_t>(out, int64_t(my_q_host.size())), l);
          EXPECT_EQ(mem.get(span<const int64_t>(out, int64_t(my_q_host.size()))), reference_all(keys, my_q_host, s))
              << side_name(s) << (l == layout::sharded ? " sharded" : " replicated");
        }
    }
}

template <class T, class Mem>
void find_cases(Mem& mem, communicator& comm, uint64_t seed) {
  const int p = comm.size(), me = comm.rank();
  for (int pattern = 0; pattern < 3; ++pattern)
    for (int where : {0, 1, 2, 3}) {  // the one match at the start, the end, none, many
      SCOPED_TRACE(testing::Message() << "find pattern " << pattern << " where " << where << " ranks " << p);
      std::mt19937_64 rng(seed + uint64_t(pattern * 7 + where));
      const int64_t n = 20000;
      std::vector<T> data(static_cast<size_t>(n));
      for (auto& x : data) x = T(rng() % 50);
      const T needle = T(77);
      if (where == 0) data[17] = needle;
      if (where == 1) data[size_t(n - 3)] = needle;
      if (where == 3)
        for (int i = 0; i < 300; ++i) data[rng() % uint64_t(n)] = needle;
      const auto b = shard_bounds(n, p, pattern);
      auto mine = mem.put(slice(data, b, me));
      const auto pred = equal_to(needle);
      std::vector<int64_t> matches;
      for (int64_t i = 0; i < n; ++i)
        if (same_key(data[size_t(i)], needle)) matches.push_back(i);
      const int64_t first = matches.empty() ? -1 : matches[0];
      EXPECT_EQ(dist::find(mem.exec, comm, find_mode::first, span<const T>(mine), pred), first);
      EXPECT_EQ(dist::find(mem.exec, comm, find_mode::count, span<const T>(mine), pred), int64_t(matches.size()));
      const int64_t any = dist::find(mem.exec, comm, find_mode::any, span<const T>(mine), pred);
      if (matches.empty()) {
        EXPECT_EQ(any, -1);
      } else {
        EXPECT_TRUE(std::binary_search(matches.begin(), matches.end(), any)) << any;
      }
      int64_t* all = nullptr;
      const int64_t c = dist::find_all(mem.exec, comm, span<const T>(mine), pred,
                                       [&](int64_t k) { return all = mem.template alloc<int64_t>(k); });
      std::vector<int64_t> expect;
      for (int64_t i : matches)
        if (i >= b[size_t(me)] && i < b[size_t(me) + 1]) expect.push_back(i);
      EXPECT_EQ(mem.get(span<const int64_t>(all, c)), expect);

      // isin: the elements against test elements sharded (or replicated) across the ranks.
      auto tests = values<T>(rng, 64, 100, true);
      const auto tb = shard_bounds(int64_t(tests.size()), p, (pattern + 2) % 3);
      auto my_tests = mem.put(slice(tests, tb, me));
      auto all_tests = mem.put(tests);
      const auto my_data = slice(data, b, me);
      for (layout l : {layout::sharded, layout::replicated}) {
        bool* out = mem.template alloc<bool>(int64_t(my_data.size()));
        span<const T> t = l == layout::sharded ? span<const T>(my_tests) : span<const T>(all_tests);
        dist::isin(mem.exec, comm, span<const T>(mine), t, span<bool>(out, int64_t(my_data.size())), {}, l);
        const auto got = mem.get(span<const bool>(out, int64_t(my_data.size())));
        std::vector<bool> expect_member(my_data.size()), got_member(my_data.size());
        for (size_t i = 0; i < my_data.size(); ++i) {
          bool member = false;
          if (!std::isnan(double(my_data[i])))
            for (T x : tests) member = member || same_key(x, my_data[i]);
          expect_member[i] = member;
          got_member[i] = got[i];
        }
        EXPECT_EQ(got_member, expect_member) << (l == layout::sharded ? "sharded" : "replicated");
      }
    }
}

template <class T, class Mem>
void sort_cases(Mem& mem, communicator& comm, uint64_t seed) {
  const int p = comm.size(), me = comm.rank();
  for (int pattern = 0; pattern < 3; ++pattern)
    for (int range : {1, 5, 1 << 30}) {
      SCOPED_TRACE(testing::Message() << "sort pattern " << pattern << " range " << range << " ranks " << p);
      std::mt19937_64 rng(seed + uint64_t(pattern * 131 + range));
      const int64_t n = 6000 + int64_t(rng() % 1000);
      auto data = values<T>(rng, n, range, range > 5);
      auto expect = data;
      sort_keys(expect);
      const auto b = shard_bounds(n, p, pattern);
      auto mine = mem.put(slice(data, b, me));
      T* out = nullptr;
      const int64_t c = dist::sort(mem.exec, comm, span<const T>(mine), [&](int64_t k) { return out = mem.template alloc<T>(k); });
      const auto got = gather_all(comm, mem.get(span<const T>(out, c)), mem.exec_stream());
      EXPECT_TRUE(bits_equal_vectors(got, expect));
      // Balanced whatever the keys (all equal included): within the samples' resolution.
      EXPECT_LE(c, 2 * n / p + 2 * 64) << "rank " << me << " holds " << c << " of " << n;

      // merge: each shard sorted already.
      auto shard = slice(data, b, me);
      sort_keys(shard);
      auto sorted_shard = mem.put(shard);
      T* merged = nullptr;
      const int64_t m = dist::merge(mem.exec, comm, span<const T>(sorted_shard),
                                    [&](int64_t k) { return merged = mem.template alloc<T>(k); });
      EXPECT_TRUE(bits_equal_vectors(gather_all(comm, mem.get(span<const T>(merged, m)), mem.exec_stream()), expect));
    }
  // An unsorted shard anywhere: every rank throws.
  std::vector<T> bad{T(2), T(1)};
  auto unsorted = mem.put(me == p - 1 ? bad : std::vector<T>{});
  EXPECT_THROW(dist::merge(mem.exec, comm, span<const T>(unsorted), [&](int64_t k) { return mem.template alloc<T>(k); }),
               invalid_argument);
}

/// The single-process join of the whole tables, in global row numbers: stable sort by key
/// carrying row numbers, gsearch's CPU join, rows in place of positions.
template <class T>
std::vector<std::pair<int64_t, int64_t>> reference_join(join_kind kind, const std::vector<T>& left,
                                                        const std::vector<T>& right) {
  auto sorted_rows = [](const std::vector<T>& k) {
    std::vector<int64_t> rows(k.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = int64_t(i);
    std::stable_sort(rows.begin(), rows.end(), [&](int64_t a, int64_t b) { return key_less(k[size_t(a)], k[size_t(b)]); });
    return rows;
  };
  const auto lr = sorted_rows(left), rr = sorted_rows(right);
  std::vector<T> lk, rk;
  for (int64_t i : lr) lk.push_back(left[size_t(i)]);
  for (int64_t i : rr) rk.push_back(right[size_t(i)]);
  const int64_t rows = join_size(cpu, kind, span<const T>(lk), span<const T>(rk));
  std::vector<int64_t> li(static_cast<size_t>(rows)), ri(static_cast<size_t>(rows));
  join(cpu, kind, span<const T>(lk), span<const T>(rk), span<int64_t>(li),
       core::join_left_only(kind) ? span<int64_t>() : span<int64_t>(ri));
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < rows; ++i)
    out.push_back({li[size_t(i)] < 0 ? -1 : lr[size_t(li[size_t(i)])],
                   core::join_left_only(kind) || ri[size_t(i)] < 0 ? -1 : rr[size_t(ri[size_t(i)])]});
  return out;
}

template <class T, class Mem>
void join_cases(Mem& mem, communicator& comm, uint64_t seed) {
  const int p = comm.size(), me = comm.rank();
  for (int pattern = 0; pattern < 3; ++pattern)
    for (int range : {3, 200}) {
      std::mt19937_64 rng(seed + uint64_t(pattern * 17 + range));
      auto left = values<T>(rng, 700, range, true), right = values<T>(rng, 500, range + 5, true);
      const auto lb = shard_bounds(int64_t(left.size()), p, pattern);
      const auto rb = shard_bounds(int64_t(right.size()), p, (pattern + 1) % 3);
      auto my_left = mem.put(slice(left, lb, me)), my_right = mem.put(slice(right, rb, me));
      for (join_kind kind : {join_kind::inner, join_kind::left, join_kind::right, join_kind::full, join_kind::semi,
                             join_kind::anti}) {
        SCOPED_TRACE(testing::Message() << "join " << to_string(kind) << " pattern " << pattern << " range "
                                        << range << " ranks " << p);
        join_output out;
        const int64_t rows = dist::join(mem.exec, comm, kind, span<const T>(my_left), span<const T>(my_right),
                                        [&](int64_t k) {
                                          return out = {mem.template alloc<int64_t>(k),
                                                        core::join_left_only(kind) ? nullptr : mem.template alloc<int64_t>(k)};
                                        });
        const auto l = gather_all(comm, mem.get(span<const int64_t>(out.left, rows)), mem.exec_stream());
        std::vector<int64_t> r(l.size(), -1);
        if (!core::join_left_only(kind)) r = gather_all(comm, mem.get(span<const int64_t>(out.right, rows)), mem.exec_stream());
        std::vector<std::pair<int64_t, int64_t>> got;
        for (size_t i = 0; i < l.size() && i < r.size(); ++i) got.push_back({l[i], r[i]});
        EXPECT_EQ(got, reference_join(kind, left, right));
      }
    }
}

/// asof_join: this rank's slice of a sorted left side against the right side sharded (a slice a
/// rank of one sorted sequence) or replicated, with and without groups, against the
/// single-process join on the CPU of the whole sides. Pattern 3: the left rows dealt out to the
/// ranks in turn (each rank's sorted, their ranges overlapping: the routed join sends a right row
/// to every rank whose range covers it).
template <class T, class Mem>
void asof_cases(Mem& mem, communicator& comm, uint64_t seed) {
  const int p = comm.size(), me = comm.rank();
  for (int pattern = 0; pattern < 4; ++pattern) {
    std::mt19937_64 rng(seed + uint64_t(pattern * 13));
    auto left = values<T>(rng, 600, 50, false), right = values<T>(rng, 400, 60, false);
    sort_keys(left);
    sort_keys(right);
    std::vector<int64_t> left_by(left.size()), right_by(right.size());
    for (auto& g : left_by) g = int64_t(rng() % 4);
    for (auto& g : right_by) g = int64_t(rng() % 3);  // group 3 only on the left
    const auto lb = shard_bounds(int64_t(left.size()), p, pattern % 3), rb = shard_bounds(int64_t(right.size()), p, (pattern + 1) % 3);
    std::vector<int64_t> mine;  // this rank's left rows
    for (int64_t i = 0; i < int64_t(left.size()); ++i)
      if (pattern == 3 ? i % p == me : lb[size_t(me)] <= i && i < lb[size_t(me) + 1]) mine.push_back(i);
    const auto pick = [&](const auto& v) {
      std::vector<std::decay_t<decltype(v[0])>> x;
      for (int64_t i : mine) x.push_back(v[size_t(i)]);
      return x;
    };
    const auto my_left = mem.put(pick(left)), my_lby = mem.put(pick(left_by));
    const auto my_right = mem.put(slice(right, rb, me)), my_rby = mem.put(slice(right_by, rb, me));
    const auto all_right = mem.put(right), all_rby = mem.put(right_by);
    const int64_t n = int64_t(mine.size());
    for (asof_direction d : {asof_direction::backward, asof_direction::forward, asof_direction::nearest})
      for (bool grouped : {false, true})
        for (layout l : {layout::sharded, layout::replicated}) {
          SCOPED_TRACE(testing::Message() << "asof_join " << to_string(d) << (grouped ? " grouped" : "") << " pattern "
                                          << pattern << (l == layout::sharded ? " sharded" : " replicated") << " ranks " << p);
          asof_options<T> o;
          o.direction = d;
          o.allow_exact_matches = pattern % 2 == 0;
          if (pattern >= 2) o.tolerance = T(3);
          o.sort = pattern == 2 && grouped;  // (keys in any order: every right row to every rank)
          std::vector<int64_t> want(left.size());
          if (grouped)
            asof_join(cpu, span<const T>(left), span<const T>(right), span<const int64_t>(left_by),
                      span<const int64_t>(right_by), 4, span<int64_t>(want), o);
          else
            asof_join(cpu, span<const T>(left), span<const T>(right), span<int64_t>(want), o);
          int64_t* out = mem.template alloc<int64_t>(n);
          const bool sharded = l == layout::sharded;
          const span<const T> r = sharded ? span<const T>(my_right) : span<const T>(all_right);
          const span<const int64_t> rby = sharded ? span<const int64_t>(my_rby) : span<const int64_t>(all_rby);
          if (grouped)
            dist::asof_join(mem.exec, comm, span<const T>(my_left), r, span<const int64_t>(my_lby), rby, 4,
                            span<int64_t>(out, n), o, l);
          else
            dist::asof_join(mem.exec, comm, span<const T>(my_left), r, span<int64_t>(out, n), o, l);
          EXPECT_EQ(mem.get(span<const int64_t>(out, n)), pick(want));
        }
  }
}

/// Every case for every key type (GSEARCH_TEST_SUBSET: int32, uint64 and double, as
/// subset_typed_test).
template <class Mem>
void all_cases(Mem& mem, communicator& comm, uint64_t seed) {
  auto each = [&]<class T>() {
    if (test_subset() && !(std::is_same_v<T, int32_t> || std::is_same_v<T, uint64_t> || std::is_same_v<T, double>))
      return;
    SCOPED_TRACE(testing::Message() << "type " << key_traits<T>::name);
    search_cases<T>(mem, comm, seed);
    find_cases<T>(mem, comm, seed);
    sort_cases<T>(mem, comm, seed);
    join_cases<T>(mem, comm, seed);
    asof_cases<T>(mem, comm, seed);
  };
  each.template operator()<int32_t>();
  each.template operator()<uint32_t>();
  each.template operator()<int64_t>();
  each.template operator()<uint64_t>();
  each.template operator()<float>();
  each.template operator()<double>();
}

// ---- errors: the ranks fail together (dist/agreement.hpp) -------------------------------------------

/// The operations the fault injection runs, each on 64 int32 values a rank (sorted in the global
/// order, so that every operation runs all of its steps).
inline constexpr int fault_ops = 9;
inline const char* fault_op_name(int op) {
  static const char* names[fault_ops] = {"search", "search replicated", "find",  "find_all", "isin",
                                         "sort",   "merge",             "join",  "asof_join"};
  return names[op];
}

/// Runs fault operation `op` on this rank's part; `fail_allocation`: the operation's allocate
/// callback throws std::bad_alloc on this rank (sort, find_all, merge, join: a step that fails
/// between two exchanges without any fault injected).
template <class Mem>
void run_fault_op(Mem& mem, communicator& comm, int op, bool fail_allocation = false) {
  const int me = comm.rank(), p = comm.size();
  constexpr int64_t n = 64;
  std::vector<int32_t> mine(size_t{n}), everyone(size_t(n) * size_t(p));
  for (int64_t i = 0; i < n; ++i) mine[size_t(i)] = int32_t(me * n + i);
  for (size_t i = 0; i < everyone.size(); ++i) everyone[i] = int32_t(i);
  auto x = mem.put(mine);
  auto all = mem.put(everyone);
  const span<const int32_t> part(x);
  int64_t* out = mem.template alloc<int64_t>(n);
  bool* mask = mem.template alloc<bool>(n);
  const auto ids = [&](int64_t k) -> int64_t* {
    if (fail_allocation) throw std::bad_alloc();
    return mem.template alloc<int64_t>(k);
  };
  const auto keys = [&](int64_t k) -> int32_t* {
    if (fail_allocation) throw std::bad_alloc();
    return mem.template alloc<int32_t>(k);
  };
  switch (op) {
    case 0: dist::search(mem.exec, comm, side::left, part, part, span<int64_t>(out, n)); break;
    case 1:
      dist::search(mem.exec, comm, side::right, span<const int32_t>(all), part, span<int64_t>(out, n),
                   layout::replicated);
      break;
    case 2: dist::find(mem.exec, comm, find_mode::first, part, equal_to(int32_t(5))); break;
    case 3: dist::find_all(mem.exec, comm, part, greater(int32_t(3)), ids); break;
    case 4: dist::isin(mem.exec, comm, part, part, span<bool>(mask, n)); break;
    case 5: dist::sort(mem.exec, comm, part, keys); break;
    case 6: dist::merge(mem.exec, comm, part, keys); break;
    case 7:
      dist::join(mem.exec, comm, join_kind::inner, part, part,
                 [&](int64_t rows) { return join_output{ids(rows), ids(rows)}; });
      break;
    default: dist::asof_join(mem.exec, comm, part, part, span<int64_t>(out, n)); break;
  }
  (void)mem.get(span<const int64_t>(out, n));  // waits for the operation's work (CUDA)
}

/// One run of fault operation `op` while GSEARCH_DIST_FAULT names rank `faulty` (set on every rank
/// by the caller): whether this rank threw, after checking that it threw what the agreement
/// promises: the injected fault itself on the faulty rank, the agreed error naming it elsewhere.
template <class Mem>
bool fault_thrown(Mem& mem, communicator& comm, int op, int faulty) {
  try {
    run_fault_op(mem, comm, op);
    return false;
  } catch (const error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fault injected on rank " + std::to_string(faulty)), std::string::npos) << what;
    if (comm.rank() != faulty) {
      EXPECT_NE(what.find("rank " + std::to_string(faulty) + " of " + std::to_string(comm.size()) + " failed: "),
                std::string::npos)
          << what;
    }
    return true;
  }
}

/// GSEARCH_DIST_FAULT for a step: "faulty:step", or unset (step < 0).
inline void set_fault(int faulty, int step) {
  if (step < 0) {
    unsetenv("GSEARCH_DIST_FAULT");
  } else {
    const std::string spec = std::to_string(faulty) + ":" + std::to_string(step);
    setenv("GSEARCH_DIST_FAULT", spec.c_str(), 1);
  }
}

/// The fault injection's driver, for every operation and every faulty rank: steps 0, 1, ... until
/// the operation runs through (the fault past its last agreement point), each run on every rank
/// by `run_ranks(op, faulty)`, which returns whether the ranks threw (the same on every rank, or
/// -1 where they differ). Every step either fails on every rank or on none; a hang (a rank left in
/// a collective) is the test's timeout.
template <class RunRanks>
void every_fault(int ranks, RunRanks&& run_ranks) {
  for (int op = 0; op < fault_ops; ++op)
    for (int faulty = 0; faulty < ranks; ++faulty) {
      int step = 0;
      for (;; ++step) {
        SCOPED_TRACE(testing::Message() << fault_op_name(op) << ": rank " << faulty << " fails at step " << step
                                        << " of " << ranks << " ranks");
        set_fault(faulty, step);
        const int threw = run_ranks(op, faulty);
        ASSERT_NE(threw, -1) << "some ranks threw, others did not";
        if (!threw) break;
        ASSERT_LT(step, 100) << "the fault never stops firing";
      }
      set_fault(faulty, -1);
      // One rank: nothing to agree, no points; more: the operation has at least its closing one.
      if (ranks > 1) {
        EXPECT_GT(step, 0) << fault_op_name(op) << ": no agreement point";
      }
    }
}

/// Keys that every rank holds in full, passed as sharded: an error on every rank, not a wrong
/// answer (each rank's first key is below the last of the rank before).
template <class Mem>
void replicated_keys_as_sharded(Mem& mem, communicator& comm) {
  if (comm.size() == 1) return;
  std::vector<int32_t> keys{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, queries{5, 9};
  auto k = mem.put(keys);
  auto q = mem.put(queries);
  int64_t* out = mem.template alloc<int64_t>(2);
  try {
    dist::search(mem.exec, comm, side::left, span<const int32_t>(k), span<const int32_t>(q), span<int64_t>(out, 2));
    ADD_FAILURE() << "replicated keys passed as sharded were searched";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1's first key is below rank 0's last"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("replicated"), std::string::npos) << e.what();
  }
}

/// An allocation that fails on rank `faulty` only, inside sort, find_all, merge and join: every
/// rank throws; the faulty rank its own std::bad_alloc, the others out_of_memory naming it.
template <class Mem>
void failed_allocation(Mem& mem, communicator& comm, int faulty) {
  if (comm.size() == 1) return;
  for (int op : {3, 5, 6, 7}) {
    SCOPED_TRACE(testing::Message() << fault_op_name(op) << ": rank " << faulty << "'s allocation fails");
    try {
      run_fault_op(mem, comm, op, comm.rank() == faulty);
      ADD_FAILURE() << "no rank threw";
    } catch (const std::bad_alloc&) {
      EXPECT_EQ(comm.rank(), faulty);
    } catch (const out_of_memory& e) {
      EXPECT_NE(comm.rank(), faulty);
      EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(faulty) + " of "), std::string::npos) << e.what();
    }
  }
}

}  // namespace gsearch::test::dist_cases
