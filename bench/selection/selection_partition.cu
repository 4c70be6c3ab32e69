// selection_bench, part "partition": gsearch::partition (numpy.partition: the whole array
// rewritten) with kth = n/2 and with 100 kth (kth_j = j (n - 1) / 99, "ranks": 100) at --n, every
// distribution, float32 and int32, against the copy roofline and cub::DeviceRadixSort::SortKeys
// into the output (a sorted array is partitioned). Checked: the output a permutation (equal
// order-free hashes), out[kth] of rank kth (counts) and partitioned around it, for every kth.
// Inputs, rows and JSON: selection_bench.cu.

#include "selection_bench.hpp"

namespace gsearch::bench::selection_bench {

template <class T>
void runner::partition_part() {
  const int64_t n = a.n, kth = n / 2;
  device_vector<T> d(n), out(n);
  peers::generate<T>(stream, d.data(), n, dist::bits, a.seed);
  roofline(d.data(), nullptr, n * int64_t(sizeof(T)), type_name<T>(), n);
  const double roof = roofline(d.data(), out.data(), n * int64_t(sizeof(T)), type_name<T>(), n);
  const double bytes = 2.0 * double(n) * sizeof(T);
  std::optional<device_vector<unsigned char>> temp;
  size_t temp_bytes = 0;
  if (a.peers && bench::new_cccl_available()) {
    temp_bytes = std::max(peers::cub_sort_temp_bytes<T>(n), size_t(1));
    temp.emplace(int64_t(temp_bytes));
  }
  std::vector<int64_t> spread;  // numpy's 100 evenly spaced kth
  for (int64_t j = 0; j < 100; ++j) spread.push_back(j * (n - 1) / 99);
  for (const std::string& dn : a.dists) {
    make_input<T>(d.data(), n, dn);
    const uint64_t want = peers::multiset_hash<T>(stream, d.data(), n, reinterpret_cast<uint64_t*>(scratch.data()));
    const auto check_at = [&](json& r, const std::vector<int64_t>& ks) {
      bool ok =
          peers::multiset_hash<T>(stream, out.data(), n, reinterpret_cast<uint64_t*>(scratch.data())) == want;
      for (const int64_t k : ks) {
        const T v = host_copy(out.data() + k, 1)[0];
        if (k == ks[ks.size() / 2]) r["result"] = v;
        ok = ok && has_rank<T>(d.data(), n, v, k) &&
             peers::partitioned_at<T>(stream, out.data(), n, k, scratch.data());
      }
      return ok;
    };
    const std::vector<int64_t> one{kth};
    auto check = [&](json& r) { return check_at(r, one); };
    for (const std::vector<int64_t>* kths :
         std::initializer_list<const std::vector<int64_t>*>{&one, &spread}) {
      json r = row("partition", "gsearch", "partition", "partition", type_name<T>(), dn, n);
      r["k"] = kth;
      r["ranks"] = int64_t(kths->size());
      GSEARCH_CUDA_CHECK(cudaMemset(out.data(), 0x7f, size_t(n) * sizeof(T)));
      measure(
          r, bytes, roof,
          [&] {
            gsearch::partition(cuda, span<const T>(d.data(), n), span<const int64_t>(*kths), out.view());
          },
          [&](json& x) { return check_at(x, *kths); });
    }
    if (!temp) continue;
    json c = row("partition", "cub", "partition", "SortKeys", type_name<T>(), dn, n);
    c["k"] = kth;
    GSEARCH_CUDA_CHECK(cudaMemset(out.data(), 0x7f, size_t(n) * sizeof(T)));
    measure(c, bytes, roof, [&] {
      peers::cub_sort_pick<T>(stream, temp->data(), temp_bytes, d.data(), out.data(), n, nullptr, 0, nullptr);
    }, check);
  }
}

template void runner::partition_part<float>();
template void runner::partition_part<int32_t>();

}  // namespace gsearch::bench::selection_bench
