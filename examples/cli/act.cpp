// The `act` command. Subcommands live in one table (kCommands); adding one is a function
// `int run_xxx(Args&)` plus a row.
//
// Exit codes (DESIGN.md): 0 ok, 1 no code / verification failed, 2 bad input (any act::Error
// from parsing, an unknown ISA, a missing file, bad arguments), 3 (`act run`) this CPU lacks a
// feature the program needs, so nothing ran. No exception escapes main.
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <sstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/codegen/backend.hpp"
#include "act/codegen/preflight.hpp"
#include "act/core/error.hpp"
#include "act/hlo/inline.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/printer.hpp"
#include "act/isa/registry.hpp"
#include "act/native/emit_c.hpp"
#include "act/native/run.hpp"
#include "act/select/rules/rule_set.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/program_formats.hpp"
#include "act/sim/verify.hpp"
#include "act/testing/soak.hpp"

#ifndef ACT_VERSION
#define ACT_VERSION "0.1.0"
#endif

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitCpuLacksFeature = 3;

// Input files (HLO, assembly) are read whole up to this size: 64 MiB is 250x the largest
// module of the corpus, and far beyond any tiled kernel.
constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;
// Timeouts and hang limits: at most 10^6 s (11.6 days), so deadlines stay far inside the clock.
constexpr double kMaxSeconds = 1e6;
// Counts a user may ask for: trials, kernels, jobs.
constexpr std::int64_t kMaxTrials = 1'000'000;
constexpr std::int64_t kMaxKernels = 1'000'000;
constexpr std::int64_t kMaxJobs = 1024;

// What the command is doing, for an out-of-memory message ("while compiling 'k.hlo'").
std::string g_phase = "starting";

// A bad command line: reported with the command's usage, exit 2.
struct UsageError {
  std::string message;
};

// An act::Error from reading a file, already formatted as "FILE:line:column: kind: message".
struct FileError {
  std::string message;
};

// The arguments after the subcommand name: options (`--name value` or `--flag`) and positionals.
class Args {
 public:
  explicit Args(std::vector<std::string_view> args) : args_(std::move(args)), used_(args_.size(), false) {}

  bool flag(std::string_view name) {
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (!used_[i] && args_[i] == name) return used_[i] = true;
    return false;
  }
  std::optional<std::string_view> option(std::string_view name) {
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (used_[i]) continue;
      if (args_[i] == name) {
        if (i + 1 >= args_.size()) throw UsageError{fmt::format("{} needs a value", name)};
        used_[i] = used_[i + 1] = true;
        return args_[i + 1];
      }
      if (args_[i].size() > name.size() && args_[i].substr(0, name.size()) == name && args_[i][name.size()] == '=') {
        used_[i] = true;
        return args_[i].substr(name.size() + 1);
      }
    }
    return std::nullopt;
  }
  // An integer in [min, max]; anything else (not a number, out of range) is a usage error,
  // never a silently narrowed or wrapped value.
  std::int64_t integer_option(std::string_view name, std::int64_t fallback, std::int64_t min,
                              std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    const auto text = option(name);
    if (!text) return fallback;
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || ptr != text->data() + text->size() || value < min || value > max) {
      if (max == std::numeric_limits<std::int64_t>::max())
        throw UsageError{fmt::format("{} needs an integer >= {}, got '{}'", name, min, *text)};
      throw UsageError{fmt::format("{} needs an integer from {} to {}, got '{}'", name, min, max, *text)};
    }
    return value;
  }
  // A finite number of seconds in (0, kMaxSeconds] (or [0, ...] when zero_allowed): larger
  // values would overflow the clock's deadline arithmetic.
  std::optional<double> seconds_option(std::string_view name, bool zero_allowed = false) {
    const auto text = option(name);
    if (!text) return std::nullopt;
    double seconds = -1;
    const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), seconds);
    const bool ok = ec == std::errc() && ptr == text->data() + text->size() && std::isfinite(seconds) &&
                    (zero_allowed ? seconds >= 0 : seconds > 0) && seconds <= kMaxSeconds;
    if (!ok)
      throw UsageError{fmt::format("{} needs a number of seconds {} 0 and <= {:g}, got '{}'", name, zero_allowed ? ">=" : ">",
                                   kMaxSeconds, *text)};
    return seconds;
  }
  // The remaining arguments, which must be exactly `count` positionals.
  std::vector<std::string_view> positionals(std::size_t count) { return positionals(count, count); }
  // The remaining arguments, which must be from `min` to `max` positionals.
  std::vector<std::string_view> positionals(std::size_t min, std::size_t max) {
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (used_[i]) continue;
      if (args_[i].size() > 1 && args_[i][0] == '-') throw UsageError{fmt::format("unknown option '{}'", args_[i])};
      out.push_back(args_[i]);
    }
    if (out.size() < min || out.size() > max)
      throw UsageError{fmt::format("expected {}{} file argument{}, got {}", min, max == min ? "" : fmt::format(" or {}", max),
                                   max == 1 ? "" : "s", out.size())};
    return out;
  }

 private:
  std::vector<std::string_view> args_;
  std::vector<bool> used_;
};

// Reads a whole text input, at most kMaxInputBytes: a device that never ends (/dev/zero) or a
// huge file gets an error instead of filling memory, and a directory is not an empty file.
std::string read_file(std::string_view path) {
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::path(path), ec))
    throw act::Error(act::ErrorKind::Io, fmt::format("'{}' is a directory, not a file", path));
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) throw act::Error(act::ErrorKind::Io, fmt::format("cannot open '{}'", path));
  std::string text;
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes)
      throw act::Error(act::ErrorKind::Io, fmt::format("'{}' is larger than act's limit of {} MiB for an input file", path,
                                                       kMaxInputBytes >> 20));
  }
  if (in.bad()) throw act::Error(act::ErrorKind::Io, fmt::format("cannot read '{}'", path));
  return text;
}

// Runs `f`, prefixing the file name to errors located in its text ("a.hlo:3:7: parse error: ...").
template <class F>
auto in_file(std::string_view path, F&& f) {
  try {
    return f();
  } catch (const act::Error& e) {
    throw FileError{fmt::format("{}:{}{}", path, e.location().known() ? "" : " ", e.what())};
  }
}

act::hlo::Module load_module(std::string_view path) {
  g_phase = fmt::format("reading '{}'", path);
  const std::string text = read_file(path);
  g_phase = fmt::format("parsing '{}'", path);
  return in_file(path, [&] { return act::hlo::parse_module(text); });
}

// `--align N`: HBM region alignment of the kernel image (a power of two; default 64).
act::sim::ImageOptions image_options(Args& args) {
  act::sim::ImageOptions image;
  image.alignment = args.integer_option("--align", image.alignment, 1);
  if ((image.alignment & (image.alignment - 1)) != 0 || image.alignment > (std::int64_t{1} << 30))
    throw UsageError{fmt::format("--align needs a power of two from 1 to 2^30, got {}", image.alignment)};
  return image;
}

// The kernel to compile or verify: the module's entry, or the computation --computation names
// (a fused computation of an XLA dump), with its calls and fusions inlined (hlo/inline.hpp).
act::hlo::Module load_kernel(std::string_view path, std::optional<std::string_view> computation) {
  act::hlo::Module module = load_module(path);
  return in_file(path, [&] {
    if (computation) module = act::hlo::select_computation(module, *computation);
    return act::hlo::inline_calls(module);
  });
}

// Writes `text` to `path` and checks that it reached the file (a full disk shows at flush or
// close, not at the write).
void write_file(std::string_view path, const std::string& text) {
  g_phase = fmt::format("writing '{}'", path);
  std::ofstream out{std::string(path), std::ios::binary};
  if (!out) throw act::Error(act::ErrorKind::Io, fmt::format("cannot open '{}' for writing", path));
  out << text;
  out.close();
  if (!out) throw act::Error(act::ErrorKind::Io, fmt::format("cannot write '{}'", path));
}

// Writes to standard output and checks that it got there (stdout may be a full disk or a
// closed pipe).
void write_stdout(const std::string& text) {
  std::cout << text << std::flush;
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
    throw act::Error(act::ErrorKind::Io, "cannot write to standard output");
}

// True when `a` and `b` name the same existing file (so `-o` cannot overwrite the input).
bool same_file(std::string_view a, std::string_view b) {
  std::error_code ec;
  const bool same = std::filesystem::equivalent(std::filesystem::path(a), std::filesystem::path(b), ec);
  return !ec && same;
}

// ---------------------------------------------------------------- subcommands

int run_parse(Args& args) {
  const auto files = args.positionals(1);
  write_stdout(act::hlo::print_module(load_module(files[0])));
  return kExitOk;
}

int run_verify(Args& args) {
  const auto isa_name = args.option("--isa");
  if (!isa_name) throw UsageError{"--isa NAME is required"};
  act::sim::VerifyOptions options;
  options.trials = static_cast<int>(args.integer_option("--trials", 10, 1, kMaxTrials));
  options.seed = static_cast<std::uint64_t>(args.integer_option("--seed", 0, 0));
  options.image = image_options(args);
  const auto computation = args.option("--computation");
  const auto files = args.positionals(2);
  const act::isa::IsaView isa = act::isa::find_view(*isa_name);
  const act::hlo::Module kernel = load_kernel(files[0], computation);
  g_phase = fmt::format("reading '{}'", files[1]);
  const std::string program_text = read_file(files[1]);
  const act::sim::Program program = in_file(files[1], [&] { return act::sim::parse_program(program_text, isa); });
  g_phase = "verifying";
  const act::sim::VerifyResult result = act::sim::verify(kernel, isa, program, options);
  write_stdout(result.message + "\n");
  return result.ok ? kExitOk : kExitFailed;
}

std::string buffer_description(const act::isa::Buffer& b) {
  std::vector<std::int64_t> access(b.access_dims.begin(), b.access_dims.end());
  std::vector<std::int64_t> unit(b.unit_dims.begin(), b.unit_dims.end());
  if (b.is_hbm) return fmt::format("{:<8} HBM, {} bytes", b.name, access.empty() ? 0 : access[0]);
  return fmt::format("{:<8} [{}] of {}[{}]", b.name, fmt::join(access, ","), act::name(b.dtype), fmt::join(unit, ","));
}

int run_isas(Args& args) {
  args.positionals(0);
  for (const std::string_view name : act::isa::isa_names()) {
    const act::isa::IsaView isa = act::isa::find_view(name);
    std::cout << isa.name << "\n  buffers:\n";
    for (const auto& b : isa.buffers) std::cout << "    " << buffer_description(b) << "\n";
    if (!isa.state.empty()) {
      std::cout << "  state:\n";
      for (const auto& s : isa.state) std::cout << fmt::format("    {} (initially {})\n", s.name, s.initial);
    }
    std::cout << "  instructions:\n";
    for (const auto& i : isa.instructions) {
      const auto names = [](const act::isa::Names& list) {
        return list.empty() ? std::string("none") : fmt::format("{}", fmt::join(list.begin(), list.end(), ", "));
      };
      std::cout << fmt::format("    {}(alpha: {}; beta: {})\n", i.name, names(i.alpha), names(i.beta));
    }
  }
  return kExitOk;
}

int run_rules(Args& args) {
  const auto isa_name = args.option("--isa");
  if (!isa_name) throw UsageError{"--isa NAME is required"};
  args.positionals(0);
  std::cout << act::select::describe_rules(act::isa::find_view(*isa_name));
  return kExitOk;
}

// `act compile`: HLO in, assembly out (Backend<Isa>::try_compile); exit 1 when no program is
// found within the budget or --verify finds a mismatch.
int run_compile(Args& args) {
  const auto isa_name = args.option("--isa");
  if (!isa_name) throw UsageError{"--isa NAME is required"};
  const auto output = args.option("-o");
  const auto format_name = args.option("--format");
  const bool c_format = format_name && *format_name == "c";
  const auto format = act::sim::parse_program_format(format_name && !c_format ? *format_name : "text");
  if (!format) throw UsageError{fmt::format("--format must be text, json, python or c, got '{}'", *format_name)};
  // --verify alone (10 trials) or --verify=N; a bare --verify must not swallow the next argument.
  int trials = 0;
  if (args.flag("--verify")) trials = 10;
  else if (const auto n = args.option("--verify")) {
    const auto [ptr, ec] = std::from_chars(n->data(), n->data() + n->size(), trials);
    if (ec != std::errc() || ptr != n->data() + n->size() || trials < 1 || trials > kMaxTrials)
      throw UsageError{fmt::format("--verify=N needs an integer from 1 to {}, got '{}'", kMaxTrials, *n)};
  }
  act::codegen::Options options;
  if (const auto seconds = args.seconds_option("--timeout")) options.timeout = std::chrono::duration<double>(*seconds);
  options.deterministic = args.flag("--deterministic");
  options.max_candidates = static_cast<std::size_t>(args.integer_option("--candidates", 0, 1));
  options.image = image_options(args);
  const bool stats = args.flag("--stats");
  const bool hex = args.flag("--hex");
  const auto dot = args.option("--dot");
  const auto computation = args.option("--computation");
  const auto files = args.positionals(1);
  for (const auto written : {output, dot})
    if (written && same_file(*written, files[0]))
      throw UsageError{fmt::format("'{}' is the input file; act does not overwrite its input", *written)};
  const act::isa::IsaView isa = act::isa::find_view(*isa_name);
  if (c_format && !isa.c_mapping) throw UsageError{fmt::format("ISA {} has no C mapping; --format c needs one", isa.name)};
  const act::hlo::Module kernel = load_kernel(files[0], computation);
  g_phase = fmt::format("compiling '{}' for ISA {}", files[0], isa.name);
  // Kernels no program can exist for (tensors larger than the ISA's memories) or that act
  // does not compile (zero-element tensors) end here, before the search.
  if (const auto refusal = in_file(files[0], [&] { return act::codegen::preflight(kernel, isa); })) {
    std::cerr << "act compile: " << *refusal << "\n";
    return kExitFailed;
  }
  act::codegen::CompileOutcome outcome = act::isa::with_isa(*isa_name, [&](auto type) {
    using Isa = typename decltype(type)::type;
    return in_file(files[0], [&] { return act::Backend<Isa>().try_compile(kernel, options); });
  });
  if (stats) std::cerr << outcome.statistics.to_string();
  if (!outcome) {
    std::cerr << "act compile: " << outcome.message << "\n";
    return kExitFailed;
  }
  const act::CompileResult& result = *outcome.result;
  act::sim::ProgramFormatOptions print;
  print.hex = hex;
  print.kernel_name = kernel.name;
  print.source = std::string(files[0]);
  print.extra_header.push_back(fmt::format("{} instructions, cost {} (declared instruction costs), candidate {} of {}",
                                           result.program.instructions.size(), result.cost, result.statistics.best_candidate,
                                           result.statistics.candidates));
  const std::string text =
      c_format ? act::native::emit_c(result.program, isa, result.image,
                                     {.function_name = act::native::c_identifier(kernel.name.empty() ? "kernel" : kernel.name),
                                      .source = std::string(files[0])})
               : act::sim::format_program(*format, result.program, isa, result.image, print);
  if (output) write_file(*output, text);
  else write_stdout(text);
  if (dot) write_file(*dot, result.dot);
  if (trials > 0) {
    act::sim::VerifyOptions verify;
    verify.trials = trials;
    verify.image = options.image;
    g_phase = "verifying the compiled program";
    const act::sim::VerifyResult v = act::sim::verify(kernel, isa, result.program, verify);
    std::cerr << v.message << "\n";
    if (!v.ok) return kExitFailed;
  }
  return kExitOk;
}

// `act run`: compile (or take PROGRAM.asm), emit C, build it with the system compiler, run it on
// this CPU on random inputs and compare with the simulator (bit for bit) and the reference
// interpreter. Exit 1 on a difference or no program, 3 when this CPU lacks a needed feature.
int run_run(Args& args) {
  const auto isa_name = args.option("--isa");
  if (!isa_name) throw UsageError{"--isa NAME is required"};
  act::native::NativeRunOptions options;
  options.trials = static_cast<int>(args.integer_option("--trials", 20, 1));
  options.seed = static_cast<std::uint64_t>(args.integer_option("--seed", 0, 0));
  options.image = image_options(args);
  options.emulate = args.flag("--emulate");
  if (const auto cc = args.option("--cc")) options.build.compiler = std::string(*cc);
  const auto keep = args.option("-o");
  act::codegen::Options compile;
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
  const act::isa::IsaView isa = act::isa::find_view(*isa_name);
  if (!isa.c_mapping) throw UsageError{fmt::format("ISA {} has no C mapping; act run needs one", isa.name)};
  const act::hlo::Module kernel = load_module(files[0]);
  act::sim::Program program;
  if (files.size() == 2) {
    const std::string text = read_file(files[1]);
    program = in_file(files[1], [&] { return act::sim::parse_program(text, isa); });
  } else {
    act::codegen::CompileOutcome outcome = act::isa::with_isa(*isa_name, [&](auto type) {
      using Isa = typename decltype(type)::type;
      return in_file(files[0], [&] { return act::Backend<Isa>().try_compile(kernel, compile); });
    });
    if (!outcome) {
      std::cerr << "act run: " << outcome.message << "\n";
      return kExitFailed;
    }
    program = std::move(outcome.result->program);
    std::cerr << fmt::format("act run: compiled {} instructions\n", program.instructions.size());
  }
  if (keep) {
    const act::sim::KernelImage image = act::sim::kernel_image(kernel, options.image);
    std::ofstream out{std::string(*keep), std::ios::binary};
    const std::string c = act::native::emit_c(program, isa, image, {.function_name = "act_kernel", .source = std::string(files[0])});
    if (!out || !(out << c)) throw act::Error(act::ErrorKind::Io, fmt::format("cannot write '{}'", *keep));
  }
  const act::native::NativeRunResult r = act::native::run_natively(kernel, isa, program, options);
  std::cerr << "act run: built with: " << r.build_command << "\n";
  if (r.status == act::native::NativeStatus::Unsupported) {
    std::cerr << "act run: " << r.message << "\n";
    return kExitCpuLacksFeature;
  }
  std::cout << r.message << "\n";
  return r.ok() ? kExitOk : kExitFailed;
}

// `act soak`: random kernels (sound) or lifted random programs (complete) through compile and
// verify; exit 1 when any miscompile (or, in complete mode, any kernel without a program) is found.
int run_soak(Args& args) {
  const auto isa_name = args.option("--isa");
  if (!isa_name) throw UsageError{"--isa NAME is required"};
  act::testing::SoakOptions options;
  options.kernels = static_cast<std::size_t>(args.integer_option("--kernels", 100, 1, kMaxKernels));
  options.seed = static_cast<std::uint64_t>(args.integer_option("--seed", 0, 0));
  options.jobs = static_cast<int>(args.integer_option("--jobs", args.integer_option("-j", 1, 1, kMaxJobs), 1, kMaxJobs));
  options.verify_trials = static_cast<int>(args.integer_option("--trials", 3, 1, kMaxTrials));
  options.kernel.max_nodes = static_cast<int>(args.integer_option("--max-nodes", 89, 7, 10'000));
  options.shrink_steps = static_cast<int>(args.integer_option("--shrink-steps", 60, 0, 1'000'000));
  const auto mode = args.option("--mode");
  if (!mode || *mode == "sound") options.mode = act::testing::SoakMode::Sound;
  else if (*mode == "complete") options.mode = act::testing::SoakMode::Complete;
  else throw UsageError{fmt::format("--mode must be sound or complete, got '{}'", *mode)};
  if (const auto seconds = args.seconds_option("--timeout")) options.timeout_seconds = *seconds;
  if (const auto save = args.option("--save")) options.save = std::string(*save);
  // --hang S: each kernel in a child process killed after S seconds (a safety net against a
  // compile that ignores its timeout; leave the shrinker time, e.g. 10 x timeout + 5). Default
  // 0: everything in this process, since compiles stop on their timeout.
  options.hang_seconds = args.seconds_option("--hang", true).value_or(0);
  options.first_index = static_cast<std::size_t>(args.integer_option("--start", 0, 0, std::numeric_limits<std::int64_t>::max() - kMaxKernels));
  const bool json = args.flag("--json");
  const bool quiet = args.flag("--quiet");
  std::mutex print_mutex;
  if (args.flag("--print-kernels"))
    options.generated = [&](std::size_t index, const std::string& text) {
      std::lock_guard lock(print_mutex);
      std::cout << fmt::format("// kernel {}\n{}", index, text) << std::flush;
    };
  args.positionals(0);
  const act::isa::IsaView isa = act::isa::find_view(*isa_name);
  const act::testing::SoakCompiler compiler = act::isa::with_isa(*isa_name, [](auto type) {
    return act::testing::compiler_for<typename decltype(type)::type>();
  });
  if (!quiet)
    options.progress = [&](const act::testing::SoakCounts& c) {
      std::cerr << fmt::format("\r[{}/{}] {}", c.generated, options.kernels, c.to_string()) << std::flush;
    };
  const act::testing::SoakResult result = act::testing::soak(isa, compiler, options);
  if (!quiet) std::cerr << "\n";
  for (const auto& f : result.failures) {
    if (f.outcome == act::testing::SoakOutcome::Rejected && options.mode == act::testing::SoakMode::Sound && !json) continue;
    if (!json && (f.outcome == act::testing::SoakOutcome::Miscompiled || options.mode == act::testing::SoakMode::Complete))
      std::cout << fmt::format("kernel {} (seed {}, {} nodes{}): {}{}{}\n  {}\n", f.index, f.seed, f.nodes,
                               f.shrunk_nodes >= 0 ? fmt::format(", shrunk to {}", f.shrunk_nodes) : "", to_string(f.outcome),
                               f.limit.empty() ? "" : fmt::format(" ({})", f.limit),
                               f.saved.empty() ? "" : fmt::format(", saved in {}", f.saved), f.message.substr(0, f.message.find('\n')));
  }
  if (json) std::cout << result.to_json(isa.name, options);
  else std::cout << fmt::format("act soak --isa {} --mode {} --seed {}: {} ({:.1f} s)\n", isa.name,
                                options.mode == act::testing::SoakMode::Sound ? "sound" : "complete", options.seed,
                                result.counts.to_string(), result.seconds);
  if (!json) {  // what ended the compiles that found nothing: load-dependent or a work limit
    std::map<std::string, std::size_t> limits;
    for (const auto& f : result.failures)
      if (!f.limit.empty()) ++limits[f.limit];
    std::vector<std::string> parts;
    for (const auto& [limit, count] : limits) parts.push_back(fmt::format("{} {}", limit, count));
    if (!parts.empty()) std::cout << fmt::format("  ended by: {}\n", fmt::join(parts, ", "));
  }
  const bool bug = result.counts.miscompiled > 0 ||
                   (options.mode == act::testing::SoakMode::Complete && result.counts.not_found + result.counts.timed_out > 0);
  return bug ? kExitFailed : kExitOk;
}

struct Command {
  std::string_view name;
  std::string_view usage;  // arguments after the name
  std::string_view summary;
  int (*run)(Args&);
};

constexpr Command kCommands[] = {
    {"parse", "FILE.hlo", "check an HLO module and print it in XLA's text form", run_parse},
    {"verify", "--isa NAME KERNEL.hlo PROGRAM.asm [--trials N] [--seed S] [--align N] [--computation NAME]",
     "run the program in the simulator on random inputs and compare with the kernel", run_verify},
    {"compile",
     "--isa NAME KERNEL.hlo [-o FILE] [--format text|json|python|c] [--verify[=N]] [--timeout S] [--deterministic] "
     "[--candidates N] [--stats] [--dot FILE] [--hex] [--align N] [--computation NAME]",
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
     "--isa NAME [--kernels N] [--seed S] [--mode sound|complete] [-j J] [--timeout S] [--save DIR] [--json] [--trials N] "
     "[--max-nodes N] [--shrink-steps N] [--start I] [--print-kernels] [--hang S] [--quiet]",
     "compile random kernels (sound) or lifted random programs (complete) and verify them; exit 1 on a miscompile or, in "
     "complete mode, a kernel without a program", run_soak},
};

void print_help(std::ostream& out) {
  out << "act " << ACT_VERSION << " - compiler backends for tensor accelerators from ISA descriptions\n\n"
      << "usage: act COMMAND [ARGS...]\n\ncommands:\n";
  for (const auto& c : kCommands) out << fmt::format("  act {} {}\n      {}\n", c.name, c.usage, c.summary);
  out << "\n  act --help | --version\n\n"
      << "exit codes: 0 ok, 1 verification failed (or no code), 2 bad input, 3 this CPU lacks a feature the program needs (act run)\n";
}

int run(std::span<char*> argv) {
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
    return command->run(args);
  } catch (const UsageError& e) {
    std::cerr << fmt::format("act {}: {}\nusage: act {} {}\n", command->name, e.message, command->name, command->usage);
    return kExitBadInput;
  }
}

}  // namespace

// Exit code of a command that ran: its own, unless standard output lost what it printed.
int checked_exit(int code) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << "act: i/o error: cannot write to standard output\n";
    return kExitBadInput;
  }
  return code;
}

int main(int argc, char** argv) {
  try {
    return checked_exit(run(std::span<char*>(argv, static_cast<std::size_t>(argc))));
  } catch (const std::bad_alloc&) {
    // Out of memory is a resource limit, not bad input: a compile that runs out has found no
    // program (exit 1); reading, parsing or verifying a kernel too large to hold is exit 2.
    std::cerr << "act: out of memory while " << g_phase << "\n";
    return g_phase.rfind("compiling", 0) == 0 ? kExitFailed : kExitBadInput;
  } catch (const FileError& e) {
    std::cerr << "act: " << e.message << "\n";
    return kExitBadInput;
  } catch (const act::Error& e) {
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
