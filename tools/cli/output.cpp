// The output-safety rules of the gsearch CLI: see output.hpp.

#include "output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "progress.hpp"

namespace gsearch::cli {

namespace fs = std::filesystem;

namespace {

std::string quoted(const named_path& p) { return p.option + " '" + p.path + "'"; }

// ---- the temporary files the signal handler removes ------------------------------------------
//
// A fixed array of C strings, so that the handler needs no allocation. A slot is claimed (1) by
// the thread writing the file, filled with the temporary file's name, and published (2) before
// the file is created; the handler unlinks the published ones. A published name whose file is
// not there (yet, or any more) costs the handler a failed unlink.

constexpr int max_temps = 16;
char temp_names[max_temps][PATH_MAX];
std::atomic<int> temp_state[max_temps];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads temp_state");

constexpr int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

extern "C" void remove_temps_and_reraise(int sig) {
  for (int i = 0; i < max_temps; ++i)
    if (temp_state[i].load() == 2) unlink(temp_names[i]);
  // SA_RESETHAND restored the default action and SA_NODEFER left the signal unblocked: raising
  // it again ends the process as the signal would have (exit status 128 + sig in a shell).
  raise(sig);
}

// A slot holding `name`, published; -1 if there is none free or the name is too long (the file
// is then removed on errors and at exit, but not on a signal).
int register_temp(const std::string& name) {
  if (name.size() >= PATH_MAX) return -1;
  for (int i = 0; i < max_temps; ++i) {
    int expected = 0;
    if (!temp_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(temp_names[i], name.c_str(), name.size() + 1);
    temp_state[i].store(2);
    return i;
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0) temp_state[slot].store(0);
}

// Creates the temporary file of `target`: .<name>.tmp-<8 random letters and digits> in its
// directory, published to the signal handler before the file exists (O_EXCL: the file is ours).
// Returns 0, or the errno of the failure (nothing left behind).
int create_temp(const std::string& target, int& fd, std::string& temp, int& slot) {
  const fs::path t(target);
  const fs::path dir = t.parent_path().empty() ? fs::path(".") : t.parent_path();
  const std::string name = t.filename().string();
  static constexpr char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  std::mt19937_64 rng((uint64_t(rd()) << 32) ^ rd() ^ uint64_t(getpid()));
  for (int attempt = 0;; ++attempt) {
    std::string name_tmp = (dir / ("." + name + ".tmp-")).string();
    for (int i = 0; i < 8; ++i) name_tmp += letters[rng() % (sizeof letters - 1)];
    slot = register_temp(name_tmp);
    fd = open(name_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      temp = name_tmp;
      return 0;
    }
    const int err = errno;
    unregister_temp(slot);
    slot = -1;
    if (err != EEXIST || attempt > 100) return err;
  }
}

// ---- the unnamed temporary file (O_TMPFILE) -----------------------------------------------------
//
// Where the file system supports it (ext4, XFS, btrfs, tmpfs, ...), an output is written to an
// unnamed file in its directory (open(dir, O_TMPFILE)) and given its name by linkat() through
// /proc/self/fd once complete: until then nothing named exists, so a SIGKILL or the OOM killer
// leaves nothing behind (the kernel frees the unnamed file with the process). Elsewhere (no
// O_TMPFILE, no /proc), and when GSEARCH_NO_O_TMPFILE is set to anything but "" or "0" (the
// fallback's tests), the named temporary file above.

bool tmpfile_wanted() {
  const char* off = std::getenv("GSEARCH_NO_O_TMPFILE");
  if (off && *off && std::strcmp(off, "0") != 0) return false;
  return access("/proc/self/fd", X_OK) == 0;
}

// An unnamed file in `dir`, or -1 (then the caller falls back to a named one).
int open_unnamed(const std::string& dir) {
#ifdef O_TMPFILE
  if (!tmpfile_wanted()) return -1;
  return open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#else
  (void)dir;
  return -1;
#endif
}

// ---- paths ------------------------------------------------------------------------------------

// The path with its symlinks followed (at most 40, as the kernel does), relative links resolved
// against the link's directory.
std::string follow_links(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    const fs::path link = fs::read_symlink(p, ec);
    if (ec) return p;
    const fs::path dir = fs::path(p).parent_path();
    p = (link.is_absolute() || dir.empty() ? link : dir / link).string();
  }
  return p;  // a loop: stat() fails with ELOOP and the write reports it
}

// What a path names when it is not a regular file ("a FIFO"), or "" for a regular file.
const char* kind_of(mode_t m) {
  if (S_ISREG(m)) return "";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// A path that can only name a directory: ".", "..", or ending in '/'.
bool names_a_directory(const std::string& p) {
  if (p.empty()) return false;
  if (p.back() == '/') return true;
  const std::string last = fs::path(p).filename().string();
  return last == "." || last == "..";
}

// The directory a file at `target` is created in.
std::string directory_of(const std::string& target) {
  const fs::path dir = fs::path(target).parent_path();
  return dir.empty() ? "." : dir.string();
}

// The refusals of check_output_path that do not depend on the directory (exit 1), also made when
// the file is written (the target may have changed since). Fills `st` for an existing target.
void refuse_non_regular(const named_path& out, const std::string& target, struct stat& st,
                        bool& exists) {
  const std::string q = quoted(out);
  const std::string via = target == out.path ? "" : " (a symlink to '" + target + "')";
  if (names_a_directory(out.path))
    throw failure(exit_bad_input, q + " names a directory: give a file name, such as " +
                                      (out.path.back() == '/' ? out.path : out.path + "/") +
                                      "out.npy");
  exists = stat(out.path.c_str(), &st) == 0;
  if (!exists) return;
  if (S_ISDIR(st.st_mode))
    throw failure(exit_bad_input, q + " names a directory" + via + ": give a file name, such as " +
                                      out.path + "/out.npy");
  if (!S_ISREG(st.st_mode))
    throw failure(exit_bad_input,
                  q + " is " + kind_of(st.st_mode) + via +
                      ", not a regular file: gsearch writes its outputs to regular files only "
                      "(through a temporary file renamed over them)");
  // No write permission for us (access), or none for anyone (root may write anything; a file
  // made read-only is still not to be replaced), or a read-only file system.
  const bool denied = access(out.path.c_str(), W_OK) != 0;
  const int err = errno;
  if (denied || (st.st_mode & 0222) == 0)
    throw failure(exit_bad_input,
                  q + " is read-only" + via +
                      (denied && err == EROFS ? " (a read-only file system)" : "") +
                      ": refusing to replace it (make it writable, e.g. chmod u+w, or choose "
                      "another name)");
}

}  // namespace

// ---- path checks ------------------------------------------------------------------------------

namespace {

// The path made absolute with ".", ".." and the symlinks of its existing part resolved.
fs::path resolved(const std::string& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  fs::path r = fs::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal() : r;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec) && !ec) return true;
  return resolved(a) == resolved(b);
}

void check_distinct_paths(const std::vector<named_path>& inputs,
                          const std::vector<named_path>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const named_path& out = outputs[i];
    if (out.path.empty()) continue;
    for (const named_path& in : inputs)
      if (!in.path.empty() && same_file(out.path, in.path))
        throw failure(exit_bad_input, quoted(out) + " is the same file as " + quoted(in) +
                                          ": refusing to overwrite an input");
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path))
        throw failure(exit_bad_input, quoted(out) + " is the same file as " + quoted(outputs[j]) +
                                          ": refusing to write two outputs to one file");
  }
}

std::string write_target(const std::string& path) { return follow_links(path); }

void check_output_path(const named_path& out) {
  if (out.path.empty()) return;
  const std::string target = follow_links(out.path);
  struct stat st {};
  bool exists = false;
  refuse_non_regular(out, target, st, exists);
  const std::string dir = directory_of(target);
  const std::string cannot = "cannot write " + out.path + " (" + out.option + "): ";
  struct stat dst {};
  if (stat(dir.c_str(), &dst) != 0)
    throw failure(exit_device_or_io,
                  cannot + (errno == ENOENT ? "the directory " + dir + " does not exist"
                                            : dir + ": " + std::strerror(errno)));
  if (!S_ISDIR(dst.st_mode))
    throw failure(exit_device_or_io, cannot + dir + " is not a directory");
  // Permissions first (the message names them), then a file created and removed there: the
  // only test that holds for root, read-only file systems and the like.
  int err = access(dir.c_str(), W_OK | X_OK) != 0 ? errno : 0;
  const int unnamed = err ? -1 : open_unnamed(dir);
  if (unnamed >= 0) {
    close(unnamed);  // writable, and nothing was named there
  } else if (!err) {
    int fd = -1, slot = -1;
    std::string probe;
    err = create_temp(target, fd, probe, slot);
    if (!err) {
      close(fd);
      unlink(probe.c_str());
      unregister_temp(slot);
    }
  }
  if (err)
    throw failure(exit_device_or_io, cannot + "the directory " + dir + " is not writable (" +
                                         std::strerror(err) + ")");
}

void check_paths(const std::vector<named_path>& inputs, const std::vector<named_path>& outputs) {
  check_distinct_paths(inputs, outputs);
  for (const named_path& out : outputs) check_output_path(out);
}

// ---- staged_output ----------------------------------------------------------------------------

staged_output::staged_output(std::string path, int64_t total_bytes) : path_(std::move(path)) {
  target_ = follow_links(path_);
  struct stat st {};
  bool exists = false;
  refuse_non_regular({"output", path_}, target_, st, exists);
  progress::phase("writing " + path_, total_bytes);

  fd_ = open_unnamed(directory_of(target_));
  unnamed_ = fd_ >= 0;
  if (!unnamed_) {
    const int err = create_temp(target_, fd_, temp_, slot_);
    if (err) fail(err);
  }

  // The mode: an existing file's own (and its owner, where we may set it), else what a plain
  // fopen would give (0666 less the umask); mkstemp-like 0600 until then.
  mode_t mode;
  if (exists) {
    mode = st.st_mode & 07777;
    if (fchown(fd_, st.st_uid, st.st_gid) != 0) { /* not ours to give: keep ours */ }
  } else {
    const mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  if (fchmod(fd_, mode) != 0) fail(errno);
}

void staged_output::fail(int err) {
  const std::string why = std::strerror(err ? err : EIO);
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!temp_.empty()) unlink(temp_.c_str());
  temp_.clear();
  unregister_temp(slot_);
  slot_ = -1;
  throw failure(exit_device_or_io, "cannot write " + path_ + ": " + why);
}

void staged_output::write(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const size_t chunk = std::min<size_t>(bytes, size_t(1) << 26);  // 64 MiB: progress steps
    const ssize_t n = ::write(fd_, p, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? errno : ENOSPC);
    p += n;
    bytes -= size_t(n);
    progress::advance(n);
  }
}

void staged_output::finish() {
  if (fd_ < 0 || finished_) return;
  if (fsync(fd_) != 0 && errno != EINVAL) fail(errno);
  finished_ = true;
  if (unnamed_) return;  // its descriptor is all there is of it until commit() links it
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) fail(errno);
}

void staged_output::commit() {
  finish();
  if (unnamed_) {
    // The complete file gets the target's name: directly where there is none (linkat never
    // replaces a file), else a named temporary one first, renamed over the target at once (the
    // one moment a name other than the target's exists, once the data is complete).
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    if (linkat(AT_FDCWD, self.c_str(), AT_FDCWD, target_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      if (errno != EEXIST) fail(errno);
      int err = EEXIST;
      const fs::path t(target_);
      const fs::path dir = t.parent_path().empty() ? fs::path(".") : t.parent_path();
      for (int attempt = 0; err == EEXIST && attempt < 100; ++attempt) {
        std::string leaf = ".";  // (appended, not "." + ...: GCC 12's -Wrestrict false positive)
        leaf += t.filename().string();
        leaf += ".tmp-";
        std::string name = (dir / leaf).string();
        std::random_device rd;
        for (int i = 0; i < 8; ++i) name += "abcdefghijklmnopqrstuvwxyz0123456789"[rd() % 36];
        slot_ = register_temp(name);
        err = linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
        if (err == 0) temp_ = name;
        else unregister_temp(slot_), slot_ = -1;
      }
      if (err) fail(err);
      if (std::rename(temp_.c_str(), target_.c_str()) != 0) fail(errno);
    }
    const int fd = fd_;
    fd_ = -1;
    close(fd);  // the data is synced and linked: nothing left to report
  } else if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail(errno);
  }
  temp_.clear();  // renamed: then no longer the handler's
  unregister_temp(slot_);
  slot_ = -1;
}

staged_output::~staged_output() {
  if (fd_ >= 0) close(fd_);
  if (!temp_.empty()) unlink(temp_.c_str());
  unregister_temp(slot_);
}

void install_signal_cleanup() {
  struct sigaction sa {};
  sa.sa_handler = remove_temps_and_reraise;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  for (int sig : cleanup_signals) {
    struct sigaction old {};
    // A signal ignored by whoever started us (nohup, a shell's background job) stays ignored.
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
}

// ---- standard output --------------------------------------------------------------------------

namespace {
bool stdout_closed = false, stdout_written = false;

[[noreturn]] void stdout_failed(int err) {
  throw failure(exit_device_or_io,
                std::string("cannot write to standard output: ") +
                    (stdout_closed ? "it is closed" : std::strerror(err ? err : EIO)));
}
}  // namespace

void protect_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // The lowest free descriptor: this one, since those below it are open by now.
    const int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got >= 0 && got != fd) close(got);
    if (fd == 1) stdout_closed = true;
  }
}

void print(std::string_view text) {
  if (text.empty()) return;
  stdout_written = true;
  if (stdout_closed) stdout_failed(EBADF);
  int err = 0;
  progress::without_line([&] {
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::ferror(stdout))
      err = errno ? errno : EIO;
  });
  if (err) stdout_failed(err);
}

void note(std::string_view line) {
  progress::without_line([&] {
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fputc('\n', stderr);
    std::fflush(stderr);
  });
}

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string s(size_t(std::max(n, 0)), '\0');
  std::vsnprintf(s.data(), s.size() + 1, fmt, again);
  va_end(again);
  return s;
}

void flush_stdout() {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) stdout_failed(errno);
}

bool stdout_used() { return stdout_written; }

}  // namespace gsearch::cli
