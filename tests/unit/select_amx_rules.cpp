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

// (instruction, alpha) of the pii nodes in a class.
std::vector<std::pair<std::string, std::vector<std::int64_t>>> piis(const TensorGraph& g, const SelectionContext& c,
                                                                    egraph::Id cls) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
  for (auto n : g.eclass(g.find(cls)).nodes) {
    const auto node = g.node(n);
    if (node.op.kind != NodeKind::Pii) continue;
    const auto& a = c.attributes_of(node.op);
    out.emplace_back(std::string(c.isa.instructions[static_cast<std::size_t>(a.index)].name), a.alpha);
  }
  return out;
}

}  // namespace

TEST_CASE("IR->ISA rules: a possibly-identity slice gives the rule a second searcher") {
  SelectionContext c = amx_context();
  const IsaRuleSet set = isa_rules(c);
  const auto i = rule_index(set, "tileloadd");
  const IsaRuleInfo& info = *set.infos[i];
  CHECK(set.rules[i].num_searchers() == 2);
  REQUIRE(info.variants.size() == 2);
  CHECK(info.variants[0].pattern_text == "(reshape (bitcast-convert :to s8 (slice (reshape ?In1))))");
  CHECK(info.variants[1].pattern_text == "(reshape (bitcast-convert :to s8 (reshape ?In1)))");
  CHECK(info.variants[1].skipped == std::vector<std::string>{"tile"});
  // instructions without symbolic shapes keep one searcher
  CHECK(set.rules[rule_index(set, "tdpbusd")].num_searchers() == 1);
  CHECK(set.rules[rule_index(set, "vmovupsz")].num_searchers() == 1);
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
  REQUIRE(matches.size() == 2);
  CHECK(matches.searcher(0) == 0);  // the primary searcher runs first
  CHECK(matches.searcher(1) == 1);
  CHECK(rule.apply(g, matches) == 2);
  g.rebuild();
  using P = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;
  CHECK(piis(g, c, dense) == P{{"tileloadd", {64}}});
  CHECK(piis(g, c, strided) == P{{"tileloadd", {128}}});
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
