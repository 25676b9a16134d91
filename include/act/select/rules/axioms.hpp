// The IR→IR axioms of phase 1 (issue 3, module 2): every rule with its description (family,
// operators on each side, source). Rules only ever unite classes of equal type.
//
// Growth control: the two rules that apply to any class (copy-introduction,
// dot-identity-introduction) add at most one node per class, inside that class, and skip
// constants; splitting rules halve a dimension so repeated splits stay linear in its size;
// commutativity/associativity are left to the runner's backoff scheduler.
#pragma once

#include <vector>

#include "act/select/rules/axioms/dot.hpp"
#include "act/select/rules/axioms/elementwise.hpp"
#include "act/select/rules/axioms/negation_and_reduction.hpp"
#include "act/select/rules/axioms/layout.hpp"
#include "act/select/rules/axioms/min_max_via_relu.hpp"
#include "act/select/rules/axioms/slicing.hpp"
#include "act/select/rules/axioms/support.hpp"
#include "act/select/rules/axioms/transpose_by_lanes.hpp"

namespace act::select {

// Every axiom with its description, in a fixed order. The rules keep a pointer to `context`
// (they intern attributes and constants there): run them only on e-graphs whose TensorAnalysis
// uses that same context.
inline std::vector<Axiom> ir_axiom_set(SelectionContext& context) {
  std::vector<Axiom> out;
  axiom_detail::add_layout_axioms(context, out);
  axiom_detail::add_slicing_axioms(context, out);
  axiom_detail::add_elementwise_axioms(context, out);
  axiom_detail::add_dot_axioms(context, out);
  axiom_detail::add_negation_and_reduction_axioms(context, out);
  axiom_detail::add_min_max_via_relu_axioms(context, out);
  axiom_detail::add_transpose_by_lanes_axioms(context, out);
  return out;
}

// The rules alone (same order as ir_axiom_set / ir_axiom_infos).
inline std::vector<TensorRewrite> ir_axioms(SelectionContext& context) {
  std::vector<TensorRewrite> rules;
  for (auto& a : ir_axiom_set(context)) rules.push_back(std::move(a.rule));
  return rules;
}

// The descriptions alone (same order as ir_axioms).
inline std::vector<AxiomInfo> ir_axiom_infos() {
  SelectionContext scratch;
  std::vector<AxiomInfo> infos;
  for (auto& a : ir_axiom_set(scratch)) infos.push_back(std::move(a.info));
  return infos;
}

}  // namespace act::select
