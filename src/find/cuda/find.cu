// The CUDA backend of find / count / find_all: launches of find_kernel.cuh, with the tile counts
// scanned by CUB (the toolkit's) for find_random and find_all.

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "find/backend.hpp"
#include "find/cuda/find_kernel.cuh"
#include "cuda/launch.cuh"
#include "cuda/stream_buffer.cuh"
#include "find/tuning.hpp"

namespace gsearch::cuda_backend {
namespace {

// first / any / count: the scan's configuration.
template <find_mode Mode, class T>
void launch_scan(cudaStream_t stream, const T* data, int64_t n, const core::match<T>& m, u64* result,
                 const device_limits& dev) {
  constexpr int threads = find_scan_config.threads, loads = find_scan_config.items;
  const scan_layout<T, threads, loads> layout{n, unaligned_head(data, n)};
  launch_filling(scan_kernel<Mode, T, threads, loads>, threads, 0, layout.tiles(), stream, dev, data, layout, m,
                 result);
}

// find_random and find_all: tiles of find_tiles_config.
constexpr int tile_threads = find_tiles_config.threads, tile_loads = find_tiles_config.items;
template <class T>
using layout_t = scan_layout<T, tile_threads, tile_loads>;

template <class T>
void launch_study(cudaStream_t stream, find_strategy s, bool count, const T* data, int64_t n,
                  int64_t k, const core::match<T>& m, u64* result) {
  if (s == find_strategy::one_per_thread) k = 1;
  const int64_t threads = core::strategy_threads(n, k);
  const int64_t blocks = (threads + study_threads - 1) / study_threads;
  if (blocks > int64_t(INT32_MAX))
    throw invalid_argument("gsearch::find: strategy '" + std::string(to_string(s)) + "' would launch " +
                           std::to_string(blocks) + " blocks; raise per_thread");
  auto kernel = s == find_strategy::strided    ? study_kernel<find_strategy::strided, T>
                : s == find_strategy::unrolled ? study_kernel<find_strategy::unrolled, T>
                                               : study_kernel<find_strategy::coalesced, T>;  // and one_per_thread
  launch(kernel, blocks, study_threads, 0, stream, data, n, k, threads, m, count, result);
}

// The matches per tile and their inclusive prefix sum (each tile's end in the list of matches;
// the last is the total, one copy away from the host), in stream-ordered temporary memory: what
// find_random and find_all start from.
template <class T>
struct tile_offsets {
  layout_t<T> layout;
  stream_buffer memory;
  u64* counts = nullptr;  // CUDA's 64-bit atomicAdd takes unsigned long long
  int64_t* ends = nullptr;
  int64_t* kept = nullptr;  // find_all: the matches of tiles with at most kept_per_tile

  tile_offsets(cudaStream_t stream, const T* data, int64_t n, const core::match<T>& m,
               const device_limits& dev, bool keep)
      : layout{n, unaligned_head(data, n)} {
    const int64_t tiles = layout.tiles();
    size_t scan_bytes = 0;
    GSEARCH_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, counts, ends, tiles, stream));
    const int64_t words = tiles * (2 + (keep ? kept_per_tile : 0));
    memory = stream_buffer(stream, size_t(words) * sizeof(int64_t) + scan_bytes);
    counts = static_cast<u64*>(memory.get());
    ends = reinterpret_cast<int64_t*>(counts + tiles);
    if (keep) kept = ends + tiles;
    void* scan_temp = counts + words;
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(counts, 0, size_t(tiles) * sizeof(u64), stream));
    launch_filling(tile_counts_kernel<T, tile_threads, tile_loads>, tile_threads, 0, tiles, stream, dev, data, layout,
                   m, counts, kept);
    GSEARCH_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scan_temp, scan_bytes, counts, ends, tiles, stream));
  }
};

// The value form of find() returns through a host_wait_word (cuda/launch.cuh): one of a
// per-device free list, taken for the call and handed back (an allocation per call from the
// stream-ordered pool cost more than the search with an early match: the pool hands its memory
// back at every synchronisation unless its release threshold is raised, which is the caller's
// process-wide setting to make, not ours). It was a word per host thread, never freed: a leak
// per thread that ever called find (issue 19, item 13).

}  // namespace

template <class T>
void find(CUstream_st* stream, find_mode mode, const T* data, int64_t n, const predicate<T>& pred,
          find_strategy strategy, int64_t per_thread, uint64_t seed, int64_t* result) {
  const core::match<T> m = core::make_match(pred);
  u64* const res = reinterpret_cast<u64*>(result);
  // count starts at 0; first / any / random at -1 (no_match), the answer when nothing matches.
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(result, mode == find_mode::count ? 0 : 0xFF, sizeof(int64_t), stream));
  if (n == 0) return;
  const device_limits dev = current_device_limits();
  if (strategy != find_strategy::auto_) {
    constexpr int64_t default_per_thread = 12;  // seeds/001's best
    launch_study(stream, strategy, mode == find_mode::count, data, n,
                 per_thread > 0 ? per_thread : default_per_thread, m, res);
    return;
  }
  switch (mode) {
    case find_mode::first: return launch_scan<find_mode::first>(stream, data, n, m, res, dev);
    case find_mode::any: return launch_scan<find_mode::any>(stream, data, n, m, res, dev);
    case find_mode::count: return launch_scan<find_mode::count>(stream, data, n, m, res, dev);
    case find_mode::random: {
      const tile_offsets<T> tiles(stream, data, n, m, dev, false);
      launch(pick_random_kernel<T, tile_threads, tile_loads>, 1, tile_threads, 0, stream, data, tiles.layout, m,
             tiles.counts, tiles.ends, seed, result);
      return;
    }
  }
}

template <class T>
int64_t find_value(CUstream_st* stream, find_mode mode, const T* data, int64_t n,
                   const predicate<T>& pred, find_strategy strategy, int64_t per_thread,
                   uint64_t seed) {
  const host_wait_word word(stream);
  int64_t* d = word.get();
  find(stream, mode, data, n, pred, strategy, per_thread, seed, d);
  int64_t host = 0;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&host, d, sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

template <class T>
int64_t find_all(CUstream_st* stream, const T* data, int64_t n, const predicate<T>& pred,
                 const std::function<int64_t*(int64_t)>& allocate, int64_t* room) {
  if (n == 0) {
    allocate(0);
    return 0;
  }
  const core::match<T> m = core::make_match(pred);
  const device_limits dev = current_device_limits();
  const tile_offsets<T> tiles(stream, data, n, m, dev, true);
  const auto write = [&](int64_t* out) {
    const int64_t chunks = (tiles.layout.tiles() + tiles_per_chunk - 1) / tiles_per_chunk;
    launch_filling(write_matches_kernel<T, tile_threads, tile_loads>, tile_threads, 0, chunks, stream, dev, data,
                   tiles.layout, m, tiles.counts, tiles.ends, tiles.kept, out);
  };
  if (room) write(room);  // any count fits: no need to wait for it first
  int64_t total = 0;
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(&total, tiles.ends + tiles.layout.tiles() - 1, sizeof(int64_t),
                                     cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  int64_t* out = allocate(total);
  if (!room && total > 0) write(out);
  return total;
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_FIND_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_FIND_CUDA_OPS)

}  // namespace gsearch::cuda_backend
