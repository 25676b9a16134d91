// IR->ISA rules for identities at a concrete alpha (isa_rules.hpp, Rewrite::or_search) and the
// flat slice-of-reshape axiom, on the AMX ISA: the groundwork for compiling K1/K2 (issue 5).
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "act/isa/amx.hpp"
#include "act/isa/registry.hpp"
#include "act/select/axioms.hpp"
#include "act/select/isa_rules.hpp"
#include "act/select/tensor_graph.hpp"

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

TEST_CASE("IR->ISA rules: a possibly-identity slice gives the rule a second searcher") {
  SelectionContext c = amx_context();
  const IsaRuleSet set = isa_rules(c);
  const auto i = rule_index(set, "tileloadd");
  const IsaRuleInfo& info = *set.infos[i];
  // two identity choices x (root reshape kept, root reshape peeled)
  CHECK(set.rules[i].num_searchers() == 4);
  REQUIRE(info.variants.size() == 4);
  CHECK(info.variants[0].pattern_text == "(reshape (bitcast-convert :to s8 (slice (reshape ?In1))))");
  CHECK(info.variants[1].pattern_text == "(reshape (bitcast-convert :to s8 (reshape ?In1)))");
  CHECK(info.variants[1].skipped == std::vector<std::string>{"tile"});
  CHECK(!info.variants[1].peeled());
  CHECK(info.variants[2].pattern_text == "(bitcast-convert :to s8 (slice (reshape ?In1)))");
  CHECK(info.variants[2].root_peeled);
  CHECK(info.variants[3].pattern_text == "(bitcast-convert :to s8 (reshape ?In1))");
  CHECK(info.variants[3].skipped == std::vector<std::string>{"tile", "Out0"});
  // the memory input (symbolic u8[16 * stride]) is never peeled
  CHECK(info.variants[3].input_reshape == std::vector<std::optional<std::vector<std::int64_t>>>{std::nullopt});
  // instructions without symbolic shapes: the semantics as written, and the peeled copy
  CHECK(set.rules[rule_index(set, "tdpbusd")].num_searchers() == 2);
  // one rule per instruction still: tilestored is the only AMX instruction without one, because
  // skipping its (always identity-only) dynamic-update-slice leaves the old window In2 unused
  CHECK(set.rules.size() + 1 == c.isa.instructions.size());
  REQUIRE(set.skipped.size() == 1);
  CHECK(set.skipped[0] == "tilestored: In2 does not occur in the semantics once new (an identity) is skipped");
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
  // the s8[1,16,64] classes through searchers 0 and 1; the s8[16,64] classes below them
  // through their peeled copies 2 and 3
  REQUIRE(matches.size() == 4);
  CHECK(matches.searcher(0) == 0);  // the primary searcher runs first
  CHECK(matches.searcher(1) == 1);
  CHECK(matches.searcher(2) == 2);
  CHECK(matches.searcher(3) == 3);
  CHECK(rule.apply(g, matches) == 4);
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

TEST_CASE("IR->ISA rules: a peeled searcher matches tileloadd on a kernel's s8[16,64] class") {
  SelectionContext c = amx_context();
  const IsaRuleSet set = isa_rules(c);
  TensorGraph g{TensorAnalysis(&c)};
  const auto tile = kernel_tile(g, c, 0);
  g.rebuild();
  REQUIRE(g.data(tile).type == Shape(DType::s8, {16, 64}));
  run_rule(g, set.rules[rule_index(set, "tileloadd")]);
  // the tile class is now reshape(Pii tileloadd{64}(input)), the Pii at the unit type s8[1,16,64]
  const auto units = reshapes_of(g, tile, Shape(DType::s8, {1, 16, 64}));
  REQUIRE(units.size() == 1);
  using P = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;
  CHECK(pii_nodes(g, c, units[0]) == P{{"tileloadd", {64}}});
  CHECK(pii_nodes(g, c, tile).empty());
}

TEST_CASE("IR->ISA rules: tdpbusd's peeled searcher matches a hand-built accumulate") {
  SelectionContext c = amx_context();
  const IsaRuleSet set = isa_rules(c);
  const auto& info = *set.infos[rule_index(set, "tdpbusd")];
  REQUIRE(info.variants.size() == 2);
  const IsaPatternVariant& peeled = info.variants[1];
  CHECK(peeled.root_peeled);
  using Dims = std::optional<std::vector<std::int64_t>>;
  CHECK(peeled.input_reshape ==
        std::vector<Dims>{std::vector<std::int64_t>{1, 16, 64}, std::vector<std::int64_t>{1, 16, 64},
                          std::vector<std::int64_t>{1, 16, 64}});

  // s8[16,16,4] bitcast(add(dot(convert(bitcast u8 A), convert(reshape(transpose(B4)))), bitcast C4))
  // with A = s8[16,64] (a loaded tile), B4 = C4 = s8[16,16,4]: no unit shape anywhere.
  TensorGraph g{TensorAnalysis(&c)};
  const auto a8 = kernel_tile(g, c, 0);
  const auto b4 = reshape(g, c, kernel_tile(g, c, 1), {16, 16, 4});
  const auto c4 = reshape(g, c, kernel_tile(g, c, 2), {16, 16, 4});
  const auto op = [&](Opcode code, NodeAttributes a, std::vector<egraph::Id> xs) {
    return g.add(make_operator(c.attributes, code, a), std::move(xs));
  };
  NodeAttributes to_u8, to_s32, to_s8;
  to_u8.dtype = DType::u8;
  to_s32.dtype = DType::s32;
  to_s8.dtype = DType::s8;
  const auto a = op(Opcode::Convert, to_s32, {op(Opcode::BitcastConvert, to_u8, {a8})});
  NodeAttributes perm;
  perm.dimensions = {0, 2, 1};
  const auto b = op(Opcode::Convert, to_s32, {reshape(g, c, op(Opcode::Transpose, perm, {b4}), {64, 16})});
  NodeAttributes dot;
  dot.dot.lhs_contracting = {1};
  dot.dot.rhs_contracting = {0};
  dot.dtype = DType::s32;
  const auto ab = op(Opcode::Dot, dot, {a, b});
  const auto sum = op(Opcode::Add, {}, {ab, op(Opcode::BitcastConvert, to_s32, {c4})});
  const auto out = op(Opcode::BitcastConvert, to_s8, {sum});
  g.rebuild();
  REQUIRE(g.data(out).type == Shape(DType::s8, {16, 16, 4}));

  run_rule(g, set.rules[rule_index(set, "tdpbusd")]);
  const auto units = reshapes_of(g, out, Shape(DType::s8, {1, 16, 64}));
  REQUIRE(units.size() == 1);
  std::optional<std::decay_t<decltype(g.eclass(units[0]).nodes[0])>> pii;
  for (auto n : g.eclass(units[0]).nodes)
    if (g.node(n).op.kind == NodeKind::Pii) pii = n;
  REQUIRE(pii);
  CHECK(c.isa.instructions[static_cast<std::size_t>(c.attributes_of(g.node(*pii).op).index)].name == "tdpbusd");
  // each operand is presented at the unit type as reshape(the matched class)
  const auto children = g.node(*pii).children;
  REQUIRE(children.size() == 3);
  const egraph::Id matched[] = {a8, b4, c4};
  for (std::size_t k = 0; k < 3; ++k) {
    INFO("In" << k + 1);
    CHECK(g.data(g.find(children[k])).type == Shape(DType::s8, {1, 16, 64}));
    CHECK(reshapes_of(g, children[k], g.data(g.find(matched[k])).type) ==
          std::vector<egraph::Id>{g.find(matched[k])});
  }
}

TEST_CASE("IR->ISA rules: a peeled input reuses an existing reshape of the unit-typed class") {
  SelectionContext c = amx_context();
  TensorGraph g{TensorAnalysis(&c)};
  const auto unit = tile_from_rows(g, c, 0, 64);  // s8[1,16,64]
  const auto flat = reshape(g, c, unit, {16, 64});
  g.rebuild();
  const auto before = g.num_classes();
  CHECK(isa_rule_detail::Generator::reshaped_to(g, c, g.find(flat), {1, 16, 64}) == g.find(unit));
  CHECK(g.num_classes() == before);  // nothing added
  // no such reshape: a new one
  const auto made = isa_rule_detail::Generator::reshaped_to(g, c, g.find(unit), {16, 16, 4});
  g.rebuild();
  CHECK(g.data(g.find(made)).type == Shape(DType::s8, {16, 16, 4}));
}
