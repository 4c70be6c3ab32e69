// The progress line and time summary of long subcommands: see progress.hpp.

#include "progress.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace gsearch::cli::progress {
namespace {

using clock = std::chrono::steady_clock;

double seconds_since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

// Milliseconds before anything is shown: 2000, or GSEARCH_PROGRESS_AFTER_MS.
int64_t delay_ms() {
  if (const char* s = std::getenv("GSEARCH_PROGRESS_AFTER_MS"); s && *s) return std::atoll(s);
  return 2000;
}

struct state {
  std::mutex m;
  std::condition_variable wake;
  bool running = false, stop = false, drawn = false;
  std::string command, what;
  int64_t total = 0;
  std::atomic<int64_t> done{0};
  clock::time_point started, phase_started;
  std::vector<std::pair<std::string, double>> phases;  // (first word of the phase, seconds)
  std::thread ticker;
};

state& s() {
  static state* st = new state;  // never destroyed: no static-destructor order at exit
  return *st;
}

// The phase's first word ("reading" of "reading k.npy"): what the summary adds up.
std::string kind_of(const std::string& what) { return what.substr(0, what.find(' ')); }

// Closes the current phase (the lock held).
void close_phase(state& st) {
  if (st.what.empty()) return;
  const double t = seconds_since(st.phase_started);
  const std::string k = kind_of(st.what);
  for (auto& [name, sec] : st.phases)
    if (name == k) {
      sec += t;
      return;
    }
  st.phases.emplace_back(k, t);
}

// The line, redrawn in place (the lock held).
void draw(state& st) {
  std::string line = "gsearch " + st.command + ": " + (st.what.empty() ? "working" : st.what);
  const int64_t total = st.total, done = st.done.load();
  char buf[64];
  if (total > 0) {
    std::snprintf(buf, sizeof buf, " %d%%", int(100.0 * double(std::min(done, total)) / double(total)));
    line += buf;
  }
  std::snprintf(buf, sizeof buf, " (%.1f s)", seconds_since(st.started));
  line += buf;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  st.drawn = true;
}

void erase(state& st) {
  if (!st.drawn) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  st.drawn = false;
}

void tick(int64_t delay) {
  state& st = s();
  std::unique_lock lock(st.m);
  if (st.wake.wait_for(lock, std::chrono::milliseconds(delay), [&] { return st.stop; })) return;
  while (!st.stop) {
    draw(st);
    st.wake.wait_for(lock, std::chrono::milliseconds(500), [&] { return st.stop; });
  }
}

}  // namespace

void start(const std::string& command) {
  state& st = s();
  std::lock_guard lock(st.m);
  st.command = command;
  st.started = st.phase_started = clock::now();
  st.running = true;
  if (!isatty(2)) return;
  // The ticker takes none of the signals: they go to the thread that registers temporary files.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  st.ticker = std::thread(tick, delay_ms());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void phase(const std::string& what, int64_t total) {
  state& st = s();
  std::lock_guard lock(st.m);
  if (!st.running) return;
  close_phase(st);
  st.what = what;
  st.total = total;
  st.done = 0;
  st.phase_started = clock::now();
}

void advance(int64_t done) { s().done += done; }

void without_line(const std::function<void()>& write) {
  state& st = s();
  std::lock_guard lock(st.m);
  erase(st);
  write();
}

void finish(bool summary) {
  state& st = s();
  {
    std::lock_guard lock(st.m);
    if (!st.running) return;
    st.stop = true;
  }
  st.wake.notify_all();
  if (st.ticker.joinable()) st.ticker.join();
  std::lock_guard lock(st.m);
  erase(st);
  close_phase(st);
  st.running = false;
  const double all = seconds_since(st.started);
  if (!summary || all * 1000 < double(delay_ms())) return;
  std::string parts;
  for (const auto& [name, sec] : st.phases) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.1f s", parts.empty() ? "" : ", ", name.c_str(), sec);
    parts += buf;
  }
  std::fprintf(stderr, "gsearch %s: %.1f s in all%s%s%s\n", st.command.c_str(), all,
               parts.empty() ? "" : " (", parts.c_str(), parts.empty() ? "" : ")");
}

}  // namespace gsearch::cli::progress
