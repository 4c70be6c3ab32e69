// sorter= on the CPU: the two ways the library can search keys in a sorter's order, timed on the
// same inputs, for the rule that picks between them (src/cpu/tuning.hpp, cpu_sorter_in_place):
//   in_place  search_through_sorter: the binary search reads keys[sorter[i]] as it goes (about
//             2 ceil(log2(k + 1)) dependent random reads a query)
//   gather    gather_keys, then the binary search of the gathered copy (a read of the sorter, a
//             random read of the keys and a write for every key, on all cores)
// int32 keys uniform in [0, 2^30), sorter = their argsort, queries uniform; side left; all
// threads; the best of 7 calls. Both answers are compared.
//
//   sorter_route_bench > sorter_route.txt

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "cpu/tuning.hpp"  // cpu_sorter_in_place
#include "search/backend.hpp"

int main() {
  using namespace gsearch;
  std::mt19937_64 rng(1);
  int problems = 0;
  const build_info_t build = build_info();
  std::printf("# sorter_route_bench: microseconds, best of 7; source %s%s\n", build.commit, build.dirty ? " (dirty)" : "");
  for (int log_k : {12, 16, 20, 23}) {
    const int64_t k = int64_t{1} << log_k;
    std::vector<int32_t> keys(static_cast<size_t>(k));
    for (auto& x : keys) x = int32_t(rng() % (1u << 30));
    std::vector<int64_t> sorter(static_cast<size_t>(k));
    std::iota(sorter.begin(), sorter.end(), 0);
    std::sort(sorter.begin(), sorter.end(), [&](int64_t a, int64_t b) { return keys[size_t(a)] < keys[size_t(b)]; });
    int steps = 0;
    while ((int64_t{1} << steps) < k + 1) ++steps;
    for (int64_t q = 16; q <= std::min<int64_t>(k, 65536); q *= 4) {
      std::vector<int32_t> queries(static_cast<size_t>(q));
      for (auto& x : queries) x = int32_t(rng() % (1u << 30));
      std::vector<int64_t> in_place(static_cast<size_t>(q)), gathered(static_cast<size_t>(q));
      const auto best_us = [](const auto& f) {
        double best = 1e30;
        for (int r = 0; r < 7; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          f();
          best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        return best;
      };
      const double t_in = best_us([&] {
        cpu_backend::search_through_sorter(0, side::left, keys.data(), k, sorter.data(), queries.data(), q,
                                           in_place.data());
      });
      const std::function<void(const int32_t*)> search = [&](const int32_t* g) {
        cpu_backend::search(0, side::left, algorithm::binary, g, k, queries.data(), q, gathered.data(), int64_t{1} << 40);
      };
      const double t_g = best_us([&] { cpu_backend::gather_keys(0, keys.data(), k, sorter.data(), search); });
      problems += in_place != gathered;
      std::printf("k=2^%-2d q=%6lld in_place %10.1f gather %10.1f gather/in_place %8.2f q*steps/k %.4f rule %s\n",
                  log_k, static_cast<long long>(q), t_in, t_g, t_g / t_in, double(q * steps) / double(k),
                  cpu_backend::cpu_sorter_in_place(k, q) ? "in_place" : "gather");
    }
  }
  if (problems) std::printf("# %d answers differ\n", problems);
  return problems ? 1 : 0;
}
