// The soak driver behind `act soak`: generate -> compile -> verify -> classify -> save/shrink.
//
//   sound     random kernels (random_kernel.hpp); every one that compiles is verified by the
//             simulator against hlo::evaluate. A mismatch is a miscompile.
//   complete  random valid programs lifted to kernels (random_program.hpp); a program exists by
//             construction, so "no program found" is a completeness bug.
//
//   act::testing::SoakOptions o;  o.kernels = 100;  o.seed = 5;
//   act::testing::SoakResult r = act::testing::soak(act::isa::view<Isa>(), act::testing::compiler_for<Isa>(), o);
//
// Failures are saved (when options.save is set) as DIR/<isa>-<mode>-<seed>/ with kernel.hlo,
// program.asm (the miscompiled or the constructed program), shrunk.hlo and report.txt, and are
// shrunk by dropping nodes (shrink_kernel) while the failure persists.
// Jobs: each worker thread owns its compiles (a Backend is stateless and every compile builds
// its own e-graph and Z3 context), so J workers run J kernels at once.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include "act/codegen/backend.hpp"
#include "act/core/error.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/printer.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/program_formats.hpp"
#include "act/sim/verify.hpp"
#include "act/testing/random_kernel.hpp"
#include "act/testing/random_program.hpp"

namespace act::testing {

enum class SoakMode { Sound, Complete };

enum class SoakOutcome {
  Verified,     // compiled, and the simulator agrees with the interpreter
  Miscompiled,  // compiled, and they disagree (or the program fails to run)
  NotFound,     // no program: the search ended without one
  TimedOut,     // no program within the timeout
  Rejected,     // the kernel is outside what the backend accepts (act::Error from compile)
};

constexpr std::string_view to_string(SoakOutcome o) {
  switch (o) {
    case SoakOutcome::Verified: return "verified";
    case SoakOutcome::Miscompiled: return "miscompiled";
    case SoakOutcome::NotFound: return "not found";
    case SoakOutcome::TimedOut: return "timed out";
    case SoakOutcome::Rejected: return "rejected";
  }
  return "?";
}

// Compiles one kernel (Backend<Isa>::try_compile, or anything else in tests).
using SoakCompiler = std::function<codegen::CompileOutcome(const hlo::Module&, const codegen::Options&)>;

template <class Isa>
SoakCompiler compiler_for() {
  return [](const hlo::Module& m, const codegen::Options& o) { return Backend<Isa>().try_compile(m, o); };
}

struct SoakOptions {
  SoakMode mode = SoakMode::Sound;
  std::size_t kernels = 100;
  std::uint64_t seed = 0;
  int jobs = 1;
  double timeout_seconds = 5;
  // Compiles stop on work limits only (codegen::Options::deterministic: the termination
  // heuristic counts candidates; rewriting, extraction and schedules are bounded by counts), so
  // outcomes do not depend on machine load; the timeout becomes a safety net, reported as such.
  bool deterministic = false;
  int verify_trials = 3;
  std::optional<std::filesystem::path> save;  // where failures go
  int shrink_steps = 60;                      // compiles the shrinker may spend per failure
  double shrink_seconds = 0;                  // wall-clock per failure (first compile included); 0: 10 x timeout
  bool shrink_not_found = true;               // shrink completeness failures too (complete mode)
  RandomKernelOptions kernel;
  RandomProgramOptions program;
  // Called after every kernel (serialised), e.g. for a progress line.
  std::function<void(const struct SoakCounts&)> progress;
  // > 0: each kernel runs in a forked child that is killed after this many seconds and counted
  // as timed out. Optional safety net: compiles stop on their timeout (the extractor reads the
  // deadline inside a level too), but a hang anywhere else would otherwise stall the soak.
  double hang_seconds = 0;
  std::size_t first_index = 0;  // kernels first_index .. first_index + kernels - 1 (to rerun one)
  // Called with each kernel's text before it is compiled (from the worker thread).
  std::function<void(std::size_t index, const std::string& hlo_text)> generated;
};

// The limit (SoakRecord::limit) of a compile that ended on a saturated e-graph without a
// program: a proof, under act's rewrite rules, that the kernel has none.
inline constexpr std::string_view kProvedNoProgram = "search exhausted (saturated e-graph)";

struct SoakCounts {
  std::size_t generated = 0, compiled = 0, verified = 0, miscompiled = 0, not_found = 0, timed_out = 0, rejected = 0;
  std::size_t proved_impossible = 0;  // of not_found: ended on kProvedNoProgram, not on a work limit
  void add(SoakOutcome o, std::string_view limit = {}) {
    ++generated;
    switch (o) {
      case SoakOutcome::Verified: ++compiled; ++verified; break;
      case SoakOutcome::Miscompiled: ++compiled; ++miscompiled; break;
      case SoakOutcome::NotFound: ++not_found; proved_impossible += limit == kProvedNoProgram; break;
      case SoakOutcome::TimedOut: ++timed_out; break;
      case SoakOutcome::Rejected: ++rejected; break;
    }
  }
  std::string to_string() const {
    return fmt::format("generated {}, compiled {}, verified {}, miscompiled {}, not found {} (proved impossible {}), timed out {}, rejected {}",
                       generated, compiled, verified, miscompiled, not_found, proved_impossible, timed_out, rejected);
  }
};

struct SoakRecord {
  std::size_t index = 0;
  std::uint64_t seed = 0;  // the per-kernel seed (reproduces the kernel alone)
  SoakOutcome outcome = SoakOutcome::Verified;
  int nodes = 0;
  std::string message;
  // What ended a compile that found nothing: "wall-clock timeout" (depends on machine load) or a
  // work limit ("rewriting: node limit", "rewriting: iteration limit", "search exhausted"), which
  // does not. Empty for other outcomes.
  std::string limit;
  std::string saved;       // directory, if saved
  int shrunk_nodes = -1;   // after shrinking, if shrunk
  double compile_seconds = 0;  // the first compile (shrinking not included)
  ProgramShapes shapes;        // complete mode: what the lifted program does
};

// Complete mode: how many generated kernels come from programs of each shape.
struct ShapeCounts {
  std::size_t spills = 0, reloads_input = 0, odd_tiles = 0, computes_on_chip = 0;
  void add(const ProgramShapes& s) {
    spills += s.spills;
    reloads_input += s.reloads_input;
    odd_tiles += s.odd_tiles;
    computes_on_chip += s.computes_on_chip;
  }
  std::string to_string() const {
    return fmt::format("programs that spill {}, reload an input {}, have odd tile counts {}, compute on chip {}", spills, reloads_input,
                       odd_tiles, computes_on_chip);
  }
};

inline unsigned shape_bits(const ProgramShapes& s) {
  return (s.spills ? 1u : 0u) | (s.reloads_input ? 2u : 0u) | (s.odd_tiles ? 4u : 0u) | (s.computes_on_chip ? 8u : 0u);
}
inline ProgramShapes shapes_of_bits(unsigned b) { return {(b & 1u) != 0, (b & 2u) != 0, (b & 4u) != 0, (b & 8u) != 0}; }

struct SoakResult {
  SoakCounts counts;
  ShapeCounts shapes;  // complete mode
  std::vector<SoakRecord> failures;  // everything but Verified, in index order
  double seconds = 0;
  double slowest_seconds = 0;  // the slowest first compile, and its kernel index
  std::size_t slowest_index = 0;

  std::string to_json(std::string_view isa, const SoakOptions& o) const {
    std::string out = fmt::format(
        "{{\"isa\": {}, \"mode\": \"{}\", \"seed\": {}, \"kernels\": {}, \"jobs\": {}, \"timeout\": {}, \"deterministic\": {}, \"seconds\": {:.3f}, \"slowest\": {{\"index\": {}, \"seconds\": {:.3f}}},\n"
        " \"counts\": {{\"generated\": {}, \"compiled\": {}, \"verified\": {}, \"miscompiled\": {}, \"not_found\": {}, "
        "\"proved_impossible\": {}, \"timed_out\": {}, \"rejected\": {}}},\n \"program_shapes\": {{\"spills\": {}, \"reloads_input\": {}, \"odd_tiles\": {}, \"computes_on_chip\": {}}},\n \"failures\": [",
        sim::formats_detail::json_string(isa), o.mode == SoakMode::Sound ? "sound" : "complete", o.seed, o.kernels, o.jobs, o.timeout_seconds, o.deterministic, seconds, slowest_index, slowest_seconds,
        counts.generated, counts.compiled, counts.verified, counts.miscompiled, counts.not_found, counts.proved_impossible, counts.timed_out, counts.rejected,
        shapes.spills, shapes.reloads_input, shapes.odd_tiles, shapes.computes_on_chip);
    for (std::size_t i = 0; i < failures.size(); ++i) {
      const auto& f = failures[i];
      out += fmt::format("{}\n  {{\"index\": {}, \"seed\": {}, \"outcome\": \"{}\", \"limit\": {}, \"nodes\": {}, \"shrunk_nodes\": {}, \"seconds\": {:.3f}, "
                         "\"shapes\": {}, \"saved\": {}, \"message\": {}}}",
                         i ? "," : "", f.index, f.seed, to_string(f.outcome), sim::formats_detail::json_string(f.limit), f.nodes, f.shrunk_nodes,
                         f.compile_seconds, shape_bits(f.shapes), sim::formats_detail::json_string(f.saved),
                         sim::formats_detail::json_string(f.message));
    }
    return out + "]}\n";
  }
};

// Shrinks `kernel` while `still_fails` holds: replaces one entry instruction by an operand of
// the same shape, or by a new parameter of its shape, then drops what the root no longer
// reaches. Greedy, root first; at most `max_steps` calls of the predicate. Never shrinks to a
// kernel whose root is a parameter (nothing left to compile).
inline hlo::Module shrink_kernel(hlo::Module kernel, const std::function<bool(const hlo::Module&)>& still_fails, int max_steps) {
  int steps = 0;
  bool progress = true;
  while (progress && steps < max_steps) {
    progress = false;
    const auto& c = kernel.entry_computation();
    for (std::size_t i = c.instructions.size(); i-- > 0 && !progress && steps < max_steps;) {
      const hlo::Instruction& ins = kernel.entry_computation().instructions[i];
      if (ins.opcode == hlo::Opcode::Parameter || ins.shape.is_tuple) continue;
      std::vector<int> replacements;  // operand indices; -1: a fresh parameter
      for (int o : ins.operands)
        if (kernel.entry_computation().instructions[static_cast<std::size_t>(o)].shape == ins.shape) replacements.push_back(o);
      replacements.push_back(-1);
      for (int r : replacements) {
        hlo::Module candidate = kernel;
        hlo::Computation& e = candidate.entry_computation();
        if (r >= 0) {
          for (auto& x : e.instructions)
            for (int& o : x.operands)
              if (o == static_cast<int>(i)) o = r;
          if (e.root == static_cast<int>(i)) e.root = r;
        } else {
          hlo::Instruction p;
          p.name = ins.name;
          p.opcode = hlo::Opcode::Parameter;
          p.shape = ins.shape;
          p.parameter_number = static_cast<std::int64_t>(e.parameters.size());
          e.instructions[i] = std::move(p);
        }
        candidate.entry_result_layout.reset();
        candidate.entry_parameter_layouts.reset();
        remove_dead_code(candidate, false);
        // A kernel that returns an input computes nothing: it "fails" for its own reason (act does
        // not copy inputs to outputs), not the one being shrunk.
        if (e.instructions[static_cast<std::size_t>(e.root)].opcode == hlo::Opcode::Parameter) continue;
        if (hlo::print_module(candidate) == hlo::print_module(kernel)) continue;
        ++steps;
        bool fails = false;
        try {
          fails = still_fails(candidate);
        } catch (const Error&) {
          fails = false;  // a candidate that cannot even be compiled or evaluated is not the same failure
        }
        if (fails) {
          kernel = std::move(candidate);
          progress = true;
          break;
        }
        if (steps >= max_steps) break;
      }
    }
  }
  return kernel;
}

namespace soak_detail {

struct Generated {
  hlo::Module kernel;
  std::optional<sim::Program> constructed;  // complete mode
  ProgramShapes shapes;                     // complete mode
};

inline Generated generate(const isa::IsaView& isa, const KernelTraits& traits, std::uint64_t seed, const SoakOptions& o) {
  Generated g;
  if (o.mode == SoakMode::Sound) {
    g.kernel = random_kernel(traits, seed, o.kernel);
  } else {
    LiftedProgram p = random_program(isa, seed, o.program);
    g.kernel = std::move(p.kernel);
    g.constructed = std::move(p.program);
    g.shapes = p.shapes;
  }
  // Through text and back: the saved file is exactly what was compiled.
  g.kernel = hlo::parse_module(hlo::print_module(g.kernel));
  return g;
}

inline codegen::Options compile_options(const SoakOptions& o) {
  codegen::Options c;
  c.timeout = std::chrono::duration<double>(o.timeout_seconds);
  c.deterministic = o.deterministic;
  return c;
}

// Which limit ended a compile that produced no program (SoakRecord::limit).
inline std::string limit_of(const codegen::Statistics& s, bool deterministic = false) {
  if (s.stop == codegen::StopReason::Timeout) return deterministic ? "wall-clock safety net" : "wall-clock timeout";
  if (s.saturated) return std::string(kProvedNoProgram);
  if (!s.rewrite_stop.empty()) return fmt::format("rewriting: {}", s.rewrite_stop);
  return "search exhausted";
}

// Classifies one compile; `program` receives the compiled program, `limit` what ended a compile
// without one.
inline SoakOutcome classify(const hlo::Module& kernel, const isa::IsaView& isa, const SoakCompiler& compile, const SoakOptions& o,
                            std::uint64_t seed, std::string& message, std::optional<sim::Program>& program,
                            std::string* limit = nullptr) {
  codegen::CompileOutcome outcome;
  try {
    outcome = compile(kernel, compile_options(o));
  } catch (const Error& e) {
    message = e.what();
    return SoakOutcome::Rejected;
  }
  if (!outcome) {
    message = outcome.message;
    if (limit) *limit = limit_of(outcome.statistics, o.deterministic);
    return outcome.statistics.stop == codegen::StopReason::Timeout ? SoakOutcome::TimedOut : SoakOutcome::NotFound;
  }
  program = outcome.result->program;
  sim::VerifyOptions v;
  v.trials = o.verify_trials;
  v.seed = seed;
  const sim::VerifyResult r = sim::verify(kernel, isa, *program, v);
  message = r.message;
  return r.ok ? SoakOutcome::Verified : SoakOutcome::Miscompiled;
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  if (!out || !(out << text)) throw Error(ErrorKind::Io, fmt::format("cannot write '{}'", p.string()));
}

inline SoakRecord run_one(const isa::IsaView& isa, const KernelTraits& traits, const SoakCompiler& compile, const SoakOptions& o,
                          std::size_t index) {
  SoakRecord rec;
  rec.index = index;
  rec.seed = derive_seed(o.seed, index);
  Generated g;
  try {
    g = generate(isa, traits, rec.seed, o);
  } catch (const Error& e) {
    rec.outcome = SoakOutcome::Rejected;
    rec.message = fmt::format("generator: {}", e.what());
    return rec;
  }
  rec.nodes = node_count(g.kernel);
  rec.shapes = g.shapes;
  if (o.generated) o.generated(index, hlo::print_module(g.kernel));
  std::optional<sim::Program> program;
  const auto t0 = std::chrono::steady_clock::now();
  rec.outcome = classify(g.kernel, isa, compile, o, rec.seed, rec.message, program, &rec.limit);
  rec.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool bug = rec.outcome == SoakOutcome::Miscompiled ||
                   (o.mode == SoakMode::Complete && (rec.outcome == SoakOutcome::NotFound || rec.outcome == SoakOutcome::TimedOut));
  if (!bug) return rec;
  std::optional<hlo::Module> shrunk;
  if (rec.outcome == SoakOutcome::Miscompiled || o.shrink_not_found) {
    const SoakOutcome target = rec.outcome;
    // Bounded, so a kernel that times out cannot hold the soak for shrink_steps x timeout; in a
    // child process the shrinker also stops early enough not to be killed with the record.
    double shrink_budget = o.shrink_seconds > 0 ? o.shrink_seconds : 10 * o.timeout_seconds;
    if (o.hang_seconds > 0) shrink_budget = std::min(shrink_budget, o.hang_seconds - 2 * o.timeout_seconds - 2);
    auto still_fails = [&](const hlo::Module& m) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > shrink_budget) return false;
      std::string msg;
      std::optional<sim::Program> p;
      const SoakOutcome out = classify(m, isa, compile, o, rec.seed, msg, p);
      return out == target || (target != SoakOutcome::Miscompiled && (out == SoakOutcome::NotFound || out == SoakOutcome::TimedOut));
    };
    shrunk = shrink_kernel(g.kernel, still_fails, o.shrink_steps);
    rec.shrunk_nodes = node_count(*shrunk);
  }
  if (o.save) {
    const auto dir = *o.save / fmt::format("{}-{}-{}", isa.name, o.mode == SoakMode::Sound ? "sound" : "complete", rec.seed);
    std::filesystem::create_directories(dir);
    write_file(dir / "kernel.hlo", hlo::print_module(g.kernel));
    if (shrunk) write_file(dir / "shrunk.hlo", hlo::print_module(*shrunk));
    const std::optional<sim::Program>& shown = rec.outcome == SoakOutcome::Miscompiled ? program : g.constructed;
    if (shown) write_file(dir / "program.asm", sim::print_program(*shown, isa));
    write_file(dir / "report.txt", fmt::format("isa {}\nmode {}\nsoak seed {} index {}\nkernel seed {}\noutcome {}\nnodes {} (shrunk {})\n{}\n",
                                               isa.name, o.mode == SoakMode::Sound ? "sound" : "complete", o.seed, index, rec.seed,
                                               to_string(rec.outcome), rec.nodes, rec.shrunk_nodes, rec.message));
    rec.saved = dir.string();
  }
  return rec;
}

// run_one in a forked child, killed after options.hang_seconds (POSIX). The record travels back
// through a pipe as NUL-separated fields.
inline SoakRecord run_isolated(const isa::IsaView& isa, const KernelTraits& traits, const SoakCompiler& compile, const SoakOptions& o,
                               std::size_t index) {
  int fds[2];
  if (pipe(fds) != 0) return run_one(isa, traits, compile, o, index);
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return run_one(isa, traits, compile, o, index);
  }
  if (child == 0) {
    close(fds[0]);
    std::string out;
    try {
      const SoakRecord r = run_one(isa, traits, compile, o, index);
      out = fmt::format("{}", static_cast<int>(r.outcome)) + '\0' + std::to_string(r.nodes) + '\0' + std::to_string(r.shrunk_nodes) +
            '\0' + fmt::format("{}", r.compile_seconds) + '\0' + std::to_string(shape_bits(r.shapes)) + '\0' + r.saved + '\0' + r.limit +
            '\0' + r.message;
    } catch (const std::exception& e) {
      out = fmt::format("{}", static_cast<int>(SoakOutcome::Rejected)) + '\0' + "0" + '\0' + "-1" + '\0' + "0" + '\0' + "0" + '\0' + '\0' +
            '\0' + e.what();
    }
    std::size_t written = 0;
    while (written < out.size()) {
      const ssize_t n = write(fds[1], out.data() + written, out.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string in;
  const auto t0 = std::chrono::steady_clock::now();
  bool killed = false;
  char buffer[4096];
  for (;;) {
    const double left = o.hang_seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (left <= 0) {
      kill(child, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1) <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    in.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  SoakRecord r;
  r.index = index;
  r.seed = derive_seed(o.seed, index);
  std::vector<std::string> f;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= in.size(); ++i)
    if (i == in.size() || in[i] == '\0') {
      f.push_back(in.substr(start, i - start));
      start = i + 1;
    }
  if (killed || f.size() < 8) {
    r.outcome = SoakOutcome::TimedOut;
    r.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.limit = "wall-clock timeout";
    r.message = killed ? fmt::format("killed after {} s: the compile overran its {} s timeout (hang)", o.hang_seconds, o.timeout_seconds)
                       : "the soak child died without a report";
    if (o.mode == SoakMode::Complete) {  // the child's report is lost; drawing the program again is cheap
      try {
        r.shapes = random_program(isa, r.seed, o.program).shapes;
      } catch (const Error&) {
      }
    }
    return r;
  }
  r.outcome = static_cast<SoakOutcome>(std::stoi(f[0]));
  r.nodes = std::stoi(f[1]);
  r.shrunk_nodes = std::stoi(f[2]);
  r.compile_seconds = std::stod(f[3]);
  r.shapes = shapes_of_bits(static_cast<unsigned>(std::stoul(f[4])));
  r.saved = f[5];
  r.limit = f[6];
  r.message = f[7];
  for (std::size_t i = 8; i < f.size(); ++i) r.message += f[i];
  return r;
}

}  // namespace soak_detail

// Runs options.kernels kernels; deterministic per seed apart from timeouts (and job order of
// progress callbacks).
inline SoakResult soak(const isa::IsaView& isa, const SoakCompiler& compile, const SoakOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const KernelTraits traits = kernel_traits(isa);
  std::vector<SoakRecord> records(options.kernels);
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  SoakCounts running;
  auto worker = [&] {
    for (std::size_t k = next++; k < options.kernels; k = next++) {
      const std::size_t i = options.first_index + k;
      SoakRecord r;
      try {
        r = options.hang_seconds > 0 ? soak_detail::run_isolated(isa, traits, compile, options, i)
                                     : soak_detail::run_one(isa, traits, compile, options, i);
      } catch (const std::exception& e) {  // e.g. the interpreter rejects a kernel: counted, never fatal
        r.index = i;
        r.seed = derive_seed(options.seed, i);
        r.outcome = SoakOutcome::Rejected;
        r.message = e.what();
      }
      std::lock_guard lock(mutex);
      running.add(r.outcome, r.limit);
      records[k] = std::move(r);
      if (options.progress) options.progress(running);
    }
  };
  // More workers than kernels would only idle. A thread the system refuses to start leaves the
  // kernels to the threads that did start (they share one counter); with none, this one works.
  const std::size_t jobs = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(1, options.jobs)), 1,
                                                   std::max<std::size_t>(options.kernels, 1));
  std::vector<std::thread> threads;
  for (std::size_t j = 1; j < jobs; ++j) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error&) {
      break;
    }
  }
  worker();
  for (auto& t : threads) t.join();
  SoakResult result;
  result.counts = running;
  for (auto& r : records) {
    result.shapes.add(r.shapes);
    if (r.compile_seconds > result.slowest_seconds) {
      result.slowest_seconds = r.compile_seconds;
      result.slowest_index = r.index;
    }
    if (r.outcome != SoakOutcome::Verified) result.failures.push_back(std::move(r));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace act::testing
