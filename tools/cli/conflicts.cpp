// `gsearch conflicts`: the shared-memory bank model (src/tools/bank_model.hpp) run on generated keys
// and queries: how many passes each step of a warp's search takes, and how many are conflicts.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tools/bank_model.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "subcommand.hpp"

namespace gsearch::cli {
namespace {

// The algorithms the bank model traces (model::model_run refuses the others).
const std::vector<std::string> modelled_algorithms = {"pbs", "pbs-cf", "pbs-cl", "binary"};
constexpr int max_banks = 1024;

struct conflicts_args {
  std::string algo, queries = "random", side = "pred";
  std::string keys, warps = "64", banks = "32", seed = "1";
  int key_bytes = 4, bank_bytes = 4;
  bool no_multicast = false, json = false;
};

// The numbers of the command line, checked.
struct conflicts_sizes {
  int64_t keys = 0, warps = 0;
  int banks = 0;
  uint64_t seed = 0;
};

template <class T>
exit_code run_model(const conflicts_args& a, const conflicts_sizes& n) {
  const int64_t q = n.warps * warp_width;
  progress::phase("generating");
  const generated<T> g = generate<T>(n.keys, q, a.queries, n.seed);
  const model::bank_config cfg{n.banks, a.bank_bytes, !a.no_multicast};
  const algorithm algo = parse_algorithm(a.algo);
  const side sd = side_from_string(a.side);
  progress::phase("modelling");
  const model::run_summary r =
      model::model_run(algo, sd, g.keys.data(), n.keys, g.queries.data(), q, cfg);

  const double w = double(r.warps);
  if (a.json) {
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (size_t s = 0; s < r.step_passes.size(); ++s)
      steps.push_back({{"step", s},
                       {"stage", r.stage[s]},
                       {"accesses_per_warp", double(r.step_passes[s]) / w},
                       {"conflicts_per_warp", double(r.step_conflicts[s]) / w}});
    const nlohmann::ordered_json j = {{"command", "conflicts"},
                                      {"algo", to_string(algo)},
                                      {"keys", n.keys},
                                      {"key_bytes", a.key_bytes},
                                      {"key_dtype", key_traits<T>::name},
                                      {"queries", a.queries},
                                      {"side", to_string(sd)},
                                      {"seed", n.seed},
                                      {"banks", n.banks},
                                      {"bank_bytes", a.bank_bytes},
                                      {"multicast", cfg.multicast},
                                      {"warps", r.warps},
                                      {"accesses_per_warp", double(r.passes) / w},
                                      {"conflicts_per_warp", double(r.conflicts) / w},
                                      {"max_accesses_per_warp", r.max_warp_passes},
                                      {"steps", steps}};
    print(j.dump() + "\n");
    return exit_ok;
  }
  print(format(
      "conflicts: %s, %lld %s keys, %s queries, side=%s, %lld warps of %d queries, "
      "%d banks of %d bytes, multicast %s\n",
      to_string(algo).data(), (long long)n.keys, key_traits<T>::name, a.queries.c_str(),
      to_string(sd).data(), (long long)r.warps, warp_width, n.banks, a.bank_bytes,
      cfg.multicast ? "on" : "off"));
  print(format(
      "per warp: %.2f accesses (passes), %.2f of them conflicts; worst warp: %lld accesses\n",
      double(r.passes) / w, double(r.conflicts) / w, (long long)r.max_warp_passes));
  print(format("%6s %6s %16s %16s\n", "step", "stage", "accesses/warp", "conflicts/warp"));
  for (size_t s = 0; s < r.step_passes.size(); ++s)
    print(format("%6zu %6d %16.2f %16.2f\n", s, r.stage[s], double(r.step_passes[s]) / w,
                 double(r.step_conflicts[s]) / w));
  return exit_ok;
}

exit_code run_conflicts(const conflicts_args& a) {
  conflicts_sizes n;
  // Keys and queries are generated, traced and copied (padded): a few copies of each.
  n.keys = parse_size(a.keys, "--keys", 1, 4 * a.key_bytes);
  n.warps = parse_size(a.warps, "--warps", 1, 4 * int64_t(warp_width) * a.key_bytes);
  n.banks = int(parse_count(a.banks, "--banks", 1, max_banks,
                            " (the model's limit; GPUs have 32 banks)"));
  n.seed = parse_seed(a.seed);
  return a.key_bytes == 4 ? run_model<int32_t>(a, n) : run_model<int64_t>(a, n);
}

const char* const conflicts_footer =
    "Keys: N sorted random int32 values (--key-bytes 4) or int64 values (--key-bytes 8), the "
    "same as `gsearch gen --dtype int32|int64 --seed S` makes. Queries: W warps of 32. Every "
    "lane's key reads are traced; step s of all lanes of a warp is one shared-memory access, "
    "which takes as many passes as the most distinct words requested from one bank. Conflicts "
    "are the passes beyond the fewest possible.\n"
    "Example: gsearch conflicts --algo pbs --keys 1024 --queries worst";

void add_conflicts_options(CLI::App& sub, conflicts_args& a) {
  sub.add_option("--algo", a.algo, "Search algorithm to model")
      ->required()
      ->check(CLI::IsMember(modelled_algorithms));
  sub.add_option("--keys", a.keys, "Number of keys (1 or more)")->required()->type_name("N");
  sub.add_option("--key-bytes", a.key_bytes, "Key size: 4 (int32 keys) or 8 (int64 keys)")
      ->check(CLI::IsMember({4, 8}))
      ->capture_default_str();
  sub.add_option("--queries", a.queries,
                 "random: keys drawn at random; worst: the paper's worst case for PBS")
      ->check(CLI::IsMember(query_kind_names))
      ->capture_default_str();
  sub.add_option("--warps", a.warps, "Number of warps (32 queries each; 1 or more)")
      ->type_name("W")
      ->capture_default_str();
  sub.add_option("--banks", a.banks, "Shared-memory banks (1 to 1024)")
      ->type_name("B")
      ->capture_default_str();
  sub.add_option("--bank-bytes", a.bank_bytes, "Bank width in bytes: 4, or 8 (Kepler's mode)")
      ->check(CLI::IsMember({4, 8}))
      ->capture_default_str();
  sub.add_flag("--no-multicast", a.no_multicast, "Lanes reading the same word are not served in one pass");
  sub.add_option("--side", a.side,
                 "pred (the paper's predecessor search) or right: count keys <= q; left: keys < q")
      ->check(CLI::IsMember(side_names))
      ->capture_default_str();
  sub.add_option("--seed", a.seed, "Seed of the keys (0 to 2^64 - 1); the queries use seed + 1")
      ->type_name("S")
      ->capture_default_str();
  sub.add_flag("--json", a.json, "Print the counts as one line of JSON");
}

}  // namespace

command add_conflicts_command(CLI::App& app) {
  return add_command<conflicts_args>(
      app, {"conflicts", "Count a search's shared-memory accesses and bank conflicts with the bank model",
            conflicts_footer, add_conflicts_options, run_conflicts});
}

}  // namespace gsearch::cli
