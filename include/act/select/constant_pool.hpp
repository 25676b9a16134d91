// The constant pool phase 1 hands to phase 2 with its pii graphs: the kernel's compile-time
// constants and those rules create (identity matrices, ones, zeros), by id. Phase 2 places them
// in HBM after the kernel's outputs (DESIGN.md "HBM image"); a pii graph's Constant leaves name
// them by id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "act/core/literal.hpp"

namespace act::select {

// Equal constants share an id; ids are never reused.
class ConstantTable {
 public:
  std::int64_t intern(Literal value) {
    for (std::size_t i = 0; i < values_.size(); ++i)
      if (values_[i].bitwise_equal(value)) return static_cast<std::int64_t>(i);
    values_.push_back(std::move(value));
    return static_cast<std::int64_t>(values_.size() - 1);
  }
  const Literal& operator[](std::int64_t id) const { return values_.at(static_cast<std::size_t>(id)); }
  std::size_t size() const { return values_.size(); }

 private:
  std::vector<Literal> values_;
};

}  // namespace act::select
