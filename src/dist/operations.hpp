#pragma once
// The distributed operations (gsearch/dist.hpp), written once over a backend's Local (local.hpp)
// and a communicator: the plans come from core/dist.hpp, the local work from the public
// single-process API (search, find, sort, merge, join), the exchanges from the
// communicator (asof_join has its own file, asof_join.hpp). Host round trips: the counts of each
// exchange (and the samples of a sort).

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gsearch/core/dist.hpp"
#include "gsearch/dist.hpp"
#include "gsearch/find.hpp"
#include "gsearch/merge.hpp"
#include "gsearch/search.hpp"
#include "local.hpp"

namespace gsearch::dist::detail {

template <class Local>
void check_memory(const Local&, communicator& comm, const char* op) {
  if (comm.device_memory() != Local::device)
    throw invalid_argument(std::string("gsearch::dist::") + op + ": the communicator's buffers are " +
                           (comm.device_memory() ? "device" : "host") + " memory, the call's " +
                           (Local::device ? "gsearch::cuda (device memory)" : "gsearch::cpu (host memory)") +
                           ": use a communicator of the execution's memory (NCCL for cuda, MPI for cpu)");
}

template <class T>
void check_span(const char* op, const char* what, span<const T> x) {
  if (x.size() < 0 || (x.size() > 0 && !x.data()))
    throw invalid_argument(std::string("gsearch::dist::") + op + ": " + what +
                           ": null data with a non-zero size (or a negative size)");
}

/// GSEARCH_DIST_TRACE=1: the time of each step of an operation, a line per step on stderr
/// ("dist rank R op: step ms"). It waits for the backend at every step, so the steps add up
/// (and the whole is slower): a diagnosis, never on while timing the whole.
template <class Local>
class step_timer {
 public:
  step_timer(const Local& local, int rank, const char* op) : local_(local), rank_(rank), op_(op) {
    const char* e = std::getenv("GSEARCH_DIST_TRACE");
    on_ = e && *e && *e != '0';
    if (on_) {
      local_.wait();
      last_ = std::chrono::steady_clock::now();
    }
  }
  void operator()(const char* step) {
    if (!on_) return;
    local_.wait();
    const auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "dist rank %d %s: %s %.3f ms\n", rank_, op_, step,
                 std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  const Local& local_;
  int rank_;
  const char* op_;
  bool on_ = false;
  std::chrono::steady_clock::time_point last_;
};

/// Every rank's value of a trivially copyable v.
template <class Local, class V>
std::vector<V> allgather(const Local& local, communicator& comm, const V& v) {
  std::vector<V> all(size_t(comm.size()));
  comm.allgather_host(&v, int64_t(sizeof(V)), all.data(), local.stream());
  return all;
}

/// What each rank sends to this one, from what this one sends to each (a P x P exchange).
template <class Local>
std::vector<int64_t> exchange_counts(const Local& local, communicator& comm,
                                     const std::vector<int64_t>& send) {
  const int p = comm.size(), me = comm.rank();
  std::vector<int64_t> matrix(size_t(p) * size_t(p));
  comm.allgather_host(send.data(), int64_t(p) * 8, matrix.data(), local.stream());
  std::vector<int64_t> recv(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) recv[size_t(r)] = matrix[size_t(r) * size_t(p) + size_t(me)];
  return recv;
}

inline std::vector<int64_t> bytes_of(const std::vector<int64_t>& counts, int64_t element_bytes) {
  std::vector<int64_t> b(counts);
  for (auto& x : b) x *= element_bytes;
  return b;
}

inline int64_t sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

/// Sends the runs of `send` (send_counts[r] elements for rank r, in rank order) and returns what
/// arrives (recv_counts[r] from rank r, in rank order).
template <class Local, class T>
array<T> exchange(const Local& local, communicator& comm, const T* send,
                  const std::vector<int64_t>& send_counts, const std::vector<int64_t>& recv_counts) {
  array<T> recv = local.template make<T>(sum(recv_counts));
  const auto sb = bytes_of(send_counts, sizeof(T)), rb = bytes_of(recv_counts, sizeof(T));
  comm.alltoallv(send, sb.data(), recv.data(), rb.data(), local.stream());
  return recv;
}

// ---- search ------------------------------------------------------------------------------------

/// invalid_argument (on every rank: each checks every rank's ends) unless the non-empty shards are
/// in the global order: each one's first key not below the last key of the one before. Keys that
/// every rank holds in full fail it (rank 1's first key is below rank 0's last), so that a
/// replicated key set passed as sharded is an error, not a wrong answer.
template <class Head>
void check_shard_order(const std::vector<Head>& heads, const char* op, const char* what) {
  int before = -1;  // the nearest non-empty rank so far
  for (int r = 0; r < int(heads.size()); ++r) {
    const Head& h = heads[size_t(r)];
    if (h.count == 0) continue;
    if (before >= 0 && key_less(h.first, heads[size_t(before)].last))
      throw invalid_argument(std::string("gsearch::dist::") + op + ": the " + what + " of the ranks are not one sorted " +
                             "sequence: rank " + std::to_string(r) + "'s first key is below rank " +
                             std::to_string(before) + "'s last; sharded " + what + " are one range of the " +
                             "global order per rank, in rank order (as dist::sort leaves them); " + what +
                             " that every rank holds in full are layout::replicated (sharded=False in Python)");
    before = r;
  }
}

template <class Local, class T>
void search(const Local& local, communicator& comm, side s, span<const T> keys, span<const T> queries,
            span<int64_t> out, layout keys_layout) {
  check_memory(local, comm, "search");
  check_span("search", "keys", keys);
  check_span("search", "queries", queries);
  if (out.size() != queries.size())
    throw invalid_argument("gsearch::dist::search: out has " + std::to_string(out.size()) +
                           " elements for " + std::to_string(queries.size()) + " queries");
  if (keys_layout == layout::replicated || comm.size() == 1) {
    gsearch::search(local.exec, s, keys, queries, out);  // nothing to exchange
    return;
  }
  const int p = comm.size(), me = comm.rank();
  step_timer step(local, me, "search");
  // The plan: every rank's key count and first key (and last, for the order check).
  struct head {
    int64_t count;
    T first, last;
  } mine{keys.size(), T{}, T{}};
  if (keys.size() > 0) {
    local.to_host(&mine.first, keys.data(), sizeof(T));
    local.to_host(&mine.last, keys.data() + keys.size() - 1, sizeof(T));
  }
  const auto heads = allgather(local, comm, mine);
  std::vector<int64_t> counts;
  std::vector<T> firsts;
  for (const auto& h : heads) {
    counts.push_back(h.count);
    firsts.push_back(h.first);
  }
  check_shard_order(heads, "search", "keys");
  const auto plan = core::dist::make_owner_plan(counts, firsts);
  step("plan");
  // The side the owners and the local answers are searched on (pred: right, then upper_bound - 1).
  const auto [route, pred_offset] =
      visit_side(s, []<bool Strict>(int offset) { return std::pair{Strict ? side::left : side::right, offset}; });

  // Route: the owner of every query, then the queries packed by owner.
  const int64_t n = queries.size();
  array<int64_t> perm = local.template make<int64_t>(n);
  std::vector<int64_t> send_counts(size_t(p), 0);
  if (plan.boundaries.empty()) {
    local.iota(perm.data(), n, 0);
    send_counts[0] = n;
  } else {
    array<T> boundaries = local.template make<T>(int64_t(plan.boundaries.size()));
    local.from_host(boundaries.data(), plan.boundaries.data(), boundaries.size() * int64_t(sizeof(T)));
    array<int32_t> owner = local.template make<int32_t>(n);
    gsearch::search(local.exec, route, boundaries.cview(), queries, owner.view());
    step("owners");
    send_counts = local.partition(owner.data(), n, p, perm.data());
  }
  step("partition");
  array<T> packed = local.template make<T>(n);
  local.gather(queries.data(), perm.data(), n, packed.data());
  step("pack");
  const auto recv_counts = exchange_counts(local, comm, send_counts);
  step("counts");
  array<T> mine_queries = exchange(local, comm, packed.data(), send_counts, recv_counts);
  step("exchange queries");

  // Answer this rank's share, as global indices, and send the answers back.
  array<int64_t> answers = local.template make<int64_t>(mine_queries.size());
  gsearch::search(local.exec, route, keys, mine_queries.cview(), answers.view());
  local.shift(answers.data(), answers.size(), plan.offsets[size_t(me)] + pred_offset);
  step("local search");
  array<int64_t> back = exchange(local, comm, answers.data(), recv_counts, send_counts);
  step("exchange answers");
  local.scatter(back.data(), perm.data(), n, out.data());
  step("unpack");
}

// ---- find --------------------------------------------------------------------------------------

/// offsets[r]: the global index of rank r's first element.
template <class Local>
std::vector<int64_t> rank_offsets(const Local& local, communicator& comm, int64_t n) {
  auto counts = allgather(local, comm, n);
  return core::dist::exclusive_offsets(counts);
}

template <class Local, class T>
int64_t find(const Local& local, communicator& comm, find_mode mode, span<const T> data,
             const predicate<T>& pred) {
  check_memory(local, comm, "find");
  check_span("find", "data", data);
  if (mode != find_mode::first && mode != find_mode::any && mode != find_mode::count)
    throw invalid_argument(std::string("gsearch::dist::find: mode '") + std::string(to_string(mode)) +
                           "' is not distributed (first, any and count are; find_all has its own call)");
  // One exchange: every rank's element count (its offset) and local answer together.
  struct part {
    int64_t count, found;
  };
  const auto parts = allgather(local, comm, part{data.size(), gsearch::find(local.exec, mode, data, pred)});
  int64_t offset = 0, total = 0, best = -1;
  for (const auto& x : parts) {
    if (mode == find_mode::count) {
      total += x.found;
    } else if (best < 0 && x.found >= 0) {  // first and any: the lowest rank's (any: the same on every rank)
      best = offset + x.found;
    }
    offset += x.count;
  }
  return mode == find_mode::count ? total : best;
}

template <class Local, class T>
int64_t find_all(const Local& local, communicator& comm, span<const T> data, const predicate<T>& pred,
                 const std::function<int64_t*(int64_t)>& allocate) {
  check_memory(local, comm, "find_all");
  check_span("find_all", "data", data);
  const auto offsets = rank_offsets(local, comm, data.size());
  int64_t* out = nullptr;
  const int64_t n = gsearch::find_all(local.exec, data, pred, [&](int64_t c) { return out = allocate(c); });
  local.shift(out, n, offsets[size_t(comm.rank())]);
  return n;
}

template <class Local, class T>
void isin(const Local& local, communicator& comm, span<const T> elements, span<const T> tests,
          span<bool> out, const isin_options& options, layout tests_layout) {
  check_memory(local, comm, "isin");
  check_span("isin", "elements", elements);
  check_span("isin", "test_elements", tests);
  if (tests_layout == layout::replicated || comm.size() == 1) {
    gsearch::isin(local.exec, elements, tests, out, options);
    return;
  }
  // Every rank's test elements to every rank (test sets are small beside the data they test).
  const int p = comm.size();
  std::vector<int64_t> send_counts(size_t(p), tests.size());
  const auto recv_counts = exchange_counts(local, comm, send_counts);
  array<T> copies = local.template make<T>(tests.size() * p);
  local.replicate(tests.data(), tests.size() * int64_t(sizeof(T)), p, copies.data());
  array<T> all = exchange(local, comm, copies.data(), send_counts, recv_counts);
  gsearch::isin(local.exec, elements, all.cview(), out, options);
}

// ---- sort, merge -------------------------------------------------------------------------------

/// The samples of this rank's sorted run, on the host.
template <class Local, class T>
std::vector<core::dist::sample<T>> take_samples(const Local& local, span<const T> sorted, int me,
                                                int64_t want) {
  const auto positions = core::dist::sample_positions(sorted.size(), want);
  const int64_t s = int64_t(positions.size());
  std::vector<core::dist::sample<T>> samples;
  if (s == 0) return samples;
  std::vector<T> keys(static_cast<size_t>(s));
  if constexpr (Local::device) {
    array<int64_t> idx = local.template make<int64_t>(s);
    array<T> picked = local.template make<T>(s);
    local.from_host(idx.data(), positions.data(), s * 8);
    local.gather(sorted.data(), idx.data(), s, picked.data());
    local.to_host(keys.data(), picked.data(), s * int64_t(sizeof(T)));
  } else {
    for (int64_t i = 0; i < s; ++i) keys[size_t(i)] = sorted[positions[size_t(i)]];
  }
  const double weight = double(sorted.size()) / double(s);
  for (int64_t i = 0; i < s; ++i) samples.push_back({keys[size_t(i)], me, positions[size_t(i)], weight});
  return samples;
}

/// The splitters of all ranks' sorted runs (one run per side: a join samples both tables).
template <class Local, class T>
std::vector<core::dist::sample<T>> splitters_of(const Local& local, communicator& comm,
                                                const std::vector<span<const T>>& runs) {
  const int p = comm.size(), me = comm.rank();
  std::vector<int64_t> sizes;
  for (auto r : runs) sizes.push_back(r.size());
  // Every rank's sizes per run, so that every rank knows every rank's sample count.
  std::vector<int64_t> everyone(size_t(p) * runs.size());
  comm.allgather_host(sizes.data(), int64_t(runs.size()) * 8, everyone.data(), local.stream());
  std::vector<int64_t> totals(runs.size(), 0);
  for (int r = 0; r < p; ++r)
    for (size_t k = 0; k < runs.size(); ++k) totals[k] += everyone[size_t(r) * runs.size() + k];
  int64_t most = 0;  // the largest sample count of any rank: the padded size of the exchange
  for (int r = 0; r < p; ++r) {
    int64_t c = 0;
    for (size_t k = 0; k < runs.size(); ++k)
      c += core::dist::sample_count(everyone[size_t(r) * runs.size() + k], totals[k], p);
    most = std::max(most, c);
  }
  std::vector<core::dist::sample<T>> mine;
  for (size_t k = 0; k < runs.size(); ++k) {
    auto s = take_samples(local, runs[k], me, core::dist::sample_count(runs[k].size(), totals[k], p));
    mine.insert(mine.end(), s.begin(), s.end());
  }
  struct slot {
    core::dist::sample<T> s;
    int64_t used;
  };
  std::vector<slot> padded(size_t(most), slot{{}, 0});
  for (size_t i = 0; i < mine.size(); ++i) padded[i] = {mine[i], 1};
  std::vector<slot> all(size_t(most) * size_t(p));
  if (most > 0)
    comm.allgather_host(padded.data(), most * int64_t(sizeof(slot)), all.data(), local.stream());
  std::vector<core::dist::sample<T>> samples;
  for (const auto& x : all)
    if (x.used) samples.push_back(x.s);
  return core::dist::choose_splitters(std::move(samples), p);
}

/// Where this rank's sorted run is cut for the ranks: by tag (sort: equal keys may span ranks) or
/// by key alone (join: equal keys on one rank). Returns the counts per rank.
template <class Local, class T>
std::vector<int64_t> cut_counts(const Local& local, communicator& comm, span<const T> sorted,
                                const std::vector<core::dist::sample<T>>& splitters, bool by_key) {
  const int64_t m = int64_t(splitters.size());
  std::vector<T> keys;
  for (const auto& s : splitters) keys.push_back(s.key);
  std::vector<int64_t> lo(static_cast<size_t>(m)), hi(static_cast<size_t>(m));
  if (m > 0) {
    array<T> q = local.template make<T>(m);
    array<int64_t> a = local.template make<int64_t>(m), b = local.template make<int64_t>(m);
    local.from_host(q.data(), keys.data(), m * int64_t(sizeof(T)));
    gsearch::search(local.exec, side::left, sorted, q.cview(), a.view());
    gsearch::search(local.exec, side::right, sorted, q.cview(), b.view());
    local.to_host(lo.data(), a.data(), m * 8);
    local.to_host(hi.data(), b.data(), m * 8);
  }
  std::vector<int64_t> cuts(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) {
    const auto& s = splitters[size_t(j)];
    cuts[size_t(j)] = core::dist::cut(lo[size_t(j)], hi[size_t(j)], comm.rank(), by_key ? INT_MAX : s.rank,
                                      s.position);
  }
  std::vector<int64_t> counts = core::dist::counts_from_cuts(cuts, sorted.size());
  counts.resize(size_t(comm.size()), 0);  // fewer splitters than cuts: nothing for the last ranks
  return counts;
}

/// Merges the sorted runs of `runs` (counts per run, in order) of keys (and values, when given)
/// pairwise, stable (an earlier run's elements first among equals), into out (and out_values).
template <class Local, class T>
void merge_runs(const Local& local, array<T> keys, array<int64_t> values, std::vector<int64_t> runs,
                T* out, int64_t* out_values) {
  const bool with_values = out_values != nullptr;
  const int64_t n = keys.size();
  array<T> other = local.template make<T>(n);
  array<int64_t> other_values = local.template make<int64_t>(with_values ? n : 0);
  runs.erase(std::remove(runs.begin(), runs.end(), int64_t{0}), runs.end());
  const merge_options unchecked{false};
  while (runs.size() > 1) {
    std::vector<int64_t> next;
    int64_t at = 0;
    for (size_t i = 0; i < runs.size(); i += 2) {
      const int64_t a = runs[i], b = i + 1 < runs.size() ? runs[i + 1] : 0;
      if (b == 0) {
        local.copy(other.data() + at, keys.data() + at, a * int64_t(sizeof(T)));
        if (with_values) local.copy(other_values.data() + at, values.data() + at, a * 8);
      } else if (with_values) {
        gsearch::merge(local.exec, span<const T>(keys.data() + at, a), span<const int64_t>(values.data() + at, a),
                       span<const T>(keys.data() + at + a, b), span<const int64_t>(values.data() + at + a, b),
                       span<T>(other.data() + at, a + b), span<int64_t>(other_values.data() + at, a + b),
                       unchecked);
      } else {
        gsearch::merge(local.exec, span<const T>(keys.data() + at, a), span<const T>(keys.data() + at + a, b),
                       span<T>(other.data() + at, a + b), unchecked);
      }
      next.push_back(a + b);
      at += a + b;
    }
    std::swap(keys, other);
    std::swap(values, other_values);
    runs = std::move(next);
  }
  local.copy(out, keys.data(), n * int64_t(sizeof(T)));
  if (with_values) local.copy(out_values, values.data(), n * 8);
}

/// The global merge of sorted shards: splitters, cuts, one exchange, the local merge.
template <class Local, class T>
int64_t merge_sorted(const Local& local, communicator& comm, span<const T> sorted,
                     const std::function<T*(int64_t)>& allocate) {
  if (comm.size() == 1) {
    T* out = allocate(sorted.size());
    local.copy(out, sorted.data(), sorted.size() * int64_t(sizeof(T)));
    return sorted.size();
  }
  step_timer step(local, comm.rank(), "merge");
  const auto splitters = splitters_of(local, comm, std::vector<span<const T>>{sorted});
  step("splitters");
  const auto send_counts = cut_counts(local, comm, sorted, splitters, false);
  const auto recv_counts = exchange_counts(local, comm, send_counts);
  step("cuts and counts");
  array<T> received = exchange(local, comm, sorted.data(), send_counts, recv_counts);
  step("exchange");
  const int64_t n = received.size();
  T* out = allocate(n);
  merge_runs(local, std::move(received), array<int64_t>{}, recv_counts, out, nullptr);
  step("local merge");
  return n;
}

template <class Local, class T>
int64_t merge(const Local& local, communicator& comm, span<const T> sorted,
              const std::function<T*(int64_t)>& allocate, bool check_sorted) {
  check_memory(local, comm, "merge");
  check_span("merge", "sorted_data", sorted);
  const bool ok = !check_sorted || gsearch::is_sorted(local.exec, sorted);
  // Every rank learns whether all are sorted, so that all throw or none does.
  const auto all_ok = allgather(local, comm, int64_t(ok));
  for (size_t r = 0; r < all_ok.size(); ++r)
    if (!all_ok[r])
      throw invalid_argument("gsearch::dist::merge: the shard of rank " + std::to_string(r) +
                             " is not sorted (dist::sort sorts shards in any order)");
  return merge_sorted(local, comm, sorted, allocate);
}

template <class Local, class T>
int64_t sort(const Local& local, communicator& comm, span<const T> data,
             const std::function<T*(int64_t)>& allocate) {
  check_memory(local, comm, "sort");
  check_span("sort", "data", data);
  array<T> sorted = local.template make<T>(data.size());
  step_timer step(local, comm.rank(), "sort");
  gsearch::sort(local.exec, data, sorted.view());
  step("local sort");
  return merge_sorted(local, comm, sorted.cview(), allocate);
}

// ---- join --------------------------------------------------------------------------------------

/// One table's rows, sorted by key (stable) and carrying their global row numbers.
template <class Local, class T>
struct sorted_table {
  array<T> keys;
  array<int64_t> rows;
};

template <class Local, class T>
sorted_table<Local, T> sort_rows(const Local& local, span<const T> keys, int64_t first_row) {
  const int64_t n = keys.size();
  array<int64_t> rows = local.template make<int64_t>(n);
  local.iota(rows.data(), n, first_row);
  sorted_table<Local, T> t{local.template make<T>(n), local.template make<int64_t>(n)};
  gsearch::sort(local.exec, keys, rows.cview(), t.keys.view(), t.rows.view());
  return t;
}

/// Sends a sorted table's parts to their ranks and merges what arrives.
template <class Local, class T>
sorted_table<Local, T> co_partition(const Local& local, communicator& comm, sorted_table<Local, T> t,
                                    const std::vector<core::dist::sample<T>>& splitters) {
  const auto send_counts = cut_counts(local, comm, t.keys.cview(), splitters, true);
  const auto recv_counts = exchange_counts(local, comm, send_counts);
  array<T> keys = exchange(local, comm, t.keys.data(), send_counts, recv_counts);
  array<int64_t> rows = exchange(local, comm, t.rows.data(), send_counts, recv_counts);
  const int64_t n = keys.size();
  sorted_table<Local, T> merged{local.template make<T>(n), local.template make<int64_t>(n)};
  merge_runs(local, std::move(keys), std::move(rows), recv_counts, merged.keys.data(), merged.rows.data());
  return merged;
}

template <class Local, class T>
int64_t join(const Local& local, communicator& comm, join_kind kind, span<const T> left,
             span<const T> right, const std::function<join_output(int64_t)>& allocate) {
  check_memory(local, comm, "join");
  check_span("join", "left", left);
  check_span("join", "right", right);
  const auto left_offsets = rank_offsets(local, comm, left.size());
  const auto right_offsets = rank_offsets(local, comm, right.size());
  const int me = comm.rank();
  step_timer step(local, me, "join");
  auto l = sort_rows(local, left, left_offsets[size_t(me)]);
  auto r = sort_rows(local, right, right_offsets[size_t(me)]);
  step("local sorts");
  if (comm.size() > 1) {
    const auto splitters = splitters_of(local, comm, std::vector<span<const T>>{l.keys.cview(), r.keys.cview()});
    step("splitters");
    l = co_partition(local, comm, std::move(l), splitters);
    r = co_partition(local, comm, std::move(r), splitters);
    step("co-partition (exchange, merge)");
  }
  // The local join's positions, then the global row numbers in their place.
  join_output out;
  const int64_t rows = gsearch::join(local.exec, kind, l.keys.cview(), r.keys.cview(),
                                     [&](int64_t n) { return out = allocate(n); }, merge_options{false});
  local.map_rows(out.left, rows, l.rows.data());
  if (!core::join_left_only(kind)) local.map_rows(out.right, rows, r.rows.data());
  step("local join");
  return rows;
}

}  // namespace gsearch::dist::detail
