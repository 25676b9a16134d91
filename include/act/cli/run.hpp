// The `act` tool's body: dispatch to a subcommand, and turn every failure into a message and an
// exit code (DESIGN.md: 0 ok, 1 no code / verification failed, 2 bad input, 3 `act run` on a
// CPU without a needed feature). No exception escapes.
#pragma once

#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/cli/args.hpp"
#include "act/cli/command_table.hpp"
#include "act/cli/context.hpp"
#include "act/cli/exit_codes.hpp"
#include "act/cli/files.hpp"
#include "act/core/error.hpp"
#include "act/core/linkage.hpp"

namespace act::cli {

namespace run_detail {

inline int run_command(std::span<char*> argv, Context& context) {
  if (argv.size() < 2) {
    print_help(std::cerr);
    return kExitBadInput;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_help(std::cout);
    return kExitOk;
  }
  if (name == "--version") {
    std::cout << "act " << ACT_VERSION << "\n";
    return kExitOk;
  }
  const Command* command = nullptr;
  for (const auto& c : kCommands)
    if (c.name == name) command = &c;
  if (!command) {
    std::cerr << fmt::format("act: unknown command '{}'\n\n", name);
    print_help(std::cerr);
    return kExitBadInput;
  }
  std::vector<std::string_view> rest(argv.begin() + 2, argv.end());
  for (auto a : rest)
    if (a == "--help" || a == "-h") {
      std::cout << fmt::format("usage: act {} {}\n  {}\n", command->name, command->usage, command->summary);
      return kExitOk;
    }
  Args args(std::move(rest));
  try {
    return command->run(args, context);
  } catch (const UsageError& e) {
    std::cerr << fmt::format("act {}: {}\nusage: act {} {}\n", command->name, e.message, command->name, command->usage);
    return kExitBadInput;
  }
}

// Exit code of a command that ran: its own, unless standard output lost what it printed.
inline int checked_exit(int code) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << "act: i/o error: cannot write to standard output\n";
    return kExitBadInput;
  }
  return code;
}

}  // namespace run_detail

ACT_API int run(int argc, char** argv, std::span<const isa::IsaView> isas) {
  Context context{isas};
  try {
    return run_detail::checked_exit(run_detail::run_command(std::span<char*>(argv, static_cast<std::size_t>(argc)), context));
  } catch (const std::bad_alloc&) {
    // Out of memory is a resource limit, not bad input: a compile that runs out has found no
    // program (exit 1); reading, parsing or verifying a kernel too large to hold is exit 2.
    std::cerr << "act: out of memory while " << context.phase << "\n";
    return context.phase.rfind("compiling", 0) == 0 ? kExitFailed : kExitBadInput;
  } catch (const FileError& e) {
    std::cerr << "act: " << e.message << "\n";
    return kExitBadInput;
  } catch (const Error& e) {
    std::cerr << "act: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "act: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (...) {
    std::cerr << "act: unknown error\n";
    return kExitBadInput;
  }
}

}  // namespace act::cli
