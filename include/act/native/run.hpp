// run_natively(): emit a program as C, build it with the system compiler, run it on this CPU on
// random inputs, and compare every output with the simulator (bit for bit) and with the
// reference interpreter (sim::verify's comparison: exact for integers, its ulp bound for floats).
// "Bit for bit" has one exception: a NaN equals any NaN. When an operation sees two NaNs, IEEE
// 754 leaves open which one's sign and payload the result carries; x86 returns the first
// source's, and compilers (for the interpreter as for the kernel) may swap the operands of a
// commutative operation, so neither side can promise them.
//
// Inputs come from the same generator and seeds as sim::verify, so `act run --seed S` and
// `act verify --seed S` see the same data. When the CPU (or the OS) lacks a feature the program
// needs, nothing runs: the result is Unsupported and names the feature and its instructions.
// With `emulate`, the file is built with the ISA mapping's emulation define, and the features
// the mapping emulates (AMX's tile instructions) run in software; the result lists them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/hlo/evaluate.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/native/build.hpp"
#include "act/native/emit_c.hpp"
#include "act/sim/kernel_image.hpp"
#include "act/sim/machine.hpp"
#include "act/sim/verify.hpp"

namespace act::native {

struct NativeRunOptions {
  int trials = 20;
  std::uint64_t seed = 0;
  sim::ImageOptions image;  // must be the layout the program was compiled for
  BuildOptions build;
  bool emulate = false;     // run the mapping's emulated features in software
  double relative_ulps = 4, absolute_ulps = 1;  // the reference comparison (sim::VerifyOptions)
};

enum class NativeStatus { Ok, Mismatch, Unsupported };

struct NativeRunResult {
  NativeStatus status = NativeStatus::Mismatch;
  std::string message;
  std::vector<std::string> features;  // the CPU features the program needs
  std::vector<std::string> emulated;  // of those, run in software (emulate)
  std::string missing_feature;        // Unsupported: the first one this CPU lacks
  std::string build_command;
  int trials_run = 0;
  bool ok() const { return status == NativeStatus::Ok; }
};

namespace run_detail {

// The first element where `a` and `b` differ in their bits (NaN equal to NaN), or -1.
inline std::int64_t first_different_element(const Literal& a, const Literal& b) {
  const std::span<const std::uint8_t> x = a.bytes(), y = b.bytes();
  const auto width = static_cast<std::size_t>(byte_width(a.dtype()));
  for (std::int64_t i = 0; i < a.element_count(); ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * width;
    if (std::memcmp(x.data() + at, y.data() + at, width) == 0) continue;
    if (is_float(a.dtype()) && std::isnan(a.get_float(i)) && std::isnan(b.get_float(i))) continue;
    return i;
  }
  return -1;
}

// The program's instructions whose C needs `feature`, each named once.
inline std::vector<std::string> instructions_needing(const sim::Program& program, const isa::IsaView& isa, std::string_view feature) {
  std::vector<std::string> out;
  for (const auto& ci : program.instructions) {
    const isa::CInstruction* c = isa.c_mapping->find(ci.name);
    if (c && std::find(c->features.begin(), c->features.end(), feature) != c->features.end() &&
        std::find(out.begin(), out.end(), ci.name) == out.end())
      out.push_back(ci.name);
  }
  return out;
}

}  // namespace run_detail

// Runs an already built kernel (NativeBuild) for `program`: init, the trials, release. The result's
// features and build command are left to the caller.
inline NativeRunResult run_built(const NativeKernel& native, const hlo::Module& kernel, const isa::IsaView& isa,
                                 const sim::Program& program, const NativeRunOptions& options = {}) {
  NativeRunResult result;
  const sim::KernelImage image = sim::kernel_image(kernel, options.image);
  if (const char* missing = native.init()) {
    result.status = NativeStatus::Unsupported;
    result.missing_feature = missing;
    result.message = fmt::format("this CPU cannot run the program natively: it lacks {} (needed by {}); nothing was run",
                                 missing, fmt::join(run_detail::instructions_needing(program, isa, missing), ", "));
    return result;
  }
  struct Release {
    const NativeKernel& k;
    ~Release() { k.release(); }
  } release{native};

  const hlo::Computation& entry = kernel.entry_computation();
  sim::Machine machine(isa);
  const std::int64_t hbm_bytes = static_cast<std::int64_t>(native.hbm_bytes());
  sim::VerifyOptions tolerance;
  tolerance.relative_ulps = options.relative_ulps;
  tolerance.absolute_ulps = options.absolute_ulps;
  for (int trial = 0; trial < options.trials; ++trial) {
    sim::verify_detail::Random random{options.seed * 0x100000001b3ull + static_cast<std::uint64_t>(trial)};
    std::vector<Literal> inputs;
    for (int p : entry.parameters)
      inputs.push_back(sim::verify_detail::random_literal(entry.instructions.at(static_cast<std::size_t>(p)).shape, random));
    Literal reference = hlo::evaluate(kernel, std::span<const Literal>(inputs));
    std::vector<Literal> expected;
    if (reference.is_tuple()) expected = reference.elements();
    else expected.push_back(std::move(reference));

    machine.reset();
    std::vector<Literal> simulated;
    try {
      sim::write_inputs(image, inputs, machine.hbm());
      machine.run(program);
      simulated = sim::read_outputs(image, machine.hbm());
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Execution && e.kind() != ErrorKind::Isa) throw;
      result.message = fmt::format("the program fails in the simulator (trial {}, seed {}): {}", trial, options.seed, e.what());
      return result;
    }

    HbmBuffer hbm(hbm_bytes, image.alignment);
    const std::span<std::uint8_t> memory = hbm.bytes();
    sim::write_inputs(image, inputs, memory);
    native.run(memory.data());
    const std::vector<Literal> got = sim::read_outputs(image, memory);
    ++result.trials_run;

    for (std::size_t o = 0; o < got.size(); ++o) {
      const sim::HbmRegion& r = image.outputs[o];
      if (!got[o].shape().same_type(simulated[o].shape()))
        throw Error(ErrorKind::Internal, fmt::format("native output {} has shape {}, the simulator's {}", o, to_string(got[o].shape()),
                                                     to_string(simulated[o].shape())));
      if (const std::int64_t i = run_detail::first_different_element(got[o], simulated[o]); i >= 0) {
        result.message = fmt::format("native output {} ('{}' at HBM {}) differs from the simulator's at index {}: native {}, simulator {} "
                                     "(trial {}, seed {})",
                                     o, r.name, r.address, sim::verify_detail::format_index(r.shape, i),
                                     sim::verify_detail::format_element(got[o], i), sim::verify_detail::format_element(simulated[o], i), trial,
                                     options.seed);
        return result;
      }
      if (o < expected.size()) {
        const std::int64_t i = sim::verify_detail::first_mismatch(expected[o], got[o], tolerance);
        if (i >= 0) {
          result.message = fmt::format("native output {} ('{}' at HBM {}) differs from the reference interpreter at index {}: expected {}, "
                                       "got {} (trial {}, seed {})",
                                       o, r.name, r.address, sim::verify_detail::format_index(r.shape, i),
                                       sim::verify_detail::format_element(expected[o], i), sim::verify_detail::format_element(got[o], i),
                                       trial, options.seed);
          return result;
        }
      }
    }
  }
  result.status = NativeStatus::Ok;
  result.message = fmt::format("ran natively: {} trials (seed {}), every output equals the simulator's bit for bit and matches the "
                               "reference interpreter",
                               result.trials_run, options.seed);
  return result;
}

// Emits, builds (emulating what options.emulate asks) and runs the program; see the header comment.
inline NativeRunResult run_natively(const hlo::Module& kernel, const isa::IsaView& isa, const sim::Program& program,
                                    const NativeRunOptions& options = {}) {
  const std::vector<std::string> features = required_features(program, isa);
  std::vector<std::string> emulated;
  BuildOptions build = options.build;
  if (options.emulate) {
    build = with_emulation(build, isa);
    for (const auto& f : features)
      if (std::find(isa.c_mapping->emulated_features.begin(), isa.c_mapping->emulated_features.end(), f) !=
          isa.c_mapping->emulated_features.end())
        emulated.push_back(f);
  }
  const sim::KernelImage image = sim::kernel_image(kernel, options.image);
  const CKernel source{&program, &image, {.function_name = "act_kernel"}};
  const NativeBuild built(std::span<const CKernel>(&source, 1), isa, build);
  NativeRunResult result = run_built(built.kernel("act_kernel"), kernel, isa, program, options);
  result.features = features;
  result.emulated = emulated;
  result.build_command = built.command();
  if (result.ok() && !emulated.empty())
    result.message = fmt::format("{} ({} emulated in software)", result.message, fmt::join(emulated, ", "));
  return result;
}

}  // namespace act::native
