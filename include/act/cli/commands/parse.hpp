// `act parse FILE.hlo`: check an HLO module and print it in XLA's text form.
#pragma once

#include "act/cli/args.hpp"
#include "act/cli/context.hpp"
#include "act/cli/exit_codes.hpp"
#include "act/cli/files.hpp"
#include "act/hlo/printer.hpp"

namespace act::cli {

inline int run_parse(Args& args, Context& context) {
  const auto files = args.positionals(1);
  write_stdout(hlo::print_module(load_module(context, files[0])));
  return kExitOk;
}

}  // namespace act::cli
