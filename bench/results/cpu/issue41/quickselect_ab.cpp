#include <gsearch/selection.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
#include <algorithm>
template <class T> void run(const char* name) {
  std::mt19937_64 rng(1);
  for (int64_t n : {100, 300, 1000, 2000, 4000, 10000, 100000}) {
    std::vector<T> x(n), out(n); std::vector<int64_t> k = {n / 2}; T v;
    for (auto& e : x) e = T(rng() % 1000000);
    const int iters = int(4e6 / n) + 20;
    double bp = 1e30, bs = 1e30;
    for (int rep = 0; rep < 7; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) gsearch::partition(gsearch::cpu, gsearch::span<const T>(x.data(), n), gsearch::span<const int64_t>(k.data(), 1), gsearch::span<T>(out.data(), n));
      auto t1 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) gsearch::select(gsearch::cpu, gsearch::span<const T>(x.data(), n), gsearch::span<const int64_t>(k.data(), 1), gsearch::span<T>(&v, 1));
      auto t2 = std::chrono::steady_clock::now();
      bp = std::min(bp, std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
      bs = std::min(bs, std::chrono::duration<double, std::micro>(t2 - t1).count() / iters);
    }
    std::printf("%s n=%6ld partition %7.2f us  select %7.2f us\n", name, long(n), bp, bs);
  }
}
int main() { run<int32_t>("int32"); run<float>("float32"); run<int64_t>("int64"); run<double>("float64"); }
