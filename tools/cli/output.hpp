#pragma once
// The output-safety rules of every gsearch subcommand, in one place (issue 19):
//
//  - Paths are checked before any work (check_paths): no output is an input or another output;
//    an output does not name a directory ("--out .", "--out dir/"), a FIFO, a device or a socket
//    (exit 1), nor a read-only file (exit 1); its directory exists and is writable (else exit 2).
//  - Files are written through a temporary file beside their target and given its name once
//    complete (staged_output): an unnamed one (O_TMPFILE, linked by linkat through /proc/self/fd)
//    where the file system supports it, so that even a SIGKILL leaves nothing; else a hidden
//    named one renamed over the target. A symlink is written through (the temporary file goes beside the link's
//    target, which is replaced; the link stays), an existing file keeps its mode, and the
//    temporary file is removed on an error, on SIGINT, SIGTERM, SIGHUP and SIGPIPE (by an
//    async-signal-safe handler that then re-raises the signal, so the exit status is the
//    signal's) and when the output is never committed.
//  - Standard output is checked: every write (print) and the final flush (flush_stdout); a
//    closed stdout, a full disk or /dev/full is a failure(exit_device_or_io).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"

namespace gsearch::cli {

/// A file named on the command line: the option that named it ("--keys") and the path as given.
struct named_path {
  std::string option, path;
};

/// True when `a` and `b` name the same file: the same path once made absolute and resolved
/// (std::filesystem::weakly_canonical: ".", "..", symlinks, for files that may not exist yet),
/// or, when both exist, the same file (std::filesystem::equivalent: hard links too).
bool same_file(const std::string& a, const std::string& b);

/// Throws failure(exit_bad_input) naming both options and paths if an output is the same file as
/// an input ("--out 'k.npy' is the same file as --keys 'k.npy': refusing to overwrite an input")
/// or as another output. Empty paths (options not given) are skipped.
void check_distinct_paths(const std::vector<named_path>& inputs,
                          const std::vector<named_path>& outputs);

/// The check of one output path, before any work (empty: not given, skipped):
///  - exit_bad_input: it names a directory ("--out 'd/' names a directory"), something other
///    than a regular file (a FIFO, a character or block device, a socket; also through a
///    symlink), or a read-only file (no write permission, or a read-only file system);
///  - exit_device_or_io: its directory does not exist, is not a directory or is not writable.
void check_output_path(const named_path& out);

/// What every subcommand calls first, before reading or computing anything:
/// check_distinct_paths, then check_output_path for each output.
void check_paths(const std::vector<named_path>& inputs, const std::vector<named_path>& outputs);

/// Where writing `path` puts the data: the path with its symlinks followed (relative links
/// against the link's directory), or `path` itself.
std::string write_target(const std::string& path);

/// An output file written to a temporary file beside its target and given the target's name by
/// commit(): an unnamed file (open(dir, O_TMPFILE)) where the file system supports it and /proc
/// is mounted, linked with linkat(/proc/self/fd/N) (straight to the target's name when it does not
/// exist; else to a hidden name renamed over it at once), so that nothing named exists until the
/// data is complete and synced, and a process killed by any signal (SIGKILL, the OOM killer)
/// leaves nothing behind. Elsewhere, or with GSEARCH_NO_O_TMPFILE=1 in the environment, a hidden
/// named file (`.name.tmp-XXXXXXXX`) renamed over the target; it is registered for removal on
/// SIGINT / SIGTERM / SIGHUP / SIGPIPE while it exists (SIGKILL leaves it), and is removed by the
/// destructor unless committed.
/// Every error is a failure(exit_device_or_io) ("cannot write <path>: <reason>"), except a
/// target that check_output_path refuses (exit_bad_input), checked again here.
class staged_output {
 public:
  /// `total_bytes`, when known, is what the progress line reports (progress.hpp).
  explicit staged_output(std::string path, int64_t total_bytes = 0);
  staged_output(const staged_output&) = delete;
  staged_output& operator=(const staged_output&) = delete;
  ~staged_output();

  void write(const void* data, size_t bytes);  ///< every byte, or a failure
  void finish();  ///< fsync (and close a named file): the data is on disk
  /// Whether the data goes to an unnamed file (O_TMPFILE) rather than a named temporary one.
  bool unnamed() const { return unnamed_; }
  void commit();  ///< finish() if not yet, then rename the temporary file over the target
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(int err);
  std::string path_, target_, temp_;
  int fd_ = -1;
  int slot_ = -1;  // the signal handler's registration
  bool unnamed_ = false, finished_ = false;
};

/// Installs the handler that removes the registered temporary files on SIGINT, SIGTERM, SIGHUP
/// and SIGPIPE and then re-raises the signal with its default action. Called once, from main.
void install_signal_cleanup();

/// Makes sure file descriptors 0, 1 and 2 are open (a closed one is opened on /dev/null, so that
/// no output file is ever opened as fd 1 and fed the results), remembering that stdout was
/// closed: print() then fails. Called first thing in main.
void protect_standard_streams();

/// Writes `text` to stdout, checked: a failure(exit_device_or_io) ("cannot write to standard
/// output: No space left on device") if stdout is closed or the write fails.
void print(std::string_view text);

/// Writes `line` and a newline to stderr (a message, a summary: not checked), erasing the progress
/// line first (progress.hpp).
void note(std::string_view line);

/// printf-style formatting into a string (for print()).
[[gnu::format(printf, 1, 2)]] std::string format(const char* fmt, ...);

/// Flushes stdout, checked (as print()). main calls it after every subcommand.
void flush_stdout();

/// Whether anything was printed to stdout (main prints a JSON error object only on a clean one).
bool stdout_used();

}  // namespace gsearch::cli
