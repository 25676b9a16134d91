// hlo::evaluate — the reference interpreter: hand-computed values per opcode, XLA's numeric edge
// cases, identities on random tensors, and errors. Modules are built with hlo/builder.hpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <fstream>
#include <sstream>
#include <string>

#include "act/hlo/builder.hpp"
#include "act/hlo/evaluate.hpp"
#include "act/hlo/parser.hpp"

using namespace act;
using namespace act::hlo;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Literal lit(DType t, std::vector<std::int64_t> dims, const std::vector<double>& values) {
  Literal l(Shape(t, std::move(dims)));
  REQUIRE(static_cast<std::int64_t>(values.size()) == l.element_count());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (is_float(t)) l.set_float(static_cast<std::int64_t>(i), values[i]);
    else l.set_int(static_cast<std::int64_t>(i), static_cast<std::int64_t>(values[i]));
  }
  return l;
}

std::vector<double> floats(const Literal& l) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.get_float(i));
  return v;
}
std::vector<std::int64_t> ints(const Literal& l) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.get_int(i));
  return v;
}

// Builds the entry from `b` (root = last instruction) and evaluates it.
Literal run(ComputationBuilder& b, std::vector<Literal> args = {}, Module m = {}) {
  add_computation(m, std::move(b).build(), true);
  return evaluate(m, args);
}

// Evaluates op(a, b) on constants.
Literal binary(Opcode op, const Literal& a, const Literal& b) {
  ComputationBuilder c("main");
  c.binary(op, c.constant(a), c.constant(b));
  return run(c);
}
Literal unary(Opcode op, const Literal& a) {
  ComputationBuilder c("main");
  c.unary(op, c.constant(a));
  return run(c);
}
Literal compare(const Literal& a, const Literal& b, ComparisonDirection dir, std::string type = {}) {
  ComputationBuilder c("main");
  c.compare(c.constant(a), c.constant(b), dir, std::move(type));
  return run(c);
}
Literal convert(const Literal& a, DType to) {
  ComputationBuilder c("main");
  c.convert(c.constant(a), to);
  return run(c);
}

Literal random_literal(DType t, std::vector<std::int64_t> dims, std::mt19937& rng) {
  Literal l(Shape(t, std::move(dims)));
  std::uniform_int_distribution<int> small(-100, 100);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  for (std::int64_t i = 0; i < l.element_count(); ++i) {
    if (is_float(t)) l.set_float(i, real(rng));
    else l.set_int(i, small(rng));
  }
  return l;
}

// Sum-of-`op` computation for reduce.
int add_reducer(Module& m, Opcode op, DType t) { return add_computation(m, scalar_binary_computation("reducer", op, t)); }

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

}  // namespace

// ---------------------------------------------------------------------------------------------
TEST_CASE("float binary ops compute hand values") {
  const Literal a = lit(DType::f32, {4}, {7.5, -7.5, 2.0, 0.5});
  const Literal b = lit(DType::f32, {4}, {2.0, 2.0, -3.0, 4.0});
  CHECK(floats(binary(Opcode::Add, a, b)) == std::vector<double>{9.5, -5.5, -1.0, 4.5});
  CHECK(floats(binary(Opcode::Subtract, a, b)) == std::vector<double>{5.5, -9.5, 5.0, -3.5});
  CHECK(floats(binary(Opcode::Multiply, a, b)) == std::vector<double>{15.0, -15.0, -6.0, 2.0});
  CHECK(floats(binary(Opcode::Divide, a, b)) == std::vector<double>{3.75, -3.75, static_cast<float>(2.0f / -3.0f), 0.125});
  CHECK(floats(binary(Opcode::Remainder, a, b)) == std::vector<double>{1.5, -1.5, 2.0, 0.5});  // sign of the dividend
  CHECK(floats(binary(Opcode::Maximum, a, b)) == std::vector<double>{7.5, 2.0, 2.0, 4.0});
  CHECK(floats(binary(Opcode::Minimum, a, b)) == std::vector<double>{2.0, -7.5, -3.0, 0.5});
  CHECK(floats(binary(Opcode::Power, a, b)) == std::vector<double>{56.25, 56.25, 0.125, 0.0625});
  // f64 keeps double precision.
  const Literal d = binary(Opcode::Divide, lit(DType::f64, {}, {1.0}), lit(DType::f64, {}, {3.0}));
  CHECK(d.get_float(0) == 1.0 / 3.0);
  const Literal f = binary(Opcode::Divide, lit(DType::f32, {}, {1.0}), lit(DType::f32, {}, {3.0}));
  CHECK(f.get_float(0) == static_cast<double>(1.0f / 3.0f));
}

TEST_CASE("maximum and minimum propagate NaN from either side") {
  for (DType t : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    const Literal a = lit(t, {3}, {kNaN, 1.0, -kInf});
    const Literal b = lit(t, {3}, {1.0, kNaN, 5.0});
    const auto mx = floats(binary(Opcode::Maximum, a, b));
    const auto mn = floats(binary(Opcode::Minimum, a, b));
    CHECK(std::isnan(mx[0]));
    CHECK(std::isnan(mx[1]));
    CHECK(mx[2] == 5.0);
    CHECK(std::isnan(mn[0]));
    CHECK(std::isnan(mn[1]));
    CHECK(mn[2] == -kInf);
  }
}

TEST_CASE("float unary ops compute hand values") {
  const Literal x = lit(DType::f32, {6}, {-2.5, -1.5, -0.0, 0.5, 2.5, 3.5});
  CHECK(floats(unary(Opcode::Negate, x)) == std::vector<double>{2.5, 1.5, 0.0, -0.5, -2.5, -3.5});
  CHECK(floats(unary(Opcode::Abs, x)) == std::vector<double>{2.5, 1.5, 0.0, 0.5, 2.5, 3.5});
  CHECK(floats(unary(Opcode::Floor, x)) == std::vector<double>{-3, -2, 0, 0, 2, 3});
  CHECK(floats(unary(Opcode::Ceil, x)) == std::vector<double>{-2, -1, 0, 1, 3, 4});
  CHECK(floats(unary(Opcode::RoundNearestEven, x)) == std::vector<double>{-2, -2, 0, 0, 2, 4});
  CHECK(floats(unary(Opcode::RoundNearestAfz, x)) == std::vector<double>{-3, -2, 0, 1, 3, 4});
  const auto sign = floats(unary(Opcode::Sign, lit(DType::f32, {4}, {-3.0, -0.0, 7.0, kNaN})));
  CHECK(sign[0] == -1.0);
  CHECK(same_bits(sign[1], -0.0));  // sign keeps the zero's sign
  CHECK(sign[2] == 1.0);
  CHECK(std::isnan(sign[3]));

  const Literal y = lit(DType::f32, {3}, {0.0, 1.0, 4.0});
  CHECK(floats(unary(Opcode::Exponential, y)) == std::vector<double>{1.0, static_cast<float>(std::exp(1.0f)), static_cast<float>(std::exp(4.0f))});
  CHECK(floats(unary(Opcode::Sqrt, y)) == std::vector<double>{0.0, 1.0, 2.0});
  CHECK(floats(unary(Opcode::Rsqrt, y)) == std::vector<double>{kInf, 1.0, 0.5});
  CHECK(floats(unary(Opcode::Log, y))[1] == 0.0);
  CHECK(floats(unary(Opcode::Log, y))[0] == -kInf);
  CHECK(floats(unary(Opcode::Log, y))[2] == Approx(std::log(4.0)).epsilon(1e-6));
  CHECK(floats(unary(Opcode::Tanh, y))[0] == 0.0);
  CHECK(floats(unary(Opcode::Tanh, y))[1] == Approx(0.7615941559557649).epsilon(1e-6));
  CHECK(floats(unary(Opcode::Logistic, y))[0] == 0.5);
  CHECK(floats(unary(Opcode::Logistic, y))[2] == Approx(1.0 / (1.0 + std::exp(-4.0))).epsilon(1e-6));
  CHECK(floats(unary(Opcode::Logistic, lit(DType::f32, {1}, {-200.0})))[0] == 0.0);
  CHECK(floats(unary(Opcode::ExponentialMinusOne, y))[0] == 0.0);
  CHECK(floats(unary(Opcode::ExponentialMinusOne, y))[1] == Approx(std::exp(1.0) - 1).epsilon(1e-6));
  CHECK(floats(unary(Opcode::LogPlusOne, y))[0] == 0.0);
  CHECK(floats(unary(Opcode::LogPlusOne, y))[1] == Approx(std::log(2.0)).epsilon(1e-6));
  CHECK(floats(unary(Opcode::Sine, y))[0] == 0.0);
  CHECK(floats(unary(Opcode::Cosine, y))[0] == 1.0);
  CHECK(floats(unary(Opcode::Sine, y))[1] == Approx(std::sin(1.0)).epsilon(1e-6));
  CHECK(floats(unary(Opcode::Cosine, y))[2] == Approx(std::cos(4.0)).epsilon(1e-6));
  CHECK(std::isnan(floats(unary(Opcode::Sqrt, lit(DType::f32, {1}, {-1.0})))[0]));
  const Literal finite = unary(Opcode::IsFinite, lit(DType::bf16, {4}, {1.0, kInf, -kInf, kNaN}));
  CHECK(finite.dtype() == DType::pred);
  CHECK(ints(finite) == std::vector<std::int64_t>{1, 0, 0, 0});
}

TEST_CASE("bf16 elementwise ops compute in f32 and round once to nearest even") {
  const double e8 = std::ldexp(1.0, -8), e7 = std::ldexp(1.0, -7), e6 = std::ldexp(1.0, -6);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even (1). 1+2^-7 + 2^-8 ties up to 1 + 2^-6.
  const Literal a = lit(DType::bf16, {3}, {1.0, 1.0 + e7, 1.0});
  const Literal b = lit(DType::bf16, {3}, {e8, e8, e8 + std::ldexp(1.0, -15)});
  CHECK(floats(binary(Opcode::Add, a, b)) == std::vector<double>{1.0, 1.0 + e6, 1.0 + e7});
  // A bf16 product exact in f32 rounds once: 1.0078125 * 1.0078125 = 1.01568603515625 -> 1.015625.
  const Literal m = binary(Opcode::Multiply, lit(DType::bf16, {}, {1.0 + e7}), lit(DType::bf16, {}, {1.0 + e7}));
  CHECK(m.get_float(0) == 1.015625);
  // f16: 2048 + 1 rounds to 2048 (ulp is 2 there), 2048 + 3 to 2052.
  const Literal h = binary(Opcode::Add, lit(DType::f16, {2}, {2048, 2048}), lit(DType::f16, {2}, {1, 3}));
  CHECK(floats(h) == std::vector<double>{2048, 2052});
  // exp in bf16: f32 exp then rounding: exp(1) = 2.71828 -> 2.71875.
  CHECK(unary(Opcode::Exponential, lit(DType::bf16, {}, {1.0})).get_float(0) == 2.71875);
}

TEST_CASE("integer arithmetic wraps and follows XLA's division rules") {
  CHECK(ints(binary(Opcode::Add, lit(DType::s8, {2}, {100, -100}), lit(DType::s8, {2}, {100, -100}))) ==
        std::vector<std::int64_t>{-56, 56});
  CHECK(ints(binary(Opcode::Add, lit(DType::u8, {1}, {200}), lit(DType::u8, {1}, {100}))) == std::vector<std::int64_t>{44});
  CHECK(ints(binary(Opcode::Multiply, lit(DType::s16, {1}, {300}), lit(DType::s16, {1}, {300}))) ==
        std::vector<std::int64_t>{90000 - 65536});
  CHECK(ints(binary(Opcode::Subtract, lit(DType::u32, {1}, {0}), lit(DType::u32, {1}, {1}))) ==
        std::vector<std::int64_t>{4294967295});
  const double int_min = -2147483648.0;
  const Literal num = lit(DType::s32, {6}, {7, -7, 7, 5, int_min, int_min});
  const Literal den = lit(DType::s32, {6}, {2, 2, -2, 0, -1, 0});
  CHECK(ints(binary(Opcode::Divide, num, den)) == std::vector<std::int64_t>{3, -3, -3, -1, -2147483648LL, -1});
  CHECK(ints(binary(Opcode::Remainder, num, den)) == std::vector<std::int64_t>{1, -1, 1, 5, 0, -2147483648LL});
  // Unsigned division by zero is all ones; s64 INT_MIN / -1 does not trap.
  CHECK(ints(binary(Opcode::Divide, lit(DType::u32, {1}, {9}), lit(DType::u32, {1}, {0}))) == std::vector<std::int64_t>{4294967295});
  CHECK(ints(binary(Opcode::Remainder, lit(DType::u8, {1}, {9}), lit(DType::u8, {1}, {0}))) == std::vector<std::int64_t>{9});
  Literal s64min(Shape(DType::s64, {1}));
  s64min.set_int(0, std::numeric_limits<std::int64_t>::min());
  CHECK(binary(Opcode::Divide, s64min, lit(DType::s64, {1}, {-1})).get_int(0) == std::numeric_limits<std::int64_t>::min());
  CHECK(binary(Opcode::Remainder, s64min, lit(DType::s64, {1}, {-1})).get_int(0) == 0);
  // Unsigned comparison in max/min.
  CHECK(ints(binary(Opcode::Maximum, lit(DType::u8, {1}, {200}), lit(DType::u8, {1}, {100}))) == std::vector<std::int64_t>{200});
  CHECK(ints(binary(Opcode::Minimum, lit(DType::s8, {1}, {-56}), lit(DType::s8, {1}, {100}))) == std::vector<std::int64_t>{-56});
  CHECK(ints(binary(Opcode::Power, lit(DType::s32, {5}, {2, 3, -1, 1, -2}), lit(DType::s32, {5}, {10, -1, -3, -5, 3}))) ==
        std::vector<std::int64_t>{1024, 0, -1, 1, -8});
  CHECK(ints(unary(Opcode::Negate, lit(DType::s32, {2}, {5, int_min}))) == std::vector<std::int64_t>{-5, -2147483648LL});
  CHECK(ints(unary(Opcode::Abs, lit(DType::s32, {3}, {-5, 5, int_min}))) == std::vector<std::int64_t>{5, 5, -2147483648LL});
  CHECK(ints(unary(Opcode::Sign, lit(DType::s32, {3}, {-5, 0, 9}))) == std::vector<std::int64_t>{-1, 0, 1});
  CHECK(ints(unary(Opcode::Negate, lit(DType::u8, {1}, {1}))) == std::vector<std::int64_t>{255});
}

TEST_CASE("shifts saturate for amounts >= the bit width") {
  const Literal v = lit(DType::s32, {6}, {1, 1, -1, -8, -8, 8});
  const Literal s = lit(DType::s32, {6}, {31, 32, 28, 1, 40, 40});
  CHECK(ints(binary(Opcode::ShiftLeft, v, s)) == std::vector<std::int64_t>{-2147483648LL, 0, -268435456, -16, 0, 0});
  CHECK(ints(binary(Opcode::ShiftRightLogical, v, s)) == std::vector<std::int64_t>{0, 0, 15, 2147483644, 0, 0});
  CHECK(ints(binary(Opcode::ShiftRightArithmetic, v, s)) == std::vector<std::int64_t>{0, 0, -1, -4, -1, 0});
  // A negative amount reads as a huge unsigned one.
  CHECK(ints(binary(Opcode::ShiftLeft, lit(DType::s32, {1}, {3}), lit(DType::s32, {1}, {-1}))) == std::vector<std::int64_t>{0});
  CHECK(ints(binary(Opcode::ShiftLeft, lit(DType::s8, {1}, {1}), lit(DType::s8, {1}, {7}))) == std::vector<std::int64_t>{-128});
  CHECK(ints(binary(Opcode::ShiftRightLogical, lit(DType::u8, {1}, {0x80}), lit(DType::u8, {1}, {7}))) == std::vector<std::int64_t>{1});
}

TEST_CASE("bitwise ops on integers and pred") {
  const Literal a = lit(DType::s32, {2}, {0b1100, -1});
  const Literal b = lit(DType::s32, {2}, {0b1010, 0x0f});
  CHECK(ints(binary(Opcode::And, a, b)) == std::vector<std::int64_t>{0b1000, 0x0f});
  CHECK(ints(binary(Opcode::Or, a, b)) == std::vector<std::int64_t>{0b1110, -1});
  CHECK(ints(binary(Opcode::Xor, a, b)) == std::vector<std::int64_t>{0b0110, -16});
  CHECK(ints(unary(Opcode::Not, a)) == std::vector<std::int64_t>{~0b1100, 0});
  const Literal p = lit(DType::pred, {4}, {0, 0, 1, 1});
  const Literal q = lit(DType::pred, {4}, {0, 1, 0, 1});
  CHECK(ints(binary(Opcode::And, p, q)) == std::vector<std::int64_t>{0, 0, 0, 1});
  CHECK(ints(binary(Opcode::Or, p, q)) == std::vector<std::int64_t>{0, 1, 1, 1});
  CHECK(ints(binary(Opcode::Xor, p, q)) == std::vector<std::int64_t>{0, 1, 1, 0});
  CHECK(ints(unary(Opcode::Not, p)) == std::vector<std::int64_t>{1, 1, 0, 0});
  ComputationBuilder c("main");
  c.binary(Opcode::And, c.constant(lit(DType::f32, {1}, {1.0})), c.constant(lit(DType::f32, {1}, {1.0})));
  CHECK_THROWS_AS(run(c), Error);
}

TEST_CASE("compare: every direction, signedness, NaN and TOTALORDER") {
  using D = ComparisonDirection;
  const Literal a = lit(DType::s32, {3}, {-1, 2, 3});
  const Literal b = lit(DType::s32, {3}, {1, 2, 2});
  CHECK(ints(compare(a, b, D::EQ)) == std::vector<std::int64_t>{0, 1, 0});
  CHECK(ints(compare(a, b, D::NE)) == std::vector<std::int64_t>{1, 0, 1});
  CHECK(ints(compare(a, b, D::LT)) == std::vector<std::int64_t>{1, 0, 0});
  CHECK(ints(compare(a, b, D::LE)) == std::vector<std::int64_t>{1, 1, 0});
  CHECK(ints(compare(a, b, D::GT)) == std::vector<std::int64_t>{0, 0, 1});
  CHECK(ints(compare(a, b, D::GE)) == std::vector<std::int64_t>{0, 1, 1});
  CHECK(ints(compare(a, b, D::LT, "UNSIGNED")) == std::vector<std::int64_t>{0, 0, 0});  // 0xffffffff > 1
  const Literal u = lit(DType::u32, {1}, {4294967295.0});
  CHECK(ints(compare(u, lit(DType::u32, {1}, {1}), D::GT)) == std::vector<std::int64_t>{1});
  CHECK(ints(compare(u, lit(DType::u32, {1}, {1}), D::GT, "SIGNED")) == std::vector<std::int64_t>{0});

  const Literal x = lit(DType::f32, {4}, {kNaN, 1.0, kNaN, -0.0});
  const Literal y = lit(DType::f32, {4}, {1.0, kNaN, kNaN, 0.0});
  for (D d : {D::EQ, D::LT, D::LE, D::GT, D::GE}) {
    const auto r = ints(compare(x, y, d));
    CHECK(r[0] == 0);
    CHECK(r[1] == 0);
    CHECK(r[2] == 0);
  }
  CHECK(ints(compare(x, y, D::NE)) == std::vector<std::int64_t>{1, 1, 1, 0});
  CHECK(ints(compare(x, y, D::EQ)) == std::vector<std::int64_t>{0, 0, 0, 1});  // -0 == +0

  // TOTALORDER: -NaN < -Inf < -1 < -0 < +0 < 1 < +Inf < +NaN, for every float width.
  for (DType t : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    const std::vector<double> ordered{-kNaN, -kInf, -1.0, -0.0, 0.0, 1.0, kInf, kNaN};
    std::vector<double> lhs, rhs;
    for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
      lhs.push_back(ordered[i]);
      rhs.push_back(ordered[i + 1]);
    }
    const Literal l = lit(t, {7}, lhs), r = lit(t, {7}, rhs);
    CHECK(ints(compare(l, r, D::LT, "TOTALORDER")) == std::vector<std::int64_t>(7, 1));
    CHECK(ints(compare(r, l, D::LT, "TOTALORDER")) == std::vector<std::int64_t>(7, 0));
    CHECK(ints(compare(l, l, D::EQ, "TOTALORDER")) == std::vector<std::int64_t>(7, 1));  // NaN == NaN here
  }
}

TEST_CASE("select and clamp, with scalar predicate and bounds") {
  ComputationBuilder c("main");
  const int p = c.constant(lit(DType::pred, {3}, {1, 0, 1}));
  const int t = c.constant(lit(DType::s32, {3}, {1, 2, 3}));
  const int f = c.constant(lit(DType::s32, {3}, {10, 20, 30}));
  const int s = c.select(p, t, f);
  const int ps = c.constant(lit(DType::pred, {}, {0}));
  const int s2 = c.select(ps, t, f);
  c.tuple({s, s2});
  const Literal r = run(c);
  CHECK(ints(r.elements()[0]) == std::vector<std::int64_t>{1, 20, 3});
  CHECK(ints(r.elements()[1]) == std::vector<std::int64_t>{10, 20, 30});

  ComputationBuilder k("main");
  const int lo = k.constant(lit(DType::f32, {}, {-1.0}));
  const int hi = k.constant(lit(DType::f32, {}, {2.0}));
  k.clamp(lo, k.constant(lit(DType::f32, {4}, {-5.0, 0.5, 7.0, kNaN})), hi);
  const auto cl = floats(run(k));
  CHECK(cl[0] == -1.0);
  CHECK(cl[1] == 0.5);
  CHECK(cl[2] == 2.0);
  CHECK(std::isnan(cl[3]));

  ComputationBuilder ki("main");
  ki.clamp(ki.constant(lit(DType::s32, {3}, {0, 5, -10})), ki.constant(lit(DType::s32, {3}, {-3, 3, 3})),
           ki.constant(lit(DType::s32, {3}, {1, 9, -5})));
  CHECK(ints(run(ki)) == std::vector<std::int64_t>{0, 5, -5});
}

TEST_CASE("convert: truncation, saturation, NaN, wrap and nearest-even") {
  const Literal f = lit(DType::f32, {7}, {2.7, -2.7, 1e10, -1e10, kNaN, kInf, -0.5});
  CHECK(ints(convert(f, DType::s32)) ==
        std::vector<std::int64_t>{2, -2, 2147483647, -2147483648LL, 0, 2147483647, 0});
  CHECK(ints(convert(f, DType::u8)) == std::vector<std::int64_t>{2, 0, 255, 0, 0, 255, 0});
  CHECK(ints(convert(f, DType::s8)) == std::vector<std::int64_t>{2, -2, 127, -128, 0, 127, 0});
  CHECK(ints(convert(lit(DType::f64, {2}, {1e30, -1e30}), DType::s64)) ==
        std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()});
  CHECK(convert(lit(DType::f64, {1}, {1e30}), DType::u64).get_bits(0) == ~std::uint64_t{0});
  CHECK(ints(convert(lit(DType::f32, {4}, {0.0, 0.5, -0.0, kNaN}), DType::pred)) == std::vector<std::int64_t>{0, 1, 0, 1});

  // int -> float: nearest even. 16777217 is a tie between 2^24 and 2^24+2.
  CHECK(floats(convert(lit(DType::s32, {2}, {16777217, 16777219}), DType::f32)) == std::vector<double>{16777216, 16777220});
  CHECK(floats(convert(lit(DType::s32, {3}, {257, 259, -257}), DType::bf16)) == std::vector<double>{256, 260, -256});
  // 2^24 + 2^16 + 1 lies just above the bf16 midpoint: correct rounding gives 2^24 + 2^17 where
  // rounding through f32 first would give 2^24 (double rounding).
  const double tricky = 16777216.0 + 65536.0 + 1.0;
  CHECK(convert(lit(DType::s32, {1}, {tricky}), DType::bf16).get_float(0) == 16908288.0);
  CHECK(convert(lit(DType::f64, {1}, {tricky}), DType::bf16).get_float(0) == 16908288.0);
  CHECK(convert(lit(DType::f64, {1}, {2049.0000001}), DType::f16).get_float(0) == 2050.0);
  Literal big(Shape(DType::u32, {1}));
  big.set_bits(0, 0xffffffffu);
  CHECK(convert(big, DType::f32).get_float(0) == 4294967296.0);

  // int -> int wraps; pred -> numbers is 0/1.
  CHECK(ints(convert(lit(DType::u8, {2}, {200, 5}), DType::s8)) == std::vector<std::int64_t>{-56, 5});
  CHECK(ints(convert(lit(DType::s32, {2}, {-1, 256}), DType::u8)) == std::vector<std::int64_t>{255, 0});
  CHECK(ints(convert(lit(DType::s8, {1}, {-1}), DType::s32)) == std::vector<std::int64_t>{-1});
  CHECK(ints(convert(lit(DType::s32, {3}, {0, 7, -2}), DType::pred)) == std::vector<std::int64_t>{0, 1, 1});
  CHECK(floats(convert(lit(DType::pred, {2}, {1, 0}), DType::bf16)) == std::vector<double>{1.0, 0.0});
  // float -> float: f32 -> bf16 nearest even, bf16 -> f32 exact.
  CHECK(convert(lit(DType::f32, {1}, {1.0 + std::ldexp(1.0, -8)}), DType::bf16).get_float(0) == 1.0);
  CHECK(convert(lit(DType::bf16, {1}, {3.140625}), DType::f32).get_float(0) == 3.140625);
}

TEST_CASE("bitcast-convert reinterprets little-endian bytes, also across widths") {
  ComputationBuilder c("main");
  const int x = c.constant(lit(DType::f32, {2}, {1.0, -2.0}));
  const int bytes = c.bitcast_convert(x, DType::u8);
  CHECK(c.shape(bytes).dims == std::vector<std::int64_t>{2, 4});
  const int back = c.bitcast_convert(bytes, DType::f32);
  const int as_int = c.bitcast_convert(x, DType::s32);
  c.tuple({bytes, back, as_int});
  const Literal r = run(c);
  CHECK(ints(r.elements()[0]) == std::vector<std::int64_t>{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0});
  CHECK(floats(r.elements()[1]) == std::vector<double>{1.0, -2.0});
  CHECK(ints(r.elements()[2]) == std::vector<std::int64_t>{0x3f800000, static_cast<std::int32_t>(0xc0000000u)});
}

TEST_CASE("iota counts along its dimension") {
  ComputationBuilder c("main");
  const int a = c.iota(Shape(DType::s32, {2, 3}), 1);
  const int b = c.iota(Shape(DType::bf16, {2, 3}), 0);
  c.tuple({a, b});
  const Literal r = run(c);
  CHECK(ints(r.elements()[0]) == std::vector<std::int64_t>{0, 1, 2, 0, 1, 2});
  CHECK(floats(r.elements()[1]) == std::vector<double>{0, 0, 0, 1, 1, 1});
}

TEST_CASE("reshape, transpose and copy move data row-major") {
  ComputationBuilder c("main");
  const int x = c.iota(Shape(DType::s32, {6}), 0);
  const int r = c.reshape(x, {2, 3});
  const int t = c.transpose(r, {1, 0});
  const int cp = c.copy(t);
  c.tuple({r, t, cp});
  const Literal out = run(c);
  CHECK(out.elements()[0].shape().dims == std::vector<std::int64_t>{2, 3});
  CHECK(ints(out.elements()[1]) == std::vector<std::int64_t>{0, 3, 1, 4, 2, 5});
  CHECK(out.elements()[1].shape().dims == std::vector<std::int64_t>{3, 2});
  CHECK(ints(out.elements()[2]) == ints(out.elements()[1]));

  // rank 3: out[i,j,k] = in[k,i,j] with perm {2,0,1}.
  ComputationBuilder d("main");
  d.transpose(d.reshape(d.iota(Shape(DType::s32, {24}), 0), {2, 3, 4}), {2, 0, 1});
  const Literal t3 = run(d);
  CHECK(t3.shape().dims == std::vector<std::int64_t>{4, 2, 3});
  // out[1,1,2] = in[k=2? no: out dims (in2, in0, in1)] = in[1,2,1] = 1*12 + 2*4 + 1 = 21
  const std::int64_t idx[] = {1, 1, 2};
  CHECK(t3.get_int(t3.linear_index(idx)) == 1 * 12 + 2 * 4 + 1);
}

TEST_CASE("bitcast honours minor_to_major layouts") {
  ComputationBuilder c("main");
  Shape column_major(DType::s32, {2, 3});
  column_major.has_layout = true;
  column_major.layout.minor_to_major = {0, 1};
  const int x = c.parameter(column_major);
  Shape row_major(DType::s32, {3, 2});
  row_major.has_layout = true;
  row_major.layout.minor_to_major = {1, 0};
  c.bitcast(x, row_major);
  // The column-major [2,3] array's bytes are the row-major [3,2] transpose.
  const Literal r = run(c, {lit(DType::s32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  CHECK(ints(r) == std::vector<std::int64_t>{1, 4, 2, 5, 3, 6});
  // Without layouts a bitcast is a reshape.
  ComputationBuilder d("main");
  d.bitcast(d.parameter(Shape(DType::s32, {2, 3})), Shape(DType::s32, {3, 2}));
  CHECK(ints(run(d, {lit(DType::s32, {2, 3}, {1, 2, 3, 4, 5, 6})})) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("broadcast: scalar, mapped dims, size-1 expansion, unsorted dims") {
  ComputationBuilder c("main");
  const int s = c.constant(lit(DType::s32, {}, {7}));
  const int v = c.constant(lit(DType::s32, {3}, {1, 2, 3}));
  const int w = c.constant(lit(DType::s32, {2}, {10, 20}));
  const int one = c.constant(lit(DType::s32, {1, 3}, {4, 5, 6}));
  const int m = c.constant(lit(DType::s32, {3, 2}, {1, 2, 3, 4, 5, 6}));
  c.tuple({c.broadcast(s, {2, 2}, {}), c.broadcast(v, {2, 3}, {1}), c.broadcast(w, {2, 3}, {0}), c.broadcast(one, {2, 3}, {0, 1}),
           c.broadcast(m, {2, 3}, {1, 0})});
  const Literal r = run(c);
  CHECK(ints(r.elements()[0]) == std::vector<std::int64_t>{7, 7, 7, 7});
  CHECK(ints(r.elements()[1]) == std::vector<std::int64_t>{1, 2, 3, 1, 2, 3});
  CHECK(ints(r.elements()[2]) == std::vector<std::int64_t>{10, 10, 10, 20, 20, 20});
  CHECK(ints(r.elements()[3]) == std::vector<std::int64_t>{4, 5, 6, 4, 5, 6});
  CHECK(ints(r.elements()[4]) == std::vector<std::int64_t>{1, 3, 5, 2, 4, 6});  // a transpose
}

TEST_CASE("slice with strides, dynamic-slice and dynamic-update-slice clamp their starts") {
  ComputationBuilder c("main");
  const int x = c.reshape(c.iota(Shape(DType::s32, {12}), 0), {3, 4});
  const int sl = c.slice(x, {{0, 3, 2}, {1, 4, 2}});
  const int i0 = c.constant(lit(DType::s32, {}, {2}));
  const int i1 = c.constant(lit(DType::s32, {}, {3}));
  const int neg = c.constant(lit(DType::s32, {}, {-5}));
  const int ds = c.dynamic_slice(x, {i0, i1}, {2, 2});     // clamped to (1, 2)
  const int ds2 = c.dynamic_slice(x, {neg, i0}, {1, 2});   // clamped to (0, 2)
  const int upd = c.constant(lit(DType::s32, {2, 2}, {-1, -2, -3, -4}));
  const int dus = c.dynamic_update_slice(x, upd, {i0, neg});  // clamped to (1, 0)
  const int vec = c.constant(lit(DType::s32, {2}, {0, 1}));
  Instruction legacy;  // the legacy form: one rank-1 index vector
  legacy.opcode = Opcode::DynamicSlice;
  legacy.shape = Shape(DType::s32, {1, 3});
  legacy.operands = {x, vec};
  legacy.dynamic_slice_sizes = {1, 3};
  const int ds3 = c.add(legacy);
  c.tuple({sl, ds, ds2, dus, ds3});
  const Literal r = run(c);
  CHECK(ints(r.elements()[0]) == std::vector<std::int64_t>{1, 3, 9, 11});
  CHECK(ints(r.elements()[1]) == std::vector<std::int64_t>{6, 7, 10, 11});
  CHECK(ints(r.elements()[2]) == std::vector<std::int64_t>{2, 3});
  CHECK(ints(r.elements()[3]) == std::vector<std::int64_t>{0, 1, 2, 3, -1, -2, 6, 7, -3, -4, 10, 11});
  CHECK(ints(r.elements()[4]) == std::vector<std::int64_t>{1, 2, 3});
}

TEST_CASE("concatenate, pad (negative and interior) and reverse") {
  ComputationBuilder c("main");
  const int a = c.constant(lit(DType::s32, {2, 1}, {1, 2}));
  const int b = c.constant(lit(DType::s32, {2, 2}, {3, 4, 5, 6}));
  const int cat = c.concatenate({a, b, a}, 1);
  const int v = c.constant(lit(DType::s32, {3}, {1, 2, 3}));
  const int zero = c.constant(lit(DType::s32, {}, {0}));
  const int p1 = c.pad(v, zero, {{1, 2, 1}});
  const int p2 = c.pad(v, zero, {{-1, -1, 1}});
  const int p3 = c.pad(v, zero, {{-3, 0, 0}});
  const int m = c.constant(lit(DType::s32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  const int nine = c.constant(lit(DType::s32, {}, {9}));
  const int p4 = c.pad(m, nine, {{1, 0, 0}, {0, 1, 1}});
  const int rev = c.reverse(m, {1});
  const int rev2 = c.reverse(m, {0, 1});
  c.tuple({cat, p1, p2, p3, p4, rev, rev2});
  const Literal r = run(c);
  CHECK(ints(r.elements()[0]) == std::vector<std::int64_t>{1, 3, 4, 1, 2, 5, 6, 2});
  CHECK(ints(r.elements()[1]) == std::vector<std::int64_t>{0, 1, 0, 2, 0, 3, 0, 0});
  CHECK(ints(r.elements()[2]) == std::vector<std::int64_t>{0, 2, 0});
  CHECK(r.elements()[3].element_count() == 0);
  CHECK(r.elements()[4].shape().dims == std::vector<std::int64_t>{3, 6});
  CHECK(ints(r.elements()[4]) == std::vector<std::int64_t>{9, 9, 9, 9, 9, 9, 1, 9, 2, 9, 3, 9, 4, 9, 5, 9, 6, 9});
  CHECK(ints(r.elements()[5]) == std::vector<std::int64_t>{3, 2, 1, 6, 5, 4});
  CHECK(ints(r.elements()[6]) == std::vector<std::int64_t>{6, 5, 4, 3, 2, 1});
}

TEST_CASE("reduce with simple and general to_apply computations") {
  Module m;
  const int add = add_reducer(m, Opcode::Add, DType::s32);
  const int max = add_reducer(m, Opcode::Maximum, DType::s32);
  // Non-commutative, operands swapped: f(acc, x) = x - acc.
  ComputationBuilder sub("rsub");
  const int acc = sub.parameter(Shape(DType::s32, {}));
  const int el = sub.parameter(Shape(DType::s32, {}));
  sub.binary(Opcode::Subtract, el, acc);
  const int rsub = add_computation(m, std::move(sub).build());
  // General: f(acc, x) = acc + x*x.
  ComputationBuilder sq("sumsq");
  const int a2 = sq.parameter(Shape(DType::s32, {}));
  const int x2 = sq.parameter(Shape(DType::s32, {}));
  sq.binary(Opcode::Add, a2, sq.binary(Opcode::Multiply, x2, x2));
  const int sumsq = add_computation(m, std::move(sq).build());

  ComputationBuilder c("main");
  const int x = c.constant(lit(DType::s32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  const int zero = c.constant(lit(DType::s32, {}, {0}));
  const int ten = c.constant(lit(DType::s32, {}, {10}));
  c.tuple({c.reduce({x}, {zero}, {1}, add), c.reduce({x}, {zero}, {0}, add), c.reduce({x}, {ten}, {0, 1}, add),
           c.reduce({x}, {zero}, {1}, max), c.reduce({x}, {zero}, {1}, rsub), c.reduce({x}, {zero}, {0}, sumsq),
           c.reduce({x}, {zero}, {}, add)});
  const Literal r = run(c, {}, std::move(m));
  CHECK(ints(r.elements()[0]) == std::vector<std::int64_t>{6, 15});
  CHECK(ints(r.elements()[1]) == std::vector<std::int64_t>{5, 7, 9});
  CHECK(ints(r.elements()[2]) == std::vector<std::int64_t>{31});
  CHECK(r.elements()[2].shape().rank() == 0);
  CHECK(ints(r.elements()[3]) == std::vector<std::int64_t>{3, 6});
  // acc: 0 -> 1-0=1 -> 2-1=1 -> 3-1=2 ; 0 -> 4 -> 1 -> 5
  CHECK(ints(r.elements()[4]) == std::vector<std::int64_t>{2, 5});
  CHECK(ints(r.elements()[5]) == std::vector<std::int64_t>{17, 29, 45});
  CHECK(ints(r.elements()[6]) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});  // no reduced dims: f(init, x)
}

TEST_CASE("variadic reduce: argmax as (value, index)") {
  Module m;
  ComputationBuilder am("argmax");
  const int av = am.parameter(Shape(DType::f32, {}));
  const int ai = am.parameter(Shape(DType::s32, {}));
  const int bv = am.parameter(Shape(DType::f32, {}));
  const int bi = am.parameter(Shape(DType::s32, {}));
  const int take_b = am.compare(bv, av, ComparisonDirection::GT);
  am.tuple({am.select(take_b, bv, av), am.select(take_b, bi, ai)});
  const int argmax = add_computation(m, std::move(am).build());

  ComputationBuilder c("main");
  const int x = c.constant(lit(DType::f32, {2, 4}, {1, 7, 3, 7, -1, -5, -0.5, -9}));
  const int idx = c.iota(Shape(DType::s32, {2, 4}), 1);
  c.reduce({x, idx}, {c.constant(lit(DType::f32, {}, {-kInf})), c.constant(lit(DType::s32, {}, {-1}))}, {1}, argmax);
  const Literal r = run(c, {}, std::move(m));
  REQUIRE(r.is_tuple());
  CHECK(floats(r.elements()[0]) == std::vector<double>{7, -0.5});
  CHECK(ints(r.elements()[1]) == std::vector<std::int64_t>{1, 2});  // first maximum wins
}

TEST_CASE("a bf16 reduce rounds after every step; an f32 one does not") {
  const double e8 = std::ldexp(1.0, -8);
  std::vector<double> values(257, e8);
  values[0] = 1.0;
  for (DType t : {DType::bf16, DType::f32}) {
    Module m;
    const int add = add_reducer(m, Opcode::Add, t);
    ComputationBuilder c("main");
    c.reduce({c.constant(lit(t, {257}, values))}, {c.constant(lit(t, {}, {0.0}))}, {0}, add);
    const Literal r = run(c, {}, std::move(m));
    // bf16: 1 + 2^-8 ties back to 1 at each step. f32: exact 1 + 256 * 2^-8 = 2.
    CHECK(r.get_float(0) == (t == DType::bf16 ? 1.0 : 2.0));
  }
}

TEST_CASE("dot: matrix product, contracting dims, batch dims") {
  ComputationBuilder c("main");
  const int a = c.constant(lit(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  const int b = c.constant(lit(DType::f32, {3, 2}, {7, 8, 9, 10, 11, 12}));
  const int mm = c.matmul(a, b, DType::f32);
  DotDimensions tn;  // a^T a: contract dim 0 with dim 0
  tn.lhs_contracting = {0};
  tn.rhs_contracting = {0};
  const int ata = c.dot(a, a, tn, DType::f32);
  DotDimensions inner;  // vector inner product over both dims
  inner.lhs_contracting = {0, 1};
  inner.rhs_contracting = {0, 1};
  const int frob = c.dot(a, a, inner, DType::f32);
  c.tuple({mm, ata, frob});
  const Literal r = run(c);
  CHECK(floats(r.elements()[0]) == std::vector<double>{58, 64, 139, 154});
  CHECK(floats(r.elements()[1]) == std::vector<double>{17, 22, 27, 22, 29, 36, 27, 36, 45});
  CHECK(floats(r.elements()[2]) == std::vector<double>{91});

  // Batch dims: [2,2,3] x [3,2,2] with lhs batch 0, rhs batch 2 -> [2,2,2].
  ComputationBuilder d("main");
  std::vector<double> lv(12), rv(12);
  for (int i = 0; i < 12; ++i) lv[i] = i + 1, rv[i] = (i % 5) - 2;
  const int l = d.constant(lit(DType::s32, {2, 2, 3}, lv));
  const int rr = d.constant(lit(DType::s32, {3, 2, 2}, rv));
  DotDimensions bd;
  bd.lhs_batch = {0};
  bd.rhs_batch = {2};
  bd.lhs_contracting = {2};
  bd.rhs_contracting = {0};
  d.dot(l, rr, bd, DType::s32);
  const Literal out = run(d);
  REQUIRE(out.shape().dims == std::vector<std::int64_t>{2, 2, 2});
  for (int bi = 0; bi < 2; ++bi)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        std::int64_t sum = 0;
        for (int k = 0; k < 3; ++k) sum += static_cast<std::int64_t>(lv[bi * 6 + i * 3 + k]) * static_cast<std::int64_t>(rv[k * 4 + j * 2 + bi]);
        const std::int64_t index[] = {bi, i, j};
        CHECK(out.get_int(out.linear_index(index)) == sum);
      }
}

TEST_CASE("dot numerics: f32 accumulation for bf16, exact s8->s32, s32 wrap") {
  const double e8 = std::ldexp(1.0, -8);
  ComputationBuilder c("main");
  const int a = c.constant(lit(DType::bf16, {1, 3}, {1.0, e8, e8}));
  const int ones = c.constant(lit(DType::bf16, {3, 1}, {1, 1, 1}));
  c.matmul(a, ones, DType::bf16);
  // Accumulated in f32: 1 + 2^-7 (exact in bf16); rounding after each add would give 1.
  CHECK(run(c).get_float(0) == 1.0 + 2 * e8);

  ComputationBuilder d("main");
  d.matmul(d.constant(lit(DType::s8, {1, 4}, {127, 127, -128, -128})), d.constant(lit(DType::s8, {4, 1}, {127, 127, -128, -128})), DType::s32);
  CHECK(run(d).get_int(0) == 2 * 127 * 127 + 2 * 128 * 128);

  ComputationBuilder w("main");
  w.matmul(w.constant(lit(DType::s32, {1, 2}, {65536, 3})), w.constant(lit(DType::s32, {2, 1}, {32768, 1})), DType::s32);
  CHECK(run(w).get_int(0) == -2147483648LL + 3);  // 2^31 + 3 wraps

  ComputationBuilder e("main");  // s8 x s8 -> s8: the s32 sum converted (wrapped) to s8
  e.matmul(e.constant(lit(DType::s8, {1, 2}, {100, 100})), e.constant(lit(DType::s8, {2, 1}, {2, 1})), DType::s8);
  CHECK(run(e).get_int(0) == static_cast<std::int8_t>(300));
}

TEST_CASE("tuple, get-tuple-element and call") {
  Module m;
  ComputationBuilder callee("twice");
  const int p = callee.parameter(Shape(DType::s32, {2}));
  callee.binary(Opcode::Add, p, p);
  const int twice = add_computation(m, std::move(callee).build());
  ComputationBuilder c("main");
  const int x = c.parameter(Shape(DType::s32, {2}));
  const int y = c.parameter(Shape(DType::f32, {}));
  const int t = c.tuple({x, y});
  const int g = c.get_tuple_element(t, 0);
  c.call({g}, twice, Shape(DType::s32, {2}));
  const Literal r = run(c, {lit(DType::s32, {2}, {3, -4}), lit(DType::f32, {}, {1.5})}, std::move(m));
  CHECK(ints(r) == std::vector<std::int64_t>{6, -8});
}

// ---------------------------------------------------------------------------------------------
TEST_CASE("identities on random tensors") {
  std::mt19937 rng(1234);
  for (DType t : {DType::s32, DType::bf16, DType::f32, DType::s8}) {
    const Literal x = random_literal(t, {3, 4, 5}, rng);
    ComputationBuilder c("main");
    const int p = c.parameter(x.shape());
    const int tt = c.transpose(c.transpose(p, {2, 0, 1}), {1, 2, 0});           // perm then inverse
    const int rr = c.reshape(c.reshape(p, {5, 12}), {3, 4, 5});
    const int rv = c.reverse(c.reverse(p, {0, 2}), {2, 0});
    const int sc = c.slice(c.concatenate({p, p, p}, 1), {{0, 3, 1}, {4, 8, 1}, {0, 5, 1}});
    const int zero = c.constant(lit(t, {}, {0}));
    const int ps = c.slice(c.pad(p, zero, {{2, 1, 1}, {0, 3, 2}, {-1, 1, 0}}), {{2, 7, 2}, {0, 10, 3}, {0, 5, 1}});
    const int dus = c.dynamic_update_slice(c.broadcast(zero, {3, 4, 5}, {}), p, {c.constant(lit(DType::s32, {}, {1})),
                                                                                 c.constant(lit(DType::s32, {}, {0})),
                                                                                 c.constant(lit(DType::s32, {}, {0}))});
    const int bc = c.bitcast_convert(c.bitcast_convert(p, DType::u8), t);
    c.tuple({tt, rr, rv, sc, ps, dus, bc});
    const Literal r = run(c, {x});
    CHECK(r.elements()[0].bitwise_equal(x));
    CHECK(r.elements()[1].bitwise_equal(x));
    CHECK(r.elements()[2].bitwise_equal(x));
    CHECK(r.elements()[3].bitwise_equal(x));
    // pad dim 2 by (-1, +1) shifts it left by one: compare the overlapping part.
    const Literal& padded = r.elements()[4];
    REQUIRE(padded.shape().dims == std::vector<std::int64_t>{3, 4, 5});
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 4; ++j)
        for (std::int64_t k = 0; k < 5; ++k) {
          const std::int64_t pi[] = {i, j, k}, xi[] = {i, j, k + 1};
          if (k < 4) CHECK(padded.get_bits(padded.linear_index(pi)) == x.get_bits(x.linear_index(xi)));
          else CHECK(padded.get_float(padded.linear_index(pi)) == 0.0);
        }
    CHECK(r.elements()[5].bitwise_equal(x));  // start clamped to 0 since the update fills dim 0
    CHECK(r.elements()[6].bitwise_equal(x));
  }
}

TEST_CASE("dot with the identity and broadcast-then-reduce are exact for integers") {
  std::mt19937 rng(99);
  for (DType t : {DType::s8, DType::s32, DType::u16}) {
    const Literal x = random_literal(t, {5, 7}, rng);
    ComputationBuilder c("main");
    const int p = c.parameter(x.shape());
    const int row = c.iota(Shape(DType::s32, {7, 7}), 0);
    const int col = c.iota(Shape(DType::s32, {7, 7}), 1);
    const int eye = c.convert(c.compare(row, col, ComparisonDirection::EQ), t);
    const int xi = c.matmul(p, eye, t);
    const int ix = c.matmul(c.convert(c.compare(c.iota(Shape(DType::s32, {5, 5}), 0), c.iota(Shape(DType::s32, {5, 5}), 1),
                                                ComparisonDirection::EQ), t), p, t);
    c.tuple({xi, ix});
    const Literal r = run(c, {x});
    CHECK(r.elements()[0].bitwise_equal(x));
    CHECK(r.elements()[1].bitwise_equal(x));

    Module m;
    const int add = add_reducer(m, Opcode::Add, t);
    ComputationBuilder b("main");
    const int q = b.parameter(x.shape());
    b.reduce({b.broadcast(q, {5, 3, 7}, {0, 2})}, {b.constant(lit(t, {}, {0}))}, {1}, add);
    const Literal s = run(b, {x}, std::move(m));
    for (std::int64_t i = 0; i < x.element_count(); ++i) {
      Literal three(Shape(t, {}));
      three.set_int(0, 3 * x.get_int(i));  // wrapped like the interpreter must
      CHECK(s.get_int(i) == three.get_int(0));
    }
  }
}

TEST_CASE("a random f32 dot matches a double reference closely") {
  std::mt19937 rng(7);
  const Literal a = random_literal(DType::f32, {2, 16, 24}, rng);
  const Literal b = random_literal(DType::f32, {2, 24, 8}, rng);
  ComputationBuilder c("main");
  DotDimensions dims;
  dims.lhs_batch = {0};
  dims.rhs_batch = {0};
  dims.lhs_contracting = {2};
  dims.rhs_contracting = {1};
  const int pa = c.parameter(a.shape());
  const int pb = c.parameter(b.shape());
  c.dot(pa, pb, dims, DType::f32);
  const Literal r = run(c, {a, b});
  for (int bi = 0; bi < 2; ++bi)
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        double sum = 0;
        for (int k = 0; k < 24; ++k) sum += a.get_float(bi * 384 + i * 24 + k) * b.get_float(bi * 192 + k * 8 + j);
        CHECK(r.get_float(bi * 128 + i * 8 + j) == Approx(sum).margin(1e-5));
      }
}

// ---------------------------------------------------------------------------------------------
TEST_CASE("errors: arguments, unsupported opcodes and types, elided constants, bad shapes") {
  ComputationBuilder c("main");
  const int p = c.parameter(Shape(DType::f32, {2}), "q");
  c.unary(Opcode::Negate, p);
  Module m;
  add_computation(m, std::move(c).build(), true);
  std::vector<Literal> none;
  CHECK_THROWS_AS(evaluate(m, none), Error);
  try {
    std::vector<Literal> wrong{lit(DType::f32, {3}, {1, 2, 3})};
    evaluate(m, wrong);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Shape);
    CHECK_THAT(e.message(), Catch::Contains("parameter 0") && Catch::Contains("%q") && Catch::Contains("f32[2]"));
  }

  // An unsupported opcode, with the instruction's location.
  ComputationBuilder s("main");
  Instruction sort;
  sort.opcode = Opcode::Sort;
  sort.shape = Shape(DType::f32, {2});
  sort.operands = {s.parameter(Shape(DType::f32, {2}))};
  sort.location = {7, 3};
  s.add(sort);
  try {
    run(s, {lit(DType::f32, {2}, {2, 1})});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Unsupported);
    CHECK_THAT(e.message(), Catch::Contains("evaluate: opcode 'sort' is not supported"));
    CHECK(e.location() == SourceLocation{7, 3});
  }

  // An element type the interpreter does not compute on.
  ComputationBuilder t("main");
  Instruction narrow;
  narrow.opcode = Opcode::Iota;
  narrow.shape = Shape(DType::s4, {4});
  narrow.iota_dimension = 0;
  t.add(narrow);
  try {
    run(t);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Unsupported);
    CHECK_THAT(e.message(), Catch::Contains("element type s4 is not supported"));
  }

  // An elided constant.
  ComputationBuilder el("main");
  Literal unknown(Shape(DType::f32, {2}));
  unknown.elided = true;
  el.constant(unknown);
  try {
    run(el);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Unsupported);
  }

  // Declared shapes that do not fit the operands are Shape errors, not crashes.
  auto bad = [](Instruction instr, std::vector<Shape> operand_shapes) {
    ComputationBuilder b("main");
    std::vector<Literal> args;
    for (auto& s2 : operand_shapes) {
      instr.operands.push_back(b.parameter(s2));
      args.emplace_back(s2);
    }
    b.add(std::move(instr));
    try {
      run(b, std::move(args));
      return std::string("no error");
    } catch (const Error& e) {
      return std::string(to_string(e.kind()));
    }
  };
  Instruction add;
  add.opcode = Opcode::Add;
  add.shape = Shape(DType::f32, {3});
  CHECK(bad(add, {Shape(DType::f32, {2}), Shape(DType::f32, {2})}) == "shape error");
  Instruction tr;
  tr.opcode = Opcode::Transpose;
  tr.shape = Shape(DType::f32, {2, 2});
  tr.dimensions = {0, 0};
  CHECK(bad(tr, {Shape(DType::f32, {2, 2})}) == "shape error");
  Instruction sl;
  sl.opcode = Opcode::Slice;
  sl.shape = Shape(DType::f32, {3});
  sl.slice = {{0, 3, 1}};
  CHECK(bad(sl, {Shape(DType::f32, {2})}) == "shape error");
  Instruction bc;
  bc.opcode = Opcode::Broadcast;
  bc.shape = Shape(DType::f32, {2, 3});
  bc.dimensions = {1};
  CHECK(bad(bc, {Shape(DType::f32, {2})}) == "shape error");
  Instruction dt;
  dt.opcode = Opcode::Dot;
  dt.shape = Shape(DType::f32, {2, 2});
  dt.dot.lhs_contracting = {1};
  dt.dot.rhs_contracting = {0};
  CHECK(bad(dt, {Shape(DType::f32, {2, 3}), Shape(DType::f32, {2, 2})}) == "shape error");
  Instruction pd;
  pd.opcode = Opcode::Pad;
  pd.shape = Shape(DType::f32, {5});
  pd.padding = {{1, 1, -1}};
  CHECK(bad(pd, {Shape(DType::f32, {3}), Shape(DType::f32, {})}) == "shape error");
  Instruction rd;
  rd.opcode = Opcode::Reduce;
  rd.shape = Shape(DType::f32, {2});
  rd.dimensions = {1};
  rd.called_computations = {5};
  CHECK(bad(rd, {Shape(DType::f32, {2, 2}), Shape(DType::f32, {})}) == "shape error");
  Instruction gte;
  gte.opcode = Opcode::GetTupleElement;
  gte.shape = Shape(DType::f32, {2});
  gte.tuple_index = 0;
  CHECK(bad(gte, {Shape(DType::f32, {2})}) == "shape error");
  Instruction ex;
  ex.opcode = Opcode::Exponential;
  ex.shape = Shape(DType::s32, {2});
  CHECK(bad(ex, {Shape(DType::s32, {2})}) == "shape error");
}

TEST_CASE("evaluate runs any computation of the module, and rejects a module without entry") {
  Module m;
  const int add = add_computation(m, scalar_binary_computation("add", Opcode::Add, DType::f32));
  std::vector<Literal> args{lit(DType::f32, {}, {1.5}), lit(DType::f32, {}, {2.25})};
  CHECK(evaluate(m, m.computations[static_cast<std::size_t>(add)], args).get_float(0) == 3.75);
  CHECK_THROWS_AS(evaluate(m, args), Error);
}

// ---------------------------------------------------------------------------------------------
// Modules from HLO text (hlo/parser.hpp).

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

float bf16_round(float x) { return bf16_bits_to_f32(f32_to_bf16_bits(x)); }

}  // namespace

TEST_CASE("attention.hlo (qkv) matches a hand-written bf16 computation bit for bit") {
  const Module m = parse_module(read_text(std::string(ACT_SHARED_DIR) + "/kernels/qkv/attention.hlo"));
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  constexpr int n = 64;
  std::vector<Literal> args;
  std::vector<std::vector<float>> qkv(3, std::vector<float>(n * n));
  for (int a = 0; a < 3; ++a) {
    Literal l(Shape(DType::bf16, {n, n}));
    for (int i = 0; i < n * n; ++i) {
      qkv[a][i] = bf16_round(dist(rng));
      l.set_float(i, qkv[a][i]);
    }
    args.push_back(std::move(l));
  }
  const auto& q = qkv[0];
  const auto& k = qkv[1];
  const auto& v = qkv[2];
  // scores = q k^T (f32 accumulation, one rounding), exp, row sums in bf16, divide, probs v.
  std::vector<float> e(n * n), sum(n, 0.0f), out(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      for (int t = 0; t < n; ++t) acc += q[i * n + t] * k[j * n + t];
      e[i * n + j] = bf16_round(std::exp(bf16_round(acc)));
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) sum[i] = bf16_round(sum[i] + e[i * n + j]);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      for (int t = 0; t < n; ++t) acc += bf16_round(e[i * n + t] / sum[i]) * v[t * n + j];
      out[i * n + j] = bf16_round(acc);
    }
  const Literal r = evaluate(m, args);
  REQUIRE(r.shape().same_type(Shape(DType::bf16, {n, n})));
  int mismatches = 0;
  for (int i = 0; i < n * n; ++i) mismatches += r.get_float(i) != out[i];
  CHECK(mismatches == 0);
}

TEST_CASE("parsed modules: reduce with to_apply, fusion, while, conditional") {
  const Module m = parse_module(R"(
HloModule small

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}

%fused (x: f32[2,3]) -> f32[3] {
  %x = f32[2,3] parameter(0)
  %lowest = f32[] constant(-100)
  ROOT %r = f32[3] reduce(%x, %lowest), dimensions={0}, to_apply=%max
}

%cond (s: (s32[], s32[])) -> pred[] {
  %s = (s32[], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %five = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %five), direction=LT
}

%body (s: (s32[], s32[])) -> (s32[], s32[]) {
  %s = (s32[], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %acc = s32[] get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %sum = s32[] add(%acc, %next)
  ROOT %t = (s32[], s32[]) tuple(%next, %sum)
}

%neg (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  ROOT %n = f32[3] negate(%x)
}

%same (x: f32[3]) -> f32[3] {
  ROOT %x = f32[3] parameter(0)
}

ENTRY %main (p: f32[2,3], flag: pred[]) -> (f32[3], (s32[], s32[]), f32[3]) {
  %p = f32[2,3] parameter(0)
  %flag = pred[] parameter(1)
  %f = f32[3] fusion(%p), kind=kLoop, calls=%fused
  %zero = s32[] constant(0)
  %init = (s32[], s32[]) tuple(%zero, %zero)
  %w = (s32[], s32[]) while(%init), condition=%cond, body=%body
  %c = f32[3] conditional(%flag, %f, %f), true_computation=%neg, false_computation=%same
  ROOT %out = (f32[3], (s32[], s32[]), f32[3]) tuple(%f, %w, %c)
}
)");
  std::vector<Literal> args{lit(DType::f32, {2, 3}, {1, -7, 3, -2, 5, 0.5}), lit(DType::pred, {}, {1})};
  Literal r = evaluate(m, args);
  REQUIRE(r.is_tuple());
  CHECK(floats(r.elements()[0]) == std::vector<double>{1, 5, 3});
  CHECK(ints(r.elements()[1].elements()[0]) == std::vector<std::int64_t>{5});
  CHECK(ints(r.elements()[1].elements()[1]) == std::vector<std::int64_t>{15});  // 1+2+3+4+5
  CHECK(floats(r.elements()[2]) == std::vector<double>{-1, -5, -3});
  args[1] = lit(DType::pred, {}, {0});
  r = evaluate(m, args);
  CHECK(floats(r.elements()[2]) == std::vector<double>{1, 5, 3});
  // The reducer alone, as the simulator runs ISA computations.
  std::vector<Literal> pair{lit(DType::f32, {}, {2}), lit(DType::f32, {}, {kNaN})};
  CHECK(std::isnan(evaluate(m, m.computations[static_cast<std::size_t>(m.find("max"))], pair).get_float(0)));
}

TEST_CASE("the paper's k4 (sgemm, shorthand dialect) evaluates to an outer product") {
  const Module m = parse_module(read_text(std::string(ACT_SHARED_DIR) + "/kernels/paper/k4_sgemm_avx.hlo"));
  std::mt19937 rng(5);
  const Literal a = random_literal(DType::f32, {48}, rng);
  const Literal b = random_literal(DType::f32, {8, 4}, rng);
  const Literal r = evaluate(m, std::vector<Literal>{a, b});
  REQUIRE(r.shape().dims == std::vector<std::int64_t>{8, 48});
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 48; ++i)
      CHECK(r.get_float(j * 48 + i) == static_cast<float>(static_cast<float>(a.get_float(i)) * static_cast<float>(b.get_float(j * 4))));
}

TEST_CASE("errors from parsed text carry the instruction's line:column") {
  const Module m = parse_module("HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT s = f32[4] sort(p), dimensions={0}\n}\n");
  try {
    evaluate(m, std::vector<Literal>{lit(DType::f32, {4}, {4, 3, 2, 1})});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Unsupported);
    CHECK(e.location().line == 5);
    CHECK_THAT(e.message(), Catch::Contains("opcode 'sort' is not supported"));
  }
}
