// merge_bench: merge (int32, int64, int32 keys with int64 values) and the four multiset set
// operations on the random inputs, and both on the adversarial inputs, beside CUB, thrust and the
// copy roofline (merge_bench.cu's header comment has the inputs and the rows).

#include "merge_bench.hpp"

namespace gsearch::bench::merge_bench {

namespace {

const char* const set_op_calls[] = {"set_intersection", "set_union", "set_difference", "set_symmetric_difference"};

/// The stable merge of sorted keys with values (ties: a first), as gsearch::merge documents.
template <class T>
void merge_pairs_host(const std::vector<T>& a, const std::vector<int64_t>& av, const std::vector<T>& b,
                      const std::vector<int64_t>& bv, std::vector<T>& out, std::vector<int64_t>& out_v) {
  out.resize(a.size() + b.size());
  out_v.resize(out.size());
  size_t i = 0, j = 0, k = 0;
  while (i < a.size() && j < b.size()) {
    if (b[j] < a[i]) {
      out[k] = b[j];
      out_v[k++] = bv[j++];
    } else {
      out[k] = a[i];
      out_v[k++] = av[i++];
    }
  }
  for (; i < a.size(); ++i, ++k) out[k] = a[i], out_v[k] = av[i];
  for (; j < b.size(); ++j, ++k) out[k] = b[j], out_v[k] = bv[j];
}

template <class T>
std::vector<T> set_op_host(int op, const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> out;
  out.reserve(size_t(core::set_op_bound(set_op(op), int64_t(a.size()), int64_t(b.size()))));
  auto it = std::back_inserter(out);
  switch (op) {
    case 0: std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), it); break;
    case 1: std::set_union(a.begin(), a.end(), b.begin(), b.end(), it); break;
    case 2: std::set_difference(a.begin(), a.end(), b.begin(), b.end(), it); break;
    case 3: std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), it); break;
  }
  return out;
}

}  // namespace

template <class T>
void runner::merge_keys(const char* part, const char* dtype, const std::string& input,
                        const std::vector<T>& A, const std::vector<T>& B, const T* dA, const T* dB,
                        bool with_peers, double roof_gbps) {
  const int64_t na = int64_t(A.size()), nb = int64_t(B.size()), n = na + nb;
  std::vector<T> ref(static_cast<size_t>(n));
  std::merge(A.begin(), A.end(), B.begin(), B.end(), ref.begin());
  device_vector<T> out(n);
  const double bytes = 2.0 * double(n) * sizeof(T);
  auto check = [&] { return equal_parallel(to_host(out.data(), n), ref); };
  auto base = [&](const char* impl, const char* call) {
    json r = row(part, impl, "merge", call, dtype);
    r["input"] = input;
    r["na"] = na;
    r["nb"] = nb;
    r["out"] = n;
    return r;
  };
  const auto P = [&] { poison(out.data(), n); };
  measure(base("gsearch", "merge"), bytes, double(n), "G elements/s", roof_gbps, P, [&] {
    gsearch::merge(cuda, span<const T>(dA, na), span<const T>(dB, nb), out.view(), merge_options{false});
  }, check);
  if (with_peers && bench::new_cccl_available()) {
    const size_t tb = peers::cub_merge_keys<T>(nullptr, nullptr, 0, dA, na, dB, nb, out.data());
    void* tp = cub_temp(tb);
    measure(base("cub", "DeviceMerge::MergeKeys"), bytes, double(n), "G elements/s", roof_gbps, P,
            [&] { peers::cub_merge_keys<T>(nullptr, tp, tb, dA, na, dB, nb, out.data()); }, check);
  }
  if (with_peers && a.peers && input == "random")
    measure(base("thrust", "merge"), bytes, double(n), "G elements/s", roof_gbps, P,
            [&] { peers::thrust_merge<T>(nullptr, dA, na, dB, nb, out.data()); }, check);
}

void runner::merge_pairs(const std::vector<int32_t>& A, const std::vector<int32_t>& B, const int32_t* dA, const int32_t* dB) {
  using T = int32_t;
  const int64_t na = int64_t(A.size()), nb = int64_t(B.size()), n = na + nb;
  const auto av = generate<int64_t>(na, [](int64_t i) { return i; });
  const auto bv = generate<int64_t>(nb, [&](int64_t j) { return na + j; });
  const auto dav = to_device(av);
  const auto dbv = to_device(bv);
  std::vector<T> ref;
  std::vector<int64_t> ref_v;
  merge_pairs_host(A, av, B, bv, ref, ref_v);
  device_vector<T> out(n);
  device_vector<int64_t> out_v(n);
  const double bytes = 2.0 * double(n) * (sizeof(T) + 8);
  const double roof = roofline("merge", "merge-int32-int64", {{dA, out.data(), na * 4}, {dB, out.data() + na, nb * 4},
                                                               {dav.data(), out_v.data(), na * 8},
                                                               {dbv.data(), out_v.data() + na, nb * 8}},
                               "int32", na, nb, double(n), "G elements/s", "int64");
  auto check = [&] {
    return equal_parallel(to_host(out.data(), n), ref) && equal_parallel(to_host(out_v.data(), n), ref_v);
  };
  auto base = [&](const char* impl, const char* call) {
    json r = row("merge", impl, "merge", call, "int32");
    r["values"] = "int64";
    r["na"] = na;
    r["nb"] = nb;
    r["out"] = n;
    return r;
  };
  const auto P = [&] {
    poison(out.data(), n);
    poison(out_v.data(), n);
  };
  measure(base("gsearch", "merge"), bytes, double(n), "G elements/s", roof, P, [&] {
    gsearch::merge(cuda, span<const T>(dA, na), span<const int64_t>(dav.data(), na), span<const T>(dB, nb),
                   span<const int64_t>(dbv.data(), nb), out.view(), out_v.view(), merge_options{false});
  }, check);
  if (!a.peers) return;
  if (bench::new_cccl_available()) {
    const size_t tb = peers::cub_merge_pairs<T>(nullptr, nullptr, 0, dA, dav.data(), na, dB, dbv.data(), nb,
                                                out.data(), out_v.data());
    void* tp = cub_temp(tb);
    measure(base("cub", "DeviceMerge::MergePairs"), bytes, double(n), "G elements/s", roof, P, [&] {
      peers::cub_merge_pairs<T>(nullptr, tp, tb, dA, dav.data(), na, dB, dbv.data(), nb, out.data(), out_v.data());
    }, check);
  }
  measure(base("thrust", "merge_by_key"), bytes, double(n), "G elements/s", roof, P, [&] {
    peers::thrust_merge_by_key<T>(nullptr, dA, dav.data(), na, dB, dbv.data(), nb, out.data(), out_v.data());
  }, check);
}

template <class T>
void runner::set_ops(const char* part, const std::string& input, const std::vector<T>& A,
                     const std::vector<T>& B, const T* dA, const T* dB, bool with_peers, double roof_gbps) {
  const int64_t na = int64_t(A.size()), nb = int64_t(B.size());
  device_vector<T> out(std::max<int64_t>(na + nb, 1));
  for (int op = 0; op < 4; ++op) {
    const std::vector<T> ref = set_op_host(op, A, B);
    const int64_t m = int64_t(ref.size());
    int64_t got = -1;
    auto check = [&] { return got == m && equal_parallel(to_host(out.data(), m), ref); };
    auto base = [&](const char* impl, const std::string& call) {
      json r = row(part, impl, set_op_names[op], call, "int32");
      r["input"] = input;
      r["na"] = na;
      r["nb"] = nb;
      r["out"] = m;
      r["includes_sync"] = true;
      return r;
    };
    const double bytes = double(na + nb + m) * sizeof(T);
    const auto P = [&] {
      poison(out.data(), na + nb);
      got = -1;
    };
    measure(base("gsearch", "set_operation"), bytes, double(na + nb), "G elements/s", roof_gbps, P, [&] {
      got = gsearch::set_operation(cuda, set_op(op), span<const T>(dA, na), span<const T>(dB, nb), out.view(),
                                   merge_options{false});
    }, check);
    if (!with_peers || !a.peers) continue;
    if (bench::new_cccl_available())
      measure(base("thrust36", set_op_calls[op]), bytes, double(na + nb), "G elements/s", roof_gbps, P,
              [&] { got = peers::thrust36_set_op<T>(nullptr, op, dA, na, dB, nb, out.data()); }, check);
    measure(base("thrust", set_op_calls[op]), bytes, double(na + nb), "G elements/s", roof_gbps, P,
            [&] { got = peers::thrust_set_op<T>(nullptr, op, dA, na, dB, nb, out.data()); }, check);
  }
}

void runner::random_int32() {
  using T = int32_t;
  const int64_t n = a.n;
  auto A = generate<T>(n, [&](int64_t i) { return T(word(a.seed, uint64_t(i)) >> 37); });
  auto B = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 1, uint64_t(i)) >> 37); });
  const auto dA = sort_on_device(A), dB = sort_on_device(B);
  record_input("merge.a", A.data(), n, 4, "sort(int32(word(S, i) >> 37))");
  record_input("merge.b", B.data(), n, 4, "sort(int32(word(S + 1, j) >> 37))");
  {
    device_vector<T> out(2 * n);
    merge_roof_gbps = roofline("merge", "merge-int32", {{dA.data(), out.data(), n * 4}, {dB.data(), out.data() + n, n * 4}},
                               "int32", n, n, double(2 * n), "G elements/s");
  }
  if (a.has("merge")) {
    merge_keys<T>("merge", "int32", "random", A, B, dA.data(), dB.data(), a.peers, merge_roof_gbps);
    merge_pairs(A, B, dA.data(), dB.data());
  }
  if (a.has("set_ops")) set_ops<T>("set_ops", "random", A, B, dA.data(), dB.data(), true, merge_roof_gbps);
}

void runner::random_int64() {
  using T = int64_t;
  const int64_t n = a.n;
  auto A = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 2, uint64_t(i)) >> 1); });
  auto B = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 3, uint64_t(i)) >> 1); });
  const auto dA = sort_on_device(A), dB = sort_on_device(B);
  record_input("merge64.a", A.data(), n, 8, "sort(int64(word(S + 2, i) >> 1))");
  record_input("merge64.b", B.data(), n, 8, "sort(int64(word(S + 3, j) >> 1))");
  double roof;
  {
    device_vector<T> out(2 * n);
    roof = roofline("merge", "merge-int64", {{dA.data(), out.data(), n * 8}, {dB.data(), out.data() + n, n * 8}},
                    "int64", n, n, double(2 * n), "G elements/s");
  }
  merge_keys<T>("merge", "int64", "random", A, B, dA.data(), dB.data(), a.peers, roof);
}

// ---- adversarial inputs -------------------------------------------------------------------

void runner::adversarial() {
  using T = int32_t;
  const int64_t n = a.n;
  // The random inputs again, for disjoint and one-empty.
  auto RA = generate<T>(n, [&](int64_t i) { return T(word(a.seed, uint64_t(i)) >> 37); });
  auto RB = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 1, uint64_t(i)) >> 37); });
  sort_on_device(RA);
  sort_on_device(RB);
  for (const char* input : {"all-equal", "long-runs", "disjoint", "one-empty", "interleaved"}) {
    const std::string in = input;
    std::vector<T> A, B;
    if (in == "all-equal") {
      A.assign(size_t(n), 7);
      B.assign(size_t(n), 7);
    } else if (in == "long-runs") {
      A = generate<T>(n, [](int64_t i) { return T(i >> 16); });
      B = generate<T>(n, [](int64_t j) { return T(j >> 15); });
    } else if (in == "disjoint") {
      A = RA;
      B = generate<T>(n, [&](int64_t j) { return T(RB[size_t(j)] + (T(1) << 27)); });
    } else if (in == "one-empty") {
      A.resize(size_t(2 * n));
      std::merge(RA.begin(), RA.end(), RB.begin(), RB.end(), A.begin());
    } else {
      A = generate<T>(n, [](int64_t i) { return T(2 * i); });
      B = generate<T>(n, [](int64_t j) { return T(2 * j + 1); });
    }
    const auto dA = to_device(A), dB = to_device(B);
    merge_keys<T>("adversarial", "int32", in, A, B, dA.data(), dB.data(), a.peers, merge_roof_gbps);
    set_ops<T>("adversarial", in, A, B, dA.data(), dB.data(), false, merge_roof_gbps);
  }
}

}  // namespace gsearch::bench::merge_bench
