// Element types: every XLA primitive type name is known (so the parser accepts any module);
// the interpreter and simulator compute on the twelve `is_computable` ones.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace act {

enum class DType : std::uint8_t {
  // computable
  pred, s8, s16, s32, s64, u8, u16, u32, u64, f16, bf16, f32, f64,
  // known to the parser only
  s1, s2, s4, u1, u2, u4,
  f8e5m2, f8e4m3, f8e4m3fn, f8e4m3b11fnuz, f8e3m4, f8e5m2fnuz, f8e4m3fnuz,
  f4e2m1fn, f8e8m0fnu, f6e3m2fn, f6e2m3fn,
  c64, c128, token, opaque,
};

struct DTypeInfo {
  DType type;
  std::string_view name;
  int bits;          // storage width of one element (0 for token/opaque)
  bool is_integer;   // pred counts as an unsigned 1-bit integer stored in a byte
  bool is_signed;
  bool is_float;     // real floating point (not complex)
  bool is_computable;
};

inline constexpr std::array<DTypeInfo, 34> kDTypes{{
    {DType::pred, "pred", 8, true, false, false, true},
    {DType::s8, "s8", 8, true, true, false, true},
    {DType::s16, "s16", 16, true, true, false, true},
    {DType::s32, "s32", 32, true, true, false, true},
    {DType::s64, "s64", 64, true, true, false, true},
    {DType::u8, "u8", 8, true, false, false, true},
    {DType::u16, "u16", 16, true, false, false, true},
    {DType::u32, "u32", 32, true, false, false, true},
    {DType::u64, "u64", 64, true, false, false, true},
    {DType::f16, "f16", 16, false, true, true, true},
    {DType::bf16, "bf16", 16, false, true, true, true},
    {DType::f32, "f32", 32, false, true, true, true},
    {DType::f64, "f64", 64, false, true, true, true},
    {DType::s1, "s1", 1, true, true, false, false},
    {DType::s2, "s2", 2, true, true, false, false},
    {DType::s4, "s4", 4, true, true, false, false},
    {DType::u1, "u1", 1, true, false, false, false},
    {DType::u2, "u2", 2, true, false, false, false},
    {DType::u4, "u4", 4, true, false, false, false},
    {DType::f8e5m2, "f8e5m2", 8, false, true, true, false},
    {DType::f8e4m3, "f8e4m3", 8, false, true, true, false},
    {DType::f8e4m3fn, "f8e4m3fn", 8, false, true, true, false},
    {DType::f8e4m3b11fnuz, "f8e4m3b11fnuz", 8, false, true, true, false},
    {DType::f8e3m4, "f8e3m4", 8, false, true, true, false},
    {DType::f8e5m2fnuz, "f8e5m2fnuz", 8, false, true, true, false},
    {DType::f8e4m3fnuz, "f8e4m3fnuz", 8, false, true, true, false},
    {DType::f4e2m1fn, "f4e2m1fn", 4, false, true, true, false},
    {DType::f8e8m0fnu, "f8e8m0fnu", 8, false, false, true, false},
    {DType::f6e3m2fn, "f6e3m2fn", 6, false, true, true, false},
    {DType::f6e2m3fn, "f6e2m3fn", 6, false, true, true, false},
    {DType::c64, "c64", 64, false, true, false, false},
    {DType::c128, "c128", 128, false, true, false, false},
    {DType::token, "token", 0, false, false, false, false},
    {DType::opaque, "opaque", 0, false, false, false, false},
}};

constexpr const DTypeInfo& info(DType t) { return kDTypes[static_cast<std::size_t>(t)]; }
constexpr std::string_view name(DType t) { return info(t).name; }
constexpr bool is_integer(DType t) { return info(t).is_integer; }
constexpr bool is_signed_integer(DType t) { return info(t).is_integer && info(t).is_signed; }
constexpr bool is_float(DType t) { return info(t).is_float; }
constexpr bool is_computable(DType t) { return info(t).is_computable; }
constexpr int bit_width(DType t) { return info(t).bits; }
// A convert from `from` to `to` keeps the low bits of an integer (XLA wraps): both integers,
// neither pred (converting to pred compares with zero), `to` narrower.
constexpr bool is_integer_narrowing(DType from, DType to) {
  return is_integer(from) && is_integer(to) && from != DType::pred && to != DType::pred && bit_width(to) < bit_width(from);
}
// Bytes one element occupies in a literal or in HBM (sub-byte types take a whole byte).
constexpr int byte_width(DType t) { return info(t).bits <= 8 ? (info(t).bits == 0 ? 0 : 1) : info(t).bits / 8; }

// XLA names, plus the paper's shorthand aliases i8/i16/i32/i64 (signed integers).
constexpr std::optional<DType> parse_dtype(std::string_view text) {
  for (const auto& d : kDTypes)
    if (d.name == text) return d.type;
  if (text == "i8") return DType::s8;
  if (text == "i16") return DType::s16;
  if (text == "i32") return DType::s32;
  if (text == "i64") return DType::s64;
  return std::nullopt;
}

static_assert([] {
  for (std::size_t i = 0; i < kDTypes.size(); ++i)
    if (static_cast<std::size_t>(kDTypes[i].type) != i) return false;
  return true;
}(), "kDTypes must be indexed by DType");

}  // namespace act
