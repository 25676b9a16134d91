// libFuzzer target: sym::parse (attribute expressions) on arbitrary bytes.
// Contract: parse either succeeds or throws act::Error(Parse) at line 1 and a column inside the
// text; a parsed expression prints (to_string) to text that parses (unless the printed parentheses
// exceed the nesting bound) and evaluates the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "act/sym/expr.hpp"
#include "fuzz_contract.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  act::sym::Expr expr;
  try {
    expr = act::sym::parse(text);
  } catch (const act::Error& e) {
    act::fuzz::check_error_location(e, text);
    if (e.location().line != 1 || e.location().column > static_cast<int>(size) + 1)
      act::fuzz::fuzz_fail("expression error outside the text", e.what());
    return 0;
  }
  // Bind every free identifier to a small distinct value, then compare with the printed form.
  act::sym::Bindings env;
  std::int64_t next = 3;
  for (std::string_view name : act::sym::free_identifiers(expr)) env.set(name, next++);
  const std::string printed = act::sym::to_string(expr);
  const act::sym::ParseResult again = act::sym::try_parse(printed);
  // to_string adds a pair of parentheses per operator, so a text near the nesting bound (64) can
  // print past it; that is the bound working, not a bug. Anything else must re-parse.
  if (!again.ok() && again.error == "expression nested too deeply") return 0;
  if (!again.ok()) act::fuzz::fuzz_fail("printed expression does not re-parse", printed);
  const act::sym::EvalResult a = act::sym::try_evaluate(expr, env);
  const act::sym::EvalResult b = act::sym::try_evaluate(again.expr, env);
  if (a.ok() != b.ok() || (a.ok() && a.value != b.value))
    act::fuzz::fuzz_fail("printed expression evaluates differently", printed);
  return 0;
}
