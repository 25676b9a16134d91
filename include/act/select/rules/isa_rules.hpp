// IR->ISA rules (App. B module 2): exactly one conditional rule per ISA instruction, generated
// from its semantics. No rule is written by hand for any instruction.
//
// The semantics is parsed symbolically (backtick dims are -1, their text kept). A rule is one or
// more searchers (Rewrite::or_search), each a pattern of the semantics DAG with some nodes left
// out, all building the same Pii node:
//   rules/isa/searcher_plan.hpp    which nodes a searcher leaves out: identities for a concrete
//                                  alpha, accumulate-from-zero summands, peeled movement chains
//   rules/isa/searcher_pattern.hpp the searcher's pattern and the type checks of every node
//   rules/isa/alpha_solver.hpp     the condition: alpha from the matched types, constraints,
//                                  slices within their buffers, beta satisfiable (Z3)
//   rules/isa/slice_bounds.hpp     those slice bounds, read off the slices' lengths
//   rules/isa/instantiate.hpp      the applier: Pii(instruction, alpha)(inputs) in the class
//   rules/isa/rule_info.hpp        what the condition and applier share
// Don't-care inputs: an input that no longer occurs once nodes are skipped (tilestored's old
// window when the rows cover it) is bound to an Undefined leaf of its type: the result does not
// depend on it, and phase 2 gives it no producer (it is the memory the instruction overwrites).
// The embedding searchers (a dynamic-update-slice at constant indices matched as an Embed node)
// bind the old window the same way: a store that writes part of its window matches the Embed
// windows module 1 builds for overlay^H (select/init/output_overlay.hpp).
// Skipped (with the reason kept in IsaRuleSet::skipped): multi-output instructions (later ISAs)
// and semantics using operators outside the tensor language or alpha that no dim determines.
// Movement instructions (tileloadd, tilestored) also get a rule matched through byte views
// (rules/movement_rules.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/egraph/rewrite.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/semantics.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/rules/isa/alpha_solver.hpp"
#include "act/select/rules/isa/instantiate.hpp"
#include "act/select/rules/isa/slice_bounds.hpp"
#include "act/select/rules/isa/rule_info.hpp"
#include "act/select/rules/isa/searcher_pattern.hpp"
#include "act/select/rules/isa/searcher_plan.hpp"
#include "act/sym/expr.hpp"

namespace act::select {

namespace isa_rule_detail {

class Generator {
 public:
  Generator(SelectionContext& context, std::size_t index, const isa::Instruction& inst)
      : context_(context), inst_(inst) {
    info_ = std::make_shared<IsaRuleInfo>();
    info_->instruction = index;
    info_->name = std::string(inst.name);
  }

  // IsaRuleInfo::slice_bounds (isa/slice_bounds.hpp).
  void add_slice_bounds() {
    for (std::string& bound : isa_rule_detail::slice_bounds(context_.isa, inst_)) {
      info_->parsed_slice_bounds.push_back(sym::parse_shared(bound));
      info_->slice_bounds.push_back(std::move(bound));
    }
  }

  TensorRewrite generate() {
    if (inst_.outputs.size() != 1) throw Skip{"multi-output instruction (not supported yet)"};
    module_ = isa::symbolic_semantics(inst_);
    const hlo::Computation& entry = module_->entry_computation();
    if (entry.root_instruction().shape.is_tuple) throw Skip{"tuple-valued semantics (multi-output)"};
    if (entry.parameters.size() != inst_.inputs.size())
      throw Skip{fmt::format("semantics has {} parameters for {} inputs", entry.parameters.size(), inst_.inputs.size())};
    for (std::string_view constraint : inst_.constraints) {
      const sym::Expr e = sym::parse(constraint);
      bool beta = false;
      for (std::string_view id : sym::free_identifiers(e))
        if (!is_alpha(inst_, id)) beta = true;
      (beta ? info_->beta_constraints : info_->alpha_constraints).emplace_back(constraint);
      if (!beta) info_->parsed_alpha_constraints.push_back(sym::parse_shared(std::string(constraint)));
    }
    add_slice_bounds();
    const SearcherPlanner planner(*module_, inst_);

    std::vector<TensorPattern> patterns;
    std::vector<std::string> keys;  // one per generated searcher, to drop duplicates
    std::string reason;
    for (int embed = 0; embed < (planner.embed_count() > 0 ? 2 : 1); ++embed)
    for (int peel = 0; peel < 2; ++peel)
      for (std::size_t zero_mask = 0; zero_mask < (std::size_t{1} << planner.zero_count()); ++zero_mask)
        for (std::size_t mask = 0; mask < (std::size_t{1} << planner.optional_count()); ++mask) {
          std::optional<SearcherPlan> plan = planner.choose(mask, zero_mask, embed != 0);
          if (!plan) continue;
          try {
            auto built = peel ? build_peeled(planner, *plan) : std::optional(build(*plan));
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

 private:
  using Built = std::pair<TensorPattern, IsaPatternVariant>;

  Built build(const SearcherPlan& plan) {
    return SearcherPatternBuilder(context_, inst_, *module_, plan, info_->opcodes).build();
  }

  // The peeled searcher: the longest root chain (first with input peeling, then without) whose
  // remaining pattern still determines alpha. Nothing when nothing can be peeled.
  std::optional<Built> build_peeled(const SearcherPlanner& planner, SearcherPlan plan) {
    const std::vector<std::size_t> chain = planner.root_chain(plan);
    std::optional<Undetermined> last;
    for (int with_inputs = 1; with_inputs >= 0; --with_inputs)
      for (std::size_t len = chain.size() + 1; len-- > 0;) {
        const bool any_input =
            planner.peel(plan, std::vector<std::size_t>(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(len)),
                         with_inputs != 0);
        if (plan.root_chain.empty() && !any_input) continue;  // that is the plain searcher
        try {
          return build(plan);
        } catch (const Undetermined& u) {
          last = u;
        }
      }
    if (last) throw Skip{last->reason};
    return std::nullopt;
  }

  static std::string variant_key(const IsaPatternVariant& v) {
    std::string key = v.pattern_text + "|" + fmt::format("{}", fmt::join(v.skipped, ","));
    for (const auto& b : v.bindings) key += fmt::format("|{}:{}", static_cast<int>(b.source), b.chain.size());
    return key;
  }

  SelectionContext& context_;
  const isa::Instruction& inst_;
  std::shared_ptr<const hlo::Module> module_;  // shared: isa::symbolic_semantics
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
