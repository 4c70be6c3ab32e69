#pragma once
/// \file
/// The executable specification of gsearch::functional_arrays (issue 23): the plain semantics of
/// persistent maps from int64 indices to values, written for clarity, not speed. Every version
/// keeps its whole map (an update copies it). The tests, `gsearch esfa run --verify` and the
/// benchmark compare the machine with it operation by operation.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gsearch/core/error.hpp"

namespace gsearch {

template <class V>
class functional_arrays_spec {
 public:
  using version = int64_t;  ///< the arrays made so far, numbered from 0

  /// A new empty array.
  version empty() { return make(std::make_shared<const std::map<int64_t, V>>()); }
  /// a with a[i] = v.
  version update(version a, int64_t i, V v) {
    auto m = std::make_shared<std::map<int64_t, V>>(map(a));
    (*m)[i] = v;
    return make(std::move(m));
  }
  /// a without index i (a copy of a when i is not defined there).
  version remove(version a, int64_t i) {
    auto m = std::make_shared<std::map<int64_t, V>>(map(a));
    m->erase(i);
    return make(std::move(m));
  }
  std::optional<V> lookup(version a, int64_t i) const {
    const auto& m = map(a);
    const auto it = m.find(i);
    return it == m.end() ? std::nullopt : std::optional<V>(it->second);
  }
  int64_t size(version a) const { return int64_t(map(a).size()); }
  /// The least defined index above i.
  std::optional<int64_t> next(version a, int64_t i) const {
    const auto& m = map(a);
    const auto it = m.upper_bound(i);
    return it == m.end() ? std::nullopt : std::optional<int64_t>(it->first);
  }
  /// Forgets a (a later use of it is an error).
  void release(version a) {
    check(a);
    maps_[size_t(a)].reset();
  }
  bool live(version a) const { return a >= 0 && a < int64_t(maps_.size()) && maps_[size_t(a)] != nullptr; }
  /// The whole map of a (for the tests' comparisons).
  const std::map<int64_t, V>& map(version a) const {
    check(a);
    return *maps_[size_t(a)];
  }

 private:
  version make(std::shared_ptr<const std::map<int64_t, V>> m) {
    maps_.push_back(std::move(m));
    return version(maps_.size() - 1);
  }
  void check(version a) const {
    if (!live(a)) throw invalid_argument("gsearch::functional_arrays_spec: array " + std::to_string(a) + " is not live");
  }
  std::vector<std::shared_ptr<const std::map<int64_t, V>>> maps_;
};

}  // namespace gsearch
