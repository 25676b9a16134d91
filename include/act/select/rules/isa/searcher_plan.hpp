// The searcher variants of one IR->ISA rule (rules/isa_rules.hpp): which nodes of the
// instruction's semantics a searcher leaves out, before any pattern is built.
//
// * Identities for a concrete alpha: a slice or reshape whose result may have its operand's
//   shape (a dim is symbolic), a broadcast with dims {0..r-1} likewise, and a
//   dynamic-update-slice whose update may cover the whole operand are "possibly identity"; a
//   searcher per choice of which of them to skip (at most 4 such nodes). A node with literal
//   equal shapes and a dynamic-update-slice are always skipped.
// * Embedding: a dynamic-update-slice at constant start indices whose update need not cover
//   its operand (a store writing part of its window) is, in the embedding searchers, matched
//   as an Embed node over the update (tensor_language.hpp): the old window goes unread and its
//   input becomes an Undefined leaf, and the Embed's type solves alpha (the window's stride).
// * Accumulate from zero: an add one of whose summands is a pure chain of single-use movement
//   nodes from a single-use input may be skipped, binding that input to zeros (at most 2).
// * Peeling: the maximal chain of invertible movement ops (reshape, transpose,
//   bitcast-convert) at ROOT and above each single-use input, every chain node single-use.
// A SearcherPlan holds one such choice; the pattern builder (searcher_pattern.hpp) turns it into
// a pattern and its checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/select/rules/isa/rule_info.hpp"

namespace act::select::isa_rule_detail {

inline bool is_movement(const hlo::Instruction& i) {
  return (i.opcode == hlo::Opcode::Reshape || i.opcode == hlo::Opcode::Transpose ||
          i.opcode == hlo::Opcode::BitcastConvert) &&
         i.operands.size() == 1 && !i.shape.is_tuple;
}

// The operand a possibly-identity node equals when it is an identity, or -1.
inline int identity_operand(const hlo::Instruction& i) {
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

// A dynamic-update-slice's start indices when every one is a scalar integer constant.
inline std::optional<std::vector<std::int64_t>> constant_start_indices(const std::vector<hlo::Instruction>& ins,
                                                                       const hlo::Instruction& dus) {
  std::vector<std::int64_t> start;
  for (std::size_t k = 2; k < dus.operands.size(); ++k) {
    const hlo::Instruction& c = ins[static_cast<std::size_t>(dus.operands[k])];
    if (c.opcode != hlo::Opcode::Constant || !c.literal || c.literal->element_count() != 1 || !is_integer(c.shape.dtype))
      return std::nullopt;
    start.push_back(static_cast<std::int64_t>(c.literal->get_float(0)));
  }
  if (start.size() != dus.shape.dims.size()) return std::nullopt;
  return start;
}

// One searcher's choice over the semantics nodes (all vectors indexed by semantics node).
struct SearcherPlan {
  // Skipped nodes and the operand position each one stands for; inputs bound to zeros.
  std::vector<bool> skip;
  std::vector<int> skip_operand;
  std::vector<bool> zero_input;  // per input
  std::vector<bool> embed;       // dynamic-update-slices matched as Embed nodes (not skipped)
  // The graph this searcher reaches once skipped nodes are removed: its top, uses and (single)
  // users of every node.
  std::size_t top0 = 0;
  std::vector<int> uses, user;
  std::vector<bool> reached;
  // Peeling: the root chain (from ROOT down), the node the pattern starts at (entry, maybe a
  // skipped node) and its resolved top, input chain tops and members.
  std::vector<std::size_t> root_chain;
  std::size_t entry = 0, top = 0;
  std::vector<int> chain_top;                      // input number, or -1
  std::vector<bool> in_peel;                       // in a peeled chain
  std::vector<std::vector<std::size_t>> input_chain;  // per input: chain nodes, top first

  // The node `at` stands for once skipped nodes are looked through.
  std::size_t resolve(const std::vector<hlo::Instruction>& ins, std::size_t at) const {
    for (std::size_t guard = 0; skip[at] && guard <= ins.size(); ++guard)
      at = static_cast<std::size_t>(ins[at].operands[static_cast<std::size_t>(skip_operand[at])]);
    return at;
  }
};

class SearcherPlanner {
 public:
  SearcherPlanner(const hlo::Module& semantics, const isa::Instruction& instruction)
      : module_(semantics), inst_(instruction) {
    count_uses();
    classify_identities();
    classify_zero_candidates();
  }

  std::size_t optional_count() const { return optional_.size(); }
  std::size_t embed_count() const { return embeddable_.size(); }
  std::size_t zero_count() const { return zero_.size(); }

  // The plan skipping the optional identities in `mask` and the zero summands in `zero_mask`,
  // unpeeled; nothing when the choice is contradictory (two zero summands of one add).
  // With `embed`, every embeddable dynamic-update-slice is an Embed node instead.
  std::optional<SearcherPlan> choose(std::size_t mask, std::size_t zero_mask, bool embed = false) const {
    const auto& ins = instructions();
    SearcherPlan p;
    p.skip = forced_;
    p.skip_operand.assign(ins.size(), 0);
    p.embed.assign(ins.size(), false);
    for (std::size_t at = 0; at < ins.size(); ++at)
      if (forced_[at]) p.skip_operand[at] = identity_operand(ins[at]);
    if (embed)
      for (std::size_t at : embeddable_) {
        p.skip[at] = false;
        p.embed[at] = true;
      }
    for (std::size_t b = 0; b < optional_.size(); ++b)
      if (mask & (std::size_t{1} << b)) {
        p.skip[optional_[b]] = true;
        p.skip_operand[optional_[b]] = identity_operand(ins[optional_[b]]);
      }
    p.zero_input.assign(inst_.inputs.size(), false);
    for (std::size_t z = 0; z < zero_.size(); ++z) {
      if (!(zero_mask & (std::size_t{1} << z))) continue;
      if (p.skip[zero_[z].add]) return std::nullopt;
      p.skip[zero_[z].add] = true;
      p.skip_operand[zero_[z].add] = zero_[z].kept_operand;
      if (zero_[z].input < p.zero_input.size()) p.zero_input[zero_[z].input] = true;
    }
    compute_effective(p);
    clear_peel(p);
    return p;
  }

  // The movement chain at the top of `plan`'s graph that a peeled searcher may leave out, from
  // ROOT down (each node's operand single-use and not a parameter).
  std::vector<std::size_t> root_chain(const SearcherPlan& plan) const {
    const auto& ins = instructions();
    std::vector<std::size_t> chain;
    for (std::size_t r = plan.top0; is_movement(ins[r]);) {
      const std::size_t o = plan.resolve(ins, static_cast<std::size_t>(ins[r].operands[0]));
      if (ins[o].opcode == hlo::Opcode::Parameter || plan.uses[o] != 1) break;
      chain.push_back(r);
      r = o;
    }
    return chain;
  }

  // `plan` peeled at the root by `chain` (a prefix of root_chain()), and above its inputs when
  // `with_inputs`. Returns whether any input chain was peeled.
  bool peel(SearcherPlan& plan, const std::vector<std::size_t>& chain, bool with_inputs) const {
    const auto& ins = instructions();
    clear_peel(plan);
    plan.root_chain = chain;
    for (std::size_t r : plan.root_chain) {
      plan.in_peel[r] = true;
      plan.entry = static_cast<std::size_t>(ins[r].operands[0]);
      plan.top = plan.resolve(ins, plan.entry);
    }
    return with_inputs && peel_inputs(plan);
  }

 private:
  // An add whose operand is a pure movement chain from input `input`.
  struct ZeroCandidate {
    std::size_t add = 0;
    int kept_operand = 0;   // operand position of the other summand, which the searcher matches
    std::size_t input = 0;  // parameter number bound to zeros
  };

  const std::vector<hlo::Instruction>& instructions() const { return module_.entry_computation().instructions; }

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
        const SymbolicDim a = symbolic_dim(inst_, i, d), b = symbolic_dim(inst_, o, d);
        if (a.literal >= 0 && b.literal >= 0) possible = possible && a.literal == b.literal;
        else literal_equal = false;
      }
      if (!possible) continue;
      if (literal_equal || i.opcode == hlo::Opcode::DynamicUpdateSlice) forced_[at] = true;
      else if (optional_.size() < 4) optional_.push_back(at);
      if (i.opcode == hlo::Opcode::DynamicUpdateSlice && !literal_equal && constant_start_indices(ins, i))
        embeddable_.push_back(at);
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

  // Uses and (single) users of the nodes a searcher reaches once its skipped nodes are removed.
  void compute_effective(SearcherPlan& p) const {
    const auto& ins = instructions();
    const std::size_t n = ins.size();
    p.top0 = p.resolve(ins, static_cast<std::size_t>(module_.entry_computation().root));
    p.uses.assign(n, 0);
    p.user.assign(n, -1);
    p.reached.assign(n, false);
    std::vector<std::size_t> stack{p.top0};
    p.reached[p.top0] = true;
    while (!stack.empty()) {
      const std::size_t at = stack.back();
      stack.pop_back();
      for (std::size_t k = 0; k < ins[at].operands.size(); ++k) {
        if (p.embed[at] && k != 1) continue;  // an Embed reads only the update
        const int o = ins[at].operands[k];
        const std::size_t r = p.resolve(ins, static_cast<std::size_t>(o));
        ++p.uses[r];
        p.user[r] = static_cast<int>(at);
        if (!p.reached[r]) {
          p.reached[r] = true;
          stack.push_back(r);
        }
      }
    }
  }

  void clear_peel(SearcherPlan& p) const {
    const std::size_t n = instructions().size();
    p.root_chain.clear();
    p.chain_top.assign(n, -1);
    p.in_peel.assign(n, false);
    p.input_chain.assign(inst_.inputs.size(), {});
    p.top = p.top0;
    p.entry = static_cast<std::size_t>(module_.entry_computation().root);
  }

  // Input chains: from each single-use input up through single-use movement nodes, never
  // taking the pattern's top or a root-chain node. True if any input is peeled.
  bool peel_inputs(SearcherPlan& p) const {
    const auto& ins = instructions();
    bool any = false;
    for (std::size_t at = 0; at < ins.size(); ++at) {
      if (ins[at].opcode != hlo::Opcode::Parameter || !p.reached[at] || p.uses[at] != 1) continue;
      const auto k = static_cast<std::size_t>(ins[at].parameter_number);
      if (k >= p.input_chain.size()) continue;
      std::vector<std::size_t> chain;
      std::size_t c = at;
      while (p.uses[c] == 1) {
        const int u = p.user[c];
        if (u < 0) break;
        const auto user = static_cast<std::size_t>(u);
        if (user == p.top || p.in_peel[user] || !is_movement(ins[user])) break;
        chain.push_back(user);
        c = user;
      }
      if (chain.empty()) continue;
      p.chain_top[c] = static_cast<int>(k);
      for (std::size_t x : chain) p.in_peel[x] = true;
      p.input_chain[k].assign(chain.rbegin(), chain.rend());
      any = true;
    }
    return any;
  }

  const hlo::Module& module_;
  const isa::Instruction& inst_;
  std::vector<int> uses_full_;        // per semantics node: uses in the semantics
  std::vector<bool> forced_;
  std::vector<std::size_t> embeddable_;  // dynamic-update-slices at constant start indices          // per semantics node: always skipped
  std::vector<std::size_t> optional_; // possibly-identity nodes
  std::vector<ZeroCandidate> zero_;   // accumulate-from-zero choices
};

}  // namespace act::select::isa_rule_detail
