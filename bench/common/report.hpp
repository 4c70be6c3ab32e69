#pragma once
// What every benchmark program's main() shares (bench/README.md): the common options (--json,
// --quick, --repeat, --warmup, --seed) and their parsing (exit status 1 on a bad command line),
// the check for a CUDA device (exit status 2 without one: nothing measured), the head of the
// JSON report (schema, command, the source stamp, the device block, the versions), the targets a
// run decides, the report written atomically, and the run itself with its exit status (3 when a
// configuration failed its check or threw). Host code, also for merge_cpu_bench (any build).

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

#include "gsearch/gsearch.hpp"
#include "timing.hpp"

#ifndef GSEARCH_VERSION
#define GSEARCH_VERSION "unknown"
#endif

namespace gsearch::bench {

using json = nlohmann::ordered_json;

// ---- the command line -----------------------------------------------------------------------

/// The options every benchmark has; a benchmark's arguments derive from this, with its own
/// default repeat and warmup.
struct common_args {
  std::string json_path;
  bool quick = false;
  int repeat, warmup;
  uint64_t seed = 1;
  std::string command_line;  ///< argv joined by spaces (the report's "command")

  common_args(int repeat_, int warmup_) : repeat(repeat_), warmup(warmup_) {}
};

/// Adds --json, --quick (quick_help says what it runs), --repeat, --warmup and --seed
/// (seed_help: what it seeds) to app.
inline void add_common_options(CLI::App& app, common_args& a, const std::string& quick_help,
                               const std::string& seed_help) {
  app.add_option("--json", a.json_path, "Write the results as JSON to this file")->type_name("FILE");
  app.add_flag("--quick", a.quick, quick_help);
  app.add_option("--repeat", a.repeat, "Timed runs per configuration (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "Untimed runs first")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--seed", a.seed, seed_help)->capture_default_str();
}

/// Parses the command line into app's options (and a.command_line): nullopt to go on, else the
/// exit status: 0 after --help, 1 on a bad command line (CLI11 has said why).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv, common_args& a) {
  for (int i = 0; i < argc; ++i) a.command_line += (i ? " " : "") + std::string(argv[i]);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  return std::nullopt;
}

/// Exit status 1 unless the median is of at least `min` runs (or --quick).
inline std::optional<int> check_repeat(const char* name, const common_args& a, int min = 10) {
  if (a.quick || a.repeat >= min) return std::nullopt;
  std::fprintf(stderr, "%s: --repeat %d: the median of at least %d runs, please (or --quick)\n", name, a.repeat, min);
  return 1;
}

/// Exit status 2, and why, when there is no CUDA device: nothing is measured. `family` names
/// the device script's family (scripts/device/bench.sh FAMILY).
inline std::optional<int> require_gpu(const char* name, const char* family) {
  if (cuda_device_count() > 0) return std::nullopt;
  std::fprintf(stderr,
               "%s: %s: nothing measured. It times GPU kernels; run it on the GPU machine "
               "(scripts/device/bench.sh %s).\n",
               name, built_with_cuda() ? "no CUDA device found" : "gsearch was built without CUDA", family);
  return 2;
}

// ---- the report -----------------------------------------------------------------------------

/// The report's "device" object.
inline json device_json(const cuda_device_info& dev) {
  return {{"name", dev.name}, {"compute_capability", dev.compute_capability}, {"sms", dev.sms},
          {"l2_bytes", dev.l2_bytes}, {"global_bytes", dev.global_bytes},
          {"driver_version", dev.driver_version}, {"runtime_version", dev.runtime_version}};
}

/// The report's "source" object: the git commit the binary was built from, and whether the tree
/// had uncommitted changes then (gsearch::build_info()).
inline json source_json() {
  const auto b = gsearch::build_info();
  return {{"commit", b.commit}, {"dirty", b.dirty}};
}

/// The head of a GPU benchmark's report: schema, synthetic (false: a measurement), command,
/// source, device and versions ({"gsearch": ...} and `peers`' entries, cccl.hpp's
/// cccl_versions()).
inline json gpu_report(const char* schema, const common_args& a, const cuda_device_info& dev, const json& peers) {
  json r = {{"schema", schema}, {"synthetic", false}, {"command", a.command_line}, {"source", source_json()},
            {"device", device_json(dev)}, {"versions", {{"gsearch", GSEARCH_VERSION}}}};
  for (const auto& [k, v] : peers.items()) r["versions"][k] = v;
  return r;
}

/// One line on stdout: "name: <device>; gsearch V, thrust V (toolkit CCCL), cub V" (the
/// versions the report has; a CUB that was not built says so).
inline void print_banner(const char* name, const json& report) {
  std::string line = std::string(name) + ": " + report["device"].value("name", std::string("?")) + ";";
  const char* sep = " ";
  for (const auto& [k, v] : report["versions"].items()) {
    line += sep + k + " " + (v.is_string() ? v.get<std::string>() : std::string("(not built)"));
    if (k == "thrust") line += " (toolkit CCCL)";
    sep = ", ";
  }
  std::printf("%s\n", line.c_str());
}

/// Fills a row's timing fields (which row() created, so that they keep their place): ms, ms_min,
/// ms_max, runs, bytes, gbps, pct_roofline (against roof_gbps; null without one), verified (null:
/// nothing to check) and flush_l2. Returns the row's GB/s.
inline double set_timing(json& r, const timing& t, double bytes, double roof_gbps, std::optional<bool> ok,
                         bool flush_l2) {
  r["ms"] = t.median_ms;
  r["ms_min"] = t.min_ms;
  r["ms_max"] = t.max_ms;
  r["runs"] = t.runs_ms.size();
  r["bytes"] = bytes;
  const double gbps = t.median_ms > 0 ? bytes / (t.median_ms * 1e6) : 0.0;
  r["gbps"] = gbps;
  r["pct_roofline"] = roof_gbps > 0 ? json(100.0 * gbps / roof_gbps) : json(nullptr);
  r["verified"] = ok ? json(*ok) : json(nullptr);
  r["flush_l2"] = flush_l2;
  return gbps;
}

/// Appends a target the run decides to `targets`: {name, value, target, unit, higher (better),
/// met}.
/// The verified rows of report["results"] whose fields equal every field of `want` (what a
/// driver's targets read).
inline std::vector<const json*> verified_rows(const json& report, const json& want) {
  std::vector<const json*> out;
  for (const json& r : report["results"]) {
    if (r["verified"] != true) continue;
    bool ok = true;
    for (const auto& [k, v] : want.items()) ok = ok && r[k] == v;
    if (ok) out.push_back(&r);
  }
  return out;
}

inline void add_target(json& targets, const std::string& name, double value, double target, const char* unit,
                       bool higher) {
  const bool met = higher ? value >= target : value <= target;
  targets.push_back({{"name", name}, {"value", value}, {"target", target}, {"unit", unit}, {"higher", higher},
                     {"met", met}});
}

/// Prints the targets under `title`, one a line: value, target, met or MISSED.
inline void print_targets(const json& targets, const char* title) {
  if (targets.empty()) return;
  std::printf("\n%s\n", title);
  for (const json& t : targets)
    std::printf("  %-72s %8.3f %-2s (target %s %g) %s\n", t["name"].get<std::string>().c_str(),
                t["value"].get<double>(), t["unit"].get<std::string>().c_str(), t["higher"].get<bool>() ? ">=" : "<=",
                t["target"].get<double>(), t["met"].get<bool>() ? "met" : "MISSED");
}

/// Writes the report to path + ".tmp", then renames it to path: a reader never sees half a file.
/// The report gets its "source" (source_json()) here if it has none, so every result file names
/// its code.
inline void write_json(const std::string& path, const json& report) {
  const std::string tmp = path + ".tmp";
  {
    json stamped = report;
    if (!stamped.contains("source")) stamped["source"] = source_json();
    std::ofstream f(tmp);
    f << stamped.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

/// The benchmark itself, after main() has parsed and printed its header: Runner(a) with the
/// report, its run(), and the report written to a.json_path. Exit status 0 ok, 1 the JSON could
/// not be written, 3 a configuration failed its check or threw (counted in the runner's
/// `problems`; the JSON is still written).
template <class Runner, class Args>
int run_and_report(const char* name, const Args& a, json report) {
  int problems = 0;
  try {
    Runner b(a);
    b.report = std::move(report);
    try {
      b.run();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name, e.what());
      b.report["fatal"] = e.what();
      ++b.problems;
    }
    problems = b.problems;
    report = std::move(b.report);
  } catch (const std::exception& e) {  // the bench's own device memory
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    report["fatal"] = e.what();
    ++problems;
  }
  if (problems > 0)
    std::fprintf(stderr, "%s: %d configuration(s) failed their check or threw (see \"failures\", \"errors\")\n", name,
                 problems);
  const int rc = problems > 0 ? 3 : 0;
  if (!a.json_path.empty()) {
    try {
      write_json(a.json_path, report);
      std::fprintf(stderr, "%s: %zu results -> %s\n", name, report["results"].size(), a.json_path.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name, e.what());
      return 1;
    }
  }
  return rc;
}

}  // namespace gsearch::bench
