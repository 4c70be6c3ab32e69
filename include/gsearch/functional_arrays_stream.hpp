#pragma once
/// \file
/// Operation streams of functional arrays (issue 23): the recorded form `gsearch esfa run`
/// replays, `gsearch esfa gen` and the benchmark make, and the tests use.
///
/// A stream is n rows (op, a, i, v) of int64 (an .npy of shape (n, 4) on disk):
///   op  0 empty, 1 update (a with a[i] = v), 2 remove (a without i), 3 lookup (a[i]), 4 size,
///       5 next (the least defined index above i), 6 release;
///   a   the row that made the argument array (an earlier empty, update or remove row, not
///       released), -1 for empty;
/// and a result per row (found, value): lookup (1, a[i]) or (0, 0), size (1, size), next
/// (1, index) or (0, 0), the others (1, 0). Values are int64 in streams.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gsearch/core/error.hpp"
#include "gsearch/functional_arrays.hpp"
#include "gsearch/functional_arrays_spec.hpp"

namespace gsearch::fa_stream {

enum op : int64_t { empty = 0, update, remove, lookup, size, next, release, op_count };
inline constexpr const char* op_names[] = {"empty", "update", "remove", "lookup", "size", "next", "release"};

struct row {
  int64_t op, a, i, v;
};

/// The rows of a flat (n x 4) array, checked: codes, argument rows (earlier, making an array,
/// not released). invalid_argument naming the first bad row.
inline std::vector<row> parse(const std::vector<int64_t>& flat) {
  if (flat.size() % 4 != 0) throw invalid_argument("an operation stream has 4 values a row");
  std::vector<row> rows(flat.size() / 4);
  std::vector<uint8_t> state(rows.size(), 0);  // 1: makes an array, 2: released
  for (size_t r = 0; r < rows.size(); ++r) {
    rows[r] = {flat[4 * r], flat[4 * r + 1], flat[4 * r + 2], flat[4 * r + 3]};
    const row& x = rows[r];
    const std::string at = "row " + std::to_string(r) + ": ";
    if (x.op < 0 || x.op >= op_count) throw invalid_argument(at + "unknown op " + std::to_string(x.op) + " (0 to 6)");
    if (x.op == empty) {
      state[r] = 1;
      continue;
    }
    if (x.a < 0 || x.a >= int64_t(r))
      throw invalid_argument(at + "argument row " + std::to_string(x.a) + " is not an earlier row");
    if (state[size_t(x.a)] != 1)
      throw invalid_argument(at + "argument row " + std::to_string(x.a) +
                             (state[size_t(x.a)] == 2 ? " was released" : " makes no array"));
    if (x.op == update || x.op == remove) state[r] = 1;
    if (x.op == release) state[size_t(x.a)] = 2;
  }
  return rows;
}

/// Row r when it makes or releases an array (empty, update, remove, release), on m, the arrays
/// made so far in `made`; false for a query.
template <class Machine, class Handle>
bool apply_change(Machine& m, const row& x, size_t r, std::vector<Handle>& made) {
  switch (x.op) {
    case empty: made[r] = m.empty(); return true;
    case update: made[r] = m.update(made[size_t(x.a)], x.i, x.v); return true;
    case remove: made[r] = m.remove(made[size_t(x.a)], x.i); return true;
    case release: m.release(made[size_t(x.a)]); return true;
    default: return false;
  }
}

/// Replays `rows` on `m` (functional_arrays<int64_t> or functional_arrays_spec<int64_t>), the
/// results into found / value (one each per row); `each(r)` after row r (timing). The machine's
/// out_of_memory passes through (the row is then not done).
template <class Machine, class Each>
void replay(Machine& m, const std::vector<row>& rows, std::vector<int64_t>& found, std::vector<int64_t>& value,
            Each&& each) {
  using handle = decltype(m.empty());
  std::vector<handle> made(rows.size());
  found.assign(rows.size(), 1);
  value.assign(rows.size(), 0);
  for (size_t r = 0; r < rows.size(); ++r) {
    const row& x = rows[r];
    if (!apply_change(m, x, r, made)) {
      const handle& a = made[size_t(x.a)];
      std::optional<int64_t> v;
      if (x.op == size) v = m.size(a);
      else v = x.op == lookup ? m.lookup(a, x.i) : m.next(a, x.i);
      found[r] = v.has_value(), value[r] = v.value_or(0);
    }
    each(r);
  }
}

/// replay without waiting for each answer: the queries posted (functional_arrays' post_lookup,
/// post_size, post_next) and their answers taken after the last row, then sync(). On the GPU the
/// host feeds the kernel's pipeline and waits once; on the CPU it is replay. The time of the
/// whole call is the stream's (no row's own time means anything here).
template <class Machine>
void replay_pipelined(Machine& m, const std::vector<row>& rows, std::vector<int64_t>& found,
                      std::vector<int64_t>& value) {
  using handle = decltype(m.empty());
  using ticket = decltype(m.post_size(m.empty()));
  std::vector<handle> made(rows.size());
  std::vector<std::pair<size_t, ticket>> asked;
  found.assign(rows.size(), 1);
  value.assign(rows.size(), 0);
  for (size_t r = 0; r < rows.size(); ++r) {
    const row& x = rows[r];
    if (apply_change(m, x, r, made)) continue;
    const handle& a = made[size_t(x.a)];
    asked.emplace_back(r, x.op == lookup ? m.post_lookup(a, x.i) : x.op == size ? m.post_size(a) : m.post_next(a, x.i));
  }
  for (const auto& [r, t] : asked) {
    const auto a = m.take(t);
    if (rows[r].op == lookup) found[r] = a.found, value[r] = a.found ? int64_t(a.value) : 0;
    else if (rows[r].op == size) value[r] = a.number;
    else found[r] = a.found, value[r] = a.found ? a.number : 0;
  }
  m.sync();
}

/// How gen picks arguments and indices.
enum class mix { paper, chains, fans, sparse, ascending };
inline constexpr const char* mix_names[] = {"paper", "chains", "fans", "sparse", "ascending"};

/// A stream of n rows that runs on a machine of `cells` cells: generated beside one; when an
/// operation would not fit, the older half of the arrays is released first (a program that keeps
/// few versions). paper: 40% updates, 10% removes, 40% lookups, 5% size, 5% next, the argument
/// the newest array or a random one; chains: always the newest; fans: the first array or the
/// newest; sparse: paper's with indices spread over 2^52; ascending: an unbalanced history, each
/// update on the newest array at the next index up (a list to a tree that does not rebalance),
/// half the lookups at the first indices. Deterministic for a seed.
inline std::vector<int64_t> generate(int64_t n, int64_t cells, mix kind, uint64_t seed) {
  std::mt19937_64 r(seed);
  const bool chains = kind == mix::chains || kind == mix::ascending, fans = kind == mix::fans,
             sparse = kind == mix::sparse, ascending = kind == mix::ascending;
  int64_t counter = 0;  // ascending: the next index
  const int64_t range = sparse ? int64_t(1) << 40 : std::max<int64_t>(16, cells / 4);
  functional_arrays<int64_t> fa(cpu, cells);
  std::vector<int64_t> flat;
  flat.reserve(size_t(4 * n));
  struct held {
    functional_arrays<int64_t>::array a;
    int64_t row;
  };
  std::vector<held> pool;
  const auto emit = [&](int64_t o, int64_t arg, int64_t i, int64_t v) {
    flat.insert(flat.end(), {o, arg, i, v});
    return int64_t(flat.size() / 4 - 1);
  };
  pool.push_back({fa.empty(), emit(empty, -1, 0, 0)});
  while (int64_t(flat.size() / 4) < n) {
    const size_t at = chains || r() % 2 ? pool.size() - 1 : fans ? 0 : size_t(r() % pool.size());
    const held h = pool[at];
    const int pick = int(r() % 100);
    int64_t i = int64_t(r() % uint64_t(range)) * (sparse ? int64_t(4099) : 1);
    if (ascending) i = pick < 50 ? counter++ : r() % 2 ? int64_t(r() % 8) : int64_t(r() % uint64_t(counter + 1));
    try {
      if (pick < 40) {
        const int64_t v = int64_t(r() % 1000000);
        pool.push_back({fa.update(h.a, i, v), emit(update, h.row, i, v)});
      } else if (pick < 50) {
        pool.push_back({fa.remove(h.a, i), emit(remove, h.row, i, 0)});
      } else if (pick < 90) {
        emit(lookup, h.row, i, 0);
      } else if (pick < 95) {
        emit(size, h.row, 0, 0);
      } else {
        emit(next, h.row, i, 0);
      }
    } catch (const out_of_memory&) {  // room: release the older half (the first array stays, for fans)
      const size_t drop = std::min(std::max<size_t>(1, pool.size() / 2), pool.size() - 1);
      for (size_t k = 1; k <= drop; ++k) {
        fa.release(pool[k].a);
        emit(release, pool[k].row, 0, 0);
      }
      pool.erase(pool.begin() + 1, pool.begin() + std::ptrdiff_t(drop + 1));
      if (drop == 0) {  // the first array alone fills the machine: a fresh start
        fa.release(pool[0].a);
        emit(release, pool[0].row, 0, 0);
        pool[0] = {fa.empty(), emit(empty, -1, 0, 0)};
      }
    }
  }
  flat.resize(size_t(4 * n));
  return flat;
}

}  // namespace gsearch::fa_stream
