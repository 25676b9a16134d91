// Shared vocabulary of the IR→IR axioms: the rule type, the per-rule description used for
// App. B filtering, and small helpers to read matched e-nodes and build new ones the way
// type_inference.hpp expects (reshape/broadcast: attributes.shape; convert/bitcast-convert/dot:
// attributes.dtype; reduce and pad take a scalar second child).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "act/core/literal.hpp"
#include "act/egraph/rewrite.hpp"
#include "act/hlo/shape_check.hpp"
#include "act/select/ir/tensor_graph.hpp"

namespace act::select {


// What an axiom is about, for filtering (App. B module 2) and for the soundness suite.
enum class AxiomFamily : std::uint8_t { Layout, Slicing, Elementwise, Dot, Padding, Reduction };

constexpr std::string_view to_string(AxiomFamily f) {
  switch (f) {
    case AxiomFamily::Layout: return "layout";
    case AxiomFamily::Slicing: return "slicing";
    case AxiomFamily::Elementwise: return "elementwise";
    case AxiomFamily::Dot: return "dot";
    case AxiomFamily::Padding: return "padding";
    case AxiomFamily::Reduction: return "reduction";
  }
  return "?";
}

struct AxiomInfo {
  std::string name;                      // stable, e.g. "slice-of-slice", "slice-of-add"
  AxiomFamily family = AxiomFamily::Layout;
  std::string shape;                     // the rule template (several rules share one, per opcode)
  std::vector<hlo::Opcode> lhs_opcodes;  // operators the left-hand side mentions
  std::vector<hlo::Opcode> rhs_opcodes;  // operators the right-hand side builds (Constant: a constant)
  bool reassociates = false;             // float results may differ by rounding (DESIGN.md allows it)
  std::string source;                    // where it comes from (rewrites.md id / TensorRight / issue)
};

struct Axiom {
  AxiomInfo info;
  TensorRewrite rule;
};

namespace axiom_detail {

using egraph::Id;
using egraph::Subst;
using Dims = std::vector<std::int64_t>;
using Matcher = egraph::OpMatcher<TensorLanguage>;

inline Matcher op_is(hlo::Opcode code) { return Matcher::of_kind(static_cast<std::uint32_t>(code)); }

// Two stacked unary operators of the given opcodes, captured as "outer" and "inner": outer(inner(?x)).
inline TensorPattern stacked(hlo::Opcode outer, hlo::Opcode inner) {
  TensorPatternBuilder b;
  auto x = b.var("?x");
  auto i = b.op(op_is(inner), {x}, "inner");
  return b.build(b.op(op_is(outer), {i}, "outer"));
}
// One unary operator, captured as "outer": outer(?x).
inline TensorPattern single(hlo::Opcode code) {
  TensorPatternBuilder b;
  return b.build(b.op(op_is(code), {b.var("?x")}, "outer"));
}

// Read access to a match.
struct View {
  const TensorGraph& g;
  const SelectionContext& ctx;
  const Subst& s;
  const TensorPattern* pattern;
  Id root;  // the matched class

  const Shape& root_type() const { return g.data(root).type; }

  Id cls(std::string_view var) const { return g.find(s[pattern->slot(var)]); }
  const Shape& type(std::string_view var) const { return g.data(cls(var)).type; }
  const TensorOp& op(std::string_view capture) const { return g.node(s[pattern->slot(capture)]).op; }
  const NodeAttributes& attr(std::string_view capture) const { return ctx.attributes_of(op(capture)); }
};

inline Dims iota_dims(std::size_t n) {
  Dims d(n);
  std::iota(d.begin(), d.end(), 0);
  return d;
}
inline bool is_identity_permutation(const Dims& p) { return p == iota_dims(p.size()); }
inline bool contains(const Dims& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
inline std::int64_t product(const Dims& d) {
  std::int64_t p = 1;
  for (auto x : d) p *= x;
  return p;
}
inline std::int64_t next_power_of_two(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// Number of elements a range takes, and its canonical limit (one past the last element).
inline std::int64_t range_count(const hlo::SliceRange& r) { return (r.limit - r.start + r.stride - 1) / r.stride; }
inline hlo::SliceRange canonical(hlo::SliceRange r) {
  const auto n = range_count(r);
  r.limit = n == 0 ? r.start : r.start + (n - 1) * r.stride + 1;
  if (n == 1) r.stride = 1;
  return r;
}
inline std::vector<hlo::SliceRange> full_ranges(const Dims& dims) {
  std::vector<hlo::SliceRange> r;
  for (auto d : dims) r.push_back({0, d, 1});
  return r;
}
inline bool covers(const std::vector<hlo::SliceRange>& ranges, const Dims& dims) {
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const auto& r = ranges[d];
    if (r.start != 0 || range_count(r) != dims[d] || (dims[d] > 1 && r.stride != 1)) return false;
  }
  return true;
}

// ---- building ---------------------------------------------------------------------------------

struct Build {
  TensorGraph& g;
  SelectionContext& ctx;

  Id add(const TensorOp& op, std::initializer_list<Id> children) { return g.add(op, children); }
  Id add(const TensorOp& op, const std::vector<Id>& children) { return g.add(op, children); }
  Id op(hlo::Opcode code, const NodeAttributes& a, std::initializer_list<Id> children) {
    return g.add(make_operator(ctx.attributes, code, a), children);
  }
  Id reshape(Id x, Dims dims) {
    if (g.data(x).type.dims == dims) return x;
    NodeAttributes a;
    a.shape = std::move(dims);
    return op(hlo::Opcode::Reshape, a, {x});
  }
  Id transpose(Id x, Dims perm) {
    if (is_identity_permutation(perm)) return x;
    NodeAttributes a;
    a.dimensions = std::move(perm);
    return op(hlo::Opcode::Transpose, a, {x});
  }
  Id slice(Id x, std::vector<hlo::SliceRange> ranges) {
    for (auto& r : ranges) r = canonical(r);
    if (covers(ranges, g.data(x).type.dims)) return x;
    NodeAttributes a;
    a.slice = std::move(ranges);
    return op(hlo::Opcode::Slice, a, {x});
  }
  // A slice of dimension d only.
  Id slice_dim(Id x, std::size_t d, std::int64_t start, std::int64_t limit) {
    auto ranges = full_ranges(g.data(x).type.dims);
    ranges[d] = {start, limit, 1};
    return slice(x, std::move(ranges));
  }
  Id concat(std::vector<Id> xs, std::int64_t d) {
    if (xs.size() == 1) return xs[0];
    NodeAttributes a;
    a.dimensions = {d};
    return g.add(make_operator(ctx.attributes, hlo::Opcode::Concatenate, a), xs);
  }
  Id dot(Id a, Id b, hlo::DotDimensions dims, DType result) {
    NodeAttributes at;
    at.dot = std::move(dims);
    at.dtype = result;
    return op(hlo::Opcode::Dot, at, {a, b});
  }
  Id pad(Id x, Id value, std::vector<hlo::PadDimension> padding) {
    NodeAttributes a;
    a.padding = std::move(padding);
    return op(hlo::Opcode::Pad, a, {x, value});
  }
  Id constant(Literal value) {
    const Shape type = value.shape();
    const auto id = ctx.constants.intern(std::move(value));
    return g.add(make_constant(ctx.attributes, id, type), {});
  }
  Id scalar(DType t, double v) {
    Literal l(Shape(t, {}));
    if (is_float(t)) l.set_float(0, v);
    else l.set_int(0, static_cast<std::int64_t>(v));
    return constant(std::move(l));
  }
  // A constant of shape dims whose element at (i, j) (rank 2) or i (rank 1) is f(i, j). `kind`
  // names the pattern f draws (one kind, one f): the literal is built once per kind, dtype and
  // dims, and later requests reuse its constant id.
  template <class F>
  Id filled(DType t, Dims dims, std::string_view kind, F f) {
    const std::string key = fmt::format("{}:{}[{}]", kind, name(t), fmt::join(dims, ","));
    const Shape type(t, dims);
    if (auto it = ctx.patterned_constants.find(key); it != ctx.patterned_constants.end())
      return g.add(make_constant(ctx.attributes, it->second, type), {});
    Literal l(type);
    const std::int64_t cols = dims.size() == 2 ? dims[1] : 1;
    for (std::int64_t k = 0; k < l.element_count(); ++k) {
      const double v = f(k / cols, k % cols);
      if (is_float(t)) l.set_float(k, v);
      else l.set_int(k, static_cast<std::int64_t>(v));
    }
    const auto id = ctx.constants.intern(std::move(l));
    ctx.patterned_constants.emplace(key, id);
    return g.add(make_constant(ctx.attributes, id, type), {});
  }
};

// True if every value of `from` converts to `to` exactly (so a convert to `to` loses nothing).
inline bool represents_all(DType to, DType from) {
  if (to == from) return true;
  if (from == DType::pred || to == DType::pred) return false;
  const auto mantissa = [](DType t) {  // significant bits of a float type
    switch (t) {
      case DType::bf16: return 8;
      case DType::f16: return 11;
      case DType::f32: return 24;
      case DType::f64: return 53;
      default: return 0;
    }
  };
  if (is_float(from)) {
    if (!is_float(to)) return false;
    if (from == DType::bf16) return to == DType::f32 || to == DType::f64;
    if (from == DType::f16) return to == DType::f32 || to == DType::f64;
    if (from == DType::f32) return to == DType::f64;
    return false;
  }
  if (!is_integer(from)) return false;
  const int bits = bit_width(from) - (is_signed_integer(from) ? 1 : 0);  // magnitude bits
  if (is_float(to)) return mantissa(to) >= bits;
  if (!is_integer(to)) return false;
  if (is_signed_integer(from)) return is_signed_integer(to) && bit_width(to) >= bit_width(from);
  return is_signed_integer(to) ? bit_width(to) > bit_width(from) : bit_width(to) >= bit_width(from);
}

// True if the class holds a Constant node whose every element is zero (any dtype, any sign).
inline bool is_zero_constant(const TensorGraph& g, const SelectionContext& ctx, Id cls) {
  for (Id n : g.eclass(cls).nodes) {
    const TensorOp& op = g.node(n).op;
    if (op.kind != NodeKind::Constant) continue;
    const Literal& l = ctx.constants[ctx.attributes_of(op).index];
    bool zero = true;
    for (std::int64_t i = 0; zero && i < l.element_count(); ++i)
      zero = is_float(l.dtype()) ? l.get_float(i) == 0.0 : l.get_int(i) == 0;
    if (zero) return true;
  }
  return false;
}
// The least and greatest element of a constant class, looking through one broadcast.
inline std::optional<std::pair<double, double>> constant_bounds(const TensorGraph& g, const SelectionContext& ctx, Id cls) {
  for (Id n : g.eclass(g.find(cls)).nodes) {
    const auto view = g.node(n);
    if (view.op.kind == NodeKind::Operator && view.op.opcode == hlo::Opcode::Broadcast)
      if (auto inner = [&]() -> std::optional<std::pair<double, double>> {
            for (Id m : g.eclass(g.find(view.children[0])).nodes)
              if (g.node(m).op.kind == NodeKind::Constant) return constant_bounds(g, ctx, view.children[0]);
            return std::nullopt;
          }())
        return inner;
    if (view.op.kind != NodeKind::Constant) continue;
    const Literal& l = ctx.constants[ctx.attributes_of(view.op).index];
    if (l.element_count() == 0) return std::nullopt;
    double lo = 0, hi = 0;
    for (std::int64_t i = 0; i < l.element_count(); ++i) {
      const double x = is_float(l.dtype()) ? l.get_float(i) : static_cast<double>(l.get_int(i));
      if (x != x) return std::nullopt;  // NaN bound
      if (i == 0 || x < lo) lo = x;
      if (i == 0 || x > hi) hi = x;
    }
    return std::make_pair(lo, hi);
  }
  return std::nullopt;
}

// Whether the class holds clamp(lo, x, hi) with constant bounds inside [low, high].
inline bool clamped_within(const TensorGraph& g, const SelectionContext& ctx, Id cls, double low, double high) {
  for (Id n : g.eclass(g.find(cls)).nodes) {
    const auto view = g.node(n);
    if (view.op.kind != NodeKind::Operator || view.op.opcode != hlo::Opcode::Clamp) continue;
    const auto lo = constant_bounds(g, ctx, view.children[0]), hi = constant_bounds(g, ctx, view.children[2]);
    // min(max(x, lo), hi) lies in [min(lo, hi), hi] (or is NaN).
    if (lo && hi && lo->first >= low && hi->first >= low && hi->second <= high) return true;
  }
  return false;
}

inline bool has_operator(const TensorGraph& g, Id cls, hlo::Opcode code) {
  for (Id n : g.eclass(cls).nodes) {
    const TensorOp& op = g.node(n).op;
    if (op.kind == NodeKind::Operator && op.opcode == code) return true;
  }
  return false;
}

// Dot dimension bookkeeping: the free dims of each operand in order.
inline Dims free_dims(std::int64_t rank, const Dims& batch, const Dims& contracting) {
  Dims f;
  for (std::int64_t d = 0; d < rank; ++d)
    if (!contains(batch, d) && !contains(contracting, d)) f.push_back(d);
  return f;
}

// Rule constructor: `apply(View, Build) -> optional<Id>` decides and builds; `check(View)`
// (optional) runs during search so that only applicable matches count.
using Check = std::function<bool(const View&)>;
using Apply = std::function<std::optional<Id>(const View&, Build&)>;

inline Axiom make_axiom(SelectionContext& ctx, AxiomInfo info, TensorPattern pattern, Check check, Apply apply) {
  // The lambdas keep their own copy of the pattern to look variables up by name.
  auto names = std::make_shared<const TensorPattern>(pattern);
  TensorRewrite rule(info.name, std::move(pattern),
                     [names, apply, c = &ctx](TensorGraph& g, Id cls, const Subst& s) -> std::optional<Id> {
                       const View v{g, *c, s, names.get(), g.find(cls)};
                       Build b{g, *c};
                       return apply(v, b);
                     });
  if (check)
    rule.when([names, check, c = &ctx](const TensorGraph& g, Id cls, const Subst& s) {
      return check(View{g, *c, s, names.get(), g.find(cls)});
    });
  Axiom axiom{std::move(info), std::move(rule)};
  return axiom;
}

}  // namespace axiom_detail
}  // namespace act::select
