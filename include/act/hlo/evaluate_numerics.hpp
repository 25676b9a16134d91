// Scalar semantics of the reference interpreter: one function per kind of element operation.
// The rules (XLA's CPU backend) are listed in evaluate.hpp; this header only implements them.
//
// Values are held in three domains:
//   - integers and pred: std::int64_t, "canonical" = wrapped to the element width and sign- or
//     zero-extended by the type's signedness (u64 keeps its bit pattern); pred is a 1-bit unsigned;
//   - bf16, f16, f32: float (bf16/f16 ops compute in f32; the caller rounds when storing);
//   - f64: double.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "act/core/dtype.hpp"
#include "act/core/float16.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/opcode.hpp"

namespace act::hlo::eval_detail {

// ---------------------------------------------------------------------------------------------
// Integers

struct IntType {
  int bits = 32;
  bool is_signed = true;
};

constexpr IntType int_type(DType t) {
  if (t == DType::pred) return {1, false};
  return {bit_width(t), is_signed_integer(t)};
}

// Wraps v to t's width and extends it by t's signedness.
constexpr std::int64_t canonical(std::uint64_t v, IntType t) {
  if (t.bits >= 64) return static_cast<std::int64_t>(v);
  const std::uint64_t mask = (std::uint64_t{1} << t.bits) - 1;
  v &= mask;
  if (t.is_signed && ((v >> (t.bits - 1)) & 1u)) v |= ~mask;
  return static_cast<std::int64_t>(v);
}
constexpr std::uint64_t zero_extended(std::int64_t v, IntType t) {
  const auto u = static_cast<std::uint64_t>(v);
  return t.bits >= 64 ? u : u & ((std::uint64_t{1} << t.bits) - 1);
}
constexpr std::int64_t sign_extended(std::int64_t v, IntType t) {
  return canonical(zero_extended(v, t), IntType{t.bits, true});
}
constexpr bool int_less(std::int64_t a, std::int64_t b, IntType t) {
  return t.is_signed ? a < b : static_cast<std::uint64_t>(a) < static_cast<std::uint64_t>(b);
}

// Integer power by squaring with wrap. A negative exponent gives 0, except for bases 1 and -1
// where the exact value (1 or ±1) is representable.
constexpr std::int64_t int_power(std::int64_t base, std::int64_t exponent, IntType t) {
  if (t.is_signed && exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent & 1) ? -1 : 1;
    return 0;
  }
  std::uint64_t result = 1, b = static_cast<std::uint64_t>(base), e = static_cast<std::uint64_t>(exponent);
  while (e != 0) {
    if (e & 1u) result *= b;
    b *= b;
    e >>= 1;
  }
  return canonical(result, t);
}

inline bool int_binary_supported(Opcode op) {
  switch (op) {
    case Opcode::Add: case Opcode::Subtract: case Opcode::Multiply: case Opcode::Divide:
    case Opcode::Remainder: case Opcode::Maximum: case Opcode::Minimum: case Opcode::Power:
    case Opcode::And: case Opcode::Or: case Opcode::Xor: case Opcode::ShiftLeft:
    case Opcode::ShiftRightLogical: case Opcode::ShiftRightArithmetic:
      return true;
    default: return false;
  }
}

// op(a, b) on canonical values; the result is canonical.
inline std::int64_t int_binary(Opcode op, std::int64_t a, std::int64_t b, IntType t) {
  const auto ua = static_cast<std::uint64_t>(a);
  const auto ub = static_cast<std::uint64_t>(b);
  switch (op) {
    case Opcode::Add: return canonical(ua + ub, t);
    case Opcode::Subtract: return canonical(ua - ub, t);
    case Opcode::Multiply: return canonical(ua * ub, t);
    case Opcode::Divide:
      if (b == 0) return canonical(~std::uint64_t{0}, t);           // x / 0 = -1 (all ones)
      if (t.is_signed) {
        if (b == -1) return canonical(std::uint64_t{0} - ua, t);     // INT_MIN / -1 wraps to INT_MIN
        return canonical(static_cast<std::uint64_t>(a / b), t);
      }
      return canonical(ua / ub, t);
    case Opcode::Remainder:
      if (b == 0) return a;                                          // x % 0 = x
      if (t.is_signed) return b == -1 ? 0 : a % b;                   // sign of the dividend
      return canonical(ua % ub, t);
    case Opcode::Maximum: return int_less(a, b, t) ? b : a;
    case Opcode::Minimum: return int_less(b, a, t) ? b : a;
    case Opcode::Power: return int_power(a, b, t);
    case Opcode::And: return canonical(ua & ub, t);
    case Opcode::Or: return canonical(ua | ub, t);
    case Opcode::Xor: return canonical(ua ^ ub, t);
    case Opcode::ShiftLeft: {
      const std::uint64_t amount = zero_extended(b, t);  // negative amounts are huge: saturate
      return amount >= static_cast<std::uint64_t>(t.bits) ? 0 : canonical(ua << amount, t);
    }
    case Opcode::ShiftRightLogical: {
      const std::uint64_t amount = zero_extended(b, t);
      return amount >= static_cast<std::uint64_t>(t.bits) ? 0 : canonical(zero_extended(a, t) >> amount, t);
    }
    case Opcode::ShiftRightArithmetic: {
      const std::uint64_t amount = zero_extended(b, t);
      const std::int64_t s = sign_extended(a, t);
      if (amount >= static_cast<std::uint64_t>(t.bits)) return canonical(s < 0 ? ~std::uint64_t{0} : 0, t);
      return canonical(static_cast<std::uint64_t>(s >> amount), t);
    }
    default: return 0;  // callers check int_binary_supported first
  }
}

inline bool int_unary_supported(Opcode op) {
  switch (op) {
    case Opcode::Negate: case Opcode::Abs: case Opcode::Sign: case Opcode::Not:
    case Opcode::Popcnt: case Opcode::CountLeadingZeros:
      return true;
    default: return false;
  }
}

inline std::int64_t int_unary(Opcode op, std::int64_t a, IntType t) {
  const auto ua = static_cast<std::uint64_t>(a);
  switch (op) {
    case Opcode::Negate: return canonical(std::uint64_t{0} - ua, t);
    case Opcode::Abs: return (t.is_signed && a < 0) ? canonical(std::uint64_t{0} - ua, t) : a;
    case Opcode::Sign: return t.is_signed ? (a > 0) - (a < 0) : (a != 0);
    case Opcode::Not: return canonical(~ua, t);
    case Opcode::Popcnt: return std::popcount(zero_extended(a, t));
    case Opcode::CountLeadingZeros: return std::countl_zero(zero_extended(a, t)) - (64 - t.bits);
    default: return 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Floating point (T is float for bf16/f16/f32, double for f64)

inline bool float_binary_supported(Opcode op) {
  switch (op) {
    case Opcode::Add: case Opcode::Subtract: case Opcode::Multiply: case Opcode::Divide:
    case Opcode::Remainder: case Opcode::Maximum: case Opcode::Minimum: case Opcode::Power:
    case Opcode::Atan2:
      return true;
    default: return false;
  }
}

template <class T>
T float_binary(Opcode op, T a, T b) {
  switch (op) {
    case Opcode::Add: return a + b;
    case Opcode::Subtract: return a - b;
    case Opcode::Multiply: return a * b;
    case Opcode::Divide: return a / b;
    case Opcode::Remainder: return std::fmod(a, b);
    // NaN-propagating; otherwise the lhs wins ties (so max(-0, +0) = -0 as in XLA's emitter).
    case Opcode::Maximum: return (std::isnan(a) || a >= b) ? a : b;
    case Opcode::Minimum: return (std::isnan(a) || a <= b) ? a : b;
    case Opcode::Power: return std::pow(a, b);
    case Opcode::Atan2: return std::atan2(a, b);
    default: return a;
  }
}

inline bool float_unary_supported(Opcode op) {
  switch (op) {
    case Opcode::Negate: case Opcode::Abs: case Opcode::Sign: case Opcode::Exponential:
    case Opcode::ExponentialMinusOne: case Opcode::Log: case Opcode::LogPlusOne: case Opcode::Tanh:
    case Opcode::Logistic: case Opcode::Sqrt: case Opcode::Rsqrt: case Opcode::Cbrt: case Opcode::Floor:
    case Opcode::Ceil: case Opcode::RoundNearestEven: case Opcode::RoundNearestAfz: case Opcode::Sine:
    case Opcode::Cosine:
      return true;
    default: return false;
  }
}

template <class T>
T float_unary(Opcode op, T x) {
  switch (op) {
    case Opcode::Negate: return -x;
    case Opcode::Abs: return std::fabs(x);
    case Opcode::Sign: return std::isnan(x) ? x : x > 0 ? T(1) : x < 0 ? T(-1) : x;  // keeps ±0
    case Opcode::Exponential: return std::exp(x);
    case Opcode::ExponentialMinusOne: return std::expm1(x);
    case Opcode::Log: return std::log(x);
    case Opcode::LogPlusOne: return std::log1p(x);
    case Opcode::Tanh: return std::tanh(x);
    case Opcode::Logistic: return T(1) / (T(1) + std::exp(-x));
    case Opcode::Sqrt: return std::sqrt(x);
    case Opcode::Rsqrt: return T(1) / std::sqrt(x);
    case Opcode::Cbrt: return std::cbrt(x);
    case Opcode::Floor: return std::floor(x);
    case Opcode::Ceil: return std::ceil(x);
    case Opcode::RoundNearestEven: return std::nearbyint(x);  // the default rounding mode is to-nearest-even
    case Opcode::RoundNearestAfz: return std::round(x);
    case Opcode::Sine: return std::sin(x);
    case Opcode::Cosine: return std::cos(x);
    default: return x;
  }
}

// A signed integer key whose order is TOTALORDER: -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN.
inline std::int64_t total_order_key(float x) {
  const auto s = std::bit_cast<std::int32_t>(x);
  return s < 0 ? (s ^ 0x7fffffff) : s;
}
inline std::int64_t total_order_key(double x) {
  const auto s = std::bit_cast<std::int64_t>(x);
  return s < 0 ? (s ^ std::numeric_limits<std::int64_t>::max()) : s;
}

template <class T>
constexpr bool compare_ordered(ComparisonDirection d, T a, T b) {
  switch (d) {
    case ComparisonDirection::EQ: return a == b;
    case ComparisonDirection::NE: return a != b;  // true for NaN operands
    case ComparisonDirection::GE: return a >= b;
    case ComparisonDirection::GT: return a > b;
    case ComparisonDirection::LE: return a <= b;
    case ComparisonDirection::LT: return a < b;
  }
  return false;
}

// Rounds an f32-domain result to the element type (bf16/f16 nearest-even; f32 unchanged).
inline float round_to(DType t, float x) {
  switch (t) {
    case DType::bf16: return bf16_bits_to_f32(f32_to_bf16_bits(x));
    case DType::f16: return f16_bits_to_f32(f32_to_f16_bits(x));
    default: return x;
  }
}

// ---------------------------------------------------------------------------------------------
// Conversions. Narrowing to bf16/f16 goes through an f32 rounded *to odd*, which makes the final
// nearest-even rounding exact (no double rounding) for f64 and 64-bit integer sources.

inline float double_to_float_round_odd(double d) {
  if (!std::isfinite(d)) return static_cast<float>(d);
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);  // truncate
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

inline float integer_to_float_round_odd(bool negative, std::uint64_t magnitude) {
  const int length = 64 - std::countl_zero(magnitude);
  const int shift = length > 24 ? length - 24 : 0;
  std::uint64_t m = magnitude >> shift;
  if (shift > 0 && (magnitude & ((std::uint64_t{1} << shift) - 1)) != 0) m |= 1u;  // sticky bit
  const float f = std::ldexp(static_cast<float>(m), shift);
  return negative ? -f : f;
}

// Float -> integer: truncate toward zero, saturate to the target range, NaN -> 0.
inline std::int64_t float_to_integer(double d, DType to) {
  if (to == DType::pred) return d != 0 ? 1 : 0;
  if (std::isnan(d)) return 0;
  const IntType t = int_type(to);
  const double truncated = std::trunc(d);
  if (!t.is_signed) {
    if (truncated <= 0) return 0;
    const double limit = std::ldexp(1.0, t.bits);  // 2^bits, exact
    if (truncated >= limit) return canonical(~std::uint64_t{0}, t);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(truncated));
  }
  const double limit = std::ldexp(1.0, t.bits - 1);
  if (truncated >= limit) return canonical((std::uint64_t{1} << (t.bits - 1)) - 1, t);
  if (truncated < -limit) return canonical(std::uint64_t{1} << (t.bits - 1), t);
  return static_cast<std::int64_t>(truncated);
}

}  // namespace act::hlo::eval_detail
