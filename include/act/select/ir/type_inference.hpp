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

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/shape_check.hpp"
#include "act/isa/description.hpp"
#include "act/select/ir/tensor_language.hpp"
#include "act/sym/expr.hpp"

namespace act::select {

// The semantics of `instruction` with its alpha attributes bound to `alpha` (declared order):
// every backtick dimension is evaluated. Throws Error(Isa) for a dimension that does not
// evaluate (e.g. it mentions a beta attribute, or alpha has the wrong length).
inline hlo::Module instantiate_semantics(const isa::Instruction& instruction, std::span<const std::int64_t> alpha) {
  if (alpha.size() != instruction.alpha.size())
    throw Error(ErrorKind::Isa, fmt::format("{}: {} alpha values given, the instruction has {}", instruction.name,
                                            alpha.size(), instruction.alpha.size()));
  sym::Bindings bindings;
  for (std::size_t i = 0; i < alpha.size(); ++i) bindings.set(instruction.alpha[i], alpha[i]);
  const hlo::DimensionEvaluator evaluate = [&](std::string_view text, SourceLocation where) -> std::int64_t {
    const sym::ParseResult parsed = sym::try_parse(text);
    if (!parsed.ok())
      throw Error(ErrorKind::Isa, fmt::format("{}: dimension '{}': {}", instruction.name, text, parsed.error), where);
    const sym::EvalResult r = sym::try_evaluate(parsed.expr, bindings);
    if (!r.ok())
      throw Error(ErrorKind::Isa,
                  fmt::format("{}: dimension '{}' does not evaluate from alpha: {}{}", instruction.name, text, r.error,
                              r.error_name.empty() ? std::string() : fmt::format(" '{}'", r.error_name)),
                  where);
    return r.value;
  };
  return hlo::parse_semantics(instruction.semantics, evaluate);
}

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

inline bool is_permutation(std::span<const std::int64_t> p, std::size_t rank) {
  if (p.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (auto d : p) {
    if (d < 0 || static_cast<std::size_t>(d) >= rank || seen[static_cast<std::size_t>(d)]) return false;
    seen[static_cast<std::size_t>(d)] = true;
  }
  return true;
}

inline bool unique_in_range(std::span<const std::int64_t> dims, std::size_t rank) {
  std::vector<bool> seen(rank, false);
  for (auto d : dims) {
    if (d < 0 || static_cast<std::size_t>(d) >= rank || seen[static_cast<std::size_t>(d)]) return false;
    seen[static_cast<std::size_t>(d)] = true;
  }
  return true;
}

inline Shape slice_type(const TensorOp& op, const Shape& in, std::span<const hlo::SliceRange> ranges) {
  if (ranges.size() != in.dims.size())
    fail(op, fmt::format("{} slice ranges for {}", ranges.size(), to_string(in)));
  Shape out(in.dtype, {});
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    const auto& r = ranges[d];
    if (r.stride < 1 || r.start < 0 || r.limit < r.start || r.limit > in.dims[d])
      fail(op, fmt::format("range [{}:{}:{}] of dimension {} does not fit {}", r.start, r.limit, r.stride, d,
                           to_string(in)));
    out.dims.push_back((r.limit - r.start + r.stride - 1) / r.stride);
  }
  return out;
}

inline Shape concatenate_type(const TensorOp& op, std::span<const Shape* const> children,
                              std::span<const std::int64_t> dimensions) {
  if (children.empty()) fail(op, "no children");
  if (dimensions.size() != 1) fail(op, "needs exactly one dimension");
  const Shape& first = *children[0];
  const auto d = dimensions[0];
  if (d < 0 || d >= first.rank()) fail(op, fmt::format("dimension {} out of range for {}", d, to_string(first)));
  Shape out(first.dtype, first.dims);
  for (std::size_t i = 1; i < children.size(); ++i) {
    const Shape& s = *children[i];
    bool ok = !s.is_tuple && s.dtype == first.dtype && s.rank() == first.rank();
    for (std::size_t k = 0; ok && k < s.dims.size(); ++k)
      ok = static_cast<std::int64_t>(k) == d || s.dims[k] == first.dims[k];
    if (!ok) fail(op, fmt::format("cannot concatenate {} and {} along {}", to_string(first), to_string(s), d));
    out.dims[static_cast<std::size_t>(d)] += s.dims[static_cast<std::size_t>(d)];
  }
  return out;
}

inline Shape bitcast_convert_type(const TensorOp& op, const Shape& in, DType to) {
  const int in_bits = bit_width(in.dtype), out_bits = bit_width(to);
  if (in_bits == 0 || out_bits == 0 || in_bits % 8 != 0 || out_bits % 8 != 0)
    fail(op, fmt::format("cannot reinterpret {} as {}", to_string(in), name(to)));
  if (in_bits == out_bits) return Shape(to, in.dims);
  if (in_bits > out_bits) {  // narrowing: a new minor-most dimension of the width ratio
    if (in_bits % out_bits != 0) fail(op, fmt::format("cannot reinterpret {} as {}", to_string(in), name(to)));
    Shape out(to, in.dims);
    out.dims.push_back(in_bits / out_bits);
    return out;
  }
  if (out_bits % in_bits != 0 || in.dims.empty() || in.dims.back() != out_bits / in_bits)
    fail(op, fmt::format("widening {} to {} needs a minor-most dimension of {}", to_string(in), name(to),
                         out_bits % in_bits == 0 ? out_bits / in_bits : 0));
  Shape out(to, in.dims);
  out.dims.pop_back();
  return out;
}

inline Shape operator_type(const TensorOp& op, const NodeAttributes& a, std::span<const Shape* const> ch) {
  using hlo::Opcode;
  const Opcode code = op.opcode;
  if (hlo::shape_detail::is_elementwise_unary(code)) {
    expect_children(op, ch, 1);
    return Shape(code == Opcode::IsFinite ? DType::pred : ch[0]->dtype, ch[0]->dims);
  }
  if (hlo::shape_detail::is_elementwise_binary(code) || code == Opcode::Compare) {
    expect_children(op, ch, 2);
    if (!ch[0]->same_type(*ch[1])) fail(op, fmt::format("operands {} and {} differ", to_string(*ch[0]), to_string(*ch[1])));
    if (code == Opcode::Compare && !a.direction) fail(op, "compare without a direction");
    return Shape(code == Opcode::Compare ? DType::pred : ch[0]->dtype, ch[0]->dims);
  }
  switch (code) {
    case Opcode::Select: {
      expect_children(op, ch, 3);
      const Shape &p = *ch[0], &t = *ch[1], &f = *ch[2];
      if (p.dtype != DType::pred || !t.same_type(f) || (p.rank() != 0 && p.dims != t.dims))
        fail(op, fmt::format("select({}, {}, {})", to_string(p), to_string(t), to_string(f)));
      return Shape(t.dtype, t.dims);
    }
    case Opcode::Clamp: {
      expect_children(op, ch, 3);
      const Shape &lo = *ch[0], &x = *ch[1], &hi = *ch[2];
      for (const Shape* b : {&lo, &hi})
        if (b->dtype != x.dtype || (b->rank() != 0 && b->dims != x.dims))
          fail(op, fmt::format("clamp({}, {}, {})", to_string(lo), to_string(x), to_string(hi)));
      return Shape(x.dtype, x.dims);
    }
    case Opcode::Convert:
      expect_children(op, ch, 1);
      return Shape(a.dtype, ch[0]->dims);
    case Opcode::BitcastConvert:
      expect_children(op, ch, 1);
      return bitcast_convert_type(op, *ch[0], a.dtype);
    case Opcode::Reshape:
    case Opcode::Bitcast: {
      expect_children(op, ch, 1);
      const Shape out(ch[0]->dtype, a.shape);
      if (out.element_count() != ch[0]->element_count())
        fail(op, fmt::format("cannot reshape {} to {}", to_string(*ch[0]), to_string(out)));
      return out;
    }
    case Opcode::Broadcast: {
      expect_children(op, ch, 1);
      const Shape& in = *ch[0];
      bool ok = a.dimensions.size() == in.dims.size() && unique_in_range(a.dimensions, a.shape.size());
      // XLA's broadcast-in-dim: an operand dim of size 1 may become any size (it is repeated).
      for (std::size_t k = 0; ok && k < a.dimensions.size(); ++k)
        ok = in.dims[k] == 1 || in.dims[k] == a.shape[static_cast<std::size_t>(a.dimensions[k])];
      if (!ok) fail(op, fmt::format("cannot broadcast {} to {} with dimensions={}", to_string(in),
                                    dims_text(a.shape), dims_text(a.dimensions)));
      return Shape(in.dtype, a.shape);
    }
    case Opcode::Iota: {
      expect_children(op, ch, 0);
      if (a.dimensions.size() != 1 || a.dimensions[0] < 0 || a.dimensions[0] >= static_cast<std::int64_t>(a.shape.size()))
        fail(op, fmt::format("iota dimension {} for {}", dims_text(a.dimensions), dims_text(a.shape)));
      return Shape(a.dtype, a.shape);
    }
    case Opcode::Transpose: {
      expect_children(op, ch, 1);
      const Shape& in = *ch[0];
      if (!is_permutation(a.dimensions, in.dims.size()))
        fail(op, fmt::format("dimensions={} is not a permutation for {}", dims_text(a.dimensions), to_string(in)));
      Shape out(in.dtype, {});
      for (auto d : a.dimensions) out.dims.push_back(in.dims[static_cast<std::size_t>(d)]);
      return out;
    }
    case Opcode::Slice:
      expect_children(op, ch, 1);
      return slice_type(op, *ch[0], a.slice);
    case Opcode::Concatenate:
      for (const Shape* c : ch)
        if (c->is_tuple) fail(op, "a child has a tuple type");
      return concatenate_type(op, ch, a.dimensions);
    case Opcode::Pad: {
      expect_children(op, ch, 2);
      const Shape &in = *ch[0], &value = *ch[1];
      if (value.rank() != 0 || value.dtype != in.dtype || a.padding.size() != in.dims.size())
        fail(op, fmt::format("pad({}, {}) with {} padding dims", to_string(in), to_string(value), a.padding.size()));
      Shape out(in.dtype, {});
      for (std::size_t d = 0; d < in.dims.size(); ++d) {
        const auto& p = a.padding[d];
        const auto n = in.dims[d];
        const auto size = p.low + p.high + n + (n > 0 ? (n - 1) * p.interior : 0);
        if (p.interior < 0 || size < 0) fail(op, fmt::format("padding of dimension {} gives size {}", d, size));
        out.dims.push_back(size);
      }
      return out;
    }
    case Opcode::Reverse:
      expect_children(op, ch, 1);
      if (!unique_in_range(a.dimensions, ch[0]->dims.size()))
        fail(op, fmt::format("dimensions={} for {}", dims_text(a.dimensions), to_string(*ch[0])));
      return Shape(ch[0]->dtype, ch[0]->dims);
    case Opcode::Reduce: {
      expect_children(op, ch, 2);
      const Shape &in = *ch[0], &init = *ch[1];
      if (init.rank() != 0 || a.reduce == ReduceKind::None || !unique_in_range(a.dimensions, in.dims.size()))
        fail(op, fmt::format("reduce({}, {}) over dimensions={}", to_string(in), to_string(init), dims_text(a.dimensions)));
      Shape out(init.dtype, {});
      for (std::size_t d = 0; d < in.dims.size(); ++d)
        if (std::find(a.dimensions.begin(), a.dimensions.end(), static_cast<std::int64_t>(d)) == a.dimensions.end())
          out.dims.push_back(in.dims[d]);
      return out;
    }
    case Opcode::Dot: {
      expect_children(op, ch, 2);
      const Shape &l = *ch[0], &r = *ch[1];
      const auto& d = a.dot;
      std::vector<std::int64_t> lhs_used = d.lhs_batch, rhs_used = d.rhs_batch;
      lhs_used.insert(lhs_used.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
      rhs_used.insert(rhs_used.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
      bool ok = d.lhs_batch.size() == d.rhs_batch.size() && d.lhs_contracting.size() == d.rhs_contracting.size() &&
                l.dtype == r.dtype && unique_in_range(lhs_used, l.dims.size()) &&
                unique_in_range(rhs_used, r.dims.size());
      for (std::size_t i = 0; ok && i < lhs_used.size(); ++i)
        ok = l.dims[static_cast<std::size_t>(lhs_used[i])] == r.dims[static_cast<std::size_t>(rhs_used[i])];
      if (!ok) fail(op, fmt::format("dot({}, {}) with batch {}/{} contracting {}/{}", to_string(l), to_string(r),
                                    dims_text(d.lhs_batch), dims_text(d.rhs_batch), dims_text(d.lhs_contracting),
                                    dims_text(d.rhs_contracting)));
      Shape out(a.dtype, {});
      for (auto x : d.lhs_batch) out.dims.push_back(l.dims[static_cast<std::size_t>(x)]);
      for (std::size_t i = 0; i < l.dims.size(); ++i)
        if (std::find(lhs_used.begin(), lhs_used.end(), static_cast<std::int64_t>(i)) == lhs_used.end())
          out.dims.push_back(l.dims[i]);
      for (std::size_t i = 0; i < r.dims.size(); ++i)
        if (std::find(rhs_used.begin(), rhs_used.end(), static_cast<std::int64_t>(i)) == rhs_used.end())
          out.dims.push_back(r.dims[i]);
      return out;
    }
    default:
      fail(op, "not an operator of the tensor language");
  }
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
      return slice_type(op, *children[0], a.slice);
    case NodeKind::ConcatH:
      for (const Shape* c : children)
        if (c->is_tuple) fail(op, "a child has a tuple type");
      return concatenate_type(op, children, a.dimensions);
  }
  fail(op, "unknown node kind");
}

}  // namespace act::select
