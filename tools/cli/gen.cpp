// `gsearch gen`: sorted random keys and queries, as .npy files.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "common.hpp"
#include "npy.hpp"

namespace gsearch::cli {
namespace {

struct gen_args {
  int64_t keys = 0, queries = 0;
  std::string dtype = "int32", query_kind = "random", keys_out, queries_out;
  uint64_t seed = 1;
};

exit_code run_gen(const gen_args& a) {
  npy::check_distinct_paths({}, {{"--keys-out", a.keys_out}, {"--queries-out", a.queries_out}});
  const auto t = dtype_from_name(a.dtype);
  if (!t) throw failure(exit_bad_input, "unknown dtype '" + a.dtype + "'");
  visit(*t, [&]<class T>() {
    const generated<T> g = generate<T>(a.keys, a.queries, a.query_kind, a.seed);
    // Both files are written before either is renamed into place.
    npy::staged_file keys(a.keys_out, *t, g.keys.data(), a.keys);
    npy::staged_file queries(a.queries_out, *t, g.queries.data(), a.queries);
    keys.commit();
    queries.commit();
  });
  std::fprintf(stderr, "gen: %lld sorted %s keys -> %s, %lld %s queries -> %s (seed %llu)\n",
               (long long)a.keys, a.dtype.c_str(), a.keys_out.c_str(), (long long)a.queries,
               a.query_kind.c_str(), a.queries_out.c_str(), (unsigned long long)a.seed);
  return exit_ok;
}

}  // namespace

command add_gen_command(CLI::App& app) {
  auto a = std::make_shared<gen_args>();
  CLI::App* sub =
      app.add_subcommand("gen", "Generate sorted random keys and queries as .npy files");
  sub->footer(
      "The generator is splitmix64: a seed gives the same files on every machine. Each file is "
      "written to a temporary file and renamed; neither is renamed unless both were written. "
      "--keys-out and --queries-out must name different files (also through ./, .., a symlink "
      "or a hard link).");
  sub->add_option("--keys", a->keys,
                  "Number of keys: uniformly random (integers over the whole type, floats in "
                  "[-1e6, 1e6)), sorted")
      ->required()
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  sub->add_option("--queries", a->queries, "Number of queries")
      ->required()
      ->check(CLI::NonNegativeNumber)
      ->type_name("M");
  sub->add_option("--dtype", a->dtype, "Element type of both files")
      ->check(CLI::IsMember(dtype_names()))
      ->capture_default_str();
  sub->add_option("--query-kind", a->query_kind,
                  "random: each query a key drawn at random; worst: the paper's worst case for "
                  "PBS (lane i of each warp of 32 queries keys[i * (N / 32) + C], C random per "
                  "warp)")
      ->check(CLI::IsMember(query_kind_names))
      ->capture_default_str();
  sub->add_option("--seed", a->seed, "Seed of the keys; the queries use seed + 1")
      ->type_name("S")
      ->capture_default_str();
  sub->add_option("--keys-out", a->keys_out, "Keys file to write")->required()->type_name("K.npy");
  sub->add_option("--queries-out", a->queries_out, "Queries file to write")
      ->required()
      ->type_name("Q.npy");
  return {sub, [a] { return run_gen(*a); }};
}

}  // namespace gsearch::cli
