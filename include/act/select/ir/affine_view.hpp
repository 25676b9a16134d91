// Byte views in strided form: what views.hpp computes per element, per axis instead.
//
// A view reads, for each of its elements in row-major order, `w` bytes of a base value starting
// at some byte. When every movement that built it is affine, those first bytes are
//   offset + sum_k digit_k * stride_k
// over modes (size_k, stride_k), most significant first, whose sizes refine the view's dims
// (each dim is the product of consecutive modes; dims of size 1 have none). Reshape re-groups
// the modes (splitting one where a new dim boundary falls inside it), transpose reorders the
// dims' groups, slice restricts a group when the range falls on its digits, bitcast-convert adds
// or removes a minor mode of bytes. Everything costs O(rank), not O(elements): a 64x64 bf16
// value is two modes, not 4096 offsets. A movement that leaves the strided form (a slice across
// digit boundaries, a reshape merging digits that are not contiguous) answers false, and
// views.hpp falls back to explicit offsets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "act/core/shape.hpp"
#include "act/hlo/module.hpp"

namespace act::select {

struct Mode {
  std::int64_t size = 1;
  std::int64_t stride = 0;  // in bytes of the base
  friend bool operator==(const Mode&, const Mode&) = default;
};

// A view's modes: a handful per view, held inline with it (the view rules build thousands of
// views a compile; views.hpp holds the dims the same way).
using Modes = boost::container::small_vector<Mode, 8>;

struct AffineView {
  std::int64_t offset = 0;  // first byte of element 0
  Modes modes;              // most significant first; no mode of size 1
  friend bool operator==(const AffineView&, const AffineView&) = default;
};

namespace affine_detail {

inline boost::container::small_vector<std::int64_t, 8> row_major_strides(std::span<const std::int64_t> dims) {
  boost::container::small_vector<std::int64_t, 8> s(dims.size(), 1);
  for (std::size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

// Advances `m` past the modes of the next dim, of size `dim`, that start at v.modes[m]; false
// when the modes there do not multiply to it (a dim of size 1 has no modes).
inline bool next_group(const AffineView& v, std::int64_t dim, std::size_t& m) {
  std::int64_t product = 1;
  while (product < dim && m < v.modes.size()) product *= v.modes[m++].size;
  return product == dim;
}

// The modes of each dim of `dims` ([begin, end) into v.modes), into `out`; false when the modes do not
// refine the dims (a view built by these operations always does).
// Filled in place: inline lists are not moved (GCC misreads their moves out of optionals).
using ModeGroups = boost::container::small_vector<std::pair<std::size_t, std::size_t>, 8>;
inline bool groups(const AffineView& v, std::span<const std::int64_t> dims, ModeGroups& out) {
  out.clear();
  std::size_t m = 0;
  for (std::int64_t d : dims) {
    const std::size_t begin = m;
    if (!next_group(v, d, m)) return false;
    out.emplace_back(begin, m);
  }
  return m == v.modes.size();
}

// Adjacent modes that step contiguously (stride_k == stride_{k+1} * size_{k+1}) as one, in a
// list of the same kind (views.hpp passes stack-held ones).
template <class List>
List merged(const List& modes) {
  List out;
  for (std::size_t k = modes.size(); k-- > 0;) {  // from the minor end
    if (!out.empty() && modes[k].stride == out.back().stride * out.back().size) {
      out.back().size *= modes[k].size;
      continue;
    }
    out.push_back(modes[k]);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// Offset of index `i` of a group of modes (row-major within the group).
inline std::int64_t group_offset(std::span<const Mode> g, std::int64_t i) {
  std::int64_t off = 0;
  for (std::size_t k = g.size(); k-- > 0;) {
    off += (i % g[k].size) * g[k].stride;
    i /= g[k].size;
  }
  return off;
}

// The elements start, start + step, ... (count of them) of a dim whose index runs over the
// group `g` (most significant first): appends their modes to `out` and returns the offset of
// the first; nullopt when they are not strided over g's digits (then `out` is to be dropped).
// Spans and one output list: the view rules slice views this way thousands of times a compile.
inline std::optional<std::int64_t> slice_group(std::span<const Mode> g, std::int64_t start, std::int64_t count, std::int64_t step,
                                               Modes& out) {
  if (count <= 0) return std::nullopt;
  if (count == 1) return group_offset(g, start);
  if (g.empty()) return std::nullopt;
  const Mode major = g.front();
  const std::span<const Mode> minor = g.subspan(1);
  std::int64_t inner = 1;
  for (const Mode& m : minor) inner *= m.size;
  const std::int64_t first = start / inner, last = (start + (count - 1) * step) / inner;
  if (step % inner == 0) {  // the major digit steps; the minor ones stay at start's
    out.push_back(Mode{count, (step / inner) * major.stride});
    return first * major.stride + group_offset(minor, start % inner);
  }
  if (first == last) {  // within one value of the major digit
    const auto inside = slice_group(minor, start % inner, count, step, out);
    if (!inside) return std::nullopt;
    return *inside + first * major.stride;
  }
  if (step == 1 && start % inner == 0 && count % inner == 0) {  // whole runs of the minor digits
    out.push_back(Mode{count / inner, major.stride});
    out.insert(out.end(), minor.begin(), minor.end());
    return first * major.stride;
  }
  return std::nullopt;
}

inline void drop_unit_modes(Modes& modes) {
  modes.erase(std::remove_if(modes.begin(), modes.end(), [](const Mode& m) { return m.size == 1; }), modes.end());
}

}  // namespace affine_detail

// The base's own bytes as a value of `type`.
inline AffineView affine_identity(std::span<const std::int64_t> dims, std::int64_t width) {
  AffineView v;
  const auto strides = affine_detail::row_major_strides(dims);
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != 1) v.modes.push_back(Mode{dims[d], strides[d] * width});
  return v;
}

// The four movements below write the moved view into `out` (never `v` itself) and answer
// whether it keeps the strided form; on false, `out` is to be dropped. Views are built in place:
// the view rules move thousands a compile, and an inline list's move is a copy.

// reshape of a view to `out_dims` (same element count).
inline bool affine_reshape(const AffineView& v, std::span<const std::int64_t> out_dims, AffineView& out) {
  out.offset = v.offset;
  Modes& refined = out.modes;  // built from the minor end
  refined.clear();
  std::size_t m = v.modes.size();
  Mode current{1, 0};
  for (std::size_t d = out_dims.size(); d-- > 0;) {
    std::int64_t need = out_dims[d];
    if (need < 1) return false;  // empty values have no strided form
    while (need > 1) {
      if (current.size == 1) {
        if (m == 0) return false;
        current = v.modes[--m];
      }
      if (current.size <= need) {
        if (need % current.size != 0) return false;
        refined.push_back(current);
        need /= current.size;
        current = Mode{1, 0};
      } else {
        if (current.size % need != 0) return false;
        refined.push_back(Mode{need, current.stride});
        current = Mode{current.size / need, current.stride * need};
        need = 1;
      }
    }
  }
  if (current.size != 1 || m != 0) return false;
  std::reverse(refined.begin(), refined.end());
  return true;
}

inline bool affine_transpose(const AffineView& v, std::span<const std::int64_t> in_dims, const std::vector<std::int64_t>& permutation,
                             AffineView& out) {
  affine_detail::ModeGroups g;
  if (!affine_detail::groups(v, in_dims, g) || permutation.size() != in_dims.size()) return false;
  out.offset = v.offset;
  out.modes.clear();
  for (std::int64_t p : permutation) {
    if (p < 0 || static_cast<std::size_t>(p) >= g.size()) return false;
    const auto [begin, end] = g[static_cast<std::size_t>(p)];
    out.modes.insert(out.modes.end(), v.modes.begin() + static_cast<std::ptrdiff_t>(begin),
                     v.modes.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return true;
}

inline bool affine_slice(const AffineView& v, std::span<const std::int64_t> in_dims, const std::vector<hlo::SliceRange>& ranges,
                         AffineView& out) {
  if (ranges.size() != in_dims.size()) return false;
  out.offset = v.offset;
  out.modes.clear();
  std::size_t m = 0;  // each dim's group of modes, found as groups() finds them
  for (std::size_t d = 0; d < in_dims.size(); ++d) {
    const std::size_t begin = m;
    if (!affine_detail::next_group(v, in_dims[d], m)) return false;
    const auto& r = ranges[d];
    if (r.stride < 1 || r.start < 0 || r.limit > in_dims[d] || r.limit <= r.start) return false;
    const std::int64_t count = (r.limit - r.start + r.stride - 1) / r.stride;
    const auto first = affine_detail::slice_group(std::span<const Mode>(v.modes.data(), v.modes.size()).subspan(begin, m - begin),
                                                  r.start, count, r.stride, out.modes);
    if (!first) return false;
    out.offset += *first;
  }
  if (m != v.modes.size()) return false;
  affine_detail::drop_unit_modes(out.modes);
  return true;
}

// bitcast-convert from elements of `in_width` bytes to `out_width` (dims of the input view
// `in_dims`: widening consumes the minor dim of size out_width / in_width).
inline bool affine_bitcast(const AffineView& v, std::span<const std::int64_t> in_dims, std::int64_t in_width, std::int64_t out_width,
                           AffineView& out) {
  out.offset = v.offset;
  if (in_width == out_width) {
    out.modes = v.modes;
    return true;
  }
  if (out_width < in_width) {
    if (in_width % out_width != 0) return false;
    out.modes = v.modes;
    out.modes.push_back(Mode{in_width / out_width, out_width});
    affine_detail::drop_unit_modes(out.modes);
    return true;
  }
  const std::int64_t k = out_width / in_width;
  if (out_width % in_width != 0 || in_dims.empty() || in_dims.back() != k) return false;
  affine_detail::ModeGroups g;
  if (!affine_detail::groups(v, in_dims, g)) return false;
  const auto [begin, end] = g.back();
  if (begin == end) return false;
  // The k bytes must be adjacent: the minor dim's modes merge into one of stride in_width.
  std::int64_t run = 1;
  for (std::size_t i = end; i-- > begin;) {
    if (v.modes[i].stride != in_width * run) return false;
    run *= v.modes[i].size;
  }
  out.modes.assign(v.modes.begin(), v.modes.begin() + static_cast<std::ptrdiff_t>(begin));
  return true;
}

// First byte of every element, row-major.
inline std::vector<std::int64_t> affine_offsets(const AffineView& v, std::int64_t elements) {
  std::vector<std::int64_t> out;
  if (elements <= 0) return out;
  out.reserve(static_cast<std::size_t>(elements));
  std::vector<std::int64_t> index(v.modes.size(), 0);
  std::int64_t value = v.offset;
  for (std::int64_t i = 0; i < elements; ++i) {
    out.push_back(value);
    for (std::size_t d = v.modes.size(); d-- > 0;) {
      if (++index[d] < v.modes[d].size) {
        value += v.modes[d].stride;
        break;
      }
      value -= v.modes[d].stride * (v.modes[d].size - 1);
      index[d] = 0;
    }
  }
  return out;
}

// The strided form of explicit offsets over `dims`, when there is one with one mode per dim (the
// form views copied out of an instruction's movement come in); checked element by element.
inline std::optional<AffineView> affine_from_offsets(std::span<const std::int64_t> dims, const std::vector<std::int64_t>& offsets) {
  if (offsets.empty()) return std::nullopt;
  const auto strides = affine_detail::row_major_strides(dims);
  AffineView v{offsets[0], {}};
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (dims[d] > 1) v.modes.push_back(Mode{dims[d], offsets[static_cast<std::size_t>(strides[d])] - offsets[0]});
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  if (static_cast<std::int64_t>(offsets.size()) != n || affine_offsets(v, n) != offsets) return std::nullopt;
  return v;
}

// The strided form of explicit offsets whose modes need not be one per dim: a flat u8[8192]
// view of a transposed bf16[64,64] block is three modes, (64, 2), (64, 128), (2, 1). Modes are
// found innermost first: each takes the longest run of blocks that repeat the inner block at a
// constant stride, without crossing a dim boundary (so they refine the dims). Nullopt when the
// offsets have no strided form.
inline std::optional<AffineView> affine_factorization(std::span<const std::int64_t> dims,
                                                      const std::vector<std::int64_t>& offsets) {
  const auto n = static_cast<std::int64_t>(offsets.size());
  std::int64_t count = 1;
  for (auto d : dims) count *= d;
  if (n == 0 || count != n) return std::nullopt;
  std::vector<std::int64_t> boundaries;  // element counts of the dims' suffixes, innermost first
  std::int64_t suffix = 1;
  for (std::size_t d = dims.size(); d-- > 0;)
    if (dims[d] > 1) boundaries.push_back(suffix *= dims[d]);
  Modes inner_first;
  std::int64_t block = 1;  // elements covered by the modes found so far
  std::size_t next = 0;    // boundaries[next]: the next dim boundary
  while (block < n) {
    while (next < boundaries.size() && boundaries[next] <= block) ++next;
    if (next == boundaries.size() || boundaries[next] % block != 0) return std::nullopt;
    const std::int64_t stride = offsets[static_cast<std::size_t>(block)] - offsets[0];
    std::int64_t m = 1;
    for (; block * (m + 1) <= boundaries[next]; ++m) {
      bool repeats = true;
      for (std::int64_t t = 0; t < block && repeats; ++t)
        repeats = offsets[static_cast<std::size_t>(block * m + t)] == offsets[static_cast<std::size_t>(t)] + m * stride;
      if (!repeats) break;
    }
    if (m == 1 || boundaries[next] % (block * m) != 0) return std::nullopt;
    inner_first.push_back(Mode{m, stride});
    block *= m;
  }
  AffineView v{offsets[0], Modes(inner_first.rbegin(), inner_first.rend())};
  if (affine_offsets(v, n) != offsets) return std::nullopt;
  return v;
}

}  // namespace act::select
