// gsearch._core's distributed operations (gsearch/dist.hpp) over a communicator written in
// Python: gsearch.distributed's adapters for torch.distributed and mpi4py, or any object with
// the same five members. gsearch moves no bytes itself; the caller's transport does.
//
// The Python communicator (py_communicator below) has
//   rank, size                   ints
//   device                       bool: alltoallv's buffers are CUDA memory (NCCL), else host
//   allgather(send, recv)        host memory: recv[r * len(send):][:len(send)] = rank r's send
//   alltoallv(send, send_counts, recv, recv_counts)
//                                send_counts[r] bytes of send to rank r (in rank order),
//                                recv_counts[r] bytes from rank r into recv (in rank order)
// The buffers are 1-D uint8 arrays over the library's memory, valid during the call only:
// numpy for host memory; for device memory a torch tensor (or a cupy array, when the call's
// arrays are cupy's) on the call's CUDA device, whose work the callback orders on the current
// stream (the call's). The counts are Python lists of ints.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "binding.hpp"

namespace gsearch_python {
namespace {

using namespace nb::literals;

/// Device buffers are exported in the framework of the call's arrays.
enum class framework { numpy, torch, cupy };

framework framework_of(const std::string& fn, const std::string& name) {
  if (name == "numpy") return framework::numpy;
  if (name == "torch") return framework::torch;
  if (name == "cupy") return framework::cupy;
  value_error(fn + ": framework must be 'numpy', 'torch' or 'cupy', not '" + name + "'");
}

/// gsearch::dist::communicator over a Python object. The library calls it with the GIL released
/// (a collective waits for the other ranks); each callback takes the GIL, and a Python exception
/// (nb::python_error) unwinds through the library to the caller.
class py_communicator final : public gsearch::dist::communicator {
 public:
  py_communicator(const std::string& fn, nb::handle comm, framework fw, int device_id)
      : comm_(nb::borrow(comm)), fw_(fw), device_id_(device_id) {
    rank_ = nb::cast<int>(comm.attr("rank"));
    size_ = nb::cast<int>(comm.attr("size"));
    device_ = nb::cast<bool>(comm.attr("device"));
    if (size_ < 1 || rank_ < 0 || rank_ >= size_)
      value_error(fn + ": the communicator's rank " + std::to_string(rank_) + " is not in [0, size " +
                  std::to_string(size_) + ")");
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool device_memory() const override { return device_; }

  void allgather_host(const void* send, int64_t bytes, void* recv, CUstream_st*) override {
    nb::gil_scoped_acquire gil;
    comm_.attr("allgather")(host_bytes(send, bytes), host_bytes(recv, bytes * size_));
  }

  void alltoallv(const void* send, const int64_t* send_bytes, void* recv, const int64_t* recv_bytes,
                 CUstream_st*) override {
    nb::gil_scoped_acquire gil;
    nb::list send_counts, recv_counts;
    int64_t send_total = 0, recv_total = 0;
    for (int r = 0; r < size_; ++r) {
      send_counts.append(send_bytes[r]);
      recv_counts.append(recv_bytes[r]);
      send_total += send_bytes[r];
      recv_total += recv_bytes[r];
    }
    comm_.attr("alltoallv")(buffer(send, send_total), send_counts, buffer(recv, recv_total), recv_counts);
  }

 private:
  /// A 1-D uint8 view of `bytes` bytes at p, owned by the library (reference: no copy, no owner).
  template <class Framework>
  static nb::object view(const void* p, int64_t bytes, int device_type, int device_id) {
    static unsigned char empty = 0;  // exporters refuse a null pointer, also for 0 bytes
    void* data = p != nullptr ? const_cast<void*>(p) : &empty;
    const size_t shape[1] = {size_t(bytes)};
    return nb::ndarray<Framework, uint8_t, nb::ndim<1>>(data, 1, shape, nb::handle(), nullptr,
                                                        nb::dtype<uint8_t>(), device_type, device_id)
        .cast(nb::rv_policy::reference);
  }
  static nb::object host_bytes(const void* p, int64_t bytes) {
    return view<nb::numpy>(p, bytes, nb::device::cpu::value, 0);
  }
  nb::object buffer(const void* p, int64_t bytes) const {
    if (!device_) return host_bytes(p, bytes);
    if (fw_ == framework::cupy) return view<nb::cupy>(p, bytes, nb::device::cuda::value, device_id_);
    return view<nb::pytorch>(p, bytes, nb::device::cuda::value, device_id_);
  }

  nb::object comm_;
  framework fw_;
  int device_id_;
  int rank_ = 0, size_ = 1;
  bool device_ = false;
};

/// What every call shares: its arrays' device (ValueError if they differ) and a communicator.
struct dist_call {
  placement at;
  py_communicator comm;
  dist_call(const std::string& fn, nb::handle py_comm, const std::string& fw, std::initializer_list<located> arrays)
      : at(place(fn, arrays)), comm(fn, py_comm, framework_of(fn, fw), at.dev_id) {}

  /// Runs f(exec) on the arrays' backend, always with the GIL released: a distributed call
  /// waits on the other ranks, which must not stall the caller's other threads.
  template <class F>
  void run(uintptr_t stream, F&& f) {
    on_backend(at, stream, /*large=*/true, std::forward<F>(f));
  }
};

gsearch::dist::layout layout_of(bool replicated) {
  return replicated ? gsearch::dist::layout::replicated : gsearch::dist::layout::sharded;
}

void py_search(nb::handle comm, const std::string& fw, const in_array& keys, const in_array& queries,
               out_array& out, int side, bool replicated, uintptr_t stream) {
  const std::string fn = "gsearch._core.dist_search";
  const gsearch::side s = side_of(fn, side);
  dist_call call(fn, comm, fw, {locate("keys", keys), locate("queries", queries), locate("out", out)});
  check_same_dtype(fn, "keys", keys, "queries", queries);
  check_flat(fn, "keys", keys);
  check_flat(fn, "queries", queries);
  check_flat(fn, "out", out);
  if (out.dtype() != nb::dtype<int64_t>()) type_error(fn + ": out must be int64, not " + dtype_name(out.dtype()));
  visit_key_type(fn, keys.dtype(), [&]<class T>() {
    call.run(stream, [&](const auto& exec) {
      gsearch::dist::search(exec, call.comm, s, in_span<T>(keys), in_span<T>(queries), out_span<int64_t>(out),
                            layout_of(replicated));
    });
  });
}

/// The predicate `op` against bounds = [value, hi] (a host array of the data's dtype: the Python
/// layer has checked that the dtype holds both exactly; hi is read for 'in' only).
template <class T>
gsearch::predicate<T> predicate_of(const std::string& fn, int op, const in_array& bounds, const in_array& data) {
  if (op < 0 || op > int(gsearch::find_op::in_range))
    value_error(fn + ": op " + std::to_string(op) + " out of range (a value of FIND_OPS)");
  if (bounds.device_type() != nb::device::cpu::value || bounds.dtype() != data.dtype() || bounds.size() != 2 ||
      !is_c_contiguous(bounds))
    value_error(fn + ": bounds must be a host array of 2 elements ([value, hi]) of the data's dtype");
  const T* b = static_cast<const T*>(bounds.data());
  gsearch::predicate<T> p;
  p.op = gsearch::find_op(op);
  p.value = b[0];
  p.hi = p.op == gsearch::find_op::in_range ? b[1] : b[0];
  return p;
}

int64_t py_find(nb::handle comm, const std::string& fw, const in_array& data, int mode, int op,
                const in_array& bounds, uintptr_t stream) {
  const std::string fn = "gsearch._core.dist_find";
  if (mode < 0 || mode > int(gsearch::find_mode::count))
    value_error(fn + ": mode " + std::to_string(mode) + " out of range (a value of FIND_MODES)");
  dist_call call(fn, comm, fw, {locate("data", data)});
  check_flat(fn, "data", data);
  int64_t result = 0;
  visit_key_type(fn, data.dtype(), [&]<class T>() {
    const gsearch::predicate<T> pred = predicate_of<T>(fn, op, bounds, data);
    call.run(stream, [&](const auto& exec) {
      result = gsearch::dist::find(exec, call.comm, gsearch::find_mode(mode), in_span<T>(data), pred);
    });
  });
  return result;
}

/// This rank's matches (ascending global indices) in an int64 array that allocate(count)
/// returns (called once, with the GIL, on data's device); returns it.
nb::object py_find_all(nb::handle comm, const std::string& fw, const in_array& data, int op,
                       const in_array& bounds, nb::callable allocate, uintptr_t stream) {
  const std::string fn = "gsearch._core.dist_find_all";
  dist_call call(fn, comm, fw, {locate("data", data)});
  check_flat(fn, "data", data);
  nb::object result;
  const auto alloc = [&](int64_t c) -> int64_t* {
    nb::gil_scoped_acquire gil;
    nb::object o = allocate(c);
    auto* p = static_cast<int64_t*>(allocated_pointer(fn, "the result", o, c, nb::dtype<int64_t>(), data));
    result = std::move(o);
    return p;
  };
  visit_key_type(fn, data.dtype(), [&]<class T>() {
    const gsearch::predicate<T> pred = predicate_of<T>(fn, op, bounds, data);
    call.run(stream, [&](const auto& exec) {
      gsearch::dist::find_all(exec, call.comm, in_span<T>(data), pred, std::function<int64_t*(int64_t)>(alloc));
    });
  });
  if (!result.is_valid()) alloc(0);  // the library calls allocate once; never return nothing
  return result;
}

void py_isin(nb::handle comm, const std::string& fw, const in_array& elements, const in_array& tests,
             out_array& out, bool invert, int method, bool replicated, uintptr_t stream) {
  const std::string fn = "gsearch._core.dist_isin";
  if (method < 0 || method > int(gsearch::isin_method::hash))
    value_error(fn + ": method " + std::to_string(method) + " out of range (a value of ISIN_METHODS)");
  dist_call call(fn, comm, fw, {locate("elements", elements), locate("test_elements", tests), locate("out", out)});
  check_same_dtype(fn, "elements", elements, "test_elements", tests);
  check_flat(fn, "elements", elements);
  check_flat(fn, "test_elements", tests);
  check_flat(fn, "out", out);
  if (out.dtype() != nb::dtype<bool>() && out.dtype() != nb::dtype<uint8_t>())
    type_error(fn + ": out must be bool, not " + dtype_name(out.dtype()));
  if (out.size() != elements.size())
    value_error(fn + ": " + std::to_string(elements.size()) + " elements but " + std::to_string(out.size()) +
                " output elements");
  gsearch::isin_options options;
  options.invert = invert;
  options.method = gsearch::isin_method(method);
  visit_key_type(fn, elements.dtype(), [&]<class T>() {
    const gsearch::span<bool> o(static_cast<bool*>(out.data()), int64_t(out.size()));
    call.run(stream, [&](const auto& exec) {
      gsearch::dist::isin(exec, call.comm, in_span<T>(elements), in_span<T>(tests), o, options, layout_of(replicated));
    });
  });
}

/// sort (sorted_input false) or merge (true) of this rank's data into an array of its dtype that
/// allocate(count) returns (once, with the GIL, on data's device); returns it.
nb::object sort_or_merge(const std::string& fn, nb::handle comm, const std::string& fw, const in_array& data,
                         bool sorted_input, bool check_sorted, nb::callable allocate, uintptr_t stream) {
  dist_call call(fn, comm, fw, {locate("data", data)});
  check_flat(fn, "data", data);
  nb::object result;
  visit_key_type(fn, data.dtype(), [&]<class T>() {
    const auto alloc = [&](int64_t c) -> T* {
      nb::gil_scoped_acquire gil;
      nb::object o = allocate(c);
      T* p = static_cast<T*>(allocated_pointer(fn, "the result", o, c, data.dtype(), data));
      result = std::move(o);
      return p;
    };
    call.run(stream, [&](const auto& exec) {
      const std::function<T*(int64_t)> a(alloc);
      if (sorted_input) {
        gsearch::dist::merge(exec, call.comm, in_span<T>(data), a, check_sorted);
      } else {
        gsearch::dist::sort(exec, call.comm, in_span<T>(data), a);
      }
    });
    if (!result.is_valid()) alloc(0);
  });
  return result;
}

nb::object py_sort(nb::handle comm, const std::string& fw, const in_array& data, nb::callable allocate,
                   uintptr_t stream) {
  return sort_or_merge("gsearch._core.dist_sort", comm, fw, data, false, false, std::move(allocate), stream);
}

nb::object py_merge(nb::handle comm, const std::string& fw, const in_array& data, nb::callable allocate,
                    bool check_sorted, uintptr_t stream) {
  return sort_or_merge("gsearch._core.dist_merge", comm, fw, data, true, check_sorted, std::move(allocate), stream);
}

/// This rank's rows of the join as global row numbers, in the pair (left_index, right_index)
/// that allocate(rows) returns (right_index None for semi and anti); returns it.
nb::object py_join(nb::handle comm, const std::string& fw, const in_array& left, const in_array& right, int kind,
                   nb::callable allocate, uintptr_t stream) {
  const std::string fn = "gsearch._core.dist_join";
  if (kind < 0 || kind > int(gsearch::join_kind::anti))
    value_error(fn + ": kind " + std::to_string(kind) + " out of range (a value of JOIN_KINDS)");
  dist_call call(fn, comm, fw, {locate("left", left), locate("right", right)});
  check_same_dtype(fn, "left", left, "right", right);
  check_flat(fn, "left", left);
  check_flat(fn, "right", right);
  const auto k = gsearch::join_kind(kind);
  const bool left_only = gsearch::core::join_left_only(k);
  nb::object result;
  const auto alloc = [&](int64_t rows) -> gsearch::join_output {
    nb::gil_scoped_acquire gil;
    nb::object o = allocate(rows);
    if (!nb::isinstance<nb::tuple>(o) || nb::len(o) != 2)
      type_error(fn + ": allocate(" + std::to_string(rows) + ") must return a pair (left_index, right_index)");
    gsearch::join_output out;
    out.left = static_cast<int64_t*>(allocated_pointer(fn, "left_index", o[0], rows, nb::dtype<int64_t>(), left));
    if (!left_only)
      out.right = static_cast<int64_t*>(allocated_pointer(fn, "right_index", o[1], rows, nb::dtype<int64_t>(), left));
    result = std::move(o);
    return out;
  };
  visit_key_type(fn, left.dtype(), [&]<class T>() {
    call.run(stream, [&](const auto& exec) {
      gsearch::dist::join(exec, call.comm, k, in_span<T>(left), in_span<T>(right),
                          std::function<gsearch::join_output(int64_t)>(alloc));
    });
  });
  if (!result.is_valid()) alloc(0);
  return result;
}

/// right_index = the as-of matches (gsearch::dist::asof_join) of this rank's left keys in the right
/// keys of all ranks (sharded: their concatenation in rank order) or this rank's (replicated), as
/// global right rows; grouped where left_by / right_by (int64 codes in [0, groups), the same code
/// for the same group on every rank) are given. tolerance: None, or a host array of one element
/// of the keys' dtype (the Python layer made it exact).
void py_asof_join(nb::handle comm, const std::string& fw, const in_array& left, const in_array& right,
                  out_array& out, std::optional<in_array> left_by, std::optional<in_array> right_by, int64_t groups,
                  int direction, bool allow_exact_matches, std::optional<in_array> tolerance, bool check_sorted,
                  bool sort, bool replicated, uintptr_t stream) {
  const std::string fn = "gsearch._core.dist_asof_join";
  if (left_by.has_value() != right_by.has_value()) value_error(fn + ": pass both left_by and right_by, or neither");
  if (direction < 0 || direction > int(gsearch::asof_direction::nearest))
    value_error(fn + ": direction " + std::to_string(direction) + " out of range (a value of ASOF_DIRECTIONS)");
  const bool grouped = left_by.has_value();
  dist_call call = grouped ? dist_call(fn, comm, fw,
                                       {locate("left", left), locate("right", right), locate("out", out),
                                        locate("left_by", *left_by), locate("right_by", *right_by)})
                           : dist_call(fn, comm, fw, {locate("left", left), locate("right", right), locate("out", out)});
  check_same_dtype(fn, "left", left, "right", right);
  check_flat(fn, "left", left);
  check_flat(fn, "right", right);
  check_flat(fn, "out", out);
  if (out.dtype() != nb::dtype<int64_t>()) type_error(fn + ": out must be int64, not " + dtype_name(out.dtype()));
  if (out.size() != left.size())
    value_error(fn + ": " + std::to_string(left.size()) + " left keys but " + std::to_string(out.size()) +
                " output elements");
  for (const auto* codes : {&left_by, &right_by}) {
    if (!codes->has_value()) continue;
    const char* what = codes == &left_by ? "left_by" : "right_by";
    if ((*codes)->dtype() != nb::dtype<int64_t>())
      type_error(fn + ": " + what + " must be int64 group codes, not " + dtype_name((*codes)->dtype()));
    check_flat(fn, what, **codes);
  }
  if (tolerance && (tolerance->device_type() != nb::device::cpu::value || tolerance->dtype() != left.dtype() ||
                    tolerance->size() != 1 || !is_c_contiguous(*tolerance)))
    value_error(fn + ": tolerance must be None or a host array of one element of the keys' dtype");
  visit_key_type(fn, left.dtype(), [&]<class T>() {
    gsearch::asof_options<T> options;
    options.direction = gsearch::asof_direction(direction);
    options.allow_exact_matches = allow_exact_matches;
    if (tolerance) options.tolerance = *static_cast<const T*>(tolerance->data());
    options.check_sorted = check_sorted;
    options.sort = sort;
    call.run(stream, [&](const auto& exec) {
      if (grouped)
        gsearch::dist::asof_join(exec, call.comm, in_span<T>(left), in_span<T>(right), in_span<int64_t>(*left_by),
                                 in_span<int64_t>(*right_by), groups, out_span<int64_t>(out), options,
                                 layout_of(replicated));
      else
        gsearch::dist::asof_join(exec, call.comm, in_span<T>(left), in_span<T>(right), out_span<int64_t>(out),
                                 options, layout_of(replicated));
    });
  });
}

}  // namespace

void bind_dist(nb::module_& m) {
  const char* comm_doc =
      "comm: an object with rank, size, device (bool: CUDA buffers), allgather(send, recv) and\n"
      "alltoallv(send, send_counts, recv, recv_counts) (gsearch.distributed's adapters);\n"
      "framework: 'numpy', 'torch' or 'cupy', the kind of device buffers comm receives.";
  m.def("dist_search", &py_search, "comm"_a, "framework"_a, "keys"_a, "queries"_a, "out"_a, "side"_a,
        "replicated"_a = false, "stream"_a = 0,
        (std::string("out = the global search (gsearch::dist::search; side: a value of SIDES) of this\n"
                     "rank's queries in the keys of all ranks (sharded: each rank one range of the\n"
                     "global sorted order; replicated: all keys here). 1-D C-contiguous arrays of one\n"
                     "dtype; out int64. ") +
         comm_doc)
            .c_str());
  m.def("dist_find", &py_find, "comm"_a, "framework"_a, "data"_a, "mode"_a, "op"_a, "bounds"_a, "stream"_a = 0,
        "The global first / any match or count (gsearch::dist::find; mode: first, any or count of\n"
        "FIND_MODES) of `x op value` over the ranks' data in rank order; the same on every rank.\n"
        "bounds: a host array [value, hi] of data's dtype (hi read for op 'in'). comm, framework:\n"
        "as in dist_search.");
  m.def("dist_find_all", &py_find_all, "comm"_a, "framework"_a, "data"_a, "op"_a, "bounds"_a, "allocate"_a,
        "stream"_a = 0,
        "This rank's matches as ascending global indices (gsearch::dist::find_all), in the int64\n"
        "array that allocate(count) returns (called once, with the GIL, on data's device).");
  m.def("dist_isin", &py_isin, "comm"_a, "framework"_a, "elements"_a, "test_elements"_a, "out"_a,
        "invert"_a = false, "method"_a = 0, "replicated"_a = false, "stream"_a = 0,
        "out[i] = elements[i] is among the test elements of all ranks (sharded) or among this\n"
        "rank's (replicated) (gsearch::dist::isin; np.isin). out: bool, one per element.");
  m.def(
      "dist_agree",
      [](nb::handle comm, int code, const std::string& what) -> nb::object {
        py_communicator c("gsearch.distributed", comm, framework::numpy, 0);
        std::optional<gsearch::dist::failure_report> report;
        {
          nb::gil_scoped_release release;  // the collective waits on the other ranks
          report = gsearch::dist::agree(c, code, what);
        }
        if (!report) return nb::none();
        return nb::make_tuple(report->rank, report->code, report->what, report->failed);
      },
      "comm"_a, "code"_a, "what"_a,
      "One agreement point (gsearch::dist::agree), collective: code 0 where this rank is fine, else\n"
      "its error's code and message. None where every rank is fine, else the lowest failed rank's\n"
      "(rank, code, what, failed ranks), on every rank.");
  m.def("dist_sort", &py_sort, "comm"_a, "framework"_a, "data"_a, "allocate"_a, "stream"_a = 0,
        "This rank's range of the stable sort of all ranks' data (gsearch::dist::sort), in the\n"
        "array of data's dtype that allocate(count) returns (once, with the GIL).");
  m.def("dist_merge", &py_merge, "comm"_a, "framework"_a, "data"_a, "allocate"_a, "check_sorted"_a = true,
        "stream"_a = 0,
        "dist_sort for shards that are each sorted (gsearch::dist::merge; ValueError on every rank\n"
        "when one is not, with check_sorted).");
  m.def("dist_join", &py_join, "comm"_a, "framework"_a, "left"_a, "right"_a, "kind"_a, "allocate"_a,
        "stream"_a = 0,
        "This rank's rows of the join `kind` (JOIN_KINDS) of the tables of all ranks (rows in any\n"
        "order; gsearch::dist::join) as global row numbers: allocate(rows) returns the pair\n"
        "(left_index, right_index) of int64 arrays (right_index None for semi and anti).");
  m.def("dist_asof_join", &py_asof_join, "comm"_a, "framework"_a, "left"_a, "right"_a, "out"_a,
        "left_by"_a = nb::none(), "right_by"_a = nb::none(), "groups"_a = 0, "direction"_a = 0,
        "allow_exact_matches"_a = true, "tolerance"_a = nb::none(), "check_sorted"_a = true, "sort"_a = false,
        "replicated"_a = false, "stream"_a = 0,
        "out[i] = the global right row matched to this rank's left[i] by the as-of rule, or -1\n"
        "(gsearch::dist::asof_join; asof_join's arguments): the right keys of all ranks, their\n"
        "concatenation in rank order sorted as one (sharded), or this rank's (replicated). left_by /\n"
        "right_by: int64 codes in [0, groups), one group one code on every rank. tolerance: None or a\n"
        "host array of one element of the keys' dtype. comm, framework: as in dist_search.");
}

}  // namespace gsearch_python
