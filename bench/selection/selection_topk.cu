// selection_bench, part "topk": gsearch::topk (1-D, largest, sorted and unsorted) for each --ks at
// --n, on --topk-dists, float32 and int32, against cub::DeviceTopK::MaxPairs (the element index as
// the value: torch.topk's indices) and cub::DeviceRadixSort::SortPairsDescending of (data, iota)
// (once per input: its time does not depend on k). Checked on the host (runner::topk_ok). Inputs,
// rows and JSON: selection_bench.cu.

#include "selection_bench.hpp"

namespace gsearch::bench::selection_bench {

template <class T>
void runner::topk_part() {
  const int64_t n = a.n;
  device_vector<T> d(n);
  peers::generate<T>(stream, d.data(), n, dist::bits, a.seed);
  const double roof = roofline(d.data(), nullptr, n * int64_t(sizeof(T)), type_name<T>(), n);
  const double bytes = double(n) * sizeof(T);
  int64_t kmax = 0;
  for (const int64_t k : a.ks) kmax = std::max(kmax, std::min(k, n));
  device_vector<T> vals(kmax);
  device_vector<int64_t> idx(kmax);
  std::optional<device_vector<unsigned char>> temp;
  size_t temp_bytes = 0;
  std::optional<device_vector<T>> sort_keys;
  std::optional<device_vector<int64_t>> sort_idx, iota;
  if (a.peers && bench::new_cccl_available()) {
    for (const int64_t k : a.ks)
      temp_bytes = std::max(temp_bytes, peers::cub_topk_temp_bytes<T>(n, std::min(k, n), true, true));
    temp_bytes = std::max({temp_bytes, peers::cub_sort_pairs_temp_bytes<T>(n), size_t(1)});
    temp.emplace(int64_t(temp_bytes));
    sort_keys.emplace(n);
    sort_idx.emplace(n);
    std::vector<int64_t> h(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) h[size_t(i)] = i;
    iota.emplace(to_device(h));
  }
  for (const std::string& dn : a.topk_dists) {
    make_input<T>(d.data(), n, dn);
    const std::vector<T> host = host_copy(d.data(), n);
    auto check = [&](const T* v, const int64_t* ix, int64_t k, bool sorted) {
      return topk_ok<T>(host.data(), n, host_copy(v, k), host_copy(ix, k), -1, sorted);
    };
    for (const int64_t k0 : a.ks) {
      const int64_t k = std::min(k0, n);
      for (const bool sorted : {true, false}) {
        json r = row("topk", "gsearch", "topk", sorted ? "topk sorted" : "topk unsorted", type_name<T>(), dn, n);
        r["k"] = k;
        measure(r, bytes, roof, [&] {
          gsearch::topk(cuda, span<const T>(d.data(), n), 1, k, topk_options{true, sorted},
                        span<T>(vals.data(), k), span<int64_t>(idx.data(), k));
        }, [&](json&) { return check(vals.data(), idx.data(), k, sorted); });
      }
      if (temp) {
        json r = row("topk", "cub", "topk", "DeviceTopK::MaxPairs", type_name<T>(), dn, n);
        r["k"] = k;
        measure(r, bytes, roof, [&] {
          peers::cub_topk<T>(stream, temp->data(), temp_bytes, d.data(), n, k, true, vals.data(), idx.data());
        }, [&](json&) { return check(vals.data(), idx.data(), k, false); });
      }
    }
    if (temp) {
      json r = row("topk", "cub", "topk", "SortPairsDescending", type_name<T>(), dn, n);
      r["k"] = kmax;
      measure(r, bytes, roof, [&] {
        peers::cub_sort_pairs_desc<T>(stream, temp->data(), temp_bytes, d.data(), iota->data(), sort_keys->data(),
                                      sort_idx->data(), n);
      }, [&](json&) { return check(sort_keys->data(), sort_idx->data(), kmax, true); });
    }
  }
}

template void runner::topk_part<float>();
template void runner::topk_part<int32_t>();

}  // namespace gsearch::bench::selection_bench
