// libFuzzer target: the whole compiler (Backend<Isa>::try_compile, both phases) on small mutated
// kernels, then the simulator on what it returns.
//
// Input: HLO text. A first line starting with "// amx" selects the AMX ISA, anything else QKV
// (the seeds in corpus/compile/ carry the line; mutations may change the choice, which is fine).
// Kernels past kMaxElements elements in one array or kMaxInstructions instructions are skipped:
// the target looks for crashes and miscompiles on small kernels, not for time or memory limits.
//
// Mutations: half of them are libFuzzer's own (bytes), half keep the text a module more often
// (LLVMFuzzerCustomMutator below): every occurrence of one number or one element type replaced
// by another (shapes stay consistent), or one elementwise binary opcode swapped for another.
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
#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "act/codegen/backend.hpp"
#include "act/codegen/preflight.hpp"
#include "act/core/random.hpp"
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

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; }

// Start offsets of `word` in `text` as a whole word.
std::vector<std::size_t> occurrences(const std::string& text, std::string_view word) {
  std::vector<std::size_t> at;
  for (std::size_t p = text.find(word); p != std::string::npos; p = text.find(word, p + 1)) {
    const bool left = p == 0 || !word_char(text[p - 1]);
    const bool right = p + word.size() >= text.size() || !word_char(text[p + word.size()]);
    if (left && right) at.push_back(p);
  }
  return at;
}

std::string replace_at(std::string text, const std::vector<std::size_t>& at, std::size_t length, std::string_view by) {
  for (auto it = at.rbegin(); it != at.rend(); ++it) text.replace(*it, length, by);
  return text;
}

// One structure-keeping mutation of HLO text, or nothing when none applies.
std::optional<std::string> mutate_module(const std::string& text, act::SplitMix64& random) {
  static const std::vector<std::string> numbers{"0", "1", "2", "3", "4", "8", "15", "16", "17", "31", "32", "33", "48", "63", "64", "65", "96", "128"};
  static const std::vector<std::string> types{"bf16", "f32", "f16", "s8", "u8", "s32"};
  static const std::vector<std::string> binary{"add", "subtract", "multiply", "maximum", "minimum", "divide"};
  switch (random.below(3)) {
    case 0: {  // every occurrence of one number
      const std::string& from = random.pick(numbers);
      const auto at = occurrences(text, from);
      if (at.empty()) return std::nullopt;
      return replace_at(text, at, from.size(), random.pick(numbers));
    }
    case 1: {  // every occurrence of one element type
      const std::string& from = random.pick(types);
      const auto at = occurrences(text, from);
      if (at.empty()) return std::nullopt;
      return replace_at(text, at, from.size(), random.pick(types));
    }
    default: {  // one elementwise binary opcode
      const std::string& from = random.pick(binary);
      std::vector<std::size_t> calls;
      for (std::size_t p = text.find(from + "("); p != std::string::npos; p = text.find(from + "(", p + 1))
        if (p == 0 || !word_char(text[p - 1])) calls.push_back(p);
      if (calls.empty()) return std::nullopt;
      return replace_at(text, {calls[static_cast<std::size_t>(random.below(static_cast<std::int64_t>(calls.size())))]}, from.size(),
                        random.pick(binary));
    }
  }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned int seed) {
  act::SplitMix64 random{seed};
  if (random.below(2) == 0) return LLVMFuzzerMutate(data, size, max_size);
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::optional<std::string> mutated = mutate_module(text, random);
  if (!mutated || mutated->size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, mutated->data(), mutated->size());
  return mutated->size();
}

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
