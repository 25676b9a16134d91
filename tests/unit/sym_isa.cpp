// Attribute expressions (sym/), ISA validation, the QKV description and the ISA registry.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "act/isa/qkv.hpp"
#include "act/hlo/module_equal.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/registry.hpp"
#include "act/isa/semantics.hpp"
#include "act/isa/validate.hpp"
#include "act/sym/expr.hpp"
#include "act/sym/z3.hpp"

using act::sym::evaluate;
using act::sym::parse;

namespace {

std::int64_t eval(std::string_view text, act::sym::Bindings env = {}) { return evaluate(parse(text), env); }

// The error an evaluation throws, or "" when it succeeds.
std::string eval_error(std::string_view text, act::sym::Bindings env = {}) {
  try {
    eval(text, env);
  } catch (const act::Error& e) {
    CHECK(e.kind() == act::ErrorKind::Execution);
    return e.message();
  }
  return "";
}

}  // namespace

// ---- compile time: the parser and the int64 evaluator are constexpr
static_assert(evaluate(parse("n * 128"), {{"n", 4}}) == 512);
static_assert(evaluate(parse("@c.n * 128 + @a.addr"), {{"n", 4}, {"addr", 2}}) == 514);
static_assert(!act::sym::try_parse("n +").ok());
static_assert(act::sym::try_parse("n + ").column == 5);
static_assert(act::sym::free_identifiers(parse("addr_out + n * n")).size() == 2);

TEST_CASE("sym: precedence and associativity", "[sym]") {
  CHECK(eval("1 + 2 * 3") == 7);
  CHECK(eval("(1 + 2) * 3") == 9);
  CHECK(eval("10 - 4 - 3") == 3);          // left-associative
  CHECK(eval("100 / 10 / 5") == 2);        // left-associative
  CHECK(eval("2 * 3 % 4") == 2);           // (2*3)%4
  CHECK(eval("-2 * 3") == -6);
  CHECK(eval("- -5") == 5);
  CHECK(eval("2 - -3") == 5);
  CHECK(eval("!0 + 1") == 2);              // ! binds tighter than +
  CHECK(eval("1 + 2 < 4 && 3 >= 3") == 1);
  CHECK(eval("1 || 0 && 0") == 1);         // && binds tighter than ||
  CHECK(eval("(1 || 0) && 0") == 0);
  CHECK(eval("3 == 3 == 1") == 1);         // (3==3)==1
  CHECK(eval("2 != 2") == 0);
  CHECK(eval("5 > 4") == 1);
  CHECK(eval("5 <= 4") == 0);
  CHECK(eval("!(2 < 1)") == 1);
  CHECK(eval("min(3, max(1, 2)) * 2") == 4);
  CHECK(eval("max(-1, min(7, 9) - 10)") == -1);
  CHECK(eval("  n*128+addr_out ", {{"n", 3}, {"addr_out", 5}}) == 389);
  CHECK(eval("@c.n * 128 + @a.addr - @s.preload", {{"n", 4}, {"addr", 2}, {"preload", 6}}) == 508);
  CHECK(act::sym::to_string(parse("1 + 2 * -n")) == "(1 + (2 * (-n)))");
  CHECK(act::sym::to_string(parse("min(a, b) <= c || !d")) == "((min(a, b) <= c) || (!d))");
}

TEST_CASE("sym: floor division and modulo", "[sym]") {
  CHECK(eval("7 / 2") == 3);
  CHECK(eval("-7 / 2") == -4);
  CHECK(eval("-7 % 2") == 1);
  CHECK(eval("-8 / 2") == -4);
  CHECK(eval("-8 % 2") == 0);
  CHECK(eval("7 % 3") == 1);
  CHECK(eval("7 // 2") == 3);  // Python spelling
  CHECK(eval("x / y * y + x % y", {{"x", -13}, {"y", 5}}) == -13);  // the division identity
  CHECK(eval_error("7 / 0") == "division or modulo by a non-positive number");
  CHECK(eval_error("7 % (0 - 2)") == "division or modulo by a non-positive number");
}

TEST_CASE("sym: overflow and unbound names are errors", "[sym]") {
  CHECK(eval_error("9223372036854775807 + 1") == "integer overflow");
  CHECK(eval_error("0 - 9223372036854775807 - 2") == "integer overflow");
  CHECK(eval_error("n * n", {{"n", std::int64_t{1} << 32}}) == "integer overflow");
  CHECK(eval_error("-n", {{"n", INT64_MIN}}) == "integer overflow");
  CHECK(eval_error("n + m", {{"n", 1}}) == "unbound identifier 'm'");
  CHECK(eval_error("9223372036854775807 + 0") == "");
}

TEST_CASE("sym: parse errors carry the column", "[sym]") {
  auto column_of = [](std::string_view text) {
    try {
      parse(text);
    } catch (const act::Error& e) {
      CHECK(e.kind() == act::ErrorKind::Parse);
      CHECK(e.location().line == 1);
      return e.location().column;
    }
    return 0;
  };
  CHECK(column_of("n * ") == 5);
  CHECK(column_of("n + #") == 5);
  CHECK(column_of("(n + 1") == 7);
  CHECK(column_of("foo(1, 2)") == 1);
  CHECK(column_of("n m") == 3);
  CHECK(column_of("99999999999999999999") == 1);
  CHECK(column_of("min(1 2)") == 7);
  CHECK(column_of("12ab") == 1);
  CHECK(column_of("@x.n") == 1);
  CHECK(column_of("") == 1);
  CHECK(column_of("a & b") == 3);
  CHECK(column_of(std::string(200, '(') + "1" + std::string(200, ')')) > 0);  // depth limit, no crash
  CHECK(column_of(std::string(200, '-') + "1") > 0);
  CHECK(column_of("1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 + 19 + 20 + "
                  "21 + 22 + 23 + 24 + 25 + 26 + 27 + 28 + 29 + 30 + 31 + 32 + 33") > 0);  // > 64 nodes
  CHECK(column_of("1 + 2 * (3 - n) / max(a, b)") == 0);
  try {
    parse("n * ");
  } catch (const act::Error& e) {
    CHECK(std::string(e.what()).find("in expression 'n * '") != std::string::npos);
  }
}

TEST_CASE("sym: a shared parsed expression outlives the text it was made from", "[sym]") {
  std::shared_ptr<const act::sym::ParsedText> parsed;
  {
    std::string source = "rows_per_tile * 16 + 1";  // too long for the small-string buffer
    parsed = act::sym::parse_shared(source);
    source.assign(source.size(), 'x');
  }
  auto copy = parsed;  // the copies share one text
  parsed.reset();
  CHECK(evaluate(copy->expr, {{"rows_per_tile", 3}}) == 49);
  CHECK(act::sym::free_identifiers(copy->expr).size() == 1);
  CHECK_THROWS_AS(act::sym::parse_shared("n *"), act::Error);
}

TEST_CASE("sym: free identifiers, rename, bind", "[sym]") {
  auto e = parse("@c.n * 128 + addr_out + n - min(addr_out, k)");
  auto ids = act::sym::free_identifiers(e);
  REQUIRE(ids.size() == 3);
  CHECK(ids.names[0] == "n");
  CHECK(ids.names[1] == "addr_out");
  CHECK(ids.names[2] == "k");
  CHECK(act::sym::mentions(e, "k"));
  CHECK_FALSE(act::sym::mentions(e, "addr"));
  CHECK(act::sym::free_identifiers(parse("3 * 4")).size() == 0);

  auto renamed = act::sym::rename(e, "addr_out", "a");
  CHECK(act::sym::free_identifiers(renamed).contains("a"));
  CHECK_FALSE(act::sym::free_identifiers(renamed).contains("addr_out"));
  // n=2, a=10, k=4: 256 + 10 + 2 - 4
  CHECK(evaluate(renamed, {{"n", 2}, {"a", 10}, {"k", 4}}) == 264);

  auto bound = act::sym::bind(e, "n", 2);
  CHECK_FALSE(act::sym::mentions(bound, "n"));
  CHECK(evaluate(bound, {{"addr_out", 10}, {"k", 40}}) == 256 + 10 + 2 - 10);
}

TEST_CASE("sym: the same expressions evaluated over z3", "[sym][z3]") {
  z3::context ctx;
  auto var = [&ctx](std::string_view n) { return ctx.int_const(std::string(n).c_str()); };
  auto model_value = [](const z3::model& m, const z3::expr& x) {
    return m.eval(x, true).get_numeral_int64();
  };

  SECTION("a linear system solved by z3 satisfies the int64 evaluation") {
    auto e = parse("x * 3 + y == 17 && x > y && y >= 1 && x <= 5");
    z3::solver s(ctx);
    s.add(act::sym::to_z3(e, ctx));
    REQUIRE(s.check() == z3::sat);
    const std::int64_t x = model_value(s.get_model(), var("x"));
    const std::int64_t y = model_value(s.get_model(), var("y"));
    CHECK(x * 3 + y == 17);
    CHECK(evaluate(e, {{"x", x}, {"y", y}}) == 1);
    // Only x = 5, y = 2 satisfies it (x = 4 gives y = 5 > x).
    CHECK(x == 5);
    CHECK(y == 2);
  }
  SECTION("floor division and modulo agree with the int64 domain") {
    z3::solver s(ctx);
    s.add(act::sym::to_z3(parse("q == -7 / 2 && r == -7 % 2"), ctx));
    REQUIRE(s.check() == z3::sat);
    CHECK(model_value(s.get_model(), var("q")) == eval("-7 / 2"));
    CHECK(model_value(s.get_model(), var("r")) == eval("-7 % 2"));
    z3::solver s2(ctx);
    s2.add(act::sym::to_z3(parse("x % 4 == 3 && x < 0 && x > -5"), ctx));
    REQUIRE(s2.check() == z3::sat);
    CHECK(model_value(s2.get_model(), var("x")) == -1);
  }
  SECTION("min, max and booleans used as integers") {
    z3::solver s(ctx);
    s.add(act::sym::to_z3(parse("(x < 3) + (x < 5) == 1 && min(x, 10) == x && max(x, 0) == x"), ctx));
    REQUIRE(s.check() == z3::sat);
    const std::int64_t x = model_value(s.get_model(), var("x"));
    CHECK((x == 3 || x == 4));
    s.add(act::sym::to_z3(parse("x != 3 && x != 4"), ctx));
    CHECK(s.check() == z3::unsat);
  }
  SECTION("division side conditions and custom environments") {
    std::vector<z3::expr> side;
    auto n = ctx.int_const("n");
    auto e = act::sym::to_z3(parse("10 / d + n"), ctx,
                             [&](std::string_view name) { return name == "n" ? n : ctx.int_const("d"); }, &side);
    REQUIRE(side.size() == 1);
    z3::solver s(ctx);
    s.add(e == 7);
    s.add(n == 2);
    for (auto& c : side) s.add(c);
    REQUIRE(s.check() == z3::sat);
    const std::int64_t d = model_value(s.get_model(), ctx.int_const("d"));
    CHECK(d > 0);
    CHECK(10 / d == 5);  // d = 2
  }
}

// ---- ISA descriptions

using act::isa::Buffer;
using act::isa::Instruction;
using act::isa::IsaView;
using act::isa::Qkv;

static_assert(act::isa::diagnose<Qkv>().ok());
static_assert(act::isa::view<Qkv>().instructions.size() == 7);
static_assert(act::isa::view<Qkv>().find_instruction("load_rm")->alpha[0] == "n");
static_assert(act::isa::view<Qkv>().hbm().access_dims[0] == 1 << 20);
static_assert(act::isa::view<Qkv>().find_buffer("d1")->access_dims[0] == 128);

namespace {

// A modifiable copy of QKV for building broken descriptions.
struct IsaCopy {
  std::vector<Buffer> buffers{Qkv::buffers.begin(), Qkv::buffers.end()};
  std::vector<act::isa::StateRegister> state;
  std::vector<Instruction> instructions{Qkv::instructions.begin(), Qkv::instructions.end()};

  Instruction& operator[](std::string_view name) {
    for (auto& i : instructions)
      if (i.name == name) return i;
    FAIL("no instruction " << name);
    return instructions[0];
  }
  IsaView view() const { return IsaView{"broken", buffers, state, instructions}; }
  // The message check() throws, or "" when the description is valid.
  std::string error() const {
    try {
      act::isa::check(view());
    } catch (const act::Error& e) {
      CHECK(e.kind() == act::ErrorKind::Isa);
      return e.message();
    }
    return "";
  }
};

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("isa: QKV passes the run-time check", "[isa]") {
  CHECK_NOTHROW(act::isa::check(act::isa::view<Qkv>()));
  CHECK(IsaCopy{}.error() == "");
}

TEST_CASE("isa: the paper's Fig. 5 spelling of load_rm is accepted", "[isa]") {
  // No '%', TAIDL's bitcast_convert, semicolons, `@c.` prefixes, a layout and a comment.
  IsaCopy isa;
  isa["load_rm"].semantics = R"(ENTRY load_rm {
  x1 = u8[`@c.n * 128`]{0} parameter(0);  // the HBM bytes
  a = u8[`n`, 64, 2] reshape(x1);
  ROOT y = bf16[`n`, 64] bitcast_convert(a);
})";
  CHECK(isa.error() == "");
}

TEST_CASE("isa: broken descriptions name the instruction and the problem", "[isa]") {
  IsaCopy isa;
  SECTION("unknown attribute in a length expression") {
    isa["load_rm"].inputs = {{"d0", {"addr_in"}, {"m * 128"}}};
    const auto e = isa.error();
    CHECK(contains(e, "instruction 'load_rm'"));
    CHECK(contains(e, "input 1 length expression 'm * 128' mentions 'm'"));
  }
  SECTION("unknown buffer") {
    isa["mov"].outputs = {{"d7", {"addr_out"}, {"n"}}};
    const auto e = isa.error();
    CHECK(contains(e, "instruction 'mov'"));
    CHECK(contains(e, "unknown buffer 'd7'"));
  }
  SECTION("wrong number of start expressions") {
    isa["mov"].inputs = {{"d2", {"addr_in", "0"}, {"n", "1"}}};
    CHECK(contains(isa.error(), "needs 1 start and length expression(s)"));
  }
  SECTION("malformed constraint") {
    isa["softmax"].constraints = {"n <="};
    const auto e = isa.error();
    CHECK(contains(e, "instruction 'softmax'"));
    CHECK(contains(e, "constraint 'n <=' does not parse"));
  }
  SECTION("undefined operand") {
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(0)\n  ROOT %Out0 = bf16[`n`, 64] copy(%b)\n}";
    const auto e = isa.error();
    CHECK(contains(e, "instruction 'mov'"));
    CHECK(contains(e, "semantics line 3 'ROOT %Out0 = bf16[`n`, 64] copy(%b)': operand is not defined by an earlier statement: 'b' "
                      "at column 35 (defined before it: In1)"));
  }
  SECTION("beta attribute in a shape") {
    isa["mov"].semantics =
        "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(0)\n  ROOT %Out0 = bf16[`addr_in`, 64] copy(%In1)\n}";
    const auto e = isa.error();
    CHECK(contains(e, "mentions 'addr_in', which is an addressing attribute (beta)"));
  }
  SECTION("unknown opcode and unknown type") {
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(0)\n  ROOT %Out0 = bf16[`n`, 64] cpy(%In1)\n}";
    CHECK(contains(isa.error(), "unknown opcode 'cpy'"));
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf17[`n`, 64] parameter(0)\n  ROOT %Out0 = bf16[`n`, 64] copy(%In1)\n}";
    CHECK(contains(isa.error(), "unknown element type 'bf17'"));
  }
  SECTION("block name, ROOT and parameters") {
    isa["mov"].semantics = "ENTRY move {\n  %In1 = bf16[`n`, 64] parameter(0)\n  ROOT %Out0 = bf16[`n`, 64] copy(%In1)\n}";
    CHECK(contains(isa.error(), "semantics block is named 'move' but the instruction is 'mov'"));
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(0)\n  %Out0 = bf16[`n`, 64] copy(%In1)\n}";
    CHECK(contains(isa.error(), "exactly one ROOT statement, found 0"));
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(1)\n  ROOT %Out0 = bf16[`n`, 64] copy(%In1)\n}";
    CHECK(contains(isa.error(), "input 1 needs exactly one parameter(0) statement, found 0"));
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(0)\n  ROOT %Out0 = bf16[`n`, 64] copy(%In1, %In1)\n}";
    CHECK(contains(isa.error(), "'copy' takes 1 operand(s) but has 2"));
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(0)\n  ROOT %Out0 = bf16[`n`, 64] copy(%In1)\n";
    CHECK(contains(isa.error(), "missing '}'"));
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[`n, 64] parameter(0)\n}";
    CHECK(contains(isa.error(), "unterminated backtick"));
  }
  SECTION("several outputs need Out<k> values") {
    isa["softmax"].outputs = {{"d2", {"addr"}, {"n"}}, {"d1", {"0"}, {"n"}}};
    CHECK(contains(isa.error(), "output 1 needs a semantics value named Out1"));
  }
  SECTION("shape mismatches, found with sample alpha values") {
    // reduce_add over dimension 1 of [n,64] gives [n], not [n,64]
    isa["softmax"].semantics = R"(ENTRY softmax {
  %In1 = bf16[`n`, 64] parameter(0)
  %a = bf16[`n`, 64] exponential(%In1)
  %r = bf16[`n`, 64] reduce_add(%a), dimensions={1}
  ROOT %Out0 = bf16[`n`, 64] divide(%a, %r)
})";
    const auto e = isa.error();
    CHECK(contains(e, "instruction 'softmax'"));
    CHECK(contains(e, "semantics line 4 '%r = bf16[`n`, 64] reduce_add(%a), dimensions={1}': reduce_add gives [1] from its "
                      "operands, but the statement says [1,64] (with every alpha = 1)"));
  }
  SECTION("reshape element count") {
    isa["load_rm"].semantics = R"(ENTRY load_rm {
  %In1 = u8[`n * 128`] parameter(0)
  %a = u8[`n`, 64, 4] reshape(%In1)
  ROOT %Out0 = bf16[`n`, 64] bitcast-convert(%a)
})";
    CHECK(contains(isa.error(), "reshape changes the element count from 128 to 256"));
  }
  SECTION("parameter shape differs from the input slice") {
    isa["load_rm"].inputs = {{"d0", {"addr_in"}, {"n * 64"}}};
    CHECK(contains(isa.error(), "semantics line 2 '%In1 = u8[`n * 128`] parameter(0)': parameter(0) is u8[n * 128], but input 1 "
                                 "reads u8[n * 64] from buffer 'd0' (with every alpha = 1: [128] against [64])"));
  }
  SECTION("output element count differs from the output slice") {
    isa["mov"].outputs = {{"d1", {"addr_out"}, {"2 * n"}}};
    CHECK(contains(isa.error(), "the value is bf16[n,64], 64 elements, but output 0 writes bf16[2 * n,64] to buffer 'd1', 128 elements"));
  }
  SECTION("dot and transpose shapes") {
    isa["gemm"].semantics = R"(ENTRY gemm {
  %In1 = bf16[64, 64] parameter(0)
  %In2 = bf16[64, 64] parameter(1)
  %t = bf16[64, 32] transpose(%In2), dimensions={1,0}
  ROOT %Out0 = bf16[64, 64] dot(%In1, %In2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
    CHECK(contains(isa.error(), "transpose gives [64,64] from its operands, but the statement says [64,32]"));
    isa["gemm"].semantics = R"(ENTRY gemm {
  %In1 = bf16[64, 64] parameter(0)
  %In2 = bf16[64, 64] parameter(1)
  ROOT %Out0 = bf16[64, 64, 64] dot(%In1, %In2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
    CHECK(contains(isa.error(), "dot gives [64,64] from its operands"));
  }
  SECTION("elementwise dtype") {
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(0)\n  ROOT %Out0 = f32[`n`, 64] copy(%In1)\n}";
    CHECK(contains(isa.error(), "operand 'In1' is bf16 but the result is f32"));
  }
  SECTION("attribute declarations") {
    isa["mov"].beta = {"addr_in", "n"};
    CHECK(contains(isa.error(), "'n' is declared both as alpha and as beta"));
    isa["mov"].beta = {"addr_in", "addr_in"};
    CHECK(contains(isa.error(), "beta attribute 'addr_in' is declared twice"));
  }
  SECTION("cost over alpha only, updates of declared state") {
    isa["mov"].cost = "n + addr_in";
    CHECK(contains(isa.error(), "cost expression 'n + addr_in' mentions 'addr_in'"));
    isa["mov"].cost = "n";
    isa["mov"].updates = {{"mode", "1"}};
    CHECK(contains(isa.error(), "updates 'mode', which is not a declared state register"));
    isa.state.push_back({"mode", 0});
    CHECK(isa.error() == "");
  }
  SECTION("every problem of an instruction at once, with the names it could have meant") {
    isa["mov"].outputs = {{"d7", {"addr_out"}, {"n"}}};
    isa["mov"].constraints = {"n >= 1", "n <= adr_out"};
    const auto e = isa.error();
    // Where the instruction's initializer ends in its header, then both problems.
    CHECK(contains(e, "instruction 'mov' (qkv.hpp:"));
    CHECK(contains(e, "2 problems: output 0 names an unknown buffer 'd7' (buffers: d0, d1, d2); constraint "
                      "'n <= adr_out' mentions 'adr_out', which is neither an attribute of this instruction nor a "
                      "state register (did you mean 'addr_out'? alpha: n; beta: addr_in, addr_out)"));
  }
  SECTION("a misspelt opcode gets a suggestion, the statement is quoted") {
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[`n`, 64] parameter(0)\n  ROOT %Out0 = bf16[`n`, 64] coppy(%In1)\n}";
    CHECK(contains(isa.error(), "semantics line 3 'ROOT %Out0 = bf16[`n`, 64] coppy(%In1)': unknown opcode 'coppy' at "
                                "column 30 (did you mean 'copy'?)"));
  }
  SECTION("a parameter whose shape disagrees with its slice is the statement blamed") {
    // Written [64, n] where the slice gives [n, 64]: the copy using it is consistent with the
    // parameter as written, the parameter is what is wrong.
    isa["mov"].semantics = "ENTRY mov {\n  %In1 = bf16[64, `n`] parameter(0)\n  %t = bf16[`n`, 64] transpose(%In1), "
                           "dimensions={1,0}\n  ROOT %Out0 = bf16[`n`, 64] copy(%t)\n}";
    const auto e = isa.error();
    CHECK(contains(e, "semantics line 2 '%In1 = bf16[64, `n`] parameter(0)': parameter(0) is bf16[64,n], but input 1 reads "
                      "bf16[n,64] from buffer 'd2'"));
    CHECK_FALSE(contains(e, "transpose"));
  }
  SECTION("messages are not cut short") {
    isa["mov"].constraints = {"n >= 1", "n <= a_very_long_attribute_name_that_nobody_declared_anywhere_in_this_isa_header",
                              "n <= another_very_long_attribute_name_that_nobody_declared_anywhere_in_this_header"};
    const auto e = isa.error();
    CHECK(e.size() > 240);
    CHECK(contains(e, "mentions 'another_very_long_attribute_name_that_nobody_declared_anywhere_in_this_header'"));
    CHECK(e.back() == ')');
  }
  SECTION("duplicate instruction") {
    isa.instructions.push_back(isa.instructions[0]);
    CHECK(contains(isa.error(), "instruction 'load_rm' (qkv.hpp:"));
    CHECK(contains(isa.error(), "): instruction name declared twice"));
  }
  SECTION("ISA-level problems") {
    isa.buffers.push_back(act::isa::hbm("d9", 16));
    CHECK(isa.error() == "ISA 'broken': needs exactly one HBM buffer, has 2");
    isa.buffers.pop_back();
    isa.buffers.push_back(isa.buffers[1]);
    CHECK(contains(isa.error(), "buffer 'd1' is declared twice"));
  }
}

TEST_CASE("isa: load_cm is only valid for n = 64", "[isa]") {
  // The shape checks run only for samples satisfying the alpha constraints (here only 64).
  const auto* load_cm = act::isa::view<Qkv>().find_instruction("load_cm");
  REQUIRE(load_cm != nullptr);
  REQUIRE(load_cm->constraints.size() == 1);
  auto c = parse(load_cm->constraints[0]);
  CHECK(evaluate(c, {{"n", 64}}) == 1);
  CHECK(evaluate(c, {{"n", 32}}) == 0);
}

TEST_CASE("isa: registry", "[isa]") {
  auto names = act::isa::isa_names();
  REQUIRE(names.size() == act::isa::kIsaCount);
  CHECK(names[0] == "qkv");
  CHECK(act::isa::with_isa("qkv", [](auto isa) { return std::string(decltype(isa)::type::name); }) == "qkv");
  CHECK(act::isa::find_view("qkv").instructions.size() == 7);
  CHECK(act::isa::find_view("qkv").find_instruction("softmax") != nullptr);
  int calls = 0;
  act::isa::with_isa("qkv", [&](auto) { ++calls; });
  CHECK(calls == 1);
  try {
    act::isa::with_isa("foo", [](auto) { return 0; });
    FAIL("no exception");
  } catch (const act::Error& e) {
    CHECK(e.kind() == act::ErrorKind::Isa);
    CHECK(e.message().rfind("unknown ISA 'foo' (known: qkv", 0) == 0);  // more ISAs may follow qkv
  }
  // Every registered ISA is valid at run time too.
  for (auto name : names) CHECK_NOTHROW(act::isa::check(act::isa::find_view(name)));
}

TEST_CASE("isa: symbolic semantics are parsed once per text and equal a fresh parse", "[isa]") {
  const auto* gemm = act::isa::view<Qkv>().find_instruction("gemm");
  REQUIRE(gemm != nullptr);
  const auto first = act::isa::symbolic_semantics(*gemm);
  const auto again = act::isa::symbolic_semantics(*gemm);
  CHECK(first.get() == again.get());
  const act::hlo::Module fresh = act::hlo::parse_semantics(gemm->semantics, act::hlo::DimensionEvaluator{});
  CHECK(act::hlo::structurally_equal(*first, fresh));

  // Keyed by the text, not by where it is stored: an equal text elsewhere shares the entry, a
  // different one does not.
  const std::string copy(gemm->semantics);
  act::isa::Instruction same = *gemm;
  same.semantics = copy;
  CHECK(act::isa::symbolic_semantics(same).get() == first.get());
  const auto* softmax = act::isa::view<Qkv>().find_instruction("softmax");
  REQUIRE(softmax != nullptr);
  CHECK(act::isa::symbolic_semantics(*softmax).get() != first.get());

  // A malformed text throws every time (nothing is kept for it).
  act::isa::Instruction broken = *gemm;
  broken.semantics = "ENTRY broken { %x = f32[2] parameter(0) ROOT %y = f32[2] frobnicate(%x) }";
  CHECK_THROWS_AS(act::isa::symbolic_semantics(broken), act::Error);
  CHECK_THROWS_AS(act::isa::symbolic_semantics(broken), act::Error);
}
