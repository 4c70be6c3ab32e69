#pragma once
/// \file
/// Which process an object belongs to, against fork(): gsearch::server's loop thread (on the GPU
/// its kernel, its stream and its mapped memory) and socket_server's threads stay in the process
/// that made them, so a fork child (Python's multiprocessing on Linux, by default) that used
/// their copies would wait for ever for an answer, and one that stopped them would stop the
/// parent's (a pipe both share) or join threads it does not have. Such an object keeps a
/// made_in_process and checks it on each call: a relaxed load and a compare, the forks counted
/// by a pthread_atfork child handler (no getpid() system call on the call path).

#include <cstdint>

namespace gsearch::detail {

class made_in_process {
 public:
  /// The calling process (the first one made registers the fork handler).
  made_in_process();
  /// Whether this is a fork child of the process that made it (its copy of the object).
  bool forked() const noexcept;
  /// Throws gsearch::error "`what`: called in a fork child ... of the process that made `object`"
  /// when forked().
  void check(const char* what, const char* object) const {
    if (forked()) refuse(what, object);
  }

 private:
  [[noreturn]] void refuse(const char* what, const char* object) const;
  uint64_t forks_;  // the process's fork depth when made
  long pid_;        // the process that made it (for the message)
};

}  // namespace gsearch::detail
