#pragma once
// How a family declares its backend operations once for both backends (private to src/).
//
// A family's src/<family>/backend.hpp lists its operations, one line each, in a macro per file
// that defines them (the same list for the CPU's file and the CUDA's):
//
//     #define GSEARCH_ROWS_OPS(X, T)
//       X(T, void, topk, (const T* data, int64_t rows, int64_t cols, int64_t k, ...))
//       X(T, void, kthvalue, (...))
//
// (each line of the real macro ends in a backslash)
//
// (X's arguments: the key type, the return type, the name, the parameters after the backend's
// handle). GSEARCH_DECLARE_BACKEND_OPS(LIST) declares every operation of LIST in both backends'
// namespaces, `template <class T> R name(handle h, ...)`, where `handle` is the CPU's thread
// count (int) or the CUDA stream (CUstream_st*); the public layer calls `backend::name(h, ...)`
// through on_backend (backend.hpp), and the handle's type picks the backend. A backend's file
// defines each operation with the same signature, its handle spelled out (`int threads`,
// `cudaStream_t stream`), and instantiates the list for every key type with
// GSEARCH_INSTANTIATE_BACKEND_OPS(LIST) inside its backend's namespace. A new operation is then
// its list line, its CPU body and its CUDA body: a missing body or instantiation is a link error.
// Where the backends' signatures differ, each backend has a list of its own (declared with
// GSEARCH_DECLARE_CPU_OPS / GSEARCH_DECLARE_CUDA_OPS), and the public layer's call tests
// on_cpu<decltype(h)>.
//
// An operation with a result type besides the key type (the searches: int64 or int32 positions)
// is a line of a list taking (X, T, Out), X(T, Out, R, name, params), declared with
// GSEARCH_DECLARE_BACKEND_RESULT_OPS (`template <class T, class Out>`) and instantiated for every
// key type and both result types with GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS. What is not a
// template (the `auto` choice, temporary-memory sizes) is written once in GSEARCH_IN_BOTH_BACKENDS.

#include <cstdint>

#include "gsearch/core/key_traits.hpp"  // GSEARCH_FOR_EACH_KEY_TYPE

struct CUstream_st;

namespace gsearch::cpu_backend {
using handle = int;  // the thread count (0: all)
}  // namespace gsearch::cpu_backend
namespace gsearch::cuda_backend {
using handle = CUstream_st*;  // the stream the call is enqueued on
}  // namespace gsearch::cuda_backend

#define GSEARCH_UNPAREN(...) __VA_ARGS__
#define GSEARCH_DECLARE_BACKEND_OP(T, R, name, params) template <class T> R name(handle h, GSEARCH_UNPAREN params);
#define GSEARCH_INSTANTIATE_BACKEND_OP(T, R, name, params) template R name<T>(handle, GSEARCH_UNPAREN params);
#define GSEARCH_INSTANTIATE_BACKEND_LIST(LIST, T) LIST(GSEARCH_INSTANTIATE_BACKEND_OP, T)

/// Declares LIST's operations in both backends (at global scope).
#define GSEARCH_DECLARE_BACKEND_OPS(LIST)                                   \
  namespace gsearch::cpu_backend {                                          \
  LIST(GSEARCH_DECLARE_BACKEND_OP, T)                                       \
  }                                                                         \
  namespace gsearch::cuda_backend {                                         \
  LIST(GSEARCH_DECLARE_BACKEND_OP, T)                                       \
  }

/// Declares LIST's operations in one backend only, where the two differ (at global scope).
#define GSEARCH_DECLARE_CPU_OPS(LIST)                                       \
  namespace gsearch::cpu_backend {                                          \
  LIST(GSEARCH_DECLARE_BACKEND_OP, T)                                       \
  }
#define GSEARCH_DECLARE_CUDA_OPS(LIST)                                      \
  namespace gsearch::cuda_backend {                                         \
  LIST(GSEARCH_DECLARE_BACKEND_OP, T)                                       \
  }

/// Instantiates LIST's operations for every key type (inside the backend's namespace, after the
/// definitions).
#define GSEARCH_INSTANTIATE_BACKEND_OPS(LIST) GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_INSTANTIATE_BACKEND_LIST, LIST)

#define GSEARCH_DECLARE_BACKEND_RESULT_OP(T, Out, R, name, params) \
  template <class T, class Out> R name(handle h, GSEARCH_UNPAREN params);
#define GSEARCH_INSTANTIATE_BACKEND_RESULT_OP(T, Out, R, name, params) \
  template R name<T, Out>(handle, GSEARCH_UNPAREN params);
#define GSEARCH_INSTANTIATE_BACKEND_RESULT_LIST(LIST, T)    \
  LIST(GSEARCH_INSTANTIATE_BACKEND_RESULT_OP, T, int64_t) \
  LIST(GSEARCH_INSTANTIATE_BACKEND_RESULT_OP, T, int32_t)

/// Declares LIST's operations, each with a result type Out, in both backends (at global scope).
#define GSEARCH_DECLARE_BACKEND_RESULT_OPS(LIST)                            \
  namespace gsearch::cpu_backend {                                          \
  LIST(GSEARCH_DECLARE_BACKEND_RESULT_OP, T, Out)                           \
  }                                                                         \
  namespace gsearch::cuda_backend {                                         \
  LIST(GSEARCH_DECLARE_BACKEND_RESULT_OP, T, Out)                           \
  }
/// The same in one backend only.
#define GSEARCH_DECLARE_CPU_RESULT_OPS(LIST)                                \
  namespace gsearch::cpu_backend {                                          \
  LIST(GSEARCH_DECLARE_BACKEND_RESULT_OP, T, Out)                           \
  }
#define GSEARCH_DECLARE_CUDA_RESULT_OPS(LIST)                               \
  namespace gsearch::cuda_backend {                                         \
  LIST(GSEARCH_DECLARE_BACKEND_RESULT_OP, T, Out)                           \
  }

/// Instantiates LIST's operations for every key type and both result types (int64_t, int32_t),
/// inside the backend's namespace.
#define GSEARCH_INSTANTIATE_BACKEND_RESULT_OPS(LIST) \
  GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_INSTANTIATE_BACKEND_RESULT_LIST, LIST)

/// Declarations written once for both backends (at global scope; `handle` is each one's).
#define GSEARCH_IN_BOTH_BACKENDS(...)    \
  namespace gsearch::cpu_backend {       \
  __VA_ARGS__                            \
  }                                      \
  namespace gsearch::cuda_backend {      \
  __VA_ARGS__                            \
  }
