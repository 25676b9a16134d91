// Disjoint sets over e-graph ids. The e-graph decides which root survives a union (it keeps the
// class with more parents so fewer nodes need re-canonicalising), so `link` takes the winner.
#pragma once

#include <cstddef>
#include <vector>

#include "act/egraph/id.hpp"

namespace act::egraph {

class UnionFind {
 public:
  Id make_set() {
    Id id = static_cast<Id>(parent_.size());
    parent_.push_back(id);
    return id;
  }

  std::size_t size() const { return parent_.size(); }
  void reserve(std::size_t n) { parent_.reserve(n); }

  // Root of `id` without touching the structure (safe for readers of a const e-graph).
  Id find(Id id) const {
    while (parent_[id] != id) id = parent_[id];
    return id;
  }

  // Root of `id`, halving the path on the way (every node skips to its grandparent).
  Id find_and_compress(Id id) {
    while (parent_[id] != id) {
      parent_[id] = parent_[parent_[id]];
      id = parent_[id];
    }
    return id;
  }

  // Makes `root` the parent of `child`; both must be roots.
  void link(Id root, Id child) { parent_[child] = root; }

  // Points every id straight at its root, so later finds take at most one step.
  void flatten() {
    for (std::size_t i = 0; i < parent_.size(); ++i) parent_[i] = find_and_compress(static_cast<Id>(i));
  }

 private:
  std::vector<Id> parent_;
};

}  // namespace act::egraph
