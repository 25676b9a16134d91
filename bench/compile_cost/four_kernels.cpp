// Compile cost of a user's test file (scripts/measure-compile-cost.sh: -O2 -c): one backend,
// tpu_mini from tests/package, and four kernels compiled and verified through the Catch2
// helpers. Uses only what act offered before issue 15, so that both sides compile it.
#include <string>

#include <catch2/catch.hpp>

#include <act/testing/catch2.hpp>

#include "tpu_mini.hpp"

namespace {
const std::string kKernels = KERNELS;
}

TEST_CASE("dense") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/dense.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.count("matmul") == 1);
}

TEST_CASE("dense with ReLU") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/dense_relu.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.count("activate_relu") == 1);
}

TEST_CASE("two layers") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/two_layers.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.count("matmul") == 2);
}

TEST_CASE("copy rows") {
  auto r = act::testing::compile_and_verify<tpu::TpuMini>(kKernels + "/copy_rows.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.count("matmul") == 0);
}
