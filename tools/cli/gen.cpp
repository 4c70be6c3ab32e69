// `gsearch gen`: sorted random keys and queries, as .npy files.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "common.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "subcommand.hpp"

namespace gsearch::cli {
namespace {

struct gen_args {
  std::string keys, queries, seed = "1";
  std::string dtype = "int32", query_kind = "random", keys_out, queries_out;
};

exit_code run_gen(const gen_args& a) {
  check_paths({}, {{"--keys-out", a.keys_out}, {"--queries-out", a.queries_out}});
  const auto t = dtype_from_name(a.dtype);
  if (!t) throw failure(exit_bad_input, "unknown dtype '" + a.dtype + "'");
  const int64_t bytes = itemsize(*t);
  const int64_t keys = parse_size(a.keys, "--keys", 0, bytes);
  const int64_t queries = parse_size(a.queries, "--queries", 0, bytes);
  const uint64_t seed = parse_seed(a.seed);
  if ((keys + queries) > host_memory_bytes() / bytes)
    throw failure(exit_bad_input, "--keys " + std::to_string(keys) + " and --queries " +
                                      std::to_string(queries) + " together need " +
                                      bytes_text(double(keys + queries) * double(bytes)) +
                                      ", more than this machine's memory (" +
                                      bytes_text(double(host_memory_bytes())) + ")");
  visit_key_type(*t, [&]<class T>() {
    progress::phase("generating");
    const generated<T> g = generate<T>(keys, queries, a.query_kind, seed);
    // Both files are written before either is renamed into place.
    npy::staged_file keys_file(a.keys_out, *t, g.keys.data(), keys);
    npy::staged_file queries_file(a.queries_out, *t, g.queries.data(), queries);
    keys_file.commit();
    queries_file.commit();
  });
  note(format("gen: %lld sorted %s keys -> %s, %lld %s queries -> %s (seed %llu)",
               (long long)keys, a.dtype.c_str(), a.keys_out.c_str(), (long long)queries,
               a.query_kind.c_str(), a.queries_out.c_str(), (unsigned long long)seed));
  return exit_ok;
}

const char* const gen_footer =
    "The generator is splitmix64: a seed gives the same files on every machine. Each file is "
    "written to a temporary file and renamed; neither is renamed unless both were written. "
    "--keys-out and --queries-out must name different files (also through ./, .., a symlink "
    "or a hard link). --keys and --queries are whole numbers from 0 to what this machine's "
    "memory holds (checked before anything is generated); --seed is 0 to 2^64 - 1.";

void add_gen_options(CLI::App& sub, gen_args& a) {
  sub.add_option("--keys", a.keys,
                 "Number of keys (0 or more): uniformly random (integers over the whole type, "
                 "floats in [-1e6, 1e6)), sorted")
      ->required()
      ->type_name("N");
  sub.add_option("--queries", a.queries, "Number of queries (0 or more)")->required()->type_name("M");
  sub.add_option("--dtype", a.dtype, "Element type of both files")
      ->check(CLI::IsMember(dtype_names()))
      ->capture_default_str();
  sub.add_option("--query-kind", a.query_kind,
                 "random: each query a key drawn at random; worst: the paper's worst case for "
                 "PBS (lane i of each warp of 32 queries keys[i * (N / 32) + C], C random per "
                 "warp)")
      ->check(CLI::IsMember(query_kind_names))
      ->capture_default_str();
  sub.add_option("--seed", a.seed, "Seed of the keys (0 to 2^64 - 1); the queries use seed + 1")
      ->type_name("S")
      ->capture_default_str();
  sub.add_option("--keys-out", a.keys_out, "Keys file to write")->required()->type_name("K.npy");
  sub.add_option("--queries-out", a.queries_out, "Queries file to write")->required()->type_name("Q.npy");
}

}  // namespace

command add_gen_command(CLI::App& app) {
  return add_command<gen_args>(app, {"gen", "Generate sorted random keys and queries as .npy files",
                                     gen_footer, add_gen_options, run_gen});
}

}  // namespace gsearch::cli
