#pragma once
/// \file
/// The machine of gsearch::functional_arrays as src/functional_arrays/api.cpp sees it: the cells and
/// the versions' open positions (core/functional_arrays.hpp), in host memory for the CPU
/// (src/functional_arrays/cpu.cpp) or in the GPU's memory. The public layer keeps what is the
/// host's business (which version slots and cells are free, the handles' generations) and asks
/// the machine for one pass per operation.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gsearch/core/error.hpp"
#include "gsearch/core/functional_arrays.hpp"
#include "gsearch/core/span.hpp"

namespace gsearch::detail {

template <class V>
class functional_arrays_machine {
 public:
  virtual ~functional_arrays_machine() = default;
  virtual int64_t cells() const = 0;
  virtual int64_t version_slots() const = 0;
  /// The persistent kernel's blocks (the GPU's persistent machine), else 0.
  virtual int persistent_blocks() const { return 0; }

  /// Version slot `slot` becomes a new root: the empty array.
  virtual void root(int64_t slot) = 0;
  /// One pass: version slot `child` becomes the child of `parent` by `change` of index i (to v
  /// for an update); `remainder` and `fresh` are free cells it may fill (fresh: an update's new
  /// piece). Returns which it filled: bit 0 remainder, bit 1 fresh.
  virtual int insert(int64_t parent, int64_t child, core::fa_change change, int64_t i, V v, int64_t remainder,
                     int64_t fresh) = 0;
  virtual std::optional<V> lookup(int64_t slot, int64_t i) = 0;
  virtual int64_t size(int64_t slot) = 0;
  virtual std::optional<int64_t> next(int64_t slot, int64_t i) = 0;

  /// A query posted now and answered by take(ticket) later (each ticket taken once): the GPU's
  /// persistent machine goes on without waiting; this default answers at once and keeps it.
  virtual uint64_t post_query(core::fa_query q, int64_t slot, int64_t i) {
    core::fa_result<V> r;
    if (q == core::fa_query::lookup) {
      const std::optional<V> v = lookup(slot, i);
      r.found = v.has_value();
      r.value = v.value_or(V{});
    } else if (q == core::fa_query::size) {
      r.found = true;
      r.number = size(slot);
    } else {
      const std::optional<int64_t> n = next(slot, i);
      r.found = n.has_value();
      r.number = n.value_or(0);
    }
    kept_.emplace(next_kept_, r);
    return next_kept_++;
  }
  virtual core::fa_result<V> take(uint64_t ticket) {
    const auto it = kept_.find(ticket);
    if (it == kept_.end()) throw invalid_argument("gsearch::functional_arrays::take: not a pending query's ticket");
    const core::fa_result<V> r = it->second;
    kept_.erase(it);
    return r;
  }
  /// Returns once every operation posted so far is done (the persistent machine's pipeline).
  virtual void sync() {}
  /// A batch of lookups on the machine's device (the GPU's: the arrays in host or device
  /// memory); false where the machine has none (the CPU's), and the public layer searches the
  /// version's items itself.
  virtual bool lookup_many(int64_t /*slot*/, const int64_t* /*idx*/, int64_t /*n*/, V* /*values*/,
                           uint8_t* /*found*/) {
    return false;
  }
  /// The defined indices of the version and their values, in index order.
  virtual void items(int64_t slot, std::vector<int64_t>& idx, std::vector<V>& values) = 0;
  /// Frees every cell that no version of `live` (slots) holds; returns every free cell (the
  /// host's free list is rebuilt from it: a machine that cannot say cheaply which of an
  /// operation's free cells it used lets them come back here).
  virtual std::vector<int64_t> collect(span<const int64_t> live) = 0;
  /// Free cells an insert counted as used (it returned their bit) that its pass turned out not
  /// to fill, as far as the machine knows by now; each given back once. `wait`: after every
  /// operation posted so far is done (all it will ever know). The persistent GPU machine learns
  /// it from its replies; a machine whose insert says what it filled has none.
  virtual std::vector<int64_t> unfilled(bool /*wait*/) { return {}; }
  /// The machine's invariants over the used cells and the live versions: "" when they hold.
  virtual std::string check(span<const int64_t> live) = 0;
  /// The invariants of index i's pieces alone (disjoint, on the line): one pass, what debug
  /// builds check after every update and remove.
  virtual std::string check_index(int64_t i) = 0;

 private:
  std::unordered_map<uint64_t, core::fa_result<V>> kept_;
  uint64_t next_kept_ = 0;
};

}  // namespace gsearch::detail

namespace gsearch::cpu_backend {
/// The CPU's machine: its passes on `threads` threads (0: all) once the cells are many enough.
template <class V>
std::unique_ptr<detail::functional_arrays_machine<V>> make_functional_arrays_machine(int threads, int64_t cells,
                                                                                  int64_t version_slots);
}  // namespace gsearch::cpu_backend

struct CUstream_st;

namespace gsearch::cuda_backend {
/// The GPU's machine on the current device (only in builds with CUDA): the persistent kernel
/// (src/functional_arrays/cuda/persistent.cu) of `blocks` blocks (0: by the cells) when
/// `persistent` and its blocks fit beside the process's other machines, else a kernel launch
/// per operation on `stream` (src/functional_arrays/cuda/functional_arrays.cu).
template <class V>
std::unique_ptr<detail::functional_arrays_machine<V>> make_functional_arrays_machine(CUstream_st* stream, int64_t cells,
                                                                                  int64_t version_slots,
                                                                                  bool persistent, int blocks);
/// The persistent machine, or null when its blocks would not fit beside the others.
template <class V>
std::unique_ptr<detail::functional_arrays_machine<V>> make_persistent_functional_arrays_machine(CUstream_st* stream,
                                                                                             int64_t cells,
                                                                                             int64_t version_slots,
                                                                                             int blocks);
}  // namespace gsearch::cuda_backend
