// The `act` tool's subcommands, in one table: adding one is a function
// `int run_xxx(Args&, Context&)` (a header under cli/commands/) plus a row here.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "act/cli/args.hpp"
#include "act/cli/commands/compile.hpp"
#include "act/cli/commands/isas.hpp"
#include "act/cli/commands/parse.hpp"
#include "act/cli/commands/rules.hpp"
#include "act/cli/commands/run.hpp"
#include "act/cli/commands/soak.hpp"
#include "act/cli/commands/verify.hpp"
#include "act/cli/context.hpp"

#ifndef ACT_VERSION
#define ACT_VERSION "0.1.0"
#endif

namespace act::cli {

struct Command {
  std::string_view name;
  std::string_view usage;  // arguments after the name
  std::string_view summary;
  int (*run)(Args&, Context&);
};

inline constexpr Command kCommands[] = {
    {"parse", "FILE.hlo", "check an HLO module and print it in XLA's text form", run_parse},
    {"verify", "--isa NAME KERNEL.hlo PROGRAM.asm [--trials N] [--seed S] [--align N] [--computation NAME]",
     "run the program in the simulator on random inputs and compare with the kernel", run_verify},
    {"compile",
     "--isa NAME KERNEL.hlo [-o FILE] [--format text|json|python|c] [--verify[=N]] [--timeout S] [--deterministic] "
     "[--candidates N] [--patience N] [--stats] [--dot FILE] [--hex] [--align N] [--computation NAME]",
     "compile the kernel to assembly for the ISA (exit 1 when no program is found within the budget)", run_compile},
    {"run",
     "--isa NAME KERNEL.hlo [PROGRAM.asm] [--trials N] [--seed S] [--align N] [--emulate] [--cc COMPILER] [-o FILE.c] "
     "[--timeout S] [--deterministic] [--candidates N]",
     "compile the kernel (or take PROGRAM.asm), emit C, build it with the system compiler and run it on this CPU; compare "
     "with the simulator bit for bit and with the reference interpreter (exit 3: this CPU lacks a needed feature)", run_run},
    {"isas", "", "list the accelerators act knows, with their buffers and instructions", run_isas},
    {"rules", "--isa NAME", "print the rewrite rules phase 1 uses for the ISA (generated IR->ISA, identity, kept axioms)",
     run_rules},
    {"soak",
     "--isa NAME [--kernels N] [--seed S] [--mode sound|complete] [-j J] [--timeout S] [--deterministic] [--save DIR] [--json] [--trials N] "
     "[--max-nodes N] [--shrink-steps N] [--start I] [--print-kernels] [--hang S] [--quiet]",
     "compile random kernels (sound) or lifted random programs (complete) and verify them; exit 1 on a miscompile or, in "
     "complete mode, a kernel without a program", run_soak},
};

inline void print_help(std::ostream& out) {
  out << "act " << ACT_VERSION << " - compiler backends for tensor accelerators from ISA descriptions\n\n"
      << "usage: act COMMAND [ARGS...]\n\ncommands:\n";
  for (const auto& c : kCommands) out << fmt::format("  act {} {}\n      {}\n", c.name, c.usage, c.summary);
  out << "\n  act --help | --version\n\n"
      << "exit codes: 0 ok, 1 verification failed (or no code), 2 bad input, 3 this CPU lacks a feature the program needs (act run)\n";
}

}  // namespace act::cli
