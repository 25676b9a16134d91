// The rule set phase 1 saturates with for one ISA: the IR->IR axioms kept by the filter, one
// generated IR->ISA rule per instruction, the identity instructions slice^H / concat^H, and the
// byte view of constants (constant_rules.hpp: constants are HBM leaves, loads read bytes), and
// the view rule (view_rules.hpp: equal reinterpretations of one value are one class).
//
// Filter (App. B module 2), computed once per ISA to a fixed point over operators:
//   useful := the operators of the IR->ISA patterns, plus slice and concatenate (identity rules)
//   repeat: keep an axiom whose right-hand side builds a useful operator, or builds no new
//           operator at all (it only unites existing classes); its left-hand operators become
//           useful too (producing them lets the kept axiom fire)
//   until nothing changes. Axioms building only operators no kept rule can consume are dropped.
//   An axiom whose result is a binary operator over two data values (AxiomInfo::
//   binary_root_over_data) is kept only where some instruction applies that operator to two
//   values that read its inputs. An axiom building a dot with a transposed contraction
//   (AxiomInfo::builds_transposed_contraction) is kept only where some instruction transposes
//   or contracts non-canonically: on Gemmini, whose matmuls all contract a's last dim with b's
//   first and which never transposes, transpose-as-dot only grew the e-graph. Conversely an
//   axiom that computes a transposed contraction without a transpose (AxiomInfo::
//   replaces_transposed_contraction: a·bᵀ a row at a time) is kept only where none does. An
//   axiom wrapping values in an identity operator (AxiomInfo::wraps_in_instruction_operator:
//   x -> copy(x)) is kept only where some IR->ISA pattern holds that operator: the axioms that
//   push operators through copies make Copy "useful" to the fixed point, yet nothing but them
//   and copy-elimination would ever read the copy node it adds to every class.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/hlo/semantics_outline.hpp"
#include "act/isa/derived_facts.hpp"
#include "act/select/rules/axioms.hpp"
#include "act/select/rules/constant_rules.hpp"
#include "act/select/rules/identity_rules.hpp"
#include "act/select/rules/isa_rules.hpp"
#include "act/select/rules/movement_rules.hpp"
#include "act/select/rules/view_rules.hpp"

namespace act::select {

// What a rule of the set is, so callers never tell rules apart by position.
enum class RuleKind : std::uint8_t {
  Axiom,                // IR->IR (rules/axioms/): may be banned by the backoff scheduler
  Instruction,          // IR->ISA, generated from an instruction's semantics (isa_rules.hpp)
  MovementInstruction,  // IR->ISA for movement instructions, matched through views (movement_rules.hpp)
  Identity,             // slice^H / concat^H (identity_rules.hpp)
  ConstantView,         // the byte view of constants (constant_rules.hpp)
  View,                 // equal views are one class (view_rules.hpp)
};

constexpr std::string_view to_string(RuleKind k) {
  switch (k) {
    case RuleKind::Axiom: return "axiom";
    case RuleKind::Instruction: return "instruction";
    case RuleKind::MovementInstruction: return "movement instruction";
    case RuleKind::Identity: return "identity";
    case RuleKind::ConstantView: return "constant view";
    case RuleKind::View: return "view";
  }
  return "?";
}
inline bool is_instruction_rule(RuleKind k) { return k == RuleKind::Instruction || k == RuleKind::MovementInstruction; }

struct RuleSet {
  std::vector<TensorRewrite> rules;        // kept axioms, IR->ISA rules, identity rules, constant rules
  std::vector<RuleKind> kinds;             // parallel to rules
  IsaRuleSet isa;                          // infos of the IR->ISA rules (its `rules` is moved out)
  std::vector<AxiomInfo> kept_axioms;      // in rule order
  std::vector<std::string> dropped_axioms; // names
  std::size_t axiom_count = 0, isa_rule_count = 0, identity_rule_count = 0, constant_rule_count = 0, view_rule_count = 0;
};

namespace rule_set_detail {

// Calls `visit(const hlo::SemanticsOutline&)` for each instruction whose semantics parse into
// an outline (validate.hpp reports those that do not).
template <typename Visit>
void for_each_outline(const isa::IsaView& isa, Visit visit) {
  for (const auto& instruction : isa.instructions) {
    hlo::SemanticsOutline sem;
    if (hlo::outline_semantics(instruction.semantics, sem).ok()) visit(sem);
  }
}

// The binary operators some instruction applies to two values that both read its inputs (its
// semantics' parameters): AMX's vmulps multiplies two registers; Gemmini's only multiply scales
// a load by a count of constant ones, so it is none.
inline std::vector<hlo::Opcode> binary_operators_over_inputs(const isa::IsaView& isa) {
  std::vector<hlo::Opcode> out;
  for_each_outline(isa, [&out](const hlo::SemanticsOutline& sem) {
    std::vector<bool> reads_input(sem.count, false);
    for (std::size_t i = 0; i < sem.count; ++i) {
      const hlo::OutlineStatement& st = sem.statements[i];
      const auto operand_reads_input = [&](std::size_t k) { return st.operands[k] >= 0 && reads_input[static_cast<std::size_t>(st.operands[k])]; };
      reads_input[i] = st.opcode == hlo::Opcode::Parameter;
      for (std::size_t k = 0; k < st.operand_count; ++k) reads_input[i] = reads_input[i] || operand_reads_input(k);
      if (st.operand_count == 2 && operand_reads_input(0) && operand_reads_input(1) &&
          std::find(out.begin(), out.end(), st.opcode) == out.end())
        out.push_back(st.opcode);
    }
  });
  return out;
}

// A dot in XLA's canonical form: batch dims leading on both operands, then the lhs's last dim
// contracted with the rhs's first non-batch dim (what `dot(a, b)` without attributes means).
inline bool is_canonical_dot(const hlo::SemanticsOutline& sem, const hlo::OutlineStatement& dot) {
  if (dot.operand_count != 2 || dot.operands[0] < 0) return false;
  const std::size_t lhs_rank = sem.statements[static_cast<std::size_t>(dot.operands[0])].rank;
  const auto lhs_batch = dot.attribute("lhs_batch_dims"), rhs_batch = dot.attribute("rhs_batch_dims");
  const auto lhs_contracting = dot.attribute("lhs_contracting_dims"), rhs_contracting = dot.attribute("rhs_contracting_dims");
  const std::size_t batch = lhs_batch.size();
  if (rhs_batch.size() != batch) return false;
  for (std::size_t k = 0; k < batch; ++k)
    if (lhs_batch[k] != static_cast<std::int64_t>(k) || rhs_batch[k] != static_cast<std::int64_t>(k)) return false;
  return lhs_contracting.size() == 1 && rhs_contracting.size() == 1 &&
         lhs_contracting[0] == static_cast<std::int64_t>(lhs_rank) - 1 && rhs_contracting[0] == static_cast<std::int64_t>(batch);
}

// Whether some instruction transposes (a transpose statement, any rank) or contracts in a dot
// that is not canonical: QKV's transpose instructions, AMX's tile layouts; not Gemmini.
inline bool some_instruction_transposes(const isa::IsaView& isa) {
  bool transposes = false;
  for_each_outline(isa, [&transposes](const hlo::SemanticsOutline& sem) {
    for (std::size_t i = 0; i < sem.count; ++i) {
      const hlo::OutlineStatement& st = sem.statements[i];
      if (st.opcode == hlo::Opcode::Transpose || (st.opcode == hlo::Opcode::Dot && !is_canonical_dot(sem, st))) transposes = true;
    }
  });
  return transposes;
}

}  // namespace rule_set_detail

// What the filter reads from the instructions' semantics beyond their IR->ISA patterns.
struct InstructionFacts {
  std::vector<hlo::Opcode> binary_over_inputs;  // rule_set_detail::binary_operators_over_inputs
  bool transposes = false;                      // rule_set_detail::some_instruction_transposes
};

// Read once per process and description (isa/derived_facts.hpp): every rule set asks.
inline const InstructionFacts& instruction_facts(const isa::IsaView& isa) {
  static isa::PerIsaCache<InstructionFacts> cache;
  return *cache.get(isa, [](const isa::IsaView& d) {
    return InstructionFacts{rule_set_detail::binary_operators_over_inputs(d), rule_set_detail::some_instruction_transposes(d)};
  });
}

// Indices of the axioms the filter keeps (see the header comment), ascending.
inline std::vector<std::size_t> filter_axioms(const std::vector<AxiomInfo>& axioms, const IsaRuleSet& isa,
                                              const InstructionFacts& facts = {}) {
  const auto binary_over_data_computed = [&facts](hlo::Opcode op) {
    return std::find(facts.binary_over_inputs.begin(), facts.binary_over_inputs.end(), op) != facts.binary_over_inputs.end();
  };
  std::vector<hlo::Opcode> useful{hlo::Opcode::Slice, hlo::Opcode::Concatenate};
  for (const auto& info : isa.infos) useful.insert(useful.end(), info->opcodes.begin(), info->opcodes.end());
  const std::vector<hlo::Opcode> in_patterns = useful;
  const auto in_some_pattern = [&in_patterns](const std::vector<hlo::Opcode>& ops) {
    return std::any_of(ops.begin(), ops.end(), [&](hlo::Opcode o) { return std::find(in_patterns.begin(), in_patterns.end(), o) != in_patterns.end(); });
  };
  auto is_useful = [&](hlo::Opcode o) { return std::find(useful.begin(), useful.end(), o) != useful.end(); };
  std::vector<bool> kept(axioms.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t a = 0; a < axioms.size(); ++a) {
      if (kept[a]) continue;
      const auto& rhs = axioms[a].rhs_opcodes;
      if (!rhs.empty() && std::none_of(rhs.begin(), rhs.end(), is_useful)) continue;
      if (axioms[a].binary_root_over_data && !binary_over_data_computed(*axioms[a].binary_root_over_data)) continue;
      if (axioms[a].builds_transposed_contraction && !facts.transposes) continue;
      if (axioms[a].replaces_transposed_contraction && facts.transposes) continue;
      if (axioms[a].wraps_in_instruction_operator && !in_some_pattern(rhs)) continue;
      kept[a] = true;
      changed = true;
      for (auto o : axioms[a].lhs_opcodes)
        if (!is_useful(o)) useful.push_back(o);
    }
  }
  std::vector<std::size_t> out;
  for (std::size_t a = 0; a < axioms.size(); ++a)
    if (kept[a]) out.push_back(a);
  return out;
}

// All rules for context.isa; `filter` = false keeps every axiom. The rules keep a pointer to
// `context`. `views` = false leaves out the view rules (tests of the other rules alone).
inline RuleSet rule_set(SelectionContext& context, bool filter = true, bool views = true) {
  RuleSet set;
  set.isa = isa_rules(context);
  std::vector<Axiom> axioms = ir_axiom_set(context);
  std::vector<AxiomInfo> infos;
  for (const auto& a : axioms) infos.push_back(a.info);
  std::vector<std::size_t> keep;
  if (filter) {
    keep = filter_axioms(infos, set.isa, instruction_facts(context.isa));
  } else {
    for (std::size_t a = 0; a < axioms.size(); ++a) keep.push_back(a);
  }
  std::size_t next = 0;
  for (std::size_t a = 0; a < axioms.size(); ++a) {
    if (next < keep.size() && keep[next] == a) {
      set.rules.push_back(std::move(axioms[a].rule));
      set.kept_axioms.push_back(std::move(axioms[a].info));
      ++next;
    } else {
      set.dropped_axioms.push_back(axioms[a].info.name);
    }
  }
  set.axiom_count = set.rules.size();
  set.kinds.assign(set.rules.size(), RuleKind::Axiom);
  const auto add = [&set](TensorRewrite rule, RuleKind kind) {
    set.rules.push_back(std::move(rule));
    set.kinds.push_back(kind);
  };
  for (auto& r : set.isa.rules) add(std::move(r), RuleKind::Instruction);
  set.isa_rule_count = set.isa.infos.size();
  set.isa.rules.clear();
  for (auto& r : identity_rules(context)) {
    add(std::move(r), RuleKind::Identity);
    ++set.identity_rule_count;
  }
  for (auto& r : constant_rules(context)) {
    add(std::move(r), RuleKind::ConstantView);
    ++set.constant_rule_count;
  }
  if (views) {
    add(view_canonical_rule(context), RuleKind::View);
    ++set.view_rule_count;
    if (auto movement = movement_instruction_rule(context)) {
      add(std::move(*movement), RuleKind::MovementInstruction);
      ++set.view_rule_count;
    }
  }
  return set;
}


// `act rules --isa NAME`: the generated IR->ISA rules with their conditions, the identity rules,
// and the axioms the filter keeps (and drops).
inline std::string describe_rules(const isa::IsaView& isa) {
  SelectionContext context;
  context.isa = isa;
  const RuleSet set = rule_set(context);
  std::string out = fmt::format("ISA {}: {} IR->ISA rules, {} identity rules, {} of {} IR->IR axioms kept\n\n", isa.name,
                                set.isa_rule_count, set.identity_rule_count, set.kept_axioms.size(),
                                set.kept_axioms.size() + set.dropped_axioms.size());
  out += "IR->ISA rules (generated from the semantics):\n";
  for (const auto& info : set.isa.infos) out += describe(*info, isa.instructions[info->instruction]);
  for (const auto& s : set.isa.skipped) out += fmt::format("skipped {}\n", s);
  out += "\nidentity rules:\n";
  for (std::size_t r = 0; r < set.rules.size(); ++r)
    if (set.kinds[r] == RuleKind::Identity) out += fmt::format("  {}\n", set.rules[r].name());
  out += "\nconstant and view rules:\n";
  for (std::size_t r = 0; r < set.rules.size(); ++r)
    if (set.kinds[r] == RuleKind::ConstantView || set.kinds[r] == RuleKind::View || set.kinds[r] == RuleKind::MovementInstruction)
      out += fmt::format("  {}\n", set.rules[r].name());
  out += "\nIR->IR axioms kept:\n";
  for (const auto& a : set.kept_axioms) out += fmt::format("  {} ({})\n", a.name, to_string(a.family));
  if (!set.dropped_axioms.empty()) out += fmt::format("\nIR->IR axioms dropped by the filter:\n  {}\n", fmt::join(set.dropped_axioms, "\n  "));
  return out;
}

}  // namespace act::select
