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

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "common.hpp"
#include "gsearch/version.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "gsearch/core/error.hpp"
#include "gsearch/device.hpp"

namespace {

using namespace gsearch::cli;

constexpr const char* exit_codes_text = R"EXIT(Exit codes:
  0     success
  1     bad usage or input: no command; a number out of its range (--keys must be at least 1,
        a size beyond what this machine's memory holds, --seed from 0 to 2^64 - 1); a missing,
        unreadable, truncated or malformed .npy file, a dtype gsearch does not support (or
        big-endian data), inputs of different dtypes (keys and queries; find's --data and
        --values; the two inputs of merge, set, join and asof; values that are not int64, asof
        group values that are not integers), unsorted keys or inputs (or keys holding NaN for
        asof), shapes that do not go together (and 2-D data for find, merge, sort, set, join,
        asof), a find --value or asof --tolerance the keys' dtype cannot hold (or a negative
        tolerance), options that do not go together (search --json without --out, find --seed
        without --mode random, join --out-right with semi or anti, or without it for the
        others, asof --left-by without --right-by; --distributed on a command other than
        search, find, sort, join and asof, or with an option it does not take, such as sort
        --argsort); an output that is the same file as an input or as another output, an
        empty path, a directory (--out ., --out dir/), a FIFO, a device or a socket, or a
        read-only file. Outputs are checked before anything is read or computed. client: a
        request the server refused (queries not of the keys' dtype, more than its
        --max-queries); serve: a socket path in use
  2     device or I/O failure: --device cuda without a usable CUDA device, a CUDA error, out of
        memory; --distributed in a gsearch built without MPI (with --device cuda: NCCL); an
        output whose directory is missing or not writable (checked before any work), or that
        cannot be written (a full disk); a stdout that cannot be written (full, closed); client:
        a server that cannot be reached, closes the connection, is shut down, failed or busy
        (status 6: try again later), or does not answer within --timeout (one deadline for the
        whole request); serve: its server failed (a CUDA error): a supervisor should restart it
  3     search --verify found results that differ from the reference
  100+  the command line could not be parsed (CLI11's codes, e.g. 105 a value not allowed,
        106 a required option missing, 109 an unexpected argument or an unknown command)
  128+N killed by signal N (SIGINT 130, SIGTERM 143): the output being written is removed
With --json (except bench's, a file), an error also prints {"error": "...", "exit_code": N}
on stdout when nothing was printed there yet. A command running 2 s or more ends with its
time on stderr ("gsearch sort: 26.4 s in all (reading ..., sorting ..., writing ...)"), and
on a terminal shows its progress there.)EXIT";

std::string version_text() {
  const gsearch::build_info_t b = gsearch::build_info();
  return std::string("gsearch ") + GSEARCH_VERSION + " (CUDA backend " + (b.cuda ? "built in" : "not built") +
         "; source " + b.commit + (b.dirty ? ", dirty" : "") + ")";
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

// The one line every subcommand's help ends with: the table itself is in gsearch --help and
// gsearch help exit-codes only.
constexpr const char* exit_codes_line =
    "Exit codes: 0 ok, 1 bad input, 2 device or I/O, 3 --verify mismatch (gsearch help exit-codes)";

// Wraps the option descriptions of a subcommand and puts the exit codes' line under its own footer.
void finish_help(CLI::App* app) {
  for (CLI::Option* o : app->get_options()) o->description(wrap(o->get_description(), 66));
  const std::string own = app->get_footer();
  app->footer((own.empty() ? "" : wrap(own, 96) + "\n\n") + exit_codes_line);
}

void report(const char* what) { std::fprintf(stderr, "gsearch: error: %s\n", what); }

// With --json, an error is also one JSON object on stdout (if nothing was printed there yet),
// so that a consumer of stdout always gets JSON: {"error": "...", "exit_code": 1}.
void report_json(const std::string& what, int code) {
  try {
    print(nlohmann::ordered_json({{"error", what}, {"exit_code", code}}).dump() + "\n");
    flush_stdout();
  } catch (const std::exception&) {  // stdout itself is what failed: stderr has the message
  }
}

// Runs a parsed subcommand and turns what it throws into a message and an exit code.
int run(const command& c, const std::string& name) {
  const bool json = c.json && *c.json;
  auto fail = [&](const char* what, int code) {
    progress::finish(false);
    report(what);
    if (json && !stdout_used()) report_json(what, code);
    return code;
  };
  try {
    progress::start(name);
    const exit_code code = c.run();
    flush_stdout();
    progress::finish(true);
    return code;
  } catch (const failure& e) {
    return fail(e.what(), e.code());
  } catch (const gsearch::invalid_argument& e) {  // a precondition of the library
    return fail(e.what(), exit_bad_input);
  } catch (const gsearch::error& e) {  // cuda_error, out_of_memory
    return fail(e.what(), exit_device_or_io);
  } catch (const std::bad_alloc&) {
    return fail("out of host memory", exit_device_or_io);
  } catch (const std::exception& e) {
    return fail(e.what(), exit_device_or_io);
  }
}

// The edit distance (Levenshtein, with a swap of two neighbours as one edit: "srot" is one
// from "sort"), for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// `word` where a subcommand of `app` is expected but none is named so: an error naming it and,
// when one is close (at most 2 edits, fewer than half its letters), the nearest.
std::optional<std::string> unknown_subcommand(const CLI::App& app, const std::string& word) {
  if (word.empty() || word[0] == '-') return std::nullopt;
  std::string best, names;
  size_t best_d = std::string::npos;
  for (const CLI::App* sub : app.get_subcommands({})) {
    const std::string& n = sub->get_name();
    if (n == word) return std::nullopt;
    for (const std::string& alias : sub->get_aliases())
      if (alias == word) return std::nullopt;
    names += (names.empty() ? "" : ", ") + n;
    const size_t d = edit_distance(word, n);
    if (d < best_d) best_d = d, best = n;
  }
  std::string what = "unknown command '" + word + "'";
  if (best_d <= 2 && best_d * 2 < std::max(word.size(), best.size()))
    what += "; did you mean '" + best + "'?";
  return what + " (the commands: " + names + ")";
}

// Options that name files (their type name ends in ".npy", or is FILE) given an empty path:
// never "not given" (stdout, the default), always an error.
void refuse_empty_paths(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    const std::string t = o->get_type_name();
    const bool path = t == "FILE" || (t.size() > 4 && t.compare(t.size() - 4, 4, ".npy") == 0);
    if (!path || o->count() == 0) continue;
    for (const std::string& r : o->results())
      if (r.empty())
        throw failure(exit_bad_input, o->get_name() + " '' is an empty path: give a file name");
  }
}

// --distributed given to a command that does not run distributed (merge, set, select, ...): an
// error naming the commands that do (those that declare the flag), rather than CLI11's
// "not expected". nullopt when --distributed is not given, or the command takes it.
std::optional<std::string> misplaced_distributed(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || std::find(argv + 2, argv + argc, std::string("--distributed")) == argv + argc)
    return std::nullopt;
  std::vector<std::string> names;
  const CLI::App* command = nullptr;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(argv[1])) command = sub;
    // A hidden --distributed would be a command's own refusal of it: not among the takers.
    const CLI::Option* d = sub->get_option_no_throw("--distributed");
    if (d && !d->get_group().empty()) names.push_back(sub->get_name());
  }
  std::string takers, name = argv[1];
  for (size_t i = 0; i < names.size(); ++i)
    takers += (i == 0 ? "" : i + 1 < names.size() ? ", " : " and ") + names[i];
  // A command with commands of its own (bench search, functional-arrays run): the one named.
  if (command && !command->get_subcommands({}).empty() && argc > 2) {
    const CLI::App* leaf = nullptr;
    for (const CLI::App* sub : command->get_subcommands({}))
      if (sub->check_name(argv[2])) leaf = sub;
    if (leaf) name += " " + std::string(argv[2]);
    command = leaf;
  }
  if (!command || command->get_option_no_throw("--distributed")) return std::nullopt;
  return "gsearch " + name + " does not run --distributed; the commands that do are " + takers +
         " (gsearch <command> --help says which of their options apply)";
}

// gsearch help: no topic, the usage; "exit-codes", the table; a command (and a subcommand of
// it), that command's help. An unknown topic is exit 1, naming the topics.
int print_help(const CLI::App& app, const std::vector<std::string>& topic) {
  std::string text;
  if (topic.empty()) {
    text = app.help();
  } else if (topic.size() == 1 && topic[0] == "exit-codes") {
    text = std::string(exit_codes_text) + "\n";
  } else {
    const CLI::App* level = &app;
    std::string prev;  // the names above the command, as CLI11's own --help shows them
    for (const std::string& word : topic) {
      const CLI::App* next = nullptr;
      for (const CLI::App* sub : level->get_subcommands({}))
        if (sub->check_name(word)) next = sub;
      if (!next) {
        report(("gsearch help: unknown topic '" + word +
                "' (exit-codes, or a command: gsearch --help lists them)")
                   .c_str());
        return exit_bad_input;
      }
      prev += (prev.empty() ? "" : " ") + level->get_name();
      level = next;
    }
    text = level->help(prev);
  }
  try {
    print(text);
    flush_stdout();
  } catch (const failure& f) {
    report(f.what());
    return f.code();
  }
  return exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  protect_standard_streams();
  install_signal_cleanup();
  CLI::App app("gsearch: batched search of sorted keys, search of unsorted data, merge, "
               "sort, multiset set operations, joins and as-of joins of sorted arrays, and selection (order "
               "statistics, top-k, quantiles, partition), on GPUs (CUDA) and CPUs, on .npy files.",
               "gsearch");
  app.set_version_flag("--version", version_text(), "Print the version and exit");
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "gsearch: error: " + std::string(e.what()) + "\nRun with --help for more information.\n";
  });
  app.require_subcommand(0, 1);

  const command commands[] = {add_search_command(app), add_find_command(app),
                              add_merge_command(app),  add_sort_command(app),
                              add_set_command(app),    add_join_command(app),
                              add_asof_command(app),
                              add_select_command(app), add_topk_command(app),
                              add_quantile_command(app), add_partition_command(app),
                              add_gen_command(app),    add_conflicts_command(app),
                              add_serve_command(app),  add_client_command(app),
                              add_esfa_run_command(app), add_esfa_gen_command(app),
                              add_bench_command(app, argc, argv)};
  for (const command& c : commands) finish_help(c.app);
  finish_help(app.get_subcommand("functional-arrays"));
  finish_help(app.get_subcommand("bench"));

  // gsearch help [exit-codes | COMMAND...]: the exit codes' table, or a command's --help.
  std::vector<std::string> help_topic;
  CLI::App* help = app.add_subcommand(
      "help", "gsearch help exit-codes: what each exit code means; gsearch help COMMAND: the "
              "command's --help (gsearch help bench search)");
  help->add_option("topic", help_topic, "exit-codes, or a command (and its subcommand)");
  finish_help(help);
  // The table under gsearch --help alone: set last, since CLI11 gives a new subcommand its
  // parent's footer.
  app.footer(std::string(exit_codes_text) +
             "\n(gsearch help exit-codes prints this table alone; gsearch help COMMAND, a "
             "command's --help.)");

  // A mistyped command: named, with the nearest one (also for bench's own commands).
  if (argc > 1) {
    const CLI::App* level = &app;
    std::string word = argv[1];
    if (word == "bench" && argc > 2) {
      level = app.get_subcommand("bench");
      word = argv[2];
    }
    if (auto what = unknown_subcommand(*level, word)) {
      report((*what + "\nRun gsearch --help for more information.").c_str());
      if (std::find(argv, argv + argc, std::string("--json")) != argv + argc && level == &app)
        report_json(*what, int(CLI::ExitCodes::ExtrasError));
      return int(CLI::ExitCodes::ExtrasError);
    }
  }

  if (auto what = misplaced_distributed(app, argc, argv)) {
    report(what->c_str());
    if (std::find(argv, argv + argc, std::string("--json")) != argv + argc) report_json(*what, exit_bad_input);
    return exit_bad_input;
  }

  // What CLI11 prints (help, parse errors), with stdout checked as the commands' is.
  std::ostringstream out, err;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);
    std::fputs(err.str().c_str(), stderr);
    // A parse error of a command given --json: JSON on stdout too (bench's --json is a file).
    const bool json = std::find(argv, argv + argc, std::string("--json")) != argv + argc &&
                      !(argc > 1 && std::string(argv[1]) == "bench");
    if (code != 0 && json) report_json(e.what(), code);
    try {
      print(out.str());
      flush_stdout();
    } catch (const failure& f) {
      report(f.what());
      return code != 0 ? code : f.code();
    }
    return code;
  }
  if (help->parsed()) return print_help(app, help_topic);
  for (const command& c : commands) {
    if (!c.app->parsed()) continue;
    std::string name = c.app->get_name();  // "search", "bench search"
    for (const CLI::App* p = c.app->get_parent(); p && p != &app; p = p->get_parent())
      name = p->get_name() + " " + name;
    try {
      refuse_empty_paths(*c.app);
    } catch (const failure& f) {
      report(f.what());
      if (c.json && *c.json) report_json(f.what(), f.code());
      return f.code();
    }
    return run(c, name);
  }
  // No command: the usage, and an error.
  std::fprintf(stderr, "gsearch: error: no command given: gsearch <command> [options] (%s)\n\n%s",
               "gsearch <command> --help documents each", app.help().c_str());
  return exit_bad_input;
}
