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

}  // namespace gsearch::cli
