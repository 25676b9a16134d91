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
// The helpers themselves are act/testing/kernel_checks.hpp (no Catch2 there).
// Include Catch2 before this header or let it include <catch2/catch.hpp>.
#pragma once

#include <catch2/catch.hpp>

#include "act/testing/kernel_checks.hpp"

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
