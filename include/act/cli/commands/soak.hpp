// `act soak --isa NAME`: random kernels (sound) or lifted random programs (complete) through
// compile and verify (docs/soak.md); exit 1 when any miscompile (or, in complete mode, any
// kernel without a program) is found.
#pragma once

#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "act/cli/args.hpp"
#include "act/cli/context.hpp"
#include "act/cli/exit_codes.hpp"
#include "act/codegen/compile.hpp"
#include "act/testing/soak.hpp"

namespace act::cli {

inline int run_soak(Args& args, Context& context) {
  const std::string_view isa_name = args.required("--isa", "NAME");
  testing::SoakOptions options;
  options.kernels = static_cast<std::size_t>(args.integer_option("--kernels", 100, 1, kMaxKernels));
  options.seed = static_cast<std::uint64_t>(args.integer_option("--seed", 0, 0));
  options.jobs = static_cast<int>(args.integer_option("--jobs", args.integer_option("-j", 1, 1, kMaxJobs), 1, kMaxJobs));
  options.verify_trials = static_cast<int>(args.integer_option("--trials", 3, 1, kMaxTrials));
  options.kernel.max_nodes = static_cast<int>(args.integer_option("--max-nodes", 89, 7, 10'000));
  options.shrink_steps = static_cast<int>(args.integer_option("--shrink-steps", 60, 0, 1'000'000));
  const auto mode = args.option("--mode");
  if (!mode || *mode == "sound") options.mode = testing::SoakMode::Sound;
  else if (*mode == "complete") options.mode = testing::SoakMode::Complete;
  else throw UsageError{fmt::format("--mode must be sound or complete, got '{}'", *mode)};
  if (const auto seconds = args.seconds_option("--timeout")) options.timeout_seconds = *seconds;
  // --deterministic: compiles end on work limits (candidate counts, rewrite rounds, e-nodes,
  // extraction budget, schedules), the same on a busy machine as on a quiet one; --timeout is
  // then a safety net (give it room: compiles take longer than the default clock would allow).
  options.deterministic = args.flag("--deterministic");
  if (const auto save = args.option("--save")) options.save = std::string(*save);
  // --hang S: each kernel in a child process killed after S seconds (a safety net against a
  // compile that ignores its timeout; leave the shrinker time, e.g. 10 x timeout + 5). Default
  // 0: everything in this process, since compiles stop on their timeout.
  options.hang_seconds = args.seconds_option("--hang", true).value_or(0);
  options.first_index =
      static_cast<std::size_t>(args.integer_option("--start", 0, 0, std::numeric_limits<std::int64_t>::max() - kMaxKernels));
  const bool json = args.flag("--json");
  const bool quiet = args.flag("--quiet");
  std::mutex print_mutex;
  if (args.flag("--print-kernels"))
    options.generated = [&](std::size_t index, const std::string& text) {
      std::lock_guard lock(print_mutex);
      std::cout << fmt::format("// kernel {}\n{}", index, text) << std::flush;
    };
  args.positionals(0);
  const isa::IsaView isa = context.isa(isa_name);
  const testing::SoakCompiler compiler = [isa](const hlo::Module& kernel, const codegen::Options& o) {
    return codegen::compile_kernel(kernel, isa, o);
  };
  if (!quiet)
    options.progress = [&](const testing::SoakCounts& c) {
      std::cerr << fmt::format("\r[{}/{}] {}", c.generated, options.kernels, c.to_string()) << std::flush;
    };
  context.phase = fmt::format("soak-testing ISA {}", isa.name);
  const testing::SoakResult result = testing::soak(isa, compiler, options);
  if (!quiet) std::cerr << "\n";
  for (const auto& f : result.failures) {
    if (f.outcome == testing::SoakOutcome::Rejected && options.mode == testing::SoakMode::Sound && !json) continue;
    if (!json && (f.outcome == testing::SoakOutcome::Miscompiled || options.mode == testing::SoakMode::Complete))
      std::cout << fmt::format("kernel {} (seed {}, {} nodes{}{}): {}{}{}\n  {}\n", f.index, f.seed, f.nodes,
                               f.shrunk_nodes >= 0 ? fmt::format(", shrunk to {}", f.shrunk_nodes) : "",
                               f.shapes.any() ? fmt::format("; program: {}", f.shapes.names()) : "", to_string(f.outcome),
                               f.limit.empty() ? "" : fmt::format(" ({})", f.limit),
                               f.saved.empty() ? "" : fmt::format(", saved in {}", f.saved), f.message.substr(0, f.message.find('\n')));
  }
  if (json) std::cout << result.to_json(isa.name, options);
  else
    std::cout << fmt::format("act soak --isa {} --mode {} --seed {}: {} ({:.1f} s)\n", isa.name,
                             options.mode == testing::SoakMode::Sound ? "sound" : "complete", options.seed,
                             result.counts.to_string(), result.seconds);
  if (!json && options.mode == testing::SoakMode::Complete) std::cout << fmt::format("  {}\n", result.shapes.to_string());
  if (!json) {  // what ended the compiles that found nothing: load-dependent or a work limit
    std::map<std::string, std::size_t> limits;
    for (const auto& f : result.failures)
      if (!f.limit.empty()) ++limits[f.limit];
    std::vector<std::string> parts;
    for (const auto& [limit, count] : limits) parts.push_back(fmt::format("{} {}", limit, count));
    if (!parts.empty()) std::cout << fmt::format("  ended by: {}\n", fmt::join(parts, ", "));
  }
  const bool bug = result.counts.miscompiled > 0 ||
                   (options.mode == testing::SoakMode::Complete && result.counts.not_found + result.counts.timed_out > 0);
  return bug ? kExitFailed : kExitOk;
}

}  // namespace act::cli
