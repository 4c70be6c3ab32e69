#pragma once
// The one adapter between the public layer and the backends (private to src/).
//
// Each public function is written once, generic in its execution tag (src/<family>/api.cpp:
// argument checks, then the backend call), and reaches its backend
// through on_backend(exec, call). `call` receives the backend's handle, the CPU's thread count
// (int) or the CUDA stream, and calls `backend::f(handle, ...)`: namespace `backend` sees both
// backends' functions, and the handle's type picks the overload. Where the backends' signatures
// differ, the call tests `on_cpu<decltype(handle)>`. A family's api.cpp includes its backend.hpp
// (src/backend_ops.hpp: each operation declared once for both backends) itself, before its calls:
// the using-directives below see every backend declaration visible where a call is written, so
// this file names no family but the search.
//
// A build without CUDA (GSEARCH_HAS_CUDA = 0) compiles no src/cuda/: on_backend never
// instantiates a call on a CUDA handle, so nothing references the CUDA backend, and a call on
// gsearch::cuda throws the one "built without CUDA" error, here. (src/no_cuda.cpp has the rest of
// such a build's CUDA side: the device API of device.hpp, which reports no device.)

#include <type_traits>

#include "gsearch/core/error.hpp"
#include "gsearch/core/span.hpp"
#include "search/backend.hpp"  // is_sorted, for sorted_on
#include "gsearch/execution.hpp"

namespace gsearch {

namespace backend {
using namespace ::gsearch::cpu_backend;
using namespace ::gsearch::cuda_backend;
}  // namespace backend

/// Whether this library has the CUDA backend (-DGSEARCH_CUDA).
inline constexpr bool cuda_built = GSEARCH_HAS_CUDA;

[[noreturn]] inline void throw_no_cuda() {
  throw invalid_argument("gsearch was built without CUDA (GSEARCH_CUDA=OFF): use the CPU backend");
}

/// True for the CPU backend's handle (a thread count); false for a CUDA stream.
template <class Handle>
inline constexpr bool on_cpu = std::is_same_v<std::remove_cvref_t<Handle>, int>;

/// call(exec.threads): the CPU backend.
template <class F>
decltype(auto) on_backend(const cpu_t& exec, F&& call) {
  return call(exec.threads);
}

/// call(exec.stream): the CUDA backend; without it, the error and no reference to it (the
/// condition depends on F, so the discarded branch is never instantiated).
template <class F>
auto on_backend(const cuda_t& exec, F&& call) -> decltype(call(exec.stream)) {
  if constexpr (cuda_built && sizeof(F) > 0) {
    return call(exec.stream);
  } else {
    throw_no_cuda();
  }
}

/// Whether x is sorted (key_traits.hpp's order), checked on the backend that holds it (on CUDA,
/// one kernel whose answer it waits for).
template <class Exec, class T>
bool sorted_on(const Exec& exec, span<const T> x) {
  return on_backend(exec, [&](auto h) { return backend::is_sorted(h, x.data(), x.size()); });
}

}  // namespace gsearch
