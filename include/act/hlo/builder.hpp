// A small programmatic builder for HLO modules (tests, rule generators, anything that needs a
// module without writing text). Each method appends one instruction in XLA-normal form, infers
// its result shape where XLA can, and returns the instruction's index in the computation.
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

#include <algorithm>
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
    Instruction instr = make(Opcode::Iota, std::move(shape), {});
    instr.iota_dimension = dimension;
    return append(std::move(instr));
  }

  // Elementwise ops: the result has the operand's shape (is-finite: pred).
  int unary(Opcode op, int operand) {
    Shape s = array(operand);
    if (op == Opcode::IsFinite) s.dtype = DType::pred;
    return append(make(op, std::move(s), {operand}));
  }
  int binary(Opcode op, int lhs, int rhs) {
    require(array(lhs).same_type(array(rhs)), fmt::format("{} operands {} and {} differ", opcode_name(op),
                                                          to_string(shape(lhs)), to_string(shape(rhs))));
    return append(make(op, shape(lhs), {lhs, rhs}));
  }
  int compare(int lhs, int rhs, ComparisonDirection direction, std::string type = {}) {
    require(array(lhs).same_type(array(rhs)), "compare operands differ");
    Instruction instr = make(Opcode::Compare, Shape(DType::pred, shape(lhs).dims), {lhs, rhs});
    instr.comparison_direction = direction;
    instr.comparison_type = std::move(type);
    return append(std::move(instr));
  }
  int select(int pred, int on_true, int on_false) {
    require(array(on_true).same_type(array(on_false)), "select branches differ");
    return append(make(Opcode::Select, shape(on_true), {pred, on_true, on_false}));
  }
  int clamp(int min, int operand, int max) { return append(make(Opcode::Clamp, array(operand), {min, operand, max})); }

  int convert(int operand, DType to) { return append(make(Opcode::Convert, Shape(to, array(operand).dims), {operand})); }
  // Infers the width-changing shape: f32[10] -> u8[10,4], u8[10,4] -> f32[10].
  int bitcast_convert(int operand, DType to) {
    const Shape& in = array(operand);
    Shape out(to, in.dims);
    const int wi = byte_width(in.dtype), wo = byte_width(to);
    if (wi > wo) {
      out.dims.push_back(wi / wo);
    } else if (wi < wo) {
      require(!in.dims.empty() && in.dims.back() == wo / wi, fmt::format("bitcast-convert {} to {}: the minor dimension must be {}",
                                                                         to_string(in), name(to), wo / wi));
      out.dims.pop_back();
    }
    return append(make(Opcode::BitcastConvert, std::move(out), {operand}));
  }
  int reshape(int operand, std::vector<std::int64_t> dims) {
    Shape out(array(operand).dtype, std::move(dims));
    require(out.element_count() == shape(operand).element_count(),
            fmt::format("reshape {} to {} changes the element count", to_string(shape(operand)), to_string(out)));
    return append(make(Opcode::Reshape, std::move(out), {operand}));
  }
  // The result shape is given in full (it usually carries a layout).
  int bitcast(int operand, Shape result) { return append(make(Opcode::Bitcast, std::move(result), {operand})); }
  int copy(int operand) { return append(make(Opcode::Copy, array(operand), {operand})); }

  int transpose(int operand, std::vector<std::int64_t> permutation) {
    const Shape& in = array(operand);
    require(permutation.size() == in.dims.size(), "transpose permutation has the wrong rank");
    Shape out(in.dtype, {});
    for (auto p : permutation) {
      require(p >= 0 && p < in.rank(), "transpose permutation out of range");
      out.dims.push_back(in.dims[static_cast<std::size_t>(p)]);
    }
    Instruction instr = make(Opcode::Transpose, std::move(out), {operand});
    instr.dimensions = std::move(permutation);
    return append(std::move(instr));
  }
  // XLA broadcast: operand dim k becomes result dim dimensions[k].
  int broadcast(int operand, std::vector<std::int64_t> result_dims, std::vector<std::int64_t> dimensions) {
    Instruction instr = make(Opcode::Broadcast, Shape(array(operand).dtype, std::move(result_dims)), {operand});
    instr.dimensions = std::move(dimensions);
    return append(std::move(instr));
  }
  int slice(int operand, std::vector<SliceRange> ranges) {
    const Shape& in = array(operand);
    require(ranges.size() == in.dims.size(), "slice needs one range per dimension");
    Shape out(in.dtype, {});
    for (const auto& r : ranges) {
      require(r.stride >= 1 && r.limit >= r.start, "bad slice range");
      out.dims.push_back((r.limit - r.start + r.stride - 1) / r.stride);
    }
    Instruction instr = make(Opcode::Slice, std::move(out), {operand});
    instr.slice = std::move(ranges);
    return append(std::move(instr));
  }
  int dynamic_slice(int operand, const std::vector<int>& start_indices, std::vector<std::int64_t> sizes) {
    std::vector<int> operands{operand};
    operands.insert(operands.end(), start_indices.begin(), start_indices.end());
    Instruction instr = make(Opcode::DynamicSlice, Shape(array(operand).dtype, sizes), std::move(operands));
    instr.dynamic_slice_sizes = std::move(sizes);
    return append(std::move(instr));
  }
  int dynamic_update_slice(int operand, int update, const std::vector<int>& start_indices) {
    std::vector<int> operands{operand, update};
    operands.insert(operands.end(), start_indices.begin(), start_indices.end());
    return append(make(Opcode::DynamicUpdateSlice, array(operand), std::move(operands)));
  }
  int concatenate(const std::vector<int>& operands, std::int64_t dimension) {
    require(!operands.empty(), "concatenate needs operands");
    Shape out = array(operands[0]);
    require(dimension >= 0 && dimension < out.rank(), "concatenate dimension out of range");
    out.dims[static_cast<std::size_t>(dimension)] = 0;
    for (int op : operands) {
      require(array(op).rank() == out.rank(), "concatenate operands differ in rank");
      out.dims[static_cast<std::size_t>(dimension)] += shape(op).dims[static_cast<std::size_t>(dimension)];
    }
    Instruction instr = make(Opcode::Concatenate, std::move(out), operands);
    instr.dimensions = {dimension};
    return append(std::move(instr));
  }
  int pad(int operand, int padding_value, std::vector<PadDimension> padding) {
    const Shape& in = array(operand);
    require(padding.size() == in.dims.size(), "pad needs one entry per dimension");
    Shape out(in.dtype, {});
    for (std::size_t d = 0; d < padding.size(); ++d) {
      const std::int64_t n = in.dims[d];
      out.dims.push_back(padding[d].low + padding[d].high + n + std::max<std::int64_t>(n - 1, 0) * padding[d].interior);
      require(out.dims.back() >= 0, "padding makes a dimension negative");
    }
    Instruction instr = make(Opcode::Pad, std::move(out), {operand, padding_value});
    instr.padding = std::move(padding);
    return append(std::move(instr));
  }
  int reverse(int operand, std::vector<std::int64_t> dimensions) {
    Instruction instr = make(Opcode::Reverse, array(operand), {operand});
    instr.dimensions = std::move(dimensions);
    return append(std::move(instr));
  }
  // reduce(inputs..., inits...) over `dimensions` with the module computation `to_apply`;
  // one input gives an array, several give a tuple.
  int reduce(const std::vector<int>& inputs, const std::vector<int>& inits, std::vector<std::int64_t> dimensions, int to_apply) {
    require(!inputs.empty() && inputs.size() == inits.size(), "reduce needs as many init values as inputs");
    std::vector<Shape> results;
    for (int in : inputs) {
      const Shape& s = array(in);
      Shape r(s.dtype, {});
      for (std::int64_t d = 0; d < s.rank(); ++d)
        if (std::find(dimensions.begin(), dimensions.end(), d) == dimensions.end()) r.dims.push_back(s.dims[static_cast<std::size_t>(d)]);
      results.push_back(std::move(r));
    }
    std::vector<int> operands = inputs;
    operands.insert(operands.end(), inits.begin(), inits.end());
    Instruction instr = make(Opcode::Reduce, results.size() == 1 ? results[0] : Shape::tuple(results), std::move(operands));
    instr.dimensions = std::move(dimensions);
    instr.called_computations = {to_apply};
    instr.called_computation_attributes = {"to_apply"};
    return append(std::move(instr));
  }
  // Result dims: batch, lhs free, rhs free (XLA's order); the element type is given.
  int dot(int lhs, int rhs, DotDimensions dims, DType result) {
    const Shape &l = array(lhs), &r = array(rhs);
    auto in_range = [](const std::vector<std::int64_t>& ds, const Shape& s) {
      return std::all_of(ds.begin(), ds.end(), [&](std::int64_t d) { return d >= 0 && d < s.rank(); });
    };
    require(in_range(dims.lhs_batch, l) && in_range(dims.lhs_contracting, l) && in_range(dims.rhs_batch, r) &&
                in_range(dims.rhs_contracting, r),
            "dot dimensions out of range");
    auto used = [](const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b, std::int64_t d) {
      return std::find(a.begin(), a.end(), d) != a.end() || std::find(b.begin(), b.end(), d) != b.end();
    };
    Shape out(result, {});
    for (auto d : dims.lhs_batch) out.dims.push_back(l.dims[static_cast<std::size_t>(d)]);
    for (std::int64_t d = 0; d < l.rank(); ++d)
      if (!used(dims.lhs_batch, dims.lhs_contracting, d)) out.dims.push_back(l.dims[static_cast<std::size_t>(d)]);
    for (std::int64_t d = 0; d < r.rank(); ++d)
      if (!used(dims.rhs_batch, dims.rhs_contracting, d)) out.dims.push_back(r.dims[static_cast<std::size_t>(d)]);
    Instruction instr = make(Opcode::Dot, std::move(out), {lhs, rhs});
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
