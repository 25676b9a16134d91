// Helpers for unit-testing kernels for an accelerator in Catch2 (v2):
//
//   #include <act/testing/catch2.hpp>
//   TEST_CASE("relu(x+y) runs on my accelerator") {
//     auto result = act::testing::verify_files<toy::VectorUnit>("add_relu.hlo", "add_relu.asm");
//     ACT_REQUIRE_VERIFIED(result);
//   }
//
// Include Catch2 before this header or let it include <catch2/catch.hpp>.
#pragma once

#include <catch2/catch.hpp>

#include "act/isa/description.hpp"
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

}  // namespace act::testing

// Fails the test with the first mismatching element (or the execution error) as the message.
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
