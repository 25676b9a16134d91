// <act/simulate.hpp> is enough to parse a kernel, run a hand-written program on the ISA's
// semantics and verify it against the reference interpreter. This suite is compiled against a
// copy of include/ without select/, alloc/, codegen/ and the Z3 bridge, and links no Z3: it
// fails to build if the light header ever reaches the compiler.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <act/simulate.hpp>
#include <act/isa/qkv.hpp>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("simulate.hpp: the paper's QKV program verifies against the interpreter") {
  const std::string dir = std::string(ACT_SHARED_DIR) + "/kernels/qkv/";
  const act::hlo::Module kernel = act::hlo::parse_module(read(dir + "attention.hlo"));
  const act::isa::IsaView isa = act::isa::view<act::isa::Qkv>();
  const act::sim::Program program = act::sim::parse_program(read(dir + "attention.expected.asm"), isa);
  const act::sim::VerifyResult ok = act::sim::verify(kernel, isa, program, 3, 7);
  CHECK(ok.ok);
  // Dropping the last instruction (the store of the result) must be caught.
  act::sim::Program truncated = program;
  truncated.instructions.pop_back();
  CHECK_FALSE(act::sim::verify(kernel, isa, truncated, 3, 7).ok);
}
