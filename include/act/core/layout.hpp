// Physical bytes of an array under an XLA layout: minor_to_major order plus tiling.
//
// XLA's rule (hlo_notes.md §4, "Tiling semantics"): the dims are first put in physical order
// (major to minor); a tile T(t1..tk) then applies to the k minor-most dims: each dim d tiled by
// t is padded up to ceil(d/t)*t and split into (ceil(d/t), t), and all the tile dims move
// minor-most, keeping their order. A later tile re-tiles the minor-most dims of that result.
// A tile with more dims than the array treats the array as having leading size-1 dims.
// Padding bytes are zero when written and ignored when read.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/literal.hpp"
#include "act/core/shape.hpp"

namespace act {

namespace layout_detail {

inline void check_array(const Shape& shape) {
  if (shape.is_tuple) throw Error(ErrorKind::Shape, "a physical layout is defined per array, not for a tuple");
  for (auto d : shape.dims)
    if (d < 0) throw Error(ErrorKind::Shape, fmt::format("{} has a dynamic dimension; no physical layout", to_string(shape)));
  const auto m2m = shape.minor_to_major();
  std::vector<bool> seen(shape.dims.size(), false);
  for (auto d : m2m) {
    if (d < 0 || d >= shape.rank() || seen[static_cast<std::size_t>(d)])
      throw Error(ErrorKind::Shape, fmt::format("minor_to_major of {} is not a permutation of its dimensions", to_string(shape)));
    seen[static_cast<std::size_t>(d)] = true;
  }
  if (!shape.has_layout) return;
  for (const auto& tile : shape.layout.tiles) {
    if (tile.dims.empty()) throw Error(ErrorKind::Shape, fmt::format("{} has an empty tile", to_string(shape)));
    for (auto t : tile.dims) {
      if (t == Tile::kCombineDimension)
        throw Error(ErrorKind::Unsupported, fmt::format("tile dimension '*' (combine) in the layout of {}", to_string(shape)));
      if (t <= 0) throw Error(ErrorKind::Shape, fmt::format("tile dimension {} in the layout of {} is not positive", t, to_string(shape)));
    }
  }
}

// Physical dims in major-to-minor order before tiling, and for each physical position the
// logical dimension it holds.
inline std::vector<std::int64_t> major_to_minor(const Shape& shape) {
  auto m2m = shape.minor_to_major();
  return {m2m.rbegin(), m2m.rend()};
}

// Applies one tile to a physical shape (in place); `index`, when given, is mapped along.
inline void apply_tile(const Tile& tile, std::vector<std::int64_t>& dims, std::vector<std::int64_t>* index) {
  const std::size_t k = tile.dims.size();
  if (dims.size() < k) {  // leading size-1 dims
    const std::size_t extra = k - dims.size();
    dims.insert(dims.begin(), extra, 1);
    if (index) index->insert(index->begin(), extra, 0);
  }
  const std::size_t first = dims.size() - k;
  std::vector<std::int64_t> new_dims(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(first));
  std::vector<std::int64_t> new_index;
  if (index) new_index.assign(index->begin(), index->begin() + static_cast<std::ptrdiff_t>(first));
  for (std::size_t j = 0; j < k; ++j) {
    const std::int64_t t = tile.dims[j];
    new_dims.push_back(dims[first + j] / t + (dims[first + j] % t != 0 ? 1 : 0));  // ceil, no overflow
    if (index) new_index.push_back((*index)[first + j] / t);
  }
  for (std::size_t j = 0; j < k; ++j) {
    new_dims.push_back(tile.dims[j]);
    if (index) new_index.push_back((*index)[first + j] % tile.dims[j]);
  }
  dims = std::move(new_dims);
  if (index) *index = std::move(new_index);
}

}  // namespace layout_detail

// The physical array dims (major to minor) after permutation and tiling, padding included.
inline std::vector<std::int64_t> physical_dims(const Shape& shape) {
  layout_detail::check_array(shape);
  std::vector<std::int64_t> dims;
  for (auto d : layout_detail::major_to_minor(shape)) dims.push_back(shape.dims[static_cast<std::size_t>(d)]);
  if (shape.has_layout)
    for (const auto& tile : shape.layout.tiles) layout_detail::apply_tile(tile, dims, nullptr);
  return dims;
}

// Bytes the array occupies in memory under its layout (tiling padding included).
inline std::int64_t physical_byte_size(const Shape& shape) {
  std::int64_t n = byte_width(shape.dtype);
  for (auto d : physical_dims(shape))
    if (__builtin_mul_overflow(n, d, &n))
      throw Error(ErrorKind::Shape, fmt::format("{} is too large to lay out in memory", to_string(shape)));
  return n;
}

// True when the layout is the identity: row-major, no tiling padding or reordering.
inline bool is_row_major_dense(const Shape& shape) {
  layout_detail::check_array(shape);
  const auto m2m = shape.minor_to_major();
  for (std::size_t i = 0; i < m2m.size(); ++i)
    if (m2m[i] != static_cast<std::int64_t>(m2m.size() - 1 - i)) return false;
  return !shape.has_layout || shape.layout.tiles.empty();
}

// For each logical element (row-major linear index), its physical element index.
inline std::vector<std::int64_t> physical_element_offsets(const Shape& shape) {
  const auto pdims = physical_dims(shape);
  const auto order = layout_detail::major_to_minor(shape);
  const std::int64_t count = shape.element_count();
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(count));
  std::vector<std::int64_t> logical(shape.dims.size(), 0);
  std::vector<std::int64_t> index, dims;
  for (std::int64_t linear = 0; linear < count; ++linear) {
    index.clear();
    dims.clear();
    for (auto d : order) {
      index.push_back(logical[static_cast<std::size_t>(d)]);
      dims.push_back(shape.dims[static_cast<std::size_t>(d)]);
    }
    if (shape.has_layout)
      for (const auto& tile : shape.layout.tiles) layout_detail::apply_tile(tile, dims, &index);
    std::int64_t offset = 0;
    for (std::size_t j = 0; j < index.size(); ++j) offset = offset * pdims[j] + index[j];
    offsets[static_cast<std::size_t>(linear)] = offset;
    for (std::int64_t d = shape.rank() - 1; d >= 0; --d) {  // next row-major logical index
      if (++logical[static_cast<std::size_t>(d)] < shape.dims[static_cast<std::size_t>(d)]) break;
      logical[static_cast<std::size_t>(d)] = 0;
    }
  }
  return offsets;
}

// The bytes of `value` laid out as `layout` says (`layout` must have value's dtype and dims).
inline std::vector<std::uint8_t> to_physical_bytes(const Literal& value, const Shape& layout) {
  if (value.is_tuple() || !value.shape().same_type(layout) || value.dtype() != layout.dtype)
    throw Error(ErrorKind::Shape, fmt::format("cannot lay out a value of {} as {}", to_string(value.shape()), to_string(layout)));
  if (is_row_major_dense(layout)) return {value.bytes().begin(), value.bytes().end()};
  std::vector<std::uint8_t> out(static_cast<std::size_t>(physical_byte_size(layout)), 0);
  const auto offsets = physical_element_offsets(layout);
  const auto w = static_cast<std::size_t>(byte_width(layout.dtype));
  const auto in = value.bytes();
  for (std::size_t i = 0; i < offsets.size(); ++i)
    std::memcpy(out.data() + static_cast<std::size_t>(offsets[i]) * w, in.data() + i * w, w);
  return out;
}

// Reads an array of `layout`'s dtype and dims back from its physical bytes. The returned
// literal's shape carries no layout (literals are row-major).
inline Literal from_physical_bytes(const Shape& layout, std::span<const std::uint8_t> bytes) {
  const std::int64_t size = physical_byte_size(layout);
  if (static_cast<std::int64_t>(bytes.size()) != size)
    throw Error(ErrorKind::Shape, fmt::format("{} under its layout occupies {} bytes, got {}", to_string(layout), size, bytes.size()));
  Literal out(Shape(layout.dtype, layout.dims));
  if (is_row_major_dense(layout)) {
    if (!bytes.empty()) std::memcpy(out.bytes().data(), bytes.data(), bytes.size());
    return out;
  }
  const auto offsets = physical_element_offsets(layout);
  const auto w = static_cast<std::size_t>(byte_width(layout.dtype));
  for (std::size_t i = 0; i < offsets.size(); ++i)
    std::memcpy(out.bytes().data() + i * w, bytes.data() + static_cast<std::size_t>(offsets[i]) * w, w);
  return out;
}

}  // namespace act
