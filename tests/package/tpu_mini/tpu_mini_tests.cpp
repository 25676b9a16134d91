// Unit tests for tpu_mini, as its author writes them: kernels compile and verify in the simulator
// (on the semantics written in tpu_mini.hpp), hand-written programs are checked, and the output
// formats and the HBM layout are read from C++.
#include <catch2/catch.hpp>

#include <act/act.hpp>
#include <act/isa/semantics.hpp>
#include <act/testing/catch2.hpp>

#include "tpu_mini.hpp"

namespace {

const std::string kKernels = KERNELS;
using Catch::Matchers::Contains;

}  // namespace

TEST_CASE("a dense layer is five instructions: read, read_weight, matmul, activate, write") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/dense.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.count("read_weight") == 1);
  CHECK(r.count("matmul") == 1);
  CHECK(r.count("activate") == 1);
  CHECK(r.size() == 5);
}

TEST_CASE("24 rows with ReLU fit the accumulators: one matmul, one activate_relu") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/dense_relu.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.count("matmul") == 1);
  CHECK(r.count("activate_relu") == 1);
  CHECK(r.count("activate") == 0);
}

TEST_CASE("two layers load two weight tiles through the one weight buffer") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/two_layers.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.count("read_weight") == 2);
  CHECK(r.count("matmul") == 2);
  CHECK(r.count("activate_relu") == 1);
  CHECK(r.count("activate") == 1);
}

TEST_CASE("40 rows are copied through the unified buffer") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/copy_rows.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.count("read") >= 1);
  CHECK(r.count("write") >= 1);
  CHECK(r.count("matmul") == 0);
}

TEST_CASE("a weight tile that is not contiguous in host memory has no program, and the message says why") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/strided_weights.hlo");
  REQUIRE_FALSE(r.compiled_ok());
  // The rule that came closest and the precondition it missed, not just the first symptom.
  CHECK_THAT(r.message, Contains("nearest rule: matmul at class"));
  CHECK_THAT(r.message, Contains("input 2 (s8[16,16], class"));
  CHECK_THAT(r.message, Contains("cannot be produced in buffer 'weights' (written by read_weight)"));
}

TEST_CASE("a hand-written program verifies, and one with ReLU in place of saturation does not") {
  auto result = act::testing::verify_files<tpu::TpuMini>(kKernels + "/dense.hlo", kKernels + "/dense.asm");
  ACT_REQUIRE_VERIFIED(result);

  const auto kernel = act::testing::load_kernel(kKernels + "/dense.hlo");
  auto program = act::testing::load_program(kKernels + "/dense.asm", act::isa::view<tpu::TpuMini>());
  REQUIRE(program.instructions[3].name == "activate");
  program.instructions[3].name = "activate_relu";  // same attributes: n, acc_addr, unb_addr
  const auto wrong = act::testing::verify_program<tpu::TpuMini>(kernel, program);
  CHECK_FALSE(wrong.ok);
  CHECK_THAT(wrong.message, Contains("mismatch"));
}

TEST_CASE("the HBM layout and the output formats, from C++") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/dense.hlo");
  ACT_REQUIRE_VERIFIED(r);
  // Inputs from address 0 in parameter order, then the output, then the constant pool, each
  // region at a multiple of 64 bytes.
  const act::sim::KernelImage& image = r.compiled->image;
  REQUIRE(image.inputs.size() == 2);
  CHECK(image.inputs[0].address == 0);    // x: s8[8,16], 128 bytes
  CHECK(image.inputs[1].address == 128);  // w: s8[16,16], 256 bytes
  CHECK(image.outputs[0].address == 384);
  CHECK(image.constant_pool_address == 512);

  const act::isa::IsaView isa = act::isa::view<tpu::TpuMini>();
  const act::sim::ProgramFormatOptions options{.kernel_name = "dense"};
  const std::string text = act::sim::format_program(act::sim::ProgramFormat::Text, r.program(), isa, image, options);
  const std::string json = act::sim::format_program(act::sim::ProgramFormat::Json, r.program(), isa, image, options);
  const std::string python = act::sim::format_program(act::sim::ProgramFormat::Python, r.program(), isa, image, options);
  CHECK_THAT(text, Contains("read_weight(hbm_addr = 128)"));
  CHECK_THAT(json, Contains("\"name\": \"read_weight\", \"attributes\": {\"hbm_addr\": 128}"));
  CHECK_THAT(python, Contains("def dense(kernel, api):"));
  // The text form reads back into the same program.
  CHECK(act::sim::parse_program(text, isa).instructions.size() == r.size());
}

TEST_CASE("activate saturates to s8, where XLA's convert alone would wrap") {
  // The semantics of one instruction, with alpha bound, run by the reference interpreter.
  const auto* activate = act::isa::view<tpu::TpuMini>().find_instruction("activate");
  REQUIRE(activate != nullptr);
  const std::vector<std::int64_t> alpha{1};  // n = 1
  const act::hlo::Module semantics = act::isa::instantiate_semantics(*activate, alpha);
  act::Literal in(act::Shape(act::DType::s32, {1, 16}));
  const std::int64_t values[] = {300, -300, 127, -128, 128, -129, 5, 0};
  for (std::int64_t i = 0; i < 8; ++i) in.set_int(i, values[i]);
  const act::Literal out = act::hlo::evaluate(semantics, std::vector<act::Literal>{in});
  CHECK(out.get_int(0) == 127);   // 300 saturates (convert alone: 300 mod 256 = 44)
  CHECK(out.get_int(1) == -128);  // -300 saturates (convert alone: -44)
  CHECK(out.get_int(2) == 127);
  CHECK(out.get_int(3) == -128);
  CHECK(out.get_int(4) == 127);   // 128 (convert alone: -128)
  CHECK(out.get_int(5) == -128);  // -129 (convert alone: 127)
  CHECK(out.get_int(6) == 5);
  CHECK(out.get_int(7) == 0);
}
