// A small programmatic builder for HLO modules (tests, rule generators, anything that needs a
// module without writing text). Each method appends one instruction in XLA-normal form, infers
// its result shape by XLA's rules (hlo/shape_rules.hpp), and returns the instruction's index.
// Malformed requests (bad operand index, shapes that do not fit) throw act::Error(Shape).
//
//   ComputationBuilder add("add");                       // a scalar reducer
//   add.binary(Opcode::Add, add.parameter(Shape(DType::f32, {})), add.parameter(Shape(DType::f32, {})));
//   Module m;
//   const int add_index = add_computation(m, std::move(add).build());
//   ComputationBuilder main("main");
//   const int x = main.parameter(Shape(DType::f32, {4, 8}));
//   main.reduce({x}, {main.constant(scalar_literal(DType::f32, 0))}, {1}, add_index);
//   add_computation(m, std::move(main).build(), /*entry=*/true);
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/literal.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/opcode.hpp"
#include "act/hlo/shape_check.hpp"  // describe_finding, RuleTypes
#include "act/hlo/shape_rules.hpp"

namespace act::hlo {

// A scalar literal of type t holding v (rounded or wrapped to t).
inline Literal scalar_literal(DType t, double v) {
  Literal l(Shape(t, {}));
  if (is_float(t)) l.set_float(0, v);
  else l.set_int(0, static_cast<std::int64_t>(v));
  return l;
}

class ComputationBuilder {
 public:
  explicit ComputationBuilder(std::string name) { computation_.name = std::move(name); }

  // parameter(k) for the k-th call.
  int parameter(Shape shape, std::string name = {}) {
    Instruction instr = make(Opcode::Parameter, std::move(shape), {});
    instr.parameter_number = static_cast<std::int64_t>(computation_.parameters.size());
    if (!name.empty()) instr.name = std::move(name);
    const int index = append(std::move(instr));
    computation_.parameters.push_back(index);
    return index;
  }
  int constant(Literal value) {
    Instruction instr = make(Opcode::Constant, value.shape(), {});
    instr.literal = std::move(value);
    return append(std::move(instr));
  }
  int iota(Shape shape, std::int64_t dimension) {
    shape_rules::Attributes a;
    a.iota_dimension = dimension;
    Instruction instr = make(Opcode::Iota, checked(Opcode::Iota, {}, a, &shape), {});
    instr.iota_dimension = dimension;
    return append(std::move(instr));
  }

  // Elementwise ops: the result has the operand's shape (is-finite: pred).
  int unary(Opcode op, int operand) { return append(make(op, inferred(op, {operand}), {operand})); }
  int binary(Opcode op, int lhs, int rhs) { return append(make(op, inferred(op, {lhs, rhs}), {lhs, rhs})); }
  int compare(int lhs, int rhs, ComparisonDirection direction, std::string type = {}) {
    Instruction instr = make(Opcode::Compare, inferred(Opcode::Compare, {lhs, rhs}), {lhs, rhs});
    instr.comparison_direction = direction;
    instr.comparison_type = std::move(type);
    return append(std::move(instr));
  }
  int select(int pred, int on_true, int on_false) {
    return append(make(Opcode::Select, inferred(Opcode::Select, {pred, on_true, on_false}), {pred, on_true, on_false}));
  }
  int clamp(int min, int operand, int max) {
    return append(make(Opcode::Clamp, inferred(Opcode::Clamp, {min, operand, max}), {min, operand, max}));
  }

  int convert(int operand, DType to) {
    const Shape out(to, array(operand).dims);
    return append(make(Opcode::Convert, checked(Opcode::Convert, {operand}, {}, &out), {operand}));
  }
  // Infers the width-changing shape: f32[10] -> u8[10,4], u8[10,4] -> f32[10].
  int bitcast_convert(int operand, DType to) {
    const Shape& in = array(operand);
    const auto r = shape_rules::bitcast_convert_to({in.dtype, in.dims}, to);
    const Shape* const operands[] = {&in};
    require(r.ok(), fmt::format("bitcast-convert {} to {}: {}", to_string(in), name(to),
                                describe_finding(r.finding, Opcode::BitcastConvert, operands, {}, nullptr)));
    return append(make(Opcode::BitcastConvert, shape_detail::to_shape(r), {operand}));
  }
  int reshape(int operand, std::vector<std::int64_t> dims) {
    const Shape out(array(operand).dtype, std::move(dims));
    return append(make(Opcode::Reshape, checked(Opcode::Reshape, {operand}, {}, &out), {operand}));
  }
  // The result shape is given in full (it usually carries a layout).
  int bitcast(int operand, Shape result) { return append(make(Opcode::Bitcast, std::move(result), {operand})); }
  int copy(int operand) { return unary(Opcode::Copy, operand); }

  int transpose(int operand, std::vector<std::int64_t> permutation) {
    shape_rules::Attributes a;
    a.dimensions = permutation;
    Instruction instr = make(Opcode::Transpose, inferred(Opcode::Transpose, {operand}, a), {operand});
    instr.dimensions = std::move(permutation);
    return append(std::move(instr));
  }
  // XLA broadcast: operand dim k becomes result dim dimensions[k].
  int broadcast(int operand, std::vector<std::int64_t> result_dims, std::vector<std::int64_t> dimensions) {
    shape_rules::Attributes a;
    a.dimensions = dimensions;
    const Shape out(array(operand).dtype, std::move(result_dims));
    Instruction instr = make(Opcode::Broadcast, checked(Opcode::Broadcast, {operand}, a, &out), {operand});
    instr.dimensions = std::move(dimensions);
    return append(std::move(instr));
  }
  int slice(int operand, std::vector<SliceRange> ranges) {
    shape_rules::Attributes a;
    a.slice = ranges;
    Instruction instr = make(Opcode::Slice, inferred(Opcode::Slice, {operand}, a), {operand});
    instr.slice = std::move(ranges);
    return append(std::move(instr));
  }
  int dynamic_slice(int operand, const std::vector<int>& start_indices, std::vector<std::int64_t> sizes) {
    std::vector<int> operands{operand};
    operands.insert(operands.end(), start_indices.begin(), start_indices.end());
    shape_rules::Attributes a;
    a.dynamic_slice_sizes = sizes;
    Shape out = inferred(Opcode::DynamicSlice, operands, a);  // before operands is moved from
    Instruction instr = make(Opcode::DynamicSlice, std::move(out), std::move(operands));
    instr.dynamic_slice_sizes = std::move(sizes);
    return append(std::move(instr));
  }
  int dynamic_update_slice(int operand, int update, const std::vector<int>& start_indices) {
    std::vector<int> operands{operand, update};
    operands.insert(operands.end(), start_indices.begin(), start_indices.end());
    Shape out = inferred(Opcode::DynamicUpdateSlice, operands);  // before operands is moved from
    return append(make(Opcode::DynamicUpdateSlice, std::move(out), std::move(operands)));
  }
  int concatenate(const std::vector<int>& operands, std::int64_t dimension) {
    const std::vector<std::int64_t> dimensions{dimension};
    shape_rules::Attributes a;
    a.dimensions = dimensions;
    Instruction instr = make(Opcode::Concatenate, inferred(Opcode::Concatenate, operands, a), operands);
    instr.dimensions = dimensions;
    return append(std::move(instr));
  }
  int pad(int operand, int padding_value, std::vector<PadDimension> padding) {
    shape_rules::Attributes a;
    a.padding = padding;
    Instruction instr = make(Opcode::Pad, inferred(Opcode::Pad, {operand, padding_value}, a), {operand, padding_value});
    instr.padding = std::move(padding);
    return append(std::move(instr));
  }
  int reverse(int operand, std::vector<std::int64_t> dimensions) {
    shape_rules::Attributes a;
    a.dimensions = dimensions;
    Instruction instr = make(Opcode::Reverse, inferred(Opcode::Reverse, {operand}, a), {operand});
    instr.dimensions = std::move(dimensions);
    return append(std::move(instr));
  }
  // reduce(inputs..., inits...) over `dimensions` with the module computation `to_apply`;
  // one input gives an array, several give a tuple (result i has init i's element type).
  int reduce(const std::vector<int>& inputs, const std::vector<int>& inits, std::vector<std::int64_t> dimensions, int to_apply) {
    require(!inputs.empty() && inputs.size() == inits.size(), "reduce needs as many init values as inputs");
    std::vector<int> operands = inputs;
    operands.insert(operands.end(), inits.begin(), inits.end());
    shape_rules::Attributes a;
    a.dimensions = dimensions;
    const Shape first = inferred(Opcode::Reduce, operands, a);
    std::vector<Shape> results;
    for (int init : inits) results.push_back(Shape(array(init).dtype, first.dims));
    Instruction instr = make(Opcode::Reduce, results.size() == 1 ? results[0] : Shape::tuple(results), std::move(operands));
    instr.dimensions = std::move(dimensions);
    instr.called_computations = {to_apply};
    instr.called_computation_attributes = {"to_apply"};
    return append(std::move(instr));
  }
  // Result dims: batch, lhs free, rhs free (XLA's order); the element type is given.
  int dot(int lhs, int rhs, DotDimensions dims, DType result) {
    shape_rules::Attributes a;
    a.dot = {dims.lhs_batch, dims.lhs_contracting, dims.rhs_batch, dims.rhs_contracting};
    const Shape written(result, {});
    Instruction instr = make(Opcode::Dot, inferred(Opcode::Dot, {lhs, rhs}, a, &written), {lhs, rhs});
    instr.dot = std::move(dims);
    return append(std::move(instr));
  }
  // The common matrix product: contracts lhs's last dimension with rhs's first.
  int matmul(int lhs, int rhs, DType result) {
    DotDimensions dims;
    dims.lhs_contracting = {array(lhs).rank() - 1};
    dims.rhs_contracting = {0};
    return dot(lhs, rhs, std::move(dims), result);
  }
  int tuple(const std::vector<int>& elements) {
    std::vector<Shape> shapes;
    for (int e : elements) shapes.push_back(shape(e));
    return append(make(Opcode::Tuple, Shape::tuple(std::move(shapes)), elements));
  }
  int get_tuple_element(int tuple, std::int64_t index) {
    const Shape& t = shape(tuple);
    require(t.is_tuple && index >= 0 && index < static_cast<std::int64_t>(t.tuple_shapes.size()), "get-tuple-element index out of range");
    Instruction instr = make(Opcode::GetTupleElement, t.tuple_shapes[static_cast<std::size_t>(index)], {tuple});
    instr.tuple_index = index;
    return append(std::move(instr));
  }
  int call(const std::vector<int>& operands, int computation, Shape result) {
    Instruction instr = make(Opcode::Call, std::move(result), operands);
    instr.called_computations = {computation};
    instr.called_computation_attributes = {"to_apply"};
    return append(std::move(instr));
  }

  // Any instruction, as given (operands must already exist). Its name is filled in if empty.
  int add(Instruction instr) {
    for (int op : instr.operands) check_operand(op);
    if (instr.name.empty()) instr.name = fmt::format("{}.{}", opcode_name(instr.opcode), computation_.instructions.size());
    return append(std::move(instr));
  }

  const Shape& shape(int index) const { return instruction(index).shape; }
  // Instructions added so far; the next one gets this index.
  int size() const { return static_cast<int>(computation_.instructions.size()); }
  const Instruction& instruction(int index) const {
    check_operand(index);
    return computation_.instructions[static_cast<std::size_t>(index)];
  }
  // For attributes the convenience methods do not set.
  Instruction& instruction(int index) {
    check_operand(index);
    return computation_.instructions[static_cast<std::size_t>(index)];
  }

  // The finished computation with `root` as ROOT (default: the last instruction).
  Computation build(int root = -1) && {
    require(!computation_.instructions.empty(), "computation '" + computation_.name + "' is empty");
    if (root < 0) root = static_cast<int>(computation_.instructions.size()) - 1;
    check_operand(root);
    computation_.root = root;
    return std::move(computation_);
  }

 private:
  Computation computation_;

  static void require(bool condition, const std::string& message) {
    if (!condition) throw Error(ErrorKind::Shape, "builder: " + message);
  }
  void check_operand(int index) const {
    require(index >= 0 && index < static_cast<int>(computation_.instructions.size()),
            fmt::format("no instruction {} in '{}'", index, computation_.name));
  }
  const Shape& array(int index) const {
    const Shape& s = shape(index);
    require(!s.is_tuple, fmt::format("instruction {} is a tuple where an array is expected", index));
    return s;
  }
  // The result shape XLA's rule (hlo/shape_rules.hpp) gives `op` over `operands`: inferred, or
  // for the opcodes whose result type is written (convert, reshape, ...) `written` once checked.
  Shape inferred(Opcode op, const std::vector<int>& operands, const shape_rules::Attributes& a = {},
                 const Shape* written = nullptr) const {
    std::vector<const Shape*> shapes;
    for (int o : operands) shapes.push_back(&array(o));
    const shape_detail::RuleTypes types(shapes, written);
    const auto r = shape_rules::infer(op, types.operands(), a, types.written());
    require(r.ok(), fmt::format("{}: {}", opcode_name(op), describe_finding(r.finding, op, shapes, a, written)));
    return shape_detail::to_shape(r);
  }
  Shape checked(Opcode op, const std::vector<int>& operands, const shape_rules::Attributes& a, const Shape* written) const {
    inferred(op, operands, a, written);
    return *written;
  }
  Instruction make(Opcode op, Shape shape, std::vector<int> operands) const {
    for (int o : operands) check_operand(o);
    Instruction instr;
    instr.opcode = op;
    instr.shape = std::move(shape);
    instr.operands = std::move(operands);
    instr.name = fmt::format("{}.{}", opcode_name(op), computation_.instructions.size());
    return instr;
  }
  int append(Instruction instr) {
    computation_.instructions.push_back(std::move(instr));
    return static_cast<int>(computation_.instructions.size()) - 1;
  }
};

// Appends `computation` to the module (callees must be added before callers) and returns its
// index; with `entry` it becomes the entry computation.
inline int add_computation(Module& module, Computation computation, bool entry = false) {
  computation.is_entry = entry;
  module.computations.push_back(std::move(computation));
  const int index = static_cast<int>(module.computations.size()) - 1;
  if (entry) {
    if (module.entry >= 0) module.computations[static_cast<std::size_t>(module.entry)].is_entry = false;
    module.entry = index;
  }
  return index;
}

// `name(x: t[], y: t[]) -> t[] { ROOT op(x, y) }`, e.g. the `add` a reduce applies.
inline Computation scalar_binary_computation(std::string name, Opcode op, DType t) {
  ComputationBuilder b(std::move(name));
  const int x = b.parameter(Shape(t, {}), "x");
  const int y = b.parameter(Shape(t, {}), "y");
  b.binary(op, x, y);
  return std::move(b).build();
}

}  // namespace act::hlo
