// `gsearch serve` as a service (issue 39): its options checked, the socket 0600 (0660 in
// --socket-group), the ready line in --ready-file and optional, running with stdout closed or its
// reader gone, stopped by SIGINT though started with SIGINT ignored, ~/ in socket paths; the
// client's --timeout one deadline for the whole request (against listeners in the test that
// answer nothing, trickle their answer or never accept), and busy (status 6) exit 2; the client
// rings' options reaching a C++ socket_client.
// Bounded: every wait has a deadline, and a server still running at the end is killed.

#include "cli_server_cases.hpp"
#include "gsearch/server_socket.hpp"

namespace cli_test {
namespace {

// ---- as a service (issue 39) ------------------------------------------------------------------

// The name of a group other than our effective one that we may give a socket to (root: any; else
// one of our supplementary groups), or our own group's if there is none.
std::string some_group(gid_t& gid) {
  gid = getegid();
  if (geteuid() == 0) {
    setgrent();
    while (const group* g = getgrent()) {
      if (g->gr_gid != getegid()) {
        gid = g->gr_gid;
        break;
      }
    }
    endgrent();
  } else {
    std::vector<gid_t> mine(64);
    const int n = getgroups(int(mine.size()), mine.data());
    for (int i = 0; i < n; ++i)
      if (mine[size_t(i)] != getegid()) gid = mine[size_t(i)];
  }
  const group* g = getgrgid(gid);
  return g ? g->gr_name : "";
}

TEST_F(CliServer, ServiceOptionsAreChecked) {
  save("k.npy", std::vector<int64_t>{1, 2, 3});
  const std::string serve = "serve --keys k.npy --socket s.sock ";
  // --max-queries: at most the protocol's limit, 2^32.
  fails(serve + "--max-queries 4294967297", 1, "--max-queries must be at most 4294967296 (2^32", false);
  fails(serve + "--max-queries 1e12", 1, "--max-queries must be at most 4294967296", false);
  fails(serve + "--max-queries 0", 1, "--max-queries must be at least 1", false);
  // --socket-group: a group that exists, and a socket to give it to.
  fails(serve + "--socket-group no_such_group_gsearch_test", 1,
        "--socket-group 'no_such_group_gsearch_test': no such group", false);
  gid_t gid;
  const std::string group = some_group(gid);
  ASSERT_FALSE(group.empty());
  fails("serve --keys k.npy --port 0 --socket-group " + group, 1,
        "--socket-group '" + group + "' applies to the Unix-domain socket: give --socket PATH too", false);
  fails(serve + "--max-connections 0", 1, "--max-connections must be at least 1", false);
  fails(serve + "--max-connections 8 --max-connections-per-peer 9", 1,
        "--max-connections-per-peer must be at most 8 (--max-connections", false);
  fails(serve + "--max-connections-per-peer -1", 1, "--max-connections-per-peer must be at least 0", false);
  fails(serve + "--max-bytes-in-flight 0", 1, "--max-bytes-in-flight must be at least 1", false);
  fails(serve + "--max-bytes-in-flight 1GB", 1, "--max-bytes-in-flight '1GB' is not a whole number", false);
  fails(serve + "--workers -1", 1, "--workers must be at least 0", false);
  fails(serve + "--workers 5000", 1, "--workers must be at most 4096", false);
  fails(serve + "--idle-timeout -1", 1, "--idle-timeout must be at least 0", false);
  fails(serve + "--client-ring-queries 4294967297", 1, "--client-ring-queries must be at most 4294967296", false);
  fails(serve + "--client-ring-queries -1", 1, "--client-ring-queries must be at least 0", false);
  fails(serve + "--max-client-rings -1", 1, "--max-client-rings must be at least 0", false);
  // --ready-file: an output, checked before any work.
  fails(serve + "--ready-file k.npy", 1, "--ready-file 'k.npy' is the same file as --keys 'k.npy'", false);
  fails(serve + "--ready-file s.sock", 1, "--ready-file 's.sock' is the same file as --socket 's.sock'", false);
  fails(serve + "--ready-file s.sock.lock", 1, "is the same file as --socket's lock file 's.sock.lock'", false);
  fails(serve + "--ready-file no/dir/r.txt", 2, "the directory no/dir does not exist", false);
  fails(serve + "--ready-file ''", 1, "--ready-file '' is an empty path", false);
  save("q.npy", std::vector<int64_t>{1});
  fails("client --socket s.sock --queries q.npy --timeout -1", 1, "--timeout must be at least 0");
}

// The help, its lines wrapped and its columns padded, with every run of white space one space.
std::string flat_help(const std::string& help) {
  std::string flat;
  for (char c : help) {
    const char x = c == '\n' || c == '\t' ? ' ' : c;
    if (!(x == ' ' && !flat.empty() && flat.back() == ' ')) flat += x;
  }
  return flat;
}

TEST_F(CliServer, HelpSaysWhoCanConnect) {
  const std::string serve = flat_help(ok("serve --help").out);
  for (const char* says :
       {"created 0600, so only this user can connect", "0660 in group G, and its members too",
        "over TCP (--port, 127.0.0.1) every local user can", "A client can learn the whole key set, by searching it",
        "6 busy", "--socket-group NAME", "--ready-file FILE", "--no-ready-line", "--max-connections-per-peer N=0",
        "SIGINT stops it always", "A closed stdout, or one whose reader has gone, does not stop it",
        // The defaults: 2^22 queries a request, 1024 connections, 60 s idle, 1 GiB in flight.
        "--max-queries N=4194304", "--max-connections N=1024", "--idle-timeout S=60",
        "--max-bytes-in-flight BYTES=1073741824", "--workers N=0"})
    EXPECT_NE(serve.find(says), std::string::npos) << says << "\n" << serve;
  const std::string client = flat_help(ok("client --help").out);
  for (const char* says : {"One deadline in seconds for the whole request, from the connect", "busy (status 6"})
    EXPECT_NE(client.find(says), std::string::npos) << says << "\n" << client;
}

TEST_F(CliServer, TheSocketIsPrivateByDefault) {
  const std::vector<int32_t> keys = {1, 2, 3};
  save("k.npy", keys);
  save("q.npy", std::vector<int32_t>{2});
  {
    // Under umask 000 too (the old server's socket was 0777 there).
    background_serve s(work(), "--keys k.npy --socket s.sock", "umask 000; ");
    ASSERT_NE(s.ready_line().find("gsearch serve: serving 3 keys"), std::string::npos) << s.err();
    struct stat st {};
    ASSERT_EQ(stat(work("s.sock").c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u) << std::oct << (st.st_mode & 07777);
    EXPECT_TRUE(fs::exists(work("s.sock.lock"))) << "the lock file beside the socket";
    ok("client --socket s.sock --queries q.npy --out o.npy");
    EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
    EXPECT_FALSE(fs::exists(work("s.sock")));
  }
  gid_t gid;
  const std::string group = some_group(gid);
  ASSERT_FALSE(group.empty());
  background_serve s(work(), "--keys k.npy --socket s.sock --socket-group " + group, "umask 077; ");
  ASSERT_NE(s.ready_line().find("gsearch serve: serving 3 keys"), std::string::npos) << s.err();
  struct stat st {};
  ASSERT_EQ(stat(work("s.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u) << std::oct << (st.st_mode & 07777);
  EXPECT_EQ(st.st_gid, gid) << group;
  ok("client --socket s.sock --queries q.npy --out o.npy");
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
}

TEST_F(CliServer, ReadyFileHoldsTheReadyLine) {
  const std::vector<uint32_t> keys = {10, 20, 30, 40};
  save("k.npy", keys);
  {
    background_serve s(work(), "--keys k.npy --socket s.sock --ready-file ready.txt");
    // Written before the line on stdout: there by now, and the same line.
    const std::string line = s.ready_line();
    EXPECT_EQ(line.rfind("gsearch serve: serving 4 keys of uint32 on s.sock", 0), 0u) << line << s.err();
    EXPECT_NE(line.find("pid " + std::to_string(s.pid())), std::string::npos) << line;
    EXPECT_EQ(read_bytes(work("ready.txt")), line);
    EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
    EXPECT_EQ(s.ready_line(), "") << "one ready line only";
    EXPECT_FALSE(fs::exists(work("ready.txt"))) << "removed when the server stops";
    EXPECT_FALSE(fs::exists(work("s.sock")));
  }
  // --json, and no ready line on stdout; a file a killed server left is replaced.
  write_bytes(work("ready.json"), "stale\n");
  background_serve j(work(), "--keys k.npy --socket s.sock --json --ready-file ready.json --no-ready-line");
  const auto ready = nlohmann::json::parse(wait_for_file(work("ready.json"), "stale\n"));
  EXPECT_EQ(ready["command"], "serve");
  EXPECT_EQ(ready["ready"], true);
  EXPECT_EQ(ready["keys"], 4);
  EXPECT_EQ(ready["dtype"], "uint32");
  EXPECT_EQ(ready["socket"], "s.sock");
  EXPECT_TRUE(ready["port"].is_null());
  EXPECT_EQ(ready["pid"], int64_t(j.pid()));
  EXPECT_TRUE(fs::is_socket(work("s.sock")));
  // Only this file: no temporary file left beside it.
  for (const auto& e : fs::directory_iterator(work()))
    EXPECT_EQ(e.path().filename().string().find(".ready.json.tmp"), std::string::npos) << e.path();
  save("q.npy", std::vector<uint32_t>{25});
  ok("client --socket s.sock --queries q.npy --out o.npy");
  expect_results(keys, std::vector<uint32_t>{25}, side::left, results<uint32_t>(), "--ready-file");
  EXPECT_EQ(j.stop(SIGTERM), 0) << j.err();
  EXPECT_EQ(j.ready_line(), "") << "--no-ready-line printed on stdout";
  EXPECT_FALSE(fs::exists(work("ready.json")));
}

TEST_F(CliServer, RunsWithStdoutClosed) {
  const std::vector<int64_t> keys = {5, 6, 7};
  save("k.npy", keys);
  background_serve s(work(), "--keys k.npy --socket s.sock --ready-file ready.txt <&- >&-");
  const std::string ready = wait_for_file(work("ready.txt"));
  EXPECT_EQ(ready.rfind("gsearch serve: serving 3 keys of int64 on s.sock", 0), 0u) << ready << s.err();
  save("q.npy", std::vector<int64_t>{6});
  ok("client --socket s.sock --queries q.npy --side right --out o.npy");
  expect_results(keys, std::vector<int64_t>{6}, side::right, results<int64_t>(), "stdout closed");
  EXPECT_TRUE(s.running()) << s.err();
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
  EXPECT_NE(s.err().find("stopped by SIGTERM: 1 request answered"), std::string::npos) << s.err();
  EXPECT_FALSE(fs::exists(work("s.sock")));
  EXPECT_FALSE(fs::exists(work("ready.txt")));
}

TEST_F(CliServer, RunsWhenTheReaderOfItsStdoutIsGone) {
  const std::vector<float> keys = {0.5f, 1.5f};
  save("k.npy", keys);
  background_serve s(work(), "--keys k.npy --socket s.sock --ready-file ready.txt");
  s.close_stdout_reader();  // the ready line meets EPIPE (SIGPIPE would kill it)
  wait_for_file(work("ready.txt"));
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (s.err().find("could not be written to standard output") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline && s.running())
    std::this_thread::sleep_for(20ms);
  EXPECT_NE(s.err().find("the ready line could not be written to standard output (Broken pipe); serving anyway"),
            std::string::npos)
      << s.err();
  save("q.npy", std::vector<float>{1.0f});
  ok("client --socket s.sock --queries q.npy --out o.npy");
  expect_results(keys, std::vector<float>{1.0f}, side::left, results<float>(), "reader gone");
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
}

TEST_F(CliServer, SigintStopsItThoughStartedWithSigintIgnored) {
  // What the prefix gives: SIGINT and SIGHUP ignored in the process that becomes gsearch serve (as
  // in a script's background job, or under nohup for SIGHUP).
  const std::string prefix = "trap '' INT HUP; ";
  ASSERT_EQ(std::system(("cd '" + work().string() + "' && " + prefix + "exec grep SigIgn /proc/self/status > ign")
                            .c_str()),
            0);
  const std::string ign = read_bytes(work("ign"));
  const unsigned long long mask = std::stoull(ign.substr(ign.find(':') + 1), nullptr, 16);
  ASSERT_TRUE(mask & (1ull << (SIGINT - 1))) << ign;
  ASSERT_TRUE(mask & (1ull << (SIGHUP - 1))) << ign;

  const std::vector<int32_t> keys = {3, 1 << 20};
  save("k.npy", keys);
  background_serve s(work(), "--keys k.npy --socket s.sock", prefix);
  ASSERT_NE(s.ready_line().find("gsearch serve: serving 2 keys"), std::string::npos) << s.err();
  // SIGHUP ignored stays ignored (nohup): still serving.
  kill(s.pid(), SIGHUP);
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(s.running()) << s.err();
  save("q.npy", std::vector<int32_t>{4});
  ok("client --socket s.sock --queries q.npy --out o.npy");
  // SIGINT stops it all the same.
  EXPECT_EQ(s.stop(SIGINT, 20s), 0) << s.err();
  EXPECT_NE(s.err().find("gsearch serve: stopped by SIGINT: 1 request answered"), std::string::npos) << s.err();
  EXPECT_FALSE(fs::exists(work("s.sock")));
}

TEST_F(CliServer, TildeInSocketPaths) {
  const std::vector<double> keys = {1.0, 2.0};
  save("k.npy", keys);
  const std::string home = "HOME='" + work().string() + "' ";
  // Quoted: no shell expands it (as in --socket=~/x.sock, or a path from a file).
  background_serve s(work(), "--keys k.npy '--socket=~/t.sock' --json", "export " + home + "; ");
  const auto ready = nlohmann::json::parse(s.ready_line());
  EXPECT_EQ(ready["socket"], (work() / "t.sock").string());
  EXPECT_TRUE(fs::is_socket(work("t.sock")));
  EXPECT_FALSE(fs::exists(work("~")));
  save("q.npy", std::vector<double>{1.5});
  env_ = home;
  const run_result r = ok("client --socket '~/t.sock' --queries q.npy --out o.npy");
  EXPECT_NE(r.err.find("answered by " + (work() / "t.sock").string()), std::string::npos) << r.err;
  expect_results(keys, std::vector<double>{1.5}, side::left, results<double>(), "~/");
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
  EXPECT_FALSE(fs::exists(work("t.sock")));
}

// --client-ring-queries and --max-client-rings reach the socket front end: a C++ socket_client
// gets a ring of that capacity, none with 0 (and its requests are answered either way).
TEST_F(CliServer, ClientRingsAsTheOptionsSay) {
  const std::vector<int64_t> keys = {10, 20, 30};
  save("k.npy", keys);
  for (const int64_t capacity : {int64_t(64), int64_t(0)}) {
    background_serve s(work(), "--keys k.npy --socket r.sock --client-ring-queries " + std::to_string(capacity));
    ASSERT_NE(s.ready_line().find("serving 3 keys"), std::string::npos) << s.err();
    gsearch::socket_client c(work("r.sock").string(), 10s);
    const std::vector<int64_t> q = {15, 30, 99};
    std::vector<int64_t> out(q.size());
    c.search(gsearch::span<const int64_t>(q), side::right, gsearch::span<int64_t>(out));
    EXPECT_EQ(out, (std::vector<int64_t>{1, 3, 3}));
    EXPECT_EQ(c.ring_capacity(), capacity);
    c.close();
    EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
  }
  background_serve s(work(), "--keys k.npy --socket r.sock --max-client-rings 0");
  ASSERT_NE(s.ready_line().find("serving 3 keys"), std::string::npos) << s.err();
  gsearch::socket_client c(work("r.sock").string(), 10s);
  std::vector<int64_t> out(1);
  c.search(gsearch::span<const int64_t>(keys.data(), 1), side::left, gsearch::span<int64_t>(out));
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(c.ring_capacity(), 0);
  c.close();
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
}

// The client's --timeout is one deadline for the whole request: exit 2 within it (and a margin
// for the process's start), whatever the server does.
class CliClientDeadline : public CliServer {
 protected:
  void expect_deadline(const std::string& what) {
    save("q.npy", std::vector<int64_t>{1, 2, 3, 4});
    const timed_run r = run_within("client --socket fake.sock --queries q.npy --out o.npy --timeout 2", 20s);
    EXPECT_EQ(r.code, 2) << what << " (-1: still running after 20 s)\n" << r.err;
    EXPECT_LT(r.seconds, 4.0) << what << "\n" << r.err;
    EXPECT_GE(r.seconds, 1.5) << what << ": gave up before the deadline\n" << r.err;
    EXPECT_EQ(r.err.rfind("gsearch: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("fake.sock"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(work("o.npy")));
  }
};

TEST_F(CliClientDeadline, AServerThatNeverAnswers) {
  fake_server f(work("fake.sock"), fake_server::mode::silent);
  expect_deadline("a server that reads the request and never answers");
  EXPECT_EQ(f.accepted(), 1);
}

TEST_F(CliClientDeadline, AServerThatTricklesItsAnswer) {
  // 48 bytes, one every 200 ms: each read waits less than the timeout, the whole answer 9.6 s.
  fake_server f(work("fake.sock"), fake_server::mode::trickle);
  expect_deadline("a server that answers a byte every 200 ms");
}

TEST_F(CliClientDeadline, AServerWhoseBacklogIsFull) {
  // connect() itself waits: the deadline includes it.
  fake_server f(work("fake.sock"), fake_server::mode::never_accept);
  expect_deadline("a server that never accepts (its backlog full)");
}

TEST_F(CliServer, BusyIsExit2WithTheServersMessage) {
  fake_server f(work("fake.sock"), fake_server::mode::busy);
  save("q.npy", std::vector<int32_t>{1});
  const timed_run r = run_within("client --socket fake.sock --queries q.npy --out o.npy --timeout 10", 20s);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("answered busy: test listener: at its connection limit"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(work("o.npy")));
}

TEST_F(CliServer, AFullServerAnswersBusyAtOnce) {
  const std::vector<int64_t> keys = {1, 2, 3};
  save("q.npy", std::vector<int64_t>{2});
  {
    // --max-connections: two idle connections fill it; a client is answered busy, not kept waiting.
    auto s = serve(keys, "--max-connections 2 --max-connections-per-peer 2");
    int held[2] = {raw_connect(work("s.sock")), raw_connect(work("s.sock"))};
    ASSERT_GE(held[0], 0);
    ASSERT_GE(held[1], 0);
    const timed_run r = run_within("client --socket s.sock --queries q.npy --out o.npy --timeout 10", 20s);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("answered busy"), std::string::npos) << r.err;
    EXPECT_LT(r.seconds, 5.0) << r.err;
    EXPECT_FALSE(fs::exists(work("o.npy")));
    // Once they are gone, it serves again.
    ::close(held[0]);
    ::close(held[1]);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    run_result ok_run{};
    do {
      ok_run = gsearch("client --socket s.sock --queries q.npy --out o.npy --timeout 10");
    } while (ok_run.code != 0 && std::chrono::steady_clock::now() < deadline);
    EXPECT_EQ(ok_run.code, 0) << ok_run.err;
    EXPECT_EQ(s->stop(SIGTERM), 0) << s->err();
    EXPECT_NE(s->err().find(" answered busy, "), std::string::npos) << s->err();
    EXPECT_EQ(s->err().find(" 0 answered busy, "), std::string::npos) << s->err();
  }
  // --max-connections-per-peer: one user (us) holds its one connection.
  auto s = serve(keys, "--max-connections 16 --max-connections-per-peer 1");
  const int held = raw_connect(work("s.sock"));
  ASSERT_GE(held, 0);
  const timed_run r = run_within("client --socket s.sock --queries q.npy --out o.npy --timeout 10", 20s);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("answered busy"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5.0) << r.err;
  ::close(held);
  EXPECT_EQ(s->stop(SIGTERM), 0) << s->err();
}

}  // namespace
}  // namespace cli_test
