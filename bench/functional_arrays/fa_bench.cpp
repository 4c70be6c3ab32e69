// fa_bench: functional arrays (issue 23) on the CPU, the seed's Table 2 and 3 re-run: for each
// cell count N the same kind of stream (gsearch/functional_arrays_stream.hpp; the paper's mix of
// 50,000 updates, lookups and removes by default), replayed by
//   machine     gsearch::functional_arrays<int64_t> on the CPU (every operation a pass over
//               the N cells: the data-parallel machine, simulated),
//   spec        the executable specification (a std::map per version, copied on update),
//   treap       a path-copying balanced tree (persistent_map.hpp): the usual persistent map,
//   unbalanced  the same without rotations (the seed's tree-based functional arrays),
//   gpu         gsearch::functional_arrays<int64_t> on gsearch::cuda, the persistent kernel, the
//               stream replayed as a pipeline (fa_stream::replay_pipelined: queries posted, their
//               answers taken at the end): the time per operation is the stream's over its
//               operations, and p50 / p99 / max are over the runs (no operation has a time of
//               its own in a pipeline),
//   gpu-sync    the same machine, each operation waited for (sync() after it): per-operation
//               latency, the CPU-GPU dialogue included,
//   gpu-launch  the GPU machine's launch form (a kernel per operation, each waited for),
// each run timing every operation (steady_clock); per (N, mix, impl): T, the whole stream's
// time (median of --repeat runs, with their standard deviation and max - min: the seed's stdv
// and d), and the microseconds per operation of the median run (mean, p50, p99, max). Every
// implementation's results are compared with the spec's (verified).
//
// The machines' rows also say how many sweeps the median run made (when the free cells ran out)
// and their time, which is part of the run's.
//
// With --batch B, each machine impl also times a batch lookup of B indices (uniform over the
// stream's index range) on the stream's last array, as lookups per second.
//
//   fa_bench [--json FILE] [--quick] [--cells 16,32,...,8192] [--ops 50000]
//            [--mixes paper,ascending] [--impls machine,spec,treap,unbalanced[,gpu,gpu-launch]]
//            [--version-slots S] [--blocks G] [--batch B] [--repeat 5] [--warmup 1] [--seed 1]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../common/bench_host.hpp"
#include "../common/report.hpp"
#include "gsearch/device.hpp"
#include "gsearch/functional_arrays_stream.hpp"
#include "persistent_map.hpp"

namespace {

using namespace gsearch;
using bench::json;
namespace fs = gsearch::fa_stream;

struct args : bench::common_args {
  args() : common_args(5, 1) {}
  std::vector<int64_t> cells{16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
  int64_t ops = 50000;
  std::vector<std::string> mixes{"paper", "ascending"};
  std::vector<std::string> impls{"machine", "spec", "treap", "unbalanced"};
  int64_t version_slots = 0;  // the machines' (0: their default)
  int blocks = 0;             // gpu: the persistent kernel's blocks (0: by the cells)
  int64_t batch = 0;          // lookups of the batch timing (0: none)
};

bool on_gpu(const std::string& impl) { return impl == "gpu" || impl == "gpu-sync" || impl == "gpu-launch"; }

struct replayed {
  std::vector<double> ns;  // per operation
  std::vector<int64_t> found, value;
  int64_t collections = 0;  // the machines' sweeps, and their time in all (within ns)
  double collection_ms = 0;
};

template <class M>
replayed replay_timed(M& m, const std::vector<fs::row>& rows) {
  replayed out;
  out.ns.resize(rows.size());
  auto t0 = std::chrono::steady_clock::now();
  fs::replay(m, rows, out.found, out.value, [&](size_t r) {
    const auto t1 = std::chrono::steady_clock::now();
    out.ns[r] = std::chrono::duration<double, std::nano>(t1 - t0).count();
    t0 = t1;
  });
  return out;
}

functional_arrays_options machine_options(const args& a, const std::string& impl) {
  functional_arrays_options o;
  o.version_slots = a.version_slots;
  o.persistent = impl != "gpu-launch";
  o.blocks = impl == "gpu-launch" ? 0 : a.blocks;
  return o;
}

functional_arrays<int64_t> make_machine(const args& a, const std::string& impl, int64_t cells) {
  return impl == "machine" ? functional_arrays<int64_t>(cpu, cells, machine_options(a, impl))
                           : functional_arrays<int64_t>(cuda, cells, machine_options(a, impl));
}

// Lookups per second of a batch of a.batch indices on one array of a fresh machine: n = cells / 4
// indices defined (the even ones of [0, 2n)), the batch uniform over [0, 2n) (half found); the
// median of 5 after one warm-up. On the GPU the indices and results are in device memory (as
// torch or cupy pass them), allocated before the machine starts (cudaFree would wait for its
// kernel).
double batch_rate(const args& a, const std::string& impl, int64_t cells) {
  const int64_t n = std::max<int64_t>(1, cells / 4);
  std::vector<int64_t> defined(static_cast<size_t>(n)), idx(static_cast<size_t>(a.batch)), values(idx.size());
  for (int64_t k = 0; k < n; ++k) defined[size_t(k)] = 2 * k;
  std::vector<uint8_t> found(size_t(a.batch));
  uint64_t x = a.seed;
  for (int64_t& i : idx) i = int64_t((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 11) % (2 * n);
  const bool gpu = on_gpu(impl);
  device_vector<int64_t> d_idx(gpu ? a.batch : 0), d_values(gpu ? a.batch : 0);
  device_vector<uint8_t> d_found(gpu ? a.batch : 0);
  if (gpu) copy_to_device(d_idx.data(), idx.data(), size_t(a.batch) * sizeof(int64_t));
  std::vector<double> s;
  {
    functional_arrays<int64_t> fa = make_machine(a, impl, cells);
    const auto array =
        fa.update(fa.empty(), span<const int64_t>(defined.data(), n), span<const int64_t>(defined.data(), n));
    for (int k = 0; k < 6; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      if (gpu)
        fa.lookup(array, d_idx, d_values, d_found);
      else
        fa.lookup(array, span<const int64_t>(idx.data(), a.batch), span<int64_t>(values.data(), a.batch),
                  span<uint8_t>(found.data(), a.batch));
      if (k > 0) s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  if (gpu) {
    d_values.copy_to(span<int64_t>(values.data(), a.batch));
    d_found.copy_to(span<uint8_t>(found.data(), a.batch));
  }
  for (int64_t k = 0; k < a.batch; ++k)  // verified: the even indices are found with themselves
    if (found[size_t(k)] != (idx[size_t(k)] % 2 == 0) || (found[size_t(k)] && values[size_t(k)] != idx[size_t(k)]))
      return -1;
  std::sort(s.begin(), s.end());
  return double(a.batch) / s[s.size() / 2];
}

replayed run_impl(const args& a, const std::string& impl, int64_t cells, const std::vector<fs::row>& rows, int* blocks) {
  if (impl == "machine" || on_gpu(impl)) {
    functional_arrays<int64_t> fa = make_machine(a, impl, cells);
    *blocks = fa.persistent_blocks();
    replayed out;
    if (impl == "gpu") {  // one time for the whole stream, spread evenly over its operations
      const auto t0 = std::chrono::steady_clock::now();
      fs::replay_pipelined(fa, rows, out.found, out.value);
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      out.ns.assign(rows.size(), ns / double(rows.size()));
    } else if (impl == "gpu-sync" || impl == "gpu-launch") {  // each operation's time until it is done
      out.ns.resize(rows.size());
      auto t0 = std::chrono::steady_clock::now();
      fs::replay(fa, rows, out.found, out.value, [&](size_t r) {
        fa.sync();
        const auto t1 = std::chrono::steady_clock::now();
        out.ns[r] = std::chrono::duration<double, std::nano>(t1 - t0).count();
        t0 = t1;
      });
    } else {
      out = replay_timed(fa, rows);
    }
    out.collections = fa.collections();
    out.collection_ms = fa.collection_seconds() * 1e3;
    return out;
  }
  if (impl == "spec") {
    functional_arrays_spec<int64_t> s;
    return replay_timed(s, rows);
  }
  if (impl == "treap") {
    bench::fa::persistent_map<true> m;
    return replay_timed(m, rows);
  }
  bench::fa::persistent_map<false> m;
  return replay_timed(m, rows);
}

struct runner {
  args a;
  json report;
  int problems = 0;
  explicit runner(const args& x) : a(x) {}

  void run() {
    std::printf("%-10s %6s %-10s %12s %9s %9s %9s %9s %9s %9s %s\n", "mix", "N", "impl", "T ms", "stdv", "d",
                "us mean", "p50", "p99", "max", "");
    for (const std::string& mix_name : a.mixes) {
      const auto* at = std::find(std::begin(fs::mix_names), std::end(fs::mix_names), mix_name);
      const auto kind = fs::mix(at - std::begin(fs::mix_names));
      for (const int64_t cells : a.cells) {
        const std::vector<fs::row> rows = fs::parse(fs::generate(a.ops, cells, kind, a.seed + uint64_t(cells)));
        replayed want;
        {
          functional_arrays_spec<int64_t> s;
          want = replay_timed(s, rows);
        }
        for (const std::string& impl : a.impls) {
          std::vector<double> totals;
          replayed median_run;
          bool ok = true;
          std::vector<replayed> runs;
          int blocks = 0;
          for (int k = 0; k < a.warmup + a.repeat; ++k) {
            replayed r = run_impl(a, impl, cells, rows, &blocks);
            ok = ok && r.found == want.found && r.value == want.value;
            if (k >= a.warmup) runs.push_back(std::move(r));
          }
          for (const replayed& r : runs) {
            double t = 0;
            for (const double x : r.ns) t += x;
            totals.push_back(t / 1e6);
          }
          std::vector<size_t> order(runs.size());
          for (size_t k = 0; k < order.size(); ++k) order[k] = k;
          std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return totals[x] < totals[y]; });
          const size_t mid = order[order.size() / 2];
          std::vector<double> per = runs[mid].ns;
          if (impl == "gpu") {  // a pipeline: the operations' times are the runs' means
            per.clear();
            for (const double t : totals) per.push_back(t * 1e6 / double(rows.size()));
          }
          std::sort(per.begin(), per.end());
          const auto pct = [&](double p) { return per[size_t(p * double(per.size() - 1))] / 1000; };
          double mean = 0, var = 0;
          for (const double t : totals) mean += t / double(totals.size());
          for (const double t : totals) var += (t - mean) * (t - mean) / double(totals.size());
          const double range = *std::max_element(totals.begin(), totals.end()) - *std::min_element(totals.begin(), totals.end());
          json row = {{"mix", mix_name},
                      {"cells", cells},
                      {"impl", impl},
                      {"ops", int64_t(rows.size())},
                      {"ms", totals[mid]},
                      {"ms_stdev", std::sqrt(var)},
                      {"ms_range", range},
                      {"runs", totals.size()},
                      {"us_per_op", {{"mean", totals[mid] * 1000 / double(rows.size())}, {"p50", pct(0.5)},
                                     {"p99", pct(0.99)}, {"max", per.back() / 1000}}},
                      {"verified", ok}};
          if (impl == "machine" || on_gpu(impl))  // the median run's sweeps, within its time
            row["collections"] = {{"count", runs[mid].collections}, {"ms", runs[mid].collection_ms}};
          if (impl == "gpu") row["us_per_op"]["over"] = "runs";
          if (on_gpu(impl)) row["persistent_blocks"] = blocks;
          if (a.batch > 0 && (impl == "machine" || on_gpu(impl))) {
            const double rate = batch_rate(a, impl, cells);
            if (rate < 0) {
              ok = false;
              row["verified"] = false;
            }
            row["batch_lookups_per_s"] = rate;
          }
          if (!ok) {
            ++problems;
            report["failures"].push_back({{"mix", mix_name}, {"cells", cells}, {"impl", impl}});
          }
          std::printf("%-10s %6lld %-10s %12.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.1f %s\n", mix_name.c_str(),
                      (long long)cells, impl.c_str(), totals[mid], std::sqrt(var), range,
                      totals[mid] * 1000 / double(rows.size()), pct(0.5), pct(0.99), per.back() / 1000,
                      ok ? "ok" : "WRONG");
          if (row.contains("collections") && runs[mid].collections > 0)
            std::printf("%-10s %6lld %-10s %lld sweeps, %.3f ms of the median run\n", mix_name.c_str(), (long long)cells,
                        impl.c_str(), (long long)runs[mid].collections, runs[mid].collection_ms);
          if (row.contains("batch_lookups_per_s"))
            std::printf("%-10s %6lld %-10s batch of %lld lookups: %.3g /s\n", mix_name.c_str(), (long long)cells,
                        impl.c_str(), (long long)a.batch, row["batch_lookups_per_s"].get<double>());
          report["results"].push_back(std::move(row));
        }
      }
    }
    // Table 3's ratio: each machine's time over the others', per N and mix.
    json ratios = json::array();
    for (const json& m : report["results"]) {
      const std::string impl = m["impl"];
      if (impl != "machine" && impl != "gpu") continue;
      json r = {{"mix", m["mix"]}, {"cells", m["cells"]}};
      for (const json& o : report["results"])
        if (o["mix"] == m["mix"] && o["cells"] == m["cells"] && o["impl"] != impl)
          r[impl + "_over_" + o["impl"].get<std::string>()] = m["ms"].get<double>() / o["ms"].get<double>();
      ratios.push_back(r);
    }
    report["ratios"] = ratios;
    // The targets, where the run has their rows (the gpu impl, the paper mix).
    json targets = json::array();
    for (const json& g : report["results"]) {
      if ((g["impl"] != "gpu" && g["impl"] != "gpu-sync") || g["mix"] != "paper") continue;
      const int64_t n = g["cells"];
      const json& u = g["us_per_op"];
      const std::string at = " at " + std::to_string(n) + " cells";
      const std::string impl = g["impl"];
      if (n == 8192) bench::add_target(targets, impl + ": us per operation (mean)" + at, u["mean"], 3, "us", false);
      if (n == (int64_t(1) << 20))
        bench::add_target(targets, impl + ": us per operation (p50)" + at, u["p50"], 5, "us", false);
      bench::add_target(targets, impl + ": p99 over p50" + at, u["p99"].get<double>() / u["p50"].get<double>(), 2,
                        "x", false);
      if (impl != "gpu") continue;
      if (g.contains("batch_lookups_per_s"))
        bench::add_target(targets, "gpu: batch lookups per second" + at, g["batch_lookups_per_s"], 1e9, "/s", true);
      for (const json& m : report["results"])
        if (m["impl"] == "machine" && m["mix"] == "paper" && m["cells"] == n && n == (int64_t(1) << 20))
          bench::add_target(targets, "gpu: times the CPU machine" + at, m["ms"].get<double>() / g["ms"].get<double>(),
                            10, "x", true);
    }
    report["targets"] = targets;
    bench::print_targets(targets, "Targets (issue 23)");
  }
};

}  // namespace

int main(int argc, char** argv) {
  args a;
  CLI::App app{"fa_bench: functional arrays on the CPU (issue 23): the seed's Tables 2 and 3 with the machine, the "
               "executable specification and two path-copying persistent maps"};
  bench::add_common_options(app, a, "A smoke test: N 16 and 256, 2,000 operations, one run",
                            "Seed of the streams (each N adds its own)");
  app.add_option("--cells", a.cells, "Cell counts N")->capture_default_str();
  app.add_option("--ops", a.ops, "Operations per stream")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--mixes", a.mixes, "Stream kinds (gsearch esfa gen's --mix)")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(fs::mix_names), std::end(fs::mix_names))))
      ->capture_default_str();
  app.add_option("--impls", a.impls, "Implementations")
      ->check(CLI::IsMember({"machine", "spec", "treap", "unbalanced", "gpu", "gpu-sync", "gpu-launch"}))
      ->capture_default_str();
  app.add_option("--version-slots", a.version_slots, "The machines' version slots (0: their default)");
  app.add_option("--blocks", a.blocks, "gpu: the persistent kernel's blocks (0: by the cells)");
  app.add_option("--batch", a.batch, "Time a batch lookup of this many indices (0: none)");
  if (const auto rc = bench::parse(app, argc, argv, a)) return *rc;
  if (a.quick) {
    a.cells = {16, 256};
    a.ops = 2000;
    a.repeat = 1;
    a.warmup = 0;
  }
  json report = {{"schema", "gsearch-bench-fa-cpu/1"}, {"command", a.command_line}, {"source", bench::source_json()}};
  report["host"] = {{"cpu", bench::host::cpu_name()}, {"threads", bench::host::host_threads()},
                    {"loadavg_before", bench::host::loadavg()}};
  report["versions"] = {{"gsearch", GSEARCH_VERSION}};
  if (std::any_of(a.impls.begin(), a.impls.end(), on_gpu)) {
    if (const auto rc = bench::require_gpu("fa_bench", "functional_arrays")) return *rc;
    report["schema"] = "gsearch-bench-fa/1";
    report["device"] = bench::device_json(cuda_device_properties());
  }
  report["config"] = {{"cells", a.cells},   {"ops", a.ops},         {"mixes", a.mixes},
                      {"impls", a.impls},   {"repeat", a.repeat},   {"warmup", a.warmup},
                      {"seed", a.seed},     {"quick", a.quick},     {"version_slots", a.version_slots},
                      {"blocks", a.blocks}, {"batch", a.batch}};
  report["results"] = json::array();
  report["failures"] = json::array();
  return bench::run_and_report<runner>("fa_bench", a, std::move(report));
}
