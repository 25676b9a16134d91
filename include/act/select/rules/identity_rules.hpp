// The identity instructions slice^H and concat^H (§5.2): no-ops on the memory state that let a
// consumer read part of a value (slice^H) or two values allocated back to back as one operand
// (concat^H). They exist per buffer; the rules add them next to the equivalent tensor operator.
//
// A tensor type T fits buffer b (access dims A[0..k), unit dims U, element type E) when
//   T.dtype == E, rank(T) == k + |U|, T.dims[k + j] == U[j] and 1 <= T.dims[i] <= A[i] (i < k):
// it is a box of units of b. HBM (A = [size], U = [], u8) holds exactly the u8 vectors of at
// most `size` bytes, so a slice of one is a contiguous byte range.
// slice^H in b:  slice(x) with every stride 1, where x and the result fit b and every unit dim is
//                taken whole (start 0, limit = U[j]); only access dims are cut.
// concat^H in b: concatenate(x, y) along an access dim d < k, where x, y and the result fit b
//                (the allocator must then place x and y adjacently along d, one box).
// An access dim every instruction reads and writes at address 0 (Gemmini's columns: `{"sp_addr",
// "0"}`) holds every value of b at 0, so neither a slice^H starting past 0 along it nor a
// concat^H along it can ever be allocated (its second operand would start past 0): no rule adds
// them. Each such node used to reach phase 2 only to fail there with contradicting address
// equalities, after extraction had preferred it to the movement a program needs.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/egraph/pattern.hpp"
#include "act/select/ir/tensor_graph.hpp"

namespace act::select {

// True when a value of `type` can live in `buffer` as a box of its units (see above).
inline bool fits_buffer(const Shape& type, const isa::Buffer& buffer) {
  const std::size_t k = buffer.access_dims.size(), u = buffer.unit_dims.size();
  if (type.is_tuple || type.dtype != buffer.dtype || type.dims.size() != k + u) return false;
  for (std::size_t i = 0; i < k; ++i)
    if (type.dims[i] < 1 || type.dims[i] > buffer.access_dims[i]) return false;
  for (std::size_t j = 0; j < u; ++j)
    if (type.dims[k + j] != buffer.unit_dims[j]) return false;
  return true;
}

// Per access dim of `buffer`: true when every slice of it that an instruction reads or writes
// starts at the literal address 0 along that dim (see above; any other expression counts as
// movable, which only keeps more identity nodes).
inline std::vector<bool> access_dims_pinned_at_zero(const isa::IsaView& isa, const isa::Buffer& buffer) {
  std::vector<bool> pinned(buffer.access_dims.size(), true);
  const auto visit = [&](const isa::SliceMap& slice) {
    if (slice.buffer != buffer.name) return;
    for (std::size_t d = 0; d < pinned.size(); ++d)
      if (d >= slice.start.size() || slice.start[d] != "0") pinned[d] = false;
  };
  for (const isa::Instruction& instruction : isa.instructions) {
    for (const isa::SliceMap& slice : instruction.inputs) visit(slice);
    for (const isa::SliceMap& slice : instruction.outputs) visit(slice);
  }
  return pinned;
}

// slice^H and concat^H rules for every buffer of context.isa. Names: "identity:slice^H:<buffer>".
inline std::vector<TensorRewrite> identity_rules(SelectionContext& context) {
  using egraph::Id;
  using Matcher = egraph::OpMatcher<TensorLanguage>;
  std::vector<TensorRewrite> rules;
  SelectionContext* ctx = &context;
  for (std::size_t b = 0; b < context.isa.buffers.size(); ++b) {
    const isa::Buffer buffer = context.isa.buffers[b];
    const int index = static_cast<int>(b);
    const std::vector<bool> pinned = access_dims_pinned_at_zero(context.isa, buffer);
    {
      TensorPatternBuilder p;
      const auto x = p.var("?x");
      const auto root = p.op(Matcher::of_kind(static_cast<std::uint32_t>(hlo::Opcode::Slice),
                                              [](const TensorOp& op) { return op.kind == NodeKind::Operator; }),
                             {x}, "@slice");
      TensorPattern pattern = p.build(root);
      const egraph::Var vx = pattern.slot("?x"), vs = pattern.slot("@slice");
      TensorRewrite rule(fmt::format("identity:slice^H:{}", buffer.name), std::move(pattern),
                         [ctx, index, vx, vs](TensorGraph& g, Id, const egraph::Subst& s) {
                           const auto& ranges = ctx->attributes_of(g.node(s[vs]).op).slice;
                           return g.add(make_slice_h(ctx->attributes, index, ranges), {s[vx]});
                         });
      rule.when([ctx, buffer, pinned, vx, vs](const TensorGraph& g, Id cls, const egraph::Subst& s) {
        const Shape& in = g.data(s[vx]).type;
        if (!fits_buffer(in, buffer) || !fits_buffer(g.data(cls).type, buffer)) return false;
        const auto& ranges = ctx->attributes_of(g.node(s[vs]).op).slice;
        const std::size_t k = buffer.access_dims.size();
        for (std::size_t d = 0; d < ranges.size(); ++d) {
          if (ranges[d].stride != 1) return false;
          if (d < k && pinned[d] && ranges[d].start != 0) return false;
          if (d >= k && (ranges[d].start != 0 || ranges[d].limit != in.dims[d])) return false;
        }
        return true;
      });
      rules.push_back(std::move(rule));
    }
    {
      TensorPatternBuilder p;
      const auto x = p.var("?x");
      const auto y = p.var("?y");
      const auto root = p.op(Matcher::of_kind(static_cast<std::uint32_t>(hlo::Opcode::Concatenate),
                                              [](const TensorOp& op) { return op.kind == NodeKind::Operator; }),
                             {x, y}, "@concat");
      TensorPattern pattern = p.build(root);
      const egraph::Var vx = pattern.slot("?x"), vy = pattern.slot("?y"), vc = pattern.slot("@concat");
      TensorRewrite rule(fmt::format("identity:concat^H:{}", buffer.name), std::move(pattern),
                         [ctx, index, vx, vy, vc](TensorGraph& g, Id, const egraph::Subst& s) {
                           const auto d = ctx->attributes_of(g.node(s[vc]).op).dimensions.at(0);
                           return g.add(make_concat_h(ctx->attributes, index, d), {s[vx], s[vy]});
                         });
      rule.when([ctx, buffer, pinned, vx, vy, vc](const TensorGraph& g, Id cls, const egraph::Subst& s) {
        const auto& dims = ctx->attributes_of(g.node(s[vc]).op).dimensions;
        if (dims.size() != 1 || dims[0] < 0 || static_cast<std::size_t>(dims[0]) >= buffer.access_dims.size())
          return false;
        if (pinned[static_cast<std::size_t>(dims[0])]) return false;
        return fits_buffer(g.data(s[vx]).type, buffer) && fits_buffer(g.data(s[vy]).type, buffer) &&
               fits_buffer(g.data(cls).type, buffer);
      });
      rules.push_back(std::move(rule));
    }
  }
  return rules;
}

}  // namespace act::select
