// The merge-like kernels (merge_kernel.cuh, sorted_search_kernel.cuh, set_ops_kernel.cuh) at
// several tile shapes (threads x items per thread; some also with registers capped for 5, 6 or 8
// resident blocks per SM, __launch_bounds__' minimum: "min_blocks"), beside a copy roofline (16-byte loads and
// stores, each input element read once and each output written once): merge of two sorted 2^26
// keys, without and with int64 values ("merge-pairs"), merge sort of 2^27 random keys
// ("merge-sort"; "merge-sort-b512": its block sort of 512 threads), sorted search of 2^27 sorted queries in 2^24 keys (int32 output), set union and
// intersection of two sorted 2^26-key multisets; int32 keys, or int64 with --key-bytes 8 (or
// --dtype int64), each with its own list of shapes. Chooses merge/tuning.hpp's merge_config,
// merge_sort_config, set_op_config and sorted_search_config (of the policy of the device it ran
// on: the JSON's "device" and "arch").
//
//   merge_sweep [--quick] [--key-bytes 4|8] > merge-sweep.json
//
// Times: CUDA events around the library's whole call for that shape (partition kernel, tile
// kernel, temporary memory; the set operations' size read-back included), 2 warm-ups, the
// median of 10. Inputs: uniform random int32 in [0, 2^30), sorted on the device; int64 keys are
// the same draws v mapped to (v << 32 | v) - 2^61 (the same order and duplicates, both words and
// both signs used). Every result is checked against the library's configuration.
//
// The 8-byte shapes all fit the kernels' 48 KB of static shared memory: merge with values holds
// (tile + 1) x 8 + tile x 4 bytes (tile <= 4095: 256 x 15, 512 x 7, 128 x 31 at most), the sorted
// search about as much, the keys-only block sort (tile + 1) x 8 (512 x 11 and 1024 x 5 fit).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/launch.hpp"
#include "merge/cuda/merge_kernel.cuh"
#include "merge/cuda/set_ops_kernel.cuh"
#include "merge/cuda/sorted_search_kernel.cuh"
#include "gsearch/gsearch.hpp"
#include "sweep_timing.cuh"

namespace {

using namespace gsearch;
using namespace gsearch::cuda_backend;

// Copies `in` to `out` with 16-byte loads and stores: the read+write roofline of a merge.
__global__ void __launch_bounds__(256) copy_roofline(const uint4* __restrict__ in, int64_t vecs,
                                                     uint4* __restrict__ out) {
  for (int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x; i < vecs; i += int64_t(gridDim.x) * 256)
    out[i] = __ldcs(in + i);
}

struct row {
  std::string what;
  int threads, items, min_blocks;
  double ms, bytes;
};

template <class T>
std::vector<T> host(const T* d, int64_t n) {
  std::vector<T> h(static_cast<size_t>(n));
  copy_to_host(h.data(), d, size_t(n) * sizeof(T));
  return h;
}

template <class T>
struct inputs {
  int64_t n, k, q;
  device_vector<T> a, b, keys, queries, out;
  device_vector<int32_t> ranks;
  device_vector<T> unsorted;                  // 2n random keys for the merge sort
  device_vector<int64_t> a_values, b_values;  // the key-value merge's values (0 .. n - 1 each side)
  device_vector<int64_t> out_values;
};

// The library's answers the sweep checks every configuration against.
template <class T>
struct answers {
  std::vector<T> merged, sorted;
  std::vector<int32_t> ranks;
  std::vector<int64_t> set_sizes, merged_values;
};

// The merge sort of 2n random keys, block sort of SortThreads x Items, merge tiles of Threads x
// Items ("merge-sort-b<SortThreads>" where they differ).
template <int SortThreads, int Threads, int Items, int MinBlocks = 0, class T>
void run_merge_sort(std::vector<row>& rows, inputs<T>& in, const answers<T>& want, bool& ok) {
  const int64_t n = 2 * in.n;
  const std::string what = SortThreads == Threads ? "merge-sort" : "merge-sort-b" + std::to_string(SortThreads);
  rows.push_back({what, Threads, Items, MinBlocks, bench::time_ms([&] {
                    launch_merge_sort<SortThreads, Threads, Items, MinBlocks, false>(
                        nullptr, in.unsorted.data(), n, static_cast<const int64_t*>(nullptr), in.out.data(),
                        static_cast<int64_t*>(nullptr));
                  }),
                  2.0 * sizeof(T) * double(n)});
  ok &= host(in.out.data(), n) == want.sorted;
}

template <int Threads, int Items, int MinBlocks = 0, class T>
void run_config(std::vector<row>& rows, inputs<T>& in, const answers<T>& want, bool& ok) {
  constexpr double key = sizeof(T);
  const int64_t n = in.n;
  const int64_t tiles = (2 * n + Threads * Items - 1) / (Threads * Items);
  const two_lists<T> lists{in.a.data(), n, in.b.data(), n, nullptr, nullptr};
  rows.push_back({"merge", Threads, Items, MinBlocks, bench::time_ms([&] {
                    launch_merge<Threads, Items, false, MinBlocks>(
                        nullptr, lists, tiles, in.out.data(), static_cast<int64_t*>(nullptr));
                  }),
                  4 * key * double(n)});
  ok &= host(in.out.data(), 2 * n) == want.merged;
  const two_lists<T> pairs{in.a.data(), n, in.b.data(), n, in.a_values.data(), in.b_values.data()};
  rows.push_back({"merge-pairs", Threads, Items, MinBlocks, bench::time_ms([&] {
                    launch_merge<Threads, Items, true, MinBlocks>(nullptr, pairs, tiles, in.out.data(),
                                                                  in.out_values.data());
                  }),
                  (4 * key + 32.0) * double(n)});
  ok &= host(in.out.data(), 2 * n) == want.merged && host(in.out_values.data(), 2 * n) == want.merged_values;
  run_merge_sort<Threads, Threads, Items, MinBlocks>(rows, in, want, ok);
  if constexpr (MinBlocks == 0) {  // (the sorted search has no such knob)
    rows.push_back({"sorted-search", Threads, Items, MinBlocks, bench::time_ms([&] {
                      launch_sorted_search<Threads, Items, false, false>(
                          nullptr, in.keys.data(), in.k, in.queries.data(), in.q, in.ranks.data());
                    }),
                    key * double(in.k + in.q) + 4.0 * double(in.q)});
    ok &= host(in.ranks.data(), in.q) == want.ranks;
  }
  int s = 0;
  for (set_op op : {set_op::union_, set_op::intersection}) {
    int64_t size = 0;
    const double ms = bench::time_ms([&] {
      size = run_set_op<Threads, Items, MinBlocks>(nullptr, op, in.a.data(), n, in.b.data(), n,
                                                   in.out.data());
    });
    ok &= size == want.set_sizes[size_t(s++)];
    rows.push_back({std::string("set-") + to_string(op), Threads, Items, MinBlocks, ms,
                    key * double(2 * n + size)});
  }
}

// A uniform random key in [0, 2^30) (int32); for int64 the same draw v as (v << 32 | v) - 2^61.
template <class T>
T random_key(std::mt19937& gen) {
  const uint32_t v = gen() & 0x3fffffff;
  if constexpr (sizeof(T) == 4) {
    return T(v);
  } else {
    return T((int64_t(v) << 32 | int64_t(v)) - (int64_t{1} << 61));
  }
}

// The inputs, the library's answers, the copy roofline, then every shape of `shapes` (a
// function of the inputs, answers, rows and ok); prints the JSON; true when every result matched.
template <class T, class Shapes>
bool sweep(bool quick, Shapes&& shapes) {
  inputs<T> in;
  in.n = quick ? int64_t{1} << 20 : int64_t{1} << 26;
  in.k = quick ? int64_t{1} << 18 : int64_t{1} << 24;
  in.q = quick ? int64_t{1} << 21 : int64_t{1} << 27;
  std::mt19937 gen(1);
  const auto random_sorted = [&](int64_t n) {
    std::vector<T> h(static_cast<size_t>(n));
    for (auto& x : h) x = random_key<T>(gen);
    device_vector<T> d(n);
    copy_to_device(d.data(), h.data(), size_t(n) * sizeof(T));
    merge_sort(gsearch::cuda, span<const T>(d), d.view());
    return d;
  };
  in.a = random_sorted(in.n);
  in.b = random_sorted(in.n);
  in.keys = random_sorted(in.k);
  in.queries = random_sorted(in.q);
  in.out = device_vector<T>(2 * in.n);
  in.ranks = device_vector<int32_t>(in.q);

  {  // the merge sort's input: 2n random keys; the key-value merge's values: each side's positions
    std::vector<T> h(static_cast<size_t>(2 * in.n));
    for (auto& x : h) x = random_key<T>(gen);
    in.unsorted = device_vector<T>(2 * in.n);
    copy_to_device(in.unsorted.data(), h.data(), h.size() * sizeof(T));
    std::vector<int64_t> v(static_cast<size_t>(in.n));
    for (int64_t i = 0; i < in.n; ++i) v[size_t(i)] = i;
    in.a_values = device_vector<int64_t>(in.n);
    in.b_values = device_vector<int64_t>(in.n);
    copy_to_device(in.a_values.data(), v.data(), v.size() * 8);
    copy_to_device(in.b_values.data(), v.data(), v.size() * 8);
    in.out_values = device_vector<int64_t>(2 * in.n);
  }

  // The library's own answers, to check every configuration against.
  answers<T> want;
  merge(gsearch::cuda, span<const T>(in.a), span<const T>(in.b), in.out.view());
  want.merged = host(in.out.data(), 2 * in.n);
  merge(gsearch::cuda, span<const T>(in.a), span<const int64_t>(in.a_values), span<const T>(in.b),
        span<const int64_t>(in.b_values), in.out.view(), in.out_values.view());
  want.merged_values = host(in.out_values.data(), 2 * in.n);
  merge_sort(gsearch::cuda, span<const T>(in.unsorted), in.out.view());
  want.sorted = host(in.out.data(), 2 * in.n);
  search_options so;
  so.queries_sorted = true;
  upper_bound(gsearch::cuda, span<const T>(in.keys), span<const T>(in.queries), in.ranks.view(), so);
  want.ranks = host(in.ranks.data(), in.q);
  want.set_sizes = {
      set_operation_size(gsearch::cuda, set_op::union_, span<const T>(in.a), span<const T>(in.b)),
      set_operation_size(gsearch::cuda, set_op::intersection, span<const T>(in.a), span<const T>(in.b))};

  std::vector<row> rows;
  bool ok = true;
  const int64_t vecs = 2 * in.n * int64_t(sizeof(T)) / 16;
  device_vector<T> copy(2 * in.n);
  rows.push_back({"copy-roofline", 256, 1, 1, bench::time_ms([&] {
                    copy_roofline<<<132 * 8, 256>>>(reinterpret_cast<const uint4*>(in.out.data()),
                                                    vecs, reinterpret_cast<uint4*>(copy.data()));
                  }),
                  4.0 * sizeof(T) * double(in.n)});
  shapes(rows, in, want, ok);
  std::printf("{\"device\": \"%s\", \"arch\": %d, \"n\": %lld, \"k\": %lld, \"q\": %lld, \"dtype\": \"%s\", "
              "\"key_bytes\": %d, \"correct\": %s, \"source\": {\"commit\": \"%s\", \"dirty\": %s}, \"rows\": [\n",
              cuda_device_name().c_str(), current_device_limits().arch, (long long)in.n, (long long)in.k,
              (long long)in.q, sizeof(T) == 4 ? "int32" : "int64", int(sizeof(T)), ok ? "true" : "false",
              build_info().commit, build_info().dirty ? "true" : "false");
  for (size_t i = 0; i < rows.size(); ++i)
    std::printf("  {\"what\": \"%s\", \"threads\": %d, \"items\": %d, \"min_blocks\": %d, "
                "\"ms\": %.5f, \"GBps\": %.1f}%s\n",
                rows[i].what.c_str(), rows[i].threads, rows[i].items, rows[i].min_blocks, rows[i].ms,
                rows[i].bytes / rows[i].ms / 1e6, i + 1 < rows.size() ? "," : "");
  std::printf("]}\n");
  return ok;
}

// The 4-byte shapes (merge-sweep-4 ... 7 on the H100 chose merge/tuning.hpp's from these).
template <class T>
void shapes_4(std::vector<row>& rows, inputs<T>& in, const answers<T>& want, bool& ok) {
  run_config<128, 11>(rows, in, want, ok);
  run_config<128, 15>(rows, in, want, ok);
  run_config<256, 7>(rows, in, want, ok);
  run_config<256, 11>(rows, in, want, ok);
  run_config<256, 15>(rows, in, want, ok);
  run_config<512, 7>(rows, in, want, ok);
  run_config<128, 23>(rows, in, want, ok);
  run_config<256, 19>(rows, in, want, ok);
  run_config<256, 23>(rows, in, want, ok);
  run_config<512, 11>(rows, in, want, ok);
  // Registers capped for more resident blocks per SM (__launch_bounds__' minimum).
  run_config<256, 19, 5>(rows, in, want, ok);
  run_config<256, 19, 6>(rows, in, want, ok);
  run_config<256, 19, 8>(rows, in, want, ok);
  run_config<256, 15, 8>(rows, in, want, ok);
  run_config<256, 23, 6>(rows, in, want, ok);
  // Merge sorts whose block sort makes runs of two merge tiles: 2^27 keys in 14 passes, not 15.
  run_merge_sort<512, 256, 19, 0>(rows, in, want, ok);
  run_merge_sort<512, 256, 19, 5>(rows, in, want, ok);
  run_merge_sort<512, 256, 15, 0>(rows, in, want, ok);
  run_merge_sort<512, 256, 15, 5>(rows, in, want, ok);
  run_merge_sort<1024, 256, 11, 0>(rows, in, want, ok);
}

// The 8-byte shapes: odd items, tiles to 4,095 keys (the 48 KB of merge with values and of the
// sorted search; the file comment), about as many as the 4-byte list. merge/tuning.hpp's 8-byte
// shape today is 256 x 7 everywhere (not yet swept before this list).
template <class T>
void shapes_8(std::vector<row>& rows, inputs<T>& in, const answers<T>& want, bool& ok) {
  run_config<128, 7>(rows, in, want, ok);
  run_config<128, 11>(rows, in, want, ok);
  run_config<128, 15>(rows, in, want, ok);
  run_config<128, 23>(rows, in, want, ok);
  run_config<256, 5>(rows, in, want, ok);
  run_config<256, 7>(rows, in, want, ok);
  run_config<256, 9>(rows, in, want, ok);
  run_config<256, 11>(rows, in, want, ok);
  run_config<256, 13>(rows, in, want, ok);
  run_config<256, 15>(rows, in, want, ok);
  run_config<512, 5>(rows, in, want, ok);
  run_config<512, 7>(rows, in, want, ok);
  // Registers capped for more resident blocks per SM (__launch_bounds__' minimum).
  run_config<256, 7, 8>(rows, in, want, ok);
  run_config<256, 9, 6>(rows, in, want, ok);
  run_config<256, 11, 5>(rows, in, want, ok);
  // Merge sorts whose block sort makes longer runs than the merge tile (fewer passes).
  run_merge_sort<512, 256, 7, 0>(rows, in, want, ok);
  run_merge_sort<512, 256, 9, 0>(rows, in, want, ok);
  run_merge_sort<512, 256, 9, 6>(rows, in, want, ok);
  run_merge_sort<512, 256, 11, 0>(rows, in, want, ok);
  run_merge_sort<1024, 256, 5, 0>(rows, in, want, ok);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int key_bytes = 4;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--key-bytes" && i + 1 < argc) {
      key_bytes = std::atoi(argv[++i]);
    } else if (arg == "--dtype" && i + 1 < argc) {
      const std::string d = argv[++i];
      key_bytes = d == "int32" ? 4 : d == "int64" ? 8 : 0;
    } else {
      key_bytes = 0;
    }
    if (key_bytes != 4 && key_bytes != 8) {
      std::fprintf(stderr, "usage: merge_sweep [--quick] [--key-bytes 4|8 | --dtype int32|int64]\n");
      return 2;
    }
  }
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "merge_sweep: no CUDA device\n");
    return 2;
  }
  const bool ok = key_bytes == 4 ? sweep<int32_t>(quick, [](auto&... a) { shapes_4(a...); })
                                 : sweep<int64_t>(quick, [](auto&... a) { shapes_8(a...); });
  return ok ? 0 : 1;
}
