#pragma once
// What the search server's tests share (server_test.cpp, server_socket_test.cpp,
// gpu_server_test.cpp): sorted keys and queries of small ranges (duplicates), the three sides,
// and a fork child's use of a server. The reference is test_util.hpp's
// reference_all (std::lower_bound / std::upper_bound in gsearch's order).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "test_util.hpp"

namespace gsearch::test {

template <class T>
std::vector<T> sorted_keys(int64_t n, uint64_t seed, int range) {
  std::mt19937_64 rng(seed);
  std::vector<T> k(static_cast<size_t>(n));
  for (T& x : k) x = small_value<T>(rng, range);
  sort_keys(k);
  return k;
}

template <class T>
std::vector<T> random_queries(std::mt19937_64& rng, int64_t n, int range) {
  std::vector<T> q(static_cast<size_t>(n));
  for (T& x : q) x = small_value<T>(rng, range);
  return q;
}

inline constexpr side server_sides[] = {side::left, side::right, side::pred};

/// Forks a child that uses `s` (this process's, serving `keys`): search, replace_keys, stats,
/// size, shutdown must each throw error naming the fork, and destroying the child's copy must
/// return. Waits for the child 30 s at most (a hang is killed and fails). "" when the child did
/// all that, else what it did not. The parent's server is not touched; the caller checks that it
/// still serves.
template <class T>
std::string server_fork_child_refuses(std::unique_ptr<server<T>>& s, const std::vector<T>& keys) {
  const pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {  // the child: no gtest here (its failures would not reach the parent); an exit code
    const auto refused = [](auto&& call) {
      try {
        call();
      } catch (const error& e) {
        return std::string(e.what()).find("fork child") != std::string::npos;
      } catch (...) {
      }
      return false;
    };
    std::vector<T> q(keys.begin(), keys.begin() + std::ptrdiff_t(std::min<size_t>(keys.size(), 8)));
    std::vector<int64_t> out(q.size());
    int code = 0;
    if (!refused([&] { s->search(span<const T>(q), side::left, span<int64_t>(out)); })) code |= 1;
    if (!refused([&] { s->replace_keys(span<const T>(keys)); })) code |= 2;
    if (!refused([&] { (void)s->stats(); })) code |= 4;
    if (!refused([&] { (void)s->size(); })) code |= 8;
    if (!refused([&] { s->shutdown(); })) code |= 16;
    s.reset();  // leaves the parent's server alone, and returns
    _exit(code);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "the fork child hung (killed after 30 s)";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!WIFEXITED(status)) return "the fork child died (status " + std::to_string(status) + ")";
  const int code = WEXITSTATUS(status);
  if (code == 0) return "";
  std::string missed = "the fork child's calls not refused with the fork named:";
  const char* names[] = {" search", " replace_keys", " stats", " size", " shutdown"};
  for (int b = 0; b < 5; ++b)
    if (code & (1 << b)) missed += names[b];
  return missed;
}

}  // namespace gsearch::test
