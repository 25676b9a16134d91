// Structural equality of HLO modules: what a print/parse round trip must preserve.
#pragma once

#include "act/hlo/module.hpp"

namespace act::hlo {

inline bool structurally_equal(const Instruction& a, const Instruction& b) {
  if (a.name != b.name || a.opcode != b.opcode || !(a.shape == b.shape) || a.operands != b.operands) return false;
  if (a.dimensions != b.dimensions || a.slice != b.slice || a.dynamic_slice_sizes != b.dynamic_slice_sizes ||
      a.padding != b.padding || !(a.dot == b.dot) || a.parameter_number != b.parameter_number ||
      a.tuple_index != b.tuple_index || a.iota_dimension != b.iota_dimension ||
      a.comparison_direction != b.comparison_direction || a.comparison_type != b.comparison_type)
    return false;
  if (a.called_computations != b.called_computations ||
      a.called_computation_attributes != b.called_computation_attributes || a.raw_attributes != b.raw_attributes)
    return false;
  if (a.literal.has_value() != b.literal.has_value() || a.literal_text != b.literal_text) return false;
  if (a.literal && (a.literal->elided != b.literal->elided || !a.literal->bitwise_equal(*b.literal))) return false;
  return a.dimension_expressions == b.dimension_expressions;
}

inline bool structurally_equal(const Computation& a, const Computation& b) {
  if (a.name != b.name || a.root != b.root || a.parameters != b.parameters || a.is_entry != b.is_entry ||
      a.instructions.size() != b.instructions.size())
    return false;
  for (std::size_t i = 0; i < a.instructions.size(); ++i)
    if (!structurally_equal(a.instructions[i], b.instructions[i])) return false;
  return true;
}

// Names, opcodes, shapes with layouts, operands, typed attributes, literals (bitwise), raw
// attributes, called computations, module attributes and entry layouts. Source locations and
// the dropped metadata do not count.
inline bool structurally_equal(const Module& a, const Module& b) {
  if (a.name != b.name || a.entry != b.entry || a.entry_parameter_layouts != b.entry_parameter_layouts ||
      a.entry_result_layout != b.entry_result_layout || a.raw_attributes != b.raw_attributes ||
      a.computations.size() != b.computations.size())
    return false;
  for (std::size_t i = 0; i < a.computations.size(); ++i)
    if (!structurally_equal(a.computations[i], b.computations[i])) return false;
  return true;
}

}  // namespace act::hlo
