// `--distributed` for the merge family (sort, join) (distributed.hpp): the typed runs over the shards and the command,
// on the ranks' shared steps (distributed_ranks.hpp).

#ifdef GSEARCH_CLI_MPI
#include "distributed_ranks.hpp"

namespace gsearch::cli::distributed {
namespace {

using namespace ranks;

// ---- sort ---------------------------------------------------------------------------------------

void check_1d(const npy::input& in, const std::string& option, const std::string& command) {
  if (in.ndim() != 1)
    bad(option + " " + in.path() + " has shape " + npy::shape_text(in.shape()) + ", but " + command +
        " takes 1-D arrays (numpy: a.ravel())");
}

template <class T>
exit_code sort_typed(const session& s, const sort_request& r, npy::input& data_file) {
  times t;
  rank_array<T> data, sorted;
  t.read_ms = timed_step([&] { data = read_shard<T>(s, data_file); });
  progress::phase("sorting");
  t.call_ms = call_steps([&] { data = std::move(data).to(s.dev); },
                         [&] {
                           on_exec(s.dev, [&](const auto& exec) {
                             dist::sort(exec, *s.comm, data.cview(), [&](int64_t n) {
                               sorted = rank_array<T>(s.dev.cuda, n);
                               return sorted.data();
                             });
                           });
                           sorted = std::move(sorted).on_host();
                         });
  t.write_ms = write_outputs(s, {{output_of<T>(r.out), {sorted.data(), sorted.size()}}}).ms;

  const times slow = t.slowest();
  if (s.rank != 0) return exit_ok;
  const std::string dtype(key_traits<T>::name);
  if (r.json) {
    json j = summary_head(s, "sort", dtype);
    j["n"] = data_file.size();
    j["out"] = r.out;
    j["result"] = data_file.size();
    slow.to_json(j, "time_ms");
    print(j.dump() + "\n");
  } else {
    note("sort: " + std::to_string(data_file.size()) + " " + dtype + " keys (stable), " + where_text(s) +
          ": keys -> " + shown_path(s, r.out) + ", " + slow.text());
  }
  return exit_ok;
}

// ---- join ---------------------------------------------------------------------------------------

template <class T>
exit_code join_typed(const session& s, const join_request& r, npy::input& left_file, npy::input& right_file) {
  times t;
  auto [left, right] = read_two_shards<T>(s, left_file, right_file, t.read_ms);
  progress::phase("checking that the inputs are sorted");
  const std::string remedy = "; sort it (gsearch sort), or pass --assume-sorted";
  if (!r.no_check) {
    check_sorted_shards(s, left, left_file.size(), {"--left is", "left", left_file.path(), remedy});
    check_sorted_shards(s, right, right_file.size(), {"--right is", "right", right_file.path(), remedy});
  }
  const bool left_only = core::join_left_only(r.how);
  rank_array<int64_t> li, ri;
  progress::phase("joining");
  t.call_ms = call_steps(
      [&] {
        left = std::move(left).to(s.dev);
        right = std::move(right).to(s.dev);
      },
      [&] {
        on_exec(s.dev, [&](const auto& exec) {
          dist::join(exec, *s.comm, r.how, left.cview(), right.cview(), [&](int64_t rows) {
            li = rank_array<int64_t>(s.dev.cuda, rows);
            if (!left_only) ri = rank_array<int64_t>(s.dev.cuda, rows);
            return join_output{li.data(), left_only ? nullptr : ri.data()};
          });
        });
        li = std::move(li).on_host();
        ri = std::move(ri).on_host();
      });
  std::vector<std::pair<output_file, part>> outputs = {
      {output_of<int64_t>(r.out_left), {li.data(), li.size()}}};
  if (!left_only) outputs.push_back({output_of<int64_t>(r.out_right), {ri.data(), ri.size()}});
  const written w = write_outputs(s, outputs);
  t.write_ms = w.ms;

  const times slow = t.slowest();
  if (s.rank != 0) return exit_ok;
  const std::string dtype(key_traits<T>::name);
  if (r.json) {
    json j = summary_head(s, "join", dtype);
    j["how"] = gsearch::to_string(r.how);
    j["left"] = left_file.size();
    j["right"] = right_file.size();
    j["checked"] = !r.no_check;
    j["out_left"] = r.out_left;
    j["out_right"] = left_only ? json(nullptr) : json(r.out_right);
    j["result"] = w.totals[0];
    slow.to_json(j, "time_ms");
    print(j.dump() + "\n");
  } else {
    note("join: " + std::string(gsearch::to_string(r.how)) + " join of " + std::to_string(left_file.size()) +
          " and " + std::to_string(right_file.size()) + " " + dtype + " keys, " + where_text(s) + ": " +
          std::to_string(w.totals[0]) + " rows -> " + shown_path(s, r.out_left) +
          (left_only ? "" : ", " + shown_path(s, r.out_right)) + " (int64), " + slow.text());
  }
  return exit_ok;
}


}  // namespace

exit_code sort(const std::function<sort_request()>& make) {
  return run_quietly([&] {
    sort_request r;
    std::optional<npy::input> data;
    const session s = begin(make, r, [&] {
      if (r.out.empty()) bad("--distributed needs --out S.npy (the sorted keys)");
      check_paths({{"--data", r.data}}, rank_outputs(r, {{"--out", r.out}}));
      data.emplace(r.data);
      check_1d(*data, "--data", "sort");
    });
    return visit_key_type(data->type(), [&]<class T>() { return sort_typed<T>(s, r, *data); });
  });
}

exit_code join(const std::function<join_request()>& make) {
  return run_quietly([&] {
    join_request r;
    std::optional<npy::input> left, right;
    const session s = begin(make, r, [&] {
      check_paths({{"--left", r.left}, {"--right", r.right}},
                  rank_outputs(r, {{"--out-left", r.out_left}, {"--out-right", r.out_right}}));
      left.emplace(r.left);
      right.emplace(r.right);
      check_1d(*left, "--left", "join");
      check_1d(*right, "--right", "join");
      if (left->type() != right->type())
        bad("--left " + left->path() + " is " + std::string(name(left->type())) + " but --right " +
            right->path() + " is " + std::string(name(right->type())) +
            ": gsearch never casts (numpy would promote; convert one with a.astype(...))");
    });
    return visit_key_type(left->type(), [&]<class T>() { return join_typed<T>(s, r, *left, *right); });
  });
}

}  // namespace gsearch::cli::distributed
#endif  // GSEARCH_CLI_MPI
