// selection_bench, part "select": gsearch::select of one rank (r = n - 1024, "k=1024", and r = n/2,
// "k=n/2") and of 100 ranks at once (r_j = j (n - 1) / 99), on every distribution, float32 at each
// of --sizes and int32 at --n, against cub::DeviceTopK::MaxKeys with k = 1024 and k = n - n/2 and
// cub::DeviceRadixSort::SortKeys then a gather of the ranks ("sort, then pick"). Each value is
// checked by counts: #(x < v) <= r < #(x <= v). Inputs, rows and JSON: selection_bench.cu.

#include "selection_bench.hpp"

namespace gsearch::bench::selection_bench {

template <class T>
void runner::select_part() {
  const std::vector<int64_t> sizes = std::is_same_v<T, float> ? a.sizes : std::vector<int64_t>{a.n};
  for (const int64_t n : sizes) {
    device_vector<T> d(n);
    peers::generate<T>(stream, d.data(), n, dist::bits, a.seed);
    const double roof = roofline(d.data(), nullptr, n * int64_t(sizeof(T)), type_name<T>(), n);
    const double bytes = double(n) * sizeof(T);
    std::vector<int64_t> many(100);
    for (int64_t j = 0; j < 100; ++j) many[size_t(j)] = j * (n - 1) / 99;
    const int64_t k_small = std::min<int64_t>(1024, n), k_half = n - n / 2;
    device_vector<T> values(100);
    // The peers' buffers (CUB: DeviceTopK's k keys and temporary storage; the sort's output).
    std::optional<device_vector<T>> topk_out, sorted;
    std::optional<device_vector<unsigned char>> topk_temp, sort_temp;
    size_t topk_bytes = 0, sort_bytes = 0;
    device_vector<int64_t> d_ranks = to_device(many);
    if (a.peers && bench::new_cccl_available()) {
      topk_bytes = std::max({peers::cub_topk_temp_bytes<T>(n, k_small, true, false),
                             peers::cub_topk_temp_bytes<T>(n, k_half, true, false), size_t(1)});
      topk_temp.emplace(int64_t(topk_bytes));
      topk_out.emplace(k_half);
      sort_bytes = std::max(peers::cub_sort_temp_bytes<T>(n), size_t(1));
      sort_temp.emplace(int64_t(sort_bytes));
      sorted.emplace(n);
    }
    for (const std::string& dn : a.dists) {
      make_input<T>(d.data(), n, dn);
      auto base = [&](const char* impl, const std::string& call) {
        return row("select", impl, "select", call, type_name<T>(), dn, n);
      };
      // The values checked by rank, the first written to the row.
      auto check_values = [&](json& r, const std::vector<int64_t>& ranks, const std::vector<T>& got) {
        bool ok = got.size() == ranks.size();
        for (size_t j = 0; ok && j < ranks.size(); ++j) ok = has_rank<T>(d.data(), n, got[j], ranks[j]);
        r["result"] = got.empty() ? json(nullptr) : json(got[0]);
        return ok;
      };
      for (const int64_t k : {k_small, k_half}) {
        json r = base("gsearch", "select");
        r["k"] = k;
        r["ranks"] = 1;
        const std::vector<int64_t> rank{n - k};
        measure(r, bytes, roof, [&] {
          gsearch::select(cuda, span<const T>(d.data(), n), span<const int64_t>(rank), span<T>(values.data(), 1));
        }, [&](json& r) { return check_values(r, rank, host_copy(values.data(), 1)); });
      }
      {
        json r = base("gsearch", "select");
        r["ranks"] = 100;
        measure(r, bytes, roof, [&] {
          gsearch::select(cuda, span<const T>(d.data(), n), span<const int64_t>(many), values.view());
        }, [&](json& r) { return check_values(r, many, host_copy(values.data(), 100)); });
      }
      if (!topk_temp) continue;
      for (const int64_t k : {k_small, k_half}) {
        json r = base("cub", "DeviceTopK::MaxKeys");
        r["k"] = k;
        r["ranks"] = 1;
        measure(r, bytes, roof, [&] {
          peers::cub_topk<T>(stream, topk_temp->data(), topk_bytes, d.data(), n, k, true, topk_out->data(), nullptr);
        }, [&](json& r) {
          // The reference element of rank n - k (gsearch's select is not trusted here: counts).
          gsearch::select(cuda, span<const T>(d.data(), n), span<const int64_t>(std::vector<int64_t>{n - k}),
                          span<T>(values.data(), 1));
          const T v = host_copy(values.data(), 1)[0];
          if (!has_rank<T>(d.data(), n, v, n - k)) return false;
          const auto in_out = peers::count_around<T>(stream, topk_out->data(), k, v, scratch.data());
          const auto in_data = peers::count_around<T>(stream, d.data(), n, v, scratch.data());
          r["result"] = v;
          return in_out[0] == 0 && in_out[1] >= 1 && in_out[2] == in_data[2];
        });
      }
      for (const int64_t m : {int64_t(1), int64_t(100)}) {
        json r = base("cub", "SortKeys+pick");
        r["ranks"] = m;
        // One rank: the 50th of the 100 (49 (n - 1) / 99, near n/2); else all 100.
        const int64_t first = m == 1 ? 49 : 0;
        measure(r, bytes, roof, [&] {
          peers::cub_sort_pick<T>(stream, sort_temp->data(), sort_bytes, d.data(), sorted->data(), n,
                                  d_ranks.data() + first, m, values.data());
        }, [&](json& r) {
          return check_values(r, std::vector<int64_t>(many.begin() + first, many.begin() + first + m),
                              host_copy(values.data(), m));
        });
      }
    }
  }
}

template void runner::select_part<float>();
template void runner::select_part<int32_t>();

}  // namespace gsearch::bench::selection_bench
