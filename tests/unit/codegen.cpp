// The code generator (act::Backend<Isa>, §7) end to end on QKV, the program printers and the
// Catch2 helpers. Every compiled program is checked by the simulator against the interpreter.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "act/codegen/backend.hpp"
#include "act/isa/qkv.hpp"
#include "act/sim/program_formats.hpp"
#include "act/sim/verify.hpp"
#include "act/testing/catch2.hpp"
#include "act/testing/files.hpp"

using namespace act;

namespace {

const std::string kShared = ACT_SHARED_DIR;
const std::string kKernels = std::string(ACT_SOURCE_DIR) + "/examples/kernels/qkv";
const isa::IsaView kQkv = isa::view<isa::Qkv>();

codegen::Options deterministic() {
  codegen::Options o;
  o.deterministic = true;
  return o;
}

std::vector<std::string> names(const sim::Program& p) {
  std::vector<std::string> out;
  for (const auto& ci : p.instructions) out.push_back(ci.name);
  return out;
}

}  // namespace

TEST_CASE("attention compiles to the paper's nine instructions, n = 64, and verifies") {
  const auto kernel = testing::load_kernel(kShared + "/kernels/qkv/attention.hlo");
  const CompileResult r = Backend<isa::Qkv>().compile(kernel, deterministic());
  INFO(sim::print_program(r.program, kQkv));
  INFO(r.statistics.to_string());
  const std::vector<std::string> expected{"load_rm", "load_cm", "gemm", "softmax", "mov", "load_rm", "gemm", "mov", "store_rm"};
  CHECK(names(r.program) == expected);
  for (const auto& ci : r.program.instructions)
    if (ci.name != "gemm") CHECK(ci.attributes[0] == 64);  // n, the only alpha of every other instruction
  // Declared costs: n per instruction (7 x 64) plus 64 per gemm (2 x 64).
  CHECK(r.cost == 9 * 64);
  CHECK(r.count("gemm") == 2);
  CHECK(r.count("store_cm") == 0);
  CHECK(r.program.constants.empty());
  CHECK(r.statistics.candidates >= 1);
  CHECK(r.statistics.best_candidate >= 1);
  CHECK(r.statistics.pii_graphs >= r.statistics.candidates);
  CHECK(r.statistics.schedules_tried >= r.statistics.candidates);
  CHECK(r.graph.pii_count() == 9);
  // Where rewriting's time went: at most five rules, each within the rewrite time.
  REQUIRE_FALSE(r.statistics.slowest_rules.empty());
  CHECK(r.statistics.slowest_rules.size() <= 5);
  CHECK(r.statistics.rebuild_seconds <= r.statistics.rewrite_seconds);
  CHECK(r.statistics.to_string().find("rule time:") != std::string::npos);
  const auto v = sim::verify(kernel, kQkv, r.program);
  INFO(v.message);
  CHECK(v.ok);
}

TEST_CASE("deterministic compiles give the same program; the count heuristic stops at n x the best index") {
  const auto kernel = testing::load_kernel(kShared + "/kernels/qkv/attention.hlo");
  const Backend<isa::Qkv> backend;
  const CompileResult a = backend.compile(kernel, deterministic());
  const CompileResult b = backend.compile(kernel, deterministic());
  CHECK(a.program == b.program);
  CHECK(a.statistics.candidates == b.statistics.candidates);
  if (a.statistics.stop == codegen::StopReason::Heuristic)  // candidates > 2 x best, first time
    CHECK(a.statistics.candidates == 2 * a.statistics.best_candidate + 1);
}

TEST_CASE("the candidate limit and a replacement cost model") {
  const auto kernel = testing::load_kernel(kKernels + "/scores.hlo");
  codegen::Options options = deterministic();
  options.max_candidates = 1;
  const CompileResult one = Backend<isa::Qkv>().compile(kernel, options);
  CHECK(one.statistics.candidates == 1);
  CHECK(one.statistics.stop == codegen::StopReason::CandidateLimit);

  // Prefer the program with the most instructions: among every candidate seen, the chosen one
  // must be the longest, and the model must have been asked once per candidate.
  std::size_t calls = 0, longest = 0;
  options = deterministic();
  options.max_candidates = 6;
  options.patience = 100;  // let the limit, not the heuristic, end the enumeration
  options.cost_model = [&](const sim::Program& p, const isa::IsaView& isa) {
    CHECK(isa.name == "qkv");
    ++calls;
    longest = std::max(longest, p.instructions.size());
    return -static_cast<double>(p.instructions.size());
  };
  const CompileResult r = Backend<isa::Qkv>().compile(kernel, options);
  CHECK(calls == r.statistics.candidates);
  CHECK(r.program.instructions.size() == longest);
  CHECK(r.cost == -static_cast<double>(longest));
  CHECK(sim::verify(kernel, kQkv, r.program).ok);
}

TEST_CASE("enumerate yields distinct programs that all verify") {
  const auto kernel = testing::load_kernel(kKernels + "/scores.hlo");
  auto stream = Backend<isa::Qkv>().enumerate(kernel);
  std::set<std::vector<std::string>> seen_graphs;
  int n = 0;
  for (const codegen::Candidate& c : stream) {
    INFO(sim::print_program(c.program, kQkv));
    CHECK(sim::verify(kernel, kQkv, c.program, 2, 1).ok);
    // Each candidate comes from a different pii graph.
    const auto key = c.graph.to_string(kQkv);
    CHECK(seen_graphs.insert({key}).second);
    if (++n == 4) break;
  }
  CHECK(n >= 2);
  CHECK(stream.statistics().pii_graphs >= static_cast<std::size_t>(n));
}

TEST_CASE("the other QKV kernels compile and verify") {
  SECTION("Q x K^T alone: five instructions") {
    auto r = testing::compile_and_verify<isa::Qkv>(kKernels + "/scores.hlo");
    ACT_REQUIRE_VERIFIED(r);
    CHECK(r.size() == 5);
    CHECK(r.count("gemm") == 1);
    CHECK(r.count("load_cm") == 1);
  }
  SECTION("softmax of an HBM input reaches d2 through gemm with an identity constant") {
    auto r = testing::compile_and_verify<isa::Qkv>(kKernels + "/softmax.hlo");
    ACT_REQUIRE_VERIFIED(r);
    CHECK(r.count("softmax") == 1);
    CHECK(r.count("gemm") == 1);
    REQUIRE(r.program().constants.size() == 1);
    const sim::ConstantBlock& identity = r.program().constants[0];
    CHECK(identity.address == 16384);  // the constant pool: after input (8192) and output (8192)
    REQUIRE(identity.bytes.size() == 64 * 64 * 2);
    // bf16 1.0 is 0x3f80: little-endian 80 3f on the diagonal, zero elsewhere.
    CHECK(identity.bytes[0] == 0x80);
    CHECK(identity.bytes[1] == 0x3f);
    CHECK(identity.bytes[2] == 0);
    CHECK(identity.bytes[(65 * 2)] == 0x80);
  }
  SECTION("attention with a 32-row Q pads Q to 64 rows with a zero block from the constant pool") {
    auto r = testing::compile_and_verify<isa::Qkv>(kKernels + "/attention_q32.hlo");
    ACT_REQUIRE_VERIFIED(r);
    CHECK(r.count("gemm") == 2);
    const auto& last = r.program().instructions.back();
    CHECK(last.name == "store_rm");
    CHECK(last.attributes[0] == 32);                 // n: only the 32 real rows go back
    CHECK(last.attributes[2] == 4096 + 2 * 8192);    // the output follows q (4096 B), k and v
    for (const auto& block : r.program().constants)  // padding is zeros
      CHECK(std::all_of(block.bytes.begin(), block.bytes.end(), [](std::uint8_t b) { return b == 0; }));
  }
  SECTION("two attention heads sharing K and V: Kᵀ and V are loaded again for the second head") {
    // d1 holds two 64-row values: keeping Kᵀ (or V) across both heads leaves no room for the
    // second head's Q and softmax. Phase 2 reloads them: two copies of the paper's 9 instructions.
    auto r = testing::compile_and_verify<isa::Qkv>(kKernels + "/attention_two_heads.hlo");
    ACT_REQUIRE_VERIFIED(r);
    CHECK(r.size() == 18);
    CHECK(r.count("load_cm") == 2);
    CHECK(r.count("gemm") == 4);
    CHECK(r.count("store_rm") == 2);
  }
  SECTION("Q x K^T for 768 query rows: one gemm and one store per 64-row block") {
    // The dot is split at the gemm's 64 rows; every block's rows reach HBM once.
    testing::CompileTestOptions first;
    first.compile.max_candidates = 1;
    auto r = testing::compile_and_verify<isa::Qkv>(kKernels + "/scores_768_rows.hlo", first);
    ACT_REQUIRE_VERIFIED(r);
    CHECK(r.count("gemm") == 12);
    CHECK(r.count("store_rm") == 12);
  }
  SECTION("attention with a transposed output ends in store_cm") {
    auto r = testing::compile_and_verify<isa::Qkv>(kKernels + "/attention_transposed.hlo");
    ACT_REQUIRE_VERIFIED(r);
    CHECK(r.program().instructions.back().name == "store_cm");
    CHECK(r.count("store_rm") == 0);
  }
}

TEST_CASE("a kernel the ISA cannot express ends with NoProgram within the timeout") {
  const auto kernel = testing::load_kernel(kKernels + "/sine_f32.hlo");
  codegen::Options options;
  options.timeout = std::chrono::duration<double>(3.0);
  const auto outcome = Backend<isa::Qkv>().try_compile(kernel, options);
  CHECK_FALSE(outcome);
  CHECK_THAT(outcome.message, Catch::Contains("no program for kernel 'sine_f32' on ISA qkv") &&
                                  Catch::Contains("instruction selection found no pii graph"));
  CHECK(outcome.statistics.candidates == 0);
  // No wall-clock bound (it flakes under load); a hang is ctest's timeout.
  try {
    Backend<isa::Qkv>().compile(kernel, options);
    FAIL("compile() returned a program");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::NoProgram);
  }
  auto r = testing::compile_and_verify<isa::Qkv>(kernel);
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.compiled_ok());
  CHECK_THROWS_AS(r.size(), Error);
}

TEST_CASE("the default cost model sums the declared costs over alpha") {
  const auto program = sim::parse_program(
      "load_rm(n = 3, addr_in = 0, addr_out = 0)\n"
      "gemm(addr_1 = 0, addr_2 = 64, addr_out = 0)\n"
      "softmax(n = 17, addr = 0)\n",
      kQkv);
  CHECK(codegen::declared_cost(program, kQkv) == 3 + 64 + 17);
  CHECK(codegen::instruction_counts(program) == std::map<std::string, std::size_t>{{"gemm", 1}, {"load_rm", 1}, {"softmax", 1}});
  sim::ConcreteInstruction unknown{"frob", {1}, {}};
  CHECK_THROWS_WITH(codegen::instruction_cost(unknown, kQkv), Catch::Contains("unknown instruction 'frob'"));
}

TEST_CASE("program printers: text, JSON and the Python kernel file") {
  const auto kernel = testing::load_kernel(kShared + "/kernels/qkv/attention.hlo");
  const auto image = sim::kernel_image(kernel);
  const auto program = testing::load_program(kShared + "/kernels/qkv/attention.expected.asm", kQkv);
  sim::ProgramFormatOptions options;
  options.kernel_name = "qkv";

  SECTION("hbm is the end of the highest byte touched") {
    CHECK(sim::hbm_extent(program, kQkv, image) == 4 * 8192);
    sim::Program spill = program;
    spill.instructions.push_back(sim::parse_program("store_rm(n = 2, addr_in = 0, addr_out = 40000)", kQkv).instructions[0]);
    CHECK(sim::hbm_extent(spill, kQkv, image) == 40000 + 2 * 128);
  }
  SECTION("python") {
    const std::string py = sim::format_python(program, kQkv, image, options);
    CHECK_THAT(py, Catch::Contains("def qkv(kernel, api):\n    @kernel(hbm=32768,\n"));
    CHECK_THAT(py, Catch::Contains("{'addr': 8192, 'shape': (64, 64), 'dtype': jnp.bfloat16},"));
    CHECK_THAT(py, Catch::Contains("constant=[],\n            output=[\n                {'addr': 24576, 'shape': (64, 64), 'dtype': jnp.bfloat16},"));
    CHECK_THAT(py, Catch::Contains("    def qkv_():\n        api.load_rm(n = 64, addr_in = 0, addr_out = 0)\n"));
    CHECK_THAT(py, Catch::Contains("        api.gemm(addr_1 = 0, addr_2 = 64, addr_out = 0)\n"));
    CHECK_THAT(py, Catch::EndsWith("\n    return qkv_\n"));
    std::size_t api = 0;
    for (std::size_t p = py.find("api."); p != std::string::npos; p = py.find("api.", p + 1)) ++api;
    CHECK(api == 9);  // one `api.<instruction>(...)` line per instruction
  }
  SECTION("json") {
    sim::Program with_constant = program;
    with_constant.constants.push_back(sim::ConstantBlock{32768, {0x80, 0x3f}});
    const std::string json = sim::format_json(with_constant, kQkv, image, options);
    CHECK_THAT(json, Catch::Contains("\"isa\": \"qkv\""));
    CHECK_THAT(json, Catch::Contains("\"size\": 32770"));
    CHECK_THAT(json, Catch::Contains("{\"name\": \"q\", \"dtype\": \"bf16\", \"dims\": [64, 64], \"address\": 0, \"bytes\": 8192}"));
    CHECK_THAT(json, Catch::Contains("{\"name\": \"softmax\", \"attributes\": {\"n\": 64, \"addr\": 0}}"));
    CHECK_THAT(json, Catch::Contains("{\"address\": 32768, \"bytes\": \"803f\"}"));
  }
  SECTION("text round-trips through the assembly parser") {
    const std::string text = sim::format_text(program, kQkv, image, options);
    CHECK_THAT(text, Catch::StartsWith("# act: qkv for ISA qkv\n# HBM image:\n"));
    CHECK(sim::parse_program(text, kQkv) == program);
  }
  SECTION("format names") {
    CHECK(sim::parse_program_format("python") == sim::ProgramFormat::Python);
    CHECK_FALSE(sim::parse_program_format("asm"));
  }
}

TEST_CASE("the allocated pii graph as Graphviz shows schedule numbers and solved slices") {
  const auto kernel = testing::load_kernel(kKernels + "/scores.hlo");
  const CompileResult r = Backend<isa::Qkv>().compile(kernel, deterministic());
  INFO(r.dot);
  CHECK_THAT(r.dot, Catch::StartsWith("digraph pii {"));
  // Inputs sit at their kernel-image addresses; the five instructions are numbered #1..#5.
  CHECK_THAT(r.dot, Catch::Contains("input 0\\nd0[0:8192]"));
  CHECK_THAT(r.dot, Catch::Contains("input 1\\nd0[8192:16384]"));
  for (int step = 1; step <= 5; ++step) CHECK_THAT(r.dot, Catch::Contains(fmt::format("\"#{} ", step)));
  CHECK_THAT(r.dot, Catch::Contains("gemm()\\nd2[0:64]"));
}

// ---- Backend::compile inlines calls and refuses what no program can compute; diagnosis

#include "../package/tpu_mini/tpu_mini.hpp"

TEST_CASE("Backend::compile inlines call and fusion, and refuses a kernel larger than HBM at once") {
  const std::string data = std::string(ACT_SOURCE_DIR) + "/tests/data";
  // A fused transpose: compiles only once the fusion is inlined (module 1 has no `fusion`).
  const hlo::Module fused = testing::load_kernel(data + "/qkv_fused_transpose.hlo");
  const CompileResult r = Backend<isa::Qkv>().compile(fused, deterministic());
  CHECK(names(r.program) == std::vector<std::string>{"load_cm", "store_rm"});
  CHECK(sim::verify(fused, kQkv, r.program).ok);

  const hlo::Module huge = testing::load_kernel(data + "/iota_larger_than_hbm.hlo");
  const codegen::CompileOutcome refused = Backend<isa::Qkv>().try_compile(huge);
  CHECK_FALSE(refused);
  CHECK(refused.refused);
  CHECK(refused.message.find("its inputs and outputs need 2000000000 bytes of HBM and the ISA has 1048576") != std::string::npos);
}

TEST_CASE("compile_kernel checks an ISA built at run time: a broken one names the instruction") {
  std::vector<isa::Instruction> instructions(isa::Qkv::instructions.begin(), isa::Qkv::instructions.end());
  instructions[4].semantics = "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(0)\n  ROOT %Out0 = bf16[`n`, 64] coppy(%In1)\n}";
  const isa::IsaView broken{"broken", kQkv.buffers, {}, instructions};
  const hlo::Module kernel = testing::load_kernel(kShared + "/kernels/qkv/attention.hlo");
  try {
    codegen::compile_kernel(kernel, broken);
    FAIL("a broken ISA compiled");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Isa);
    CHECK_THAT(e.message(), Catch::Contains("instruction 'mov' (qkv.hpp:"));
    CHECK_THAT(e.message(), Catch::Contains("unknown opcode 'coppy' at column 30 (did you mean 'copy'?)"));
  }
}

TEST_CASE("no program: the message names the nearest rule and the precondition it missed") {
  // tpu_mini's read_weight reads 256 contiguous bytes; a weight tile that is the left half of a
  // 16x32 matrix is not, so matmul's second input cannot reach the weight buffer.
  const std::string kernels = std::string(ACT_SOURCE_DIR) + "/tests/package/tpu_mini/kernels";
  codegen::Options options = deterministic();
  options.timeout = std::chrono::seconds(60);
  const codegen::CompileOutcome r =
      Backend<tpu::TpuMini>().try_compile(testing::load_kernel(kernels + "/strided_weights.hlo"), options);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.message, Catch::Contains("no instruction computes: s32[8,16] convert(s8[8,16])"));
  CHECK_THAT(r.message, Catch::Matches(".*nearest rule: matmul at class [0-9]+ \\(s32\\[8,16\\]\\): input 2 \\(s8\\[16,16\\], "
                                       "class [0-9]+\\) cannot be produced in buffer 'weights' \\(written by read_weight\\).*"));
  // With a contiguous tile the same layer compiles.
  const auto dense = testing::compile_and_verify<tpu::TpuMini>(kernels + "/dense.hlo");
  CHECK(dense.ok);
}

TEST_CASE("no program because a shape does not fit: the nearest rule says which dim") {
  // A contraction over 32 where tpu_mini's matrix unit is 16 wide. The split halves need an add
  // tpu_mini lacks; what comes closest is activate, whose input only matmul writes, and matmul's
  // own match at the 32-wide dot misses on its first operand's shape.
  const std::string text = R"(HloModule wide_contraction
ENTRY wide_contraction {
  %x = s8[8,32] parameter(0)
  %w = s8[32,16] parameter(1)
  %xs = s32[8,32] convert(%x)
  %ws = s32[32,16] convert(%w)
  %acc = s32[8,16] dot(%xs, %ws), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %lo = s32[] constant(-128)
  %hi = s32[] constant(127)
  %sat = s32[8,16] clamp(%lo, %acc, %hi)
  ROOT %y = s8[8,16] convert(%sat)
})";
  codegen::Options options = deterministic();
  options.timeout = std::chrono::seconds(60);
  const codegen::CompileOutcome r = Backend<tpu::TpuMini>().try_compile(hlo::parse_module(text), options);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.message, Catch::Contains("cannot be produced in buffer 'acc' (written by matmul)"));
  CHECK_THAT(r.message, Catch::Contains("'In1' is s8[8,32], the semantics need s8[n,16] (dim 1 must be 16)"));
}
