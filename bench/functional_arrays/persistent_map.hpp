#pragma once
// The benchmark's persistent-map peer for functional arrays (issue 23): a path-copying binary
// search tree (every update or remove copies the path from the root; the old root still reads
// the old map), in two forms: balanced as a treap (priorities from the index's hash: an expected
// O(log n) path whatever the history), and unbalanced (no rotations: a history of increasing
// indices makes a list, each operation a walk of it; the seed's point about tree-based functional
// arrays). No maintained C++ persistent-map package is in Debian (immer is not), so it is written
// here. Nodes are never freed (an arena per replay): release is a no-op, as garbage would be.

#include <cstdint>
#include <deque>
#include <optional>

#include "gsearch/core/find.hpp"  // mix64

namespace gsearch::bench::fa {

template <bool Balanced>
class persistent_map {
 public:
  struct node {
    int64_t key, value;
    uint64_t priority;
    int64_t size;
    const node* left;
    const node* right;
  };
  using version = const node*;

  version empty() { return nullptr; }
  version update(version a, int64_t i, int64_t v) { return insert(a, i, v); }
  version remove(version a, int64_t i) { return erase(a, i); }
  void release(version) {}

  std::optional<int64_t> lookup(version a, int64_t i) const {
    for (const node* n = a; n;) {
      if (i == n->key) return n->value;
      n = i < n->key ? n->left : n->right;
    }
    return std::nullopt;
  }
  int64_t size(version a) const { return a ? a->size : 0; }
  std::optional<int64_t> next(version a, int64_t i) const {
    std::optional<int64_t> best;
    for (const node* n = a; n;) {
      if (n->key > i) {
        best = n->key;
        n = n->left;
      } else {
        n = n->right;
      }
    }
    return best;
  }

 private:
  static int64_t sz(const node* n) { return n ? n->size : 0; }
  const node* make(int64_t k, int64_t v, uint64_t p, const node* l, const node* r) {
    arena_.push_back({k, v, p, 1 + sz(l) + sz(r), l, r});
    return &arena_.back();
  }
  const node* with(const node* n, const node* l, const node* r) { return make(n->key, n->value, n->priority, l, r); }

  // Inserts or replaces key i, copying the path; a treap restores the heap order on the way up.
  const node* insert(const node* n, int64_t i, int64_t v) {
    if (!n) return make(i, v, core::mix64(uint64_t(i)), nullptr, nullptr);
    if (i == n->key) return make(i, v, n->priority, n->left, n->right);
    if (i < n->key) {
      const node* l = insert(n->left, i, v);
      if (Balanced && l->priority > n->priority) return with(l, l->left, with(n, l->right, n->right));  // rotate right
      return with(n, l, n->right);
    }
    const node* r = insert(n->right, i, v);
    if (Balanced && r->priority > n->priority) return with(r, with(n, n->left, r->left), r->right);  // rotate left
    return with(n, n->left, r);
  }
  const node* join(const node* l, const node* r) {  // every key of l below every key of r
    if (!l) return r;
    if (!r) return l;
    if (l->priority >= r->priority) return with(l, l->left, join(l->right, r));
    return with(r, join(l, r->left), r->right);
  }
  const node* erase(const node* n, int64_t i) {
    if (!n) return nullptr;
    if (i == n->key) return join(n->left, n->right);
    if (i < n->key) {
      const node* l = erase(n->left, i);
      return l == n->left ? n : with(n, l, n->right);
    }
    const node* r = erase(n->right, i);
    return r == n->right ? n : with(n, n->left, r);
  }

  std::deque<node> arena_;  // stable addresses
};

}  // namespace gsearch::bench::fa
