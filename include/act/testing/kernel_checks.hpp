// Compile a kernel for an accelerator and verify the program, or verify a hand-written one:
// what a user's unit tests do (act/testing/catch2.hpp adds the Catch2 macros).
//
//   auto r = act::testing::compile_and_verify<my::Isa>("dense.hlo");   // r.ok, r.message
//   r.count("matmul"), r.cost(), r.size(), r.program(), r.statistics(), r.image()
//   auto v = act::testing::verify_files<my::Isa>("dense.hlo", "dense.asm");
//
// compile_and_verify compiles deterministically by default (the same program every run; see
// act/codegen/options.hpp), so counts and costs are stable test expectations. The templates
// validate the ISA while they compile and call the functions over an IsaView below, which a
// program built with ACT_SEPARATE_IMPLEMENTATION compiles once (core/linkage.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "act/codegen/compile.hpp"
#include "act/codegen/options.hpp"
#include "act/core/error.hpp"
#include "act/core/linkage.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/isa/validate.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/verify.hpp"
#include "act/testing/files.hpp"

namespace act::testing {

struct CompileTestOptions {
  codegen::Options compile = deterministic();
  sim::VerifyOptions verify;  // 10 trials, seed 0

  static codegen::Options deterministic() {
    codegen::Options o;
    o.deterministic = true;
    return o;
  }
};

// What compile_and_verify found. `ok` and `message` make it usable with ACT_REQUIRE_VERIFIED:
// ok = a program was found and it verified; message = why not (or the verification summary).
struct CompiledKernel {
  bool ok = false;
  std::string message;
  std::optional<CompileResult> compiled;  // empty when no program was found
  sim::VerifyResult verification;         // not run when nothing compiled
  std::string listing;                    // the program as assembly text (for failure messages)

  bool compiled_ok() const { return compiled.has_value(); }
  // The program; throws act::Error(NoProgram) when nothing compiled.
  const sim::Program& program() const { return result().program; }
  double cost() const { return result().cost; }
  std::size_t size() const { return result().program.instructions.size(); }
  std::size_t count(std::string_view instruction) const { return result().count(instruction); }
  const codegen::Statistics& statistics() const { return result().statistics; }
  // Where the kernel's inputs, outputs and constants lie in HBM.
  const sim::KernelImage& image() const { return result().image; }

 private:
  const CompileResult& result() const {
    if (!compiled) throw Error(ErrorKind::NoProgram, message);
    return *compiled;
  }
};

// ---- over a run-time IsaView

// Simulates `program` on random inputs and compares it with the reference interpreter on `kernel`.
ACT_API sim::VerifyResult verify_program(const hlo::Module& kernel, const isa::IsaView& isa, const sim::Program& program,
                                         const sim::VerifyOptions& options = {});
ACT_API sim::VerifyResult verify_files(const std::string& kernel_path, const std::string& program_path,
                                       const isa::IsaView& isa, const sim::VerifyOptions& options = {});
// Compiles `kernel` and verifies the program on random inputs. Bad input (a kernel that does
// not parse, an unknown file) throws act::Error; finding no program is `ok == false`.
ACT_API CompiledKernel compile_and_verify(const hlo::Module& kernel, const isa::IsaView& isa,
                                          const CompileTestOptions& options = {});
ACT_API CompiledKernel compile_and_verify(const std::string& kernel_path, const isa::IsaView& isa,
                                          const CompileTestOptions& options = {});

// ---- for an ISA type (validated while the test compiles)

template <class Isa>
sim::VerifyResult verify_program(const hlo::Module& kernel, const sim::Program& program, const sim::VerifyOptions& options = {}) {
  return verify_program(kernel, isa::view<Isa>(), program, options);
}

template <class Isa>
sim::VerifyResult verify_files(const std::string& kernel_path, const std::string& program_path,
                               const sim::VerifyOptions& options = {}) {
  return verify_files(kernel_path, program_path, isa::view<Isa>(), options);
}

template <class Isa>
CompiledKernel compile_and_verify(const hlo::Module& kernel, const CompileTestOptions& options = {}) {
  return compile_and_verify(kernel, isa::view<Isa>(), options);
}

template <class Isa>
CompiledKernel compile_and_verify(const std::string& kernel_path, const CompileTestOptions& options = {}) {
  return compile_and_verify(kernel_path, isa::view<Isa>(), options);
}

}  // namespace act::testing

#if ACT_DEFINES_IMPLEMENTATION
namespace act::testing {

ACT_API sim::VerifyResult verify_program(const hlo::Module& kernel, const isa::IsaView& isa, const sim::Program& program,
                                         const sim::VerifyOptions& options) {
  return sim::verify(kernel, isa, program, options);
}

ACT_API sim::VerifyResult verify_files(const std::string& kernel_path, const std::string& program_path,
                                       const isa::IsaView& isa, const sim::VerifyOptions& options) {
  const hlo::Module kernel = load_kernel(kernel_path);
  const sim::Program program = load_program(program_path, isa);
  return verify_program(kernel, isa, program, options);
}

ACT_API CompiledKernel compile_and_verify(const hlo::Module& kernel, const isa::IsaView& isa, const CompileTestOptions& options) {
  CompiledKernel k;
  codegen::CompileOutcome outcome = codegen::compile_kernel(kernel, isa, options.compile);
  if (!outcome) {
    k.message = outcome.message;
    return k;
  }
  k.compiled = std::move(outcome.result);
  k.listing = sim::print_program(k.compiled->program, isa);
  k.verification = sim::verify(kernel, isa, k.compiled->program, options.verify);
  k.ok = k.verification.ok;
  k.message = k.ok ? k.verification.message : k.verification.message + "\nprogram:\n" + k.listing;
  return k;
}

ACT_API CompiledKernel compile_and_verify(const std::string& kernel_path, const isa::IsaView& isa,
                                          const CompileTestOptions& options) {
  return compile_and_verify(load_kernel(kernel_path), isa, options);
}

}  // namespace act::testing
#endif
