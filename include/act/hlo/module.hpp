// The in-memory HLO module: what the parser builds, the printer prints, the interpreter runs.
// Both dialects (XLA's text and the paper's shorthand) parse into this one XLA-normal form:
// 0-based dimension lists, XLA broadcast semantics, explicit dot dimension numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "act/core/error.hpp"
#include "act/core/literal.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/opcode.hpp"
#include "act/hlo/shape_rules.hpp"  // SliceRange, PadDimension

namespace act::hlo {

struct DotDimensions {
  std::vector<std::int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  friend bool operator==(const DotDimensions&, const DotDimensions&) = default;
};

enum class ComparisonDirection : std::uint8_t { EQ, NE, GE, GT, LE, LT };

// An attribute act does not interpret (metadata aside), kept as written so printing gives it back.
struct RawAttribute {
  std::string name;
  std::string value;  // verbatim text after `name=`
  friend bool operator==(const RawAttribute&, const RawAttribute&) = default;
};

struct Instruction {
  std::string name;  // without the leading '%'
  Opcode opcode = Opcode::Parameter;
  Shape shape;
  std::vector<int> operands;  // indices into the owning Computation::instructions
  SourceLocation location;    // of the instruction's name in the text

  // Typed attributes; each opcode uses the ones XLA defines for it.
  std::vector<std::int64_t> dimensions;        // transpose broadcast reduce reverse concatenate sort ...
  std::vector<SliceRange> slice;               // slice
  std::vector<std::int64_t> dynamic_slice_sizes;
  std::vector<PadDimension> padding;           // pad
  DotDimensions dot;                           // dot
  std::int64_t parameter_number = -1;          // parameter
  std::int64_t tuple_index = -1;               // get-tuple-element `index=`
  std::int64_t iota_dimension = -1;            // iota
  std::optional<ComparisonDirection> comparison_direction;  // compare `direction=`
  std::string comparison_type;                 // compare `type=` as written, empty if absent
  std::optional<Literal> literal;              // constant
  // constant(...) contents verbatim when `literal` cannot hold them (complex, f8, sub-byte and
  // tuple constants, huge arrays); empty otherwise.
  std::string literal_text;
  std::vector<int> called_computations;        // to_apply / calls / condition+body ... (module indices)
  std::vector<std::string> called_computation_attributes;  // the attribute name of each, same order
  std::vector<RawAttribute> raw_attributes;    // everything else except metadata, in text order

  // Dimensions written as backtick expressions (ISA semantics templates): one entry per dim,
  // empty where the dim was a plain integer. Filled only when parsing semantics.
  std::vector<std::string> dimension_expressions;
};

struct Computation {
  std::string name;
  std::vector<Instruction> instructions;  // in text order (operands come first)
  int root = -1;                          // index of the ROOT (or last) instruction
  std::vector<int> parameters;            // instruction index of parameter(i), by i
  bool is_entry = false;

  const Instruction& root_instruction() const { return instructions.at(static_cast<std::size_t>(root)); }
  int find(std::string_view instruction_name) const {
    for (std::size_t i = 0; i < instructions.size(); ++i)
      if (instructions[i].name == instruction_name) return static_cast<int>(i);
    return -1;
  }
};

struct Module {
  std::string name;
  std::vector<Computation> computations;  // callees before callers
  int entry = -1;
  // `entry_computation_layout={(...)->...}` when given: parameter shapes then the result shape.
  std::optional<std::vector<Shape>> entry_parameter_layouts;
  std::optional<Shape> entry_result_layout;
  std::vector<RawAttribute> raw_attributes;  // other module attributes, verbatim

  const Computation& entry_computation() const { return computations.at(static_cast<std::size_t>(entry)); }
  Computation& entry_computation() { return computations.at(static_cast<std::size_t>(entry)); }
  int find(std::string_view computation_name) const {
    for (std::size_t i = 0; i < computations.size(); ++i)
      if (computations[i].name == computation_name) return static_cast<int>(i);
    return -1;
  }
};

}  // namespace act::hlo
