// `gsearch serve` and `gsearch client` end to end: a server started in the background (its ready
// line awaited), clients' results against std::lower_bound / std::upper_bound for every dtype,
// 1-D and 2-D queries and every side, over the Unix-domain socket and 127.0.0.1; SIGTERM and
// SIGINT end it with exit 0 and its socket file removed, SIGTERM with requests in flight too; the
// errors of both commands (a wrong dtype, a request too large, no server, a path in use, --device
// cuda without CUDA). As a service: cli_serve_service_test.cpp.
// Bounded: every wait has a deadline, and a server still running at the end is killed.

#include "cli_server_cases.hpp"

namespace cli_test {
namespace {

TEST_F(CliServer, EveryDtypeRoundTripsAndSigtermEndsIt) {
  const auto one = [&]<class T>() {
    std::vector<T> keys = find_data<T>(3000, 5);
    std::sort(keys.begin(), keys.end(), [](T a, T b) { return gsearch::key_less(a, b); });
    auto s = serve(keys);
    std::vector<T> q = find_data<T>(600, 9);
    save("q.npy", q);
    for (side sd : {side::left, side::right, side::pred}) {
      const run_result r = ok(std::string("client --socket s.sock --queries q.npy --side ") +
                              std::string(gsearch::to_string(sd)) + " --out o.npy");
      EXPECT_NE(r.err.find("answered by s.sock"), std::string::npos) << r.err;
      expect_results(keys, q, sd, results<T>(), std::string(gsearch::key_traits<T>::name));
    }
    // 2-D queries: results of their shape.
    save("q2.npy", std::vector<T>(q.begin(), q.begin() + 60), {6, 10});
    ok("client --socket s.sock --queries q2.npy --out o.npy");
    const npy::input o(work("o.npy").string());
    EXPECT_EQ(o.shape(), (std::vector<int64_t>{6, 10}));
    expect_results(keys, std::vector<T>(q.begin(), q.begin() + 60), side::left, results<T>(), "2-D");
    EXPECT_EQ(s->stop(SIGTERM), 0) << s->err();
    EXPECT_FALSE(fs::exists(work("s.sock")));
    EXPECT_NE(s->err().find("stopped by SIGTERM: 4 requests answered"), std::string::npos) << s->err();
  };
  for (dtype t : gsearch::all_dtypes) gsearch::visit_key_type(t, [&]<class T>() { one.template operator()<T>(); });
}

// The server-side ends of connections to the Unix socket `name` (a path relative to the
// server's folder, as it bound it): /proc/net/unix's connected (St 03) entries of that path.
int connections_to(const std::string& name) {
  std::ifstream f("/proc/net/unix");
  std::string line;
  int n = 0;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string num, refs, protocol_, flags, type, st, inode, path;
    if (in >> num >> refs >> protocol_ >> flags >> type >> st >> inode >> path && path == name && st == "03") ++n;
  }
  return n;
}

// SIGTERM while 8 clients' requests wait in the batcher (2 s for more queries): those begun are
// answered whole, the server exits 0 with its socket removed; a client that came too late fails
// cleanly (exit 2, no output file).
TEST_F(CliServer, SigtermWithRequestsInFlight) {
  std::vector<int64_t> keys;
  for (int64_t i = 0; i < 3000; ++i) keys.push_back(i * 2);
  save("k.npy", keys);
  const std::string sock = "inflight-" + std::to_string(getpid()) + ".sock";  // unique in /proc/net/unix
  background_serve s(work(), "--keys k.npy --socket " + sock +
                                 " --max-delay-us 2000000 --preferred-batch-queries 1000000000");
  ASSERT_NE(s.ready_line().find("serving 3000 keys"), std::string::npos) << s.err();
  std::vector<int64_t> q = find_data<int64_t>(20000, 4);
  save("q.npy", q);
  std::string clients = "cd '" + work().string() + "' && for i in 0 1 2 3 4 5 6 7; do ('" GSEARCH_CLI_PATH
                        "' client --socket " + sock +
                        " --queries q.npy --out o$i.npy > c$i.out 2> c$i.err; echo $? > c$i.rc) & done; wait";
  std::thread run([&] { EXPECT_EQ(std::system(clients.c_str()), 0); });
  // Every client connected (however slowly they start: sanitizers), then a moment for their
  // requests' bytes: the batcher holds them.
  const auto connected = std::chrono::steady_clock::now() + 60s;
  while (connections_to(sock) < 8 && std::chrono::steady_clock::now() < connected) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(connections_to(sock), 8);
  std::this_thread::sleep_for(300ms);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s.stop(SIGTERM), 0) << s.err();
  run.join();
  EXPECT_LT(seconds_since(t0), 20.0);
  EXPECT_FALSE(fs::exists(work(sock)));
  int answered = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(i);
    const std::string rc = read_bytes(work("c" + n + ".rc")), err = read_bytes(work("c" + n + ".err"));
    if (rc == "0\n") {
      ++answered;
      expect_results(keys, q, side::left, npy::load<int64_t>(work("o" + n + ".npy").string()), "client " + n);
    } else {
      EXPECT_EQ(rc, "2\n") << err;
      EXPECT_EQ(err.rfind("gsearch: error: ", 0), 0u) << err;
      EXPECT_FALSE(fs::exists(work("o" + n + ".npy")));
    }
  }
  EXPECT_GT(answered, 0) << s.err();
}

TEST_F(CliServer, PortJsonAndSigint) {
  std::vector<int64_t> keys;
  for (int64_t i = 0; i < 1000; ++i) keys.push_back(i * 3);
  save("k.npy", keys);
  background_serve s(work(), "--keys k.npy --port 0 --json --threads 1 --max-delay-us 100 "
                             "--preferred-batch-queries 64");
  const auto ready = nlohmann::json::parse(s.ready_line());
  EXPECT_EQ(ready["ready"], true);
  EXPECT_EQ(ready["dtype"], "int64");
  EXPECT_EQ(ready["keys"], 1000);
  EXPECT_TRUE(ready["socket"].is_null());
  const int port = ready["port"];
  ASSERT_GT(port, 0);
  const std::vector<int64_t> q = {-1, 0, 1, 2999, 3000, 5};
  save("q.npy", q);
  const run_result r = ok("client --port " + std::to_string(port) + " --queries q.npy --side right --out o.npy --json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "client");
  EXPECT_EQ(j["server"], "127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(j["side"], "right");
  expect_results(keys, q, side::right, results<int64_t>(), "port");
  // Many clients at once, each checked.
  std::vector<std::thread> threads;
  std::vector<run_result> runs(6);
  const char* const outs[] = {"o0.npy", "o1.npy", "o2.npy", "o3.npy", "o4.npy", "o5.npy"};
  const std::string client = "client --port " + std::to_string(port) + " --queries q.npy --out ";
  for (int i = 0; i < 6; ++i)
    threads.emplace_back([&, i] { runs[size_t(i)] = gsearch(client + outs[i]); });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(runs[size_t(i)].code, 0) << runs[size_t(i)].err;
    EXPECT_EQ(npy::load<int64_t>(work(outs[i]).string()), gsearch::test::reference_all(keys, q, side::left));
  }
  EXPECT_EQ(s.stop(SIGINT), 0) << s.err();
  EXPECT_NE(s.err().find("stopped by SIGINT: 7 requests answered"), std::string::npos) << s.err();
}

TEST_F(CliServer, ClientErrorsLeaveNoOutput) {
  const std::vector<int32_t> keys = {1, 3, 5, 7};
  auto s = serve(keys, "--max-queries 10");
  save("qf.npy", std::vector<float>{1.0f});
  fails("client --socket s.sock --queries qf.npy", 1, "answered wrong dtype: queries of dtype float32 for keys of "
                                                      "dtype int32");
  save("q11.npy", std::vector<int32_t>(11, 2));
  fails("client --socket s.sock --queries q11.npy", 1, "answered too large: 11 queries in one request; this server "
                                                       "takes at most 10");
  fails("client --socket none.sock --queries q11.npy", 2, "cannot connect to the gsearch server at none.sock");
  fails("client --queries q11.npy", 1, "give the server's --socket PATH or its --port N");
  save("q.npy", std::vector<int32_t>{0, 5, 9});
  ok("client --socket s.sock --queries q.npy --side pred --out o.npy");
  expect_results(keys, std::vector<int32_t>{0, 5, 9}, side::pred, results<int32_t>(), "after the errors");
  // A second server on the same path is refused while the first answers.
  fails("serve --keys k.npy --socket s.sock", 1, "a server already serves 's.sock'", false);
  EXPECT_EQ(s->stop(SIGTERM), 0);
  EXPECT_FALSE(fs::exists(work("s.sock")));
}

TEST_F(CliServer, ServeErrors) {
  save("k.npy", std::vector<int64_t>{1, 2, 3});
  save("unsorted.npy", std::vector<int64_t>{3, 2, 1});
  fails("serve --keys k.npy", 1, "give --socket PATH", false);
  fails("serve --keys unsorted.npy --socket s.sock", 1, "not sorted", false);
  write_bytes(work("file.sock"), "precious");
  fails("serve --keys k.npy --socket file.sock", 1, "exists and is not a socket", false);
  save("k2.npy", std::vector<int64_t>{1, 2, 3, 4}, {2, 2});
  fails("serve --keys k2.npy --socket s.sock", 1, "the server takes 1-D keys", false);
  hide_gpus();
  fails("serve --keys k.npy --socket s.sock --device cuda", 2,
        gsearch::built_with_cuda() ? "--device cuda: no CUDA device is available" : "built without CUDA", false);
  fails("serve --keys k.npy --socket s.sock --port 70000", 1, "--port must be at most 65535", false);
  fails("serve --keys k.npy --socket s.sock --idle-release-us -5", 1, "--idle-release-us", false);
}

TEST_F(CliServer, AStaleSocketFileIsReplaced) {
  const std::vector<double> keys = {0.5, 1.5, 2.5};
  {
    auto s = serve(keys);
    // Killed: the socket file stays behind.
    EXPECT_EQ(s->stop(SIGKILL), -1);
    EXPECT_TRUE(fs::is_socket(work("s.sock")));
  }
  auto s = serve(keys);
  save("q.npy", std::vector<double>{0.0, 2.0, 3.0});
  ok("client --socket s.sock --queries q.npy --side right --out o.npy");
  expect_results(keys, std::vector<double>{0.0, 2.0, 3.0}, side::right, results<double>(), "replaced");
  EXPECT_EQ(s->stop(SIGTERM), 0);
}

}  // namespace
}  // namespace cli_test
