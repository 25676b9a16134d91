// IR->ISA rules on the AMX ISA (select/rules/isa_rules.hpp, select/rules/isa/): identities at a concrete alpha, peeled movement
// chains, accumulate-from-zero and don't-care inputs; the flat slice-of-reshape axiom; and small
// AMX kernels compiled end to end and verified by the simulator (issue 5).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "act/hlo/parser.hpp"
#include "act/isa/amx.hpp"
#include "act/isa/derived_facts.hpp"
#include "act/select/init/kernel_graph.hpp"
#include "act/select/ir/term_to_hlo.hpp"
#include "act/testing/catch2.hpp"
#include "act/isa/registry.hpp"
#include "act/select/rules/axioms.hpp"
#include "act/select/rules/isa_rules.hpp"
#include "act/select/rules/split_sizes.hpp"
#include "act/select/ir/tensor_graph.hpp"

using namespace act;
using namespace act::select;
using hlo::Opcode;

namespace {

SelectionContext amx_context() {
  SelectionContext c;
  c.isa = isa::view<isa::Amx>();
  return c;
}

std::size_t rule_index(const IsaRuleSet& set, std::string_view name) {
  for (std::size_t i = 0; i < set.infos.size(); ++i)
    if (set.infos[i]->name == name) return i;
  FAIL("no rule for " << name);
  return 0;
}

egraph::Id reshape(TensorGraph& g, SelectionContext& c, egraph::Id x, std::vector<std::int64_t> dims) {
  NodeAttributes a;
  a.shape = std::move(dims);
  return g.add(make_operator(c.attributes, Opcode::Reshape, a), {x});
}

// s8[1,16,64] tile bytes read from the first 64 columns of u8[16, stride] rows of a byte input.
egraph::Id tile_from_rows(TensorGraph& g, SelectionContext& c, int parameter, std::int64_t stride) {
  const auto input = g.add(make_input(c.attributes, parameter, 16 * stride));
  auto rows = reshape(g, c, input, {16, stride});
  if (stride != 64) {
    NodeAttributes s;
    s.slice = {{0, 16, 1}, {0, 64, 1}};
    rows = g.add(make_operator(c.attributes, Opcode::Slice, s), {rows});
  }
  NodeAttributes to_s8;
  to_s8.dtype = DType::s8;
  const auto bytes = g.add(make_operator(c.attributes, Opcode::BitcastConvert, to_s8), {rows});
  return reshape(g, c, bytes, {1, 16, 64});
}


}  // namespace

TEST_CASE("IR->ISA rules: identity choices x (plain, peeled) searchers; every AMX instruction has a rule") {
  SelectionContext c = amx_context();
  const IsaRuleSet set = isa_rules(c);
  const auto i = rule_index(set, "tileloadd");
  const IsaRuleInfo& info = *set.infos[i];
  // the slice kept or skipped, each plain and peeled
  CHECK(set.rules[i].num_searchers() == 4);
  REQUIRE(info.variants.size() == 4);
  CHECK(info.variants[0].pattern_text == "(reshape (bitcast-convert :to s8 (slice (reshape ?In1))))");
  CHECK(info.variants[1].pattern_text == "(reshape (bitcast-convert :to s8 (reshape ?In1)))");
  CHECK(info.variants[1].skipped == std::vector<std::string>{"tile"});
  CHECK(!info.variants[1].peeled());
  // peeled: the ROOT reshape and the bitcast under it, and the reshape above the input
  CHECK(info.variants[2].pattern_text == "(slice ?In1')");
  CHECK(info.variants[2].skipped == std::vector<std::string>{"rows", "bytes", "Out0"});
  REQUIRE(info.variants[2].root_chain.size() == 2);
  CHECK(info.variants[2].root_chain[0].node == "Out0");
  CHECK(info.variants[2].root_chain[1].node == "bytes");
  REQUIRE(info.variants[2].bindings.size() == 1);
  REQUIRE(info.variants[2].bindings[0].chain.size() == 1);
  CHECK(info.variants[2].bindings[0].chain[0].node == "rows");
  // slice skipped: the chain may not swallow the last operator, so the reshape stays
  CHECK(info.variants[3].pattern_text == "(reshape ?In1)");
  CHECK(info.variants[3].skipped == std::vector<std::string>{"tile", "bytes", "Out0"});
  CHECK(info.variants[3].bindings[0].chain.empty());
  // tdpbusd: accumulate (plain, peeled) and accumulate from zero (plain, peeled)
  CHECK(set.rules[rule_index(set, "tdpbusd")].num_searchers() == 4);
  // one rule per instruction, tilestored included (its old window is a don't-care input)
  CHECK(set.rules.size() == c.isa.instructions.size());
  CHECK(set.skipped.empty());
}

TEST_CASE("IR->ISA rules: tileloadd matches stride 64 without a full-range slice, other strides with one") {
  SelectionContext c = amx_context();
  const IsaRuleSet set = isa_rules(c);
  TensorGraph g{TensorAnalysis(&c)};
  const auto dense = tile_from_rows(g, c, 0, 64);     // no slice: only the identity searcher fits
  const auto strided = tile_from_rows(g, c, 1, 128);  // slice of u8[16,128]: only the primary fits
  g.rebuild();
  const auto& rule = set.rules[rule_index(set, "tileloadd")];
  egraph::MatchList matches;
  rule.search(g, matches);
  // the s8[1,16,64] classes through searchers 0 and 1; the u8[16,64] classes below them
  // (strided: the slice; dense: the rows) through their peeled copies 2 and 3
  REQUIRE(matches.size() == 4);
  CHECK(matches.searcher(0) == 0);  // the primary searcher runs first
  CHECK(matches.searcher(1) == 1);
  CHECK(matches.searcher(2) == 2);
  CHECK(matches.searcher(3) == 3);
  // the peeled matches build the same Pii nodes and, undoing bitcast and reshape, reuse the
  // existing nodes back to the matched class: only the first two change the graph
  CHECK(rule.apply(g, matches) == 2);
  g.rebuild();
  using P = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;
  CHECK(pii_nodes(g, c, dense) == P{{"tileloadd", {64}}});
  CHECK(pii_nodes(g, c, strided) == P{{"tileloadd", {128}}});
  // the pii's input is the byte input itself (u8[16 * stride])
  for (auto n : g.eclass(g.find(dense)).nodes)
    if (g.node(n).op.kind == NodeKind::Pii) CHECK(g.data(g.find(g.node(n).children[0])).type == Shape(DType::u8, {1024}));
}

TEST_CASE("slice-of-reshape: a contiguous block of a flat input") {
  using axiom_detail::flat_block;
  using R = std::vector<hlo::SliceRange>;
  using B = std::optional<std::pair<std::int64_t, std::int64_t>>;
  CHECK(flat_block(R{{16, 32, 1}, {0, 64, 1}}, {32, 64}) == B{{1024, 1024}});
  CHECK(flat_block(R{{3, 4, 1}, {8, 40, 1}}, {32, 64}) == B{{3 * 64 + 8, 32}});
  CHECK(flat_block(R{{1, 2, 1}, {2, 3, 1}, {0, 4, 1}}, {2, 3, 4}) == B{{12 + 8, 4}});
  CHECK(flat_block(R{{0, 32, 1}, {0, 32, 1}}, {32, 64}) == std::nullopt);   // rows of 32 of 64: gaps
  CHECK(flat_block(R{{0, 32, 2}, {0, 64, 1}}, {32, 64}) == std::nullopt);   // strided rows
  CHECK(flat_block(R{{0, 32, 1}, {0, 64, 1}}, {32, 64}) == std::nullopt);   // the whole array

  // In the e-graph: rows 16..31 of u8[32,64] = reshape(u8[2048]) become reshape(bytes 1024..2047).
  SelectionContext c = amx_context();
  TensorGraph g{TensorAnalysis(&c)};
  const auto input = g.add(make_input(c.attributes, 0, 2048));
  NodeAttributes s;
  s.slice = {{16, 32, 1}, {0, 64, 1}};
  const auto rows = g.add(make_operator(c.attributes, Opcode::Slice, s), {reshape(g, c, input, {32, 64})});
  NodeAttributes flat;
  flat.slice = {{1024, 2048, 1}};
  const auto expected = reshape(g, c, g.add(make_operator(c.attributes, Opcode::Slice, flat), {input}), {16, 64});
  g.rebuild();
  REQUIRE(g.find(rows) != g.find(expected));
  std::vector<Axiom> axioms = ir_axiom_set(c);
  for (const auto& a : axioms) {
    if (a.info.name != "slice-of-reshape") continue;
    egraph::MatchList matches;
    a.rule.search(g, matches);
    a.rule.apply(g, matches);
  }
  g.rebuild();
  CHECK(g.find(rows) == g.find(expected));
}

namespace {

// s8[16,64] tile bytes of a u8[1024] input, as a kernel graph holds them (no unit shape).
egraph::Id kernel_tile(TensorGraph& g, SelectionContext& c, int parameter) {
  const auto input = g.add(make_input(c.attributes, parameter, 1024));
  NodeAttributes to_s8;
  to_s8.dtype = DType::s8;
  return g.add(make_operator(c.attributes, Opcode::BitcastConvert, to_s8), {reshape(g, c, input, {16, 64})});
}

// The reshape nodes of a class whose operand class has the given type.
std::vector<egraph::Id> reshapes_of(const TensorGraph& g, egraph::Id cls, const Shape& operand) {
  std::vector<egraph::Id> out;
  for (auto n : g.eclass(g.find(cls)).nodes) {
    const auto node = g.node(n);
    if (node.op.kind == NodeKind::Operator && node.op.opcode == Opcode::Reshape &&
        g.data(g.find(node.children[0])).type == operand)
      out.push_back(g.find(node.children[0]));
  }
  return out;
}

void run_rule(TensorGraph& g, const TensorRewrite& rule) {
  egraph::MatchList matches;
  rule.search(g, matches);
  rule.apply(g, matches);
  g.rebuild();
}

}  // namespace


namespace {

// Child classes of the nodes of `cls` with the given opcode (and, for transposes, permutation).
std::vector<egraph::Id> operands_via(const TensorGraph& g, const SelectionContext& c, egraph::Id cls, Opcode code,
                                     std::vector<std::int64_t> permutation = {}) {
  std::vector<egraph::Id> out;
  for (auto n : g.eclass(g.find(cls)).nodes) {
    const auto node = g.node(n);
    if (node.op.kind != NodeKind::Operator || node.op.opcode != code || node.children.size() != 1) continue;
    if (code == Opcode::Transpose && c.attributes_of(node.op).dimensions != permutation) continue;
    out.push_back(g.find(node.children[0]));
  }
  return out;
}

// The operand classes of the pii node of instruction `name` in `cls`, and its alpha.
std::optional<std::pair<std::vector<egraph::Id>, std::vector<std::int64_t>>> pii_of(const TensorGraph& g,
                                                                                     const SelectionContext& c,
                                                                                     egraph::Id cls,
                                                                                     std::string_view name) {
  for (auto n : g.eclass(g.find(cls)).nodes) {
    const auto node = g.node(n);
    if (node.op.kind != NodeKind::Pii) continue;
    const auto& a = c.attributes_of(node.op);
    if (c.isa.instructions[static_cast<std::size_t>(a.index)].name != name) continue;
    std::vector<egraph::Id> children;
    for (auto x : node.children) children.push_back(g.find(x));
    return std::make_pair(children, a.alpha);
  }
  return std::nullopt;
}

// The single class reached from `cls` through one node of `code` (fails the test otherwise).
egraph::Id through(const TensorGraph& g, const SelectionContext& c, egraph::Id cls, Opcode code,
                   std::vector<std::int64_t> permutation = {}) {
  const auto v = operands_via(g, c, cls, code, std::move(permutation));
  REQUIRE(v.size() == 1);
  return v[0];
}

egraph::Id op(TensorGraph& g, SelectionContext& c, Opcode code, const NodeAttributes& a, std::vector<egraph::Id> xs) {
  return g.add(make_operator(c.attributes, code, a), xs);
}
NodeAttributes to(DType t) {
  NodeAttributes a;
  a.dtype = t;
  return a;
}

}  // namespace

TEST_CASE("IR->ISA rules: peeled tileloadd matches a kernel's u8[16,64] rows; the applier undoes bitcast and reshape") {
  SelectionContext c = amx_context();
  const IsaRuleSet set = isa_rules(c);
  TensorGraph g{TensorAnalysis(&c)};
  const auto input = g.add(make_input(c.attributes, 0, 1024));
  const auto rows = reshape(g, c, input, {16, 64});  // u8[16,64]: no unit shape, no s8
  g.rebuild();
  run_rule(g, set.rules[rule_index(set, "tileloadd")]);
  // rows == bitcast-convert u8 (reshape s8[16,64] (tileloadd{64}(input)))
  const auto bytes = through(g, c, rows, Opcode::BitcastConvert);
  CHECK(g.data(bytes).type == Shape(DType::s8, {16, 64}));
  const auto unit = through(g, c, bytes, Opcode::Reshape);
  CHECK(g.data(unit).type == Shape(DType::s8, {1, 16, 64}));
  const auto pii = pii_of(g, c, unit, "tileloadd");
  REQUIRE(pii);
  CHECK(pii->second == std::vector<std::int64_t>{64});
  CHECK(pii->first == std::vector<egraph::Id>{g.find(input)});
}

TEST_CASE("IR->ISA rules: tdpbusd on add(dot(convert Ya, convert Yb), x) and, accumulating from zero, on the dot alone") {
  SelectionContext c = amx_context();
  const IsaRuleSet set = isa_rules(c);
  TensorGraph g{TensorAnalysis(&c)};
  const auto ya = reshape(g, c, g.add(make_input(c.attributes, 0, 1024)), {16, 64});  // u8[16,64]
  const auto yb = op(g, c, Opcode::BitcastConvert, to(DType::s8),
                     {reshape(g, c, g.add(make_input(c.attributes, 1, 1024)), {64, 16})});  // s8[64,16]
  const auto x4 = op(g, c, Opcode::BitcastConvert, to(DType::s8),
                     {reshape(g, c, g.add(make_input(c.attributes, 2, 1024)), {16, 16, 4})});
  const auto x = op(g, c, Opcode::BitcastConvert, to(DType::s32), {x4});  // s32[16,16]
  NodeAttributes dims;
  dims.dot.lhs_contracting = {1};
  dims.dot.rhs_contracting = {0};
  dims.dtype = DType::s32;
  const auto dot = op(g, c, Opcode::Dot, dims,
                      {op(g, c, Opcode::Convert, to(DType::s32), {ya}), op(g, c, Opcode::Convert, to(DType::s32), {yb})});
  const auto acc = op(g, c, Opcode::Add, {}, {dot, x});
  g.rebuild();
  REQUIRE(g.data(acc).type == Shape(DType::s32, {16, 16}));
  run_rule(g, set.rules[rule_index(set, "tdpbusd")]);

  // Both classes are bitcast s32 (reshape s8[16,16,4] (tdpbusd(In1, In2, In3))).
  const auto instance = [&](egraph::Id cls) {
    const auto r = through(g, c, cls, Opcode::BitcastConvert);
    CHECK(g.data(r).type == Shape(DType::s8, {16, 16, 4}));
    const auto pii = pii_of(g, c, through(g, c, r, Opcode::Reshape), "tdpbusd");
    REQUIRE(pii);
    REQUIRE(pii->first.size() == 3);
    return pii->first;
  };
  const auto with_acc = instance(acc);
  const auto from_zero = instance(dot);
  for (const auto& in : {with_acc, from_zero})
    for (auto k : in) CHECK(g.data(k).type == Shape(DType::s8, {1, 16, 64}));
  // the operands are shared: In1 = reshape[1,16,64](bitcast s8 (Ya))
  CHECK(with_acc[0] == from_zero[0]);
  CHECK(with_acc[1] == from_zero[1]);
  CHECK(through(g, c, through(g, c, with_acc[0], Opcode::Reshape), Opcode::BitcastConvert) == g.find(ya));
  // In2 = reshape[1,16,64](transpose{0,2,1}(reshape[16,4,16](Yb))): B's VNNI tile
  const auto b4 = through(g, c, with_acc[1], Opcode::Reshape);
  CHECK(g.data(b4).type == Shape(DType::s8, {16, 16, 4}));
  const auto bt = through(g, c, b4, Opcode::Transpose, {0, 2, 1});
  CHECK(g.data(bt).type == Shape(DType::s8, {16, 4, 16}));
  CHECK(through(g, c, bt, Opcode::Reshape) == g.find(yb));
  // In3 = reshape[1,16,64](x's s8[16,16,4] bytes): the existing bitcast is reused
  CHECK(through(g, c, with_acc[2], Opcode::Reshape) == g.find(x4));
  // from zero: In3 = broadcast(s8 constant 0), tilezero's semantics
  const auto zero = from_zero[2];
  const auto scalar = through(g, c, zero, Opcode::Broadcast);
  CHECK(g.data(scalar).type == Shape(DType::s8, {}));
  bool zero_constant = false;
  for (auto n : g.eclass(scalar).nodes) {
    const auto node = g.node(n);
    if (node.op.kind == NodeKind::Constant)
      zero_constant = c.constants[c.attributes_of(node.op).index].get_int(0) == 0;
  }
  CHECK(zero_constant);

  // tilezero's (unpeeled) rule matches that class
  run_rule(g, set.rules[rule_index(set, "tilezero")]);
  const auto tz = pii_of(g, c, zero, "tilezero");
  REQUIRE(tz);
  CHECK(tz->first.empty());
  CHECK(!pii_of(g, c, with_acc[2], "tilezero"));
}

TEST_CASE("IR->ISA rules: tilestored at stride 64 binds its old window to an undefined value") {
  SelectionContext c = amx_context();
  const IsaRuleSet set = isa_rules(c);
  const IsaRuleInfo& info = *set.infos[rule_index(set, "tilestored")];
  // Plain and peeled, each with the dynamic-update-slice skipped (the rows cover the window)
  // and as an Embed (they need not: a partial store, select/init/output_overlay.hpp).
  REQUIRE(info.variants.size() == 4);
  for (const auto& v : info.variants) {
    REQUIRE(v.bindings.size() == 2);
    CHECK(v.bindings[0].source == InputSource::Matched);
    CHECK(v.bindings[1].source == InputSource::Undefined);
  }
  CHECK(info.variants[1].pattern_text == "(bitcast-convert :to u8 ?In1')");
  CHECK(info.variants[3].pattern_text == "(embed :start {0,0} ?In1')");

  TensorGraph g{TensorAnalysis(&c)};
  const auto tile = kernel_tile(g, c, 0);                               // s8[16,64]
  const auto out = op(g, c, Opcode::BitcastConvert, to(DType::u8), {tile});  // u8[16,64]
  g.rebuild();
  run_rule(g, set.rules[rule_index(set, "tilestored")]);
  // out == reshape[16,64](tilestored{64}(reshape[1,16,64](tile), undefined u8[1024]))
  const auto stored = through(g, c, out, Opcode::Reshape);
  CHECK(g.data(stored).type == Shape(DType::u8, {1024}));
  const auto pii = pii_of(g, c, stored, "tilestored");
  REQUIRE(pii);
  CHECK(pii->second == std::vector<std::int64_t>{64});  // solved from the skipped update's shape
  REQUIRE(pii->first.size() == 2);
  CHECK(through(g, c, pii->first[0], Opcode::Reshape) == g.find(tile));
  const auto old = pii->first[1];
  CHECK(g.data(old).type == Shape(DType::u8, {1024}));
  REQUIRE(g.eclass(old).nodes.size() == 1);
  CHECK(g.node(g.eclass(old).nodes[0]).op.kind == NodeKind::Undefined);
  CHECK(!g.data(old).is_constant);
  // no HLO form for it (term_to_hlo reports, does not crash)
  CHECK_THROWS_AS(term_to_hlo(g, c, g.eclass(old).nodes[0]), Error);
}

TEST_CASE("IR->ISA rules: undoing a movement step reuses the node it inverts, else adds the inverse") {
  SelectionContext c = amx_context();
  TensorGraph g{TensorAnalysis(&c)};
  TensorBuilder b(g, c);
  const auto x = reshape(g, c, g.add(make_input(c.attributes, 0, 24)), {2, 3, 4});  // u8[2,3,4]
  NodeAttributes perm;
  perm.dimensions = {1, 2, 0};
  const auto t = op(g, c, Opcode::Transpose, perm, {x});  // u8[3,4,2]
  const auto y = op(g, c, Opcode::BitcastConvert, to(DType::s8), {x});
  g.rebuild();
  ChainStep transpose;
  transpose.opcode = Opcode::Transpose;
  transpose.permutation = {1, 2, 0};
  transpose.operand_dtype = DType::u8;
  const auto before = g.num_classes();
  CHECK(isa_rule_detail::undo_step(b, t, transpose, {2, 3, 4}, false) == g.find(x));
  ChainStep bitcast;
  bitcast.opcode = Opcode::BitcastConvert;
  bitcast.operand_dtype = DType::u8;
  CHECK(isa_rule_detail::undo_step(b, y, bitcast, {2, 3, 4}, false) == g.find(x));
  CHECK(g.num_classes() == before);  // nothing added
  // a u8[3,4,2] class without that transpose: the inverse permutation {2,0,1} is added
  const auto other = reshape(g, c, g.add(make_input(c.attributes, 1, 24)), {3, 4, 2});
  const auto back = isa_rule_detail::undo_step(b, other, transpose, {2, 3, 4}, false);
  g.rebuild();
  CHECK(g.data(g.find(back)).type == Shape(DType::u8, {2, 3, 4}));
  CHECK(through(g, c, back, Opcode::Transpose, {2, 0, 1}) == g.find(other));
}

TEST_CASE("IR->ISA rules: a peeled input reuses an existing reshape of the unit-typed class") {
  SelectionContext c = amx_context();
  TensorGraph g{TensorAnalysis(&c)};
  const auto unit = tile_from_rows(g, c, 0, 64);  // s8[1,16,64]
  const auto flat = reshape(g, c, unit, {16, 64});
  g.rebuild();
  const auto before = g.num_classes();
  TensorBuilder b(g, c);
  CHECK(b.reshaped_to(g.find(flat), {1, 16, 64}) == g.find(unit));
  CHECK(g.num_classes() == before);  // nothing added
  // no such reshape: a new one
  const auto made = b.reshaped_to(g.find(unit), {16, 16, 4});
  g.rebuild();
  CHECK(g.data(g.find(made)).type == Shape(DType::s8, {16, 16, 4}));
}

// ---- end to end: Backend<isa::Amx>, verified by the simulator ----------------------------------

namespace {
const std::string kAmxKernels = std::string(ACT_SOURCE_DIR) + "/examples/kernels/amx";
}

TEST_CASE("AMX: a strided tile copy compiles to tileloadd + tilestored and verifies") {
  auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/tile_left_half.hlo");
  ACT_REQUIRE_VERIFIED(r);
  REQUIRE(r.size() == 2);
  const auto& load = r.program().instructions[0];
  const auto& store = r.program().instructions[1];
  CHECK(load.name == "tileloadd");
  CHECK(load.attributes[0] == 128);  // stride: rows of 128 bytes, the first 64 kept
  CHECK(load.attributes[2] == 0);    // mem_addr: the input
  CHECK(store.name == "tilestored");
  CHECK(store.attributes[0] == 64);    // stride 64: the rows cover the window (don't-care In2)
  CHECK(store.attributes[2] == 2048);  // mem_addr: the output, after the 2048-byte input
}

TEST_CASE("AMX: a tile returned unchanged is copied by tileloadd + tilestored") {
  // the output class is the input's class: the extractor must not answer the root with the leaf
  auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/tile_copy.hlo");
  ACT_REQUIRE_VERIFIED(r);
  REQUIRE(r.size() == 2);
  CHECK(r.program().instructions[0].name == "tileloadd");
  CHECK(r.program().instructions[1].name == "tilestored");
  CHECK(r.program().instructions[1].attributes[2] == 1024);  // the output follows the input
}

TEST_CASE("AMX: one 16x64 x 64x16 int8 dot compiles to tilezero, two tileloadd, tdpbusd, tilestored") {
  auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/tile_dot.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() == 5);
  CHECK(r.count("tilezero") == 1);
  CHECK(r.count("tileloadd") == 2);
  CHECK(r.count("tdpbusd") == 1);
  CHECK(r.count("tilestored") == 1);
}

namespace {

// The attribute values of every instruction called `name`, in program order.
std::vector<std::vector<std::int64_t>> attributes_of(const sim::Program& p, std::string_view name) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& i : p.instructions)
    if (i.name == name) out.push_back(i.attributes);
  return out;
}

testing::CompileTestOptions generous() {
  testing::CompileTestOptions o;
  o.compile.timeout = std::chrono::duration<double>(60.0);  // a loaded machine must not fail the test
  return o;
}

// The first candidate only. For the AVX-512 kernels the deterministic enumeration finds nothing
// after it (the next extraction level of a 56-70 instruction graph does not end), so without
// the limit each compile would run to its timeout.
testing::CompileTestOptions first_candidate() {
  testing::CompileTestOptions o = generous();
  o.compile.max_candidates = 1;
  return o;
}

}  // namespace

TEST_CASE("AMX: the paper's K1 compiles to oneDNN's 16 instructions", "[amx][paper]") {
  auto r = testing::compile_and_verify<isa::Amx>(std::string(ACT_SHARED_DIR) + "/kernels/paper/k1_cnn_inf_amx.hlo", generous());
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() == 16);
  CHECK(r.count("tilezero") == 4);
  CHECK(r.count("tdpbusd") == 4);
  // A's two row blocks at 0x0000/0x0400, B's two VNNI tiles at 0x0800/0x0c00; the four output
  // tiles at 0x1000..0x1c00; every row stride 64
  std::vector<std::int64_t> loads, stores;
  for (const auto& a : attributes_of(r.program(), "tileloadd")) {
    CHECK(a[0] == 64);
    loads.push_back(a[2]);
  }
  for (const auto& a : attributes_of(r.program(), "tilestored")) {
    CHECK(a[0] == 64);
    stores.push_back(a[2]);
  }
  std::sort(loads.begin(), loads.end());
  std::sort(stores.begin(), stores.end());
  CHECK(loads == std::vector<std::int64_t>{0x0000, 0x0400, 0x0800, 0x0c00});
  CHECK(stores == std::vector<std::int64_t>{0x1000, 0x1400, 0x1800, 0x1c00});
}

TEST_CASE("AMX: the paper's K2 compiles to oneDNN's 9 instructions", "[amx][paper]") {
  auto r = testing::compile_and_verify<isa::Amx>(std::string(ACT_SHARED_DIR) + "/kernels/paper/k2_rnn_inf_amx.hlo", generous());
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() == 9);
  CHECK(r.count("tilezero") == 2);
  CHECK(r.count("tileloadd") == 3);
  CHECK(r.count("tdpbusd") == 2);
  CHECK(r.count("tilestored") == 2);
}

// ---- AVX-512 (issue 5): broadcasts, outer products, the paper's K3 and K4 --------------------

TEST_CASE("type inference: a size-1 operand dim may broadcast to any size (XLA broadcast-in-dim)") {
  SelectionContext c = amx_context();
  NodeAttributes a;
  a.shape = {3, 16};
  a.dimensions = {0, 1};
  const TensorOp bc = make_operator(c.attributes, Opcode::Broadcast, a);
  const Shape row(DType::f32, {1, 16});
  const Shape* one_row[] = {&row};
  CHECK(infer_type(c, bc, one_row).same_type(Shape(DType::f32, {3, 16})));
  const Shape two_rows(DType::f32, {2, 16});  // size 2 cannot become 3
  const Shape* bad[] = {&two_rows};
  CHECK_THROWS_AS(infer_type(c, bc, bad), Error);
  const Shape col(DType::f32, {3, 1});  // the minor dim repeated
  const Shape* one_col[] = {&col};
  CHECK(infer_type(c, bc, one_col).same_type(Shape(DType::f32, {3, 16})));
}

TEST_CASE("AVX-512: one zmm row is loaded and stored") {
  auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/zmm_copy.hlo");
  ACT_REQUIRE_VERIFIED(r);
  REQUIRE(r.size() == 2);
  CHECK(r.program().instructions[0].name == "vmovupsz");
  CHECK(r.program().instructions[1].name == "vmovupsz_store");
  CHECK(r.program().instructions[1].attributes[1] == 64);  // the output follows the 64-byte input
}

TEST_CASE("AVX-512: two rows multiplied: loads, one multiply, one store") {
  auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/zmm_mul.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() <= 4);  // the deterministic first candidate may load b instead of using vmulpsz
  CHECK(r.count("vmulpsz") + r.count("vmulps") == 1);
  CHECK(r.count("vmovupsz_store") == 1);
}

TEST_CASE("AVX-512: a row times a scalar uses a broadcast from memory") {
  auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/zmm_scale.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() == 3);
  CHECK(r.count("vbroadcastssl") == 1);
  CHECK(r.count("vmulpsz") + r.count("vmulps") == 1);
  CHECK(r.count("vmovupsz_store") == 1);
}

TEST_CASE("AVX-512: an outer product (dot over a size-1 dim) is broadcast-multiply-store per row") {
  auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/zmm_outer.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() == 6);  // per scalar: one broadcast, one multiply, one store
  CHECK(r.count("vbroadcastssl") == 2);
  CHECK(r.count("vmovupsz_store") == 2);
  for (const auto& a : attributes_of(r.program(), "vbroadcastssl")) CHECK((a[1] == 64 || a[1] == 68));
}

// K3/K4: out[i, j] = B[i, 0] * A[j] in 16-float tiles. The fewest instructions the ISA allows:
// one store and one multiply per output row of 16 (A's rows read as vmulpsz memory operands)
// and one broadcast per distinct B[i, 0]. oneDNN's listings: 100 and 107.
TEST_CASE("AVX-512: the paper's K3 compiles to 70 instructions (oneDNN: 100)", "[amx][paper]") {
  auto r = testing::compile_and_verify<isa::Amx>(std::string(ACT_SHARED_DIR) + "/kernels/paper/k3_mem_format_avx.hlo",
                                                 first_candidate());
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() == 70);
  CHECK(r.count("vbroadcastssl") == 14);   // B[0..13, 0]
  CHECK(r.count("vmovupsz_store") == 28);  // 14 rows x 2 tiles of 16
  CHECK(r.count("vmulpsz") + r.count("vmulps") + r.count("vfmadd231ps") == 28);
}

TEST_CASE("AVX-512: the paper's K4 compiles to 56 instructions (oneDNN: 107)", "[amx][paper]") {
  auto r = testing::compile_and_verify<isa::Amx>(std::string(ACT_SHARED_DIR) + "/kernels/paper/k4_sgemm_avx.hlo", first_candidate());
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() == 56);
  CHECK(r.count("vbroadcastssl") == 8);    // B[0..7, 0]
  CHECK(r.count("vmovupsz_store") == 24);  // 8 rows x 3 tiles of 16
  CHECK(r.count("vmulpsz") + r.count("vmulps") + r.count("vfmadd231ps") == 24);
}

// K3/K4 with other vector and slice lengths: the outer product of A f32[n] and column 0 of
// B f32[m, k], stored transposed in [m, 16] tiles; again m broadcasts and one multiply and one
// store per 16-float output row. f32[16,32]{T(16,16)} is written a 64-byte row at a time, which
// the default output byte split (128-byte pieces for 16 rows) does not reach: the group
// explorer retries with one level more (select/search/group_explorer.hpp).
TEST_CASE("AVX-512: K3/K4 shapes with other lengths compile to the fewest instructions", "[amx][paper]") {
  struct Variant {
    const char* file;
    std::size_t rows, length;
  };
  for (const Variant v : {Variant{"avx_outer_a16_b4x4", 4, 16}, Variant{"avx_outer_a64_b6x2", 6, 64},
                          Variant{"avx_outer_a80_b3x8", 3, 80}, Variant{"avx_outer_a32_b16x4", 16, 32}}) {
    INFO(v.file);
    auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/" + v.file + ".hlo", first_candidate());
    ACT_REQUIRE_VERIFIED(r);
    const std::size_t tiles = v.rows * v.length / 16;
    CHECK(r.count("vbroadcastssl") == v.rows);
    CHECK(r.count("vmovupsz_store") == tiles);
    CHECK(r.count("vmulpsz") + r.count("vmulps") + r.count("vfmadd231ps") == tiles);
    CHECK(r.size() == v.rows + 2 * tiles);
  }
}

// Where the split axioms cut, read off the AMX description (select/rules/split_sizes.hpp).
TEST_CASE("split sizes come from the ISA's semantics: rows a vector instruction computes, tiles' dims", "[amx]") {
  using select::SplitRole;
  const select::SplitSizes sizes(isa::view<isa::Amx>());
  // vmulps computes f32[1,16]: a product's rows halve towards 1, one row stays whole, and an
  // odd row count is not peeled (rows only halve).
  CHECK(sizes.sizes(SplitRole::Rows, DType::f32, hlo::Opcode::Multiply, 2) == std::vector<std::int64_t>{1});
  CHECK(sizes.split_point(SplitRole::Rows, DType::f32, 16, hlo::Opcode::Multiply, 2) == 8);
  CHECK_FALSE(sizes.split_point(SplitRole::Rows, DType::f32, 1, hlo::Opcode::Multiply, 2).has_value());
  CHECK_FALSE(sizes.split_point(SplitRole::Rows, DType::f32, 3, hlo::Opcode::Multiply, 2).has_value());
  // tdpbusd's tiles: 16 rows of s32 results; 48 rows are cut into 16 + 32, 64 into halves.
  CHECK_FALSE(sizes.split_point(SplitRole::DotLhsFree, DType::s32, 16).has_value());
  CHECK(sizes.split_point(SplitRole::DotLhsFree, DType::s32, 64) == 32);
  const auto cut48 = sizes.split_point(SplitRole::DotLhsFree, DType::s32, 48);
  REQUIRE(cut48.has_value());
  CHECK((*cut48 == 16 || *cut48 == 32));
  // A column (f32[8,1]) is narrower than every f32 maximum AVX-512 computes (16 lanes): its
  // pieces are computed by no instruction, so split-<op> leaves it whole; a row of 16 is not.
  CHECK(sizes.narrower_than_computed(hlo::Opcode::Maximum, DType::f32, 1));
  CHECK(sizes.narrower_than_computed(hlo::Opcode::Maximum, DType::f32, 8));
  CHECK_FALSE(sizes.narrower_than_computed(hlo::Opcode::Maximum, DType::f32, 16));
  CHECK_FALSE(sizes.narrower_than_computed(hlo::Opcode::Power, DType::f32, 1));  // no instruction: no claim
  // AVX-512 has no clamp: one is computed by a maximum and a minimum, so it is as narrow as they are.
  CHECK_FALSE(sizes.narrower_than_computed(hlo::Opcode::Clamp, DType::f32, 8));
  CHECK(sizes.clamp_narrower_than_computed(DType::f32, 8));
  CHECK_FALSE(sizes.clamp_narrower_than_computed(DType::f32, 16));
  CHECK_FALSE(select::SplitSizes().clamp_narrower_than_computed(DType::f32, 1));
  // Without an ISA (the axioms' soundness tests) every even extent is halved.
  CHECK_FALSE(select::SplitSizes().narrower_than_computed(hlo::Opcode::Maximum, DType::f32, 1));
  CHECK(select::SplitSizes().split_point(SplitRole::Rows, DType::f32, 6, hlo::Opcode::Multiply) == 3);
  CHECK_FALSE(select::SplitSizes().split_point(SplitRole::Rows, DType::f32, 7, hlo::Opcode::Multiply).has_value());
}

// Facts read off a description are kept once per process (isa/derived_facts.hpp), and a
// description built at run time where another was is told apart by its text.
TEST_CASE("a per-ISA cache computes once per description and tells two at one address apart", "[amx]") {
  std::array<isa::Instruction, 1> instructions{};
  instructions[0].name = "first";
  instructions[0].semantics = "ENTRY e { ROOT p = s8[1] parameter(0) }";
  isa::IsaView view;
  view.instructions = instructions;
  isa::PerIsaCache<std::string> cache;
  int computed = 0;
  const auto first_name = [&computed](const isa::IsaView& d) {
    ++computed;
    return std::string(d.instructions[0].name);
  };
  CHECK(*cache.get(view, first_name) == "first");
  CHECK(*cache.get(view, first_name) == "first");
  CHECK(computed == 1);
  instructions[0].name = "second";  // the same array at the same address, other text
  CHECK(*cache.get(view, first_name) == "second");
  CHECK(computed == 2);
  // The split sizes of a built-in description are read once and shared.
  CHECK(select::split_sizes_of(isa::view<isa::Amx>()) == select::split_sizes_of(isa::view<isa::Amx>()));
}

// Module 1 tells which transposed computed values meet, pushed inward, row pieces narrower than
// every instruction computing their operator: the group explorer offers those values' elements
// as bytes in the first lane-blend attempt (group_explorer.hpp).
TEST_CASE("module 1: transposes of values joined from narrow row pieces are told apart", "[amx]") {
  const auto narrow = [](const std::string& body) {
    const auto kernel = hlo::parse_module("HloModule m\n\nENTRY %main (p0: f32[16,16]) -> f32[16,16] {\n"
                                          "  %p0 = f32[16,16] parameter(0)\n"
                                          "  %a = f32[8,16] slice(%p0), slice={[0:8], [0:16]}\n"
                                          "  %b = f32[8,16] slice(%p0), slice={[8:16], [0:16]}\n" + body +
                                          "  ROOT %t = f32[16,16] transpose(%v), dimensions={1,0}\n}\n");
    SelectionContext c = amx_context();
    TensorGraph g{TensorAnalysis(&c)};
    const InitialGraph init = add_kernel(g, c, kernel);
    REQUIRE(init.computed_transposed == 1);
    return init.transposed_in_narrow_pieces;
  };
  // Halves of 8 rows become columns of 8 lanes; AVX-512 divides rows of 16.
  CHECK(narrow("  %d = f32[8,16] divide(%a, %b)\n  %v = f32[16,16] concatenate(%d, %d), dimensions={0}\n") == 1);
  // Through a full-width operator above the concatenate, and through a clamp (no instruction of its own).
  CHECK(narrow("  %d = f32[8,16] add(%a, %a)\n  %j = f32[16,16] concatenate(%d, %b), dimensions={0}\n"
               "  %lo = f32[] constant(-0.5)\n  %hi = f32[] constant(0.5)\n"
               "  %v = f32[16,16] clamp(%lo, %j, %hi)\n") == 1);
  // A clamp on a half (rows of 8, lanes of 8 once transposed) under a full-width sum: AVX-512
  // computes the clamp by a maximum and a minimum of 16 lanes (seed 9001 soak kernel 9).
  CHECK(narrow("  %lo = f32[] constant(-0.5)\n  %hi = f32[] constant(0.5)\n  %c = f32[8,16] clamp(%lo, %b, %hi)\n"
               "  %j = f32[16,16] concatenate(%b, %c), dimensions={0}\n"
               "  %s = f32[16,16] multiply(%p0, %p0)\n  %v = f32[16,16] add(%s, %j)\n") == 1);
  // Computed halves joined by rows: transposed, 8-lane pieces joined along lanes, which no
  // blend does (seed 31337 soak kernel 188), even with no narrow operator under the transpose.
  CHECK(narrow("  %q = f32[16,16] add(%p0, %p0)\n  %w = f32[8,16] slice(%q), slice={[8:16], [0:16]}\n"
               "  %j = f32[16,16] concatenate(%w, %w), dimensions={0}\n  %v = f32[16,16] divide(%j, %j)\n") == 1);
  // Halves that are slices of a value computed whole: the transpose moves onto that value.
  CHECK(narrow("  %q = f32[16,16] divide(%p0, %p0)\n  %u = f32[8,16] slice(%q), slice={[0:8], [0:16]}\n"
               "  %w = f32[8,16] slice(%q), slice={[8:16], [0:16]}\n"
               "  %j = f32[16,16] concatenate(%u, %w), dimensions={0}\n  %v = f32[16,16] maximum(%j, %p0)\n") == 0);
  // Halves that are the input's own pieces: the blends broadcast the input's elements.
  CHECK(narrow("  %j = f32[16,16] concatenate(%a, %b), dimensions={0}\n  %v = f32[16,16] maximum(%j, %p0)\n") == 0);
  // A value computed whole, and halves joined along columns (their rows stay 16 lanes wide).
  CHECK(narrow("  %v = f32[16,16] divide(%p0, %p0)\n") == 0);
  CHECK(narrow("  %c = f32[16,8] slice(%p0), slice={[0:16], [0:8]}\n  %d = f32[16,8] divide(%c, %c)\n"
               "  %v = f32[16,16] concatenate(%d, %d), dimensions={1}\n") == 0);
}

// The identity axioms (x -> dot(x, I), transpose / reverse / negate as dots) introduce an n x n
// constant only where an ISA dot contracts n whole (issue 14: a QKV bf16[2048,64] dot once built
// a 2048 x 2048 identity).
TEST_CASE("introduced identities stop at the largest contracting extent of the ISA's dots") {
  const select::SplitSizes qkv(isa::find_view("qkv"));
  CHECK(qkv.contracting_fits(DType::bf16, 64));
  CHECK_FALSE(qkv.contracting_fits(DType::bf16, 128));
  CHECK_FALSE(qkv.contracting_fits(DType::bf16, 2048));
  CHECK(select::SplitSizes().contracting_fits(DType::f32, 4096));  // no ISA: any size
}

// The shipped int8 GEMM family u8[M,64] x s8[N,64]{T(16,4)} -> s32[M,N]{T(16,16)}: one
// tilezero + tdpbusd + tilestored per 16x16 output tile and each A and B row block loaded once.
// M = 48 needs three 16-row tiles: the split axioms cut at the sizes the ISA's tiles take
// (select/rules/split_sizes.hpp), not at halves, which never reach 16 + 16 + 16.
TEST_CASE("AMX: the int8 GEMM family compiles to one tdpbusd per output tile, M = 48 included", "[amx]") {
  struct Gemm {
    const char* file;
    int m, n;
  };
  for (const Gemm g : {Gemm{"int8_gemm_m16_n32", 16, 32}, Gemm{"int8_gemm_m16_n64", 16, 64}, Gemm{"int8_gemm_m32_n32", 32, 32},
                       Gemm{"int8_gemm_m32_n64", 32, 64}, Gemm{"int8_gemm_m48_n32", 48, 32}, Gemm{"int8_gemm_m48_n64", 48, 64},
                       Gemm{"int8_gemm_m64_n32", 64, 32}, Gemm{"int8_gemm_m64_n64", 64, 64}}) {
      const std::string file = g.file;
      const int m = g.m, n = g.n;
      INFO(file);
      auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/" + file + ".hlo", first_candidate());
      ACT_REQUIRE_VERIFIED(r);
      const std::size_t tiles = static_cast<std::size_t>((m / 16) * (n / 16));
      CHECK(r.count("tdpbusd") == tiles);
      CHECK(r.count("tilezero") == tiles);
      CHECK(r.count("tilestored") == tiles);
      CHECK(r.count("tileloadd") == static_cast<std::size_t>(m / 16 + n / 16));
    }
}

// A row-major result wider than a tile row: tilestored at stride 128 writes one 16x16 s32 tile
// into every other 64 bytes of a 16 x 128-byte window and keeps the rest. Module 1 offers the
// result as an overlay^H of two such windows, 64 bytes apart (select/init/output_overlay.hpp);
// phase 2 lets the windows overlap, since their written bytes do not (alloc/values.hpp).
TEST_CASE("AMX: a row-major s32[16,32] result is two tilestored at stride 128 into overlapping windows", "[amx][overlay]") {
  auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/int8_gemm_m16_n32_rowmajor.hlo", first_candidate());
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() == 9);  // K2's 9: 3 loads, 2 tilezero, 2 tdpbusd, 2 stores
  CHECK(r.count("tdpbusd") == 2);
  REQUIRE(r.count("tilestored") == 2);
  std::vector<std::int64_t> offsets;
  const std::int64_t output = r.image().outputs.at(0).address;
  for (const auto& ci : r.program().instructions)
    if (ci.name == "tilestored") {
      CHECK(ci.attributes.at(0) == 128);  // stride: the result's row, in bytes
      offsets.push_back(ci.attributes.at(2) - output);
    }
  std::sort(offsets.begin(), offsets.end());
  CHECK(offsets == std::vector<std::int64_t>{0, 64});
}

// ---- K5 (issue 5): each half alone, and the whole kernel (its halves explored as output groups) ----

TEST_CASE("AVX-512: K5's AVX half converts clamped floats to u8 with vcvttps2dq + vpmovusdbx", "[amx][paper]") {
  for (const auto& [file, rows] : {std::pair{"k5_avx_rows2", 2}, std::pair{"k5_avx_rows3", 3}, std::pair{"k5_avx_rows4", 4}}) {
    INFO(file);
    auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/" + file + ".hlo", first_candidate());
    ACT_REQUIRE_VERIFIED(r);
    CHECK(r.count("vcvttps2dq") == static_cast<std::size_t>(rows));
    CHECK(r.count("vpmovusdbx") == static_cast<std::size_t>(rows));  // one 16-byte store per row
    CHECK(r.size() <= static_cast<std::size_t>(8 * rows + 2));       // rows = 3: 26 (oneDNN's half: 37)
  }
}

TEST_CASE("AMX: K5's AMX half compiles to K1's 16 instructions", "[amx][paper]") {
  auto r = testing::compile_and_verify<isa::Amx>(kAmxKernels + "/k5_amx_half.hlo", first_candidate());
  ACT_REQUIRE_VERIFIED(r);
  CHECK(r.size() == 16);
  CHECK(r.count("tdpbusd") == 4);
}

// The whole K5: its two outputs share no computation, so phase 1 explores them in e-graphs of
// their own (select/search/group_explorer.hpp). In one e-graph the AMX half's growth banned rules the
// AVX half needs and no program was found within the node limit.
TEST_CASE("AMX + AVX-512: the paper's K5 compiles to 16 AMX + at most 37 AVX-512 instructions", "[amx][paper]") {
  auto r = testing::compile_and_verify<isa::Amx>(std::string(ACT_SHARED_DIR) + "/kernels/paper/k5_cnn_inf_mix.hlo", first_candidate());
  ACT_REQUIRE_VERIFIED(r);
  const std::size_t amx = r.count("tilezero") + r.count("tileloadd") + r.count("tdpbusd") + r.count("tilestored");
  CHECK(amx == 16);
  CHECK(r.count("tdpbusd") == 4);
  CHECK(r.size() - amx <= 37);  // oneDNN's AVX-512 half
  CHECK(r.count("vcvttps2dq") == 3);
  CHECK(r.count("vpmovusdbx") == 3);
}
