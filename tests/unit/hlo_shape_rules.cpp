// XLA's shape rules (hlo/shape_rules.hpp), evaluated at compile time as ISA validation does and
// at run time as the parser does, and the constexpr semantics outline (hlo/semantics_outline.hpp).
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "act/hlo/builder.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/semantics_outline.hpp"
#include "act/hlo/shape_rules.hpp"
#include "act/isa/qkv.hpp"

using namespace act;
using namespace act::hlo;
namespace rules = act::hlo::shape_rules;
using rules::Problem;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

constexpr bool dims_are(const rules::ResultType& r, std::initializer_list<std::int64_t> dims) {
  if (!r.ok() || r.rank != dims.size()) return false;
  std::size_t i = 0;
  for (auto d : dims)
    if (r.dims[i++] != d) return false;
  return true;
}

// ---- the rules in constant expressions

constexpr std::array<std::int64_t, 3> kBatched{4, 8, 64};
constexpr std::array<std::int64_t, 3> kRhs{4, 64, 16};
constexpr std::array<std::int64_t, 1> kZero{0}, kOne{1}, kTwo{2};

constexpr rules::DotDims batched_dot{kZero, kTwo, kZero, kOne};
static_assert(dims_are(rules::dot({DType::bf16, kBatched}, {DType::bf16, kRhs}, batched_dot, DType::f32), {4, 8, 16}));
static_assert(rules::dot({DType::bf16, kBatched}, {DType::bf16, kRhs}, batched_dot, DType::f32).dtype == DType::f32);
// Contracting 64 with 16 (rhs dim 2): the finding names the pair and both sizes.
constexpr rules::DotDims bad_dot{kZero, kTwo, kZero, kTwo};
static_assert(rules::dot({DType::bf16, kBatched}, {DType::bf16, kRhs}, bad_dot, DType::f32).finding.problem ==
              Problem::ContractingSizesDiffer);
static_assert(rules::dot({DType::bf16, kBatched}, {DType::bf16, kRhs}, bad_dot, DType::f32).finding.value == 64);
static_assert(rules::dot({DType::bf16, kBatched}, {DType::bf16, kRhs}, bad_dot, DType::f32).finding.bound == 16);
// A dim used as batch and contracting at once.
constexpr rules::DotDims twice{kZero, kZero, kZero, kOne};
static_assert(rules::dot({DType::bf16, kBatched}, {DType::bf16, kRhs}, twice, DType::f32).problem() ==
              Problem::DimensionRepeated);

// broadcast-in-dim: a size-1 operand dim may grow; other sizes must match.
constexpr std::array<std::int64_t, 2> kRow{1, 16}, kTile{8, 16}, kWide{8, 32};
constexpr std::array<std::int64_t, 2> kIdentity{0, 1};
static_assert(dims_are(rules::broadcast({DType::f32, kRow}, {DType::f32, kTile}, kIdentity), {8, 16}));
static_assert(rules::broadcast({DType::f32, kRow}, {DType::f32, kWide}, kIdentity).problem() ==
              Problem::BroadcastSizeMismatch);
static_assert(rules::broadcast({DType::f32, kRow}, {DType::s32, kTile}, kIdentity).problem() == Problem::ElementTypesDiffer);

// bitcast-convert between widths adds or removes the minor-most ratio dim.
constexpr std::array<std::int64_t, 1> kTen{10};
constexpr std::array<std::int64_t, 2> kTenByFour{10, 4}, kTenByTwo{10, 2};
static_assert(dims_are(rules::bitcast_convert_to({DType::f32, kTen}, DType::u8), {10, 4}));
static_assert(dims_are(rules::bitcast_convert_to({DType::u8, kTenByFour}, DType::f32), {10}));
static_assert(rules::bitcast_convert({DType::f32, kTen}, {DType::u8, kTenByTwo}).problem() == Problem::RatioDimensionWrong);
static_assert(rules::bitcast_convert({DType::f32, kTen}, {DType::u8, kTen}).problem() == Problem::RatioDimensionMissing);

// Overflow-safe sizes: a pad or concatenation beyond int64 is a finding, never UB.
constexpr std::array<std::int64_t, 1> kHuge{kMax / 2 + 1};
constexpr std::array<PadDimension, 1> kPadHigh{{{0, kMax, 0}}}, kInterior{{{0, 0, 3}}}, kShrink{{{-20, 0, 0}}};
constexpr std::array<std::int64_t, 0> kScalar{};
static_assert(rules::pad({DType::f32, kTen}, {DType::f32, kScalar}, kPadHigh).problem() == Problem::SizeOverflow);
static_assert(rules::pad({DType::f32, kHuge}, {DType::f32, kScalar}, kInterior).problem() == Problem::SizeOverflow);
static_assert(rules::pad({DType::f32, kTen}, {DType::f32, kScalar}, kShrink).problem() == Problem::NegativeSize);
static_assert(dims_are(rules::pad({DType::f32, kTen}, {DType::f32, kScalar}, kInterior), {37}));
constexpr std::array<rules::TensorType, 2> kHalves{{{DType::f32, kHuge}, {DType::f32, kHuge}}};
static_assert(rules::concatenate(kHalves, kZero).problem() == Problem::SizeOverflow);
constexpr std::array<std::int64_t, 2> kHugeByHuge{kMax / 2 + 1, 4};
static_assert(rules::reshape({DType::f32, kHugeByHuge}, {DType::f32, kTen}).problem() == Problem::SizeOverflow);

// slice: ceil((limit - start) / stride), also near INT64_MAX.
constexpr std::array<std::int64_t, 1> kMaxDim{kMax};
constexpr std::array<SliceRange, 1> kStrided{{{1, 10, 4}}}, kFar{{{0, kMax, kMax - 1}}};
static_assert(dims_are(rules::slice({DType::f32, kTen}, kStrided), {3}));
static_assert(dims_are(rules::slice({DType::f32, kMaxDim}, kFar), {2}));

// An unknown size (< 0) agrees with any size and stays unknown.
constexpr std::array<std::int64_t, 2> kUnknownRows{-1, 64}, kRows{8, 64};
static_assert(dims_are(rules::elementwise_binary({DType::f32, kUnknownRows}, {DType::f32, kRows}), {-1, 64}));

// The dispatcher: operand counts, and the rules by opcode.
constexpr std::array<rules::TensorType, 1> kOneOperand{{{DType::f32, kRows}}};
static_assert(rules::infer(Opcode::Add, kOneOperand, {}).problem() == Problem::OperandCount);
static_assert(rules::infer(Opcode::Reshape, kOneOperand, {}).problem() == Problem::ResultTypeRequired);
static_assert(rules::infer(Opcode::Sort, kOneOperand, {}).problem() == Problem::NotModelled);
static_assert(rules::infer(Opcode::Exponential, kOneOperand, {}).ok());

}  // namespace

TEST_CASE("shape rules: findings become the parser's located messages", "[hlo][shape_rules]") {
  auto message = [](std::string_view text) {
    try {
      parse_module(text);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Shape);
      return std::string(e.message());
    }
    return std::string("no error");
  };
  CHECK(message("ENTRY e {\n  a = f32[4] parameter(0)\n  ROOT p = f32[4] pad(a, a), padding=0_1\n}") ==
        "pad: padding value must be a scalar, got f32[4]");
  CHECK(message("ENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT p = f32[4] pad(a, z), padding=0_9223372036854775807\n}") ==
        "pad: the size of result dimension 0 does not fit in 64 bits");
  CHECK(message("ENTRY e {\n  a = f32[4,4] parameter(0)\n  i = s32[3] parameter(1)\n"
                "  ROOT d = f32[2,2] dynamic-slice(a, i), dynamic_slice_sizes={2,2}\n}") ==
        "dynamic-slice: expects 2 start indices for an operand of rank 2, got 3");
  CHECK(message("ENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n"
                "  ROOT d = f32[2,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={0}, rhs_batch_dims={0}, "
                "rhs_contracting_dims={0}\n}") == "dot: lhs dimension 0 appears twice");
}

TEST_CASE("shape rules: the builder and the interpreter apply them", "[hlo][shape_rules]") {
  ComputationBuilder b("main");
  const int x = b.parameter(Shape(DType::f32, {8, 64}));
  const int y = b.parameter(Shape(DType::f32, {32, 16}));
  try {
    b.matmul(x, y, DType::f32);
    FAIL("expected a shape error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Shape);
    CHECK(e.message() == "builder: dot: lhs contracting dim 1 has size 64 but rhs contracting dim 0 has size 32");
  }
  CHECK(b.shape(b.pad(x, b.constant(scalar_literal(DType::f32, 0)), {{1, 1, 0}, {0, 0, 1}})).same_type(
      Shape(DType::f32, {10, 127})));
}

TEST_CASE("semantics outline: statements, attributes and the shorthand, in constant expressions", "[hlo][outline]") {
  static constexpr std::string_view text = R"(ENTRY mm {
  a = bf16[`n`, 64]{1,0} parameter(0);   // a layout, a comment, no '%'
  %b = bf16[64, k] parameter(1)
  %t = bf16[k, 64] transpose(%b), dimensions=[2, 1]
  %z = bf16[] constant(0)
  %w = bf16[64, k] broadcast(%z), dimensions={}
  %c = f32[`n`, k] dot(a, %w)
  ROOT %r = f32[`n`] reduce_add(%c), dimensions={1}, metadata={op_name="x, y"}
})";
  static constexpr auto outline = [] {
    SemanticsOutline o;
    const OutlineError e = outline_semantics(text, o);
    return std::pair{o, e};
  }();
  STATIC_REQUIRE(outline.second.ok());
  const SemanticsOutline& o = outline.first;
  CHECK(o.name == "mm");
  REQUIRE(o.count == 7);
  CHECK(o.statements[0].name == "a");
  CHECK(o.statements[0].dims[0].expression == "n");
  CHECK(o.statements[0].dims[1].size == 64);
  CHECK(o.statements[1].dims[1].expression == "k");  // a bare name is an expression too
  const OutlineStatement& t = o.statements[2];
  CHECK(t.opcode == Opcode::Transpose);
  CHECK(std::vector<std::int64_t>(t.attribute("dimensions").begin(), t.attribute("dimensions").end()) ==
        std::vector<std::int64_t>{1, 0});  // 1-based shorthand, made 0-based
  const OutlineStatement& dot = o.statements[5];
  CHECK(dot.operand_count == 2);
  CHECK(dot.operands[0] == 0);
  CHECK(dot.attribute("lhs_contracting_dims")[0] == 1);  // `dot(a, b)`: a's last with b's first
  CHECK(dot.attribute("rhs_contracting_dims")[0] == 0);
  const OutlineStatement& r = o.statements[6];
  CHECK(r.root);
  CHECK(r.reduce_add);
  CHECK(r.opcode == Opcode::Reduce);
  CHECK(r.opcode_text == "reduce_add");
  CHECK(r.attribute("dimensions")[0] == 1);
}

TEST_CASE("semantics outline: located errors", "[hlo][outline]") {
  auto error = [](std::string_view text) {
    SemanticsOutline o;
    return outline_semantics(text, o);
  };
  OutlineError e = error("ENTRY x {\n  %a = f32[4] parameter(0)\n  ROOT %b = f32[4] negat(%a)\n}");
  CHECK(e.what == "unknown opcode");
  CHECK(e.quoted == "negat");
  CHECK(e.line == 3);
  CHECK(e.column == 20);
  e = error("ENTRY x {\n  %a = f32[4] parameter(0)\n  ROOT %b = f32[4] negate(%c)\n}");
  CHECK(e.what == "operand is not defined by an earlier statement:");
  CHECK(e.quoted == "c");
  e = error("ENTRY x {\n  %a = f32[4] parameter(0)\n  ROOT %b = f32[4] transpose(%a), dimensions={x}\n}");
  CHECK(e.what == "expected a list of integers");
  e = error("ENTRY x {\n  %a = f32[`n] parameter(0)\n}");
  CHECK(e.what == "unterminated backtick expression");
  e = error("ENTRY x {\n  %a = f32[4] parameter(0)\n");
  CHECK(e.what == "missing '}' at the end of the semantics");
}

namespace {

// What the run-time ISA check says about QKV with mov's semantics replaced ("" when valid).
std::string qkv_with_mov(std::string_view semantics, act::isa::List<std::string_view, act::isa::kMaxConstraints> constraints = {}) {
  std::vector<isa::Instruction> instructions(isa::Qkv::instructions.begin(), isa::Qkv::instructions.end());
  for (auto& i : instructions)
    if (i.name == "mov") {
      i.semantics = semantics;
      i.constraints = constraints;
    }
  try {
    isa::check(isa::IsaView{"qkv", isa::Qkv::buffers, {}, instructions});
  } catch (const Error& e) {
    return std::string(e.message());
  }
  return "";
}

}  // namespace

TEST_CASE("shape rules: ISA semantics statements get the type the rules give", "[isa][shape_rules]") {
  // Bare attribute names as dims, and a size-1 dim that a broadcast grows (XLA's broadcast-in-dim).
  CHECK(qkv_with_mov(R"(ENTRY mov {
  %In1 = bf16[n, 64] parameter(0)
  %row = bf16[1, 64] reshape(%In1)
  ROOT %Out0 = bf16[n, 64] broadcast(%row), dimensions={0,1}
})",
                     {"n == 1"}) == "");
  CHECK_THAT(qkv_with_mov(R"(ENTRY mov {
  %In1 = bf16[`n`, 64] parameter(0)
  ROOT %Out0 = bf16[`n`, 64] concatenate(%In1, %In1), dimensions={0}
})"),
             Catch::Contains("instruction 'mov' (qkv.hpp:") &&
                 Catch::Contains("semantics line 3 'ROOT %Out0 = bf16[`n`, 64] concatenate(%In1, %In1), dimensions={0}': "
                                 "concatenate gives [2,64] from its operands, but the statement says [1,64] (with every alpha = 1)"));
  CHECK_THAT(qkv_with_mov(R"(ENTRY mov {
  %In1 = bf16[`n`, 64] parameter(0)
  ROOT %Out0 = bf16[`n`, 64] select(%In1, %In1, %In1)
})"),
             Catch::Contains("select: predicate 'In1' is not pred"));
  CHECK_THAT(qkv_with_mov(R"(ENTRY mov {
  %In1 = bf16[`n`, 64] parameter(0)
  ROOT %Out0 = bf16[`n`, 64] concatenate(), dimensions={0}
})"),
             Catch::Contains("semantics line 3 'ROOT %Out0 = bf16[`n`, 64] concatenate(), dimensions={0}': "
                             "'concatenate' takes at least 1 operand(s) but has 0"));
}
