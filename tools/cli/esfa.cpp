// `gsearch functional-arrays run` and `gen` (alias: `gsearch esfa`): functional arrays (gsearch/functional_arrays.hpp)
// driven by a recorded operation stream, and the random streams like the seed's (50,000 mixed
// updates, lookups and removes): gsearch/functional_arrays_stream.hpp's format, parse, replay
// and generate, on .npy files.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "gsearch/functional_arrays.hpp"
#include "gsearch/functional_arrays_spec.hpp"
#include "gsearch/functional_arrays_stream.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "subcommand.hpp"
#include "timing.hpp"

namespace gsearch::cli {
namespace {

using json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& what) { throw failure(exit_bad_input, what); }

const char* const esfa_format =
    "An operation stream is an int64 .npy of shape (n, 4), a row (op, a, i, v) per operation: op 0 "
    "empty, 1 update (a with a[i] = v), 2 remove (a without i), 3 lookup (a[i]), 4 size, 5 next "
    "(the least defined index above i), 6 release; a is the row that made the argument array (an "
    "empty, update or remove row before this one, not released), -1 for empty. Results (--out): "
    "int64 of shape (n, 2), (found, value) per row: lookup (1, a[i]) or (0, 0), size (1, size), "
    "next (1, index) or (0, 0), the others (1, 0). Values are int64 "
    "(gsearch/functional_arrays_stream.hpp).";

// The stream of `path`, checked whole before anything runs.
std::vector<fa_stream::row> load_stream(const std::string& path) {
  npy::input in(path);
  if (in.type() != dtype::int64 || in.ndim() != 2 || in.shape()[1] != 4)
    bad(path + ": an operation stream is int64 of shape (n, 4) (have " + std::string(name(in.type())) + " " +
        npy::shape_text(in.shape()) + ")");
  try {
    return fa_stream::parse(in.read<int64_t>());
  } catch (const invalid_argument& e) {
    bad(path + ": " + e.what());
  }
}

// ---- esfa run ----------------------------------------------------------------------------------

struct run_args {
  std::string ops, out, cells = "4096", device = "auto";
  bool verify = false, json = false, latency = false;
};

exit_code run_esfa(const run_args& a) {
  std::vector<named_path> outs;
  if (!a.out.empty()) outs.push_back({"--out", a.out});
  check_paths({{"--ops", a.ops}}, outs);
  const int64_t cells = parse_count(a.cells, "--cells", 1, int64_t(1) << 40);
  const target where = resolve_device(a.device);
  progress::phase("reading");
  const std::vector<fa_stream::row> rows = load_stream(a.ops);
  const int64_t n = int64_t(rows.size());
  functional_arrays<int64_t> fa = where.cuda ? functional_arrays<int64_t>(cuda, cells)
                                                : functional_arrays<int64_t>(cpu, cells);
  std::vector<int64_t> found, value;
  std::vector<double> ns(rows.size());
  progress::phase("running");
  // CUDA replays as a pipeline (queries answered at the end: no operation has a time of its own)
  // unless --latency asks for each operation waited for.
  const bool pipelined = where.cuda && !a.latency;
  auto t0 = std::chrono::steady_clock::now();
  size_t at = 0;
  try {
    if (pipelined) {
      fa_stream::replay_pipelined(fa, rows, found, value);
      const double each = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
                          double(std::max<size_t>(rows.size(), 1));
      std::fill(ns.begin(), ns.end(), each);
    } else {
      fa_stream::replay(fa, rows, found, value, [&](size_t r) {
        fa.sync();
        const auto t1 = std::chrono::steady_clock::now();
        ns[r] = std::chrono::duration<double, std::nano>(t1 - t0).count();
        t0 = t1;
        at = r + 1;
      });
    }
  } catch (const out_of_memory& e) {
    bad(a.ops + ": row " + std::to_string(at) + " (" + fa_stream::op_names[rows[at].op] + "): " + e.what() +
        "; give more --cells (nothing written)");
  }
  // --verify: the executable specification on the same stream, every result compared.
  int64_t differences = 0;
  std::string first;
  double spec_ms = 0;
  if (a.verify) {
    progress::phase("verifying");
    functional_arrays_spec<int64_t> spec;
    std::vector<int64_t> want_found, want_value;
    spec_ms = wall_ms([&] { fa_stream::replay(spec, rows, want_found, want_value, [](size_t) {}); });
    for (size_t r = 0; r < rows.size(); ++r) {
      if (found[r] == want_found[r] && value[r] == want_value[r]) continue;
      if (differences++ == 0)
        first = "row " + std::to_string(r) + " (" + fa_stream::op_names[rows[r].op] + "): got (" +
                std::to_string(found[r]) + ", " + std::to_string(value[r]) + "), the specification (" +
                std::to_string(want_found[r]) + ", " + std::to_string(want_value[r]) + ")";
    }
  }
  if (!a.out.empty()) {
    std::vector<int64_t> results(2 * rows.size());
    for (size_t r = 0; r < rows.size(); ++r) results[2 * r] = found[r], results[2 * r + 1] = value[r];
    npy::save(a.out, span<const int64_t>(results), {n, 2});
  }
  std::vector<double> sorted = ns;
  std::sort(sorted.begin(), sorted.end());
  const auto pct = [&](double p) { return sorted.empty() ? 0.0 : sorted[size_t(p * double(sorted.size() - 1))] / 1000; };
  double total_ns = 0;
  for (const double x : ns) total_ns += x;
  if (a.json) {
    json j;
    j["command"] = "esfa run";
    j["ops"] = a.ops;
    j["operations"] = n;
    j["cells"] = cells;
    j["device"] = where.cuda ? "cuda" : "cpu";
    j["device_name"] = where.name;
    if (where.cuda) j["persistent_blocks"] = fa.persistent_blocks();
    json counts;
    int64_t by_op[fa_stream::op_count] = {};
    for (const fa_stream::row& x : rows) ++by_op[x.op];
    for (int k = 0; k < fa_stream::op_count; ++k) counts[fa_stream::op_names[k]] = by_op[k];
    j["by_op"] = counts;
    j["ms"] = total_ns / 1e6;
    j["pipelined"] = pipelined;
    j["us_per_op"] = {{"mean", n ? total_ns / double(n) / 1000 : 0.0}, {"p50", pct(0.5)}, {"p99", pct(0.99)},
                      {"max", sorted.empty() ? 0.0 : sorted.back() / 1000}};
    if (pipelined) j["us_per_op"]["p50"] = j["us_per_op"]["p99"] = j["us_per_op"]["max"] = nullptr;
    j["collections"] = fa.collections();
    j["collection_ms"] = fa.collection_seconds() * 1e3;
    if (a.verify) {
      j["verified"] = differences == 0;
      j["differences"] = differences;
      j["spec_ms"] = spec_ms;
    }
    if (!a.out.empty()) j["out"] = a.out;
    print(j.dump() + "\n");
  } else {
    note(format("functional-arrays run: %lld operations on %lld cells (%s) in %.3f ms (%.2f us each%s)%s", (long long)n,
                (long long)cells, where.cuda ? (pipelined ? "cuda, pipelined" : "cuda") : "cpu", total_ns / 1e6,
                n ? total_ns / double(n) / 1000 : 0.0,
                pipelined ? "" : format(", p99 %.2f us", pct(0.99)).c_str(),
                a.verify ? (differences == 0 ? ", equal to the specification" : ", DIFFERENT from the specification")
                         : ""));
  }
  if (differences > 0)
    throw failure(exit_mismatch, std::to_string(differences) + " results differ from the specification; the first: " + first);
  return exit_ok;
}

// ---- esfa gen ----------------------------------------------------------------------------------

struct gen_args {
  std::string out, ops = "50000", cells = "4096", seed = "1", mix = "paper";
  bool json = false;
};

exit_code run_esfa_gen(const gen_args& a) {
  check_paths({}, {{"--out", a.out}});
  const int64_t n = parse_count(a.ops, "--ops", 1, int64_t(1) << 32);
  const int64_t cells = parse_count(a.cells, "--cells", 1, int64_t(1) << 30);
  const auto* name = std::find(std::begin(fa_stream::mix_names), std::end(fa_stream::mix_names), a.mix);
  const auto kind = fa_stream::mix(name - std::begin(fa_stream::mix_names));
  progress::phase("generating");
  const std::vector<int64_t> flat = fa_stream::generate(n, cells, kind, parse_seed(a.seed));
  npy::save(a.out, span<const int64_t>(flat), {n, 4});
  if (a.json)
    print(json{{"command", "esfa gen"}, {"out", a.out}, {"operations", n}, {"cells", cells}, {"mix", a.mix}}.dump() + "\n");
  else
    note(format("functional-arrays gen: %lld operations (%s mix, for %lld cells) -> %s", (long long)n, a.mix.c_str(),
                (long long)cells, a.out.c_str()));
  return exit_ok;
}

// `gsearch functional-arrays` (`gsearch esfa`, its older name, is an alias): the parent of run
// and gen.
CLI::App& esfa_app(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == "functional-arrays") return *sub;
  CLI::App* esfa = app.add_subcommand(
      "functional-arrays",
      "Functional arrays (persistent, versioned sparse arrays): replay an operation stream (run) "
      "or make one (gen)");
  esfa->alias("esfa");
  esfa->footer(
      "A functional array is a sparse array of int64 values at int64 indices that is never changed "
      "in place: an update or a remove makes a new array, and every older one stays readable "
      "(persistent, versioned) until released. They live in a fixed machine of cells, on the CPU "
      "or the GPU (a persistent kernel). gsearch functional-arrays run --help and gen --help "
      "describe the stream format. gsearch esfa ... is the same command (its older name).");
  esfa->require_subcommand(1, 1);
  return *esfa;
}

const subcommand_spec<run_args> run_spec{
    "run",
    "Replay an operation stream on a machine of functional arrays; time each operation, optionally verify",
    std::string(esfa_format) +
        " On CUDA the machine is a persistent kernel holding the cells in its blocks' shared memory, and the "
        "stream runs as a pipeline (--latency: each operation waited for). "
        "The run stops with exit code 1 (nothing written) when the machine is too small for the stream. "
        "--verify replays the stream on the executable specification too and exits 3 naming the first "
        "difference.",
    [](CLI::App& sub, run_args& a) {
      sub.add_option("--ops", a.ops, "The operation stream (.npy, int64, (n, 4))")->required()->type_name("OPS.npy");
      sub.add_option("--cells", a.cells, "The machine's cells")->type_name("N")->capture_default_str();
      sub.add_option("--out", a.out, "Write the results (.npy, int64, (n, 2))")->type_name("OUT.npy");
      add_device_option(sub, a.device);
      sub.add_flag("--verify", a.verify, "Compare every result with the executable specification's");
      sub.add_flag("--latency", a.latency,
                   "CUDA: wait for each operation (per-operation times, the CPU-GPU dialogue included) instead of "
                   "replaying the stream as a pipeline (queries answered at the end; only the mean time)");
      sub.add_flag("--json", a.json, "Print one JSON object (operations, us_per_op mean / p50 / p99 / max, collections and collection_ms: the sweeps and their time, ...)");
    },
    run_esfa};

const subcommand_spec<gen_args> gen_spec{
    "gen",
    "Make a random operation stream (updates, removes, lookups, size, next) that fits a machine of --cells",
    std::string(esfa_format) +
        " Mixes: paper (40% updates, 10% removes, 40% lookups, 10% size / next, arguments the newest array or "
        "a random one), chains (always the newest), fans (the first array or the newest), sparse (paper with "
        "indices spread over 2^52), ascending (an unbalanced history: updates of the newest array at "
        "increasing indices). When an update would not fit, the older half of the arrays is released.",
    [](CLI::App& sub, gen_args& a) {
      sub.add_option("--out", a.out, "The stream to write (.npy)")->required()->type_name("OPS.npy");
      sub.add_option("--ops", a.ops, "Operations")->type_name("N")->capture_default_str();
      sub.add_option("--cells", a.cells, "The machine the stream must fit")->type_name("N")->capture_default_str();
      sub.add_option("--mix", a.mix, "paper, chains, fans, sparse or ascending")
          ->check(CLI::IsMember(std::vector<std::string>(std::begin(fa_stream::mix_names), std::end(fa_stream::mix_names))))
          ->capture_default_str();
      sub.add_option("--seed", a.seed, "Seed (0 to 2^64 - 1)")->type_name("S")->capture_default_str();
      sub.add_flag("--json", a.json, "Print one JSON object");
    },
    run_esfa_gen};

}  // namespace

command add_esfa_run_command(CLI::App& app) { return add_command(esfa_app(app), run_spec); }
command add_esfa_gen_command(CLI::App& app) { return add_command(esfa_app(app), gen_spec); }

}  // namespace gsearch::cli
