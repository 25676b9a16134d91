// Unit tests a user writes for their own accelerator: act::Backend<toy::VectorUnit> compiles a
// kernel, and programs (compiled or hand-written) are run in act's simulator on the
// accelerator's own semantics and compared with the reference interpreter.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <act/act.hpp>
#include <act/testing/catch2.hpp>

#include "vector_unit.hpp"

namespace {
const std::string kDir = EXAMPLE_DIR;
}

TEST_CASE("the backend compiles relu(x + y) for the vector unit, and the program verifies") {
  auto r = act::testing::compile_and_verify<toy::VectorUnit>(kDir + "/add_relu.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.count("vadd") == 1);
  CHECK(r.count("vmax") == 1);
  CHECK(r.count("vstore") == 1);
  // Declared costs: two vloads and a vstore of n = 2 rows cost n each; vadd, vzero, vmax 1.
  CHECK(r.cost() == 2 + 2 + 2 + 1 + 1 + 1);
}

TEST_CASE("hand-written relu(x + y) on the vector unit matches the kernel") {
  auto result = act::testing::verify_files<toy::VectorUnit>(kDir + "/add_relu.hlo", kDir + "/add_relu.asm",
                                                            {.trials = 20, .seed = 7});
  ACT_REQUIRE_VERIFIED(result);
}

TEST_CASE("a program that forgets the relu is caught") {
  const auto kernel = act::testing::load_kernel(kDir + "/add_relu.hlo");
  auto program = act::testing::load_program(kDir + "/add_relu.asm", act::isa::view<toy::VectorUnit>());
  // Drop vzero and vmax: the stored value is x + y, negative where relu gives 0.
  program.instructions.erase(program.instructions.begin() + 3, program.instructions.begin() + 5);
  const auto result = act::testing::verify_program<toy::VectorUnit>(kernel, program);
  CHECK_FALSE(result.ok);
  CHECK_THAT(result.message, Catch::Contains("mismatch"));
}

TEST_CASE("the simulator rejects a register range outside the register file") {
  const auto kernel = act::testing::load_kernel(kDir + "/add_relu.hlo");
  auto program = act::testing::load_program(kDir + "/add_relu.asm", act::isa::view<toy::VectorUnit>());
  program.instructions[0].attributes.back() = 7;  // vload n = 2 into registers 7..8: past vreg[8]
  const auto result = act::testing::verify_program<toy::VectorUnit>(kernel, program);
  CHECK_FALSE(result.ok);
  CHECK_THAT(result.message, Catch::Contains("vload"));
}
