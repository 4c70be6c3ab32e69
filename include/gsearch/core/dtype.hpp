#pragma once
/// \file
/// The key types as runtime values: one list and one switch over it. The CLI (a .npy descr) and
/// the Python binding (a DLPack dtype) map their own type tags onto `dtype` and call
/// `visit_key_type`, so that a new key type is a line in GSEARCH_KEY_TYPES (key_traits.hpp), a
/// line in the enum and the list below, and a case of the switch (the static_assert counts).

#include <iterator>
#include <optional>
#include <string_view>

#include "gsearch/core/key_traits.hpp"

// nvcc warns (#445) that a visitor's type parameter appears in no parameter: by design, the type
// is the template argument that visit_key_type passes.
#if defined(__NVCC__)
#pragma nv_diagnostic push
#pragma nv_diag_suppress 445
#endif

namespace gsearch {

/// A key type, named as numpy names it.
enum class dtype : int { int32, uint32, int64, uint64, float32, float64 };

inline constexpr dtype all_dtypes[] = {dtype::int32,  dtype::uint32,  dtype::int64,
                                       dtype::uint64, dtype::float32, dtype::float64};

namespace detail {
#define GSEARCH_COUNT_KEY_TYPE(T) +1
inline constexpr int key_type_count = 0 GSEARCH_KEY_TYPES(GSEARCH_COUNT_KEY_TYPE);
#undef GSEARCH_COUNT_KEY_TYPE
}  // namespace detail
static_assert(std::size(all_dtypes) == detail::key_type_count,
              "all_dtypes and GSEARCH_KEY_TYPES must list the same key types");

/// Calls f.template operator()<T>() with the C++ key type T of `t`: the one runtime switch over
/// key types (the CLI's and the binding's dispatch go through it).
template <class F>
constexpr decltype(auto) visit_key_type(dtype t, F&& f) {
  switch (t) {
    case dtype::uint32: return f.template operator()<uint32_t>();
    case dtype::int64: return f.template operator()<int64_t>();
    case dtype::uint64: return f.template operator()<uint64_t>();
    case dtype::float32: return f.template operator()<float>();
    case dtype::float64: return f.template operator()<double>();
    case dtype::int32: break;
  }
  return f.template operator()<int32_t>();
}

/// The dtype of key type T.
template <key_type T>
constexpr dtype dtype_of() {
  for (dtype t : all_dtypes)
    if (visit_key_type(t, []<class U>() { return std::is_same_v<U, T>; })) return t;
  return dtype::int32;  // unreachable: every key_type is listed (the static_assert above)
}

/// numpy's name ("int32"), the .npy descr ("<i4") and the size in bytes, from key_traits.
constexpr std::string_view name(dtype t) {
  return visit_key_type(t, []<class T>() { return std::string_view(key_traits<T>::name); });
}
constexpr std::string_view npy_descr(dtype t) {
  return visit_key_type(t, []<class T>() { return std::string_view(key_traits<T>::npy_descr); });
}
constexpr int itemsize(dtype t) {
  return visit_key_type(t, []<class T>() { return int(sizeof(T)); });
}

/// Inverse of name(); nullopt for a type gsearch does not search.
constexpr std::optional<dtype> dtype_from_name(std::string_view s) {
  for (dtype t : all_dtypes)
    if (name(t) == s) return t;
  return std::nullopt;
}

/// The key dtypes' names for messages: "int32, uint32, int64, uint64, float32, float64".
inline constexpr std::string_view key_type_names = "int32, uint32, int64, uint64, float32, float64";

}  // namespace gsearch

#if defined(__NVCC__)
#pragma nv_diagnostic pop
#endif
