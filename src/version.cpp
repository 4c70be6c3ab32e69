// gsearch::build_info(): the generated header comes from cmake/source_stamp.cmake at build time.

#include "gsearch/version.hpp"

#include "gsearch_source_stamp.hpp"

namespace gsearch {

build_info_t build_info() noexcept {
  return {GSEARCH_PROJECT_VERSION, GSEARCH_SOURCE_COMMIT, GSEARCH_SOURCE_DIRTY, GSEARCH_HAS_CUDA != 0};
}

}  // namespace gsearch
