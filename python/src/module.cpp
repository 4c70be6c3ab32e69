// gsearch._core: the thin nanobind layer under the Python package (python/gsearch/). This file
// defines the module: its error mapping, the tables shared by the families (ALGORITHMS, SIDES,
// KEY_DTYPES), the build and device queries, and the families' bindings, one file each
// (bind_search.cpp, bind_find.cpp, bind_merge.cpp, bind_index.cpp, bind_selection.cpp,
// bind_index_intervals.cpp, bind_server.cpp, bind_functional_arrays.cpp, bind_dist.cpp,
// bind_asof.cpp; binding.hpp holds what they share). A new family adds its bind_<family>.cpp, a line in
// binding.hpp and one below.

#include <nanobind/stl/string.h>

#include <exception>
#include <string>

#include "binding.hpp"

namespace nb = nanobind;
using namespace nb::literals;
namespace py = gsearch_python;

NB_MODULE(_core, m) {
  m.doc() =
      "gsearch's extension module: batched search over arrays (CPU and CUDA). Use the functions "
      "of the gsearch package; this layer takes contiguous arrays of one supported dtype.";
  m.attr("__version__") = GSEARCH_VERSION;

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const gsearch::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const gsearch::out_of_memory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const gsearch::cuda_error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const gsearch::error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.attr("ALGORITHMS") = py::enum_table(py::enum_values(gsearch::algorithm::merge));
  m.attr("SIDES") = py::enum_table(gsearch::all_sides);
  {
    nb::dict orders;  // search_options::queries_sorted
    orders["any"] = int(gsearch::queries_order::any);
    orders["sorted"] = int(gsearch::queries_order::sorted);
    orders["detect"] = int(gsearch::queries_order::detect);
    m.attr("QUERIES_ORDERS") = orders;
  }
  nb::list key_dtypes;
  for (gsearch::dtype t : gsearch::all_dtypes)
    key_dtypes.append(nb::str(std::string(gsearch::name(t)).c_str()));
  m.attr("KEY_DTYPES") = nb::tuple(key_dtypes);

  py::bind_search(m);
  py::bind_index(m);
  py::bind_find(m);
  py::bind_merge(m);
  py::bind_selection(m);
  py::bind_index_intervals(m);
  py::bind_server(m);
  py::bind_functional_arrays(m);
  py::bind_dist(m);
  py::bind_asof(m);

  m.def(
      "_data_pointer", [](const py::in_array& a) { return uintptr_t(a.data()); }, "a"_a,
      "The data pointer the extension sees for `a` (a debugging hook: equal to the caller's\n"
      "pointer when nothing was copied).");
  m.def("built_with_cuda", &gsearch::built_with_cuda,
        "True when the extension was built with the CUDA backend.");
  m.def(
      "build_info",
      [] {
        const auto b = gsearch::build_info();
        nb::dict d;
        d["version"] = b.version;
        d["commit"] = b.commit;
        d["dirty"] = b.dirty;
        d["cuda"] = b.cuda;
        return d;
      },
      "This build's version, source commit (or \"unknown\"), whether the tree was dirty, and\n"
      "whether it has the CUDA backend: {'version', 'commit', 'dirty', 'cuda'}.");
  m.def("cuda_device_count", &gsearch::cuda_device_count,
        "Number of usable CUDA devices (0 without CUDA, a driver or a GPU).");
  m.def("cuda_device_name", &gsearch::cuda_device_name,
        "A one-line description of the current CUDA device, or an empty string.");
  m.def("cuda_current_device", &gsearch::cuda_current_device,
        "The calling thread's current CUDA device (0 without CUDA).");
  m.def("cuda_set_device", &gsearch::cuda_set_device, "device"_a,
        "Makes `device` the calling thread's current CUDA device.");
}
