// `act verify --isa NAME KERNEL.hlo PROGRAM.asm`: run the program in the simulator on random
// inputs and compare it with the kernel (exit 1 on a mismatch).
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "act/cli/args.hpp"
#include "act/cli/context.hpp"
#include "act/cli/exit_codes.hpp"
#include "act/cli/files.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/verify.hpp"

namespace act::cli {

inline int run_verify(Args& args, Context& context) {
  const std::string_view isa_name = args.required("--isa", "NAME");
  sim::VerifyOptions options;
  options.trials = static_cast<int>(args.integer_option("--trials", 10, 1, kMaxTrials));
  options.seed = static_cast<std::uint64_t>(args.integer_option("--seed", 0, 0));
  options.image = args.image_options();
  const auto computation = args.option("--computation");
  const auto files = args.positionals(2);
  const isa::IsaView& isa = context.isa(isa_name);
  const hlo::Module kernel = load_kernel(context, files[0], computation);
  context.phase = fmt::format("reading '{}'", files[1]);
  const std::string program_text = read_file(files[1]);
  const sim::Program program = in_file(files[1], [&] { return sim::parse_program(program_text, isa); });
  context.phase = "verifying";
  const sim::VerifyResult result = sim::verify(kernel, isa, program, options);
  write_stdout(result.message + "\n");
  return result.ok ? kExitOk : kExitFailed;
}

}  // namespace act::cli
