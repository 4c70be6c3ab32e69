// selection_bench, part "quantile": gsearch::quantile (method linear) of --quantile-n float32 with
// q = 0.5 and with 100 q (q_j = j / 99), and gsearch::median, every distribution, against sort,
// then pick the 2 (200) elements the interpolation needs (cub::DeviceRadixSort::SortKeys).
// Checked within 1e-6 (relative) of numpy's linear interpolation (in float64) between the two
// elements of the count-verified ranks. Inputs, rows and JSON: selection_bench.cu.

#include "selection_bench.hpp"

namespace gsearch::bench::selection_bench {

void runner::quantile_part() {
  using T = float;
  const int64_t n = a.quantile_n;
  device_vector<T> d(n);
  peers::generate<T>(stream, d.data(), n, dist::bits, a.seed);
  const double roof = roofline(d.data(), nullptr, n * int64_t(sizeof(T)), "float32", n);
  const double bytes = double(n) * sizeof(T);
  const std::vector<double> q_one{0.5};
  std::vector<double> q_many(100);
  for (int j = 0; j < 100; ++j) q_many[size_t(j)] = j / 99.0;
  device_vector<double> out(100);
  // The ranks the linear interpolation reads: floor(q (n - 1)) and the next, per q.
  auto ranks_of = [&](const std::vector<double>& qs) {
    std::vector<int64_t> r;
    for (const double q : qs) {
      const int64_t lo = int64_t(std::floor(q * double(n - 1)));
      r.push_back(lo);
      r.push_back(std::min(lo + 1, n - 1));
    }
    return r;
  };
  std::optional<device_vector<unsigned char>> temp;
  std::optional<device_vector<T>> sorted;
  size_t temp_bytes = 0;
  const std::vector<int64_t> ranks_many = ranks_of(q_many);
  device_vector<int64_t> d_ranks = to_device(ranks_many);
  device_vector<T> picked(int64_t(ranks_many.size()));
  if (a.peers && bench::new_cccl_available()) {
    temp_bytes = std::max(peers::cub_sort_temp_bytes<T>(n), size_t(1));
    temp.emplace(int64_t(temp_bytes));
    sorted.emplace(n);
  }
  for (const std::string& dn : a.dists) {
    make_input<T>(d.data(), n, dn);
    // The reference: the elements of the ranks (gsearch's select, each checked by counts).
    device_vector<T> ref_vals(int64_t(ranks_many.size()));
    std::vector<T> ref(ranks_many.size());
    bool ref_ok = false;
    try {
      gsearch::select(cuda, span<const T>(d.data(), n), span<const int64_t>(ranks_many), ref_vals.view());
      ref = host_copy(ref_vals.data(), ref_vals.size());
      ref_ok = true;
      for (size_t j = 0; j < ranks_many.size() && ref_ok; ++j) ref_ok = has_rank<T>(d.data(), n, ref[j], ranks_many[j]);
    } catch (const std::exception& e) {
      std::printf("quantile %s: no reference (gsearch::select threw: %s)\n", dn.c_str(), e.what());
    }
    auto expected = [&](size_t j, double q) {  // numpy's linear method, in float64
      const double lo = ref[2 * j], hi = ref[2 * j + 1], g = q * double(n - 1) - std::floor(q * double(n - 1));
      return lo + g * (hi - lo);
    };
    auto close = [](double got, double want) {
      return got == want || std::fabs(got - want) <= 1e-6 * std::max(std::fabs(want), 1e-30);
    };
    auto check_q = [&](json& r, const std::vector<double>& qs, size_t first) {
      const std::vector<double> got = host_copy(out.data(), int64_t(qs.size()));
      r["result"] = got[0];
      r["expected"] = ref_ok ? json(expected(first, qs[0])) : json(nullptr);
      bool ok = ref_ok;
      for (size_t j = 0; ok && j < qs.size(); ++j) ok = close(got[j], expected(first + j, qs[j]));
      return ok;
    };
    // q = 0.5 is not among q_j = j / 99: its two ranks, checked the same way.
    const std::vector<int64_t> ranks_one = ranks_of(q_one);
    std::vector<T> ref_one(2);
    bool one_ok = false;
    try {
      device_vector<T> rv(2);
      gsearch::select(cuda, span<const T>(d.data(), n), span<const int64_t>(ranks_one), rv.view());
      ref_one = host_copy(rv.data(), 2);
      one_ok = has_rank<T>(d.data(), n, ref_one[0], ranks_one[0]) && has_rank<T>(d.data(), n, ref_one[1], ranks_one[1]);
    } catch (const std::exception&) {
    }
    const double g_one = 0.5 * double(n - 1) - std::floor(0.5 * double(n - 1));
    const double want_one = double(ref_one[0]) + g_one * (double(ref_one[1]) - double(ref_one[0]));
    auto base = [&](const char* impl, const char* op, const std::string& call, int64_t m) {
      json r = row("quantile", impl, op, call, "float32", dn, n);
      r["ranks"] = m;
      return r;
    };
    auto check_one = [&](json& r) {
      const double got = host_copy(out.data(), 1)[0];
      r["result"] = got;
      r["expected"] = one_ok ? json(want_one) : json(nullptr);
      return one_ok && close(got, want_one);
    };
    measure(base("gsearch", "quantile", "quantile linear", 1), bytes, roof, [&] {
      gsearch::quantile(cuda, span<const T>(d.data(), n), span<const double>(q_one), quantile_method::linear, false,
                        span<double>(out.data(), 1));
    }, check_one);
    measure(base("gsearch", "median", "median", 1), bytes, roof, [&] {
      gsearch::median(cuda, span<const T>(d.data(), n), false, span<double>(out.data(), 1));
    }, check_one);
    measure(base("gsearch", "quantile", "quantile linear", 100), bytes, roof, [&] {
      gsearch::quantile(cuda, span<const T>(d.data(), n), span<const double>(q_many), quantile_method::linear, false,
                        out.view());
    }, [&](json& r) { return check_q(r, q_many, 0); });
    if (!temp) continue;
    device_vector<int64_t> d_one = to_device(ranks_one);
    measure(base("cub", "quantile", "SortKeys+pick", 1), bytes, roof, [&] {
      peers::cub_sort_pick<T>(stream, temp->data(), temp_bytes, d.data(), sorted->data(), n, d_one.data(), 2,
                              picked.data());
    }, [&](json& r) {
      const std::vector<T> p = host_copy(picked.data(), 2);
      r["result"] = p[0];
      return one_ok && p[0] == ref_one[0] && p[1] == ref_one[1];
    });
    measure(base("cub", "quantile", "SortKeys+pick", 100), bytes, roof, [&] {
      peers::cub_sort_pick<T>(stream, temp->data(), temp_bytes, d.data(), sorted->data(), n, d_ranks.data(),
                              int64_t(ranks_many.size()), picked.data());
    }, [&](json& r) {
      const std::vector<T> p = host_copy(picked.data(), picked.size());
      r["result"] = p[0];
      return ref_ok && p == ref;
    });
  }
}

}  // namespace gsearch::bench::selection_bench
