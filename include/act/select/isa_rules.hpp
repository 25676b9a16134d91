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
// Identities for a concrete alpha: a slice or reshape whose result may have its operand's shape
// (a dim is symbolic), a broadcast with dims {0..r-1} likewise, and a dynamic-update-slice whose
// update may cover the whole operand are "possibly identity" nodes. The rule gets one searcher
// per choice of which of them to skip (still ONE rule per instruction: Rewrite::or_search): a
// skipped node's type check applies to its operand's class (the update for a
// dynamic-update-slice), which holds exactly when the node is an identity for the alpha solved
// (tileloadd at stride 64 matches `bitcast(reshape(In1))`, no full-range slice needed). A node
// with literal equal shapes is always skipped; a dynamic-update-slice (outside the tensor
// language) is always skipped, so its rule only covers the alpha where it is an identity. A
// searcher in which an input no longer occurs (tilestored's old window) is not generated.
// Register unit types: semantics usually reshape a register value at its edges (AMX: ROOT
// s8[1,16,64] = reshape(s8[16,64]); tdpbusd reads In2 as reshape(In2) to s8[16,16,4]), while a
// kernel graph never holds the unit shape itself. So every rule also gets the "peeled" copy of
// each of its searchers: the ROOT reshape and every reshape that is the only use of a
// literal-shaped parameter are left out of the pattern (their operand class, resp. the
// reshape's class, is matched, with that type). The applier puts them back, which is exact
// because a row-major reshape of a reshape is the reshape of the original: it unites the
// matched class with reshape(Pii) and gives the Pii reshape(X) for a peeled input class X (an
// existing reshape node of X whose operand has the input's type is reused instead).
// Skipped (with the reason kept in IsaRuleSet::skipped): multi-output instructions (later ISAs)
// and semantics using operators outside the tensor language or alpha that no dim determines.
#pragma once

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
#include "act/select/init.hpp"
#include "act/select/tensor_graph.hpp"
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

// One searcher of a rule: the semantics with some identity nodes skipped.
struct IsaPatternVariant {
  std::string pattern_text;
  std::vector<TypeCheck> checks;    // in pattern pre-order; a skipped node's check is on its operand
  std::vector<egraph::Var> inputs;  // ?In1..?Ink slots of this searcher
  std::vector<std::string> skipped; // semantics names of the identity nodes skipped
  // Peeled searchers (see the header comment): the ROOT reshape is left out, so the applier
  // adds reshape(Pii) at the matched class's type; per input (by number): the shape the
  // matched class is reshaped to for the Pii, when that input's reshape is left out.
  bool root_peeled = false;
  std::vector<std::optional<std::vector<std::int64_t>>> input_reshape;

  bool peeled() const {
    bool any = root_peeled;
    for (const auto& r : input_reshape) any = any || r.has_value();
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
    classify_identities();

    classify_peelable();

    std::vector<TensorPattern> patterns;
    std::string reason;
    for (int peel = 0; peel < (peelable_.empty() ? 1 : 2); ++peel) {
      for (std::size_t mask = 0; mask < (std::size_t{1} << optional_.size()); ++mask) {
        skip_ = forced_;
        for (std::size_t b = 0; b < optional_.size(); ++b)
          if (mask & (std::size_t{1} << b)) skip_[optional_[b]] = true;
        peel_.assign(skip_.size(), false);
        if (peel)
          for (std::size_t at : peelable_) peel_[at] = !skip_[at];
        try {
          auto [pattern, variant] = build_variant();
          bool duplicate = false;  // a peeled searcher whose reshapes were all skipped anyway
          for (const auto& other : info_->variants)
            duplicate = duplicate || (other.pattern_text == variant.pattern_text &&
                                      other.root_peeled == variant.root_peeled &&
                                      other.input_reshape == variant.input_reshape);
          if (duplicate) continue;
          patterns.push_back(std::move(pattern));
          info_->variants.push_back(std::move(variant));
        } catch (const Skip& s) {
          if (reason.empty()) reason = s.reason;
        }
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
        const IsaPatternVariant& variant = info->variants[v];
        std::vector<Id> children;
        for (std::size_t k = 0; k < variant.inputs.size(); ++k) {
          const Id x = g.find(s[variant.inputs[k]]);
          if (k < variant.input_reshape.size() && variant.input_reshape[k])
            children.push_back(reshaped_to(g, *context, x, *variant.input_reshape[k]));
          else
            children.push_back(x);
        }
        const Id pii = g.add(make_pii(context->attributes, info->instruction, std::move(*alpha)), children);
        if (!variant.root_peeled) return pii;
        NodeAttributes a;
        a.shape = g.data(g.find(cls)).type.dims;
        return g.add(make_operator(context->attributes, hlo::Opcode::Reshape, a), {pii});
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
    const Shape& type = g.data(x).type;
    if (type.dims == dims) return x;
    for (auto n : g.eclass(x).nodes) {
      const auto node = g.node(n);
      if (node.op.kind != NodeKind::Operator || node.op.opcode != hlo::Opcode::Reshape || node.children.size() != 1)
        continue;
      const Id child = g.find(node.children[0]);
      const Shape& ct = g.data(child).type;
      if (!ct.is_tuple && ct.dtype == type.dtype && ct.dims == dims) return child;
    }
    NodeAttributes a;
    a.shape = dims;
    return g.add(make_operator(context.attributes, hlo::Opcode::Reshape, a), {x});
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

  // forced_: identity nodes always skipped; optional_: nodes skipped in some searchers (at most
  // 4, so at most 16 searchers).
  void classify_identities() {
    const auto& instructions = module_.entry_computation().instructions;
    forced_.assign(instructions.size(), false);
    optional_.clear();
    for (std::size_t at = 0; at < instructions.size(); ++at) {
      const hlo::Instruction& i = instructions[at];
      const int k = identity_operand(i);
      if (k < 0 || i.shape.is_tuple) continue;
      const hlo::Instruction& o = instructions[static_cast<std::size_t>(i.operands[static_cast<std::size_t>(k)])];
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

  // The reshapes a peeled searcher leaves out (see the header comment): the ROOT reshape, and a
  // reshape that is the only use of a parameter with a literal shape.
  void classify_peelable() {
    const hlo::Computation& entry = module_.entry_computation();
    const auto& instructions = entry.instructions;
    peelable_.clear();
    std::vector<int> uses(instructions.size(), 0);
    for (const auto& i : instructions)
      for (int o : i.operands) ++uses[static_cast<std::size_t>(o)];
    for (std::size_t at = 0; at < instructions.size(); ++at) {
      const hlo::Instruction& i = instructions[at];
      if (i.opcode != hlo::Opcode::Reshape || i.operands.size() != 1 || i.shape.is_tuple || forced_[at]) continue;
      const hlo::Instruction& o = instructions[static_cast<std::size_t>(i.operands[0])];
      if (o.shape.is_tuple) continue;
      const bool root = static_cast<int>(at) == entry.root && o.opcode != hlo::Opcode::Parameter;
      bool literal_input = o.opcode == hlo::Opcode::Parameter && uses[static_cast<std::size_t>(i.operands[0])] == 1;
      for (std::size_t d = 0; literal_input && d < o.shape.dims.size(); ++d)
        literal_input = d >= o.dimension_expressions.size() || o.dimension_expressions[d].empty();
      if (root || literal_input) peelable_.push_back(at);
    }
  }

  std::pair<TensorPattern, IsaPatternVariant> build_variant() {
    const hlo::Computation& entry = module_.entry_computation();
    builder_ = TensorPatternBuilder();
    refs_.assign(entry.instructions.size(), std::nullopt);
    texts_.assign(entry.instructions.size(), std::string());
    slots_.assign(entry.instructions.size(), {std::string(), false});
    pending_checks_.clear();
    IsaPatternVariant variant;
    variant.input_reshape.assign(inst_.inputs.size(), std::nullopt);
    int top = entry.root;
    if (peel_[static_cast<std::size_t>(top)]) {
      variant.root_peeled = true;
      top = entry.root_instruction().operands[0];
    }
    const egraph::PatternRef root = visit(top);
    TensorPattern pattern = builder_.build(root);
    variant.pattern_text = texts_[static_cast<std::size_t>(top)];
    for (std::size_t at = 0; at < skip_.size(); ++at) {
      if (skip_[at] && refs_[at]) variant.skipped.push_back(entry.instructions[at].name);
      if (peel_[at] && (refs_[at] || static_cast<int>(at) == entry.root))
        variant.skipped.push_back(entry.instructions[at].name);
      if (peel_[at] && refs_[at]) {
        const hlo::Instruction& param = entry.instructions[static_cast<std::size_t>(entry.instructions[at].operands[0])];
        const auto k = static_cast<std::size_t>(param.parameter_number);
        if (k < variant.input_reshape.size()) variant.input_reshape[k] = param.shape.dims;
      }
    }
    for (auto& [name, check] : pending_checks_) {
      check.slot = pattern.slot(name);
      variant.checks.push_back(check);
    }
    for (std::size_t k = 0; k < inst_.inputs.size(); ++k) {
      const std::string v = fmt::format("?In{}", k + 1);
      const auto slot = pattern.find_slot(v);
      if (!slot) throw Skip{fmt::format("In{} does not occur in the semantics{}", k + 1,
                                        variant.skipped.empty() ? std::string()
                                                                : fmt::format(" once {} (an identity) is skipped",
                                                                              fmt::join(variant.skipped, ", ")))};
      variant.inputs.push_back(*slot);
    }
    for (std::size_t a = 0; a < inst_.alpha.size(); ++a) {
      bool bound = false;
      for (const auto& c : variant.checks)
        for (const auto& d : c.dims) bound = bound || d.alpha == static_cast<int>(a);
      if (!bound) throw Skip{fmt::format("alpha '{}' is not a dimension of any semantics value", inst_.alpha[a])};
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
      const auto operand = static_cast<std::size_t>(i.operands[static_cast<std::size_t>(identity_operand(i))]);
      ref = visit(static_cast<int>(operand));
      texts_[at] = texts_[operand];
      slots_[at] = slots_[operand];
      TypeCheck c = type_check(i);
      c.is_capture = slots_[at].second;
      pending_checks_.emplace_back(slots_[at].first, std::move(c));
      refs_[at] = ref;
      return ref;
    }
    if (peel_[at]) {
      // A peeled input reshape: ?In_k stands for the reshape's class (the applier reshapes it
      // back to the parameter's type for the Pii).
      const hlo::Instruction& param = module_.entry_computation().instructions[static_cast<std::size_t>(i.operands[0])];
      const std::string v = fmt::format("?In{}", param.parameter_number + 1);
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
  std::vector<bool> forced_, skip_;                   // per semantics node
  std::vector<std::size_t> optional_;                 // possibly-identity nodes
  std::vector<std::size_t> peelable_;                 // reshapes a peeled searcher leaves out
  std::vector<bool> peel_;                            // per semantics node, this searcher
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
  for (std::size_t v = 1; v < info.variants.size(); ++v)
    out += fmt::format("  or         {}  ({} {})\n", info.variants[v].pattern_text,
                       info.variants[v].peeled() ? "without" : "when",
                       fmt::join(info.variants[v].skipped, ", "));
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
