// Views: values that only move or reinterpret the bytes of one base value.
//
// reshape, transpose, slice and bitcast-convert never compute: every element of their result is
// `w` consecutive bytes (w = the result's element width) of their operand's row-major bytes.
// Following such operators down to a base value gives a ByteView: the result type and, per
// result element (row-major), the byte offset of its first byte in the base. Two chains over the
// same base with the same type and offsets are the same value, however they are written
// (reshape∘transpose∘reshape against slice∘transpose, K1's tiled B against tdpbusd's VNNI read).
//
// canonical_view() writes one fixed chain for a (base, view), so hash-consing makes equal views
// one e-class (view_rules.hpp), and instruction rules can ask for "the bytes [a, b) of this base
// as s8[1,16,64]" and get the class everything else reaches too. The chain is:
//   slice(base) to the bounding box of the bytes the view reads (omitted when it is all of base)
//   bitcast-convert to the view's element type when that is narrower than the base's
//   reshape -> transpose -> reshape that permutes units (the narrower of the two widths) when
//     the view reads them out of order (omitted when in order)
//   reshape to the view's dims (plus the unit count per element when the view's type is wider)
//   bitcast-convert to the view's element type (when it differs)
// Views whose bytes do not tile a box of the base exactly once, or whose unit permutation is not
// a transposition of mixed-radix digits, have no canonical chain (nullopt): no union, no harm.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "act/core/dtype.hpp"
#include "act/core/shape.hpp"
#include "act/select/ir/affine_view.hpp"
#include "act/select/ir/builder.hpp"
#include "act/select/ir/tensor_graph.hpp"

namespace act::select {

// Larger views are not followed (the offsets are explicit).
inline constexpr std::int64_t kMaxViewElements = std::int64_t{1} << 16;

// A view's dims, held inline: rules build views thousands of times a compile, and a heap list
// (with a whole Shape around it) per view was a tenth of the view rules' cost. Reads as a span.
struct ViewDims : boost::container::small_vector<std::int64_t, 6> {
  using boost::container::small_vector<std::int64_t, 6>::small_vector;
  operator std::span<const std::int64_t>() const { return {data(), size()}; }
};

// The element type and dims of a view (a Shape without layout or tuple parts).
struct ViewType {
  DType dtype = DType::f32;
  ViewDims dims;

  ViewType() = default;
  ViewType(DType t, std::span<const std::int64_t> d) : dtype(t), dims(d.begin(), d.end()) {}
  ViewType(const Shape& s) : ViewType(s.dtype, s.dims) {}  // implicit: views are made from class types

  std::int64_t element_count() const {
    return std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
  }
  bool same_type(const ViewType& o) const { return dtype == o.dtype && dims == o.dims; }
  Shape shape() const { return Shape(dtype, std::vector<std::int64_t>(dims.begin(), dims.end())); }
};

// One of the two forms holds the view: `affine` when every movement that built it was strided
// (affine_view.hpp: O(rank) to move), else the explicit `offset` list.
struct ByteView {
  ViewType type;                      // element type and dims of the view
  std::vector<std::int64_t> offset;   // explicit form: per element, row-major, first byte in the base
  std::optional<AffineView> affine;   // strided form (then `offset` is empty)

  // First byte of every element, row-major (materialises the strided form).
  std::vector<std::int64_t> offsets() const {
    return affine ? affine_offsets(*affine, type.element_count()) : offset;
  }
  // First byte of element `i` (row-major index).
  std::int64_t element_offset(std::int64_t i) const {
    if (!affine) return offset.at(static_cast<std::size_t>(i));
    std::int64_t at = affine->offset;
    for (std::size_t k = affine->modes.size(); k-- > 0;) {
      at += (i % affine->modes[k].size) * affine->modes[k].stride;
      i /= affine->modes[k].size;
    }
    return at;
  }
  friend bool operator==(const ByteView& a, const ByteView& b) {
    if (!a.type.same_type(b.type)) return false;
    if (a.affine && b.affine && *a.affine == *b.affine) return true;
    return a.offsets() == b.offsets();
  }
};

inline bool is_movement(const TensorOp& op) {
  if (op.kind != NodeKind::Operator) return false;
  switch (op.opcode) {
    case hlo::Opcode::Reshape:
    case hlo::Opcode::Transpose:
    case hlo::Opcode::Slice:
    case hlo::Opcode::BitcastConvert: return true;
    default: return false;
  }
}

namespace view_detail {

inline boost::container::small_vector<std::int64_t, 8> row_major_strides(std::span<const std::int64_t> dims) {
  boost::container::small_vector<std::int64_t, 8> s(dims.size(), 1);
  for (std::size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

// For every index of `dims` (row-major): base + sum_d index[d] * step[d].
inline std::vector<std::int64_t> odometer(std::span<const std::int64_t> dims, const std::vector<std::int64_t>& step,
                                          std::int64_t base) {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  std::vector<std::int64_t> out;
  if (n <= 0) return out;
  out.reserve(static_cast<std::size_t>(n));
  std::vector<std::int64_t> index(dims.size(), 0);
  std::int64_t value = base;
  for (std::int64_t i = 0; i < n; ++i) {
    out.push_back(value);
    for (std::size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) {
        value += step[d];
        break;
      }
      value -= step[d] * (dims[d] - 1);
      index[d] = 0;
    }
  }
  return out;
}

inline std::int64_t width(DType t) { return byte_width(t); }

}  // namespace view_detail

// The base's own view of itself.
inline ByteView identity_view(const Shape& type) {
  if (type.element_count() == 0) return ByteView{ViewType(type), {}, std::nullopt};  // no modes to stride
  return ByteView{ViewType(type), {}, affine_identity(type.dims, view_detail::width(type.dtype))};
}

// The view of `op(in)` with result type `out`, given the view `in` of its operand; nullopt when
// the result is not a view (a bitcast-convert that glues non-adjacent bytes) or is too large.
inline std::optional<ByteView> apply_movement(const SelectionContext& ctx, const TensorOp& op, const Shape& out,
                                              const ByteView& in) {
  using namespace view_detail;
  if (!is_movement(op) || out.is_tuple || out.element_count() > kMaxViewElements) return std::nullopt;
  const NodeAttributes& a = ctx.attributes_of(op);
  if (in.affine) {  // the strided form, when the movement keeps it
    // Built in place and returned as is: a view moved costs its inline lists, and each walk
    // step used to move one four times.
    std::optional<ByteView> result(std::in_place);
    result->type.dtype = out.dtype;
    result->type.dims.assign(out.dims.begin(), out.dims.end());
    AffineView& moved = result->affine.emplace();
    bool strided = false;
    switch (op.opcode) {
      case hlo::Opcode::Reshape:
        if (out.element_count() != in.type.element_count() || out.dtype != in.type.dtype) return std::nullopt;
        strided = affine_reshape(*in.affine, out.dims, moved);
        break;
      case hlo::Opcode::Transpose: strided = affine_transpose(*in.affine, in.type.dims, a.dimensions, moved); break;
      case hlo::Opcode::Slice: strided = affine_slice(*in.affine, in.type.dims, a.slice, moved); break;
      case hlo::Opcode::BitcastConvert:
        strided = affine_bitcast(*in.affine, in.type.dims, width(in.type.dtype), width(out.dtype), moved);
        break;
      default: return std::nullopt;
    }
    if (strided && out.element_count() > 0) return result;
    if (in.type.element_count() > kMaxViewElements) return std::nullopt;
    return apply_movement(ctx, op, out, ByteView{in.type, in.offsets(), std::nullopt});
  }
  ByteView v{ViewType(out), {}, std::nullopt};
  switch (op.opcode) {
    case hlo::Opcode::Reshape:
      if (out.element_count() != in.type.element_count() || out.dtype != in.type.dtype) return std::nullopt;
      v.offset = in.offset;
      return v;
    case hlo::Opcode::Transpose: {
      const auto& perm = a.dimensions;
      if (perm.size() != in.type.dims.size() || out.dims.size() != perm.size()) return std::nullopt;
      const auto in_strides = row_major_strides(in.type.dims);
      std::vector<std::int64_t> step(perm.size());
      for (std::size_t i = 0; i < perm.size(); ++i) {
        if (perm[i] < 0 || static_cast<std::size_t>(perm[i]) >= perm.size()) return std::nullopt;
        step[i] = in_strides[static_cast<std::size_t>(perm[i])];
      }
      for (std::int64_t i : odometer(out.dims, step, 0)) v.offset.push_back(in.offset[static_cast<std::size_t>(i)]);
      return v;
    }
    case hlo::Opcode::Slice: {
      const auto& ranges = a.slice;
      if (ranges.size() != in.type.dims.size() || out.dims.size() != ranges.size()) return std::nullopt;
      const auto in_strides = row_major_strides(in.type.dims);
      std::vector<std::int64_t> step(ranges.size());
      std::int64_t base = 0;
      for (std::size_t d = 0; d < ranges.size(); ++d) {
        base += ranges[d].start * in_strides[d];
        step[d] = ranges[d].stride * in_strides[d];
      }
      for (std::int64_t i : odometer(out.dims, step, base)) {
        if (i < 0 || i >= static_cast<std::int64_t>(in.offset.size())) return std::nullopt;
        v.offset.push_back(in.offset[static_cast<std::size_t>(i)]);
      }
      return v;
    }
    case hlo::Opcode::BitcastConvert: {
      const std::int64_t wi = width(in.type.dtype), wo = width(out.dtype);
      if (wi <= 0 || wo <= 0) return std::nullopt;
      if (wi == wo) {
        v.offset = in.offset;
      } else if (wo < wi) {
        const std::int64_t k = wi / wo;
        v.offset.reserve(in.offset.size() * static_cast<std::size_t>(k));
        for (std::int64_t o : in.offset)
          for (std::int64_t j = 0; j < k; ++j) v.offset.push_back(o + j * wo);
      } else {
        const std::int64_t k = wo / wi;
        if (in.offset.size() % static_cast<std::size_t>(k) != 0) return std::nullopt;
        for (std::size_t i = 0; i < in.offset.size(); i += static_cast<std::size_t>(k)) {
          for (std::int64_t j = 1; j < k; ++j)
            if (in.offset[i + static_cast<std::size_t>(j)] != in.offset[i] + j * wi) return std::nullopt;
          v.offset.push_back(in.offset[i]);
        }
      }
      if (static_cast<std::int64_t>(v.offset.size()) != out.element_count()) return std::nullopt;
      return v;
    }
    default: return std::nullopt;
  }
}

// A base class and the view of some class over it.
struct ClassView {
  egraph::Id base = egraph::kNoId;
  ByteView view;
};

// Views of class `cls` over the bases reached by following movement nodes down (in node order,
// at most `limit` of them, `depth` operators deep; a class on the current path is not entered
// again, so cycles end). The class itself with its identity view is always the last entry.
// They are handed to `sink` one at a time, in that order; a sink returning false stops the walk
// (and the function returns false). A caller after the first view of some kind (view_rules.hpp:
// the first over a kernel input, nearly always the first view) then builds no other: each view
// costs one movement per operator it passes. The sink is a plain callable reference (a template
// parameter would instantiate the walk once per depth, without end).
class ClassViewSink {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, ClassViewSink>)
  ClassViewSink(F& f) : object_(&f), call_([](void* o, ClassView&& v) { return (*static_cast<F*>(o))(std::move(v)); }) {}
  bool operator()(ClassView&& v) const { return call_(object_, std::move(v)); }

 private:
  void* object_;
  bool (*call_)(void*, ClassView&&);
};

// With `visited`, every class whose nodes the walk reads is appended to it (what its answer
// depends on, besides types: view_rules.hpp remembers walks until one of those classes changes).
inline bool for_each_class_view(const TensorGraph& g, const SelectionContext& ctx, egraph::Id cls, int depth,
                                std::size_t limit, std::vector<egraph::Id>& path, ClassViewSink sink,
                                std::vector<egraph::Id>* visited = nullptr) {
  cls = g.find(cls);
  const Shape& type = g.data(cls).type;
  if (type.is_tuple || type.element_count() > kMaxViewElements) return true;
  std::size_t count = 0;  // views of this class handed on so far
  bool go_on = true;
  path.push_back(cls);
  if (visited) visited->push_back(cls);
  if (depth > 0) {
    for (egraph::Id n : g.class_nodes(cls)) {
      if (count >= limit || !go_on) break;
      const auto node = g.node(n);
      if (!is_movement(node.op) || node.children.size() != 1) continue;
      const egraph::Id child = g.find(node.children[0]);
      if (std::find(path.begin(), path.end(), child) != path.end()) continue;
      auto through_node = [&](ClassView&& below) {
        if (auto v = apply_movement(ctx, node.op, type, below.view)) {
          ++count;
          go_on = sink(ClassView{below.base, std::move(*v)});
        }
        return go_on && count < limit;
      };
      for_each_class_view(g, ctx, child, depth - 1, limit, path, through_node, visited);
    }
  }
  path.pop_back();
  if (go_on && (count < limit || count == 0)) go_on = sink(ClassView{cls, identity_view(type)});
  return go_on;
}

inline std::vector<ClassView> class_views(const TensorGraph& g, const SelectionContext& ctx, egraph::Id cls,
                                          int depth = 8, std::size_t limit = 6) {
  std::vector<egraph::Id> path;
  std::vector<ClassView> out;
  auto keep = [&](ClassView&& v) {
    out.push_back(std::move(v));
    return true;
  };
  for_each_class_view(g, ctx, cls, depth, limit, path, keep);
  return out;
}

namespace view_detail {

// Scratch lists of a view's modes, axes or digits: a handful of entries, worked out for every
// view a rule meets, so they live on the stack (heap lists were most of the chain's cost).
template <class T, std::size_t N = 8>
using Small = boost::container::small_vector<T, N>;

struct Digit {
  std::int64_t radix = 1;
  std::int64_t stride = 1;
};

// `unit` (a permutation of [0, n)) as a transposition of mixed-radix digits: the digits of the
// output index, least significant first, each with its stride in the source; nullopt otherwise.
inline std::optional<std::vector<Digit>> digits_of(const std::vector<std::int64_t>& unit) {
  const auto n = static_cast<std::int64_t>(unit.size());
  if (n == 0 || unit[0] != 0) return std::nullopt;
  std::vector<Digit> digits;
  std::int64_t place = 1;
  while (place < n) {
    const std::int64_t s = unit[static_cast<std::size_t>(place)];
    if (s <= 0) return std::nullopt;
    std::int64_t r = 1;
    while (place * r < n && unit[static_cast<std::size_t>(place * r)] == r * s) ++r;
    if (r < 2 || n % (place * r) != 0) return std::nullopt;
    digits.push_back(Digit{r, s});
    place *= r;
  }
  // Check every unit, and that the strides are a mixed radix of the source.
  for (std::int64_t f = 0; f < n; ++f) {
    std::int64_t rest = f, at = 0;
    for (const Digit& d : digits) {
      at += (rest % d.radix) * d.stride;
      rest /= d.radix;
    }
    if (at != unit[static_cast<std::size_t>(f)]) return std::nullopt;
  }
  std::vector<Digit> sorted = digits;
  std::sort(sorted.begin(), sorted.end(), [](const Digit& x, const Digit& y) { return x.stride > y.stride; });
  if (sorted.back().stride != 1) return std::nullopt;
  for (std::size_t i = 0; i + 1 < sorted.size(); ++i)
    if (sorted[i].stride != sorted[i + 1].stride * sorted[i + 1].radix) return std::nullopt;
  return digits;
}

}  // namespace view_detail

// What canonical_view() would build, as plain data (tests print and compare it).
struct CanonicalChain {
  std::vector<hlo::SliceRange> box;           // empty: the whole base
  std::optional<DType> narrow_to;             // bitcast-convert of the box first
  std::vector<std::int64_t> source_radices;   // empty: units already in order
  std::vector<std::int64_t> permutation;      // transpose of the source digits
  std::vector<std::int64_t> final_dims;       // reshape to these (view dims, plus units per element)
  std::optional<DType> widen_or_cast_to;      // final bitcast-convert
};

namespace view_detail {

// The tail every canonical chain shares: the box, the narrowing, the unit transposition (digits
// least significant first, empty when the units are in order), the final reshape and cast.
inline CanonicalChain finish_chain(const Shape& base, const ViewType& view_type, std::vector<hlo::SliceRange> box,
                                   std::span<const Digit> digits) {
  const std::int64_t wx = width(base.dtype), wv = width(view_type.dtype), g = std::min(wx, wv);
  CanonicalChain c;
  c.box = std::move(box);
  DType unit_type = base.dtype;
  if (wv < wx) {
    c.narrow_to = view_type.dtype;
    unit_type = view_type.dtype;
  }
  if (!digits.empty()) {
    Small<std::size_t> by_stride(digits.size());
    std::iota(by_stride.begin(), by_stride.end(), std::size_t{0});
    std::sort(by_stride.begin(), by_stride.end(), [&](std::size_t x, std::size_t y) { return digits[x].stride > digits[y].stride; });
    for (std::size_t i : by_stride) c.source_radices.push_back(digits[i].radix);
    // Output digits, most significant first: the last found digit is the most significant.
    for (std::size_t k = digits.size(); k-- > 0;) {
      const auto at = std::find(by_stride.begin(), by_stride.end(), k) - by_stride.begin();
      c.permutation.push_back(at);
    }
  }
  c.final_dims.assign(view_type.dims.begin(), view_type.dims.end());
  if (wv > g) c.final_dims.push_back(wv / g);
  if (unit_type != view_type.dtype) c.widen_or_cast_to = view_type.dtype;
  return c;
}

}  // namespace view_detail

// The canonical chain of a strided view: each unit mode (the view's modes, plus the bytes of a
// view element wider than the base's) must step along one axis of the base (a dim, or the bytes
// inside a base element wider than the view's), each axis read compactly from its first index:
// then the view reads a box of the base once, and the modes, in box strides, are the digits.
inline std::optional<CanonicalChain> canonical_chain_affine(const Shape& base, const ViewType& view_type, const AffineView& a) {
  using namespace view_detail;
  const std::int64_t wx = width(base.dtype), wv = width(view_type.dtype);
  if (wx <= 0 || wv <= 0 || base.is_tuple) return std::nullopt;
  const std::int64_t g = std::min(wx, wv);
  const std::size_t rank = base.dims.size();
  Small<Mode> units(a.modes.begin(), a.modes.end());
  if (wv > g) units.push_back(Mode{wv / g, g});
  if (a.offset < 0 || a.offset % g != 0) return std::nullopt;
  // Axes: base dims (byte strides S_d * wx), then the units inside a base element (when wx > g).
  const std::size_t axes = rank + (wx > g ? 1 : 0);
  Small<std::int64_t> axis_stride(axes), axis_size(axes), lo(axes);
  for (std::size_t d = rank, stride = 1; d-- > 0;) {  // row-major element strides, in bytes
    axis_stride[d] = static_cast<std::int64_t>(stride) * wx;
    axis_size[d] = base.dims[d];
    stride *= static_cast<std::size_t>(base.dims[d]);
  }
  if (wx > g) {
    axis_stride[rank] = g;
    axis_size[rank] = wx / g;
  }
  {
    std::int64_t rest = a.offset;
    for (std::size_t d = 0; d < axes; ++d) {
      lo[d] = rest / axis_stride[d];
      rest %= axis_stride[d];
    }
    if (rest != 0) return std::nullopt;
    for (std::size_t d = 0; d < axes; ++d)
      if (lo[d] >= axis_size[d]) return std::nullopt;
  }
  // Each unit mode on its axis as (multiple of the axis stride, size), split where it wraps.
  Small<Small<Mode, 4>> on_axis(axes);  // Mode{size, multiple}
  Small<std::pair<std::size_t, std::int64_t>, 16> placed;  // per unit-mode piece, in view order: (axis, multiple)
  Small<std::int64_t, 16> piece_size;
  for (const Mode& m : units) {
    if (m.stride <= 0 || m.stride % g != 0) return std::nullopt;
    Small<std::pair<std::size_t, Mode>, 4> pieces;  // minor piece last
    Mode rest = m;
    for (;;) {
      std::size_t d = 0;
      while (d < axes && rest.stride % axis_stride[d] != 0) ++d;
      if (d == axes) return std::nullopt;
      const std::int64_t c = rest.stride / axis_stride[d];
      if (lo[d] + c * (rest.size - 1) < axis_size[d]) {
        pieces.emplace_back(d, Mode{rest.size, c});
        break;
      }
      // Wraps into the next axis up: only whole turns of this one, from its start.
      if (d == 0 || lo[d] != 0 || axis_size[d] % c != 0) return std::nullopt;
      const std::int64_t q = axis_size[d] / c;
      if (rest.size % q != 0) return std::nullopt;
      pieces.emplace_back(d, Mode{q, c});
      rest = Mode{rest.size / q, rest.stride * q};
    }
    for (std::size_t k = pieces.size(); k-- > 0;) {  // most significant piece first
      on_axis[pieces[k].first].push_back(pieces[k].second);
      placed.emplace_back(pieces[k].first, pieces[k].second.stride);
      piece_size.push_back(pieces[k].second.size);
    }
  }
  // Each axis read once, compactly: multiples 1, s1, s1*s2, ... (sorted).
  Small<std::int64_t> extent(axes, 1);
  for (std::size_t d = 0; d < axes; ++d) {
    auto& ms = on_axis[d];
    std::sort(ms.begin(), ms.end(), [](const Mode& x, const Mode& y) { return x.stride < y.stride; });
    std::int64_t expect = 1;
    for (const Mode& m : ms) {
      if (m.stride != expect) return std::nullopt;
      expect *= m.size;
    }
    extent[d] = expect;
    if (lo[d] + extent[d] > axis_size[d]) return std::nullopt;
  }
  if (wx > g && (lo[rank] != 0 || extent[rank] != axis_size[rank])) return std::nullopt;  // whole base elements
  std::vector<hlo::SliceRange> box;
  bool whole = true;
  for (std::size_t d = 0; d < rank; ++d) whole = whole && lo[d] == 0 && extent[d] == base.dims[d];
  if (!whole)
    for (std::size_t d = 0; d < rank; ++d) box.push_back(hlo::SliceRange{lo[d], lo[d] + extent[d], 1});
  // Unit strides inside the box, row-major.
  Small<std::int64_t> box_stride(axes, 1);
  for (std::size_t d = axes; d-- > 1;) box_stride[d - 1] = box_stride[d] * extent[d];
  Small<Mode, 16> in_box;  // view order, box unit strides
  for (std::size_t k = 0; k < placed.size(); ++k)
    in_box.push_back(Mode{piece_size[k], placed[k].second * box_stride[placed[k].first]});
  const Small<Mode, 16> m = affine_detail::merged(in_box);
  Small<Digit> digits;
  const bool in_order = m.empty() || (m.size() == 1 && m[0].stride == 1);
  if (!in_order)
    for (std::size_t k = m.size(); k-- > 0;) digits.push_back(Digit{m[k].size, m[k].stride});
  return finish_chain(base, view_type, std::move(box), std::span<const Digit>(digits.data(), digits.size()));
}

// The canonical chain of `view` over a base of type `base`, or nullopt (see the header comment):
// from the strided form when the view has one (explicit offsets are tried for one too).
inline std::optional<CanonicalChain> canonical_chain(const Shape& base, const ByteView& view);

// The canonical chain computed from explicit offsets, element by element.
inline std::optional<CanonicalChain> canonical_chain_explicit(const Shape& base, const ByteView& view) {
  using namespace view_detail;
  const std::int64_t wx = width(base.dtype), wv = width(view.type.dtype);
  if (wx <= 0 || wv <= 0 || base.is_tuple || view.offset.empty()) return std::nullopt;
  const std::int64_t base_bytes = base.element_count() * wx;
  const std::size_t rank = base.dims.size();
  const auto strides = row_major_strides(base.dims);
  // Bounding box of the base elements the view reads. Views of HBM bytes (rank 1) are the
  // common case and need no index arithmetic.
  std::vector<std::int64_t> lo(base.dims), hi(rank, -1);
  auto touch = [&](std::int64_t element) {
    if (rank == 1) {
      lo[0] = std::min(lo[0], element);
      hi[0] = std::max(hi[0], element);
      return;
    }
    for (std::size_t d = 0; d < rank; ++d) {
      const std::int64_t i = (element / strides[d]) % base.dims[d];
      lo[d] = std::min(lo[d], i);
      hi[d] = std::max(hi[d], i);
    }
  };
  for (std::int64_t o : view.offset) {
    if (o < 0 || o + wv > base_bytes) return std::nullopt;
    const std::int64_t first = o / wx, last = (o + wv - 1) / wx;
    touch(first);
    for (std::int64_t e = first + 1; e <= last; ++e) touch(e);
  }
  std::vector<std::int64_t> box_dims(rank);
  std::int64_t box_elements = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    box_dims[d] = hi[d] - lo[d] + 1;
    box_elements *= box_dims[d];
  }
  const std::int64_t box_bytes = box_elements * wx;
  if (box_bytes != static_cast<std::int64_t>(view.offset.size()) * wv) return std::nullopt;
  const auto box_strides = row_major_strides(box_dims);
  auto relative = [&](std::int64_t byte) {  // position of a base byte in the box's row-major bytes
    if (rank == 1) return byte - lo[0] * wx;
    const std::int64_t e = byte / wx;
    std::int64_t r = 0;
    for (std::size_t d = 0; d < rank; ++d) r += ((e / strides[d]) % base.dims[d] - lo[d]) * box_strides[d];
    return r * wx + byte % wx;
  };
  // Units of the narrower width, in view order, as positions in the box (each exactly once).
  const std::int64_t g = std::min(wx, wv);
  std::vector<std::int64_t> unit;
  unit.reserve(static_cast<std::size_t>(box_bytes / g));
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(box_bytes / g), 0);
  for (std::int64_t o : view.offset) {
    for (std::int64_t t = 0; t < wv; t += g) {
      const std::int64_t r = relative(o + t);
      if (r % g != 0) return std::nullopt;
      const auto u = static_cast<std::size_t>(r / g);
      if (seen[u]) return std::nullopt;
      seen[u] = 1;
      unit.push_back(r / g);
    }
  }
  bool whole = true;
  for (std::size_t d = 0; d < rank; ++d) whole = whole && box_dims[d] == base.dims[d];
  std::vector<hlo::SliceRange> box;
  if (!whole)
    for (std::size_t d = 0; d < rank; ++d) box.push_back(hlo::SliceRange{lo[d], hi[d] + 1, 1});
  bool in_order = true;
  for (std::size_t i = 0; i < unit.size(); ++i) in_order = in_order && unit[i] == static_cast<std::int64_t>(i);
  std::vector<Digit> digits;
  if (!in_order) {
    const auto found = digits_of(unit);
    if (!found) return std::nullopt;
    digits = *found;
  }
  return finish_chain(base, view.type, std::move(box), digits);
}

inline std::optional<CanonicalChain> canonical_chain(const Shape& base, const ByteView& view) {
  if (view.affine) return canonical_chain_affine(base, view.type, *view.affine);
  if (const auto strided = affine_from_offsets(view.type.dims, view.offset)) return canonical_chain_affine(base, view.type, *strided);
  // Modes that are not one per dim (a flat byte view of a transposed block): still strided, and
  // the strided chain costs O(rank) where the explicit one walks every element twice.
  // (canonical_chain_affine declines some mode layouts that the explicit walk handles.)
  if (const auto strided = affine_factorization(view.type.dims, view.offset))
    if (auto chain = canonical_chain_affine(base, view.type, *strided)) return chain;
  return canonical_chain_explicit(base, view);
}

// Builds the canonical chain of `view` over class `base` in the e-graph and returns its class,
// or nullopt when the view has none.
inline std::optional<egraph::Id> canonical_view(TensorGraph& g, SelectionContext& ctx, egraph::Id base,
                                                const ByteView& view) {
  const auto chain = canonical_chain(g.data(base).type, view);  // (adds below never move class data)
  if (!chain) return std::nullopt;
  using hlo::Opcode;
  TensorBuilder b(g, ctx);
  egraph::Id at = g.find(base);
  if (!chain->box.empty()) {
    NodeAttributes a;
    a.slice = chain->box;
    at = b.op(Opcode::Slice, a, {at});
  }
  // Each bitcast below changes the element type, and the permutation is never the identity.
  if (chain->narrow_to) at = b.bitcast(at, *chain->narrow_to);
  if (!chain->source_radices.empty()) {
    at = b.reshape(at, chain->source_radices);
    NodeAttributes a;
    a.dimensions = chain->permutation;
    at = b.op(Opcode::Transpose, a, {at});
  }
  at = b.reshape(at, chain->final_dims);
  if (chain->widen_or_cast_to) at = b.bitcast(at, *chain->widen_or_cast_to);
  if (!view.type.same_type(g.data(at).type)) return std::nullopt;  // cannot happen; never unite mismatched types
  return at;
}

}  // namespace act::select
