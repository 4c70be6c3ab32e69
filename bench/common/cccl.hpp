#pragma once
// The two CCCL versions the benchmarks' peers are built against: the CUDA toolkit's (thrust
// 3.0.1 with CUDA 13.0; cccl_toolkit.cu) and the newer one of scripts/fetch-cccl.sh (CUB 3.6,
// for cub::DeviceFind and friends; cccl_new.cu, compiled with those headers first on the include
// path when bench/CMakeLists.txt finds them). Host-compilable; the library gsearch_bench_cccl.

#include <string>

#include <nlohmann/json.hpp>

namespace gsearch::bench {

/// THRUST_VERSION of the toolkit's CCCL, as "3.0.1".
std::string toolkit_cccl_version();
/// False when this build had no newer CCCL headers (run scripts/fetch-cccl.sh, reconfigure):
/// the peers that need them are left out.
bool new_cccl_available();
/// CUB_VERSION of the newer headers, as "3.6.0" (empty without them).
std::string new_cccl_version();

/// The report's peer versions: "thrust" (the toolkit's CCCL) and, when cub_key is not null, the
/// newer CCCL's CUB under that key (null when it was not built).
inline nlohmann::ordered_json cccl_versions(const char* cub_key = "cub") {
  nlohmann::ordered_json v = {{"thrust", toolkit_cccl_version()}};
  if (cub_key) v[cub_key] = new_cccl_available() ? nlohmann::ordered_json(new_cccl_version()) : nullptr;
  return v;
}

}  // namespace gsearch::bench
