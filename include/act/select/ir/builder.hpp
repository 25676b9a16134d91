// The one way phase 1 adds tensor e-nodes: module 1, the axioms, the IR->ISA appliers, the view
// and constant rules all build through a TensorBuilder.
//
// Nodes come out the way type_inference.hpp reads them (reshape/broadcast: attributes.shape;
// convert/bitcast-convert/dot: attributes.dtype; reduce and pad take a scalar second child), and
// the movement builders skip what would not change their operand (a reshape to the same dims, an
// identity transpose, a bitcast to the same type, a slice covering everything): hash-consing then
// keeps equal values in one class without identity nodes in between.
// Constants are interned in the context's ConstantTable; patterned ones (identity, ones, zeros)
// are built once per kind, dtype and dims and reused by id (building and interning a 64x64
// literal on every match dominated rewriting).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/literal.hpp"
#include "act/select/ir/tensor_graph.hpp"

namespace act::select {

// Slice-range arithmetic shared by builders and rules.
namespace slice_ranges {

// Number of elements a range takes, and its canonical form (limit one past the last element;
// stride 1 for a single element).
inline std::int64_t count(const hlo::SliceRange& r) { return (r.limit - r.start + r.stride - 1) / r.stride; }
inline hlo::SliceRange canonical(hlo::SliceRange r) {
  const auto n = count(r);
  r.limit = n == 0 ? r.start : r.start + (n - 1) * r.stride + 1;
  if (n == 1) r.stride = 1;
  return r;
}
inline std::vector<hlo::SliceRange> whole(const std::vector<std::int64_t>& dims) {
  std::vector<hlo::SliceRange> r;
  for (auto d : dims) r.push_back({0, d, 1});
  return r;
}
// The ranges take every element of an array of `dims`, in order.
inline bool covers(const std::vector<hlo::SliceRange>& ranges, const std::vector<std::int64_t>& dims) {
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const auto& r = ranges[d];
    if (r.start != 0 || count(r) != dims[d] || (dims[d] > 1 && r.stride != 1)) return false;
  }
  return true;
}

}  // namespace slice_ranges

class TensorBuilder {
 public:
  using Id = egraph::Id;
  using Dims = std::vector<std::int64_t>;

  TensorBuilder(TensorGraph& graph, SelectionContext& context) : g(graph), ctx(context) {}

  TensorGraph& g;
  SelectionContext& ctx;

  const Shape& type(Id x) const { return g.data(x).type; }

  // ---- raw nodes (no short-cuts) ----------------------------------------------------------------
  Id add(const TensorOp& op, std::initializer_list<Id> children) { return g.add(op, children); }
  Id add(const TensorOp& op, const std::vector<Id>& children) { return g.add(op, children); }
  Id op(hlo::Opcode code, const NodeAttributes& a, std::initializer_list<Id> children) {
    return g.add(make_operator(ctx.attributes, code, a), children);
  }
  Id op(hlo::Opcode code, const NodeAttributes& a, const std::vector<Id>& children) {
    return g.add(make_operator(ctx.attributes, code, a), children);
  }

  // ---- movement ---------------------------------------------------------------------------------
  Id reshape(Id x, Dims dims) {
    if (type(x).dims == dims) return x;
    NodeAttributes a;
    a.shape = std::move(dims);
    return op(hlo::Opcode::Reshape, a, {x});
  }
  Id transpose(Id x, Dims permutation) {
    bool identity = true;
    for (std::size_t i = 0; i < permutation.size(); ++i) identity = identity && permutation[i] == static_cast<std::int64_t>(i);
    if (identity) return x;
    NodeAttributes a;
    a.dimensions = std::move(permutation);
    return op(hlo::Opcode::Transpose, a, {x});
  }
  Id bitcast(Id x, DType to) {
    if (type(x).dtype == to) return x;
    NodeAttributes a;
    a.dtype = to;
    return op(hlo::Opcode::BitcastConvert, a, {x});
  }
  Id slice(Id x, std::vector<hlo::SliceRange> ranges) {
    for (auto& r : ranges) r = slice_ranges::canonical(r);
    if (slice_ranges::covers(ranges, type(x).dims)) return x;
    NodeAttributes a;
    a.slice = std::move(ranges);
    return op(hlo::Opcode::Slice, a, {x});
  }
  // A slice of dimension d only.
  Id slice_dim(Id x, std::size_t d, std::int64_t start, std::int64_t limit) {
    auto ranges = slice_ranges::whole(type(x).dims);
    ranges[d] = {start, limit, 1};
    return slice(x, std::move(ranges));
  }
  // The leading corner of x of the given dims.
  Id slice_to(Id x, const Dims& dims) {
    std::vector<hlo::SliceRange> ranges;
    for (auto d : dims) ranges.push_back({0, d, 1});
    return slice(x, std::move(ranges));
  }
  Id concat(std::vector<Id> xs, std::int64_t d) {
    if (xs.size() == 1) return xs[0];
    NodeAttributes a;
    a.dimensions = {d};
    return op(hlo::Opcode::Concatenate, a, xs);
  }

  // The class x was computed from by a movement node of `opcode` (Reshape, BitcastConvert or
  // Transpose with `permutation`), given that operand's type: the operand of such a node of x
  // when x holds one, else the inverse movement applied to x -- and then, with
  // `with_forward_view`, x also gets the forward node over it. An IR->ISA applier builds its Pii
  // under the inverse of its root chain; without the forward node the matched value has no view
  // naming the Pii's bytes from its side, and the patterns that read that view (a store's
  // reshape(bitcast-convert(x))) never match it until other rules happen to build one (Gemmini
  // soak kernel 30 of seed 4242: 28 iterations, 72k e-nodes, instead of 5 and 7k). Input chains
  // go without: there the forward views give loads more byte views of an input to meet, and the
  // cheapest graph of AMX K5's AVX half grows two loads (28 instructions instead of 26).
  Id undo_movement(Id x, hlo::Opcode opcode, const Dims& permutation, DType operand_dtype, const Dims& operand_dims,
                   bool with_forward_view) {
    x = g.find(x);
    const Shape& have = type(x);
    bool identity_permutation = true;
    for (std::size_t d = 0; d < permutation.size(); ++d)
      identity_permutation = identity_permutation && permutation[d] == static_cast<std::int64_t>(d);
    if (!have.is_tuple && have.dtype == operand_dtype && have.dims == operand_dims && identity_permutation) return x;
    for (auto n : g.class_nodes(x)) {
      const auto node = g.node(n);
      if (node.op.kind != NodeKind::Operator || node.op.opcode != opcode || node.children.size() != 1) continue;
      if (opcode == hlo::Opcode::Transpose && ctx.attributes_of(node.op).dimensions != permutation) continue;
      const Id child = g.find(node.children[0]);
      const Shape& ct = type(child);
      if (!ct.is_tuple && ct.dtype == operand_dtype && ct.dims == operand_dims) return child;
    }
    NodeAttributes a;
    switch (opcode) {
      case hlo::Opcode::Reshape: a.shape = operand_dims; break;
      case hlo::Opcode::BitcastConvert: a.dtype = operand_dtype; break;
      case hlo::Opcode::Transpose:
        a.dimensions.assign(permutation.size(), 0);
        for (std::size_t d = 0; d < permutation.size(); ++d)
          a.dimensions[static_cast<std::size_t>(permutation[d])] = static_cast<std::int64_t>(d);
        break;
      default: throw Error(ErrorKind::Internal, fmt::format("undo_movement: {} is not a movement op", hlo::opcode_name(opcode)));
    }
    NodeAttributes forward;  // read before adding nodes: `have` lives in the e-graph's class data
    switch (opcode) {
      case hlo::Opcode::Reshape: forward.shape = have.dims; break;
      case hlo::Opcode::BitcastConvert: forward.dtype = have.dtype; break;
      default: forward.dimensions = permutation; break;
    }
    const Id operand = op(opcode, a, {x});
    if (with_forward_view) g.unite(op(opcode, forward, {operand}), x);
    return operand;
  }
  // x presented at `dims` (same element count): the operand of an existing reshape of x when it
  // has that shape, else a new reshape(x).
  Id reshaped_to(Id x, const Dims& dims) { return undo_movement(x, hlo::Opcode::Reshape, {}, type(g.find(x)).dtype, dims, false); }

  // ---- computation ------------------------------------------------------------------------------
  Id dot(Id a, Id b, hlo::DotDimensions dims, DType result) {
    NodeAttributes at;
    at.dot = std::move(dims);
    at.dtype = result;
    return op(hlo::Opcode::Dot, at, {a, b});
  }
  Id pad(Id x, Id value, std::vector<hlo::PadDimension> padding) {
    NodeAttributes a;
    a.padding = std::move(padding);
    return op(hlo::Opcode::Pad, a, {x, value});
  }
  // x padded with zeros at the high end to `dims`.
  Id pad_to(Id x, const Dims& dims) {
    const Shape have = type(x);
    if (have.dims == dims) return x;
    std::vector<hlo::PadDimension> padding;
    for (std::size_t d = 0; d < dims.size(); ++d) padding.push_back({0, dims[d] - have.dims[d], 0});
    return pad(x, zero(have.dtype), std::move(padding));
  }
  Id broadcast(Id x, Dims dims, Dims dimensions = {}) {
    NodeAttributes a;
    a.shape = std::move(dims);
    a.dimensions = std::move(dimensions);
    return op(hlo::Opcode::Broadcast, a, {x});
  }

  // ---- leaves -----------------------------------------------------------------------------------
  Id constant(Literal value) {
    const Shape t = value.shape();
    return constant_of_pool(ctx.constants.intern(std::move(value)), t);
  }
  // A Constant node for the pool's constant `id` (of type t), without copying its value.
  Id constant_of_pool(std::int64_t id, const Shape& t) { return g.add(make_constant(ctx.attributes, id, t), {}); }
  Id scalar(DType t, double v) {
    Literal l(Shape(t, {}));
    if (is_float(t)) l.set_float(0, v);
    else l.set_int(0, static_cast<std::int64_t>(v));
    return constant(std::move(l));
  }
  // The scalar 0 of type t (all bits zero).
  Id zero(DType t) { return constant(Literal(Shape(t, {}))); }
  // Zeros of `t`: broadcast of the scalar zero, its constant id interned once per dtype.
  // `t` is taken by value: a caller's reference into the e-graph's class data would dangle once
  // adding the scalar grows it.
  Id zeros(Shape t) {
    const Id scalar = patterned(DType(t.dtype), {}, "zero", [](std::int64_t, std::int64_t) { return 0.0; });
    return broadcast(scalar, std::move(t.dims));
  }
  // A constant of shape dims whose element at (i, j) (rank 2) or i (rank 1) is f(i, j). `kind`
  // names the pattern f draws (one kind, one f): the literal is built once per kind, dtype and
  // dims, and later requests reuse its constant id.
  template <class F>
  Id patterned(DType t, Dims dims, std::string_view kind, F f) {
    const std::string key = fmt::format("{}:{}[{}]", kind, name(t), fmt::join(dims, ","));
    const Shape shape(t, dims);
    if (auto it = ctx.patterned_constants.find(key); it != ctx.patterned_constants.end())
      return g.add(make_constant(ctx.attributes, it->second, shape), {});
    Literal l(shape);
    const std::int64_t cols = dims.size() == 2 ? dims[1] : 1;
    for (std::int64_t k = 0; k < l.element_count(); ++k) {
      const double v = f(k / cols, k % cols);
      if (is_float(t)) l.set_float(k, v);
      else l.set_int(k, static_cast<std::int64_t>(v));
    }
    const auto id = ctx.constants.intern(std::move(l));
    ctx.patterned_constants.emplace(key, id);
    return g.add(make_constant(ctx.attributes, id, shape), {});
  }
  Id undefined(const Shape& t) { return g.add(make_undefined(ctx.attributes, t), {}); }
  Id pii(std::size_t instruction, std::vector<std::int64_t> alpha, const std::vector<Id>& inputs) {
    return g.add(make_pii(ctx.attributes, instruction, std::move(alpha)), inputs);
  }
};

}  // namespace act::select
