// Inputs the parser fuzzers (tests/fuzz, docs/fuzzing.md) found: each must give a located
// act::Error (or parse), never a crash. One TEST_CASE per finding, minimised by hand.
#include <catch2/catch.hpp>

#include <string_view>

#include "act/hlo/parser.hpp"
#include "act/isa/qkv.hpp"
#include "act/sim/assembly.hpp"

using namespace act;

namespace {

const isa::IsaView& qkv() {
  static const isa::IsaView view = isa::view<isa::Qkv>();
  return view;
}

// The Error that parsing `text` throws; fails the test when it parses.
Error assembly_error(std::string_view text) {
  try {
    (void)sim::parse_program(text, qkv());
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected a parse error for: " << text);
  return Error(ErrorKind::Internal, "unreachable");
}

}  // namespace

// fuzz_assembly_parser: overlapping .constant blocks were reported without a line:column
// (normalize_constants only sees addresses).
TEST_CASE("assembly: overlapping constant blocks are located at the later line") {
  // 32770 lies inside 32768..32771.
  const Error forward = assembly_error(".constant addr = 32768, bytes = 803f0000\n.constant addr = 32770, bytes = 00ff\n");
  CHECK(forward.kind() == ErrorKind::Parse);
  CHECK(forward.location() == SourceLocation{2, 1});
  CHECK(forward.message().find("overlaps the block at 32768 (line 1)") != std::string::npos);

  // Same blocks, lower address written later: still the later line, indented by two.
  const Error backward = assembly_error("# pool\n.constant addr = 32770, bytes = 00ff\n  .constant addr = 32768, bytes = 803f0000\n");
  CHECK(backward.location() == SourceLocation{3, 3});

  // A block inside an earlier, longer block, with a short block between them in address order.
  const Error nested = assembly_error(
      ".constant addr = 0, bytes = 0011223344556677\n.constant addr = 100, bytes = 00\n.constant addr = 6, bytes = 00\n");
  CHECK(nested.location() == SourceLocation{3, 1});

  const Error same = assembly_error(".constant addr = 8, bytes = 00\n.constant addr = 8, bytes = 01\n");
  CHECK(same.location() == SourceLocation{2, 1});
}

TEST_CASE("assembly: touching constant blocks still merge") {
  const sim::Program p = sim::parse_program(".constant addr = 2, bytes = 0304\n.constant addr = 0, bytes = 0102\n", qkv());
  REQUIRE(p.constants.size() == 1);
  CHECK(p.constants[0].address == 0);
  CHECK(p.constants[0].bytes == std::vector<std::uint8_t>{1, 2, 3, 4});
}

// A block ending past INT64_MAX made address + size overflow (signed overflow, UB) when merging.
TEST_CASE("assembly: a constant block past the end of the address space is a parse error") {
  const Error e = assembly_error(".constant addr = 0x7fffffffffffffff, bytes = 0000\n.constant addr = 0, bytes = 00\n");
  CHECK(e.kind() == ErrorKind::Parse);
  CHECK(e.location() == SourceLocation{1, 1});
  CHECK(e.message().find("past the end of the address space") != std::string::npos);
  // The last byte of the address space itself is fine.
  const sim::Program p = sim::parse_program(".constant addr = 0x7ffffffffffffffe, bytes = 00\n", qkv());
  REQUIRE(p.constants.size() == 1);
  CHECK(p.constants[0].address == INT64_MAX - 1);
}

// fuzz_hlo_parser: the paper's shorthand slice `dimensions=[:,i]` computed limit = i + 1, a signed
// overflow (UBSan) for i = INT64_MAX.
TEST_CASE("hlo: a shorthand slice index of INT64_MAX is a located shape error") {
  const std::string_view root = "  ROOT s = f32[8,1] slice(B), dimensions=[:,9223372036854775807]";
  const std::string text = "ENTRY e {\n  B = f32[8,4] parameter(0)\n" + std::string(root) + "\n}\n";
  try {
    (void)hlo::parse_module(text);
    FAIL("expected a shape error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Shape);
    CHECK(e.location() == SourceLocation{3, static_cast<int>(root.find("[:")) + 1});
    CHECK(e.message().find("out of range") != std::string::npos);
  }
  // An in-range index still parses: column 3 of B.
  const hlo::Module ok = hlo::parse_module("ENTRY e {\n  B = f32[8,4] parameter(0)\n  ROOT s = f32[8,1] slice(B), dimensions=[:,3]\n}\n");
  const auto& slice = ok.entry_computation().root_instruction().slice;
  REQUIRE(slice.size() == 2);
  CHECK(slice[1].start == 3);
  CHECK(slice[1].limit == 4);
}
