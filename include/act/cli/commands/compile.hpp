// `act compile --isa NAME KERNEL.hlo`: HLO in, assembly out (codegen::compile_kernel); exit 1
// when no program is found within the budget or --verify finds a mismatch.
#pragma once

#include <charconv>
#include <chrono>
#include <iostream>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "act/cli/args.hpp"
#include "act/cli/context.hpp"
#include "act/cli/exit_codes.hpp"
#include "act/cli/files.hpp"
#include "act/codegen/compile.hpp"
#include "act/native/emit_c.hpp"
#include "act/sim/program_formats.hpp"
#include "act/sim/verify.hpp"

namespace act::cli {

inline int run_compile(Args& args, Context& context) {
  const std::string_view isa_name = args.required("--isa", "NAME");
  const auto output = args.option("-o");
  const auto format_name = args.option("--format");
  const bool c_format = format_name && *format_name == "c";
  const auto format = sim::parse_program_format(format_name && !c_format ? *format_name : "text");
  if (!format) throw UsageError{fmt::format("--format must be text, json, python or c, got '{}'", *format_name)};
  // --verify alone (10 trials) or --verify=N; a bare --verify must not swallow the next argument.
  int trials = 0;
  if (args.flag("--verify")) trials = 10;
  else if (const auto n = args.option("--verify")) {
    const auto [ptr, ec] = std::from_chars(n->data(), n->data() + n->size(), trials);
    if (ec != std::errc() || ptr != n->data() + n->size() || trials < 1 || trials > kMaxTrials)
      throw UsageError{fmt::format("--verify=N needs an integer from 1 to {}, got '{}'", kMaxTrials, *n)};
  }
  codegen::Options options;
  if (const auto seconds = args.seconds_option("--timeout")) options.timeout = std::chrono::duration<double>(*seconds);
  options.deterministic = args.flag("--deterministic");
  options.max_candidates = static_cast<std::size_t>(args.integer_option("--candidates", 0, 1));
  // The termination heuristic's n (§7): stop once the search ran n times as long (as many
  // candidates, with --deterministic) as it took to find the best so far.
  options.patience = static_cast<double>(args.integer_option("--patience", 2, 1, 1000));
  options.image = args.image_options();
  const bool stats = args.flag("--stats");
  const bool hex = args.flag("--hex");
  const auto dot = args.option("--dot");
  const auto computation = args.option("--computation");
  const auto files = args.positionals(1);
  for (const auto written : {output, dot})
    if (written && same_file(*written, files[0]))
      throw UsageError{fmt::format("'{}' is the input file; act does not overwrite its input", *written)};
  const isa::IsaView& isa = context.isa(isa_name);
  if (c_format && !isa.c_mapping) throw UsageError{fmt::format("ISA {} has no C mapping; --format c needs one", isa.name)};
  const hlo::Module kernel = load_kernel(context, files[0], computation);
  context.phase = fmt::format("compiling '{}' for ISA {}", files[0], isa.name);
  // Kernels no program can exist for (tensors larger than the ISA's memories) or that act does
  // not compile (zero-element tensors) are refused before the search (codegen/preflight.hpp).
  codegen::CompileOutcome outcome = in_file(files[0], [&] { return codegen::compile_kernel(kernel, isa, options); });
  if (stats && !outcome.refused) std::cerr << outcome.statistics.to_string();
  if (!outcome) {
    std::cerr << "act compile: " << outcome.message << "\n";
    return kExitFailed;
  }
  const CompileResult& result = *outcome.result;
  sim::ProgramFormatOptions print;
  print.hex = hex;
  print.kernel_name = kernel.name;
  print.source = std::string(files[0]);
  print.extra_header.push_back(fmt::format("{} instructions, cost {} (declared instruction costs), candidate {} of {}",
                                           result.program.instructions.size(), result.cost, result.statistics.best_candidate,
                                           result.statistics.candidates));
  const std::string text =
      c_format ? native::emit_c(result.program, isa, result.image,
                                {.function_name = native::c_identifier(kernel.name.empty() ? "kernel" : kernel.name),
                                 .source = std::string(files[0])})
               : sim::format_program(*format, result.program, isa, result.image, print);
  if (output) write_file(context, *output, text);
  else write_stdout(text);
  if (dot) write_file(context, *dot, result.dot);
  if (trials > 0) {
    sim::VerifyOptions verify;
    verify.trials = trials;
    verify.image = options.image;
    context.phase = "verifying the compiled program";
    const sim::VerifyResult v = sim::verify(kernel, isa, result.program, verify);
    std::cerr << v.message << "\n";
    if (!v.ok) return kExitFailed;
  }
  return kExitOk;
}

}  // namespace act::cli
