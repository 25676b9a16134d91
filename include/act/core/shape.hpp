// Shapes and layouts as XLA defines them: dtype + dimensions (+ optional layout), or a tuple.
#pragma once

#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/dtype.hpp"

namespace act {

// One tile of an XLA tiled layout, e.g. T(16,4). A dimension of kCombineDimension is XLA's `*`.
struct Tile {
  static constexpr std::int64_t kCombineDimension = -1;
  std::vector<std::int64_t> dims;
  friend bool operator==(const Tile&, const Tile&) = default;
};

struct Layout {
  std::vector<std::int64_t> minor_to_major;  // empty with a rank > 0 means "default"
  std::vector<Tile> tiles;                   // applied in order: first tile to the minor-most dims
  // Layout properties act does not interpret (L(..), E(..), S(..), D(..), ...), kept verbatim
  // in XLA's order so the printer can give them back.
  std::string other_properties;
  friend bool operator==(const Layout&, const Layout&) = default;
};

// How a dimension size is given: `64`, `<=64` (bounded dynamic) or `?` (unbounded).
enum class DimKind : std::uint8_t { Static, Bounded, Unbounded };

struct Shape {
  DType dtype = DType::f32;
  std::vector<std::int64_t> dims;   // sizes; a bounded dim holds its bound, unbounded holds -1
  std::vector<DimKind> dim_kinds;   // empty: all static
  bool has_layout = false;          // a `{...}` was written (or filled in)
  Layout layout;
  bool is_tuple = false;
  std::vector<Shape> tuple_shapes;

  Shape() = default;
  Shape(DType t, std::vector<std::int64_t> d) : dtype(t), dims(std::move(d)) {}

  static Shape tuple(std::vector<Shape> elements) {
    Shape s;
    s.is_tuple = true;
    s.dtype = DType::opaque;
    s.tuple_shapes = std::move(elements);
    return s;
  }

  std::int64_t rank() const { return static_cast<std::int64_t>(dims.size()); }
  std::int64_t element_count() const {
    return std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
  }
  // Bytes of the dense row-major array (no tiling padding).
  std::int64_t byte_size() const { return element_count() * byte_width(dtype); }
  bool is_static() const {
    for (auto k : dim_kinds)
      if (k != DimKind::Static) return false;
    return true;
  }
  // The minor-to-major order in force: the written one, or row-major.
  std::vector<std::int64_t> minor_to_major() const {
    if (has_layout && layout.minor_to_major.size() == dims.size()) return layout.minor_to_major;
    std::vector<std::int64_t> m2m(dims.size());
    for (std::size_t i = 0; i < dims.size(); ++i) m2m[i] = static_cast<std::int64_t>(dims.size() - 1 - i);
    return m2m;
  }

  // Same element type and dimensions (layouts ignored); tuples element-wise.
  bool same_type(const Shape& o) const {
    if (is_tuple != o.is_tuple) return false;
    if (is_tuple) {
      if (tuple_shapes.size() != o.tuple_shapes.size()) return false;
      for (std::size_t i = 0; i < tuple_shapes.size(); ++i)
        if (!tuple_shapes[i].same_type(o.tuple_shapes[i])) return false;
      return true;
    }
    return dtype == o.dtype && dims == o.dims;
  }
  friend bool operator==(const Shape&, const Shape&) = default;
};

// The largest array act accepts, in bytes of its dense form: 2^40 (1 TiB). Every product of
// shape arithmetic (sizes, strides, padding) then stays far inside int64, and the limit is 128x
// the largest array of the 359-module corpus (bf16[1024,1024,2048] as s32: 8 GiB). Whether an
// array fits an accelerator is a separate, smaller check (the kernel image against its HBM).
inline constexpr std::int64_t kMaxArrayBytes = std::int64_t{1} << 40;

// The dense byte size of an array shape counting only its known (>= 0) dims, or nullopt when
// it exceeds kMaxArrayBytes (the product is checked step by step, so it cannot overflow).
inline std::optional<std::int64_t> bounded_byte_size(const Shape& s) {
  std::int64_t bytes = byte_width(s.dtype) > 0 ? byte_width(s.dtype) : 1;
  for (const std::int64_t d : s.dims) {
    if (d < 0) continue;
    if (d == 0) return 0;
  }
  for (const std::int64_t d : s.dims) {
    if (d < 0) continue;
    if (__builtin_mul_overflow(bytes, d, &bytes) || bytes > kMaxArrayBytes) return std::nullopt;
  }
  return bytes;
}

// `bf16[64,64]`, `(f32[2], s32[])` — without layout; see hlo/printer for the full XLA form.
inline std::string to_string(const Shape& s) {
  if (s.is_tuple) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.tuple_shapes.size(); ++i) {
      if (i) out += ", ";
      out += to_string(s.tuple_shapes[i]);
    }
    return out + ")";
  }
  std::string out = fmt::format("{}[", name(s.dtype));
  for (std::size_t i = 0; i < s.dims.size(); ++i) {
    if (i) out += ",";
    const DimKind k = s.dim_kinds.empty() ? DimKind::Static : s.dim_kinds[i];
    if (k == DimKind::Unbounded) out += "?";
    else if (k == DimKind::Bounded) out += fmt::format("<={}", s.dims[i]);
    else out += std::to_string(s.dims[i]);
  }
  return out + "]";
}

}  // namespace act
