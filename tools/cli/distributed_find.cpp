// `--distributed` for find (first, any, count, all, isin) (distributed.hpp): the typed runs over the shards and the command,
// on the ranks' shared steps (distributed_ranks.hpp).

#ifdef GSEARCH_CLI_MPI
#include "distributed_ranks.hpp"

namespace gsearch::cli::distributed {
namespace {

using namespace ranks;

// ---- find ---------------------------------------------------------------------------------------

void check_find_inputs(const npy::input& data, const std::optional<npy::input>& values) {
  if (data.ndim() != 1)
    bad("--data " + data.path() + " has shape " + npy::shape_text(data.shape()) +
        ", but find searches 1-D data (numpy: a.ravel())");
  if (values && values->type() != data.type())
    bad("--data " + data.path() + " is " + std::string(name(data.type())) + " but --values " +
        values->path() + " is " + std::string(name(values->type())) +
        ": gsearch never casts (numpy would promote; convert one with a.astype(...))");
}

// "x == 42", "42 <= x < 50".
template <class T>
std::string predicate_text(const predicate<T>& p) {
  if (p.op == find_op::in_range) return to_text(p.value) + " <= x < " + to_text(p.hi);
  return "x " + std::string(to_symbol(p.op)) + " " + to_text(p.value);
}

template <class T>
exit_code find_typed(const session& s, const find_request& r, npy::input& data_file,
                     std::optional<npy::input>& values_file) {
  const bool isin = r.mode == "isin", all = r.mode == "all", scalar = !isin && !all;
  predicate<T> pred;
  step([&] {  // the value is parsed for the data's dtype: every rank fails alike, or none
    if (isin) return;
    pred.op = r.op;
    pred.value = parse_value<T>(r.value, "--value");
    pred.hi = r.op == find_op::in_range ? parse_value<T>(r.hi, "--hi") : pred.value;
  });
  times t;
  rank_array<T> data, tests;
  t.read_ms = timed_step([&] {
    data = read_shard<T>(s, data_file);
    if (values_file) tests = read_shard<T>(s, *values_file);
  });
  int64_t result = 0;  // the scalar modes' result
  rank_array<int64_t> indices;
  rank_array<bool> mask;
  progress::phase("finding");
  t.call_ms = call_steps(
      [&] {
        data = std::move(data).to(s.dev);
        tests = std::move(tests).to(s.dev);
        if (isin) mask = rank_array<bool>(s.dev.cuda, data.size());
      },
      [&] {
        on_exec(s.dev, [&](const auto& exec) {
          if (scalar) {
            const find_mode mode = r.mode == "first" ? find_mode::first
                                   : r.mode == "any" ? find_mode::any
                                                     : find_mode::count;
            result = dist::find(exec, *s.comm, mode, data.cview(), pred);
          } else if (all) {
            dist::find_all(exec, *s.comm, data.cview(), pred, [&](int64_t n) {
              indices = rank_array<int64_t>(s.dev.cuda, n);
              return indices.data();
            });
          } else {
            dist::isin(exec, *s.comm, data.cview(), tests.cview(), mask.view(), r.isin,
                       dist::layout::sharded);
          }
        });
        indices = std::move(indices).on_host();
        mask = std::move(mask).on_host();
      });
  written w;
  if (all) w = write_outputs(s, {{output_of<int64_t>(r.out), {indices.data(), indices.size()}}});
  if (isin) w = write_outputs(s, {{{r.out, "|b1", 1, {}}, {mask.data(), mask.size()}}});
  t.write_ms = w.ms;
  t.wrote = !scalar;
  if (isin) {  // the number of true over all ranks, as the single-process summary counts it
    const std::vector<int64_t> trues =
        allgather(int64_t(std::count(mask.data(), mask.data() + mask.size(), true)));
    result = 0;
    for (int64_t c : trues) result += c;
  }
  if (all) result = w.totals[0];

  const times slow = t.slowest();
  if (s.rank != 0) return exit_ok;
  const std::string dtype(key_traits<T>::name);
  const int64_t n = data_file.size();
  if (r.json) {
    json j = summary_head(s, "find", dtype);
    j["mode"] = r.mode;
    j["op"] = isin ? json(nullptr) : json(gsearch::to_string(r.op));
    j["value"] = isin ? json(nullptr) : json(to_text(pred.value));
    j["hi"] = r.op == find_op::in_range && !isin ? json(to_text(pred.hi)) : json(nullptr);
    j["n"] = n;
    j["values"] = isin ? json(values_file->size()) : json(nullptr);
    j["method"] = isin ? json(gsearch::to_string(r.isin.method)) : json(nullptr);
    j["invert"] = isin ? json(r.isin.invert) : json(nullptr);
    j["out"] = scalar ? json(nullptr) : json(r.out);
    j["result"] = result;
    slow.to_json(j, "time_ms");
    print(j.dump() + "\n");
    return exit_ok;
  }
  std::string what = "find: " + r.mode + " ";
  if (isin)
    what += "of " + std::to_string(n) + " " + dtype + " values in " + std::to_string(values_file->size()) +
            " test elements" + (r.isin.invert ? " (inverted)" : "") + ", method=" +
            std::string(gsearch::to_string(r.isin.method));
  else
    what += predicate_text(pred) + " in " + std::to_string(n) + " " + dtype + " values";
  what += ", " + where_text(s) + ": ";
  if (all)
    note(what + std::to_string(result) + " matches -> " + shown_path(s, r.out) + " (int64), " + slow.text());
  else if (isin)
    note(what + std::to_string(result) + " true -> " + shown_path(s, r.out) + " (bool), " + slow.text());
  else {
    print(std::to_string(result) + "\n");  // stdout carries the result, as without --distributed
    note(what + slow.text());
  }
  return exit_ok;
}


}  // namespace

exit_code find(const std::function<find_request()>& make) {
  return run_quietly([&] {
    find_request r;
    std::optional<npy::input> data, values;
    const session s = begin(make, r, [&] {
      if (r.per_rank && r.out.empty()) bad("--per-rank: --mode " + r.mode + " writes no file (it prints its result)");
      check_paths({{"--data", r.data}, {"--values", r.values}}, rank_outputs(r, {{"--out", r.out}}));
      data.emplace(r.data);
      if (!r.values.empty()) values.emplace(r.values);
      check_find_inputs(*data, values);
    });
    return visit_key_type(data->type(), [&]<class T>() { return find_typed<T>(s, r, *data, values); });
  });
}

}  // namespace gsearch::cli::distributed
#endif  // GSEARCH_CLI_MPI
