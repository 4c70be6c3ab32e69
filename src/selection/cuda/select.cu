// The CUDA backend of select, partition / argpartition, quantile and median (topk and kthvalue:
// src/selection/cuda/topk.cu): the sampled-bracket select of core/selection.hpp, driven from the host one
// level at a time. A level enqueues the sample sort (one block, which also writes the splitters'
// values), the bucket pass (histogram + candidates), and one copy back of the counts, the
// candidate count and the splitters: one synchronisation per level. The host then resolves every
// rank from the counts (core code: brackets, buckets) and recurses on the candidates, which are a
// few per cent of the data; a level of at most one sample's size is sorted in one block.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <limits>
#include <optional>
#include <vector>

#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/sort_support.cuh"  // fill_positions
#include "cuda/stream_buffer.cuh"
#include "gsearch/core/quantile.hpp"
#include "gsearch/core/select_plan.hpp"
#include "gsearch/core/selection.hpp"
#include "selection/backend.hpp"
#include "selection/cuda/many_select.cuh"
#include "selection/cuda/planned_select.cuh"
#include "selection/cuda/radix_select.cuh"
#include "selection/cuda/select_scatter_kernel.cuh"
#include "selection/cuda/selection_kernel.cuh"
#include "selection/tuning.hpp"

namespace gsearch::cuda_backend {
namespace {

constexpr int sort_threads = select_sort_threads;
template <class T>
constexpr int sort_items = select_sort_items(int(sizeof(T)));
template <class T>
constexpr int64_t sample_size = select_sample_size(int(sizeof(T)));

constexpr int pass_threads = select_pass_config.threads, pass_loads = select_pass_config.items;
template <class T>
using pass_layout = scan_layout<T, pass_threads, pass_loads>;

constexpr int scatter_threads = partition_scatter_config.threads;
constexpr int scatter_loads = partition_scatter_config.items;

size_t align16(size_t bytes) { return (bytes + 15) / 16 * 16; }

// Pageable host <-> device copies on the stream (the small parameter and result arrays).
template <class X>
void to_device(cudaStream_t stream, X* dst, const X* src, size_t count) {
  if (count) GSEARCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(X), cudaMemcpyHostToDevice, stream));
}
template <class X>
void to_host(cudaStream_t stream, X* dst, const X* src, size_t count) {
  if (count) GSEARCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(X), cudaMemcpyDeviceToHost, stream));
}
void wait(cudaStream_t stream) { GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream)); }

// The one-block sort of s elements of data at core::sample_position (all of them when s == n),
// writing splitters[j] = sorted[index[j]] (device arrays) and the sorted elements to `sorted`
// when it is not null. A few splitters and no sorted copy: the block's radix select instead
// (sample_select_kernel, the same answers without the sort).
template <class T>
void launch_sort_sample(cudaStream_t stream, const T* data, int64_t n, int64_t s, const int32_t* index,
                        int64_t m, T* splitters, T* sorted, const device_limits& dev) {
  if (!sorted && m <= sample_select_max_targets) {
    if (m == 0) return;
    launch(sample_select_kernel<T, sort_threads, sort_items<T>>, 1, sort_threads, 0, stream, data, n, int(s), index,
           int(m), splitters);
    return;
  }
  using sorter = sample_sort<T, sort_threads, sort_items<T>>;
  auto kernel = sort_sample_kernel<T, sort_threads, sort_items<T>>;
  allow_dynamic_shared(reinterpret_cast<const void*>(kernel), int64_t(sorter::shared_bytes), dev);
  launch(kernel, 1, sort_threads, int64_t(sorter::shared_bytes), stream, data, n, int(s), index, int(m), splitters,
         sorted);
}

// The bucket pass over data[0, n) with the m splitters in device memory (copy: one byte per
// bucket, device memory, read only when `copying`); hist (2m + 1) and *candidate_count must be
// zero beforehand.
template <class T>
void launch_bucket_pass(cudaStream_t stream, const T* data, int64_t n, const T* splitters, int64_t m,
                        const uint8_t* copy, bool copying, u64* hist, T* candidates, int64_t capacity,
                        u64* candidate_count, const device_limits& dev, int64_t* candidate_indices = nullptr) {
  if (n == 0) return;
  const pass_layout<T> layout{n, unaligned_head(data, n)};
  const bucket_pass_shared<T> shape{int(m)};
  auto kernel = m <= select_register_splitters
                    ? bucket_pass_kernel<T, pass_threads, pass_loads, bucket_counting::registers>
                    : bucket_pass_kernel<T, pass_threads, pass_loads, bucket_counting::shared>;
  const int64_t smem = int64_t(shape.bytes());
  allow_dynamic_shared(reinterpret_cast<const void*>(kernel), smem, dev);
  // Not launch_filling: no block may count more than 2^31 elements in its 32-bit histogram.
  const int64_t tiles = layout.tiles(), most_tiles = (int64_t(1) << 31) / layout.tile;
  const int64_t grid = std::max<int64_t>(grid_size(kernel, pass_threads, smem, tiles, dev),
                                         (tiles + most_tiles - 1) / most_tiles);
  launch(kernel, grid, pass_threads, smem, stream, data, layout, splitters, int(m), copy, copying, hist, candidates,
         candidate_indices, capacity, candidate_count);
}

// One device allocation for a bucket pass and what it returns to the host: the splitters' sample
// indices and the copy flags (uploaded together), then the counts, the candidate count and the
// splitters' values (copied back together), then the candidates.
template <class T>
struct pass_memory {
  int64_t m = 0, capacity = 0;
  stream_buffer memory;
  int32_t* index = nullptr;
  uint8_t* copy = nullptr;
  u64* hist = nullptr;  // 2m + 1 counts, then the candidate count
  T* splitters = nullptr;
  T* candidates = nullptr;

  size_t upload_bytes() const { return align16(size_t(m) * 4 + size_t(2 * m + 1)); }
  size_t summary_bytes() const { return align16(size_t(2 * m + 2) * 8 + size_t(m) * sizeof(T)); }

  pass_memory(cudaStream_t stream, int64_t m_, int64_t capacity_) : m(m_), capacity(capacity_) {
    memory = stream_buffer(stream, upload_bytes() + summary_bytes() + size_t(capacity) * sizeof(T));
    auto* base = static_cast<unsigned char*>(memory.get());
    index = reinterpret_cast<int32_t*>(base);
    copy = base + size_t(m) * 4;
    hist = reinterpret_cast<u64*>(base + upload_bytes());
    splitters = reinterpret_cast<T*>(hist + 2 * m + 2);
    candidates = reinterpret_cast<T*>(base + upload_bytes() + summary_bytes());
    GSEARCH_CUDA_CHECK(cudaMemsetAsync(hist, 0, size_t(2 * m + 2) * 8, stream));
  }
  u64* candidate_count() const { return hist + 2 * m + 1; }
};

// What a pass tells the host: the bucket counts, the candidate count, the splitters' values.
template <class T>
struct pass_summary {
  std::vector<u64> hist;  // 2m + 1, then the candidate count
  std::vector<T> splitters;
  u64 candidates() const { return hist.back(); }
};

template <class T>
pass_summary<T> read_summary(cudaStream_t stream, const pass_memory<T>& mem) {
  std::vector<unsigned char> bytes(mem.summary_bytes());
  to_host(stream, bytes.data(), reinterpret_cast<const unsigned char*>(mem.hist), bytes.size());
  wait(stream);
  pass_summary<T> s;
  s.hist.resize(size_t(2 * mem.m + 2));
  s.splitters.resize(size_t(mem.m));
  std::memcpy(s.hist.data(), bytes.data(), s.hist.size() * 8);
  if (mem.m) std::memcpy(s.splitters.data(), bytes.data() + s.hist.size() * 8, size_t(mem.m) * sizeof(T));
  return s;
}

// Sorting fallback (ranks too dense for brackets, or no progress): the keys' bits radix-sorted by
// CUB, the ranks gathered. ranks: sorted, distinct, in [0, n).
template <class T>
std::vector<T> select_by_sort(cudaStream_t stream, const T* data, int64_t n, const std::vector<int64_t>& ranks) {
  using U = core::radix_bits_t<T>;
  const int64_t m = int64_t(ranks.size());
  size_t sort_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, static_cast<const U*>(nullptr),
                                                    static_cast<U*>(nullptr), n, 0, int(sizeof(U) * 8), stream));
  const size_t keys_bytes = align16(size_t(n) * sizeof(U)), ranks_bytes = align16(size_t(m) * 8);
  stream_buffer memory(stream, 2 * keys_bytes + ranks_bytes + align16(size_t(m) * sizeof(T)) + sort_bytes);
  auto* base = static_cast<unsigned char*>(memory.get());
  U* bits = reinterpret_cast<U*>(base);
  U* sorted = reinterpret_cast<U*>(base + keys_bytes);
  int64_t* d_ranks = reinterpret_cast<int64_t*>(base + 2 * keys_bytes);
  T* values = reinterpret_cast<T*>(base + 2 * keys_bytes + ranks_bytes);
  void* temp = base + 2 * keys_bytes + ranks_bytes + align16(size_t(m) * sizeof(T));
  const unsigned grid = unsigned(std::min<int64_t>((n + 255) / 256, 4096));
  launch(radix_bits_kernel<T>, grid, 256, 0, stream, data, n, bits);
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, sort_bytes, bits, sorted, n, 0, int(sizeof(U) * 8), stream));
  to_device(stream, d_ranks, ranks.data(), size_t(m));
  launch(gather_ranks_kernel<T>, std::min<int64_t>((m + 255) / 256, 4096), 256, 0, stream, sorted, d_ranks, m, values);
  std::vector<T> out(static_cast<size_t>(m));
  to_host(stream, out.data(), values, size_t(m));
  wait(stream);
  return out;
}

// A small input (n <= one sample): sorted in one block, the ranks picked as it writes.
template <class T>
std::vector<T> select_in_block(cudaStream_t stream, const T* data, int64_t n, const std::vector<int64_t>& ranks,
                               const device_limits& dev) {
  const int64_t m = int64_t(ranks.size());
  std::vector<int32_t> index(ranks.begin(), ranks.end());  // < n <= sample_size
  stream_buffer memory(stream, align16(size_t(m) * 4) + size_t(m) * sizeof(T));
  auto* d_index = static_cast<int32_t*>(memory.get());
  T* values = reinterpret_cast<T*>(static_cast<unsigned char*>(memory.get()) + align16(size_t(m) * 4));
  to_device(stream, d_index, index.data(), size_t(m));
  launch_sort_sample(stream, data, n, n, d_index, m, values, static_cast<T*>(nullptr), dev);
  std::vector<T> out(static_cast<size_t>(m));
  to_host(stream, out.data(), values, size_t(m));
  wait(stream);
  return out;
}

template <class T>
std::vector<T> select_sorted_ranks(cudaStream_t stream, const T* data, int64_t n,
                                   const std::vector<int64_t>& ranks, const device_limits& dev, int depth);

// A rank's place after a pass: in bucket `bucket`, at `offset` among its elements.
struct placed_rank {
  int64_t bucket, offset;
};

// Selects the ranks that fell in copied-out buckets among the candidates: a candidate's rank is
// the elements of the copied buckets before its bucket plus its offset in it. `out[k]` for
// ranks[k] in `which`.
template <class T>
void select_among_copied(cudaStream_t stream, const T* candidates, int64_t count, const std::vector<u64>& hist,
                         const std::vector<uint8_t>& copied, const std::vector<placed_rank>& placed,
                         const std::vector<int64_t>& which, std::vector<T>& out, const device_limits& dev,
                         int depth) {
  if (which.empty()) return;
  std::vector<int64_t> copied_before(hist.size(), 0);
  for (size_t b = 1; b < copied_before.size(); ++b)
    copied_before[b] = copied_before[b - 1] + (copied[b - 1] ? int64_t(hist[b - 1]) : 0);
  std::vector<int64_t> ranks;
  for (const int64_t k : which) ranks.push_back(copied_before[size_t(placed[size_t(k)].bucket)] + placed[size_t(k)].offset);
  // In increasing order already (the ranks were, and buckets keep their order); distinct too.
  const std::vector<T> values = select_sorted_ranks(stream, candidates, count, ranks, dev, depth + 1);
  for (size_t i = 0; i < which.size(); ++i) out[size_t(which[i])] = values[i];
}

}  // namespace

// The planned levels (core/select_plan.hpp) for a few ranks of n > one sample: the first level
// planned here, then every level's kernels enqueued at once (its sample select, its bucket
// pass, and one thread that resolves its counts and plans the next level in device memory), so
// the host waits once, at the end, instead of once a level (the waits were ~180 us of a 2^26
// select's 424 on the H100: docs/perf-notes.md). The candidates of every level after the first
// are a subset of the first level's, so two buffers of the first level's capacity serve all of
// them.
template <class T>
std::optional<planned_select<T>> planned_select<T>::enqueue(cudaStream_t stream, const T* data, int64_t n,
                                                            const std::vector<int64_t>& ranks, bool keep_first) {
  constexpr int64_t s = sample_size<T>;
  if (int64_t(ranks.size()) > core::plan_max_ranks || n <= s) return std::nullopt;
  core::select_level<T> plan;
  core::start_plan(plan, n, ranks.data(), int(ranks.size()));
  core::plan_level(plan, s, select_dense_fraction);
  if (plan.status != int32_t(core::plan_status::running)) return std::nullopt;
  const device_limits dev = current_device_limits();
  const int64_t capacity = std::min<int64_t>(
      n, int64_t(std::ceil(select_capacity_factor * plan.expected)) + select_capacity_slack);
  // Levels after the first: a level keeps about 4 sqrt(s) / s of its elements (1/32 at s =
  // 16,384); enqueue enough for 1/8 a level, then the final one. Spare levels find the plan done
  // and return at once.
  int levels = 1;
  for (double c = double(capacity); c > double(s); c /= 8) ++levels;

  // The plan, the splitters, the counts, then the candidate buffers: level 1 writes buffer 0,
  // level l > 1 reads what level l - 1 wrote and writes the other of 0 / 1 (of 1 / 2 with
  // keep_first, which keeps buffer 0 and the first level's positions).
  const size_t plan_bytes = align16(sizeof(plan)), splitter_bytes = align16(2 * core::plan_max_ranks * sizeof(T));
  const size_t hist_bytes = align16(size_t(planned_count_slot + 1) * 8), buffer_bytes = align16(size_t(capacity) * sizeof(T));
  const size_t index_bytes = keep_first ? align16(size_t(capacity) * 8) : 0;
  const size_t head_bytes = plan_bytes + splitter_bytes + hist_bytes;
  stream_buffer memory(stream, head_bytes + (keep_first ? 3 : 2) * buffer_bytes + index_bytes);
  auto* base = static_cast<unsigned char*>(memory.get());
  auto* d_plan = reinterpret_cast<core::select_level<T>*>(base);
  T* splitters = reinterpret_cast<T*>(base + plan_bytes);
  u64* hist = reinterpret_cast<u64*>(base + plan_bytes + splitter_bytes);
  T* buffers[3];
  for (int b = 0; b < 3; ++b) buffers[b] = reinterpret_cast<T*>(base + head_bytes + size_t(b) * buffer_bytes);
  int64_t* first_indices =
      keep_first ? reinterpret_cast<int64_t*>(base + head_bytes + 3 * buffer_bytes) : nullptr;
  const auto buffer_of = [&](int level) {  // the buffer level `level` (1, 2, ...) writes
    if (level == 1) return buffers[0];
    return keep_first ? buffers[1 + level % 2] : buffers[(level - 1) % 2];  // never the one it reads
  };
  to_device(stream, d_plan, &plan, 1);
  GSEARCH_CUDA_CHECK(cudaMemsetAsync(hist, 0, hist_bytes, stream));

  auto select_splitters = planned_sample_select_kernel<T, sort_threads, sort_items<T>>;
  auto pass = planned_bucket_pass_kernel<T, pass_threads, pass_loads>;
  const int64_t pass_smem = int64_t(bucket_pass_shared<T>{core::plan_max_splitters}.bytes());
  allow_dynamic_shared(reinterpret_cast<const void*>(pass), pass_smem, dev);
  const int pass_grid = grid_size(pass, pass_threads, pass_smem, pass_layout<T>{capacity, 0}.tiles(), dev);
  const auto resolve = [&] {
    launch(resolve_level_kernel<T>, 1, 32, 0, stream, d_plan, hist, splitters, capacity, s, select_dense_fraction);
  };
  // The first level: the data (its first 16-byte boundary anywhere), the host's plan.
  launch(select_splitters, 1, sort_threads, 0, stream, data, d_plan, splitters);
  const auto* copy = base + offsetof(core::select_level<T>, copy);  // the plan's copy flags, on the device
  launch_bucket_pass(stream, data, n, splitters, plan.m, copy, true, hist, buffer_of(1), capacity,
                     hist + planned_count_slot, dev, first_indices);
  resolve();
  for (int level = 2; level <= levels + 1; ++level) {
    const T* in = buffer_of(level - 1);
    launch(select_splitters, 1, sort_threads, 0, stream, in, d_plan, splitters);
    launch(pass, pass_grid, pass_threads, pass_smem, stream, in, d_plan, splitters, hist, buffer_of(level), capacity,
           hist + planned_count_slot);
    resolve();
  }
  planned_select result(stream, std::move(memory), d_plan, int(ranks.size()));
  if (keep_first) {
    result.first_values_ = buffers[0];
    result.first_indices_ = first_indices;
    result.first_capacity_ = capacity;
    result.holds_top_ = plan.copy[2 * plan.m] != 0;
    result.holds_bottom_ = plan.copy[0] != 0;
  }
  return result;
}

template <class T>
std::optional<std::vector<T>> planned_select<T>::finish() {
  core::select_level<T> plan;
  to_host(stream_, &plan, plan_, 1);
  wait(stream_);
  if (plan.status != int32_t(core::plan_status::done)) return std::nullopt;
  return std::vector<T>(plan.value, plan.value + r_);
}

namespace {

// One level of the sampled-bracket select (n > one sample). ranks: sorted, distinct, in [0, n).
template <class T>
std::vector<T> select_sorted_ranks(cudaStream_t stream, const T* data, int64_t n,
                                   const std::vector<int64_t>& ranks, const device_limits& dev, int depth) {
  if (n <= sample_size<T>) return select_in_block(stream, data, n, ranks, dev);
  if (depth == 0 && int64_t(ranks.size()) <= radix_select_routed_ranks)
    if (std::optional<radix_select<T>> radix = radix_select<T>::enqueue(stream, data, n, ranks))
      if (std::optional<std::vector<T>> values = radix->finish()) return *std::move(values);
  if (depth == 0)
    if (std::optional<planned_select<T>> planned = planned_select<T>::enqueue(stream, data, n, ranks))
      if (std::optional<std::vector<T>> values = planned->finish()) return *std::move(values);
  // More ranks than the planned levels take: the many-rank radix select (its brackets would
  // cover the data, and the levels below would sort it).
  if (depth == 0 && int64_t(ranks.size()) > core::plan_max_ranks)
    if (std::optional<many_answers<T>> many = many_select(stream, data, n, ranks))
      return std::move(many->values);
  if (depth >= select_max_depth) return select_by_sort(stream, data, n, ranks);
  const int64_t s = sample_size<T>;

  // The brackets (core::bracket_of), their endpoints as the splitters (sample indices, deduplicated:
  // neighbouring ranks share them), and the even buckets between each bracket's two splitters,
  // which are copied out: a difference array over the gaps g (bucket 2g) between splitters.
  std::vector<core::sample_bracket> brackets;
  std::vector<int32_t> index;
  for (const int64_t r : ranks) {
    const core::sample_bracket b = core::bracket_of(r, n, s);
    brackets.push_back(b);
    if (b.lo >= 0) index.push_back(int32_t(b.lo));
    if (b.hi < s) index.push_back(int32_t(b.hi));
  }
  std::sort(index.begin(), index.end());
  index.erase(std::unique(index.begin(), index.end()), index.end());
  const int64_t m = int64_t(index.size());
  const auto position = [&](int64_t sample_index) {
    return int64_t(std::lower_bound(index.begin(), index.end(), int32_t(sample_index)) - index.begin());
  };
  std::vector<int64_t> gap_delta(size_t(m + 2), 0);
  for (const auto& b : brackets) {
    const int64_t first = b.lo < 0 ? 0 : position(b.lo) + 1, last = b.hi >= s ? m : position(b.hi);
    ++gap_delta[size_t(first)];
    --gap_delta[size_t(last + 1)];
  }
  std::vector<uint8_t> copied(size_t(2 * m + 1), 0);
  double expected = 0;  // the copied gaps' sample intervals: each holds ~ n / s elements
  for (int64_t g = 0, open = 0; g <= m; ++g) {
    open += gap_delta[size_t(g)];
    if (open > 0) {
      copied[size_t(2 * g)] = 1;
      const int64_t below = g == 0 ? -1 : index[size_t(g - 1)], above = g == m ? s : index[size_t(g)];
      expected += double(above - below) * double(n) / double(s);
    }
  }
  if (expected > select_dense_fraction * double(n)) return select_by_sort(stream, data, n, ranks);
  const int64_t capacity = std::min<int64_t>(
      n, int64_t(std::ceil(select_capacity_factor * expected)) + select_capacity_slack);

  pass_memory<T> mem(stream, m, capacity);
  {
    std::vector<unsigned char> upload(mem.upload_bytes(), 0);
    if (m) std::memcpy(upload.data(), index.data(), size_t(m) * 4);
    std::memcpy(upload.data() + size_t(m) * 4, copied.data(), copied.size());
    to_device(stream, reinterpret_cast<unsigned char*>(mem.index), upload.data(), upload.size());
  }
  launch_sort_sample(stream, data, n, s, mem.index, m, mem.splitters, static_cast<T*>(nullptr), dev);
  launch_bucket_pass(stream, data, n, mem.splitters, m, mem.copy, true, mem.hist, mem.candidates, capacity,
                     mem.candidate_count(), dev);
  const pass_summary<T> summary = read_summary(stream, mem);

  // Each rank's bucket from the counts' running sum (ranks and buckets both increase).
  std::vector<placed_rank> placed(ranks.size());
  std::vector<T> out(ranks.size());
  std::vector<int64_t> among_candidates, missed;
  const bool overflow = int64_t(summary.candidates()) > capacity;
  int64_t bucket = 0, start = 0;
  for (size_t k = 0; k < ranks.size(); ++k) {
    while (start + int64_t(summary.hist[size_t(bucket)]) <= ranks[k]) start += int64_t(summary.hist[size_t(bucket++)]);
    placed[k] = {bucket, ranks[k] - start};
    if (bucket % 2 == 1) out[k] = summary.splitters[size_t(bucket / 2)];  // equal to a splitter
    else if (copied[size_t(bucket)] && !overflow) among_candidates.push_back(int64_t(k));
    else missed.push_back(int64_t(k));  // the sample missed (or the candidates overflowed)
  }
  select_among_copied(stream, mem.candidates, std::min<int64_t>(int64_t(summary.candidates()), capacity),
                      summary.hist, copied, placed, among_candidates, out, dev, depth);
  if (!missed.empty()) {
    // One more pass copying exactly the missed buckets (their counts are known: no overflow).
    std::vector<uint8_t> again(copied.size(), 0);
    int64_t exact = 0;
    for (const int64_t k : missed) {
      const auto b = size_t(placed[size_t(k)].bucket);
      if (!again[b]) exact += int64_t(summary.hist[b]);
      again[b] = 1;
    }
    pass_memory<T> second(stream, m, exact);
    to_device(stream, second.copy, again.data(), again.size());
    launch_bucket_pass(stream, data, n, mem.splitters, m, second.copy, true, second.hist, second.candidates, exact,
                       second.candidate_count(), dev);
    select_among_copied(stream, second.candidates, exact, summary.hist, again, placed, missed, out, dev, depth);
  }
  return out;
}

// The values of ranks in [0, n) (any order, repeats allowed), on the host.
std::vector<int64_t> sorted_distinct(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}
// The values of `sorted` (sorted_distinct(ranks)) in the order of `ranks`, repeats and all.
template <class T>
std::vector<T> in_rank_order(const std::vector<int64_t>& ranks, const std::vector<int64_t>& sorted,
                             const std::vector<T>& values) {
  std::vector<T> out(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i)
    out[i] = values[size_t(std::lower_bound(sorted.begin(), sorted.end(), ranks[i]) - sorted.begin())];
  return out;
}
template <class T>
std::vector<T> select_to_host(cudaStream_t stream, const T* data, int64_t n, const std::vector<int64_t>& ranks) {
  const std::vector<int64_t> sorted = sorted_distinct(ranks);
  std::vector<T> values;
  if (!sorted.empty()) values = select_sorted_ranks(stream, data, n, sorted, current_device_limits(), 0);
  return in_rank_order(ranks, sorted, values);
}

/// The cursors of the radix select's answers (1 block of 32 threads, m <= 32): bucket 2i (the
/// elements under values[i], over values[i - 1]) ends at less[i], bucket 2i + 1 (those equal to
/// values[i]) begins there, bucket 2m ends at n. Equal answers (equal kth values) give equal
/// bounds: core::select_bucket puts their elements in the last one's odd bucket, the others stay empty.
__global__ void partition_cursors_kernel(const int64_t* __restrict__ less, int m, int64_t n,
                                         u64* __restrict__ cursors) {
  const int i = threadIdx.x;
  if (i < m) cursors[2 * i] = cursors[2 * i + 1] = u64(less[i]);
  if (i == 0) cursors[2 * m] = u64(n);
}

// partition by sorting (kth values too many for buckets): the keys' bits sorted with their
// indices; both outputs from them.
template <class T>
__global__ void partition_from_sorted_kernel(const core::radix_bits_t<T>* __restrict__ bits, const int64_t* __restrict__ order,
                                             int64_t n, T* __restrict__ out, int64_t* __restrict__ out_indices) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    if (out) out[i] = core::from_radix_bits<T>(bits[i]);
    if (out_indices) out_indices[i] = order[i];
  }
}

template <class T>
void partition_by_sort(cudaStream_t stream, const T* data, int64_t n, T* out, int64_t* out_indices) {
  using U = core::radix_bits_t<T>;
  size_t sort_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, static_cast<const U*>(nullptr),
                                                     static_cast<U*>(nullptr), static_cast<const int64_t*>(nullptr),
                                                     static_cast<int64_t*>(nullptr), n, 0, int(sizeof(U) * 8), stream));
  const size_t keys_bytes = align16(size_t(n) * sizeof(U)), index_bytes = align16(size_t(n) * 8);
  stream_buffer memory(stream, 2 * keys_bytes + 2 * index_bytes + sort_bytes);
  auto* base = static_cast<unsigned char*>(memory.get());
  U* bits = reinterpret_cast<U*>(base);
  U* sorted = reinterpret_cast<U*>(base + keys_bytes);
  int64_t* iota = reinterpret_cast<int64_t*>(base + 2 * keys_bytes);
  int64_t* order = reinterpret_cast<int64_t*>(base + 2 * keys_bytes + index_bytes);
  void* temp = base + 2 * keys_bytes + 2 * index_bytes;
  const unsigned grid = unsigned(std::min<int64_t>((n + 255) / 256, 4096));
  launch(radix_bits_kernel<T>, grid, 256, 0, stream, data, n, bits);
  fill_positions(stream, current_device_limits(), iota, n);
  GSEARCH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, sort_bytes, bits, sorted, iota, order, n, 0,
                                                     int(sizeof(U) * 8), stream));
  launch(partition_from_sorted_kernel<T>, grid, 256, 0, stream, sorted, order, n, out, out_indices);
}

// The result of quantile / median into device memory, and the wait the contract promises.
void finish_doubles(cudaStream_t stream, double* out, const std::vector<double>& values) {
  to_device(stream, out, values.data(), values.size());
  wait(stream);
}

// NaNs in data[0, n): a counting pass with the one splitter NaN (bucket 1: the elements equal
// to it). 0 for integers.
template <class T>
int64_t count_nan(cudaStream_t stream, const T* data, int64_t n, const device_limits& dev) {
  if constexpr (!std::is_floating_point_v<T>) {
    return 0;
  } else {
    pass_memory<T> mem(stream, 1, 0);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    to_device(stream, mem.splitters, &nan, 1);
    launch_bucket_pass(stream, data, n, mem.splitters, 1, mem.copy, false, mem.hist, mem.candidates, 0,
                       mem.candidate_count(), dev);
    u64 counts[3];
    to_host(stream, counts, mem.hist, 3);
    wait(stream);
    return int64_t(counts[1]);
  }
}

// The ranks the quantile rules need: the non-NaN count (nanquantile: NaNs are skipped; else data
// with a NaN gives NaN, known from its largest element, selected with the others).
template <class T>
struct nan_rule {
  int64_t count = 0;       // the elements the ranks are among
  bool check_last = false;  // a NaN in the data makes every result NaN (select_checking_nan)
};
template <class T>
nan_rule<T> nan_rule_of(cudaStream_t stream, const T* data, int64_t n, bool skip_nan) {
  if (!std::is_floating_point_v<T>) return {n, false};
  if (!skip_nan) return {n, true};
  return {n - count_nan(stream, data, n, current_device_limits()), false};
}

// The values of `ranks` (any order, repeats allowed) on the host and, where check_nan, whether the
// data holds a NaN (quantile's rule: then every result is NaN). The radix select counts the NaNs
// in its first pass, where the other routes select rank n - 1 too: a third slot for the radix
// select, which took a median of 2^28 float32 from 0.54 ms (two ranks) to 0.78 (three; issue 41's
// radix_probe, 20945d5).
template <class T>
std::vector<T> select_checking_nan(cudaStream_t stream, const T* data, int64_t n, std::vector<int64_t> ranks,
                                   bool check_nan, bool& nan) {
  nan = false;
  if (!check_nan) return select_to_host(stream, data, n, ranks);
  const std::vector<int64_t> sorted = sorted_distinct(ranks);
  if (n > sample_size<T> && int64_t(sorted.size()) <= radix_select_routed_ranks)
    if (std::optional<radix_select<T>> radix =
            radix_select<T>::enqueue(stream, data, n, sorted, false, true)) {
      int64_t nans = 0;
      if (std::optional<std::vector<T>> values = radix->finish(&nans)) {
        nan = nans > 0;
        return in_rank_order(ranks, sorted, *values);
      }
    }
  ranks.push_back(n - 1);
  std::vector<T> values = select_to_host(stream, data, n, ranks);
  nan = values.back() != values.back();
  values.pop_back();
  return values;
}

// partition's scatter of data around m splitters (select_scatter_kernel.cuh), its tiles sorted
// by bucket in shared memory where there are more than scatter_few_buckets buckets.
template <class T>
void launch_scatter(cudaStream_t stream, const device_limits& dev, const T* data,
                    const scan_layout<T, scatter_threads, scatter_loads>& layout, const T* splitters, int m,
                    u64* cursors, bool even_down, T* out, int64_t* out_indices) {
  const bool sorted = 2 * m + 1 > scatter_few_buckets;
  const scatter_shared<T> shape{m, sorted ? int(layout.tile) : 0};
  auto kernel = sorted ? partition_scatter_kernel<T, scatter_threads, scatter_loads, true>
                       : partition_scatter_kernel<T, scatter_threads, scatter_loads, false>;
  launch_filling(kernel, scatter_threads, int64_t(shape.bytes()), layout.tiles(), stream, dev, data, layout,
                 splitters, m, cursors, even_down, out, out_indices);
}

}  // namespace

template <class T>
void select(CUstream_st* stream, const T* data, int64_t n, const int64_t* ranks, int64_t m, T* values) {
  if (m == 0) return;
  // One rank on the radix route (select_sorted_ranks' first choice for it): the answer copied
  // into `values` on the device behind the passes, and no wait: the chain answers every input
  // (radix_select.cuh), so nothing here depends on the host seeing it first (the host route
  // below copies its answer back to the device and waits).
  if (m == 1 && n > sample_size<T>)
    if (std::optional<radix_select<T>> radix = radix_select<T>::enqueue(stream, data, n, {ranks[0]})) {
      GSEARCH_CUDA_CHECK(cudaMemcpyAsync(values, radix->values(), sizeof(T), cudaMemcpyDeviceToDevice, stream));
      return;
    }
  const std::vector<T> out = select_to_host(stream, data, n, std::vector<int64_t>(ranks, ranks + m));
  to_device(stream, values, out.data(), out.size());
  wait(stream);
}

template <class T>
void partition(CUstream_st* stream, const T* data, int64_t n, const int64_t* kth, int64_t m, T* out,
               int64_t* out_indices) {
  if (n == 0) return;
  if (m == 0) {  // no kth: numpy's copy (argpartition: the identity), in the data's order
    if (out) GSEARCH_CUDA_CHECK(cudaMemcpyAsync(out, data, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    if (out_indices) {
      fill_positions(stream, current_device_limits(), out_indices, n);
    }
    wait(stream);
    return;
  }
  const device_limits dev = current_device_limits();
  const scan_layout<T, scatter_threads, scatter_loads> layout{n, unaligned_head(data, n)};
  // As many kth as select routes to the radix select: its answers and the counts under them
  // place every bucket (the scatter's even_down), all on the device: no count pass, no wait.
  std::optional<radix_select<T>> radix;
  if (m <= radix_select_routed_ranks)
    radix = radix_select<T>::enqueue(stream, data, n, std::vector<int64_t>(kth, kth + m));
  if (radix) {
    stream_buffer cursors(stream, size_t(2 * m + 1) * sizeof(u64));
    auto* c = static_cast<u64*>(cursors.get());
    launch(partition_cursors_kernel, 1, 32, 0, stream, radix->less(), int(m), n, c);
    launch_scatter(stream, dev, data, layout, radix->values(), int(m), c, true, out, out_indices);
    return;
  }
  // More kth (up to the scatter's most): the many-rank select's answers and the elements under
  // each place every bucket as the radix select's do, with no counting pass.
  const std::vector<int64_t> sorted_kth = sorted_distinct(std::vector<int64_t>(kth, kth + m));
  if (n > sample_size<T> && int64_t(sorted_kth.size()) > radix_select_routed_ranks &&
      int64_t(sorted_kth.size()) <= partition_max_splitters)
    if (std::optional<many_answers<T>> many = many_select(stream, data, n, sorted_kth)) {
      const int ms = int(sorted_kth.size());
      std::vector<u64> bounds(size_t(2 * ms + 1));
      for (int i = 0; i < ms; ++i)
        bounds[size_t(2 * i)] = bounds[size_t(2 * i + 1)] = u64(many->less[size_t(i)]);
      bounds[size_t(2 * ms)] = u64(n);
      stream_buffer memory(stream, align16(bounds.size() * 8) + size_t(ms) * sizeof(T));
      auto* cursors = static_cast<u64*>(memory.get());
      T* values =
          reinterpret_cast<T*>(static_cast<unsigned char*>(memory.get()) + align16(bounds.size() * 8));
      to_device(stream, cursors, bounds.data(), bounds.size());
      to_device(stream, values, many->values.data(), size_t(ms));
      launch_scatter(stream, dev, data, layout, static_cast<const T*>(values), ms, cursors, true, out, out_indices);
      wait(stream);
      return;
    }
  // The kth values, deduplicated by key (equal values share the bucket of the elements equal to them).
  std::vector<T> splitters;
  for (const T v : select_to_host(stream, data, n, std::vector<int64_t>(kth, kth + m)))
    if (splitters.empty() || key_less(splitters.back(), v)) splitters.push_back(v);
  const int64_t ms = int64_t(splitters.size());
  if (ms > partition_max_splitters) {
    partition_by_sort(stream, data, n, out, out_indices);
    wait(stream);
    return;
  }
  // Counts per bucket (a bucket pass, nothing copied), their exclusive prefix sums as the cursors.
  const int64_t buckets = 2 * ms + 1;
  size_t scan_bytes = 0;
  GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<const u64*>(nullptr),
                                                   static_cast<u64*>(nullptr), buckets, stream));
  pass_memory<T> mem(stream, ms, 0);
  stream_buffer scan_memory(stream, align16(size_t(buckets) * 8) + scan_bytes);
  auto* cursors = static_cast<u64*>(scan_memory.get());
  void* scan_temp = static_cast<unsigned char*>(scan_memory.get()) + align16(size_t(buckets) * 8);
  to_device(stream, mem.splitters, splitters.data(), splitters.size());
  launch_bucket_pass(stream, data, n, mem.splitters, ms, mem.copy, false, mem.hist, mem.candidates, 0,
                     mem.candidate_count(), dev);
  GSEARCH_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, mem.hist, cursors, buckets, stream));
  // The scatter.
  launch_scatter(stream, dev, data, layout, mem.splitters, int(ms), cursors, false, out, out_indices);
  wait(stream);
}

template <class T>
void quantile(CUstream_st* stream, const T* data, int64_t n, const double* q, int64_t m, quantile_method method,
              const quantile_dtypes& dtypes, bool skip_nan, double* out) {
  if (m == 0) return;
  const nan_rule<T> rule = nan_rule_of(stream, data, n, skip_nan);
  std::vector<double> results(size_t(m), std::numeric_limits<double>::quiet_NaN());
  if (rule.count == 0) return finish_doubles(stream, out, results);  // all NaN
  std::vector<core::quantile_point> points;
  std::vector<int64_t> ranks;
  for (int64_t i = 0; i < m; ++i) {
    points.push_back(core::quantile_point_of(method, q[i], rule.count, dtypes));
    ranks.push_back(points.back().lo);
    ranks.push_back(points.back().hi);
  }
  bool nan = false;
  const std::vector<T> values = select_checking_nan(stream, data, n, ranks, rule.check_last, nan);
  if (!nan)  // else: a NaN, every result NaN
    for (int64_t i = 0; i < m; ++i)
      results[size_t(i)] =
          core::quantile_combine(points[size_t(i)], values[size_t(2 * i)], values[size_t(2 * i + 1)], dtypes);
  finish_doubles(stream, out, results);
}

template <class T>
void median(CUstream_st* stream, const T* data, int64_t n, bool skip_nan, double* out) {
  const nan_rule<T> rule = nan_rule_of(stream, data, n, skip_nan);
  std::vector<double> result(1, std::numeric_limits<double>::quiet_NaN());
  if (rule.count == 0) return finish_doubles(stream, out, result);
  const core::median_ranks r = core::median_ranks_of(rule.count);
  bool nan = false;
  const std::vector<T> values = select_checking_nan(stream, data, n, {r.lo, r.hi}, rule.check_last, nan);
  if (!nan) result[0] = core::median_combine(values[0], values[1], rule.count);
  finish_doubles(stream, out, result);
}

GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_SELECT_OPS)
GSEARCH_INSTANTIATE_BACKEND_OPS(GSEARCH_QUANTILE_OPS)
#define GSEARCH_INSTANTIATE_PLANNED_SELECT(T) template class planned_select<T>;
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE_PLANNED_SELECT)
#undef GSEARCH_INSTANTIATE_PLANNED_SELECT

}  // namespace gsearch::cuda_backend
