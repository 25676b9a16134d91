// IR->ISA rules (App. B module 2): exactly one conditional rule per ISA instruction, generated
// from its semantics. No rule is written by hand for any instruction.
//
// The semantics is parsed symbolically (backtick dims are -1, their text kept). The searcher
// pattern is the semantics DAG from ROOT: parameter In_k is the variable ?In_k (a parameter
// used twice is one variable, and a shared operator such as softmax's exponential(In1) is one
// pattern node, so the pattern is a DAG); every operator is matched by opcode + its non-shape
// attributes (permutation, dot dims, reduce kind and dims, broadcast dims, element type of
// convert/dot, ...); a constant matches a Constant node holding the same value. Operator
// nodes are captured so the condition can read the type of every matched class.
// The condition solves alpha from those types: for every pattern node its class must have the
// semantics dtype and rank, a literal dim must be equal, a dim written as a single alpha name
// binds it (n = shape[0] of bf16[n,64]), other dim expressions (n * 128) are evaluated once
// alpha is known and must be equal. Then every constraint over alpha alone must hold, and the
// constraints mentioning beta must be satisfiable for some beta in the buffer ranges (Z3, cached
// per alpha). The applier adds Pii(instruction, alpha)(In_1, ..., In_k) to the matched class.
//
// Extra searchers (still ONE rule per instruction: Rewrite::or_search), one per combination of:
// * Identities for a concrete alpha. A slice or reshape whose result may have its operand's
//   shape (a dim is symbolic), a broadcast with dims {0..r-1} likewise, and a
//   dynamic-update-slice whose update may cover the whole operand are "possibly identity"
//   nodes; a searcher per choice of which of them to skip. A skipped node's type check applies
//   to its operand's class (the update for a dynamic-update-slice), which holds exactly when the
//   node is an identity for the alpha solved (tileloadd at stride 64 matches
//   `bitcast(reshape(In1))`; tilestored's dynamic-update-slice check solves stride = 64 from
//   the update's u8[16,64]). A node with literal equal shapes is always skipped; a
//   dynamic-update-slice (outside the tensor language) is always skipped, so its rule only
//   covers the alpha where it is an identity.
// * Accumulate from zero. An `add(P, Q)` whose operand Q is a pure movement chain from an input
//   In_k (each node single-use) may be skipped: the searcher matches P alone and the applier
//   binds In_k to zeros of its type, broadcast(constant 0) (tilezero's semantics, so tilezero
//   matches that class). Zero is add's neutral element for integers exactly; for floats
//   x + (+0) == x except that -0 becomes +0, equal under IEEE comparison, which we accept.
// * Don't-care inputs. An input that no longer occurs once nodes are skipped (tilestored's old
//   window In2 when the rows cover it) is bound to an Undefined leaf of its type: the result
//   does not depend on it, and phase 2 gives it no producer (it is the memory the instruction
//   overwrites).
// * Peeling (register unit types and reinterpretations). Semantics usually reshape and bitcast
//   a register value at its edges (AMX: ROOT s8[1,16,64] = reshape(bitcast s8[16,16,4] (sum
//   s32[16,16])); tdpbusd reads In2 as reshape(transpose(reshape(In2)))), while a kernel graph
//   holds the values themselves. So every searcher also gets a "peeled" copy that leaves out
//   the maximal chain of invertible movement ops (reshape, transpose, bitcast-convert, also
//   width-changing) at ROOT and above each input (every chain node single-use, the chain ending
//   at a single-use parameter), keeping at least one operator and every alpha determined by
//   the remaining pattern (the root chain is shortened until it is). The applier puts the
//   inverse chains back exactly: the matched class is united with inverse-root-chain(Pii), and
//   a peeled In_k gets inverse-input-chain(matched operand class), types evaluated at the
//   solved alpha. An inverse step reuses an existing node where it can (reshape(reshape(x)),
//   bitcast(bitcast(x)), transpose_p(transpose_p^-1(x)) -> x).
// Skipped (with the reason kept in IsaRuleSet::skipped): multi-output instructions (later ISAs)
// and semantics using operators outside the tensor language or alpha that no dim determines.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <z3++.h>

#include "act/core/error.hpp"
#include "act/egraph/pattern.hpp"
#include "act/egraph/rewrite.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/shape_check.hpp"
#include "act/select/init/kernel_graph.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/sym/expr.hpp"
#include "act/sym/z3.hpp"

namespace act::select {

// One dim of a semantics shape: a literal, a single alpha name, or an expression over alpha.
struct SymbolicDim {
  std::int64_t literal = -1;  // >= 0 when literal
  std::string text;           // expression text otherwise
  int alpha = -1;             // index of the alpha it names, when it is just that name
};

// What the condition checks for one pattern node.
struct TypeCheck {
  egraph::Var slot;      // variable (a class id) or capture (a node id)
  bool is_capture = false;
  std::string node;      // semantics instruction name, for descriptions
  DType dtype = DType::u8;
  std::vector<SymbolicDim> dims;
};

// One movement node a peeled searcher leaves out, as the applier undoes it: from a class of the
// node's type to a class of its operand's type.
struct ChainStep {
  std::string node;                        // semantics name
  hlo::Opcode opcode = hlo::Opcode::Reshape;  // Reshape, Transpose or BitcastConvert
  std::vector<std::int64_t> permutation;   // Transpose: the node's own permutation
  DType operand_dtype = DType::u8;         // the type the step produces
  std::vector<SymbolicDim> operand_dims;
};

// Where the applier takes an instruction input from.
enum class InputSource : std::uint8_t {
  Matched,    // the class matched by ?In_k, through the input's peeled chain (if any)
  Zero,       // zeros of the input's type (accumulate from zero)
  Undefined,  // a don't-care value of the input's type
};

struct InputBinding {
  InputSource source = InputSource::Matched;
  std::vector<ChainStep> chain;  // Matched: from ?In_k's class (the chain top) down to the input type
  DType dtype = DType::u8;       // the input's type (Zero, Undefined)
  std::vector<SymbolicDim> dims;
};

// One searcher of a rule: the semantics with some nodes skipped or peeled.
struct IsaPatternVariant {
  std::string pattern_text;
  std::vector<TypeCheck> checks;    // in pattern pre-order; a skipped node's check is on its operand
  std::vector<egraph::Var> inputs;  // ?In_k slot per input (unused unless bindings[k] is Matched)
  std::vector<std::string> skipped; // semantics names of the nodes left out (skipped or peeled)
  std::vector<ChainStep> root_chain;  // peeled at ROOT, from ROOT down: applied to the Pii in order
  std::vector<InputBinding> bindings;  // per input

  bool peeled() const {
    bool any = !root_chain.empty();
    for (const auto& b : bindings) any = any || !b.chain.empty();
    return any;
  }
};

// The static description of one generated rule (shared by the rule's closures).
struct IsaRuleInfo {
  std::size_t instruction = 0;
  std::string name;                 // instruction name
  std::string pattern_text;         // s-expression
  std::vector<TypeCheck> checks;    // in pattern pre-order
  std::vector<egraph::Var> inputs;  // ?In1..?Ink slots, by parameter number
  std::vector<std::string> alpha_constraints;  // constraints over alpha only
  std::vector<std::string> beta_constraints;   // constraints mentioning beta
  std::vector<hlo::Opcode> opcodes;            // operators of the patterns (Constant for constants)
  // Every searcher, the primary one (fields above) first; see the header comment.
  std::vector<IsaPatternVariant> variants;
  // Whether beta constraints are satisfiable, per alpha tuple (filled lazily).
  mutable std::map<std::vector<std::int64_t>, bool> beta_satisfiable;
};

struct IsaRuleSet {
  std::vector<TensorRewrite> rules;
  std::vector<std::shared_ptr<const IsaRuleInfo>> infos;  // parallel to rules
  std::vector<std::string> skipped;                       // "name: reason"
};

namespace isa_rule_detail {

using egraph::Id;
using Matcher = egraph::OpMatcher<TensorLanguage>;

struct Skip {
  std::string reason;
};

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

// A searcher whose alpha is no longer determined once nodes are peeled (a shorter peel may fit).
struct Undetermined : Skip {};

inline bool is_movement(const hlo::Instruction& i) {
  return (i.opcode == hlo::Opcode::Reshape || i.opcode == hlo::Opcode::Transpose ||
          i.opcode == hlo::Opcode::BitcastConvert) &&
         i.operands.size() == 1 && !i.shape.is_tuple;
}

class Generator {
 public:
  Generator(SelectionContext& context, std::size_t index, const isa::Instruction& inst)
      : context_(context), inst_(inst) {
    info_ = std::make_shared<IsaRuleInfo>();
    info_->instruction = index;
    info_->name = std::string(inst.name);
  }

  TensorRewrite generate() {
    if (inst_.outputs.size() != 1) throw Skip{"multi-output instruction (not supported yet)"};
    module_ = hlo::parse_semantics(inst_.semantics, hlo::DimensionEvaluator{});
    const hlo::Computation& entry = module_.entry_computation();
    if (entry.root_instruction().shape.is_tuple) throw Skip{"tuple-valued semantics (multi-output)"};
    if (entry.parameters.size() != inst_.inputs.size())
      throw Skip{fmt::format("semantics has {} parameters for {} inputs", entry.parameters.size(), inst_.inputs.size())};
    for (std::string_view constraint : inst_.constraints) {
      const sym::Expr e = sym::parse(constraint);
      bool beta = false;
      for (std::string_view id : sym::free_identifiers(e))
        if (!is_alpha(id)) beta = true;
      (beta ? info_->beta_constraints : info_->alpha_constraints).emplace_back(constraint);
    }
    count_uses();
    classify_identities();
    classify_zero_candidates();

    std::vector<TensorPattern> patterns;
    std::vector<std::string> keys;  // one per generated searcher, to drop duplicates
    std::string reason;
    for (int peel = 0; peel < 2; ++peel)
      for (std::size_t zero_mask = 0; zero_mask < (std::size_t{1} << zero_.size()); ++zero_mask)
        for (std::size_t mask = 0; mask < (std::size_t{1} << optional_.size()); ++mask) {
          if (!choose_skips(mask, zero_mask)) continue;
          try {
            auto built = peel ? build_peeled() : build_plain();
            if (!built) continue;
            auto& [pattern, variant] = *built;
            const std::string key = variant_key(variant);
            if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
            keys.push_back(key);
            patterns.push_back(std::move(pattern));
            info_->variants.push_back(std::move(variant));
          } catch (const Skip& s) {
            if (reason.empty()) reason = s.reason;
          }
        }
    if (patterns.empty()) throw Skip{reason};
    info_->pattern_text = info_->variants[0].pattern_text;
    info_->checks = info_->variants[0].checks;
    info_->inputs = info_->variants[0].inputs;

    std::shared_ptr<const IsaRuleInfo> info = info_;
    SelectionContext* context = &context_;
    const isa::Instruction* inst = &inst_;
    const auto applier = [info, context, inst](std::size_t v) {
      return [info, context, inst, v](TensorGraph& g, Id cls, const egraph::Subst& s) -> std::optional<Id> {
        auto alpha = solve_alpha(*info, *context, *inst, g, cls, s, v);
        if (!alpha) return std::nullopt;
        return build_instance(*info, *context, *inst, g, cls, s, v, *alpha);
      };
    };
    const auto condition = [info, context, inst](std::size_t v) {
      return [info, context, inst, v](const TensorGraph& g, Id cls, const egraph::Subst& s) {
        return solve_alpha(*info, *context, *inst, g, cls, s, v).has_value();
      };
    };
    TensorRewrite rule(fmt::format("isa:{}", inst_.name), std::move(patterns[0]), applier(0));
    rule.when(condition(0));
    for (std::size_t v = 1; v < patterns.size(); ++v) rule.or_search(std::move(patterns[v]), applier(v)).when(condition(v));
    return rule;
  }

  std::shared_ptr<const IsaRuleInfo> info() const { return info_; }

  // Class x presented at shape `dims` (same element count): the operand of an existing reshape
  // node of x when it has that shape (and x's dtype), else a new reshape(x).
  static Id reshaped_to(TensorGraph& g, SelectionContext& context, Id x, const std::vector<std::int64_t>& dims) {
    ChainStep step;
    step.opcode = hlo::Opcode::Reshape;
    step.operand_dtype = g.data(g.find(x)).type.dtype;
    return undo_step(g, context, x, step, dims);
  }

  // The class `step`'s node was applied to, given the class x of its result: step.opcode's
  // inverse applied to x, producing (operand_dtype, dims). An existing node of x that is the
  // step's opcode over a class of that type (for a transpose, with the step's permutation) is
  // the answer already; otherwise a new inverse node is added.
  static Id undo_step(TensorGraph& g, SelectionContext& context, Id x, const ChainStep& step,
                      const std::vector<std::int64_t>& dims) {
    x = g.find(x);
    const Shape& type = g.data(x).type;
    bool identity_permutation = true;
    for (std::size_t d = 0; d < step.permutation.size(); ++d)
      identity_permutation = identity_permutation && step.permutation[d] == static_cast<std::int64_t>(d);
    if (!type.is_tuple && type.dtype == step.operand_dtype && type.dims == dims && identity_permutation) return x;
    for (auto n : g.eclass(x).nodes) {
      const auto node = g.node(n);
      if (node.op.kind != NodeKind::Operator || node.op.opcode != step.opcode || node.children.size() != 1) continue;
      if (step.opcode == hlo::Opcode::Transpose && context.attributes_of(node.op).dimensions != step.permutation) continue;
      const Id child = g.find(node.children[0]);
      const Shape& ct = g.data(child).type;
      if (!ct.is_tuple && ct.dtype == step.operand_dtype && ct.dims == dims) return child;
    }
    NodeAttributes a;
    switch (step.opcode) {
      case hlo::Opcode::Reshape: a.shape = dims; break;
      case hlo::Opcode::BitcastConvert: a.dtype = step.operand_dtype; break;
      case hlo::Opcode::Transpose:
        a.dimensions.assign(step.permutation.size(), 0);
        for (std::size_t d = 0; d < step.permutation.size(); ++d)
          a.dimensions[static_cast<std::size_t>(step.permutation[d])] = static_cast<std::int64_t>(d);
        break;
      default: throw Error(ErrorKind::Internal, fmt::format("IR->ISA rule: {} is not a movement op", hlo::opcode_name(step.opcode)));
    }
    return g.add(make_operator(context.attributes, step.opcode, a), {x});
  }

  // Zeros of `type`: broadcast of a scalar zero constant (the constant interned once per dtype).
  static Id zeros(TensorGraph& g, SelectionContext& context, const Shape& type) {
    const std::string key = fmt::format("isa-zero:{}[]", name(type.dtype));
    std::int64_t id = 0;
    if (auto it = context.patterned_constants.find(key); it != context.patterned_constants.end()) {
      id = it->second;
    } else {
      Literal zero(Shape(type.dtype, {}));  // value-initialised: all bits zero
      id = context.constants.intern(std::move(zero));
      context.patterned_constants.emplace(key, id);
    }
    const Id scalar = g.add(make_constant(context.attributes, id, Shape(type.dtype, {})), {});
    NodeAttributes a;
    a.shape = type.dims;
    return g.add(make_operator(context.attributes, hlo::Opcode::Broadcast, a), {scalar});
  }

  // The nodes a match of searcher v implies, alpha solved: the Pii over its inputs (peeled input
  // chains undone, zero and don't-care inputs built) under the inverse root chain. Nothing when
  // a type cannot be evaluated or the result would not have the matched class's type.
  static std::optional<Id> build_instance(const IsaRuleInfo& info, SelectionContext& context, const isa::Instruction& inst,
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
        const auto r = sym::try_evaluate(sym::parse(d.text), bindings);
        if (!r.ok() || r.value < 0) return std::nullopt;
        out.push_back(r.value);
      }
      return out;
    };
    // Every type first, so a failure leaves the graph untouched.
    std::vector<std::vector<std::vector<std::int64_t>>> input_dims(variant.bindings.size());
    std::vector<std::vector<std::int64_t>> leaf_dims(variant.bindings.size()), root_dims;
    for (std::size_t k = 0; k < variant.bindings.size(); ++k) {
      const InputBinding& b = variant.bindings[k];
      for (const ChainStep& step : b.chain) {
        auto d = evaluate(step.operand_dims);
        if (!d) return std::nullopt;
        input_dims[k].push_back(std::move(*d));
      }
      if (b.source != InputSource::Matched) {
        auto d = evaluate(b.dims);
        if (!d) return std::nullopt;
        leaf_dims[k] = std::move(*d);
      }
    }
    for (const ChainStep& step : variant.root_chain) {
      auto d = evaluate(step.operand_dims);
      if (!d) return std::nullopt;
      root_dims.push_back(std::move(*d));
    }
    std::vector<Id> children;
    for (std::size_t k = 0; k < variant.bindings.size(); ++k) {
      const InputBinding& b = variant.bindings[k];
      switch (b.source) {
        case InputSource::Matched: {
          Id x = g.find(s[variant.inputs[k]]);
          for (std::size_t t = 0; t < b.chain.size(); ++t) x = undo_step(g, context, x, b.chain[t], input_dims[k][t]);
          children.push_back(x);
          break;
        }
        case InputSource::Zero: children.push_back(zeros(g, context, Shape(b.dtype, leaf_dims[k]))); break;
        case InputSource::Undefined:
          children.push_back(g.add(make_undefined(context.attributes, Shape(b.dtype, leaf_dims[k])), {}));
          break;
      }
    }
    Id x = g.add(make_pii(context.attributes, info.instruction, alpha), children);
    for (std::size_t t = 0; t < variant.root_chain.size(); ++t) x = undo_step(g, context, x, variant.root_chain[t], root_dims[t]);
    if (!g.data(g.find(x)).type.same_type(g.data(g.find(cls)).type)) return std::nullopt;  // a semantics inconsistency
    return x;
  }
  // The alpha values this match implies, if it is a valid use of the instruction.
  static std::optional<std::vector<std::int64_t>> solve_alpha(const IsaRuleInfo& info, const SelectionContext& context,
                                                              const isa::Instruction& inst, const TensorGraph& g, Id cls,
                                                              const egraph::Subst& s, std::size_t variant = 0) {
    (void)cls;
    const std::vector<TypeCheck>& checks = variant < info.variants.size() ? info.variants[variant].checks : info.checks;
    std::vector<std::optional<std::int64_t>> alpha(inst.alpha.size());
    for (const TypeCheck& c : checks) {
      const Shape& type = g.data(c.is_capture ? g.find(s[c.slot]) : s[c.slot]).type;
      if (type.is_tuple || type.dtype != c.dtype || type.dims.size() != c.dims.size()) return std::nullopt;
      for (std::size_t d = 0; d < c.dims.size(); ++d) {
        const SymbolicDim& sd = c.dims[d];
        if (sd.literal >= 0) {
          if (type.dims[d] != sd.literal) return std::nullopt;
        } else if (sd.alpha >= 0) {
          auto& slot = alpha[static_cast<std::size_t>(sd.alpha)];
          if (slot && *slot != type.dims[d]) return std::nullopt;
          slot = type.dims[d];
        }
      }
    }
    sym::Bindings bindings;
    std::vector<std::int64_t> values;
    for (std::size_t a = 0; a < alpha.size(); ++a) {
      if (!alpha[a]) return std::nullopt;
      bindings.set(inst.alpha[a], *alpha[a]);
      values.push_back(*alpha[a]);
    }
    for (const TypeCheck& c : checks) {
      const Shape& type = g.data(c.is_capture ? g.find(s[c.slot]) : s[c.slot]).type;
      for (std::size_t d = 0; d < c.dims.size(); ++d) {
        const SymbolicDim& sd = c.dims[d];
        if (sd.literal >= 0 || sd.alpha >= 0) continue;
        const auto r = sym::try_evaluate(sym::parse(sd.text), bindings);
        if (!r.ok() || r.value != type.dims[d]) return std::nullopt;
      }
    }
    for (const std::string& constraint : info.alpha_constraints) {
      const auto r = sym::try_evaluate(sym::parse(constraint), bindings);
      if (!r.ok() || r.value == 0) return std::nullopt;
    }
    if (!beta_satisfiable(info, context, inst, values)) return std::nullopt;
    return values;
  }

  // Some beta within the buffer ranges satisfies the beta constraints (alpha bound): Z3, cached.
  static bool beta_satisfiable(const IsaRuleInfo& info, const SelectionContext& context, const isa::Instruction& inst,
                               const std::vector<std::int64_t>& alpha) {
    if (info.beta_constraints.empty()) return true;
    if (auto it = info.beta_satisfiable.find(alpha); it != info.beta_satisfiable.end()) return it->second;
    std::int64_t largest = 0;
    for (const isa::Buffer& b : context.isa.buffers)
      for (auto d : b.access_dims) largest = std::max(largest, d);
    z3::context ctx;
    z3::solver solver(ctx);
    std::vector<z3::expr> side;
    const auto env = [&](std::string_view id) -> z3::expr {
      for (std::size_t a = 0; a < inst.alpha.size(); ++a)
        if (inst.alpha[a] == id) return ctx.int_val(static_cast<int64_t>(alpha[a]));
      return ctx.int_const(std::string(id).c_str());
    };
    for (std::string_view b : inst.beta) {
      const z3::expr v = ctx.int_const(std::string(b).c_str());
      solver.add(v >= 0 && v <= ctx.int_val(static_cast<int64_t>(largest)));
    }
    for (const std::string& c : info.beta_constraints) {
      const z3::expr e = sym::to_z3(sym::parse(c), ctx, env, &side);
      solver.add(e.is_bool() ? e : e != ctx.int_val(0));
    }
    for (const auto& s : side) solver.add(s);
    const bool ok = solver.check() != z3::unsat;
    info.beta_satisfiable.emplace(alpha, ok);
    return ok;
  }


 private:
  // An add whose operand `zero_operand` is a pure movement chain from input `input`.
  struct ZeroCandidate {
    std::size_t add = 0;
    int kept_operand = 0;   // operand position of the other summand, which the searcher matches
    std::size_t input = 0;  // parameter number bound to zeros
  };

  const std::vector<hlo::Instruction>& instructions() const { return module_.entry_computation().instructions; }

  // The operand a possibly-identity node equals when it is an identity, or -1.
  static int identity_operand(const hlo::Instruction& i) {
    switch (i.opcode) {
      case hlo::Opcode::Slice:
      case hlo::Opcode::Reshape: return i.operands.size() == 1 ? 0 : -1;
      case hlo::Opcode::Broadcast:
        for (std::size_t d = 0; d < i.dimensions.size(); ++d)
          if (i.dimensions[d] != static_cast<std::int64_t>(d)) return -1;
        return i.operands.size() == 1 ? 0 : -1;
      case hlo::Opcode::DynamicUpdateSlice: return i.operands.size() >= 2 ? 1 : -1;
      default: return -1;
    }
  }

  void count_uses() {
    uses_full_.assign(instructions().size(), 0);
    for (const auto& i : instructions())
      for (int o : i.operands) ++uses_full_[static_cast<std::size_t>(o)];
  }

  // forced_: identity nodes always skipped; optional_: nodes skipped in some searchers (at most
  // 4, so at most 16 searchers).
  void classify_identities() {
    const auto& ins = instructions();
    forced_.assign(ins.size(), false);
    optional_.clear();
    for (std::size_t at = 0; at < ins.size(); ++at) {
      const hlo::Instruction& i = ins[at];
      const int k = identity_operand(i);
      if (k < 0 || i.shape.is_tuple) continue;
      const hlo::Instruction& o = ins[static_cast<std::size_t>(i.operands[static_cast<std::size_t>(k)])];
      if (o.shape.is_tuple || o.shape.dtype != i.shape.dtype || o.shape.dims.size() != i.shape.dims.size()) continue;
      bool possible = true, literal_equal = true;
      for (std::size_t d = 0; d < i.shape.dims.size(); ++d) {
        const SymbolicDim a = symbolic_dim(i, d), b = symbolic_dim(o, d);
        if (a.literal >= 0 && b.literal >= 0) possible = possible && a.literal == b.literal;
        else literal_equal = false;
      }
      if (!possible) continue;
      if (literal_equal || i.opcode == hlo::Opcode::DynamicUpdateSlice) forced_[at] = true;
      else if (optional_.size() < 4) optional_.push_back(at);
    }
  }

  // Adds one of whose summands is a pure chain of single-use movement (or always-identity)
  // nodes from a single-use input: the accumulate-from-zero searchers skip them (at most 2).
  void classify_zero_candidates() {
    const auto& ins = instructions();
    zero_.clear();
    for (std::size_t at = 0; at < ins.size() && zero_.size() < 2; ++at) {
      const hlo::Instruction& i = ins[at];
      if (i.opcode != hlo::Opcode::Add || i.operands.size() != 2 || i.shape.is_tuple) continue;
      // zero is add's neutral element for integers and (up to the sign of zero) floats
      if (!is_integer(i.shape.dtype) && !is_float(i.shape.dtype)) continue;
      for (int j = 0; j < 2 && zero_.size() < 2; ++j) {
        auto c = static_cast<std::size_t>(i.operands[static_cast<std::size_t>(j)]);
        while (uses_full_[c] == 1) {
          const hlo::Instruction& x = ins[c];
          if (x.opcode == hlo::Opcode::Parameter) {
            zero_.push_back(ZeroCandidate{at, 1 - j, static_cast<std::size_t>(x.parameter_number)});
            break;
          }
          if (is_movement(x)) c = static_cast<std::size_t>(x.operands[0]);
          else if (forced_[c]) c = static_cast<std::size_t>(x.operands[static_cast<std::size_t>(identity_operand(x))]);
          else break;
        }
      }
    }
  }

  // The skipped nodes of one searcher; false when the choice is contradictory (two zero
  // summands of one add).
  bool choose_skips(std::size_t mask, std::size_t zero_mask) {
    const auto& ins = instructions();
    skip_ = forced_;
    skip_operand_.assign(ins.size(), 0);
    for (std::size_t at = 0; at < ins.size(); ++at)
      if (forced_[at]) skip_operand_[at] = identity_operand(ins[at]);
    for (std::size_t b = 0; b < optional_.size(); ++b)
      if (mask & (std::size_t{1} << b)) {
        skip_[optional_[b]] = true;
        skip_operand_[optional_[b]] = identity_operand(ins[optional_[b]]);
      }
    zero_input_.assign(inst_.inputs.size(), false);
    for (std::size_t z = 0; z < zero_.size(); ++z) {
      if (!(zero_mask & (std::size_t{1} << z))) continue;
      if (skip_[zero_[z].add]) return false;
      skip_[zero_[z].add] = true;
      skip_operand_[zero_[z].add] = zero_[z].kept_operand;
      if (zero_[z].input < zero_input_.size()) zero_input_[zero_[z].input] = true;
    }
    return true;
  }

  std::size_t resolve(std::size_t at) const {
    const auto& ins = instructions();
    for (std::size_t guard = 0; skip_[at] && guard <= ins.size(); ++guard)
      at = static_cast<std::size_t>(ins[at].operands[static_cast<std::size_t>(skip_operand_[at])]);
    return at;
  }

  // Uses and (single) users of the nodes a searcher reaches once its skipped nodes are removed.
  void compute_effective() {
    const auto& ins = instructions();
    const std::size_t n = ins.size();
    top0_ = resolve(static_cast<std::size_t>(module_.entry_computation().root));
    uses_.assign(n, 0);
    user_.assign(n, -1);
    reached_.assign(n, false);
    std::vector<std::size_t> stack{top0_};
    reached_[top0_] = true;
    while (!stack.empty()) {
      const std::size_t at = stack.back();
      stack.pop_back();
      for (int o : ins[at].operands) {
        const std::size_t r = resolve(static_cast<std::size_t>(o));
        ++uses_[r];
        user_[r] = static_cast<int>(at);
        if (!reached_[r]) {
          reached_[r] = true;
          stack.push_back(r);
        }
      }
    }
  }

  void clear_peel() {
    const std::size_t n = instructions().size();
    root_chain_.clear();
    chain_top_.assign(n, -1);
    in_peel_.assign(n, false);
    input_chain_.assign(inst_.inputs.size(), {});
    top_ = top0_;
    entry_ = static_cast<std::size_t>(module_.entry_computation().root);
  }

  using Built = std::optional<std::pair<TensorPattern, IsaPatternVariant>>;

  Built build_plain() {
    compute_effective();
    clear_peel();
    return build_variant();
  }

  // The peeled searcher: the longest root chain (then with no input peeling) whose remaining
  // pattern still determines alpha. Nothing when nothing can be peeled.
  Built build_peeled() {
    const auto& ins = instructions();
    compute_effective();
    std::vector<std::size_t> chain;
    for (std::size_t r = top0_; is_movement(ins[r]);) {
      const std::size_t o = resolve(static_cast<std::size_t>(ins[r].operands[0]));
      if (ins[o].opcode == hlo::Opcode::Parameter || uses_[o] != 1) break;
      chain.push_back(r);
      r = o;
    }
    std::optional<Undetermined> last;
    for (int with_inputs = 1; with_inputs >= 0; --with_inputs)
      for (std::size_t len = chain.size() + 1; len-- > 0;) {
        clear_peel();
        root_chain_.assign(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(len));
        for (std::size_t r : root_chain_) {
          in_peel_[r] = true;
          entry_ = static_cast<std::size_t>(ins[r].operands[0]);
          top_ = resolve(entry_);
        }
        bool any_input = false;
        if (with_inputs) any_input = peel_inputs();
        if (root_chain_.empty() && !any_input) continue;  // that is the plain searcher
        try {
          return build_variant();
        } catch (const Undetermined& u) {
          last = u;
        }
      }
    if (last) throw Skip{last->reason};
    return std::nullopt;
  }

  // Input chains: from each single-use input up through single-use movement nodes, never
  // taking the pattern's top or a root-chain node. True if any input is peeled.
  bool peel_inputs() {
    const auto& ins = instructions();
    bool any = false;
    for (std::size_t p = 0; p < ins.size(); ++p) {
      if (ins[p].opcode != hlo::Opcode::Parameter || !reached_[p] || uses_[p] != 1) continue;
      const auto k = static_cast<std::size_t>(ins[p].parameter_number);
      if (k >= input_chain_.size()) continue;
      std::vector<std::size_t> chain;
      std::size_t c = p;
      while (uses_[c] == 1) {
        const int u = user_[c];
        if (u < 0) break;
        const auto user = static_cast<std::size_t>(u);
        if (user == top_ || in_peel_[user] || !is_movement(ins[user])) break;
        chain.push_back(user);
        c = user;
      }
      if (chain.empty()) continue;
      chain_top_[c] = static_cast<int>(k);
      for (std::size_t x : chain) in_peel_[x] = true;
      input_chain_[k].assign(chain.rbegin(), chain.rend());
      any = true;
    }
    return any;
  }

  ChainStep step_of(std::size_t at) const {
    const hlo::Instruction& i = instructions()[at];
    ChainStep s;
    s.node = i.name;
    s.opcode = i.opcode;
    if (i.opcode == hlo::Opcode::Transpose) s.permutation = i.dimensions;
    const TypeCheck operand = type_check(instructions()[resolve(static_cast<std::size_t>(i.operands[0]))]);
    s.operand_dtype = operand.dtype;
    s.operand_dims = operand.dims;
    return s;
  }

  static std::string variant_key(const IsaPatternVariant& v) {
    std::string key = v.pattern_text + "|" + fmt::format("{}", fmt::join(v.skipped, ","));
    for (const auto& b : v.bindings) key += fmt::format("|{}:{}", static_cast<int>(b.source), b.chain.size());
    return key;
  }

  std::pair<TensorPattern, IsaPatternVariant> build_variant() {
    const hlo::Computation& entry = module_.entry_computation();
    const auto& ins = entry.instructions;
    builder_ = TensorPatternBuilder();
    refs_.assign(ins.size(), std::nullopt);
    texts_.assign(ins.size(), std::string());
    slots_.assign(ins.size(), {std::string(), false});
    pending_checks_.clear();
    if (ins[top_].opcode == hlo::Opcode::Parameter || chain_top_[top_] >= 0)
      throw Skip{"no operator is left once the identities are skipped"};
    IsaPatternVariant variant;
    computations_ = 0;
    const egraph::PatternRef root = visit(static_cast<int>(entry_));
    // Accumulating from zero is for computations: an add of zero to a bare reinterpretation of
    // an input would only be a slower copy (vpaddd(0, x), a load through vaddps).
    if (computations_ == 0 && std::find(zero_input_.begin(), zero_input_.end(), true) != zero_input_.end())
      throw Skip{"only a movement of an input is left once the zero summand is skipped"};
    TensorPattern pattern = builder_.build(root);
    variant.pattern_text = texts_[entry_];
    for (std::size_t at = 0; at < ins.size(); ++at)
      if ((skip_[at] && refs_[at]) || in_peel_[at]) variant.skipped.push_back(ins[at].name);
    for (std::size_t r : root_chain_) variant.root_chain.push_back(step_of(r));
    for (auto& [name, check] : pending_checks_) {
      check.slot = pattern.slot(name);
      variant.checks.push_back(check);
    }
    for (std::size_t k = 0; k < inst_.inputs.size(); ++k) {
      InputBinding b;
      const auto slot = pattern.find_slot(fmt::format("?In{}", k + 1));
      if (slot) {
        for (std::size_t x : input_chain_[k]) b.chain.push_back(step_of(x));
        variant.inputs.push_back(*slot);
      } else {
        b.source = zero_input_[k] ? InputSource::Zero : InputSource::Undefined;
        const auto param = std::find_if(ins.begin(), ins.end(), [&](const hlo::Instruction& i) {
          return i.opcode == hlo::Opcode::Parameter && i.parameter_number == static_cast<std::int64_t>(k);
        });
        if (param == ins.end()) throw Skip{fmt::format("In{} is not a parameter of the semantics", k + 1)};
        const TypeCheck t = type_check(*param);
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
  bool is_alpha(std::string_view id) const {
    for (std::string_view a : inst_.alpha)
      if (a == id) return true;
    return false;
  }

  SymbolicDim symbolic_dim(const hlo::Instruction& i, std::size_t d) const {
    SymbolicDim sd;
    const std::string text = d < i.dimension_expressions.size() ? i.dimension_expressions[d] : std::string();
    if (text.empty()) {
      sd.literal = i.shape.dims[d];
      return sd;
    }
    sd.text = text;
    const sym::Expr e = sym::parse(sd.text);
    if (e.top().op == sym::Op::Var)
      for (std::size_t a = 0; a < inst_.alpha.size(); ++a)
        if (inst_.alpha[a] == e.top().name) sd.alpha = static_cast<int>(a);
    if (e.top().op == sym::Op::Const) {
      sd.literal = e.top().value;
      sd.text.clear();
    }
    for (std::string_view id : sym::free_identifiers(e))
      if (!is_alpha(id)) throw Skip{fmt::format("dimension '{}' mentions '{}', which is not alpha", text, id)};
    return sd;
  }

  TypeCheck type_check(const hlo::Instruction& i) const {
    if (i.shape.is_tuple) throw Skip{"tuple-valued intermediate"};
    TypeCheck c;
    c.node = i.name;
    c.dtype = i.shape.dtype;
    for (std::size_t d = 0; d < i.shape.dims.size(); ++d) c.dims.push_back(symbolic_dim(i, d));
    return c;
  }

  egraph::PatternRef visit(int index) {
    const auto at = static_cast<std::size_t>(index);
    if (refs_[at]) return *refs_[at];
    const hlo::Instruction& i = module_.entry_computation().instructions[at];
    egraph::PatternRef ref;
    if (skip_[at]) {
      // An identity: the node is its operand, whose class must also have the node's type.
      const auto operand = static_cast<std::size_t>(i.operands[static_cast<std::size_t>(skip_operand_[at])]);
      ref = visit(static_cast<int>(operand));
      texts_[at] = texts_[operand];
      slots_[at] = slots_[operand];
      TypeCheck c = type_check(i);
      c.is_capture = slots_[at].second;
      pending_checks_.emplace_back(slots_[at].first, std::move(c));
      refs_[at] = ref;
      return ref;
    }
    if (chain_top_[at] >= 0) {
      // The top of a peeled input chain: ?In_k stands for this node's class (the applier
      // undoes the chain down to the input's type for the Pii).
      const std::string v = fmt::format("?In{}", chain_top_[at] + 1);
      ref = builder_.var(v);
      TypeCheck c = type_check(i);
      c.is_capture = false;
      pending_checks_.emplace_back(v, std::move(c));
      texts_[at] = fmt::format("{}'", v);
      slots_[at] = {v, false};
    } else if (i.opcode == hlo::Opcode::Parameter) {
      const std::string v = fmt::format("?In{}", i.parameter_number + 1);
      ref = builder_.var(v);
      TypeCheck c = type_check(i);
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
      TypeCheck c = type_check(i);
      c.is_capture = true;
      pending_checks_.emplace_back(capture, std::move(c));
      slots_[at] = {capture, true};
      info_->opcodes.push_back(hlo::Opcode::Constant);
      texts_[at] = value.element_count() == 1 ? fmt::format("(constant {})", value.is_tuple() ? 0.0 : value.get_float(0))
                                              : std::string("(constant ...)");
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
      TypeCheck c = type_check(i);
      c.is_capture = true;
      pending_checks_.emplace_back(capture, std::move(c));
      slots_[at] = {capture, true};
      info_->opcodes.push_back(i.opcode);
    }
    refs_[at] = ref;
    return ref;
  }

  SelectionContext& context_;
  const isa::Instruction& inst_;
  hlo::Module module_;
  TensorPatternBuilder builder_;
  std::vector<std::optional<egraph::PatternRef>> refs_;
  std::vector<std::string> texts_;
  std::vector<std::pair<std::string, TypeCheck>> pending_checks_;
  std::vector<std::pair<std::string, bool>> slots_;  // per semantics node: slot name, is capture
  std::vector<int> uses_full_;                        // per semantics node: uses in the semantics
  std::vector<bool> forced_;                          // per semantics node: always skipped
  std::vector<std::size_t> optional_;                 // possibly-identity nodes
  std::vector<ZeroCandidate> zero_;                   // accumulate-from-zero choices
  // This searcher: skipped nodes and the operand position each one stands for, zero inputs.
  std::vector<bool> skip_;
  std::vector<int> skip_operand_;
  std::vector<bool> zero_input_;  // per input
  // This searcher's reachable graph once skipped nodes are removed.
  std::size_t top0_ = 0;
  std::vector<int> uses_, user_;
  std::vector<bool> reached_;
  // This searcher's peeling: the root chain (from ROOT down), the node the pattern starts at
  // (entry_, maybe a skipped node) and its resolved top_, input chain tops and members.
  std::vector<std::size_t> root_chain_;
  std::size_t entry_ = 0, top_ = 0;
  std::vector<int> chain_top_;                     // per semantics node: input number, or -1
  std::vector<bool> in_peel_;                      // per semantics node: in a peeled chain
  std::vector<std::vector<std::size_t>> input_chain_;  // per input: chain nodes, top first
  int computations_ = 0;  // non-movement operators the current searcher's pattern holds
  std::shared_ptr<IsaRuleInfo> info_;
};

}  // namespace isa_rule_detail
// One rule per instruction of context.isa (see the header comment). `context` must outlive the
// rules (they read its attribute and constant tables).
inline IsaRuleSet isa_rules(SelectionContext& context) {
  IsaRuleSet set;
  for (std::size_t i = 0; i < context.isa.instructions.size(); ++i) {
    const isa::Instruction& inst = context.isa.instructions[i];
    try {
      isa_rule_detail::Generator gen(context, i, inst);
      set.rules.push_back(gen.generate());
      set.infos.push_back(gen.info());
    } catch (const isa_rule_detail::Skip& skip) {
      set.skipped.push_back(fmt::format("{}: {}", inst.name, skip.reason));
    }
  }
  return set;
}

// A description of one rule: pattern, how alpha is solved, the checks and constraints.
inline std::string describe(const IsaRuleInfo& info, const isa::Instruction& inst) {
  std::string out = fmt::format("{}:\n  pattern    {}\n", info.name, info.pattern_text);
  for (std::size_t v = 1; v < info.variants.size(); ++v) {
    const IsaPatternVariant& variant = info.variants[v];
    std::vector<std::string> inputs;
    for (std::size_t k = 0; k < variant.bindings.size(); ++k) {
      if (variant.bindings[k].source == InputSource::Zero) inputs.push_back(fmt::format("In{} = 0", k + 1));
      if (variant.bindings[k].source == InputSource::Undefined) inputs.push_back(fmt::format("In{} don't care", k + 1));
    }
    out += fmt::format("  or         {}  ({} {}{}{})\n", variant.pattern_text, variant.peeled() ? "without" : "when",
                       fmt::join(variant.skipped, ", "), inputs.empty() ? "" : "; ", fmt::join(inputs, ", "));
  }
  std::vector<std::string> solved, checked;
  for (const TypeCheck& c : info.checks) {
    for (std::size_t d = 0; d < c.dims.size(); ++d) {
      const SymbolicDim& sd = c.dims[d];
      if (sd.alpha >= 0) {
        const std::string_view a = inst.alpha[static_cast<std::size_t>(sd.alpha)];
        bool seen = false;
        for (const auto& x : solved) seen = seen || x.substr(0, x.find(' ')) == a;
        if (seen) checked.push_back(fmt::format("{}.shape[{}] == {}", c.node, d, a));
        else solved.push_back(fmt::format("{} = {}.shape[{}]", a, c.node, d));
      } else if (sd.literal < 0) {
        checked.push_back(fmt::format("{}.shape[{}] == {}", c.node, d, sd.text));
      }
    }
  }
  out += fmt::format("  alpha      {}\n", solved.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(solved, ", ")));
  if (!checked.empty()) out += fmt::format("  check      {}\n", fmt::join(checked, ", "));
  out += "  types      ";
  for (std::size_t k = 0; k < info.checks.size(); ++k) {
    const TypeCheck& c = info.checks[k];
    std::vector<std::string> dims;
    for (const auto& d : c.dims) dims.push_back(d.literal >= 0 ? std::to_string(d.literal) : d.text);
    out += fmt::format("{}{}: {}[{}]", k ? ", " : "", c.node, name(c.dtype), fmt::join(dims, ","));
  }
  out += "\n";
  if (!info.alpha_constraints.empty()) out += fmt::format("  require    {}\n", fmt::join(info.alpha_constraints, ", "));
  if (!info.beta_constraints.empty())
    out += fmt::format("  satisfiable for some beta  {}\n", fmt::join(info.beta_constraints, ", "));
  out += fmt::format("  builds     pii {}(alpha)({})\n", info.name, inst.inputs.size());
  return out;
}

}  // namespace act::select
