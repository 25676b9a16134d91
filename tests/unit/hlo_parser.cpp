// The HLO text front end: lexer, parser (both dialects), shape checks, printer round trips.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "act/hlo/lexer.hpp"
#include "act/hlo/module_equal.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/printer.hpp"

using namespace act;
using namespace act::hlo;

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> hlo_files(const std::filesystem::path& dir, bool recursive) {
  std::vector<std::filesystem::path> files;
  auto add = [&](const std::filesystem::path& p) {
    if (p.extension() == ".hlo") files.push_back(p);
  };
  if (recursive) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) add(e.path());
  } else {
    for (const auto& e : std::filesystem::directory_iterator(dir)) add(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const Instruction& find(const Computation& c, std::string_view name) {
  const int i = c.find(name);
  REQUIRE(i >= 0);
  return c.instructions[static_cast<std::size_t>(i)];
}

// Parses `text`, expecting an act::Error of `kind` at line:column whose message contains `part`.
void expect_error(std::string_view text, ErrorKind kind, int line, int column, std::string_view part) {
  try {
    parse_module(text);
    FAIL("expected an error: " << part);
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.kind() == kind);
    CHECK(e.location().line == line);
    CHECK(e.location().column == column);
    CHECK(e.message().find(part) != std::string::npos);
  }
}

// A module whose print re-parses to a structurally equal module that prints the same.
void check_round_trip(const Module& m) {
  const std::string printed = print_module(m);
  const Module again = parse_module(printed);
  CHECK(structurally_equal(m, again));
  CHECK(print_module(again) == printed);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Lexer

constexpr int count_tokens(std::string_view text) {
  Lexer lex(text);
  int n = 0;
  for (Token t = lex.next(); t.kind != TokenKind::End && t.kind != TokenKind::Error; t = lex.next()) ++n;
  return n;
}
constexpr TokenKind kind_at(std::string_view text, int index) {
  Lexer lex(text);
  Token t = lex.next();
  for (int i = 0; i < index; ++i) t = lex.next();
  return t.kind;
}
// `%add.1 = f32[4]{0} add(%a, %b), dimensions={0}` is 20 tokens ("dimensions=" is one).
static_assert(count_tokens("%add.1 = f32[4]{0} add(%a, %b), dimensions={0}") == 20);
static_assert(kind_at("%add.1 = f32[4]", 0) == TokenKind::Name);
static_assert(kind_at("get-tuple-element.3 /*index=5*/ x", 1) == TokenKind::Identifier);
static_assert(kind_at("dimensions={0}", 0) == TokenKind::AttributeName);
static_assert(kind_at("-inf", 0) == TokenKind::Float);
static_assert(kind_at("nan", 0) == TokenKind::Float);
static_assert(kind_at("1.5e-3", 0) == TokenKind::Float);
static_assert(kind_at("-42", 0) == TokenKind::Integer);
static_assert(kind_at("u8[`n * 128`]", 2) == TokenKind::Backtick);
static_assert(kind_at("x -> y", 1) == TokenKind::Arrow);
static_assert(kind_at("/* unterminated", 0) == TokenKind::Error);

TEST_CASE("lexer: positions, names and context-driven tokens", "[hlo][lexer]") {
  Lexer lex("  %a.b-c = f32[2]\n  ROOT x");
  Token t = lex.next();
  CHECK(t.kind == TokenKind::Name);
  CHECK(t.text == "a.b-c");
  CHECK(t.line == 1);
  CHECK(t.column == 3);
  lex.next();  // =
  lex.next();  // f32
  lex.next();  // [
  t = lex.next();
  CHECK(t.kind == TokenKind::Integer);
  CHECK(t.text == "2");
  lex.next();  // ]
  t = lex.next();
  CHECK(t.text == "ROOT");
  CHECK(t.line == 2);
  CHECK(t.column == 3);

  Lexer pad("0_0x1_2_1, next");
  t = pad.next_word();
  CHECK(t.kind == TokenKind::Word);
  CHECK(t.text == "0_0x1_2_1");
  CHECK(pad.next().kind == TokenKind::Comma);

  Lexer raw(R"({"a":"}",b:[1,2]} , next)");
  t = raw.next_raw_value();
  CHECK(t.kind == TokenKind::RawValue);
  CHECK(t.text == R"({"a":"}",b:[1,2]})");

  Lexer groups("[2,2]<=[4], x");
  CHECK(groups.next_raw_value().text == "[2,2]<=[4]");

  Lexer open("{a, {b}");
  t = open.next_raw_value();
  CHECK(t.kind == TokenKind::Error);
  CHECK(t.text == "unexpected end of input, expected '}'");
}

// ---------------------------------------------------------------------------------------------
// Whole corpus

TEST_CASE("every corpus module and kernel parses and round-trips through the printer", "[hlo][corpus]") {
  const std::filesystem::path shared = ACT_SHARED_DIR;
  auto files = hlo_files(shared / "corpus" / "hlo", false);
  const auto corpus_count = files.size();
  const auto kernels = hlo_files(shared / "kernels", true);
  files.insert(files.end(), kernels.begin(), kernels.end());
  REQUIRE(corpus_count >= 350);
  REQUIRE(kernels.size() >= 6);

  // Constructs this parser rejects on purpose (with a located error). Currently none.
  const std::vector<std::string> unsupported = {};
  std::size_t parsed = 0, rejected = 0;
  for (const auto& file : files) {
    INFO(file.string());
    const std::string text = read_file(file);
    const bool expect_rejection =
        std::find(unsupported.begin(), unsupported.end(), file.filename().string()) != unsupported.end();
    if (expect_rejection) {
      try {
        parse_module(text);
        FAIL("expected a parse error");
      } catch (const Error& e) {
        CHECK(e.location().known());
        ++rejected;
      }
      continue;
    }
    Module m;
    try {
      m = parse_module(text);
    } catch (const Error& e) {
      FAIL(e.what());
    }
    ++parsed;
    const std::string printed = print_module(m);
    Module again;
    try {
      again = parse_module(printed);
    } catch (const Error& e) {
      FAIL("re-parse: " << e.what() << "\n" << printed);
    }
    CHECK(structurally_equal(m, again));
    CHECK(print_module(again) == printed);
  }
  CHECK(rejected == unsupported.size());
  CHECK(parsed + rejected == files.size());
  CHECK(parsed >= 365);
}

TEST_CASE("truncated corpus files parse or fail with a located error, never crash", "[hlo][robustness]") {
  const std::filesystem::path dir = std::filesystem::path(ACT_SHARED_DIR) / "corpus" / "hlo";
  const auto files = hlo_files(dir, false);
  REQUIRE(files.size() > 40);
  std::vector<std::filesystem::path> chosen = {files[0], files[17], files[40], files[files.size() - 1]};
  chosen.push_back(std::filesystem::path(ACT_SHARED_DIR) / "kernels" / "qkv" / "attention.hlo");
  std::size_t attempts = 0, errors = 0;
  for (const auto& file : chosen) {
    const std::string text = read_file(file);
    for (std::size_t cut = 0; cut < text.size(); cut += 97) {
      ++attempts;
      try {
        parse_module(std::string_view(text).substr(0, cut));
      } catch (const Error& e) {
        ++errors;
        CHECK((e.kind() == ErrorKind::Parse || e.kind() == ErrorKind::Shape));
        CHECK(e.location().known());
      }
    }
  }
  CHECK(attempts > 20);
  CHECK(errors > 0);
}

// ---------------------------------------------------------------------------------------------
// The paper's shorthand

TEST_CASE("shorthand: 1-based transpose permutation", "[hlo][shorthand]") {
  const Module m = parse_module(R"(ENTRY e {
  x = f32[2,3,5] parameter(0)
  ROOT t = f32[5,2,3] transpose(x), dimensions=[3,1,2]
})");
  const Instruction& t = find(m.entry_computation(), "t");
  CHECK(t.opcode == Opcode::Transpose);
  CHECK(t.dimensions == std::vector<std::int64_t>{2, 0, 1});
  expect_error("ENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT t = f32[3,2] transpose(x), dimensions=[2,0]\n}",
               ErrorKind::Shape, 3, 46, "transpose: dimension 0 is out of range 1..2");
}

TEST_CASE("shorthand: NumPy-style slice", "[hlo][shorthand]") {
  const Module m = parse_module(R"(ENTRY e {
  b = f32[14,4] parameter(0)
  s = f32[14,1] slice(b), dimensions=[:,0]
  r = f32[2,2] slice(b), dimensions=[1:3, 1:4:2]
  ROOT l = f32[1,2] slice(b), dimensions=[-1, :2]
})");
  const Computation& c = m.entry_computation();
  CHECK(find(c, "s").slice == std::vector<SliceRange>{{0, 14, 1}, {0, 1, 1}});
  CHECK(find(c, "r").slice == std::vector<SliceRange>{{1, 3, 1}, {1, 4, 2}});
  CHECK(find(c, "l").slice == std::vector<SliceRange>{{13, 14, 1}, {0, 2, 1}});
  expect_error("ENTRY e {\n  b = f32[14,4] parameter(0)\n  ROOT s = f32[14,2] slice(b), dimensions=[:,0]\n}",
               ErrorKind::Shape, 3, 8, "declared shape f32[14,2] does not match the inferred shape f32[14,1]");
}

TEST_CASE("shorthand: dot without attributes contracts lhs's last with rhs's first dimension", "[hlo][shorthand]") {
  const Module m = parse_module(R"(ENTRY e {
  a = f32[2,3,8] parameter(0)
  b = f32[8,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b)
})");
  const Instruction& d = find(m.entry_computation(), "d");
  CHECK(d.dot.lhs_contracting == std::vector<std::int64_t>{2});
  CHECK(d.dot.rhs_contracting == std::vector<std::int64_t>{0});
  CHECK(d.dot.lhs_batch.empty());
  CHECK(d.dot.rhs_batch.empty());
}

TEST_CASE("shorthand: broadcast expands a same-rank size-1 dimension", "[hlo][shorthand]") {
  const Module m = parse_module(R"(ENTRY e {
  b = f32[1,16] parameter(0)
  ROOT r = f32[3,16] broadcast(b), dimensions=[1]
})");
  CHECK(find(m.entry_computation(), "r").dimensions == std::vector<std::int64_t>{0, 1});
  expect_error("ENTRY e {\n  b = f32[2,16] parameter(0)\n  ROOT r = f32[3,16] broadcast(b), dimensions=[1]\n}",
               ErrorKind::Shape, 3, 47, "broadcast: operand dimension 1 has size 2, expected 1");
}

TEST_CASE("shorthand: constants fill, tuples infer, {T(..)} tiles", "[hlo][shorthand]") {
  const Module m = parse_module(R"(ENTRY e {
  A = i8[32,64]{T(16,4)} parameter(0)
  c = f32[2,3] constant(255)
  ROOT t = tuple(A, c)
})");
  const Computation& e = m.entry_computation();
  const Instruction& a = find(e, "A");
  CHECK(a.shape.dtype == DType::s8);
  REQUIRE(a.shape.has_layout);
  CHECK(a.shape.layout.minor_to_major == std::vector<std::int64_t>{1, 0});
  REQUIRE(a.shape.layout.tiles.size() == 1);
  CHECK(a.shape.layout.tiles[0].dims == std::vector<std::int64_t>{16, 4});
  const Instruction& c = find(e, "c");
  REQUIRE(c.literal);
  for (std::int64_t i = 0; i < 6; ++i) CHECK(c.literal->get_float(i) == 255.0);
  const Instruction& t = find(e, "t");
  REQUIRE(t.shape.is_tuple);
  REQUIRE(t.shape.tuple_shapes.size() == 2);
  CHECK(t.shape.tuple_shapes[0].same_type(Shape(DType::s8, {32, 64})));
  CHECK(t.shape.tuple_shapes[1].same_type(Shape(DType::f32, {2, 3})));
  CHECK(e.root == e.find("t"));
  check_round_trip(m);
}

TEST_CASE("shorthand kernels parse into the same module as their XLA spelling", "[hlo][shorthand]") {
  const Module shorthand = parse_module(read_file(std::filesystem::path(ACT_SHARED_DIR) / "kernels/paper/k3_mem_format_avx.hlo"));
  const Module xla = parse_module(R"(HloModule module_k3
ENTRY %k3 {
  %A = f32[32] parameter(0)
  %B = f32[14,4] parameter(1)
  %reshape.0 = f32[32,1] reshape(%A)
  %slice.1 = f32[14,1] slice(%B), slice={[0:14], [0:1]}
  %transpose.2 = f32[1,14] transpose(%slice.1), dimensions={1,0}
  %dot.3 = f32[32,14] dot(%reshape.0, %transpose.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %transpose.4 = f32[14,32]{1,0:T(14,16)} transpose(%dot.3), dimensions={1,0}
})");
  CHECK(structurally_equal(shorthand, xla));
  check_round_trip(shorthand);
}

// ---------------------------------------------------------------------------------------------
// XLA syntax

TEST_CASE("the QKV attention kernel", "[hlo][kernels]") {
  const Module m = parse_module(read_file(std::filesystem::path(ACT_SHARED_DIR) / "kernels/qkv/attention.hlo"));
  CHECK(m.name == "qkv");
  REQUIRE(m.computations.size() == 2);
  CHECK(m.entry == 1);
  const Computation& add = m.computations[0];
  CHECK(add.name == "reduce_add");
  CHECK(add.root_instruction().opcode == Opcode::Add);
  const Computation& e = m.entry_computation();
  CHECK(e.is_entry);
  CHECK(e.parameters.size() == 3);
  std::vector<Opcode> ops;
  for (const auto& i : e.instructions) ops.push_back(i.opcode);
  CHECK(ops == std::vector<Opcode>{Opcode::Parameter, Opcode::Parameter, Opcode::Parameter, Opcode::Transpose,
                                   Opcode::Dot, Opcode::Exponential, Opcode::Constant, Opcode::Reduce,
                                   Opcode::Broadcast, Opcode::Divide, Opcode::Dot});
  const Instruction& sum = find(e, "sum");
  CHECK(sum.dimensions == std::vector<std::int64_t>{1});
  CHECK(sum.called_computations == std::vector<int>{0});
  CHECK(sum.called_computation_attributes == std::vector<std::string>{"to_apply"});
  CHECK(sum.shape.same_type(Shape(DType::bf16, {64})));
  CHECK(e.root_instruction().name == "output");
  CHECK(e.root_instruction().operands == std::vector<int>{e.find("probs"), e.find("v")});
  REQUIRE(m.entry_parameter_layouts);
  CHECK(m.entry_parameter_layouts->size() == 3);
  CHECK((*m.entry_parameter_layouts)[2].layout.minor_to_major == std::vector<std::int64_t>{1, 0});
  CHECK(m.entry_result_layout->same_type(Shape(DType::bf16, {64, 64})));
  check_round_trip(m);
}

TEST_CASE("tiled and other layout properties", "[hlo][layout]") {
  const Module m = parse_module(R"(HloModule m
ENTRY e {
  a = bf16[16,256]{1,0:T(8,128)(2,1)} parameter(0)
  b = s4[2048]{0:T(1024)(128)E(4)S(1)} parameter(1)
  c = f32[]{:T(256)} parameter(2)
  ROOT t = (bf16[16,256]{1,0:T(8,128)(2,1)}, f32[]) tuple(a, c)
})");
  const Computation& e = m.entry_computation();
  const Layout& a = find(e, "a").shape.layout;
  CHECK(a.minor_to_major == std::vector<std::int64_t>{1, 0});
  REQUIRE(a.tiles.size() == 2);
  CHECK(a.tiles[0].dims == std::vector<std::int64_t>{8, 128});
  CHECK(a.tiles[1].dims == std::vector<std::int64_t>{2, 1});
  CHECK(a.other_properties.empty());
  const Layout& b = find(e, "b").shape.layout;
  CHECK(b.tiles.size() == 2);
  CHECK(b.other_properties == "E(4)S(1)");
  const Shape& c = find(e, "c").shape;
  CHECK(c.has_layout);
  CHECK(c.layout.minor_to_major.empty());
  REQUIRE(c.layout.tiles.size() == 1);
  CHECK(c.layout.tiles[0].dims == std::vector<std::int64_t>{256});
  CHECK(print_shape(find(e, "b").shape) == "s4[2048]{0:T(1024)(128)E(4)S(1)}");
  CHECK(print_shape(c) == "f32[]{:T(256)}");
  check_round_trip(m);
}

TEST_CASE("XLA syntax details: optional parts, comments, constants", "[hlo][syntax]") {
  const Module m = parse_module(R"(HloModule m, is_scheduled=true, num_partitions=2

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y) /* operand shapes are optional */
}

ENTRY %main (p: f32[2,3]) -> (f32[2], pred[2,3], f32[1,3]) {
  %p = f32[2,3]{1,0} parameter(0)  // a comment
  %z = f32[] constant(0)
  %r = reduce(%p, %z), dimensions={1}, to_apply=%add, metadata={op_name="x" source_line=3}
  %k = f32[2,3] constant({ {1, -2.5, inf}, {-inf, nan, 1e-05} })
  %c = compare(%p, /*index=1*/%k), direction=LT, type=TOTALORDER, sharding={devices=[2,1]<=[2]}
  %t = tuple(%r, %c)
  %g = get-tuple-element(%t), index=1
  %q = c64[2] constant({(1, 0), (0, 2)})
  %b = pred[] constant(true)
  %h = f32[1,3] slice(%k), slice={[1:2:1], [0:3:1]}
  %w = f32[2] get-tuple-element(%t), index=0
  ROOT %o = (f32[2], pred[2,3], f32[1,3]) tuple(%w, %g, f32[1,3] %h)
})");
  CHECK(m.raw_attributes == std::vector<RawAttribute>{{"is_scheduled", "true"}, {"num_partitions", "2"}});
  const Computation& e = m.entry_computation();
  CHECK(find(e, "r").shape.same_type(Shape(DType::f32, {2})));
  const Instruction& c = find(e, "c");
  CHECK(c.shape.same_type(Shape(DType::pred, {2, 3})));
  CHECK(c.comparison_direction == ComparisonDirection::LT);
  CHECK(c.comparison_type == "TOTALORDER");
  CHECK(c.raw_attributes == std::vector<RawAttribute>{{"sharding", "{devices=[2,1]<=[2]}"}});
  const Literal& k = *find(e, "k").literal;
  CHECK(k.get_float(0) == 1.0);
  CHECK(k.get_float(1) == -2.5);
  CHECK(std::isinf(k.get_float(2)));
  CHECK(k.get_float(3) < 0);
  CHECK(std::isnan(k.get_float(4)));
  CHECK(k.get_float(5) == static_cast<double>(1e-05f));
  CHECK(find(e, "q").literal_text == "{(1, 0), (0, 2)}");
  CHECK(find(e, "b").literal->get_bits(0) == 1);
  CHECK(find(e, "g").shape.same_type(Shape(DType::pred, {2, 3})));
  CHECK(find(e, "h").slice == std::vector<SliceRange>{{1, 2, 1}, {0, 3, 1}});
  CHECK(find(e, "r").raw_attributes.empty());  // metadata is dropped
  check_round_trip(m);
}

TEST_CASE("headerless modules, implicit ROOT and entry, inline computations, compact GTE", "[hlo][syntax]") {
  const Module m = parse_module(R"(
region {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  maximum = bf16[] maximum(a, b)
}
fusion {
  p0 = bf16[4,8] parameter(0)
  c0 = bf16[] constant(0)
  r = bf16[4] reduce(p0, c0), dimensions={1}, to_apply={
    x = bf16[] parameter(0)
    y = bf16[] parameter(1)
    ROOT m = bf16[] maximum(x, y)
  }
  t = (bf16[4], bf16[4,8]) tuple(r, p0)
  n = bf16[4] negate(t#0)
  u = bf16[4] abs(t#0)
})");
  CHECK(m.name == "module_fusion");
  REQUIRE(m.computations.size() == 3);
  CHECK(m.computations[0].root_instruction().name == "maximum");
  CHECK(m.computations[1].name == "r.to_apply");
  const Computation& e = m.entry_computation();
  CHECK(e.name == "fusion");
  CHECK(e.root_instruction().name == "u");
  CHECK(find(e, "r").called_computations == std::vector<int>{1});
  const Instruction& n = find(e, "n");
  const Instruction& gte = e.instructions[static_cast<std::size_t>(n.operands[0])];
  CHECK(gte.opcode == Opcode::GetTupleElement);
  CHECK(gte.tuple_index == 0);
  CHECK(find(e, "u").operands == n.operands);  // reused
  check_round_trip(m);
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST_CASE("parse errors are located", "[hlo][errors]") {
  expect_error("HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n", ErrorKind::Parse, 5, 1,
               "unexpected end of input, expected '}'");
  expect_error("ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT x = f32[4] foo(p)\n}", ErrorKind::Parse, 3, 19,
               "unknown opcode 'foo'");
  expect_error("ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT x = f32[4] add(p, q)\n}", ErrorKind::Parse, 3, 26,
               "undefined operand 'q'");
  expect_error("ENTRY e {\n  p = f32[4] parameter(0)\n  p = f32[4] negate(p)\n}", ErrorKind::Parse, 3, 3,
               "duplicate instruction name 'p'");
  expect_error("ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[] reduce(p, p), dimensions={0}, to_apply=nope\n}",
               ErrorKind::Parse, 3, 57, "unknown computation 'nope'");
  expect_error("ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] reshape(p)\n", ErrorKind::Parse, 4, 1,
               "unexpected end of input, expected '}'");
  expect_error("ENTRY e {\n  p = f32[4 parameter(0)\n}", ErrorKind::Parse, 2, 13, "expected ']'");
  expect_error("ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[3] constant({1, 2})\n}", ErrorKind::Parse, 3, 28,
               "expects 3 elements at nesting level 0, got 2");
  expect_error("ENTRY e {\n  p = f32[4] parameter(0), sharding={replicated\n}", ErrorKind::Parse, 3, 2,
               "unexpected end of input, expected '}'");
  expect_error("ENTRY e {\n  p = xf32[4] parameter(0)\n}", ErrorKind::Parse, 2, 7, "unknown opcode 'xf32'");
  expect_error("ENTRY e {\n  p = f32[4]{1,0} parameter(0)\n}", ErrorKind::Parse, 2, 13,
               "layout has 2 minor-to-major entries for a shape of rank 1");
}

TEST_CASE("shape errors are located at the instruction", "[hlo][errors]") {
  const std::string head = "ENTRY e {\n  a = f32[8,64] parameter(0)\n  b = f32[32,16] parameter(1)\n";
  expect_error(head + "  ROOT d = f32[8,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
               ErrorKind::Shape, 4, 8, "dot: lhs contracting dim 1 has size 64 but rhs contracting dim 0 has size 32");
  expect_error(head + "  ROOT x = f32[8,64] add(a)\n}", ErrorKind::Shape, 4, 8, "add: expects 2 operands, got 1");
  expect_error(head + "  ROOT x = f32[8,64] add(a, b)\n}", ErrorKind::Shape, 4, 8,
               "add: operands: f32[8,64] and f32[32,16] have different dimensions");
  expect_error(head + "  ROOT x = f32[8,63] negate(a)\n}", ErrorKind::Shape, 4, 8,
               "negate: declared shape f32[8,63] does not match the inferred shape f32[8,64]");
  expect_error(head + "  ROOT x = f32[500] reshape(a)\n}", ErrorKind::Shape, 4, 8,
               "reshape: cannot reshape f32[8,64] (512 elements) to f32[500] (500 elements)");
  expect_error(head + "  ROOT x = f32[64,8] transpose(a), dimensions={1,1}\n}", ErrorKind::Shape, 4, 8,
               "transpose: permutation entry 1 appears twice");
  expect_error(head + "  ROOT x = f32[8,9] slice(a), slice={[0:8], [60:69]}\n}", ErrorKind::Shape, 4, 8,
               "slice: range [60:69] of dimension 1 is out of bounds for size 64");
  expect_error(head + "  ROOT x = s8[8,64,2] bitcast-convert(a)\n}", ErrorKind::Shape, 4, 8,
               "minor-most dimension of s8[8,64,2] must be 4 (bit width ratio), got 2");
  expect_error(head + "  ROOT x = f32[8,64,32] broadcast(b), dimensions={0,1}\n}", ErrorKind::Shape, 4, 8,
               "broadcast: operand dimension 0 has size 32 but result dimension 0 has size 8");
  expect_error(head + "  ROOT x = f32[8,80] concatenate(a, b), dimensions={1}\n}", ErrorKind::Shape, 4, 8,
               "concatenate: operand 1 dimension 0 has size 32 but operand 0 has 8");
  expect_error(head + "  ROOT x = f32[8,64] reverse(a), dimensions={2}\n}", ErrorKind::Shape, 4, 8,
               "reverse: dimension 2 is out of range for rank 2");
  expect_error(head + "  i = s32[] parameter(2)\n  ROOT x = f32[8,65] dynamic-slice(a, i, i), dynamic_slice_sizes={8,65}\n}",
               ErrorKind::Shape, 5, 8, "dynamic-slice: slice size 65 of dimension 1 exceeds the operand size 64");
  expect_error(head + "  z = f32[] constant(0)\n  ROOT x = f32[9,64] pad(a, z), padding=1_0x0_0_1\n}", ErrorKind::Shape, 5,
               8, "pad: declared shape f32[9,64] does not match the inferred shape f32[9,127]");
  expect_error(
      "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
      "ENTRY e {\n  a = s32[4] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[] reduce(a, z), dimensions={0}, to_apply=add\n}",
      ErrorKind::Shape, 9, 8, "reduce: to_apply=add parameter 0 is f32[], expected s32[]");
  expect_error(head + "  ROOT x = (f32[8,64]) tuple(a, b)\n}", ErrorKind::Shape, 4, 8, "tuple: declared shape");
  expect_error(head + "  t = tuple(a, b)\n  ROOT x = get-tuple-element(t), index=2\n}", ErrorKind::Shape, 5, 8,
               "get-tuple-element: index 2 is out of range for a tuple of 2 elements");
}

TEST_CASE("size arithmetic cannot overflow, and arrays above 2^40 bytes are refused", "[hlo][errors]") {
  const std::string head = "ENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n";
  // Signed overflow in pad's size (UBSan) before; now a located error.
  expect_error(head + "  ROOT r = pad(a, z), padding=0_9223372036854775807\n}", ErrorKind::Shape, 4, 8,
               "pad: the size of result dimension 0 does not fit in 64 bits");
  expect_error(head + "  ROOT r = pad(a, z), padding=0_0_4611686018427387904\n}", ErrorKind::Shape, 4, 8,
               "pad: the size of result dimension 0 does not fit in 64 bits");
  // In range for int64 but above the array limit: refused where the shape is inferred...
  expect_error(head + "  ROOT r = pad(a, z), padding=0_1099511627776\n}", ErrorKind::Shape, 4, 8,
               "pad: the result f32[1099511627780] is larger than act's limit of 2^40 bytes for one array");
  // ... and where it is written, at the shape.
  expect_error("ENTRY e {\n  ROOT p = f32[4294967296,4294967296,16] parameter(0)\n}", ErrorKind::Shape, 2, 12,
               "f32[4294967296,4294967296,16] is larger than act's limit of 2^40 bytes for one array");
  expect_error("ENTRY e {\n  ROOT p = u8[1099511627777] parameter(0)\n}", ErrorKind::Shape, 2, 12, "larger than act's limit");
  // The limit itself and zero-element arrays with huge dims are fine.
  CHECK_NOTHROW(hlo::parse_module("ENTRY e {\n  ROOT p = u8[1099511627776] parameter(0)\n}"));
  CHECK_NOTHROW(hlo::parse_module("ENTRY e {\n  ROOT p = f32[0,9223372036854775807] parameter(0)\n}"));
  // The corpus's largest array (8 GiB) parses.
  CHECK_NOTHROW(hlo::parse_module("ENTRY e {\n  ROOT p = s32[1024,1024,2048] parameter(0)\n}"));
  // Concatenate and reduce-window add and multiply sizes too.
  expect_error("ENTRY e {\n  a = u8[549755813888] parameter(0)\n  ROOT c = concatenate(a, a, a), dimensions={0}\n}",
               ErrorKind::Shape, 3, 8, "concatenate: the result u8[1649267441664] is larger than act's limit");
  expect_error("add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
               "ENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
               "  ROOT r = reduce-window(a, z), window={size=1 pad=9223372036854775807_9223372036854775807}, to_apply=add\n}",
               ErrorKind::Shape, 9, 8, "reduce-window: the size of result dimension 0 does not fit in 64 bits");
  // A slice whose stride is near INT64_MAX: (limit - start + stride - 1) overflowed.
  CHECK(hlo::parse_module("ENTRY e {\n  a = f32[8] parameter(0)\n  ROOT s = slice(a), slice={[1:8:9223372036854775807]}\n}")
            .entry_computation()
            .root_instruction()
            .shape.dims == std::vector<std::int64_t>{1});
}

// ---------------------------------------------------------------------------------------------
// ISA semantics blocks

TEST_CASE("parse_semantics evaluates backtick dimensions", "[hlo][semantics]") {
  std::vector<std::string> asked;
  std::vector<SourceLocation> where;
  const DimensionEvaluator evaluate = [&](std::string_view expression, SourceLocation at) -> std::int64_t {
    asked.emplace_back(expression);
    where.push_back(at);
    if (expression == "n") return 64;
    if (expression == "n * 128") return 64 * 128;
    throw Error(ErrorKind::Parse, "unknown expression", at);
  };
  const Module m = parse_semantics(R"(ENTRY load_rm {
  %In1 = u8[`n * 128`] parameter(0);
  %a = u8[`n`, 64, 2] reshape(%In1);
  ROOT %Out0 = bf16[`n`, 64] bitcast_convert(%a);
})",
                                   evaluate);
  CHECK(asked == std::vector<std::string>{"n * 128", "n", "n"});
  CHECK(where[0] == SourceLocation{2, 13});
  const Computation& e = m.entry_computation();
  CHECK(m.name == "load_rm");
  CHECK(e.name == "load_rm");
  CHECK(find(e, "In1").shape.same_type(Shape(DType::u8, {8192})));
  CHECK(find(e, "In1").dimension_expressions == std::vector<std::string>{"n * 128"});
  CHECK(find(e, "a").shape.same_type(Shape(DType::u8, {64, 64, 2})));
  CHECK(find(e, "a").dimension_expressions == std::vector<std::string>{"n", "", ""});
  const Instruction& out = e.root_instruction();
  CHECK(out.name == "Out0");
  CHECK(out.opcode == Opcode::BitcastConvert);
  CHECK(out.shape.same_type(Shape(DType::bf16, {64, 64})));

  // With the wrong size for n the reshape no longer fits.
  const DimensionEvaluator wrong = [](std::string_view expression, SourceLocation) -> std::int64_t {
    return expression == "n" ? 32 : 64 * 128;
  };
  try {
    parse_semantics("ENTRY l {\n  %In1 = u8[`n * 128`] parameter(0);\n  %a = u8[`n`, 64, 2] reshape(%In1);\n}", wrong);
    FAIL("expected a shape error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Shape);
    CHECK(e.location() == SourceLocation{3, 3});
  }
}

TEST_CASE("parse_semantics: symbolic mode and reduce_add sugar", "[hlo][semantics]") {
  const Module m = parse_semantics(R"(ENTRY softmax {
  %In1 = bf16[`n`, 64] parameter(0);
  %a = bf16[`n`, 64] exp(%In1);
  %r = bf16[`n`] reduce_add(%a), dimensions={1};
  %b = bf16[`n`, 64] broadcast(%r), dimensions={0};
  ROOT %Out0 = bf16[`n`, 64] divide(%a, %b);
})",
                                   DimensionEvaluator{});
  REQUIRE(m.computations.size() == 2);
  const Computation& add = m.computations[0];
  CHECK(add.name == "add_bf16");
  CHECK(add.parameters.size() == 2);
  CHECK(add.root_instruction().opcode == Opcode::Add);
  const Computation& e = m.entry_computation();
  CHECK(find(e, "In1").shape.dims == std::vector<std::int64_t>{-1, 64});
  CHECK(find(e, "a").opcode == Opcode::Exponential);
  const Instruction& r = find(e, "r");
  CHECK(r.opcode == Opcode::Reduce);
  CHECK(r.dimensions == std::vector<std::int64_t>{1});
  CHECK(r.called_computations == std::vector<int>{0});
  REQUIRE(r.operands.size() == 2);
  const Instruction& init = e.instructions[static_cast<std::size_t>(r.operands[1])];
  CHECK(init.opcode == Opcode::Constant);
  CHECK(init.shape.same_type(Shape(DType::bf16, {})));
  REQUIRE(init.literal);
  CHECK(init.literal->get_float(0) == 0.0);
  CHECK(e.root_instruction().name == "Out0");
}

// ---------------------------------------------------------------------------------------------
// XLA compatibility (issue 14)

TEST_CASE("XLA text: a dot without dimension attributes is an outer product", "[hlo][xla]") {
  // XLA's meaning: no contracting dims. The paper's shorthand (no HloModule header) keeps
  // last-by-first; `act parse` prints explicit dims, so neither meaning changes on a round trip.
  const Module xla = parse_module("HloModule outer\nENTRY e {\n  a = f32[8] parameter(0)\n  b = f32[8] parameter(1)\n"
                                  "  ROOT d = f32[8,8] dot(a, b)\n}");
  const Instruction& d = find(xla.entry_computation(), "d");
  CHECK(d.dot.lhs_contracting.empty());
  CHECK(d.dot.rhs_contracting.empty());
  check_round_trip(xla);
  const Module again = parse_module(print_module(xla));
  CHECK(find(again.entry_computation(), "d").dot == d.dot);
  // The same text without the header is the shorthand: [8] x [8] contracts to a scalar.
  expect_error("ENTRY e {\n  a = f32[8] parameter(0)\n  b = f32[8] parameter(1)\n  ROOT d = f32[8,8] dot(a, b)\n}",
               ErrorKind::Shape, 4, 8, "declared shape f32[8,8] does not match the inferred shape f32[]");
  const Module shorthand = parse_module("ENTRY e {\n  a = f32[2,8] parameter(0)\n  b = f32[8,3] parameter(1)\n"
                                        "  ROOT d = f32[2,3] dot(a, b)\n}");
  CHECK(find(shorthand.entry_computation(), "d").dot.lhs_contracting == std::vector<std::int64_t>{1});
  const Module printed = parse_module(print_module(shorthand));
  CHECK(find(printed.entry_computation(), "d").dot.lhs_contracting == std::vector<std::int64_t>{1});
  CHECK(find(printed.entry_computation(), "d").dot.rhs_contracting == std::vector<std::int64_t>{0});
}

TEST_CASE("XLA text: the stack-frame tables of JAX dumps are read and ignored", "[hlo][xla]") {
  const Module m = parse_module(R"(HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

FileNames
1 "/tmp/a.py"
2 "/usr/lib/python3/site-packages/jax/_src/numpy.py"

FunctionNames
1 "f"
2 "<lambda>"

FileLocations
1 {file_name_id=1 function_name_id=1 line=13 end_line=13 column=25 end_column=33}
2 {file_name_id=2 function_name_id=2 line=4 end_line=5 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}
2 {file_location_id=2 parent_frame_id=1}

ENTRY main {
  x = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(x), metadata={op_name="jit(f)/neg" stack_frame_id=2}
})");
  CHECK(m.entry_computation().instructions.size() == 2);
  // A computation may still be called FileNames.
  const Module named = parse_module("HloModule m\nFileNames {\n  ROOT c = f32[] constant(1)\n}\nENTRY e {\n  ROOT c = f32[] constant(2)\n}");
  CHECK(named.computations.size() == 2);
  expect_error("HloModule m\nFileNames\n1 2\nENTRY e {\n  ROOT c = f32[] constant(2)\n}", ErrorKind::Parse, 3, 3,
               "expected a string or '{...}' in a stack-frame table, got '2'");
}

TEST_CASE("XLA text: asynchronous instructions are unsupported, not unknown", "[hlo][xla]") {
  expect_error("HloModule m\nf {\n  ROOT p = f32[] parameter(0)\n}\nENTRY e {\n  x = f32[] parameter(0)\n"
               "  s = ((f32[]), f32[], s32[]) call-start(x), to_apply=f\n  ROOT d = f32[] call-done(s)\n}",
               ErrorKind::Unsupported, 7, 31,
               "'call-start' is XLA's asynchronous form of 'call' (async-start/-update/-done); act does not support asynchronous instructions");
  expect_error("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT d = f32[] custom-call-done(x)\n}", ErrorKind::Unsupported, 4,
               18, "asynchronous form of 'custom-call'");
  expect_error("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT d = f32[] frobnicate-start(x)\n}", ErrorKind::Parse, 4, 18,
               "unknown opcode 'frobnicate-start'");
}

TEST_CASE("XLA text: pad of bf16 with an f32 padding value, as XLA's shape inference allows", "[hlo][xla]") {
  // XLA: the element types must agree ignoring floating-point precision; the result has the
  // more precise one. act converts the operands, so the module has one element type per pad.
  const Module inferred = parse_module("HloModule m\nENTRY e {\n  x = bf16[2,3] parameter(0)\n  z = f32[] constant(0)\n"
                                       "  ROOT p = pad(x, z), padding=0_1x0_0\n}");
  const Computation& c = inferred.entry_computation();
  CHECK(c.root_instruction().shape.same_type(Shape(DType::f32, {3, 3})));
  const Instruction& converted = c.instructions[static_cast<std::size_t>(c.root_instruction().operands[0])];
  CHECK(converted.opcode == Opcode::Convert);
  CHECK(converted.shape.same_type(Shape(DType::f32, {2, 3})));
  check_round_trip(inferred);
  // A declared bf16 result (XLA's mixed-precision form) converts the value instead.
  const Module declared = parse_module("HloModule m\nENTRY e {\n  x = bf16[2,3] parameter(0)\n  z = f32[] constant(0)\n"
                                       "  ROOT p = bf16[3,3] pad(x, z), padding=0_1x0_0\n}");
  const Computation& d = declared.entry_computation();
  CHECK(d.root_instruction().shape.same_type(Shape(DType::bf16, {3, 3})));
  CHECK(d.instructions[static_cast<std::size_t>(d.root_instruction().operands[1])].opcode == Opcode::Convert);
  // Integers and floats still do not mix, and neither do s8 and s32.
  expect_error("ENTRY e {\n  x = s8[2] parameter(0)\n  z = s32[] constant(0)\n  ROOT p = pad(x, z), padding=0_1\n}",
               ErrorKind::Shape, 4, 8, "pad: padding value type s32 differs from operand s8");
  expect_error("ENTRY e {\n  x = f32[2] parameter(0)\n  z = s32[] constant(0)\n  ROOT p = pad(x, z), padding=0_1\n}",
               ErrorKind::Shape, 4, 8, "pad: padding value type s32 differs from operand f32");
}
