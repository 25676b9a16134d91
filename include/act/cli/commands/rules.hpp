// `act rules --isa NAME`: the rewrite rules phase 1 uses for the ISA (generated IR->ISA rules,
// identity rules, the IR->IR axioms kept).
#pragma once

#include <iostream>

#include "act/cli/args.hpp"
#include "act/cli/context.hpp"
#include "act/cli/exit_codes.hpp"
#include "act/select/rules/rule_set.hpp"

namespace act::cli {

inline int run_rules(Args& args, Context& context) {
  const std::string_view isa_name = args.required("--isa", "NAME");
  args.positionals(0);
  std::cout << select::describe_rules(context.isa(isa_name));
  return kExitOk;
}

}  // namespace act::cli
