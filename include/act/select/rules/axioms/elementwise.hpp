// Elementwise axioms, instantiated per opcode (so App. B filtering can drop the rules of
// operators an ISA lacks): moving slices, concatenates, transposes, reshapes and broadcasts
// through unary and binary elementwise operators, splitting a binary operator in halves, and
// commutativity / associativity.
#pragma once

#include <array>
#include <vector>

#include <fmt/format.h>

#include "act/select/rules/axioms/min_max_via_relu.hpp"
#include "act/select/rules/axioms/support.hpp"
#include "act/select/rules/split_sizes.hpp"

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

// Whether the operands a and c of concat(f(a, b), f(c, d)) may be joined: not when both are
// pieces (slices) of different values, nor when one is a piece and the other a constant that is
// not. Such a join builds a tensor that mixes pieces of two values, which commuted or
// re-associated operands offer at every split point (2^n mixtures of n pieces). A constant's
// equal pieces (a broadcast bound of a clamp) are one class, often not yet a slice when the
// rule matches, so every split of max(x, bound) offered concat(x's piece, bound's piece); on
// AMX each such mixture's transpose was blended lane by lane (soak kernel 5: 157k e-nodes).
inline bool joins_pieces_of_one_value(const TensorGraph& g, Id a, Id c) {
  using hlo::Opcode;
  const auto constant_not_piece = [&](Id x) { return g.data(x).is_constant && !may_hold_operator(g, x, Opcode::Slice); };
  const bool a_may_be_piece = may_hold_operator(g, a, Opcode::Slice), c_may_be_piece = may_hold_operator(g, c, Opcode::Slice);
  if (!a_may_be_piece && !c_may_be_piece) return true;
  if (!a_may_be_piece) return !constant_not_piece(a);
  if (!c_may_be_piece) return !constant_not_piece(c);
  constexpr std::size_t kScan = 64;
  std::array<Id, kScan> sources{};
  std::size_t n = 0;
  for (const auto node : g.eclass(a).nodes)
    if (is_operator_node(g, node, Opcode::Slice) && n < kScan) sources[n++] = g.find(g.node(node).children[0]);
  if (n == 0) return true;
  bool c_is_piece = false;
  for (const auto node : g.eclass(c).nodes) {
    if (!is_operator_node(g, node, Opcode::Slice)) continue;
    c_is_piece = true;
    const Id src = g.find(g.node(node).children[0]);
    for (std::size_t k = 0; k < n; ++k)
      if (sources[k] == src) return true;
  }
  return !c_is_piece;
}

inline void add_elementwise_axioms(SelectionContext& ctx, std::vector<Axiom>& out) {
  using hlo::Opcode;
  using enum hlo::Opcode;
  const auto E = AxiomFamily::Elementwise;
  // A rule instantiated for opcode u: its name is the template `shape` with <op> replaced.
  const auto info = [E](std::string shape, Opcode u, std::vector<Opcode> lhs, std::vector<Opcode> rhs, bool reassoc,
                        std::string source) {
    std::string name = shape;
    const auto at = name.find("<op>");
    name.replace(at, 4, std::string(hlo::opcode_name(u)));
    return AxiomInfo{name, E, shape, std::move(lhs), std::move(rhs), reassoc, std::move(source)};
  };
  const auto named = [E](std::string name, std::vector<Opcode> lhs, std::vector<Opcode> rhs, std::string source) {
    return AxiomInfo{name, E, name, std::move(lhs), std::move(rhs), false, std::move(source)};
  };
  const auto name_of = [](Opcode code) { return hlo::opcode_name(code); };
  AxiomRules rules(ctx, out);
  const std::shared_ptr<const SplitSizes> sizes = split_sizes_of(ctx.isa);

  for (Opcode u : kThroughUnary) {
    // rewrites.md SH-2 / CM-2 (unary): layout(u(x)) → u(layout(x)) for layout ∈ {slice, transpose, reshape}.
    for (Opcode layout : {Slice, Transpose, Reshape})
      rules.add(info(fmt::format("{}-of-<op>", name_of(layout)), u, {layout, u}, {u, layout}, false,
                     "rewrites.md SH-2, CM-2, RM-1"),
                fmt::format("({}@outer ({}@inner ?x))", name_of(layout), name_of(u)),
                [](const View& v) { return same_width_unary(v, "inner", "?x"); }, "(@inner (@outer ?x))");

    // rewrites.md BC-7 reversed (unary): broadcast(u(x)) → u(broadcast(x)); see broadcast-of-<op>
    // for binary operators below.
    rules.add(info("broadcast-of-<op>", u, {Broadcast, u}, {u, Broadcast}, false, "rewrites.md BC-7 (reversed)"),
              fmt::format("(broadcast@outer ({}@inner ?x))", name_of(u)),
              [](const View& v) {
                return !v.ctx.last_retry && v.type("?x").rank() == 0 && same_width_unary(v, "inner", "?x");
              },
              "(@inner (@outer ?x))");

    // rewrites.md SS-1 / CM-1 (unary): concat(u(a), u(b)) → u(concat(a, b)).
    rules.add(info("concat-of-<op>", u, {Concatenate, u}, {u, Concatenate}, false, "rewrites.md SS-1, CM-1"),
              fmt::format("(concatenate@outer ({0}@ua ?a) ({0}@ub ?b))", name_of(u)),
              [](const View& v) {
                return v.op("ua") == v.op("ub") && same_width_unary(v, "ua", "?a") &&
                       v.type("?a").dtype == v.type("?b").dtype;
              },
              "(@ua (@outer ?a ?b))");
  }

  for (Opcode f : kThroughBinary) {
    // rewrites.md SH-2 / RM-1: layout(f(x, y)) → f(layout(x), layout(y)).
    for (Opcode layout : {Slice, Transpose, Reshape})
      rules.add(info(fmt::format("{}-of-<op>", name_of(layout)), f, {layout, f}, {f, layout}, false,
                     "rewrites.md SH-2, RM-1"),
                fmt::format("({}@outer ({}@inner ?x ?y))", name_of(layout), name_of(f)),
                "(@inner (@outer ?x) (@outer ?y))");

    // Integers wrap, so a narrowing integer convert distributes over the ring operations:
    // convert<T>(f(x, y)) → f(convert<T>(x), convert<T>(y)) for f ∈ {add, subtract, multiply}
    // (the converse of rewrites.md CVT-4). Gemmini's mac8 then adds in s8 what was an s32 sum.
    // Kept only where an instruction applies f to two values (the filter), like every axiom
    // whose result is rooted at f over data; not for operands both widened from T.
    // Only on the last retry, as narrowing-convert-of-dot (axioms/dot.hpp).
    if ((f == Add || f == Subtract || f == Multiply) && (ctx.last_retry || ctx.isa.instructions.empty())) {
      AxiomInfo narrowing = info("narrowing-convert-of-<op>", f, {Convert, f}, {f, Convert}, false, "rewrites.md CVT-4 (converse)");
      narrowing.binary_root_over_data = f;
      rules.add(std::move(narrowing),
                fmt::format("(convert@outer ({}@inner ?x ?y))", name_of(f)),
                [](const View& v) {
                  return narrowing_pays(v.g, v.type("?x").dtype, v.attr("outer").dtype, v.cls("?x"), v.cls("?y"));
                },
                "(@inner (@outer ?x) (@outer ?y))");
    }

    // rewrites.md SS-1: concat(f(a, b), f(c, d)) → f(concat(a, c), concat(b, d)).
    rules.add(info("concat-of-<op>", f, {Concatenate, f}, {f, Concatenate}, false, "rewrites.md SS-1"),
              fmt::format("(concatenate@outer ({0}@l ?a ?b) ({0}@r ?c ?d))", name_of(f)),
              [](const View& v) {
                return v.op("l") == v.op("r") && joins_pieces_of_one_value(v.g, v.cls("?a"), v.cls("?c")) &&
                       joins_pieces_of_one_value(v.g, v.cls("?b"), v.cls("?d"));
              },
              "(@l (@outer ?a ?c) (@outer ?b ?d))");

    // rewrites.md BC-7 (TensorRight broadcast/rule01, 02): f(bc(a), bc(b)) → bc(f(a, b)).
    rules.add(info("<op>-of-broadcasts", f, {f, Broadcast}, {Broadcast, f}, false, "rewrites.md BC-7"),
              fmt::format("({}@outer (broadcast@l ?a) (broadcast@r ?b))", name_of(f)),
              [](const View& v) { return v.op("l") == v.op("r") && v.type("?a").same_type(v.type("?b")); },
              "(@l (@outer ?a ?b))");

    // rewrites.md BC-7 reversed: broadcast(f(x, y)) → f(broadcast(x), broadcast(y)) for scalar
    // x and y. An element of a computed value is then broadcast from the elements it is
    // computed from (AMX: vbroadcastssl reads an f32 from HBM, and an element of p0 + p0 is no
    // HBM value); without it, broadcasting one element of p0 + p0 was "proved" impossible.
    // Not on the last retries: there the lane blends broadcast every element of a transposed
    // value, and rebuilding each from its operands' elements found longer programs first
    // (AMX compile-time kernel 44: 1,411 instructions instead of 950); the blends read the
    // elements of a computed value from its stored rows instead (module 1's element bytes).
    rules.add(info("broadcast-of-<op>", f, {Broadcast, f}, {f, Broadcast}, false, "rewrites.md BC-7 (reversed)"),
              fmt::format("(broadcast@outer ({}@inner ?x ?y))", name_of(f)),
              [](const View& v) { return !v.ctx.last_retry && v.type("?x").rank() == 0 && v.type("?y").rank() == 0; },
              "(@inner (@outer ?x) (@outer ?y))");

    // Fit an instruction's size: split f(x, y) along dim 0 where the ISA's f computes
    // (split_sizes.hpp: halves when they reach an instruction's rows, so the e-graph stays
    // linear in the tensor's rows, else the largest rows below). Not a value narrower than
    // every instruction's f (a column of a transposed value, f32[8,1] where AVX-512 computes
    // rows of 16 lanes): no piece of it is computed either, and the lane blends' columns split
    // into pieces of 4, 2 and 1 rows were most of the node limit of AMX sound soak kernels 73
    // and 153 (seed 4242).
    rules.add(info("split-<op>", f, {f}, {Concatenate, f, Slice}, false, "issue 3: split to fit"),
              fmt::format("({}@outer ?x ?y)", name_of(f)),
              [sizes, f](const View& v) {
                const Shape& t = v.root_type();
                if (t.dims.size() >= 2 && sizes->narrower_than_computed(f, t.dtype, t.dims.back())) return false;
                return !t.dims.empty() && sizes->split_point(SplitRole::Rows, t.dtype, t.dims[0], f, t.dims.size()).has_value();
              },
              [sizes, f](const View& v, Build& b) {
                const TensorOp f_op = v.op("outer");
                const Id x = v.cls("?x"), y = v.cls("?y");
                const Shape& t = v.root_type();
                const auto n = t.dims[0], h = *sizes->split_point(SplitRole::Rows, t.dtype, n, f, t.dims.size());
                const Id lo = b.add(f_op, {b.slice_dim(x, 0, 0, h), b.slice_dim(y, 0, 0, h)});
                const Id hi = b.add(f_op, {b.slice_dim(x, 0, h, n), b.slice_dim(y, 0, h, n)});
                return b.concat({lo, hi}, 0);
              });
  }

  // A narrowing integer convert of a concatenate narrows each operand: convert<T>(concat(a, b))
  // → concat(convert<T>(a), convert<T>(b)), the converse of concat-of-convert. It carries the
  // narrowing down to a product a concatenate joins, which narrowing-convert-of-dot then
  // computes in T: Gemmini's low byte of concat(p, p) . concat(p, p) with p = w[0:8] . (w . w),
  // which no attempt found before (node and iteration limits). Only on the last retry, as the
  // other narrowing axioms.
  if (ctx.last_retry || ctx.isa.instructions.empty())
    rules.add(named("narrowing-convert-of-concatenate", {Convert, Concatenate}, {Concatenate, Convert},
                    "rewrites.md SS-1, CM-1 (converse)"),
              "(convert@outer (concatenate@c ?a ?b))",
              [](const View& v) { return is_integer_narrowing(v.type("?a").dtype, v.attr("outer").dtype); },
              "(@c (@outer ?a) (@outer ?b))");

  // rewrites.md MAX-6 / MIN-6 (TensorRight clamp/rule02, rule03) reversed, and XLA's definition
  // of clamp: clamp(lo, x, hi) → minimum(maximum(x, lo), hi), in that operand order (maximum's
  // lhs wins ties, which decides the sign of a zero result). Scalar bounds are broadcast.
  rules.add(named("clamp-as-min-max", {Clamp}, {Maximum, Minimum, Broadcast},
                  "rewrites.md MAX-6, MIN-6 (reversed); XLA operation semantics of Clamp"),
            "(clamp ?lo ?x ?hi)", [](const View& v) { return v.type("?x").dtype != DType::pred; },
            [](const View& v, Build& b) {
              const Dims dims = v.type("?x").dims;
              const auto fit = [&](Id bound) {
                if (Dims(b.g.data(bound).type.dims) == dims) return bound;
                NodeAttributes a;  // a scalar bound (type inference allows no other shape)
                a.shape = dims;
                return b.op(Broadcast, a, {bound});
              };
              const Id lo = fit(v.cls("?lo")), hi = fit(v.cls("?hi"));
              return b.op(Minimum, NodeAttributes{}, {b.op(Maximum, NodeAttributes{}, {v.cls("?x"), lo}), hi});
            });

  // rewrites.md SH-2 for the ternary clamp: slice(clamp(lo, x, hi)) → clamp(slice(lo), slice(x),
  // slice(hi)); a scalar bound stays as it is. Row pieces of a clamped tensor keep their clamp,
  // which convert-clamped-float-to-u8-via-s32 needs (K5 stores its 3 rows one by one).
  rules.add(named("slice-of-clamp", {Slice, Clamp}, {Clamp, Slice}, "rewrites.md SH-2 (clamp is elementwise)"),
            "(slice@outer (clamp@inner ?lo ?x ?hi))", [](const View& v, Build& b) {
              const TensorOp slice = v.op("outer"), clamp = v.op("inner");
              const auto cut = [&](Id bound) { return v.g.data(bound).type.rank() == 0 ? bound : b.add(slice, {bound}); };
              const Id lo = cut(v.cls("?lo")), x = b.add(slice, {v.cls("?x")}), hi = cut(v.cls("?hi"));
              return b.add(clamp, {lo, x, hi});
            });

  // A float clamped into [0, 255] converts to u8 through s32 and an unsigned saturation:
  // convert<u8>(c) → convert<u8>(minimum(bitcast-convert<u32>(convert<s32>(c)), 255)) when c's
  // class holds clamp(lo, x, hi) with constant bounds inside [0, 255]. Both sides truncate toward
  // zero and map NaN to 0 (the interpreter's float→int rule), and a truncated value in [0, 255]
  // is unchanged by the saturation. The right-hand side is what AVX-512 computes with
  // vcvttps2dq + vpmovusdb (K5's convert.14); without the range it would not hold (300.0 → 44 vs
  // 255), so the bounds are read from the constants.
  rules.add(
      named("convert-clamped-float-to-u8-via-s32", {Convert, Clamp},
            {Convert, Minimum, BitcastConvert, Broadcast, Constant},
            "XLA operation semantics of Convert (float to integer truncates) and Clamp; Intel SDM VCVTTPS2DQ, VPMOVUSDB"),
      "(convert ?c)",
      [](const View& v) {
        return v.root_type().dtype == DType::u8 && is_float(v.type("?c").dtype) && v.type("?c").dtype != DType::f64 &&
               clamped_within(v.g, v.ctx, v.cls("?c"), 0.0, 255.0);
      },
      [](const View& v, Build& b) {
        const Dims dims = v.type("?c").dims;
        NodeAttributes to_s32, to_u32, to_u8, spread;
        to_s32.dtype = DType::s32;
        to_u32.dtype = DType::u32;
        to_u8.dtype = DType::u8;
        spread.shape = dims;
        const Id truncated = b.op(Convert, to_s32, {v.cls("?c")});
        const Id unsigned_bits = b.op(BitcastConvert, to_u32, {truncated});
        const Id limit = b.op(Broadcast, spread, {b.scalar(DType::u32, 255)});
        return b.op(Convert, to_u8, {b.op(Minimum, NodeAttributes{}, {unsigned_bits, limit})});
      });

  // Commutativity and associativity (rewrites.md ADD-3 / TensorRight add/rule04; CAT-style
  // re-association is left to backoff). Float add/multiply re-association rounds differently.
  // Where no instruction takes the maximum of two T values but one relus a wider type
  // (min_max_via_relu.hpp), a maximum or minimum is only ever computed through that relu: commuting it matters only to bring a constant
  // (the relu's zero) second, and re-associating it only multiplies the relu rewrites (an
  // NNSmith chain of clamps grew to 80k e-nodes). Likewise where T adds only inside a
  // multiply-accumulate (Gemmini's mac8/mac32: add(dot(A, B), D)), every add is a mac of one
  // operand times the identity whatever its grouping, and re-associating sums only grew the
  // e-graph: an NNSmith kernel's program came after 40 rewrite iterations instead of 6.
  const auto relu_facts = std::make_shared<const IsaReluFacts>(isa_relu_facts(ctx.isa));
  for (Opcode f : {Add, Multiply, Maximum, Minimum}) {
    const bool extremum = f == Maximum || f == Minimum;
    rules.add(info("<op>-commutative", f, {f}, {f}, false, "rewrites.md ADD-3, TensorRight add/rule04"),
              fmt::format("({}@outer ?x ?y)", name_of(f)),
              [extremum, relu_facts](const View& v) {
                return !extremum || relu_facts->any || !relu_facts->widened_relu_type(v.root_type().dtype) ||
                       v.g.data(v.cls("?x")).is_constant;
              },
              "(@outer ?y ?x)");
    const bool reassoc = f == Add || f == Multiply;
    rules.add(info("<op>-associative", f, {f}, {f}, reassoc, "TensorRight add/rule01, mul/rule06"),
              fmt::format("({0}@outer ({0}@inner ?a ?b) ?c)", name_of(f)),
              [f, extremum, relu_facts](const View& v) {
                if (v.op("inner") != v.op("outer") || relu_facts->any) return true;
                const DType t = v.root_type().dtype;
                if (extremum) return !relu_facts->widened_relu_type(t);
                return f != Add || !relu_facts->adds_only_in_mac(t);
              },
              "(@outer ?a (@outer ?b ?c))");
  }

}

}  // namespace act::select::axiom_detail
