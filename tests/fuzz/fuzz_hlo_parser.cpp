// libFuzzer target: hlo::parse_module and hlo::parse_semantics on arbitrary bytes.
// Contract: every input either parses or throws act::Error (Parse/Shape with a line:column);
// a module that parses prints to text that re-parses to a structurally equal module.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "act/hlo/module_equal.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/printer.hpp"
#include "act/sym/expr.hpp"
#include "fuzz_contract.hpp"

namespace {

void check_module(std::string_view text) {
  act::hlo::Module module;
  try {
    module = act::hlo::parse_module(text);
  } catch (const act::Error& e) {
    act::fuzz::check_error_location(e, text);
    return;
  }
  const std::string printed = act::hlo::print_module(module);
  try {
    const act::hlo::Module again = act::hlo::parse_module(printed);
    if (!act::hlo::structurally_equal(module, again)) act::fuzz::fuzz_fail("print/parse round trip changed the module", printed);
  } catch (const act::Error& e) {
    act::fuzz::fuzz_fail("printed module does not re-parse", std::string(e.what()) + "\n" + printed);
  }
}

// Semantics blocks with backtick dimensions; `n` is the only alpha attribute, as in the QKV ISA.
void check_semantics(std::string_view text) {
  const act::sym::Bindings alpha{{"n", 64}};
  const act::hlo::DimensionEvaluator evaluate = [&](std::string_view expression, act::SourceLocation where) -> std::int64_t {
    const act::sym::ParseResult parsed = act::sym::try_parse(expression);
    if (!parsed.ok()) throw act::Error(act::ErrorKind::Parse, std::string(parsed.error), where);
    const act::sym::EvalResult r = act::sym::try_evaluate(parsed.expr, alpha);
    if (!r.ok()) throw act::Error(act::ErrorKind::Parse, std::string(r.error), where);
    return r.value;
  };
  try {
    (void)act::hlo::parse_semantics(text, evaluate);
  } catch (const act::Error& e) {
    act::fuzz::check_error_location(e, text);
  }
  try {
    (void)act::hlo::parse_semantics(text, act::hlo::DimensionEvaluator{});  // symbolic dimensions
  } catch (const act::Error& e) {
    act::fuzz::check_error_location(e, text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_module(text);
  check_semantics(text);
  return 0;
}
