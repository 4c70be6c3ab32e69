// The CPU's machine of functional arrays (src/functional_arrays/machine.hpp): the cells as
// arrays (index, value, first, last) and the versions' open positions, each operation one loop
// over every cell (and every version slot for the increment) running core/functional_arrays.hpp's
// steps, the queries folds over the cells. This is the seed's "sequential simulator" made
// data-parallel; the executable specification (functional_arrays_spec.hpp) is the other thing.

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "gsearch/core/key_traits.hpp"
#include "cpu/parallel.hpp"
#include "functional_arrays/host.hpp"
#include "functional_arrays/machine.hpp"

namespace gsearch::cpu_backend {
namespace {

using core::fa_span;

// Cells per thread below which a pass runs on one thread (a pass is a few ns a cell).
constexpr int64_t fa_cells_per_thread = int64_t(1) << 15;

template <class V>
class cpu_machine final : public detail::functional_arrays_machine<V> {
 public:
  cpu_machine(int threads, int64_t cells, int64_t slots)
      : threads_(threads), index_(size_t(cells), 0), value_(size_t(cells), V{}), span_(size_t(cells)),
        open_(size_t(slots), 0) {}

  int64_t cells() const override { return int64_t(span_.size()); }
  int64_t version_slots() const override { return int64_t(open_.size()); }

  void root(int64_t slot) override {
    open_[size_t(slot)] = core::fa_root_open(end_);
    end_ += 2;
  }

  int insert(int64_t parent, int64_t child, core::fa_change change, int64_t i, V v, int64_t remainder,
             int64_t fresh) override {
    const int64_t p = open_[size_t(parent)];
    // The carved piece's remainder, from the one cell that is the piece of i holding p.
    std::atomic<int64_t> carved_cell{-1};
    std::atomic<int64_t> after_first{0}, after_last{0};
    pass(cells(), [&](int64_t c) {
      bool carved = false;
      const fa_span after = core::fa_insert_step(span_[size_t(c)], index_[size_t(c)], i, p, carved);
      if (carved) {
        carved_cell.store(c, std::memory_order_relaxed);
        after_first.store(after.first, std::memory_order_relaxed);
        after_last.store(after.last, std::memory_order_relaxed);
      }
    });
    pass(version_slots(), [&](int64_t s) { open_[size_t(s)] = core::fa_shift_open(open_[size_t(s)], p); });
    end_ += 2;
    open_[size_t(child)] = p + 1;
    int used = 0;
    const int64_t c = carved_cell.load();
    const fa_span after{after_first.load(), after_last.load()};
    if (c >= 0 && !core::fa_is_free(after)) {
      index_[size_t(remainder)] = i;
      value_[size_t(remainder)] = value_[size_t(c)];
      span_[size_t(remainder)] = after;
      used |= 1;
    }
    if (change == core::fa_change::update) {
      index_[size_t(fresh)] = i;
      value_[size_t(fresh)] = v;
      span_[size_t(fresh)] = core::fa_child_span(p);
      used |= 2;
    }
    return used;
  }

  std::optional<V> lookup(int64_t slot, int64_t i) override {
    const int64_t open = open_[size_t(slot)];
    std::atomic<int64_t> found{core::fa_no_cell};
    pass(cells(), [&](int64_t c) {
      if (core::fa_lookup_match(span_[size_t(c)], index_[size_t(c)], i, open)) found.store(c, std::memory_order_relaxed);
    });
    const int64_t c = found.load();
    return c == core::fa_no_cell ? std::nullopt : std::optional<V>(value_[size_t(c)]);
  }

  int64_t size(int64_t slot) override {
    const int64_t open = open_[size_t(slot)];
    std::atomic<int64_t> count{0};
    pass_chunks(cells(), [&](int64_t b, int64_t e) {
      int64_t n = 0;
      for (int64_t c = b; c < e; ++c) n += !core::fa_is_free(span_[size_t(c)]) && core::fa_holds(span_[size_t(c)], open);
      count.fetch_add(n, std::memory_order_relaxed);
    });
    return count.load();
  }

  std::optional<int64_t> next(int64_t slot, int64_t i) override {
    const int64_t open = open_[size_t(slot)];
    core::fa_next_best best;
    std::mutex m;
    pass_chunks(cells(), [&](int64_t b, int64_t e) {
      core::fa_next_best mine;
      for (int64_t c = b; c < e; ++c)
        mine = core::fa_next_combine(mine, core::fa_next_candidate(span_[size_t(c)], index_[size_t(c)], i, open));
      const std::lock_guard<std::mutex> lock(m);
      best = core::fa_next_combine(best, mine);
    });
    return best.found ? std::optional<int64_t>(best.index) : std::nullopt;
  }

  void items(int64_t slot, std::vector<int64_t>& idx, std::vector<V>& values) override {
    detail::fa_items(index_.data(), value_.data(), span_.data(), cells(), open_[size_t(slot)], idx, values);
  }

  std::vector<int64_t> collect(span<const int64_t> live) override {
    return detail::fa_sweep(span_.data(), cells(), detail::fa_opens_of(open_.data(), live));
  }

  std::string check_index(int64_t i) override {
    return detail::fa_check_index(index_.data(), span_.data(), cells(), i, end_);
  }

  std::string check(span<const int64_t> live) override {
    return detail::fa_check(index_.data(), span_.data(), cells(), detail::fa_opens_of(open_.data(), live), end_);
  }

 private:
  // body(c) for every c of [0, n), on the machine's threads when n is large.
  template <class F>
  void pass(int64_t n, F&& body) {
    pass_chunks(n, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) body(c);
    });
  }
  template <class F>
  void pass_chunks(int64_t n, F&& body) {
    parallel_for(n, thread_count(threads_, n, fa_cells_per_thread), 1, body);
  }

  int threads_;
  std::vector<int64_t> index_;
  std::vector<V> value_;
  std::vector<fa_span> span_;
  std::vector<int64_t> open_;  // by version slot
  int64_t end_ = 0;            // one past the last position in use
};

}  // namespace

template <class V>
std::unique_ptr<detail::functional_arrays_machine<V>> make_functional_arrays_machine(int threads, int64_t cells,
                                                                                  int64_t version_slots) {
  return std::make_unique<cpu_machine<V>>(threads, cells, version_slots);
}

#define GSEARCH_FA_CPU_INSTANTIATE(V)                                                                            \
  template std::unique_ptr<detail::functional_arrays_machine<V>> make_functional_arrays_machine<V>(int, int64_t, \
                                                                                                   int64_t);
GSEARCH_KEY_TYPES(GSEARCH_FA_CPU_INSTANTIATE)
#undef GSEARCH_FA_CPU_INSTANTIATE

}  // namespace gsearch::cpu_backend
