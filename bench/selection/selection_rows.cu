// selection_bench, part "rows": gsearch::topk over --rows x --cols float32 (row-major), k = --row-k
// per row, sorted and unsorted, on --topk-dists, against cub::DeviceBatchedTopK::MaxPairs
// (output_ordering::sorted and ::unsorted). Every row checked on the host (runner::topk_ok).
// Inputs, rows and JSON: selection_bench.cu.

#include "selection_bench.hpp"

namespace gsearch::bench::selection_bench {

void runner::rows_part() {
  using T = float;
  const int64_t rows = a.rows, cols = a.cols, k = std::min(a.row_k, a.cols), n = rows * cols;
  device_vector<T> d(n);
  peers::generate<T>(stream, d.data(), n, dist::bits, a.seed);
  const double roof = roofline(d.data(), nullptr, n * int64_t(sizeof(T)), "float32", n);
  const double bytes = double(n) * sizeof(T);
  device_vector<T> vals(rows * k);
  device_vector<int64_t> idx(rows * k);
  for (const std::string& dn : a.topk_dists) {
    make_input<T>(d.data(), n, dn);
    const std::vector<T> host = host_copy(d.data(), n);
    auto check = [&](bool sorted) {
      const std::vector<T> v = host_copy(vals.data(), rows * k);
      const std::vector<int64_t> ix = host_copy(idx.data(), rows * k);
      // The rows shared out among the threads, each row's count on its own thread (topk_ok's
      // count of -1 starts threads a row: 10^6 rows of 64 outran 100 s, fifteenth session).
      return parallel_all(rows, [&](int64_t i) {
        const std::vector<T> rv(v.begin() + i * k, v.begin() + (i + 1) * k);
        const std::vector<int64_t> ri(ix.begin() + i * k, ix.begin() + (i + 1) * k);
        const T* row = host.data() + i * cols;
        const T least = *std::min_element(rv.begin(), rv.end());
        const int64_t above = std::count_if(row, row + cols, [&](T x) { return x > least; });
        return topk_ok<T>(row, cols, rv, ri, above, sorted);
      });
    };
    auto base = [&](const char* impl, const std::string& call) {
      json r = row("rows", impl, "topk", call, "float32", dn, n);
      r["rows"] = rows;
      r["cols"] = cols;
      r["k"] = k;
      return r;
    };
    for (const bool sorted : {true, false})
      measure(base("gsearch", sorted ? "topk sorted" : "topk unsorted"), bytes, roof, [&] {
        gsearch::topk(cuda, span<const T>(d.data(), n), rows, k, topk_options{true, sorted}, vals.view(), idx.view());
      }, [&](json&) { return check(sorted); });
    if (!a.peers || !bench::new_cccl_available()) continue;
    for (const bool sorted : {true, false}) {
      json r = base("cub", std::string("DeviceBatchedTopK::MaxPairs ") + (sorted ? "sorted" : "unsorted"));
      try {
        const size_t tb = std::max(peers::cub_batched_topk_temp_bytes<T>(rows, cols, k, sorted), size_t(1));
        device_vector<unsigned char> temp{int64_t(tb)};
        measure(r, bytes, roof, [&] {
          peers::cub_batched_topk<T>(stream, temp.data(), tb, d.data(), rows, cols, k, sorted, vals.data(), idx.data());
        }, [&](json&) { return check(sorted); });
      } catch (const std::exception& e) {
        error(r, e);
      }
    }
  }
}

}  // namespace gsearch::bench::selection_bench
