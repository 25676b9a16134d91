// hlo/inline.hpp: choosing a computation of a module and inlining call / fusion. Both must keep
// the meaning: the reference interpreter gives bit-identical results before and after.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "act/core/random.hpp"
#include "act/hlo/evaluate.hpp"
#include "act/hlo/inline.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/printer.hpp"

using namespace act;
using namespace act::hlo;

namespace {

// Random inputs for the entry's parameters (deterministic).
std::vector<Literal> inputs_for(const Module& m, std::uint64_t seed) {
  SplitMix64 random{seed};
  std::vector<Literal> out;
  const Computation& entry = m.entry_computation();
  for (const int p : entry.parameters) {
    Literal l(entry.instructions[static_cast<std::size_t>(p)].shape);
    for (std::int64_t i = 0; i < l.element_count(); ++i) {
      if (is_float(l.dtype())) l.set_float(i, random.uniform_minus_one_to_one() * 8);
      else l.set_bits(i, random.next());
    }
    out.push_back(std::move(l));
  }
  return out;
}

bool same_bits(const Literal& a, const Literal& b) {
  if (a.is_tuple() != b.is_tuple()) return false;
  if (a.is_tuple()) {
    if (a.elements().size() != b.elements().size()) return false;
    for (std::size_t i = 0; i < a.elements().size(); ++i)
      if (!same_bits(a.elements()[i], b.elements()[i])) return false;
    return true;
  }
  return a.shape().same_type(b.shape()) && std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin(), b.bytes().end());
}

bool has_opcode(const Computation& c, Opcode op) {
  return std::any_of(c.instructions.begin(), c.instructions.end(), [&](const Instruction& i) { return i.opcode == op; });
}

constexpr const char* kFused = R"(HloModule fused

square {
  p = f32[4,8] parameter(0)
  ROOT m = f32[4,8] multiply(p, p)
}

fused_computation {
  a = f32[4,8] parameter(0)
  b = f32[4,8] parameter(1)
  s = f32[4,8] call(a), to_apply=square
  ROOT r = f32[4,8] add(s, b)
}

pair {
  x = f32[4,8] parameter(0)
  n = f32[4,8] negate(x)
  ROOT t = (f32[4,8], f32[4,8]) tuple(n, x)
}

ENTRY main {
  x = f32[4,8] parameter(0)
  y = f32[4,8] parameter(1)
  f = f32[4,8] fusion(x, y), kind=kLoop, calls=fused_computation
  t = (f32[4,8], f32[4,8]) call(f), to_apply=pair
  g0 = f32[4,8] get-tuple-element(t), index=0
  g1 = f32[4,8] get-tuple-element(t), index=1
  ROOT out = f32[4,8] subtract(g0, g1)
}
)";

}  // namespace

TEST_CASE("inline_calls: fusions and calls (nested, tuple results) inline with the same meaning", "[hlo][inline]") {
  const Module m = parse_module(kFused);
  const Module inlined = inline_calls(m);
  const Computation& entry = inlined.entry_computation();
  CHECK_FALSE(has_opcode(entry, Opcode::Fusion));
  CHECK_FALSE(has_opcode(entry, Opcode::Call));
  CHECK_FALSE(has_opcode(entry, Opcode::Tuple));            // forwarded into its readers...
  CHECK_FALSE(has_opcode(entry, Opcode::GetTupleElement));  // ...and pruned
  CHECK(entry.root_instruction().name == "out");
  CHECK(entry.parameters.size() == 2);
  // The fusion's result keeps the fusion's name; inner names are prefixed.
  CHECK(entry.find("f") >= 0);
  CHECK(entry.find("f.s") >= 0);
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    const auto inputs = inputs_for(m, seed);
    CHECK(same_bits(evaluate(m, inputs), evaluate(inlined, inputs)));
  }
  // The inlined module prints and parses back (names stay unique).
  const Module again = parse_module(print_module(inlined));
  CHECK(again.entry_computation().instructions.size() == entry.instructions.size());
}

TEST_CASE("inline_calls: a module without calls is unchanged; a callee that returns a parameter", "[hlo][inline]") {
  const Module plain = parse_module("HloModule m\nENTRY e {\n  x = s32[3] parameter(0)\n  ROOT n = s32[3] negate(x)\n}");
  CHECK(print_module(inline_calls(plain)) == print_module(plain));
  const Module identity = parse_module(
      "HloModule m\nid {\n  p = s32[3] parameter(0)\n  ROOT q = s32[3] parameter(1)\n}\n"
      "ENTRY e {\n  x = s32[3] parameter(0)\n  y = s32[3] parameter(1)\n  c = s32[3] call(x, y), to_apply=id\n  ROOT n = s32[3] negate(c)\n}");
  const Module inlined = inline_calls(identity);
  const Computation& entry = inlined.entry_computation();
  REQUIRE(entry.instructions.size() == 3);  // x, y, negate(y)
  const auto inputs = inputs_for(identity, 7);
  CHECK(same_bits(evaluate(identity, inputs), evaluate(inlined, inputs)));
}

TEST_CASE("select_computation picks a fused computation as the kernel", "[hlo][inline]") {
  const Module m = parse_module(kFused);
  const Module fused = select_computation(m, "fused_computation");
  CHECK(fused.entry_computation().name == "fused_computation");
  CHECK(fused.entry_computation().parameters.size() == 2);
  const Module kernel = inline_calls(fused);
  CHECK_FALSE(has_opcode(kernel.entry_computation(), Opcode::Call));
  const auto inputs = inputs_for(fused, 3);
  CHECK(same_bits(evaluate(fused, inputs), evaluate(kernel, inputs)));
  try {
    (void)select_computation(m, "nope");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Parse);
    CHECK(e.message() == "the module has no computation named 'nope' (it has: square, fused_computation, pair, main)");
  }
}

TEST_CASE("inline_calls keeps the meaning of every corpus module with calls or fusions", "[hlo][inline]") {
  // The shared corpus: XLA dumps as they come. Every module whose entry has a call or fusion,
  // and whose entry the interpreter can run on small inputs, gives identical results inlined.
  const std::filesystem::path corpus = std::filesystem::path(ACT_SHARED_DIR) / "corpus/hlo";
  int with_calls = 0, compared = 0;
  for (const auto& file : std::filesystem::directory_iterator(corpus)) {
    if (file.path().extension() != ".hlo") continue;
    std::ifstream in(file.path());
    std::stringstream text;
    text << in.rdbuf();
    Module m;
    try {
      m = parse_module(text.str());
    } catch (const Error&) {
      continue;
    }
    if (!has_calls(m)) continue;
    ++with_calls;
    INFO(file.path().filename().string());
    const Module inlined = inline_calls(m);
    CHECK_FALSE(has_opcode(inlined.entry_computation(), Opcode::Fusion));
    std::int64_t elements = 0;
    for (const auto& inst : m.entry_computation().instructions)
      elements += inst.shape.is_tuple ? 0 : inst.shape.element_count();
    if (elements > (1 << 16)) continue;  // keep the interpreter's work small
    std::vector<Literal> inputs;
    Literal want, got;
    try {
      inputs = inputs_for(m, 11);
      want = evaluate(m, inputs);
    } catch (const Error&) {
      continue;  // an op or type the interpreter does not run
    }
    got = evaluate(inlined, inputs);
    CHECK(same_bits(want, got));
    ++compared;
  }
  CHECK(with_calls >= 100);  // 134 use fusion, 37 call (issue 14)
  CHECK(compared >= 10);
  WARN("inline_calls: " << with_calls << " corpus modules with calls, " << compared << " compared on the interpreter");
}
