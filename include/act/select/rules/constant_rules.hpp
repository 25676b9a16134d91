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
//
// A second rule, constant-materialisation, gives a Constant node to a constant class that an
// operator computes from constants only (broadcast(s8 -7), negate(broadcast(19)), ...).
// Extraction already treats such a class as a constant-pool leaf (ConstantFolder), but no load
// could read it: loads match byte views, and only Constant nodes get one. Slices, reshapes and
// other views of constants are left alone (they are read through the original's bytes), and so
// are values over kMaxMaterialisedElements elements. Folding happens while the rule searches
// (the e-graph is clean then; the folder's work bound applies), the node is added when it applies.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "act/core/literal.hpp"
#include "act/egraph/pattern.hpp"
#include "act/select/ir/builder.hpp"
#include "act/select/ir/constant_folding.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/ir/tensor_language.hpp"

namespace act::select {


// True when `type` is a constant type that gets a byte view.
inline bool has_byte_view(const Shape& type) {
  if (type.is_tuple || type.rank() == 0 || type.dtype == DType::pred) return false;
  if (bit_width(type.dtype) % 8 != 0) return false;
  return !(type.dtype == DType::u8 && type.rank() == 1);
}

inline constexpr std::int64_t kMaxMaterialisedElements = std::int64_t{1} << 16;

// True when the class holds an operator that computes (not only views or copies) a value.
inline bool computed_by_an_operator(const TensorGraph& g, egraph::Id cls) {
  for (egraph::Id n : g.class_nodes(cls)) {
    const auto view = g.node(n);
    if (view.op.kind != NodeKind::Operator) continue;
    switch (view.op.opcode) {
      case hlo::Opcode::Slice:
      case hlo::Opcode::Reshape:
      case hlo::Opcode::Transpose:
      case hlo::Opcode::BitcastConvert:
      case hlo::Opcode::Concatenate:
      case hlo::Opcode::Copy: continue;
      default: return true;
    }
  }
  return false;
}

inline bool holds_constant_node(const TensorGraph& g, egraph::Id cls) {
  for (egraph::Id n : g.class_nodes(cls))
    if (g.node(n).op.kind == NodeKind::Constant) return true;
  return false;
}

inline TensorRewrite constant_materialisation_rule(SelectionContext& context) {
  using egraph::Id;
  // One folder per e-graph the rule meets; the values folded during a search, by class.
  struct State {
    const TensorGraph* graph = nullptr;
    std::unique_ptr<ConstantFolder> folder;
    std::unordered_map<Id, std::int64_t> folded;
  };
  auto state = std::make_shared<State>();
  SelectionContext* ctx = &context;
  TensorPatternBuilder p;
  TensorPattern pattern = p.build(p.var("?c"));
  TensorRewrite rule("constant-materialisation", std::move(pattern),
                     [ctx, state](TensorGraph& g, Id cls, const egraph::Subst&) -> std::optional<Id> {
                       const auto it = state->folded.find(cls);
                       if (it == state->folded.end()) return std::nullopt;
                       TensorBuilder b(g, *ctx);
                       return b.constant(ctx->constants[it->second]);
                     });
  rule.when([ctx, state](const TensorGraph& g, Id cls, const egraph::Subst&) {
    const TensorData& d = g.data(cls);
    if (!d.is_constant || !has_byte_view(d.type) || d.type.element_count() > kMaxMaterialisedElements) return false;
    if (holds_constant_node(g, cls) || !computed_by_an_operator(g, cls)) return false;
    if (state->graph != &g) {
      state->graph = &g;
      state->folder = std::make_unique<ConstantFolder>(g, *ctx);
    }
    const std::int64_t index = (*state->folder)(cls);
    if (index < 0) return false;
    state->folded[cls] = index;
    return true;
  });
  return rule;
}

inline std::vector<TensorRewrite> constant_rules(SelectionContext& context) {
  using egraph::Id;
  using Matcher = egraph::OpMatcher<TensorLanguage>;
  SelectionContext* ctx = &context;
  TensorPatternBuilder p;
  const auto root = p.op(Matcher::of_kind(kConstantDiscriminant), {}, "@c");
  TensorPattern pattern = p.build(root);
  const egraph::Var vc = pattern.slot("@c");
  // The byte constant of each constant id, interned on the rule's first application: the rule
  // re-applies to every Constant node each iteration (hash-consing makes that a no-op), and
  // copying and re-interning the bytes each time was 70 % of a Gemmini sound-soak kernel's
  // compile (8 s of rewriting for 10,167 e-nodes; constants up to 256 KB).
  auto byte_constants = std::make_shared<std::unordered_map<std::int64_t, std::int64_t>>();
  TensorRewrite rule("constant-byte-view", std::move(pattern),
                     [ctx, vc, byte_constants](TensorGraph& g, Id, const egraph::Subst& s) -> std::optional<Id> {
                       const auto id = ctx->attributes_of(g.node(s[vc]).op).index;
                       if (id < 0 || static_cast<std::size_t>(id) >= ctx->constants.size()) return std::nullopt;
                       const Shape type = ctx->constants[id].shape();
                       if (!has_byte_view(type)) return std::nullopt;
                       const Shape byte_type(DType::u8, {type.byte_size()});
                       auto cached = byte_constants->find(id);
                       if (cached == byte_constants->end())
                         cached = byte_constants->emplace(id, ctx->constants.intern(Literal::from_bytes(byte_type, ctx->constants[id].bytes()))).first;
                       TensorBuilder b(g, *ctx);
                       const Id raw = b.constant_of_pool(cached->second, byte_type);
                       const std::int64_t width = bit_width(type.dtype) / 8;
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
  rules.push_back(constant_materialisation_rule(context));
  return rules;
}

}  // namespace act::select
