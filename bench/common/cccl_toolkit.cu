// The CUDA toolkit's CCCL version (cccl.hpp), from its thrust headers.

#include <thrust/version.h>

#include "cccl.hpp"

namespace gsearch::bench {

std::string toolkit_cccl_version() {
  return std::to_string(THRUST_MAJOR_VERSION) + "." + std::to_string(THRUST_MINOR_VERSION) + "." +
         std::to_string(THRUST_SUBMINOR_VERSION);
}

}  // namespace gsearch::bench
