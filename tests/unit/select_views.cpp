// Views (select/ir/views.hpp, rules/view_rules.hpp, rules/movement_rules.hpp): byte views of movement chains, their canonical
// chains, the view rule uniting equal views, movement instructions matched through views; and
// end to end, the paper's K1 and K2 on AMX compiled to oneDNN's instruction mix and verified.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "act/codegen/backend.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/amx.hpp"
#include "act/isa/gemmini_hw.hpp"
#include "act/isa/qkv.hpp"
#include "act/select/init/kernel_graph.hpp"
#include "act/select/ir/views.hpp"
#include "act/select/rules/movement_rules.hpp"
#include "act/select/rules/view_rules.hpp"
#include "act/testing/catch2.hpp"
#include "act/testing/files.hpp"

using namespace act;
using namespace act::select;

namespace {

const std::string kShared = ACT_SHARED_DIR;

TensorOp op(SelectionContext& c, hlo::Opcode code, NodeAttributes a) { return make_operator(c.attributes, code, a); }

NodeAttributes reshape_to(std::vector<std::int64_t> dims) {
  NodeAttributes a;
  a.shape = std::move(dims);
  return a;
}
NodeAttributes transpose_by(std::vector<std::int64_t> perm) {
  NodeAttributes a;
  a.dimensions = std::move(perm);
  return a;
}
NodeAttributes bitcast_to(DType t) {
  NodeAttributes a;
  a.dtype = t;
  return a;
}
NodeAttributes slice_of(std::vector<hlo::SliceRange> r) {
  NodeAttributes a;
  a.slice = std::move(r);
  return a;
}

// Element-wise reference of a movement op on explicit offsets, written independently of
// apply_movement: transpose of a [2,3] view.
std::vector<std::int64_t> transpose_2x3(const std::vector<std::int64_t>& in) {
  std::vector<std::int64_t> out;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i) out.push_back(in[static_cast<std::size_t>(i * 3 + j)]);
  return out;
}

std::map<std::string, int> counts(const sim::Program& p) {
  std::map<std::string, int> out;
  for (const auto& ci : p.instructions) ++out[ci.name];
  return out;
}

}  // namespace

TEST_CASE("views: movement operators move byte offsets") {
  SelectionContext c;
  const ByteView base = identity_view(Shape(DType::s32, {2, 3}));
  CHECK(base.offsets() == std::vector<std::int64_t>{0, 4, 8, 12, 16, 20});
  const auto t = apply_movement(c, op(c, hlo::Opcode::Transpose, transpose_by({1, 0})), Shape(DType::s32, {3, 2}), base);
  REQUIRE(t);
  CHECK(t->offsets() == transpose_2x3(base.offsets()));
  const auto s = apply_movement(c, op(c, hlo::Opcode::Slice, slice_of({{1, 2, 1}, {0, 3, 2}})), Shape(DType::s32, {1, 2}), base);
  REQUIRE(s);
  CHECK(s->offsets() == std::vector<std::int64_t>{12, 20});
  // s32 -> u8[...,4]: every byte; u8[...,4] -> s32 only when the 4 bytes are adjacent.
  const auto bytes = apply_movement(c, op(c, hlo::Opcode::BitcastConvert, bitcast_to(DType::u8)), Shape(DType::u8, {2, 3, 4}), base);
  REQUIRE(bytes);
  CHECK(bytes->offsets().size() == 24);
  CHECK(bytes->offsets()[5] == 5);
  const auto back = apply_movement(c, op(c, hlo::Opcode::BitcastConvert, bitcast_to(DType::s32)), Shape(DType::s32, {2, 3}), *bytes);
  REQUIRE(back);
  CHECK(back->offsets() == base.offsets());
  const auto shuffled = apply_movement(c, op(c, hlo::Opcode::Transpose, transpose_by({2, 0, 1})), Shape(DType::u8, {4, 2, 3}), *bytes);
  REQUIRE(shuffled);
  CHECK_FALSE(apply_movement(c, op(c, hlo::Opcode::BitcastConvert, bitcast_to(DType::s32)), Shape(DType::s32, {4, 2}),
                             ByteView{Shape(DType::u8, {4, 2, 3}), shuffled->offsets(), std::nullopt}));
}

TEST_CASE("views: the canonical chain of a tiled read is a box, then a digit transposition") {
  // K1's B: s8[32,64]{T(16,4)} in 2048 bytes; the tdpbusd operand for output columns 16..31 is
  // the second 1 KiB tile group, read as [k-group, n, 4] -> [k, n].
  const Shape bytes(DType::u8, {2048});
  ByteView b{Shape(DType::s8, {64, 16}), {}};
  for (std::int64_t k = 0; k < 64; ++k)
    for (std::int64_t n = 0; n < 16; ++n) b.offset.push_back(1024 + (k / 4) * 64 + n * 4 + k % 4);
  const auto chain = canonical_chain(bytes, b);
  REQUIRE(chain);
  REQUIRE(chain->box.size() == 1);
  CHECK(chain->box[0].start == 1024);
  CHECK(chain->box[0].limit == 2048);
  CHECK(chain->source_radices == std::vector<std::int64_t>{16, 16, 4});
  CHECK(chain->permutation == std::vector<std::int64_t>{0, 2, 1});
  CHECK(chain->final_dims == std::vector<std::int64_t>{64, 16});
  REQUIRE(chain->widen_or_cast_to);
  CHECK(*chain->widen_or_cast_to == DType::s8);
  // A view reading one byte twice, or a strided (non-box) one, has no canonical chain.
  ByteView twice{Shape(DType::u8, {2}), {0, 0}};
  CHECK_FALSE(canonical_chain(bytes, twice));
  ByteView strided{Shape(DType::u8, {2}), {0, 2}};
  CHECK_FALSE(canonical_chain(bytes, strided));
}

TEST_CASE("views: two different chains over one base become one e-class") {
  SelectionContext c;
  c.isa = isa::view<isa::Qkv>();
  TensorGraph g{TensorAnalysis(&c)};
  const auto x = g.add(make_input(c.attributes, 0, 24), {});
  // reshape [2,3,4] -> transpose {1,0,2} -> reshape [24]   versus
  // reshape [2,12] -> reshape [2,3,4] -> transpose {1,0,2} -> reshape [3,8] -> reshape [24]
  const auto a1 = g.add(op(c, hlo::Opcode::Reshape, reshape_to({2, 3, 4})), {x});
  const auto a2 = g.add(op(c, hlo::Opcode::Transpose, transpose_by({1, 0, 2})), {a1});
  const auto a3 = g.add(op(c, hlo::Opcode::Reshape, reshape_to({24})), {a2});
  const auto b1 = g.add(op(c, hlo::Opcode::Reshape, reshape_to({2, 12})), {x});
  const auto b2 = g.add(op(c, hlo::Opcode::Reshape, reshape_to({2, 3, 4})), {b1});
  const auto b3 = g.add(op(c, hlo::Opcode::Transpose, transpose_by({1, 0, 2})), {b2});
  const auto b4 = g.add(op(c, hlo::Opcode::Reshape, reshape_to({3, 8})), {b3});
  const auto b5 = g.add(op(c, hlo::Opcode::Reshape, reshape_to({24})), {b4});
  // and a different permutation that must stay apart
  const auto c2 = g.add(op(c, hlo::Opcode::Transpose, transpose_by({0, 2, 1})), {a1});
  const auto c3 = g.add(op(c, hlo::Opcode::Reshape, reshape_to({24})), {c2});
  g.rebuild();
  REQUIRE(g.find(a3) != g.find(b5));
  std::vector<TensorRewrite> rules;
  rules.push_back(view_canonical_rule(c));
  egraph::Runner<TensorLanguage, TensorAnalysis> runner;
  runner.run(g, rules);
  CHECK(g.find(a3) == g.find(b5));
  CHECK(g.find(a3) != g.find(c3));
}

TEST_CASE("views: the class-view walk stops where its sink says, after the same views class_views lists") {
  SelectionContext c;
  c.isa = isa::view<isa::Qkv>();
  TensorGraph g{TensorAnalysis(&c)};
  const auto x = g.add(make_input(c.attributes, 0, 24), {});
  const auto y = g.add(make_input(c.attributes, 1, 24), {});
  const auto rx = g.add(op(c, hlo::Opcode::Reshape, reshape_to({4, 6})), {x});
  const auto ry = g.add(op(c, hlo::Opcode::Reshape, reshape_to({4, 6})), {y});
  g.unite(rx, ry);  // one class read two ways
  g.rebuild();
  const auto t = g.add(op(c, hlo::Opcode::Transpose, transpose_by({1, 0})), {rx});
  g.rebuild();
  const auto all = class_views(g, c, t, 6, 3);
  // Through rx's two reshapes to x and y, then rx itself; the limit of 3 leaves t's own view out.
  REQUIRE(all.size() == 3);
  CHECK(all[0].base == g.find(x));
  CHECK(all[1].base == g.find(y));
  CHECK(all[2].base == g.find(rx));
  for (std::size_t stop = 1; stop <= all.size(); ++stop) {
    std::vector<ClassView> seen;
    std::vector<egraph::Id> path;
    auto sink = [&](ClassView&& v) {
      seen.push_back(std::move(v));
      return seen.size() < stop;
    };
    const bool finished = for_each_class_view(g, c, t, 6, 3, path, sink);
    CHECK(path.empty());
    CHECK_FALSE(finished);  // the sink said stop
    REQUIRE(seen.size() == stop);
    for (std::size_t i = 0; i < stop; ++i) {
      CHECK(seen[i].base == all[i].base);
      CHECK(seen[i].view == all[i].view);
    }
  }
  std::vector<egraph::Id> path;
  std::size_t count = 0;
  auto keep_going = [&](ClassView&&) {
    ++count;
    return true;
  };
  CHECK(for_each_class_view(g, c, t, 6, 3, path, keep_going));
  CHECK(count == all.size());
}

TEST_CASE("view rule: a remembered base view stands through unions elsewhere and is walked again after one below") {
  SelectionContext c;
  c.isa = isa::view<isa::Qkv>();
  TensorGraph g{TensorAnalysis(&c)};
  const auto x = g.add(make_input(c.attributes, 0, 24), {});
  const auto y = g.add(make_input(c.attributes, 1, 24), {});
  const auto sum = g.add(op(c, hlo::Opcode::Add, {}), {x, y});  // a value, not a view of an input
  const auto rs = g.add(op(c, hlo::Opcode::Reshape, reshape_to({4, 6})), {sum});
  const auto t = g.add(op(c, hlo::Opcode::Transpose, transpose_by({1, 0})), {rs});
  g.rebuild();
  view_rule_detail::BaseViewMemo memo;
  auto base_of_t = [&] {
    const auto& below = view_rule_detail::base_view(g, c, t, /*slice=*/true, memo);
    REQUIRE(below);
    return below->base;
  };
  CHECK(base_of_t() == g.find(sum));  // no input below: the first view's base
  CHECK(base_of_t() == g.find(sum));  // asked again, nothing changed
  REQUIRE(memo.entries.size() == 1);  // ...and answered from the memo
  const auto walked_at = memo.entries.begin()->second.version;
  // A union of classes the walk never read leaves the remembered walk standing.
  const auto z = g.add(make_input(c.attributes, 2, 24), {});
  const auto neg = g.add(op(c, hlo::Opcode::Negate, {}), {z});
  REQUIRE(g.unite(neg, g.add(op(c, hlo::Opcode::Negate, {}), {y})));
  CHECK(base_of_t() == g.find(sum));
  CHECK(memo.entries.begin()->second.version == walked_at);
  // The e-graph learns that rs is also reshape(x), below t: t's class is untouched, but its
  // walk now reaches an input, so the answer must change, before a rebuild and after it.
  const auto rx = g.add(op(c, hlo::Opcode::Reshape, reshape_to({4, 6})), {x});
  g.unite(rs, rx);
  CHECK(base_of_t() == g.find(x));
  CHECK(memo.entries.begin()->second.version != walked_at);
  g.rebuild();
  REQUIRE(g.find(t) == t);
  CHECK(base_of_t() == g.find(x));
  view_rule_detail::BaseViewMemo fresh;
  CHECK(view_rule_detail::base_view(g, c, t, true, fresh)->base == g.find(x));
}

namespace {

// Runs the movement rule on `g` to saturation.
void run_movement_rule(SelectionContext& c, TensorGraph& g) {
  auto rule = movement_instruction_rule(c);
  REQUIRE(rule);
  std::vector<TensorRewrite> rules;
  rules.push_back(std::move(*rule));
  egraph::Runner<TensorLanguage, TensorAnalysis> runner;
  runner.run(g, rules);
}

// The nodes of instruction `name` in class `cls`: their alpha, input type and input class.
struct Load {
  std::vector<std::int64_t> alpha;
  Shape input;
  egraph::Id input_class;
};
std::vector<Load> loads_in(const TensorGraph& g, const SelectionContext& c, egraph::Id cls, std::string_view name) {
  const int index = c.isa.instruction_index(name);
  REQUIRE(index >= 0);
  std::vector<Load> out;
  for (egraph::Id n : g.eclass(cls).nodes) {
    const auto node = g.node(n);
    if (node.op.kind == NodeKind::Pii && static_cast<int>(node.op.opcode) == index)
      out.push_back({c.attributes_of(node.op).alpha, g.data(node.children[0]).type, g.find(node.children[0])});
  }
  return out;
}

}  // namespace

TEST_CASE("views: tileloadd is matched through views, at the stride the bytes have") {
  SelectionContext c;
  c.isa = isa::view<isa::Amx>();
  TensorGraph g{TensorAnalysis(&c)};
  // 32 rows of 128 bytes; the tile is rows 0..15, columns 64..127 (stride 128, offset 64).
  const auto x = g.add(make_input(c.attributes, 0, 4096), {});
  const auto rows = g.add(op(c, hlo::Opcode::Reshape, reshape_to({32, 128})), {x});
  const auto tile = g.add(op(c, hlo::Opcode::Slice, slice_of({{0, 16, 1}, {64, 128, 1}})), {rows});
  const auto s8 = g.add(op(c, hlo::Opcode::BitcastConvert, bitcast_to(DType::s8)), {tile});
  const auto unit = g.add(op(c, hlo::Opcode::Reshape, reshape_to({1, 16, 64})), {s8});
  g.rebuild();
  run_movement_rule(c, g);
  // The unit class now holds tileloadd(stride = 128) of the 16 x 128-byte window at byte 64
  // (the window runs 64 bytes past the last row's tile bytes, as Intel's TILELOADD reads).
  bool found = false;
  for (const Load& l : loads_in(g, c, unit, "tileloadd"))
    if (l.alpha == std::vector<std::int64_t>{128}) found = l.input.same_type(Shape(DType::u8, {2048}));
  // Matched although tileloadd reads only half of each 128-byte row of its window: the bytes it
  // skips are filled so that the input is the contiguous window (movement_rules.hpp, divide()).
  CHECK(found);
  // A tile that is 16 whole rows of 64 bytes is matched at stride 64.
  TensorGraph h{TensorAnalysis(&c)};
  const auto y = h.add(make_input(c.attributes, 0, 2048), {});
  const auto part = h.add(op(c, hlo::Opcode::Slice, slice_of({{1024, 2048, 1}})), {y});
  const auto p8 = h.add(op(c, hlo::Opcode::BitcastConvert, bitcast_to(DType::s8)), {part});
  const auto p3 = h.add(op(c, hlo::Opcode::Reshape, reshape_to({1, 16, 64})), {p8});
  h.rebuild();
  run_movement_rule(c, h);
  bool at_64 = false;
  for (const Load& l : loads_in(h, c, p3, "tileloadd"))
    if (l.alpha == std::vector<std::int64_t>{64}) at_64 = l.input_class == h.find(part);
  CHECK(at_64);
}

TEST_CASE("views: a window that runs past the end of its base is read as the prefix inside it") {
  SelectionContext c;
  c.isa = isa::view<isa::Amx>();
  TensorGraph g{TensorAnalysis(&c)};
  // 16 rows of 128 bytes; the tile is columns 64..127. tileloadd(stride = 128) at byte 64 reads
  // the window [64, 2112): its last 64 bytes lie past the base and are never used.
  const auto x = g.add(make_input(c.attributes, 0, 2048), {});
  const auto rows = g.add(op(c, hlo::Opcode::Reshape, reshape_to({16, 128})), {x});
  const auto tile = g.add(op(c, hlo::Opcode::Slice, slice_of({{0, 16, 1}, {64, 128, 1}})), {rows});
  const auto s8 = g.add(op(c, hlo::Opcode::BitcastConvert, bitcast_to(DType::s8)), {tile});
  const auto unit = g.add(op(c, hlo::Opcode::Reshape, reshape_to({1, 16, 64})), {s8});
  g.rebuild();
  run_movement_rule(c, g);
  // Matched at stride 128, its input the 1984 bytes from byte 64 to the end of the base (once per
  // view of the tile's class: over x and over the 16 x 128 rows). Stride 64 reads the tile's
  // bytes gathered into a u8[1024] value, as before.
  std::size_t matched = 0;
  for (const Load& l : loads_in(g, c, unit, "tileloadd")) {
    if (l.alpha == std::vector<std::int64_t>{128}) {
      ++matched;
      CHECK(l.input.same_type(Shape(DType::u8, {1984})));
    } else {
      CHECK(l.input.same_type(Shape(DType::u8, {1024})));
    }
  }
  CHECK(matched >= 1);
  // Rows 16..31 of the same bytes as 32 x 64: one match, at the stride the bytes have, its input
  // the 1024 bytes they occupy (the completion never admits a stride the read bytes contradict).
  const auto rows2 = g.add(op(c, hlo::Opcode::Reshape, reshape_to({32, 64})), {x});
  const auto tall = g.add(op(c, hlo::Opcode::Slice, slice_of({{16, 32, 1}, {0, 64, 1}})), {rows2});
  const auto tall8 = g.add(op(c, hlo::Opcode::BitcastConvert, bitcast_to(DType::s8)), {tall});
  const auto unit2 = g.add(op(c, hlo::Opcode::Reshape, reshape_to({1, 16, 64})), {tall8});
  g.rebuild();
  run_movement_rule(c, g);
  const auto loads = loads_in(g, c, unit2, "tileloadd");  // again once per view
  for (const Load& l : loads) {
    CHECK(l.alpha == std::vector<std::int64_t>{64});
    CHECK(l.input.same_type(Shape(DType::u8, {1024})));
  }
  CHECK(loads.size() >= 1);
}

TEST_CASE("views: gemmini_hw's mvin_spad loads a block of the last block row, whose window runs past the matrix") {
  SelectionContext c;
  c.isa = isa::view<isa::GemminiHw>();
  TensorGraph g{TensorAnalysis(&c)};
  // A 32 x 32 s8 matrix; block (1, 1) at stride 32 has the window [528, 1040), 16 bytes past it.
  const auto x = g.add(make_input(c.attributes, 0, 1024), {});
  const auto rows = g.add(op(c, hlo::Opcode::Reshape, reshape_to({32, 32})), {x});
  const auto block = g.add(op(c, hlo::Opcode::Slice, slice_of({{16, 32, 1}, {16, 32, 1}})), {rows});
  const auto s8 = g.add(op(c, hlo::Opcode::BitcastConvert, bitcast_to(DType::s8)), {block});
  g.rebuild();
  run_movement_rule(c, g);
  std::size_t matched = 0;
  for (const Load& l : loads_in(g, c, s8, "mvin_spad")) {
    // Stride 16 reads the block's bytes gathered into a u8[256] value; stride 32 reads x itself.
    if (l.alpha != std::vector<std::int64_t>{1, 32}) continue;  // tiles, stride
    ++matched;
    CHECK(l.input.same_type(Shape(DType::u8, {496})));  // 1024 - 528 bytes
  }
  CHECK(matched >= 1);
}

TEST_CASE("AMX: K1 compiles to oneDNN's 16 instructions and verifies") {
  auto r = testing::compile_and_verify<isa::Amx>(kShared + "/kernels/paper/k1_cnn_inf_amx.hlo");
  ACT_REQUIRE_VERIFIED(r);
  const auto n = counts(r.program());
  CHECK(n == std::map<std::string, int>{{"tilezero", 4}, {"tileloadd", 4}, {"tdpbusd", 4}, {"tilestored", 4}});
  std::vector<std::int64_t> loads, stores;
  for (const auto& ci : r.program().instructions) {
    if (ci.name == "tileloadd") loads.push_back(ci.attributes.back());
    if (ci.name == "tilestored") stores.push_back(ci.attributes.back());
    if (ci.name == "tileloadd" || ci.name == "tilestored") CHECK(ci.attributes.front() == 64);  // stride
  }
  std::sort(loads.begin(), loads.end());
  std::sort(stores.begin(), stores.end());
  CHECK(loads == std::vector<std::int64_t>{0x0000, 0x0400, 0x0800, 0x0c00});
  CHECK(stores == std::vector<std::int64_t>{0x1000, 0x1400, 0x1800, 0x1c00});
}

TEST_CASE("AMX: K2 compiles to oneDNN's 9 instructions and verifies") {
  auto r = testing::compile_and_verify<isa::Amx>(kShared + "/kernels/paper/k2_rnn_inf_amx.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(counts(r.program()) == std::map<std::string, int>{{"tilezero", 2}, {"tileloadd", 3}, {"tdpbusd", 2}, {"tilestored", 2}});
}

// K = 128: A's column halves are tiles at stride 128. The second half's 16 x 128-byte window
// ends 64 bytes past A; act reads it from there (the bytes that follow are never used).
TEST_CASE("AMX: K2 with K = 128 loads A's halves at stride 128 and verifies") {
  auto r = testing::compile_and_verify<isa::Amx>(std::string(ACT_SOURCE_DIR) + "/examples/kernels/amx/int8_gemm_m16_n32_k128.hlo");
  ACT_REQUIRE_VERIFIED(r);
  CHECK(counts(r.program()) == std::map<std::string, int>{{"tilezero", 2}, {"tileloadd", 6}, {"tdpbusd", 4}, {"tilestored", 2}});
  std::vector<std::int64_t> a_loads;  // A is at 0: its tiles are the loads below byte 2048
  for (const auto& ci : r.program().instructions)
    if (ci.name == "tileloadd" && ci.attributes.back() < 2048) {
      CHECK(ci.attributes.front() == 128);  // stride
      a_loads.push_back(ci.attributes.back());
    }
  std::sort(a_loads.begin(), a_loads.end());
  CHECK(a_loads == std::vector<std::int64_t>{0, 64});
}

namespace {

// Random movement chains for the strided-form property test.
struct ChainGen {
  std::mt19937_64 rng;
  std::int64_t pick(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); }

  // A random factorisation of n into 1-3 dims.
  std::vector<std::int64_t> factor(std::int64_t n) {
    std::vector<std::int64_t> dims;
    const auto parts = pick(1, 3);
    for (std::int64_t k = 1; k < parts; ++k) {
      std::vector<std::int64_t> divisors;
      for (std::int64_t d = 1; d <= n; ++d)
        if (n % d == 0) divisors.push_back(d);
      const auto d = divisors[static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(divisors.size()) - 1))];
      dims.push_back(d);
      n /= d;
    }
    dims.push_back(n);
    return dims;
  }

  // One movement op applicable to `t` and its result type.
  std::pair<NodeAttributes, std::pair<hlo::Opcode, Shape>> step(const Shape& t) {
    for (;;) {
      switch (pick(0, 3)) {
        case 0: {
          NodeAttributes a;
          a.shape = factor(t.element_count());
          return {a, {hlo::Opcode::Reshape, Shape(t.dtype, a.shape)}};
        }
        case 1: {
          NodeAttributes a;
          a.dimensions.resize(t.dims.size());
          std::iota(a.dimensions.begin(), a.dimensions.end(), 0);
          std::shuffle(a.dimensions.begin(), a.dimensions.end(), rng);
          std::vector<std::int64_t> dims;
          for (auto p : a.dimensions) dims.push_back(t.dims[static_cast<std::size_t>(p)]);
          return {a, {hlo::Opcode::Transpose, Shape(t.dtype, dims)}};
        }
        case 2: {
          NodeAttributes a;
          std::vector<std::int64_t> dims;
          for (auto n : t.dims) {
            const auto start = pick(0, n - 1), limit = pick(start + 1, n), stride = pick(1, 2);
            a.slice.push_back({start, limit, stride});
            dims.push_back((limit - start + stride - 1) / stride);
          }
          return {a, {hlo::Opcode::Slice, Shape(t.dtype, dims)}};
        }
        default: {
          NodeAttributes a;
          if (byte_width(t.dtype) > 1) {  // narrow to bytes
            a.dtype = DType::u8;
            auto dims = t.dims;
            dims.push_back(byte_width(t.dtype));
            return {a, {hlo::Opcode::BitcastConvert, Shape(DType::u8, dims)}};
          }
          if (!t.dims.empty() && t.dims.back() == 2) {  // widen two bytes
            a.dtype = DType::bf16;
            auto dims = t.dims;
            dims.pop_back();
            return {a, {hlo::Opcode::BitcastConvert, Shape(DType::bf16, dims)}};
          }
          break;
        }
      }
    }
  }
};

}  // namespace

TEST_CASE("views: the strided form moves like explicit offsets and gives the same canonical chains") {
  SelectionContext c;
  ChainGen gen{std::mt19937_64(20261124)};
  int strided = 0, chains = 0, factorised = 0, flat_chains = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const DType t = std::vector<DType>{DType::u8, DType::bf16, DType::s32}[static_cast<std::size_t>(gen.pick(0, 2))];
    const Shape base(t, gen.factor(gen.pick(1, 6) * gen.pick(1, 8) * gen.pick(1, 4)));
    ByteView view = identity_view(base);
    ByteView explicit_view{view.type, view.offsets(), std::nullopt};
    const auto steps = gen.pick(1, 5);
    for (int s = 0; s < steps; ++s) {
      const auto [attributes, result] = gen.step(view.type.shape());
      const TensorOp o = op(c, result.first, attributes);
      const auto moved = apply_movement(c, o, result.second, view);
      const auto moved_explicit = apply_movement(c, o, result.second, explicit_view);
      INFO("trial " << trial << " step " << s << " " << hlo::opcode_name(result.first) << " to " << to_string(result.second));
      REQUIRE(moved.has_value() == moved_explicit.has_value());
      if (!moved) break;
      CHECK(moved->offsets() == moved_explicit->offset);
      view = *moved;
      explicit_view = *moved_explicit;
      {
        // The same bytes as a flat vector: the modes are no longer one per dim, and the
        // factorisation must find a strided form giving the explicit chain.
        const ByteView flat{Shape(view.type.dtype, {view.type.element_count()}), explicit_view.offset, std::nullopt};
        const auto f = affine_factorization(flat.type.dims, flat.offset);
        if (view.affine) CHECK(f.has_value());
        if (f) {
          CHECK(affine_offsets(*f, flat.type.element_count()) == flat.offset);
          if (!affine_from_offsets(flat.type.dims, flat.offset)) ++factorised;
          // When the strided walk finds a chain it is the explicit one (canonical_chain falls
          // back to the explicit walk when it does not).
          const auto a = canonical_chain_affine(base, flat.type, *f);
          const auto e = canonical_chain_explicit(base, flat);
          if (a) {
            ++flat_chains;
            REQUIRE(e.has_value());
            CHECK(a->box == e->box);
            CHECK(a->narrow_to == e->narrow_to);
            CHECK(a->source_radices == e->source_radices);
            CHECK(a->permutation == e->permutation);
            CHECK(a->final_dims == e->final_dims);
            CHECK(a->widen_or_cast_to == e->widen_or_cast_to);
          }
        }
      }
      if (!view.affine) continue;
      ++strided;
      const auto a = canonical_chain_affine(base, view.type, *view.affine);
      const auto e = canonical_chain_explicit(base, explicit_view);
      REQUIRE(a.has_value() == e.has_value());
      if (!a) continue;
      ++chains;
      CHECK(a->box == e->box);
      CHECK(a->narrow_to == e->narrow_to);
      CHECK(a->source_radices == e->source_radices);
      CHECK(a->permutation == e->permutation);
      CHECK(a->final_dims == e->final_dims);
      CHECK(a->widen_or_cast_to == e->widen_or_cast_to);
    }
  }
  // The test would prove nothing if the strided form or the chains were rare.
  CHECK(strided > 3000);
  CHECK(chains > 1000);
  CHECK(factorised > 500);
  CHECK(flat_chains > 1000);
  INFO("flat views factorised " << factorised << ", chains " << flat_chains);
}

// The strided shortcuts of the movement rule (in_order_input, strided_divide) against divide()
// on explicit offsets: random permutations P (reshapes, transposes, byte-splitting bitcasts of
// an input) and random strided views C of the same element count, whenever a shortcut answers.
TEST_CASE("views: the strided division agrees with the explicit one") {
  SelectionContext c;
  ChainGen gen{std::mt19937_64(424242)};
  using view_rule_detail::MovementSemantics;
  int strided = 0, in_order = 0;
  // A random chain of movements without slices (a bijection), from `from`.
  auto permute = [&](const Shape& from, int steps) {
    ByteView v = identity_view(from);
    for (int s = 0; s < steps; ++s) {
      const auto [attributes, result] = gen.step(v.type.shape());
      if (result.first == hlo::Opcode::Slice) continue;
      const auto moved = apply_movement(c, op(c, result.first, attributes), result.second, v);
      if (!moved || !moved->affine) break;
      v = *moved;
    }
    return v;
  };
  for (int trial = 0; trial < 4000; ++trial) {
    const DType t = std::vector<DType>{DType::u8, DType::bf16, DType::s32}[static_cast<std::size_t>(gen.pick(0, 2))];
    const Shape input(t, gen.factor(gen.pick(1, 6) * gen.pick(1, 8) * gen.pick(1, 4)));
    MovementSemantics ms;
    ms.input = 0;
    ms.input_type = input;
    ms.movement = permute(input, static_cast<int>(gen.pick(0, 4)));
    ms.output_type = ms.movement.type.shape();
    ms.movement_offsets = ms.movement.offsets();
    ms.in_order = view_rule_detail::reads_in_order(ms);
    // C: the same type as Out0, a random view of a base (a permutation of a bigger or equal base,
    // reshaped to Out0's dims when the element counts allow).
    const Shape base(ms.output_type.dtype, gen.factor(ms.output_type.element_count()));
    ByteView cv = permute(base, static_cast<int>(gen.pick(0, 4)));
    if (cv.type.dtype != ms.output_type.dtype) continue;
    NodeAttributes r;
    r.shape = ms.output_type.dims;
    const auto reshaped = apply_movement(c, op(c, hlo::Opcode::Reshape, r), ms.output_type, cv);
    if (!reshaped || !reshaped->affine) continue;
    cv = *reshaped;
    const std::int64_t base_bytes = base.element_count() * byte_width(base.dtype);
    const auto expected = view_rule_detail::divide(cv, cv.offsets(), ms.movement, ms.movement_offsets, input, base_bytes);
    INFO("trial " << trial << ": input " << to_string(input) << ", Out0 " << to_string(ms.output_type));
    if (const auto q = view_rule_detail::in_order_input(cv, ms)) {
      ++in_order;
      REQUIRE(expected.has_value());
      CHECK(q->type.same_type(expected->type));
      CHECK(q->offsets() == expected->offset);
    }
    if (const auto q = view_rule_detail::strided_divide(cv, ms)) {
      ++strided;
      REQUIRE(expected.has_value());
      CHECK(q->type.same_type(expected->type));
      CHECK(q->offsets() == expected->offset);
    }
  }
  CHECK(in_order > 200);
  CHECK(strided > 1000);
}
