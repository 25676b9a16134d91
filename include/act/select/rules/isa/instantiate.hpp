// The applier of an IR->ISA rule: what a match of one searcher variant adds once alpha is
// solved. The Pii node over its inputs (peeled input chains undone, zero and don't-care inputs
// built) under the inverse of the peeled root chain; an inverse step reuses an existing node
// where it can (reshape(reshape(x)), bitcast(bitcast(x)), transpose_p(transpose_p^-1(x)) -> x).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "act/isa/description.hpp"
#include "act/select/ir/builder.hpp"
#include "act/select/rules/isa/rule_info.hpp"
#include "act/sym/expr.hpp"

namespace act::select::isa_rule_detail {

using egraph::Id;

// The class `step`'s node was applied to, given the class x of its result and the operand's
// dims (see TensorBuilder::undo_movement; the forward view only on the root chain).
inline Id undo_step(TensorBuilder& b, Id x, const ChainStep& step, const std::vector<std::int64_t>& dims,
                    bool on_root_chain) {
  return b.undo_movement(x, step.opcode, step.permutation, step.operand_dtype, dims, on_root_chain);
}

// The nodes a match of searcher v implies, alpha solved: the Pii over its inputs (peeled input
// chains undone, zero and don't-care inputs built) under the inverse root chain. Nothing when
// a type cannot be evaluated or the result would not have the matched class's type.
inline std::optional<Id> build_instance(const IsaRuleInfo& info, SelectionContext& context, const isa::Instruction& inst,
                                        TensorGraph& g, Id cls, const egraph::Subst& s, std::size_t v,
                                        const std::vector<std::int64_t>& alpha) {
  const IsaPatternVariant& variant = info.variants[v];
  sym::Bindings bindings;
  for (std::size_t a = 0; a < alpha.size() && a < inst.alpha.size(); ++a) bindings.set(inst.alpha[a], alpha[a]);
  const auto evaluate = [&](const std::vector<SymbolicDim>& dims) -> std::optional<std::vector<std::int64_t>> {
    std::vector<std::int64_t> out;
    for (const SymbolicDim& d : dims) {
      if (d.literal >= 0) {
        out.push_back(d.literal);
        continue;
      }
      const auto r = sym::try_evaluate(d.parsed->expr, bindings);
      if (!r.ok() || r.value < 0) return std::nullopt;
      out.push_back(r.value);
    }
    return out;
  };
  // Every type first, so a failure leaves the graph untouched.
  std::vector<std::vector<std::vector<std::int64_t>>> input_dims(variant.bindings.size());
  std::vector<std::vector<std::int64_t>> leaf_dims(variant.bindings.size()), root_dims;
  for (std::size_t k = 0; k < variant.bindings.size(); ++k) {
    const InputBinding& binding = variant.bindings[k];
    for (const ChainStep& step : binding.chain) {
      auto d = evaluate(step.operand_dims);
      if (!d) return std::nullopt;
      input_dims[k].push_back(std::move(*d));
    }
    if (binding.source != InputSource::Matched) {
      auto d = evaluate(binding.dims);
      if (!d) return std::nullopt;
      leaf_dims[k] = std::move(*d);
    }
  }
  for (const ChainStep& step : variant.root_chain) {
    auto d = evaluate(step.operand_dims);
    if (!d) return std::nullopt;
    root_dims.push_back(std::move(*d));
  }
  TensorBuilder b(g, context);
  std::vector<Id> children;
  for (std::size_t k = 0; k < variant.bindings.size(); ++k) {
    const InputBinding& binding = variant.bindings[k];
    switch (binding.source) {
      case InputSource::Matched: {
        Id x = g.find(s[variant.inputs[k]]);
        for (std::size_t t = 0; t < binding.chain.size(); ++t) x = undo_step(b, x, binding.chain[t], input_dims[k][t], false);
        children.push_back(x);
        break;
      }
      case InputSource::Zero: children.push_back(b.zeros(Shape(binding.dtype, leaf_dims[k]))); break;
      case InputSource::Undefined:
        children.push_back(b.undefined(Shape(binding.dtype, leaf_dims[k])));
        break;
    }
  }
  Id x = b.pii(info.instruction, alpha, children);
  for (std::size_t t = 0; t < variant.root_chain.size(); ++t) x = undo_step(b, x, variant.root_chain[t], root_dims[t], true);
  if (!g.data(g.find(x)).type.same_type(g.data(g.find(cls)).type)) return std::nullopt;  // a semantics inconsistency
  return x;
}

}  // namespace act::select::isa_rule_detail
