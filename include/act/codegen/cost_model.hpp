// The default cost model: the sum, over a program's instructions, of the `cost` expression the
// ISA header declares for each instruction (isa::Instruction::cost, an expression over alpha,
// "1" when not given), evaluated with sym::evaluate. Plus instruction counts, which tests and
// users check programs with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"
#include "act/sym/expr.hpp"

namespace act::codegen {

// The declared cost of one concrete instruction. Throws Error(Isa) for an unknown instruction
// or a cost expression that does not parse or evaluate over the instruction's alpha.
inline double instruction_cost(const sim::ConcreteInstruction& ci, const isa::IsaView& isa) {
  const isa::Instruction* instruction = isa.find_instruction(ci.name);
  if (!instruction) throw Error(ErrorKind::Isa, fmt::format("cost model: unknown instruction '{}' in ISA {}", ci.name, isa.name));
  const std::string_view text = instruction->cost.empty() ? std::string_view("1") : instruction->cost;
  const sym::ParseResult parsed = sym::try_parse(text);
  if (!parsed.ok())
    throw Error(ErrorKind::Isa, fmt::format("cost of '{}' ('{}') does not parse: {} at column {}", ci.name, text, parsed.error, parsed.column));
  sym::Bindings env;
  // Alpha and beta are both bound; validation keeps cost expressions to alpha.
  const auto names = sim::attribute_names(*instruction);
  for (std::size_t k = 0; k < names.size() && k < ci.attributes.size(); ++k) env.set(names[k], ci.attributes[k]);
  const sym::EvalResult r = sym::try_evaluate(parsed.expr, env);
  if (!r.ok())
    throw Error(ErrorKind::Isa, fmt::format("cost of '{}' ('{}') does not evaluate: {}{}", ci.name, text, r.error,
                                            r.error_name.empty() ? std::string() : fmt::format(" '{}'", r.error_name)));
  return static_cast<double>(r.value);
}

// The default cost model (a codegen::CostModel).
inline double declared_cost(const sim::Program& program, const isa::IsaView& isa) {
  double total = 0;
  for (const auto& ci : program.instructions) total += instruction_cost(ci, isa);
  return total;
}

// How often each instruction occurs, by name.
inline std::map<std::string, std::size_t> instruction_counts(const sim::Program& program) {
  std::map<std::string, std::size_t> counts;
  for (const auto& ci : program.instructions) ++counts[ci.name];
  return counts;
}

}  // namespace act::codegen
