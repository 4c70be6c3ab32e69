// gsearch._core's static search index (gsearch/static_index.hpp): the class Index, a
// gsearch::static_index of any key type, on the CPU or a CUDA device.

#include <nanobind/stl/string.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

/// gsearch.Index's core (_core.Index): a gsearch::static_index of one of the six key types,
/// built from a contiguous 1-D array on the CPU (host memory, gsearch::cpu) or on a CUDA device
/// (device memory, gsearch::cuda on that device, on `stream`), and the device it lives on. CUDA
/// calls run with that device current (restored afterwards); the build is waited for, so that the
/// keys can be freed and the index searched on any stream as soon as the constructor returns.
class py_index {
 public:
  using any_index = key_variant<gsearch::static_index>;

  py_index(const in_array& keys, bool check_sorted, uintptr_t stream)
      : dtype_(keys.dtype()), dev_type_(keys.device_type()), dev_id_(keys.device_id()) {
    const std::string fn = "gsearch._core.Index";
    const placement at = place(fn, {locate("keys", keys)});
    if (keys.ndim() != 1)
      value_error(fn + ": keys must be 1-D (have " + std::to_string(keys.ndim()) + " dimensions)");
    if (!is_c_contiguous(keys)) value_error(fn + ": keys must be contiguous");
    if (!at.on_cuda && stream != 0) value_error(fn + ": a stream applies to CUDA keys; these are on the CPU");
    gsearch::index_options options;
    options.check_sorted = check_sorted;
    const int64_t k = int64_t(keys.size());
    visit_key_type(fn, dtype_, [&]<class T>() {
      const gsearch::span<const T> kk(static_cast<const T*>(keys.data()), k);
      on_backend(at, stream, k >= small_scan_elements || check_sorted, [&](const auto& exec) {
        using exec_t = std::remove_cvref_t<decltype(exec)>;
        index_.emplace(std::in_place_type<gsearch::static_index<T>>, exec, kk, options);
        if constexpr (std::is_same_v<exec_t, gsearch::cuda_t>) gsearch::synchronize(exec);
      });
    });
  }

  py_index(const py_index&) = delete;
  py_index& operator=(const py_index&) = delete;

  ~py_index() {
    if (!index_ || dev_type_ != nb::device::cuda::value) return;
    try {  // free the device memory with its device current
      device_guard guard(dev_id_);
      index_.reset();
    } catch (...) {
    }
  }

  /// out = the search of queries on side `side_code` (0 left, 1 right, 2 predecessor).
  void search(const in_array& queries, out_array& out, int side_code, uintptr_t stream) const {
    const std::string fn = "gsearch._core.Index.search";
    const gsearch::side s = side_of(fn, side_code);
    if (queries.device_type() != dev_type_ || queries.device_id() != dev_id_ ||
        out.device_type() != dev_type_ || out.device_id() != dev_id_)
      value_error(fn + ": the index is on " + device_name(dev_type_, dev_id_) + " but the queries are on " +
                  device_name(queries.device_type(), queries.device_id()) + " and out on " +
                  device_name(out.device_type(), out.device_id()));
    const bool on_cuda = dev_type_ == nb::device::cuda::value;
    if (!on_cuda && stream != 0)
      value_error(fn + ": a stream applies to a CUDA index; this one is on the CPU");
    if (queries.dtype() != dtype_)
      type_error(fn + ": the index holds " + dtype_name(dtype_) + " keys but the queries are " +
                 dtype_name(queries.dtype()));
    const bool out64 = out.dtype() == nb::dtype<int64_t>();
    if (!out64 && out.dtype() != nb::dtype<int32_t>())
      type_error(fn + ": out must be int64 or int32, not " + dtype_name(out.dtype()));
    if (!is_c_contiguous(queries) || !is_c_contiguous(out)) value_error(fn + ": arrays must be C-contiguous");
    const int64_t n = int64_t(queries.size());
    if (int64_t(out.size()) != n)
      value_error(fn + ": " + std::to_string(n) + " queries but " + std::to_string(out.size()) +
                  " output elements");
    const void* qp = queries.data();
    void* op = out.data();
    std::visit(
        [&]<class T>(const gsearch::static_index<T>& index) {
          const gsearch::span<const T> qq(static_cast<const T*>(qp), n);
          on_backend({on_cuda, dev_id_}, stream, n >= small_search_queries, [&](const auto& exec) {
            if (out64)
              index.search(exec, s, qq, gsearch::span<int64_t>(static_cast<int64_t*>(op), n));
            else
              index.search(exec, s, qq, gsearch::span<int32_t>(static_cast<int32_t*>(op), n));
          });
        },
        get());
  }

  int64_t size() const {
    return std::visit([](const auto& i) { return i.size(); }, get());
  }
  bool on_device() const {
    return std::visit([](const auto& i) { return i.on_device(); }, get());
  }
  int node_keys() const {
    return std::visit([](const auto& i) { return i.node_keys(); }, get());
  }
  int levels() const {
    return std::visit([](const auto& i) { return i.levels(); }, get());
  }
  int64_t memory_bytes() const {
    return std::visit([](const auto& i) { return i.memory_bytes(); }, get());
  }
  std::string dtype() const {
    return std::visit(
        []<class T>(const gsearch::static_index<T>&) { return std::string(gsearch::key_traits<T>::name); },
        get());
  }
  /// The CUDA device the index is on, or -1 on the CPU.
  int device() const { return dev_type_ == nb::device::cuda::value ? dev_id_ : -1; }
  std::string repr() const {
    return "<gsearch._core.Index of " + std::to_string(size()) + " " + dtype() + " keys on " +
           device_name(dev_type_, dev_id_) + ", " + std::to_string(levels()) + " levels, " +
           std::to_string(memory_bytes()) + " bytes>";
  }

 private:
  const any_index& get() const {
    if (!index_) throw std::logic_error("gsearch._core.Index: not built");
    return *index_;
  }

  std::optional<any_index> index_;
  nb::dlpack::dtype dtype_;
  int dev_type_ = 0, dev_id_ = 0;
};

}  // namespace

void bind_index(nb::module_& m) {
  nb::class_<py_index>(m, "Index",
                       "A static search index (gsearch::static_index, an S+ tree) of a C-contiguous\n"
                       "1-D key array of a supported dtype: built once (a copy of the keys), searched\n"
                       "many times. Use gsearch.Index; this layer takes arrays of the index's dtype.")
      .def(nb::init<const in_array&, bool, uintptr_t>(), "keys"_a, "check_sorted"_a = false, "stream"_a = 0,
           "Builds the index of sorted `keys` (a dtype of KEY_DTYPES; 1-D, C-contiguous): on\n"
           "the CPU (host memory, all cores for large key sets, the GIL released) or on the\n"
           "keys' CUDA device (device memory, built on `stream`, a cudaStream_t as an int, and\n"
           "waited for). check_sorted: ValueError if the keys are not sorted (NaN last, -0.0 ==\n"
           "0.0). The keys can be freed once this returns.")
      .def("search", &py_index::search, "queries"_a, "out"_a, "side"_a, "stream"_a = 0,
           "out[j] = the search of queries[j] (side, a value of SIDES: 0 = left: the keys < q;\n"
           "1 = right: the keys <= q; 2 = predecessor: right - 1). queries: C-contiguous, of the index's "
           "dtype, any\n"
           "shape (taken flat); out: C-contiguous int64 or int32 of queries.size elements; both on\n"
           "the index's device (ValueError otherwise). On CUDA enqueued on `stream` (0 = the legacy\n"
           "default stream), with the index's device current for the call.")
      .def_prop_ro("size", &py_index::size, "The number of keys indexed.")
      .def_prop_ro("on_device", &py_index::on_device, "True for an index in CUDA device memory.")
      .def_prop_ro("node_keys", &py_index::node_keys, "Keys per node of the tree (B).")
      .def_prop_ro("levels", &py_index::levels, "Levels of the tree, the leaves included.")
      .def_prop_ro("memory_bytes", &py_index::memory_bytes,
                   "Bytes of the layout (keys, padding and separators).")
      .def_prop_ro("dtype", &py_index::dtype, "The key dtype's numpy name ('int32', ...).")
      .def_prop_ro("device", &py_index::device, "The CUDA device of the index, -1 on the CPU.")
      .def("__repr__", &py_index::repr);
}

}  // namespace gsearch_python
