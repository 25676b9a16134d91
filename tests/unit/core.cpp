// core/: dtypes, bf16/f16 rounding, shapes, literals, errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "act/core/dtype.hpp"
#include "act/core/error.hpp"
#include "act/core/float16.hpp"
#include "act/core/literal.hpp"
#include "act/core/shape.hpp"

using namespace act;

TEST_CASE("every XLA element type name parses, and the paper's i8/i32 aliases") {
  for (const auto& d : kDTypes) CHECK(parse_dtype(d.name) == d.type);
  CHECK(parse_dtype("i8") == DType::s8);
  CHECK(parse_dtype("i32") == DType::s32);
  CHECK_FALSE(parse_dtype("int8").has_value());
  CHECK(byte_width(DType::bf16) == 2);
  CHECK(byte_width(DType::pred) == 1);
  CHECK(is_computable(DType::f64));
  CHECK_FALSE(is_computable(DType::s4));
}

TEST_CASE("bf16 conversion rounds to nearest even") {
  CHECK(f32_to_bf16_bits(1.0f) == 0x3f80);
  // 1 + 2^-8 is exactly halfway between two bf16 values: ties to even (down to 1.0).
  CHECK(f32_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd mantissa) and 1+2^-6: rounds up to even.
  CHECK(f32_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
  CHECK(f32_to_bf16_bits(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3f81);
  CHECK(bf16_bits_to_f32(0xc000) == -2.0f);
  CHECK(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(f32_to_bf16_bits(std::numeric_limits<float>::infinity()) == 0x7f80);
}

TEST_CASE("f16 conversion rounds to nearest even, handles subnormals and overflow") {
  CHECK(f32_to_f16_bits(1.0f) == 0x3c00);
  CHECK(f32_to_f16_bits(65504.0f) == 0x7bff);
  CHECK(f32_to_f16_bits(65520.0f) == 0x7c00);  // halfway to the next binade rounds to inf
  CHECK(f32_to_f16_bits(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(f32_to_f16_bits(std::ldexp(1.0f, -25)) == 0x0000);  // tie with 0: even
  CHECK(f32_to_f16_bits(std::ldexp(3.0f, -26)) == 0x0001);  // 0.75 ulp rounds up
  CHECK(f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
  CHECK(f32_to_f16_bits(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
  for (std::uint32_t h = 0; h < 0x7c00; h += 7) CHECK(f32_to_f16_bits(f16_bits_to_f32(static_cast<std::uint16_t>(h))) == h);
  CHECK(f16_bits_to_f32(0xc000) == -2.0f);
}

TEST_CASE("literals store integers wrapped and floats rounded") {
  Literal l(Shape(DType::s8, {2, 3}));
  CHECK(l.bytes().size() == 6);
  l.set_int(4, 200);
  CHECK(l.get_int(4) == -56);
  Literal u(Shape(DType::u16, {2}));
  u.set_int(0, -1);
  CHECK(u.get_int(0) == 65535);
  Literal b(Shape(DType::bf16, {1}));
  b.set_float(0, 3.14159);
  CHECK(b.get_float(0) == 3.140625);
  Literal p(Shape(DType::pred, {1}));
  p.set_int(0, 5);
  CHECK(p.get_bits(0) == 1);
  const std::int64_t idx[] = {1, 2};
  CHECK(l.linear_index(idx) == 5);
  CHECK(l.strides() == std::vector<std::int64_t>{3, 1});
}

TEST_CASE("shapes print as XLA writes them and compare by type") {
  Shape s(DType::bf16, {64, 64});
  CHECK(to_string(s) == "bf16[64,64]");
  CHECK(s.byte_size() == 8192);
  CHECK(s.minor_to_major() == std::vector<std::int64_t>{1, 0});
  Shape t = Shape::tuple({s, Shape(DType::s32, {})});
  CHECK(to_string(t) == "(bf16[64,64], s32[])");
  CHECK(t.same_type(t));
  CHECK_FALSE(s.same_type(Shape(DType::f32, {64, 64})));
}

TEST_CASE("errors carry kind and line:column") {
  Error e(ErrorKind::Parse, "unexpected ')'", {3, 14});
  CHECK(std::string(e.what()) == "3:14: parse error: unexpected ')'");
  CHECK(e.location().column == 14);
  Error f(ErrorKind::Io, "cannot open x");
  CHECK(std::string(f.what()) == "i/o error: cannot open x");
}
