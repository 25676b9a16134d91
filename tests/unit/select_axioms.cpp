// Soundness of every IR→IR axiom: each rule is instantiated on random concrete instances (a
// generator per rule template builds a random left-hand side over typed leaves), applied once,
// and every node it adds to a matched class is evaluated against the class's original term with
// hlo::evaluate on random inputs. Integers compare bit-exactly; floats compare exactly by value
// (+0 == -0, NaN == NaN) except for rules marked `reassociates`, which may differ by 8 ulps of
// the output's largest magnitude. Instances use small integer-valued floats (for which even
// re-associating rules must be exact), fractions, and edge values (NaN, +-Inf, -0, the largest
// and smallest magnitudes, INT_MIN/INT_MAX so integer arithmetic overflows).
// Near misses: some generators also build instances that violate the rule's precondition
// (different broadcast dims, a contracting dim of 2, ...), so a rule whose condition is
// dropped rewrites them and the value comparison fails; and "near misses are not rewritten"
// checks directly that such instances gain no node.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "act/hlo/evaluate.hpp"
#include "act/select/rules/axioms.hpp"
#include "act/select/ir/term_to_hlo.hpp"

using namespace act;
using namespace act::select;
using act::select::axiom_detail::Build;
using act::select::axiom_detail::contracting;
using act::select::axiom_detail::Dims;
using egraph::Id;
using hlo::Opcode;

namespace {

// A fresh e-graph over the context the rules were built with (rules intern attributes there).
struct Instance {
  SelectionContext& ctx;
  TensorGraph g;
  std::map<std::int64_t, Shape> leaf_types;  // Input index → the typed value it carries
  std::mt19937_64& rng;

  Instance(SelectionContext& c, std::mt19937_64& r) : ctx(c), g(TensorAnalysis(&c)), rng(r) {}

  Build b() { return Build{g, ctx}; }
  std::int64_t pick(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); }
  bool coin() { return pick(0, 1) == 1; }
  Dims dims(std::size_t rank, std::int64_t lo = 1, std::int64_t hi = 6) {
    Dims d;
    for (std::size_t i = 0; i < rank; ++i) d.push_back(pick(lo, hi));
    return d;
  }
  DType dtype() {
    static constexpr DType kTypes[] = {DType::bf16, DType::f32, DType::s32, DType::s8};
    return kTypes[pick(0, 3)];
  }
  DType float_type() { return coin() ? DType::bf16 : DType::f32; }

  // A typed leaf as the kernel convention builds it: bitcast-convert(reshape(Input u8[bytes])).
  Id leaf(DType t, Dims d) {
    const auto index = static_cast<std::int64_t>(leaf_types.size());
    const Shape type(t, d);
    leaf_types.emplace(index, type);
    Id x = g.add(make_input(ctx.attributes, index, type.byte_size()), {});
    const int w = byte_width(t);
    Dims bytes_dims = d;
    if (w > 1) bytes_dims.push_back(w);
    x = b().reshape(x, bytes_dims);
    if (t == DType::u8) return x;
    NodeAttributes a;
    a.dtype = t;
    return g.add(make_operator(ctx.attributes, Opcode::BitcastConvert, a), {x});
  }
  Id op(Opcode code, const NodeAttributes& a, std::initializer_list<Id> kids) {
    return g.add(make_operator(ctx.attributes, code, a), kids);
  }
  Id unary(Opcode code, Id x, DType to = DType::u8) {
    NodeAttributes a;
    if (code == Opcode::Convert || code == Opcode::BitcastConvert) a.dtype = to;
    return op(code, a, {x});
  }
  Id reshape(Id x, Dims d) {
    NodeAttributes a;
    a.shape = std::move(d);
    return op(Opcode::Reshape, a, {x});
  }
  Id transpose(Id x, Dims p) {
    NodeAttributes a;
    a.dimensions = std::move(p);
    return op(Opcode::Transpose, a, {x});
  }
  Id slice(Id x, std::vector<hlo::SliceRange> r) {
    NodeAttributes a;
    a.slice = std::move(r);
    return op(Opcode::Slice, a, {x});
  }
  Id concat(std::vector<Id> xs, std::int64_t d) { return b().concat(std::move(xs), d); }
  Id dot(Id l, Id r, hlo::DotDimensions d, DType t) { return b().dot(l, r, std::move(d), t); }
  const Shape& type(Id x) const { return g.data(x).type; }

  Dims permutation(std::size_t n) {
    Dims p = axiom_detail::iota_dims(n);
    std::shuffle(p.begin(), p.end(), rng);
    return p;
  }
  hlo::SliceRange range(std::int64_t n, bool strided = true) {
    const auto s = pick(0, n - 1), l = pick(s + 1, n), t = strided ? pick(1, 2) : 1;
    return {s, l, t};
  }
  std::vector<hlo::SliceRange> ranges(const Dims& d, bool strided = true) {
    std::vector<hlo::SliceRange> r;
    for (auto n : d) r.push_back(range(n, strided));
    return r;
  }
};

enum class Values { SmallIntegers, Fractions, Edges };

// Random values for the leaves. Edges mixes ordinary values with IEEE specials and the
// integer extremes, one element in two.
Literal random_value(const Shape& t, std::mt19937_64& rng, Values mode) {
  Literal l(t);
  std::uniform_int_distribution<int> small(-3, 3), frac(-64, 64), pick(0, 15);
  static constexpr double kFloatEdges[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                           -std::numeric_limits<double>::infinity(), -0.0, 0.0, 3.0e38, -3.0e38, 1.0e-38,
                                           -1.0e-45, 65504.0, 0.5};
  for (std::int64_t i = 0; i < l.element_count(); ++i) {
    const int k = pick(rng);
    if (is_float(t.dtype)) {
      if (mode == Values::Edges && k < 11) l.set_float(i, kFloatEdges[k]);
      else l.set_float(i, mode == Values::Fractions ? frac(rng) / 16.0 : small(rng));
    } else if (mode == Values::Edges && k < 8) {
      const int bits = byte_width(t.dtype) * 8;
      const std::int64_t lo = bits == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (bits - 1));
      const std::int64_t hi = bits == 64 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << (bits - 1)) - 1;
      const std::int64_t edges[] = {lo, hi, lo + 1, hi - 1, -1, 0, 1, hi / 2 + 1};
      l.set_int(i, edges[k]);
    } else {
      l.set_int(i, small(rng));
    }
  }
  return l;
}

// Rules that are sound on finite values only, with why; float edge values skip them (integer
// edges still run). Each is a limitation of the axiom that this test found, not of the test:
// a kernel fed Inf or NaN may compute differently after these rewrites.
const std::map<std::string, std::string>& finite_only_rules() {
  static const std::map<std::string, std::string> rules{
      {"dot-identity-introduction", "x -> dot(x, I) adds 0 * x[j] for j != i: one Inf or NaN in a row makes the row NaN"},
      {"transpose-as-dot", "a transpose as a dot with a permutation matrix multiplies every element by 0 or 1: Inf * 0 = NaN"},
      {"reverse-as-dot", "a reverse as a dot with the exchange matrix: Inf * 0 = NaN"},
  };
  return rules;
}

bool close(const Literal& a, const Literal& b, bool reassociates, std::string& why) {
  if (!a.shape().same_type(b.shape())) {
    why = fmt::format("types {} vs {}", to_string(a.shape()), to_string(b.shape()));
    return false;
  }
  if (!is_float(a.dtype())) {
    for (std::int64_t i = 0; i < a.element_count(); ++i)
      if (a.get_bits(i) != b.get_bits(i)) {
        why = fmt::format("element {}: {} vs {}", i, a.get_int(i), b.get_int(i));
        return false;
      }
    return true;
  }
  double scale = 0;
  for (std::int64_t i = 0; i < a.element_count(); ++i)
    if (std::isfinite(a.get_float(i))) scale = std::max(scale, std::fabs(a.get_float(i)));
  const int mantissa = a.dtype() == DType::bf16 ? 8 : a.dtype() == DType::f16 ? 11 : a.dtype() == DType::f32 ? 24 : 53;
  const double tolerance = reassociates ? 8 * std::ldexp(std::max(scale, 1.0), -mantissa + 1) : 0;
  for (std::int64_t i = 0; i < a.element_count(); ++i) {
    const double x = a.get_float(i), y = b.get_float(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (x == y || std::fabs(x - y) <= tolerance) continue;
    why = fmt::format("element {}: {} vs {} (tolerance {})", i, x, y, tolerance);
    return false;
  }
  return true;
}

Literal run(const TermModule& t, const std::map<std::int64_t, Literal>& values) {
  std::vector<Literal> args;
  for (auto index : t.inputs) {
    const Literal& v = values.at(index);
    args.push_back(Literal::from_bytes(Shape(DType::u8, {v.shape().byte_size()}), v.bytes()));
  }
  return hlo::evaluate(t.module, args);
}

using Generator = std::function<void(Instance&, const AxiomInfo&)>;

// One generator per rule template: builds a random left-hand side (it need not always match).
std::map<std::string, Generator> generators() {
  std::map<std::string, Generator> m;
  // ---- layout ----
  m["reshape-of-reshape"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(2));
    const auto n = s.type(x).element_count();
    s.reshape(s.reshape(x, {n}), s.coin() ? Dims{1, n} : s.type(x).dims);
  };
  m["reshape-identity"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.transpose(s.leaf(s.dtype(), s.dims(2)), {1, 0});
    s.reshape(x, s.type(x).dims);
  };
  m["transpose-of-transpose"] = [](Instance& s, const AxiomInfo&) {
    const std::size_t r = static_cast<std::size_t>(s.pick(2, 4));
    const Id x = s.leaf(s.dtype(), s.dims(r, 1, 4));
    s.transpose(s.transpose(x, s.permutation(r)), s.permutation(r));
  };
  m["transpose-identity"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(3, 1, 4));
    s.transpose(x, s.coin() ? Dims{0, 1, 2} : Dims{0, 2, 1});
  };
  m["transpose-as-reshape"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), {s.pick(2, 5), 1, s.pick(1, 5)});
    s.transpose(x, s.permutation(3));
  };
  m["reshape-as-transpose"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), {s.pick(2, 5), 1, s.pick(2, 5)});
    const Dims& d = s.type(x).dims;
    s.reshape(x, s.coin() ? Dims{1, d[0], d[2]} : Dims{d[0], d[2], 1});
  };
  m["bitcast-convert-identity"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.dtype();
    s.unary(Opcode::BitcastConvert, s.unary(Opcode::Negate, s.leaf(t, s.dims(2))), t);
  };
  m["bitcast-convert-of-bitcast-convert"] = [](Instance& s, const AxiomInfo&) {
    // The leaves themselves are bitcast-convert(reshape(..)); add one of each flavour.
    const Id x = s.leaf(DType::bf16, s.dims(2));
    const Id bytes = s.unary(Opcode::BitcastConvert, x, DType::u8);
    if (s.coin()) s.unary(Opcode::BitcastConvert, bytes, DType::bf16);
    else s.unary(Opcode::BitcastConvert, s.unary(Opcode::BitcastConvert, s.leaf(DType::s32, s.dims(2)), DType::f32), DType::s32);
  };
  m["convert-identity"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.dtype();
    s.unary(Opcode::Convert, s.leaf(t, s.dims(2)), t);
  };
  m["convert-of-convert"] = [](Instance& s, const AxiomInfo&) {
    static constexpr std::pair<DType, DType> kChains[] = {{DType::bf16, DType::f32}, {DType::s8, DType::s32},
                                                          {DType::s8, DType::bf16}, {DType::s32, DType::f32}};
    const auto [from, mid] = kChains[s.pick(0, 3)];
    const DType to = s.coin() ? from : s.dtype();
    s.unary(Opcode::Convert, s.unary(Opcode::Convert, s.leaf(from, s.dims(2)), mid), to);
  };
  m["copy-elimination"] = [](Instance& s, const AxiomInfo&) { s.unary(Opcode::Copy, s.leaf(s.dtype(), s.dims(2))); };
  m["bitcast-convert-of-reshape"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(DType::s32, s.dims(2));
    s.unary(Opcode::BitcastConvert, s.reshape(x, {s.type(x).element_count()}), DType::f32);
  };
  m["reshape-of-bitcast-convert"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(DType::f32, s.dims(2));
    s.reshape(s.unary(Opcode::BitcastConvert, x, DType::s32), {s.type(x).element_count()});
  };
  m["copy-introduction"] = [](Instance& s, const AxiomInfo&) { s.unary(Opcode::Negate, s.leaf(s.dtype(), s.dims(2))); };
  // ---- slicing ----
  m["slice-of-slice"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(2, 2, 8));
    const Id a = s.slice(x, s.ranges(s.type(x).dims));
    s.slice(a, s.ranges(s.type(a).dims));
  };
  m["slice-full-range"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(2));
    auto r = axiom_detail::full_ranges(s.type(x).dims);
    if (s.coin()) r[0].limit = std::max<std::int64_t>(1, r[0].limit - 1);
    s.slice(x, r);
  };
  // concat of three random leaves along dim d (0 or 1); parts gets the leaves.
  const auto concat_of_three = [](Instance& s, std::size_t& d, std::vector<Id>& parts) {
    const DType t = s.dtype();
    d = static_cast<std::size_t>(s.pick(0, 1));
    const auto other = s.pick(1, 4);
    for (int i = 0; i < 3; ++i) parts.push_back(s.leaf(t, d == 0 ? Dims{s.pick(1, 4), other} : Dims{other, s.pick(1, 4)}));
    return s.concat(parts, static_cast<std::int64_t>(d));
  };
  const auto concat_instance = [concat_of_three](Instance& s, bool narrow) {
    std::size_t d = 0;
    std::vector<Id> parts;
    const Id c = concat_of_three(s, d, parts);
    auto r = s.ranges(s.type(c).dims, !narrow);
    const auto n0 = s.type(parts[0]).dims[d], n1 = s.type(parts[1]).dims[d];
    if (!narrow && s.coin()) r[d] = {n0, n0 + s.pick(1, n1), 1};                 // inside operand 1
    if (narrow) r[d] = {s.pick(0, n0 - 1), n0 + s.pick(1, n1), 1};                 // operands 0..1
    s.slice(c, r);
  };
  m["slice-of-concat"] = [concat_instance](Instance& s, const AxiomInfo&) { concat_instance(s, false); };
  m["slice-of-concat-element"] = [concat_of_three](Instance& s, const AxiomInfo&) {  // one element, any operand
    std::size_t d = 0;
    std::vector<Id> parts;
    const Id c = concat_of_three(s, d, parts);
    std::vector<hlo::SliceRange> r;
    for (const std::int64_t n : s.type(c).dims) {
      const std::int64_t i = s.pick(0, n - 1);
      r.push_back({i, i + 1, 1});
    }
    s.slice(c, r);
  };
  m["slice-of-concat-narrow"] = [concat_instance](Instance& s, const AxiomInfo&) { concat_instance(s, true); };
  m["slice-of-concat-split"] = [concat_instance](Instance& s, const AxiomInfo&) { concat_instance(s, true); };
  m["concat-of-adjacent-slices"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(2, 2, 8));
    const Dims d = s.type(x).dims;
    const auto k = static_cast<std::size_t>(s.pick(0, 1));
    auto r = s.ranges(d);
    auto a = r, c = r;
    const auto mid = s.pick(1, d[k] - 1);
    a[k] = {s.pick(0, mid - 1), mid, 1};
    c[k] = {mid, s.pick(mid + 1, d[k]), 1};
    s.concat({s.slice(x, a), s.slice(x, c)}, static_cast<std::int64_t>(k));
  };
  const auto nested_concat = [](Instance& s, bool left) {
    const DType t = s.dtype();
    const Id a = s.leaf(t, {s.pick(1, 3), 3}), b = s.leaf(t, {s.pick(1, 3), 3}), c = s.leaf(t, {s.pick(1, 3), 3});
    const Id inner = s.concat({a, b}, 0);
    s.concat(left ? std::vector<Id>{inner, c} : std::vector<Id>{c, inner}, 0);
  };
  // A concatenate with an operand of zero extent along the concatenated dim (rows or columns).
  const auto with_empty = [](Instance& s, bool empty_right) {
    const DType t = s.dtype();
    const auto d = static_cast<std::size_t>(s.pick(0, 1));
    const auto other = s.pick(1, 4);
    const Id full = s.leaf(t, d == 0 ? Dims{s.pick(1, 4), other} : Dims{other, s.pick(1, 4)});
    const Id empty = s.leaf(t, d == 0 ? Dims{0, other} : Dims{other, 0});
    s.concat(empty_right ? std::vector<Id>{full, empty} : std::vector<Id>{empty, full}, static_cast<std::int64_t>(d));
  };
  m["concat-drop-empty-right"] = [with_empty](Instance& s, const AxiomInfo&) { with_empty(s, true); };
  m["concat-drop-empty-left"] = [with_empty](Instance& s, const AxiomInfo&) { with_empty(s, false); };
  m["concat-of-concat-left"] = [nested_concat](Instance& s, const AxiomInfo&) { nested_concat(s, true); };
  m["concat-of-concat-right"] = [nested_concat](Instance& s, const AxiomInfo&) { nested_concat(s, false); };
  // Two flat vectors (e.g. byte slices of two inputs) reshaped to rows and joined by rows, or
  // along dim 1 of a [1, n, w] view (only size-1 dims before the concatenated one).
  m["concat-of-flat-reshapes"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.dtype();
    const std::int64_t w = s.pick(1, 4), ra = s.pick(1, 3), rb = s.pick(1, 3);
    const Id x = s.leaf(t, {ra * w}), y = s.leaf(t, {rb * w});
    if (s.coin()) s.concat({s.reshape(x, {ra, w}), s.reshape(y, {rb, w})}, 0);
    else s.concat({s.reshape(x, {1, ra, w}), s.reshape(y, {1, rb, w})}, 1);
  };
  m["slice-of-transpose"] = [](Instance& s, const AxiomInfo&) {
    const Id t = s.transpose(s.leaf(s.dtype(), s.dims(3, 1, 5)), s.permutation(3));
    s.slice(t, s.ranges(s.type(t).dims));
  };
  m["transpose-of-slice"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(3, 1, 5));
    s.transpose(s.slice(x, s.ranges(s.type(x).dims)), s.permutation(3));
  };
  m["slice-of-reshape"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), {s.pick(2, 6), 2, s.pick(1, 3)});
    const Dims d = s.type(x).dims;
    if (s.coin()) {  // x flattened; a block of x (rows of one dim inside one index of the dims before), or a near miss
      const std::int64_t n = d[0] * d[1] * d[2];
      const Id flat = s.reshape(x, {n});
      std::int64_t start = s.pick(0, n - 1), limit = s.pick(start + 1, n);
      if (s.coin()) {
        const auto k = static_cast<std::size_t>(s.pick(0, 2));
        std::int64_t inner = 1, outer = 1;
        for (std::size_t j = k + 1; j < 3; ++j) inner *= d[j];
        for (std::size_t j = 0; j < k; ++j) outer *= d[j];
        const std::int64_t prefix = s.pick(0, outer - 1), lo = s.pick(0, d[k] - 1), hi = s.pick(lo + 1, d[k]);
        start = (prefix * d[k] + lo) * inner;
        limit = (prefix * d[k] + hi) * inner;
      }
      s.slice(flat, {{start, limit, 1}});
      return;
    }
    const Id r = s.reshape(x, {d[0], d[1] * d[2]});
    auto rr = axiom_detail::full_ranges(s.type(r).dims);
    rr[0] = s.range(d[0]);
    s.slice(r, rr);
  };
  m["slice-of-narrowing-bitcast"] = [](Instance& s, const AxiomInfo&) {
    // bf16/s32/f32 → bytes (or f32 → bf16 halves); rows sliced, or a near miss (a column cut).
    const DType from = s.coin() ? DType::bf16 : (s.coin() ? DType::s32 : DType::f32);
    const DType to = from == DType::f32 && s.coin() ? DType::bf16 : DType::u8;
    const Id y = s.unary(Opcode::BitcastConvert, s.leaf(from, s.dims(2, 1, 5)), to);
    const Dims d = s.type(y).dims;
    auto r = s.ranges(d);
    if (s.pick(0, 3) != 0)  // a row block: every dim after the first whole
      for (std::size_t k = 1; k < d.size(); ++k) r[k] = {0, d[k], 1};
    s.slice(y, r);
  };
  m["slice-of-widening-bitcast"] = [](Instance& s, const AxiomInfo&) {
    // A leaf is bitcast-convert(reshape(bytes)): slicing it slices its bytes' rows.
    const Id x = s.leaf(s.dtype(), s.dims(2, 1, 5));
    const Dims d = s.type(x).dims;
    auto r = s.ranges(d);
    if (s.pick(0, 3) != 0) r[1] = {0, d[1], 1};  // a row block, or a near miss (a column cut)
    s.slice(x, r);
  };
  m["slice-of-broadcast"] = [](Instance& s, const AxiomInfo&) {
    // Sometimes a size-1 operand dim that the broadcast repeats (XLA broadcast-in-dim).
    const Id x = s.leaf(s.dtype(), s.coin() ? Dims{1} : s.dims(1, 2, 6));
    const auto n = s.type(x).dims[0] == 1 ? s.pick(1, 5) : s.type(x).dims[0];
    NodeAttributes a;
    a.dimensions = {s.pick(0, 1)};
    a.shape = a.dimensions[0] == 0 ? Dims{n, s.pick(1, 5)} : Dims{s.pick(1, 5), n};
    const Id bc = s.op(Opcode::Broadcast, a, {x});
    s.slice(bc, s.ranges(a.shape));
  };
  m["slice-of-reverse"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(2, 2, 7));
    NodeAttributes a;
    a.dimensions = s.coin() ? Dims{0} : Dims{0, 1};
    s.slice(s.op(Opcode::Reverse, a, {x}), s.ranges(s.type(x).dims));
  };
  m["slice-of-pad"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.dtype();
    const Id x = s.leaf(t, s.dims(2, 1, 5));
    const Dims d = s.type(x).dims;
    NodeAttributes a;
    a.padding = {{s.pick(0, 2), s.pick(0, 2), 0}, {s.pick(0, 2), s.pick(0, 2), 0}};
    const Id p = s.op(Opcode::Pad, a, {x, s.b().scalar(t, 0)});
    std::vector<hlo::SliceRange> r;
    for (std::size_t k = 0; k < 2; ++k) {
      const auto q = s.range(d[k]);
      r.push_back({q.start + a.padding[k].low, q.limit + a.padding[k].low, q.stride});
    }
    s.slice(p, r);
  };
  m["pad-identity"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.dtype();
    NodeAttributes a;
    a.padding = {{0, 0, 0}, {0, s.coin() ? 0 : 1, 0}};
    s.op(Opcode::Pad, a, {s.leaf(t, s.dims(2)), s.b().scalar(t, 1)});
  };
  m["reverse-of-reverse"] = [](Instance& s, const AxiomInfo&) {
    NodeAttributes a, c;
    a.dimensions = s.coin() ? Dims{0} : Dims{0, 1};
    c.dimensions = s.coin() ? Dims{1} : Dims{0};
    s.op(Opcode::Reverse, c, {s.op(Opcode::Reverse, a, {s.leaf(s.dtype(), s.dims(2))})});
  };
  m["reverse-one-dimension-at-a-time"] = [](Instance& s, const AxiomInfo&) {
    NodeAttributes a;
    const bool rank3 = s.coin();
    a.dimensions = rank3 ? Dims{0, 2} : Dims{0, 1};
    s.op(Opcode::Reverse, a, {s.leaf(s.dtype(), s.dims(rank3 ? 3 : 2))});
  };
  m["reverse-size-one"] = [](Instance& s, const AxiomInfo&) {
    NodeAttributes a;
    a.dimensions = {1};
    s.op(Opcode::Reverse, a, {s.leaf(s.dtype(), {s.pick(1, 4), s.pick(1, 2)})});
  };
  m["broadcast-of-broadcast"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(1));
    NodeAttributes a, c;
    a.shape = {s.type(x).dims[0], s.pick(1, 3)};
    a.dimensions = {0};
    c.shape = {s.pick(1, 3), a.shape[1], a.shape[0]};
    c.dimensions = {2, 1};
    s.op(Opcode::Broadcast, c, {s.op(Opcode::Broadcast, a, {x})});
  };
  m["broadcast-as-reshape"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(2));
    NodeAttributes a;
    a.shape = {s.type(x).dims[0], 1, s.type(x).dims[1]};
    a.dimensions = {0, 2};
    s.op(Opcode::Broadcast, a, {x});
  };
  // ---- elementwise ----
  const auto operand = [](Instance& s, Opcode u, DType t, Dims d) -> std::pair<Id, DType> {
    // An operand for unary u and the dtype u's attribute takes.
    if (u == Opcode::BitcastConvert) {
      const bool f = s.coin();
      return {s.leaf(f ? DType::f32 : DType::s32, d), f ? DType::s32 : DType::f32};
    }
    if (u == Opcode::Convert) return {s.leaf(t, d), s.dtype()};
    return {s.leaf(hlo::shape_detail::is_elementwise_unary(u) && u != Opcode::Copy && u != Opcode::Negate &&
                           u != Opcode::Abs ? s.float_type() : t,
                   d),
            DType::u8};
  };
  const auto apply_op = [operand](Instance& s, Opcode f, DType t, Dims d) {
    if (hlo::shape_detail::is_elementwise_binary(f)) {
      const Id x = s.leaf(t, d), y = s.leaf(t, d);
      return s.op(f, NodeAttributes{}, {x, y});
    }
    auto [x, to] = operand(s, f, t, d);
    return s.unary(f, x, to);
  };
  m["slice-of-<op>"] = [apply_op](Instance& s, const AxiomInfo& i) {
    const Id e = apply_op(s, i.lhs_opcodes[1], s.dtype(), s.dims(2, 1, 6));
    s.slice(e, s.ranges(s.type(e).dims));
  };
  m["transpose-of-<op>"] = [apply_op](Instance& s, const AxiomInfo& i) {
    const Id e = apply_op(s, i.lhs_opcodes[1], s.dtype(), s.dims(3, 1, 4));
    s.transpose(e, s.permutation(3));
  };
  m["reshape-of-<op>"] = [apply_op](Instance& s, const AxiomInfo& i) {
    const Id e = apply_op(s, i.lhs_opcodes[1], s.dtype(), s.dims(2, 1, 5));
    s.reshape(e, {s.type(e).element_count()});
  };
  m["concat-of-<op>"] = [operand](Instance& s, const AxiomInfo& i) {
    const Opcode f = i.lhs_opcodes[1];
    const DType t = s.dtype();
    const auto cols = s.pick(1, 4);
    if (hlo::shape_detail::is_elementwise_binary(f)) {
      const Dims d1{s.pick(1, 3), cols}, d2{s.pick(1, 3), cols};
      const Id l = s.op(f, NodeAttributes{}, {s.leaf(t, d1), s.leaf(t, d1)});
      const Id r = s.op(f, NodeAttributes{}, {s.leaf(t, d2), s.leaf(t, d2)});
      s.concat({l, r}, 0);
      return;
    }
    auto [a, to] = operand(s, f, t, {s.pick(1, 3), cols});
    const Id b = s.leaf(s.type(a).dtype, {s.pick(1, 3), cols});
    s.concat({s.unary(f, a, to), s.unary(f, b, to)}, 0);
  };
  m["<op>-of-broadcasts"] = [](Instance& s, const AxiomInfo& i) {
    // Near miss (one instance in two): the same operand type broadcast along the other dim of a
    // square result, which f(bc(a), bc(b)) -> bc(f(a, b)) must not take.
    const DType t = s.dtype();
    const auto n = s.pick(1, 4);
    const bool near_miss = s.coin();
    NodeAttributes a;
    a.shape = {near_miss ? n : s.pick(1, 4), n};
    a.dimensions = {1};
    NodeAttributes b = a;
    if (near_miss) b.dimensions = {0};
    const Id x = s.op(Opcode::Broadcast, a, {s.leaf(t, {n})});
    const Id y = s.op(Opcode::Broadcast, b, {s.leaf(t, {n})});
    s.op(i.lhs_opcodes[0], NodeAttributes{}, {x, y});
  };
  m["broadcast-of-<op>"] = [apply_op](Instance& s, const AxiomInfo& i) {
    const Id e = apply_op(s, i.lhs_opcodes[1], s.dtype(), Dims{});
    NodeAttributes a;
    a.shape = s.dims(2, 1, 4);
    s.op(Opcode::Broadcast, a, {e});
  };
  m["split-<op>"] = [](Instance& s, const AxiomInfo& i) {
    const DType t = s.dtype();
    const Dims d{2 * s.pick(1, 4), s.pick(1, 4)};
    s.op(i.lhs_opcodes[0], NodeAttributes{}, {s.leaf(t, d), s.leaf(t, d)});
  };
  m["<op>-commutative"] = m["split-<op>"];
  m["<op>-associative"] = [](Instance& s, const AxiomInfo& i) {
    const DType t = s.dtype();
    const Dims d = s.dims(2, 1, 4);
    const Opcode f = i.lhs_opcodes[0];
    s.op(f, NodeAttributes{}, {s.op(f, NodeAttributes{}, {s.leaf(t, d), s.leaf(t, d)}), s.leaf(t, d)});
  };
  // ---- dot ----
  const auto random_dot = [](Instance& s, bool batch) {
    // Random operand layouts: lhs [m,k] or [k,m], rhs [k,n] or [n,k], optionally a batch dim.
    const DType t = s.dtype();
    const auto M = s.pick(1, 3) * 2, K = s.pick(1, 3) * (s.coin() ? 2 : 1) + (s.coin() ? 1 : 0), N = s.pick(1, 3) * 2;
    const bool lt = s.coin(), rt = s.coin();
    hlo::DotDimensions d;
    Dims ld = lt ? Dims{K, M} : Dims{M, K}, rd = rt ? Dims{N, K} : Dims{K, N};
    d.lhs_contracting = {lt ? 0 : 1};
    d.rhs_contracting = {rt ? 1 : 0};
    if (batch) {
      const auto B = s.pick(1, 3);
      ld.insert(ld.begin(), B);
      rd.insert(rd.begin(), B);
      d.lhs_batch = {0};
      d.rhs_batch = {0};
      d.lhs_contracting[0] += 1;
      d.rhs_contracting[0] += 1;
    }
    const DType result = t == DType::s8 && s.coin() ? DType::s32 : t;
    return s.dot(s.leaf(t, ld), s.leaf(t, rd), d, result);
  };
  for (const char* name : {"dot-split-lhs-free", "dot-split-rhs-free", "dot-split-contracting", "dot-swap-operands"})
    m[name] = [random_dot](Instance& s, const AxiomInfo&) { random_dot(s, s.coin()); };
  for (const char* name : {"dot-canonical-lhs", "dot-canonical-rhs", "dot-pad-contracting", "dot-pad-lhs-free"})
    m[name] = [random_dot](Instance& s, const AxiomInfo&) { random_dot(s, false); };
  // a·bᵀ of any row count (odd counts nest as a chain of halved groups), s8 products in s32 too.
  m["dot-transposed-rhs-by-rows"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.dtype();
    const DType result = t == DType::s8 && s.coin() ? DType::s32 : t;
    const auto M = s.pick(1, 7), K = s.pick(1, 4), N = s.pick(1, 4);
    s.dot(s.leaf(t, {M, K}), s.leaf(t, {N, K}), contracting(1, 1), result);
  };
  // A narrowing integer convert of a dot: s32 or s16 results (of s32/s16 operands, or s8 ones
  // widened by the dot) to s8, u8 or s16.
  m["narrowing-convert-of-dot"] = [](Instance& s, const AxiomInfo&) {
    static constexpr DType kWide[] = {DType::s32, DType::u32, DType::s16};
    static constexpr DType kNarrow[] = {DType::s8, DType::u8, DType::s16};
    const DType from = kWide[s.pick(0, 2)];
    DType to = kNarrow[s.pick(0, 2)];
    if (to == DType::s16 && from == DType::s16) to = DType::s8;
    const DType operands = s.coin() ? from : DType::s8;
    hlo::DotDimensions d;
    d.lhs_contracting = {1};
    d.rhs_contracting = {s.coin() ? 0 : 1};
    const auto M = s.pick(1, 3), K = s.pick(1, 4), N = s.pick(1, 3);
    const Dims rhs = d.rhs_contracting[0] == 0 ? Dims{K, N} : Dims{N, K};
    s.unary(Opcode::Convert, s.dot(s.leaf(operands, {M, K}), s.leaf(operands, rhs), d, from), to);
  };
  m["narrowing-convert-of-<op>"] = [](Instance& s, const AxiomInfo& i) {
    const DType from = s.coin() ? DType::s32 : DType::u32, to = s.coin() ? DType::s8 : DType::u8;
    const Dims d = s.dims(2);
    s.unary(Opcode::Convert, s.op(i.lhs_opcodes[1], NodeAttributes{}, {s.leaf(from, d), s.leaf(from, d)}), to);
  };
  // A narrowing integer convert of a concatenate along either dim of two pieces.
  m["narrowing-convert-of-concatenate"] = [](Instance& s, const AxiomInfo&) {
    const DType from = s.coin() ? DType::s32 : DType::u32, to = s.coin() ? DType::s8 : DType::u8;
    const std::int64_t d = s.coin() ? 0 : 1;
    Dims a{s.pick(1, 3), s.pick(1, 3)}, b = a;
    b[static_cast<std::size_t>(d)] = s.pick(1, 3);
    s.unary(Opcode::Convert, s.concat({s.leaf(from, a), s.leaf(from, b)}, d), to);
  };
  m["slice-of-dot"] = [random_dot](Instance& s, const AxiomInfo&) {
    const Id d = random_dot(s, false);
    s.slice(d, s.ranges(s.type(d).dims));
  };
  const auto fold = [](Instance& s, bool lhs) {
    const DType t = s.dtype();
    const auto M = s.pick(1, 4), K = s.pick(1, 4), N = s.pick(1, 4);
    hlo::DotDimensions d;
    d.lhs_contracting = {1};
    d.rhs_contracting = {0};
    if (lhs) s.dot(s.transpose(s.leaf(t, {K, M}), {1, 0}), s.leaf(t, {K, N}), d, t);
    else s.dot(s.leaf(t, {M, K}), s.transpose(s.leaf(t, {N, K}), {1, 0}), d, t);
  };
  m["dot-fold-transpose-lhs"] = [fold](Instance& s, const AxiomInfo&) { fold(s, true); };
  m["dot-fold-transpose-rhs"] = [fold](Instance& s, const AxiomInfo&) { fold(s, false); };
  m["dot-unpad-contracting"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.dtype();
    const auto M = s.pick(1, 4), K = s.pick(1, 4), N = s.pick(1, 4), extra = s.pick(1, 3);
    NodeAttributes pa, pb;
    pa.padding = {{0, 0, 0}, {0, extra, 0}};
    pb.padding = {{0, extra, 0}, {0, 0, 0}};
    const Id zero = s.b().scalar(t, 0);
    hlo::DotDimensions d;
    d.lhs_contracting = {1};
    d.rhs_contracting = {0};
    s.dot(s.op(Opcode::Pad, pa, {s.leaf(t, {M, K}), zero}), s.op(Opcode::Pad, pb, {s.leaf(t, {K, N}), zero}), d, t);
  };
  m["broadcast-as-dot"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(1));
    // Sometimes a repeated size-1 operand dim, which the rule must leave alone.
    const auto n = s.type(x).dims[0] == 1 ? s.pick(1, 4) : s.type(x).dims[0];
    NodeAttributes a;
    a.dimensions = {s.pick(0, 1)};
    a.shape = a.dimensions[0] == 0 ? Dims{n, s.pick(1, 4)} : Dims{s.pick(1, 4), n};
    s.op(Opcode::Broadcast, a, {x});
  };
  m["clamp-as-min-max"] = [](Instance& s, const AxiomInfo&) {
    // Bounds of the operand's shape or scalars; lo > hi sometimes (clamp is then hi everywhere).
    const DType t = s.dtype();
    const Dims d = s.dims(2, 1, 4);
    const Id lo = s.leaf(t, s.coin() ? Dims{} : d), x = s.leaf(t, d), hi = s.leaf(t, s.coin() ? Dims{} : d);
    s.op(Opcode::Clamp, NodeAttributes{}, {lo, x, hi});
  };
  m["slice-of-clamp"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.float_type();
    const Dims d = s.dims(2, 2, 4);
    const Id lo = s.leaf(t, s.coin() ? Dims{} : d), x = s.leaf(t, d), hi = s.leaf(t, s.coin() ? Dims{} : d);
    const Id c = s.op(Opcode::Clamp, NodeAttributes{}, {lo, x, hi});
    s.b().slice_dim(c, 0, 1, d[0]);
  };
  m["convert-clamped-float-to-u8-via-s32"] = [](Instance& s, const AxiomInfo&) {
    // x * 97 spans about [-390, 390], so both the clamp and the u8 range are exercised.
    const DType t = s.float_type();
    const Dims d = s.dims(2, 1, 4);
    NodeAttributes spread;
    spread.shape = d;
    const auto filled = [&](double v) { return s.op(Opcode::Broadcast, spread, {s.b().scalar(t, v)}); };
    const Id x = s.op(Opcode::Multiply, NodeAttributes{}, {s.leaf(t, d), filled(97.0)});
    const Id c = s.op(Opcode::Clamp, NodeAttributes{}, {filled(s.coin() ? 0.0 : 7.0), x, filled(s.coin() ? 255.0 : 200.0)});
    NodeAttributes to_u8;
    to_u8.dtype = DType::u8;
    s.op(Opcode::Convert, to_u8, {c});
  };
  m["dot-unit-contracting-as-multiply"] = [](Instance& s, const AxiomInfo&) {
    // [M,1] x [1,N] with the unit contracting dim on either side of each operand.
    // Near miss: a contracting dim of 2 (one instance in four) is a sum, not a product.
    const DType t = s.dtype();
    const std::int64_t M = s.pick(1, 5), N = s.pick(1, 5), K = s.pick(0, 3) == 0 ? 2 : 1;
    const bool lhs_first = s.coin(), rhs_first = s.coin();
    hlo::DotDimensions d;
    d.lhs_contracting = {lhs_first ? 0 : 1};
    d.rhs_contracting = {rhs_first ? 0 : 1};
    const Id a = s.leaf(t, lhs_first ? Dims{K, M} : Dims{M, K});
    const Id b = s.leaf(t, rhs_first ? Dims{K, N} : Dims{N, K});
    s.dot(a, b, d, t);
  };
  m["broadcast-drop-unit-dims"] = [](Instance& s, const AxiomInfo&) {
    // x:[1,n] or [n,1] into a rank-3 result, unit dims repeated or kept.
    const auto n = s.pick(1, 4);
    const Dims x_dims = s.coin() ? Dims{1, n} : Dims{n, 1};
    const Id x = s.leaf(s.dtype(), x_dims);
    Dims p = s.permutation(3);
    NodeAttributes a;
    a.dimensions = {p[0], p[1]};
    a.shape = s.dims(3, 1, 4);
    for (std::size_t k = 0; k < 2; ++k)
      if (x_dims[k] != 1) a.shape[static_cast<std::size_t>(p[k])] = x_dims[k];
    s.op(Opcode::Broadcast, a, {x});
  };
  m["transpose-of-broadcast"] = [](Instance& s, const AxiomInfo&) {
    const Id x = s.leaf(s.dtype(), s.dims(s.coin() ? 1 : 2, 1, 4));
    const auto rank = s.type(x).rank();
    Dims p = s.permutation(3);
    NodeAttributes a;
    a.dimensions.assign(p.begin(), p.begin() + rank);
    a.shape = s.dims(3, 1, 4);
    for (std::int64_t k = 0; k < rank; ++k)
      if (s.type(x).dims[static_cast<std::size_t>(k)] != 1 || s.coin())
        a.shape[static_cast<std::size_t>(p[static_cast<std::size_t>(k)])] = s.type(x).dims[static_cast<std::size_t>(k)];
    s.transpose(s.op(Opcode::Broadcast, a, {x}), s.permutation(3));
  };
  m["reshape-of-broadcast"] = [](Instance& s, const AxiomInfo&) {
    NodeAttributes a;
    if (s.coin()) {  // a scalar (or [1]) broadcast, reshaped any way
      const Id x = s.leaf(s.dtype(), s.coin() ? Dims{} : Dims{1});
      a.shape = s.dims(2, 1, 4);
      a.dimensions = s.type(x).rank() == 0 ? Dims{} : Dims{s.pick(0, 1)};
      const Id bc = s.op(Opcode::Broadcast, a, {x});
      const auto n = a.shape[0] * a.shape[1];
      s.reshape(bc, s.coin() ? Dims{n} : Dims{a.shape[1], a.shape[0]});
      return;
    }
    // x:[n] into [m,n] or [n,m], then size-1 dims inserted or removed.
    const auto n = s.pick(2, 4), m = s.pick(1, 3);
    const Id x = s.leaf(s.dtype(), {n});
    const bool first = s.coin();
    a.dimensions = {first ? 0 : 1};
    a.shape = first ? Dims{n, m} : Dims{m, n};
    const Id bc = s.op(Opcode::Broadcast, a, {x});
    Dims r;
    for (auto d : a.shape) {
      if (s.coin()) r.push_back(1);
      if (d != 1) r.push_back(d);
    }
    s.reshape(bc, r);
  };
  m["reduce-as-dot"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.dtype();
    NodeAttributes a;
    a.dimensions = {s.pick(0, 1)};
    a.reduce = ReduceKind::Add;
    s.op(Opcode::Reduce, a, {s.leaf(t, s.dims(2)), s.b().scalar(t, 0)});
  };
  m["reverse-as-dot"] = [](Instance& s, const AxiomInfo&) {
    NodeAttributes a;
    a.dimensions = {s.pick(0, 1)};
    s.op(Opcode::Reverse, a, {s.leaf(s.dtype(), s.dims(2))});
  };
  m["transpose-as-dot"] = [](Instance& s, const AxiomInfo&) { s.transpose(s.leaf(s.dtype(), s.dims(2)), {1, 0}); };
  // Three times in four the transposed value is a concatenate of (strided) slices of leaves, whose
  // elements the blends read from the leaves themselves (element_source).
  m["transpose-by-lane-blends"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.dtype();
    const Dims d = s.dims(2, 2, 6);
    if (s.pick(0, 3) == 0) {
      s.transpose(s.leaf(t, d), {1, 0});
      return;
    }
    const std::size_t along = static_cast<std::size_t>(s.pick(0, 1));
    const hlo::SliceRange across = s.range(d[1 - along]);
    std::vector<Id> parts;
    for (std::int64_t k = s.pick(2, 3); k > 0; --k) {
      std::vector<hlo::SliceRange> r(2);
      r[along] = s.range(d[along]);
      r[1 - along] = across;
      parts.push_back(s.slice(s.leaf(t, d), r));
    }
    s.transpose(s.concat(parts, static_cast<std::int64_t>(along)), {1, 0});
  };
  // A chain of 1-4 value-wise operators over a float matrix, transposed; a clamp's bounds are
  // scalars (kept as they are) or, one clamp in four, matrices (transposed with the rest).
  m["transpose-through-value-wise-chain"] = [](Instance& s, const AxiomInfo&) {
    static constexpr Opcode kBinary[] = {Opcode::Add, Opcode::Subtract, Opcode::Multiply,
                                         Opcode::Divide, Opcode::Maximum, Opcode::Minimum};
    const DType t = s.float_type();
    const Dims d = s.dims(2, 2, 5);
    Id x = s.leaf(t, d);
    for (std::int64_t depth = s.pick(1, 4); depth > 0; --depth) {
      const Opcode f = kBinary[s.pick(0, 5)];
      switch (s.pick(0, 3)) {
        case 0: x = s.coin() ? s.op(f, NodeAttributes{}, {x, s.leaf(t, d)}) : s.op(f, NodeAttributes{}, {s.leaf(t, d), x}); break;
        case 1: x = s.unary(s.coin() ? Opcode::Negate : Opcode::Abs, x); break;
        case 2: {
          const bool scalar = s.pick(0, 3) != 0;
          const Id lo = scalar ? s.b().scalar(t, -1.5) : s.leaf(t, d), hi = scalar ? s.b().scalar(t, 2.0) : s.leaf(t, d);
          x = s.op(Opcode::Clamp, NodeAttributes{}, {lo, x, hi});
          break;
        }
        default: x = s.op(f, NodeAttributes{}, {x, x});
      }
    }
    s.transpose(x, {1, 0});
  };
  // issue 16 (rules/axioms/negation_and_reduction.hpp): wrapping integers only.
  m["negate-as-dot"] = [](Instance& s, const AxiomInfo&) {
    s.unary(Opcode::Negate, s.leaf(s.coin() ? DType::s8 : DType::s32, s.dims(2)));
  };
  m["subtract-as-add-negate"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.coin() ? DType::s8 : DType::s32;
    const Dims d = s.dims(s.pick(1, 3));
    s.op(Opcode::Subtract, NodeAttributes{}, {s.leaf(t, d), s.leaf(t, d)});
  };
  m["subtract-of-itself"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.coin() ? DType::s8 : DType::s32;
    const Id x = s.leaf(t, s.dims(s.pick(1, 3)));
    // Near miss (one instance in four): x - y with y another value of the same type.
    const Id y = s.pick(0, 3) == 0 ? s.leaf(t, s.g.data(x).type.dims) : x;
    s.op(Opcode::Subtract, NodeAttributes{}, {x, y});
  };
  m["reduce-keepdim-as-dot"] = [](Instance& s, const AxiomInfo&) {
    const DType t = s.coin() ? DType::s8 : DType::s32;
    const Dims d = s.dims(2);
    NodeAttributes a;
    a.dimensions = {s.pick(0, 1)};
    a.reduce = ReduceKind::Add;
    const Id r = s.op(Opcode::Reduce, a, {s.leaf(t, d), s.b().scalar(t, 0)});
    const auto kept = d[a.dimensions[0] == 0 ? 1 : 0];
    s.reshape(r, s.coin() ? Dims{kept, 1} : Dims{1, kept});
  };
  // issue 16 (rules/axioms/min_max_via_relu.hpp): without an ISA every integer type qualifies.
  for (const char* name : {"maximum-as-widened-relu", "minimum-as-widened-relu"})
    m[name] = [name](Instance& s, const AxiomInfo&) {
      static constexpr DType kTypes[] = {DType::s8, DType::u8, DType::s16, DType::s32};
      const DType t = kTypes[s.pick(0, 3)];
      const Dims d = s.dims(s.pick(1, 3));
      const Opcode code = std::string_view(name).starts_with("maximum") ? Opcode::Maximum : Opcode::Minimum;
      s.op(code, NodeAttributes{}, {s.leaf(t, d), s.leaf(t, d)});
    };
  m["add-of-widened-as-mac"] = [](Instance& s, const AxiomInfo&) {
    const DType w = s.coin() ? DType::s32 : DType::s16;
    const Id y = s.leaf(s.coin() ? DType::s8 : DType::u8, s.dims(2));
    const Id wide = s.unary(Opcode::Convert, y, w);
    s.op(Opcode::Add, NodeAttributes{}, {wide, s.leaf(w, s.g.data(wide).type.dims)});
  };
  m["negate-widened-as-dot"] = [](Instance& s, const AxiomInfo&) {
    // Near miss (half the instances): u8 operands, where -1 is no u8 and the rule must not apply.
    const Id wide = s.unary(Opcode::Convert, s.leaf(s.coin() ? DType::s8 : DType::u8, s.dims(2)), DType::s32);
    s.unary(Opcode::Negate, wide);
  };
  m["dot-identity-introduction"] = [](Instance& s, const AxiomInfo&) {
    s.unary(Opcode::Negate, s.leaf(s.dtype(), s.dims(2)));
  };
  return m;
}

struct RuleStats {
  int instances = 0;  // instances where the rule added something to a matched class
  int checks = 0;     // (node, input) comparisons
};

// Builds one instance, applies the rule once and checks every node it added to a matched class.
void check_instance(SelectionContext& ctx, const Axiom& axiom, const Generator& gen, std::mt19937_64& rng,
                    RuleStats& stats) {
  Instance s(ctx, rng);
  gen(s, axiom.info);
  s.g.rebuild();
  egraph::MatchList matches;
  axiom.rule.search(s.g, matches);
  if (matches.empty()) return;
  // Before: each matched class's term (one node per class in a fresh instance).
  std::vector<std::pair<Id, std::vector<Id>>> before;
  std::vector<TermModule> lhs_terms;
  for (std::size_t i = 0; i < matches.size(); ++i) {
    const Id cls = s.g.find(matches.eclass(i));
    const auto& nodes = s.g.eclass(cls).nodes;
    before.emplace_back(cls, std::vector<Id>(nodes.begin(), nodes.end()));
    lhs_terms.push_back(term_to_hlo(s.g, s.ctx, nodes.front()));
  }
  axiom.rule.apply(s.g, matches);
  s.g.rebuild();
  bool added = false;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const auto& [cls, old_nodes] = before[i];
    for (Id n : s.g.eclass(cls).nodes) {
      if (std::find(old_nodes.begin(), old_nodes.end(), n) != old_nodes.end()) continue;
      added = true;
      const TermModule rhs = term_to_hlo(s.g, s.ctx, n);
      for (const Values mode : {Values::SmallIntegers, Values::Fractions, Values::Edges}) {
        // Re-association is exact on wrapping integers but not on floats near overflow.
        if (mode == Values::Edges && is_float(s.g.data(cls).type.dtype) &&
            (finite_only_rules().count(axiom.info.name) || axiom.info.reassociates))
          continue;
        std::map<std::int64_t, Literal> values;
        for (const auto& [index, type] : s.leaf_types) values.emplace(index, random_value(type, rng, mode));
        const Literal want = run(lhs_terms[i], values);
        const Literal got = run(rhs, values);
        std::string why;
        const bool ok = close(want, got, axiom.info.reassociates && mode != Values::SmallIntegers, why);
        if (!ok) {
          INFO("rule " << axiom.info.name << ": " << why);
          INFO("lhs nodes " << lhs_terms[i].module.entry_computation().instructions.size() << ", rhs root "
                            << hlo::opcode_name(rhs.module.entry_computation().root_instruction().opcode));
          CHECK(ok);
        }
        ++stats.checks;
      }
    }
  }
  if (added) ++stats.instances;
}

}  // namespace

TEST_CASE("ir axioms: at least 100 rules with unique names and descriptions", "[select][axioms]") {
  SelectionContext ctx;
  const auto axioms = ir_axiom_set(ctx);
  CHECK(axioms.size() >= 100);
  std::set<std::string> names;
  for (const auto& a : axioms) {
    INFO(a.info.name);
    CHECK(names.insert(a.info.name).second);
    CHECK(a.rule.name() == a.info.name);
    CHECK(!a.info.source.empty());
  }
  const auto rules = ir_axioms(ctx);
  REQUIRE(rules.size() == axioms.size());
  CHECK(ir_axiom_infos().size() == axioms.size());
}

TEST_CASE("ir axioms: every rule is sound on random instances", "[select][axioms]") {
  SelectionContext ctx;
  const auto axioms = ir_axiom_set(ctx);
  const auto gens = generators();
  std::mt19937_64 rng(20240611);
  int total_instances = 0, total_checks = 0;
  for (const auto& axiom : axioms) {
    INFO("rule " << axiom.info.name << " (template " << axiom.info.shape << ")");
    auto it = gens.find(axiom.info.shape);
    REQUIRE(it != gens.end());
    RuleStats stats;
    for (int attempt = 0; attempt < 120 && stats.instances < 20; ++attempt) {
      try {
        check_instance(ctx, axiom, it->second, rng, stats);
      } catch (const Error& e) {
        FAIL_CHECK("act::Error: " << e.what());
        break;
      }
    }
    // A rule whose generator never instantiates it is itself a failure.
    CHECK(stats.instances >= 5);
    total_instances += stats.instances;
    total_checks += stats.checks;
  }
  WARN("axioms: " << axioms.size() << " rules, " << total_instances << " instances, " << total_checks << " comparisons");
}

TEST_CASE("term_to_hlo: shared classes become one instruction; inputs map to parameters", "[select][axioms]") {
  SelectionContext ctx;
  TensorGraph g{TensorAnalysis(&ctx)};
  Build b{g, ctx};
  const Id in = g.add(make_input(ctx.attributes, 3, 8), {});
  const Id x = b.reshape(in, {2, 4});
  NodeAttributes none;
  const Id sum = b.op(Opcode::Add, none, {x, x});
  const TermModule t = term_to_hlo(g, ctx, g.eclass(sum).nodes.front());
  REQUIRE(t.inputs == std::vector<std::int64_t>{3});
  CHECK(t.module.entry_computation().instructions.size() == 3);  // parameter, reshape, add
  Literal arg(Shape(DType::u8, {8}));
  for (int i = 0; i < 8; ++i) arg.set_int(i, 10 * i);
  const Literal r = hlo::evaluate(t.module, std::vector<Literal>{arg});
  CHECK(r.shape().dims == Dims{2, 4});
  CHECK(r.get_int(5) == 100);
  CHECK(r.get_int(7) == static_cast<std::uint8_t>(140));
}

namespace {

// Builds an instance with `build`, applies the axiom `name` once and tells whether a class it
// matched gained a node (whether the rule rewrote the instance).
bool rewrites(const std::string& name, const std::function<void(Instance&)>& build) {
  SelectionContext ctx;
  const auto axioms = ir_axiom_set(ctx);
  const auto axiom = std::find_if(axioms.begin(), axioms.end(), [&](const Axiom& a) { return a.info.name == name; });
  INFO("axiom " << name);
  REQUIRE(axiom != axioms.end());
  std::mt19937_64 rng(1);
  Instance s(ctx, rng);
  build(s);
  s.g.rebuild();
  egraph::MatchList matches;
  axiom->rule.search(s.g, matches);
  std::vector<std::pair<Id, std::size_t>> sizes;
  for (std::size_t i = 0; i < matches.size(); ++i) {
    const Id cls = s.g.find(matches.eclass(i));
    sizes.emplace_back(cls, s.g.eclass(cls).nodes.size());
  }
  axiom->rule.apply(s.g, matches);
  s.g.rebuild();
  for (const auto& [cls, before] : sizes)
    if (s.g.eclass(s.g.find(cls)).nodes.size() > before) return true;
  return false;
}

}  // namespace

// Each pair: an instance just outside the rule's precondition (not rewritten) and the closest
// one inside it (rewritten, so the first check is not vacuous).
TEST_CASE("ir axioms: near misses are not rewritten", "[select][axioms]") {
  const auto broadcasts = [](bool same_dims) {
    return [same_dims](Instance& s) {
      NodeAttributes a;
      a.shape = {3, 3};
      a.dimensions = {1};
      NodeAttributes b = a;
      if (!same_dims) b.dimensions = {0};
      s.op(Opcode::Add, NodeAttributes{}, {s.op(Opcode::Broadcast, a, {s.leaf(DType::f32, {3})}),
                                           s.op(Opcode::Broadcast, b, {s.leaf(DType::f32, {3})})});
    };
  };
  CHECK_FALSE(rewrites("add-of-broadcasts", broadcasts(false)));
  CHECK(rewrites("add-of-broadcasts", broadcasts(true)));

  const auto unit_dot = [](std::int64_t k) {
    return [k](Instance& s) {
      hlo::DotDimensions d;
      d.lhs_contracting = {1};
      d.rhs_contracting = {0};
      s.dot(s.leaf(DType::f32, {3, k}), s.leaf(DType::f32, {k, 4}), d, DType::f32);
    };
  };
  CHECK_FALSE(rewrites("dot-unit-contracting-as-multiply", unit_dot(2)));
  CHECK(rewrites("dot-unit-contracting-as-multiply", unit_dot(1)));

  // dot(transpose<p>(x), b) folds only when the lhs's free dims (0 and 1 of [a,c,k]) keep their
  // order in x: p = {0,2,1} maps them to 0 and 2, p = {1,0,2} to 1 and 0.
  const auto folded = [](Dims p) {
    return [p](Instance& s) {
      hlo::DotDimensions d;
      d.lhs_contracting = {2};
      d.rhs_contracting = {0};
      Dims x_dims(3);
      const Dims lhs_dims{2, 3, 4};
      for (std::size_t i = 0; i < 3; ++i) x_dims[static_cast<std::size_t>(p[i])] = lhs_dims[i];
      s.dot(s.transpose(s.leaf(DType::f32, x_dims), p), s.leaf(DType::f32, {4, 5}), d, DType::f32);
    };
  };
  CHECK_FALSE(rewrites("dot-fold-transpose-lhs", folded({1, 0, 2})));
  CHECK(rewrites("dot-fold-transpose-lhs", folded({0, 2, 1})));

  // a·bᵀ is cut into rows where both operands are plain values, not where one is a transpose
  // (what dot-swap-operands and dot-canonical-lhs make of every canonical dot).
  const auto transposed_rhs = [](bool lhs_transposed) {
    return [lhs_transposed](Instance& s) {
      const Id a = lhs_transposed ? s.transpose(s.leaf(DType::s8, {3, 2}), {1, 0}) : s.leaf(DType::s8, {2, 3});
      s.dot(a, s.leaf(DType::s8, {4, 3}), contracting(1, 1), DType::s8);
    };
  };
  CHECK_FALSE(rewrites("dot-transposed-rhs-by-rows", transposed_rhs(true)));
  CHECK(rewrites("dot-transposed-rhs-by-rows", transposed_rhs(false)));

  // A typed leaf is a bitcast-convert of the input's bytes to another width: not value-wise, so
  // the chain has nowhere to go; a negate of it has.
  const auto negated = [](bool negate) {
    return [negate](Instance& s) {
      const Id x = s.leaf(DType::f32, {3, 4});
      s.transpose(negate ? s.unary(Opcode::Negate, x) : x, {1, 0});
    };
  };
  CHECK_FALSE(rewrites("transpose-through-value-wise-chain", negated(false)));
  CHECK(rewrites("transpose-through-value-wise-chain", negated(true)));

  const auto transpose = [](Dims p) { return [p](Instance& s) { s.transpose(s.leaf(DType::s32, {2, 3, 4}), p); }; };
  CHECK_FALSE(rewrites("transpose-identity", transpose({0, 2, 1})));
  CHECK(rewrites("transpose-identity", transpose({0, 1, 2})));

  const auto slice = [](std::int64_t limit) {
    return [limit](Instance& s) { s.slice(s.leaf(DType::s8, {4, 5}), {{0, 4, 1}, {0, limit, 1}}); };
  };
  CHECK_FALSE(rewrites("slice-full-range", slice(4)));
  CHECK(rewrites("slice-full-range", slice(5)));

  // A slice inside one operand of a concatenate: one element is slice-of-concat-element's, a
  // row slice-of-concat's (two backoff schedules: the elements a lane-blend transpose reads must
  // not get the rows banned).
  const auto concat_piece = [](std::int64_t columns) {
    return [columns](Instance& s) {
      const Id c = s.concat({s.leaf(DType::f32, {2, 4}), s.leaf(DType::f32, {2, 4})}, 0);
      s.slice(c, {{3, 4, 1}, {0, columns, 1}});
    };
  };
  CHECK_FALSE(rewrites("slice-of-concat", concat_piece(1)));
  CHECK(rewrites("slice-of-concat-element", concat_piece(1)));
  CHECK(rewrites("slice-of-concat", concat_piece(4)));
  CHECK_FALSE(rewrites("slice-of-concat-element", concat_piece(4)));

  const auto reverse = [](std::int64_t n) {
    return [n](Instance& s) {
      NodeAttributes a;
      a.dimensions = {1};
      s.op(Opcode::Reverse, a, {s.leaf(DType::f32, {3, n})});
    };
  };
  CHECK_FALSE(rewrites("reverse-size-one", reverse(2)));
  CHECK(rewrites("reverse-size-one", reverse(1)));

  const auto pad = [](std::int64_t high) {
    return [high](Instance& s) {
      NodeAttributes a;
      a.padding = {{0, 0, 0}, {0, high, 0}};
      s.op(Opcode::Pad, a, {s.leaf(DType::s32, {2, 3}), s.b().scalar(DType::s32, 0)});
    };
  };
  CHECK_FALSE(rewrites("pad-identity", pad(1)));
  CHECK(rewrites("pad-identity", pad(0)));

  // concat(add(a, b), add(c, d)) joins a with c and b with d: pieces of one value, or values
  // that are no pieces, but not a piece of x with a piece of y (a mixture commuted operands
  // offer at every split point).
  const auto pieces = [](bool mixed) {
    return [mixed](Instance& s) {
      const Id x = s.leaf(DType::f32, {4, 3}), y = s.leaf(DType::f32, {4, 3});
      const auto lo = [&](Id v) { return s.b().slice_dim(v, 0, 0, 2); };
      const auto hi = [&](Id v) { return s.b().slice_dim(v, 0, 2, 4); };
      const Id upper = s.op(Opcode::Add, NodeAttributes{}, {lo(x), lo(y)});
      const Id lower = mixed ? s.op(Opcode::Add, NodeAttributes{}, {hi(y), hi(x)}) : s.op(Opcode::Add, NodeAttributes{}, {hi(x), hi(y)});
      s.b().concat({upper, lower}, 0);
    };
  };
  CHECK_FALSE(rewrites("concat-of-add", pieces(true)));
  CHECK(rewrites("concat-of-add", pieces(false)));
  const auto whole_values = [](Instance& s) {
    const auto sum = [&] { return s.op(Opcode::Add, NodeAttributes{}, {s.leaf(DType::f32, {2, 3}), s.leaf(DType::f32, {2, 3})}); };
    s.b().concat({sum(), sum()}, 0);
  };
  CHECK(rewrites("concat-of-add", whole_values));

  // convert(convert(x)) is x only when the middle type holds every value of x's type.
  const auto converts = [](DType from, DType mid) {
    return [from, mid](Instance& s) { s.unary(Opcode::Convert, s.unary(Opcode::Convert, s.leaf(from, {4}), mid), from); };
  };
  CHECK_FALSE(rewrites("convert-of-convert", converts(DType::f32, DType::bf16)));
  CHECK_FALSE(rewrites("convert-of-convert", converts(DType::s32, DType::s8)));
  CHECK(rewrites("convert-of-convert", converts(DType::s8, DType::s32)));

  // Only a narrowing integer convert distributes over a dot or a ring operation: widening
  // changes the wrap, and a float convert rounds.
  const auto converted_dot = [](DType operands, DType to) {
    return [operands, to](Instance& s) {
      hlo::DotDimensions d;
      d.lhs_contracting = {1};
      d.rhs_contracting = {0};
      s.unary(Opcode::Convert, s.dot(s.leaf(operands, {2, 3}), s.leaf(operands, {3, 2}), d, operands), to);
    };
  };
  CHECK(rewrites("narrowing-convert-of-dot", converted_dot(DType::s32, DType::s8)));
  CHECK_FALSE(rewrites("narrowing-convert-of-dot", converted_dot(DType::s8, DType::s32)));
  CHECK_FALSE(rewrites("narrowing-convert-of-dot", converted_dot(DType::f32, DType::bf16)));
  // A dot of operands widened from s8 is left alone: it is computed as it is (matmul32, then
  // the low byte stored).
  CHECK_FALSE(rewrites("narrowing-convert-of-dot", [](Instance& s) {
    hlo::DotDimensions d;
    d.lhs_contracting = {1};
    d.rhs_contracting = {0};
    const Id a = s.unary(Opcode::Convert, s.leaf(DType::s8, {2, 3}), DType::s32);
    const Id b = s.unary(Opcode::Convert, s.leaf(DType::s8, {3, 2}), DType::s32);
    s.unary(Opcode::Convert, s.dot(a, b, d, DType::s32), DType::s8);
  }));
  const auto converted_sum = [](DType from, DType to) {
    return [from, to](Instance& s) {
      s.unary(Opcode::Convert, s.op(Opcode::Add, NodeAttributes{}, {s.leaf(from, {4}), s.leaf(from, {4})}), to);
    };
  };
  CHECK(rewrites("narrowing-convert-of-add", converted_sum(DType::s32, DType::s8)));
  CHECK_FALSE(rewrites("narrowing-convert-of-add", converted_sum(DType::s8, DType::s32)));
  CHECK_FALSE(rewrites("narrowing-convert-of-add", converted_sum(DType::f32, DType::s8)));

  const auto converted_concat = [](DType from, DType to) {
    return [from, to](Instance& s) { s.unary(Opcode::Convert, s.concat({s.leaf(from, {2, 3}), s.leaf(from, {1, 3})}, 0), to); };
  };
  CHECK(rewrites("narrowing-convert-of-concatenate", converted_concat(DType::s32, DType::s8)));
  CHECK_FALSE(rewrites("narrowing-convert-of-concatenate", converted_concat(DType::s8, DType::s32)));
  CHECK_FALSE(rewrites("narrowing-convert-of-concatenate", converted_concat(DType::f32, DType::bf16)));

  const auto split = [](std::int64_t rows) {
    return [rows](Instance& s) { s.op(Opcode::Add, NodeAttributes{}, {s.leaf(DType::f32, {rows, 2}), s.leaf(DType::f32, {rows, 2})}); };
  };
  CHECK_FALSE(rewrites("split-add", split(3)));
  CHECK(rewrites("split-add", split(4)));

  const auto adjacent = [](std::int64_t gap) {
    return [gap](Instance& s) {
      const Id x = s.leaf(DType::s32, {8, 2});
      s.concat({s.slice(x, {{0, 3, 1}, {0, 2, 1}}), s.slice(x, {{3 + gap, 6, 1}, {0, 2, 1}})}, 0);
    };
  };
  CHECK_FALSE(rewrites("concat-of-adjacent-slices", adjacent(1)));
  CHECK(rewrites("concat-of-adjacent-slices", adjacent(0)));

  // Joining [2, 3] views along dim 1 interleaves their rows: no flat concatenation.
  const auto flat_rows = [](std::int64_t dim) {
    return [dim](Instance& s) {
      const Id x = s.leaf(DType::s8, {6}), y = s.leaf(DType::s8, {6});
      s.concat({s.reshape(x, {2, 3}), s.reshape(y, {2, 3})}, dim);
    };
  };
  CHECK_FALSE(rewrites("concat-of-flat-reshapes", flat_rows(1)));
  CHECK(rewrites("concat-of-flat-reshapes", flat_rows(0)));
}

TEST_CASE("slicing axioms: the conditions' spanned-operand count agrees with the list the rules build", "[select][axioms]") {
  // concat_operands_spanned_count answers the slice-of-concat conditions without building
  // concat_operands_spanned's list; every range along the concat dim (strided, empty, inside one
  // operand, across several) must give the list's size.
  SelectionContext ctx;
  TensorGraph g{TensorAnalysis(&ctx)};
  Build b{g, ctx};
  const Id x = b.reshape(g.add(make_input(ctx.attributes, 0, 10 * 3), {}), {10, 3});  // u8[10,3]
  const Id concat = b.concat({b.slice_dim(x, 0, 0, 2), b.slice_dim(x, 0, 2, 7), b.slice_dim(x, 0, 7, 10)}, 0);
  g.rebuild();
  std::vector<Id> concats;
  for (Id n : g.class_nodes(g.find(concat)))
    if (axiom_detail::is_operator_node(g, n, Opcode::Concatenate)) concats.push_back(n);
  REQUIRE(concats.size() == 1);
  // The conditions' quick exit: a class with a concatenate passes the kind filter; x's class
  // (a reshape of an input) does not.
  CHECK(axiom_detail::may_hold_operator(g, concat, Opcode::Concatenate));
  CHECK_FALSE(axiom_detail::may_hold_operator(g, x, Opcode::Concatenate));
  std::size_t checked = 0, spanning = 0;
  for (std::int64_t start = 0; start <= 10; ++start)
    for (std::int64_t limit = start; limit <= 10; ++limit)
      for (std::int64_t stride : {1, 2}) {
        const std::vector<hlo::SliceRange> ranges{{start, limit, stride}, {0, 3, 1}};
        const std::size_t listed = axiom_detail::concat_operands_spanned(g, ctx, concats[0], ranges).size();
        CHECK(axiom_detail::concat_operands_spanned_count(g, ctx, concats[0], ranges) == listed);
        ++checked;
        spanning += listed >= 2;
      }
  CHECK(checked == 132);
  CHECK(spanning > 10);  // ranges across operands were among them
}

// The chain is built in one application: transpose(negate(p0 + p1) * p2) gains
// negate(transpose(p0) + transpose(p1)) * transpose(p2), down to the leaves, where
// transpose-of-<op> moves the transpose one operator per application.
TEST_CASE("transpose-through-value-wise-chain: one application reaches the leaves", "[select][axioms]") {
  SelectionContext ctx;
  const auto axioms = ir_axiom_set(ctx);
  const auto axiom = std::find_if(axioms.begin(), axioms.end(),
                                  [](const Axiom& a) { return a.info.name == "transpose-through-value-wise-chain"; });
  REQUIRE(axiom != axioms.end());
  std::mt19937_64 rng(7);
  Instance s(ctx, rng);
  const Id p0 = s.leaf(DType::f32, {3, 4}), p1 = s.leaf(DType::f32, {3, 4}), p2 = s.leaf(DType::f32, {3, 4});
  const Id chain = s.op(Opcode::Multiply, NodeAttributes{}, {s.unary(Opcode::Negate, s.op(Opcode::Add, NodeAttributes{}, {p0, p1})), p2});
  const Id root = s.transpose(chain, {1, 0});
  s.g.rebuild();
  egraph::MatchList matches;
  axiom->rule.search(s.g, matches);
  REQUIRE(matches.size() == 1);
  axiom->rule.apply(s.g, matches);
  s.g.rebuild();
  const auto transposed = [&](Id leaf) {
    for (Id c : s.g.classes())
      for (Id n : s.g.class_nodes(c))
        if (s.g.node(n).op.kind == NodeKind::Operator && s.g.node(n).op.opcode == Opcode::Transpose &&
            s.g.find(s.g.node(n).children[0]) == s.g.find(leaf))
          return s.g.find(c);
    return egraph::kNoId;
  };
  for (const Id leaf : {p0, p1, p2}) CHECK(transposed(leaf) != egraph::kNoId);
  // The root's class holds the multiply over the transposes, and its operand the negate.
  bool multiply_of_transposes = false;
  for (Id n : s.g.class_nodes(root)) {
    const auto node = s.g.node(n);
    if (node.op.kind == NodeKind::Operator && node.op.opcode == Opcode::Multiply)
      multiply_of_transposes |= s.g.find(node.children[1]) == transposed(p2) &&
                                std::ranges::any_of(s.g.class_nodes(node.children[0]), [&](Id m) {
                                  return s.g.node(m).op.kind == NodeKind::Operator && s.g.node(m).op.opcode == Opcode::Negate;
                                });
  }
  CHECK(multiply_of_transposes);
}
