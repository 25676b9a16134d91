// The tensor type of an e-node from its operator and its children's types: XLA's shape rules
// for the operators of the tensor language, plus the node kinds phase 1 adds.
//
// Conventions of the tensor language that the types depend on (rules must build nodes this way):
//   convert, bitcast-convert  result element type = attributes.dtype (bitcast-convert between
//                             widths adds / drops the minor-most ratio dimension, as in XLA)
//   reshape, broadcast        result dims = attributes.shape, element type = the operand's
//   iota                      attributes.dtype + attributes.shape, iota dimension = dimensions[0]
//   dot                       result element type = attributes.dtype (XLA's preferred type)
//   reduce                    children (input, init scalar); reduced dims = attributes.dimensions
//   pad                       children (operand, padding scalar)
//   Input                     u8[attributes.shape[0]]
//   Constant                  attributes.dtype + attributes.shape
//   Pii                       the ROOT type of the instruction's semantics with alpha bound
//   SliceH / ConcatH          like slice / concatenate (attributes.slice / dimensions[0])
// A combination that does not type-check is a bug in whoever built the node: Error(Internal).
#pragma once

#include <array>
#include <optional>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/shape_check.hpp"  // describe_finding
#include "act/hlo/shape_rules.hpp"
#include "act/isa/description.hpp"
#include "act/isa/semantics.hpp"
#include "act/select/ir/tensor_language.hpp"
#include "act/sym/expr.hpp"

namespace act::select {

// The semantics of an instruction with its alpha bound (isa/semantics.hpp).
using isa::instantiate_semantics;

namespace type_detail {

[[noreturn]] inline void fail(const TensorOp& op, const std::string& message) {
  const std::string_view what =
      op.kind == NodeKind::Operator ? hlo::opcode_name(op.opcode) : to_string(op.kind);
  throw Error(ErrorKind::Internal, fmt::format("tensor type of {}: {}", what, message));
}

inline std::string dims_text(std::span<const std::int64_t> v) { return fmt::format("{{{}}}", fmt::join(v, ",")); }

inline void expect_children(const TensorOp& op, std::span<const Shape* const> children, std::size_t n) {
  if (children.size() != n) fail(op, fmt::format("{} children, expected {}", children.size(), n));
  for (const Shape* c : children)
    if (c->is_tuple) fail(op, "a child has a tuple type");
}

// The type XLA's shape rule (hlo/shape_rules.hpp) gives `code` over `children`; `written` is the
// result type the node's attributes fix, where the rule needs one (see infer()).
inline Shape rule_type(const TensorOp& op, hlo::Opcode code, std::span<const Shape* const> children,
                       const hlo::shape_rules::Attributes& attributes, const std::optional<Shape>& written = {}) {
  using hlo::shape_rules::TensorType;
  std::array<TensorType, 4> few;  // phase 1's types are static: the children's dims are the views
  std::vector<TensorType> many;
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (children[i]->is_tuple) fail(op, "a child has a tuple type");
    const TensorType t{children[i]->dtype, children[i]->dims};
    if (children.size() <= few.size()) few[i] = t;
    else many.push_back(t);
  }
  const View<TensorType> types = children.size() <= few.size() ? View<TensorType>(few.data(), children.size()) : View<TensorType>(many);
  std::optional<TensorType> result;
  if (written) result = TensorType{written->dtype, written->dims};
  const auto r = hlo::shape_rules::infer(code, types, attributes, result ? &*result : nullptr);
  if (!r.ok()) fail(op, hlo::describe_finding(r.finding, code, children, attributes, written ? &*written : nullptr));
  const auto dims = r.dimensions();
  return Shape(r.dtype, std::vector<std::int64_t>(dims.begin(), dims.end()));
}

inline hlo::shape_rules::Attributes rule_attributes(const NodeAttributes& a) {
  hlo::shape_rules::Attributes r;
  r.dimensions = a.dimensions;
  r.dot = {a.dot.lhs_batch, a.dot.lhs_contracting, a.dot.rhs_batch, a.dot.rhs_contracting};
  r.slice = a.slice;
  r.padding = a.padding;
  return r;
}

// XLA's rules plus the tensor language's own conventions (see the top of this file).
inline Shape operator_type(const TensorOp& op, const NodeAttributes& a, std::span<const Shape* const> ch) {
  using hlo::Opcode;
  const Opcode code = op.opcode;
  hlo::shape_rules::Attributes attributes = rule_attributes(a);
  switch (code) {
    case Opcode::Compare:
      if (!a.direction) fail(op, "compare without a direction");
      break;
    case Opcode::Convert:
      expect_children(op, ch, 1);
      return rule_type(op, code, ch, attributes, Shape(a.dtype, ch[0]->dims));
    case Opcode::BitcastConvert: {
      expect_children(op, ch, 1);
      const int in_bits = bit_width(ch[0]->dtype), out_bits = bit_width(a.dtype);
      const hlo::shape_rules::ResultType r =
          hlo::shape_rules::bitcast_convert_to({ch[0]->dtype, ch[0]->dims}, a.dtype);
      if (in_bits % 8 != 0 || out_bits % 8 != 0 || !r.ok())  // the language has byte-sized types only
        fail(op, fmt::format("cannot reinterpret {} as {}", to_string(*ch[0]), name(a.dtype)));
      const auto dims = r.dimensions();
      return Shape(a.dtype, std::vector<std::int64_t>(dims.begin(), dims.end()));
    }
    case Opcode::Reshape:
    case Opcode::Bitcast:  // the language's bitcast is a reshape
      expect_children(op, ch, 1);
      return rule_type(op, Opcode::Reshape, ch, attributes, Shape(ch[0]->dtype, a.shape));
    case Opcode::Broadcast:
      expect_children(op, ch, 1);
      return rule_type(op, code, ch, attributes, Shape(ch[0]->dtype, a.shape));
    case Opcode::Iota:
      if (a.dimensions.size() != 1) fail(op, fmt::format("iota dimension {} for {}", dims_text(a.dimensions), dims_text(a.shape)));
      attributes.iota_dimension = a.dimensions[0];
      return rule_type(op, code, ch, attributes, Shape(a.dtype, a.shape));
    case Opcode::Reduce:
      expect_children(op, ch, 2);  // one input and its init: the language's reduce is not variadic
      if (a.reduce == ReduceKind::None) fail(op, "reduce without a reduction kind");
      break;
    case Opcode::Dot:
      expect_children(op, ch, 2);
      if (ch[0]->dtype != ch[1]->dtype)  // the language's dots take one element type
        fail(op, fmt::format("dot({}, {}): operands of different element types", to_string(*ch[0]), to_string(*ch[1])));
      return rule_type(op, code, ch, attributes, Shape(a.dtype, {}));
    default:
      if (!hlo::shape_rules::has_rule(code) || code == Opcode::DynamicSlice || code == Opcode::DynamicUpdateSlice ||
          code == Opcode::ReduceWindow)
        fail(op, "not an operator of the tensor language");
  }
  return rule_type(op, code, ch, attributes);
}

inline Shape pii_type(const SelectionContext& context, const TensorOp& op, const NodeAttributes& a,
                      std::span<const Shape* const> children) {
  if (a.index < 0 || static_cast<std::size_t>(a.index) >= context.isa.instructions.size())
    fail(op, fmt::format("instruction {} is not in ISA {}", a.index, context.isa.name));
  const auto instruction = static_cast<std::size_t>(a.index);
  const isa::Instruction& inst = context.isa.instructions[instruction];
  if (children.size() != inst.inputs.size())
    fail(op, fmt::format("{} has {} inputs, the node {} children", inst.name, inst.inputs.size(), children.size()));
  auto key = std::make_pair(instruction, a.alpha);
  if (auto it = context.pii_output_types.find(key); it != context.pii_output_types.end()) return it->second;
  Shape out;
  try {
    const hlo::Module semantics = instantiate_semantics(inst, a.alpha);
    out = semantics.entry_computation().root_instruction().shape;
  } catch (const Error& e) {
    fail(op, fmt::format("{} with alpha {}: {}", inst.name, dims_text(a.alpha), e.what()));
  }
  out.has_layout = false;
  out.layout = {};
  context.pii_output_types.emplace(std::move(key), out);
  return out;
}

}  // namespace type_detail

// The type of `op` applied to children of types `children`. Throws Error(Internal) when the
// node does not type-check.
inline Shape infer_type(const SelectionContext& context, const TensorOp& op, std::span<const Shape* const> children) {
  using namespace type_detail;
  const NodeAttributes& a = context.attributes_of(op);
  switch (op.kind) {
    case NodeKind::Operator: return operator_type(op, a, children);
    case NodeKind::Input:
      expect_children(op, children, 0);
      if (a.shape.size() != 1 || a.shape[0] < 0) fail(op, "an input needs one byte count");
      return Shape(DType::u8, a.shape);
    case NodeKind::Constant:
    case NodeKind::Undefined:
      expect_children(op, children, 0);
      return Shape(a.dtype, a.shape);
    case NodeKind::Pii: return pii_type(context, op, a, children);
    case NodeKind::SliceH:
      expect_children(op, children, 1);
      return rule_type(op, hlo::Opcode::Slice, children, rule_attributes(a));
    case NodeKind::ConcatH:
      return rule_type(op, hlo::Opcode::Concatenate, children, rule_attributes(a));
    case NodeKind::Embed: {
      expect_children(op, children, 1);
      const Shape& part = *children[0];
      if (part.is_tuple || part.dims.size() != a.shape.size() || a.dimensions.size() != a.shape.size())
        fail(op, fmt::format("embed of {} into {} at {}", to_string(part), dims_text(a.shape), dims_text(a.dimensions)));
      for (std::size_t d = 0; d < a.shape.size(); ++d)
        if (a.dimensions[d] < 0 || a.dimensions[d] + part.dims[d] > a.shape[d])
          fail(op, fmt::format("embed of {} into {} at {}: out of range", to_string(part), dims_text(a.shape), dims_text(a.dimensions)));
      return Shape(part.dtype, a.shape);
    }
    case NodeKind::OverlayH: {
      if (a.shape.size() != 1 || a.dimensions.size() != children.size() || children.empty())
        fail(op, "overlay^H needs a byte count and one offset per window");
      for (std::size_t k = 0; k < children.size(); ++k)
        if (children[k]->is_tuple || children[k]->dtype != DType::u8 || children[k]->dims.size() != 1 ||
            a.dimensions[k] < 0 || a.dimensions[k] >= a.shape[0])
          fail(op, fmt::format("overlay^H window {} ({} at {}) in u8[{}]", k, to_string(*children[k]), a.dimensions[k], a.shape[0]));
      return Shape(DType::u8, a.shape);
    }
  }
  fail(op, "unknown node kind");
}

}  // namespace act::select
