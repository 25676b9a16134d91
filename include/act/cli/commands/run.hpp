// `act run --isa NAME KERNEL.hlo [PROGRAM.asm]`: compile (or take PROGRAM.asm), emit C, build it
// with the system compiler, run it on this CPU on random inputs and compare with the simulator
// (bit for bit) and the reference interpreter. Exit 1 on a difference or no program, 3 when
// this CPU lacks a needed feature.
#pragma once

#include <charconv>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "act/cli/args.hpp"
#include "act/cli/context.hpp"
#include "act/cli/exit_codes.hpp"
#include "act/cli/files.hpp"
#include "act/codegen/compile.hpp"
#include "act/native/emit_c.hpp"
#include "act/native/run.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/kernel_image.hpp"

namespace act::cli {

inline int run_run(Args& args, Context& context) {
  const std::string_view isa_name = args.required("--isa", "NAME");
  native::NativeRunOptions options;
  options.trials = static_cast<int>(args.integer_option("--trials", 20, 1));
  options.seed = static_cast<std::uint64_t>(args.integer_option("--seed", 0, 0));
  options.image = args.image_options();
  options.emulate = args.flag("--emulate");
  if (const auto cc = args.option("--cc")) options.build.compiler = std::string(*cc);
  const auto keep = args.option("-o");
  codegen::Options compile;
  compile.image = options.image;
  compile.deterministic = args.flag("--deterministic");
  compile.max_candidates = static_cast<std::size_t>(args.integer_option("--candidates", 0, 1));
  if (const auto timeout = args.option("--timeout")) {
    double seconds = 0;
    const auto [ptr, ec] = std::from_chars(timeout->data(), timeout->data() + timeout->size(), seconds);
    if (ec != std::errc() || ptr != timeout->data() + timeout->size() || !(seconds > 0))
      throw UsageError{fmt::format("--timeout needs a number of seconds > 0, got '{}'", *timeout)};
    compile.timeout = std::chrono::duration<double>(seconds);
  }
  const std::vector<std::string_view> files = args.positionals(1, 2);
  const isa::IsaView& isa = context.isa(isa_name);
  if (!isa.c_mapping) throw UsageError{fmt::format("ISA {} has no C mapping; act run needs one", isa.name)};
  const hlo::Module kernel = load_module(context, files[0]);
  sim::Program program;
  if (files.size() == 2) {
    const std::string text = read_file(files[1]);
    program = in_file(files[1], [&] { return sim::parse_program(text, isa); });
  } else {
    context.phase = fmt::format("compiling '{}' for ISA {}", files[0], isa.name);
    codegen::CompileOutcome outcome = in_file(files[0], [&] { return codegen::compile_kernel(kernel, isa, compile); });
    if (!outcome) {
      std::cerr << "act run: " << outcome.message << "\n";
      return kExitFailed;
    }
    program = std::move(outcome.result->program);
    std::cerr << fmt::format("act run: compiled {} instructions\n", program.instructions.size());
  }
  if (keep) {
    const sim::KernelImage image = sim::kernel_image(kernel, options.image);
    std::ofstream out{std::string(*keep), std::ios::binary};
    const std::string c = native::emit_c(program, isa, image, {.function_name = "act_kernel", .source = std::string(files[0])});
    if (!out || !(out << c)) throw Error(ErrorKind::Io, fmt::format("cannot write '{}'", *keep));
  }
  context.phase = "running natively";
  const native::NativeRunResult r = native::run_natively(kernel, isa, program, options);
  std::cerr << "act run: built with: " << r.build_command << "\n";
  if (r.status == native::NativeStatus::Unsupported) {
    std::cerr << "act run: " << r.message << "\n";
    return kExitCpuLacksFeature;
  }
  std::cout << r.message << "\n";
  return r.ok() ? kExitOk : kExitFailed;
}

}  // namespace act::cli
