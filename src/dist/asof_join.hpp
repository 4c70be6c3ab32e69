#pragma once
// dist::asof_join (gsearch/dist.hpp), over a backend's Local and a communicator like the other
// distributed operations (operations.hpp, whose helpers it uses).
//
// Routed (the right side sharded, keys sorted): a left row's match lies in its group's right rows
// with keys in the left side's range, or is the group's last right row before that range
// (backward) or its first after it (forward); nearest takes one of those two. So each rank asks
// for exactly that: it sends its left keys' ends [lo, hi], and every rank answers from its shard
// with the rows whose keys lie in [lo, hi] and, per group, its last row below lo and its first
// row above hi (an as-of join of lo and hi against the shard: backward and forward, strict). A
// rank receives in rank order, so in the right side's global order, a subsequence of the right
// rows that holds every row any of its left keys can match, joins its left rows against it with
// the single-process join, and maps the matches to global row numbers. The left rows and their
// matches never move, and each right row goes only where a left range covers it: one
// all-to-all of about m / ranks rows a rank where the left and right ranges line up, plus at
// most 2 x groups rows from each rank to each. The halos are no more than that: a shard sends
// its own last row below lo even where a later shard has a later one (the receiving join keeps
// the last); rows of a group beyond those are never a match.
//
// With options.sort (keys in any order) no range is known: every rank's right rows go to every
// rank (an all-to-all of m rows a rank), then the local join sorts. Replicated right rows, or one
// rank: the local join alone.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "gsearch/asof.hpp"
#include "gsearch/search.hpp"
#include "operations.hpp"

namespace gsearch::dist::detail {

/// Every rank's x to every rank, in rank order (their concatenation).
template <class Local, class T>
array<T> all_of(const Local& local, communicator& comm, span<const T> x) {
  const int p = comm.size();
  const std::vector<int64_t> send_counts(size_t(p), x.size());
  const auto recv_counts = exchange_counts(local, comm, send_counts);
  array<T> copies = local.template make<T>(x.size() * p);
  local.replicate(x.data(), x.size() * int64_t(sizeof(T)), p, copies.data());
  return exchange(local, comm, copies.data(), send_counts, recv_counts);
}

/// What a rank tells the others before the routed join: its left keys' ends (the right rows it
/// needs) and its right shard's (the shards' order is checked as one sequence).
template <class T>
struct asof_head {
  int64_t left_count, right_count;
  T left_first, left_last, right_first, right_last;
};

template <class T>
bool is_nan_key(T x) {
  return x != x;  // (false for integers)
}

/// The shard's rows that each rank's left range needs, as positions in the shard: for rank r, the
/// ascending positions of [its group halo below lo_r, the rows in [lo_r, hi_r], its halo above
/// hi_r]. A rank with no left rows, or a NaN end (its own join refuses it), needs none.
template <class Local, class T>
std::vector<std::vector<int64_t>> asof_halos(const Local& local, const std::vector<asof_head<T>>& heads,
                                             span<const T> shard, const span<const int64_t>* shard_by,
                                             int64_t groups, bool check, bool forward,
                                             std::vector<int> asking) {
  const int64_t g = shard_by ? std::max<int64_t>(groups, 0) : 1;  // (< 0: the join below refuses it)
  // The asking ranks by their end (the join's left keys must be sorted): g copies of it each,
  // with the codes 0 .. g-1.
  const auto end_of = [&](int r) { return forward ? heads[size_t(r)].left_last : heads[size_t(r)].left_first; };
  std::stable_sort(asking.begin(), asking.end(), [&](int a, int b) { return key_less(end_of(a), end_of(b)); });
  const int64_t q = int64_t(asking.size()) * g;
  std::vector<T> ends(static_cast<size_t>(q));
  std::vector<int64_t> codes(static_cast<size_t>(q));
  for (size_t k = 0; k < asking.size(); ++k)
    for (int64_t c = 0; c < g; ++c) {
      ends[k * size_t(g) + size_t(c)] = end_of(asking[k]);
      codes[k * size_t(g) + size_t(c)] = c;
    }
  array<T> ends_d = local.template make<T>(q);
  array<int64_t> codes_d = local.template make<int64_t>(shard_by ? q : 0), found = local.template make<int64_t>(q);
  local.from_host(ends_d.data(), ends.data(), q * int64_t(sizeof(T)));
  local.from_host(codes_d.data(), codes.data(), codes_d.size() * 8);
  asof_options<T> o;
  o.direction = forward ? asof_direction::forward : asof_direction::backward;
  o.allow_exact_matches = false;
  o.check_sorted = check;  // (checks the shard: the query is sorted, NaN-free, by construction)
  if (shard_by)
    gsearch::asof_join(local.exec, ends_d.cview(), shard, codes_d.cview(), *shard_by, groups, found.view(), o);
  else
    gsearch::asof_join(local.exec, ends_d.cview(), shard, found.view(), o);
  std::vector<int64_t> rows(static_cast<size_t>(q));
  local.to_host(rows.data(), found.data(), q * 8);
  std::vector<std::vector<int64_t>> halo(heads.size());
  for (size_t k = 0; k < asking.size(); ++k) {
    auto& h = halo[size_t(asking[k])];
    for (int64_t c = 0; c < g; ++c)
      if (const int64_t j = rows[k * size_t(g) + size_t(c)]; j >= 0) h.push_back(j);
    std::sort(h.begin(), h.end());
  }
  return halo;
}

template <class Local, class T>
void routed_asof_join(const Local& local, communicator& comm, span<const T> left, span<const T> right,
                      const span<const int64_t>* left_by, const span<const int64_t>* right_by, int64_t groups,
                      span<int64_t> out, const asof_options<T>& options) {
  const int p = comm.size(), me = comm.rank();
  step_timer step(local, me, "asof_join");
  asof_head<T> mine{left.size(), right.size(), T{}, T{}, T{}, T{}};
  if (left.size() > 0) {
    local.to_host(&mine.left_first, left.data(), sizeof(T));
    local.to_host(&mine.left_last, left.data() + left.size() - 1, sizeof(T));
  }
  if (right.size() > 0) {
    local.to_host(&mine.right_first, right.data(), sizeof(T));
    local.to_host(&mine.right_last, right.data() + right.size() - 1, sizeof(T));
  }
  const auto heads = allgather(local, comm, mine);
  std::vector<int64_t> right_counts;
  for (const auto& h : heads) right_counts.push_back(h.right_count);
  const int64_t offset = core::dist::exclusive_offsets(right_counts)[size_t(me)];
  if (options.check_sorted) {
    struct ends {
      int64_t count;
      T first, last;
    };
    std::vector<ends> shards;
    for (const auto& h : heads) shards.push_back({h.right_count, h.right_first, h.right_last});
    check_shard_order(shards, "asof_join", "right keys");
  }
  std::vector<int> asking;
  for (int r = 0; r < p; ++r) {
    const auto& h = heads[size_t(r)];
    if (h.left_count > 0 && !is_nan_key(h.left_first) && !is_nan_key(h.left_last)) asking.push_back(r);
  }
  step("plan");

  // What each asking rank needs of this shard: the halos (their first call checks the shard as
  // the single-process join checks its right side) and the rows in its range.
  const auto below = asof_halos(local, heads, right, right_by, groups, options.check_sorted, false, asking);
  const auto above = asof_halos(local, heads, right, right_by, groups, false, true, asking);
  const int64_t a = int64_t(asking.size());
  std::vector<T> los, his;
  for (int r : asking) {
    los.push_back(heads[size_t(r)].left_first);
    his.push_back(heads[size_t(r)].left_last);
  }
  array<T> ends_d = local.template make<T>(2 * a);
  array<int64_t> bounds_d = local.template make<int64_t>(2 * a);
  local.from_host(ends_d.data(), los.data(), a * int64_t(sizeof(T)));
  local.from_host(ends_d.data() + a, his.data(), a * int64_t(sizeof(T)));
  gsearch::search(local.exec, side::left, right, span<const T>(ends_d.data(), a), span<int64_t>(bounds_d.data(), a));
  gsearch::search(local.exec, side::right, right, span<const T>(ends_d.data() + a, a),
                  span<int64_t>(bounds_d.data() + a, a));
  std::vector<int64_t> bounds(static_cast<size_t>(2 * a));
  local.to_host(bounds.data(), bounds_d.data(), 2 * a * 8);
  step("halos and ranges");

  // The rows to send, rank by rank, as shard positions: halo below, range, halo above.
  std::vector<int64_t> send_counts(size_t(p), 0), begin(size_t(p), 0), end(size_t(p), 0);
  for (int64_t k = 0; k < a; ++k) {
    const int r = asking[size_t(k)];
    begin[size_t(r)] = bounds[size_t(k)];
    end[size_t(r)] = std::max(bounds[size_t(k)], bounds[size_t(a + k)]);
    send_counts[size_t(r)] =
        int64_t(below[size_t(r)].size()) + (end[size_t(r)] - begin[size_t(r)]) + int64_t(above[size_t(r)].size());
  }
  array<int64_t> rows = local.template make<int64_t>(sum(send_counts));
  int64_t at = 0;
  for (int r = 0; r < p; ++r) {
    const auto put = [&](const std::vector<int64_t>& h) {
      local.from_host(rows.data() + at, h.data(), int64_t(h.size()) * 8);
      at += int64_t(h.size());
    };
    put(below[size_t(r)]);
    local.iota(rows.data() + at, end[size_t(r)] - begin[size_t(r)], begin[size_t(r)]);
    at += end[size_t(r)] - begin[size_t(r)];
    put(above[size_t(r)]);
  }
  array<T> keys = local.template make<T>(at);
  local.gather(right.data(), rows.data(), at, keys.data());
  array<int64_t> codes = local.template make<int64_t>(right_by ? at : 0);
  if (right_by) local.gather(right_by->data(), rows.data(), at, codes.data());
  local.shift(rows.data(), at, offset);  // now global row numbers
  step("pack");
  const auto recv_counts = exchange_counts(local, comm, send_counts);
  array<T> got_keys = exchange(local, comm, keys.data(), send_counts, recv_counts);
  array<int64_t> got_codes;
  if (right_by) got_codes = exchange(local, comm, codes.data(), send_counts, recv_counts);
  array<int64_t> got_rows = exchange(local, comm, rows.data(), send_counts, recv_counts);
  step("exchange");

  // In rank order, what arrived is in the right side's order: the single-process join on it.
  if (left_by)
    gsearch::asof_join(local.exec, left, got_keys.cview(), *left_by, got_codes.cview(), groups, out, options);
  else
    gsearch::asof_join(local.exec, left, got_keys.cview(), out, options);
  local.map_rows(out.data(), out.size(), got_rows.data());
  step("local join");
}

template <class Local, class T>
void asof_join(const Local& local, communicator& comm, span<const T> left, span<const T> right,
               const span<const int64_t>* left_by, const span<const int64_t>* right_by, int64_t groups,
               span<int64_t> out, const asof_options<T>& options, layout right_layout) {
  check_memory(local, comm, "asof_join");
  check_span("asof_join", "left_on", left);
  check_span("asof_join", "right_on", right);
  if (right_by) check_span("asof_join", "right_by", *right_by);
  // The local joins check the rest (sizes, codes, order) with the single-process messages.
  const auto join = [&](span<const T> r, span<const int64_t> rb) {
    if (left_by)
      gsearch::asof_join(local.exec, left, r, *left_by, rb, groups, out, options);
    else
      gsearch::asof_join(local.exec, left, r, out, options);
  };
  if (right_layout == layout::replicated || comm.size() == 1) {
    join(right, right_by ? *right_by : span<const int64_t>{});
    return;
  }
  if (!options.sort) {
    routed_asof_join(local, comm, left, right, left_by, right_by, groups, out, options);
    return;
  }
  // Keys in any order: the right side in full on every rank (global row numbers are the
  // concatenation's), sorted by the local join.
  const array<T> all_right = all_of(local, comm, right);
  array<int64_t> all_codes;
  if (right_by) all_codes = all_of(local, comm, *right_by);
  join(all_right.cview(), all_codes.cview());
}

}  // namespace gsearch::dist::detail
