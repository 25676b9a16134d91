// bf16 and f16 <-> f32 conversions, rounding to nearest even (as XLA's CPU backend does).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace act {

// f32 -> bf16 bits, round to nearest even; NaN stays a quiet NaN with its sign.
constexpr std::uint16_t f32_to_bf16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0)
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  const std::uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7fffu + lsb) >> 16);
}

constexpr float bf16_bits_to_f32(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

// f32 -> IEEE binary16 bits, round to nearest even, overflow to infinity, subnormals kept.
constexpr std::uint16_t f32_to_f16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t exponent = (bits >> 23) & 0xffu;
  std::uint32_t mantissa = bits & 0x007fffffu;
  if (exponent == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x0200u : 0u));
  const int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);  // rounds to zero
    mantissa |= 0x00800000u;
    const int shift = 14 - e;  // 13 + (1 - e)
    const std::uint32_t half = 1u << (shift - 1);
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    std::uint32_t result = mantissa >> shift;
    if (rest > half || (rest == half && (result & 1u))) ++result;
    return static_cast<std::uint16_t>(sign | result);
  }
  std::uint32_t result = (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;  // may carry into inf
  return static_cast<std::uint16_t>(sign | result);
}

constexpr float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    const std::uint32_t bits = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x3ffu) << 13);
    return std::bit_cast<float>(bits);
  }
  return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

}  // namespace act
