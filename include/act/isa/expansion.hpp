// Assembler macros: an instruction phase 1 selects as one pii node and phase 2 allocates as one
// instruction, that the hardware runs as a fixed sequence of its own instructions.
//
// Why: a stateful ISA couples instructions through registers the generic pipeline does not
// track. Gemmini's `matmul_preload(rs1, rs2)` latches two addresses and the next `compute`
// reads D (or B) and writes C where the preload said; neither instruction alone is a function
// of its own slices. The pair, written as one instruction whose slices use only its own
// attributes, is: phase 1 matches its semantics like any other instruction, the CSP places its
// operands, and sim::expand_macros (sim/expand.hpp) turns the emitted program into the
// hardware's instructions. The simulator runs either form; tests check that they agree.
//
// An ISA opts in with an optional member next to `instructions`:
//   static constexpr std::array expansions{
//       Expansion{"matmul8_os", {"dataflow_config(dataflow = 0)",
//                                "matmul_preload(rs1 = D_src, rs2 = C_dst)",
//                                "matmul8_compute_preloaded_os(rs1 = A_src, rs2 = B_src)"}}};
// Each step is an assembly line whose attribute values are expressions over the macro's
// attributes (sym/ syntax); every attribute of the step's instruction is given once. A step names
// a hardware instruction (no nesting). sim::expand_macros drops a step that only updates state
// registers when it leaves them as they are (the second `dataflow_config(dataflow = 0)` of a
// program): state depends on attributes alone, so it is known at every point of a program.
#pragma once

#include <cstddef>
#include <string_view>

#include "act/isa/description.hpp"
#include "act/sym/expr.hpp"

namespace act::isa {

// One parsed step: `name(attr = expr, attr = expr)`. Views into the step text.
struct ExpansionStep {
  static constexpr std::size_t kMaxArguments = kMaxAttributes * 2;
  std::string_view instruction;
  std::array<std::string_view, kMaxArguments> names{};
  std::array<std::string_view, kMaxArguments> values{};
  std::size_t count = 0;
  std::string_view error;  // empty when the step parsed
};

namespace expansion_detail {

constexpr bool is_space(char c) { return c == ' ' || c == '\t'; }
constexpr bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
constexpr std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}
constexpr bool is_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!is_name_char(c)) return false;
  return true;
}

}  // namespace expansion_detail

// Parses a step (constant expressions allowed). Values are checked by sym::try_parse.
constexpr ExpansionStep parse_expansion_step(std::string_view text) {
  using namespace expansion_detail;
  ExpansionStep step;
  const std::size_t open = text.find('(');
  if (open == std::string_view::npos || trim(text).empty() || trim(text).back() != ')') {
    step.error = "a step is written `instruction(attr = value, ...)`";
    return step;
  }
  step.instruction = trim(text.substr(0, open));
  if (!is_name(step.instruction)) {
    step.error = "a step does not start with an instruction name";
    return step;
  }
  std::string_view rest = trim(text.substr(open + 1));
  rest.remove_suffix(1);  // the closing ')'
  rest = trim(rest);
  while (!rest.empty()) {
    // One `name = value` up to the next comma outside parentheses.
    std::size_t end = 0;
    int depth = 0;
    for (; end < rest.size(); ++end) {
      if (rest[end] == '(') ++depth;
      if (rest[end] == ')') --depth;
      if (rest[end] == ',' && depth == 0) break;
    }
    const std::string_view argument = rest.substr(0, end);
    const std::size_t eq = argument.find('=');
    if (eq == std::string_view::npos || step.count == ExpansionStep::kMaxArguments) {
      step.error = eq == std::string_view::npos ? "an argument of a step is not `attr = value`" : "a step has too many arguments";
      return step;
    }
    step.names[step.count] = trim(argument.substr(0, eq));
    step.values[step.count] = trim(argument.substr(eq + 1));
    if (!is_name(step.names[step.count]) || !sym::try_parse(step.values[step.count]).ok()) {
      step.error = "an argument of a step has a bad name or value";
      return step;
    }
    ++step.count;
    rest = end < rest.size() ? trim(rest.substr(end + 1)) : std::string_view();
  }
  return step;
}

}  // namespace act::isa
