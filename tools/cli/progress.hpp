#pragma once
// The time and progress of a long subcommand, on stderr only (never stdout, so that results and
// --json objects stay clean):
//  - while it runs, if stderr is a terminal (isatty(2)) and the command has run for 2 seconds,
//    one line, redrawn in place twice a second: "gsearch sort: writing s.npy 45% (12.5 s)";
//  - when it succeeds after 2 seconds or more (terminal or not), one summary line:
//    "gsearch sort: 26.4 s in all (reading 3.1 s, sorting 20.2 s, writing 3.1 s)".
// GSEARCH_PROGRESS_AFTER_MS overrides the 2 seconds (the tests set 0).
// main calls start() and finish(); the phases are set where the work is: reading an input
// (npy.cpp), writing an output (output.cpp), and each subcommand's own work.

#include <cstdint>
#include <functional>
#include <string>

namespace gsearch::cli::progress {

/// Starts the clock of the subcommand `command` ("search", "bench search").
void start(const std::string& command);

/// The current phase: "reading k.npy", "sorting", "writing s.npy". With total > 0, advance()
/// adds to what is done of it and the line shows the percentage.
void phase(const std::string& what, int64_t total = 0);
void advance(int64_t done);

/// Runs `write` (a write to stdout or stderr) with the progress line erased first and not redrawn
/// meanwhile, so that the two do not mix on a terminal.
void without_line(const std::function<void()>& write);

/// Stops the line (erased) and, if `summary` and the command ran long enough, prints the time
/// summary.
void finish(bool summary);

}  // namespace gsearch::cli::progress
