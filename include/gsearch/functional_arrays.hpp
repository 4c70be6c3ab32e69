#pragma once
/// \file
/// Extensible sparse functional arrays (seed 004 §4.3-4.4, issue 23): a machine of N cells that
/// holds many arrays at once, each a persistent map from int64 indices to values.
///
///   gsearch::functional_arrays<int64_t> fa(gsearch::cpu, 4096);   // 4,096 cells
///   auto a0 = fa.empty();
///   auto a1 = fa.update(a0, 7, 70);         // a new array; a0 is still the empty one
///   auto a2 = fa.update(a1, 1000000, 5);    // sparse: any index
///   fa.lookup(a2, 7);                       // 70
///   fa.lookup(a0, 7);                       // nullopt
///   auto a3 = fa.remove(a2, 7);
///   fa.size(a2), fa.size(a3);               // 2, 1
///   fa.next(a2, 7);                         // 1000000: the least defined index above 7
///   fa.release(a0);                         // its cells may be reused
///
/// Every operation is one pass over the machine's cells (a compare and an increment in each)
/// and, for the queries, a fold, whatever history made the arrays: core/functional_arrays.hpp
/// has the representation (the version tree as a line of positions, a cell a piece (index,
/// value, positions)) and docs/design.md, "Functional arrays", its invariants.
///
/// Capacity: an update takes at most 2 cells and a remove 1 (empty takes none); each array made
/// takes a version slot until it is released. When the free cells run out the machine frees
/// every cell that no live array sees (a sweep) and tries again; when that is not enough, or
/// no version slot is free, the operation throws out_of_memory and changes nothing. When the
/// backend's pass itself throws (a CUDA error), the new array's version slot is given back.
///
/// Beside a GPU machine's persistent kernel (as beside gsearch::server's): anything that waits for
/// every kernel of the device (cudaDeviceSynchronize, cudaFree, cudaFreeHost) waits until the
/// machine is destroyed, and kernels other libraries load lazily may too; launch those once
/// before making the machine.
///
/// Handles: `array` names a version of one machine: its version slot, the slot's generation
/// (bumped when the array is released, so a handle of a released slot that now holds another
/// array is refused too) and the machine's id (unique in the process, never reused, whatever
/// the value type). A handle used after its release, on another machine (of any value type) or
/// on a moved-from machine throws invalid_argument saying which; the check is three compares on
/// the host, nothing crosses to the device. Not thread-safe: one caller at a time.
///
/// Backends: gsearch::cpu runs each pass as a loop (threads for large machines); gsearch::cuda
/// runs a persistent kernel whose blocks hold the cells in shared memory (seed 004's smart
/// memory: a pass is every block's threads on their cells, then a grid-wide barrier), fed
/// through a ring in mapped host memory. An update on the GPU does not wait; it counts its two
/// free cells as used, and the kernel's reply says later whether it filled the remainder (the
/// machine takes the unfilled ones back before it sweeps).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gsearch/core/error.hpp"
#include "gsearch/core/functional_arrays.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/execution.hpp"

namespace gsearch {

namespace detail {
template <class V>
class functional_arrays_machine;
/// What reaches a machine's backend (tests/functional_arrays_cases.hpp defines it, to make a
/// backend's pass fail); the library has no definition.
template <class V>
struct functional_arrays_backend;
}  // namespace detail

struct functional_arrays_options {
  /// Arrays alive at once at most (0: max(2 x cells, 64)). Every update and remove also moves
  /// each slot's position: on the GPU a slot costs a third of a cell's time in each pass.
  int64_t version_slots = 0;
  int threads = 0;  ///< CPU: threads of each pass (0: all, for machines large enough)
  /// CUDA: the persistent kernel (true), else a kernel launch per operation (also what a machine
  /// gets whose persistent blocks would not fit beside the process's other machines).
  bool persistent = true;
  /// CUDA, persistent: its blocks, each holding an SM for the machine's life (0: one per 1,024
  /// cells, at most the device's SMs less 2).
  int blocks = 0;
};

template <class V>
class functional_arrays {
  static_assert(key_type<V>, "gsearch::functional_arrays: values must be one of the six key types");

 public:
  using value_type = V;
  /// An array (a version): a handle, valid on the machine that made it until released.
  struct array {
    int64_t slot = -1;        ///< its version slot
    uint64_t generation = 0;  ///< the slot's generation when it was made (odd)
    uint64_t machine = 0;     ///< the machine's id (0: no machine's)
    friend bool operator==(const array&, const array&) = default;
  };

  /// A machine of `cells` cells (>= 1) on the CPU.
  functional_arrays(const cpu_t& exec, int64_t cells, const functional_arrays_options& options = {});
  /// A machine of `cells` cells on the current CUDA device: a persistent kernel that holds the
  /// cells in its blocks' shared memory and serves the operations as the host posts them (an
  /// update returns at once; a query waits for its answer). It starts after the work exec's
  /// stream has so far, and holds its blocks' SMs until the machine is destroyed.
  functional_arrays(const cuda_t& exec, int64_t cells, const functional_arrays_options& options = {});
  functional_arrays(functional_arrays&&) noexcept;
  functional_arrays& operator=(functional_arrays&&) noexcept;
  functional_arrays(const functional_arrays&) = delete;
  functional_arrays& operator=(const functional_arrays&) = delete;
  ~functional_arrays();

  /// A new empty array.
  array empty();
  /// a with a[i] = v (a new array; a unchanged).
  array update(array a, int64_t i, V v);
  /// a with a[idx[k]] = values[k] for each k in turn (the last wins for a repeated index); the
  /// arrays in between are not kept. At most 2 x idx.size() cells.
  array update(array a, span<const int64_t> idx, span<const V> values);
  /// a without index i (a new array, equal to a when i is not defined there).
  array remove(array a, int64_t i);
  /// a[i], or nullopt when i is not defined in a.
  std::optional<V> lookup(array a, int64_t i);
  /// lookup of each idx[k]: values[k] (V{} when absent) and found[k] (1 / 0). On the GPU a batch
  /// on the device (one pass to find the array's pieces, a sort, a binary search per index), the
  /// three arrays in host or device memory (device memory: no copy).
  void lookup(array a, span<const int64_t> idx, span<V> values, span<uint8_t> found);
  /// The number of defined indices.
  int64_t size(array a);
  /// The least index above i defined in a, or nullopt.
  std::optional<int64_t> next(array a, int64_t i);
  /// Queries answered later: posted now, their answers read with take(ticket) (each ticket once;
  /// the machine keeps an answer until it is taken). On the GPU the host goes on while the
  /// kernel serves them in order with the rest (a replayed stream of operations runs as a
  /// pipeline); on the CPU they are answered at once. A query sees the array as it was posted,
  /// even if the array is released before the answer is taken.
  struct ticket {
    uint64_t id = 0;
  };
  using result = core::fa_result<V>;  ///< lookup: found, value; size: number; next: found, number
  ticket post_lookup(array a, int64_t i);
  ticket post_size(array a);
  ticket post_next(array a, int64_t i);
  result take(ticket t);
  /// Returns once every operation so far is done (on the GPU: served by the kernel).
  void sync();
  /// The defined indices of a in increasing order, and their values.
  void items(array a, std::vector<int64_t>& idx, std::vector<V>& values);
  /// Forgets a: the cells only it (and other released arrays) saw become free; its version slot
  /// is free (its handles, and copies of them, are refused from now on).
  void release(array a);
  /// Whether a is a live array of this machine.
  bool live(array a) const;
  /// The machine's id, which its handles carry: unique among the machines of the process (of
  /// every value type), never reused; a moved-to machine takes the moved-from one's.
  uint64_t id() const { return id_; }

  int64_t cells() const;
  int64_t free_cells() const { return int64_t(free_cells_.size()); }
  int64_t live_arrays() const { return live_count_; }
  int64_t version_slots() const;
  /// The GPU's persistent kernel's blocks; 0 on the CPU and in the launch form.
  int persistent_blocks() const;
  /// Sweeps made so far (when the free cells ran out), and the seconds they took together (on
  /// the GPU: the kernel's dump, the copies each way and the host's sweep).
  int64_t collections() const { return collections_; }
  double collection_seconds() const { return collection_seconds_; }
  /// The machine's invariants (the pieces of an index disjoint, positions on the line, live
  /// versions distinct) and the free list's: "" when they hold. O(cells log cells); for tests.
  std::string check();

 private:
  friend struct detail::functional_arrays_backend<V>;
  int64_t slot_of(array a, const char* what) const;
  std::string refusal(array a) const;
  array make_child(array a, int64_t i, const V* v);  // update (v) or remove (nullptr)
  array take_slot();
  void free_slot(int64_t s);
  void need_cells(int64_t k, const char* what);
  void start(std::unique_ptr<detail::functional_arrays_machine<V>> machine);
  static int64_t slots_for(int64_t cells, const functional_arrays_options& options);

  std::unique_ptr<detail::functional_arrays_machine<V>> machine_;
  uint64_t id_ = 0;                   // the handles' machine (start() draws it)
  std::vector<uint64_t> generation_;  // by slot; even: free, odd: live
  std::vector<int64_t> free_slots_;
  std::vector<int64_t> free_cells_;
  int64_t live_count_ = 0;
  int64_t collections_ = 0;
  double collection_seconds_ = 0;
};

#define GSEARCH_EXTERN_FUNCTIONAL_ARRAYS(V) extern template class functional_arrays<V>;
GSEARCH_KEY_TYPES(GSEARCH_EXTERN_FUNCTIONAL_ARRAYS)
#undef GSEARCH_EXTERN_FUNCTIONAL_ARRAYS

}  // namespace gsearch
