// Elementwise axioms, instantiated per opcode (so App. B filtering can drop the rules of
// operators an ISA lacks): moving slices, concatenates, transposes, reshapes and broadcasts
// through unary and binary elementwise operators, splitting a binary operator in halves, and
// commutativity / associativity.
#pragma once

#include <vector>

#include "act/select/rules/axioms/support.hpp"

namespace act::select::axiom_detail {

// Unary operators the through-rules cover (convert and bitcast-convert are value-wise too;
// bitcast-convert only between equal widths).
inline constexpr hlo::Opcode kThroughUnary[] = {
    hlo::Opcode::Convert, hlo::Opcode::BitcastConvert, hlo::Opcode::Copy,  hlo::Opcode::Negate,
    hlo::Opcode::Exponential, hlo::Opcode::Abs,        hlo::Opcode::Sqrt,  hlo::Opcode::Rsqrt,
    hlo::Opcode::Tanh,    hlo::Opcode::Logistic,       hlo::Opcode::Log,
};
inline constexpr hlo::Opcode kThroughBinary[] = {
    hlo::Opcode::Add,     hlo::Opcode::Subtract, hlo::Opcode::Multiply,
    hlo::Opcode::Divide,  hlo::Opcode::Maximum,  hlo::Opcode::Minimum,
};

inline bool same_width_unary(const View& v, std::string_view capture, std::string_view operand) {
  const TensorOp& op = v.op(capture);
  if (op.opcode != hlo::Opcode::BitcastConvert) return true;
  return bit_width(v.ctx.attributes_of(op).dtype) == bit_width(v.type(operand).dtype);
}

inline void add_elementwise_axioms(SelectionContext& ctx, std::vector<Axiom>& out) {
  using hlo::Opcode;
  const auto E = AxiomFamily::Elementwise;
  const auto info = [E](std::string shape, Opcode u, std::vector<Opcode> lhs, std::vector<Opcode> rhs, bool reassoc,
                        std::string source) {
    std::string name = shape;
    const auto at = name.find("<op>");
    name.replace(at, 4, std::string(hlo::opcode_name(u)));
    return AxiomInfo{name, E, shape, std::move(lhs), std::move(rhs), reassoc, std::move(source)};
  };

  for (Opcode u : kThroughUnary) {
    // rewrites.md SH-2 / CM-2 (unary): layout(u(x)) → u(layout(x)) for layout ∈ {slice, transpose, reshape}.
    for (Opcode layout : {Opcode::Slice, Opcode::Transpose, Opcode::Reshape}) {
      TensorPatternBuilder pb;
      auto inner = pb.op(op_is(u), {pb.var("?x")}, "inner");
      const std::string shape = std::string(hlo::opcode_name(layout)) + "-of-<op>";
      out.push_back(make_axiom(
          ctx, info(shape, u, {layout, u}, {u, layout}, false, "rewrites.md SH-2, CM-2, RM-1"),
          pb.build(pb.op(op_is(layout), {inner}, "outer")),
          [](const View& v) { return same_width_unary(v, "inner", "?x"); },
          [](const View& v, Build& b) -> std::optional<Id> {
            const TensorOp u_op = v.op("inner"), l_op = v.op("outer");
            return b.add(u_op, {b.add(l_op, {v.cls("?x")})});
          }));
    }
    // rewrites.md SS-1 / CM-1 (unary): concat(u(a), u(b)) → u(concat(a, b)).
    TensorPatternBuilder pb;
    auto ua = pb.op(op_is(u), {pb.var("?a")}, "ua");
    auto ub = pb.op(op_is(u), {pb.var("?b")}, "ub");
    out.push_back(make_axiom(
        ctx, info("concat-of-<op>", u, {Opcode::Concatenate, u}, {u, Opcode::Concatenate}, false, "rewrites.md SS-1, CM-1"),
        pb.build(pb.op(op_is(Opcode::Concatenate), {ua, ub}, "outer")),
        [](const View& v) {
          return v.op("ua") == v.op("ub") && same_width_unary(v, "ua", "?a") && v.type("?a").dtype == v.type("?b").dtype;
        },
        [](const View& v, Build& b) -> std::optional<Id> {
          const TensorOp u_op = v.op("ua"), c_op = v.op("outer");
          return b.add(u_op, {b.add(c_op, {v.cls("?a"), v.cls("?b")})});
        }));
  }

  for (Opcode f : kThroughBinary) {
    // rewrites.md SH-2 / RM-1: layout(f(x, y)) → f(layout(x), layout(y)).
    for (Opcode layout : {Opcode::Slice, Opcode::Transpose, Opcode::Reshape}) {
      TensorPatternBuilder pb;
      auto inner = pb.op(op_is(f), {pb.var("?x"), pb.var("?y")}, "inner");
      const std::string shape = std::string(hlo::opcode_name(layout)) + "-of-<op>";
      out.push_back(make_axiom(ctx, info(shape, f, {layout, f}, {f, layout}, false, "rewrites.md SH-2, RM-1"),
                               pb.build(pb.op(op_is(layout), {inner}, "outer")), {},
                               [](const View& v, Build& b) -> std::optional<Id> {
                                 const TensorOp f_op = v.op("inner"), l_op = v.op("outer");
                                 const Id x = b.add(l_op, {v.cls("?x")});
                                 const Id y = b.add(l_op, {v.cls("?y")});
                                 return b.add(f_op, {x, y});
                               }));
    }
    // rewrites.md SS-1: concat(f(a, b), f(c, d)) → f(concat(a, c), concat(b, d)).
    {
      TensorPatternBuilder pb;
      auto l = pb.op(op_is(f), {pb.var("?a"), pb.var("?b")}, "l");
      auto r = pb.op(op_is(f), {pb.var("?c"), pb.var("?d")}, "r");
      out.push_back(make_axiom(
          ctx, info("concat-of-<op>", f, {Opcode::Concatenate, f}, {f, Opcode::Concatenate}, false, "rewrites.md SS-1"),
          pb.build(pb.op(op_is(Opcode::Concatenate), {l, r}, "outer")), [](const View& v) { return v.op("l") == v.op("r"); },
          [](const View& v, Build& b) -> std::optional<Id> {
            const TensorOp f_op = v.op("l"), c_op = v.op("outer");
            const Id x = b.add(c_op, {v.cls("?a"), v.cls("?c")});
            const Id y = b.add(c_op, {v.cls("?b"), v.cls("?d")});
            return b.add(f_op, {x, y});
          }));
    }
    // rewrites.md BC-7 (TensorRight broadcast/rule01, 02): f(bc(a), bc(b)) → bc(f(a, b)).
    {
      TensorPatternBuilder pb;
      auto l = pb.op(op_is(Opcode::Broadcast), {pb.var("?a")}, "l");
      auto r = pb.op(op_is(Opcode::Broadcast), {pb.var("?b")}, "r");
      out.push_back(make_axiom(
          ctx, info("<op>-of-broadcasts", f, {f, Opcode::Broadcast}, {Opcode::Broadcast, f}, false, "rewrites.md BC-7"),
          pb.build(pb.op(op_is(f), {l, r}, "outer")),
          [](const View& v) { return v.op("l") == v.op("r") && v.type("?a").same_type(v.type("?b")); },
          [](const View& v, Build& b) -> std::optional<Id> {
            const TensorOp f_op = v.op("outer"), bc = v.op("l");
            return b.add(bc, {b.add(f_op, {v.cls("?a"), v.cls("?b")})});
          }));
    }
    // Issue 3 (fit an instruction's size): split f(x, y) in halves along dim 0 when it is even.
    // Sizes halve each time, so repeated splitting stays linear in the tensor's rows.
    {
      TensorPatternBuilder pb;
      out.push_back(make_axiom(
          ctx, info("split-<op>", f, {f}, {Opcode::Concatenate, f, Opcode::Slice}, false, "issue 3: split to fit"),
          pb.build(pb.op(op_is(f), {pb.var("?x"), pb.var("?y")}, "outer")),
          [](const View& v) {
            const Dims& d = v.root_type().dims;
            return !d.empty() && d[0] >= 2 && d[0] % 2 == 0;
          },
          [](const View& v, Build& b) -> std::optional<Id> {
            const TensorOp f_op = v.op("outer");
            const Id x = v.cls("?x"), y = v.cls("?y");
            const auto n = v.root_type().dims[0], h = n / 2;
            const Id lo = b.add(f_op, {b.slice_dim(x, 0, 0, h), b.slice_dim(y, 0, 0, h)});
            const Id hi = b.add(f_op, {b.slice_dim(x, 0, h, n), b.slice_dim(y, 0, h, n)});
            return b.concat({lo, hi}, 0);
          }));
    }
  }

  // rewrites.md MAX-6 / MIN-6 (TensorRight clamp/rule02, rule03) reversed, and XLA's definition
  // of clamp: clamp(lo, x, hi) → minimum(maximum(x, lo), hi), in that operand order (maximum's
  // lhs wins ties, which decides the sign of a zero result). Scalar bounds are broadcast.
  {
    TensorPatternBuilder pb;
    out.push_back(make_axiom(
        ctx,
        AxiomInfo{"clamp-as-min-max", E, "clamp-as-min-max", {Opcode::Clamp}, {Opcode::Maximum, Opcode::Minimum, Opcode::Broadcast},
                  false, "rewrites.md MAX-6, MIN-6 (reversed); XLA operation semantics of Clamp"},
        pb.build(pb.op(op_is(Opcode::Clamp), {pb.var("?lo"), pb.var("?x"), pb.var("?hi")}, "outer")),
        [](const View& v) { return v.type("?x").dtype != DType::pred; },
        [](const View& v, Build& b) -> std::optional<Id> {
          const Dims dims = v.type("?x").dims;  // a copy: adding nodes may move the class data
          const auto fit = [&](Id bound) {
            if (Dims(b.g.data(bound).type.dims) == dims) return bound;
            NodeAttributes a;  // a scalar bound (type inference allows no other shape)
            a.shape = dims;
            return b.op(Opcode::Broadcast, a, {bound});
          };
          const Id lo = fit(v.cls("?lo")), hi = fit(v.cls("?hi"));
          return b.op(Opcode::Minimum, NodeAttributes{}, {b.op(Opcode::Maximum, NodeAttributes{}, {v.cls("?x"), lo}), hi});
        }));
  }

  // rewrites.md SH-2 for the ternary clamp: slice(clamp(lo, x, hi)) → clamp(slice(lo), slice(x),
  // slice(hi)); a scalar bound stays as it is. Row pieces of a clamped tensor keep their clamp,
  // which convert-clamped-float-to-u8-via-s32 needs (K5 stores its 3 rows one by one).
  {
    TensorPatternBuilder pb;
    auto inner = pb.op(op_is(Opcode::Clamp), {pb.var("?lo"), pb.var("?x"), pb.var("?hi")}, "inner");
    out.push_back(make_axiom(
        ctx, AxiomInfo{"slice-of-clamp", E, "slice-of-clamp", {Opcode::Slice, Opcode::Clamp}, {Opcode::Clamp, Opcode::Slice}, false,
                       "rewrites.md SH-2 (clamp is elementwise)"},
        pb.build(pb.op(op_is(Opcode::Slice), {inner}, "outer")), {},
        [](const View& v, Build& b) -> std::optional<Id> {
          const TensorOp slice = v.op("outer"), clamp = v.op("inner");
          const auto cut = [&](Id bound) { return v.g.data(bound).type.rank() == 0 ? bound : b.add(slice, {bound}); };
          const Id lo = cut(v.cls("?lo")), x = b.add(slice, {v.cls("?x")}), hi = cut(v.cls("?hi"));
          return b.add(clamp, {lo, x, hi});
        }));
  }

  // A float clamped into [0, 255] converts to u8 through s32 and an unsigned saturation:
  // convert<u8>(c) → convert<u8>(minimum(bitcast-convert<u32>(convert<s32>(c)), 255)) when c's
  // class holds clamp(lo, x, hi) with constant bounds inside [0, 255]. Both sides truncate toward
  // zero and map NaN to 0 (the interpreter's float→int rule), and a truncated value in [0, 255]
  // is unchanged by the saturation. The right-hand side is what AVX-512 computes with
  // vcvttps2dq + vpmovusdb (K5's convert.14); without the range it would not hold (300.0 → 44 vs
  // 255), so the bounds are read from the constants.
  {
    TensorPatternBuilder pb;
    out.push_back(make_axiom(
        ctx,
        AxiomInfo{"convert-clamped-float-to-u8-via-s32", E, "convert-clamped-float-to-u8-via-s32", {Opcode::Convert, Opcode::Clamp},
                  {Opcode::Convert, Opcode::Minimum, Opcode::BitcastConvert, Opcode::Broadcast, Opcode::Constant}, false,
                  "XLA operation semantics of Convert (float to integer truncates) and Clamp; Intel SDM VCVTTPS2DQ, VPMOVUSDB"},
        pb.build(pb.op(op_is(Opcode::Convert), {pb.var("?c")}, "outer")),
        [](const View& v) {
          return v.root_type().dtype == DType::u8 && is_float(v.type("?c").dtype) && v.type("?c").dtype != DType::f64 &&
                 clamped_within(v.g, v.ctx, v.cls("?c"), 0.0, 255.0);
        },
        [](const View& v, Build& b) -> std::optional<Id> {
          const Dims dims = v.type("?c").dims;
          NodeAttributes to_s32, to_u32, to_u8, spread;
          to_s32.dtype = DType::s32;
          to_u32.dtype = DType::u32;
          to_u8.dtype = DType::u8;
          spread.shape = dims;
          const Id truncated = b.op(Opcode::Convert, to_s32, {v.cls("?c")});
          const Id unsigned_bits = b.op(Opcode::BitcastConvert, to_u32, {truncated});
          const Id limit = b.op(Opcode::Broadcast, spread, {b.scalar(DType::u32, 255)});
          return b.op(Opcode::Convert, to_u8, {b.op(Opcode::Minimum, NodeAttributes{}, {unsigned_bits, limit})});
        }));
  }

  // Commutativity and associativity (rewrites.md ADD-3 / TensorRight add/rule04; CAT-style
  // re-association is left to backoff). Float add/multiply re-association rounds differently.
  for (Opcode f : {Opcode::Add, Opcode::Multiply, Opcode::Maximum, Opcode::Minimum}) {
    {
      TensorPatternBuilder pb;
      out.push_back(make_axiom(ctx, info("<op>-commutative", f, {f}, {f}, false, "rewrites.md ADD-3, TensorRight add/rule04"),
                               pb.build(pb.op(op_is(f), {pb.var("?x"), pb.var("?y")}, "outer")), {},
                               [](const View& v, Build& b) -> std::optional<Id> {
                                 const TensorOp f_op = v.op("outer");
                                 return b.add(f_op, {v.cls("?y"), v.cls("?x")});
                               }));
    }
    {
      TensorPatternBuilder pb;
      auto inner = pb.op(op_is(f), {pb.var("?a"), pb.var("?b")}, "inner");
      const bool reassoc = f == Opcode::Add || f == Opcode::Multiply;
      out.push_back(make_axiom(ctx, info("<op>-associative", f, {f}, {f}, reassoc, "TensorRight add/rule01, mul/rule06"),
                               pb.build(pb.op(op_is(f), {inner, pb.var("?c")}, "outer")),
                               [](const View& v) { return v.op("inner") == v.op("outer"); },
                               [](const View& v, Build& b) -> std::optional<Id> {
                                 const TensorOp f_op = v.op("outer");
                                 return b.add(f_op, {v.cls("?a"), b.add(f_op, {v.cls("?b"), v.cls("?c")})});
                               }));
    }
  }
}

}  // namespace act::select::axiom_detail
