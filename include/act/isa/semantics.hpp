// An instruction's semantics as an HLO module: with its computational attributes (alpha) bound,
// every backtick dimension evaluated (phase 1's type inference, phase 2's spill table and the
// simulator read the semantics this way), or with its dimensions left symbolic (what rule
// generation reads: its operators, dots and constants).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/description.hpp"
#include "act/sym/expr.hpp"

namespace act::isa {

// Throws Error(Isa) when alpha has the wrong length or a dimension does not evaluate from alpha
// (it mentions a beta attribute, or is malformed).
inline hlo::Module instantiate_semantics(const Instruction& instruction, std::span<const std::int64_t> alpha) {
  if (alpha.size() != instruction.alpha.size())
    throw Error(ErrorKind::Isa, fmt::format("{}: {} alpha values given, the instruction has {}", instruction.name,
                                            alpha.size(), instruction.alpha.size()));
  const auto env = [&](std::string_view name) -> std::optional<std::int64_t> {
    for (std::size_t k = 0; k < alpha.size(); ++k)
      if (instruction.alpha[k] == name) return alpha[k];
    return std::nullopt;
  };
  const hlo::DimensionEvaluator evaluate = [&](std::string_view text, SourceLocation where) -> std::int64_t {
    const sym::ParseResult parsed = sym::try_parse(text);
    if (!parsed.ok())
      throw Error(ErrorKind::Isa, fmt::format("{}: dimension '{}': {}", instruction.name, text, parsed.error), where);
    const sym::EvalResult r = sym::try_evaluate(parsed.expr, env);
    if (!r.ok())
      throw Error(ErrorKind::Isa,
                  fmt::format("{}: dimension '{}' does not evaluate from alpha: {}{}", instruction.name, text, r.error,
                              r.error_name.empty() ? std::string() : fmt::format(" '{}'", r.error_name)),
                  where);
    return r.value;
  };
  return hlo::parse_semantics(instruction.semantics, evaluate);
}

// The semantics parsed with symbolic dimensions (hlo::parse_semantics without an evaluator),
// parsed once per process for each semantics text and shared read-only: building one rule set
// read each instruction's semantics five times (IR->ISA rules, the movement rule, split sizes,
// and the relu facts twice), and parsing was half of building it. Keyed by the text itself, so
// an ISA built at run time cannot see another's entry. Throws what the parser throws (a
// malformed text is not kept).
inline std::shared_ptr<const hlo::Module> symbolic_semantics(const Instruction& instruction) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const hlo::Module>> parsed;
  const std::string text(instruction.semantics);
  {
    const std::lock_guard lock(mutex);
    if (auto found = parsed.find(text); found != parsed.end()) return found->second;
  }
  auto module = std::make_shared<const hlo::Module>(hlo::parse_semantics(text, hlo::DimensionEvaluator{}));
  const std::lock_guard lock(mutex);
  return parsed.emplace(text, std::move(module)).first->second;
}

// Whether every constraint that mentions alpha only holds for `alpha` (constraints over beta
// are phase 2's; they count as holding here).
inline bool alpha_constraints_hold(const Instruction& instruction, std::span<const std::int64_t> alpha) {
  const auto env = [&](std::string_view name) -> std::optional<std::int64_t> {
    for (std::size_t k = 0; k < alpha.size() && k < instruction.alpha.size(); ++k)
      if (instruction.alpha[k] == name) return alpha[k];
    return std::nullopt;
  };
  for (std::string_view constraint : instruction.constraints) {
    const sym::ParseResult parsed = sym::try_parse(constraint);
    if (!parsed.ok()) return false;
    bool alpha_only = true;
    for (std::string_view id : sym::free_identifiers(parsed.expr))
      if (!env(id)) alpha_only = false;
    if (!alpha_only) continue;
    const sym::EvalResult r = sym::try_evaluate(parsed.expr, env);
    if (!r.ok() || r.value == 0) return false;
  }
  return true;
}

}  // namespace act::isa
