// Runs each shared-memory search once per configuration, for Nsight Compute to count its
// shared-memory bank conflicts, and prints the bank model's prediction for the same queries.
//
//   conflicts_probe [--quick] > model.jsonl
//   ncu --metrics <shared-memory metrics> --csv conflicts_probe > ncu.csv
//   python3 bench/search/conflicts_table.py model.jsonl ncu.csv
//
// Line i of the output (a JSON object) describes the i-th kernel launched, so the two can be
// joined in launch order. Queries are 32 per warp, lane j % 32 of the kernel's warps, exactly
// as the model lays them out.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tools/bank_model.hpp"
#include "tools/query_gen.hpp"
#include "cuda/tuning.hpp"
#include "gsearch/gsearch.hpp"

namespace {

using namespace gsearch;

template <class T>
void probe(algorithm a, int64_t k, const char* kind, int64_t n) {
  const auto keys = gen::sorted_keys<T>(k, 1000 + uint64_t(k));
  const auto queries = std::strcmp(kind, "worst") == 0
                           ? gen::worst_case_queries(keys.data(), k, n, 77)
                           : gen::random_queries_from_keys(keys.data(), k, n, 77);
  const model::bank_config h100{32, 4, true};
  // PBS-CL stages the replicas the library picks for this k (tuning.hpp).
  const int copies = a == algorithm::pbs_cl ? cuda_backend::pbs_cl_copies<T>(k, cuda_device_properties().shared_per_block_optin) : 1;
  const auto m = model::model_run(a, side::right, keys.data(), k, queries.data(), n, h100, copies);
  device_vector<T> d_keys{span<const T>(keys)}, d_queries{span<const T>(queries)};
  device_vector<int32_t> d_out(n);
  upper_bound(cuda, d_keys, d_queries, d_out, {a, false});
  synchronize(cuda);
  std::printf(
      "{\"algo\": \"%s\", \"key_bytes\": %d, \"k\": %lld, \"queries\": \"%s\", \"n\": %lld, "
      "\"warps\": %lld, \"steps\": %zu, \"model_passes\": %lld, \"model_conflicts\": %lld, \"copies\": %d}\n",
      std::string(to_string(a)).c_str(), int(sizeof(T)), (long long)k, kind, (long long)n,
      (long long)m.warps, m.step_passes.size(), (long long)m.passes, (long long)m.conflicts, copies);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "conflicts_probe: no CUDA device\n");
    return 2;
  }
  const int64_t n = 32 * 1024;  // 1024 warps
  const std::vector<int64_t> ks4 = quick ? std::vector<int64_t>{1024, 4096}
                                         : std::vector<int64_t>{32, 64, 128, 256, 512, 1024, 2048, 4096,
                                                                8192, 16384, 32768, 49152};
  for (algorithm a : {algorithm::pbs, algorithm::pbs_cf, algorithm::pbs_cl})
    for (const char* kind : {"random", "worst"}) {
      for (int64_t k : ks4) probe<uint32_t>(a, k, kind, n);
      for (int64_t k : ks4)
        if (k <= 16384) probe<uint64_t>(a, k, kind, n);
    }
  return 0;
}
