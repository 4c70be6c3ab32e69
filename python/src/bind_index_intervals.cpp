// gsearch._core's index intervals (gsearch/index_intervals.hpp): the class IndexIntervals, a
// gsearch::index_intervals of any key type, on the CPU or a CUDA device.
//
// The object owns its copy of the data and permutes it in place; this layer adds what the library
// cannot see (dtypes, devices, contiguity), the GIL rule, a lock (a call with the GIL released
// must not meet another thread's call on the same object), every CUDA call made with the data's
// device current, and calls that return only once their work is done (the constructor and sort()
// wait on CUDA, as improve, select and range do in the library), so that the Python layer may read
// the copy (view()) on the structure's stream right after any call.

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "gsearch/device.hpp"
#include "gsearch/index_intervals.hpp"
// (keep this order: binding.hpp's enum_table names gsearch::to_string)
#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

using py_interval = std::tuple<int64_t, int64_t, bool>;  // (lo, hi, settled)

py_interval as_tuple(const gsearch::index_interval& p) { return {p.lo, p.hi, p.settled}; }

/// The frameworks view() can answer in (the codes the Python layer passes).
enum class framework { numpy = 0, pytorch = 1, cupy = 2 };

/// gsearch.IndexIntervals's core (_core.IndexIntervals): a gsearch::index_intervals of one of
/// the six key types, built from a contiguous 1-D array on the CPU (host memory) or on a CUDA
/// device (device memory, on `stream`; every later call runs on that stream, with that device
/// current, restored afterwards).
class py_intervals {
 public:
  using any_intervals = key_variant<gsearch::index_intervals>;

  py_intervals(const in_array& data, uintptr_t stream)
      : dtype_(data.dtype()), dev_type_(data.device_type()), dev_id_(data.device_id()), stream_(stream) {
    const std::string fn = "gsearch._core.IndexIntervals";
    const placement at = place(fn, {locate("data", data)});
    if (data.ndim() != 1)
      value_error(fn + ": data must be 1-D (have " + std::to_string(data.ndim()) + " dimensions)");
    if (!is_c_contiguous(data)) value_error(fn + ": data must be contiguous");
    if (!at.on_cuda && stream != 0) value_error(fn + ": a stream applies to CUDA data; this is on the CPU");
    const int64_t n = int64_t(data.size());
    visit_key_type(fn, dtype_, [&]<class T>() {
      const gsearch::span<const T> d(static_cast<const T*>(data.data()), n);
      on_backend(at, stream, n >= small_scan_elements, [&](const auto& exec) {
        using exec_t = std::remove_cvref_t<decltype(exec)>;
        ii_.emplace(std::in_place_type<gsearch::index_intervals<T>>, exec, d);
        if constexpr (std::is_same_v<exec_t, gsearch::cuda_t>)
          gsearch::synchronize(exec);  // the input may go
      });
    });
  }

  py_intervals(const py_intervals&) = delete;
  py_intervals& operator=(const py_intervals&) = delete;

  ~py_intervals() {
    if (!ii_ || !on_cuda()) return;
    try {  // free the device memory with its device current
      device_guard guard(dev_id_);
      ii_.reset();
    } catch (...) {
    }
  }

  py_interval improve(int64_t position) {
    return as_tuple(run(true, [&](auto& ii) { return ii.improve(position); }));
  }

  /// The element of rank k, as a Python int or float.
  nb::object select(int64_t k) {
    std::optional<nb::object> value;
    std::variant<int64_t, uint64_t, double> v;
    run(true, [&](auto& ii) {
      const auto x = ii.select(k);
      using T = std::remove_cvref_t<decltype(x)>;
      if constexpr (std::is_floating_point_v<T>)
        v = double(x);
      else if constexpr (std::is_signed_v<T>)
        v = int64_t(x);
      else
        v = uint64_t(x);
      return 0;
    });
    return std::visit([](auto x) { return nb::cast(x); }, v);
  }

  void sort() {
    run(true, [&](auto& ii) {
      ii.sort();
      if (on_cuda()) gsearch::synchronize(gsearch::cuda.on(stream_ptr()));
      return 0;
    });
  }

  /// (b, e): positions of the copy that hold exactly the x with lo <= x < hi. lo and hi: Python
  /// numbers that the key type holds exactly (the Python layer rounds them).
  std::pair<int64_t, int64_t> range(nb::handle lo, nb::handle hi) {
    gsearch::position_range r;
    visit_key_type("gsearch._core.IndexIntervals.range", dtype_, [&]<class T>() {
      const T l = nb::cast<T>(lo), h = nb::cast<T>(hi);
      r = run(true, [&](auto& ii) {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(ii)>, gsearch::index_intervals<T>>)
          return ii.range(l, h);
        else
          return gsearch::position_range{};  // not reached: the variant holds T's
      });
    });
    return {r.begin, r.end};
  }

  py_interval interval(int64_t position) const {
    return as_tuple(run(false, [&](auto& ii) { return ii.interval(position); }));
  }
  std::vector<py_interval> interval_list() const {
    const std::vector<gsearch::index_interval> list = run(false, [](auto& ii) { return ii.interval_list(); });
    std::vector<py_interval> out;
    out.reserve(list.size());
    for (const auto& p : list) out.push_back(as_tuple(p));
    return out;
  }
  int64_t intervals() const {
    return run(false, [](auto& ii) { return ii.intervals(); });
  }
  int64_t unplaced() const {
    return run(false, [](auto& ii) { return ii.unplaced(); });
  }
  int64_t improves() const {
    return run(false, [](auto& ii) { return ii.improves(); });
  }
  int64_t size() const {
    return std::visit([](const auto& ii) { return ii.size(); }, get());
  }
  std::string check() const {
    return run(true, [](auto& ii) { return ii.check(); });
  }
  std::string dtype() const {
    return std::visit(
        []<class T>(const gsearch::index_intervals<T>&) { return std::string(gsearch::key_traits<T>::name); },
        get());
  }
  int device() const { return on_cuda() ? dev_id_ : -1; }

  /// The owned copy as an array of `fw` (0 numpy, read-only; 1 torch; 2 cupy) that keeps this
  /// object alive: memory that later calls permute (the Python layer copies out of it).
  nb::object view(int fw) const {
    if (fw < 0 || fw > int(framework::cupy))
      value_error("gsearch._core.IndexIntervals.view: framework 0, 1 or 2");
    const nb::handle owner = nb::find(this);
    return std::visit(
        [&]<class T>(const gsearch::index_intervals<T>& ii) -> nb::object {
          T* p = const_cast<T*>(ii.data().data());
          const size_t n = size_t(ii.size());
          switch (framework(fw)) {
            case framework::numpy:
              return nb::cast(nb::ndarray<nb::numpy, const T, nb::ndim<1>>(p, {n}, owner, {}, nb::dtype<T>(),
                                                                           dev_type_, dev_id_));
            case framework::pytorch:
              return nb::cast(nb::ndarray<nb::pytorch, T, nb::ndim<1>>(p, {n}, owner, {}, nb::dtype<T>(),
                                                                       dev_type_, dev_id_));
            default:
              return nb::cast(nb::ndarray<nb::cupy, T, nb::ndim<1>>(p, {n}, owner, {}, nb::dtype<T>(),
                                                                    dev_type_, dev_id_));
          }
        },
        get());
  }

  std::string repr() const {
    return "<gsearch._core.IndexIntervals of " + std::to_string(size()) + " " + dtype() + " on " +
           device_name(dev_type_, dev_id_) + ", " + std::to_string(intervals()) + " intervals, " +
           std::to_string(unplaced()) + " unplaced>";
  }

 private:
  bool on_cuda() const { return dev_type_ == nb::device::cuda::value; }
  CUstream_st* stream_ptr() const { return reinterpret_cast<CUstream_st*>(stream_); }

  const any_intervals& get() const {
    if (!ii_) throw std::logic_error("gsearch._core.IndexIntervals: not built");
    return *ii_;
  }

  /// call(ii) on the structure, under the lock, with its device current on CUDA; the GIL
  /// released for `work` (a call that may touch the data) on CUDA or on large data. The lock is
  /// taken and given back inside the released region, so that a thread waiting for it with
  /// the GIL held never waits on one that needs the GIL.
  template <class F>
  auto run(bool work, F&& call) const -> decltype(std::visit(call, std::declval<any_intervals&>())) {
    using R = decltype(std::visit(call, std::declval<any_intervals&>()));
    std::optional<R> result;
    auto body = [&] {
      std::lock_guard<std::mutex> lock(mutex_);
      std::optional<device_guard> guard;
      if (on_cuda()) guard.emplace(dev_id_);
      result.emplace(std::visit(call, const_cast<any_intervals&>(get())));
    };
    if (work)
      with_gil_policy(on_cuda(), size() >= small_scan_elements, body);
    else
      body();
    return std::move(*result);
  }

  std::optional<any_intervals> ii_;
  nb::dlpack::dtype dtype_;
  int dev_type_ = 0, dev_id_ = 0;
  uintptr_t stream_ = 0;
  mutable std::mutex mutex_;
};

}  // namespace

void bind_index_intervals(nb::module_& m) {
  nb::class_<py_intervals>(m, "IndexIntervals",
                           "Index intervals (gsearch::index_intervals): a copy of a C-contiguous 1-D array\n"
                           "whose order is refined only where it is queried. Use gsearch.IndexIntervals;\n"
                           "this layer takes arrays of a key dtype and values the dtype holds exactly.")
      .def(nb::init<const in_array&, uintptr_t>(), "data"_a, "stream"_a = 0,
           "Copies `data` (a dtype of KEY_DTYPES; 1-D, C-contiguous) into the structure: host\n"
           "memory for CPU data, the data's CUDA device's memory for CUDA data (copied on\n"
           "`stream`, a cudaStream_t as an int, and waited for; every later call runs on it).")
      .def("improve", &py_intervals::improve, "position"_a,
           "One improve step on the piece holding `position` (in [0, size)); nothing when it is\n"
           "settled. Returns the piece holding `position` afterwards: (lo, hi, settled).")
      .def("select", &py_intervals::select, "k"_a,
           "The element of rank k (in [0, size)): refines the pieces holding k until it is settled.")
      .def("sort", &py_intervals::sort, "Settles every piece: the copy is sorted afterwards (waited for).")
      .def("range", &py_intervals::range, "lo"_a, "hi"_a,
           "(b, e): the positions of the copy that hold exactly the x with lo <= x < hi (the key\n"
           "order: NaN last, -0.0 == 0.0), after refining at most the piece at each end; (0, 0)\n"
           "when hi is not after lo. lo, hi: numbers the key type holds exactly.")
      .def("interval", &py_intervals::interval, "position"_a,
           "The piece holding `position`, (lo, hi, settled), without refining anything.")
      .def("interval_list", &py_intervals::interval_list, "Every piece, in order: [(lo, hi, settled), ...].")
      .def_prop_ro("intervals", &py_intervals::intervals,
                   "How many pieces (adjacent settled pieces count as one).")
      .def_prop_ro("unplaced", &py_intervals::unplaced, "Elements in unsettled pieces.")
      .def_prop_ro("improves", &py_intervals::improves, "Improve steps taken so far.")
      .def_prop_ro("size", &py_intervals::size, "The number of elements.")
      .def_prop_ro("dtype", &py_intervals::dtype, "The key dtype's numpy name ('int32', ...).")
      .def_prop_ro("device", &py_intervals::device, "The CUDA device of the copy, -1 on the CPU.")
      .def("check", &py_intervals::check,
           "The invariants, checked on a host copy of the data: '' when they hold, else the\n"
           "first broken. O(n); for tests.")
      .def("view", &py_intervals::view, "framework"_a,
           "The owned copy, in place (0: a read-only numpy array; 1: a torch tensor; 2: a cupy\n"
           "array), keeping this object alive. Later calls permute it: copy what you keep.")
      .def("__repr__", &py_intervals::repr);
}

}  // namespace gsearch_python
