#pragma once
/// \file
/// The launch shapes of the index-interval kernels (index_intervals_kernel.cuh). Host-compilable.
/// PROVISIONAL: chosen, not yet measured (bench/index_intervals/index_intervals_bench.cu's Table 1
/// part times the one-block improve; change these with its numbers).

#include <cstdint>

#include "cuda/tuning_common.hpp"

namespace gsearch::cuda_backend {

/// The one-block improve: 1024 threads of 11 elements, 11,264 cells (the seed's Table 1 goes to
/// 10,240). 11 is odd, so thread t's first elements t * 11 fall in 32 different banks for 4-byte
/// keys (2-way conflicts for 8-byte ones) when the threads read their items from shared memory.
/// The piece and its partition take 2 x 11,264 x 8 = 180 KB of shared memory for 8-byte keys (the
/// H100 gives a block 227 KB); a device with less takes fewer cells (intervals_block_cells).
inline constexpr launch_config intervals_block_config = {1024, 11};

/// The multi-block improve's tiles (count and scatter passes): 256 threads of 16 four-byte or 8
/// eight-byte elements, 64 bytes per thread, loaded through CUB's warp transpose.
constexpr launch_config intervals_tile_config(int key_bytes) { return {256, key_bytes <= 4 ? 16 : 8}; }

}  // namespace gsearch::cuda_backend
