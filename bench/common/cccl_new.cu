// The newer CCCL's version (cccl.hpp): compiled with GSEARCH_BENCH_CCCL_INCLUDE first on the
// include path and GSEARCH_BENCH_HAS_NEW_CCCL=1 when bench/CMakeLists.txt found those headers;
// without them, "not available".

#include "cccl.hpp"

#if GSEARCH_BENCH_HAS_NEW_CCCL
#include "new_cccl.cuh"
#endif

namespace gsearch::bench {

#if GSEARCH_BENCH_HAS_NEW_CCCL
bool new_cccl_available() { return true; }
std::string new_cccl_version() {
  return std::to_string(CUB_MAJOR_VERSION) + "." + std::to_string(CUB_MINOR_VERSION) + "." +
         std::to_string(CUB_SUBMINOR_VERSION);
}
#else
bool new_cccl_available() { return false; }
std::string new_cccl_version() { return {}; }
#endif

}  // namespace gsearch::bench
