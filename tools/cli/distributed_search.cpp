// `--distributed` for search (distributed.hpp): the typed runs over the shards and the command,
// on the ranks' shared steps (distributed_ranks.hpp).

#ifdef GSEARCH_CLI_MPI
#include "distributed_ranks.hpp"

namespace gsearch::cli::distributed {
namespace {

using namespace ranks;

// ---- search -------------------------------------------------------------------------------------

void check_search_inputs(const npy::input& keys, const npy::input& queries, bool int32) {
  if (keys.type() != queries.type())
    bad("keys are " + std::string(name(keys.type())) + " but queries are " +
        std::string(name(queries.type())) + ": gsearch never casts");
  if (keys.ndim() != 1)
    bad("keys " + keys.path() + " have shape " + npy::shape_text(keys.shape()) +
        ": --distributed searches 1-D keys (2-D keys, one search per row, run without it)");
  if (int32 && keys.size() > std::numeric_limits<int32_t>::max())
    bad("--int32: " + std::to_string(keys.size()) + " keys do not fit int32 indices");
}

template <class T>
exit_code search_typed(const session& s, const search_request& r, npy::input& keys_file,
                       npy::input& queries_file) {
  times t;
  auto [keys, queries] = read_two_shards<T>(s, keys_file, queries_file, t.read_ms);
  progress::phase("checking that the keys are sorted");
  if (!r.assume_sorted)
    check_sorted_shards(s, keys, keys_file.size(),
                        {"keys are", "keys", keys_file.path(), "; sort them, or pass --assume-sorted"});
  const side sd = side_from_string(r.side);
  rank_array<int64_t> out;
  progress::phase("searching");
  t.call_ms = call_steps(
      [&] {
        keys = std::move(keys).to(s.dev);
        queries = std::move(queries).to(s.dev);
        out = rank_array<int64_t>(s.dev.cuda, queries.size());
      },
      [&] {
        on_exec(s.dev, [&](const auto& exec) {
          dist::search(exec, *s.comm, sd, keys.cview(), queries.cview(), out.view());
        });
        out = std::move(out).on_host();
      });
  // --int32: the same indices, narrowed (check_search_inputs made sure that they fit).
  std::vector<int32_t> narrow;
  step([&] {
    if (r.int32) narrow.assign(out.data(), out.data() + out.size());
  });
  const output_file f = r.int32 ? output_of<int32_t>(r.out, queries_file.shape())
                                : output_of<int64_t>(r.out, queries_file.shape());
  const part mine = r.int32 ? part{narrow.data(), int64_t(narrow.size())} : part{out.data(), out.size()};
  t.write_ms = write_outputs(s, {{f, mine}}).ms;

  const times slow = t.slowest();
  if (s.rank != 0) return exit_ok;
  const std::string dtype(key_traits<T>::name), out_dtype = r.int32 ? "int32" : "int64";
  if (r.json) {
    json j = summary_head(s, "search", dtype);
    j["side"] = to_string(sd);
    j["out_dtype"] = out_dtype;
    j["keys"] = keys_file.size();
    j["queries"] = queries_file.size();
    j["out_shape"] = queries_file.shape();
    j["out"] = r.out;
    slow.to_json(j, "search_ms");
    print(j.dump() + "\n");
  } else {
    note("search: " + std::to_string(queries_file.size()) + " queries, " + std::to_string(keys_file.size()) +
          " " + dtype + " keys, side=" + std::string(to_string(sd)) + ", " + where_text(s) + ": " +
          slow.text() + " -> " + shown_path(s, r.out) + " (" + out_dtype + ")");
  }
  return exit_ok;
}


}  // namespace

exit_code search(const std::function<search_request()>& make) {
  return run_quietly([&] {
    search_request r;
    std::optional<npy::input> keys, queries;
    const session s = begin(make, r, [&] {
      if (r.out.empty()) bad("--distributed needs --out OUT.npy (the indices are written, not printed)");
      check_paths({{"--keys", r.keys}, {"--queries", r.queries}}, rank_outputs(r, {{"--out", r.out}}));
      keys.emplace(r.keys);
      queries.emplace(r.queries);
      check_search_inputs(*keys, *queries, r.int32);
    });
    return visit_key_type(keys->type(), [&]<class T>() { return search_typed<T>(s, r, *keys, *queries); });
  });
}

}  // namespace gsearch::cli::distributed
#endif  // GSEARCH_CLI_MPI
