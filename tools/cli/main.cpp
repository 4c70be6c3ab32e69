// The gsearch command-line tool: subcommand wiring, and the one place where errors become a
// message and an exit code.

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <sstream>
#include <string>

#include "common.hpp"
#include "gsearch/core/error.hpp"
#include "gsearch/device.hpp"

namespace {

using namespace gsearch::cli;

constexpr const char* exit_codes_text = R"(Exit codes:
  0     success
  1     bad usage or input: a missing, unreadable, truncated or malformed .npy file, a dtype
        gsearch does not support (or big-endian data), inputs of different dtypes (keys and
        queries; find's --data and --values; the two inputs of merge, set and join; values
        that are not int64), unsorted keys or inputs, shapes that do not go together (and 2-D
        data for find, merge, sort, set, join), a find --value the data's dtype cannot hold,
        options that do not go together (search --json without --out, find --seed without
        --mode random, join --out-right with semi or anti, or without it for the others),
        an output file that is the same file as an input or as another output (checked
        before anything is read or written)
  2     device or I/O failure: --device cuda without a usable CUDA device, a CUDA error, out of
        memory, an output file or stdout that cannot be written
  3     search --verify found results that differ from the reference
  100+  the command line could not be parsed (CLI11's codes, e.g. 105 a value not allowed,
        106 a required option missing, 109 an unexpected argument))";

std::string version_text() {
  return std::string("gsearch ") + GSEARCH_VERSION + " (CUDA backend " +
         (gsearch::built_with_cuda() ? "built in" : "not built") + ")";
}

// CLI11 does not wrap help text: break each line of `text` into lines of at most `width`.
std::string wrap(const std::string& text, size_t width) {
  std::string out, line;
  std::istringstream lines(text);
  for (std::string para; std::getline(lines, para);) {
    std::istringstream words(para);
    line.clear();
    for (std::string word; words >> word;) {
      if (!line.empty() && line.size() + 1 + word.size() > width) {
        out += line + '\n';
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    out += line + '\n';
  }
  if (!out.empty()) out.pop_back();
  return out;
}

// Wraps the option descriptions of a subcommand and puts the exit codes under its own footer.
void finish_help(CLI::App* app) {
  for (CLI::Option* o : app->get_options()) o->description(wrap(o->get_description(), 66));
  const std::string own = app->get_footer();
  app->footer((own.empty() ? "" : wrap(own, 96) + "\n\n") + exit_codes_text);
}

void report(const char* what) { std::fprintf(stderr, "gsearch: error: %s\n", what); }

// Runs a parsed subcommand and turns what it throws into a message and an exit code.
int run(const command& c) {
  try {
    const exit_code code = c.run();
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0)
      throw failure(exit_device_or_io,
                    std::string("cannot write to standard output: ") + std::strerror(errno));
    return code;
  } catch (const failure& e) {
    report(e.what());
    return e.code();
  } catch (const gsearch::invalid_argument& e) {  // a precondition of the library
    report(e.what());
    return exit_bad_input;
  } catch (const gsearch::error& e) {  // cuda_error, out_of_memory
    report(e.what());
    return exit_device_or_io;
  } catch (const std::bad_alloc&) {
    report("out of host memory");
    return exit_device_or_io;
  } catch (const std::exception& e) {
    report(e.what());
    return exit_device_or_io;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("gsearch: batched search of sorted keys, search of unsorted data, and merge, "
               "sort, multiset set operations and joins of sorted arrays, on GPUs (CUDA) and "
               "CPUs, on .npy files.",
               "gsearch");
  app.set_version_flag("--version", version_text(), "Print the version and exit");
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "gsearch: error: " + std::string(e.what()) + "\nRun with --help for more information.\n";
  });
  app.require_subcommand(0, 1);
  app.footer(exit_codes_text);

  const command commands[] = {add_search_command(app), add_find_command(app),
                              add_merge_command(app),  add_sort_command(app),
                              add_set_command(app),    add_join_command(app),
                              add_gen_command(app),    add_conflicts_command(app),
                              add_bench_command(app, argc, argv)};
  for (const command& c : commands) finish_help(c.app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (const command& c : commands)
    if (c.app->parsed()) return run(c);
  std::cout << app.help();  // no subcommand
  return exit_ok;
}
