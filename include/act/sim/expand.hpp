// Lowering assembler macros (isa/expansion.hpp) to the hardware's instructions.
//
//   sim::Program hw = sim::expand_macros(program, isa);
//
// Every macro becomes its steps, attribute values evaluated over the macro's attributes. State
// registers are followed along the program from their initial values (updates depend on
// attributes and state only, never on data, so their value is known at every instruction): a
// step without outputs whose updates leave every register as it was is dropped (a
// `dataflow_config` that sets the dataflow already set), and a step whose constraints fail in
// the state reached is an Error naming it. The constant pool is kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/isa/description.hpp"
#include "act/isa/expansion.hpp"
#include "act/sim/assembly.hpp"
#include "act/sym/expr.hpp"

namespace act::sim {

namespace expand_detail {

// The state registers of an ISA, followed along a program.
class StateTracker {
 public:
  explicit StateTracker(const isa::IsaView& isa) : isa_(isa) {
    for (const auto& r : isa.state) values_.push_back(r.initial);
  }

  // Checks the instruction's constraints in the current state, then applies its updates. True
  // when the instruction is needed: it writes a slice, or it changes a register.
  bool apply(const ConcreteInstruction& ci) {
    const isa::Instruction* instruction = isa_.find_instruction(ci.name);
    if (!instruction) throw Error(ErrorKind::Isa, fmt::format("expand_macros: unknown instruction '{}' in ISA {}", ci.name, isa_.name));
    const auto names = attribute_names(*instruction);
    if (names.size() != ci.attributes.size())
      throw Error(ErrorKind::Isa, fmt::format("expand_macros: '{}' takes {} attributes, got {}", ci.name, names.size(), ci.attributes.size()));
    auto env = [&](std::string_view name) -> std::optional<std::int64_t> {
      for (std::size_t k = 0; k < names.size(); ++k)
        if (names[k] == name) return ci.attributes[k];
      for (std::size_t k = 0; k < values_.size(); ++k)
        if (isa_.state[k].name == name) return values_[k];
      return std::nullopt;
    };
    auto eval = [&](std::string_view text) {
      const sym::EvalResult r = sym::try_evaluate(sym::parse(text), env);
      if (!r.ok()) throw Error(ErrorKind::Isa, fmt::format("expand_macros: '{}' of '{}' does not evaluate: {}", text, ci.name, r.error));
      return r.value;
    };
    for (std::string_view c : instruction->constraints)
      if (eval(c) == 0)
        throw Error(ErrorKind::Execution,
                    fmt::format("expand_macros: {} violates '{}' in the state it runs in", ci.name, c));
    std::vector<std::int64_t> next = values_;
    for (const auto& u : instruction->updates)
      for (std::size_t k = 0; k < values_.size(); ++k)
        if (isa_.state[k].name == u.state) next[k] = eval(u.value);
    const bool changes = next != values_;
    values_ = std::move(next);
    return changes || !instruction->outputs.empty();
  }

 private:
  isa::IsaView isa_;
  std::vector<std::int64_t> values_;
};

inline ConcreteInstruction instantiate_step(const isa::IsaView& isa, const ConcreteInstruction& macro,
                                            const isa::Instruction& macro_instruction, std::string_view text) {
  const isa::ExpansionStep step = isa::parse_expansion_step(text);
  if (!step.error.empty()) throw Error(ErrorKind::Isa, fmt::format("expansion of '{}': {}", macro.name, step.error));
  const isa::Instruction* target = isa.find_instruction(step.instruction);
  if (!target) throw Error(ErrorKind::Isa, fmt::format("expansion of '{}': unknown '{}'", macro.name, step.instruction));
  sym::Bindings env;
  const auto macro_names = attribute_names(macro_instruction);
  for (std::size_t k = 0; k < macro_names.size() && k < macro.attributes.size(); ++k) env.set(macro_names[k], macro.attributes[k]);
  ConcreteInstruction out;
  out.name = std::string(step.instruction);
  out.location = macro.location;
  for (std::string_view name : attribute_names(*target)) {
    std::optional<std::int64_t> value;
    for (std::size_t k = 0; k < step.count; ++k)
      if (step.names[k] == name) {
        const sym::EvalResult r = sym::try_evaluate(sym::parse(step.values[k]), env);
        if (!r.ok()) throw Error(ErrorKind::Isa, fmt::format("expansion of '{}': '{}' does not evaluate: {}", macro.name, step.values[k], r.error));
        value = r.value;
      }
    if (!value) throw Error(ErrorKind::Isa, fmt::format("expansion of '{}': step '{}' gives no '{}'", macro.name, step.instruction, name));
    out.attributes.push_back(*value);
  }
  return out;
}

}  // namespace expand_detail

// The program with every macro replaced by its steps and redundant state-only steps dropped.
// A program without macros comes back unchanged (its state is still checked).
inline Program expand_macros(const Program& program, const isa::IsaView& isa) {
  Program out;
  out.constants = program.constants;
  expand_detail::StateTracker state(isa);
  for (const ConcreteInstruction& ci : program.instructions) {
    const isa::Expansion* expansion = isa.find_expansion(ci.name);
    if (!expansion) {
      state.apply(ci);
      out.instructions.push_back(ci);
      continue;
    }
    const isa::Instruction* macro = isa.find_instruction(ci.name);
    for (std::string_view text : expansion->steps) {
      ConcreteInstruction step = expand_detail::instantiate_step(isa, ci, *macro, text);
      if (state.apply(step)) out.instructions.push_back(std::move(step));
    }
  }
  return out;
}

}  // namespace act::sim
