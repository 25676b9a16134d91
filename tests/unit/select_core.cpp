// select/ core: type inference, module 1 (kernel -> e-graph), IR->ISA rule generation, identity
// instructions, and saturation on the QKV attention kernel.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/isa/amx.hpp"
#include "act/isa/gemmini.hpp"
#include "act/isa/qkv.hpp"
#include "act/select/init/kernel_graph.hpp"
#include "act/select/init/output_groups.hpp"
#include "act/select/pii_graph.hpp"
#include "act/select/rules/rule_set.hpp"
#include "act/select/search/group_explorer.hpp"
#include "act/select/ir/builder.hpp"
#include "act/select/ir/constant_folding.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/ir/type_inference.hpp"

using namespace act;
using namespace act::select;
using hlo::Opcode;

namespace {

SelectionContext qkv_context() {
  SelectionContext c;
  c.isa = isa::view<isa::Qkv>();
  return c;
}

std::size_t instruction_index(const SelectionContext& c, std::string_view name) {
  for (std::size_t i = 0; i < c.isa.instructions.size(); ++i)
    if (c.isa.instructions[i].name == name) return i;
  FAIL("no instruction " << name);
  return 0;
}

Shape infer(const SelectionContext& c, const TensorOp& op, std::vector<Shape> children) {
  std::vector<const Shape*> ptrs;
  for (const Shape& s : children) ptrs.push_back(&s);
  return infer_type(c, op, ptrs);
}

}  // namespace

TEST_CASE("type inference: leaves, byte views and layout operators") {
  SelectionContext c = qkv_context();
  auto& t = c.attributes;
  CHECK(infer(c, make_input(t, 0, 8192), {}) == Shape(DType::u8, {8192}));
  NodeAttributes reshape;
  reshape.shape = {64, 64, 2};
  const Shape bytes = infer(c, make_operator(t, Opcode::Reshape, reshape), {Shape(DType::u8, {8192})});
  CHECK(bytes == Shape(DType::u8, {64, 64, 2}));
  NodeAttributes to_bf16;
  to_bf16.dtype = DType::bf16;
  CHECK(infer(c, make_operator(t, Opcode::BitcastConvert, to_bf16), {bytes}) == Shape(DType::bf16, {64, 64}));
  NodeAttributes to_u8;
  to_u8.dtype = DType::u8;
  CHECK(infer(c, make_operator(t, Opcode::BitcastConvert, to_u8), {Shape(DType::bf16, {3, 5})}) ==
        Shape(DType::u8, {3, 5, 2}));
  // widening needs the ratio as minor-most dim
  CHECK_THROWS_AS(infer(c, make_operator(t, Opcode::BitcastConvert, to_bf16), {Shape(DType::u8, {64, 3})}), Error);
  reshape.shape = {100};
  CHECK_THROWS_AS(infer(c, make_operator(t, Opcode::Reshape, reshape), {Shape(DType::u8, {8192})}), Error);

  NodeAttributes transpose;
  transpose.dimensions = {1, 0};
  CHECK(infer(c, make_operator(t, Opcode::Transpose, transpose), {Shape(DType::bf16, {3, 7})}) ==
        Shape(DType::bf16, {7, 3}));
  transpose.dimensions = {0, 0};
  CHECK_THROWS_AS(infer(c, make_operator(t, Opcode::Transpose, transpose), {Shape(DType::bf16, {3, 7})}), Error);

  NodeAttributes slice;
  slice.slice = {{2, 10, 1}, {0, 64, 3}};
  CHECK(infer(c, make_operator(t, Opcode::Slice, slice), {Shape(DType::f32, {16, 64})}) == Shape(DType::f32, {8, 22}));
  CHECK(infer(c, make_slice_h(t, 1, slice.slice), {Shape(DType::f32, {16, 64})}) == Shape(DType::f32, {8, 22}));
  slice.slice = {{2, 20, 1}, {0, 64, 1}};
  CHECK_THROWS_AS(infer(c, make_operator(t, Opcode::Slice, slice), {Shape(DType::f32, {16, 64})}), Error);

  NodeAttributes concat;
  concat.dimensions = {0};
  CHECK(infer(c, make_operator(t, Opcode::Concatenate, concat), {Shape(DType::bf16, {3, 64}), Shape(DType::bf16, {5, 64})}) ==
        Shape(DType::bf16, {8, 64}));
  CHECK(infer(c, make_concat_h(t, 1, 0), {Shape(DType::bf16, {3, 64}), Shape(DType::bf16, {5, 64})}) ==
        Shape(DType::bf16, {8, 64}));
  CHECK_THROWS_AS(infer(c, make_concat_h(t, 1, 0), {Shape(DType::bf16, {3, 64}), Shape(DType::bf16, {5, 32})}), Error);

  NodeAttributes pad;
  pad.padding = {{1, 2, 0}, {0, 0, 1}};
  CHECK(infer(c, make_operator(t, Opcode::Pad, pad), {Shape(DType::s8, {4, 5}), Shape(DType::s8, {})}) ==
        Shape(DType::s8, {7, 9}));
}

TEST_CASE("type inference: compute operators") {
  SelectionContext c = qkv_context();
  auto& t = c.attributes;
  const Shape m(DType::bf16, {64, 32});
  CHECK(infer(c, make_operator(t, Opcode::Exponential), {m}) == m);
  CHECK(infer(c, make_operator(t, Opcode::Add), {m, m}) == m);
  CHECK_THROWS_AS(infer(c, make_operator(t, Opcode::Add), {m, Shape(DType::f32, {64, 32})}), Error);
  NodeAttributes cmp;
  cmp.direction = hlo::ComparisonDirection::GT;
  CHECK(infer(c, make_operator(t, Opcode::Compare, cmp), {m, m}) == Shape(DType::pred, {64, 32}));
  CHECK(infer(c, make_operator(t, Opcode::Select), {Shape(DType::pred, {64, 32}), m, m}) == m);
  NodeAttributes conv;
  conv.dtype = DType::f32;
  CHECK(infer(c, make_operator(t, Opcode::Convert, conv), {m}) == Shape(DType::f32, {64, 32}));

  NodeAttributes bcast;
  bcast.shape = {64, 32};
  bcast.dimensions = {0};
  CHECK(infer(c, make_operator(t, Opcode::Broadcast, bcast), {Shape(DType::bf16, {64})}) == m);
  CHECK_THROWS_AS(infer(c, make_operator(t, Opcode::Broadcast, bcast), {Shape(DType::bf16, {32})}), Error);

  NodeAttributes reduce;
  reduce.dimensions = {1};
  reduce.reduce = ReduceKind::Add;
  CHECK(infer(c, make_operator(t, Opcode::Reduce, reduce), {m, Shape(DType::bf16, {})}) == Shape(DType::bf16, {64}));

  NodeAttributes dot;
  dot.dtype = DType::f32;
  dot.dot.lhs_contracting = {1};
  dot.dot.rhs_contracting = {0};
  CHECK(infer(c, make_operator(t, Opcode::Dot, dot), {m, Shape(DType::bf16, {32, 16})}) == Shape(DType::f32, {64, 16}));
  CHECK_THROWS_AS(infer(c, make_operator(t, Opcode::Dot, dot), {m, Shape(DType::bf16, {16, 32})}), Error);
  dot.dot.lhs_batch = {0};
  dot.dot.rhs_batch = {0};
  dot.dot.lhs_contracting = {2};
  dot.dot.rhs_contracting = {1};
  CHECK(infer(c, make_operator(t, Opcode::Dot, dot), {Shape(DType::bf16, {4, 8, 16}), Shape(DType::bf16, {4, 16, 2})}) ==
        Shape(DType::f32, {4, 8, 2}));
}

TEST_CASE("type inference: pii output types come from the semantics with alpha bound") {
  SelectionContext c = qkv_context();
  auto& t = c.attributes;
  const auto load_rm = instruction_index(c, "load_rm");
  CHECK(infer(c, make_pii(t, load_rm, {32}), {Shape(DType::u8, {4096})}) == Shape(DType::bf16, {32, 64}));
  CHECK(c.pii_output_types.size() == 1);
  CHECK(infer(c, make_pii(t, load_rm, {32}), {Shape(DType::u8, {4096})}) == Shape(DType::bf16, {32, 64}));
  CHECK(c.pii_output_types.size() == 1);  // cached
  const auto load_cm = instruction_index(c, "load_cm");
  CHECK(infer(c, make_pii(t, load_cm, {64}), {Shape(DType::u8, {8192})}) == Shape(DType::bf16, {64, 64}));
  const auto store_rm = instruction_index(c, "store_rm");
  CHECK(infer(c, make_pii(t, store_rm, {3}), {Shape(DType::bf16, {3, 64})}) == Shape(DType::u8, {384}));
  const auto gemm = instruction_index(c, "gemm");
  CHECK(infer(c, make_pii(t, gemm, {}), {Shape(DType::bf16, {64, 64}), Shape(DType::bf16, {64, 64})}) ==
        Shape(DType::bf16, {64, 64}));
  // wrong alpha count or child count: a rule bug
  CHECK_THROWS_AS(infer(c, make_pii(t, gemm, {1}), {Shape(DType::bf16, {64, 64}), Shape(DType::bf16, {64, 64})}), Error);
  CHECK_THROWS_AS(infer(c, make_pii(t, load_rm, {32}), {}), Error);
}

// ---- module 1 -------------------------------------------------------------------------------

#include "act/hlo/parser.hpp"
#include "act/select/init/kernel_graph.hpp"
#include "act/testing/files.hpp"

namespace {

std::string shared(const std::string& relative) { return std::string(ACT_SHARED_DIR) + "/" + relative; }

// The operator chain below `id` following first children (first node of each class).
std::vector<std::string> chain(const TensorGraph& g, const SelectionContext& c, egraph::Id id) {
  std::vector<std::string> out;
  for (;;) {
    const auto& cls = g.eclass(id);
    const auto node = g.node(cls.nodes.front());
    out.push_back(node.op.kind == NodeKind::Operator ? std::string(hlo::opcode_name(node.op.opcode))
                                                     : std::string(to_string(node.op.kind)));
    (void)c;
    if (node.children.empty()) return out;
    id = node.children[0];
  }
}

}  // namespace

TEST_CASE("module 1: attention.hlo enters byte-flattened") {
  SelectionContext c = qkv_context();
  TensorGraph g{TensorAnalysis(&c)};
  const auto kernel = testing::load_kernel(shared("kernels/qkv/attention.hlo"));
  const InitialGraph init = add_kernel(g, c, kernel);
  REQUIRE(init.inputs.size() == 3);
  REQUIRE(init.roots.size() == 1);
  CHECK(init.input_addresses == std::vector<std::int64_t>{0, 8192, 16384});
  CHECK(init.output_addresses == std::vector<std::int64_t>{24576});
  for (auto in : init.inputs) CHECK(g.data(in).type == Shape(DType::u8, {8192}));
  CHECK(g.data(init.roots[0]).type == Shape(DType::u8, {8192}));
  // Classes of one type share its one stored copy (tensor_graph.hpp's TypePool).
  for (auto in : init.inputs) CHECK(&g.data(in).type == &g.data(init.roots[0]).type);
  // root = reshape(bitcast-convert(dot(...)))
  CHECK(chain(g, c, init.roots[0]) ==
        std::vector<std::string>{"reshape", "bitcast-convert", "dot", "divide", "exponential", "dot",
                                 "bitcast-convert", "reshape", "input"});
  // 3 inputs x (input, reshape, bitcast) + transpose, dot, exp, zero, reduce, broadcast, divide,
  // dot + root bitcast, reshape = 9 + 8 + 2
  CHECK(g.num_nodes() == 19);
  CHECK(g.num_classes() == 19);
  CHECK(c.constants.size() == 1);
}

TEST_CASE("module 1: a reshape round trip to the value's own shape is that value") {
  const auto kernel = hlo::parse_module(
      "HloModule m\n\nENTRY %main (p0: f32[32,16]) -> (f32[32,16], f32[8,64]) {\n"
      "  %p0 = f32[32,16] parameter(0)\n"
      "  %a = f32[32,16] add(%p0, %p0)\n"
      "  %r1 = f32[16,32] reshape(%a)\n"
      "  %back = f32[32,16] reshape(%r1)\n"
      "  %other = f32[8,64] reshape(%r1)\n"
      "  ROOT %out = (f32[32,16], f32[8,64]) tuple(%back, %other)\n}\n");
  const hlo::Computation& entry = kernel.entry_computation();
  const auto index = [&](std::string_view name) {
    for (std::size_t i = 0; i < entry.instructions.size(); ++i)
      if (entry.instructions[i].name == name) return i;
    FAIL("no instruction " << name);
    return std::size_t{0};
  };
  CHECK(select::reshape_round_trip_source(entry, index("back")) == static_cast<int>(index("a")));
  CHECK(select::reshape_round_trip_source(entry, index("other")) == -1);  // [32,16] -> [16,32] -> [8,64]
  CHECK(select::reshape_round_trip_source(entry, index("r1")) == -1);
  // The round trip reads the add, not the inner reshape; the other output still needs it.
  CHECK(select::operands_read(entry, index("back")) == std::vector<int>{static_cast<int>(index("a"))});
  const std::vector<bool> only_back = select::instructions_needed_by(entry, {static_cast<int>(index("back"))});
  CHECK_FALSE(only_back[index("r1")]);
  CHECK(only_back[index("a")]);

  SelectionContext c = qkv_context();
  TensorGraph g{TensorAnalysis(&c)};
  const InitialGraph init = add_kernel(g, c, kernel);
  REQUIRE(init.roots.size() == 2);
  // The first output's bytes are written from the add's class itself: between them only the
  // byte write's reshape and bitcast, no reshape of the round trip.
  const std::vector<std::string> back = chain(g, c, init.roots[0]);
  const auto add_at = std::ranges::find(back, std::string("add"));
  REQUIRE(add_at != back.end());
  CHECK(std::vector<std::string>(back.begin(), add_at) == std::vector<std::string>{"reshape", "bitcast-convert"});
}

TEST_CASE("module 1: float transposes that another transpose undoes are told apart") {
  // transpose(clamp(transpose(p0))) undoes itself; a third transpose of that chain does not.
  const auto count = [](const std::string& body) {
    const auto kernel = hlo::parse_module("HloModule m\n\nENTRY %main (p0: f32[16,16]) -> f32[16,16] {\n"
                                          "  %p0 = f32[16,16] parameter(0)\n"
                                          "  %lo = f32[] constant(-0.5)\n  %hi = f32[] constant(0.5)\n" + body + "}\n");
    SelectionContext c = qkv_context();
    TensorGraph g{TensorAnalysis(&c)};
    const InitialGraph init = add_kernel(g, c, kernel);
    return std::pair{init.float_transposes, init.float_transposes_kept};
  };
  const std::string twice = "  %t1 = f32[16,16] transpose(%p0), dimensions={1,0}\n"
                            "  %c = f32[16,16] clamp(%lo, %t1, %hi)\n"
                            "  %t2 = f32[16,16] transpose(%c), dimensions={1,0}\n";
  CHECK(count(twice + "  ROOT %r = f32[16,16] add(%t2, %p0)\n") == std::pair<std::size_t, std::size_t>{2, 0});
  CHECK(count(twice + "  ROOT %t3 = f32[16,16] transpose(%t2), dimensions={1,0}\n") ==
        std::pair<std::size_t, std::size_t>{3, 1});
  // The inner transpose read by something else is still needed.
  CHECK(count(twice + "  ROOT %r = f32[16,16] add(%t2, %t1)\n") == std::pair<std::size_t, std::size_t>{2, 1});
  // A transpose with a dimension of 1 moves no bytes; a transpose of an outer product is the
  // outer product of the swapped operands. A transpose of a dot contracting 16 is kept.
  const std::string column = "  %col = f32[16,1] slice(%p0), slice={[0:16], [0:1]}\n"
                             "  %row = f32[1,16] transpose(%col), dimensions={1,0}\n";
  CHECK(count(column + "  %o = f32[16,16] dot(%col, %row), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                       "  ROOT %t = f32[16,16] transpose(%o), dimensions={1,0}\n") == std::pair<std::size_t, std::size_t>{2, 0});
  CHECK(count("  %d = f32[16,16] dot(%p0, %p0), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              "  ROOT %t = f32[16,16] transpose(%d), dimensions={1,0}\n") == std::pair<std::size_t, std::size_t>{1, 1});
}

TEST_CASE("module 1: narrowed products only the narrowing rules compute are counted") {
  // convert<s8>(dot<s32>(...)) counts when an operand is no widened s8 (an s32 parameter, a
  // product): no Gemmini instruction computes that dot, but matmul8 computes its low byte.
  const auto count = [](const std::string& body, isa::IsaView isa) {
    const auto kernel = hlo::parse_module("HloModule m\n\nENTRY %main (p0: s8[16,16], p1: s32[16,16]) -> s8[16,16] {\n"
                                          "  %p0 = s8[16,16] parameter(0)\n  %p1 = s32[16,16] parameter(1)\n"
                                          "  %w = s32[16,16] convert(%p0)\n" + body + "}\n");
    SelectionContext c;
    c.isa = isa;
    TensorGraph g{TensorAnalysis(&c)};
    const InitialGraph init = add_kernel(g, c, kernel);
    return std::pair{init.narrowed_products, init.concatenated_narrowed_products};
  };
  const auto gemmini = isa::view<isa::Gemmini>();
  using Counts = std::pair<std::size_t, std::size_t>;
  const std::string raw = "  %d = s32[16,16] dot(%w, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  CHECK(count(raw + "  ROOT %r = s8[16,16] convert(%d)\n", gemmini) == Counts{1, 0});
  // Through a reshape round trip too (the convert reads the dot's elements).
  CHECK(count(raw + "  %r1 = s32[8,32] reshape(%d)\n  %r2 = s32[16,16] reshape(%r1)\n  ROOT %r = s8[16,16] convert(%r2)\n",
              gemmini) == Counts{1, 0});
  // A product of a product: no operand is widened.
  CHECK(count("  %e = s32[16,16] dot(%w, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              "  %d = s32[16,16] dot(%e, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              "  ROOT %r = s8[16,16] convert(%d)\n",
              gemmini) == Counts{1, 0});
  // Both operands widened s8: matmul32 computes the dot as it is.
  CHECK(count("  %d = s32[16,16] dot(%w, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              "  ROOT %r = s8[16,16] convert(%d)\n",
              gemmini) == Counts{0, 0});
  // Not narrowed: the s32 product stays an s32 value.
  CHECK(count(raw + "  %n = s8[16,16] convert(%p1)\n  ROOT %r = s8[16,16] add(%n, %p0)\n", gemmini) == Counts{0, 0});
  // Rows a concatenate joins to the product's: counted, and as below a concatenate.
  CHECK(count(raw + "  %n = s32[16,16] convert(%p0)\n  %j = s32[32,16] concatenate(%n, %d), dimensions={0}\n"
                    "  %s = s32[16,16] slice(%j), slice={[8:24], [0:16]}\n  ROOT %r = s8[16,16] convert(%s)\n",
              gemmini) == Counts{1, 1});
  // A concatenate of widened values' products only: matmul32 computes each.
  CHECK(count("  %e = s32[8,16] slice(%w), slice={[0:8], [0:16]}\n"
              "  %d = s32[8,16] dot(%e, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              "  %j = s32[16,16] concatenate(%d, %e), dimensions={0}\n  ROOT %r = s8[16,16] convert(%j)\n",
              gemmini) == Counts{0, 0});
  // AMX computes no s8 dot of operands as they are, so narrowing cannot help there.
  CHECK(count(raw + "  ROOT %r = s8[16,16] convert(%d)\n", isa::view<isa::Amx>()) == Counts{0, 0});
}

TEST_CASE("module 1: intermediate dots are offered in row pieces only when asked") {
  // attention.hlo: the first dot (Q . K^T, 64 rows) is read by exponential; the second is the
  // output, which is not an intermediate.
  const auto kernel = testing::load_kernel(shared("kernels/qkv/attention.hlo"));
  SelectionContext c = qkv_context();
  TensorGraph plain{TensorAnalysis(&c)};
  const InitialGraph init = add_kernel(plain, c, kernel);
  CHECK(init.intermediate_dot_rows == 1);
  CHECK(init.transposed_intermediate_dots == 1);  // it reads transpose(K)
  SelectionContext c2 = qkv_context();
  TensorGraph pieces{TensorAnalysis(&c2)};
  const InitialGraph with_pieces = add_kernel(pieces, c2, kernel, {}, 0, true);
  CHECK(with_pieces.intermediate_dot_rows == 1);
  // The first dot's bytes (bf16[64,64]: 8 KiB) as a concat of byte slices: more nodes, and a
  // u8[8192] class that holds a concatenate (QKV's outputs are not split on a first attempt).
  CHECK(pieces.num_nodes() > plain.num_nodes());
  const auto concatenated = [](const TensorGraph& g) {
    for (egraph::Id cls : g.classes_with(static_cast<std::uint32_t>(Opcode::Concatenate)))
      if (g.data(cls).type == Shape(DType::u8, {8192})) return true;
    return false;
  };
  CHECK_FALSE(concatenated(plain));
  CHECK(concatenated(pieces));
}

TEST_CASE("module 1: counts the intermediate dots that contract an operand's rows") {
  // Only intermediate dots count (the second dot is the output), and only a non-canonical one.
  const auto count = [](const char* lhs_dims, const char* rhs_dims) {
    const auto kernel = hlo::parse_module(fmt::format(R"(HloModule k
ENTRY main {{
  %p0 = s8[16,16] parameter(0)
  %p1 = s8[16,16] parameter(1)
  %d = s8[16,16] dot(%p0, %p1), lhs_contracting_dims={{{}}}, rhs_contracting_dims={{{}}}
  ROOT %e = s8[16,16] dot(%d, %p1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}
}})", lhs_dims, rhs_dims));
    SelectionContext c = qkv_context();
    TensorGraph g{TensorAnalysis(&c)};
    const InitialGraph init = add_kernel(g, c, kernel);
    CHECK(init.intermediate_dot_rows == 1);
    return init.transposed_intermediate_dots;
  };
  CHECK(count("1", "0") == 0);
  CHECK(count("1", "1") == 1);
  CHECK(count("0", "0") == 1);
}

TEST_CASE("module 1: a tiled s8 parameter is read through reshape + transpose") {
  SelectionContext c = qkv_context();
  TensorGraph g{TensorAnalysis(&c)};
  const auto kernel = testing::load_kernel(shared("kernels/paper/k1_cnn_inf_amx.hlo"));
  const InitialGraph init = add_kernel(g, c, kernel);
  REQUIRE(init.inputs.size() == 2);
  // A u8[32,64]: 2048 bytes at 0; B s8[32,64]{T(16,4)}: 32x64 tiles evenly, 2048 bytes at 2048.
  CHECK(init.input_addresses == std::vector<std::int64_t>{0, 2048});
  CHECK(g.data(init.inputs[1]).type == Shape(DType::u8, {2048}));
  // output s32[32,32]{T(16,16)}: 4096 bytes after the inputs
  CHECK(init.output_addresses == std::vector<std::int64_t>{4096});
  CHECK(g.data(init.roots[0]).type == Shape(DType::u8, {4096}));
  // B: input -> reshape u8[2,16,16,4] -> bitcast s8 -> transpose {0,2,1,3} -> reshape s8[32,64]
  // (no slice: 32x64 needs no tiling padding)
  CHECK(chain(g, c, init.roots[0]).front() == "reshape");
  NodeAttributes split;
  split.shape = {2, 16, 16, 4};
  const auto reshape_b = g.lookup(make_operator(c.attributes, Opcode::Reshape, split), {init.inputs[1]});
  REQUIRE(reshape_b);
  NodeAttributes to_s8;
  to_s8.dtype = DType::s8;
  const auto s8_tiles = g.lookup(make_operator(c.attributes, Opcode::BitcastConvert, to_s8), {*reshape_b});
  REQUIRE(s8_tiles);
  NodeAttributes interleave;
  interleave.dimensions = {0, 2, 1, 3};
  const auto t = g.lookup(make_operator(c.attributes, Opcode::Transpose, interleave), {*s8_tiles});
  REQUIRE(t);
  NodeAttributes merge;
  merge.shape = {32, 64};
  const auto logical = g.lookup(make_operator(c.attributes, Opcode::Reshape, merge), {*t});
  REQUIRE(logical);
  CHECK(g.data(*logical).type == Shape(DType::s8, {32, 64}));
}

TEST_CASE("output groups: outputs that share a computed instruction are one group") {
  const auto k5 = testing::load_kernel(shared("kernels/paper/k5_cnn_inf_mix.hlo"));
  CHECK(independent_output_groups(k5) == std::vector<std::vector<std::size_t>>{{0}, {1}});
  const auto attention = testing::load_kernel(shared("kernels/qkv/attention.hlo"));
  CHECK(independent_output_groups(attention) == std::vector<std::vector<std::size_t>>{{0}});
  // b and a share a; e2 shares only the parameter q and the constant c with them; p is returned
  // as is.
  const auto kernel = hlo::parse_module(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  c = f32[4] constant(1)
  a = f32[4] add(p, c)
  b = f32[4] multiply(a, q)
  d = f32[4] negate(q)
  e2 = f32[4] add(d, c)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(b, e2, a, p)
}
)");
  CHECK(independent_output_groups(kernel) == std::vector<std::vector<std::size_t>>{{0, 2}, {1}, {3}});
}

TEST_CASE("output groups: every combination of the groups' graphs comes once, the first graphs first") {
  // Two independent outputs, each explored in its own e-graph. Their graphs arrive level by
  // level, ready greedy graphs before enumerated ones, and each combination comes once.
  SelectionContext c = qkv_context();
  const auto kernel = hlo::parse_module(R"(HloModule two
ENTRY e {
  p = bf16[64,64] parameter(0)
  q = bf16[32,64] parameter(1)
  t = bf16[64,64] transpose(p), dimensions={1,0}
  ROOT r = (bf16[64,64], bf16[32,64]) tuple(t, q)
}
)");
  GroupExplorer explorer(c, kernel);
  REQUIRE(explorer.size() == 2);
  const RuleSet rules = rule_set(c);
  ExplorerOptions options;
  options.max_rounds = 4;
  options.settling_rounds = 0;  // exactly 4 rounds: the combinations stay few
  explorer.start(rules, options);
  std::vector<PiiGraph> merged;
  while (auto g = explorer.next()) {
    merged.push_back(std::move(*g));
    REQUIRE(merged.size() < 10'000);
  }
  CHECK_FALSE(explorer.timed_out());
  const std::size_t first = explorer.group(0).graphs.size(), second = explorer.group(1).graphs.size();
  INFO(first << " x " << second << " graphs");
  CHECK(first >= 2);
  CHECK(second >= 2);
  CHECK(merged.size() == first * second);
  // Each pair of the groups' graphs, merged, once (as a multiset: different pairs can merge to
  // equal graphs).
  std::vector<std::vector<std::int64_t>> produced, expected_pairs;
  for (const PiiGraph& g : merged) produced.push_back(g.canonical_key());
  for (const PiiGraph& a : explorer.group(0).graphs)
    for (const PiiGraph& b : explorer.group(1).graphs)
      expected_pairs.push_back(merge_pii_graphs({&a, &b}, {explorer.group(0).outputs, explorer.group(1).outputs}, 2).canonical_key());
  std::sort(produced.begin(), produced.end());
  std::sort(expected_pairs.begin(), expected_pairs.end());
  CHECK(produced == expected_pairs);
  REQUIRE_FALSE(merged.empty());
  const PiiGraph expected = merge_pii_graphs({&explorer.group(0).graphs[0], &explorer.group(1).graphs[0]},
                                             {explorer.group(0).outputs, explorer.group(1).outputs}, 2);
  CHECK(merged.front().canonical_key() == expected.canonical_key());
}

TEST_CASE("module 1: one output group enters alone, over the whole kernel's HBM image") {
  SelectionContext c = qkv_context();
  const auto kernel = testing::load_kernel(shared("kernels/paper/k5_cnn_inf_mix.hlo"));
  TensorGraph whole{TensorAnalysis(&c)};
  const InitialGraph all = add_kernel(whole, c, kernel);
  SelectionContext c2 = qkv_context();
  TensorGraph g{TensorAnalysis(&c2)};
  const std::size_t second[] = {1};
  const InitialGraph init = add_kernel(g, c2, kernel, second);
  REQUIRE(init.roots.size() == 1);
  CHECK(init.outputs == std::vector<std::size_t>{1});
  CHECK(init.output_addresses == std::vector<std::int64_t>{all.output_addresses[1]});
  CHECK(init.image.outputs.size() == 2);
  REQUIRE(init.inputs.size() == 6);
  CHECK(init.inputs[0] == egraph::kNoId);  // X and Y feed only the GEMM
  CHECK(init.inputs[1] == egraph::kNoId);
  CHECK(init.inputs[2] != egraph::kNoId);
  CHECK(g.data(init.roots[0]).type == Shape(DType::u8, {48}));
  CHECK(g.num_nodes() < whole.num_nodes());
  const std::size_t bad[] = {2};
  TensorGraph g3{TensorAnalysis(&c2)};
  CHECK_THROWS_AS(add_kernel(g3, c2, kernel, bad), Error);
}

TEST_CASE("pii graphs of output groups merge into one graph, sharing input and constant leaves") {
  SelectionContext from = qkv_context();
  SelectionContext to = qkv_context();
  auto leaf = [](PiiNodeKind kind, std::int64_t index, Shape type) {
    PiiNode x;
    x.kind = kind;
    x.index = index;
    x.type = std::move(type);
    return x;
  };
  auto concat = [](std::vector<std::size_t> operands, Shape type) {
    PiiNode x;
    x.kind = PiiNodeKind::ConcatH;
    x.dimension = 0;
    x.type = std::move(type);
    x.operands = std::move(operands);
    return x;
  };
  const Shape four(DType::u8, {4}), eight(DType::u8, {8});
  // Part A (output 1): concat(input 0, constant 1 of `from`). Part B (output 0): concat(input 0, input 1).
  const std::uint8_t counting[] = {1, 2, 3, 4};
  const Literal ramp = Literal::from_bytes(four, counting);
  from.constants.intern(Literal(four));
  const std::int64_t seven = from.constants.intern(ramp);
  PiiNode constant = leaf(PiiNodeKind::Constant, seven, four);
  const PiiGraph a_from({leaf(PiiNodeKind::Input, 0, four), constant, concat({0, 1}, eight)}, {2});
  const PiiGraph a = translate_pii_graph(a_from, from.constants, to.constants);
  REQUIRE(a.nodes().size() == 3);
  const PiiNode& moved = a.node(1);
  REQUIRE(moved.kind == PiiNodeKind::Constant);
  CHECK(moved.index == 0);  // the first constant interned in `to`
  CHECK(to.constants[moved.index].bitwise_equal(ramp));
  const PiiGraph b({leaf(PiiNodeKind::Input, 0, four), leaf(PiiNodeKind::Input, 1, four), concat({0, 1}, eight)}, {2});
  const PiiGraph merged = merge_pii_graphs({&a, &b}, {{1}, {0}}, 2);
  CHECK(merged.nodes().size() == 5);  // input 0 once
  REQUIRE(merged.roots().size() == 2);
  const PiiNode& out0 = merged.node(merged.roots()[0]);
  const PiiNode& out1 = merged.node(merged.roots()[1]);
  CHECK(merged.node(out0.operands[1]).kind == PiiNodeKind::Input);     // output 0 is B's
  CHECK(merged.node(out1.operands[1]).kind == PiiNodeKind::Constant);  // output 1 is A's
  CHECK(out0.operands[0] == out1.operands[0]);                         // the shared input leaf
  CHECK_THROWS_AS(merge_pii_graphs({&a, &b}, {{0}, {0}}, 2), Error);   // output 0 twice
  CHECK_THROWS_AS(merge_pii_graphs({&a}, {{0}}, 2), Error);            // output 1 uncovered
}

TEST_CASE("module 1: unsupported operators and reducers are reported at their location") {
  SelectionContext c = qkv_context();
  TensorGraph g{TensorAnalysis(&c)};
  const auto kernel = hlo::parse_module(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT s = f32[4] sort(p), dimensions={0}
})");
  try {
    add_kernel(g, c, kernel);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Unsupported);
    CHECK(e.location().line == 4);
  }
  const auto odd_reduce = hlo::parse_module(R"(HloModule m
sub {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT d = f32[] subtract(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=sub
})");
  TensorGraph g2{TensorAnalysis(&c)};
  CHECK_THROWS_AS(add_kernel(g2, c, odd_reduce), Error);
}

// ---- IR->ISA rules --------------------------------------------------------------------------

#include "act/select/rules/isa_rules.hpp"

namespace {

const IsaRuleInfo& rule_info(const IsaRuleSet& set, std::string_view name) {
  for (const auto& info : set.infos)
    if (info->name == name) return *info;
  FAIL("no rule for " << name);
  throw 0;
}

std::size_t rule_index(const IsaRuleSet& set, std::string_view name) {
  for (std::size_t i = 0; i < set.infos.size(); ++i)
    if (set.infos[i]->name == name) return i;
  FAIL("no rule for " << name);
  return 0;
}

// bitcast-convert(reshape(Input u8[rows*128])) : bf16[rows,64], as module 1 builds it.
egraph::Id bf16_rows_from_hbm(TensorGraph& g, SelectionContext& c, std::int64_t parameter, std::int64_t rows) {
  const auto in = g.add(make_input(c.attributes, parameter, rows * 128));
  NodeAttributes r;
  r.shape = {rows, 64, 2};
  const auto bytes = g.add(make_operator(c.attributes, Opcode::Reshape, r), {in});
  NodeAttributes b;
  b.dtype = DType::bf16;
  return g.add(make_operator(c.attributes, Opcode::BitcastConvert, b), {bytes});
}


}  // namespace

TEST_CASE("IR->ISA rules: one per QKV instruction, patterns from the semantics DAG") {
  SelectionContext c = qkv_context();
  const IsaRuleSet set = isa_rules(c);
  CHECK(set.rules.size() == c.isa.instructions.size());
  CHECK(set.skipped.empty());
  CHECK(rule_info(set, "load_rm").pattern_text == "(bitcast-convert :to bf16 (reshape ?In1))");
  CHECK(rule_info(set, "load_cm").pattern_text ==
        "(transpose :dimensions {1,0} (bitcast-convert :to bf16 (reshape ?In1)))");
  // softmax: exponential(In1) is one shared pattern node
  const auto& softmax = rule_info(set, "softmax");
  CHECK(softmax.pattern_text ==
        "(divide (exponential ?In1) (broadcast :dimensions {0} (reduce :kind add :dimensions {1} (exponential ?In1) "
        "(constant 0))))");
  const auto& pattern = set.rules[rule_index(set, "softmax")].searcher();
  std::size_t operators = 0;
  for (const auto& n : pattern.nodes()) operators += n.is_var ? 0 : 1;
  CHECK(operators == 5);  // divide, exponential (once), broadcast, reduce, constant
  CHECK(pattern.nodes().size() == 6);
  CHECK(rule_info(set, "gemm").alpha_constraints.empty());
  CHECK(rule_info(set, "load_rm").alpha_constraints == std::vector<std::string>{"n >= 1", "n <= 128"});
}

TEST_CASE("IR->ISA rules: alpha is solved from the matched types and constraints reject") {
  SelectionContext c = qkv_context();
  const IsaRuleSet set = isa_rules(c);
  TensorGraph g{TensorAnalysis(&c)};
  const auto rows32 = bf16_rows_from_hbm(g, c, 0, 32);    // bf16[32,64]: n = 32
  const auto rows200 = bf16_rows_from_hbm(g, c, 1, 200);  // n = 200 > 128: rejected
  const auto rows128 = bf16_rows_from_hbm(g, c, 2, 128);  // n = 128: the largest load
  g.rebuild();
  const auto& load_rm = set.rules[rule_index(set, "load_rm")];
  egraph::MatchList matches;
  load_rm.search(g, matches);
  // the two valid bf16[n,64] classes, and (through the peeled searcher, which leaves out the
  // root bitcast-convert) their u8[n,64,2] operands
  CHECK(matches.size() == 4);
  load_rm.apply(g, matches);
  g.rebuild();
  using P = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;
  CHECK(pii_nodes(g, c, rows32) == P{{"load_rm", {32}}});
  CHECK(pii_nodes(g, c, rows200).empty());
  CHECK(pii_nodes(g, c, rows128) == P{{"load_rm", {128}}});
  CHECK(g.data(rows32).type == Shape(DType::bf16, {32, 64}));

  // load_cm needs n == 64: a transposed 32-row load does not match, a 64-row one does
  NodeAttributes t;
  t.dimensions = {1, 0};
  const auto cm32 = g.add(make_operator(c.attributes, Opcode::Transpose, t), {rows32});
  const auto cm64 = g.add(make_operator(c.attributes, Opcode::Transpose, t), {bf16_rows_from_hbm(g, c, 3, 64)});
  g.rebuild();
  const auto& load_cm = set.rules[rule_index(set, "load_cm")];
  load_cm.search(g, matches);
  load_cm.apply(g, matches);
  g.rebuild();
  CHECK(pii_nodes(g, c, cm32).empty());
  CHECK(pii_nodes(g, c, cm64) == P{{"load_cm", {64}}});
}

TEST_CASE("IR->ISA rules: a data slice longer than its buffer is no instruction") {
  // Gemmini's mvin_spad_unit only requires rows, cols >= 1; spad rows are 16 wide. A [1,256]
  // load used to become mvin_spad_unit(rows = 1, cols = 256), which no allocation can place.
  SelectionContext c;
  c.isa = isa::view<isa::Gemmini>();
  const IsaRuleSet set = isa_rules(c);
  const auto& bounds = rule_info(set, "mvin_spad_unit").slice_bounds;
  CHECK(std::find(bounds.begin(), bounds.end(), "(cols) <= 16") != bounds.end());
  CHECK(std::find(bounds.begin(), bounds.end(), "(rows) <= 16384") != bounds.end());
  TensorGraph g{TensorAnalysis(&c)};
  const auto s8_rows = [&](std::int64_t parameter, std::int64_t rows, std::int64_t cols) {
    const auto in = g.add(make_input(c.attributes, parameter, rows * cols));
    NodeAttributes r;
    r.shape = {rows, cols};
    const auto bytes = g.add(make_operator(c.attributes, Opcode::Reshape, r), {in});
    NodeAttributes b;
    b.dtype = DType::s8;
    return g.add(make_operator(c.attributes, Opcode::BitcastConvert, b), {bytes});
  };
  const auto wide = s8_rows(0, 1, 256), tile = s8_rows(1, 16, 16);
  g.rebuild();
  const auto& load = set.rules[rule_index(set, "mvin_spad_unit")];
  egraph::MatchList matches;
  load.search(g, matches);
  load.apply(g, matches);
  g.rebuild();
  using P = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;
  CHECK(pii_nodes(g, c, wide).empty());
  CHECK(pii_nodes(g, c, tile) == P{{"mvin_spad_unit", {16, 16}}});
}

TEST_CASE("IR->ISA rules: describe lists pattern, alpha solving and constraints") {
  SelectionContext c = qkv_context();
  const IsaRuleSet set = isa_rules(c);
  const auto text = describe(rule_info(set, "store_rm"), *c.isa.find_instruction("store_rm"));
  CHECK(text.find("n = In1.shape[0]") != std::string::npos);
  CHECK(text.find("Out0.shape[0] == n * 128") != std::string::npos);
  CHECK(text.find("a.shape[0] == n") != std::string::npos);
  CHECK(text.find("n <= 128") != std::string::npos);
}

// ---- identity instructions --------------------------------------------------------------------

#include "act/egraph/runner.hpp"
#include "act/select/rules/identity_rules.hpp"
#include "act/select/rules/rule_set.hpp"

namespace {

// (kind, buffer name) of the identity nodes in class `id`.
std::vector<std::string> identity_nodes(const TensorGraph& g, const SelectionContext& c, egraph::Id id) {
  std::vector<std::string> out;
  for (auto n : g.eclass(id).nodes) {
    const auto node = g.node(n);
    if (node.op.kind != NodeKind::SliceH && node.op.kind != NodeKind::ConcatH) continue;
    out.push_back(fmt::format("{}:{}", to_string(node.op.kind),
                              c.isa.buffers[static_cast<std::size_t>(c.attributes_of(node.op).index)].name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void run_rules(TensorGraph& g, const std::vector<TensorRewrite>& rules, egraph::RunnerOptions options = {}) {
  egraph::Runner<TensorLanguage, TensorAnalysis> runner(std::move(options));
  runner.run(g, rules);
}

}  // namespace

TEST_CASE("identity rules: slice^H and concat^H where the buffer's access structure allows") {
  SelectionContext c = qkv_context();
  TensorGraph g{TensorAnalysis(&c)};
  const auto x = bf16_rows_from_hbm(g, c, 0, 64);  // bf16[64,64]: fits d1 (<=128 rows) and d2 (<=64)
  const auto bytes = g.add(make_input(c.attributes, 1, 8192));
  NodeAttributes rows;
  rows.slice = {{0, 32, 1}, {0, 64, 1}};
  const auto top = g.add(make_operator(c.attributes, Opcode::Slice, rows), {x});
  NodeAttributes cols;
  cols.slice = {{0, 64, 1}, {0, 32, 1}};
  const auto left = g.add(make_operator(c.attributes, Opcode::Slice, cols), {x});  // cuts a unit dim
  NodeAttributes strided;
  strided.slice = {{0, 64, 2}, {0, 64, 1}};
  const auto even = g.add(make_operator(c.attributes, Opcode::Slice, strided), {x});
  NodeAttributes byte_range;
  byte_range.slice = {{128, 256, 1}};
  const auto hbm_part = g.add(make_operator(c.attributes, Opcode::Slice, byte_range), {bytes});
  NodeAttributes along0;
  along0.dimensions = {0};
  const auto both = g.add(make_operator(c.attributes, Opcode::Concatenate, along0), {x, x});  // 128 rows: d1 only
  const auto halves = g.add(make_operator(c.attributes, Opcode::Concatenate, along0), {top, top});  // 64 rows
  NodeAttributes along1;
  along1.dimensions = {1};
  const auto wide = g.add(make_operator(c.attributes, Opcode::Concatenate, along1), {top, top});  // unit dim
  run_rules(g, identity_rules(c));
  using V = std::vector<std::string>;
  CHECK(identity_nodes(g, c, top) == V{"slice^H:d1", "slice^H:d2"});
  CHECK(identity_nodes(g, c, left).empty());
  CHECK(identity_nodes(g, c, even).empty());
  CHECK(identity_nodes(g, c, hbm_part) == V{"slice^H:d0"});
  CHECK(identity_nodes(g, c, both) == V{"concat^H:d1"});
  CHECK(identity_nodes(g, c, halves) == V{"concat^H:d1", "concat^H:d2"});
  CHECK(identity_nodes(g, c, wide).empty());
}

TEST_CASE("identity rules: none along a dim every instruction addresses at 0 (Gemmini's columns)") {
  SelectionContext c;
  c.isa = isa::view<isa::Gemmini>();
  const isa::Buffer& spad = c.isa.buffers[1];  // [0] is HBM
  REQUIRE(spad.name == "spad");
  CHECK(access_dims_pinned_at_zero(c.isa, spad) == std::vector<bool>{false, true});
  CHECK(access_dims_pinned_at_zero(c.isa, c.isa.buffers[0]) == std::vector<bool>{false});  // HBM
  CHECK(access_dims_pinned_at_zero(isa::view<isa::Qkv>(), isa::view<isa::Qkv>().buffers[1]) == std::vector<bool>{false});
  TensorGraph g{TensorAnalysis(&c)};
  const auto in = g.add(make_input(c.attributes, 0, 256));
  NodeAttributes square;
  square.shape = {16, 16};
  const auto bytes = g.add(make_operator(c.attributes, Opcode::Reshape, square), {in});
  NodeAttributes s8;
  s8.dtype = DType::s8;
  const auto x = g.add(make_operator(c.attributes, Opcode::BitcastConvert, s8), {bytes});  // s8[16,16]: fits spad
  const auto slice = [&](std::int64_t row0, std::int64_t rows, std::int64_t col0, std::int64_t cols) {
    NodeAttributes a;
    a.slice = {{row0, row0 + rows, 1}, {col0, col0 + cols, 1}};
    return g.add(make_operator(c.attributes, Opcode::Slice, a), {x});
  };
  const auto lower_rows = slice(8, 8, 0, 16);
  const auto first_column = slice(0, 16, 0, 1);
  const auto later_column = slice(0, 16, 5, 1);
  NodeAttributes along0, along1;
  along0.dimensions = {0};
  along1.dimensions = {1};
  const auto tall = g.add(make_operator(c.attributes, Opcode::Concatenate, along0), {first_column, later_column});
  const auto wide = g.add(make_operator(c.attributes, Opcode::Concatenate, along1), {first_column, later_column});
  run_rules(g, identity_rules(c));
  using V = std::vector<std::string>;
  CHECK(identity_nodes(g, c, lower_rows) == V{"slice^H:spad"});
  CHECK(identity_nodes(g, c, first_column) == V{"slice^H:spad"});
  CHECK(identity_nodes(g, c, later_column).empty());  // it would start at column 5
  CHECK(identity_nodes(g, c, tall) == V{"concat^H:spad"});
  CHECK(identity_nodes(g, c, wide).empty());  // its second column would start at column 1
}

// ---- saturation on QKV attention --------------------------------------------------------------

TEST_CASE("constant folding: a folded value stays with its class while the e-graph changes") {
  SelectionContext c = qkv_context();
  TensorGraph g{TensorAnalysis(&c)};
  TensorBuilder b(g, c);
  Literal values(Shape(DType::s32, {2, 2}));
  for (std::int64_t k = 0; k < 4; ++k) values.set_int(k, k + 1);
  const egraph::Id x = b.constant(values);
  const egraph::Id negated = b.op(Opcode::Negate, NodeAttributes{}, {x});
  g.rebuild();
  ConstantFolder fold(g, c);
  const std::int64_t index = fold(negated);
  REQUIRE(index >= 0);
  for (std::int64_t k = 0; k < 4; ++k) CHECK(c.constants[index].get_int(k) == -(k + 1));
  // Rewriting adds an equal term and merges it in: the class keeps its value, now found under
  // its new canonical id (which may be either of the two).
  const egraph::Id minus_one = b.broadcast(b.scalar(DType::s32, -1), {2, 2});
  const egraph::Id product = b.op(Opcode::Multiply, NodeAttributes{}, {x, minus_one});
  g.unite(negated, product);
  g.rebuild();
  CHECK(fold(product) == index);
  CHECK(fold(negated) == index);
  // A class that is not constant-only does not fold.
  const egraph::Id input = g.add(make_input(c.attributes, 0, 16), {});
  const egraph::Id reshaped = b.bitcast(b.op(Opcode::Reshape, [] { NodeAttributes a; a.shape = {2, 2, 4}; return a; }(), {input}), DType::s32);
  g.rebuild();
  CHECK(fold(reshaped) == -1);
}

TEST_CASE("constant folding: a chain of constant classes is evaluated an operator at a time") {
  // Folding the top of a chain first, then each class below it (the order a request graph may
  // ask in), evaluates each negate once: the classes below enter each term as constants. A whole
  // term per class would evaluate the chain's operators 210 times (1 + 2 + ... + 20).
  SelectionContext c = qkv_context();
  TensorGraph g{TensorAnalysis(&c)};
  TensorBuilder b(g, c);
  Literal values(Shape(DType::s32, {2, 2}));
  for (std::int64_t k = 0; k < 4; ++k) values.set_int(k, k + 1);
  std::vector<egraph::Id> chain{b.constant(values)};
  constexpr int kLength = 20;
  for (int k = 0; k < kLength; ++k) chain.push_back(b.op(Opcode::Negate, NodeAttributes{}, {chain.back()}));
  g.rebuild();
  ConstantFolder fold(g, c);
  for (int k = kLength; k >= 1; --k) {
    const std::int64_t index = fold(chain[static_cast<std::size_t>(k)]);
    REQUIRE(index >= 0);
    const std::int64_t sign = k % 2 == 0 ? 1 : -1;
    for (std::int64_t e = 0; e < 4; ++e) CHECK(c.constants[index].get_int(e) == sign * (e + 1));
  }
  // Each fold: one negate of 4 elements over a 4-element constant.
  CHECK(fold.elements_evaluated() <= 2 * 4 * kLength);
}

namespace {
// The child class of the node of `cls` with `opcode` (one child), or kNoId.
egraph::Id movement_child(const TensorGraph& g, egraph::Id cls, Opcode opcode) {
  for (const egraph::Id n : g.class_nodes(cls)) {
    const auto node = g.node(n);
    if (node.op.kind == NodeKind::Operator && node.op.opcode == opcode && node.children.size() == 1)
      return g.find(node.children[0]);
  }
  return egraph::kNoId;
}
}  // namespace

TEST_CASE("undo_movement: on a root chain the operand it builds also carries the forward movement to the class it undid") {
  // An IR->ISA applier builds a store's Pii (its bytes, u8[128]) and undoes the store's root
  // chain reshape(bitcast-convert(x)) to reach the matched s8[8,16] value. A store of that value
  // matches reshape(bitcast-convert ?x) at the bytes: both forward nodes must be there.
  SelectionContext c = qkv_context();
  TensorGraph g{TensorAnalysis(&c)};
  TensorBuilder b(g, c);
  const egraph::Id bytes = g.add(make_input(c.attributes, 0, 128), {});
  const egraph::Id rows = b.undo_movement(bytes, Opcode::Reshape, {}, DType::u8, {8, 16}, true);
  const egraph::Id value = b.undo_movement(rows, Opcode::BitcastConvert, {}, DType::s8, {8, 16}, true);
  g.rebuild();
  CHECK(g.data(rows).type.same_type(Shape(DType::u8, {8, 16})));
  CHECK(g.data(value).type.same_type(Shape(DType::s8, {8, 16})));
  // The inverse nodes: value = bitcast-convert(rows), rows = reshape(bytes).
  CHECK(movement_child(g, value, Opcode::BitcastConvert) == g.find(rows));
  CHECK(movement_child(g, rows, Opcode::Reshape) == g.find(bytes));
  // The forward nodes: bytes = reshape(rows), rows = bitcast-convert(value).
  CHECK(movement_child(g, bytes, Opcode::Reshape) == g.find(rows));
  CHECK(movement_child(g, rows, Opcode::BitcastConvert) == g.find(value));
  // A transpose is undone by its inverse permutation and redone by its own.
  const egraph::Id square = b.bitcast(b.reshape(g.add(make_input(c.attributes, 1, 6), {}), {2, 3}), DType::s8);
  const egraph::Id before = b.undo_movement(square, Opcode::Transpose, {1, 0}, DType::s8, {3, 2}, true);
  g.rebuild();
  CHECK(g.data(before).type.same_type(Shape(DType::s8, {3, 2})));
  CHECK(movement_child(g, square, Opcode::Transpose) == g.find(before));
  CHECK(movement_child(g, before, Opcode::Transpose) == g.find(square));
  // A class that already holds the movement is answered by its operand; nothing is added.
  const std::size_t nodes = g.num_nodes();
  CHECK(b.undo_movement(value, Opcode::BitcastConvert, {}, DType::u8, {8, 16}, true) == g.find(rows));
  CHECK(g.num_nodes() == nodes);
  // On an input chain only the inverse node is built.
  const egraph::Id other = g.add(make_input(c.attributes, 2, 128), {});
  const egraph::Id other_rows = b.undo_movement(other, Opcode::Reshape, {}, DType::u8, {8, 16}, false);
  g.rebuild();
  CHECK(movement_child(g, other_rows, Opcode::Reshape) == g.find(other));
  CHECK(movement_child(g, other, Opcode::Reshape) == egraph::kNoId);
}

TEST_CASE("saturation: attention.hlo on QKV has every instruction of the expected program") {
  SelectionContext c = qkv_context();
  TensorGraph g{TensorAnalysis(&c)};
  const auto kernel = testing::load_kernel(shared("kernels/qkv/attention.hlo"));
  const InitialGraph init = add_kernel(g, c, kernel);

  const RuleSet rules = rule_set(c);
  CHECK(rules.isa_rule_count == 7);
  CHECK(rules.identity_rule_count == 6);
  egraph::RunnerOptions options;
  // load/store/gemm/softmax match the initial e-graph; mov needs copy-introduction first (one
  // iteration), so three iterations are enough whatever else the axioms add.
  options.iteration_limit = 3;
  options.node_limit = 20'000;
  options.time_limit = std::chrono::duration<double>(20.0);
  egraph::Runner<TensorLanguage, TensorAnalysis> runner(options);
  const auto report = runner.run(g, rules.rules);
  INFO("stop: " << to_string(report.stop_reason) << ", nodes " << g.num_nodes() << ", iterations "
                << report.iterations.size());

  // Collect every pii in the e-graph: name(alpha) -> classes.
  std::map<std::string, std::vector<egraph::Id>> found;
  for (auto cls : g.classes())
    for (const auto& [name, alpha] : pii_nodes(g, c, cls))
      found[fmt::format("{}({})", name, fmt::join(alpha, ","))].push_back(cls);
  for (const auto& [k, v] : found) UNSCOPED_INFO(k << " in " << v.size() << " classes");

  // Q and V are bitcast-convert(reshape(Input)): load_rm(64) on their Input classes
  NodeAttributes r;
  r.shape = {64, 64, 2};
  NodeAttributes b;
  b.dtype = DType::bf16;
  auto logical = [&](std::size_t p) {
    const auto bytes = g.lookup(make_operator(c.attributes, Opcode::Reshape, r), {init.inputs[p]});
    REQUIRE(bytes);
    const auto v = g.lookup(make_operator(c.attributes, Opcode::BitcastConvert, b), {*bytes});
    REQUIRE(v);
    return *v;
  };
  using P = std::pair<std::string, std::vector<std::int64_t>>;
  auto has = [&](egraph::Id cls, const P& want) {
    const auto all = pii_nodes(g, c, cls);
    return std::find(all.begin(), all.end(), want) != all.end();
  };
  CHECK(has(logical(0), P{"load_rm", {64}}));
  CHECK(has(logical(2), P{"load_rm", {64}}));
  NodeAttributes t;
  t.dimensions = {1, 0};
  const auto k_t = g.lookup(make_operator(c.attributes, Opcode::Transpose, t), {logical(1)});
  REQUIRE(k_t);
  CHECK(has(*k_t, P{"load_cm", {64}}));
  CHECK(has(init.roots[0], P{"store_rm", {64}}));
  REQUIRE(found.count("gemm()"));
  CHECK(found["gemm()"].size() >= 2);  // scores and output
  REQUIRE(found.count("softmax(64)"));
  REQUIRE(found.count("mov(64)"));
  // softmax sits on probs = divide(exp(scores), ...), whose exp child is exp(gemm class)
  const auto probs = found["softmax(64)"].front();
  bool probs_feeds_gemm = false;
  for (auto cls : found["gemm()"])
    for (auto n : g.eclass(cls).nodes) {
      const auto node = g.node(n);
      if (node.op.kind == NodeKind::Pii && node.children.size() == 2 && g.find(node.children[0]) == g.find(probs))
        probs_feeds_gemm = true;
    }
  CHECK(probs_feeds_gemm);
  CHECK(has(probs, P{"mov", {64}}));
}

TEST_CASE("describe_rules lists generated rules and kept axioms") {
  const std::string text = describe_rules(isa::view<isa::Qkv>());
  CHECK(text.find("ISA qkv: 7 IR->ISA rules, 6 identity rules") != std::string::npos);
  CHECK(text.find("isa:softmax") == std::string::npos);  // rules are listed by instruction name
  CHECK(text.find("softmax:\n  pattern    (divide (exponential ?In1)") != std::string::npos);
  CHECK(text.find("identity:slice^H:d1") != std::string::npos);
}

TEST_CASE("axiom filter: keeps axioms building useful operators, to a fixed point") {
  IsaRuleSet isa;
  auto info = std::make_shared<IsaRuleInfo>();
  info->opcodes = {Opcode::Dot};
  isa.infos.push_back(info);
  auto axiom = [](std::string name, std::vector<Opcode> lhs, std::vector<Opcode> rhs) {
    AxiomInfo a;
    a.name = std::move(name);
    a.lhs_opcodes = std::move(lhs);
    a.rhs_opcodes = std::move(rhs);
    return a;
  };
  const std::vector<AxiomInfo> axioms{
      axiom("exp-to-log", {Opcode::Exponential}, {Opcode::Log}),        // log is never useful: dropped
      axiom("neg-to-exp", {Opcode::Negate}, {Opcode::Exponential}),     // exp never becomes useful: dropped
      axiom("add-to-multiply", {Opcode::Add}, {Opcode::Multiply}),       // multiply useful after mul-to-dot: kept
      axiom("mul-to-dot", {Opcode::Multiply, Opcode::Transpose}, {Opcode::Dot}),  // builds dot: kept
      axiom("reshape-to-transpose", {Opcode::Reshape}, {Opcode::Transpose}),      // transpose became useful: kept
      axiom("slice-of-slice", {Opcode::Slice}, {}),                               // unites only: kept
  };
  CHECK(filter_axioms(axioms, isa) == std::vector<std::size_t>{2, 3, 4, 5});
}

namespace {
// Whether `act rules` lists `axiom` among the kept axioms of the ISA.
bool axiom_kept(const isa::IsaView& view, const std::string& axiom) {
  const std::string text = describe_rules(view);
  const std::size_t dropped = text.find("IR->IR axioms dropped by the filter:");
  // Its own line, "  name (family)" when kept, "  name" when dropped (not slice-of-logistic's
  // for slice-of-log).
  const std::string line = "\n  " + axiom;
  const auto line_ends = [&](std::size_t end) { return end == text.size() || text[end] == ' ' || text[end] == '\n'; };
  std::size_t at = text.find(line);
  while (at != std::string::npos && !line_ends(at + line.size())) at = text.find(line, at + 1);
  REQUIRE(at != std::string::npos);
  return dropped == std::string::npos || at < dropped;
}
}  // namespace

TEST_CASE("axiom filter: a multiply of two data values only where an instruction multiplies two inputs") {
  // Gemmini multiplies only to scale a load by a constant, AMX multiplies two registers, QKV
  // never multiplies: the outer product as a multiply is kept on AMX alone.
  const auto kept = [](const isa::IsaView& view) { return axiom_kept(view, "dot-unit-contracting-as-multiply"); };
  CHECK_FALSE(kept(isa::view<isa::Gemmini>()));
  CHECK_FALSE(kept(isa::view<isa::Qkv>()));
  CHECK(kept(isa::view<isa::Amx>()));
  const auto multiplies_inputs = [](const isa::IsaView& view) {
    const auto ops = rule_set_detail::binary_operators_over_inputs(view);
    return std::find(ops.begin(), ops.end(), Opcode::Multiply) != ops.end();
  };
  CHECK_FALSE(multiplies_inputs(isa::view<isa::Gemmini>()));
  CHECK_FALSE(multiplies_inputs(isa::view<isa::Qkv>()));
  CHECK(multiplies_inputs(isa::view<isa::Amx>()));
  const auto gemmini_ops = rule_set_detail::binary_operators_over_inputs(isa::view<isa::Gemmini>());
  CHECK(std::find(gemmini_ops.begin(), gemmini_ops.end(), Opcode::Dot) != gemmini_ops.end());  // matmul8
}

TEST_CASE("axiom filter: copy-introduction only where an instruction's pattern copies") {
  // QKV's mov and AMX's vmovaps are copies; Gemmini moves data only through loads, stores and
  // matmuls, so a copy node in every class would serve only the axioms that push operators
  // through copies or drop them. Copies the kernel writes are still dropped (copy-elimination).
  const auto kept = [](const isa::IsaView& view, const char* axiom) { return axiom_kept(view, axiom); };
  CHECK(kept(isa::view<isa::Qkv>(), "copy-introduction"));
  CHECK(kept(isa::view<isa::Amx>(), "copy-introduction"));
  CHECK_FALSE(kept(isa::view<isa::Gemmini>(), "copy-introduction"));
  CHECK(kept(isa::view<isa::Gemmini>(), "copy-elimination"));

  IsaRuleSet isa;
  auto info = std::make_shared<IsaRuleInfo>();
  info->opcodes = {Opcode::Dot};
  isa.infos.push_back(info);
  AxiomInfo wrap;
  wrap.name = "wrap";
  wrap.rhs_opcodes = {Opcode::Copy};
  wrap.wraps_in_instruction_operator = true;
  AxiomInfo push;  // makes Copy useful to the fixed point, not to the wrapping axiom
  push.name = "slice-through-copy";
  push.lhs_opcodes = {Opcode::Slice, Opcode::Copy};
  push.rhs_opcodes = {Opcode::Copy, Opcode::Slice};
  CHECK(filter_axioms({wrap, push}, isa) == std::vector<std::size_t>{1});
  info->opcodes.push_back(Opcode::Copy);
  CHECK(filter_axioms({wrap, push}, isa) == std::vector<std::size_t>{0, 1});
}

TEST_CASE("axiom filter: transpose-as-dot only where an instruction transposes or contracts non-canonically") {
  // Gemmini's matmuls all contract a's last dim with b's first and it never transposes: the
  // dot(I, x) contracting x's dim 1 that transpose-as-dot builds feeds no instruction. QKV has
  // transposing loads, AMX transposes in its tile semantics.
  const auto kept = [](const isa::IsaView& view) { return axiom_kept(view, "transpose-as-dot"); };
  CHECK_FALSE(kept(isa::view<isa::Gemmini>()));
  CHECK(kept(isa::view<isa::Qkv>()));
  CHECK(kept(isa::view<isa::Amx>()));
  CHECK_FALSE(rule_set_detail::some_instruction_transposes(isa::view<isa::Gemmini>()));
  CHECK(rule_set_detail::some_instruction_transposes(isa::view<isa::Qkv>()));
  CHECK(rule_set_detail::some_instruction_transposes(isa::view<isa::Amx>()));

  // Canonical: a's last dim with b's first non-batch dim, batch dims leading.
  const auto canonical = [](std::string_view semantics) {
    hlo::SemanticsOutline sem;
    REQUIRE(hlo::outline_semantics(semantics, sem).ok());
    return rule_set_detail::is_canonical_dot(sem, sem.statements[sem.count - 1]);
  };
  CHECK(canonical(R"(ENTRY d {
  %a = s8[4,16] parameter(0)
  %b = s8[16,8] parameter(1)
  ROOT %o = s32[4,8] dot(%a, %b)
})"));
  CHECK(canonical(R"(ENTRY d {
  %a = s8[2,4,16] parameter(0)
  %b = s8[2,16,8] parameter(1)
  ROOT %o = s32[2,4,8] dot(%a, %b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})"));
  CHECK_FALSE(canonical(R"(ENTRY d {
  %a = s8[4,16] parameter(0)
  %b = s8[8,16] parameter(1)
  ROOT %o = s32[4,8] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})"));
  CHECK_FALSE(canonical(R"(ENTRY d {
  %a = s8[16,4] parameter(0)
  %b = s8[16,8] parameter(1)
  ROOT %o = s32[4,8] dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})"));
}
