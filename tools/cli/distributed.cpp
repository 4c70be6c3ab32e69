// `--distributed` (distributed.hpp): the per-rank output name, and what a CLI built without MPI
// says. The ranks' shared steps are in distributed_ranks.hpp; each family's --distributed beside
// it (distributed_search.cpp, distributed_find.cpp, distributed_merge.cpp, distributed_asof.cpp).

#include "distributed.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "timing.hpp"

#ifdef GSEARCH_CLI_MPI
#include <mpi.h>

#include "gsearch/dist.hpp"
#include "gsearch/dist/mpi.hpp"
#endif
#ifdef GSEARCH_CLI_NCCL
#include "gsearch/dist/nccl.hpp"
#endif

namespace gsearch::cli::distributed {

std::string rank_path(const std::string& out, const std::string& rank) {
  const std::string_view npy = ".npy";
  const bool has_npy = out.size() > npy.size() && out.ends_with(npy);
  return out.substr(0, out.size() - (has_npy ? npy.size() : 0)) + "." + rank + std::string(npy);
}

std::string per_rank_path(const std::string& out, int rank) { return rank_path(out, std::to_string(rank)); }

#ifndef GSEARCH_CLI_MPI

namespace {
[[noreturn]] void without_mpi() {
  throw failure(exit_device_or_io,
                "--distributed: this gsearch was built without MPI (CMake found none, or "
                "GSEARCH_MPI=OFF): install MPI (e.g. OpenMPI's libopenmpi-dev) and rebuild");
}
}  // namespace

exit_code search(const std::function<search_request()>&) { without_mpi(); }
exit_code find(const std::function<find_request()>&) { without_mpi(); }
exit_code sort(const std::function<sort_request()>&) { without_mpi(); }
exit_code join(const std::function<join_request()>&) { without_mpi(); }
exit_code asof(const std::function<asof_request()>&) { without_mpi(); }

#endif  // GSEARCH_CLI_MPI

}  // namespace gsearch::cli::distributed
