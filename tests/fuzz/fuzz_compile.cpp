// libFuzzer target: the whole compiler (Backend<Isa>::try_compile, both phases) on small mutated
// kernels, then the simulator on what it returns.
//
// Input: HLO text. A first line starting with "// amx" selects the AMX ISA, anything else QKV
// (the seeds in corpus/compile/ carry the line; mutations may change the choice, which is fine).
// Kernels past kMaxElements elements in one array or kMaxInstructions instructions are skipped:
// the target looks for crashes and miscompiles on small kernels, not for time or memory limits.
//
// Contract: every input either fails to parse with a located error, is refused by
// codegen::preflight, gets "no program" (CompileOutcome without a result), or compiles to a
// program that verifies on 2 random trials. An act::Error of kind Internal, any other exception,
// a crash, a sanitizer report or a program that does not verify aborts (a libFuzzer crash).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "act/codegen/backend.hpp"
#include "act/codegen/preflight.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/amx.hpp"
#include "act/isa/qkv.hpp"
#include "act/sim/verify.hpp"
#include "fuzz_contract.hpp"

namespace {

constexpr std::size_t kMaxInputBytes = 8192;
constexpr std::int64_t kMaxElements = 1 << 14;
constexpr std::size_t kMaxInstructions = 48;

// How far inputs get, printed at exit when ACT_FUZZ_COMPILE_STATS is set (to tell whether the
// fuzzer reaches the compiler at all, not only the parser).
struct Counts {
  long inputs = 0, parsed = 0, small = 0, searched = 0, compiled = 0, verified = 0;
  ~Counts() {
    if (std::getenv("ACT_FUZZ_COMPILE_STATS"))
      std::fprintf(stderr, "fuzz_compile: %ld inputs, %ld parsed, %ld small enough, %ld searched, %ld compiled, %ld verified\n",
                   inputs, parsed, small, searched, compiled, verified);
  }
};
Counts counts;

bool small_enough(const act::hlo::Module& module) {
  for (const auto& computation : module.computations) {
    if (computation.instructions.size() > kMaxInstructions) return false;
    for (const auto& inst : computation.instructions) {
      const auto fits = [](const act::Shape& s) { return s.element_count() <= kMaxElements; };
      if (inst.shape.is_tuple) {
        for (const auto& element : inst.shape.tuple_shapes)
          if (element.is_tuple || !fits(element)) return false;
      } else if (!fits(inst.shape)) {
        return false;
      }
    }
  }
  return true;
}

template <class Isa>
void compile_and_verify(const act::hlo::Module& kernel, std::string_view text) {
  const act::isa::IsaView isa = act::isa::view<Isa>();
  try {
    if (act::codegen::preflight(kernel, isa)) return;
  } catch (const act::Error& e) {
    if (e.kind() == act::ErrorKind::Internal) act::fuzz::fuzz_fail("internal error in preflight", e.what());
    return;  // a kernel act cannot lay out (nested tuple, element type it does not compute)
  }
  act::codegen::Options options;
  options.timeout = std::chrono::duration<double>(1.0);
  options.deterministic = true;
  options.max_candidates = 1;
  act::codegen::CompileOutcome outcome;
  ++counts.searched;
  try {
    outcome = act::Backend<Isa>().try_compile(kernel, options);
  } catch (const act::Error& e) {
    if (e.kind() == act::ErrorKind::Internal) act::fuzz::fuzz_fail("internal error while compiling", std::string(e.what()) + "\n" + std::string(text));
    return;  // e.g. the interpreter refuses a constant it would fold
  }
  if (!outcome) return;
  ++counts.compiled;
  act::sim::VerifyResult verified;
  try {
    verified = act::sim::verify(kernel, isa, outcome.result->program, 2, 1);
  } catch (const act::Error& e) {
    if (e.kind() == act::ErrorKind::Internal) act::fuzz::fuzz_fail("internal error while verifying", e.what());
    return;  // the reference interpreter refuses the kernel (e.g. an op it does not evaluate)
  }
  if (!verified.ok) act::fuzz::fuzz_fail("miscompile: the compiled program does not verify", verified.message + "\n" + std::string(text));
  ++counts.verified;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ++counts.inputs;
  if (size > kMaxInputBytes) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  act::hlo::Module kernel;
  try {
    kernel = act::hlo::parse_module(text);
  } catch (const act::Error& e) {
    act::fuzz::check_error_location(e, text);
    return 0;
  }
  ++counts.parsed;
  if (!small_enough(kernel)) return 0;
  ++counts.small;
  if (text.substr(0, 6) == "// amx") compile_and_verify<act::isa::Amx>(kernel, text);
  else compile_and_verify<act::isa::Qkv>(kernel, text);
  return 0;
}
