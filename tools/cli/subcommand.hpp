#pragma once
// How the subcommands declare themselves (CLI11, so not in common.hpp): one function makes a
// subcommand from its spec (name, texts, options, run function), and the options several of
// them take are declared once here.

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "common.hpp"

namespace gsearch::cli {

/// A subcommand: its name, its one-line description, its footer (main.cpp wraps it and adds the
/// exit codes), what declares its options on its arguments Args, and what runs it on them.
template <class Args>
struct subcommand_spec {
  const char* name;
  std::string description, footer;
  std::function<void(CLI::App&, Args&)> options;
  exit_code (*run)(const Args&);
};

/// Adds `spec`'s subcommand to `app`: its options fill a fresh Args, and the command runs
/// spec.run(args) once the command line is parsed. Args' `json` flag, where it has one, is the
/// command's --json.
template <class Args>
command add_command(CLI::App& app, const subcommand_spec<Args>& spec) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(spec.name, spec.description);
  sub->footer(spec.footer);
  spec.options(*sub, *args);
  const bool* json = nullptr;
  if constexpr (requires { args->json; }) json = &args->json;
  return {sub, [args, run = spec.run] { return run(*args); }, json};
}

/// --device auto|cpu|cuda (resolve_device's argument), its default shown.
inline CLI::Option* add_device_option(CLI::App& sub, std::string& device) {
  return sub.add_option("--device", device, "auto: cuda if a CUDA device is available, else cpu")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
}

/// --distributed and --per-rank (distributed.hpp), the same on search, find, sort, join and asof.
struct distributed_flags {
  bool on = false, per_rank = false;
};
inline void add_distributed_options(CLI::App& sub, distributed_flags& d) {
  CLI::Option* on = sub.add_flag("--distributed", d.on,
               "Run over the ranks of an MPI job (mpirun -np N gsearch ... --distributed): each "
               "rank reads only its contiguous slice of each input, the ranks run the "
               "distributed operation (MPI on the CPU, NCCL with --device cuda: rank r on GPU "
               "r % GPUs of its node), and rank 0 gathers the results in rank order into the "
               "output, the same file as without --distributed. An error on any rank stops "
               "them all, is printed once, and leaves no output. Needs a gsearch built with MPI. "
               "Open MPI refuses more ranks than cores (\"not enough slots\": mpirun "
               "--oversubscribe -np N) and runs as root only with --allow-run-as-root");
  sub.add_flag("--per-rank", d.per_rank,
               "With --distributed: each rank writes its part of each output to its own file, "
               "OUT.<rank>.npy for --out OUT.npy (rank r's part; their concatenation in rank "
               "order is the gathered file), for outputs too large to gather")
      ->needs(on);
}

}  // namespace gsearch::cli
