// The pattern of one IR->ISA searcher (rules/isa_rules.hpp), built from the instruction's
// semantics under a SearcherPlan (searcher_plan.hpp).
//
// The semantics DAG from ROOT: parameter In_k is the variable ?In_k (a parameter used twice is
// one variable, and a shared operator such as softmax's exponential(In1) is one pattern node, so
// the pattern is a DAG); every operator is matched by opcode + its non-shape attributes
// (permutation, dot dims, reduce kind and dims, broadcast dims, element type of convert/dot,
// ...); a constant matches a Constant node holding the same value. Operator nodes are captured
// so the condition (alpha_solver.hpp) can read the type of every matched class. A skipped node
// is its operand, whose class must have the node's type; the top of a peeled input chain is
// ?In_k, the applier undoing the chain (instantiate.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/literal.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/shape_check.hpp"
#include "act/isa/description.hpp"
#include "act/select/rules/isa/rule_info.hpp"
#include "act/select/rules/isa/searcher_plan.hpp"

namespace act::select::isa_rule_detail {

using Matcher = egraph::OpMatcher<TensorLanguage>;

inline std::string dims_text(const std::vector<std::int64_t>& v) { return fmt::format("{{{}}}", fmt::join(v, ",")); }

// Non-shape attributes an operator of the semantics must carry (shape-like ones are checked
// through types). Returns the attribute record a matching e-node must agree with on the
// fields `same_attributes` compares.
inline NodeAttributes semantic_attributes(const hlo::Module& m, const hlo::Instruction& inst) {
  NodeAttributes a;
  switch (inst.opcode) {
    case hlo::Opcode::Convert:
    case hlo::Opcode::BitcastConvert: a.dtype = inst.shape.dtype; break;
    case hlo::Opcode::Iota:
      a.dtype = inst.shape.dtype;
      a.dimensions = {inst.iota_dimension};
      break;
    case hlo::Opcode::Broadcast:
    case hlo::Opcode::Transpose:
    case hlo::Opcode::Reverse:
    case hlo::Opcode::Concatenate: a.dimensions = inst.dimensions; break;
    case hlo::Opcode::Slice: a.slice = inst.slice; break;
    case hlo::Opcode::Pad: a.padding = inst.padding; break;
    case hlo::Opcode::Dot:
      a.dot = inst.dot;
      a.dtype = inst.shape.dtype;
      break;
    case hlo::Opcode::Compare: a.direction = inst.comparison_direction; break;
    case hlo::Opcode::Reduce: {
      if (inst.operands.size() != 2) throw Skip{"variadic reduce"};
      const int callee = inst.called_computations.empty() ? -1 : inst.called_computations[0];
      if (callee < 0 || static_cast<std::size_t>(callee) >= m.computations.size()) throw Skip{"reduce without to_apply"};
      a.reduce = recognise_reducer(m.computations[static_cast<std::size_t>(callee)]);
      if (a.reduce == ReduceKind::None) throw Skip{"reduce with an unrecognised to_apply"};
      a.dimensions = inst.dimensions;
      break;
    }
    case hlo::Opcode::Reshape:
    case hlo::Opcode::Select:
    case hlo::Opcode::Clamp: break;
    default:
      if (!hlo::shape_detail::is_elementwise_unary(inst.opcode) && !hlo::shape_detail::is_elementwise_binary(inst.opcode))
        throw Skip{fmt::format("operator {} is outside the tensor language", hlo::opcode_name(inst.opcode))};
  }
  return a;
}

// Non-shape fields of two attribute records agree (shape is checked through the class type).
inline bool same_attributes(const NodeAttributes& want, const NodeAttributes& have) {
  return want.dtype == have.dtype && want.dimensions == have.dimensions && want.slice == have.slice &&
         want.padding == have.padding && want.dot == have.dot && want.reduce == have.reduce &&
         want.direction == have.direction;
}

inline std::string_view reduce_kind_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::Add: return "add";
    case ReduceKind::Multiply: return "multiply";
    case ReduceKind::Maximum: return "maximum";
    case ReduceKind::Minimum: return "minimum";
    case ReduceKind::And: return "and";
    case ReduceKind::Or: return "or";
    case ReduceKind::None: break;
  }
  return "none";
}

inline std::string attribute_text(const hlo::Instruction& inst, const NodeAttributes& a) {
  std::string out;
  switch (inst.opcode) {
    case hlo::Opcode::Convert:
    case hlo::Opcode::BitcastConvert: return fmt::format(" :to {}", name(a.dtype));
    case hlo::Opcode::Dot:
      return fmt::format(" :lhs_contracting {} :rhs_contracting {}{}", dims_text(a.dot.lhs_contracting),
                         dims_text(a.dot.rhs_contracting),
                         a.dot.lhs_batch.empty() ? std::string()
                                                 : fmt::format(" :lhs_batch {} :rhs_batch {}", dims_text(a.dot.lhs_batch),
                                                               dims_text(a.dot.rhs_batch)));
    case hlo::Opcode::Reduce:
      return fmt::format(" :kind {} :dimensions {}", reduce_kind_name(a.reduce), dims_text(a.dimensions));
    default: break;
  }
  if (!a.dimensions.empty()) out += fmt::format(" :dimensions {}", dims_text(a.dimensions));
  return out;
}

class SearcherPatternBuilder {
 public:
  // `opcodes` collects the operators of every pattern built (the rule's IsaRuleInfo::opcodes).
  SearcherPatternBuilder(const SelectionContext& context, const isa::Instruction& instruction, const hlo::Module& semantics,
                         const SearcherPlan& plan, std::vector<hlo::Opcode>& opcodes)
      : context_(context), inst_(instruction), module_(semantics), plan_(plan), opcodes_(opcodes) {}

  // The searcher's pattern and its description. Throws Skip when the plan leaves no operator
  // or the pattern cannot be built, Undetermined when an alpha is no longer determined.
  std::pair<TensorPattern, IsaPatternVariant> build() {
    const hlo::Computation& entry = module_.entry_computation();
    const auto& ins = entry.instructions;
    builder_ = TensorPatternBuilder();
    refs_.assign(ins.size(), std::nullopt);
    texts_.assign(ins.size(), std::string());
    slots_.assign(ins.size(), {std::string(), false});
    pending_checks_.clear();
    if (ins[plan_.top].opcode == hlo::Opcode::Parameter || plan_.chain_top[plan_.top] >= 0)
      throw Skip{"no operator is left once the identities are skipped"};
    IsaPatternVariant variant;
    computations_ = 0;
    const egraph::PatternRef root = visit(static_cast<int>(plan_.entry));
    // Accumulating from zero is for computations: an add of zero to a bare reinterpretation of
    // an input would only be a slower copy (vpaddd(0, x), a load through vaddps).
    if (computations_ == 0 && std::find(plan_.zero_input.begin(), plan_.zero_input.end(), true) != plan_.zero_input.end())
      throw Skip{"only a movement of an input is left once the zero summand is skipped"};
    TensorPattern pattern = builder_.build(root);
    variant.pattern_text = texts_[plan_.entry];
    for (std::size_t at = 0; at < ins.size(); ++at)
      if ((plan_.skip[at] && refs_[at]) || plan_.in_peel[at]) variant.skipped.push_back(ins[at].name);
    for (std::size_t r : plan_.root_chain) variant.root_chain.push_back(step_of(r));
    for (auto& [name, check] : pending_checks_) {
      check.slot = pattern.slot(name);
      variant.checks.push_back(check);
    }
    for (std::size_t k = 0; k < inst_.inputs.size(); ++k) {
      InputBinding b;
      const auto slot = pattern.find_slot(fmt::format("?In{}", k + 1));
      if (slot) {
        for (std::size_t x : plan_.input_chain[k]) b.chain.push_back(step_of(x));
        variant.inputs.push_back(*slot);
      } else {
        b.source = plan_.zero_input[k] ? InputSource::Zero : InputSource::Undefined;
        const auto param = std::find_if(ins.begin(), ins.end(), [&](const hlo::Instruction& i) {
          return i.opcode == hlo::Opcode::Parameter && i.parameter_number == static_cast<std::int64_t>(k);
        });
        if (param == ins.end()) throw Skip{fmt::format("In{} is not a parameter of the semantics", k + 1)};
        const TypeCheck t = type_check(inst_, *param);
        b.dtype = t.dtype;
        b.dims = t.dims;
        variant.inputs.push_back(egraph::Var{});
      }
      variant.bindings.push_back(std::move(b));
    }
    for (std::size_t a = 0; a < inst_.alpha.size(); ++a) {
      bool bound = false;
      for (const auto& c : variant.checks)
        for (const auto& d : c.dims) bound = bound || d.alpha == static_cast<int>(a);
      if (!bound) throw Undetermined{{fmt::format("alpha '{}' is not a dimension of any semantics value", inst_.alpha[a])}};
    }
    return {std::move(pattern), std::move(variant)};
  }
 private:
  const std::vector<hlo::Instruction>& instructions() const { return module_.entry_computation().instructions; }

  ChainStep step_of(std::size_t at) const {
    const hlo::Instruction& i = instructions()[at];
    ChainStep s;
    s.node = i.name;
    s.opcode = i.opcode;
    if (i.opcode == hlo::Opcode::Transpose) s.permutation = i.dimensions;
    const TypeCheck operand = type_check(inst_, instructions()[plan_.resolve(instructions(), static_cast<std::size_t>(i.operands[0]))]);
    s.operand_dtype = operand.dtype;
    s.operand_dims = operand.dims;
    return s;
  }

  egraph::PatternRef visit(int index) {
    const auto at = static_cast<std::size_t>(index);
    if (refs_[at]) return *refs_[at];
    const hlo::Instruction& i = module_.entry_computation().instructions[at];
    egraph::PatternRef ref;
    if (plan_.skip[at]) {
      // An identity: the node is its operand, whose class must also have the node's type.
      const auto operand = static_cast<std::size_t>(i.operands[static_cast<std::size_t>(plan_.skip_operand[at])]);
      ref = visit(static_cast<int>(operand));
      texts_[at] = texts_[operand];
      slots_[at] = slots_[operand];
      TypeCheck c = type_check(inst_, i);
      c.is_capture = slots_[at].second;
      pending_checks_.emplace_back(slots_[at].first, std::move(c));
      refs_[at] = ref;
      return ref;
    }
    if (plan_.chain_top[at] >= 0) {
      // The top of a peeled input chain: ?In_k stands for this node's class (the applier
      // undoes the chain down to the input's type for the Pii).
      const std::string v = fmt::format("?In{}", plan_.chain_top[at] + 1);
      ref = builder_.var(v);
      TypeCheck c = type_check(inst_, i);
      c.is_capture = false;
      pending_checks_.emplace_back(v, std::move(c));
      texts_[at] = fmt::format("{}'", v);
      slots_[at] = {v, false};
    } else if (i.opcode == hlo::Opcode::Parameter) {
      const std::string v = fmt::format("?In{}", i.parameter_number + 1);
      ref = builder_.var(v);
      TypeCheck c = type_check(inst_, i);
      c.is_capture = false;
      pending_checks_.emplace_back(v, std::move(c));
      texts_[at] = v;
      slots_[at] = {v, false};
    } else if (i.opcode == hlo::Opcode::Constant) {
      ++computations_;
      if (!i.literal) throw Skip{"a constant act cannot hold"};
      const Literal value = *i.literal;
      const SelectionContext* context = &context_;
      const std::string capture = fmt::format("@{}", i.name);
      ref = builder_.op(Matcher::of_kind(kConstantDiscriminant,
                                         [context, value](const TensorOp& op) {
                                           const auto id = context->attributes_of(op).index;
                                           return id >= 0 && static_cast<std::size_t>(id) < context->constants.size() &&
                                                  context->constants[id].bitwise_equal(value);
                                         }),
                        {}, capture);
      TypeCheck c = type_check(inst_, i);
      c.is_capture = true;
      pending_checks_.emplace_back(capture, std::move(c));
      slots_[at] = {capture, true};
      opcodes_.push_back(hlo::Opcode::Constant);
      texts_[at] = value.element_count() == 1 ? fmt::format("(constant {})", value.is_tuple() ? 0.0 : value.get_float(0))
                                              : std::string("(constant ...)");
    } else if (plan_.embed[at]) {
      // The update placed in a don't-care window: an Embed node at the same start indices,
      // whose class type (checked below) is the window's and so solves its stride.
      const auto start = constant_start_indices(instructions(), i);
      if (!start) throw Skip{"a dynamic-update-slice at computed start indices"};
      const auto update = static_cast<std::size_t>(i.operands.at(1));
      const egraph::PatternRef child = visit(static_cast<int>(update));
      texts_[at] = fmt::format("(embed :start {} {})", dims_text(*start), texts_[update]);
      const SelectionContext* context = &context_;
      const std::string capture = fmt::format("@{}", i.name);
      const std::vector<std::int64_t> want = *start;
      ref = builder_.op(Matcher::of_kind(kEmbedDiscriminant,
                                         [context, want](const TensorOp& op) {
                                           return op.kind == NodeKind::Embed && context->attributes_of(op).dimensions == want;
                                         }),
                        {child}, capture);
      TypeCheck c = type_check(inst_, i);
      c.is_capture = true;
      pending_checks_.emplace_back(capture, std::move(c));
      slots_[at] = {capture, true};
    } else {
      if (!is_movement(i)) ++computations_;
      const NodeAttributes want = semantic_attributes(module_, i);
      std::vector<egraph::PatternRef> children;
      std::string text = fmt::format("({}{}", hlo::opcode_name(i.opcode), attribute_text(i, want));
      for (int o : i.operands) {
        children.push_back(visit(o));
        text += " " + texts_[static_cast<std::size_t>(o)];
      }
      texts_[at] = text + ")";
      const SelectionContext* context = &context_;
      const std::string capture = fmt::format("@{}", i.name);
      ref = builder_.op(Matcher::of_kind(static_cast<std::uint32_t>(i.opcode),
                                         [context, want](const TensorOp& op) {
                                           return op.kind == NodeKind::Operator &&
                                                  same_attributes(want, context->attributes_of(op));
                                         }),
                        children, capture);
      TypeCheck c = type_check(inst_, i);
      c.is_capture = true;
      pending_checks_.emplace_back(capture, std::move(c));
      slots_[at] = {capture, true};
      opcodes_.push_back(i.opcode);
    }
    refs_[at] = ref;
    return ref;
  }

  const SelectionContext& context_;
  const isa::Instruction& inst_;
  const hlo::Module& module_;
  const SearcherPlan& plan_;
  std::vector<hlo::Opcode>& opcodes_;
  TensorPatternBuilder builder_;
  std::vector<std::optional<egraph::PatternRef>> refs_;
  std::vector<std::string> texts_;
  std::vector<std::pair<std::string, TypeCheck>> pending_checks_;
  std::vector<std::pair<std::string, bool>> slots_;  // per semantics node: slot name, is capture
  int computations_ = 0;  // non-movement operators the pattern holds
};

}  // namespace act::select::isa_rule_detail
