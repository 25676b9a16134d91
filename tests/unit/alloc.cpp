// Phase 2 (modules 4-6): schedules, the allocation CSP, emission, and the §6.4 fallback. Every
// allocated program is run by the simulator and compared with the reference interpreter.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <string>

#include "act/alloc/allocate.hpp"
#include "act/alloc/identity_folding.hpp"
#include "act/alloc/spill_plan.hpp"
#include "act/isa/amx.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/qkv.hpp"
#include "act/sim/verify.hpp"
#include "act/select/on_chip_reads.hpp"
#include "act/testing/files.hpp"

using namespace act;
using select::PiiNode;
using select::PiiNodeKind;

namespace {

std::string shared(const std::string& rel) { return std::string(ACT_SHARED_DIR) + "/" + rel; }

// Qkv instruction indices (declaration order in isa/qkv.hpp).
constexpr std::int64_t kLoadRm = 0, kLoadCm = 1, kStoreRm = 2, kMov = 4, kGemm = 5, kSoftmax = 6;
constexpr int kD0 = 0, kD1 = 1, kD2 = 2;

Shape rows(std::int64_t n) { return Shape(DType::bf16, {n, 64}); }
Shape bytes(std::int64_t n) { return Shape(DType::u8, {n}); }

PiiNode leaf(std::int64_t parameter, std::int64_t size) {
  PiiNode x;
  x.kind = PiiNodeKind::Input;
  x.buffer = kD0;
  x.index = parameter;
  x.type = bytes(size);
  return x;
}

PiiNode pii(std::int64_t instruction, std::vector<std::int64_t> alpha, int buffer, Shape type, std::vector<std::size_t> operands) {
  PiiNode x;
  x.kind = PiiNodeKind::Pii;
  x.index = instruction;
  x.alpha = std::move(alpha);
  x.buffer = buffer;
  x.type = std::move(type);
  x.operands = std::move(operands);
  return x;
}

// A concat^H in `buffer` along `dimension`.
PiiNode concat_h(int buffer, std::int64_t dimension, Shape type, std::vector<std::size_t> operands) {
  PiiNode x;
  x.kind = PiiNodeKind::ConcatH;
  x.buffer = buffer;
  x.index = buffer;
  x.dimension = dimension;
  x.type = std::move(type);
  x.operands = std::move(operands);
  return x;
}

// A slice^H in `buffer` of node `operand`.
PiiNode slice_h(int buffer, std::vector<hlo::SliceRange> ranges, Shape type, std::size_t operand) {
  PiiNode x;
  x.kind = PiiNodeKind::SliceH;
  x.buffer = buffer;
  x.index = buffer;
  x.slice = std::move(ranges);
  x.type = std::move(type);
  x.operands = {operand};
  return x;
}

// Nodes 0-3 of a graph over two bf16[32,64] inputs a and b: their leaves, then a and b loaded
// into d1.
std::vector<PiiNode> loaded_a_and_b() {
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 4096));                           // 0 a
  n.push_back(leaf(1, 4096));                           // 1 b
  n.push_back(pii(kLoadRm, {32}, kD1, rows(32), {0}));  // 2
  n.push_back(pii(kLoadRm, {32}, kD1, rows(32), {1}));  // 3
  return n;
}

// A kernel over a and b (bf16[32,64]) and %ab = concatenate(%a, %b): `rest` follows.
hlo::Module kernel_over_ab(const std::string& rest) {
  return hlo::parse_module(fmt::format(R"(HloModule over_ab
ENTRY main {{
  %a = bf16[32,64] parameter(0)
  %b = bf16[32,64] parameter(1)
  %ab = bf16[64,64] concatenate(%a, %b), dimensions={{0}}
  {}
}})",
                                       rest));
}

// What phase 2 reads besides the pii graph: the ISA and the constant pool.
struct Phase2Context {
  isa::IsaView isa;
  select::ConstantTable constants;
};

Phase2Context qkv_context() { return Phase2Context{isa::view<isa::Qkv>(), {}}; }

// The paper's Fig. 10a: softmax(Q Kᵀ) V with every n = 64. PiiGraph renumbers the nodes in
// post-order from the root: Q 0, load_rm 1, K 2, load_cm 3, gemm 4, softmax 5, mov 6, V 7,
// load_rm 8, gemm 9, mov 10, store_rm 11.
select::PiiGraph qkv_attention_graph() {
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 8192));                                         // 0 Q
  n.push_back(leaf(1, 8192));                                         // 1 K
  n.push_back(leaf(2, 8192));                                         // 2 V
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {0}));                // 3
  n.push_back(pii(kLoadCm, {64}, kD1, rows(64), {1}));                // 4
  n.push_back(pii(kGemm, {}, kD2, rows(64), {3, 4}));                 // 5 S = Q Kᵀ
  n.push_back(pii(kSoftmax, {64}, kD2, rows(64), {5}));               // 6
  n.push_back(pii(kMov, {64}, kD1, rows(64), {6}));                   // 7
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {2}));                // 8
  n.push_back(pii(kGemm, {}, kD2, rows(64), {7, 8}));                 // 9
  n.push_back(pii(kMov, {64}, kD1, rows(64), {9}));                   // 10
  n.push_back(pii(kStoreRm, {64}, kD0, bytes(8192), {10}));           // 11
  return select::PiiGraph(std::move(n), {11});
}

hlo::Module attention() { return hlo::parse_module(testing::read_text_file(shared("kernels/qkv/attention.hlo"))); }

std::vector<std::string> names(const sim::Program& p) {
  std::vector<std::string> out;
  for (const auto& i : p.instructions) out.push_back(i.name);
  return out;
}

void require_verifies(const hlo::Module& kernel, const isa::IsaView& isa, const sim::Program& program) {
  const auto v = sim::verify(kernel, isa, program, 3, 7);
  INFO(sim::print_program(program, isa));
  INFO(v.message);
  REQUIRE(v.ok);
}

// A tiny test accelerator: `r` holds Rows rows of s32[4]; load/store move one row; `neg`
// negates a row in place; `dbl` doubles a row into another; `add` adds two rows into a third.
template <std::int64_t Rows>
struct Tiny {
  static constexpr std::string_view name = "tiny";
  static constexpr std::array buffers{
      isa::hbm("d0", 4096),
      isa::Buffer{.name = "r", .access_dims = {Rows}, .unit_dims = {4}, .dtype = DType::s32},
  };
  static constexpr std::array instructions{
      isa::Instruction{.name = "load", .beta = {"addr_in", "addr_out"},
                       .inputs = {{"d0", {"addr_in"}, {"16"}}}, .outputs = {{"r", {"addr_out"}, {"1"}}},
                       .semantics = R"(ENTRY load {
  %In1 = u8[16] parameter(0)
  %a = u8[1, 4, 4] reshape(%In1)
  ROOT %Out0 = s32[1, 4] bitcast-convert(%a)
})"},
      isa::Instruction{.name = "store", .beta = {"addr_in", "addr_out"},
                       .inputs = {{"r", {"addr_in"}, {"1"}}}, .outputs = {{"d0", {"addr_out"}, {"16"}}},
                       .semantics = R"(ENTRY store {
  %In1 = s32[1, 4] parameter(0)
  %a = u8[1, 4, 4] bitcast-convert(%In1)
  ROOT %Out0 = u8[16] reshape(%a)
})"},
      isa::Instruction{.name = "neg", .beta = {"addr"},
                       .inputs = {{"r", {"addr"}, {"1"}}}, .outputs = {{"r", {"addr"}, {"1"}}},
                       .semantics = R"(ENTRY neg {
  %In1 = s32[1, 4] parameter(0)
  ROOT %Out0 = s32[1, 4] negate(%In1)
})"},
      isa::Instruction{.name = "dbl", .beta = {"addr_in", "addr_out"},
                       .inputs = {{"r", {"addr_in"}, {"1"}}}, .outputs = {{"r", {"addr_out"}, {"1"}}},
                       .semantics = R"(ENTRY dbl {
  %In1 = s32[1, 4] parameter(0)
  ROOT %Out0 = s32[1, 4] add(%In1, %In1)
})"},
      isa::Instruction{.name = "add", .beta = {"addr_1", "addr_2", "addr_out"},
                       .inputs = {{"r", {"addr_1"}, {"1"}}, {"r", {"addr_2"}, {"1"}}},
                       .outputs = {{"r", {"addr_out"}, {"1"}}},
                       .semantics = R"(ENTRY add {
  %In1 = s32[1, 4] parameter(0)
  %In2 = s32[1, 4] parameter(1)
  ROOT %Out0 = s32[1, 4] add(%In1, %In2)
})"},
  };
};
constexpr std::int64_t kTinyLoad = 0, kTinyStore = 1, kTinyNeg = 2, kTinyDbl = 3, kTinyAdd = 4;

// (-a) + dbl(a): neg must run after dbl, its in-place write would clobber `a` otherwise. Both
// operands of the final add need one row above the other's, so esun ties and keeps operand
// order (neg first): that schedule's CSP is unsatisfiable.
select::PiiGraph tiny_graph() {
  const Shape row(DType::s32, {1, 4});
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 16));                                           // 0 a
  n.push_back(pii(kTinyLoad, {}, 1, row, {0}));                        // 1 S
  n.push_back(pii(kTinyNeg, {}, 1, row, {1}));                         // 2 X = -S (in place)
  n.push_back(pii(kTinyDbl, {}, 1, row, {1}));                         // 3 Y = S + S
  n.push_back(pii(kTinyAdd, {}, 1, row, {2, 3}));                      // 4
  n.push_back(pii(kTinyStore, {}, 0, bytes(16), {4}));                 // 5
  return select::PiiGraph(std::move(n), {5});
}

hlo::Module tiny_kernel() {
  return hlo::parse_module(R"(HloModule tiny
ENTRY main {
  %a = s32[1,4] parameter(0)
  %n = s32[1,4] negate(%a)
  %d = s32[1,4] add(%a, %a)
  ROOT %r = s32[1,4] add(%n, %d)
})");
}

template <class Isa>
Phase2Context context_of() {
  return Phase2Context{isa::view<Isa>(), {}};
}

}  // namespace

TEST_CASE("the esun order that counts what a concat^H holds builds the operand that needs room first") {
  // out = concat^H(concat^H(A1, A2), B), 112 rows. B is 16 rows of a transposing store: building
  // it holds 64 rows of d1. A1 and A2 hold 96 rows once loaded, and 96 + 64 > 128, so B has to
  // be built before them. The esun order gives identity nodes no memory: the inner concat^H
  // looks free and A1 and A2 are loaded first. Phase 2 tries the order that counts the
  // storage identity nodes alias before splitting live ranges.
  constexpr std::int64_t kStoreCm = 3;
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 6144));                                                                        // 0 in0
  n.push_back(leaf(1, 8192));                                                                        // 1 in1
  n.push_back(leaf(2, 6144));                                                                        // 2 in2
  n.push_back(pii(kLoadRm, {48}, kD1, rows(48), {0}));                                               // 3 A1
  n.push_back(pii(kLoadRm, {48}, kD1, rows(48), {2}));                                               // 4 A2
  n.push_back(concat_h(kD1, 0, rows(96), {3, 4}));                                                   // 5
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {1}));                                               // 6
  n.push_back(pii(kStoreCm, {64}, kD0, bytes(8192), {6}));                                           // 7 in1 transposed
  n.push_back(slice_h(kD0, {hlo::SliceRange{6144, 8192, 1}}, bytes(2048), 7));                       // 8 its rows 48:64
  n.push_back(pii(kLoadRm, {16}, kD1, rows(16), {8}));                                               // 9 B
  n.push_back(concat_h(kD1, 0, rows(112), {5, 9}));                                                  // 10
  n.push_back(pii(kStoreRm, {112}, kD0, bytes(14336), {10}));                                        // 11
  const select::PiiGraph g(std::move(n), {11});
  const auto kernel = hlo::parse_module(R"(HloModule built_first
ENTRY main {
  %in0 = bf16[48,64] parameter(0)
  %in1 = bf16[64,64] parameter(1)
  %in2 = bf16[48,64] parameter(2)
  %t = bf16[64,64] transpose(%in1), dimensions={1,0}
  %b = bf16[16,64] slice(%t), slice={[48:64], [0:64]}
  ROOT %out = bf16[112,64] concatenate(%in0, %in2, %b), dimensions={0}
})");
  const auto ctx = qkv_context();
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  const auto first_of = [&](const alloc::Schedule& s, std::int64_t instruction, std::int64_t n_rows) {
    for (std::size_t t = 0; t < s.order.size(); ++t) {
      const PiiNode& x = g.nodes()[s.order[t]];
      if (x.kind == PiiNodeKind::Pii && x.index == instruction && x.alpha == std::vector<std::int64_t>{n_rows}) return t;
    }
    return s.order.size();
  };
  const alloc::Schedule plain = alloc::esun_schedule(values);
  const alloc::Schedule held = alloc::esun_schedule(values, alloc::IdentityMemory::Aliased);
  REQUIRE(first_of(held, kStoreCm, 64) < held.order.size());
  CHECK(first_of(plain, kStoreCm, 64) > first_of(plain, kLoadRm, 48));  // A1 or A2 first: B finds no room
  CHECK(first_of(held, kStoreCm, 64) < first_of(held, kLoadRm, 48));    // B's 64-row build first
  CHECK(alloc::allocate_detail::overfull_point(values, plain));
  CHECK_FALSE(alloc::allocate_detail::overfull_point(values, held));
  // One repair per graph version: the esun order fails, and the held-memory order is next.
  alloc::AllocateOptions options;
  options.schedules_per_split = 1;
  alloc::CspSolver solver;
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, sim::kernel_image(kernel), solver, options);
  INFO(r.message);
  REQUIRE(r.program);
  CHECK(r.stats.schedules_tried == 2);
  CHECK(r.stats.live_range_splits == 0);  // no spill, no reload: the order alone fits
  CHECK(r.schedule.order == held.order);
  require_verifies(kernel, ctx.isa, *r.program);
}

TEST_CASE("esun orders the QKV graph depth-first and a value read last does not interfere with the write") {
  const auto g = qkv_attention_graph();
  const auto ctx = qkv_context();
  const auto kernel = attention();
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  const alloc::Schedule s = alloc::esun_schedule(values);
  REQUIRE(s.order.size() == 9);  // the 9 instructions, leaves excluded
  CHECK(s.order.back() == 11);
  // Q Kᵀ before V's load: gemm(5)'s subtree needs 2 d1 tiles, load_rm(V) one, so the
  // second gemm evaluates its costlier operand (the mov of the softmax) first.
  const auto pos = [&](std::size_t node) { return std::find(s.order.begin(), s.order.end(), node) - s.order.begin(); };
  CHECK(pos(6) < pos(8));
  const auto ig = alloc::interference_graph(values, s);
  const auto has = [&](std::size_t a, std::size_t b) { return std::find(ig.begin(), ig.end(), std::pair{a, b}) != ig.end(); };
  CHECK(has(1, 3));    // both gemm operands live at once
  CHECK_FALSE(has(4, 5));  // softmax overwrites the gemm result it reads last
  CHECK(has(6, 8));
  CHECK_FALSE(has(1, 6));  // Q's tile is dead once the first gemm ran
  CHECK(has(0, 11));   // an input and the output are both in HBM for good
}

TEST_CASE("the interference graph's sweep finds the pairs a pairwise check finds, and has_edges agrees") {
  const auto g = qkv_attention_graph();
  const auto ctx = qkv_context();
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(attention()));
  // The definition of the header comment, pair by pair.
  const auto pairwise = [&](const alloc::Schedule& s) {
    const auto live = alloc::live_ranges(values, s);
    alloc::InterferenceGraph edges;
    for (std::size_t a = 0; a < values.size(); ++a)
      for (std::size_t b = a + 1; b < values.size(); ++b) {
        if (!values.storage[a] || !values.storage[b] || values.node(a).buffer != values.node(b).buffer) continue;
        if (values.node(a).is_leaf() && values.node(b).is_leaf()) continue;
        if (values.overlay[a] >= 0 && values.overlay[a] == values.overlay[b]) continue;
        if (live[a].begin > live[b].end || live[b].begin > live[a].end) continue;
        const bool b_first = alloc::ordered_edge(values, a, b) && live[b].begin < live[a].begin;
        edges.push_back(b_first ? std::pair{b, a} : std::pair{a, b});
      }
    std::sort(edges.begin(), edges.end());
    return edges;
  };
  alloc::ScheduleGenerator orders(values);
  std::size_t checked = 0;
  for (auto s = orders.next(); s && checked < 200; s = orders.next(), ++checked) {
    const alloc::InterferenceGraph expected = pairwise(*s);
    REQUIRE_FALSE(expected.empty());
    CHECK(alloc::interference_graph(values, *s) == expected);
    CHECK(orders.last_interference() == expected);
    const auto live = alloc::live_ranges(values, *s);
    CHECK(alloc::has_edges(values, live, expected));
    alloc::InterferenceGraph reversed{{expected.front().second, expected.front().first}};
    CHECK_FALSE(alloc::has_edges(values, live, reversed));  // an edge holds in its orientation only
  }
  CHECK(checked > 10);
}

TEST_CASE("the QKV attention graph allocates to the paper's nine instructions and verifies") {
  const auto g = qkv_attention_graph();
  const auto ctx = qkv_context();
  const auto kernel = attention();
  const auto image = sim::kernel_image(kernel);
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, image);
  INFO(r.message);
  REQUIRE(r.program);
  CHECK(r.stats.solved_by == alloc::SolvedBy::Constructive);
  CHECK(r.stats.schedules_tried == 1);
  const auto& p = *r.program;
  CHECK(names(p) == std::vector<std::string>{"load_rm", "load_cm", "gemm", "softmax", "mov", "load_rm", "gemm", "mov", "store_rm"});
  // CSP3: the HBM addresses come from the kernel image (Q, K, V at 0, 8K, 16K; output at 24K).
  CHECK(p.instructions[0].attributes == std::vector<std::int64_t>{64, 0, 0});
  CHECK(p.instructions[1].attributes[1] == 8192);
  CHECK(p.instructions[5].attributes[1] == 16384);
  CHECK(p.instructions[8].attributes[2] == 24576);
  // CSP2: gemm reads exactly the tiles the loads wrote; softmax works in place on gemm's result.
  CHECK(p.instructions[2].attributes[0] == p.instructions[0].attributes[2]);
  CHECK(p.instructions[2].attributes[1] == p.instructions[1].attributes[2]);
  CHECK(p.instructions[3].attributes[1] == p.instructions[2].attributes[2]);
  // CSP4: the two gemm operands are disjoint 64-row tiles of the 128-row d1.
  CHECK(std::abs(p.instructions[2].attributes[0] - p.instructions[2].attributes[1]) >= 64);
  CHECK(p.constants.empty());
  require_verifies(kernel, ctx.isa, p);
}

TEST_CASE("Z3 allocates the QKV graph when the constructive path is skipped, deterministically") {
  const auto g = qkv_attention_graph();
  const auto ctx = qkv_context();
  const auto kernel = attention();
  const auto image = sim::kernel_image(kernel);
  alloc::AllocateOptions o;
  o.csp.constructive = false;
  alloc::CspSolver solver;  // one context for all three calls
  const auto a = alloc::allocate(g, ctx.isa, ctx.constants, image, solver, o);
  INFO(a.message);
  REQUIRE(a.program);
  CHECK(a.stats.solved_by == alloc::SolvedBy::Z3);
  CHECK(a.stats.csp_variables > 0);
  CHECK(a.stats.csp_constraints > a.stats.interference_edges);
  require_verifies(kernel, ctx.isa, *a.program);
  const auto b = alloc::allocate(g, ctx.isa, ctx.constants, image, solver, o);
  REQUIRE(b.program);
  CHECK(*a.program == *b.program);
  const auto c1 = alloc::allocate(g, ctx.isa, ctx.constants, image);
  const auto c2 = alloc::allocate(g, ctx.isa, ctx.constants, image);
  REQUIRE((c1.program && c2.program));
  CHECK(*c1.program == *c2.program);
}

TEST_CASE("Z3's optimizer packs the QKV graph into the smallest footprint") {
  const auto g = qkv_attention_graph();
  const auto ctx = qkv_context();
  const auto kernel = attention();
  alloc::AllocateOptions o;
  o.csp.constructive = false;
  o.csp.minimize_footprint = true;
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, sim::kernel_image(kernel), o);
  INFO(r.message);
  REQUIRE(r.program);
  // d1 needs two tiles (rows 0..127), d2 one (rows 0..63): every d1 address is 0 or 64 and
  // every d2 address 0.
  for (const auto& i : r.program->instructions) {
    if (i.name == "gemm") {
      CHECK(i.attributes[2] == 0);
      CHECK((i.attributes[0] == 0 || i.attributes[0] == 64));
    }
    if (i.name == "softmax") CHECK(i.attributes[1] == 0);
  }
  require_verifies(kernel, ctx.isa, *r.program);
}

TEST_CASE("the constructive assignment retries the classes with the fewest values allowed first") {
  // B (32 rows) lives while A (64 rows) is loaded; C (64 rows) is loaded after B is stored and
  // lives with A. First-fit in schedule order puts B at row 0 and A at row 32, leaving C, which
  // must start at row 64 or before, no room in d1's 128 rows. Tightest first: A at 0, C at 64,
  // B at 64 (it never meets C).
  const auto kernel = hlo::parse_module(R"(HloModule tightest
ENTRY main {
  %a = bf16[64,64] parameter(0)
  %b = bf16[32,64] parameter(1)
  %c = bf16[64,64] parameter(2)
  %s = bf16[64,64] dot(%a, %c), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT %out = (bf16[32,64], bf16[64,64]) tuple(%b, %s)
})");
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 8192));                                // 0 a
  n.push_back(leaf(1, 4096));                                // 1 b
  n.push_back(leaf(2, 8192));                                // 2 c
  n.push_back(pii(kLoadRm, {32}, kD1, rows(32), {1}));       // 3 B
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {0}));       // 4 A
  n.push_back(pii(kStoreRm, {32}, kD0, bytes(4096), {3}));   // 5 output 0
  n.push_back(pii(kLoadCm, {64}, kD1, rows(64), {2}));       // 6 C
  n.push_back(pii(kGemm, {}, kD2, rows(64), {4, 6}));        // 7 A Cᵀ
  n.push_back(pii(kMov, {64}, kD1, rows(64), {7}));          // 8
  n.push_back(pii(kStoreRm, {64}, kD0, bytes(8192), {8}));   // 9 output 1
  const select::PiiGraph g(std::move(n), {5, 9});
  const auto ctx = qkv_context();
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  // PiiGraph renumbers its nodes: find them by instruction and rows.
  auto find = [&](std::int64_t instruction, std::vector<std::int64_t> alpha) {
    for (std::size_t i = 0; i < g.nodes().size(); ++i)
      if (g.node(i).kind == PiiNodeKind::Pii && g.node(i).index == instruction && g.node(i).alpha == alpha) return i;
    FAIL("no such node");
    return std::size_t{0};
  };
  const std::size_t b = find(kLoadRm, {32}), a = find(kLoadRm, {64}), c = find(kLoadCm, {64});
  const alloc::Schedule order{{b, a, find(kStoreRm, {32}), c, find(kGemm, {}), find(kMov, {64}), find(kStoreRm, {64})}};
  const auto ig = alloc::interference_graph(values, order);
  REQUIRE(alloc::contains_graph(ig, alloc::InterferenceGraph{{std::min(a, b), std::max(a, b)}, {std::min(a, c), std::max(a, c)}}));
  REQUIRE_FALSE(alloc::contains_graph(ig, alloc::InterferenceGraph{{std::min(b, c), std::max(b, c)}}));
  const auto placed = alloc::constructive_assignment(values, order, ig);
  REQUIRE(placed);
  CHECK_FALSE(alloc::check_assignment(values, ig, *placed));
  CHECK(placed->start[a][0] == 0);
  CHECK(placed->start[c][0] == 64);
  CHECK(placed->start[b][0] == 64);
  require_verifies(kernel, ctx.isa, alloc::emit(values, order, *placed));
}

TEST_CASE("check_assignment rejects an allocation that breaks CSP2 or CSP4") {
  const auto g = qkv_attention_graph();
  const auto ctx = qkv_context();
  const auto kernel = attention();
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  const auto s = alloc::esun_schedule(values);
  const auto ig = alloc::interference_graph(values, s);
  auto a = alloc::constructive_assignment(values, s, ig);
  REQUIRE(a);
  CHECK_FALSE(alloc::check_assignment(values, ig, *a));
  auto overlap = *a;
  overlap.start[3] = overlap.start[1];  // K's tile on top of Q's
  overlap.beta[3][1] = overlap.start[1][0];
  overlap.beta[4][1] = overlap.start[1][0];
  const auto why = alloc::check_assignment(values, ig, overlap);
  REQUIRE(why);
  CHECK(why->find("overlap") != std::string::npos);
  auto misread = *a;
  misread.beta[4][0] += 1;  // gemm reads one row off
  REQUIRE(alloc::check_assignment(values, ig, misread));
}

TEST_CASE("a schedule whose CSP is unsatisfiable falls back to a later order (§6.4)") {
  const auto g = tiny_graph();
  const auto ctx = context_of<Tiny<4>>();
  const auto kernel = tiny_kernel();
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  const auto first = alloc::esun_schedule(values);
  REQUIRE(first.order == std::vector<std::size_t>{1, 2, 3, 4, 5});  // neg before a + a: doomed
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  INFO(r.message);
  REQUIRE(r.program);
  CHECK(r.stats.schedules_tried == 2);
  CHECK(r.schedule.order == std::vector<std::size_t>{1, 3, 2, 4, 5});
  CHECK(names(*r.program) == std::vector<std::string>{"load", "dbl", "neg", "add", "store"});
  require_verifies(kernel, ctx.isa, *r.program);
}

TEST_CASE("an unsat core prunes every order whose interference graph contains it") {
  const auto g = tiny_graph();
  const auto ctx = context_of<Tiny<4>>();
  const auto kernel = tiny_kernel();
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  alloc::ScheduleGenerator gen(values);
  auto s1 = gen.next();
  REQUIRE(s1);
  alloc::CspSolver solver;
  const auto r1 = solver.solve(values, *s1, gen.last_interference());
  REQUIRE(r1.status == alloc::CspStatus::Unsat);
  // The core is the in-place neg (2) overwriting S (1) while S is still needed.
  CHECK(r1.core == alloc::InterferenceGraph{{1, 2}});
  gen.add_failed(r1.core);
  auto s2 = gen.next();
  REQUIRE(s2);
  CHECK(s2->order == std::vector<std::size_t>{1, 3, 2, 4, 5});
  CHECK(gen.next() == std::nullopt);  // the only other order is the one just returned
}

TEST_CASE("an address is a unit address only when its form is beta + c or a constant") {
  const isa::Instruction inst{.name = "mv", .alpha = {"n"}, .beta = {"addr_in", "addr_out"}};
  const std::vector<std::int64_t> alpha{8};
  auto unit = [&](const char* text) { return alloc::csp_detail::unit_address(sym::parse(text), inst, alpha); };
  const auto plus = unit("addr_out + n * 2 - 1");
  REQUIRE(plus);
  CHECK(plus->beta == 1);
  CHECK(plus->offset == 15);
  const auto constant = unit("n / 3");
  REQUIRE(constant);
  CHECK(constant->beta < 0);
  CHECK(constant->offset == 2);
  const auto cancelled = unit("(addr_in + n) - n");
  REQUIRE(cancelled);
  CHECK(cancelled->beta == 0);
  CHECK(cancelled->offset == 0);
  // Sampling addr at 0, 1 and 7 cannot tell these from addr; their form can.
  CHECK_FALSE(unit("addr_in % 8"));
  CHECK_FALSE(unit("min(addr_in, 7)"));
  CHECK_FALSE(unit("2 * addr_in"));
  CHECK_FALSE(unit("addr_in + addr_out"));
  CHECK_FALSE(unit("addr_in - addr_in + addr_out * 1 + unknown"));
}

TEST_CASE("the address equalities prove an unsat CSP and its one-edge core without Z3") {
  const auto g = tiny_graph();
  const auto kernel = tiny_kernel();
  // Four rows: the in-place neg (2) writes where S (1) is, while dbl (3) still reads S.
  const auto four = context_of<Tiny<4>>();
  const auto values = alloc::analyze_values(g, four.isa, four.constants, sim::kernel_image(kernel));
  const alloc::Schedule doomed = alloc::esun_schedule(values);
  const auto ig = alloc::interference_graph(values, doomed);
  alloc::CspSolver solver;
  const auto fast = solver.solve(values, doomed, ig);
  REQUIRE(fast.status == alloc::CspStatus::Unsat);
  CHECK(fast.core == alloc::InterferenceGraph{{1, 2}});
  CHECK(fast.stats.variables == 0);  // Z3 was not asked
  alloc::CspOptions z3_only;
  z3_only.equality_proofs = false;
  const auto slow = solver.solve(values, doomed, ig, z3_only);
  REQUIRE(slow.status == alloc::CspStatus::Unsat);
  CHECK(slow.core == fast.core);
  CHECK(slow.stats.variables > 0);
  // One row: every value starts at row 0, so any two live together overlap; the better order
  // (dbl before neg) still keeps X and Y live together for the add.
  const auto one = context_of<Tiny<1>>();
  const auto cramped = alloc::analyze_values(g, one.isa, one.constants, sim::kernel_image(kernel));
  alloc::Schedule better = doomed;
  better.order = {1, 3, 2, 4, 5};
  const auto better_ig = alloc::interference_graph(cramped, better);
  const auto r = solver.solve(cramped, better, better_ig);
  REQUIRE(r.status == alloc::CspStatus::Unsat);
  REQUIRE(r.core.size() == 1);
  CHECK(alloc::contains_graph(better_ig, r.core));
  CHECK(r.stats.variables == 0);
  CHECK(r.message.find("cannot be separated") != std::string::npos);
  // Where the equalities leave the rows free, they prove nothing and the schedule allocates.
  const auto ok = solver.solve(values, better, alloc::interference_graph(values, better));
  CHECK(ok.status == alloc::CspStatus::Sat);
}

TEST_CASE("forced interference: which pairs of values every schedule keeps live together") {
  const auto g = tiny_graph();
  const auto ctx = context_of<Tiny<4>>();
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(tiny_kernel()));
  const alloc::ForcedInterference forced(values);
  // S (1) can die before the in-place neg (2) writes: run dbl (3), S's other reader, first.
  CHECK(forced.can_end_before(1, 2));
  CHECK_FALSE(forced.can_end_before(2, 1));  // X is computed from S
  CHECK_FALSE(forced.forced(1, 2));
  // X (2) and Y (3) are both read by the add (4): live together in every order.
  CHECK(forced.forced(2, 3));
  CHECK(forced.all_forced(alloc::InterferenceGraph{{2, 3}}));
  CHECK_FALSE(forced.all_forced(alloc::InterferenceGraph{{1, 2}, {2, 3}}));
  CHECK_FALSE(forced.all_forced(alloc::InterferenceGraph{}));
  CHECK_FALSE(forced.can_end_before(0, 1));  // an input leaf lives for the whole program
}

TEST_CASE("a repaired order answers an unsat core before the enumeration goes on") {
  const auto g = tiny_graph();
  const auto ctx = context_of<Tiny<4>>();
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(tiny_kernel()));
  alloc::ScheduleGenerator gen(values);
  REQUIRE(gen.next());
  gen.add_failed(alloc::InterferenceGraph{{1, 2}});
  const auto repaired = gen.next();
  REQUIRE(repaired);
  // S's other reader (dbl, 3) is placed before the in-place neg (2).
  CHECK(repaired->order == std::vector<std::size_t>{1, 3, 2, 4, 5});
  CHECK_FALSE(alloc::contains_graph(alloc::interference_graph(values, *repaired), alloc::InterferenceGraph{{1, 2}}));
  CHECK(gen.unavoidable(alloc::InterferenceGraph{{2, 3}}));
  CHECK_FALSE(gen.unavoidable(alloc::InterferenceGraph{{1, 2}}));
  CHECK(gen.next() == std::nullopt);  // the enumeration skips the order the repair offered
}

TEST_CASE("a graph no schedule can allocate fails cleanly") {
  const auto g = tiny_graph();
  const auto ctx = context_of<Tiny<1>>();  // one row: S and S + S can never coexist
  const auto kernel = tiny_kernel();
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  CHECK_FALSE(r.program);
  CHECK_FALSE(r.assignment);
  CHECK(r.stats.schedules_tried >= 1);
  CHECK(r.stats.schedules_tried <= 2);
  CHECK(r.message.find("no allocation") != std::string::npos);
}

TEST_CASE("two outputs with one value: each output gets its own store") {
  // Extraction gives both roots one node (they are one e-class); one HBM node cannot sit at two
  // output addresses, so phase 2 stores the value once per output (alloc/output_copies.hpp).
  const auto kernel = hlo::parse_module(R"(HloModule twice
ENTRY main {
  %a = bf16[64,64] parameter(0)
  %s = bf16[64,64] dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %t = bf16[32,128] reshape(%s)
  %u = bf16[64,64] reshape(%t)
  ROOT %out = (bf16[64,64], bf16[64,64]) tuple(%s, %u)
})");
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 8192));                                // 0 A
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {0}));       // 1
  n.push_back(pii(kLoadCm, {64}, kD1, rows(64), {0}));       // 2
  n.push_back(pii(kGemm, {}, kD2, rows(64), {1, 2}));        // 3 A Aᵀ
  n.push_back(pii(kMov, {64}, kD1, rows(64), {3}));          // 4
  n.push_back(pii(kStoreRm, {64}, kD0, bytes(8192), {4}));   // 5, both outputs
  const select::PiiGraph g(std::move(n), {5, 5});
  const select::PiiGraph copied = alloc::with_distinct_outputs(g);
  REQUIRE(copied.roots().size() == 2);
  CHECK(copied.roots()[0] != copied.roots()[1]);
  CHECK(copied.node(copied.roots()[0]).operands == copied.node(copied.roots()[1]).operands);  // one mov, two stores
  CHECK(copied.pii_count() == g.pii_count() + 1);
  const auto ctx = qkv_context();
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  INFO(r.message);
  REQUIRE(r.program);
  REQUIRE(r.graph);  // the allocated graph is the copied one
  const std::vector<std::string> program = names(*r.program);
  CHECK(std::count(program.begin(), program.end(), std::string("store_rm")) == 2);
  require_verifies(kernel, ctx.isa, *r.program);
}

TEST_CASE("an output that is also a piece of a value assembled in HBM gets bytes of its own") {
  // Rows 0-31 of a product are an output and, with rows 32-63, the whole product is loaded back
  // (concat^H in HBM). The assembly would pin rows 32-63 beside the output's region, where other
  // outputs sit; with_outputs_apart stores the output's rows once more, for the output alone.
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 8192));                                 // 0 A
  n.push_back(pii(kLoadRm, {32}, kD1, rows(32), {0}));        // 1
  n.push_back(pii(kStoreRm, {32}, kD0, bytes(4096), {1}));    // 2 rows 0-31: output 0
  n.push_back(pii(kStoreRm, {32}, kD0, bytes(4096), {1}));    // 3 rows 32-63
  n.push_back(concat_h(kD0, 0, bytes(8192), {2, 3}));         // 4 the whole value
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {4}));        // 5
  n.push_back(pii(kStoreRm, {64}, kD0, bytes(8192), {5}));    // 6 output 1
  const select::PiiGraph g(std::move(n), {2, 6});
  CHECK(alloc::with_distinct_outputs(g).nodes().size() == g.nodes().size());  // no root repeats
  const select::PiiGraph apart = alloc::with_outputs_apart(g);
  REQUIRE(apart.roots().size() == 2);
  const auto assembly = std::find_if(apart.nodes().begin(), apart.nodes().end(),
                                     [](const PiiNode& x) { return x.kind == PiiNodeKind::ConcatH; });
  REQUIRE(assembly != apart.nodes().end());
  REQUIRE(assembly->operands.size() == 2);
  const PiiNode& output = apart.node(apart.roots()[0]);
  const PiiNode& first_piece = apart.node(assembly->operands[0]);
  CHECK(apart.roots()[0] != assembly->operands[0]);    // the output is a store of its own ...
  CHECK(output.kind == PiiNodeKind::Pii);
  CHECK(output.index == kStoreRm);
  CHECK(output.operands == first_piece.operands);      // ... of the same on-chip value
  CHECK(apart.node(apart.roots()[1]).index == kStoreRm);  // the other output stays as it was
  CHECK(apart.pii_count() == g.pii_count() + 1);
}

TEST_CASE("a store whose window the output keeps only part of may be written over by a later store") {
  // out = concatenate(a, b[16:32]): b is stored whole at output row 16, its rows 0-15 then
  // written over by a's store to rows 0-31. The two stores' windows overlap in output rows
  // 16-31, which only b's dead rows occupy (values.hpp, needed parts), so the edge between
  // them is ordered (schedule.hpp): b's store must come first, whatever order esun picks.
  const hlo::Module kernel = kernel_over_ab(
      "%s = bf16[16,64] slice(%b), slice={[16:32], [0:64]}\n  ROOT %out = bf16[48,64] concatenate(%a, %s), dimensions={0}");
  std::vector<PiiNode> n = loaded_a_and_b();
  n.push_back(pii(kStoreRm, {32}, kD0, bytes(4096), {2}));                          // 4 a, whole
  n.push_back(pii(kStoreRm, {32}, kD0, bytes(4096), {3}));                          // 5 b, whole
  n.push_back(slice_h(kD0, {hlo::SliceRange{2048, 4096, 1}}, bytes(2048), 5));      // 6 b's rows 16:32
  n.push_back(concat_h(kD0, 0, bytes(6144), {4, 6}));                               // 7 the output
  const select::PiiGraph g(std::move(n), {7});
  const auto ctx = qkv_context();
  const alloc::GraphValues v = alloc::analyze_values(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  std::size_t partial = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v.partly_needed(i)) {
      ++partial;
      CHECK(v.needed_begin[i][0] == 2048);
      CHECK(v.needed_length[i][0] == 2048);
    }
  CHECK(partial == 1);  // b's store: only its last 16 rows are read
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  INFO(r.message);
  REQUIRE(r.program);
  REQUIRE(r.program->instructions.size() == 4);
  require_verifies(kernel, ctx.isa, *r.program);
  // The stores, in program order: b's (to output row 16) before a's (to output row 0).
  const std::string text = sim::print_program(*r.program, ctx.isa);
  INFO(text);
  const auto b_store = text.find("addr_out = 10240)"), a_store = text.find("addr_out = 8192)");
  REQUIRE(b_store != std::string::npos);
  REQUIRE(a_store != std::string::npos);
  CHECK(b_store < a_store);
}

TEST_CASE("an instruction reading more of a buffer at once than it holds has no allocation, whatever the schedule") {
  // The add reads two rows of 'r'; with room for one row no schedule helps. (A slice^H operand
  // counting the whole value it views is checked through the greedy graph, select_extract.cpp.)
  const Shape row(DType::s32, {1, 4});
  std::vector<PiiNode> n;
  for (std::int64_t p = 0; p < 2; ++p) n.push_back(leaf(p, 16));                      // 0-1
  for (std::size_t p = 0; p < 2; ++p) n.push_back(pii(kTinyLoad, {}, 1, row, {p}));  // 2-3
  n.push_back(pii(kTinyAdd, {}, 1, row, {2, 3}));                                    // 4
  n.push_back(pii(kTinyStore, {}, 0, bytes(16), {4}));                               // 5
  const select::PiiGraph g(std::move(n), {5});
  const auto kernel = hlo::parse_module(R"(HloModule sum
ENTRY main {
  %a = s32[1,4] parameter(0)
  %b = s32[1,4] parameter(1)
  ROOT %r = s32[1,4] add(%a, %b)
})");
  const auto image = sim::kernel_image(kernel);
  const auto one = context_of<Tiny<1>>();
  const select::OnChipReads reads(g, one.isa);
  CHECK(reads.reads(4, 1) == 2);
  CHECK(reads.capacity(1) == 1);
  CHECK(reads.overfills(4, 1));
  CHECK_FALSE(reads.overfills(5, 1));  // the store reads one row
  const auto values = alloc::analyze_values(g, one.isa, one.constants, image);
  const auto why = alloc::allocate_detail::overfull_instruction(values);
  REQUIRE(why);
  CHECK(why->find("%4") == 0);
  CHECK(why->find("reads 2 units of buffer 'r' at once, which holds 1") != std::string::npos);
  const auto r = alloc::allocate(g, one.isa, one.constants, image);
  CHECK_FALSE(r.program);
  const auto two = context_of<Tiny<2>>();
  CHECK_FALSE(alloc::allocate_detail::overfull_instruction(alloc::analyze_values(g, two.isa, two.constants, image)));
  const auto ok = alloc::allocate(g, two.isa, two.constants, image);
  INFO(ok.message);
  REQUIRE(ok.program);
  require_verifies(kernel, two.isa, *ok.program);
}

TEST_CASE("a schedule keeping more live than a buffer holds is unsat without Z3, its clique the core") {
  // (a + b) + (c + d): whichever sum comes first stays live while the other's two operands are
  // loaded, so three rows are live at once.
  const Shape row(DType::s32, {1, 4});
  std::vector<PiiNode> n;
  for (std::int64_t p = 0; p < 4; ++p) n.push_back(leaf(p, 16));         // 0-3
  for (std::size_t p = 0; p < 4; ++p) n.push_back(pii(kTinyLoad, {}, 1, row, {p}));  // 4-7
  n.push_back(pii(kTinyAdd, {}, 1, row, {4, 5}));                          // 8
  n.push_back(pii(kTinyAdd, {}, 1, row, {6, 7}));                          // 9
  n.push_back(pii(kTinyAdd, {}, 1, row, {8, 9}));                          // 10
  n.push_back(pii(kTinyStore, {}, 0, bytes(16), {10}));                    // 11
  const select::PiiGraph g(std::move(n), {11});
  const auto kernel = hlo::parse_module(R"(HloModule sums
ENTRY main {
  %a = s32[1,4] parameter(0)
  %b = s32[1,4] parameter(1)
  %c = s32[1,4] parameter(2)
  %d = s32[1,4] parameter(3)
  %ab = s32[1,4] add(%a, %b)
  %cd = s32[1,4] add(%c, %d)
  ROOT %r = s32[1,4] add(%ab, %cd)
})");
  const auto image = sim::kernel_image(kernel);
  const auto two = context_of<Tiny<2>>();
  const auto values = alloc::analyze_values(g, two.isa, two.constants, image);
  const alloc::Schedule order = alloc::esun_schedule(values);
  const auto r = alloc::allocate_detail::overfull_point(values, order);
  REQUIRE(r);
  CHECK(r->status == alloc::CspStatus::Unsat);
  CHECK(r->core.size() == 3);  // three values, every pair an edge
  CHECK(r->message.find("units of buffer 'r' live at once, which holds 2") != std::string::npos);
  CHECK(alloc::contains_graph(alloc::interference_graph(values, order), r->core));
  // With room for three there is no such point; with room for one, the two values live at once
  // are left to Z3 (kMinOverfullCore).
  const auto three = context_of<Tiny<3>>();
  const auto roomy = alloc::analyze_values(g, three.isa, three.constants, image);
  CHECK_FALSE(alloc::allocate_detail::overfull_point(roomy, alloc::esun_schedule(roomy)));
  const auto one = context_of<Tiny<1>>();
  const select::PiiGraph tiny = tiny_graph();  // GraphValues points into its graph
  const auto pair = alloc::analyze_values(tiny, one.isa, one.constants, sim::kernel_image(tiny_kernel()));
  CHECK_FALSE(alloc::allocate_detail::overfull_point(pair, alloc::esun_schedule(pair)));
  // And phase 2 still allocates the sums with three rows and verifies the program.
  const auto ok = alloc::allocate(g, three.isa, three.constants, image);
  INFO(ok.message);
  REQUIRE(ok.program);
  require_verifies(kernel, three.isa, *ok.program);
}

TEST_CASE("a slice^H selecting one whole operand of a concat^H reads that operand") {
  const auto kernel = kernel_over_ab("ROOT %out = bf16[32,64] slice(%ab), slice={[0:32], [0:64]}");
  std::vector<PiiNode> n = loaded_a_and_b();
  n.push_back(concat_h(kD1, 0, rows(64), {2, 3}));                                             // 4
  n.push_back(slice_h(kD1, {hlo::SliceRange{0, 32, 1}, hlo::SliceRange{0, 64, 1}}, rows(32), 4)); // 5
  n.push_back(pii(kStoreRm, {32}, kD0, bytes(4096), {5}));                                     // 6
  const select::PiiGraph g(std::move(n), {6});
  const select::PiiGraph folded = alloc::fold_slices_of_concats(g);
  CHECK(folded.identity_count() == 0);  // the concat^H is read by nothing now
  CHECK(folded.pii_count() == 2);       // load a, store it; b's load is gone with it
  const auto ctx = qkv_context();
  const auto r = alloc::allocate(folded, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  INFO(r.message);
  REQUIRE(r.program);
  require_verifies(kernel, ctx.isa, *r.program);
  // A slice that is not one whole operand stays.
  std::vector<PiiNode> m = g.nodes();
  for (PiiNode& x : m)
    if (x.kind == PiiNodeKind::SliceH) x.slice[0] = hlo::SliceRange{16, 48, 1};
  const select::PiiGraph straddling(std::move(m), g.roots());
  CHECK(alloc::fold_slices_of_concats(straddling) == straddling);
}

TEST_CASE("a slice^H inside one operand of nested concat^H reads a slice^H of that operand") {
  // Rows 80:96 of concat(concat(a, b), concat(a, b)) are rows 16:32 of a: phase 2 need not
  // hold 128 rows side by side to store 16 of them.
  const auto kernel = kernel_over_ab(R"(%abab = bf16[128,64] concatenate(%ab, %ab), dimensions={0}
  ROOT %out = bf16[16,64] slice(%abab), slice={[80:96], [0:64]})");
  std::vector<PiiNode> n = loaded_a_and_b();
  n.push_back(concat_h(kD1, 0, rows(64), {2, 3}));                                              // 4
  n.push_back(concat_h(kD1, 0, rows(128), {4, 4}));                                             // 5
  n.push_back(slice_h(kD1, {hlo::SliceRange{80, 96, 1}, hlo::SliceRange{0, 64, 1}}, rows(16), 5)); // 6
  n.push_back(pii(kStoreRm, {16}, kD0, bytes(2048), {6}));                                      // 7
  const select::PiiGraph g(std::move(n), {7});
  const select::PiiGraph folded = alloc::fold_slices_of_concats(g);
  REQUIRE(folded.identity_count() == 1);  // the slice^H, of a's load: no concat^H is read
  CHECK(folded.pii_count() == 2);         // load a, store: b's load is gone
  for (const PiiNode& x : folded.nodes())
    if (x.kind == PiiNodeKind::SliceH) {
      CHECK(folded.node(x.operands.at(0)).kind == PiiNodeKind::Pii);
      CHECK(x.slice.at(0).start == 16);
      CHECK(x.slice.at(0).limit == 32);
    }
  const auto ctx = qkv_context();
  const auto r = alloc::allocate(folded, ctx.isa, ctx.constants, sim::kernel_image(kernel));
  INFO(r.message);
  REQUIRE(r.program);
  require_verifies(kernel, ctx.isa, *r.program);
}

TEST_CASE("bad graphs are act::Errors, not crashes") {
  const auto ctx = qkv_context();
  const auto kernel = attention();
  const auto image = sim::kernel_image(kernel);
  SECTION("a root of the wrong size") {
    std::vector<PiiNode> n{leaf(0, 8192), pii(kLoadRm, {64}, kD1, rows(64), {0}), pii(kStoreRm, {32}, kD0, bytes(4096), {1})};
    const select::PiiGraph g(std::move(n), {2});
    CHECK_THROWS_AS(alloc::allocate(g, ctx.isa, ctx.constants, image), Error);
  }
  SECTION("an instruction index outside the ISA") {
    std::vector<PiiNode> n{leaf(0, 8192), pii(99, {64}, kD1, rows(64), {0})};
    const select::PiiGraph g(std::move(n), {1});
    CHECK_THROWS_AS(alloc::allocate(g, ctx.isa, ctx.constants, image), Error);
  }
  SECTION("a constant without a value") {
    PiiNode c;
    c.kind = PiiNodeKind::Constant;
    c.buffer = kD0;
    c.index = -1;
    c.type = bytes(8192);
    std::vector<PiiNode> n{c, pii(kLoadRm, {64}, kD1, rows(64), {0}), pii(kMov, {64}, kD1, rows(64), {1})};
    const select::PiiGraph g(std::move(n), {2});
    CHECK_THROWS_AS(alloc::allocate(g, ctx.isa, ctx.constants, image), Error);
  }
}

TEST_CASE("slice^H and concat^H: Q Kᵀ from two 32-row halves of Q") {
  const auto kernel = hlo::parse_module(R"(HloModule qk
ENTRY main {
  %q = bf16[64,64] parameter(0)
  %k = bf16[64,64] parameter(1)
  %kt = bf16[64,64] transpose(%k), dimensions={1,0}
  ROOT %s = bf16[64,64] dot(%q, %kt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  const auto ctx = qkv_context();
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 8192));  // 0 Q
  n.push_back(leaf(1, 8192));  // 1 K
  PiiNode top = slice_h(kD0, {hlo::SliceRange{0, 4096, 1}}, bytes(4096), 0);
  PiiNode bottom = top;
  bottom.slice = {hlo::SliceRange{4096, 8192, 1}};
  n.push_back(top);                                               // 2 rows 0..31 of Q
  n.push_back(bottom);                                            // 3 rows 32..63 of Q
  n.push_back(pii(kLoadRm, {32}, kD1, rows(32), {2}));            // 4
  n.push_back(pii(kLoadRm, {32}, kD1, rows(32), {3}));            // 5
  n.push_back(concat_h(kD1, 0, rows(64), {4, 5}));                // 6 Q in d1
  n.push_back(pii(kLoadCm, {64}, kD1, rows(64), {1}));            // 7 Kᵀ
  n.push_back(pii(kGemm, {}, kD2, rows(64), {6, 7}));             // 8
  n.push_back(pii(kMov, {64}, kD1, rows(64), {8}));               // 9
  n.push_back(pii(kStoreRm, {64}, kD0, bytes(8192), {9}));        // 10
  const select::PiiGraph g(std::move(n), {10});
  const auto image = sim::kernel_image(kernel);
  for (bool constructive : {true, false}) {
    alloc::AllocateOptions o;
    o.csp.constructive = constructive;
    const auto r = alloc::allocate(g, ctx.isa, ctx.constants, image, o);
    INFO(r.message);
    REQUIRE(r.program);
    const auto& p = *r.program;
    REQUIRE(names(p) == std::vector<std::string>{"load_rm", "load_rm", "load_cm", "gemm", "mov", "store_rm"});
    // The halves come from HBM 0 and 4096 and land back to back; gemm reads them as one tile.
    const auto& a = p.instructions[0].attributes[1] == 0 ? p.instructions[0] : p.instructions[1];
    const auto& b = p.instructions[0].attributes[1] == 0 ? p.instructions[1] : p.instructions[0];
    CHECK(a.attributes[1] == 0);
    CHECK(b.attributes[1] == 4096);
    CHECK(b.attributes[2] == a.attributes[2] + 32);
    CHECK(p.instructions[3].attributes[0] == a.attributes[2]);
    require_verifies(kernel, ctx.isa, p);
  }
}

// ---- don't-care inputs -------------------------------------------------------------------------

#include "act/isa/amx.hpp"

TEST_CASE("an undefined (don't-care) input needs no producer: tilestored writes over whatever is there") {
  const Phase2Context ctx = context_of<isa::Amx>();
  const auto kernel = hlo::parse_module("ENTRY e {\n  p = s8[16,64] parameter(0)\n  ROOT c = s8[16,64] copy(p)\n}\n");
  constexpr std::int64_t kTileloadd = 1, kTilestored = 2;  // isa/amx.hpp declaration order
  constexpr int kTmm = 1;
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 1024));                                                           // 0 p
  n.push_back(pii(kTileloadd, {64}, kTmm, Shape(DType::s8, {1, 16, 64}), {0}));         // 1
  PiiNode undefined;
  undefined.kind = PiiNodeKind::Undefined;
  undefined.buffer = kD0;
  undefined.type = bytes(1024);
  n.push_back(undefined);                                                               // 2
  n.push_back(pii(kTilestored, {64}, kD0, bytes(1024), {1, 2}));                        // 3
  const select::PiiGraph g(std::move(n), {3});
  REQUIRE(g.node(2).kind == PiiNodeKind::Undefined);
  CHECK(g.node(2).is_leaf());
  CHECK(g.size() == 2);  // instruction nodes only

  const auto image = sim::kernel_image(kernel);
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, image);
  CHECK_FALSE(values.storage[2]);
  CHECK(values.aliases[2].empty());
  CHECK_FALSE(values.pinned[2].has_value());
  CHECK(alloc::esun_schedule(values).order == std::vector<std::size_t>{1, 3});  // leaves are not scheduled

  for (bool constructive : {true, false}) {
    INFO((constructive ? "constructive" : "Z3"));
    alloc::AllocateOptions o;
    o.csp.constructive = constructive;
    const auto r = alloc::allocate(g, ctx.isa, ctx.constants, image, o);
    REQUIRE(r);
    CHECK(r.stats.solved_by == (constructive ? alloc::SolvedBy::Constructive : alloc::SolvedBy::Z3));
    REQUIRE(r.program->instructions.size() == 2);
    const auto& store = r.program->instructions[1];
    CHECK(store.name == "tilestored");
    CHECK(store.attributes == std::vector<std::int64_t>{64, r.program->instructions[0].attributes[1], 1024});
    require_verifies(kernel, ctx.isa, *r.program);
  }
}

// ---- spills and reloads (alloc/spill.hpp, spill_plan.hpp, live_range_split.hpp) -------------

TEST_CASE("the spill table finds store/load pairs by evaluating the semantics, and none where the ISA has none") {
  alloc::SpillTable qkv(isa::view<isa::Qkv>());
  const auto& d1 = qkv.find(kD1, rows(64));
  REQUIRE(d1);
  CHECK(d1->store.instruction == kStoreRm);
  CHECK(d1->store.alpha == std::vector<std::int64_t>{64});
  CHECK(d1->load.instruction == kLoadRm);
  CHECK(d1->load.output_type == rows(64));
  const auto& half = qkv.find(kD1, rows(32));
  REQUIRE(half);
  CHECK(half->load.alpha == std::vector<std::int64_t>{32});
  CHECK_FALSE(qkv.find(kD2, rows(64)));  // nothing stores from d2 (mov goes to d1 only)
  CHECK_FALSE(qkv.find(kD0, bytes(64)));  // HBM values do not spill

  alloc::SpillTable amx(isa::view<isa::Amx>());
  const auto& tile = amx.find(1, Shape(DType::s8, {1, 16, 64}));
  REQUIRE(tile);
  const isa::IsaView a = isa::view<isa::Amx>();
  CHECK(a.instructions[tile->store.instruction].name == "tilestored");
  CHECK(tile->store.alpha == std::vector<std::int64_t>{64});
  CHECK(tile->store.input_types.size() == 2);  // the old window: a don't-care input
  CHECK(a.instructions[tile->load.instruction].name == "tileloadd");
}

// out = ((A B) C) A: A is needed again after B, C and A B have filled d1 (128 rows). Along the
// esun order d1 would hold A, A B and C at once; the planner lets A go (its next use is the
// farthest) and loads it again before the last gemm.
TEST_CASE("spilling by furthest next use: a load is repeated when d1 cannot keep it") {
  const auto kernel = hlo::parse_module(R"(HloModule chain
ENTRY main {
  %a = bf16[64,64] parameter(0)
  %b = bf16[64,64] parameter(1)
  %c = bf16[64,64] parameter(2)
  %ab = bf16[64,64] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %abc = bf16[64,64] dot(%ab, %c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = bf16[64,64] dot(%abc, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 8192));                                // 0 A
  n.push_back(leaf(1, 8192));                                // 1 B
  n.push_back(leaf(2, 8192));                                // 2 C
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {0}));       // 3 A in d1, read twice
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {1}));       // 4
  n.push_back(pii(kGemm, {}, kD2, rows(64), {3, 4}));        // 5 A B
  n.push_back(pii(kMov, {64}, kD1, rows(64), {5}));          // 6
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {2}));       // 7
  n.push_back(pii(kGemm, {}, kD2, rows(64), {6, 7}));        // 8 (A B) C
  n.push_back(pii(kMov, {64}, kD1, rows(64), {8}));          // 9
  n.push_back(pii(kGemm, {}, kD2, rows(64), {9, 3}));        // 10 ((A B) C) A
  n.push_back(pii(kMov, {64}, kD1, rows(64), {10}));         // 11
  n.push_back(pii(kStoreRm, {64}, kD0, bytes(8192), {11}));  // 12
  const select::PiiGraph g(std::move(n), {12});
  const auto ctx = qkv_context();
  const auto image = sim::kernel_image(kernel);
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, image);
  alloc::SpillTable spills(ctx.isa);
  const auto plan = alloc::plan_spills(values, alloc::esun_schedule(values), spills);
  REQUIRE(plan);
  CHECK(plan->recomputes == 1);
  CHECK(plan->spills == 0);
  // Phase 2 weighs plans by this count before it builds any: it must be the built graph's.
  CHECK(alloc::spill_plan_instruction_count(values, alloc::esun_schedule(values), spills) ==
        alloc::allocate_detail::instruction_count(plan->graph));
  CHECK(plan->graph.instruction_multiset(ctx.isa) ==
        std::vector<std::string>{"gemm()", "gemm()", "gemm()", "load_rm(n = 64)", "load_rm(n = 64)", "load_rm(n = 64)",
                                 "load_rm(n = 64)", "mov(n = 64)", "mov(n = 64)", "mov(n = 64)", "store_rm(n = 64)"});
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, image);
  INFO(r.message);
  REQUIRE(r.program);
  REQUIRE(r.graph);  // phase 2 changed the graph
  CHECK(r.stats.live_range_splits >= 1);
  require_verifies(kernel, ctx.isa, *r.program);
}

namespace {

// The chain the next two tests share: aa = A A, x = aa B, y = x C, with aa read again later.
const std::string kSquaredChain = R"(
  %a = bf16[64,64] parameter(0)
  %b = bf16[64,64] parameter(1)
  %c = bf16[64,64] parameter(2)
  %aa = bf16[64,64] dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %x = bf16[64,64] dot(%aa, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %y = bf16[64,64] dot(%x, %c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)";

// Its pii nodes: aa in d1 is node 5 (read by node 7 and by the test's own readers), y in d1 node 11.
std::vector<PiiNode> squared_chain_nodes() {
  std::vector<PiiNode> n;
  n.push_back(leaf(0, 8192));                           // 0 A
  n.push_back(leaf(1, 8192));                           // 1 B
  n.push_back(leaf(2, 8192));                           // 2 C
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {0}));  // 3
  n.push_back(pii(kGemm, {}, kD2, rows(64), {3, 3}));   // 4 A A
  n.push_back(pii(kMov, {64}, kD1, rows(64), {4}));     // 5 aa in d1, read twice
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {1}));  // 6
  n.push_back(pii(kGemm, {}, kD2, rows(64), {5, 6}));   // 7 x = aa B
  n.push_back(pii(kMov, {64}, kD1, rows(64), {7}));     // 8
  n.push_back(pii(kLoadRm, {64}, kD1, rows(64), {2}));  // 9 C
  n.push_back(pii(kGemm, {}, kD2, rows(64), {8, 9}));   // 10 y = x C
  n.push_back(pii(kMov, {64}, kD1, rows(64), {10}));    // 11
  return n;
}

}  // namespace

// aa is an output too. Along an order that stores aa last, d1 (128 rows) overflows when C is
// loaded: aa, x and C. aa's only reader still to come is its output store, so the planner runs
// that store at once instead of spilling aa to HBM scratch, loading it back and storing it again
// (two instructions more).
TEST_CASE("spilling by furthest next use: a value only an output store still reads leaves by that store") {
  const auto kernel = hlo::parse_module("HloModule two_outputs\nENTRY main {" + kSquaredChain +
                                        "  ROOT %out = (bf16[64,64], bf16[64,64]) tuple(%y, %aa)\n}");
  std::vector<PiiNode> n = squared_chain_nodes();
  n.push_back(pii(kStoreRm, {64}, kD0, bytes(8192), {11}));  // 12 output 0
  n.push_back(pii(kStoreRm, {64}, kD0, bytes(8192), {5}));   // 13 output 1, last in the order
  std::vector<std::size_t> number;  // the graph numbers its nodes in post-order
  const select::PiiGraph g(std::move(n), {12, 13}, &number);
  const auto ctx = qkv_context();
  const auto image = sim::kernel_image(kernel);
  const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, image);
  alloc::SpillTable spills(ctx.isa);
  alloc::Schedule stores_aa_last;
  for (std::size_t k = 3; k <= 13; ++k) stores_aa_last.order.push_back(number[k]);
  const auto plan = alloc::plan_spills(values, stores_aa_last, spills);
  REQUIRE(plan);
  CHECK(plan->spills == 0);
  CHECK(plan->recomputes == 0);
  CHECK(alloc::spill_plan_instruction_count(values, stores_aa_last, spills) == alloc::allocate_detail::instruction_count(plan->graph));
  CHECK(plan->description.find("1 store(s) moved up") != std::string::npos);
  CHECK(plan->graph.instruction_multiset(ctx.isa) ==
        std::vector<std::string>{"gemm()", "gemm()", "gemm()", "load_rm(n = 64)", "load_rm(n = 64)", "load_rm(n = 64)",
                                 "mov(n = 64)", "mov(n = 64)", "mov(n = 64)", "store_rm(n = 64)", "store_rm(n = 64)"});
  // The planned order (a chain) runs aa's store before C's load (no node was added, so the
  // plan's graph numbers its nodes as g does).
  REQUIRE_FALSE(plan->order.empty());
  std::vector<std::size_t> sequence{plan->order.front().first};
  for (const auto& link : plan->order) sequence.push_back(link.second);
  const auto at = [&](std::size_t node) { return std::find(sequence.begin(), sequence.end(), node) - sequence.begin(); };
  CHECK(at(number[13]) < at(number[9]));
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, image);
  INFO(r.message);
  REQUIRE(r.program);
  CHECK(r.program->instructions.size() == 11);
  require_verifies(kernel, ctx.isa, *r.program);
}

// The same chain ending in y aa, with aa computed instead of loaded: no load can bring it back,
// so it is spilled to HBM scratch (store_rm) and loaded back.
TEST_CASE("spilling by furthest next use: a computed value goes to HBM scratch and comes back") {
  const auto kernel = hlo::parse_module("HloModule chain\nENTRY main {" + kSquaredChain +
                                        "  ROOT %out = bf16[64,64] dot(%y, %aa), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}");
  std::vector<PiiNode> n = squared_chain_nodes();
  n.push_back(pii(kGemm, {}, kD2, rows(64), {11, 5}));       // 12
  n.push_back(pii(kMov, {64}, kD1, rows(64), {12}));         // 13
  n.push_back(pii(kStoreRm, {64}, kD0, bytes(8192), {13}));  // 14
  const select::PiiGraph g(std::move(n), {14});
  const auto ctx = qkv_context();
  const auto image = sim::kernel_image(kernel);
  {
    // The count phase 2 weighs the plan by is the built graph's, the spill's store and load in.
    const auto values = alloc::analyze_values(g, ctx.isa, ctx.constants, image);
    alloc::SpillTable spills(ctx.isa);
    const alloc::Schedule esun = alloc::esun_schedule(values);
    const auto plan = alloc::plan_spills(values, esun, spills, false);
    REQUIRE(plan);
    CHECK(plan->spills >= 1);
    CHECK(alloc::spill_plan_instruction_count(values, esun, spills, false) ==
          alloc::allocate_detail::instruction_count(plan->graph));
    CHECK(alloc::allocate_detail::instruction_count(plan->graph) > alloc::allocate_detail::instruction_count(g));
  }
  const auto r = alloc::allocate(g, ctx.isa, ctx.constants, image);
  INFO(r.message);
  REQUIRE(r.program);
  REQUIRE(r.graph);
  const auto calls = names(*r.program);
  CHECK(std::count(calls.begin(), calls.end(), "store_rm") == 2);  // the spill and the result
  CHECK(std::count(calls.begin(), calls.end(), "load_rm") >= 4);   // A, B, C and the reload
  require_verifies(kernel, ctx.isa, *r.program);
}
