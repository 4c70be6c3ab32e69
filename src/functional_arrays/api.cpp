// gsearch::functional_arrays (functional_arrays.hpp): the host's part of the machine (the
// handles, the free version slots and cells, the sweep when the cells run out, the argument
// checks) around a backend's machine (src/functional_arrays/machine.hpp).

#include "gsearch/functional_arrays.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>

#include "on_backend.hpp"
#include "functional_arrays/machine.hpp"

namespace gsearch {
namespace {

// A new machine's id: one counter for every value type (a float64 machine's handle is refused
// by an int64 machine's), from 1 (0 is no machine's), never reused.
uint64_t next_machine_id() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

template <class V>
int64_t functional_arrays<V>::slots_for(int64_t cells, const functional_arrays_options& options) {
  if (cells < 1) throw invalid_argument("gsearch::functional_arrays: cells must be >= 1 (got " + std::to_string(cells) + ")");
  if (options.version_slots < 0) throw invalid_argument("gsearch::functional_arrays: version_slots must be >= 0");
  return options.version_slots > 0 ? options.version_slots : std::max<int64_t>(2 * cells, 64);
}

template <class V>
functional_arrays<V>::functional_arrays(const cpu_t& exec, int64_t cells, const functional_arrays_options& options) {
  const int64_t slots = slots_for(cells, options);
  start(on_backend(exec, [&](auto h) {
    return backend::make_functional_arrays_machine<V>(options.threads > 0 ? options.threads : h, cells, slots);
  }));
}

template <class V>
functional_arrays<V>::functional_arrays(const cuda_t& exec, int64_t cells, const functional_arrays_options& options) {
  const int64_t slots = slots_for(cells, options);
  start(on_backend(exec, [&](auto h) {
    return backend::make_functional_arrays_machine<V>(h, cells, slots, options.persistent, options.blocks);
  }));
}

template <class V>
void functional_arrays<V>::start(std::unique_ptr<detail::functional_arrays_machine<V>> machine) {
  machine_ = std::move(machine);
  id_ = next_machine_id();
  const int64_t slots = machine_->version_slots(), cells = machine_->cells();
  generation_.assign(size_t(slots), 0);
  free_slots_.reserve(size_t(slots));
  for (int64_t s = slots - 1; s >= 0; --s) free_slots_.push_back(s);
  free_cells_.reserve(size_t(cells));
  for (int64_t c = cells - 1; c >= 0; --c) free_cells_.push_back(c);
}

template <class V>
functional_arrays<V>::functional_arrays(functional_arrays&&) noexcept = default;
template <class V>
functional_arrays<V>& functional_arrays<V>::operator=(functional_arrays&&) noexcept = default;
template <class V>
functional_arrays<V>::~functional_arrays() = default;

template <class V>
int64_t functional_arrays<V>::cells() const {
  return machine_ ? machine_->cells() : 0;
}

template <class V>
int functional_arrays<V>::persistent_blocks() const {
  return machine_ ? machine_->persistent_blocks() : 0;
}

template <class V>
int64_t functional_arrays<V>::version_slots() const {
  return machine_ ? machine_->version_slots() : 0;
}

template <class V>
bool functional_arrays<V>::live(array a) const {
  return machine_ && a.machine == id_ && a.slot >= 0 && a.slot < int64_t(generation_.size()) &&
         a.generation % 2 == 1 && generation_[size_t(a.slot)] == a.generation;
}

template <class V>
int64_t functional_arrays<V>::slot_of(array a, const char* what) const {
  if (!live(a)) throw invalid_argument(std::string("gsearch::functional_arrays::") + what + ": " + refusal(a));
  return a.slot;
}

// Why a is not a live array of this machine (the error path: the compares again, to say which).
template <class V>
std::string functional_arrays<V>::refusal(array a) const {
  if (!machine_) return "a moved-from machine";
  if (a.machine == 0) return "not an array's handle (a default-constructed one)";
  if (a.machine != id_)
    return "the array is another machine's (machine " + std::to_string(a.machine) + ", this is machine " +
           std::to_string(id_) + "): a handle is valid only on the machine that made it";
  if (a.slot < 0 || a.slot >= int64_t(generation_.size()) || a.generation % 2 == 0 ||
      a.generation > generation_[size_t(a.slot)])
    return "not a handle this machine made (slot " + std::to_string(a.slot) + ", generation " +
           std::to_string(a.generation) + ")";
  return "the array was released (its version slot " + std::to_string(a.slot) +
         (generation_[size_t(a.slot)] % 2 == 1 ? " holds a newer array now)" : " is free)");
}

template <class V>
typename functional_arrays<V>::array functional_arrays<V>::take_slot() {
  const int64_t s = free_slots_.back();
  free_slots_.pop_back();
  ++generation_[size_t(s)];  // odd: live
  ++live_count_;
  return {s, generation_[size_t(s)], id_};
}

// Slot s is free: its generation moves on (even), so its handles are refused from now on.
template <class V>
void functional_arrays<V>::free_slot(int64_t s) {
  ++generation_[size_t(s)];
  free_slots_.push_back(s);
  --live_count_;
}

template <class V>
void functional_arrays<V>::need_cells(int64_t k, const char* what) {
  if (free_slots_.empty())
    throw out_of_memory(std::string("gsearch::functional_arrays::") + what + ": all " +
                        std::to_string(version_slots()) + " version slots hold live arrays (release some, or make the "
                        "machine with more version_slots)");
  if (int64_t(free_cells_.size()) >= k) return;
  // First the cells the machine was given and did not fill (the GPU's pipeline: known from the
  // operations done so far, then from all of them), which costs no pass.
  for (const bool wait : {false, true}) {
    for (const int64_t c : machine_->unfilled(wait)) free_cells_.push_back(c);
    if (int64_t(free_cells_.size()) >= k) return;
  }
  // The sweep: every cell no live array sees becomes free.
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> live_slots;
  for (int64_t s = 0; s < int64_t(generation_.size()); ++s)
    if (generation_[size_t(s)] % 2 == 1) live_slots.push_back(s);
  free_cells_ = machine_->collect(span<const int64_t>(live_slots.data(), int64_t(live_slots.size())));
  std::reverse(free_cells_.begin(), free_cells_.end());  // the lowest cells taken first
  ++collections_;
  collection_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (int64_t(free_cells_.size()) < k)
    throw out_of_memory(std::string("gsearch::functional_arrays::") + what + ": the machine is full (" +
                        std::to_string(cells()) + " cells hold what the live arrays see; this operation needs " +
                        std::to_string(k) + " free); nothing was changed");
}

template <class V>
typename functional_arrays<V>::array functional_arrays<V>::empty() {
  if (!machine_) throw invalid_argument("gsearch::functional_arrays::empty: a moved-from machine");
  need_cells(0, "empty");
  const array a = take_slot();
  try {
    machine_->root(a.slot);
  } catch (...) {  // the backend failed (a CUDA error): no array was made
    free_slot(a.slot);
    throw;
  }
  return a;
}

template <class V>
typename functional_arrays<V>::array functional_arrays<V>::make_child(array a, int64_t i, const V* v) {
  const char* what = v ? "update" : "remove";
  const int64_t parent = slot_of(a, what);
  const core::fa_change change = v ? core::fa_change::update : core::fa_change::remove;
  need_cells(core::fa_cells_needed(change), what);
  const array child = take_slot();
  const int64_t remainder = free_cells_.back();
  const int64_t fresh = free_cells_.size() >= 2 ? free_cells_[free_cells_.size() - 2] : -1;
  int used = 0;
  try {
    used = machine_->insert(parent, child.slot, change, i, v ? *v : V{}, remainder, fresh);
  } catch (...) {  // the backend's pass failed (a CUDA error): the child's slot is not kept live
    free_slot(child.slot);
    throw;
  }
  // Give back what the pass did not fill (remainder on top, then fresh).
  const int64_t top = free_cells_.back();
  free_cells_.pop_back();
  int64_t second = -1;
  if (change == core::fa_change::update) {
    second = free_cells_.back();
    free_cells_.pop_back();
  }
  if (change == core::fa_change::update && !(used & 2)) free_cells_.push_back(second);
  if (!(used & 1)) free_cells_.push_back(top);
#ifndef NDEBUG  // debug builds: the invariants of the index just carved, after every update and remove
  if (const std::string broken = machine_->check_index(i); !broken.empty())
    throw error(std::string("gsearch::functional_arrays::") + what + ": invariant broken: " + broken);
#endif
  return child;
}

template <class V>
typename functional_arrays<V>::array functional_arrays<V>::update(array a, int64_t i, V v) {
  return make_child(a, i, &v);
}

template <class V>
typename functional_arrays<V>::array functional_arrays<V>::update(array a, span<const int64_t> idx,
                                                                  span<const V> values) {
  if (idx.size() != values.size())
    throw invalid_argument("gsearch::functional_arrays::update: " + std::to_string(idx.size()) + " indices and " +
                           std::to_string(values.size()) + " values");
  slot_of(a, "update");
  array cur = a;
  try {
    for (int64_t k = 0; k < idx.size(); ++k) {
      const array next = make_child(cur, idx[k], &values[k]);
      if (k > 0) release(cur);  // the arrays in between are not kept
      cur = next;
    }
  } catch (...) {  // a full machine: no array of the batch stays (their cells are garbage)
    if (!(cur == a)) release(cur);
    throw;
  }
  return cur;
}

template <class V>
typename functional_arrays<V>::array functional_arrays<V>::remove(array a, int64_t i) {
  return make_child(a, i, nullptr);
}

template <class V>
std::optional<V> functional_arrays<V>::lookup(array a, int64_t i) {
  const int64_t s = slot_of(a, "lookup");  // first: machine_ is null on a moved-from machine
  return machine_->lookup(s, i);
}

template <class V>
void functional_arrays<V>::lookup(array a, span<const int64_t> idx, span<V> values, span<uint8_t> found) {
  const int64_t s = slot_of(a, "lookup");
  if (values.size() != idx.size() || found.size() != idx.size())
    throw invalid_argument("gsearch::functional_arrays::lookup: values and found must have as many elements as the " +
                           std::to_string(idx.size()) + " indices");
  if (machine_->lookup_many(s, idx.data(), idx.size(), values.data(), found.data())) return;
  // The version's view once (its pieces in index order), then a binary search per index.
  std::vector<int64_t> keys;
  std::vector<V> vals;
  machine_->items(s, keys, vals);
  for (int64_t k = 0; k < idx.size(); ++k) {
    const auto it = std::lower_bound(keys.begin(), keys.end(), idx[k]);
    const bool hit = it != keys.end() && *it == idx[k];
    found[k] = hit;
    values[k] = hit ? vals[size_t(it - keys.begin())] : V{};
  }
}

template <class V>
int64_t functional_arrays<V>::size(array a) {
  const int64_t s = slot_of(a, "size");
  return machine_->size(s);
}

template <class V>
std::optional<int64_t> functional_arrays<V>::next(array a, int64_t i) {
  const int64_t s = slot_of(a, "next");
  return machine_->next(s, i);
}

template <class V>
typename functional_arrays<V>::ticket functional_arrays<V>::post_lookup(array a, int64_t i) {
  const int64_t s = slot_of(a, "post_lookup");
  return {machine_->post_query(core::fa_query::lookup, s, i)};
}

template <class V>
typename functional_arrays<V>::ticket functional_arrays<V>::post_size(array a) {
  const int64_t s = slot_of(a, "post_size");
  return {machine_->post_query(core::fa_query::size, s, 0)};
}

template <class V>
typename functional_arrays<V>::ticket functional_arrays<V>::post_next(array a, int64_t i) {
  const int64_t s = slot_of(a, "post_next");
  return {machine_->post_query(core::fa_query::next, s, i)};
}

template <class V>
typename functional_arrays<V>::result functional_arrays<V>::take(ticket t) {
  if (!machine_) throw invalid_argument("gsearch::functional_arrays::take: a moved-from machine");
  return machine_->take(t.id);
}

template <class V>
void functional_arrays<V>::sync() {
  if (machine_) machine_->sync();
}

template <class V>
void functional_arrays<V>::items(array a, std::vector<int64_t>& idx, std::vector<V>& values) {
  const int64_t s = slot_of(a, "items");
  machine_->items(s, idx, values);
}

template <class V>
void functional_arrays<V>::release(array a) {
  free_slot(slot_of(a, "release"));
}

template <class V>
std::string functional_arrays<V>::check() {
  if (!machine_) return "";
  std::vector<int64_t> live_slots;
  for (int64_t s = 0; s < int64_t(generation_.size()); ++s)
    if (generation_[size_t(s)] % 2 == 1) live_slots.push_back(s);
  if (int64_t(live_slots.size()) != live_count_) return "the live count differs from the live slots";
  std::vector<int64_t> f = free_cells_;
  std::sort(f.begin(), f.end());
  if (std::adjacent_find(f.begin(), f.end()) != f.end()) return "a cell is twice on the free list";
  return machine_->check(span<const int64_t>(live_slots.data(), int64_t(live_slots.size())));
}

#define GSEARCH_INSTANTIATE_FUNCTIONAL_ARRAYS(V) template class functional_arrays<V>;
GSEARCH_KEY_TYPES(GSEARCH_INSTANTIATE_FUNCTIONAL_ARRAYS)
#undef GSEARCH_INSTANTIATE_FUNCTIONAL_ARRAYS

}  // namespace gsearch
