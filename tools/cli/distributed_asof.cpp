// `--distributed` for asof (distributed.hpp): the as-of join of keys sharded over the ranks
// (gsearch::dist::asof_join), on the ranks' shared steps (distributed_ranks.hpp). Each rank reads
// its slice of each input (of the group values with their keys); the keys are checked across the
// ranks in the single-process order and words (asof_inputs.hpp); group values are numbered by
// the distinct right values of all ranks, gathered to every rank, so that a value has one code on
// every rank; rank 0 gathers the gather map, the single-process --out byte for byte.

#ifdef GSEARCH_CLI_MPI
#include "asof_inputs.hpp"
#include "distributed_ranks.hpp"

namespace gsearch::cli::distributed {
namespace {

using namespace ranks;
using asof_io::named_input;

// ---- values of every rank -----------------------------------------------------------------------

// Every rank's `mine`, in rank order (their concatenation), on every rank: the counts (one
// allgather), the buffer (a step: a rank short of memory stops all), then each rank's values
// broadcast from it in pieces (MPI's counts are ints). Called by every rank outside a step.
template <class V>
std::vector<V> allgather_values(const session& s, const std::vector<V>& mine) {
  const std::vector<int64_t> counts = allgather(int64_t(mine.size()));
  std::vector<int64_t> offsets(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<V> all;
  step([&] {
    all.resize(size_t(offsets.back()));
    std::copy(mine.begin(), mine.end(), all.begin() + offsets[size_t(s.rank)]);
  });
  char* base = reinterpret_cast<char*>(all.data());
  for (int r = 0; r < s.size; ++r)
    for (int64_t at = 0, bytes = counts[size_t(r)] * int64_t(sizeof(V)); at < bytes; at += gather_piece)
      MPI_Bcast(base + offsets[size_t(r)] * int64_t(sizeof(V)) + at, int(std::min(gather_piece, bytes - at)), MPI_BYTE,
                r, MPI_COMM_WORLD);
  return all;
}

// ---- the checks of the keys, across the ranks ----------------------------------------------------

// pandas' refusal of NaN keys: the lowest rank holding one names the first, by its global index.
template <class T>
void check_no_nan(const session& s, const rank_array<T>& keys, const named_input& in, const std::string& side) {
  if constexpr (std::is_floating_point_v<T>) {
    step([&] {
      const T* x = keys.data();
      const T* nan = std::find_if(x, x + keys.size(), [](T v) { return v != v; });
      if (nan != x + keys.size()) asof_io::refuse_nan(side, in, shard_of(s, in.file.size()).begin + (nan - x));
    });
  }
}

// pandas' refusal of unsorted keys: each rank's first key against the last of the nearest
// non-empty rank before it, then its own order; the lowest failing rank names the first global
// index where the keys go down, as the single-process command does.
template <class T>
void check_order(const session& s, const rank_array<T>& keys, const named_input& in, const std::string& side) {
  struct ends {
    bool any = false;
    T first{}, last{};
  };
  const span<const T> x = keys.cview();
  const ends mine = x.size() > 0 ? ends{true, x[0], x[x.size() - 1]} : ends{};
  const std::vector<ends> all = allgather(mine);
  step([&] {
    const int64_t offset = shard_of(s, in.file.size()).begin;
    const auto less = [](T a, T b) { return key_less(a, b); };
    for (int r = s.rank - 1; mine.any && r >= 0; --r) {
      if (!all[size_t(r)].any) continue;
      if (less(mine.first, all[size_t(r)].last)) asof_io::refuse_unsorted(side, in, offset, all[size_t(r)].last, mine.first);
      break;
    }
    if (gsearch::is_sorted(gsearch::cpu, x)) return;
    const int64_t i = std::is_sorted_until(x.data(), x.data() + x.size(), less) - x.data();
    asof_io::refuse_unsorted(side, in, offset + i, x[i - 1], x[i]);
  });
}

// ---- the groups ---------------------------------------------------------------------------------

// This rank's group codes, the same code for the same value on every rank.
struct shard_codes {
  rank_array<int64_t> left, right;
  int64_t groups = 0;    // the codes' range: the distinct right values, and one for none
  int64_t distinct = 0;  // the distinct right values of all ranks
};

template <class C>
void sort_unique(std::vector<C>& v) {
  if constexpr (std::is_same_v<C, __int128>)
    std::sort(v.begin(), v.end());
  else
    gsearch::sort(gsearch::cpu, span<const C>(v), span<C>(v));
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// codes[i] = the position of values[i] among the sorted unique u, or u.size() where u does not
// hold it (a group with no right row: it matches nothing).
template <class C, class X>
rank_array<int64_t> codes_in(const std::vector<C>& u, const rank_array<X>& values) {
  const int64_t n = values.size(), none = int64_t(u.size());
  rank_array<int64_t> codes(false, n);
  int64_t* out = codes.data();
  const X* x = values.data();
  if constexpr (std::is_same_v<C, __int128>) {
    for (int64_t i = 0; i < n; ++i) {
      const auto at = std::lower_bound(u.begin(), u.end(), C(x[i]));
      out[i] = at != u.end() && *at == C(x[i]) ? at - u.begin() : none;
    }
  } else {
    const std::vector<C> c(x, x + n);
    gsearch::search(gsearch::cpu, side::left, span<const C>(u), span<const C>(c), codes.view());
    for (int64_t i = 0; i < n; ++i)
      if (out[i] == none || u[size_t(out[i])] != c[size_t(i)]) out[i] = none;
  }
  return codes;
}

// This rank's slices of the group values (A: --left-by's dtype, B: --right-by's), numbered by the
// sorted distinct right values of all ranks (compared as numbers, in a type that holds both).
template <class A, class B>
shard_codes factorize(const session& s, npy::input& lb, npy::input& rb, double& read_ms, double& ms) {
  using C = asof_io::common_group_t<A, B>;
  rank_array<A> left;
  rank_array<B> right;
  read_ms += timed_step([&] {
    left = read_shard<A>(s, lb);
    right = read_shard<B>(s, rb);
  });
  progress::phase("numbering the group values");
  std::vector<C> mine;
  ms += timed_step([&] {
    mine.assign(right.data(), right.data() + right.size());
    sort_unique(mine);
  });
  std::vector<C> u;
  ms += wall_ms([&] { u = allgather_values(s, mine); });
  shard_codes out;
  ms += timed_step([&] {
    sort_unique(u);
    out.left = codes_in(u, left);
    out.right = codes_in(u, right);
    out.distinct = int64_t(u.size());
    out.groups = out.distinct + 1;
  });
  return out;
}

shard_codes factorize_shards(const session& s, asof_io::files& f, double& read_ms, double& ms) {
  shard_codes out;
  visit_key_type(f.left_by->file.type(), [&]<class A>() {
    visit_key_type(f.right_by->file.type(), [&]<class B>() {
      if constexpr (std::is_integral_v<A> && std::is_integral_v<B>)
        out = factorize<A, B>(s, f.left_by->file, f.right_by->file, read_ms, ms);
    });
  });
  return out;
}

// ---- asof ---------------------------------------------------------------------------------------

template <class T>
exit_code asof_typed(const session& s, const asof_request& r, asof_io::files& f) {
  times t;
  asof_options<T> opts;
  step([&] {
    opts = asof_io::options_of<T>(r.direction, !r.no_exact, r.tolerance, r.has_tolerance, !r.no_check, r.sort);
  });
  auto [left, right] = read_two_shards<T>(s, f.left.file, f.right.file, t.read_ms);
  // pandas' checks in its order (asof_join's): the left's NaN, then its order, then the right's.
  if (!r.no_check) {
    progress::phase("checking the keys");
    check_no_nan(s, left, f.left, "left");
    if (!r.sort) check_order(s, left, f.left, "left");
    check_no_nan(s, right, f.right, "right");
    if (!r.sort) check_order(s, right, f.right, "right");
  }
  std::optional<shard_codes> groups;
  double factorize_ms = 0;
  if (f.left_by) groups = factorize_shards(s, f, t.read_ms, factorize_ms);

  progress::phase("joining");
  rank_array<int64_t> out;
  t.call_ms = call_steps(
      [&] {
        left = std::move(left).to(s.dev);
        right = std::move(right).to(s.dev);
        if (groups) {
          groups->left = std::move(groups->left).to(s.dev);
          groups->right = std::move(groups->right).to(s.dev);
        }
        out = rank_array<int64_t>(s.dev.cuda, left.size());
      },
      [&] {
        on_exec(s.dev, [&](const auto& exec) {
          if (groups)
            dist::asof_join(exec, *s.comm, left.cview(), right.cview(), groups->left.cview(), groups->right.cview(),
                            groups->groups, out.view(), opts);
          else
            dist::asof_join(exec, *s.comm, left.cview(), right.cview(), out.view(), opts);
        });
        out = std::move(out).on_host();
      });
  int64_t matched = 0;
  step([&] { matched = int64_t(std::count_if(out.data(), out.data() + out.size(), [](int64_t j) { return j >= 0; })); });
  int64_t all_matched = 0;
  for (int64_t m : allgather(matched)) all_matched += m;
  t.write_ms = write_outputs(s, {{output_of<int64_t>(r.out), {out.data(), out.size()}}}).ms;

  const times slow = t.slowest();
  const double slow_factorize = max_over_ranks({factorize_ms})[0];
  if (s.rank != 0) return exit_ok;
  const std::string dtype(key_traits<T>::name);
  const int64_t n = f.left.file.size(), m = f.right.file.size();
  if (r.json) {
    json j = summary_head(s, "asof", dtype);
    j["left"] = n;
    j["right"] = m;
    j["right_groups"] = groups ? json(groups->distinct) : json(nullptr);
    j["direction"] = r.direction;
    j["allow_exact_matches"] = opts.allow_exact_matches;
    j["tolerance"] = opts.tolerance ? json(to_text(*opts.tolerance)) : json(nullptr);
    j["sort"] = r.sort;
    j["checked"] = !r.no_check;
    j["out"] = r.out;
    j["result"] = n;
    j["matched"] = all_matched;
    j["factorize_ms"] = groups ? json(slow_factorize) : json(nullptr);
    slow.to_json(j, "time_ms");
    print(j.dump() + "\n");
    return exit_ok;
  }
  std::string what = "asof: " + r.direction + " join of " + std::to_string(n) + " left and " + std::to_string(m) +
                     " right " + dtype + " keys";
  if (groups)
    what += " in " + std::to_string(groups->distinct) + " right groups (numbered in " + ms_text(slow_factorize) + ")";
  if (opts.tolerance) what += ", tolerance " + to_text(*opts.tolerance);
  if (r.no_exact) what += ", no exact matches";
  if (r.sort) what += ", sorted first (--sort)";
  if (r.no_check) what += ", unchecked (--assume-sorted)";
  note(what + ", " + where_text(s) + ": " + std::to_string(n) + " rows, " + std::to_string(all_matched) +
       " matched -> " + shown_path(s, r.out) + " (int64), " + slow.text());
  return exit_ok;
}

}  // namespace

exit_code asof(const std::function<asof_request()>& make) {
  return run_quietly([&] {
    asof_request r;
    std::optional<asof_io::files> f;
    const session s = begin(make, r, [&] {
      if (r.out.empty()) bad("--distributed needs --out IDX.npy (the gather map is written, not printed)");
      check_paths({{"--left", r.left}, {"--right", r.right}, {"--left-by", r.left_by}, {"--right-by", r.right_by}},
                  rank_outputs(r, {{"--out", r.out}}));
      asof_io::check_flags(r.left_by, r.right_by, r.sort, r.no_check);
      f.emplace(asof_io::open_files(r.left, r.right, r.left_by, r.right_by));
    });
    return visit_key_type(f->left.file.type(), [&]<class T>() { return asof_typed<T>(s, r, *f); });
  });
}

}  // namespace gsearch::cli::distributed
#endif  // GSEARCH_CLI_MPI
