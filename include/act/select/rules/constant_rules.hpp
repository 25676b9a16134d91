// The byte view of a constant (module 1's input convention, applied to constants).
//
// Constants are HBM leaves (the constant pool), and HBM holds bytes: an instruction that loads
// from HBM matches a u8 vector, the way module 1 presents a kernel input as
// bitcast-convert(reshape(Input u8[bytes])). A constant the kernel or an axiom creates in its
// logical type (e.g. the identity matrix of x ↔ dot(x, I), bf16[64,64]) would otherwise never
// be loadable. This rule gives every Constant node c : T[dims] the same view:
//   c  ≡  bitcast-convert<T>(reshape<u8[dims..., w]>(C))    (w = bytes per element > 1)
//   c  ≡  reshape<u8[dims]>(C)                              (T = u8, rank >= 2)
//   c  ≡  bitcast-convert<T>(reshape<u8[dims]>(C))          (other 1-byte T)
// where C : u8[bytes] is a new Constant holding c's row-major bytes (the bytes the constant
// pool stores). Scalars and u8 vectors are left alone. The rule is idempotent (hash-consing),
// adds at most three nodes per constant, and unites only c's class with its own byte view.
#pragma once

#include <vector>

#include "act/core/literal.hpp"
#include "act/egraph/pattern.hpp"
#include "act/select/ir/builder.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/ir/tensor_language.hpp"

namespace act::select {


// True when `type` is a constant type that gets a byte view.
inline bool has_byte_view(const Shape& type) {
  if (type.is_tuple || type.rank() == 0 || type.dtype == DType::pred) return false;
  if (bit_width(type.dtype) % 8 != 0) return false;
  return !(type.dtype == DType::u8 && type.rank() == 1);
}

inline std::vector<TensorRewrite> constant_rules(SelectionContext& context) {
  using egraph::Id;
  using Matcher = egraph::OpMatcher<TensorLanguage>;
  SelectionContext* ctx = &context;
  TensorPatternBuilder p;
  const auto root = p.op(Matcher::of_kind(kConstantDiscriminant), {}, "@c");
  TensorPattern pattern = p.build(root);
  const egraph::Var vc = pattern.slot("@c");
  TensorRewrite rule("constant-byte-view", std::move(pattern),
                     [ctx, vc](TensorGraph& g, Id, const egraph::Subst& s) -> std::optional<Id> {
                       const auto id = ctx->attributes_of(g.node(s[vc]).op).index;
                       if (id < 0 || static_cast<std::size_t>(id) >= ctx->constants.size()) return std::nullopt;
                       const Literal value = ctx->constants[id];
                       const Shape type = value.shape();
                       if (!has_byte_view(type)) return std::nullopt;
                       const std::int64_t width = bit_width(type.dtype) / 8;
                       const Literal bytes = Literal::from_bytes(Shape(DType::u8, {type.byte_size()}), value.bytes());
                       TensorBuilder b(g, *ctx);
                       const Id raw = b.constant(bytes);
                       std::vector<std::int64_t> byte_dims = type.dims;
                       if (width > 1) byte_dims.push_back(width);
                       NodeAttributes r;  // always a node, even u8[n] -> u8[n] for 1-byte vectors
                       r.shape = byte_dims;
                       const Id reshaped = b.op(hlo::Opcode::Reshape, r, {raw});
                       if (type.dtype == DType::u8) return reshaped;
                       return b.bitcast(reshaped, type.dtype);
                     });
  rule.when([ctx, vc](const TensorGraph& g, Id, const egraph::Subst& s) {
    const auto id = ctx->attributes_of(g.node(s[vc]).op).index;
    return id >= 0 && static_cast<std::size_t>(id) < ctx->constants.size() && has_byte_view(ctx->constants[id].shape());
  });
  std::vector<TensorRewrite> rules;
  rules.push_back(std::move(rule));
  return rules;
}

}  // namespace act::select
