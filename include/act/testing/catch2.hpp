// Helpers for unit-testing kernels for an accelerator in Catch2 (v2).
//
// Compile a kernel with act::Backend<Isa>, verify it in the simulator, check the program:
//   #include <act/testing/catch2.hpp>
//   TEST_CASE("attention compiles for QKV") {
//     auto r = act::testing::compile_and_verify<act::isa::Qkv>("attention.hlo");
//     ACT_REQUIRE_VERIFIED(r);          // compiled, and the simulator agrees with the kernel
//     CHECK(r.count("gemm") == 2);      // or r.cost(), r.size(), r.program()
//   }
// Check a hand-written program:
//   auto result = act::testing::verify_files<toy::VectorUnit>("add_relu.hlo", "add_relu.asm");
//   ACT_REQUIRE_VERIFIED(result);
//
// compile_and_verify compiles deterministically by default (the same program every run; see
// act/codegen/options.hpp), so counts and costs are stable test expectations.
//
// Include Catch2 before this header or let it include <catch2/catch.hpp>.
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "act/codegen/backend.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/verify.hpp"
#include "act/testing/files.hpp"

namespace act::testing {

// Simulates `program` on random inputs and compares it with the reference interpreter on `kernel`.
template <class Isa>
sim::VerifyResult verify_program(const hlo::Module& kernel, const sim::Program& program,
                                 const sim::VerifyOptions& options = {}) {
  return sim::verify(kernel, isa::view<Isa>(), program, options);
}

template <class Isa>
sim::VerifyResult verify_files(const std::string& kernel_path, const std::string& program_path,
                               const sim::VerifyOptions& options = {}) {
  const auto kernel = load_kernel(kernel_path);
  const auto program = load_program(program_path, isa::view<Isa>());
  return verify_program<Isa>(kernel, program, options);
}

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

 private:
  const CompileResult& result() const {
    if (!compiled) throw Error(ErrorKind::NoProgram, message);
    return *compiled;
  }
};

// Compiles `kernel` for Isa and verifies the program on random inputs. Bad input (a kernel that
// does not parse, an unknown file) throws act::Error; finding no program is `ok == false`.
template <class Isa>
CompiledKernel compile_and_verify(const hlo::Module& kernel, const CompileTestOptions& options = {}) {
  CompiledKernel k;
  codegen::CompileOutcome outcome = Backend<Isa>().try_compile(kernel, options.compile);
  if (!outcome) {
    k.message = outcome.message;
    return k;
  }
  k.compiled = std::move(outcome.result);
  k.listing = sim::print_program(k.compiled->program, isa::view<Isa>());
  k.verification = sim::verify(kernel, isa::view<Isa>(), k.compiled->program, options.verify);
  k.ok = k.verification.ok;
  k.message = k.ok ? k.verification.message : k.verification.message + "\nprogram:\n" + k.listing;
  return k;
}

template <class Isa>
CompiledKernel compile_and_verify(const std::string& kernel_path, const CompileTestOptions& options = {}) {
  return compile_and_verify<Isa>(load_kernel(kernel_path), options);
}

}  // namespace act::testing

// Fails the test with the first mismatching element (or the execution error, or why nothing
// compiled) as the message. Works on sim::VerifyResult and testing::CompiledKernel.
#define ACT_REQUIRE_VERIFIED(result)     \
  do {                                   \
    const auto& act_result_ = (result);  \
    INFO(act_result_.message);           \
    REQUIRE(act_result_.ok);             \
  } while (false)

#define ACT_CHECK_VERIFIED(result)       \
  do {                                   \
    const auto& act_result_ = (result);  \
    INFO(act_result_.message);           \
    CHECK(act_result_.ok);               \
  } while (false)
