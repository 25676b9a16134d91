// What a generated IR->ISA rule knows about its instruction (rules/isa_rules.hpp): the searcher
// variants, the type checks that solve alpha, how the applier binds each input, and the
// constraints over alpha and beta. Shared read-only by a rule's condition and applier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/egraph/pattern.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/hlo/opcode.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/sym/expr.hpp"

namespace act::select {

// One dim of a semantics shape: a literal, a single alpha name, or an expression over alpha.
struct SymbolicDim {
  std::int64_t literal = -1;  // >= 0 when literal
  std::string text;           // expression text otherwise
  int alpha = -1;             // index of the alpha it names, when it is just that name
  std::shared_ptr<const sym::ParsedText> parsed;  // `text` parsed once (not for literals)
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
  std::vector<std::shared_ptr<const sym::ParsedText>> parsed_alpha_constraints;  // the same, parsed once
  std::vector<std::string> beta_constraints;   // constraints mentioning beta
  // Each data slice's length within its buffer, `length <= access dim - literal start`, for the
  // lengths written over alpha alone (isa_rules.hpp): a match whose alpha makes a slice longer
  // than its buffer (mvin_spad_unit with cols = 256, spad being 16 wide) is no instruction.
  std::vector<std::string> slice_bounds;
  std::vector<std::shared_ptr<const sym::ParsedText>> parsed_slice_bounds;  // the same, parsed once
  std::vector<hlo::Opcode> opcodes;            // operators of the patterns (Constant for constants)
  // Every searcher, the primary one (fields above) first; see the header comment.
  std::vector<IsaPatternVariant> variants;
  // Whether beta constraints are satisfiable, per alpha tuple (filled lazily).
  mutable std::map<std::vector<std::int64_t>, bool> beta_satisfiable;
  // Whether the alpha constraints, slice bounds and beta constraints all hold, per alpha tuple
  // (filled lazily by solve_alpha).
  mutable std::map<std::vector<std::int64_t>, bool> alpha_valid;
};

struct IsaRuleSet {
  std::vector<TensorRewrite> rules;
  std::vector<std::shared_ptr<const IsaRuleInfo>> infos;  // parallel to rules
  std::vector<std::string> skipped;                       // "name: reason"
};

namespace isa_rule_detail {

// Why an instruction gets no rule, or a searcher variant is not generated.
struct Skip {
  std::string reason;
};
// A searcher whose alpha is no longer determined once nodes are peeled (a shorter peel may fit).
struct Undetermined : Skip {};

inline bool is_alpha(const isa::Instruction& inst, std::string_view id) {
  for (std::string_view a : inst.alpha)
    if (a == id) return true;
  return false;
}

// Dim d of a semantics node's type: a literal, a single alpha name, or an expression over alpha
// (Skip when it mentions anything else).
inline SymbolicDim symbolic_dim(const isa::Instruction& inst, const hlo::Instruction& i, std::size_t d) {
  SymbolicDim sd;
  const std::string text = d < i.dimension_expressions.size() ? i.dimension_expressions[d] : std::string();
  if (text.empty()) {
    sd.literal = i.shape.dims[d];
    return sd;
  }
  sd.text = text;
  const sym::Expr e = sym::parse(sd.text);
  if (e.top().op == sym::Op::Var)
    for (std::size_t a = 0; a < inst.alpha.size(); ++a)
      if (inst.alpha[a] == e.top().name) sd.alpha = static_cast<int>(a);
  if (e.top().op == sym::Op::Const) {
    sd.literal = e.top().value;
    sd.text.clear();
  } else {
    sd.parsed = sym::parse_shared(sd.text);
  }
  for (std::string_view id : sym::free_identifiers(e))
    if (!is_alpha(inst, id)) throw Skip{fmt::format("dimension '{}' mentions '{}', which is not alpha", text, id)};
  return sd;
}

// What the condition checks of a semantics node: its dtype and symbolic dims (slot unset).
inline TypeCheck type_check(const isa::Instruction& inst, const hlo::Instruction& i) {
  if (i.shape.is_tuple) throw Skip{"tuple-valued intermediate"};
  TypeCheck c;
  c.node = i.name;
  c.dtype = i.shape.dtype;
  for (std::size_t d = 0; d < i.shape.dims.size(); ++d) c.dims.push_back(symbolic_dim(inst, i, d));
  return c;
}

}  // namespace isa_rule_detail
}  // namespace act::select
