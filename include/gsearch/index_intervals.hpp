#pragma once
/// \file
/// Index intervals (seeds/004 §4.1): an array whose order is refined only where it is queried.
///
///   gsearch::index_intervals<float> ii(gsearch::cuda, device_data);  // or gsearch::cpu, host data
///   float median = ii.select(ii.size() / 2);   // refines only the pieces that hold rank n/2
///   auto [b, e] = ii.range(0.25f, 0.5f);       // ii.data()[b, e): exactly the x with 0.25 <= x < 0.5
///   ii.select(ii.size() / 2 + 1);              // reuses what the first select learnt
///   ii.unplaced();                             // elements whose position is not known yet
///   ii.sort();                                 // now ii.data() is sorted
///
/// The object owns a copy of the data (host memory for gsearch::cpu, device memory for
/// gsearch::cuda) that it permutes in place as it learns, in the manner of database cracking. The
/// array is cut into pieces (index_interval): the members of a piece are the elements whose
/// positions in the sorted order are [lo, hi), and they sit at exactly those positions; a piece is
/// `settled` when its members are sorted (a run of equal values, one element, or after sort()).
/// `improve` is the seed's step on one piece: a splitter chosen among its members (the median of
/// three at spread positions: core::choose_splitter says why), a stable three-way partition of
/// the piece in place (< s, == s, > s: compare, fold, scatter), and the piece replaced by its up
/// to three parts, the equal one settled. The knowledge stays: a later select or range starts from
/// the pieces the earlier ones left (improves() counts the steps, so that a caller sees the reuse).
///
/// Design choices:
///  - Pieces, not per-element intervals: the seed keeps (lo, hi) in every cell; keeping a piece's
///    members contiguous makes the record a few words per piece (host memory, core::interval_set)
///    and an improve a partition of a contiguous range, coalesced on the GPU.
///  - range(lo, hi) cracks at the two values: the piece that holds the boundary #(x < lo) is
///    found from the facts the splits left (each boundary's splitter), and is improved once with
///    lo itself as the splitter, after which the boundary is exact: one pass over one piece per
///    bound, where member splitters would need several.
///  - sort() settles every piece at once with a sort of each unsettled piece (a merge sort or
///    std::sort on the CPU, one segmented radix sort on the GPU) rather than by improving piece by
///    piece: the result is the same order, and improve by improve would cost a launch per piece.
///  - Stable partitions on both backends and a deterministic splitter: the same calls leave the
///    same array and the same pieces on the CPU and the GPU.
///
/// The order is np.sort's (key_traits.hpp): NaN last, -0.0 equal to 0.0.
///
/// Where it runs: every operation runs on the backend (and, for CUDA, the stream) the object was
/// built with, on the device current then, which must be current for every later call
/// (invalid_argument otherwise). Operations that return host values (improve, select, range) wait
/// for their work; on CUDA each improve is one or a few kernels and one small copy back. Temporary
/// memory: an improve of a piece of m elements takes m elements of scratch (the CPU's heap, the
/// GPU's stream-ordered pool); sort() takes n elements and the sorter's temporary memory on the
/// GPU.
///
/// Errors: invalid_argument (null data with a non-zero size, a position or rank outside [0, n),
/// select on empty data, a call on another device), cuda_error, out_of_memory.

#include <cstdint>
#include <string>
#include <vector>

#include "gsearch/core/error.hpp"
#include "gsearch/core/index_intervals.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/detail_placed_memory.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

/// Positions [begin, end) of index_intervals::data().
struct position_range {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  friend bool operator==(const position_range&, const position_range&) = default;
};

template <class T>
class index_intervals {
  static_assert(key_type<T>, "gsearch::index_intervals: elements must be one of the six key types");

 public:
  /// No elements, host memory.
  index_intervals() = default;
  /// A copy of `data` (host memory), one unsettled piece; operations run on exec.threads threads.
  index_intervals(const cpu_t& exec, span<const T> data);
  /// A copy of `data` (device memory) on the current device, made on exec's stream; operations
  /// run on that stream.
  index_intervals(const cuda_t& exec, span<const T> data);
  index_intervals(index_intervals&& other) noexcept;
  index_intervals& operator=(index_intervals&& other) noexcept;
  index_intervals(const index_intervals&) = delete;
  index_intervals& operator=(const index_intervals&) = delete;
  ~index_intervals();

  int64_t size() const { return data_.count<T>(); }
  /// True when the copy is in device memory (built with gsearch::cuda).
  bool on_device() const { return data_.on_device(); }
  /// The CUDA device the copy is on (-1 in host memory).
  int device() const { return data_.device(); }

  /// One improve step on the piece holding `position` (0 <= position < size()); nothing when that
  /// piece is settled. Returns the piece that holds `position` afterwards.
  index_interval improve(int64_t position);
  /// The element of rank k (0 <= k < size()) in the sorted order: improves the piece holding k
  /// until it is settled, then reads data()[k].
  T select(int64_t k);
  /// Settles every piece: data() is sorted afterwards.
  void sort();
  /// The positions of data() that hold exactly the x with lo <= x < hi (key order), after
  /// refining at most the piece at each end: {b, e} with b = #(x < lo), e = #(x < hi). Empty
  /// ({0, 0}, nothing refined) when hi is not after lo.
  position_range range(T lo, T hi);

  /// The piece holding `position` (0 <= position < size()), without refining anything.
  index_interval interval(int64_t position) const;
  /// Every piece, in order.
  std::vector<index_interval> interval_list() const { return set_.list(); }
  /// How many pieces (adjacent settled pieces count as one: their union is sorted).
  int64_t intervals() const { return set_.count(); }
  /// Elements in unsettled pieces: those whose position is not known yet.
  int64_t unplaced() const { return set_.unplaced(); }
  /// Improve steps taken so far (range's splits by a value included; sort() adds none).
  int64_t improves() const { return improves_; }
  /// The permuted copy (host or device memory, as built): after sort(), sorted.
  span<const T> data() const { return {data_.data<T>(), size()}; }

  /// The invariants (core::check_intervals: the pieces cover [0, n) in order, each one's members
  /// after every member of the pieces before it, settled pieces sorted, the facts true), checked
  /// on a host copy of the data: "" when they hold, else the first broken. O(n); for tests.
  std::string check() const;

 private:
  template <class F>
  decltype(auto) on_own_backend(F&& call) const;
  void improve_piece(const index_interval& piece, const T* splitter);
  int64_t lower_position(T v);

  detail::placed_memory data_;      // the copy: host or device memory
  int threads_ = 0;                 // the CPU's
  CUstream_st* stream_ = nullptr;   // CUDA's
  core::interval_set<T> set_;
  int64_t improves_ = 0;
};

#define GSEARCH_EXTERN_INDEX_INTERVALS(T) extern template class index_intervals<T>;
GSEARCH_KEY_TYPES(GSEARCH_EXTERN_INDEX_INTERVALS)
#undef GSEARCH_EXTERN_INDEX_INTERVALS

}  // namespace gsearch
