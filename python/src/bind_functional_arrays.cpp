// gsearch._core's functional arrays (gsearch/functional_arrays.hpp): the class FunctionalArrays,
// a gsearch::functional_arrays of any of the six value types on the CPU or a CUDA device (its
// persistent kernel; every call with that device current). Handles cross as
// (slot, generation, machine) tuples (the library refuses another machine's, or a released
// one's, with invalid_argument: ValueError); values as 1-D numpy arrays of the machine's dtype (the Python layer,
// gsearch/_functional_arrays.py, converts and checks them); a lock, so that calls from several
// Python threads take turns (the machine is not thread-safe).

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "gsearch/functional_arrays.hpp"
// (keep this order: binding.hpp's enum_table names gsearch::to_string)
#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

using handle = std::tuple<int64_t, uint64_t, uint64_t>;  // (slot, generation, machine)

class py_functional_arrays {
 public:
  using any_machine = key_variant<gsearch::functional_arrays>;

 private:
  // Calls call(machine) under the lock (defined first: the members below deduce from it).
  template <class F>
  auto run(F&& call) -> decltype(std::visit(call, std::declval<any_machine&>())) {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::optional<device_guard> guard;
    if (device_ >= 0) guard.emplace(device_);
    return std::visit(call, *fa_);
  }
  template <class FA>
  static typename FA::array of(const FA&, handle a) {
    return {std::get<0>(a), std::get<1>(a), std::get<2>(a)};
  }

 public:
  /// A machine of `cells` cells whose values have the dtype of `like` (any array of it).
  /// device: -1 the CPU, else that CUDA device.
  py_functional_arrays(int64_t cells, const in_array& like, int64_t version_slots, int threads, int device,
                       bool persistent, int blocks)
      : dtype_(like.dtype()), device_(device) {
    const std::string fn = "gsearch._core.FunctionalArrays";
    gsearch::functional_arrays_options o;
    o.version_slots = version_slots;
    o.threads = threads;
    o.persistent = persistent;
    o.blocks = blocks;
    if (device_ >= 0 && !gsearch::built_with_cuda())
      value_error(fn + ": device='cuda': gsearch was built without CUDA (GSEARCH_CUDA=OFF)");
    visit_key_type(fn, dtype_, [&]<class T>() {
      nb::gil_scoped_release unlocked;
      if (device_ < 0) {
        fa_.emplace(std::in_place_type<gsearch::functional_arrays<T>>, gsearch::cpu, cells, o);
      } else {
        device_guard guard(device_);  // the kernel starts on the current device
        fa_.emplace(std::in_place_type<gsearch::functional_arrays<T>>, gsearch::cuda, cells, o);
      }
    });
  }
  ~py_functional_arrays() {
    if (device_ < 0 || !fa_) return;
    try {  // the kernel stops and the memory goes with its device current
      nb::gil_scoped_release unlocked;
      device_guard guard(device_);
      fa_.reset();
    } catch (...) {
    }
  }

  handle empty() {
    return run([](auto& fa) { return as_handle(fa.empty()); });
  }

  /// a with a[idx[k]] = values[k] for each k in turn (one element: one update).
  handle update(handle a, const in_array& idx, const in_array& values) {
    const std::string fn = "gsearch._core.FunctionalArrays.update";
    check_index_array(fn, idx);
    if (values.dtype() != dtype_ || values.ndim() != 1 || !is_c_contiguous(values))
      value_error(fn + ": values must be a contiguous 1-D array of the machine's dtype " + dtype_name(dtype_));
    return run([&](auto& fa) {
      using V = typename std::remove_cvref_t<decltype(fa)>::value_type;
      return as_handle(fa.update(of(fa, a), in_span<int64_t>(idx), in_span<V>(values)));
    });
  }

  handle remove(handle a, int64_t i) {
    return run([&](auto& fa) { return as_handle(fa.remove(of(fa, a), i)); });
  }

  /// a[i] as a Python number, or None.
  nb::object lookup(handle a, int64_t i) {
    return run([&](auto& fa) -> nb::object {
      const auto v = fa.lookup(of(fa, a), i);
      if (!v) return nb::none();
      return nb::cast(*v);
    });
  }

  /// lookup of every idx[k] into values (the machine's dtype) and found (uint8).
  /// The three arrays on the host, or (a CUDA machine) all three on its device: no copy.
  void lookup_many(handle a, const in_array& idx, const out_array& values, const out_array& found) {
    const std::string fn = "gsearch._core.FunctionalArrays.lookup_many";
    const bool on_device = device_ >= 0 && idx.device_type() == nb::device::cuda::value;
    for (const int dt : {idx.device_type(), values.device_type(), found.device_type()}) {
      const bool here = on_device ? dt == nb::device::cuda::value : dt == nb::device::cpu::value;
      if (!here) value_error(fn + ": indices, values and found must all be host arrays" +
                             std::string(device_ >= 0 ? ", or all on the machine's CUDA device" : ""));
    }
    if (on_device && (idx.device_id() != device_ || values.device_id() != device_ || found.device_id() != device_))
      value_error(fn + ": the arrays must be on the machine's device cuda:" + std::to_string(device_));
    if (idx.dtype() != nb::dtype<int64_t>() || idx.ndim() != 1 || !is_c_contiguous(idx))
      value_error(fn + ": indices must be a contiguous 1-D int64 array");
    if (values.dtype() != dtype_ || values.size() != idx.size() || !is_c_contiguous(values))
      value_error(fn + ": values must be contiguous, of the machine's dtype, one per index");
    if (found.dtype() != nb::dtype<uint8_t>() || found.size() != idx.size() || !is_c_contiguous(found))
      value_error(fn + ": found must be contiguous uint8, one per index");
    run([&](auto& fa) {
      using V = typename std::remove_cvref_t<decltype(fa)>::value_type;
      nb::gil_scoped_release unlocked;
      fa.lookup(of(fa, a), in_span<int64_t>(idx), out_span<V>(values), out_span<uint8_t>(found));
      return 0;
    });
  }

  int64_t size(handle a) {
    return run([&](auto& fa) { return fa.size(of(fa, a)); });
  }
  std::optional<int64_t> next(handle a, int64_t i) {
    return run([&](auto& fa) { return fa.next(of(fa, a), i); });
  }
  /// (indices, values): numpy arrays, in index order.
  std::pair<nb::object, nb::object> items(handle a) {
    std::vector<int64_t> idx;
    nb::object values;
    run([&](auto& fa) {
      using V = typename std::remove_cvref_t<decltype(fa)>::value_type;
      std::vector<V> vals;
      fa.items(of(fa, a), idx, vals);
      values = to_numpy(std::move(vals));
      return 0;
    });
    return {to_numpy(std::move(idx)), values};
  }
  int device() const { return device_; }
  void release(handle a) {
    run([&](auto& fa) {
      fa.release(of(fa, a));
      return 0;
    });
  }
  bool live(handle a) {
    return run([&](auto& fa) { return fa.live(of(fa, a)); });
  }
  std::string check() {
    return run([](auto& fa) { return fa.check(); });
  }
  nb::dict stats() {
    nb::dict d;
    run([&](auto& fa) {
      d["cells"] = fa.cells();
      d["free_cells"] = fa.free_cells();
      d["live_arrays"] = fa.live_arrays();
      d["version_slots"] = fa.version_slots();
      d["collections"] = fa.collections();
      d["collection_seconds"] = fa.collection_seconds();
      d["persistent_blocks"] = fa.persistent_blocks();
      return 0;
    });
    return d;
  }
  std::string dtype() const { return dtype_name(dtype_); }

 private:
  template <class A>
  static handle as_handle(const A& a) {
    return {a.slot, a.generation, a.machine};
  }
  static void check_index_array(const std::string& fn, const in_array& idx) {
    if (idx.dtype() != nb::dtype<int64_t>() || idx.ndim() != 1 || !is_c_contiguous(idx) ||
        idx.device_type() != nb::device::cpu::value)
      value_error(fn + ": indices must be a contiguous 1-D int64 host array");
  }
  template <class T>
  static nb::object to_numpy(std::vector<T>&& v) {
    auto* heap = new std::vector<T>(std::move(v));
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {heap->size()}, owner));
  }

  std::optional<any_machine> fa_;
  nb::dlpack::dtype dtype_;
  int device_ = -1;
  std::mutex mutex_;
};

}  // namespace

void bind_functional_arrays(nb::module_& m) {
  nb::class_<py_functional_arrays>(m, "FunctionalArrays",
                                   "A gsearch::functional_arrays machine on the CPU (device -1) or a CUDA "
                                   "device (gsearch.FunctionalArrays wraps it): handles are (slot, generation, machine) "
                                   "tuples, refused (ValueError) by another machine or once released.")
      .def(nb::init<int64_t, const in_array&, int64_t, int, int, bool, int>(), "cells"_a, "like"_a,
           "version_slots"_a = 0, "threads"_a = 0, "device"_a = -1, "persistent"_a = true, "blocks"_a = 0)
      .def("empty", &py_functional_arrays::empty)
      .def("update", &py_functional_arrays::update, "a"_a, "idx"_a, "values"_a)
      .def("remove", &py_functional_arrays::remove, "a"_a, "i"_a)
      .def("lookup", &py_functional_arrays::lookup, "a"_a, "i"_a)
      .def("lookup_many", &py_functional_arrays::lookup_many, "a"_a, "idx"_a, "values"_a, "found"_a)
      .def("size", &py_functional_arrays::size, "a"_a)
      .def("next", &py_functional_arrays::next, "a"_a, "i"_a)
      .def("items", &py_functional_arrays::items, "a"_a)
      .def("release", &py_functional_arrays::release, "a"_a)
      .def("live", &py_functional_arrays::live, "a"_a)
      .def("check", &py_functional_arrays::check)
      .def("stats", &py_functional_arrays::stats)
      .def_prop_ro("dtype", &py_functional_arrays::dtype)
      .def_prop_ro("device", &py_functional_arrays::device);
}

}  // namespace gsearch_python
