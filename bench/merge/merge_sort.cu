// merge_bench: the sorted search (upper_bound of sorted needles), merge sort and sort (the radix
// sort of integer keys; keys, and keys with values), beside CUB, thrust and the roofline
// (merge_bench.cu's header comment).

#include "merge_bench.hpp"

namespace gsearch::bench::merge_bench {

void runner::sorted_search() {
  using T = int32_t;
  const int64_t k = a.search_keys, q = a.search_queries;
  auto K = generate<T>(k, [&](int64_t i) { return T(word(a.seed + 4, uint64_t(i)) >> 33); });
  auto Q = generate<T>(q, [&](int64_t j) { return T(word(a.seed + 5, uint64_t(j)) >> 33); });
  const auto dK = sort_on_device(K), dQ = sort_on_device(Q);
  record_input("search.keys", K.data(), k, 4, "sort(int32(word(S + 4, i) >> 33))");
  record_input("search.needles", Q.data(), q, 4, "sort(int32(word(S + 5, j) >> 33))");
  // The reference: a walk per chunk of needles from one binary search.
  std::vector<int32_t> ref(static_cast<size_t>(q));
  parallel_for(q, [&](int64_t b, int64_t e) {
    int64_t pos = std::upper_bound(K.begin(), K.end(), Q[size_t(b)]) - K.begin();
    for (int64_t j = b; j < e; ++j) {
      while (pos < k && K[size_t(pos)] <= Q[size_t(j)]) ++pos;
      ref[size_t(j)] = int32_t(pos);
    }
  });
  device_vector<int32_t> out(q);
  const double bytes = 4.0 * double(k) + 8.0 * double(q);
  const double roof = roofline("sorted_search", "sorted-search", {{dK.data(), nullptr, k * 4}, {dQ.data(), out.data(), q * 4}},
                               "int32", k, q, double(q), "G queries/s");
  auto check = [&] { return equal_parallel(to_host(out.data(), q), ref); };
  auto base = [&](const char* impl, const char* call) {
    json r = row("sorted_search", impl, "upper_bound", call, "int32");
    r["na"] = k;
    r["nb"] = q;
    r["out"] = q;
    return r;
  };
  const auto P = [&] { poison(out.data(), q); };
  const span<const T> keys(dK.data(), k), queries(dQ.data(), q);
  search_options sorted;
  sorted.queries_sorted = true;
  measure(base("gsearch", "queries_sorted"), bytes, double(q), "G queries/s", roof, P,
          [&] { gsearch::upper_bound(cuda, keys, queries, out.view(), sorted); }, check);
  measure(base("gsearch", "plain"), bytes, double(q), "G queries/s", roof, P,
          [&] { gsearch::upper_bound(cuda, keys, queries, out.view(), search_options{}); }, check);
  if (!a.peers) return;
  if (bench::new_cccl_available()) {
    const size_t tb = peers::cub_upper_bound_sorted<T>(nullptr, nullptr, 0, dK.data(), k, dQ.data(), q, out.data());
    void* tp = cub_temp(tb);
    measure(base("cub", "DeviceFind::UpperBoundSortedValues"), bytes, double(q), "G queries/s", roof, P,
            [&] { peers::cub_upper_bound_sorted<T>(nullptr, tp, tb, dK.data(), k, dQ.data(), q, out.data()); }, check);
  }
  measure(base("thrust", "upper_bound"), bytes, double(q), "G queries/s", roof, P,
          [&] { peers::thrust_upper_bound<T>(nullptr, dK.data(), k, dQ.data(), q, out.data()); }, check);
}

// ---- merge sort ---------------------------------------------------------------------------

void runner::sort_keys() {
  using T = int32_t;
  const int64_t n = a.sort_n;
  const auto X = generate<T>(n, [&](int64_t i) { return T(uint32_t(word(a.seed + 6, uint64_t(i)) >> 32)); });
  record_input("sort.keys", X.data(), n, 4, "int32(word(S + 6, i) >> 32)");
  const auto dX = to_device(X);
  std::vector<T> ref = X;
  sort_on_device(ref);
  device_vector<T> out(n);
  const double bytes = 2.0 * double(n) * sizeof(T);
  auto check = [&] { return equal_parallel(to_host(out.data(), n), ref); };
  auto base = [&](const char* impl, const char* call) {
    json r = row("sort", impl, "sort", call, "int32");
    r["na"] = n;
    r["out"] = n;
    return r;
  };
  const auto P = [&] { poison(out.data(), n); };
  measure(base("gsearch", "merge_sort"), bytes, double(n), "G keys/s", 0, P,
          [&] { gsearch::merge_sort(cuda, span<const T>(dX.data(), n), out.view()); }, check);
  measure(base("gsearch", "sort"), bytes, double(n), "G keys/s", 0, P,
          [&] { gsearch::sort(cuda, span<const T>(dX.data(), n), out.view()); }, check);
  if (!a.peers) return;
  if (bench::new_cccl_available()) {
    size_t tb = peers::cub_merge_sort_keys<T>(nullptr, nullptr, 0, dX.data(), out.data(), n);
    void* tp = cub_temp(tb);
    measure(base("cub", "DeviceMergeSort::SortKeysCopy"), bytes, double(n), "G keys/s", 0, P,
            [&] { peers::cub_merge_sort_keys<T>(nullptr, tp, tb, dX.data(), out.data(), n); }, check);
    tb = peers::cub_radix_sort_keys<T>(nullptr, nullptr, 0, dX.data(), out.data(), n);
    tp = cub_temp(tb);
    measure(base("cub", "DeviceRadixSort::SortKeys"), bytes, double(n), "G keys/s", 0, P,
            [&] { peers::cub_radix_sort_keys<T>(nullptr, tp, tb, dX.data(), out.data(), n); }, check);
  }
  measure(base("thrust", "sort"), bytes, double(n), "G keys/s", 0, P,
          [&] { peers::thrust_sort<T>(nullptr, out.data(), n); }, check, [&] {
            GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out.data(), dX.data(), size_t(n) * 4, cudaMemcpyDeviceToDevice));
          });
}

void runner::sort_pairs() {
  using T = int32_t;
  const int64_t n = a.sort_n;
  const auto X = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 7, uint64_t(i)) >> 44); });
  record_input("sort.pairs.keys", X.data(), n, 4, "int32(word(S + 7, i) >> 44); values i");
  const auto V = generate<int64_t>(n, [](int64_t i) { return i; });
  const auto dX = to_device(X);
  const auto dV = to_device(V);
  std::vector<T> ref = X;
  sort_on_device(ref);
  device_vector<T> out(n);
  device_vector<int64_t> out_v(n);
  const double bytes = 2.0 * double(n) * (sizeof(T) + 8);
  // The stable permutation: keys sorted, each value the index of its key, ascending per key.
  auto check = [&] {
    const auto k = to_host(out.data(), n);
    const auto v = to_host(out_v.data(), n);
    if (!equal_parallel(k, ref)) return false;
    return parallel_all(n, [&](int64_t j) {
      const int64_t x = v[size_t(j)];
      if (x < 0 || x >= n || X[size_t(x)] != k[size_t(j)]) return false;
      return j == 0 || k[size_t(j - 1)] != k[size_t(j)] || v[size_t(j - 1)] < x;
    });
  };
  auto base = [&](const char* impl, const char* call) {
    json r = row("sort", impl, "sort", call, "int32");
    r["values"] = "int64";
    r["na"] = n;
    r["out"] = n;
    return r;
  };
  const auto P = [&] {
    poison(out.data(), n);
    poison(out_v.data(), n);
  };
  measure(base("gsearch", "merge_sort"), bytes, double(n), "G keys/s", 0, P, [&] {
    gsearch::merge_sort(cuda, span<const T>(dX.data(), n), span<const int64_t>(dV.data(), n), out.view(), out_v.view());
  }, check);
  measure(base("gsearch", "sort"), bytes, double(n), "G keys/s", 0, P, [&] {
    gsearch::sort(cuda, span<const T>(dX.data(), n), span<const int64_t>(dV.data(), n), out.view(), out_v.view());
  }, check);
  if (!a.peers) return;
  if (bench::new_cccl_available()) {
    size_t tb = peers::cub_merge_sort_pairs<T>(nullptr, nullptr, 0, dX.data(), dV.data(), out.data(), out_v.data(), n);
    void* tp = cub_temp(tb);
    measure(base("cub", "DeviceMergeSort::SortPairsCopy"), bytes, double(n), "G keys/s", 0, P, [&] {
      peers::cub_merge_sort_pairs<T>(nullptr, tp, tb, dX.data(), dV.data(), out.data(), out_v.data(), n);
    }, check);
    tb = peers::cub_radix_sort_pairs<T>(nullptr, nullptr, 0, dX.data(), dV.data(), out.data(), out_v.data(), n);
    tp = cub_temp(tb);
    measure(base("cub", "DeviceRadixSort::SortPairs"), bytes, double(n), "G keys/s", 0, P, [&] {
      peers::cub_radix_sort_pairs<T>(nullptr, tp, tb, dX.data(), dV.data(), out.data(), out_v.data(), n);
    }, check);
  }
  measure(base("thrust", "sort_by_key"), bytes, double(n), "G keys/s", 0, P,
          [&] { peers::thrust_sort_by_key<T>(nullptr, out.data(), out_v.data(), n); }, check, [&] {
            GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out.data(), dX.data(), size_t(n) * 4, cudaMemcpyDeviceToDevice));
            GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out_v.data(), dV.data(), size_t(n) * 8, cudaMemcpyDeviceToDevice));
          });
}

}  // namespace gsearch::bench::merge_bench
