// The parser's shape checks: XLA's shape rules (shape_rules.hpp) applied to each instruction as
// it is parsed, with located messages.
//
// For the opcodes with a rule, the result shape is inferred from the operands and the typed
// attributes; a declared shape must agree with it (element type and dimensions; layouts are the
// writer's choice). What the rules do not cover is checked here: tuples and get-tuple-element,
// the reducer computation of reduce, the window text of reduce-window, and the arity of the
// other opcodes, which keep their declared shape. A dimension that is not a known static size
// (`?`, `<=N`, or -1 for a symbolic semantics dimension) matches anything.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/shape_rules.hpp"

namespace act::hlo {

namespace shape_detail {

using shape_rules::is_elementwise_binary;
using shape_rules::is_elementwise_unary;

// The static size of dim i, or -1 when it is dynamic or symbolic.
inline std::int64_t known_dim(const Shape& s, std::size_t i) {
  if (!s.dim_kinds.empty() && s.dim_kinds[i] != DimKind::Static) return -1;
  return s.dims[i] < 0 ? -1 : s.dims[i];
}

// Dims of `s` with unknown ones as -1 (so inferred shapes carry "unknown" on).
inline std::vector<std::int64_t> dims_of(const Shape& s) {
  std::vector<std::int64_t> d(s.dims.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = known_dim(s, i);
  return d;
}

// Same element type and dimensions, unknown dims matching anything; tuples element-wise.
inline bool compatible(const Shape& a, const Shape& b) {
  if (a.is_tuple != b.is_tuple) return false;
  if (a.is_tuple) {
    if (a.tuple_shapes.size() != b.tuple_shapes.size()) return false;
    for (std::size_t i = 0; i < a.tuple_shapes.size(); ++i)
      if (!compatible(a.tuple_shapes[i], b.tuple_shapes[i])) return false;
    return true;
  }
  return a.dtype == b.dtype && shape_rules::same_dims(dims_of(a), dims_of(b));
}

inline std::string list(View<std::int64_t> v) { return fmt::format("{{{}}}", fmt::join(v, ",")); }

// Array shapes as the rules see them (unknown dims as -1); the views point into this object.
class RuleTypes {
 public:
  RuleTypes(std::span<const Shape* const> shapes, const Shape* written) {
    dims_.reserve(shapes.size() + 1);
    for (const Shape* s : shapes) dims_.push_back(dims_of(*s));
    if (written) dims_.push_back(dims_of(*written));
    for (std::size_t i = 0; i < shapes.size(); ++i) operands_.push_back({shapes[i]->dtype, dims_[i]});
    if (written) written_ = shape_rules::TensorType{written->dtype, dims_.back()};
  }
  View<shape_rules::TensorType> operands() const { return operands_; }
  const shape_rules::TensorType* written() const { return written_ ? &*written_ : nullptr; }

 private:
  std::vector<std::vector<std::int64_t>> dims_;
  std::vector<shape_rules::TensorType> operands_;
  std::optional<shape_rules::TensorType> written_;
};

inline Shape to_shape(const shape_rules::ResultType& r) {
  const auto dims = r.dimensions();
  return Shape(r.dtype, std::vector<std::int64_t>(dims.begin(), dims.end()));
}

}  // namespace shape_detail

// The typed attributes of `inst` as the rules read them (views into it; reduce-window's window
// is parsed from its raw text by the parser).
inline shape_rules::Attributes rule_attributes(const Instruction& inst) {
  shape_rules::Attributes a;
  a.dimensions = inst.dimensions;
  a.dot = {inst.dot.lhs_batch, inst.dot.lhs_contracting, inst.dot.rhs_batch, inst.dot.rhs_contracting};
  a.slice = inst.slice;
  a.padding = inst.padding;
  a.dynamic_slice_sizes = inst.dynamic_slice_sizes;
  a.iota_dimension = inst.iota_dimension;
  return a;
}

// What a rule's finding means for `op`, in words (no opcode prefix, no location). `operands`
// and `written` are the shapes the rule was given (as Shapes, so dynamic dims print as written),
// `a` its attributes. Shared by the parser and phase 1's type inference.
inline std::string describe_finding(const shape_rules::Finding& f, Opcode op, std::span<const Shape* const> operands,
                                    const shape_rules::Attributes& a, const Shape* written) {
  using shape_rules::kResult;
  using P = shape_rules::Problem;
  using shape_detail::list;
  auto shape_of = [&](int i) -> std::string {
    if (i == kResult) return written ? to_string(*written) : std::string("the result");
    return to_string(*operands[static_cast<std::size_t>(i)]);
  };
  auto type_of = [&](int i) -> std::string_view {
    if (i == kResult) return written ? name(written->dtype) : std::string_view("?");
    return name(operands[static_cast<std::size_t>(i)]->dtype);
  };
  auto dimension_word = [&] {
    if (op == Opcode::Transpose) return "permutation entry";
    if (op == Opcode::Dot) return f.operand == 0 ? "lhs dimension" : "rhs dimension";
    if (op == Opcode::Iota) return "iota_dimension";
    return "dimension";
  };
  switch (f.problem) {
    case P::None: return "";
    case P::NotModelled: return fmt::format("no shape rule for {}", opcode_name(op));
    case P::ResultTypeRequired: return "the result shape is required";
    case P::OperandCount:
      if (op == Opcode::Concatenate) return "expects at least one operand";
      if (op == Opcode::Reduce) return fmt::format("expects inputs then as many init values, got {} operands", f.value);
      return fmt::format("expects {} operand{}, got {}", f.bound, f.bound == 1 ? "" : "s", f.value);
    case P::RankTooLarge:
      return fmt::format("the result would have {} dimensions, more than the {} act supports", f.value,
                         shape_rules::kMaxRank);
    case P::SizeOverflow:
      if (op == Opcode::Reshape) return "an element count does not fit in 64 bits";
      return fmt::format("the size of result dimension {} does not fit in 64 bits", f.index);
    case P::ElementTypesDiffer:
      switch (op) {
        case Opcode::Select: return fmt::format("on_true is {} but on_false is {}", type_of(1), type_of(2));
        case Opcode::Clamp:
          return fmt::format("bound element type {} differs from operand {}", type_of(f.operand), type_of(1));
        case Opcode::Reshape:
        case Opcode::Broadcast: return fmt::format("element type changes from {} to {}", type_of(0), type_of(kResult));
        case Opcode::DynamicUpdateSlice:
          return fmt::format("update element type {} differs from operand {}", type_of(1), type_of(0));
        case Opcode::Concatenate:
          return fmt::format("operand {} is {} but operand 0 is {}", f.operand, shape_of(f.operand), shape_of(0));
        case Opcode::Pad: return fmt::format("padding value type {} differs from operand {}", type_of(1), type_of(0));
        default: return fmt::format("operand element types differ: {} and {}", type_of(f.operand), type_of(f.other));
      }
    case P::DimensionsDiffer: {
      if (op == Opcode::Concatenate)
        return fmt::format("operand {} dimension {} has size {} but operand 0 has {}", f.operand, f.index, f.value, f.bound);
      std::string_view what = "operands";
      if (op == Opcode::Select) what = f.operand == 1 ? "on_true and on_false" : "predicate and on_true";
      else if (op == Opcode::Clamp) what = "bound and operand";
      else if (op == Opcode::Convert || op == Opcode::BitcastConvert) what = "operand and result";
      else if (op == Opcode::Reduce) what = "inputs";
      return fmt::format("{}: {} and {} have different dimensions", what, shape_of(f.operand), shape_of(f.other));
    }
    case P::RanksDiffer:
      if (op == Opcode::Concatenate)
        return fmt::format("operand {} is {} but operand 0 is {}", f.operand, shape_of(f.operand), shape_of(0));
      return fmt::format("update {} and operand {} have different ranks", shape_of(1), shape_of(0));
    case P::NotPred: return fmt::format("predicate has element type {}, expected pred", type_of(0));
    case P::NotScalar:
      if (op == Opcode::Pad) return fmt::format("padding value must be a scalar, got {}", shape_of(f.operand));
      return fmt::format("init value {} must be a scalar, got {}", f.index, shape_of(f.operand));
    case P::ListLength:
      switch (op) {
        case Opcode::Transpose:
          return fmt::format("permutation {} has {} entries for an operand of rank {}", list(a.dimensions), f.value, f.bound);
        case Opcode::Broadcast:
          return fmt::format("dimensions={} has {} entries for an operand of rank {}", list(a.dimensions), f.value, f.bound);
        case Opcode::Slice: return fmt::format("{} slice ranges for an operand of rank {}", f.value, f.bound);
        case Opcode::DynamicSlice:
          return fmt::format("dynamic_slice_sizes={} has {} entries for an operand of rank {}", list(a.dynamic_slice_sizes),
                             f.value, f.bound);
        case Opcode::Concatenate: return fmt::format("dimensions={} must name exactly one dimension", list(a.dimensions));
        case Opcode::Pad: return fmt::format("padding has {} dimensions for an operand of rank {}", f.value, f.bound);
        default: return fmt::format("window has {} entries in a field for an operand of rank {}", f.value, f.bound);
      }
    case P::DimensionOutOfRange:
      return fmt::format("{} {} is out of range for rank {}", dimension_word(), f.value, f.bound);
    case P::DimensionRepeated: return fmt::format("{} {} appears twice", dimension_word(), f.value);
    case P::ElementCountsDiffer:
      return fmt::format("cannot reshape {} ({} elements) to {} ({} elements)", shape_of(0), f.value, shape_of(kResult),
                         f.bound);
    case P::UnsizedElementType: return "operand and result need sized element types";
    case P::IncompatibleBitWidths: return fmt::format("cannot reinterpret {} as {}", type_of(0), type_of(kResult));
    case P::RatioDimensionMissing:
      return fmt::format("converting {} to {} needs the {} side to have one more (minor-most) dimension of size {}",
                         shape_of(0), shape_of(kResult), type_of(f.operand), f.value);
    case P::RatioDimensionWrong:
      return fmt::format("minor-most dimension of {} must be {} (bit width ratio), got {}", shape_of(f.operand), f.value,
                         f.bound);
    case P::DimensionsDifferBesidesRatio: {
      if (f.operand == kResult && !written) return "the result's dims differ from the operand's";
      Shape prefix = f.operand == kResult ? *written : *operands[0];
      prefix.dims.pop_back();
      if (!prefix.dim_kinds.empty()) prefix.dim_kinds.pop_back();
      return fmt::format("operand and result (without the ratio dimension): {} and {} have different dimensions",
                         to_string(prefix), shape_of(f.operand == kResult ? 0 : kResult));
    }
    case P::BroadcastSizeMismatch:
      return fmt::format("operand dimension {} has size {} but result dimension {} has size {}", f.index, f.value,
                         a.dimensions[f.index], f.bound);
    case P::BadStride: return fmt::format("stride {} of dimension {} must be positive", f.value, f.index);
    case P::SliceOutOfBounds:
      return fmt::format("range [{}:{}] of dimension {} is out of bounds for size {}", a.slice[f.index].start,
                         a.slice[f.index].limit, f.index, f.bound);
    case P::StartIndexVectorType: return "start index vector must have an integer type";
    case P::StartIndexCount:
      return fmt::format("expects {} start indices for an operand of rank {}, got {}", f.bound, f.bound, f.value);
    case P::BadStartIndex:
      return fmt::format("start index {} must be an integer scalar, got {}", f.index, shape_of(f.operand));
    case P::SliceSizeTooLarge:
      return fmt::format("slice size {} of dimension {} exceeds the operand size {}", f.value, f.index, f.bound);
    case P::UpdateTooLarge:
      return fmt::format("update dimension {} has size {}, larger than the operand's {}", f.index, f.value, f.bound);
    case P::NegativeInterior: return fmt::format("interior padding {} of dimension {} is negative", f.value, f.index);
    case P::NegativeSize: return fmt::format("padding of dimension {} gives negative size {}", f.index, f.value);
    case P::ContractingCountsDiffer:
      return fmt::format("lhs_contracting_dims={} and rhs_contracting_dims={} differ in length", list(a.dot.lhs_contracting),
                         list(a.dot.rhs_contracting));
    case P::BatchCountsDiffer:
      return fmt::format("lhs_batch_dims={} and rhs_batch_dims={} differ in length", list(a.dot.lhs_batch),
                         list(a.dot.rhs_batch));
    case P::ContractingSizesDiffer:
    case P::BatchSizesDiffer: {
      const bool contracting = f.problem == P::ContractingSizesDiffer;
      const auto kind = contracting ? "contracting" : "batch";
      const auto l = contracting ? a.dot.lhs_contracting[f.index] : a.dot.lhs_batch[f.index];
      const auto r = contracting ? a.dot.rhs_contracting[f.index] : a.dot.rhs_batch[f.index];
      return fmt::format("lhs {} dim {} has size {} but rhs {} dim {} has size {}", kind, l, f.value, kind, r, f.bound);
    }
    case P::IotaOfScalar: return "iota of a scalar";
    case P::WindowNotPositive: return "window sizes, strides and dilations must be positive";
  }
  return "unknown problem";
}

namespace shape_detail {

class Checker {
 public:
  Checker(const Instruction& inst, std::span<const Shape* const> operands, const Module& module)
      : inst_(inst), ops_(operands), module_(module), op_(opcode_name(inst.opcode)) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(ErrorKind::Shape, fmt::format("{}: {}", op_, message), inst_.location);
  }

  const Shape& operand(std::size_t i) const { return *ops_[i]; }
  std::size_t count() const { return ops_.size(); }

  void expect_count(std::size_t n) const {
    if (count() != n) fail(fmt::format("expects {} operand{}, got {}", n, n == 1 ? "" : "s", count()));
  }

  void expect_arrays() const {
    for (std::size_t i = 0; i < count(); ++i)
      if (operand(i).is_tuple)
        fail(fmt::format("operand {} is a tuple {}, expected an array", i, to_string(operand(i))));
  }

  shape_rules::Attributes attributes() const { return rule_attributes(inst_); }

  // Applies the rule for the instruction's opcode; `written` is the declared result (required by
  // the rules for convert, reshape, ...; dot reads its element type).
  shape_rules::ResultType apply_rule(const shape_rules::Attributes& a, const Shape* written) const {
    if (const auto f = shape_rules::check_operand_count(inst_.opcode, count()); f.problem != shape_rules::Problem::None)
      fail(describe_finding(f, inst_.opcode, ops_, a, written));
    expect_arrays();
    const RuleTypes types(ops_, written);
    const auto r = shape_rules::infer(inst_.opcode, types.operands(), a, types.written());
    if (!r.ok()) fail(describe_finding(r.finding, inst_.opcode, ops_, a, written));
    return r;
  }

  // Variadic reduce gives a tuple: result i has init i's element type.
  Shape reduce(const shape_rules::ResultType& first) const {
    const std::size_t n = count() / 2;
    check_reducer(n);
    if (n == 1) return to_shape(first);
    std::vector<Shape> results;
    for (std::size_t i = 0; i < n; ++i) {
      Shape s = to_shape(first);
      s.dtype = operand(n + i).dtype;
      results.push_back(std::move(s));
    }
    return Shape::tuple(std::move(results));
  }

  // to_apply takes 2N scalars (accumulators then elements) and returns N of them.
  void check_reducer(std::size_t n) const {
    if (inst_.called_computations.empty()) fail("missing to_apply=");
    const auto index = static_cast<std::size_t>(inst_.called_computations[0]);
    if (index >= module_.computations.size()) fail("to_apply refers to an unknown computation");
    const Computation& c = module_.computations[index];
    if (c.parameters.size() != 2 * n)
      fail(fmt::format("to_apply={} takes {} parameters, expected {}", c.name, c.parameters.size(), 2 * n));
    for (std::size_t i = 0; i < 2 * n; ++i) {
      const Shape& p = c.instructions[static_cast<std::size_t>(c.parameters[i])].shape;
      const Shape& init = operand(n + i % n);
      if (p.is_tuple || p.rank() != 0 || p.dtype != init.dtype)
        fail(fmt::format("to_apply={} parameter {} is {}, expected {}[]", c.name, i, to_string(p), name(init.dtype)));
    }
    if (c.root < 0) return;
    const Shape& r = c.root_instruction().shape;
    if (n == 1) {
      if (r.is_tuple || r.rank() != 0 || r.dtype != operand(1).dtype)
        fail(fmt::format("to_apply={} returns {}, expected {}[]", c.name, to_string(r), name(operand(1).dtype)));
    } else if (!r.is_tuple || r.tuple_shapes.size() != n) {
      fail(fmt::format("to_apply={} returns {}, expected a {}-tuple of scalars", c.name, to_string(r), n));
    }
  }

  // Only inferred when the shape is omitted: one input, `window={size=.. stride=.. pad=..
  // lhs_dilate=.. rhs_dilate=..}` (each field one entry per dimension, 'x'-separated).
  Shape reduce_window() const {
    if (count() != 2) fail("the result shape is required for a variadic reduce-window");
    expect_arrays();
    const std::size_t rank = operand(0).dims.size();
    std::vector<std::int64_t> size(rank, 1), stride(rank, 1), low(rank, 0), high(rank, 0), base(rank, 1), dilation(rank, 1);
    std::string_view window;
    for (const auto& r : inst_.raw_attributes)
      if (r.name == "window") window = r.value;
    if (window.size() >= 2 && window.front() == '{') window = window.substr(1, window.size() - 2);
    auto number = [&](std::string_view t) {
      std::int64_t v = 0;
      const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || ptr != t.data() + t.size()) fail(fmt::format("bad window value '{}'", t));
      return v;
    };
    while (!window.empty()) {
      while (!window.empty() && window.front() == ' ') window.remove_prefix(1);
      const std::size_t end = std::min(window.find(' '), window.size());
      const std::string_view field = window.substr(0, end);
      window.remove_prefix(end);
      if (field.empty()) continue;
      const std::size_t eq = field.find('=');
      if (eq == std::string_view::npos) fail(fmt::format("bad window field '{}'", field));
      const std::string_view key = field.substr(0, eq);
      std::string_view values = field.substr(eq + 1);
      for (std::size_t d = 0; !values.empty(); ++d) {
        const std::size_t x = std::min(values.find('x'), values.size());
        const std::string_view v = values.substr(0, x);
        values.remove_prefix(std::min(x + 1, values.size()));
        if (d >= rank) fail(fmt::format("window field '{}' has more entries than the rank {}", key, rank));
        if (key == "size") size[d] = number(v);
        else if (key == "stride") stride[d] = number(v);
        else if (key == "lhs_dilate") base[d] = number(v);
        else if (key == "rhs_dilate") dilation[d] = number(v);
        else if (key == "pad") {
          const std::size_t u = v.find('_');
          if (u == std::string_view::npos) fail(fmt::format("bad window padding '{}'", v));
          low[d] = number(v.substr(0, u));
          high[d] = number(v.substr(u + 1));
        }
      }
    }
    shape_rules::Attributes a = attributes();
    a.window = {size, stride, low, high, base, dilation};
    return to_shape(apply_rule(a, nullptr));
  }

  Shape get_tuple_element() const {
    expect_count(1);
    const Shape& t = operand(0);
    if (!t.is_tuple) fail(fmt::format("operand {} is not a tuple", to_string(t)));
    if (inst_.tuple_index < 0 || inst_.tuple_index >= static_cast<std::int64_t>(t.tuple_shapes.size()))
      fail(fmt::format("index {} is out of range for a tuple of {} elements", inst_.tuple_index, t.tuple_shapes.size()));
    return t.tuple_shapes[static_cast<std::size_t>(inst_.tuple_index)];
  }

  Shape tuple() const {
    std::vector<Shape> elements;
    for (std::size_t i = 0; i < count(); ++i) elements.push_back(operand(i));
    return Shape::tuple(std::move(elements));
  }

  const Instruction& inst_;
  std::span<const Shape* const> ops_;
  const Module& module_;
  std::string_view op_;
};

}  // namespace shape_detail

// Checks `inst` against its operand shapes and returns its result shape: `declared` when given
// (after checking it agrees with what the operands imply), otherwise the inferred shape.
// Throws Error(Shape) at inst.location when something does not fit, and Error(Parse) when the
// shape is omitted for an opcode whose result cannot be inferred.
inline Shape check_instruction(const Instruction& inst, std::span<const Shape* const> operands,
                               const std::optional<Shape>& declared, const Module& module) {
  using namespace shape_detail;
  const Checker c(inst, operands, module);
  const Opcode op = inst.opcode;
  auto need_declared = [&]() -> const Shape& {
    if (!declared)
      throw Error(ErrorKind::Parse, fmt::format("{}: the result shape is required", opcode_name(op)), inst.location);
    return *declared;
  };
  auto need_array = [&]() -> const Shape& {
    const Shape& s = need_declared();
    if (s.is_tuple) c.fail("result must be an array");
    return s;
  };

  switch (op) {
    case Opcode::Parameter:
    case Opcode::Constant:
      c.expect_count(0);
      return need_declared();
    case Opcode::Bitcast:  // XLA's bitcast depends on layouts: the declared shape stands
      c.expect_count(1);
      return need_declared();
    case Opcode::Tuple: {
      const Shape inferred = c.tuple();
      if (declared && !compatible(*declared, inferred))
        c.fail(fmt::format("declared shape {} does not match the inferred shape {}", to_string(*declared),
                           to_string(inferred)));
      return declared ? *declared : inferred;
    }
    case Opcode::GetTupleElement:
    case Opcode::OptBarrier: {
      if (op == Opcode::OptBarrier) c.expect_count(1);
      const Shape inferred = op == Opcode::OptBarrier ? c.operand(0) : c.get_tuple_element();
      if (declared && !compatible(*declared, inferred))
        c.fail(fmt::format("declared shape {} does not match the inferred shape {}", to_string(*declared),
                           to_string(inferred)));
      return declared ? *declared : inferred;
    }
    case Opcode::ReduceWindow:
      if (declared) return *declared;
      return c.reduce_window();
    default: break;
  }

  if (!shape_rules::has_rule(op)) {
    const int arity = opcode_arity(op);
    if (arity >= 0) c.expect_count(static_cast<std::size_t>(arity));
    if (!declared && (op == Opcode::Call || op == Opcode::While) && !inst.called_computations.empty()) {
      const auto index = static_cast<std::size_t>(inst.called_computations.back());
      if (index < module.computations.size() && module.computations[index].root >= 0)
        return module.computations[index].root_instruction().shape;
    }
    return need_declared();
  }

  const shape_rules::Attributes attributes = c.attributes();
  if (shape_rules::result_is_written(op)) {  // the rule checks the operands against it
    const Shape& result = need_array();
    c.apply_rule(attributes, &result);
    return result;
  }
  // Dot's result element type may differ (preferred_element_type): it is the declared one.
  const Shape* written = declared && !declared->is_tuple ? &*declared : nullptr;
  const shape_rules::ResultType r = c.apply_rule(attributes, op == Opcode::Dot ? written : nullptr);
  if (op == Opcode::Compare && !inst.comparison_direction) c.fail("missing direction=");
  Shape inferred = op == Opcode::Reduce ? c.reduce(r) : to_shape(r);
  // pad: a declared result may take either precision of a mixed-precision pad (shape_rules::pad).
  if (op == Opcode::Pad && declared && !declared->is_tuple && operands.size() == 2 &&
      (declared->dtype == operands[0]->dtype || declared->dtype == operands[1]->dtype))
    inferred.dtype = declared->dtype;
  if (!declared) {
    // An inferred shape has not been through the parser's size limit (pad, concatenate).
    if (!inferred.is_tuple && !bounded_byte_size(inferred))
      c.fail(fmt::format("the result {} is larger than act's limit of 2^40 bytes for one array", to_string(inferred)));
    return inferred;
  }
  if (!compatible(*declared, inferred))
    c.fail(fmt::format("declared shape {} does not match the inferred shape {}", to_string(*declared),
                       to_string(inferred)));
  return *declared;
}

}  // namespace act::hlo
