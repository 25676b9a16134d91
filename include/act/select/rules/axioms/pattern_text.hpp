// The axioms' pattern text: egraph/pattern_parser.hpp's S-expressions over the tensor language,
// an operator head being an HLO opcode name as hlo::opcode_name prints it ("bitcast-convert").
//   (slice@outer (add@inner ?x ?y))   an opcode matches every operator of that opcode, whatever
//                                     its attributes; head@name captures the matched e-node
//   (@inner (@outer ?x) (@outer ?y))  a right-hand side rebuilding the captured operators
// Conditions read attributes through the captures (support.hpp's View).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/egraph/pattern_parser.hpp"
#include "act/hlo/opcode.hpp"
#include "act/select/ir/tensor_graph.hpp"

namespace act::select::axiom_detail {

// An opcode's name with its operand count (any count for variadic opcodes): every operator of
// that opcode. Only the printed names: the TAIDL aliases parse_opcode also accepts are not axiom text.
inline std::optional<egraph::OpMatcher<TensorLanguage>> opcode_matcher(std::string_view head, std::size_t arity) {
  const std::optional<hlo::Opcode> code = hlo::parse_opcode(head);
  if (!code || hlo::opcode_name(*code) != head) return std::nullopt;
  const int expected = hlo::opcode_arity(*code);
  if (expected >= 0 && static_cast<std::size_t>(expected) != arity) return std::nullopt;
  return egraph::OpMatcher<TensorLanguage>::of_kind(static_cast<std::uint32_t>(*code));
}

// Parses axiom pattern text; a mistake in it is a bug of the axiom, reported with the text.
inline TensorPattern parse_tensor_pattern(std::string_view text) {
  try {
    return egraph::parse_pattern<TensorLanguage>(text, opcode_matcher);
  } catch (const Error& e) {
    throw Error(ErrorKind::Internal, fmt::format("axiom pattern \"{}\" at {}:{}: {}", text, e.location().line,
                                                 e.location().column, e.message()));
  }
}

// Parsed once per process: rule_set() builds the axioms per compile and per output group, and
// their texts never change (per-opcode rules are a fixed family of texts).
inline std::shared_ptr<const TensorPattern> tensor_pattern(std::string_view text) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const TensorPattern>, std::less<>> parsed;
  const std::lock_guard lock(mutex);
  if (auto it = parsed.find(text); it != parsed.end()) return it->second;
  auto pattern = std::make_shared<const TensorPattern>(parse_tensor_pattern(text));
  parsed.emplace(std::string(text), pattern);
  return pattern;
}

}  // namespace act::select::axiom_detail
