// `gsearch esfa run` and `gsearch esfa gen`: functional arrays (gsearch/functional_arrays.hpp)
// driven by a recorded operation stream, and the random streams like the seed's (50,000 mixed
// updates, lookups and removes). The stream format is in esfa_format below (and `--help`).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common.hpp"
#include "gsearch/functional_arrays.hpp"
#include "gsearch/functional_arrays_spec.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "subcommand.hpp"

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
    "next (1, index) or (0, 0), the others (1, 0). Values are int64.";

enum esfa_op : int64_t { op_empty = 0, op_update, op_remove, op_lookup, op_size, op_next, op_release, op_count };
const char* const op_names[] = {"empty", "update", "remove", "lookup", "size", "next", "release"};

struct esfa_row {
  int64_t op, a, i, v;
};

// The stream of `path`, checked whole before anything runs: codes, argument rows, releases.
std::vector<esfa_row> load_stream(const std::string& path) {
  npy::input in(path);
  if (in.type() != dtype::int64 || in.ndim() != 2 || in.shape()[1] != 4)
    bad(path + ": an operation stream is int64 of shape (n, 4) (have " + std::string(name(in.type())) + " " +
        npy::shape_text(in.shape()) + ")");
  const std::vector<int64_t> flat = in.read<int64_t>();
  std::vector<esfa_row> rows(flat.size() / 4);
  std::vector<uint8_t> state(rows.size(), 0);  // 1: makes an array, 2: released
  for (size_t r = 0; r < rows.size(); ++r) {
    rows[r] = {flat[4 * r], flat[4 * r + 1], flat[4 * r + 2], flat[4 * r + 3]};
    const esfa_row& x = rows[r];
    const std::string at = path + ": row " + std::to_string(r) + ": ";
    if (x.op < 0 || x.op >= op_count) bad(at + "unknown op " + std::to_string(x.op) + " (0 to 6)");
    if (x.op == op_empty) {
      state[r] = 1;
      continue;
    }
    if (x.a < 0 || x.a >= int64_t(r)) bad(at + "argument row " + std::to_string(x.a) + " is not an earlier row");
    if (state[size_t(x.a)] != 1)
      bad(at + "argument row " + std::to_string(x.a) + (state[size_t(x.a)] == 2 ? " was released" : " makes no array"));
    if (x.op == op_update || x.op == op_remove) state[r] = 1;
    if (x.op == op_release) state[size_t(x.a)] = 2;
  }
  return rows;
}

// ---- esfa run ----------------------------------------------------------------------------------

struct run_args {
  std::string ops, out, cells = "4096", device = "cpu";
  bool verify = false, json = false;
};

exit_code run_esfa(const run_args& a) {
  std::vector<named_path> outs;
  if (!a.out.empty()) outs.push_back({"--out", a.out});
  check_paths({{"--ops", a.ops}}, outs);
  const int64_t cells = parse_count(a.cells, "--cells", 1, int64_t(1) << 40);
  if (a.device != "cpu") bad("--device " + a.device + ": the functional arrays run on the CPU only so far");
  progress::phase("reading");
  const std::vector<esfa_row> rows = load_stream(a.ops);
  const int64_t n = int64_t(rows.size());
  functional_arrays<int64_t> fa(cpu, cells);
  std::vector<functional_arrays<int64_t>::array> made(rows.size());
  std::vector<int64_t> results(2 * rows.size(), 0);
  std::vector<double> ns(rows.size());
  int64_t by_op[op_count] = {};
  progress::phase("running");
  for (size_t r = 0; r < rows.size(); ++r) {
    const esfa_row& x = rows[r];
    const auto t0 = std::chrono::steady_clock::now();
    int64_t found = 1, value = 0;
    try {
      switch (x.op) {
        case op_empty: made[r] = fa.empty(); break;
        case op_update: made[r] = fa.update(made[size_t(x.a)], x.i, x.v); break;
        case op_remove: made[r] = fa.remove(made[size_t(x.a)], x.i); break;
        case op_lookup: {
          const auto v = fa.lookup(made[size_t(x.a)], x.i);
          found = v.has_value(), value = v.value_or(0);
          break;
        }
        case op_size: value = fa.size(made[size_t(x.a)]); break;
        case op_next: {
          const auto v = fa.next(made[size_t(x.a)], x.i);
          found = v.has_value(), value = v.value_or(0);
          break;
        }
        default: fa.release(made[size_t(x.a)]); break;
      }
    } catch (const out_of_memory& e) {
      bad(a.ops + ": row " + std::to_string(r) + " (" + op_names[x.op] + "): " + e.what() +
          "; give more --cells (nothing written)");
    }
    ns[r] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    results[2 * r] = found;
    results[2 * r + 1] = value;
    ++by_op[x.op];
  }
  // --verify: the executable specification on the same stream, every result compared.
  int64_t differences = 0;
  std::string first;
  double spec_ms = 0;
  if (a.verify) {
    progress::phase("verifying");
    functional_arrays_spec<int64_t> spec;
    std::vector<int64_t> version(rows.size(), -1);
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t r = 0; r < rows.size(); ++r) {
      const esfa_row& x = rows[r];
      int64_t found = 1, value = 0;
      switch (x.op) {
        case op_empty: version[r] = spec.empty(); break;
        case op_update: version[r] = spec.update(version[size_t(x.a)], x.i, x.v); break;
        case op_remove: version[r] = spec.remove(version[size_t(x.a)], x.i); break;
        case op_lookup: {
          const auto v = spec.lookup(version[size_t(x.a)], x.i);
          found = v.has_value(), value = v.value_or(0);
          break;
        }
        case op_size: value = spec.size(version[size_t(x.a)]); break;
        case op_next: {
          const auto v = spec.next(version[size_t(x.a)], x.i);
          found = v.has_value(), value = v.value_or(0);
          break;
        }
        default: spec.release(version[size_t(x.a)]); break;
      }
      if (found != results[2 * r] || value != results[2 * r + 1]) {
        if (differences++ == 0)
          first = "row " + std::to_string(r) + " (" + op_names[x.op] + "): got (" + std::to_string(results[2 * r]) +
                  ", " + std::to_string(results[2 * r + 1]) + "), the specification (" + std::to_string(found) + ", " +
                  std::to_string(value) + ")";
      }
    }
    spec_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  if (!a.out.empty()) npy::save(a.out, span<const int64_t>(results), {n, 2});
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
    j["device"] = "cpu";
    json counts;
    for (int k = 0; k < op_count; ++k) counts[op_names[k]] = by_op[k];
    j["by_op"] = counts;
    j["ms"] = total_ns / 1e6;
    j["us_per_op"] = {{"mean", n ? total_ns / double(n) / 1000 : 0.0}, {"p50", pct(0.5)}, {"p99", pct(0.99)},
                      {"max", sorted.empty() ? 0.0 : sorted.back() / 1000}};
    j["collections"] = fa.collections();
    if (a.verify) {
      j["verified"] = differences == 0;
      j["differences"] = differences;
      j["spec_ms"] = spec_ms;
    }
    if (!a.out.empty()) j["out"] = a.out;
    print(j.dump() + "\n");
  } else {
    note(format("esfa run: %lld operations on %lld cells in %.3f ms (%.2f us each, p99 %.2f us)%s", (long long)n,
                (long long)cells, total_ns / 1e6, n ? total_ns / double(n) / 1000 : 0.0, pct(0.99),
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

// A stream that runs on a machine of `cells` cells: generated beside one, and when an operation
// would not fit, releases of the oldest arrays first (as a program that keeps few versions does).
exit_code run_esfa_gen(const gen_args& a) {
  check_paths({}, {{"--out", a.out}});
  const int64_t n = parse_count(a.ops, "--ops", 1, int64_t(1) << 32);
  const int64_t cells = parse_count(a.cells, "--cells", 1, int64_t(1) << 30);
  std::mt19937_64 r(parse_seed(a.seed));
  const bool chains = a.mix == "chains", fans = a.mix == "fans", sparse = a.mix == "sparse";
  const int64_t range = sparse ? int64_t(1) << 40 : std::max<int64_t>(16, cells / 4);
  functional_arrays<int64_t> fa(cpu, cells);
  std::vector<int64_t> flat;
  flat.reserve(size_t(4 * n));
  struct held {
    functional_arrays<int64_t>::array a;
    int64_t row;
  };
  std::vector<held> pool;
  const auto emit = [&](int64_t op, int64_t arg, int64_t i, int64_t v) {
    flat.insert(flat.end(), {op, arg, i, v});
    return int64_t(flat.size() / 4 - 1);
  };
  pool.push_back({fa.empty(), emit(op_empty, -1, 0, 0)});
  while (int64_t(flat.size() / 4) < n) {
    const size_t at = chains || r() % 2 ? pool.size() - 1 : fans ? 0 : size_t(r() % pool.size());
    const held h = pool[at];
    const int64_t i = int64_t(r() % uint64_t(range)) * (sparse ? int64_t(4099) : 1);
    const int pick = int(r() % 100);
    try {
      if (pick < 40) {
        const int64_t v = int64_t(r() % 1000000);
        pool.push_back({fa.update(h.a, i, v), emit(op_update, h.row, i, v)});
      } else if (pick < 50) {
        pool.push_back({fa.remove(h.a, i), emit(op_remove, h.row, i, 0)});
      } else if (pick < 90) {
        emit(op_lookup, h.row, i, 0);
      } else if (pick < 95) {
        emit(op_size, h.row, 0, 0);
      } else {
        emit(op_next, h.row, i, 0);
      }
    } catch (const out_of_memory&) {  // room: release the older half (the first array stays, for fans)
      const size_t drop = std::max<size_t>(1, pool.size() / 2);
      for (size_t k = 1; k < drop + 1 && k < pool.size(); ++k) {
        fa.release(pool[k].a);
        emit(op_release, pool[k].row, 0, 0);
      }
      pool.erase(pool.begin() + 1, pool.begin() + std::ptrdiff_t(std::min(drop + 1, pool.size())));
      if (pool.size() == 1 && fa.free_cells() < 2) {
        pool[0] = {fa.empty(), emit(op_empty, -1, 0, 0)};  // a machine too small for the first array's growth
      }
    }
  }
  flat.resize(size_t(4 * n));
  npy::save(a.out, span<const int64_t>(flat), {n, 4});
  if (a.json)
    print(json{{"command", "esfa gen"}, {"out", a.out}, {"operations", n}, {"cells", cells}, {"mix", a.mix}}.dump() + "\n");
  else
    note(format("esfa gen: %lld operations (%s mix, for %lld cells) -> %s", (long long)n, a.mix.c_str(),
                (long long)cells, a.out.c_str()));
  return exit_ok;
}

CLI::App& esfa_app(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == "esfa") return *sub;
  CLI::App* esfa = app.add_subcommand("esfa", "Functional arrays (seed 004's ESF arrays): replay or make operation streams");
  esfa->require_subcommand(1, 1);
  return *esfa;
}

const subcommand_spec<run_args> run_spec{
    "run",
    "Replay an operation stream on a machine of functional arrays; time each operation, optionally verify",
    std::string(esfa_format) +
        " The run stops with exit code 1 (nothing written) when the machine is too small for the stream. "
        "--verify replays the stream on the executable specification too and exits 3 naming the first "
        "difference.",
    [](CLI::App& sub, run_args& a) {
      sub.add_option("--ops", a.ops, "The operation stream (.npy, int64, (n, 4))")->required()->type_name("OPS.npy");
      sub.add_option("--cells", a.cells, "The machine's cells")->type_name("N")->capture_default_str();
      sub.add_option("--out", a.out, "Write the results (.npy, int64, (n, 2))")->type_name("OUT.npy");
      sub.add_option("--device", a.device, "cpu (the CUDA machine is not built yet)")
          ->check(CLI::IsMember({"cpu", "auto", "cuda"}))
          ->capture_default_str();
      sub.add_flag("--verify", a.verify, "Compare every result with the executable specification's");
      sub.add_flag("--json", a.json, "Print one JSON object (operations, us_per_op mean / p50 / p99 / max, ...)");
    },
    run_esfa};

const subcommand_spec<gen_args> gen_spec{
    "gen",
    "Make a random operation stream (updates, removes, lookups, size, next) that fits a machine of --cells",
    std::string(esfa_format) +
        " Mixes: paper (40% updates, 10% removes, 40% lookups, 10% size / next, arguments the newest array or "
        "a random one), chains (always the newest), fans (the first array or the newest), sparse (paper with "
        "indices spread over 2^52). When an update would not fit, the older half of the arrays is released.",
    [](CLI::App& sub, gen_args& a) {
      sub.add_option("--out", a.out, "The stream to write (.npy)")->required()->type_name("OPS.npy");
      sub.add_option("--ops", a.ops, "Operations")->type_name("N")->capture_default_str();
      sub.add_option("--cells", a.cells, "The machine the stream must fit")->type_name("N")->capture_default_str();
      sub.add_option("--mix", a.mix, "paper, chains, fans or sparse")
          ->check(CLI::IsMember({"paper", "chains", "fans", "sparse"}))
          ->capture_default_str();
      sub.add_option("--seed", a.seed, "Seed (0 to 2^64 - 1)")->type_name("S")->capture_default_str();
      sub.add_flag("--json", a.json, "Print one JSON object");
    },
    run_esfa_gen};

}  // namespace

command add_esfa_run_command(CLI::App& app) { return add_command(esfa_app(app), run_spec); }
command add_esfa_gen_command(CLI::App& app) { return add_command(esfa_app(app), gen_spec); }

}  // namespace gsearch::cli
