// Typed tensor values with a byte view. Arrays are dense, row-major in logical index order,
// elements little-endian at their byte width (pred: one byte, 0 or 1; bf16/f16: raw 16 bits).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "act/core/error.hpp"
#include "act/core/float16.hpp"
#include "act/core/shape.hpp"

namespace act {

class Literal {
 public:
  Literal() = default;
  // A zero-filled array (or a tuple of zero-filled elements) of the given shape.
  explicit Literal(Shape shape) : shape_(std::move(shape)) {
    if (shape_.is_tuple) {
      for (const auto& e : shape_.tuple_shapes) elements_.emplace_back(e);
    } else {
      bytes_.assign(static_cast<std::size_t>(shape_.byte_size()), 0);
    }
  }
  static Literal tuple(std::vector<Literal> elements) {
    std::vector<Shape> shapes;
    for (const auto& e : elements) shapes.push_back(e.shape());
    Literal l;
    l.shape_ = Shape::tuple(std::move(shapes));
    l.elements_ = std::move(elements);
    return l;
  }
  // Wraps existing bytes (size must match the shape).
  static Literal from_bytes(Shape shape, std::span<const std::uint8_t> bytes) {
    Literal l(std::move(shape));
    if (static_cast<std::int64_t>(bytes.size()) != l.shape_.byte_size())
      throw Error(ErrorKind::Internal, fmt::format("literal of {} needs {} bytes, got {}", to_string(l.shape_),
                                                   l.shape_.byte_size(), bytes.size()));
    // std::copy, not memcpy: a zero-element literal has no storage (a null data pointer,
    // which memcpy may not be given even for 0 bytes).
    std::copy(bytes.begin(), bytes.end(), l.bytes_.begin());
    return l;
  }

  const Shape& shape() const { return shape_; }
  DType dtype() const { return shape_.dtype; }
  std::int64_t element_count() const { return shape_.element_count(); }
  bool is_tuple() const { return shape_.is_tuple; }

  std::span<std::uint8_t> bytes() { return bytes_; }
  std::span<const std::uint8_t> bytes() const { return bytes_; }

  std::vector<Literal>& elements() { return elements_; }
  const std::vector<Literal>& elements() const { return elements_; }

  // A constant printed as `{...}`: its values are unknown.
  bool elided = false;

  // Raw bits of element i, zero-extended.
  std::uint64_t get_bits(std::int64_t i) const {
    const int w = byte_width(shape_.dtype);
    std::uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + i * w, static_cast<std::size_t>(w));
    return v;
  }
  void set_bits(std::int64_t i, std::uint64_t v) {
    const int w = byte_width(shape_.dtype);
    std::memcpy(bytes_.data() + i * w, &v, static_cast<std::size_t>(w));
  }

  // Element i as a signed 64-bit integer (integers sign- or zero-extended, floats truncated).
  std::int64_t get_int(std::int64_t i) const {
    const DType t = shape_.dtype;
    if (is_float(t)) return static_cast<std::int64_t>(get_float(i));
    const std::uint64_t bits = get_bits(i);
    const int w = bit_width(t);
    if (is_signed_integer(t) && w < 64) {
      const std::uint64_t sign = 1ull << (w - 1);
      return static_cast<std::int64_t>((bits ^ sign) - sign);
    }
    return static_cast<std::int64_t>(bits);
  }
  // Stores v wrapped to the element width (two's complement), as XLA's integer ops do.
  void set_int(std::int64_t i, std::int64_t v) {
    if (is_float(shape_.dtype)) return set_float(i, static_cast<double>(v));
    if (shape_.dtype == DType::pred) return set_bits(i, v != 0 ? 1 : 0);
    set_bits(i, static_cast<std::uint64_t>(v));
  }

  // Element i as a double (bf16/f16 decoded exactly; integers converted).
  double get_float(std::int64_t i) const {
    switch (shape_.dtype) {
      case DType::bf16: return bf16_bits_to_f32(static_cast<std::uint16_t>(get_bits(i)));
      case DType::f16: return f16_bits_to_f32(static_cast<std::uint16_t>(get_bits(i)));
      case DType::f32: return std::bit_cast<float>(static_cast<std::uint32_t>(get_bits(i)));
      case DType::f64: return std::bit_cast<double>(get_bits(i));
      case DType::u64: return static_cast<double>(get_bits(i));
      default: return static_cast<double>(get_int(i));
    }
  }
  // Stores v rounded to the element type: f32 by round-to-nearest-even, bf16/f16 via f32.
  void set_float(std::int64_t i, double v) {
    switch (shape_.dtype) {
      case DType::bf16: return set_bits(i, f32_to_bf16_bits(static_cast<float>(v)));
      case DType::f16: return set_bits(i, f32_to_f16_bits(static_cast<float>(v)));
      case DType::f32: return set_bits(i, std::bit_cast<std::uint32_t>(static_cast<float>(v)));
      case DType::f64: return set_bits(i, std::bit_cast<std::uint64_t>(v));
      default: return set_int(i, static_cast<std::int64_t>(v));
    }
  }

  // Row-major strides in elements.
  std::vector<std::int64_t> strides() const {
    std::vector<std::int64_t> s(shape_.dims.size(), 1);
    for (std::int64_t d = static_cast<std::int64_t>(s.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape_.dims[d + 1];
    return s;
  }
  std::int64_t linear_index(std::span<const std::int64_t> index) const {
    std::int64_t linear = 0;
    for (std::size_t d = 0; d < index.size(); ++d) linear = linear * shape_.dims[d] + index[d];
    return linear;
  }

  // Same shape (layouts ignored) and identical bytes, recursively for tuples.
  bool bitwise_equal(const Literal& o) const {
    if (!shape_.same_type(o.shape_)) return false;
    if (is_tuple()) {
      for (std::size_t i = 0; i < elements_.size(); ++i)
        if (!elements_[i].bitwise_equal(o.elements_[i])) return false;
      return true;
    }
    return bytes_ == o.bytes_;
  }

 private:
  Shape shape_;
  std::vector<std::uint8_t> bytes_;
  std::vector<Literal> elements_;
};

}  // namespace act
