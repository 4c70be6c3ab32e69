#pragma once
// Included first by every translation unit built against the newer CCCL (the peers' cub_*.cu,
// cccl_new.cu): its version, and the check that its headers, not the toolkit's, came first on
// the include path (the toolkit's CCCL 3.0.1 has no cub::DeviceFind; 3.3 added the searches the
// peers call).

#include <cub/version.cuh>

static_assert(CUB_VERSION >= 300300, "the newer CCCL (>= 3.3, scripts/fetch-cccl.sh) is not first on the include path");
