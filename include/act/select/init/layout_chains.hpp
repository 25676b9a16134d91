// Module 1's layout chains (App. B): the logical value of an array from its bytes in HBM and
// back. A tiled layout is undone tile by tile (last first) by transpose (interleave tile counts
// with tile dims) + reshape (merge them) + slice (drop padding), and the minor_to_major order by
// a transpose; writing mirrors it (pad + reshape + transpose per tile, bitcast to bytes).
#pragma once

#include <cstdint>
#include <vector>

#include "act/core/layout.hpp"
#include "act/core/shape.hpp"
#include "act/select/ir/builder.hpp"

namespace act::select::init_detail {

using egraph::Id;

// The dims before each tile is applied: before[i] is the input of tile i; before.back() the
// physical dims. before[0] is the logical dims in physical (major-to-minor) order.
inline std::vector<std::vector<std::int64_t>> tile_steps(const Shape& s) {
  std::vector<std::vector<std::int64_t>> steps(1);
  for (auto d : s.minor_to_major()) steps[0].insert(steps[0].begin(), s.dims[static_cast<std::size_t>(d)]);
  if (s.has_layout)
    for (const Tile& t : s.layout.tiles) {
      auto next = steps.back();
      layout_detail::apply_tile(t, next, nullptr);
      steps.push_back(std::move(next));
    }
  return steps;
}

// Inverse of one tile: dims (pre[0..f), c_j..., t_j...) -> pre.
inline Id untile(TensorBuilder& b, Id x, const Tile& tile, const std::vector<std::int64_t>& pre) {
  const std::size_t k = tile.dims.size();
  std::vector<std::int64_t> ext = pre;
  const std::size_t extra = ext.size() < k ? k - ext.size() : 0;
  ext.insert(ext.begin(), extra, 1);
  const std::size_t first = ext.size() - k;
  std::vector<std::int64_t> permutation, merged(ext.begin(), ext.begin() + static_cast<std::ptrdiff_t>(first));
  for (std::size_t j = 0; j < first; ++j) permutation.push_back(static_cast<std::int64_t>(j));
  const auto& tiled = b.type(x).dims;
  for (std::size_t j = 0; j < k; ++j) {
    permutation.push_back(static_cast<std::int64_t>(first + j));
    permutation.push_back(static_cast<std::int64_t>(first + k + j));
    merged.push_back(tiled[first + j] * tiled[first + k + j]);
  }
  x = b.reshape(b.transpose(x, permutation), merged);
  x = b.slice_to(x, ext);
  return b.reshape(x, pre);
}

// Inverse of untile: pre -> (pre[0..f), c_j..., t_j...).
inline Id tile(TensorBuilder& b, Id x, const Tile& tile, const std::vector<std::int64_t>& pre, const std::vector<std::int64_t>& post) {
  const std::size_t k = tile.dims.size();
  std::vector<std::int64_t> ext = pre;
  const std::size_t extra = ext.size() < k ? k - ext.size() : 0;
  ext.insert(ext.begin(), extra, 1);
  const std::size_t first = ext.size() - k;
  x = b.reshape(x, ext);
  std::vector<std::int64_t> padded(ext.begin(), ext.begin() + static_cast<std::ptrdiff_t>(first)), split = padded;
  for (std::size_t j = 0; j < k; ++j) {
    padded.push_back(post[first + j] * post[first + k + j]);
    split.push_back(post[first + j]);
    split.push_back(post[first + k + j]);
  }
  x = b.reshape(b.pad_to(x, padded), split);
  std::vector<std::int64_t> permutation;
  for (std::size_t j = 0; j < first; ++j) permutation.push_back(static_cast<std::int64_t>(j));
  for (std::size_t j = 0; j < k; ++j) permutation.push_back(static_cast<std::int64_t>(first + 2 * j));
  for (std::size_t j = 0; j < k; ++j) permutation.push_back(static_cast<std::int64_t>(first + 2 * j + 1));
  return b.transpose(x, permutation);
}

// The logical value of an array stored under `s` at the bytes of `input` (u8[B]).
inline Id read_array(TensorBuilder& b, Id input, const Shape& s) {
  const auto steps = tile_steps(s);
  const int w = byte_width(s.dtype);
  std::vector<std::int64_t> bytes_dims = steps.back();
  if (w > 1) bytes_dims.push_back(w);
  Id x = b.bitcast(b.reshape(input, bytes_dims), s.dtype);
  for (std::size_t i = steps.size() - 1; i > 0; --i) x = untile(b, x, s.layout.tiles[i - 1], steps[i - 1]);
  // physical order -> logical: output dim i is the physical position of logical dim i
  const auto m2m = s.minor_to_major();
  std::vector<std::int64_t> permutation(m2m.size());
  for (std::size_t j = 0; j < m2m.size(); ++j)
    permutation[static_cast<std::size_t>(m2m[m2m.size() - 1 - j])] = static_cast<std::int64_t>(j);
  return b.transpose(x, permutation);
}

// The bytes u8[B] of `value` stored under `s`.
inline Id write_array(TensorBuilder& b, Id value, const Shape& s) {
  const auto steps = tile_steps(s);
  const auto m2m = s.minor_to_major();
  std::vector<std::int64_t> permutation(m2m.rbegin(), m2m.rend());  // physical position j holds logical m2m[r-1-j]
  Id x = b.transpose(value, permutation);
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) x = tile(b, x, s.layout.tiles[i], steps[i], steps[i + 1]);
  x = b.bitcast(x, DType::u8);  // wider types gain a minor-most byte dimension
  return b.reshape(x, {physical_byte_size(s)});
}

}  // namespace act::select::init_detail
