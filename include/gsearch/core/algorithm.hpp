#pragma once
/// \file
/// The names of the search algorithms, shared by the API, the backends, the model and the CLI.

#include <optional>
#include <string_view>

namespace gsearch {

/// Which search runs. `auto_` lets the backend choose from its tuning table.
enum class algorithm : int {
  auto_,   ///< the backend picks (by key count, key size and device)
  pbs,     ///< Parallel Binary Search: the paper's Algorithm 1, one query per lane
  pbs_cf,  ///< PBS-CF: bank-exclusive stage 1, linear (conflict-free) stage 2
  pbs_cl,  ///< PBS-CL: bank-exclusive stage 1, binary stage 2 that keeps the lane offsets
  binary,  ///< branch-free binary search over the unpadded keys (the CPU fast path; global
           ///< memory on the GPU)
};

/// The name used by the CLI, the JSON output and the docs ("auto", "pbs", "pbs-cf", ...).
constexpr std::string_view to_string(algorithm a) {
  switch (a) {
    case algorithm::auto_: return "auto";
    case algorithm::pbs: return "pbs";
    case algorithm::pbs_cf: return "pbs-cf";
    case algorithm::pbs_cl: return "pbs-cl";
    case algorithm::binary: return "binary";
  }
  return "?";
}

/// Inverse of to_string; nullopt for an unknown name.
constexpr std::optional<algorithm> algorithm_from_string(std::string_view s) {
  for (algorithm a : {algorithm::auto_, algorithm::pbs, algorithm::pbs_cf, algorithm::pbs_cl,
                      algorithm::binary}) {
    if (to_string(a) == s) return a;
  }
  return std::nullopt;
}

}  // namespace gsearch
