// merge_bench: the joins (inner, left, full, semi of 2^24 x 2^24 keys, and the inner join beyond
// 2^31 rows) beside the CUB-built sort-merge join, checked by their row counts and sampled rows
// (merge_bench.cu's header comment).

#include "merge_bench.hpp"

namespace gsearch::bench::merge_bench {

namespace {

/// Rows each join kind writes, from the key counts of sorted left and right.
struct join_counts {
  int64_t rows[6] = {0, 0, 0, 0, 0, 0};  // by join_kind
};
template <class T>
join_counts count_join(const std::vector<T>& l, const std::vector<T>& r) {
  join_counts c;
  size_t i = 0, j = 0;
  while (i < l.size() || j < r.size()) {
    T key;
    if (j == r.size() || (i < l.size() && l[i] < r[j]))
      key = l[i];
    else
      key = r[j];
    int64_t cl = 0, cr = 0;
    while (i < l.size() && l[i] == key) ++i, ++cl;
    while (j < r.size() && r[j] == key) ++j, ++cr;
    c.rows[0] += cl * cr;                                 // inner
    c.rows[1] += cr > 0 ? cl * cr : cl;                   // left
    c.rows[2] += cl > 0 ? cl * cr : cr;                   // right
    c.rows[3] += cl > 0 && cr > 0 ? cl * cr : cl + cr;    // full
    c.rows[4] += cr > 0 ? cl : 0;                         // semi
    c.rows[5] += cr > 0 ? 0 : cl;                         // anti
  }
  return c;
}

join_kind join_kind_of(const std::string& s) {
  for (int k = 0; k < 6; ++k)
    if (s == to_string(join_kind(k))) return join_kind(k);
  throw std::runtime_error("unknown join kind " + s);
}

}  // namespace

/// `samples` rows, evenly spaced (the first and last included), copied with one strided copy
/// per map; checks each row, and for gsearch (`ordered`) that the sampled rows ascend by key.
template <class T>
bool runner::check_join(join_kind kind, const std::vector<T>& L, const std::vector<T>& R, const int64_t* li,
                        const int64_t* ri, int64_t rows, bool ordered) {
  if (rows == 0) return true;
  const int64_t samples = std::min<int64_t>(rows, 1 << 16);
  const int64_t stride = samples > 1 ? (rows - 1) / (samples - 1) : 1;
  std::vector<int64_t> hl(static_cast<size_t>(samples)), hr(static_cast<size_t>(samples), -2);
  auto gather = [&](const int64_t* d, std::vector<int64_t>& h) {
    GSEARCH_CUDA_CHECK(cudaMemcpy2D(h.data(), 8, d, size_t(stride) * 8, 8, size_t(samples), cudaMemcpyDeviceToHost));
    h.back() = 0;
    GSEARCH_CUDA_CHECK(cudaMemcpy(&h.back(), d + rows - 1, 8, cudaMemcpyDeviceToHost));
  };
  gather(li, hl);
  const bool left_only = core::join_left_only(kind);
  if (!left_only) gather(ri, hr);
  const int64_t nl = int64_t(L.size()), nr = int64_t(R.size());
  auto has = [](const std::vector<T>& v, T x) { return std::binary_search(v.begin(), v.end(), x); };
  T last_key{};
  for (int64_t s = 0; s < samples; ++s) {
    const int64_t i = hl[size_t(s)], j = hr[size_t(s)];
    T key;
    if (left_only) {
      if (i < 0 || i >= nl) return false;
      key = L[size_t(i)];
      if (has(R, key) != (kind == join_kind::semi)) return false;
    } else if (i >= 0 && j >= 0) {
      if (i >= nl || j >= nr || L[size_t(i)] != R[size_t(j)]) return false;
      key = L[size_t(i)];
    } else if (i >= 0 && j == -1) {
      if (i >= nl || kind == join_kind::inner || kind == join_kind::right || has(R, L[size_t(i)])) return false;
      key = L[size_t(i)];
    } else if (i == -1 && j >= 0) {
      if (j >= nr || kind == join_kind::inner || kind == join_kind::left || has(L, R[size_t(j)])) return false;
      key = R[size_t(j)];
    } else {
      return false;
    }
    if (ordered && s > 0 && key < last_key) return false;
    last_key = key;
  }
  return true;
}

template <class T>
void runner::join_case(const std::string& input, const std::vector<T>& L, const std::vector<T>& R,
                       const std::vector<join_kind>& kinds) {
  const int64_t nl = int64_t(L.size()), nr = int64_t(R.size());
  const join_counts expect = count_join(L, R);
  int64_t capacity = 1;
  for (join_kind k : kinds) capacity = std::max(capacity, expect.rows[int(k)]);
  bool need_right = false;
  for (join_kind k : kinds) need_right |= !core::join_left_only(k);
  const auto dL = to_device(L);
  const auto dR = to_device(R);
  device_vector<int64_t> li(capacity), ri(need_right ? capacity : 0);
  for (join_kind kind : kinds) {
    const int64_t rows = expect.rows[int(kind)];
    const bool left_only = core::join_left_only(kind);
    const double bytes = double(nl + nr) * sizeof(T) + double(rows) * (left_only ? 8 : 16);
    int64_t got = -1;
    auto base = [&](const char* impl, const char* call) {
      json r = row("join", impl, to_string(kind), call, "int32");
      r["input"] = input;
      r["na"] = nl;
      r["nb"] = nr;
      r["out"] = rows;
      r["includes_sync"] = true;
      return r;
    };
    const auto P = [&] {
      poison(li.data(), capacity);
      if (need_right) poison(ri.data(), capacity);
      got = -1;
    };
    const span<int64_t> rspan = left_only ? span<int64_t>() : span<int64_t>(ri.data(), capacity);
    measure(base("gsearch", "join"), bytes, double(rows), "G rows/s", 0, P, [&] {
      got = gsearch::join(cuda, kind, span<const T>(dL.data(), nl), span<const T>(dR.data(), nr),
                          span<int64_t>(li.data(), capacity), rspan, merge_options{false});
    }, [&] { return got == rows && check_join(kind, L, R, li.data(), ri.data(), rows, true); });
    if (!a.peers || !bench::new_cccl_available() || kind == join_kind::right) continue;
    try {
      const size_t tb = peers::cub_join_temp_bytes<T>(int(kind), dL.data(), nl, dR.data(), nr);
      void* tp = cub_temp(tb);
      measure(base("cub-join", "LowerBound/UpperBoundSortedValues+ExclusiveSum+expand"), bytes, double(rows),
              "G rows/s", 0, P, [&] {
                got = peers::cub_join<T>(nullptr, tp, tb, int(kind), dL.data(), nl, dR.data(), nr, li.data(),
                                         need_right ? ri.data() : nullptr, capacity);
              }, [&] { return got == rows && check_join(kind, L, R, li.data(), ri.data(), rows, false); });
    } catch (const std::exception& e) {
      error(base("cub-join", "setup"), e);
    }
  }
}

void runner::joins() {
  using T = int32_t;
  std::vector<join_kind> kinds;
  for (const auto& s : a.joins) kinds.push_back(join_kind_of(s));
  const int64_t n = a.join_n;
  temp = device_vector<char>();  // the sorts' CUB storage: the joins need the memory
  {
    const uint64_t R = uint64_t(a.join_range);
    auto L = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 8, uint64_t(i)) % R); });
    auto Rt = generate<T>(n, [&](int64_t j) { return T(word(a.seed + 9, uint64_t(j)) % R); });
    sort_on_device(L);
    sort_on_device(Rt);
    record_input("join.left", L.data(), n, 4, "sort(int32(word(S + 8, i) mod R)), R = " + std::to_string(R));
    record_input("join.right", Rt.data(), n, 4, "sort(int32(word(S + 9, j) mod R)), R = " + std::to_string(R));
    join_case<T>("random", L, Rt, kinds);
  }
  const bool want_large = a.large_join == "on" || (a.large_join == "auto" && !a.quick);
  if (!want_large) return;
  const uint64_t R = uint64_t(a.large_join_range);
  auto L = generate<T>(n, [&](int64_t i) { return T(word(a.seed + 10, uint64_t(i)) % R); });
  auto Rt = generate<T>(n, [&](int64_t j) { return T(word(a.seed + 11, uint64_t(j)) % R); });
  sort_on_device(L);
  sort_on_device(Rt);
  const int64_t rows = count_join(L, Rt).rows[0];
  size_t free_b = 0, total_b = 0;
  GSEARCH_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const double need = double(rows) * 16 + double(n) * 4 * 64 + (1ull << 30);  // maps + workspaces + 1 GiB
  if (need > double(free_b)) {
    skip("join inner, large (" + std::to_string(rows) + " rows)",
         "needs about " + std::to_string(int64_t(need / 1e9)) + " GB of device memory, " +
             std::to_string(int64_t(double(free_b) / 1e9)) + " GB free");
    return;
  }
  record_input("join.large.left", L.data(), n, 4, "sort(int32(word(S + 10, i) mod R)), R = " + std::to_string(R));
  record_input("join.large.right", Rt.data(), n, 4, "sort(int32(word(S + 11, j) mod R)), R = " + std::to_string(R));
  join_case<T>("large", L, Rt, {join_kind::inner});
}

}  // namespace gsearch::bench::merge_bench
