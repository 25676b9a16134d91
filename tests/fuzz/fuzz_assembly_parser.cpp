// libFuzzer target: sim::parse_program for the QKV ISA on arbitrary bytes.
// Contract: every input either parses or throws act::Error(Parse) with a line:column; a program
// that parses prints (decimal and hex) to text that parses back to the same program.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "act/isa/qkv.hpp"
#include "act/sim/assembly.hpp"
#include "fuzz_contract.hpp"

namespace {

void check_round_trip(const act::sim::Program& program, const act::isa::IsaView& isa, bool hex) {
  act::sim::PrintOptions options;
  options.hex = hex;
  options.constant_bytes_per_line = 7;  // odd line splits exercise block merging
  const std::string printed = act::sim::print_program(program, isa, options);
  try {
    if (!(act::sim::parse_program(printed, isa) == program)) act::fuzz::fuzz_fail("print/parse round trip changed the program", printed);
  } catch (const act::Error& e) {
    act::fuzz::fuzz_fail("printed program does not re-parse", std::string(e.what()) + "\n" + printed);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const act::isa::IsaView isa = act::isa::view<act::isa::Qkv>();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  act::sim::Program program;
  try {
    program = act::sim::parse_program(text, isa);
  } catch (const act::Error& e) {
    act::fuzz::check_error_location(e, text);
    return 0;
  }
  check_round_trip(program, isa, false);
  check_round_trip(program, isa, true);
  return 0;
}
